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
from typing import Any

from pmapi.paths import LayoutError, paths
from pmda import InDom, refresh

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
_MEMINFO_NAMES = frozenset(f"mem.numa.util.{row[0]}" for row in (*MEMINFO, *HUGEPAGE_BYTES))
_NUMASTAT_NAMES = frozenset(f"mem.numa.alloc.{row[0]}" for row in NUMASTAT)
_HUGEPAGE_NAMES = frozenset(f"mem.numa.util.{row[0]}" for row in HUGEPAGE_BYTES)

# --- pure helpers ---------------------------------------------------------------------------

_DIGITS = re.compile(rb"[0-9]+")
_NODE_NAME = re.compile(r"node([0-9]+)")
_CPU_NAME = re.compile(r"cpu([0-9]+)")
_VERSION_KEY = re.compile(r"([0-9]+)")
_ATOF = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def table_scan(data: bytes, fields: tuple[bytes, ...]) -> dict[bytes, int]:
    """The fields pmdalinux's linux_table_scan finds in DATA: {field: value}.

    Each line sets the first of FIELDS (in table order) that occurs anywhere in
    it and has a digit somewhere after it; the value is the digits from there.
    """
    found: dict[bytes, int] = {}
    for line in data.split(b"\n"):
        for key in fields:
            at = line.find(key)
            if at < 0:
                continue
            m = _DIGITS.search(line, at + len(key))
            if m is not None:
                found[key] = min(int(m[0]), _U64)
                break
    return found


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
        m = _ATOF.match(value)
        found[nodes[name]] = float(m[1]) if m else 0.0
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
        sums = self._numa_cpu_sums(stat, nodes)
        hz = self.hz
        for suffix, _ in PERNODE:
            name = f"kernel.pernode.cpu.{suffix}"
            if name in wanted:
                ticks: Callable[[Ticks], int] = cputime.CPU_TIMES[suffix]
                values[name] = {inst: cputime.msec(ticks(t), hz) for inst, t in sums.items()}
        return values

    def _numa_cpu_sums(self, stat: procfs.Stat, nodes: list[_Node]) -> dict[int, Ticks]:
        """Each node's summed ticks (zeros for a node without online CPUs), by node id."""
        hold = self.cpu_wait_hold
        known = set(range(self.ncpus_configured)).union(*(n.cpus for n in nodes))
        if len(known) == 1 and stat.all is not None:
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
                data = self.proc.read(f"{NODE_DIR}/{node.name}/meminfo")
                if data is not None:
                    node.meminfo.update(table_scan(data, _MEMINFO_FIELDS))
            for suffix, _, key, _ in MEMINFO:
                values[f"mem.numa.util.{suffix}"] = {
                    n.inst: n.meminfo[key] for n in nodes if key in n.meminfo
                }
            if not wanted.isdisjoint(_HUGEPAGE_NAMES):
                values.update(self._numa_hugepage_bytes(nodes))
        if not wanted.isdisjoint(_NUMASTAT_NAMES):
            for node in nodes:
                data = self.proc.read(f"{NODE_DIR}/{node.name}/numastat")
                if data is not None:
                    node.numastat.update(table_scan(data, _NUMASTAT_FIELDS))
                node.accumulate()
            for suffix, _, key in NUMASTAT:
                values[f"mem.numa.alloc.{suffix}"] = {
                    n.inst: n.counters[key] for n in nodes if key in n.numastat
                }
        if "mem.numa.max_bandwidth" in wanted:
            self._numa_read_bandwidth(nodes)
            values["mem.numa.max_bandwidth"] = {
                inst: bw for inst, bw in self._numa_bandwidth.items() if bw > 0.0
            }
        return values

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
        try:
            path = paths().pmdas_dir / "linux" / "bandwidth.conf"
        except LayoutError:
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
            text = path.read_text(errors="replace")
        except OSError:
            text = ""
        self._numa_bandwidth = parse_bandwidth(text, {n.name: n.inst for n in nodes})
