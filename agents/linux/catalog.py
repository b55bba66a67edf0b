"""The linux agent's metric catalog: what PCP 6's own linux agent exports, as data.

Our `linux` agent (domain 60, built on psutil) must look exactly like PCP's
pmdalinux to every PCP tool and config: same names, PMIDs, types, semantics,
units, instance domains and instance names.  This module holds that metadata and
nothing else: the instance domains the catalog uses (with how the real agent
names and numbers their instances), and one frozen `MetricInfo` per metric with
PCP's cluster and item, descriptor fields, one-line help text, and a `source`
note saying how to compute the value from psutil (or from /proc where psutil
lacks it), unit conversion included.  docs/linux-agent-notes.md has the longer
story (psutil's gaps, instance naming rules).

How it was made and checked: names, PMIDs, types, indoms, semantics, packed
units and one-line help were read from a private reference pmcd running PCP
6.0.3's linux agent (pmLookupDescs / pmLookupText), and the computations from
its source (src/pmdas/linux/pmda.c, proc_stat.c, proc_meminfo.c,
proc_partitions.c, proc_net_dev.c, filesys.c, proc_vmstat.c at tag 6.0.3) compared with
psutil 7.2's _pslinux.py.  tests/agents/test_linux_catalog.py checks every record
against `pminfo -m -d -t` of a reference pmcd (marker `interop`).

Types are those of a 2.6.5+ kernel: pmdalinux narrows a few /proc/stat counters
to 32 bits on older kernels, which we do not support.  Counters PCP exports as
32-bit (type U32, e.g. disk.dev.avactive) wrap modulo 2**32 there; the agent
must wrap them the same way.
"""

from __future__ import annotations

from . import (
    blockdev,
    cpuinfo,
    ipc,
    meminfo,
    netconn,
    netsnmp,
    netsummary,
    nfs,
    numa,
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
)
from .records import DOMAIN as DOMAIN

# Instance domain serials, with pmdalinux's names for them (linux.h).
CPU_INDOM = 0
DISK_INDOM = 1
LOADAVG_INDOM = 2
NET_DEV_INDOM = 3
FILESYS_INDOM = 5


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


# In `source`: "x // 1024" is integer division; "round(x * 1000)" turns psutil's float
# seconds (ticks / CLK_TCK) back into PCP's integer msec (ticks * 1000 / hz) without the
# off-by-one that int() gives on float error; /proc/meminfo fields are kB, missing
# fields mean no value.

#: Every metric in the catalog, grouped by family.
METRICS: tuple[MetricInfo, ...] = (
    # --- CPU time, all CPUs: /proc/stat "cpu" line, ticks * 1000 / hz
    MetricInfo(
        "kernel.all.cpu.user",
        cluster=0,
        item=20,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().user (includes guest), sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.nice",
        cluster=0,
        item=21,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().nice (includes guest_nice), sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.sys",
        cluster=0,
        item=22,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().system, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.idle",
        cluster=0,
        item=23,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().idle (excludes iowait), sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.intr",
        cluster=0,
        item=34,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="t = psutil.cpu_times(); (t.irq + t.softirq), sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.wait.total",
        cluster=0,
        item=35,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times().iowait (PCP holds the previous value when iowait steps back by < "
            "100 ticks), sec -> msec: round(x * 1000)"
        ),
    ),
    MetricInfo(
        "kernel.all.cpu.steal",
        cluster=0,
        item=55,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().steal, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.irq.soft",
        cluster=0,
        item=53,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().softirq, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.irq.hard",
        cluster=0,
        item=54,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().irq, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.guest",
        cluster=0,
        item=60,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().guest, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.guest_nice",
        cluster=0,
        item=81,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="psutil.cpu_times().guest_nice, sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.vuser",
        cluster=0,
        item=78,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="t = psutil.cpu_times(); (t.user - t.guest), sec -> msec: round(x * 1000)",
    ),
    MetricInfo(
        "kernel.all.cpu.vnice",
        cluster=0,
        item=82,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="t = psutil.cpu_times(); (t.nice - t.guest_nice), sec -> msec: round(x * 1000)",
    ),
    # --- CPU time per CPU: /proc/stat "cpuN" lines
    MetricInfo(
        "kernel.percpu.cpu.user",
        cluster=0,
        item=0,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].user (includes guest), sec -> msec: round(x * 1000);"
            " i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.nice",
        cluster=0,
        item=1,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].nice (includes guest_nice), sec -> msec: round(x * "
            "1000); i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.sys",
        cluster=0,
        item=2,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].system, sec -> msec: round(x * 1000); i-th entry = "
            "i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.idle",
        cluster=0,
        item=3,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].idle (excludes iowait), sec -> msec: round(x * "
            "1000); i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.intr",
        cluster=0,
        item=31,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "t = psutil.cpu_times(percpu=True)[i]; (t.irq + t.softirq), sec -> msec: round(x * "
            "1000); i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.wait.total",
        cluster=0,
        item=30,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].iowait (PCP holds the previous value when iowait "
            "steps back by < 100 ticks), sec -> msec: round(x * 1000); i-th entry = i-th cpuN line"
            " of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.steal",
        cluster=0,
        item=58,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].steal, sec -> msec: round(x * 1000); i-th entry = "
            "i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.irq.soft",
        cluster=0,
        item=56,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].softirq, sec -> msec: round(x * 1000); i-th entry = "
            "i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.irq.hard",
        cluster=0,
        item=57,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].irq, sec -> msec: round(x * 1000); i-th entry = i-th"
            " cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.guest",
        cluster=0,
        item=61,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].guest, sec -> msec: round(x * 1000); i-th entry = "
            "i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.guest_nice",
        cluster=0,
        item=83,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "psutil.cpu_times(percpu=True)[i].guest_nice, sec -> msec: round(x * 1000); i-th entry"
            " = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.vuser",
        cluster=0,
        item=76,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "t = psutil.cpu_times(percpu=True)[i]; (t.user - t.guest), sec -> msec: round(x * "
            "1000); i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    MetricInfo(
        "kernel.percpu.cpu.vnice",
        cluster=0,
        item=84,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "t = psutil.cpu_times(percpu=True)[i]; (t.nice - t.guest_nice), sec -> msec: round(x *"
            " 1000); i-th entry = i-th cpuN line of /proc/stat"
        ),
    ),
    # --- load, uptime, process counts, /proc/stat counters
    MetricInfo(
        "kernel.all.load",
        cluster=2,
        item=0,
        type=FLOAT,
        indom=LOADAVG_INDOM,
        sem=INSTANT,
        units=NONE,
        source=(
            "/proc/loadavg fields 1-3 as float32, inst 1/5/15; psutil.getloadavg() (os.getloadavg)"
            " is close but not the same number"
        ),
    ),
    MetricInfo(
        "kernel.all.uptime",
        cluster=26,
        item=0,
        type=DOUBLE,
        indom=None,
        sem=INSTANT,
        units=SEC,
        source=(
            "/proc/uptime field 1 (sec, double); time.time() - psutil.boot_time() only "
            "approximates it"
        ),
    ),
    MetricInfo(
        "kernel.all.idletime",
        cluster=26,
        item=1,
        type=DOUBLE,
        indom=None,
        sem=INSTANT,
        units=SEC,
        source="/proc/uptime field 2 (sec, double, summed over CPUs); not in psutil",
    ),
    MetricInfo(
        "kernel.all.nprocs",
        cluster=2,
        item=3,
        type=U32,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source=(
            "/proc/loadavg field 4, N of 'R/N' (all tasks, threads included); not "
            "len(psutil.pids())"
        ),
    ),
    MetricInfo(
        "kernel.all.runnable",
        cluster=2,
        item=2,
        type=U32,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="/proc/loadavg field 4, R of 'R/N'; not in psutil",
    ),
    MetricInfo(
        "kernel.all.running",
        cluster=0,
        item=15,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="/proc/stat procs_running; not in psutil",
    ),
    MetricInfo(
        "kernel.all.blocked",
        cluster=0,
        item=16,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="/proc/stat procs_blocked; not in psutil",
    ),
    MetricInfo(
        "kernel.all.pswitch",
        cluster=0,
        item=13,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="psutil.cpu_stats().ctx_switches (/proc/stat ctxt)",
    ),
    MetricInfo(
        "kernel.all.intr",
        cluster=0,
        item=12,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="psutil.cpu_stats().interrupts (first number of /proc/stat intr)",
    ),
    MetricInfo(
        "kernel.all.sysfork",
        cluster=0,
        item=14,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="/proc/stat processes; not in psutil",
    ),
    MetricInfo(
        "kernel.all.hz",
        cluster=0,
        item=48,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=COUNT_PER_SEC,
        source="os.sysconf('SC_CLK_TCK')",
    ),
    MetricInfo(
        "kernel.all.boottime",
        cluster=0,
        item=17,
        type=I64,
        indom=None,
        sem=DISCRETE,
        units=SEC,
        source="int(psutil.boot_time()) (/proc/stat btime)",
    ),
    MetricInfo(
        "kernel.all.lastpid",
        cluster=2,
        item=1,
        type=U32,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="/proc/loadavg field 5; not in psutil",
    ),
    # --- hardware inventory
    MetricInfo(
        "hinv.ncpu",
        cluster=0,
        item=32,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="len(psutil.cpu_times(percpu=True)): online CPUs, the active cpu instances",
    ),
    MetricInfo(
        "hinv.physmem",
        cluster=1,
        item=9,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=MBYTE,
        source="psutil.virtual_memory().total >> 20 (MemTotal kB >> 10, truncated)",
    ),
    MetricInfo(
        "hinv.pagesize",
        cluster=1,
        item=11,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=BYTE,
        source="os.sysconf('SC_PAGE_SIZE')",
    ),
    MetricInfo(
        "hinv.ndisk",
        cluster=0,
        item=33,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="number of disk.dev instances (whole disks only, see the disk indom)",
    ),
    MetricInfo(
        "hinv.ninterface",
        cluster=3,
        item=27,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source=(
            "len(psutil.net_io_counters(pernic=True)): every /proc/net/dev line, up or down, "
            "whatever the help text says"
        ),
    ),
    MetricInfo(
        "hinv.nfilesys",
        cluster=5,
        item=0,
        type=U32,
        indom=None,
        sem=DISCRETE,
        units=COUNT,
        source="number of filesys instances",
    ),
    # --- memory: /proc/meminfo, kB as the kernel gives them
    MetricInfo(
        "mem.physmem",
        cluster=1,
        item=0,
        type=U64,
        indom=None,
        sem=DISCRETE,
        units=KBYTE,
        source="psutil.virtual_memory().total // 1024 (MemTotal)",
    ),
    MetricInfo(
        "mem.freemem",
        cluster=1,
        item=10,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().free // 1024 (MemFree)",
    ),
    MetricInfo(
        "mem.util.used",
        cluster=1,
        item=1,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "(vm.total - vm.free) // 1024 (MemTotal - MemFree); not psutil's vm.used (total - "
            "available)"
        ),
    ),
    MetricInfo(
        "mem.util.free",
        cluster=1,
        item=2,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().free // 1024 (MemFree)",
    ),
    MetricInfo(
        "mem.util.shared",
        cluster=1,
        item=3,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "/proc/meminfo MemShared (2.4 kernels): no value on current kernels; psutil's "
            "vm.shared is Shmem, i.e. mem.util.shmem"
        ),
    ),
    MetricInfo(
        "mem.util.bufmem",
        cluster=1,
        item=4,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().buffers // 1024 (Buffers)",
    ),
    MetricInfo(
        "mem.util.cached",
        cluster=1,
        item=5,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Cached (kB); not psutil's vm.cached, which adds SReclaimable",
    ),
    MetricInfo(
        "mem.util.other",
        cluster=1,
        item=12,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo max(0, MemTotal - MemFree - Cached - Buffers) (kB)",
    ),
    MetricInfo(
        "mem.util.swapCached",
        cluster=1,
        item=13,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo SwapCached (kB)",
    ),
    MetricInfo(
        "mem.util.active",
        cluster=1,
        item=14,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().active // 1024 (Active)",
    ),
    MetricInfo(
        "mem.util.inactive",
        cluster=1,
        item=15,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().inactive // 1024 (Inactive)",
    ),
    MetricInfo(
        "mem.util.swapTotal",
        cluster=1,
        item=20,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.swap_memory().total // 1024 (SwapTotal)",
    ),
    MetricInfo(
        "mem.util.swapFree",
        cluster=1,
        item=21,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.swap_memory().free // 1024 (SwapFree)",
    ),
    MetricInfo(
        "mem.util.dirty",
        cluster=1,
        item=22,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Dirty (kB)",
    ),
    MetricInfo(
        "mem.util.writeback",
        cluster=1,
        item=23,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Writeback (kB)",
    ),
    MetricInfo(
        "mem.util.mapped",
        cluster=1,
        item=24,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Mapped (kB)",
    ),
    MetricInfo(
        "mem.util.slab",
        cluster=1,
        item=25,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().slab // 1024 (Slab)",
    ),
    MetricInfo(
        "mem.util.committed_AS",
        cluster=1,
        item=26,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Committed_AS (kB)",
    ),
    MetricInfo(
        "mem.util.pageTables",
        cluster=1,
        item=27,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo PageTables (kB)",
    ),
    MetricInfo(
        "mem.util.cache_clean",
        cluster=1,
        item=29,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo max(0, Cached - Dirty - Writeback) (kB)",
    ),
    MetricInfo(
        "mem.util.anonpages",
        cluster=1,
        item=30,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo AnonPages (kB)",
    ),
    MetricInfo(
        "mem.util.commitLimit",
        cluster=1,
        item=31,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo CommitLimit (kB)",
    ),
    MetricInfo(
        "mem.util.slabReclaimable",
        cluster=1,
        item=34,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo SReclaimable (kB)",
    ),
    MetricInfo(
        "mem.util.slabUnreclaimable",
        cluster=1,
        item=35,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo SUnreclaim (kB)",
    ),
    MetricInfo(
        "mem.util.active_anon",
        cluster=1,
        item=36,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Active(anon) (kB)",
    ),
    MetricInfo(
        "mem.util.inactive_anon",
        cluster=1,
        item=37,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Inactive(anon) (kB)",
    ),
    MetricInfo(
        "mem.util.active_file",
        cluster=1,
        item=38,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Active(file) (kB)",
    ),
    MetricInfo(
        "mem.util.inactive_file",
        cluster=1,
        item=39,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Inactive(file) (kB)",
    ),
    MetricInfo(
        "mem.util.unevictable",
        cluster=1,
        item=40,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Unevictable (kB)",
    ),
    MetricInfo(
        "mem.util.mlocked",
        cluster=1,
        item=41,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo Mlocked (kB)",
    ),
    MetricInfo(
        "mem.util.shmem",
        cluster=1,
        item=42,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="psutil.virtual_memory().shared // 1024 (Shmem)",
    ),
    MetricInfo(
        "mem.util.kernelStack",
        cluster=1,
        item=43,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source="/proc/meminfo KernelStack (kB)",
    ),
    MetricInfo(
        "mem.util.hugepagesTotal",
        cluster=1,
        item=44,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=COUNT,
        source="/proc/meminfo HugePages_Total (a page count, not kB)",
    ),
    MetricInfo(
        "mem.util.hugepagesFree",
        cluster=1,
        item=45,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=COUNT,
        source="/proc/meminfo HugePages_Free (a page count, not kB)",
    ),
    MetricInfo(
        "mem.util.available",
        cluster=1,
        item=58,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "psutil.virtual_memory().available // 1024 (MemAvailable; both estimate it alike on "
            "kernels without it)"
        ),
    ),
    # --- swap: bytes (not Kbyte) and /proc/vmstat page counts
    MetricInfo(
        "swap.length",
        cluster=1,
        item=6,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=BYTE,
        source="psutil.swap_memory().total, bytes (SwapTotal kB * 1024)",
    ),
    MetricInfo(
        "swap.used",
        cluster=1,
        item=7,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=BYTE,
        source="psutil.swap_memory().used, bytes ((SwapTotal - SwapFree) kB * 1024)",
    ),
    MetricInfo(
        "swap.free",
        cluster=1,
        item=8,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=BYTE,
        source="psutil.swap_memory().free, bytes (SwapFree kB * 1024)",
    ),
    MetricInfo(
        "swap.pagesin",
        cluster=0,
        item=8,
        type=U32,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="/proc/vmstat pswpin, wrapped to 32 bits (= psutil.swap_memory().sin // 4096)",
    ),
    MetricInfo(
        "swap.pagesout",
        cluster=0,
        item=9,
        type=U32,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="/proc/vmstat pswpout, wrapped to 32 bits (= psutil.swap_memory().sout // 4096)",
    ),
    # --- per disk: /proc/diskstats
    MetricInfo(
        "disk.dev.read",
        cluster=0,
        item=4,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="d = psutil.disk_io_counters(perdisk=True)[name]; d.read_count",
    ),
    MetricInfo(
        "disk.dev.write",
        cluster=0,
        item=5,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="d = psutil.disk_io_counters(perdisk=True)[name]; d.write_count",
    ),
    MetricInfo(
        "disk.dev.total",
        cluster=0,
        item=28,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="d = psutil.disk_io_counters(perdisk=True)[name]; d.read_count + d.write_count",
    ),
    MetricInfo(
        "disk.dev.blkread",
        cluster=0,
        item=6,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.read_bytes // 512; 512-byte sectors"
        ),
    ),
    MetricInfo(
        "disk.dev.blkwrite",
        cluster=0,
        item=7,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.write_bytes // 512; 512-byte "
            "sectors"
        ),
    ),
    MetricInfo(
        "disk.dev.blktotal",
        cluster=0,
        item=36,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; (d.read_bytes + d.write_bytes) // "
            "512; 512-byte sectors"
        ),
    ),
    MetricInfo(
        "disk.dev.read_bytes",
        cluster=0,
        item=38,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=KBYTE,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.read_bytes // 1024; bytes -> Kbyte"
            " (sectors // 2)"
        ),
    ),
    MetricInfo(
        "disk.dev.write_bytes",
        cluster=0,
        item=39,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=KBYTE,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.write_bytes // 1024; bytes -> "
            "Kbyte (sectors // 2)"
        ),
    ),
    MetricInfo(
        "disk.dev.total_bytes",
        cluster=0,
        item=40,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=KBYTE,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; (d.read_bytes + d.write_bytes) // "
            "1024; bytes -> Kbyte"
        ),
    ),
    MetricInfo(
        "disk.dev.read_merge",
        cluster=0,
        item=49,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="d = psutil.disk_io_counters(perdisk=True)[name]; d.read_merged_count",
    ),
    MetricInfo(
        "disk.dev.write_merge",
        cluster=0,
        item=50,
        type=U64,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="d = psutil.disk_io_counters(perdisk=True)[name]; d.write_merged_count",
    ),
    MetricInfo(
        "disk.dev.avactive",
        cluster=0,
        item=46,
        type=U32,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.busy_time; msec (io_ticks), "
            "wrapped to 32 bits"
        ),
    ),
    MetricInfo(
        "disk.dev.aveq",
        cluster=0,
        item=47,
        type=U32,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "/proc/diskstats field 11 after the name (weighted msec doing I/O); not in psutil, "
            "wrapped to 32 bits"
        ),
    ),
    MetricInfo(
        "disk.dev.read_rawactive",
        cluster=0,
        item=72,
        type=U32,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.read_time; msec, wrapped to 32 bits"
        ),
    ),
    MetricInfo(
        "disk.dev.write_rawactive",
        cluster=0,
        item=73,
        type=U32,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.write_time; msec, wrapped to 32 "
            "bits"
        ),
    ),
    MetricInfo(
        "disk.dev.total_rawactive",
        cluster=0,
        item=79,
        type=U32,
        indom=DISK_INDOM,
        sem=COUNTER,
        units=MSEC,
        source=(
            "d = psutil.disk_io_counters(perdisk=True)[name]; d.read_time + d.write_time; msec, "
            "wrapped to 32 bits"
        ),
    ),
    MetricInfo(
        "disk.dev.inflight",
        cluster=0,
        item=95,
        type=U32,
        indom=DISK_INDOM,
        sem=INSTANT,
        units=NONE,
        source="/proc/diskstats field 9 after the name (I/Os in progress); not in psutil",
    ),
    # --- all disks: sums over the disk instances
    MetricInfo(
        "disk.all.read",
        cluster=0,
        item=24,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.read over the disk instances",
    ),
    MetricInfo(
        "disk.all.write",
        cluster=0,
        item=25,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.write over the disk instances",
    ),
    MetricInfo(
        "disk.all.total",
        cluster=0,
        item=29,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.total over the disk instances",
    ),
    MetricInfo(
        "disk.all.blkread",
        cluster=0,
        item=26,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.blkread over the disk instances",
    ),
    MetricInfo(
        "disk.all.blkwrite",
        cluster=0,
        item=27,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.blkwrite over the disk instances",
    ),
    MetricInfo(
        "disk.all.blktotal",
        cluster=0,
        item=37,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.blktotal over the disk instances",
    ),
    MetricInfo(
        "disk.all.read_bytes",
        cluster=0,
        item=41,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=KBYTE,
        source="sum of disk.dev.read_bytes over the disk instances",
    ),
    MetricInfo(
        "disk.all.write_bytes",
        cluster=0,
        item=42,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=KBYTE,
        source="sum of disk.dev.write_bytes over the disk instances",
    ),
    MetricInfo(
        "disk.all.total_bytes",
        cluster=0,
        item=43,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=KBYTE,
        source="sum of disk.dev.total_bytes over the disk instances",
    ),
    MetricInfo(
        "disk.all.read_merge",
        cluster=0,
        item=51,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.read_merge over the disk instances",
    ),
    MetricInfo(
        "disk.all.write_merge",
        cluster=0,
        item=52,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=COUNT,
        source="sum of disk.dev.write_merge over the disk instances",
    ),
    MetricInfo(
        "disk.all.avactive",
        cluster=0,
        item=44,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="sum of disk.dev.avactive over the disk instances, 64-bit",
    ),
    MetricInfo(
        "disk.all.aveq",
        cluster=0,
        item=45,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source=(
            "sum of disk.dev.aveq over the disk instances, 64-bit (/proc/diskstats; not in psutil)"
        ),
    ),
    MetricInfo(
        "disk.all.read_rawactive",
        cluster=0,
        item=74,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="sum of disk.dev.read_rawactive over the disk instances, 64-bit",
    ),
    MetricInfo(
        "disk.all.write_rawactive",
        cluster=0,
        item=75,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="sum of disk.dev.write_rawactive over the disk instances, 64-bit",
    ),
    MetricInfo(
        "disk.all.total_rawactive",
        cluster=0,
        item=80,
        type=U64,
        indom=None,
        sem=COUNTER,
        units=MSEC,
        source="sum of disk.dev.total_rawactive over the disk instances, 64-bit",
    ),
    MetricInfo(
        "disk.all.inflight",
        cluster=0,
        item=104,
        type=U64,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="sum of disk.dev.inflight over the disk instances (/proc/diskstats; not in psutil)",
    ),
    # --- network interfaces: /proc/net/dev and sysfs/ethtool
    MetricInfo(
        "network.interface.in.bytes",
        cluster=3,
        item=0,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=BYTE,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.bytes_recv",
    ),
    MetricInfo(
        "network.interface.in.packets",
        cluster=3,
        item=1,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.packets_recv",
    ),
    MetricInfo(
        "network.interface.in.errors",
        cluster=3,
        item=2,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.errin",
    ),
    MetricInfo(
        "network.interface.in.drops",
        cluster=3,
        item=3,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.dropin",
    ),
    MetricInfo(
        "network.interface.in.fifo",
        cluster=3,
        item=4,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev receive fifo (column 5); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.in.frame",
        cluster=3,
        item=5,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev receive frame (column 6); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.in.compressed",
        cluster=3,
        item=6,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev receive compressed (column 7); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.in.mcasts",
        cluster=3,
        item=7,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev receive multicast (column 8); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.out.bytes",
        cluster=3,
        item=8,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=BYTE,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.bytes_sent",
    ),
    MetricInfo(
        "network.interface.out.packets",
        cluster=3,
        item=9,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.packets_sent",
    ),
    MetricInfo(
        "network.interface.out.errors",
        cluster=3,
        item=10,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.errout",
    ),
    MetricInfo(
        "network.interface.out.drops",
        cluster=3,
        item=11,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.dropout",
    ),
    MetricInfo(
        "network.interface.out.fifo",
        cluster=3,
        item=12,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev transmit fifo (column 13); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.out.carrier",
        cluster=3,
        item=14,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev transmit carrier (column 15); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.out.compressed",
        cluster=3,
        item=15,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev transmit compressed (column 16); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.collisions",
        cluster=3,
        item=13,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="/proc/net/dev transmit colls (column 14); psutil reads but drops it",
    ),
    MetricInfo(
        "network.interface.total.bytes",
        cluster=3,
        item=16,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=BYTE,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.bytes_recv + n.bytes_sent",
    ),
    MetricInfo(
        "network.interface.total.packets",
        cluster=3,
        item=17,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.packets_recv + n.packets_sent",
    ),
    MetricInfo(
        "network.interface.total.errors",
        cluster=3,
        item=18,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.errin + n.errout",
    ),
    MetricInfo(
        "network.interface.total.drops",
        cluster=3,
        item=19,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source="n = psutil.net_io_counters(pernic=True)[nic]; n.dropin + n.dropout",
    ),
    MetricInfo(
        "network.interface.total.mcasts",
        cluster=3,
        item=20,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=COUNTER,
        units=COUNT,
        source=(
            "same as network.interface.in.mcasts (/proc/net/dev receive multicast; there is no "
            "transmit count)"
        ),
    ),
    MetricInfo(
        "network.interface.mtu",
        cluster=3,
        item=21,
        type=U32,
        indom=NET_DEV_INDOM,
        sem=INSTANT,
        units=BYTE,
        source="psutil.net_if_stats()[nic].mtu; no value when 0",
    ),
    MetricInfo(
        "network.interface.speed",
        cluster=3,
        item=22,
        type=FLOAT,
        indom=NET_DEV_INDOM,
        sem=DISCRETE,
        units=MBYTE_PER_SEC,
        source=(
            "psutil.net_if_stats()[nic].speed (Mbit/s) * 1e6 / 8 / 2**20 as float32; no value when"
            " 0 (PCP shows an unknown speed, sysfs -1, as 5.12e+08)"
        ),
    ),
    MetricInfo(
        "network.interface.baudrate",
        cluster=3,
        item=23,
        type=U64,
        indom=NET_DEV_INDOM,
        sem=DISCRETE,
        units=BYTE_PER_SEC,
        source=(
            "psutil.net_if_stats()[nic].speed (Mbit/s) * 1000000 // 8, byte/s; no value when 0 "
            "(PCP: 536870911875000 for an unknown speed)"
        ),
    ),
    MetricInfo(
        "network.interface.duplex",
        cluster=3,
        item=24,
        type=U32,
        indom=NET_DEV_INDOM,
        sem=DISCRETE,
        units=NONE,
        source=(
            "psutil.net_if_stats()[nic].duplex (NIC_DUPLEX_HALF 1, FULL 2: PCP's numbers); no "
            "value when 0 (unknown)"
        ),
    ),
    MetricInfo(
        "network.interface.up",
        cluster=3,
        item=25,
        type=U32,
        indom=NET_DEV_INDOM,
        sem=INSTANT,
        units=NONE,
        source="'up' in psutil.net_if_stats()[nic].flags.split(',') (IFF_UP)",
    ),
    MetricInfo(
        "network.interface.running",
        cluster=3,
        item=26,
        type=U32,
        indom=NET_DEV_INDOM,
        sem=INSTANT,
        units=NONE,
        source="psutil.net_if_stats()[nic].isup, which is IFF_RUNNING ('running' flag)",
    ),
    # --- mounted filesystems: statfs() of each mount point
    MetricInfo(
        "filesys.capacity",
        cluster=5,
        item=1,
        type=U64,
        indom=FILESYS_INDOM,
        sem=DISCRETE,
        units=KBYTE,
        source="s = os.statvfs(mount point); s.f_blocks * s.f_bsize // 1024",
    ),
    MetricInfo(
        "filesys.used",
        cluster=5,
        item=2,
        type=U64,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "s = os.statvfs(mount point); (s.f_blocks - s.f_bfree) * s.f_bsize // 1024 (= "
            "psutil.disk_usage(mnt).used // 1024)"
        ),
    ),
    MetricInfo(
        "filesys.free",
        cluster=5,
        item=3,
        type=U64,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "s = os.statvfs(mount point); s.f_bfree * s.f_bsize // 1024 (root's free space; not "
            "psutil.disk_usage().free, which is filesys.avail)"
        ),
    ),
    MetricInfo(
        "filesys.avail",
        cluster=5,
        item=10,
        type=U64,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=KBYTE,
        source=(
            "s = os.statvfs(mount point); s.f_bavail * s.f_bsize // 1024 (= "
            "psutil.disk_usage(mnt).free // 1024)"
        ),
    ),
    MetricInfo(
        "filesys.maxfiles",
        cluster=5,
        item=4,
        type=U32,
        indom=FILESYS_INDOM,
        sem=DISCRETE,
        units=NONE,
        source="s = os.statvfs(mount point); s.f_files, wrapped to 32 bits",
    ),
    MetricInfo(
        "filesys.usedfiles",
        cluster=5,
        item=5,
        type=U32,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=NONE,
        source="s = os.statvfs(mount point); s.f_files - s.f_ffree, wrapped to 32 bits",
    ),
    MetricInfo(
        "filesys.freefiles",
        cluster=5,
        item=6,
        type=U32,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=NONE,
        source="s = os.statvfs(mount point); s.f_ffree, wrapped to 32 bits",
    ),
    MetricInfo(
        "filesys.mountdir",
        cluster=5,
        item=7,
        type=STRING,
        indom=FILESYS_INDOM,
        sem=DISCRETE,
        units=NONE,
        source=(
            "the mount point (field 2 of /proc/self/mounts; "
            "psutil.disk_partitions(all=True)[i].mountpoint)"
        ),
    ),
    MetricInfo(
        "filesys.full",
        cluster=5,
        item=8,
        type=DOUBLE,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=NONE,
        source=(
            "s = os.statvfs(mount point); used = s.f_blocks - s.f_bfree; 100.0 * used / (used + "
            "s.f_bavail) (psutil.disk_usage().percent, unrounded)"
        ),
    ),
    MetricInfo(
        "filesys.blocksize",
        cluster=5,
        item=9,
        type=U32,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=BYTE,
        source="s = os.statvfs(mount point); s.f_bsize",
    ),
    MetricInfo(
        "filesys.readonly",
        cluster=5,
        item=11,
        type=U32,
        indom=FILESYS_INDOM,
        sem=INSTANT,
        units=NONE,
        source=(
            "1 if 'ro' is one of the comma-separated mount options, else 0 "
            "(psutil.disk_partitions(all=True)[i].opts)"
        ),
    ),
)


#: What `pcp uptime` and `pcp mpstat` need besides CPU time (agents/linux/system.py).
SYSTEM_METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        "kernel.uname.release",
        cluster=12,
        item=0,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="os.uname().release (uname(2)), read at every fetch",
    ),
    MetricInfo(
        "kernel.uname.version",
        cluster=12,
        item=1,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="os.uname().version (uname(2)), read at every fetch",
    ),
    MetricInfo(
        "kernel.uname.sysname",
        cluster=12,
        item=2,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="os.uname().sysname (uname(2)), read at every fetch",
    ),
    MetricInfo(
        "kernel.uname.machine",
        cluster=12,
        item=3,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="os.uname().machine (uname(2)), read at every fetch",
    ),
    MetricInfo(
        "kernel.uname.nodename",
        cluster=12,
        item=4,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source="os.uname().nodename (uname(2)), read at every fetch",
    ),
    MetricInfo(
        "kernel.uname.distro",
        cluster=12,
        item=7,
        type=STRING,
        indom=None,
        sem=DISCRETE,
        units=NONE,
        source=(
            "first line of the first of $LINUX_STATSPATH/etc/{debian_version, oracle-release, "
            "fedora-release, redhat-release, slackware-version, SuSE-release, lsb-release} that "
            "opens ('Debian ' before debian_version's, 'DISTRIB_ID=' dropped from lsb-release's); "
            "'?' if none or empty; read once"
        ),
    ),
    MetricInfo(
        "kernel.all.nusers",
        cluster=25,
        item=0,
        type=U32,
        indom=None,
        sem=INSTANT,
        units=NONE,
        source="USER_PROCESS records with a non-empty ut_user in /var/run/utmp (0 if none)",
    ),
    MetricInfo(
        "hinv.map.cpu_num",
        cluster=18,
        item=6,
        type=U32,
        indom=CPU_INDOM,
        sem=DISCRETE,
        units=NONE,
        source="the CPU number N of instance cpuN (its instance id)",
    ),
    MetricInfo(
        "hinv.cpu.online",
        cluster=55,
        item=0,
        type=U32,
        indom=CPU_INDOM,
        sem=INSTANT,
        units=NONE,
        source=(
            "$LINUX_STATSPATH/sys/devices/system/cpu/cpuN/online read with %u; 1 when the file "
            "is missing (cpu0 often has none) or holds no number"
        ),
    ),
    MetricInfo(
        "kernel.percpu.intr",
        cluster=4,
        item=4,
        type=U64,
        indom=CPU_INDOM,
        sem=COUNTER,
        units=COUNT,
        source=(
            "sum of the CPU's column of /proc/interrupts over every row but ERR/MIS, columns "
            "mapped to CPUs as pmdalinux maps them (system.percpu_intr); CPUs below "
            "SC_NPROCESSORS_CONF only"
        ),
    ),
)

METRICS += SYSTEM_METRICS


def _meminfo_record(row: tuple, source: str) -> MetricInfo:
    """One mem.util.* record from a row of meminfo.FIELDS or meminfo.HUGEPAGE_BYTES."""
    suffix, item, _field, units = row
    return MetricInfo(
        meminfo.PREFIX + suffix,
        cluster=meminfo.CLUSTER,
        item=item,
        type=U64,
        indom=None,
        sem=meminfo.SEM,
        units=units,
        source=source,
    )


#: The rest of mem.util.*, one record per row of meminfo.FIELDS and meminfo.HUGEPAGE_BYTES.
MEMINFO_METRICS: tuple[MetricInfo, ...] = tuple(
    _meminfo_record(row, f"/proc/meminfo field '{row[2]}'; no value when the kernel lacks it")
    for row in meminfo.FIELDS
) + tuple(
    _meminfo_record(
        row,
        f"/proc/meminfo '{row[2]}' * ('Hugepagesize' kB << 10), modulo 2**64; no value "
        f"without '{row[2]}' (a missing Hugepagesize counts as -1, as in pmdalinux)",
    )
    for row in meminfo.HUGEPAGE_BYTES
)

METRICS += MEMINFO_METRICS


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


#: mem.vmstat.*, one record per row of vmstat.FIELDS.
VMSTAT_METRICS: tuple[MetricInfo, ...] = tuple(
    MetricInfo(
        vmstat.PREFIX + field,
        cluster=vmstat.CLUSTER,
        item=item,
        type=U64,
        indom=None,
        sem=sem,
        units=units,
        source=_vmstat_source(field),
    )
    for field, item, (sem, units) in vmstat.FIELDS
)

METRICS += VMSTAT_METRICS

#: The family modules whose tables follow the records above, in catalog order.
FAMILIES = (
    cpuinfo,
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
METRICS += tuple(m for family in FAMILIES for m in family.METRICS)

#: pmdalinux's labels of single metrics (PM_LABEL_ITEM): CPU time and per-node CPU time.
_CPU_DEVICE = {"device_type": "cpu"}
_NODE_CPU_DEVICE = {"device_type": ["numa_node", "cpu"]}
ITEM_LABELS: dict[tuple[int, int], dict] = {
    **{(0, item): _CPU_DEVICE for item in (20, 21, 22, 23, 34, 35, 53, 54, 55, 60, 78, 81, 82)},
    **{(0, item): _NODE_CPU_DEVICE for item in (*range(62, 72), 77, 85, 86)},
}

#: The catalog by metric name.
BY_NAME: dict[str, MetricInfo] = {m.name: m for m in METRICS}
