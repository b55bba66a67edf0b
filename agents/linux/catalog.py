"""The linux agent's metric catalog: what PCP 6's own linux agent exports, as data.

Our `linux` agent (domain 60) must look exactly like PCP's pmdalinux to every PCP
tool and config: same names, PMIDs, types, semantics, units, instance domains and
instance names.  This module holds that metadata and nothing else: the instance
domains of the core metrics (with how the real agent names and numbers their
instances), and one frozen `MetricInfo` per metric.  The core metrics are the rows
of `_TABLE` below, each with pmdalinux's cluster and item, its descriptor fields
and a short note on where the agent takes the value from; then come the rest of
mem.util.* and mem.vmstat.* from the tables of meminfo.py and vmstat.py, and every
family module's own table (`FAMILIES`).  The agent computes the values itself, from the
same /proc and sysfs files, statfs calls and interface ioctls as pmdalinux
(agents/linux/__init__.py, procfs.py, netif.py and the family modules); our help
text is in help/linux, and docs/linux-agent-notes.md has the longer story
(instance naming rules, the pmdalinux quirks we keep).

How it was made and checked: names, PMIDs, types, indoms, semantics and packed
units were read from a private reference pmcd running PCP 6.0.3's linux agent
(pmLookupDescs), and the computations from its source (src/pmdas/linux/pmda.c,
proc_stat.c, proc_meminfo.c, proc_partitions.c, proc_net_dev.c, filesys.c,
proc_vmstat.c at tag 6.0.3).  tests/agents/test_linux_catalog.py checks every
record against `pminfo -m -d -t` of a reference pmcd (marker `interop`).

Types are those of a 2.6.5+ kernel: pmdalinux narrows a few /proc/stat counters
to 32 bits on older kernels, which we do not support.  Counters PCP exports as
32-bit (type U32, e.g. disk.dev.avactive) wrap modulo 2**32 there; the agent
must wrap them the same way.
"""

from __future__ import annotations

from . import (
    blockdev,
    cpuinfo,
    interrupts,
    ipc,
    meminfo,
    netconn,
    netsnmp,
    netsummary,
    nfs,
    numa,
    pressure,
    snmp6,
    vfs,
    vmstat,
    zoneinfo,
)
from .records import (
    BYTE,
    BYTE_PER_SEC,
    COUNT,
    COUNT_PER_SEC,
    COUNTER,
    DISCRETE,
    DOUBLE,
    FLOAT,
    I64,
    INSTANT,
    KBYTE,
    MBYTE,
    MBYTE_PER_SEC,
    MSEC,
    NONE,
    SEC,
    STRING,
    U32,
    U64,
    InDomInfo,
    MetricInfo,
    Row,
    records_of,
)
from .records import DOMAIN as DOMAIN

# Instance domain serials, with pmdalinux's names for them (linux.h).
CPU_INDOM = 0
DISK_INDOM = 1
LOADAVG_INDOM = 2
NET_DEV_INDOM = 3
FILESYS_INDOM = 5
# ... and the table's short names for them.
CPU, DISK, LOAD, NET, FILESYS = CPU_INDOM, DISK_INDOM, LOADAVG_INDOM, NET_DEV_INDOM, FILESYS_INDOM


#: The instance domains catalog metrics use, by serial.
INDOMS: dict[int, InDomInfo] = {
    CPU_INDOM: InDomInfo(
        CPU_INDOM,
        "CPU_INDOM",
        "one per online CPU (the cpuN lines of /proc/stat): internal id N, name 'cpuN' "
        "('cpu0', 'cpu1', ...); ids are CPU numbers, so offline CPUs leave gaps",
    ),
    DISK_INDOM: InDomInfo(
        DISK_INDOM,
        "DISK_INDOM",
        "one per whole disk in /proc/diskstats, named as there ('sda', 'vda', 'nvme0n1', "
        "'mmcblk0', 'xvda'); no partitions, loop*, ram*, zram*, sr*, dm-*, md*; ids 0, 1, ... "
        "in order first seen, kept across restarts by pmdaCache (config/pmda/60.1)",
    ),
    LOADAVG_INDOM: InDomInfo(
        LOADAVG_INDOM,
        "LOADAVG_INDOM",
        "fixed: id 1 '1 minute', id 5 '5 minute', id 15 '15 minute'",
    ),
    NET_DEV_INDOM: InDomInfo(
        NET_DEV_INDOM,
        "NET_DEV_INDOM",
        "one per line of /proc/net/dev, named as there ('lo', 'eth0', 'ifb0'), loopback and "
        "down interfaces included; ids 0, 1, ... in order first seen, kept across restarts "
        "by pmdaCache (config/pmda/60.3)",
    ),
    FILESYS_INDOM: InDomInfo(
        FILESYS_INDOM,
        "FILESYS_INDOM",
        "one per mounted block-device filesystem (device under /dev, or the / mount), named "
        "by the device's realpath ('/dev/sda1', '/dev/vda'; /dev/mapper/* and /dev/md* kept "
        "as written); the first mount of a device wins; proc, sysfs, cgroup, devtmpfs, "
        "devpts, nfs, squashfs, autofs, ... and tmpfs (its own indom) excluded; ids 0, 1, ... "
        "in /proc/self/mounts order, not persisted",
    ),
}

#: kernel.all.load's instances (internal id, external name), fixed.
LOAD_INSTANCES: tuple[tuple[int, str], ...] = ((1, "1 minute"), (5, "5 minute"), (15, "15 minute"))


#: The metrics every PCP user of a linux agent expects, at the least (our issue's list).
REQUIRED: tuple[str, ...] = (
    "kernel.all.load",
    *(f"kernel.all.cpu.{f}" for f in ("user", "nice", "sys", "idle", "wait.total", "intr")),
    "kernel.all.cpu.steal",
    *(f"kernel.percpu.cpu.{f}" for f in ("user", "nice", "sys", "idle")),
    "kernel.all.uptime",
    "kernel.all.nprocs",
    "hinv.ncpu",
    "hinv.physmem",
    "mem.physmem",
    *(f"mem.util.{f}" for f in ("free", "used", "cached", "bufmem", "available")),
    *(f"swap.{f}" for f in ("length", "used", "free")),
    *(
        f"disk.{d}.{f}"
        for d in ("dev", "all")
        for f in ("read", "write", "total", "read_bytes", "write_bytes")
    ),
    *(
        f"network.interface.{d}.{f}"
        for d in ("in", "out")
        for f in ("bytes", "packets", "errors", "drops")
    ),
    "network.interface.speed",
    *(f"filesys.{f}" for f in ("capacity", "used", "free")),
)


#: The core metrics: (name, cluster, item, type, indom, semantics, units, source), where
#: source says where the agent takes the value from (agents/linux/__init__.py computes it).
_TABLE: tuple[Row, ...] = (
    # --- CPU time, all CPUs: /proc/stat's "cpu" line, ticks * 1000 / hz (cputime.py)
    ("kernel.all.cpu.user", 0, 20, U64, None, COUNTER, MSEC, "user (guest included)"),
    ("kernel.all.cpu.nice", 0, 21, U64, None, COUNTER, MSEC, "nice (guest_nice included)"),
    ("kernel.all.cpu.sys", 0, 22, U64, None, COUNTER, MSEC, "system"),
    ("kernel.all.cpu.idle", 0, 23, U64, None, COUNTER, MSEC, "idle"),
    ("kernel.all.cpu.intr", 0, 34, U64, None, COUNTER, MSEC, "irq + softirq"),
    ("kernel.all.cpu.wait.total", 0, 35, U64, None, COUNTER, MSEC, "iowait, WaitHold"),
    ("kernel.all.cpu.steal", 0, 55, U64, None, COUNTER, MSEC, "steal"),
    ("kernel.all.cpu.irq.soft", 0, 53, U64, None, COUNTER, MSEC, "softirq"),
    ("kernel.all.cpu.irq.hard", 0, 54, U64, None, COUNTER, MSEC, "irq"),
    ("kernel.all.cpu.guest", 0, 60, U64, None, COUNTER, MSEC, "guest"),
    ("kernel.all.cpu.guest_nice", 0, 81, U64, None, COUNTER, MSEC, "guest_nice"),
    ("kernel.all.cpu.vuser", 0, 78, U64, None, COUNTER, MSEC, "user - guest"),
    ("kernel.all.cpu.vnice", 0, 82, U64, None, COUNTER, MSEC, "nice - guest_nice"),
    # --- CPU time per CPU: /proc/stat's "cpuN" lines, the same columns
    ("kernel.percpu.cpu.user", 0, 0, U64, CPU, COUNTER, MSEC, "user (guest included)"),
    ("kernel.percpu.cpu.nice", 0, 1, U64, CPU, COUNTER, MSEC, "nice (guest_nice included)"),
    ("kernel.percpu.cpu.sys", 0, 2, U64, CPU, COUNTER, MSEC, "system"),
    ("kernel.percpu.cpu.idle", 0, 3, U64, CPU, COUNTER, MSEC, "idle"),
    ("kernel.percpu.cpu.intr", 0, 31, U64, CPU, COUNTER, MSEC, "irq + softirq"),
    ("kernel.percpu.cpu.wait.total", 0, 30, U64, CPU, COUNTER, MSEC, "iowait, WaitHold"),
    ("kernel.percpu.cpu.steal", 0, 58, U64, CPU, COUNTER, MSEC, "steal"),
    ("kernel.percpu.cpu.irq.soft", 0, 56, U64, CPU, COUNTER, MSEC, "softirq"),
    ("kernel.percpu.cpu.irq.hard", 0, 57, U64, CPU, COUNTER, MSEC, "irq"),
    ("kernel.percpu.cpu.guest", 0, 61, U64, CPU, COUNTER, MSEC, "guest"),
    ("kernel.percpu.cpu.guest_nice", 0, 83, U64, CPU, COUNTER, MSEC, "guest_nice"),
    ("kernel.percpu.cpu.vuser", 0, 76, U64, CPU, COUNTER, MSEC, "user - guest"),
    ("kernel.percpu.cpu.vnice", 0, 84, U64, CPU, COUNTER, MSEC, "nice - guest_nice"),
    # --- load, uptime, process counts, /proc/stat counters
    ("kernel.all.load", 2, 0, FLOAT, LOAD, INSTANT, NONE, "/proc/loadavg fields 1-3"),
    ("kernel.all.uptime", 26, 0, DOUBLE, None, INSTANT, SEC, "/proc/uptime field 1"),
    ("kernel.all.idletime", 26, 1, DOUBLE, None, INSTANT, SEC, "/proc/uptime field 2"),
    ("kernel.all.nprocs", 2, 3, U32, None, INSTANT, NONE, "/proc/loadavg N of R/N"),
    ("kernel.all.runnable", 2, 2, U32, None, INSTANT, NONE, "/proc/loadavg R of R/N"),
    ("kernel.all.running", 0, 15, U64, None, INSTANT, NONE, "/proc/stat procs_running"),
    ("kernel.all.blocked", 0, 16, U64, None, INSTANT, NONE, "/proc/stat procs_blocked"),
    ("kernel.all.pswitch", 0, 13, U64, None, COUNTER, COUNT, "/proc/stat ctxt"),
    ("kernel.all.intr", 0, 12, U64, None, COUNTER, COUNT, "/proc/stat intr"),
    ("kernel.all.sysfork", 0, 14, U64, None, COUNTER, COUNT, "/proc/stat processes"),
    ("kernel.all.hz", 0, 48, U32, None, DISCRETE, COUNT_PER_SEC, "$LINUX_HERTZ, else SC_CLK_TCK"),
    ("kernel.all.boottime", 0, 17, I64, None, DISCRETE, SEC, "/proc/stat btime"),
    ("kernel.all.lastpid", 2, 1, U32, None, INSTANT, NONE, "/proc/loadavg field 5"),
    # --- hardware inventory
    ("hinv.ncpu", 0, 32, U32, None, DISCRETE, NONE, "cpuN lines of /proc/stat"),
    ("hinv.physmem", 1, 9, U32, None, DISCRETE, MBYTE, "/proc/meminfo MemTotal >> 10"),
    ("hinv.pagesize", 1, 11, U32, None, DISCRETE, BYTE, "SC_PAGE_SIZE"),
    ("hinv.ndisk", 0, 33, U32, None, DISCRETE, NONE, "disk instances"),
    ("hinv.ninterface", 3, 27, U32, None, DISCRETE, NONE, "/proc/net/dev lines"),
    ("hinv.nfilesys", 5, 0, U32, None, DISCRETE, COUNT, "filesys instances"),
    # --- memory: /proc/meminfo, kB as the kernel gives them (other and cache_clean at least 0)
    ("mem.physmem", 1, 0, U64, None, DISCRETE, KBYTE, "MemTotal"),
    ("mem.freemem", 1, 10, U64, None, INSTANT, KBYTE, "MemFree"),
    ("mem.util.used", 1, 1, U64, None, INSTANT, KBYTE, "MemTotal - MemFree"),
    ("mem.util.free", 1, 2, U64, None, INSTANT, KBYTE, "MemFree"),
    ("mem.util.shared", 1, 3, U64, None, INSTANT, KBYTE, "MemShared (2.4 kernels)"),
    ("mem.util.bufmem", 1, 4, U64, None, INSTANT, KBYTE, "Buffers"),
    ("mem.util.cached", 1, 5, U64, None, INSTANT, KBYTE, "Cached"),
    ("mem.util.other", 1, 12, U64, None, INSTANT, KBYTE, "MemTotal - MemFree - Cached - Buffers"),
    ("mem.util.swapCached", 1, 13, U64, None, INSTANT, KBYTE, "SwapCached"),
    ("mem.util.active", 1, 14, U64, None, INSTANT, KBYTE, "Active"),
    ("mem.util.inactive", 1, 15, U64, None, INSTANT, KBYTE, "Inactive"),
    ("mem.util.swapTotal", 1, 20, U64, None, INSTANT, KBYTE, "SwapTotal"),
    ("mem.util.swapFree", 1, 21, U64, None, INSTANT, KBYTE, "SwapFree"),
    ("mem.util.dirty", 1, 22, U64, None, INSTANT, KBYTE, "Dirty"),
    ("mem.util.writeback", 1, 23, U64, None, INSTANT, KBYTE, "Writeback"),
    ("mem.util.mapped", 1, 24, U64, None, INSTANT, KBYTE, "Mapped"),
    ("mem.util.slab", 1, 25, U64, None, INSTANT, KBYTE, "Slab"),
    ("mem.util.committed_AS", 1, 26, U64, None, INSTANT, KBYTE, "Committed_AS"),
    ("mem.util.pageTables", 1, 27, U64, None, INSTANT, KBYTE, "PageTables"),
    ("mem.util.cache_clean", 1, 29, U64, None, INSTANT, KBYTE, "Cached - Dirty - Writeback"),
    ("mem.util.anonpages", 1, 30, U64, None, INSTANT, KBYTE, "AnonPages"),
    ("mem.util.commitLimit", 1, 31, U64, None, INSTANT, KBYTE, "CommitLimit"),
    ("mem.util.slabReclaimable", 1, 34, U64, None, INSTANT, KBYTE, "SReclaimable"),
    ("mem.util.slabUnreclaimable", 1, 35, U64, None, INSTANT, KBYTE, "SUnreclaim"),
    ("mem.util.active_anon", 1, 36, U64, None, INSTANT, KBYTE, "Active(anon)"),
    ("mem.util.inactive_anon", 1, 37, U64, None, INSTANT, KBYTE, "Inactive(anon)"),
    ("mem.util.active_file", 1, 38, U64, None, INSTANT, KBYTE, "Active(file)"),
    ("mem.util.inactive_file", 1, 39, U64, None, INSTANT, KBYTE, "Inactive(file)"),
    ("mem.util.unevictable", 1, 40, U64, None, INSTANT, KBYTE, "Unevictable"),
    ("mem.util.mlocked", 1, 41, U64, None, INSTANT, KBYTE, "Mlocked"),
    ("mem.util.shmem", 1, 42, U64, None, INSTANT, KBYTE, "Shmem"),
    ("mem.util.kernelStack", 1, 43, U64, None, INSTANT, KBYTE, "KernelStack"),
    ("mem.util.hugepagesTotal", 1, 44, U64, None, INSTANT, COUNT, "HugePages_Total (pages)"),
    ("mem.util.hugepagesFree", 1, 45, U64, None, INSTANT, COUNT, "HugePages_Free (pages)"),
    ("mem.util.available", 1, 58, U64, None, INSTANT, KBYTE, "MemAvailable, else estimated"),
    # --- swap: bytes (not Kbyte) from /proc/meminfo, and /proc/vmstat page counts
    ("swap.length", 1, 6, U64, None, INSTANT, BYTE, "SwapTotal << 10"),
    ("swap.used", 1, 7, U64, None, INSTANT, BYTE, "(SwapTotal - SwapFree) << 10"),
    ("swap.free", 1, 8, U64, None, INSTANT, BYTE, "SwapFree << 10"),
    ("swap.pagesin", 0, 8, U32, None, COUNTER, COUNT, "/proc/vmstat pswpin"),
    ("swap.pagesout", 0, 9, U32, None, COUNTER, COUNT, "/proc/vmstat pswpout"),
    # --- per disk: /proc/diskstats (blockdev.COUNTS), sectors of 512 bytes
    ("disk.dev.read", 0, 4, U64, DISK, COUNTER, COUNT, "reads completed"),
    ("disk.dev.write", 0, 5, U64, DISK, COUNTER, COUNT, "writes completed"),
    ("disk.dev.total", 0, 28, U64, DISK, COUNTER, COUNT, "reads + writes"),
    ("disk.dev.blkread", 0, 6, U64, DISK, COUNTER, COUNT, "sectors read"),
    ("disk.dev.blkwrite", 0, 7, U64, DISK, COUNTER, COUNT, "sectors written"),
    ("disk.dev.blktotal", 0, 36, U64, DISK, COUNTER, COUNT, "sectors read + written"),
    ("disk.dev.read_bytes", 0, 38, U64, DISK, COUNTER, KBYTE, "sectors read / 2"),
    ("disk.dev.write_bytes", 0, 39, U64, DISK, COUNTER, KBYTE, "sectors written / 2"),
    ("disk.dev.total_bytes", 0, 40, U64, DISK, COUNTER, KBYTE, "(read + written) / 2"),
    ("disk.dev.read_merge", 0, 49, U64, DISK, COUNTER, COUNT, "reads merged"),
    ("disk.dev.write_merge", 0, 50, U64, DISK, COUNTER, COUNT, "writes merged"),
    ("disk.dev.avactive", 0, 46, U32, DISK, COUNTER, MSEC, "ms doing I/O"),
    ("disk.dev.aveq", 0, 47, U32, DISK, COUNTER, MSEC, "weighted ms doing I/O"),
    ("disk.dev.read_rawactive", 0, 72, U32, DISK, COUNTER, MSEC, "ms reading"),
    ("disk.dev.write_rawactive", 0, 73, U32, DISK, COUNTER, MSEC, "ms writing"),
    ("disk.dev.total_rawactive", 0, 79, U32, DISK, COUNTER, MSEC, "ms reading + writing"),
    ("disk.dev.inflight", 0, 95, U32, DISK, INSTANT, NONE, "I/Os in progress"),
    # --- all disks: sums over the disk instances
    ("disk.all.read", 0, 24, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.write", 0, 25, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.total", 0, 29, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.blkread", 0, 26, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.blkwrite", 0, 27, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.blktotal", 0, 37, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.read_bytes", 0, 41, U64, None, COUNTER, KBYTE, "sum of disk.dev"),
    ("disk.all.write_bytes", 0, 42, U64, None, COUNTER, KBYTE, "sum of disk.dev"),
    ("disk.all.total_bytes", 0, 43, U64, None, COUNTER, KBYTE, "sum of disk.dev"),
    ("disk.all.read_merge", 0, 51, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.write_merge", 0, 52, U64, None, COUNTER, COUNT, "sum of disk.dev"),
    ("disk.all.avactive", 0, 44, U64, None, COUNTER, MSEC, "sum of disk.dev"),
    ("disk.all.aveq", 0, 45, U64, None, COUNTER, MSEC, "sum of disk.dev"),
    ("disk.all.read_rawactive", 0, 74, U64, None, COUNTER, MSEC, "sum of disk.dev"),
    ("disk.all.write_rawactive", 0, 75, U64, None, COUNTER, MSEC, "sum of disk.dev"),
    ("disk.all.total_rawactive", 0, 80, U64, None, COUNTER, MSEC, "sum of disk.dev"),
    ("disk.all.inflight", 0, 104, U64, None, INSTANT, NONE, "sum of disk.dev"),
    # --- network interfaces: /proc/net/dev columns, and interface ioctls (netif.py)
    ("network.interface.in.bytes", 3, 0, U64, NET, COUNTER, BYTE, "rx bytes"),
    ("network.interface.in.packets", 3, 1, U64, NET, COUNTER, COUNT, "rx packets"),
    ("network.interface.in.errors", 3, 2, U64, NET, COUNTER, COUNT, "rx errs"),
    ("network.interface.in.drops", 3, 3, U64, NET, COUNTER, COUNT, "rx drop"),
    ("network.interface.in.fifo", 3, 4, U64, NET, COUNTER, COUNT, "rx fifo"),
    ("network.interface.in.frame", 3, 5, U64, NET, COUNTER, COUNT, "rx frame"),
    ("network.interface.in.compressed", 3, 6, U64, NET, COUNTER, COUNT, "rx compressed"),
    ("network.interface.in.mcasts", 3, 7, U64, NET, COUNTER, COUNT, "rx multicast"),
    ("network.interface.out.bytes", 3, 8, U64, NET, COUNTER, BYTE, "tx bytes"),
    ("network.interface.out.packets", 3, 9, U64, NET, COUNTER, COUNT, "tx packets"),
    ("network.interface.out.errors", 3, 10, U64, NET, COUNTER, COUNT, "tx errs"),
    ("network.interface.out.drops", 3, 11, U64, NET, COUNTER, COUNT, "tx drop"),
    ("network.interface.out.fifo", 3, 12, U64, NET, COUNTER, COUNT, "tx fifo"),
    ("network.interface.out.carrier", 3, 14, U64, NET, COUNTER, COUNT, "tx carrier"),
    ("network.interface.out.compressed", 3, 15, U64, NET, COUNTER, COUNT, "tx compressed"),
    ("network.interface.collisions", 3, 13, U64, NET, COUNTER, COUNT, "tx colls"),
    ("network.interface.total.bytes", 3, 16, U64, NET, COUNTER, BYTE, "rx + tx bytes"),
    ("network.interface.total.packets", 3, 17, U64, NET, COUNTER, COUNT, "rx + tx packets"),
    ("network.interface.total.errors", 3, 18, U64, NET, COUNTER, COUNT, "rx + tx errs"),
    ("network.interface.total.drops", 3, 19, U64, NET, COUNTER, COUNT, "rx + tx drop"),
    ("network.interface.total.mcasts", 3, 20, U64, NET, COUNTER, COUNT, "rx multicast"),
    ("network.interface.mtu", 3, 21, U32, NET, INSTANT, BYTE, "SIOCGIFMTU, if not 0"),
    ("network.interface.speed", 3, 22, FLOAT, NET, DISCRETE, MBYTE_PER_SEC, "speed_mbyte(Mbit/s)"),
    ("network.interface.baudrate", 3, 23, U64, NET, DISCRETE, BYTE_PER_SEC, "link Mbit/s * 125000"),
    ("network.interface.duplex", 3, 24, U32, NET, DISCRETE, NONE, "link duplex, if known"),
    ("network.interface.up", 3, 25, U32, NET, INSTANT, NONE, "IFF_UP"),
    ("network.interface.running", 3, 26, U32, NET, INSTANT, NONE, "IFF_RUNNING"),
    # --- mounted filesystems (/proc/self/mounts): statfs of each mount point
    ("filesys.capacity", 5, 1, U64, FILESYS, DISCRETE, KBYTE, "blocks * bsize / 1024"),
    ("filesys.used", 5, 2, U64, FILESYS, INSTANT, KBYTE, "(blocks - bfree) * bsize / 1024"),
    ("filesys.free", 5, 3, U64, FILESYS, INSTANT, KBYTE, "bfree * bsize / 1024"),
    ("filesys.avail", 5, 10, U64, FILESYS, INSTANT, KBYTE, "bavail * bsize / 1024"),
    ("filesys.maxfiles", 5, 4, U32, FILESYS, DISCRETE, NONE, "files"),
    ("filesys.usedfiles", 5, 5, U32, FILESYS, INSTANT, NONE, "files - ffree"),
    ("filesys.freefiles", 5, 6, U32, FILESYS, INSTANT, NONE, "ffree"),
    ("filesys.mountdir", 5, 7, STRING, FILESYS, DISCRETE, NONE, "the mount point"),
    ("filesys.full", 5, 8, DOUBLE, FILESYS, INSTANT, NONE, "100 * used / (used + bavail)"),
    ("filesys.blocksize", 5, 9, U32, FILESYS, INSTANT, BYTE, "bsize"),
    ("filesys.readonly", 5, 11, U32, FILESYS, INSTANT, NONE, "'ro' mount option"),
    # --- what `pcp uptime` and `pcp mpstat` need besides CPU time (system.py)
    ("kernel.uname.release", 12, 0, STRING, None, DISCRETE, NONE, "uname(2)"),
    ("kernel.uname.version", 12, 1, STRING, None, DISCRETE, NONE, "uname(2)"),
    ("kernel.uname.sysname", 12, 2, STRING, None, DISCRETE, NONE, "uname(2)"),
    ("kernel.uname.machine", 12, 3, STRING, None, DISCRETE, NONE, "uname(2)"),
    ("kernel.uname.nodename", 12, 4, STRING, None, DISCRETE, NONE, "uname(2)"),
    ("kernel.uname.distro", 12, 7, STRING, None, DISCRETE, NONE, "/etc release file, read once"),
    ("kernel.all.nusers", 25, 0, U32, None, INSTANT, NONE, "utmp USER_PROCESS"),
    ("hinv.map.cpu_num", 18, 6, U32, CPU, DISCRETE, NONE, "N of cpuN"),
    ("hinv.cpu.online", 55, 0, U32, CPU, INSTANT, NONE, "sysfs cpuN/online, else 1"),
    ("kernel.percpu.intr", 4, 4, U64, CPU, COUNTER, COUNT, "/proc/interrupts column sum"),
)


def _vmstat_source(field: str) -> str:
    """How mem.vmstat.FIELD is computed (see agents/linux/vmstat.py)."""
    if field in vmstat.TOTALS:
        return (
            f"sum of the /proc/vmstat fields of this table starting with "
            f"'{vmstat.TOTALS[field]}' (0 when none)"
        )
    note = f"/proc/vmstat field '{vmstat.SOURCE[field]}'; no value when the kernel lacks it"
    if field in vmstat.READS_FROM:
        note += " (pmdalinux's swap of balloon_inflate and balloon_deflate, kept)"
    if field in vmstat.FALLBACKS:
        first, second = vmstat.FALLBACKS[field]
        note += f", then {first} + {second} in 64-bit arithmetic, a missing part being 2**64 - 1"
    return note


#: The family modules whose tables follow the records above, in catalog order.
FAMILIES = (
    cpuinfo,
    interrupts,
    pressure,
    numa,
    zoneinfo,
    blockdev,
    netsnmp,
    snmp6,
    netsummary,
    netconn,
    ipc,
    vfs,
    nfs,
)

#: Every metric in the catalog: the table above, the rest of mem.util.* (one record per
#: row of meminfo.FIELDS and meminfo.HUGEPAGE_BYTES), mem.vmstat.* (one per row of
#: vmstat.FIELDS), then each family's metrics.
METRICS: tuple[MetricInfo, ...] = (
    *records_of(_TABLE),
    *records_of(
        (meminfo.PREFIX + suffix, meminfo.CLUSTER, item, U64, None, meminfo.SEM, units,
         f"/proc/meminfo field '{field}'; no value when the kernel lacks it")
        for suffix, item, field, units in meminfo.FIELDS
    ),
    *records_of(
        (meminfo.PREFIX + suffix, meminfo.CLUSTER, item, U64, None, meminfo.SEM, units,
         f"/proc/meminfo '{field}' * ('Hugepagesize' kB << 10), modulo 2**64; no value "
         f"without '{field}' (a missing Hugepagesize counts as -1, as in pmdalinux)")
        for suffix, item, field, units in meminfo.HUGEPAGE_BYTES
    ),
    *records_of(
        (vmstat.PREFIX + field, vmstat.CLUSTER, item, U64, None, sem, units, _vmstat_source(field))
        for field, item, (sem, units) in vmstat.FIELDS
    ),
    *(m for family in FAMILIES for m in family.METRICS),
)  # fmt: skip

#: pmdalinux's labels of single metrics (PM_LABEL_ITEM): CPU time and per-node CPU time.
_CPU_DEVICE = {"device_type": "cpu"}
_NODE_CPU_DEVICE = {"device_type": ["numa_node", "cpu"]}
ITEM_LABELS: dict[tuple[int, int], dict] = {
    **{(0, item): _CPU_DEVICE for item in (20, 21, 22, 23, 34, 35, 53, 54, 55, 60, 78, 81, 82)},
    **{(0, item): _NODE_CPU_DEVICE for item in (*range(62, 72), 77, 85, 86)},
}

#: The catalog by metric name.
BY_NAME: dict[str, MetricInfo] = {m.name: m for m in METRICS}
