"""mem.vmstat.*: PCP's linux agent's /proc/vmstat family, as one table.

Each row of `FIELDS` is one metric of pmdalinux's vmstat cluster (cluster 28):
the metric's last name component (also the /proc/vmstat field it reads, but for
the two of `READS_FROM`), its item number, its kind (which fixes semantics and
units) and pmdalinux's own one-line help, kept only so the interop test can
compare our catalog with the reference agent; our help text is in help/linux.
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

from pmapi.types import PMSem
from pmapi.units import Units

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

#: (field, item, (semantics, units), pmdalinux's one-line help), in item order.
FIELDS: tuple[tuple[str, int, tuple[PMSem, Units], str], ...] = (
    ("nr_dirty", 0, _PAGES, "number of pages in dirty state"),
    ("nr_writeback", 1, _PAGES, "number of pages in writeback state"),
    ("nr_unstable", 2, _PAGES, "number of pages in unstable state"),
    ("nr_page_table_pages", 3, _PAGES, "number of page table pages"),
    ("nr_mapped", 4, _PAGES, "number of mapped pagecache pages"),
    ("nr_slab", 5, _PAGES, "number of slab pages"),
    ("pgpgin", 6, _COUNTER, "page in operations"),
    ("pgpgout", 7, _COUNTER, "page out operations"),
    ("pswpin", 8, _COUNTER, "pages swapped in"),
    ("pswpout", 9, _COUNTER, "pages swapped out"),
    ("pgalloc_high", 10, _COUNTER, "high mem page allocations"),
    ("pgalloc_normal", 11, _COUNTER, "normal mem page allocations"),
    ("pgalloc_dma", 12, _COUNTER, "dma mem page allocations"),
    ("pgfree", 13, _COUNTER, "page free operations"),
    ("pgactivate", 14, _COUNTER, "pages moved from inactive to active"),
    ("pgdeactivate", 15, _COUNTER, "pages moved from active to inactive"),
    ("pgfault", 16, _COUNTER, "page major and minor fault operations"),
    ("pgmajfault", 17, _COUNTER, "major page fault operations"),
    ("pgrefill_high", 18, _COUNTER, "high mem pages inspected in refill_inactive_zone"),
    ("pgrefill_normal", 19, _COUNTER, "normal mem pages inspected in refill_inactive_zone"),
    ("pgrefill_dma", 20, _COUNTER, "dma mem pages inspected in refill_inactive_zone"),
    ("pgsteal_high", 21, _COUNTER, "high mem pages reclaimed"),
    ("pgsteal_normal", 22, _COUNTER, "normal mem pages reclaimed"),
    ("pgsteal_dma", 23, _COUNTER, "dma mem pages reclaimed"),
    ("pgscan_kswapd_high", 24, _COUNTER, "high mem pages scanned by kswapd"),
    ("pgscan_kswapd_normal", 25, _COUNTER, "normal mem pages scanned by kswapd"),
    ("pgscan_kswapd_dma", 26, _COUNTER, "dma mem pages scanned by kswapd"),
    ("pgscan_direct_high", 27, _COUNTER, "high mem pages scanned"),
    ("pgscan_direct_normal", 28, _COUNTER, "normal mem pages scanned"),
    ("pgscan_direct_dma", 29, _COUNTER, "dma mem pages scanned"),
    ("pginodesteal", 30, _COUNTER, "pages reclaimed via inode freeing"),
    ("slabs_scanned", 31, _COUNTER, "slab pages scanned"),
    ("kswapd_steal", 32, _COUNTER, "pages reclaimed by kswapd"),
    ("kswapd_inodesteal", 33, _COUNTER, "pages reclaimed via kswapd inode freeing"),
    ("pageoutrun", 34, _COUNTER, "kswapd calls to page reclaim"),
    ("allocstall", 35, _COUNTER, "direct reclaim calls"),
    ("pgrotated", 36, _COUNTER, "pages rotated to tail of the LRU"),
    ("nr_slab_reclaimable", 37, _PAGES, "reclaimable slab pages"),
    ("nr_slab_unreclaimable", 38, _PAGES, "unreclaimable slab pages"),
    ("nr_anon_pages", 39, _PAGES, "number of anonymous mapped pagecache pages"),
    ("nr_bounce", 40, _PAGES, "number of bounce buffer pages"),
    ("nr_file_pages", 41, _PAGES, "count of pages used for files"),
    ("nr_vmscan_write", 42, _COUNTER, "pages written by VM scanner from LRU"),
    ("htlb_buddy_alloc_fail", 43, _COUNTER, "huge TLB page buddy allocation failures"),
    ("htlb_buddy_alloc_success", 44, _COUNTER, "huge TLB page buddy allocation successes"),
    ("nr_active_anon", 45, _LEVEL, "number of active anonymous memory pages"),
    ("nr_active_file", 46, _LEVEL, "number of active file memory memory pages"),
    ("nr_free_pages", 47, _LEVEL, "number of free pages"),
    ("nr_inactive_anon", 48, _LEVEL, "number of inactive anonymous memory pages"),
    ("nr_inactive_file", 49, _LEVEL, "number of inactive file memory pages"),
    ("nr_isolated_anon", 50, _LEVEL, "number of isolated anonymous memory pages"),
    ("nr_isolated_file", 51, _LEVEL, "number of isolated file memory pages"),
    ("nr_kernel_stack", 52, _LEVEL, "number of pages of kernel stack"),
    ("nr_mlock", 53, _LEVEL, "number of pages under mlock"),
    ("nr_shmem", 54, _LEVEL, "number of shared memory pages"),
    ("nr_unevictable", 55, _LEVEL, "number of unevictable pages"),
    ("nr_writeback_temp", 56, _LEVEL, "number of temporary writeback pages"),
    ("compact_blocks_moved", 57, _COUNTER, "count of compact blocks moved"),
    ("compact_fail", 58, _COUNTER, "count of unsuccessful compactions for high order allocations"),
    ("compact_pagemigrate_failed", 59, _COUNTER, "count of pages unsuccessfully compacted"),
    ("compact_pages_moved", 60, _COUNTER, "count of pages successfully moved for compaction"),
    ("compact_stall", 61, _COUNTER, "count of failures to even start compacting"),
    ("compact_success", 62, _COUNTER, "count of successful compactions for high order allocations"),
    ("pgalloc_dma32", 63, _COUNTER, "dma32 mem page allocations"),
    ("pgalloc_movable", 64, _COUNTER, "movable mem page allocations"),
    ("pgrefill_dma32", 65, _COUNTER, "dma32 mem pages inspected in refill_inactive_zone"),
    ("pgrefill_movable", 66, _COUNTER, "movable mem pages inspected in refill_inactive_zone"),
    ("pgscan_direct_dma32", 67, _COUNTER, "dma32 mem pages scanned"),
    ("pgscan_direct_movable", 68, _COUNTER, "movable mem pages scanned"),
    ("pgscan_kswapd_dma32", 69, _COUNTER, "dma32 mem pages scanned by kswapd"),
    ("pgscan_kswapd_movable", 70, _COUNTER, "movable mem pages scanned by kswapd"),
    ("pgsteal_dma32", 71, _COUNTER, "dma32 mem pages reclaimed"),
    ("pgsteal_movable", 72, _COUNTER, "movable mem pages reclaimed"),
    ("thp_fault_alloc", 73, _COUNTER, "transparent huge page fault allocations"),
    ("thp_fault_fallback", 74, _COUNTER, "transparent huge page fault fallbacks"),
    ("thp_collapse_alloc", 75, _COUNTER, "transparent huge page collapse allocations"),
    ("thp_collapse_alloc_failed", 76, _COUNTER, "transparent huge page collapse failures"),
    ("thp_split", 77, _COUNTER, "count of transparent huge page splits"),
    ("unevictable_pgs_cleared", 78, _COUNTER, "count of unevictable pages cleared"),
    ("unevictable_pgs_culled", 79, _COUNTER, "count of unevictable pages culled"),
    ("unevictable_pgs_mlocked", 80, _COUNTER, "count of mlocked unevictable pages"),
    ("unevictable_pgs_mlockfreed", 81, _COUNTER, "count of unevictable pages mlock freed"),
    ("unevictable_pgs_munlocked", 82, _COUNTER, "count of unevictable pages munlocked"),
    ("unevictable_pgs_rescued", 83, _COUNTER, "count of unevictable pages rescued"),
    ("unevictable_pgs_scanned", 84, _COUNTER, "count of unevictable pages scanned"),
    ("unevictable_pgs_stranded", 85, _COUNTER, "count of unevictable pages stranded"),
    ("zone_reclaim_failed", 86, _COUNTER, "number of zone reclaim failures"),
    ("kswapd_low_wmark_hit_quickly", 87, _COUNTER, "count of times low watermark reached quickly"),
    (
        "kswapd_high_wmark_hit_quickly",
        88,
        _COUNTER,
        "count of times high watermark reached quickly",
    ),
    (
        "kswapd_skip_congestion_wait",
        89,
        _COUNTER,
        "count of times kswapd skipped waiting on device congestion",
    ),
    ("nr_anon_transparent_hugepages", 90, _LEVEL, "number of anonymous transparent huge pages"),
    ("nr_dirtied", 91, _COUNTER, "count of pages dirtied"),
    ("nr_dirty_background_threshold", 92, _LEVEL, "background writeback threshold"),
    ("nr_dirty_threshold", 93, _LEVEL, "dirty throttling threshold"),
    ("nr_written", 94, _COUNTER, "count of pages written out"),
    ("numa_foreign", 95, _COUNTER, "count of foreign NUMA zone allocations"),
    ("numa_hit", 96, _COUNTER, "count of successful allocations from preferred NUMA zone"),
    ("numa_interleave", 97, _COUNTER, "count of interleaved NUMA allocations"),
    ("numa_local", 98, _COUNTER, "count of successful allocations from local NUMA zone"),
    ("numa_miss", 99, _COUNTER, "count of unsuccessful allocations from preferred NUMA zona"),
    ("numa_other", 100, _COUNTER, "count of unsuccessful allocations from local NUMA zone"),
    (
        "thp_zero_page_alloc",
        101,
        _COUNTER,
        "count of transparent huge page zeroed page allocations",
    ),
    (
        "thp_zero_page_alloc_failed",
        102,
        _COUNTER,
        "count of transparent huge page zeroed page allocation failures",
    ),
    ("balloon_deflate", 103, _COUNTER, "number of virt guest balloon page deflations"),
    ("balloon_inflate", 104, _COUNTER, "count of virt guest balloon page inflations"),
    ("balloon_migrate", 105, _COUNTER, "number of virt guest balloon page migrations"),
    (
        "compact_daemon_wake",
        106,
        _COUNTER,
        "number of times the memory compaction daemon was woken",
    ),
    ("compact_free_scanned", 107, _COUNTER, "count of pages scanned for freeing"),
    ("compact_migrate_scanned", 108, _COUNTER, "count of pages scanned for migration"),
    ("drop_pagecache", 109, _COUNTER, "count of calls to drop page cache pages"),
    ("drop_slab", 110, _COUNTER, "count of calls to drop slab cache pages"),
    ("nr_free_cma", 111, _COUNTER, "count of free Contiguous Memory Allocator pages"),
    ("nr_pages_scanned", 112, _COUNTER, "count of pages scanned during page reclaim"),
    ("nr_vmscan_immediate_reclaim", 113, _COUNTER, "prioritise for reclaim when writeback ends"),
    ("numa_pages_migrated", 114, _COUNTER, "count of NUMA page migrations"),
    ("numa_pte_updates", 115, _COUNTER, "count of NUMA page table entry updates"),
    ("pglazyfreed", 116, _COUNTER, "count of pages lazily freed"),
    ("pgmigrate_fail", 117, _COUNTER, "count of unsuccessful NUMA page migrations"),
    ("pgmigrate_success", 118, _COUNTER, "count of successful NUMA page migrations"),
    ("thp_deferred_split_page", 119, _COUNTER, "count of huge page enqueues for splitting"),
    ("thp_split_page", 120, _COUNTER, "count of huge page splits into base pages"),
    ("thp_split_page_failed", 121, _COUNTER, "count of failures to split a huge page"),
    ("thp_split_pmd", 122, _COUNTER, "count of times a PMD was split into table of PTEs"),
    ("workingset_activate", 123, _COUNTER, "count of page activations to form the working set"),
    ("workingset_nodereclaim", 124, _COUNTER, "count of NUMA node working set page reclaims"),
    ("workingset_refault", 125, _COUNTER, "count of refaults of previously evicted pages"),
    ("compact_isolated", 126, _COUNTER, "count of isolated compaction pages"),
    ("nr_shmem_hugepages", 127, _LEVEL, "number of huge pages used for shared memory"),
    ("nr_shmem_pmdmapped", 128, _LEVEL, "number of PMD mappings used for shared memory"),
    ("nr_zone_inactive_anon", 129, _LEVEL, "number of inactive anonymous memory pages in zones"),
    ("nr_zone_active_anon", 130, _LEVEL, "number of inactive file memory pages in zones"),
    ("nr_zone_inactive_file", 131, _LEVEL, "number of isolated anonymous memory pages in zones"),
    ("nr_zone_active_file", 132, _LEVEL, "number of isolated file memory pages in zones"),
    ("nr_zone_unevictable", 133, _LEVEL, "number of unevictable memory pages in zones"),
    ("nr_zone_write_pending", 134, _LEVEL, "count of dirty, writeback and unstable pages"),
    ("nr_zspages", 135, _LEVEL, "number of compressed pages"),
    ("thp_file_alloc", 136, _COUNTER, "transparent huge page file allocations"),
    ("thp_file_mapped", 137, _COUNTER, "transparent huge page file mappings"),
    ("pgsteal_kswapd_dma", 138, _COUNTER, "dma mem pages reclaimed by kswapd"),
    ("pgsteal_kswapd_dma32", 139, _COUNTER, "dma32 mem pages reclaimed by kswapd"),
    ("pgsteal_kswapd_normal", 140, _COUNTER, "normal mem pages reclaimed by kswapd"),
    ("pgsteal_kswapd_movable", 141, _COUNTER, "movable mem pages reclaimed by kswapd"),
    ("pgsteal_direct_dma", 142, _COUNTER, "dma mem pages reclaimed"),
    ("pgsteal_direct_dma32", 143, _COUNTER, "dma32 mem pages reclaimed"),
    ("pgsteal_direct_normal", 144, _COUNTER, "normal mem pages reclaimed"),
    ("pgsteal_direct_movable", 145, _COUNTER, "movable mem pages reclaimed"),
    ("pgscan_direct", 146, _COUNTER, "directly scanned mem pages"),
    ("pgscan_direct_throttle", 147, _COUNTER, "throttled direct scanned mem pages"),
    ("pgscan_kswapd", 148, _COUNTER, "mem pages scanned by kswapd"),
    ("pgsteal_direct", 149, _COUNTER, "mem pages directly reclaimed"),
    ("pgsteal_kswapd", 150, _COUNTER, "mem pages reclaimed by kswapd"),
    ("numa_huge_pte_updates", 151, _COUNTER, "count of NUMA huge page table entry updates"),
    ("numa_hint_faults", 152, _COUNTER, "count of page migrations from NUMA PTE fault hints"),
    ("numa_hint_faults_local", 153, _COUNTER, "count of NUMA PTE fault hints satisfied locally"),
    ("allocstall_dma", 154, _COUNTER, "direct dma memory reclaim calls"),
    ("allocstall_dma32", 155, _COUNTER, "direct dma32 memory reclaim calls"),
    ("allocstall_high", 156, _COUNTER, "direct high memory reclaim calls"),
    ("allocstall_movable", 157, _COUNTER, "direct movable memory reclaim calls"),
    ("allocstall_normal", 158, _COUNTER, "direct normal memory reclaim calls"),
    (
        "compact_daemon_free_scanned",
        159,
        _COUNTER,
        "count of pages scanned for migration by compaction daemon",
    ),
    (
        "compact_daemon_migrate_scanned",
        160,
        _COUNTER,
        "count of pages scanned for migration by compaction daemon",
    ),
    ("nr_file_hugepages", 161, _LEVEL, "count of hugepages used for files"),
    ("nr_file_pmdmapped", 162, _LEVEL, "count of PMD mappings used for files"),
    ("nr_foll_pin_acquired", 163, _LEVEL, "count of pinned user memory acquisitions"),
    ("nr_foll_pin_released", 164, _LEVEL, "count of pinned user memory releases"),
    ("nr_kernel_misc_reclaimable", 165, _LEVEL, "number of misc reclaimable kernel pages"),
    ("oom_kill", 166, _COUNTER, "count of out-of-memory kills"),
    ("pgsteal_file", 167, _COUNTER, "file memory pages reclaimed"),
    ("swap_ra", 168, _COUNTER, "count of swap pages readahead"),
    ("swap_ra_hit", 169, _COUNTER, "count of swap pages readahead that were used"),
    ("thp_fault_fallback_charge", 170, _COUNTER, "transparent huge page fault fallback charges"),
    ("thp_split_pud", 171, _COUNTER, "count of times a huge page PUD was split"),
    ("thp_swpout", 172, _COUNTER, "count of transparent huge page swapouts"),
    ("thp_swpout_fallback", 173, _COUNTER, "count of transparent huge page swapout fallbacks"),
    ("workingset_nodes", 174, _COUNTER, "count of NUMA nodes holding the working set"),
    ("workingset_restore", 175, _COUNTER, "count of restored of previously evicted pages"),
    ("pgscan_direct_total", 176, _COUNTER, "cumulative total of directly scanned mem pages"),
    ("pgscan_kswapd_total", 177, _COUNTER, "cumulative total mem pages scanned by kswapd"),
    ("pgsteal_total", 178, _COUNTER, "cumulative total mem pages reclaimed"),
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
READ: frozenset[str] = frozenset(f for f, _, _, _ in FIELDS if f not in TOTALS)
#: The field each metric shows, by the metric's last name component.
SOURCE: dict[str, str] = {f: READS_FROM.get(f, f) for f in READ}
_READ_BYTES: frozenset[bytes] = frozenset(f.encode() for f in READ)
_DIGITS = b"0123456789"


def _number(rest: bytes) -> int | None:
    """The digits starting at the first digit of REST (sscanf's %llu), or None if none."""
    start = next((i for i, c in enumerate(rest) if 48 <= c <= 57), None)
    if start is None:
        return None
    end = start
    while end < len(rest) and rest[end] in _DIGITS:
        end += 1
    return min(int(rest[start:end]), _U64)


def values(data: bytes) -> dict[str, int]:
    """The mem.vmstat values (by the metric's last name component) that /proc/vmstat's DATA
    gives, as pmdalinux gives them: fields the kernel lacks are left out; see the module
    docstring."""
    fields: dict[str, int] = {}
    for line in data.split(b"\n"):
        name, space, rest = line.partition(b" ")
        if not space or name not in _READ_BYTES:
            continue
        value = _number(rest)
        if value is not None:
            fields[name.decode()] = value
    found = {metric: fields[field] for metric, field in SOURCE.items() if field in fields}
    for total, prefix in TOTALS.items():
        found[total] = sum(v for f, v in fields.items() if f.startswith(prefix)) & _U64
    for field, parts in FALLBACKS.items():
        if field not in fields:
            value = sum(fields.get(part, MISSING) for part in parts) & _U64
            if value != MISSING:
                found[field] = value
    return found
