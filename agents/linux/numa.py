"""NUMA nodes: hinv.nnode, hinv.node.online, kernel.pernode.cpu.* and mem.numa.*.

As PCP 6.0.3's pmdalinux computes them (proc_stat.c, numa_meminfo.c,
mem_bandwidth.c, linux_table.c, pmda.c):

- the nodes (NODE_INDOM, serial 19) are found once, when first needed: the
  nodeN entries of /sys/devices/system/node in version order, named "nodeN"
  and numbered 0, 1, 2, ... in that order (so sparse node numbers give ids
  that differ from N; the "numa_node" label is the id, as in pmdalinux).
  Each node owns the CPUs with a cpuM entry in its directory.  Without that
  directory (or with $LINUX_NNODES set, pmdalinux's test switch) there is one
  node, node0, holding CPUs 0 .. ncpus-1;
- kernel.pernode.cpu.* sums the per-CPU ticks of /proc/stat (each CPU's iowait
  held by pmdalinux's rule first) over the node's CPUs, in milliseconds; a CPU
  missing from every node directory counts nowhere; on a one-CPU system node
  id 0 takes the "cpu" line;
- mem.numa.util.* and mem.numa.alloc.* scan each node's meminfo and numastat
  the way linux_table_scan does: a line sets the first table field that occurs
  anywhere in it (a substring match, so "SecPageTables:" sets pageTables and
  "ShmemPmdMapped:"/"FilePmdMapped:" set mapped, as in pmdalinux); a field once
  seen keeps its last value; numastat fields are counters accumulated across
  reads, wrapping at 2**64 - 1;
- the hugepages*Bytes metrics multiply a count by /proc/meminfo's Hugepagesize;
- mem.numa.max_bandwidth comes from $PCP_PMDAS_DIR/linux/bandwidth.conf, read
  again when its modification time changes; only a positive value is a value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from purepcp.pmapi.cnumbers import atof
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmda import InDom, refresh

from . import cputime, procfs, system
from .base import LinuxBase, Ticks
from .records import (
    BYTE,
    COUNT,
    COUNTER,
    DISCRETE,
    DOUBLE,
    INSTANT,
    KBYTE,
    MBYTE_PER_SEC,
    MSEC,
    NONE,
    U32,
    U64,
    MetricInfo,
)

#: pmdalinux's instance domain of NUMA nodes.
NODE_INDOM = 19
#: pmdalinux's clusters: /proc/stat, /sys/devices/system/node/node*, sysfs device state.
CLUSTER_STAT, CLUSTER_NUMA_MEMINFO, CLUSTER_SYSFS_DEVICES = 0, 36, 55

NODE_DIR = "/sys/devices/system/node"
_U64 = (1 << 64) - 1

#: kernel.pernode.cpu.SUFFIX: (suffix, item); the ticks are cputime.CPU_TIMES[suffix].
PERNODE: tuple[tuple[str, int], ...] = (
    ("user", 62),
    ("nice", 63),
    ("sys", 64),
    ("idle", 65),
    ("intr", 66),
    ("steal", 67),
    ("guest", 68),
    ("wait.total", 69),
    ("irq.soft", 70),
    ("irq.hard", 71),
    ("vuser", 77),
    ("guest_nice", 85),
    ("vnice", 86),
)

#: mem.numa.util.SUFFIX from a node's meminfo: (suffix, item, table field, units).
#: The order is pmdalinux's table order, which decides substring matches.
MEMINFO: tuple[tuple[str, int, bytes, Any], ...] = (
    ("total", 0, b"MemTotal:", KBYTE),
    ("free", 1, b"MemFree:", KBYTE),
    ("used", 2, b"MemUsed:", KBYTE),
    ("active", 3, b"Active:", KBYTE),
    ("inactive", 4, b"Inactive:", KBYTE),
    ("active_anon", 5, b"Active(anon):", KBYTE),
    ("inactive_anon", 6, b"Inactive(anon):", KBYTE),
    ("active_file", 7, b"Active(file):", KBYTE),
    ("inactive_file", 8, b"Inactive(file):", KBYTE),
    ("highTotal", 9, b"HighTotal:", KBYTE),
    ("highFree", 10, b"HighFree:", KBYTE),
    ("lowTotal", 11, b"LowTotal:", KBYTE),
    ("lowFree", 12, b"LowFree:", KBYTE),
    ("unevictable", 13, b"Unevictable:", KBYTE),
    ("mlocked", 14, b"Mlocked:", KBYTE),
    ("dirty", 15, b"Dirty:", KBYTE),
    ("writeback", 16, b"Writeback:", KBYTE),
    ("filePages", 17, b"FilePages:", KBYTE),
    ("mapped", 18, b"Mapped:", KBYTE),
    ("anonpages", 19, b"AnonPages:", KBYTE),
    ("shmem", 20, b"Shmem:", KBYTE),
    ("kernelStack", 21, b"KernelStack:", KBYTE),
    ("pageTables", 22, b"PageTables:", KBYTE),
    ("NFS_Unstable", 23, b"NFS_Unstable:", KBYTE),
    ("bounce", 24, b"Bounce:", KBYTE),
    ("writebackTmp", 25, b"WritebackTmp:", KBYTE),
    ("slab", 26, b"Slab:", KBYTE),
    ("slabReclaimable", 27, b"SReclaimable:", KBYTE),
    ("slabUnreclaimable", 28, b"SUnreclaim:", KBYTE),
    ("hugepagesTotal", 29, b"HugePages_Total:", COUNT),
    ("hugepagesFree", 30, b"HugePages_Free:", COUNT),
    ("hugepagesSurp", 31, b"HugePages_Surp:", COUNT),
)

#: mem.numa.util.SUFFIX in bytes: (suffix, item, meminfo table field counting huge pages).
HUGEPAGE_BYTES: tuple[tuple[str, int, bytes], ...] = (
    ("hugepagesTotalBytes", 39, b"HugePages_Total:"),
    ("hugepagesFreeBytes", 40, b"HugePages_Free:"),
    ("hugepagesSurpBytes", 41, b"HugePages_Surp:"),
)

#: mem.numa.alloc.SUFFIX from a node's numastat: (suffix, item, table field), all counters.
NUMASTAT: tuple[tuple[str, int, bytes], ...] = (
    ("hit", 32, b"numa_hit"),
    ("miss", 33, b"numa_miss"),
    ("foreign", 34, b"numa_foreign"),
    ("interleave_hit", 35, b"interleave_hit"),
    ("local_node", 36, b"local_node"),
    ("other_node", 37, b"other_node"),
)

_MEMINFO_FIELDS = tuple(row[2] for row in MEMINFO)
_NUMASTAT_FIELDS = tuple(row[2] for row in NUMASTAT)
#: (metric name, table field) of the mem.numa.util.* and mem.numa.alloc.* rows.
_MEMINFO_ROWS = tuple((f"mem.numa.util.{suffix}", key) for suffix, _, key, _ in MEMINFO)
_NUMASTAT_ROWS = tuple((f"mem.numa.alloc.{suffix}", key) for suffix, _, key in NUMASTAT)


def _numa(name: str, item: int, type_: Any, sem: Any, units: Any, source: str) -> MetricInfo:
    """One mem.numa.* record (cluster 36, per node)."""
    return MetricInfo(name, CLUSTER_NUMA_MEMINFO, item, type_, NODE_INDOM, sem, units, source)


#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        "hinv.nnode", CLUSTER_STAT, 19, U32, None, DISCRETE, NONE,
        source="the number of NUMA node instances (found once, when first needed)",
    ),
    MetricInfo(
        "hinv.node.online", CLUSTER_SYSFS_DEVICES, 1, U32, NODE_INDOM, INSTANT, NONE,
        source="/sys/devices/system/node/NAME/online read with %u; 1 when missing or no number",
    ),
    *(
        MetricInfo(
            f"kernel.pernode.cpu.{suffix}", CLUSTER_STAT, item, U64, NODE_INDOM, COUNTER, MSEC,
            source=f"sum over the node's CPUs of kernel.percpu.cpu.{suffix}'s ticks, as msec",
        )
        for suffix, item in PERNODE
    ),
    *(
        _numa(f"mem.numa.util.{suffix}", item, U64, INSTANT, units,
              f"nodeN/meminfo first number after '{key.decode()}' (substring match)")
        for suffix, item, key, units in MEMINFO
    ),
    *(
        _numa(f"mem.numa.util.{suffix}", item, U64, INSTANT, BYTE,
              f"nodeN/meminfo '{key.decode()}' * /proc/meminfo Hugepagesize * 1024")
        for suffix, item, key in HUGEPAGE_BYTES
    ),
    *(
        _numa(f"mem.numa.alloc.{suffix}", item, U64, COUNTER, COUNT,
              f"nodeN/numastat '{key.decode()}', accumulated as a 64-bit counter")
        for suffix, item, key in NUMASTAT
    ),
    _numa("mem.numa.max_bandwidth", 38, DOUBLE, DISCRETE, MBYTE_PER_SEC,
          "$PCP_PMDAS_DIR/linux/bandwidth.conf 'nodeN:value' lines; positive values only"),
)  # fmt: skip

_PERNODE_NAMES = frozenset(f"kernel.pernode.cpu.{suffix}" for suffix, _ in PERNODE)
#: (metric name, its ticks from a node's summed cpu line) of kernel.pernode.cpu.*.
_PERNODE_ROWS: tuple[tuple[str, Callable[[Ticks], int]], ...] = tuple(
    (f"kernel.pernode.cpu.{suffix}", cputime.CPU_TIMES[suffix]) for suffix, _ in PERNODE
)
_MEMINFO_NAMES = frozenset(f"mem.numa.util.{row[0]}" for row in (*MEMINFO, *HUGEPAGE_BYTES))
_NUMASTAT_NAMES = frozenset(f"mem.numa.alloc.{row[0]}" for row in NUMASTAT)
_HUGEPAGE_NAMES = frozenset(f"mem.numa.util.{row[0]}" for row in HUGEPAGE_BYTES)

# --- pure helpers ---------------------------------------------------------------------------

_DIGITS = re.compile(rb"[0-9]+")
_NODE_NAME = re.compile(r"node([0-9]+)")
_CPU_NAME = re.compile(r"cpu([0-9]+)")
_VERSION_KEY = re.compile(r"([0-9]+)")


#: Every digit made "0": a file's template, the same while only its numbers' values change.
_ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")

TablePlan = tuple[tuple[bytes, int, int], ...]


def table_plan(template: bytes, fields: tuple[bytes, ...]) -> TablePlan:
    """Where linux_table_scan's values are in a file whose digits are all "0" (TEMPLATE):
    (field, start, end) of each line's number, in line order.

    Each line sets the first of FIELDS (in table order) that occurs anywhere in
    it and has a digit somewhere after it; the value is the digits from there.
    Fields hold no digits, so where they occur does not depend on the digits' values.
    """
    plan = []
    offset = 0
    for line in template.split(b"\n"):
        for key in fields:
            at = line.find(key)
            if at < 0:
                continue
            m = _DIGITS.search(line, at + len(key))
            if m is not None:
                plan.append((key, offset + m.start(), offset + m.end()))
                break
        offset += len(line) + 1
    return tuple(plan)


def table_values(data: bytes, plan: TablePlan) -> dict[bytes, int]:
    """The values PLAN locates in DATA: {field: value} (a later line wins)."""
    return {key: min(int(data[start:end]), _U64) for key, start, end in plan}


def table_scan(data: bytes, fields: tuple[bytes, ...]) -> dict[bytes, int]:
    """The fields pmdalinux's linux_table_scan finds in DATA: {field: value}."""
    return table_values(data, table_plan(data.translate(_ZERO_DIGITS), fields))


def _version_key(name: str) -> tuple:
    """A sort key putting names in versionsort(3) order (node2 before node10)."""
    return tuple(int(p) if p.isdigit() else p for p in _VERSION_KEY.split(name))


def parse_bandwidth(text: str, nodes: dict[str, int]) -> dict[int, float]:
    """Node id -> bandwidth from bandwidth.conf TEXT, as mem_bandwidth.c reads it.

    '#' lines are comments; a line containing "Version" must read "Version:1.0"
    (no spaces: pmdalinux's whitespace skipping has no effect) and come first;
    each later line is NAME:VALUE for a node NAME in NODES (VALUE read with
    atof).  Reading stops at the first line that breaks these rules, keeping
    what came before.
    """
    found: dict[int, float] = {}
    version = False
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if "Version" in line:
            key, colon, value = line.partition(":")
            if not colon or not key.startswith("Version") or not value.startswith("1.0"):
                break
            version = True
            continue
        name, colon, value = line.partition(":")
        if not version or not colon or name not in nodes:
            break
        found[nodes[name]] = atof(value)
    return found


@dataclass
class _Node:
    """One NUMA node instance and what pmdalinux keeps about it between fetches."""

    inst: int
    number: int
    cpus: set[int] = field(default_factory=set)
    meminfo: dict[bytes, int] = field(default_factory=dict)  # fields seen, last value
    numastat: dict[bytes, int] = field(default_factory=dict)  # fields seen, last raw value
    prev: dict[bytes, int] = field(default_factory=dict)  # numastat counters' previous raw
    counters: dict[bytes, int] = field(default_factory=dict)  # numastat accumulated values

    @property
    def name(self) -> str:
        """The instance name, "nodeN"."""
        return f"node{self.number}"

    def accumulate(self) -> None:
        """Advance the numastat counters as linux_table_scan does (wrapping at 2**64 - 1)."""
        for key in _NUMASTAT_FIELDS:
            this, prev = self.numastat.get(key, 0), self.prev.get(key, 0)
            step = this - prev if this >= prev else this + (_U64 - prev)
            self.counters[key] = (self.counters.get(key, 0) + step) & _U64
            self.prev[key] = this


class Numa(LinuxBase):
    """NUMA nodes: their instance domain and the node metrics of clusters 0, 36 and 55."""

    numa_nodes = InDom(
        NODE_INDOM, labels={"device_type": "numa_node", "indom_name": "per numa_node"}
    )
    instance_label_rules = {NODE_INDOM: lambda agent, inst, name: {"numa_node": inst}}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; the nodes are found when first needed."""
        super().__init__(*args, **kwargs)
        self._numa_node_list: list[_Node] | None = None
        self._numa_bw_errno = 0
        self._numa_bw_mtime = 0
        self._numa_bandwidth: dict[int, float] = {}
        self._numa_one_cpu: tuple[list[_Node], bool] | None = None  # (nodes, one CPU in all)
        self._numa_bw_path: str | None = None  # found on first use, as pmdalinux does
        # path: (template, plan, every number shorter than 20 digits)
        self._numa_plans: dict[str, tuple[bytes, TablePlan, bool]] = {}

    # -- the nodes ---------------------------------------------------------------------

    def _numa_nodes(self) -> list[_Node]:
        """The NUMA nodes, found on first use and kept for the agent's life (as pmdalinux)."""
        if self._numa_node_list is None:
            self._numa_node_list = self._numa_find_nodes()
        return self._numa_node_list

    def _numa_find_nodes(self) -> list[_Node]:
        """pmdalinux's cpu_node_setup: nodeN directories in version order and their CPUs."""
        top = self.proc.root + NODE_DIR
        try:
            if os.environ.get("LINUX_NNODES") is not None:
                raise OSError("single node forced")
            entries = sorted((e.name for e in os.scandir(top)), key=_version_key)
        except OSError:
            return [_Node(0, 0, set(range(max(self.ncpus_configured, 1))))]
        nodes: list[_Node] = []
        owner: dict[int, _Node] = {}
        for entry in entries:
            m = _NODE_NAME.match(entry)
            if m is None:
                continue
            node = _Node(len(nodes), int(m[1]) & 0xFFFFFFFF)
            nodes.append(node)
            try:
                names = [e.name for e in os.scandir(f"{top}/{entry}")]
            except OSError:
                continue
            for name in names:
                c = _CPU_NAME.match(name)
                if c is not None:
                    owner[int(c[1]) & 0xFFFFFFFF] = node  # a CPU in two nodes: the last wins
        for cpu, node in owner.items():
            node.cpus.add(cpu)
        return nodes

    @numa_nodes.refresh
    def _numa_node_instances(self) -> dict[int, str] | None:
        """nodeN for each node, ids in the order found."""
        return self._current(self.numa_nodes, {n.inst: n.name for n in self._numa_nodes()})

    # -- cluster 0: hinv.nnode and kernel.pernode.cpu.* ---------------------------------

    @refresh(CLUSTER_STAT)
    def _numa_refresh_stat(self) -> dict[str, Any]:
        """hinv.nnode, and each node's CPU time summed over its CPUs' /proc/stat lines."""
        nodes = self._numa_nodes()
        values: dict[str, Any] = {"hinv.nnode": len(nodes)}
        wanted = self._wanted
        if wanted.isdisjoint(_PERNODE_NAMES):
            return values
        stat = self._stat()
        if stat is None:
            return values
        hz = self.hz
        rows = [
            (ticks, values.setdefault(name, {})) for name, ticks in _PERNODE_ROWS if name in wanted
        ]
        for inst, t in self._numa_cpu_sums(stat, nodes).items():
            for ticks, found in rows:
                n = ticks(t)
                found[inst] = n * 1000 // hz if n >= 0 else None  # cputime.msec, inline
        return values

    def _numa_cpu_sums(self, stat: procfs.Stat, nodes: list[_Node]) -> dict[int, Ticks]:
        """Each node's summed ticks (zeros for a node without online CPUs), by node id."""
        hold = self.cpu_wait_hold
        one = self._numa_one_cpu
        # the nodes and the CPU count never change: work this out once
        if one is None or one[0] is not nodes:
            known = set(range(self.ncpus_configured)).union(*(n.cpus for n in nodes))
            one = self._numa_one_cpu = (nodes, len(known) == 1)
        if one[1] and stat.all is not None:
            # pmdalinux's one-CPU case: node id 0 gets the "cpu" line itself
            sums = {n.inst: cputime.add(()) for n in nodes}
            if 0 in sums:
                sums[0] = hold(None, stat.all)
            return sums
        percpu = {n: hold(n, t) for n, t in stat.cpus.items()}
        return {n.inst: cputime.add(percpu[c] for c in n.cpus if c in percpu) for n in nodes}

    # -- cluster 55: hinv.node.online ---------------------------------------------------

    @refresh(CLUSTER_SYSFS_DEVICES)
    def _numa_refresh_online(self) -> dict[str, Any]:
        """hinv.node.online from each node's sysfs 'online' file (1 when there is none)."""
        if "hinv.node.online" not in self._wanted:
            return {}
        online = {}
        for node in self._numa_nodes():
            data = self.proc.read(f"{NODE_DIR}/{node.name}/online")
            online[node.inst] = system.online(data)
        return {"hinv.node.online": online}

    # -- cluster 36: mem.numa.* ---------------------------------------------------------

    @refresh(CLUSTER_NUMA_MEMINFO)
    def _numa_refresh_meminfo(self) -> dict[str, Any]:
        """Each node's meminfo and numastat tables, and the bandwidth configuration."""
        wanted = self._wanted
        nodes = self._numa_nodes()
        values: dict[str, Any] = {}
        if not wanted.isdisjoint(_MEMINFO_NAMES):
            for node in nodes:
                found = self._numa_scan(f"{NODE_DIR}/node{node.number}/meminfo", _MEMINFO_FIELDS)
                if found is not None:
                    node.meminfo.update(found)
            rows = [
                (key, values.setdefault(name, {})) for name, key in _MEMINFO_ROWS if name in wanted
            ]
            for node in nodes:
                meminfo, inst = node.meminfo, node.inst
                for key, found in rows:
                    if key in meminfo:
                        found[inst] = meminfo[key]
            if not wanted.isdisjoint(_HUGEPAGE_NAMES):
                values.update(self._numa_hugepage_bytes(nodes))
        if not wanted.isdisjoint(_NUMASTAT_NAMES):
            for node in nodes:
                found = self._numa_scan(f"{NODE_DIR}/node{node.number}/numastat", _NUMASTAT_FIELDS)
                if found is not None:
                    node.numastat.update(found)
                node.accumulate()
            rows = [
                (key, values.setdefault(name, {})) for name, key in _NUMASTAT_ROWS if name in wanted
            ]
            for node in nodes:
                numastat, counters, inst = node.numastat, node.counters, node.inst
                for key, found in rows:
                    if key in numastat:
                        found[inst] = counters[key]
        if "mem.numa.max_bandwidth" in wanted:
            self._numa_read_bandwidth(nodes)
            values["mem.numa.max_bandwidth"] = {
                inst: bw for inst, bw in self._numa_bandwidth.items() if bw > 0.0
            }
        return values

    def _numa_scan(self, path: str, fields: tuple[bytes, ...]) -> dict[bytes, int] | None:
        """table_scan of PATH (None if unreadable), locating the numbers again only when
        the file's template (its text with digits as "0") changed."""
        data = self.proc.read(path)
        if data is None:
            return None
        template = data.translate(_ZERO_DIGITS)
        known = self._numa_plans.get(path)
        if known is None or known[0] != template:
            plan = table_plan(template, fields)
            short = all(end - start < 20 for _, start, end in plan)
            known = self._numa_plans[path] = (template, plan, short)
        if known[2]:  # every number has under 20 digits: below 2**64, no clamping
            return {key: int(data[start:end]) for key, start, end in known[1]}
        return table_values(data, known[1])

    def _numa_hugepage_bytes(self, nodes: list[_Node]) -> dict[str, Any]:
        """hugepages*Bytes: each node's count times /proc/meminfo's Hugepagesize, in bytes."""
        mem = self._read_once("/proc/meminfo", procfs.parse_meminfo)
        size = None if mem is None else mem.get(b"Hugepagesize")
        if size is None:
            return {}
        return {
            f"mem.numa.util.{suffix}": {
                n.inst: (n.meminfo[key] * (size << 10)) & _U64 for n in nodes if key in n.meminfo
            }
            for suffix, _, key in HUGEPAGE_BYTES
        }

    def _numa_read_bandwidth(self, nodes: list[_Node]) -> None:
        """Reread bandwidth.conf if it changed (mem_bandwidth.c's stat check), else keep."""
        path = self._numa_bw_path
        if path is None:
            try:
                path = str(paths().pmdas_dir / "linux" / "bandwidth.conf")
            except LayoutError:
                path = ""
            self._numa_bw_path = path
        if not path:
            return
        try:
            mtime = int(os.stat(path).st_mtime)
        except OSError as e:
            if e.errno == self._numa_bw_errno:
                return
            self._numa_bw_errno = e.errno or 0
        else:
            self._numa_bw_errno = 0
            if mtime == self._numa_bw_mtime:
                return
            self._numa_bw_mtime = mtime
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            text = ""
        self._numa_bandwidth = parse_bandwidth(text, {n.name: n.inst for n in nodes})
