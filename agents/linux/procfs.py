"""Reading and parsing the /proc files the linux agent needs, and PCP's instance rules.

The parsers take a file's raw bytes and return plain Python values, so tests can
feed them fixed samples; they read what pmdalinux reads, field for field.  The
rules (`is_partition`, `is_disk`, `filesys_mounts`) decide, as pmdalinux does,
which block devices are disk instances and which mounts are filesys instances.
`ProcFiles` keeps each file open and rereads it from offset 0, as pmdalinux does
with /proc/stat, which saves an open and a close on every fetch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

_DIGITS = frozenset("0123456789")


class ProcFiles:
    """Whole-file reads of /proc (or of a copy under ROOT), each file kept open between reads."""

    def __init__(self, root: str = "") -> None:
        """Files under ROOT ("" for the real /proc), none open yet."""
        self.root = root
        self._fds: dict[str, int] = {}

    def read(self, path: str) -> bytes | None:
        """The current contents of PATH (e.g. "/proc/stat"), or None if it cannot be read."""
        fd = self._fds.get(path)
        try:
            if fd is None:
                fd = self._fds[path] = os.open(self.root + path, os.O_RDONLY | os.O_CLOEXEC)
            # a /proc file may come a page at a time: read on to the empty read at its end
            data = chunk = os.pread(fd, 16384, 0)
            while chunk:
                chunk = os.pread(fd, 16384, len(data))
                data += chunk
            return data
        except OSError:
            self._forget(path)
            return None

    def read_unkept(self, path: str) -> bytes | None:
        """PATH's contents, opened and closed again (None if it cannot be read): for the
        many small sysfs files of CPUs and interfaces, which come and go, where a kept
        descriptor would outlive its device.  A sysfs attribute comes whole in one read."""
        try:
            fd = os.open(self.root + path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            return os.read(fd, 65536)
        except OSError:
            return None
        finally:
            os.close(fd)

    def _forget(self, path: str) -> None:
        """Close PATH's file, so the next read opens it again."""
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        """Close every file kept open."""
        for path in list(self._fds):
            self._forget(path)


# --- /proc/stat -------------------------------------------------------------------------

#: The /proc/stat counters (other than CPU time) the agent exports.
STAT_COUNTERS = (b"intr", b"ctxt", b"btime", b"processes", b"procs_running", b"procs_blocked")
#: Ticks per CPU line: user nice sys idle iowait irq softirq steal guest guest_nice.
CPU_FIELDS = 10


@dataclass
class Stat:
    """/proc/stat: CPU ticks of the "cpu" line and of each "cpuN" line (by N), other counters."""

    all: tuple[int, ...] | None = None
    cpus: dict[int, tuple[int, ...]] = field(default_factory=dict)
    counters: dict[bytes, int] = field(default_factory=dict)


def _ticks(fields: list[bytes]) -> tuple[int, ...]:
    """Up to CPU_FIELDS tick counts, missing ones (older kernels) as 0."""
    ticks = [int(f) for f in fields[1 : CPU_FIELDS + 1]]
    return (*ticks, *(0,) * (CPU_FIELDS - len(ticks)))


def parse_stat(data: bytes) -> Stat:
    """Parse /proc/stat: the cpu lines in full, the first number of each counter line."""
    stat = Stat()
    for line in data.split(b"\n"):
        if line.startswith(b"cpu"):
            fields = line.split()
            tag = fields[0]
            if tag == b"cpu":
                stat.all = _ticks(fields)
            elif tag[3:].isdigit():
                stat.cpus[int(tag[3:])] = _ticks(fields)
        else:
            key, _, rest = line.partition(b" ")
            if key in STAT_COUNTERS:
                value = rest.split(None, 1)
                if value and value[0].isdigit():
                    stat.counters[key] = int(value[0])
    return stat


# --- /proc/loadavg, /proc/uptime, /proc/meminfo, /proc/vmstat ----------------------------


@dataclass(frozen=True)
class LoadAvg:
    """/proc/loadavg: the three load averages, runnable and total tasks, the last pid."""

    load: tuple[float, float, float]
    runnable: int
    nprocs: int
    lastpid: int


def parse_loadavg(data: bytes) -> LoadAvg | None:
    """Parse /proc/loadavg ("0.14 0.45 0.67 1/87 6343"), or None if it is not that."""
    try:
        one, five, fifteen, tasks, lastpid = data.split()[:5]
        runnable, nprocs = tasks.split(b"/")
        return LoadAvg(
            (float(one), float(five), float(fifteen)), int(runnable), int(nprocs), int(lastpid)
        )
    except ValueError:
        return None


def parse_uptime(data: bytes) -> tuple[float, float] | None:
    """Parse /proc/uptime: (seconds since boot, idle seconds summed over CPUs)."""
    try:
        up, idle = data.split()[:2]
        return float(up), float(idle)
    except ValueError:
        return None


_MEMINFO_LINE = re.compile(rb"^([^:\n]+):[^0-9\n]*([0-9]+)", re.MULTILINE)


def parse_meminfo(data: bytes) -> dict[bytes, int]:
    """Parse /proc/meminfo: {field name: first number on its line} (kB, or a page count)."""
    return {key: int(value) for key, value in _MEMINFO_LINE.findall(data)}


def parse_vmstat(data: bytes, keys: Iterable[bytes]) -> dict[bytes, int]:
    """The values of KEYS in /proc/vmstat ("name value" lines); missing keys are left out."""
    found = {}
    text = b"\n" + data
    for key in keys:
        at = text.find(b"\n" + key + b" ")
        if at >= 0:
            start = at + len(key) + 2
            end = text.find(b"\n", start)
            value = text[start : end if end >= 0 else None].strip()
            if value.isdigit():
                found[key] = int(value)
    return found


# --- /proc/diskstats and which devices are disks ----------------------------------------


def _has_no_p(name: str, prefix: str) -> bool:
    """NAME starts with PREFIX and has no 'p' after it (a whole device, not a partition)."""
    return name.startswith(prefix) and "p" not in name[len(prefix) :]


def _is_cdrom(name: str) -> bool:
    """NAME is srN, a CD-ROM drive."""
    return name.startswith("sr") and name[2:3] in _DIGITS


def is_partition(name: str) -> bool:
    """pmdalinux's partition test: a trailing digit, except for names known to be whole devices.

    A name with a '/' (cciss/c0d0p1 style) is a partition when its trailing digits
    follow a 'p', or when it has no trailing digits at all.
    """
    if "/" in name:
        last = len(name) - 1
        p = last
        while p > 0 and name[p] in _DIGITS:
            p -= 1
        return p == last or name[p] == "p"
    return (
        name[-1:] in _DIGITS
        and not name.startswith(("loop", "ram", "zram", "md", "dm-"))
        and not _is_cdrom(name)
        and not any(_has_no_p(name, prefix) for prefix in ("mmcblk", "nvme", "rbd", "nbd"))
    )


def is_disk(name: str) -> bool:
    """Whether block device NAME is an instance of disk.dev (pmdalinux's DISK_INDOM)."""
    return not (
        name.startswith(("loop", "ram", "zram", "dm-", "md"))
        or _is_cdrom(name)
        or "xvm" in name
        or (len(name) == 18 and name[0] in "123")  # a WWID
        or is_partition(name)
    )


#: /proc/diskstats counts kept per device, in this order (all but the first 4 are optional).
DISK_FIELDS = (
    "rd_ios",
    "rd_merges",
    "rd_sectors",
    "rd_ticks",
    "wr_ios",
    "wr_merges",
    "wr_sectors",
    "wr_ticks",
    "inflight",
    "io_ticks",
    "aveq",
)
_NDISK = len(DISK_FIELDS)
#: The discard (kernel 4.18+) and flush (5.5+) counts that follow DISK_FIELDS.
EXTRA_FIELDS = ("ds_ios", "ds_merges", "ds_sectors", "ds_ticks", "fl_ios", "fl_ticks")
#: Every count `parse_block_devices` gives: DISK_FIELDS then EXTRA_FIELDS.
BLOCK_FIELDS = DISK_FIELDS + EXTRA_FIELDS
_NBLOCK = len(BLOCK_FIELDS)


@dataclass(frozen=True, slots=True)
class BlockDevice:
    """One /proc/diskstats line: device numbers, name, counts in BLOCK_FIELDS order.

    SHORT is true for the old 4-count line (pre-2.6.25 partitions), for which
    pmdalinux stops reporting the partition counts that line lacks.
    """

    major: int
    minor: int
    name: str
    counts: tuple[int, ...]
    short: bool = False


def _leading_ints(fields: list[bytes]) -> list[int]:
    """The integers at the start of FIELDS, up to the first that is not one (as sscanf stops)."""
    found = []
    for f in fields:
        if not f.isdigit():
            break
        found.append(int(f))
    return found


def parse_block_devices(data: bytes) -> list[BlockDevice]:
    """Every device line of /proc/diskstats, with pmdalinux's rules for short lines.

    Only lines starting with a blank are read, and they need two device numbers
    and a name.  With fewer than 11 counts, the first four are taken as reads,
    read sectors, writes and write sectors (the old partition format) and the
    rest are 0; the discard counts are 0 unless all four are there, and the
    flush counts 0 unless both are.
    """
    devices = []
    for line in data.split(b"\n"):
        if not line.startswith(b" "):
            continue
        fields = line.split()
        if len(fields) < 3 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        counts = _leading_ints(fields[3 : 3 + _NBLOCK])
        short = len(counts) < _NDISK
        if short:
            rd_ios, rd_sectors, wr_ios, wr_sectors = (*counts, 0, 0, 0, 0)[:4]
            counts = [rd_ios, 0, rd_sectors, 0, wr_ios, 0, wr_sectors, 0, 0, 0, 0]
        if len(counts) < _NDISK + 4:
            counts[_NDISK:] = [0, 0, 0, 0]
        if len(counts) < _NBLOCK:
            counts[_NDISK + 4 :] = [0, 0]
        name = fields[2].decode(errors="replace")
        devices.append(BlockDevice(int(fields[0]), int(fields[1]), name, tuple(counts), short))
    return devices


def parse_diskstats(
    data: bytes, keep: Callable[[str], bool] = is_disk
) -> list[tuple[str, tuple[int, ...]]]:
    """The devices of /proc/diskstats that KEEP accepts: (name, counts in DISK_FIELDS order)."""
    return [(d.name, d.counts[:_NDISK]) for d in parse_block_devices(data) if keep(d.name)]


def parse_partitions(data: bytes) -> dict[str, int]:
    """/proc/partitions: {device name: size in 1 KiB blocks}, from its indented 4-field lines."""
    sizes = {}
    for line in data.split(b"\n"):
        if not line.startswith(b" "):
            continue
        fields = line.split()
        if len(fields) >= 4 and fields[0].isdigit() and fields[1].isdigit() and fields[2].isdigit():
            sizes[fields[3].decode(errors="replace")] = int(fields[2])
    return sizes


# --- /proc/net/dev ------------------------------------------------------------------------

#: Counters per /proc/net/dev line: 8 receive, then 8 transmit columns.
NET_COUNTERS = 16


def parse_net_dev(data: bytes) -> list[tuple[str, tuple[int, ...]]]:
    """Every interface of /proc/net/dev: (name before the ':', its 16 counters).

    As pmdalinux's sscanf reads them: the counters up to the first word that is not
    a number, the rest 0.
    """
    rows = []
    for line in data.split(b"\n"):
        head, colon, rest = line.partition(b":")
        if not colon:
            continue
        counts = []
        for word in rest.split()[:NET_COUNTERS]:
            if not (word.isascii() and word.isdigit()):
                break
            counts.append(int(word))
        counts += [0] * (NET_COUNTERS - len(counts))
        rows.append((head.lstrip().decode(errors="replace"), tuple(counts)))
    return rows


# --- /proc/self/mounts and which mounts are filesystems -----------------------------------

#: Filesystem types pmdalinux never reports (besides any type starting with "auto").
SKIPPED_FSTYPES = frozenset(
    {
        "proc",
        "nfs",
        "devfs",
        "devpts",
        "devtmpfs",
        "squashfs",
        "selinuxfs",
        "securityfs",
        "configfs",
        "cgroup",
        "sysfs",
    }
)


def parse_mounts(data: bytes) -> list[tuple[str, str, str, str]]:
    """/proc/self/mounts as (device, mount point, type, options), fields as written (escaped)."""
    rows = []
    for line in data.decode(errors="replace").split("\n"):
        fields = line.split()
        if len(fields) >= 4:
            rows.append((fields[0], fields[1], fields[2], fields[3]))
    return rows


def realpath(path: str) -> str | None:
    """realpath(3): PATH with every symbolic link resolved, or None if that fails."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return None


def filesys_mounts(
    rows: Iterable[tuple[str, str, str, str]], resolve: Callable[[str], str | None] = realpath
) -> dict[str, tuple[str, str]]:
    """The filesys instances among mounts ROWS: {device name: (mount point, options)}.

    pmdalinux's rule: leave out pseudo filesystems and tmpfs (which has its own
    instance domain), and anything whose device is not under /dev unless it is
    mounted on /; name the rest by the device's resolved path, except that
    /dev/mapper/* and /dev/md* keep their names; the first mount of a device wins.
    """
    found: dict[str, tuple[str, str]] = {}
    for device, path, fstype, options in rows:
        if fstype in SKIPPED_FSTYPES or fstype.startswith("auto") or fstype == "tmpfs":
            continue
        if not device.startswith("/dev") and path != "/":
            continue
        if not device.startswith(("/dev/mapper", "/dev/md")):
            device = resolve(device) or device
        found.setdefault(device, (path, options))
    return found


def is_readonly(options: str) -> bool:
    """Whether mount OPTIONS include "ro" (pmdalinux looks at their first 127 characters)."""
    return "ro" in options[:127].split(",")
