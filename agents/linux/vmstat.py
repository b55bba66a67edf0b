"""mem.vmstat.*: PCP's linux agent's /proc/vmstat family, as one table.

Each row of `FIELDS` is one metric of pmdalinux's vmstat cluster (cluster 28):
the metric's last name component (also the /proc/vmstat field it reads, but for
the two of `READS_FROM`), its item number, its kind (which fixes semantics and
units); our help text is in help/linux.
All are 64-bit unsigned with no instance domain.  Rows, items and kinds come
from the metric table of src/pmdas/linux/pmda.c at PCP 6.0.3 and the names from
its namespace (root_linux); how values are read follows
proc_vmstat.c's refresh_proc_vmstat and the fetch callback in pmda.c:

- a field the running kernel lacks has no value (pmdalinux's fetch callback
  returns 0 values for it, not an error), and the metric still exists;
- mem.vmstat.balloon_inflate and balloon_deflate are swapped in pmdalinux (its
  namespace and metric table disagree), so each serves the other's field: see
  `READS_FROM`;
- a field's value is the digits starting at the first digit after the name;
- five metrics are computed: `pgscan_direct_total`, `pgscan_kswapd_total` and
  `pgsteal_total` sum every present table field whose name starts with
  "pgscan_direct", "pgscan_kswapd" and "pgsteal_" (always a value, 0 if none);
  `nr_slab` and `thp_split`, when the kernel has no such field, are the sum of
  nr_slab_reclaimable + nr_slab_unreclaimable and thp_split_page +
  thp_split_page_failed, with pmdalinux's 64-bit arithmetic in which a missing
  part counts as 2**64 - 1 (so both missing give 2**64 - 2, and exactly
  2**64 - 1 means no value).

This module is sans-IO: `values` turns the bytes of /proc/vmstat into values.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from purepcp.pmapi.types import PMSem
from purepcp.pmapi.units import Units

#: The vmstat cluster's number in pmdalinux (CLUSTER_VMSTAT).
CLUSTER = 28

#: Every metric name is PREFIX + the field name.
PREFIX = "mem.vmstat."

_U64 = (1 << 64) - 1
#: pmdalinux's "no value" mark for a field the kernel did not give (-1 as a uint64).
MISSING = _U64

# The three kinds of row: (semantics, units).
_COUNTER = (PMSem.PM_SEM_COUNTER, Units(dimCount=1))  # events since boot
_LEVEL = (PMSem.PM_SEM_INSTANT, Units(dimCount=1))  # a current level, count units
_PAGES = (PMSem.PM_SEM_INSTANT, Units())  # a current level, no units (the oldest rows)

#: (field, item, (semantics, units)), in item order.
FIELDS: tuple[tuple[str, int, tuple[PMSem, Units]], ...] = (
    ("nr_dirty", 0, _PAGES),
    ("nr_writeback", 1, _PAGES),
    ("nr_unstable", 2, _PAGES),
    ("nr_page_table_pages", 3, _PAGES),
    ("nr_mapped", 4, _PAGES),
    ("nr_slab", 5, _PAGES),
    ("pgpgin", 6, _COUNTER),
    ("pgpgout", 7, _COUNTER),
    ("pswpin", 8, _COUNTER),
    ("pswpout", 9, _COUNTER),
    ("pgalloc_high", 10, _COUNTER),
    ("pgalloc_normal", 11, _COUNTER),
    ("pgalloc_dma", 12, _COUNTER),
    ("pgfree", 13, _COUNTER),
    ("pgactivate", 14, _COUNTER),
    ("pgdeactivate", 15, _COUNTER),
    ("pgfault", 16, _COUNTER),
    ("pgmajfault", 17, _COUNTER),
    ("pgrefill_high", 18, _COUNTER),
    ("pgrefill_normal", 19, _COUNTER),
    ("pgrefill_dma", 20, _COUNTER),
    ("pgsteal_high", 21, _COUNTER),
    ("pgsteal_normal", 22, _COUNTER),
    ("pgsteal_dma", 23, _COUNTER),
    ("pgscan_kswapd_high", 24, _COUNTER),
    ("pgscan_kswapd_normal", 25, _COUNTER),
    ("pgscan_kswapd_dma", 26, _COUNTER),
    ("pgscan_direct_high", 27, _COUNTER),
    ("pgscan_direct_normal", 28, _COUNTER),
    ("pgscan_direct_dma", 29, _COUNTER),
    ("pginodesteal", 30, _COUNTER),
    ("slabs_scanned", 31, _COUNTER),
    ("kswapd_steal", 32, _COUNTER),
    ("kswapd_inodesteal", 33, _COUNTER),
    ("pageoutrun", 34, _COUNTER),
    ("allocstall", 35, _COUNTER),
    ("pgrotated", 36, _COUNTER),
    ("nr_slab_reclaimable", 37, _PAGES),
    ("nr_slab_unreclaimable", 38, _PAGES),
    ("nr_anon_pages", 39, _PAGES),
    ("nr_bounce", 40, _PAGES),
    ("nr_file_pages", 41, _PAGES),
    ("nr_vmscan_write", 42, _COUNTER),
    ("htlb_buddy_alloc_fail", 43, _COUNTER),
    ("htlb_buddy_alloc_success", 44, _COUNTER),
    ("nr_active_anon", 45, _LEVEL),
    ("nr_active_file", 46, _LEVEL),
    ("nr_free_pages", 47, _LEVEL),
    ("nr_inactive_anon", 48, _LEVEL),
    ("nr_inactive_file", 49, _LEVEL),
    ("nr_isolated_anon", 50, _LEVEL),
    ("nr_isolated_file", 51, _LEVEL),
    ("nr_kernel_stack", 52, _LEVEL),
    ("nr_mlock", 53, _LEVEL),
    ("nr_shmem", 54, _LEVEL),
    ("nr_unevictable", 55, _LEVEL),
    ("nr_writeback_temp", 56, _LEVEL),
    ("compact_blocks_moved", 57, _COUNTER),
    ("compact_fail", 58, _COUNTER),
    ("compact_pagemigrate_failed", 59, _COUNTER),
    ("compact_pages_moved", 60, _COUNTER),
    ("compact_stall", 61, _COUNTER),
    ("compact_success", 62, _COUNTER),
    ("pgalloc_dma32", 63, _COUNTER),
    ("pgalloc_movable", 64, _COUNTER),
    ("pgrefill_dma32", 65, _COUNTER),
    ("pgrefill_movable", 66, _COUNTER),
    ("pgscan_direct_dma32", 67, _COUNTER),
    ("pgscan_direct_movable", 68, _COUNTER),
    ("pgscan_kswapd_dma32", 69, _COUNTER),
    ("pgscan_kswapd_movable", 70, _COUNTER),
    ("pgsteal_dma32", 71, _COUNTER),
    ("pgsteal_movable", 72, _COUNTER),
    ("thp_fault_alloc", 73, _COUNTER),
    ("thp_fault_fallback", 74, _COUNTER),
    ("thp_collapse_alloc", 75, _COUNTER),
    ("thp_collapse_alloc_failed", 76, _COUNTER),
    ("thp_split", 77, _COUNTER),
    ("unevictable_pgs_cleared", 78, _COUNTER),
    ("unevictable_pgs_culled", 79, _COUNTER),
    ("unevictable_pgs_mlocked", 80, _COUNTER),
    ("unevictable_pgs_mlockfreed", 81, _COUNTER),
    ("unevictable_pgs_munlocked", 82, _COUNTER),
    ("unevictable_pgs_rescued", 83, _COUNTER),
    ("unevictable_pgs_scanned", 84, _COUNTER),
    ("unevictable_pgs_stranded", 85, _COUNTER),
    ("zone_reclaim_failed", 86, _COUNTER),
    ("kswapd_low_wmark_hit_quickly", 87, _COUNTER),
    (
        "kswapd_high_wmark_hit_quickly",
        88,
        _COUNTER,
    ),
    (
        "kswapd_skip_congestion_wait",
        89,
        _COUNTER,
    ),
    ("nr_anon_transparent_hugepages", 90, _LEVEL),
    ("nr_dirtied", 91, _COUNTER),
    ("nr_dirty_background_threshold", 92, _LEVEL),
    ("nr_dirty_threshold", 93, _LEVEL),
    ("nr_written", 94, _COUNTER),
    ("numa_foreign", 95, _COUNTER),
    ("numa_hit", 96, _COUNTER),
    ("numa_interleave", 97, _COUNTER),
    ("numa_local", 98, _COUNTER),
    ("numa_miss", 99, _COUNTER),
    ("numa_other", 100, _COUNTER),
    (
        "thp_zero_page_alloc",
        101,
        _COUNTER,
    ),
    (
        "thp_zero_page_alloc_failed",
        102,
        _COUNTER,
    ),
    ("balloon_deflate", 103, _COUNTER),
    ("balloon_inflate", 104, _COUNTER),
    ("balloon_migrate", 105, _COUNTER),
    (
        "compact_daemon_wake",
        106,
        _COUNTER,
    ),
    ("compact_free_scanned", 107, _COUNTER),
    ("compact_migrate_scanned", 108, _COUNTER),
    ("drop_pagecache", 109, _COUNTER),
    ("drop_slab", 110, _COUNTER),
    ("nr_free_cma", 111, _COUNTER),
    ("nr_pages_scanned", 112, _COUNTER),
    ("nr_vmscan_immediate_reclaim", 113, _COUNTER),
    ("numa_pages_migrated", 114, _COUNTER),
    ("numa_pte_updates", 115, _COUNTER),
    ("pglazyfreed", 116, _COUNTER),
    ("pgmigrate_fail", 117, _COUNTER),
    ("pgmigrate_success", 118, _COUNTER),
    ("thp_deferred_split_page", 119, _COUNTER),
    ("thp_split_page", 120, _COUNTER),
    ("thp_split_page_failed", 121, _COUNTER),
    ("thp_split_pmd", 122, _COUNTER),
    ("workingset_activate", 123, _COUNTER),
    ("workingset_nodereclaim", 124, _COUNTER),
    ("workingset_refault", 125, _COUNTER),
    ("compact_isolated", 126, _COUNTER),
    ("nr_shmem_hugepages", 127, _LEVEL),
    ("nr_shmem_pmdmapped", 128, _LEVEL),
    ("nr_zone_inactive_anon", 129, _LEVEL),
    ("nr_zone_active_anon", 130, _LEVEL),
    ("nr_zone_inactive_file", 131, _LEVEL),
    ("nr_zone_active_file", 132, _LEVEL),
    ("nr_zone_unevictable", 133, _LEVEL),
    ("nr_zone_write_pending", 134, _LEVEL),
    ("nr_zspages", 135, _LEVEL),
    ("thp_file_alloc", 136, _COUNTER),
    ("thp_file_mapped", 137, _COUNTER),
    ("pgsteal_kswapd_dma", 138, _COUNTER),
    ("pgsteal_kswapd_dma32", 139, _COUNTER),
    ("pgsteal_kswapd_normal", 140, _COUNTER),
    ("pgsteal_kswapd_movable", 141, _COUNTER),
    ("pgsteal_direct_dma", 142, _COUNTER),
    ("pgsteal_direct_dma32", 143, _COUNTER),
    ("pgsteal_direct_normal", 144, _COUNTER),
    ("pgsteal_direct_movable", 145, _COUNTER),
    ("pgscan_direct", 146, _COUNTER),
    ("pgscan_direct_throttle", 147, _COUNTER),
    ("pgscan_kswapd", 148, _COUNTER),
    ("pgsteal_direct", 149, _COUNTER),
    ("pgsteal_kswapd", 150, _COUNTER),
    ("numa_huge_pte_updates", 151, _COUNTER),
    ("numa_hint_faults", 152, _COUNTER),
    ("numa_hint_faults_local", 153, _COUNTER),
    ("allocstall_dma", 154, _COUNTER),
    ("allocstall_dma32", 155, _COUNTER),
    ("allocstall_high", 156, _COUNTER),
    ("allocstall_movable", 157, _COUNTER),
    ("allocstall_normal", 158, _COUNTER),
    (
        "compact_daemon_free_scanned",
        159,
        _COUNTER,
    ),
    (
        "compact_daemon_migrate_scanned",
        160,
        _COUNTER,
    ),
    ("nr_file_hugepages", 161, _LEVEL),
    ("nr_file_pmdmapped", 162, _LEVEL),
    ("nr_foll_pin_acquired", 163, _LEVEL),
    ("nr_foll_pin_released", 164, _LEVEL),
    ("nr_kernel_misc_reclaimable", 165, _LEVEL),
    ("oom_kill", 166, _COUNTER),
    ("pgsteal_file", 167, _COUNTER),
    ("swap_ra", 168, _COUNTER),
    ("swap_ra_hit", 169, _COUNTER),
    ("thp_fault_fallback_charge", 170, _COUNTER),
    ("thp_split_pud", 171, _COUNTER),
    ("thp_swpout", 172, _COUNTER),
    ("thp_swpout_fallback", 173, _COUNTER),
    ("workingset_nodes", 174, _COUNTER),
    ("workingset_restore", 175, _COUNTER),
    ("pgscan_direct_total", 176, _COUNTER),
    ("pgscan_kswapd_total", 177, _COUNTER),
    ("pgsteal_total", 178, _COUNTER),
)

#: Metrics whose value pmdalinux reads from another field: its namespace gives
#: mem.vmstat.balloon_deflate item 103 and balloon_inflate item 104, but its metric
#: table reads balloon_inflate for item 103 and balloon_deflate for item 104.
READS_FROM: dict[str, str] = {
    "balloon_deflate": "balloon_inflate",
    "balloon_inflate": "balloon_deflate",
}

#: Sums over the table's fields that start with a prefix, as pmdalinux computes them.
TOTALS: dict[str, str] = {
    "pgscan_direct_total": "pgscan_direct",
    "pgscan_kswapd_total": "pgscan_kswapd",
    "pgsteal_total": "pgsteal_",
}
#: Fields pmdalinux computes from two others when the kernel has no such field.
FALLBACKS: dict[str, tuple[str, str]] = {
    "nr_slab": ("nr_slab_reclaimable", "nr_slab_unreclaimable"),
    "thp_split": ("thp_split_page", "thp_split_page_failed"),
}

#: The /proc/vmstat fields pmdalinux reads (the table less the computed totals).
READ: frozenset[str] = frozenset(f for f, _, _ in FIELDS if f not in TOTALS)
#: The field each metric shows, by the metric's last name component.
SOURCE: dict[str, str] = {f: READS_FROM.get(f, f) for f in READ}
_READ_BYTES: frozenset[bytes] = frozenset(f.encode() for f in READ)
_DIGITS = b"0123456789"
#: One /proc/vmstat line that has a space: (the text before the first space, the rest).
_LINE = re.compile(rb"^([^ \n]*) ([^\n]*)", re.MULTILINE)
#: A whole file of plain lines, "name digits" (a number below 2**64), as kernels write it.
_PLAIN = re.compile(rb"(?:[!-~]+ [0-9]{1,19}\n)*")


#: `_keyed`'s tables: (name, field read), (name, fields summed), (name, own, part, part).
Keyed = tuple[
    tuple[tuple[str, bytes], ...],
    tuple[tuple[str, tuple[bytes, ...]], ...],
    tuple[tuple[str, bytes, bytes, bytes], ...],
]


def _keyed(prefix: str) -> Keyed:
    """The tables `_values` walks, with metric names as PREFIX + the field: (name, field
    read) pairs, (name, fields summed) totals, (name, own field, part, part) fallbacks."""
    reads = tuple((prefix + m, SOURCE[m].encode()) for m in sorted(READ))
    totals = tuple(
        (prefix + t, tuple(sorted(f.encode() for f in READ if f.startswith(p))))
        for t, p in TOTALS.items()
    )
    fallbacks = tuple(
        (prefix + f, f.encode(), a.encode(), b.encode()) for f, (a, b) in FALLBACKS.items()
    )
    return reads, totals, fallbacks


_SHORT = _keyed("")
_FULL = _keyed(PREFIX)


def _number(rest: bytes) -> int | None:
    """The digits starting at the first digit of REST (sscanf's %llu), or None if none."""
    start = next((i for i, c in enumerate(rest) if 48 <= c <= 57), None)
    if start is None:
        return None
    end = start
    while end < len(rest) and rest[end] in _DIGITS:
        end += 1
    return min(int(rest[start:end]), _U64)


def _fields(data: bytes) -> dict[bytes, int]:
    """{field: value} of the READ fields that DATA gives a number (digits from the first
    digit after the name's space; a field given twice keeps its last number)."""
    fields: dict[bytes, int] = {}
    for name, rest in _LINE.findall(data):
        if name in _READ_BYTES:
            value = _number(rest)
            if value is not None:
                fields[name] = value
    return fields


class _Layout:
    """How to read a plain file whose lines name the fields in one order: which words hold
    the fields read and under which names they go, worked out once per order of fields."""

    __slots__ = ("fallbacks", "fields", "names", "pick", "totals")

    def __init__(self, fields: list[bytes], keyed: Keyed) -> None:
        """Plan for lines naming FIELDS, in order (a field named twice: its last line)."""
        reads, totals, fallbacks = keyed
        self.fields = fields
        line_of = {field: n for n, field in enumerate(fields)}
        chosen = [(name, field) for name, field in reads if field in line_of]
        self.names = tuple(name for name, _ in chosen)
        lines = [line_of[field] for _, field in chosen]
        self.pick: Callable[[list[bytes]], Any] = lambda words: [words[n] for n in lines]
        if len(lines) > 1:
            self.pick = operator.itemgetter(*lines)
        at = {field: k for k, (_, field) in enumerate(chosen)}  # index among the values
        self.totals = tuple(
            (name, tuple(at[f] for f in summed if f in at)) for name, summed in totals
        )
        self.fallbacks = tuple(
            (name, at.get(a), at.get(b)) for name, own, a, b in fallbacks if own not in at
        )

    def values(self, numbers: list[bytes]) -> dict[str, int]:
        """The values from the NUMBERS of the file's lines, in order."""
        ints = list(map(int, self.pick(numbers)))
        found = dict(zip(self.names, ints, strict=True))
        for name, summed in self.totals:
            found[name] = sum(ints[k] for k in summed) & _U64
        for name, a, b in self.fallbacks:
            value = (
                (MISSING if a is None else ints[a]) + (MISSING if b is None else ints[b])
            ) & _U64
            if value != MISSING:
                found[name] = value
        return found


#: The last layout seen, by `Keyed` table (one order of fields per running kernel).
_layouts: dict[int, _Layout] = {}


def _values(data: bytes, keyed: Keyed) -> dict[str, int]:
    """The values DATA gives, named by KEYED's tables (see `values`)."""
    if _PLAIN.fullmatch(data):
        # the kernel's text, every line "name digits": by the words' places, known once
        words = data.split()
        fields = words[0::2]
        layout = _layouts.get(id(keyed))
        if layout is None or layout.fields != fields:
            layout = _layouts[id(keyed)] = _Layout(fields, keyed)
        return layout.values(words[1::2])
    reads, totals, fallbacks = keyed
    fields = _fields(data)
    get = fields.get
    found = {name: fields[field] for name, field in reads if field in fields}
    for name, summed in totals:
        found[name] = sum(get(f, 0) for f in summed) & _U64
    for name, own, a, b in fallbacks:
        if own not in fields:
            value = (get(a, MISSING) + get(b, MISSING)) & _U64
            if value != MISSING:
                found[name] = value
    return found


def values(data: bytes) -> dict[str, int]:
    """The mem.vmstat values (by the metric's last name component) that /proc/vmstat's DATA
    gives, as pmdalinux gives them: fields the kernel lacks are left out; see the module
    docstring."""
    return _values(data, _SHORT)


def metric_values(data: bytes) -> dict[str, int]:
    """`values`, named by the whole metric name (PREFIX + the last component)."""
    return _values(data, _FULL)
