"""The linux agent (domain 60): PCP's kernel, memory, disk, network and filesystem metrics.

Every metric has the name, PMID, type, semantics, units and instance domain of
PCP 6's own pmdalinux (agents/linux/catalog.py lists them), so PCP tools and
configurations work with this agent unchanged.  The metrics are declared as
data, from the catalog; one `refresh` method per PCP cluster reads that
cluster's sources once per fetch and returns the values of the metrics the
fetch asked for.  The values are what pmdalinux computes, from the same /proc
files, interface ioctls and statfs calls (agents/linux/procfs.py and netif.py):
psutil's Linux functions read those same files, but they convert units, drop
the fields PCP needs, or do per-device work PCP does not (see
docs/linux-agent-notes.md), so the agent parses the files itself.

Instance domains follow pmdalinux's rules: CPUs are numbered by the N of cpuN;
disks, network interfaces and filesystems get ids 0, 1, 2, ... in the order they
are first seen, and a device keeps its id while the agent runs, even if it goes
away and comes back.  Disk and interface ids are also saved where pmdalinux
saves them ($PCP_VAR_DIR/config/pmda/60.1 and 60.3, pmdaCache's format) so they
survive restarts, but only when $PCP_VAR_DIR is set, as it is under pmcd.  Like
pmdalinux, the agent takes its files from under $LINUX_STATSPATH, and its clock
rate and CPU count from $LINUX_HERTZ and $LINUX_NCPUS, when those are set.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from operator import itemgetter
from types import ModuleType
from typing import Any

from purepcp.pmapi.cnumbers import float32
from purepcp.pmda import InDom, Metric, refresh

from . import blockdev, catalog, meminfo, procfs, system, vmstat
from .base import LinuxBase
from .cputime import CPU_TIMES
from .instids import InstanceIds
from .netif import IFF_RUNNING, IFF_UP

U32 = 0xFFFFFFFF
U64 = 0xFFFFFFFFFFFFFFFF

# --- instance domains ---------------------------------------------------------------------

CPU_INDOM = InDom(catalog.CPU_INDOM, labels={"device_type": "cpu", "indom_name": "per cpu"})
DISK_INDOM = InDom(catalog.DISK_INDOM, labels={"device_type": "block", "indom_name": "per disk"})
LOAD_INDOM = InDom(catalog.LOADAVG_INDOM, dict(catalog.LOAD_INSTANCES))
NET_INDOM = InDom(
    catalog.NET_DEV_INDOM, labels={"device_type": "interface", "indom_name": "per interface"}
)
FILESYS_INDOM = InDom(catalog.FILESYS_INDOM)
INDOMS: dict[int, InDom] = {
    indom.serial: indom for indom in (CPU_INDOM, DISK_INDOM, LOAD_INDOM, NET_INDOM, FILESYS_INDOM)
}

# --- how each metric is computed from its source --------------------------------------------


_CPU_METRICS = tuple(
    (f"kernel.all.cpu.{suffix}", f"kernel.percpu.cpu.{suffix}", ticks)
    for suffix, ticks in CPU_TIMES.items()
)

#: /proc/stat counters by metric.
STAT_COUNTERS: dict[str, bytes] = {
    "kernel.all.intr": b"intr",
    "kernel.all.pswitch": b"ctxt",
    "kernel.all.sysfork": b"processes",
    "kernel.all.running": b"procs_running",
    "kernel.all.blocked": b"procs_blocked",
    "kernel.all.boottime": b"btime",
}

Disk = tuple[int, ...]  # procfs.BLOCK_FIELDS

#: disk.dev.SUFFIX from a disk's /proc/diskstats counts; disk.all.SUFFIX sums them over disks
#: (the same table gives disk.partitions, disk.dm, disk.md and zram: agents/linux/blockdev.py).
DISK_VALUES: dict[str, Callable[[Disk], int]] = dict(blockdev.COUNTS)
#: disk.all.SUFFIX metrics that are 32-bit: pmdalinux adds them up in 32 bits.
_DISK_ALL_32 = frozenset({"discard_rawactive", "flush_rawactive"})
_DISK_METRICS = tuple(
    (f"disk.dev.{suffix}", f"disk.all.{suffix}", value, U32 if suffix in _DISK_ALL_32 else U64)
    for suffix, value in DISK_VALUES.items()
)

Counters = tuple[int, ...]  # the 16 columns of a /proc/net/dev line

#: network.interface.* from an interface's /proc/net/dev columns.
NET_COUNTERS: dict[str, Callable[[Counters], int]] = {
    **{
        f"network.interface.{name}": itemgetter(column)
        for column, name in enumerate(
            (
                *(f"in.{f}" for f in ("bytes", "packets", "errors", "drops")),
                *(f"in.{f}" for f in ("fifo", "frame", "compressed", "mcasts")),
                *(f"out.{f}" for f in ("bytes", "packets", "errors", "drops")),
                "out.fifo",
                "collisions",
                "out.carrier",
                "out.compressed",
            )
        )
    },
    "network.interface.total.bytes": lambda c: c[0] + c[8],
    "network.interface.total.packets": lambda c: c[1] + c[9],
    "network.interface.total.errors": lambda c: c[2] + c[10],
    "network.interface.total.drops": lambda c: c[3] + c[11],
    "network.interface.total.mcasts": lambda c: c[7],  # no transmit count exists
}
_LINK_METRICS = (
    "network.interface.speed",
    "network.interface.baudrate",
    "network.interface.duplex",
)
_FLAG_METRICS = ("network.interface.up", "network.interface.running")

#: mem.* metrics that are one /proc/meminfo field as the kernel gives it (kB, or pages).
MEMINFO: dict[str, bytes] = {
    "mem.physmem": b"MemTotal",
    "mem.freemem": b"MemFree",
    "mem.util.free": b"MemFree",
    "mem.util.shared": b"MemShared",
    "mem.util.bufmem": b"Buffers",
    "mem.util.cached": b"Cached",
    "mem.util.swapCached": b"SwapCached",
    "mem.util.active": b"Active",
    "mem.util.inactive": b"Inactive",
    "mem.util.swapTotal": b"SwapTotal",
    "mem.util.swapFree": b"SwapFree",
    "mem.util.dirty": b"Dirty",
    "mem.util.writeback": b"Writeback",
    "mem.util.mapped": b"Mapped",
    "mem.util.slab": b"Slab",
    "mem.util.committed_AS": b"Committed_AS",
    "mem.util.pageTables": b"PageTables",
    "mem.util.anonpages": b"AnonPages",
    "mem.util.commitLimit": b"CommitLimit",
    "mem.util.slabReclaimable": b"SReclaimable",
    "mem.util.slabUnreclaimable": b"SUnreclaim",
    "mem.util.active_anon": b"Active(anon)",
    "mem.util.inactive_anon": b"Inactive(anon)",
    "mem.util.active_file": b"Active(file)",
    "mem.util.inactive_file": b"Inactive(file)",
    "mem.util.unevictable": b"Unevictable",
    "mem.util.mlocked": b"Mlocked",
    "mem.util.shmem": b"Shmem",
    "mem.util.kernelStack": b"KernelStack",
    "mem.util.hugepagesTotal": b"HugePages_Total",
    "mem.util.hugepagesFree": b"HugePages_Free",
    "mem.util.available": b"MemAvailable",
}

#: The mem.util.* metrics of agents/linux/meminfo.py's table.
_MEMINFO_TABLE = frozenset(
    meminfo.PREFIX + row[0] for row in (*meminfo.FIELDS, *meminfo.HUGEPAGE_BYTES)
)

Meminfo = Mapping[bytes, int]


def _difference(*fields: bytes, at_least: int | None = None) -> Callable[[Meminfo], int | None]:
    """The first meminfo field less the others (no value if one is missing), floored at AT_LEAST."""

    def compute(mem: Meminfo) -> int | None:
        """The difference, or None."""
        if not all(f in mem for f in fields):
            return None
        value = mem[fields[0]] - sum(mem[f] for f in fields[1:])
        return value if at_least is None else max(value, at_least)

    return compute


def _scaled(field: bytes, shift: int, mask: int = U64) -> Callable[[Meminfo], int | None]:
    """A meminfo field shifted left (positive SHIFT) or right, as a MASK-bit number."""

    def compute(mem: Meminfo) -> int | None:
        """The scaled field, or None."""
        value = mem.get(field)
        if value is None:
            return None
        return (value << shift if shift >= 0 else value >> -shift) & mask

    return compute


#: mem.*, swap.* and hinv.physmem metrics computed from several meminfo fields, or rescaled.
MEMINFO_DERIVED: dict[str, Callable[[Meminfo], int | None]] = {
    "mem.util.used": _difference(b"MemTotal", b"MemFree"),
    "mem.util.other": _difference(b"MemTotal", b"MemFree", b"Cached", b"Buffers", at_least=0),
    "mem.util.cache_clean": _difference(b"Cached", b"Dirty", b"Writeback", at_least=0),
    "swap.length": _scaled(b"SwapTotal", 10),
    "swap.free": _scaled(b"SwapFree", 10),
    "swap.used": lambda mem: (
        ((mem[b"SwapTotal"] - mem[b"SwapFree"]) << 10) & U64
        if b"SwapTotal" in mem and b"SwapFree" in mem
        else None
    ),
    "hinv.physmem": _scaled(b"MemTotal", -10, U32),
}

#: filesys.* from a filesystem's statfs and its mount point and options.
FilesysValue = Callable[[os.statvfs_result, str, str], Any]


def _full(st: os.statvfs_result) -> float:
    """Percentage of the space a non-root user could have that is in use (NaN if none)."""
    used = st.f_blocks - st.f_bfree
    total = used + st.f_bavail
    return 100.0 * used / total if total else math.nan


FILESYS_VALUES: dict[str, FilesysValue] = {
    "filesys.capacity": lambda st, path, opts: st.f_blocks * st.f_bsize // 1024,
    "filesys.used": lambda st, path, opts: (st.f_blocks - st.f_bfree) * st.f_bsize // 1024,
    "filesys.free": lambda st, path, opts: st.f_bfree * st.f_bsize // 1024,
    "filesys.avail": lambda st, path, opts: st.f_bavail * st.f_bsize // 1024,
    "filesys.maxfiles": lambda st, path, opts: st.f_files & U32,
    "filesys.usedfiles": lambda st, path, opts: (st.f_files - st.f_ffree) & U32,
    "filesys.freefiles": lambda st, path, opts: st.f_ffree & U32,
    "filesys.mountdir": lambda st, path, opts: path,
    "filesys.full": lambda st, path, opts: _full(st),
    "filesys.blocksize": lambda st, path, opts: st.f_bsize & U32,
    "filesys.readonly": lambda st, path, opts: int(procfs.is_readonly(opts)),
}


def speed_mbyte(mbit: int) -> float:
    """network.interface.speed from Mbit/s, in pmdalinux's float arithmetic (* 1e6 / 2**23)."""
    return float32(float32(mbit) * 1e6) / 8 / 1024 / 1024


class Core(LinuxBase):
    """The first families: CPU time, kernel counters, hinv, mem, swap, disk, interfaces, filesys."""

    name, domain = "linux", catalog.DOMAIN
    #: pmdalinux asks pmcd for its clients' credentials: mem.slabinfo.* and tty.serial.*
    #: are for root's eyes only (agents/linux/vfs.py), unless $LINUX_ACCESS says otherwise
    wants_credentials = True
    cpus, disks, loadavg, interfaces, filesystems = (
        CPU_INDOM,
        DISK_INDOM,
        LOAD_INDOM,
        NET_INDOM,
        FILESYS_INDOM,
    )
    instance_label_rules = {
        catalog.CPU_INDOM: lambda agent, inst, name: {"cpu": inst},
        catalog.DISK_INDOM: lambda agent, inst, name: {"device_name": name},
        catalog.NET_DEV_INDOM: lambda agent, inst, name: {"interface": name},
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; the /proc files and the ioctl socket open when first needed."""
        super().__init__(*args, **kwargs)
        # pmdalinux saves disk and interface ids (not filesystem ids) under $PCP_VAR_DIR
        self._disk_ids = InstanceIds(self._cache_file(self.disks))
        self._net_ids = InstanceIds(self._cache_file(self.interfaces))
        self._filesys_ids = InstanceIds()
        self._is_disk: dict[str, bool] = {}
        self._distro: str | None = None  # pmdalinux reads the release file once
        self.utmp_path = system.UTMP_PATH

    def _disks(self) -> list[tuple[int, str, Disk]]:
        """(inst, name, counts) of each disk in /proc/diskstats."""
        return self._once("disks", self._read_disks)

    def _read_disks(self) -> list[tuple[int, str, Disk]]:
        """The whole disks of /proc/diskstats, giving new disks their ids."""
        disks = [
            (self._disk_ids(dev.name), dev.name, dev.counts)
            for dev in self._diskstats()
            if self._disk(dev.name)
        ]
        self._disk_ids.save()
        return disks

    def _diskstats(self) -> list[procfs.BlockDevice]:
        """Every device line of /proc/diskstats, read once per fetch (empty if unreadable)."""
        return self._once(
            "diskstats", lambda: self._read("/proc/diskstats", procfs.parse_block_devices) or []
        )

    def _disk(self, name: str) -> bool:
        """procfs.is_disk(NAME), remembered: the same names come back every fetch."""
        known = self._is_disk.get(name)
        if known is None:
            known = self._is_disk[name] = procfs.is_disk(name)
        return known

    def _netdev(self) -> list[tuple[int, str, Counters]]:
        """(inst, name, counters) of each interface in /proc/net/dev."""
        return self._once("netdev", self._read_netdev)

    def _read_netdev(self) -> list[tuple[int, str, Counters]]:
        """Read /proc/net/dev, giving new interfaces their ids."""
        rows = self._read("/proc/net/dev", procfs.parse_net_dev)
        interfaces = [(self._net_ids(name), name, counts) for name, counts in rows or ()]
        self._net_ids.save()
        return interfaces

    def _filesys(self) -> list[tuple[int, str, str, str]]:
        """(inst, device, mount point, options) of each filesystem instance."""
        return self._once("filesys", self._read_filesys)

    def _read_filesys(self) -> list[tuple[int, str, str, str]]:
        """Read /proc/self/mounts and apply pmdalinux's rule, giving new filesystems ids."""
        rows = self._read("/proc/self/mounts", procfs.parse_mounts)
        mounts = procfs.filesys_mounts(rows or ())
        return [
            (self._filesys_ids(device), device, path, options)
            for device, (path, options) in mounts.items()
        ]

    # -- instance domains ------------------------------------------------------------------

    @cpus.refresh
    def _cpu_instances(self) -> dict[int, str] | None:
        """cpuN for each CPU with a line in /proc/stat, id N."""
        stat = self._stat()
        percpu = {} if stat is None else self._percpu(stat)
        return self._current(self.cpus, {n: f"cpu{n}" for n in percpu})

    @disks.refresh
    def _disk_instances(self) -> dict[int, str] | None:
        """The disks of /proc/diskstats."""
        return self._current(self.disks, {inst: name for inst, name, _ in self._disks()})

    @interfaces.refresh
    def _interface_instances(self) -> dict[int, str] | None:
        """The interfaces of /proc/net/dev."""
        return self._current(self.interfaces, {inst: name for inst, name, _ in self._netdev()})

    @filesystems.refresh
    def _filesys_instances(self) -> dict[int, str] | None:
        """The filesystems of /proc/self/mounts that pmdalinux reports."""
        return self._current(self.filesystems, {inst: name for inst, name, _, _ in self._filesys()})

    # -- clusters --------------------------------------------------------------------------

    def _msec(self, ticks: int) -> int | None:
        """Clock ticks as milliseconds (1000 * ticks / hz, truncated); no value if negative."""
        return ticks * 1000 // self.hz if ticks >= 0 else None

    @refresh(0)
    def _refresh_stat(self) -> dict[str, Any]:
        """Cluster 0: /proc/stat (CPU time, counters), /proc/diskstats, /proc/vmstat (swap.*)."""
        wanted, values = self._wanted, {}
        if not wanted.isdisjoint(_STAT_NAMES):
            stat = self._stat()
            if stat is not None:
                self._stat_values(stat, values, wanted)
        if not wanted.isdisjoint(_DISK_NAMES):
            disks = self._disks()
            values["hinv.ndisk"] = len(disks)
            for dev, all_, value, mask in _DISK_METRICS:
                if dev in wanted:
                    values[dev] = {inst: value(counts) for inst, _, counts in disks}
                if all_ in wanted:
                    values[all_] = sum(value(counts) for _, _, counts in disks) & mask
        if not wanted.isdisjoint(_VMSTAT):
            data = self._vmstat()
            found = {} if data is None else procfs.parse_vmstat(data, _VMSTAT.values())
            for name, key in _VMSTAT.items():
                if key in found:
                    values[name] = found[key] & U32
        return values

    def _stat_values(self, stat: procfs.Stat, values: dict[str, Any], wanted: frozenset) -> None:
        """Fill VALUES with the /proc/stat metrics in WANTED."""
        msec = self._msec
        percpu = {n: self.cpu_wait_hold(n, t) for n, t in self._percpu(stat).items()}
        total = None if stat.all is None else self.cpu_wait_hold(None, stat.all)
        for all_, each, ticks in _CPU_METRICS:
            if all_ in wanted and total is not None:
                values[all_] = msec(ticks(total))
            if each in wanted:
                values[each] = {n: msec(ticks(t)) for n, t in percpu.items()}
        for name, key in STAT_COUNTERS.items():
            if key in stat.counters:
                values[name] = stat.counters[key]
        values["hinv.ncpu"] = len(percpu)
        values["kernel.all.hz"] = self.hz

    @refresh(1)
    def _refresh_meminfo(self) -> dict[str, Any]:
        """Cluster 1: /proc/meminfo, as kB (mem.*), bytes (swap.*) or Mbyte (hinv.physmem)."""
        wanted = self._wanted
        mem = self._read_once("/proc/meminfo", procfs.parse_meminfo)
        values: dict[str, Any] = {"hinv.pagesize": self.pagesize}
        if mem is None:
            return values
        if b"MemAvailable" not in mem and "mem.util.available" in wanted:
            self._estimate_available(mem)
        for name, key in MEMINFO.items():
            if name in wanted:
                values[name] = mem.get(key)
        for name, compute in MEMINFO_DERIVED.items():
            if name in wanted:
                values[name] = compute(mem)
        if not wanted.isdisjoint(_MEMINFO_TABLE):
            values.update(meminfo.values(mem))
        return values

    def _estimate_available(self, mem: dict[bytes, int]) -> None:
        """Add MemAvailable as pmdalinux estimates it for kernels before 3.14.

        The zones' low watermarks are summed in bytes and taken from kB values,
        as pmdalinux does.
        """
        needed = (b"MemTotal", b"MemFree", b"Active(file)", b"Inactive(file)", b"SReclaimable")
        if not all(key in mem for key in needed):
            return
        low = 0
        zoneinfo = self.proc.read("/proc/zoneinfo") or b""
        for line in zoneinfo.split(b"\n"):
            at = line.find(b"low ")
            if at >= 0:
                word = line[at + 4 :].split(None, 1)
                if word and word[0].lstrip(b"-").isdigit():
                    low += int(word[0])
        low *= self.pagesize
        pagecache = mem[b"Active(file)"] + mem[b"Inactive(file)"]
        pagecache -= min(pagecache // 2, low)
        slab = mem[b"SReclaimable"]
        available = mem[b"MemFree"] - low + pagecache + slab - min(slab // 2, low)
        mem[b"MemAvailable"] = max(available, 0)

    @refresh(vmstat.CLUSTER)
    def _refresh_vmstat(self) -> dict[str, Any]:
        """Cluster 28: /proc/vmstat, one table-driven pass (agents/linux/vmstat.py)."""
        data = self._vmstat()
        if data is None:
            return {}
        return vmstat.metric_values(data)

    @refresh(2)
    def _refresh_loadavg(self) -> dict[str, Any]:
        """Cluster 2: /proc/loadavg."""
        load = self._read("/proc/loadavg", procfs.parse_loadavg)
        if load is None:
            return {}
        one, five, fifteen = load.load
        return {
            "kernel.all.load": {1: one, 5: five, 15: fifteen},
            "kernel.all.runnable": load.runnable & U32,
            "kernel.all.nprocs": load.nprocs & U32,
            "kernel.all.lastpid": load.lastpid & U32,
        }

    @refresh(12)
    def _refresh_uname(self) -> dict[str, Any]:
        """Cluster 12: uname(2), and the distribution's name from its release file."""
        uname = os.uname()
        values: dict[str, Any] = {name: getattr(uname, field) for name, field in system.UNAME}
        if "kernel.uname.distro" in self._wanted:
            if self._distro is None:
                self._distro = system.distro(self.proc.root)
            values["kernel.uname.distro"] = self._distro
        return values

    @refresh(25)
    def _refresh_utmp(self) -> dict[str, Any]:
        """Cluster 25: kernel.all.nusers from utmp (0 when there is no utmp file)."""
        try:
            with open(self.utmp_path, "rb") as f:
                data = f.read()
        except OSError:
            data = b""
        return {"kernel.all.nusers": system.nusers(data)}

    @refresh(18)
    def _refresh_cpuinfo(self) -> dict[str, Any]:
        """Cluster 18: hinv.map.cpu_num, each CPU instance's number."""
        return {"hinv.map.cpu_num": {n: n for n in self._cpu_numbers()}}

    @refresh(55)
    def _refresh_sysfs_devices(self) -> dict[str, Any]:
        """Cluster 55: hinv.cpu.online from each CPU's sysfs 'online' file."""
        online = {}
        for n in self._cpu_numbers():
            path = f"/sys/devices/system/cpu/cpu{n}/online"
            online[n] = system.online(self.proc.read(path))
        return {"hinv.cpu.online": online}

    @refresh(4)
    def _refresh_interrupts(self) -> dict[str, Any]:
        """Cluster 4: kernel.percpu.intr from /proc/interrupts (parsed once per fetch, the
        parse shared with the cpuinfo family's interrupt metrics)."""
        table = system.interrupts_table(self)
        if table is None:
            return {}
        counts, slot, ncpus = table.counts, table.slot, self.ncpus_configured
        intr = {n: counts[slot(n)] for n in self._cpu_numbers() if n < ncpus}
        return {"kernel.percpu.intr": intr}

    @refresh(26)
    def _refresh_uptime(self) -> dict[str, Any]:
        """Cluster 26: /proc/uptime."""
        uptime = self._read("/proc/uptime", procfs.parse_uptime)
        if uptime is None:
            return {}
        return {"kernel.all.uptime": uptime[0], "kernel.all.idletime": uptime[1]}

    @refresh(3)
    def _refresh_net_dev(self) -> dict[str, Any]:
        """Cluster 3: /proc/net/dev, and the interface ioctls when their metrics are asked for."""
        wanted = self._wanted
        interfaces = self._netdev()
        values: dict[str, Any] = {"hinv.ninterface": len(interfaces)}
        for name, value in NET_COUNTERS.items():
            if name in wanted:
                values[name] = {inst: value(counts) for inst, _, counts in interfaces}
        if "network.interface.mtu" in wanted:
            mtus = {inst: self.net.mtu(name) for inst, name, _ in interfaces}
            values["network.interface.mtu"] = {i: m & U32 for i, m in mtus.items() if m}
        if not wanted.isdisjoint(_FLAG_METRICS):
            flags = {inst: self.net.flags(name) or 0 for inst, name, _ in interfaces}
            values["network.interface.up"] = {i: int(bool(f & IFF_UP)) for i, f in flags.items()}
            values["network.interface.running"] = {
                i: int(bool(f & IFF_RUNNING)) for i, f in flags.items()
            }
        if not wanted.isdisjoint(_LINK_METRICS):
            links = {inst: self.net.link(name) or (0, 0) for inst, name, _ in interfaces}
            speeds = {i: speed for i, (speed, _) in links.items() if speed}
            values["network.interface.speed"] = {i: speed_mbyte(s) for i, s in speeds.items()}
            values["network.interface.baudrate"] = {i: s * 1000000 // 8 for i, s in speeds.items()}
            values["network.interface.duplex"] = {i: d for i, (_, d) in links.items() if d}
        return values

    @refresh(5)
    def _refresh_filesys(self) -> dict[str, Any]:
        """Cluster 5: the filesystems of /proc/self/mounts, and statfs of those asked about."""
        wanted = self._wanted
        filesystems = self._filesys()
        values: dict[str, Any] = {"hinv.nfilesys": len(filesystems)}
        asked = [(name, value) for name, value in FILESYS_VALUES.items() if name in wanted]
        if not asked:
            return values
        for name, _ in asked:
            values[name] = {}
        for inst, _, path, options in filesystems:
            try:
                st = os.statvfs(path)
            except OSError:
                continue  # as in pmdalinux: no values for a filesystem statfs cannot reach
            for name, value in asked:
                values[name][inst] = value(st, path, options)
        return values


_STAT_NAMES = frozenset(
    {
        *(name for all_, each, _ in _CPU_METRICS for name in (all_, each)),
        *STAT_COUNTERS,
        "hinv.ncpu",
        "kernel.all.hz",
    }
)
_DISK_NAMES = frozenset(
    {*(name for dev, all_, _, _ in _DISK_METRICS for name in (dev, all_)), "hinv.ndisk"}
)
_VMSTAT = {"swap.pagesin": b"pswpin", "swap.pagesout": b"pswpout"}


def _mixin_of(module: ModuleType) -> type[LinuxBase]:
    """The family's mixin: the one LinuxBase subclass its module defines."""
    (mixin,) = (
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, LinuxBase)
        and value.__module__ == module.__name__
    )
    return mixin


#: The mixin of each family of catalog.FAMILIES: each refreshes its own clusters.
FAMILY_CLASSES: tuple[type[LinuxBase], ...] = tuple(map(_mixin_of, catalog.FAMILIES))


def _indoms_of(classes: Iterable[type]) -> dict[int, InDom]:
    """The instance domains the classes (and their bases) declare, by serial."""
    found: dict[int, InDom] = {}
    for cls in classes:
        for klass in cls.__mro__:
            for value in vars(klass).values():
                if isinstance(value, InDom):
                    found.setdefault(value.serial, value)
    return found


#: Every instance domain of the agent, by serial.
ALL_INDOMS: dict[int, InDom] = _indoms_of((Core, *FAMILY_CLASSES))


class Linux(Core, *FAMILY_CLASSES):  # type: ignore[misc]
    """PCP's linux agent (domain 60): every family's metrics, as the catalog declares them."""

    metrics = tuple(
        Metric(
            info.name,
            info.type,
            info.sem,
            info.units,
            indom=None if info.indom is None else ALL_INDOMS[info.indom],
            labels={
                **catalog.ITEM_LABELS.get((info.cluster, info.item), {}),
                **(info.labels or {}),
            },
        )
        for info in catalog.METRICS
    )


__all__ = ["Linux"]
