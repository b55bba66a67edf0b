"""The proc agent's metric catalogue: what PCP 6.0.3's pmdaproc exports under proc.*,
hotproc.* and cgroup.*, as data.

Names, PMIDs (domain 3, cluster, item), types, instance domains, semantics and
units were read from a reference pmcd running pmdaproc (`pminfo -m -d proc`), and
tests/agents/test_proc_agent.py checks them against it again (marker `interop`).  The
cluster says which file of /proc/PID a metric comes from (clusters.h of pmdaproc):
8 stat, 9 statm, 10 control, 11 cgroup, 12 attr/current, 13 the run queue,
24 status, 31 schedstat, 32 io, 33 smaps_rollup, 51 fd, 62 oom_score, 69 exe,
72 cwd, 74 autogroup.  How each value is computed is in fields.py (cgroup.*: cgroups.py).
"""

from __future__ import annotations

from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Space, Time, Units

#: The agent's domain, and the serial of its one instance domain (pmdaproc's PROC_INDOM).
DOMAIN = 3
PROCS = 9

U32, I32, U64, STRING = (
    PMType.PM_TYPE_U32,
    PMType.PM_TYPE_32,
    PMType.PM_TYPE_U64,
    PMType.PM_TYPE_STRING,
)
INSTANT, DISCRETE, COUNTER = PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE, PMSem.PM_SEM_COUNTER
NONE = Units()
COUNT = Units(dimCount=1)
BYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_BYTE)
KBYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_KBYTE)
NSEC = Units(dimTime=1, scaleTime=Time.PM_TIME_NSEC)
USEC = Units(dimTime=1, scaleTime=Time.PM_TIME_USEC)
MSEC = Units(dimTime=1, scaleTime=Time.PM_TIME_MSEC)

#: (name, cluster, item, type, instance domain serial or None, semantics, units), in the
#: order PCP's pminfo lists pmdaproc's names (its namespace order), which pmns/proc keeps
METRICS: tuple[tuple[str, int, int, PMType, int | None, PMSem, Units], ...] = (
    ("proc.nprocs", 8, 99, U32, None, INSTANT, NONE),
    ("proc.psinfo.cwd", 72, 0, STRING, PROCS, DISCRETE, NONE),
    ("proc.psinfo.exe", 69, 0, STRING, PROCS, DISCRETE, NONE),
    ("proc.psinfo.oom_score", 62, 0, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.tgid", 24, 41, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.ngid", 24, 32, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.cpusallowed", 24, 31, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.nvctxsw", 24, 30, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.vctxsw", 24, 29, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.labels", 12, 0, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.cgroups", 11, 0, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.threads", 24, 28, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.sigcatch_s", 24, 19, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.sigignore_s", 24, 18, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.blocked_s", 24, 17, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.signal_s", 24, 16, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.policy_s", 8, 48, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.environ", 8, 47, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.cguest_time", 8, 46, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.guest_time", 8, 45, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.delayacct_blkio_time", 8, 44, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.policy", 8, 43, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.rt_priority", 8, 42, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.psargs", 8, 41, STRING, PROCS, DISCRETE, NONE),
    ("proc.psinfo.wchan_s", 8, 40, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.ttyname", 8, 39, STRING, PROCS, DISCRETE, NONE),
    ("proc.psinfo.processor", 8, 38, U32, PROCS, INSTANT, NONE),
    ("proc.psinfo.exit_signal", 8, 37, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.cnswap", 8, 36, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.nswap", 8, 35, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.wchan", 8, 34, U64, PROCS, DISCRETE, NONE),
    ("proc.psinfo.sigcatch", 8, 33, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.sigignore", 8, 32, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.blocked", 8, 31, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.signal", 8, 30, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.eip", 8, 29, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.esp", 8, 28, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.start_stack", 8, 27, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.end_code", 8, 26, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.start_code", 8, 25, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.rss_rlim", 8, 24, U64, PROCS, INSTANT, KBYTE),
    ("proc.psinfo.rss", 8, 23, U64, PROCS, INSTANT, KBYTE),
    ("proc.psinfo.vsize", 8, 22, U64, PROCS, INSTANT, KBYTE),
    ("proc.psinfo.start_time", 8, 21, U64, PROCS, DISCRETE, MSEC),
    ("proc.psinfo.it_real_value", 8, 20, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.nice", 8, 18, I32, PROCS, INSTANT, NONE),
    ("proc.psinfo.priority", 8, 17, I32, PROCS, INSTANT, NONE),
    ("proc.psinfo.cstime", 8, 16, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.cutime", 8, 15, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.stime", 8, 14, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.utime", 8, 13, U64, PROCS, COUNTER, MSEC),
    ("proc.psinfo.cmaj_flt", 8, 12, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.maj_flt", 8, 11, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.cmin_flt", 8, 10, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.minflt", 8, 9, U32, PROCS, COUNTER, COUNT),
    ("proc.psinfo.flags", 8, 8, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.tty_pgrp", 8, 7, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.tty", 8, 6, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.session", 8, 5, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.pgrp", 8, 4, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.ppid", 8, 3, U32, PROCS, DISCRETE, NONE),
    ("proc.psinfo.sname", 8, 2, STRING, PROCS, INSTANT, NONE),
    ("proc.psinfo.cmd", 8, 1, STRING, PROCS, DISCRETE, NONE),
    ("proc.psinfo.pid", 8, 0, U32, PROCS, DISCRETE, NONE),
    ("proc.memory.vmnonlib", 24, 44, U64, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmreal", 24, 43, U64, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmpte", 24, 36, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmhwm", 24, 35, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmpin", 24, 34, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmpeak", 24, 33, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmswap", 24, 27, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmlib", 24, 26, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmexe", 24, 25, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmstack", 24, 24, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmdata", 24, 23, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmrss", 24, 22, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmlock", 24, 21, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.vmsize", 24, 20, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.maps", 9, 7, STRING, PROCS, INSTANT, NONE),
    ("proc.memory.dirty", 9, 6, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.datrss", 9, 5, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.librss", 9, 4, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.textrss", 9, 3, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.share", 9, 2, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.rss", 9, 1, U32, PROCS, INSTANT, KBYTE),
    ("proc.memory.size", 9, 0, U32, PROCS, INSTANT, KBYTE),
    ("proc.id.container", 11, 1, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.fsgid_nm", 24, 15, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.sgid_nm", 24, 14, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.egid_nm", 24, 13, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.gid_nm", 24, 12, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.fsuid_nm", 24, 11, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.suid_nm", 24, 10, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.euid_nm", 24, 9, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.uid_nm", 24, 8, STRING, PROCS, DISCRETE, NONE),
    ("proc.id.fsgid", 24, 7, U32, PROCS, DISCRETE, NONE),
    ("proc.id.sgid", 24, 6, U32, PROCS, DISCRETE, NONE),
    ("proc.id.egid", 24, 5, U32, PROCS, DISCRETE, NONE),
    ("proc.id.gid", 24, 4, U32, PROCS, DISCRETE, NONE),
    ("proc.id.fsuid", 24, 3, U32, PROCS, DISCRETE, NONE),
    ("proc.id.suid", 24, 2, U32, PROCS, DISCRETE, NONE),
    ("proc.id.euid", 24, 1, U32, PROCS, DISCRETE, NONE),
    ("proc.id.uid", 24, 0, U32, PROCS, DISCRETE, NONE),
    ("proc.io.cancelled_write_bytes", 32, 6, U64, PROCS, COUNTER, BYTE),
    ("proc.io.write_bytes", 32, 5, U64, PROCS, COUNTER, BYTE),
    ("proc.io.read_bytes", 32, 4, U64, PROCS, COUNTER, BYTE),
    ("proc.io.syscw", 32, 3, U64, PROCS, COUNTER, COUNT),
    ("proc.io.syscr", 32, 2, U64, PROCS, COUNTER, COUNT),
    ("proc.io.wchar", 32, 1, U64, PROCS, COUNTER, BYTE),
    ("proc.io.rchar", 32, 0, U64, PROCS, COUNTER, BYTE),
    ("proc.schedstat.pcount", 31, 2, U64, PROCS, COUNTER, COUNT),
    ("proc.schedstat.run_delay", 31, 1, U64, PROCS, COUNTER, NSEC),
    ("proc.schedstat.cpu_time", 31, 0, U64, PROCS, COUNTER, NSEC),
    ("proc.fd.count", 51, 0, U32, PROCS, INSTANT, COUNT),
    ("proc.namespaces.envid", 24, 42, U32, PROCS, DISCRETE, NONE),
    ("proc.namespaces.sid", 24, 40, STRING, PROCS, DISCRETE, NONE),
    ("proc.namespaces.pgid", 24, 39, STRING, PROCS, DISCRETE, NONE),
    ("proc.namespaces.pid", 24, 38, STRING, PROCS, DISCRETE, NONE),
    ("proc.namespaces.tgid", 24, 37, STRING, PROCS, DISCRETE, NONE),
    ("proc.smaps.locked", 33, 19, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.swappss", 33, 18, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.swap", 33, 17, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.private_hugetlb", 33, 16, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.shared_hugetlb", 33, 15, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.filepmdmapped", 33, 14, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.shmempmdmapped", 33, 13, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.anonhugepages", 33, 12, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.lazyfree", 33, 11, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.anonymous", 33, 10, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.referenced", 33, 9, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.private_dirty", 33, 8, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.private_clean", 33, 7, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.shared_dirty", 33, 6, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.shared_clean", 33, 5, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.pss_shmem", 33, 4, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.pss_file", 33, 3, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.pss_anon", 33, 2, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.pss", 33, 1, U64, PROCS, INSTANT, KBYTE),
    ("proc.smaps.rss", 33, 0, U64, PROCS, INSTANT, KBYTE),
    ("proc.autogroup.nice", 74, 2, I32, PROCS, INSTANT, NONE),
    ("proc.autogroup.id", 74, 1, U32, PROCS, DISCRETE, NONE),
    ("proc.autogroup.enabled", 74, 0, U32, None, INSTANT, NONE),
    ("proc.runq.runnable", 13, 0, I32, None, INSTANT, COUNT),
    ("proc.runq.blocked", 13, 1, I32, None, INSTANT, COUNT),
    ("proc.runq.sleeping", 13, 2, I32, None, INSTANT, COUNT),
    ("proc.runq.stopped", 13, 3, I32, None, INSTANT, COUNT),
    ("proc.runq.swapped", 13, 4, I32, None, INSTANT, COUNT),
    ("proc.runq.defunct", 13, 5, I32, None, INSTANT, COUNT),
    ("proc.runq.unknown", 13, 6, I32, None, INSTANT, COUNT),
    ("proc.runq.kernel", 13, 7, I32, None, INSTANT, COUNT),
    ("proc.control.all.threads", 10, 1, U32, None, INSTANT, NONE),
    ("proc.control.perclient.threads", 10, 2, U32, None, INSTANT, NONE),
    ("proc.control.perclient.cgroups", 10, 3, STRING, None, INSTANT, NONE),
)

#: The serial of pmdaproc's HOTPROC_INDOM: the processes the hotproc predicate selects.
HOTPROCS = 39
#: proc.* cluster -> the hotproc.* cluster holding the same metrics over the hot processes.
HOT_CLUSTERS = {8: 52, 9: 53, 11: 54, 12: 55, 24: 56, 31: 57, 32: 58, 33: 34, 51: 59, 62: 63,
                69: 71, 72: 73, 74: 75}  # fmt: skip
FLOAT = PMType.PM_TYPE_FLOAT
COUNT_PER_SEC = Units(dimTime=-1, dimCount=1, scaleTime=Time.PM_TIME_SEC)
KBYTE_PER_SEC = Units(
    dimSpace=1, dimTime=-1, scaleSpace=Space.PM_SPACE_KBYTE, scaleTime=Time.PM_TIME_SEC
)

#: hotproc.* as pmdaproc 6.0.3 exports it: every per-process proc.* metric (and
#: proc.nprocs, proc.autogroup.enabled) again over the hot processes, then the controls,
#: the totals and the predicate's inputs per hot process.
HOT_METRICS: tuple[tuple[str, int, int, PMType, int | None, PMSem, Units], ...] = (
    *(
        (
            "hot" + name,
            HOT_CLUSTERS[cluster],
            item,
            type_,
            None if indom is None else HOTPROCS,
            sem,
            units,
        )
        for name, cluster, item, type_, indom, sem, units in METRICS
        if cluster in HOT_CLUSTERS
    ),
    ("hotproc.control.refresh", 60, 1, U32, None, INSTANT, NONE),
    ("hotproc.control.config", 60, 8, STRING, None, INSTANT, NONE),
    ("hotproc.control.config_gen", 60, 9, U32, None, INSTANT, NONE),
    ("hotproc.control.reload_config", 60, 10, U32, None, INSTANT, NONE),
    ("hotproc.total.cpuidle", 60, 2, FLOAT, None, INSTANT, NONE),
    ("hotproc.total.cpuburn", 60, 3, FLOAT, None, INSTANT, NONE),
    ("hotproc.total.cpuother.transient", 60, 4, FLOAT, None, INSTANT, NONE),
    ("hotproc.total.cpuother.not_cpuburn", 60, 5, FLOAT, None, INSTANT, NONE),
    ("hotproc.total.cpuother.total", 60, 6, FLOAT, None, INSTANT, NONE),
    ("hotproc.total.cpuother.percent", 60, 7, FLOAT, None, INSTANT, NONE),
    ("hotproc.predicate.ctxswitch", 61, 1, FLOAT, HOTPROCS, INSTANT, COUNT_PER_SEC),
    ("hotproc.predicate.virtualsize", 61, 2, U32, HOTPROCS, INSTANT, KBYTE),
    ("hotproc.predicate.residentsize", 61, 3, U32, HOTPROCS, INSTANT, KBYTE),
    ("hotproc.predicate.iodemand", 61, 4, FLOAT, HOTPROCS, INSTANT, KBYTE_PER_SEC),
    ("hotproc.predicate.iowait", 61, 5, FLOAT, HOTPROCS, INSTANT, NONE),
    ("hotproc.predicate.schedwait", 61, 6, FLOAT, HOTPROCS, INSTANT, NONE),
    ("hotproc.predicate.cpuburn", 61, 7, FLOAT, HOTPROCS, INSTANT, NONE),
)

I64 = PMType.PM_TYPE_64

#: The serials of pmdaproc's control-group instance domains: each cgroup of the version 2
#: hierarchy, and each of those with a disk ("CGROUP::DISK"); each cgroup of a version 1
#: controller (cpuacct's per CPU: "CGROUP::cpuN"; blkio's per disk: "CGROUP::DISK"); the
#: controllers of /proc/cgroups; the cgroup filesystems mounted.
CG2, CG2_DISKS = 16, 17
CG_CPUSET, CG_CPUACCT, CG_PERCPU, CG_CPUSCHED = 20, 21, 22, 23
CG_MEMORY, CG_NETCLS, CG_BLKIO, CG_BLKIO_DISKS = 24, 25, 26, 27
CG_SUBSYS, CG_MOUNTS = 37, 38
CGROUP_INDOMS = (CG2, CG2_DISKS, CG_CPUSET, CG_CPUACCT, CG_PERCPU, CG_CPUSCHED, CG_MEMORY,
                 CG_NETCLS, CG_BLKIO, CG_BLKIO_DISKS, CG_SUBSYS, CG_MOUNTS)  # fmt: skip

#: memory.stat's fields pmdaproc exports, with their items, semantics and units (their
#: cgroup.memory.stat.* names: "total_cache" is stat.total.cache, "recent_rotated_anon"
#: stat.recent.rotated_anon, "workingset_refault" stat.workingset.refault).
MEMORY_STAT: tuple[tuple[str, int, PMSem, Units], ...] = (
    ("cache", 0, INSTANT, BYTE), ("rss", 1, INSTANT, BYTE), ("rss_huge", 2, INSTANT, BYTE),
    ("mapped_file", 3, INSTANT, BYTE), ("writeback", 4, INSTANT, BYTE),
    ("swap", 5, INSTANT, BYTE), ("pgpgin", 6, COUNTER, COUNT), ("pgpgout", 7, COUNTER, COUNT),
    ("pgfault", 8, COUNTER, COUNT), ("pgmajfault", 9, COUNTER, COUNT),
    ("inactive_anon", 10, INSTANT, BYTE), ("active_anon", 11, INSTANT, BYTE),
    ("inactive_file", 12, INSTANT, BYTE), ("active_file", 13, INSTANT, BYTE),
    ("unevictable", 14, INSTANT, BYTE), ("anon", 17, INSTANT, BYTE),
    ("anon_thp", 18, INSTANT, BYTE), ("file", 19, INSTANT, BYTE),
    ("file_dirty", 20, INSTANT, BYTE), ("file_mapped", 21, INSTANT, BYTE),
    ("file_writeback", 22, INSTANT, BYTE), ("kernel_stack", 25, INSTANT, BYTE),
    ("pgactivate", 26, INSTANT, BYTE), ("pgdeactivate", 27, INSTANT, BYTE),
    ("pglazyfree", 28, INSTANT, BYTE), ("pglazyfreed", 50, INSTANT, BYTE),
    ("pgrefill", 51, INSTANT, BYTE), ("pgscan", 52, INSTANT, BYTE),
    ("pgsteal", 53, INSTANT, BYTE), ("shmem", 64, INSTANT, BYTE), ("slab", 65, INSTANT, BYTE),
    ("slab_reclaimable", 66, INSTANT, BYTE), ("slab_unreclaimable", 67, INSTANT, BYTE),
    ("sock", 68, INSTANT, BYTE), ("thp_collapse_alloc", 70, INSTANT, BYTE),
    ("thp_fault_alloc", 71, INSTANT, BYTE), ("total_cache", 30, INSTANT, BYTE),
    ("total_rss", 31, INSTANT, BYTE), ("total_rss_huge", 32, INSTANT, BYTE),
    ("total_mapped_file", 33, INSTANT, BYTE), ("total_writeback", 34, INSTANT, BYTE),
    ("total_swap", 35, INSTANT, BYTE), ("total_pgpgin", 36, COUNTER, COUNT),
    ("total_pgpgout", 37, COUNTER, COUNT), ("total_pgfault", 38, COUNTER, COUNT),
    ("total_pgmajfault", 39, COUNTER, COUNT), ("total_inactive_anon", 40, INSTANT, BYTE),
    ("total_active_anon", 41, INSTANT, BYTE), ("total_inactive_file", 42, INSTANT, BYTE),
    ("total_active_file", 43, INSTANT, BYTE), ("total_unevictable", 44, INSTANT, BYTE),
    ("recent_rotated_anon", 60, COUNTER, BYTE), ("recent_rotated_file", 61, COUNTER, BYTE),
    ("recent_scanned_anon", 62, COUNTER, BYTE), ("recent_scanned_file", 63, COUNTER, BYTE),
    ("workingset_activate", 72, INSTANT, BYTE), ("workingset_nodereclaim", 73, INSTANT, BYTE),
    ("workingset_refault", 74, INSTANT, BYTE),
)  # fmt: skip


def memory_stat_name(field: str) -> str:
    """The cgroup.memory.stat.* name of memory.stat's FIELD."""
    for group in ("total", "recent", "workingset"):
        if field.startswith(group + "_"):
            return f"cgroup.memory.stat.{group}.{field[len(group) + 1 :]}"
    return f"cgroup.memory.stat.{field}"


#: blkio's per-disk files (blkio.FILE, or blkio.throttle.FILE), in pmdaproc's order, with
#: the units of their counts: each gives the five read, write, sync, async and total.
BLKIO_FILES: tuple[tuple[str, Units], ...] = (
    ("io_merged", COUNT), ("io_queued", COUNT), ("io_service_bytes", BYTE),
    ("io_serviced", COUNT), ("io_service_time", NSEC), ("io_wait_time", NSEC),
    ("throttle.io_service_bytes", BYTE), ("throttle.io_serviced", COUNT),
)  # fmt: skip
BLKIO_FIELDS = ("read", "write", "sync", "async", "total")


def _blkio(scope: str, indom: int, base: int) -> tuple[tuple, ...]:
    """cgroup.blkio.SCOPE.* (dev: per cgroup and disk; all: per cgroup, the disks' sum),
    items counted from BASE as pmdaproc numbers them (sectors and time at BASE + 30)."""
    sums = (
        (f"cgroup.blkio.{scope}.sectors", 49, base + 30, U64, indom, COUNTER, KBYTE),
        (f"cgroup.blkio.{scope}.time", 49, base + 31, U64, indom, COUNTER, MSEC),
    )
    per_file = tuple(
        (f"cgroup.blkio.{scope}.{file}.{field}", 49,
         base + 5 * n + j + (2 if n >= 6 else 0), U64, indom, COUNTER, units)
        for n, (file, units) in enumerate(BLKIO_FILES)
        for j, field in enumerate(BLKIO_FIELDS)
    )  # fmt: skip
    return sums + per_file


def _pressure(resource: str, cluster: int, kinds: tuple[str, ...]) -> tuple[tuple, ...]:
    """cgroup.pressure.RESOURCE.{some,full}.*: the averages and the total stall time."""
    return tuple(
        (f"cgroup.pressure.{resource}.{kind}.{leaf}", cluster, 4 * k + j,
         FLOAT if j < 3 else U64, CG2, INSTANT, NONE if j < 3 else USEC)
        for k, kind in enumerate(kinds)
        for j, leaf in enumerate(("avg10sec", "avg1min", "avg5min", "total"))
    )  # fmt: skip


#: cgroup.* as pmdaproc 6.0.3 exports it, in its namespace order: the control groups of
#: /sys/fs/cgroup (values in cgroups.py).
CGROUP_METRICS: tuple[tuple[str, int, int, PMType, int | None, PMSem, Units], ...] = (
    ("cgroup.subsys.hierarchy", 37, 0, U32, CG_SUBSYS, INSTANT, NONE),
    ("cgroup.subsys.count", 37, 1, U32, None, INSTANT, COUNT),
    ("cgroup.subsys.num_cgroups", 37, 2, U32, CG_SUBSYS, INSTANT, NONE),
    ("cgroup.subsys.enabled", 37, 3, U32, CG_SUBSYS, INSTANT, NONE),
    ("cgroup.mounts.subsys", 38, 0, STRING, CG_MOUNTS, INSTANT, NONE),
    ("cgroup.mounts.count", 38, 1, U32, None, INSTANT, COUNT),
    ("cgroup.cpu.stat.user", 67, 0, U64, CG2, COUNTER, USEC),
    ("cgroup.cpu.stat.system", 67, 1, U64, CG2, COUNTER, USEC),
    ("cgroup.cpu.stat.usage", 67, 2, U64, CG2, COUNTER, USEC),
    ("cgroup.cpuset.cpus", 39, 0, STRING, CG_CPUSET, INSTANT, NONE),
    ("cgroup.cpuset.mems", 39, 1, STRING, CG_CPUSET, INSTANT, NONE),
    ("cgroup.cpuset.id.container", 39, 2, STRING, CG_CPUSET, DISCRETE, NONE),
    ("cgroup.cpuacct.usage", 41, 2, U64, CG_CPUACCT, COUNTER, NSEC),
    ("cgroup.cpuacct.usage_percpu", 41, 3, U64, CG_PERCPU, COUNTER, NSEC),
    ("cgroup.cpuacct.stat.user", 41, 0, U64, CG_CPUACCT, COUNTER, MSEC),
    ("cgroup.cpuacct.stat.system", 41, 1, U64, CG_CPUACCT, COUNTER, MSEC),
    ("cgroup.cpuacct.id.container", 41, 4, STRING, CG_CPUACCT, DISCRETE, NONE),
    ("cgroup.cpusched.shares", 43, 0, U64, CG_CPUSCHED, INSTANT, NONE),
    ("cgroup.cpusched.periods", 43, 1, U64, CG_CPUSCHED, INSTANT, NONE),
    ("cgroup.cpusched.throttled", 43, 2, U64, CG_CPUSCHED, INSTANT, NONE),
    ("cgroup.cpusched.throttled_time", 43, 3, U64, CG_CPUSCHED, COUNTER, NSEC),
    ("cgroup.cpusched.cfs_period", 43, 4, U64, CG_CPUSCHED, INSTANT, USEC),
    ("cgroup.cpusched.cfs_quota", 43, 5, I64, CG_CPUSCHED, INSTANT, USEC),
    ("cgroup.cpusched.id.container", 43, 6, STRING, CG_CPUSCHED, DISCRETE, NONE),
    ("cgroup.memory.usage", 45, 80, U64, CG_MEMORY, INSTANT, BYTE),
    ("cgroup.memory.limit", 45, 81, U64, CG_MEMORY, INSTANT, BYTE),
    ("cgroup.memory.failcnt", 45, 82, U64, CG_MEMORY, COUNTER, COUNT),
    ("cgroup.memory.current", 45, 90, U64, CG_MEMORY, INSTANT, BYTE),
    *(
        (memory_stat_name(field), 45, item, U64, CG_MEMORY, sem, units)
        for field, item, sem, units in MEMORY_STAT
    ),
    ("cgroup.memory.id.container", 45, 29, STRING, CG_MEMORY, DISCRETE, NONE),
    ("cgroup.netclass.classid", 47, 0, U64, CG_NETCLS, INSTANT, NONE),
    ("cgroup.netclass.id.container", 47, 1, STRING, CG_NETCLS, DISCRETE, NONE),
    *_blkio("dev", CG_BLKIO_DISKS, 0),
    *_blkio("all", CG_BLKIO, 60),
    ("cgroup.blkio.id.container", 49, 42, STRING, CG_BLKIO, DISCRETE, NONE),
    *_pressure("cpu", 64, ("some",)),
    *_pressure("memory", 66, ("some", "full")),
    *_pressure("io", 65, ("some", "full")),
    *_pressure("irq", 76, ("full",)),
    ("cgroup.io.stat.rbytes", 68, 0, U64, CG2_DISKS, COUNTER, BYTE),
    ("cgroup.io.stat.wbytes", 68, 1, U64, CG2_DISKS, COUNTER, BYTE),
    ("cgroup.io.stat.rios", 68, 2, U64, CG2_DISKS, COUNTER, COUNT),
    ("cgroup.io.stat.wios", 68, 3, U64, CG2_DISKS, COUNTER, COUNT),
    ("cgroup.io.stat.dbytes", 68, 4, U64, CG2_DISKS, COUNTER, BYTE),
    ("cgroup.io.stat.dios", 68, 5, U64, CG2_DISKS, COUNTER, COUNT),
)

#: The serial of pmdaproc's ACCT_INDOM: processes that ended lately, from process accounting.
ACCT = 40
SEC = Units(dimTime=1, scaleTime=Time.PM_TIME_SEC)

#: acct.* as pmdaproc 6.0.3 exports it, in its namespace order: what process accounting
#: recorded of each process that ended lately (acct.py), and its controls.
ACCT_METRICS: tuple[tuple[str, int, int, PMType, int | None, PMSem, Units], ...] = (
    ("acct.psinfo.tty", 70, 0, U32, ACCT, DISCRETE, NONE),
    ("acct.psinfo.exitcode", 70, 1, U32, ACCT, DISCRETE, NONE),
    ("acct.psinfo.pid", 70, 4, U32, ACCT, DISCRETE, NONE),
    ("acct.psinfo.ppid", 70, 5, U32, ACCT, DISCRETE, NONE),
    ("acct.psinfo.btime", 70, 6, U32, ACCT, DISCRETE, SEC),
    ("acct.psinfo.etime", 70, 7, FLOAT, ACCT, COUNTER, SEC),
    ("acct.psinfo.utime", 70, 8, FLOAT, ACCT, COUNTER, SEC),
    ("acct.psinfo.stime", 70, 9, FLOAT, ACCT, COUNTER, SEC),
    ("acct.psinfo.mem", 70, 10, U64, ACCT, INSTANT, KBYTE),
    ("acct.psinfo.io", 70, 11, U64, ACCT, COUNTER, COUNT),
    ("acct.psinfo.rw", 70, 12, U64, ACCT, COUNTER, COUNT),
    ("acct.psinfo.minflt", 70, 13, U64, ACCT, COUNTER, NONE),
    ("acct.psinfo.majflt", 70, 14, U64, ACCT, COUNTER, COUNT),
    ("acct.psinfo.swaps", 70, 15, U64, ACCT, COUNTER, COUNT),
    ("acct.psinfo.ttyname", 70, 16, STRING, ACCT, DISCRETE, NONE),
    ("acct.id.uid", 70, 2, U32, ACCT, DISCRETE, NONE),
    ("acct.id.gid", 70, 3, U32, ACCT, DISCRETE, NONE),
    ("acct.id.uid_nm", 70, 17, STRING, ACCT, DISCRETE, NONE),
    ("acct.id.gid_nm", 70, 18, STRING, ACCT, DISCRETE, NONE),
    ("acct.flag.fork", 70, 19, U32, ACCT, INSTANT, NONE),
    ("acct.flag.su", 70, 20, U32, ACCT, INSTANT, NONE),
    ("acct.flag.core", 70, 21, U32, ACCT, DISCRETE, NONE),
    ("acct.flag.xsig", 70, 22, U32, ACCT, DISCRETE, NONE),
    ("acct.control.open_retry_interval", 70, 23, U32, None, DISCRETE, SEC),
    ("acct.control.check_acct_interval", 70, 24, U32, None, DISCRETE, SEC),
    ("acct.control.file_size_threshold", 70, 25, U64, None, DISCRETE, BYTE),
    ("acct.control.lifetime", 70, 26, U32, None, DISCRETE, SEC),
    ("acct.control.refresh", 70, 27, U32, None, DISCRETE, SEC),
    ("acct.control.enable_acct", 70, 28, U32, None, DISCRETE, NONE),
)
