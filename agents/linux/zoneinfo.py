"""Memory zones: mem.zoneinfo.* (/proc/zoneinfo) and mem.buddyinfo.* (/proc/buddyinfo).

As PCP 6.0.3's pmdalinux computes them (proc_zoneinfo.c, proc_buddyinfo.c, pmda.c):

- ZONEINFO_INDOM (serial 32) has one instance per zone, "ZONE::nodeN", and one
  per node for the kernel's "per-node stats" block, "nodeN"; ids are
  pmdaCache's (0, 1, ... in order first seen, the node's before its first
  zone's, saved in $PCP_VAR_DIR/config/pmda/60.32).  A zone whose "present"
  count is 0 is hidden.  Every value is a page count shown in Kbyte
  (pages * page size / 1024), whatever the line counts.  A line is matched
  the way sscanf(" key %llu") matches it; a key the kernel does not print
  has no value, and mem.zoneinfo.nr_free_pages never has one (pmdalinux has
  no parser line for it).  pmdalinux forgets the nr_zone_{inactive,active}_anon,
  nr_zone_unevictable and nr_zone_write_pending keys only when the instance
  is new (their "seen" flags live in a word it never clears), so they keep
  their last value if the kernel stops printing them;
- ZONEINFO_PROTECTION_INDOM (33): "ZONE::nodeN::lowmem_reservedK" for each
  number of a zone's "protection: (...)" list, in Kbyte; instances are never
  removed nor saved;
- BUDDYINFO_INDOM (31): "ZONE::orderK::nodeN" for K below the number of orders
  counted once from the first line of /proc/buddyinfo; ids 0, 1, ... as zones
  appear, never removed; counts are read as 32-bit numbers, and the total is
  count << K pages in Kbyte.  The "numa_node" label is atoi("nodeN"), that is
  always 0, as in pmdalinux.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.cnumbers import atoi, strtoul
from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .instids import InstanceIds
from .records import INSTANT, KBYTE, NONE, U64, MetricInfo

#: pmdalinux's instance domains and clusters.
BUDDYINFO_INDOM, ZONEINFO_INDOM, ZONEINFO_PROTECTION_INDOM = 31, 32, 33
CLUSTER_BUDDYINFO, CLUSTER_ZONEINFO, CLUSTER_ZONEINFO_PROTECTION = 67, 68, 70

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1

#: mem.zoneinfo.SUFFIX: (suffix, item, the /proc/zoneinfo keys that set it), in item order.
ZONEINFO: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("free", 0, ("pages free",)),
    ("min", 1, ("min",)),
    ("low", 2, ("low",)),
    ("high", 3, ("high",)),
    ("scanned", 4, ("scanned", "node_scanned")),
    ("spanned", 5, ("spanned",)),
    ("present", 6, ("present",)),
    ("managed", 7, ("managed",)),
    ("nr_free_pages", 8, ()),  # pmdalinux never reads it
    ("nr_alloc_batch", 9, ("nr_alloc_batch",)),
    ("nr_inactive_anon", 10, ("nr_inactive_anon",)),
    ("nr_active_anon", 11, ("nr_active_anon",)),
    ("nr_inactive_file", 12, ("nr_inactive_file",)),
    ("nr_active_file", 13, ("nr_active_file",)),
    ("nr_unevictable", 14, ("nr_unevictable",)),
    ("nr_mlock", 15, ("nr_mlock",)),
    ("nr_anon_pages", 16, ("nr_anon_pages",)),
    ("nr_mapped", 17, ("nr_mapped",)),
    ("nr_file_pages", 18, ("nr_file_pages",)),
    ("nr_dirty", 19, ("nr_dirty",)),
    ("nr_writeback", 20, ("nr_writeback",)),
    ("nr_slab_reclaimable", 21, ("nr_slab_reclaimable",)),
    ("nr_slab_unreclaimable", 22, ("nr_slab_unreclaimable",)),
    ("nr_page_table_pages", 23, ("nr_page_table_pages",)),
    ("nr_kernel_stack", 24, ("nr_kernel_stack",)),
    ("nr_unstable", 25, ("nr_unstable",)),
    ("nr_bounce", 26, ("nr_bounce",)),
    ("nr_vmscan_write", 27, ("nr_vmscan_write",)),
    ("nr_vmscan_immediate_reclaim", 28, ("nr_vmscan_immediate_reclaim",)),
    ("nr_writeback_temp", 29, ("nr_writeback_temp",)),
    ("nr_isolated_anon", 30, ("nr_isolated_anon",)),
    ("nr_isolated_file", 31, ("nr_isolated_file",)),
    ("nr_shmem", 32, ("nr_shmem",)),
    ("nr_dirtied", 33, ("nr_dirtied",)),
    ("nr_written", 34, ("nr_written",)),
    ("numa_hit", 35, ("numa_hit",)),
    ("numa_miss", 36, ("numa_miss",)),
    ("numa_foreign", 37, ("numa_foreign",)),
    ("numa_interleave", 38, ("numa_interleave",)),
    ("numa_local", 39, ("numa_local",)),
    ("numa_other", 40, ("numa_other",)),
    ("workingset_refault", 41, ("workingset_refault",)),
    ("workingset_activate", 42, ("workingset_activate",)),
    ("workingset_nodereclaim", 43, ("workingset_nodereclaim",)),
    ("nr_anon_transparent_hugepages", 44, ("nr_anon_transparent_hugepages",)),
    ("nr_free_cma", 45, ("nr_free_cma",)),
    ("cma", 46, ("cma",)),
    ("nr_swapcached", 47, ("nr_swapcached",)),
    ("nr_shmem_hugepages", 48, ("nr_shmem_hugepages",)),
    ("nr_shmem_pmdmapped", 49, ("nr_shmem_pmdmapped",)),
    ("nr_file_hugepages", 50, ("nr_file_hugepages",)),
    ("nr_file_pmdmapped", 51, ("nr_file_pmdmapped",)),
    ("nr_kernel_misc_reclaimable", 52, ("nr_kernel_misc_reclaimable",)),
    ("nr_foll_pin_acquired", 53, ("nr_foll_pin_acquired",)),
    ("nr_foll_pin_released", 54, ("nr_foll_pin_released",)),
    ("workingset_refault_anon", 55, ("workingset_refault_anon",)),
    ("workingset_refault_file", 56, ("workingset_refault_file",)),
    ("workingset_active_anon", 57, ("workingset_activate_anon",)),
    ("workingset_active_file", 58, ("workingset_activate_file",)),
    ("workingset_restore_anon", 59, ("workingset_restore_anon",)),
    ("workingset_restore_file", 60, ("workingset_restore_file",)),
    ("nr_zspages", 61, ("nr_zspages",)),
    ("nr_zone_inactive_file", 62, ("nr_zone_inactive_file",)),
    ("nr_zone_active_file", 63, ("nr_zone_active_file",)),
    ("nr_zone_inactive_anon", 64, ("nr_zone_inactive_anon",)),
    ("nr_zone_active_anon", 65, ("nr_zone_active_anon",)),
    ("nr_zone_unevictable", 66, ("nr_zone_unevictable",)),
    ("nr_zone_write_pending", 67, ("nr_zone_write_pending",)),
)

#: Items from this one on have "seen" flags pmdalinux never clears (its flags1 word).
STICKY_FROM = 64
#: The zoneinfo item a /proc/zoneinfo key sets.
ZONE_KEYS: dict[str, int] = {key: item for _, item, keys in ZONEINFO for key in keys}
_PRESENT = ZONE_KEYS["present"]

#: mem.buddyinfo.SUFFIX: (suffix, item, units).
BUDDYINFO: tuple[tuple[str, int, Any], ...] = (("pages", 0, NONE), ("total", 1, KBYTE))


def _zoneinfo_record(suffix: str, item: int, keys: tuple[str, ...]) -> MetricInfo:
    """One mem.zoneinfo.* record."""
    source = (
        f"/proc/zoneinfo '{' or '.join(keys)}' of the zone or node, pages * pagesize / 1024"
        if keys
        else "never a value: pmdalinux does not parse /proc/zoneinfo's nr_free_pages"
    )
    return MetricInfo(
        f"mem.zoneinfo.{suffix}", CLUSTER_ZONEINFO, item, U64, ZONEINFO_INDOM, INSTANT, KBYTE,
        source=source,
    )  # fmt: skip


#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = (
    *(
        MetricInfo(
            f"mem.buddyinfo.{suffix}", CLUSTER_BUDDYINFO, item, U64, BUDDYINFO_INDOM, INSTANT,
            units,
            source="/proc/buddyinfo free blocks of the zone and order (32-bit)"
            + (", * 2**order * pagesize / 1024" if item else ""),
        )
        for suffix, item, units in BUDDYINFO
    ),
    *(_zoneinfo_record(*row) for row in ZONEINFO),
    MetricInfo(
        "mem.zoneinfo.protection", CLUSTER_ZONEINFO_PROTECTION, 0, U64,
        ZONEINFO_PROTECTION_INDOM, INSTANT, KBYTE,
        source="/proc/zoneinfo 'protection: (...)' Kth number, pages * pagesize / 1024",
    ),
)  # fmt: skip

_ZONEINFO_NAMES = {f"mem.zoneinfo.{suffix}": item for suffix, item, keys in ZONEINFO if keys}
_ZONEINFO_ITEMS = tuple(_ZONEINFO_NAMES.items())

# --- /proc/zoneinfo -------------------------------------------------------------------------

_HEADER = re.compile(r"Node\s*([+-]?[0-9]+),\s*zone\s*(\S+)")
_VALUE = re.compile(r"\s*(?:(?P<free>pages\s*free)|(?P<key>[A-Za-z_]+))\s*(?P<num>[+-]?[0-9]+)")
_PROTECTION = "        protection: "
#: A protection list of plain numbers split by ", " (the common case, parsed by one split).
_PROTECTION_PLAIN = re.compile(r"[0-9]+(?:, [0-9]+)*(?![0-9,])")
_DIGITS = "0123456789"

#: What a /proc/zoneinfo line does in refresh_proc_zoneinfo (first field of a LineKind).
#: VALUE sets (item, sign, starts "  pages ") from the line's trailing digits; FIXED sets
#: (item or None, value, starts "  pages "); HEADER starts (node, zone) or an unusable
#: section (None); PERNODE starts the node's block; PROTECTION gives the list's numbers;
#: PLAIN is VALUE with no sign and not a "  pages " line: (item).
NOTHING, VALUE, FIXED, HEADER, PERNODE, PROTECTION, PLAIN = range(7)
LineKind = tuple[Any, ...]


@dataclass
class ZoneEntry:
    """A zone or a node's per-node block: pmdalinux's zoneinfo_entry_t."""

    node: int
    zone: str  # "" for a node's per-node block
    values: dict[int, int] = field(default_factory=dict)  # kept between reads, as pmdalinux
    seen: set[int] = field(default_factory=set)  # items read this time (and the sticky ones)

    def reset(self) -> None:
        """Forget which items were read, except those pmdalinux never forgets."""
        self.seen = {item for item in self.seen if item >= STICKY_FROM}


@dataclass
class Protection:
    """One number of a zone's protection list: pmdalinux's zoneprot_entry_t."""

    node: int
    zone: str
    lowmem: int
    value: int


@dataclass
class Buddy:
    """One (zone, order, node) instance of /proc/buddyinfo."""

    inst: int
    name: str
    node: str
    zone: str
    order: int
    value: int = 0


def protection_numbers(text: str) -> tuple[int, ...]:
    """pmdalinux's extract_zone_protection: the numbers of a list (TEXT is after its "(")."""
    plain = _PROTECTION_PLAIN.match(text)
    if plain is not None:
        return tuple(min(int(n), _U64) for n in plain[0].split(", "))
    numbers = []
    while True:
        scan = strtoul(text)  # (no number: 0, and the end is the start)
        numbers.append(int(scan.value))
        end = scan.end
        if text[end : end + 1] != ",":
            return tuple(numbers)
        text = text[end + 2 :]


def zoneinfo_line(line: str) -> LineKind:
    """What LINE of /proc/zoneinfo does, checked in the order the C code checks."""
    if line.startswith("Node"):
        m = _HEADER.match(line)
        return (HEADER, None) if m is None else (HEADER, (int(m[1]) & _U32, m[2]))
    if line.startswith("  per-node stats"):
        return (PERNODE,)  # never a value line: "per" is followed by "-"
    pages = line.startswith("  pages ")
    m = _VALUE.match(line)
    if m is not None:
        item = ZONE_KEYS.get("pages free" if m["free"] else m["key"])
        if item is not None or pages:
            num = m["num"]
            return (FIXED, item, int(strtoul(num).value), pages)
    elif line.startswith(_PROTECTION):
        return (PROTECTION, protection_numbers(line[len(_PROTECTION) + 1 :]))
    return (FIXED, None, 0, True) if pages else (NOTHING,)


def zoneinfo_stem(stem: str) -> LineKind | None:
    """What a line made of STEM and some digits does, whatever the digits; None if that
    depends on them (a header, a protection list)."""
    if stem.startswith(("Node", _PROTECTION)):
        return None
    kind = zoneinfo_line(stem + "0")
    if kind[0] != FIXED:
        return kind
    m = _VALUE.match(stem + "0")
    if m is None or m.end("num") <= len(stem):
        return kind  # the number read is inside STEM, or there is none
    sign = m["num"][:1]
    if kind[1] is not None and not kind[3] and sign not in "+-":
        return (PLAIN, kind[1])
    return (VALUE, kind[1], sign if sign in "+-" else "", kind[3])


_SPACES = re.compile(" +")


def buddy_tokens(text: str) -> list[str]:
    """PCP's read_buddyinfo split: leading spaces skipped, then fields between runs of spaces.

    Only spaces separate, so a line's trailing " \\n" makes a last field "\\n".
    """
    return _SPACES.split(text.lstrip(" "))


def buddy_node_name(line: str) -> str:
    """PCP's read_node_name: "Node 0, zone ..." gives "node0" (no space: one char lost)."""
    head = line.split(",", 1)[0].replace("N", "n")
    space = head.find(" ")
    if space < 0:
        space = len(head)
    return (head[:space] + head[space + 1 :])[: len(head) - 1]


class ZoneInfo(LinuxBase):
    """The zoneinfo, zone protection and buddyinfo instance domains and clusters."""

    zoneinfo_zones = InDom(
        ZONEINFO_INDOM,
        labels={"device_type": ["memory", "numa_node"], "indom_name": "per zone per numa_node"},
    )
    zoneinfo_protection = InDom(ZONEINFO_PROTECTION_INDOM)
    zoneinfo_buddies = InDom(
        BUDDYINFO_INDOM,
        labels={"device_type": ["memory", "numa_node"], "indom_name": "per buddy per numa_node"},
    )
    instance_label_rules = {
        ZONEINFO_INDOM: lambda agent, inst, name: agent._zoneinfo_zone_labels(name),
        ZONEINFO_PROTECTION_INDOM: lambda agent, inst, name: agent._zoneinfo_prot_labels(name),
        BUDDYINFO_INDOM: lambda agent, inst, name: agent._zoneinfo_buddy_labels(inst),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; nothing read yet."""
        super().__init__(*args, **kwargs)
        self._zoneinfo_ids = InstanceIds(self._cache_file(self.zoneinfo_zones))
        self._zoneinfo_entries: dict[str, ZoneEntry] = {}
        self._zoneinfo_active: dict[int, str] = {}
        self._zoneinfo_prot_ids = InstanceIds()
        self._zoneinfo_prot: dict[str, Protection] = {}
        self._zoneinfo_max_order: int | None = None
        self._zoneinfo_buddy: list[Buddy] = []
        self._zoneinfo_buddy_at: dict[tuple[str, str], int] = {}
        self._zoneinfo_read_buf: list[str] = []
        self._zoneinfo_stems: dict[str, LineKind | None] = {}  # see _zoneinfo_read
        self._zoneinfo_kinds: dict[str, LineKind] = {}
        self._zoneinfo_prot_listed = -1  # how many protection entries the indom last had
        self._zoneinfo_buddy_listed = -1  # how many buddy instances the indom last had

    @property
    def _zoneinfo_pageshift(self) -> int:
        """log2 of the page size."""
        return self.pagesize.bit_length() - 1

    # -- /proc/zoneinfo -----------------------------------------------------------------

    def _zoneinfo(self) -> None:
        """Read /proc/zoneinfo at most once per fetch."""
        self._once("zoneinfo", self._zoneinfo_read)

    def _zoneinfo_read(self) -> bool:
        """pmdalinux's refresh_proc_zoneinfo: update the zones, nodes and protection lists.

        What each line does is worked out once per distinct line (or, for a line
        ending in digits, once per distinct text before them) and kept.
        """
        data = self.proc.read("/proc/zoneinfo")
        active: dict[int, str] = {}
        self._zoneinfo_active = active
        if data is None:
            return False
        stems, kinds = self._zoneinfo_stems, self._zoneinfo_kinds
        if len(stems) > 4096 or len(kinds) > 4096:
            stems.clear()
            kinds.clear()
        section: tuple[int, str, str] | None = None  # node, zone, instance name
        perzone: ZoneEntry | None = None
        pernode: ZoneEntry | None = None
        current: ZoneEntry | None = None
        values: dict[int, int] = {}
        seen: set[int] = set()
        for line in data.decode("utf-8", "replace").split("\n"):
            stem = line.rstrip(_DIGITS)
            length = len(stem)
            kind = None
            if length != len(line):
                kind = stems.get(stem)
                if kind is None and stem not in stems:
                    kind = stems[stem] = zoneinfo_stem(stem)
            if kind is None:
                kind = kinds.get(line)
                if kind is None:
                    kind = kinds[line] = zoneinfo_line(line)
            what = kind[0]
            if what == PLAIN:  # the commonest line: "key number" for a known key
                if current is not None:
                    value = int(line[length:])
                    values[kind[1]] = value if value <= _U64 else _U64
                    seen.add(kind[1])
            elif what == NOTHING:
                continue
            elif what in (VALUE, FIXED):
                if current is None:
                    continue
                _, item, value, pages = kind
                if pages and current is not perzone:
                    current = perzone
                    values, seen = current.values, current.seen
                if item is not None:
                    if what == VALUE:
                        sign, value = value, int(line[length:])
                        if sign == "-" or value > _U64:
                            value = int(strtoul(sign + line[length:]).value)
                    values[item] = value
                    seen.add(item)
            elif what == HEADER:
                self._zoneinfo_finish(active, section, perzone, pernode, current)
                section = perzone = pernode = current = None
                if kind[1] is None:
                    continue
                node, zone = kind[1]
                section = (node, zone, f"{zone}::node{node}")
                perzone = current = self._zoneinfo_entry(section[2], node, zone)
                values, seen = current.values, current.seen
            elif current is None or section is None:
                continue
            elif what == PERNODE:
                pernode = current = self._zoneinfo_entry(f"node{section[0]}", section[0], "")
                values, seen = current.values, current.seen
            elif what == PROTECTION:
                self._zoneinfo_protection(kind[1], *section)
        self._zoneinfo_finish(active, section, perzone, pernode, current)
        self._zoneinfo_ids.save()
        return True

    def _zoneinfo_entry(self, name: str, node: int, zone: str) -> ZoneEntry:
        """The entry of instance NAME (made when new), for NODE and ZONE ("" for a node's
        per-node block), its items forgotten for this read."""
        entry = self._zoneinfo_entries.get(name)
        if entry is None:
            entry = self._zoneinfo_entries[name] = ZoneEntry(node, zone)
        entry.node, entry.zone = node, zone
        entry.reset()
        return entry

    def _zoneinfo_finish(
        self,
        active: dict[int, str],
        section: tuple[int, str, str] | None,
        perzone: ZoneEntry | None,
        pernode: ZoneEntry | None,
        current: ZoneEntry | None,
    ) -> None:
        """Add a section's node block and zone to ACTIVE, hiding a zone with nothing present
        (CURRENT: the entry its last line read into)."""
        if section is None or perzone is None:
            return
        ids = self._zoneinfo_ids
        if pernode is not None:
            name = f"node{section[0]}"
            active[ids(name)] = name
        inst = ids(section[2])
        if current is not None and current.values.get(_PRESENT, 0) != 0:
            active[inst] = section[2]

    def _zoneinfo_protection(
        self, numbers: tuple[int, ...], node: int, zone: str, instname: str
    ) -> None:
        """One protection instance per number of a zone's list (new ones get the next id)."""
        prot = self._zoneinfo_prot
        for lowmem, value in enumerate(numbers):
            name = f"{instname}::lowmem_reserved{lowmem}"
            p = prot.get(name)
            if p is None or p.node != node or p.zone != zone or p.lowmem != lowmem:
                self._zoneinfo_prot_ids(name)
                prot[name] = Protection(node, zone, lowmem, value)
            else:
                p.value = value

    @zoneinfo_zones.refresh
    def _zoneinfo_zone_instances(self) -> dict[int, str] | None:
        """The zones (with something present) and nodes of /proc/zoneinfo."""
        self._zoneinfo()
        return self._current(self.zoneinfo_zones, dict(self._zoneinfo_active))

    @zoneinfo_protection.refresh
    def _zoneinfo_prot_instances(self) -> dict[int, str] | None:
        """Every protection entry seen since the agent started (entries are only added)."""
        self._zoneinfo()
        if len(self._zoneinfo_prot) == self._zoneinfo_prot_listed:
            return None
        self._zoneinfo_prot_listed = len(self._zoneinfo_prot)
        ids = self._zoneinfo_prot_ids
        return self._current(
            self.zoneinfo_protection, {ids(name): name for name in self._zoneinfo_prot}
        )

    @refresh(CLUSTER_ZONEINFO)
    def _zoneinfo_refresh(self) -> dict[str, Any]:
        """mem.zoneinfo.*: each active instance's values read this time, in Kbyte."""
        self._zoneinfo()
        wanted = self._wanted
        shift = self._zoneinfo_pageshift
        values: dict[str, Any] = {}
        rows = [
            (item, values.setdefault(name, {})) for name, item in _ZONEINFO_ITEMS if name in wanted
        ]
        entries = self._zoneinfo_entries
        for inst, zone in self._zoneinfo_active.items():
            entry = entries[zone]
            numbers, seen = entry.values, entry.seen
            for item, found in rows:
                if item in seen:
                    found[inst] = ((numbers[item] << shift) & _U64) >> 10
        return values

    @refresh(CLUSTER_ZONEINFO_PROTECTION)
    def _zoneinfo_refresh_protection(self) -> dict[str, Any]:
        """mem.zoneinfo.protection, in Kbyte."""
        self._zoneinfo()
        ids, shift = self._zoneinfo_prot_ids, self._zoneinfo_pageshift
        return {
            "mem.zoneinfo.protection": {
                ids(name): ((p.value << shift) & _U64) >> 10
                for name, p in self._zoneinfo_prot.items()
            }
        }

    def _zoneinfo_zone_labels(self, name: str) -> dict[str, Any] | None:
        """A zone's numa_node and zone labels (a node block has no zone)."""
        entry = self._zoneinfo_entries.get(name)
        if entry is None:
            return None
        if not entry.zone:
            return {"numa_node": entry.node}
        return {"numa_node": entry.node, "zone": entry.zone}

    def _zoneinfo_prot_labels(self, name: str) -> dict[str, Any] | None:
        """A protection entry's numa_node, zone and lowmem_reserved labels."""
        p = self._zoneinfo_prot.get(name)
        if p is None:
            return None
        return {"numa_node": p.node, "zone": p.zone, "lowmem_reserved": p.lowmem}

    # -- /proc/buddyinfo ----------------------------------------------------------------

    def _zoneinfo_buddyinfo(self) -> None:
        """Read /proc/buddyinfo at most once per fetch."""
        self._once("buddyinfo", self._zoneinfo_buddy_read)

    def _zoneinfo_buddy_read(self) -> bool:
        """pmdalinux's refresh_proc_buddyinfo: new zones get MAX_ORDER instances, values update."""
        data = self.proc.read("/proc/buddyinfo")
        if data is None:
            return False
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        if self._zoneinfo_max_order is None:
            orders = len(buddy_tokens(lines[0])) - 5 if lines else -1
            if orders < 0:  # no "Node N, zone NAME" and counts: not one to learn orders from
                return False
            self._zoneinfo_max_order = orders
        orders = self._zoneinfo_max_order
        read_buf = self._zoneinfo_read_buf  # fields left from an earlier line stay, as in C
        for line in lines:
            node = buddy_node_name(line)
            rest = line[len(line.split(",", 1)[0]) + 6 :]
            tokens = buddy_tokens(rest)[: orders + 1]
            if len(read_buf) < orders + 1:
                read_buf.extend([""] * (orders + 1 - len(read_buf)))
            read_buf[: len(tokens)] = tokens
            zone = read_buf[0]
            fields = read_buf[1 : orders + 1] if orders > 0 else []
            plain = "".join(fields)
            if all(fields) and plain.isascii() and plain.isdigit():  # the usual: just digits
                if max(map(len, fields)) < 20:  # below 2**64: no clamping
                    counts = [int(f) & _U32 for f in fields]
                else:
                    counts = [min(int(f), _U64) & _U32 for f in fields]
            else:
                counts = [int(strtoul(f).value) & _U32 for f in fields]  # none read: 0
            at = self._zoneinfo_buddy_at.get((node, zone))
            if at is None:
                at = self._zoneinfo_buddy_at[(node, zone)] = len(self._zoneinfo_buddy)
                for k in range(orders):
                    inst = len(self._zoneinfo_buddy)
                    name = f"{zone}::order{k}::{node}"
                    self._zoneinfo_buddy.append(Buddy(inst, name, node, zone, k))
            buddies = self._zoneinfo_buddy[at : at + orders] if orders > 0 else []
            for buddy, count in zip(buddies, counts, strict=True):
                buddy.value = count
        return True

    @zoneinfo_buddies.refresh
    def _zoneinfo_buddy_instances(self) -> dict[int, str] | None:
        """Every (zone, order, node) seen since the agent started (instances are only added)."""
        self._zoneinfo_buddyinfo()
        if len(self._zoneinfo_buddy) == self._zoneinfo_buddy_listed:
            return None
        self._zoneinfo_buddy_listed = len(self._zoneinfo_buddy)
        return self._current(self.zoneinfo_buddies, {b.inst: b.name for b in self._zoneinfo_buddy})

    @refresh(CLUSTER_BUDDYINFO)
    def _zoneinfo_buddy_refresh(self) -> dict[str, Any]:
        """mem.buddyinfo.pages and .total (count << order pages, in Kbyte)."""
        self._zoneinfo_buddyinfo()
        shift = self._zoneinfo_pageshift
        buddies = self._zoneinfo_buddy
        return {
            "mem.buddyinfo.pages": {b.inst: b.value for b in buddies},
            "mem.buddyinfo.total": {
                b.inst: ((b.value << b.order << shift) & _U64) >> 10 for b in buddies
            },
        }

    def _zoneinfo_buddy_labels(self, inst: int) -> dict[str, Any] | None:
        """A buddy instance's labels: numa_node (atoi of "nodeN", so 0), zone and order."""
        if not 0 <= inst < len(self._zoneinfo_buddy):
            return None
        b = self._zoneinfo_buddy[inst]
        return {"numa_node": atoi(b.node) & _U32, "zone": b.zone, "order": b.order}
