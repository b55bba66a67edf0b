"""The linux agent's filesystem-wide and memory-inventory metrics: vfs.*, tmpfs.*, swapdev.*,
mem.slabinfo.*, mem.ksm.*, tty.serial.*, sysfs.kernel.uevent_seqnum, hinv.hugepagesize,
pmda.uname and pmda.version, computed as PCP 6.0.3's pmdalinux computes them.

Sources (pmdalinux's files in parentheses): /proc/sys/fs/* (proc_sys_fs.c), /proc/locks
(proc_locks.c), the tmpfs lines of /proc/self/mounts and statfs (filesys.c, pmda.c),
/proc/swaps (swapdev.c), /proc/slabinfo (proc_slabinfo.c), /sys/kernel/mm/ksm
(ksm.c), /proc/tty/driver/serial (proc_tty.c), /sys/kernel/uevent_seqnum
(sysfs_kernel.c), /proc/meminfo's Hugepagesize, and uname(2).  /proc/slabinfo and
the serial driver file are read only for a client pmcd vouches is root (uid 0), or
for all when $LINUX_ACCESS is a non-zero number, as pmdalinux decides.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi import PCP_COMPAT_VERSION
from purepcp.pmapi.cnumbers import (
    atoi,
    float32,
    int32,
    scan_int,
    scan_ints,
    strtof,
    strtol,
    strtoul,
)
from purepcp.pmapi.errors import PM_ERR_APPVERSION, PMError
from purepcp.pmda import InDom, refresh

from . import procfs
from .base import LinuxBase
from .instids import InstanceIds
from .records import (
    BYTE,
    COUNT,
    COUNTER,
    DISCRETE,
    DOUBLE,
    FLOAT,
    I32,
    INSTANT,
    KBYTE,
    MSEC,
    NONE,
    STRING,
    U32,
    U64,
    MetricInfo,
    records_of,
)

# pmdalinux's instance domain serials (linux.h)
SWAPDEV = 6
NODE = 19  # declared by agents/linux/numa.py
SLAB = 12
TMPFS = 18
TTY = 35

#: (name, cluster, item, type, indom, semantics, units, source)
_TABLE: tuple[tuple[str, int, int, Any, int | None, Any, Any, str], ...] = (
    ("hinv.hugepagesize", 1, 59, U32, None, DISCRETE, BYTE, "meminfo Hugepagesize << 10"),
    ("swapdev.free", 6, 0, U32, SWAPDEV, INSTANT, KBYTE, "/proc/swaps Size - Used"),
    ("swapdev.length", 6, 1, U32, SWAPDEV, DISCRETE, KBYTE, "/proc/swaps Size"),
    ("swapdev.maxswap", 6, 2, U32, SWAPDEV, DISCRETE, KBYTE, "/proc/swaps Size"),
    ("swapdev.vlength", 6, 3, U32, SWAPDEV, DISCRETE, KBYTE, "always 0"),
    ("swapdev.priority", 6, 4, I32, SWAPDEV, INSTANT, NONE, "/proc/swaps Priority"),
    ("swap.in", 0, 10, U32, None, COUNTER, COUNT, "PM_ERR_APPVERSION where /proc/vmstat exists"),
    ("swap.out", 0, 11, U32, None, COUNTER, COUNT, "PM_ERR_APPVERSION where /proc/vmstat exists"),
    ("pmda.uname", 12, 5, STRING, None, DISCRETE, NONE, "uname(2) fields"),
    ("pmda.version", 12, 6, STRING, None, DISCRETE, NONE, "the PCP release"),
    ("mem.slabinfo.objects.active", 20, 0, U64, SLAB, INSTANT, NONE, "active_objs"),
    ("mem.slabinfo.objects.total", 20, 1, U64, SLAB, INSTANT, NONE, "num_objs"),
    ("mem.slabinfo.objects.size", 20, 2, U32, SLAB, INSTANT, BYTE, "objsize"),
    ("mem.slabinfo.slabs.active", 20, 3, U32, SLAB, INSTANT, NONE, "active_slabs"),
    ("mem.slabinfo.slabs.total", 20, 4, U32, SLAB, INSTANT, NONE, "num_slabs"),
    ("mem.slabinfo.slabs.pages_per_slab", 20, 5, U32, SLAB, INSTANT, NONE, "pagesperslab"),
    ("mem.slabinfo.slabs.objects_per_slab", 20, 6, U32, SLAB, INSTANT, NONE, "objperslab"),
    ("mem.slabinfo.slabs.total_size", 20, 7, U64, SLAB, INSTANT, BYTE, "see slab_total_size"),
    ("vfs.files.count", 27, 0, I32, None, INSTANT, NONE, "file-nr 1"),
    ("vfs.files.free", 27, 1, I32, None, INSTANT, NONE, "file-nr 2"),
    ("vfs.files.max", 27, 2, I32, None, INSTANT, NONE, "file-nr 3"),
    ("vfs.inodes.count", 27, 3, I32, None, INSTANT, NONE, "inode-state 1"),
    ("vfs.inodes.free", 27, 4, I32, None, INSTANT, NONE, "inode-state 2"),
    ("vfs.dentry.count", 27, 5, I32, None, INSTANT, NONE, "dentry-state 1"),
    ("vfs.dentry.free", 27, 6, I32, None, INSTANT, NONE, "dentry-state 2"),
    ("vfs.aio.count", 27, 7, I32, None, INSTANT, NONE, "aio-nr"),
    ("vfs.aio.max", 27, 8, I32, None, INSTANT, NONE, "aio-max-nr"),
    ("tmpfs.capacity", 34, 1, U64, TMPFS, DISCRETE, KBYTE, "statfs blocks * bsize / 1024"),
    ("tmpfs.used", 34, 2, U64, TMPFS, INSTANT, KBYTE, "(blocks - bfree) * bsize / 1024"),
    ("tmpfs.free", 34, 3, U64, TMPFS, INSTANT, KBYTE, "bfree * bsize / 1024"),
    ("tmpfs.maxfiles", 34, 4, U32, TMPFS, DISCRETE, NONE, "files"),
    ("tmpfs.usedfiles", 34, 5, U32, TMPFS, INSTANT, NONE, "files - ffree"),
    ("tmpfs.freefiles", 34, 6, U32, TMPFS, INSTANT, NONE, "ffree"),
    ("tmpfs.full", 34, 7, DOUBLE, TMPFS, INSTANT, NONE, "100 * used / (used + bavail)"),
    ("sysfs.kernel.uevent_seqnum", 35, 0, U64, None, COUNTER, COUNT, "/sys/kernel"),
    ("sysfs.kernel.debug.extfrag_unusable", 35, 1, FLOAT, NODE, INSTANT, NONE, "debugfs"),
    ("mem.ksm.full_scans", 69, 0, U64, None, INSTANT, COUNT, "ksm/full_scans"),
    ("mem.ksm.merge_across_nodes", 69, 1, U64, None, INSTANT, NONE, "ksm/merge_across_nodes"),
    ("mem.ksm.pages_shared", 69, 2, U64, None, INSTANT, NONE, "ksm/pages_shared"),
    ("mem.ksm.pages_sharing", 69, 3, U64, None, INSTANT, NONE, "ksm/pages_sharing"),
    ("mem.ksm.pages_to_scan", 69, 4, U64, None, INSTANT, NONE, "ksm/pages_to_scan"),
    ("mem.ksm.pages_unshared", 69, 5, U64, None, INSTANT, COUNT, "ksm/pages_unshared"),
    ("mem.ksm.pages_volatile", 69, 6, U64, None, INSTANT, NONE, "ksm/pages_volatile"),
    ("mem.ksm.run_state", 69, 7, U64, None, INSTANT, NONE, "ksm/run"),
    ("mem.ksm.sleep_time", 69, 8, U64, None, INSTANT, MSEC, "ksm/sleep_millisecs"),
    ("tty.serial.tx", 74, 0, U32, TTY, COUNTER, NONE, "tx:"),
    ("tty.serial.rx", 74, 1, U32, TTY, COUNTER, NONE, "rx:"),
    ("tty.serial.frame", 74, 2, U32, TTY, COUNTER, NONE, "fe:"),
    ("tty.serial.parity", 74, 3, U32, TTY, COUNTER, NONE, "pe:"),
    ("tty.serial.brk", 74, 4, U32, TTY, COUNTER, NONE, "brk:"),
    ("tty.serial.overrun", 74, 5, U32, TTY, COUNTER, NONE, "oe:"),
    ("tty.serial.irq", 74, 6, U32, TTY, DISCRETE, NONE, "irq:"),
    ("vfs.locks.posix.read", 75, 0, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.posix.write", 75, 1, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.posix.count", 75, 2, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.flock.read", 75, 3, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.flock.write", 75, 4, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.flock.count", 75, 5, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.lease.read", 75, 6, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.lease.write", 75, 7, U32, None, INSTANT, NONE, "/proc/locks"),
    ("vfs.locks.lease.count", 75, 8, U32, None, INSTANT, NONE, "/proc/locks"),
)

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = records_of(_TABLE)

_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_SWAP_OPERATIONS = ("swap.in", "swap.out")

# --- /proc/sys/fs and /proc/locks ---------------------------------------------------------

#: The /proc/sys/fs files, in pmdalinux's order, with the metrics their numbers give.
SYS_FS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("file-nr", ("vfs.files.count", "vfs.files.free", "vfs.files.max")),
    ("inode-state", ("vfs.inodes.count", "vfs.inodes.free")),
    ("dentry-state", ("vfs.dentry.count", "vfs.dentry.free")),
    ("aio-max-nr", ("vfs.aio.max",)),
    ("aio-nr", ("vfs.aio.count",)),
)


def sys_fs(files: dict[str, bytes | None]) -> dict[str, int]:
    """vfs.* from the /proc/sys/fs FILES' contents: all 0 if one is unreadable (pmdalinux
    reports its zeroed values regardless), else each number scanned as an int."""
    values = dict.fromkeys(_SYS_FS_NAMES, 0)
    if any(files.get(file) is None for file, _ in SYS_FS):
        return values
    for file, names in SYS_FS:
        data = files[file]
        numbers = scan_ints(data, len(names), 32, True)  # type: ignore[arg-type]
        for name, number in zip(names, numbers, strict=False):
            values[name] = number
    return values


_SYS_FS_NAMES = tuple(name for _, names in SYS_FS for name in names)


_LOCK_LINE = re.compile(rb"[ \t\n\v\f\r]*[+-]?[0-9]+:[ \t\n\v\f\r]*(\S+)\s+\S+\s+(\S+)")
_LOCK_KINDS = (
    ((b"POSIX", b"ACCESS", b"OFDLCK"), "posix"),
    ((b"FLOCK",), "flock"),
    ((b"DELEG", b"LEASE"), "lease"),
)


def locks(data: bytes | None) -> dict[str, int]:
    """vfs.locks.* from /proc/locks DATA (all 0 if unreadable): each lock counted under its
    kind, and as a read, a write, or both ("RW"); waiters' "->" lines skipped."""
    values = {
        f"vfs.locks.{kind}.{f}": 0 for _, kind in _LOCK_KINDS for f in ("read", "write", "count")
    }
    for line in (data or b"").split(b"\n"):
        m = _LOCK_LINE.match(line)
        if m is None:
            continue
        kind = next((k for prefixes, k in _LOCK_KINDS if m[1][:15].startswith(prefixes)), None)
        if kind is None:
            continue
        prefix = f"vfs.locks.{kind}."
        values[prefix + "count"] += 1
        access = m[2][:15]
        if access.startswith(b"READ"):
            values[prefix + "read"] += 1
        elif access.startswith(b"WRITE"):
            values[prefix + "write"] += 1
        elif access.startswith(b"RW"):
            values[prefix + "read"] += 1
            values[prefix + "write"] += 1
    return {name: value & _U32 for name, value in values.items()}


# --- /proc/swaps --------------------------------------------------------------------------


def parse_swaps(data: bytes) -> list[tuple[str, int, int, int]]:
    """(path, size kB, used kB, priority) of each /proc/swaps line starting with '/'."""
    rows = []
    for line in data.split(b"\n"):
        if not line.startswith(b"/"):
            continue
        fields = [f for f in re.split(rb"[ \t]+", line) if f]
        if len(fields) < 5:
            continue
        size, used, prio = fields[2:5]
        rows.append(
            (
                fields[0].decode("utf-8", "replace"),
                scan_int(size, 32, False) or 0,  # %u
                scan_int(used, 32, False) or 0,
                scan_int(prio, 32, True) or 0,  # %d
            )
        )
    return rows


# --- /proc/slabinfo -----------------------------------------------------------------------


@dataclass
class SlabCache:
    """One /proc/slabinfo line, as pmdalinux keeps it; None is a field this version lacks."""

    active_objs: int
    total_objs: int
    object_size: int | None = None
    active_slabs: int | None = None
    total_slabs: int | None = None
    pages_per_slab: int | None = None
    objects_per_slab: int | None = None
    total_size: int | None = None


def _slab_name(line: bytes) -> bytes:
    """pmdalinux's repair of a cache name with spaces: the white space character just
    before a letter becomes '_' (scanning stops at the first digit)."""
    buf = bytearray(line)
    white = None
    for at, ch in enumerate(buf):
        if chr(ch).isspace() and ch < 128:
            white = at
        elif 48 <= ch <= 57:
            break
        elif chr(ch).isalpha() and ch < 128 and white is not None:
            buf[white:at] = b"_" * (at - white)
            white = None
    return bytes(buf)


def parse_slabinfo(data: bytes, pageshift: int) -> dict[str, SlabCache] | None:
    """{cache name: figures} from /proc/slabinfo DATA (versions 1.0, 1.1, 2.0 and 2.1, as
    pmdalinux reads them); None without a header.  A line that does not scan ends the
    reading there; total_size is active_slabs * pages_per_slab pages (1.1) or
    active_objs * pages_per_slab pages / objects_per_slab (2.x)."""
    lines = data.split(b"\n")
    if not data:
        return None
    major = minor = 0
    if b"slabinfo - version:" in lines[0]:
        m = re.search(rb"([0-9]+)(?:\.([0-9]+))?", lines[0])
        if m:
            major, minor = int(m[1]), int(m[2] or 0)
    version = (major, minor)
    caches: dict[str, SlabCache] = {}
    for raw in lines[1:]:
        if not raw or raw.startswith(b"#"):
            continue
        line = _slab_name(raw)
        words = line.split()
        if version == (1, 0):
            nums = _slab_numbers(words[1:3])
            if nums is None or len(nums) < 2:
                break
            cache = SlabCache(nums[0], nums[1], total_slabs=0)  # pmdalinux's zeroed field
        elif version == (1, 1):
            nums = _slab_numbers(words[1:7])
            if nums is None or len(nums) < 6:
                break
            cache = SlabCache(
                nums[0], nums[1], nums[2] & _U32, nums[3] & _U32, None, nums[5] & _U32
            )
            cache.total_size = ((nums[5] & _U32) * (nums[3] & _U32) << pageshift) & _U64
        elif major == 2 and minor in (0, 1):
            # name active num objsize objperslab pagesperslab : tunables a b c : slabdata x y
            if len(words) < 15 or words[6] != b":" or words[11] != b":":
                break
            nums = _slab_numbers([*words[1:6], *words[13:15]])
            if nums is None:
                break
            active, total, size, per_slab, pages, act_slabs, slabs = nums
            per_slab &= _U32
            pages &= _U32
            cache = SlabCache(
                active,
                total,
                size & _U32,
                act_slabs & _U32,
                slabs & _U32,
                pages,
                per_slab,
            )
            if per_slab:
                cache.total_size = (((pages * active) & _U64) << pageshift & _U64) // per_slab
        else:
            break
        caches[words[0].decode("utf-8", "replace")] = cache
    return caches


def _slab_numbers(words: list[bytes]) -> list[int] | None:
    """WORDS scanned as %lu numbers, or None if one is not a number."""
    found = []
    for word in words:
        number = scan_int(word, 64, False)
        if number is None:
            return None
        found.append(number)
    return found


_SLAB_FIELDS: dict[str, Callable[[SlabCache], int | None]] = {
    "mem.slabinfo.objects.active": lambda c: c.active_objs,
    "mem.slabinfo.objects.total": lambda c: c.total_objs,
    "mem.slabinfo.objects.size": lambda c: c.object_size,
    "mem.slabinfo.slabs.active": lambda c: c.active_slabs,
    "mem.slabinfo.slabs.total": lambda c: c.total_slabs,
    "mem.slabinfo.slabs.pages_per_slab": lambda c: c.pages_per_slab,
    "mem.slabinfo.slabs.objects_per_slab": lambda c: c.objects_per_slab,
    "mem.slabinfo.slabs.total_size": lambda c: c.total_size,
}

# --- /sys/kernel/mm/ksm -------------------------------------------------------------------

#: (file name prefix pmdalinux compares, metric), in its order of tests.
KSM_FILES: tuple[tuple[str, str], ...] = (
    ("full_scans", "mem.ksm.full_scans"),
    ("merge_across_nodes", "mem.ksm.merge_across_nodes"),
    ("pages_shared", "mem.ksm.pages_shared"),
    ("pages_sharing", "mem.ksm.pages_sharing"),
    ("pages_to_scan", "mem.ksm.pages_to_scan"),
    ("pages_unshared", "mem.ksm.pages_unshared"),
    ("pages_volatile", "mem.ksm.pages_volatile"),
    ("run", "mem.ksm.run_state"),
    ("sleep_millisecs", "mem.ksm.sleep_time"),
)
#: KSM file name -> its metric ("" for none), as the prefixes above give it; filled when seen
_KSM_METRIC: dict[str, str] = {}

# --- /proc/tty/driver/serial --------------------------------------------------------------

#: tty.serial.* from a port line's "key:" fields, in pmdalinux's order.
TTY_FIELDS: tuple[tuple[bytes, str], ...] = (
    (b"irq:", "tty.serial.irq"),
    (b"tx:", "tty.serial.tx"),
    (b"rx:", "tty.serial.rx"),
    (b"fe:", "tty.serial.frame"),
    (b"pe:", "tty.serial.parity"),
    (b"brk:", "tty.serial.brk"),
    (b"oe:", "tty.serial.overrun"),
)


def parse_serial(data: bytes) -> list[tuple[str, dict[str, int]]]:
    """(port, {metric: value}) of each port line of /proc/tty/driver/serial with a known
    uart: the fields present on the line (the kernel omits zero error counts)."""
    found = []
    for line in data.split(b"\n"):
        colon, uart = line.find(b":"), line.find(b"uart:")
        if colon < 0 or uart < 0:
            continue
        port = line[:colon]
        number = strtol(port)  # no number is 0, not an error
        if number.erange or int32(int(number.value)) < 0:
            continue  # strtol's range error or a negative (int): pmdalinux skips the line
        kind = line[uart + 5 :].split()
        if not kind or kind[0] == b"unknown" or port == b"serinfo":
            continue
        fields = {}
        for key, name in TTY_FIELDS:
            at = line.find(key)
            if at >= 0:
                value = scan_int(line[at + len(key) :], 32, False)  # %u
                if value is not None:
                    fields[name] = value
        found.append((port.decode("utf-8", "replace"), fields))
    return found


# --- tmpfs ----------------------------------------------------------------------------------

TmpfsValue = Callable[[os.statvfs_result], Any]


def _tmpfs_full(st: os.statvfs_result) -> float:
    """Percentage of the space a non-root user could have that is in use (NaN if none)."""
    used = (st.f_blocks - st.f_bfree) & _U64
    total = (used + st.f_bavail) & _U64
    return 100.0 * used / total if total else math.nan


TMPFS_VALUES: dict[str, TmpfsValue] = {
    "tmpfs.capacity": lambda st: (st.f_blocks * st.f_bsize & _U64) // 1024,
    "tmpfs.used": lambda st: (((st.f_blocks - st.f_bfree) & _U64) * st.f_bsize & _U64) // 1024,
    "tmpfs.free": lambda st: (st.f_bfree * st.f_bsize & _U64) // 1024,
    "tmpfs.maxfiles": lambda st: st.f_files & _U32,
    "tmpfs.usedfiles": lambda st: (st.f_files - st.f_ffree) & _U32,
    "tmpfs.freefiles": lambda st: st.f_ffree & _U32,
    "tmpfs.full": _tmpfs_full,
}


def tmpfs_mounts(
    rows: list[tuple[str, str, str, str]],
    resolve: Callable[[str], str | None] = procfs.realpath,
) -> dict[str, str]:
    """{instance name: mount point} of the tmpfs mounts among /proc/self/mounts ROWS: named
    by the mount point's resolved path; the first mount of a name wins."""
    found: dict[str, str] = {}
    for _, path, fstype, _ in rows:
        if fstype == "tmpfs":
            found.setdefault(resolve(path) or path, path)
    return found


# --- /sys/kernel/debug/extfrag/unusable_index -------------------------------------------

_EXTFRAG = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+),[ \t\n\v\f\r]*(\S+)[ \t\n\v\f\r]*(\S+)")


def extfrag(data: bytes) -> dict[str, tuple[float, int]]:
    """{"nodeN": (sum, count)} of the Normal zones' unusable indices in DATA, as pmdalinux
    scans each line from its sixth character: up to 16 numbers summed in C floats."""
    found: dict[str, tuple[float, int]] = {}
    for line in data.split(b"\n"):
        if len(line) + 1 < 6:  # fgets keeps the newline
            continue
        m = _EXTFRAG.match(line, 5)
        if m is None:
            continue
        total, count, at = 0.0, 0, m.end()
        while count < 16:
            f = strtof(line, at)  # %f: read straight into a float
            if f.end == at:
                break
            total = float32(total + f.value)
            count += 1
            at = f.end
        if count == 0 or m[3] != b"Normal":
            continue
        found[f"node{strtoul(m[1]).value}"] = (total, count)
    return found


# --- the agent's part ---------------------------------------------------------------------


class Vfs(LinuxBase):
    """vfs, tmpfs, swap devices, slab caches, KSM, serial ports, uevents, pmda.*."""

    vfs_swapdev_indom = InDom(
        SWAPDEV, labels={"device_type": ["block", "memory"], "indom_name": "per swap device"}
    )
    vfs_slab_indom = InDom(SLAB, labels={"device_type": "memory", "indom_name": "per slab"})
    vfs_tmpfs_indom = InDom(TMPFS)
    vfs_tty_indom = InDom(TTY)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; pmdaCache-style ids (slab caches' saved, as pmdalinux does)."""
        super().__init__(*args, **kwargs)
        self._vfs_swap_ids = InstanceIds()
        self._vfs_tmpfs_ids = InstanceIds()
        self._vfs_tty_ids = InstanceIds()
        self._vfs_slab_ids = InstanceIds(self._cache_file(self.vfs_slab_indom))
        self._vfs_slabs: dict[int, tuple[str, SlabCache]] = {}
        self._vfs_ttys: dict[int, tuple[str, dict[str, int]]] = {}  # active ports
        self._vfs_tty_fields: dict[str, dict[str, int]] = {}  # every port's last fields
        self._vfs_extfrag: dict[str, tuple[float, int]] = {}  # by node name, kept
        self._vfs_ksm = {name: 0 for _, name in KSM_FILES}  # kept: pmdalinux never resets them
        self._vfs_ksm_opened: set[str] = set()  # KSM files not read that opened once
        self._vfs_pageshift = self.pagesize.bit_length() - 1
        self._vfs_all_access = atoi(os.environ.get("LINUX_ACCESS", "")) != 0

    def _vfs_permitted(self) -> bool:
        """Whether the client may see root's files: all may with $LINUX_ACCESS, else only a
        client pmcd says is uid 0."""
        return self._vfs_all_access or self.client.uid == 0

    # -- instance domains ------------------------------------------------------------------

    @vfs_swapdev_indom.refresh
    def _vfs_swapdev_instances(self) -> dict[int, str] | None:
        """The swap devices of /proc/swaps."""
        swaps = self._vfs_swaps()
        return self._current(self.vfs_swapdev_indom, {i: row[0] for i, row in swaps.items()})

    @vfs_tmpfs_indom.refresh
    def _vfs_tmpfs_instances(self) -> dict[int, str] | None:
        """The tmpfs mounts, by resolved mount point."""
        mounts = self._vfs_tmpfs()
        return self._current(self.vfs_tmpfs_indom, {i: n for i, (n, _) in mounts.items()})

    @vfs_slab_indom.refresh
    def _vfs_slab_instances(self) -> dict[int, str] | None:
        """The slab caches, reread only for a client allowed to (else unchanged)."""
        slabs = self._vfs_slabinfo()
        return self._current(self.vfs_slab_indom, {i: n for i, (n, _) in slabs.items()})

    @vfs_tty_indom.refresh
    def _vfs_tty_instances(self) -> dict[int, str] | None:
        """The serial ports with a uart, reread only for a client allowed to."""
        ttys = self._vfs_serial()
        return self._current(self.vfs_tty_indom, {i: n for i, (n, _) in ttys.items()})

    # -- sources -------------------------------------------------------------------------

    def _vfs_swaps(self) -> dict[int, tuple[str, int, int, int]]:
        """/proc/swaps by instance id, once per fetch; the first line of a path wins."""
        return self._once("vfs.swaps", self._vfs_read_swaps)

    def _vfs_read_swaps(self) -> dict[int, tuple[str, int, int, int]]:
        """Read /proc/swaps, giving new devices ids."""
        swaps: dict[int, tuple[str, int, int, int]] = {}
        for row in self._read("/proc/swaps", parse_swaps) or ():
            inst = self._vfs_swap_ids(row[0])
            swaps.setdefault(inst, row)
        return swaps

    def _vfs_tmpfs(self) -> dict[int, tuple[str, str]]:
        """{inst: (name, mount point)} of the tmpfs mounts, once per fetch."""
        return self._once("vfs.tmpfs", self._vfs_read_tmpfs)

    def _vfs_read_tmpfs(self) -> dict[int, tuple[str, str]]:
        """Read /proc/self/mounts, giving new tmpfs mounts ids."""
        rows = self._read("/proc/self/mounts", procfs.parse_mounts) or []
        return {
            self._vfs_tmpfs_ids(name): (name, path) for name, path in tmpfs_mounts(rows).items()
        }

    def _vfs_slabinfo(self) -> dict[int, tuple[str, SlabCache]]:
        """The slab caches of the last read a permitted client caused (reread once per fetch)."""
        if self._vfs_permitted():
            self._once("vfs.slabinfo", self._vfs_read_slabinfo)
        return self._vfs_slabs

    def _vfs_read_slabinfo(self) -> None:
        """Read /proc/slabinfo: its caches become the instances (none if unreadable)."""
        caches = self._read("/proc/slabinfo", lambda d: parse_slabinfo(d, self._vfs_pageshift))
        if caches is None:  # pmdalinux has already made every cache inactive
            self._vfs_slabs = {}
            return
        ids = self._vfs_slab_ids
        self._vfs_slabs = {ids(name): (name, cache) for name, cache in caches.items()}
        ids.save()

    def _vfs_serial(self) -> dict[int, tuple[str, dict[str, int]]]:
        """The serial ports of the last read a permitted client caused."""
        if self._vfs_permitted():
            self._once("vfs.serial", self._vfs_read_serial)
        return self._vfs_ttys

    def _vfs_read_serial(self) -> None:
        """Read /proc/tty/driver/serial; a known port keeps the fields its line omits."""
        ports = self._read("/proc/tty/driver/serial", parse_serial)
        if ports is None:
            return
        active: dict[int, tuple[str, dict[str, int]]] = {}
        for port, fields in ports:
            kept = self._vfs_tty_fields.setdefault(port, {name: 0 for _, name in TTY_FIELDS})
            kept.update(fields)
            active[self._vfs_tty_ids(port)] = (port, kept)
        self._vfs_ttys = active

    # -- clusters ------------------------------------------------------------------------

    @refresh(1)
    def _vfs_refresh_meminfo(self) -> dict[str, Any]:
        """Cluster 1: hinv.hugepagesize, /proc/meminfo's Hugepagesize in bytes."""
        if "hinv.hugepagesize" not in self._wanted:
            return {}
        mem = self._read_once("/proc/meminfo", procfs.parse_meminfo) or {}
        size = mem.get(b"Hugepagesize")
        return {"hinv.hugepagesize": None if size is None else (size << 10) & _U32}

    @refresh(0)
    def _vfs_refresh_swap_operations(self) -> dict[str, Any]:
        """Cluster 0: swap.in and swap.out, swap operation counts that only 2.4 kernels kept
        (in /proc/stat's "swap" line): with /proc/vmstat (2.6 on), pmdalinux answers them
        with PM_ERR_APPVERSION, and so do we; we read no older kernels' /proc/stat."""
        if self._wanted.isdisjoint(_SWAP_OPERATIONS) or self._vmstat() is None:
            return {}
        return dict.fromkeys(_SWAP_OPERATIONS, PMError(PM_ERR_APPVERSION))

    @refresh(6)
    def _vfs_refresh_swapdev(self) -> dict[str, Any]:
        """Cluster 6: each swap device's size, use and priority (kB)."""
        swaps = self._vfs_swaps()
        return {
            "swapdev.free": {i: (size - used) & _U32 for i, (_, size, used, _) in swaps.items()},
            "swapdev.length": {i: row[1] for i, row in swaps.items()},
            "swapdev.maxswap": {i: row[1] for i, row in swaps.items()},
            "swapdev.vlength": dict.fromkeys(swaps, 0),
            "swapdev.priority": {i: row[3] for i, row in swaps.items()},
        }

    @refresh(12)
    def _vfs_refresh_uname(self) -> dict[str, Any]:
        """Cluster 12: pmda.uname (uname's five fields) and pmda.version."""
        u = os.uname()
        return {
            "pmda.uname": f"{u.sysname} {u.nodename} {u.release} {u.version} {u.machine}",
            "pmda.version": PCP_COMPAT_VERSION,
        }

    @refresh(20)
    def _vfs_refresh_slabinfo(self) -> dict[str, Any]:
        """Cluster 20: the slab caches' figures, for a permitted client only."""
        if not self._vfs_permitted():
            return {}
        slabs = self._vfs_slabinfo()
        values: dict[str, Any] = {}
        for name, field in _SLAB_FIELDS.items():
            if name in self._wanted:
                values[name] = {i: field(cache) for i, (_, cache) in slabs.items()}
        return values

    @refresh(27)
    def _vfs_refresh_sys_fs(self) -> dict[str, Any]:
        """Cluster 27: /proc/sys/fs counts."""
        return sys_fs({file: self.proc.read(f"/proc/sys/fs/{file}") for file, _ in SYS_FS})

    @refresh(75)
    def _vfs_refresh_locks(self) -> dict[str, Any]:
        """Cluster 75: /proc/locks by kind and access."""
        return locks(self.proc.read("/proc/locks"))

    @refresh(34)
    def _vfs_refresh_tmpfs(self) -> dict[str, Any]:
        """Cluster 34: statfs of each tmpfs mount (no values for one statfs cannot reach)."""
        asked = [(n, v) for n, v in TMPFS_VALUES.items() if n in self._wanted]
        values: dict[str, Any] = {name: {} for name, _ in asked}
        if not asked:
            return values
        for inst, (_, path) in self._vfs_tmpfs().items():
            try:
                st = os.statvfs(path)
            except OSError:
                continue
            for name, value in asked:
                values[name][inst] = value(st)
        return values

    @refresh(35)
    def _vfs_refresh_sysfs_kernel(self) -> dict[str, Any]:
        """Cluster 35: the uevent sequence number (its last byte dropped, as pmdalinux does),
        and each node's Normal zone unusable index sum (kept from the last read that had
        it; no value for a node never seen there)."""
        values: dict[str, Any] = {}
        wanted = self._wanted
        if "sysfs.kernel.uevent_seqnum" in wanted:
            data = self.proc.read_unkept("/sys/kernel/uevent_seqnum")
            if data:
                text = data[:4096][:-1].split(b"\0", 1)[0]
                values["sysfs.kernel.uevent_seqnum"] = int(strtoul(text).value)  # %lu, else 0
        if "sysfs.kernel.debug.extfrag_unusable" in wanted:
            nodes = next((i for i in self.declared_indoms if i.serial == NODE), None)
            names = {} if nodes is None else self.instances(nodes)
            data = self.proc.read_unkept("/sys/kernel/debug/extfrag/unusable_index")
            for node, sums in extfrag(data or b"").items():
                if node in names.values():
                    self._vfs_extfrag[node] = sums
            values["sysfs.kernel.debug.extfrag_unusable"] = {
                inst: self._vfs_extfrag[name][0]
                for inst, name in names.items()
                if name in self._vfs_extfrag
            }
        return values

    @refresh(69)
    def _vfs_refresh_ksm(self) -> dict[str, Any]:
        """Cluster 69: /sys/kernel/mm/ksm, each file's first line; a value stays as last read
        (0 at first) when its file is missing, as pmdalinux's never-cleared counts do."""
        base = "/sys/kernel/mm/ksm"
        try:
            names = os.listdir(self.proc.root + base)
        except OSError:
            names = []
        opened = self._vfs_ksm_opened
        for entry in names:
            if entry.startswith("."):
                continue
            metric = _KSM_METRIC.get(entry)
            if metric is None:
                metric = _KSM_METRIC[entry] = next(
                    (m for prefix, m in KSM_FILES if entry.startswith(prefix)), ""
                )
            if not metric:  # unread, but it must open, or pmdalinux stops there (a file
                # that opened once is taken to open still: they are the kernel's, fixed)
                if entry in opened:
                    continue
                try:
                    os.close(os.open(f"{self.proc.root}{base}/{entry}", os.O_RDONLY))
                except OSError:
                    break
                opened.add(entry)
                continue
            data = self.proc.read(f"{base}/{entry}")  # kept open, reread from its start
            if data is None:
                break
            line = data[: data.find(b"\n") + 1 or None]  # the first line, as readline
            if not line:
                continue
            self._vfs_ksm[metric] = int(strtoul(line).value)  # %lu, no number 0
        return dict(self._vfs_ksm)

    @refresh(74)
    def _vfs_refresh_tty(self) -> dict[str, Any]:
        """Cluster 74: the serial ports' counts, for a permitted client only."""
        if not self._vfs_permitted():
            return {}
        ttys = self._vfs_serial()
        return {
            name: {i: fields[name] for i, (_, fields) in ttys.items()} for _, name in TTY_FIELDS
        }
