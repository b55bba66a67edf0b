"""cgroup.*: the control groups of the cgroup filesystems, read as pmdaproc reads them.

/proc/cgroups lists the controllers (cgroup.subsys.*), /proc/mounts the cgroup and
cgroup2 filesystems (cgroup.mounts.*).  As in pmdaproc, a machine with only cgroup2
mounted is read the version 2 way, any other the version 1 way (a "hybrid" one, v1
controllers beside an empty cgroup2 mount, included):

- version 1: each controller's groups are the directories of the filesystems mounted
  with it (the mount option naming it): cpuset, cpuacct, cpu (cgroup.cpusched.*),
  memory, net_cls (cgroup.netclass.*), blkio; the version 2 metrics have no instances.
- version 2: every directory of the cgroup2 filesystem is a group of cgroup.cpu.stat.*,
  cgroup.pressure.*, cgroup.io.stat.* and cgroup.cpuset.*; cgroup.memory.* (and the
  others) hold the groups with the controller's file (memory.stat, cpu.shares,
  net_cls.classid, blkio.time).

A group is named by its path below the mount ("/" for the top), systemd's \\xHH escapes
undone; a group's disks by "GROUP::DISK", its CPUs by "GROUP::cpuN" (disks named from
/proc/diskstats, loop and ram devices left out).  Groups are walked top down in
directory order, the first of a name kept.  A file that cannot be read gives no value
(a string ""), except blkio's sums, 0 as in pmdaproc.  PROC_STATSPATH prefixes every
path read, as it does pmdaproc's (QA's recorded trees).

Where pmdaproc 6.0.3 slips, the files' values are given (docs/proc-agent-notes.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .catalog import BLKIO_FIELDS, BLKIO_FILES, MEMORY_STAT, memory_stat_name

#: {instance name: {metric name: value}}: one instance domain's groups and their values
Groups = dict[str, dict[str, Any]]

#: what pmdaproc takes for a file it could not read, and so gives no value for
_NO_VALUE = 0xFFFFFFFFFFFFFFFF
_NUMBER = re.compile(rb"\s*(0[xX][0-9a-fA-F]+|[0-9]+)")
_SIGNED = re.compile(rb"\s*([+-]?[0-9]+)")
_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")
_PRESSURE = re.compile(
    rb"(some|full) avg10=([0-9.]+) avg60=([0-9.]+) avg300=([0-9.]+) total=([0-9]+)"
)
_IO_STAT = re.compile(
    rb"(\d+):(\d+) rbytes=(\d+) wbytes=(\d+) rios=(\d+) wios=(\d+) dbytes=(\d+) dios=(\d+)"
)
_BLKIO_OPS = {b"Read": 0, b"Write": 1, b"Sync": 2, b"Async": 3, b"Total": 4}
#: a disk's blkio values before its files are read
_NO_BLKIO = {
    **{f"cgroup.blkio.dev.{file}.{field}": 0 for file, _ in BLKIO_FILES for field in BLKIO_FIELDS},
    "cgroup.blkio.dev.sectors": 0,
    "cgroup.blkio.dev.time": 0,
}
#: memory.stat's field -> its cgroup.memory.stat.* name
_MEMORY_FIELDS = {field.encode(): memory_stat_name(field) for field, *_ in MEMORY_STAT}


@dataclass(frozen=True)
class Mount:
    """A cgroup filesystem: where it is mounted, its version, its mount options (v1)."""

    path: str
    version: int
    options: tuple[str, ...] = ()


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def first_line(path: str) -> bytes | None:
    """PATH's first line without its newline; None if it cannot be read or is empty."""
    data = _read(path)
    if not data:
        return None
    return data.split(b"\n", 1)[0]


def number(path: str) -> int | None:
    """The unsigned number PATH starts with (0 for a word, such as "max", as strtoull
    reads it); None if PATH cannot be read or holds 2**64-1, pmdaproc's "no value"."""
    line = first_line(path)
    if line is None:
        return None
    found = _NUMBER.match(line)
    value = 0 if found is None else _strtoull(found.group(1)) & _NO_VALUE
    return None if value == _NO_VALUE else value


def _strtoull(digits: bytes) -> int:
    """DIGITS as strtoull reads them with base 0: 0x hexadecimal, 0 octal, else decimal."""
    if digits[:2] in (b"0x", b"0X"):
        return int(digits[2:], 16)
    if digits.startswith(b"0") and len(digits) > 1:
        octal = re.match(rb"[0-7]*", digits[1:])
        return int(octal.group(0) or b"0", 8) if octal else 0
    return int(digits)


def signed(path: str) -> int | None:
    """The signed number PATH starts with (0 for a word); None if it cannot be read."""
    line = first_line(path)
    if line is None:
        return None
    found = _SIGNED.match(line)
    return 0 if found is None else int(found.group(1))


def keyed(path: str) -> dict[bytes, int]:
    """A "name value" file (cpu.stat, memory.stat, cpuacct.stat) as {name: value}, a
    value of 2**64-1 left out (pmdaproc's "no value")."""
    values: dict[bytes, int] = {}
    for line in (_read(path) or b"").splitlines():
        words = line.split()
        if len(words) >= 2 and words[1].isdigit():
            value = int(words[1]) & _NO_VALUE
            if value != _NO_VALUE:
                values.setdefault(words[0], value)
    return values


def text(path: str) -> str:
    """A one-line text file (cpuset.cpus) without its newline; "" if it cannot be read."""
    line = first_line(path)
    return "" if line is None else line.decode("utf-8", "replace")


def unescape(name: str) -> str:
    """NAME with systemd's \\xHH escapes (as in "foo\\x2dbar.service") undone."""
    if "\\" not in name:
        return name
    raw = _ESCAPE.sub(lambda m: bytes((int(m.group(1), 16),)), os.fsencode(name))
    return raw.decode("utf-8", "replace")


def container_id(name: str) -> str:
    """The container a group NAME is for, pmdaproc's guess: its last path element
    (below the top) a 64-character id, or "docker-ID.scope" or "libpod-ID.scope"
    with one; "" if none."""
    slash = name.rfind("/")
    if slash <= 0:
        return ""
    tail = name[slash + 1 :]
    if tail.startswith(("docker-", "libpod-")):
        ident, dot, _ = tail[7:].partition(".")
        return ident if dot and len(ident) == 64 else ""
    return tail if len(tail) == 64 else ""


def walk(top: str) -> Iterator[tuple[str, str]]:
    """Each group at and below directory TOP: (its path, its name), top down and in
    directory order (a group's own groups before its next sibling), as pmdaproc's
    cgroup_scan visits them."""
    if os.path.isdir(top):
        yield top, "/"
        yield from _below(top, "")


def _below(path: str, name: str) -> Iterator[tuple[str, str]]:
    try:
        with os.scandir(path) as entries:
            found = [
                (entry.path, f"{name}/{entry.name}")
                for entry in entries
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=True)
            ]
    except OSError:
        return
    for child, child_name in found:
        yield child, child_name
        yield from _below(child, child_name)


def _kbytes(sectors: int) -> int:
    """512-byte sectors in kilobytes."""
    return sectors >> 1


class Snapshot:
    """The cgroup filesystems as one request sees them: each part read when first
    asked for, at most once (the agent starts a new snapshot per request)."""

    def __init__(self, root: str = "", hz: int = 100) -> None:
        """ROOT prefixes every path read (PROC_STATSPATH); HZ converts blkio.time."""
        self.root = root
        self.hz = hz or 100

    # -- the controllers and the filesystems -----------------------------------------

    @cached_property
    def subsystems(self) -> dict[str, tuple[int, int, int]]:
        """/proc/cgroups: {controller: (hierarchy, number of cgroups, enabled)}."""
        out: dict[str, tuple[int, int, int]] = {}
        for line in (_read(f"{self.root}/proc/cgroups") or b"").splitlines():
            words = line.split()
            if not words or words[0].startswith(b"#") or len(words) < 4:
                continue
            try:
                numbers = tuple(int(w) & 0xFFFFFFFF for w in words[1:4])
            except ValueError:
                continue
            name = words[0].decode("utf-8", "replace")
            out.setdefault(name, numbers)  # type: ignore[arg-type]
        return out

    @cached_property
    def mounts(self) -> list[Mount]:
        """The cgroup and cgroup2 filesystems of /proc/mounts, a path listed once."""
        found: dict[str, Mount] = {}
        for line in (_read(f"{self.root}/proc/mounts") or b"").splitlines():
            words = line.decode("utf-8", "replace").split()
            if len(words) < 4 or words[2] not in ("cgroup", "cgroup2"):
                continue
            version = 2 if words[2] == "cgroup2" else 1
            options = tuple(words[3].split(",")) if version == 1 else ()
            found.setdefault(words[1], Mount(words[1], version, options))
        return list(found.values())

    @cached_property
    def version(self) -> int:
        """2 when only cgroup2 is mounted, else 1 (pmdaproc's cgroup_version)."""
        versions = {m.version for m in self.mounts}
        return 2 if versions == {2} else 1

    def mount_subsystems(self, mount: Mount) -> str:
        """cgroup.mounts.subsys: the controllers among MOUNT's options, or "?"."""
        known = self.subsystems
        names = [option for option in mount.options if option in known]
        return ",".join(names) if names else "?"

    @cached_property
    def disks(self) -> dict[bytes, str]:
        """{b"MAJOR:MINOR": disk name} from /proc/diskstats, loop and ram devices left out."""
        out: dict[bytes, str] = {}
        for line in (_read(f"{self.root}/proc/diskstats") or b"").splitlines():
            words = line.split()
            if len(words) < 4 or words[2].startswith((b"loop", b"ram")):
                continue
            out.setdefault(words[0] + b":" + words[1], words[2].decode("utf-8", "replace"))
        return out

    # -- the groups of each controller ---------------------------------------------

    def _groups(self, controller: str | None, needs: str | None = None) -> list[tuple[str, str]]:
        """(path, instance name) of each group: version 1, every group of the filesystems
        mounted with CONTROLLER (none for None); version 2, those of the cgroup2
        filesystems that have the controller's file NEEDS (every one without NEEDS)."""
        if self.version == 2:
            tops = [m for m in self.mounts if m.version == 2]
        elif controller is None:
            return []
        else:
            tops = [m for m in self.mounts if m.version == 1 and controller in m.options]
            needs = None
        seen: dict[str, str] = {}
        for mount in tops:
            for path, name in walk(self.root + mount.path):
                if needs is not None and not os.access(f"{path}/{needs}", os.R_OK):
                    continue
                seen.setdefault(unescape(name), path)
        return [(path, name) for name, path in seen.items()]

    def _each(self, groups: list[tuple[str, str]], read: Callable[[str, str], dict]) -> Groups:
        return {name: read(path, name) for path, name in groups}

    @cached_property
    def cpuset(self) -> Groups:
        groups = self._groups("cpuset")
        return self._each(
            groups,
            lambda path, name: {
                "cgroup.cpuset.cpus": text(f"{path}/cpuset.cpus"),
                "cgroup.cpuset.mems": text(f"{path}/cpuset.mems"),
                "cgroup.cpuset.id.container": container_id(name),
            },
        )

    @cached_property
    def cpuacct(self) -> tuple[Groups, Groups]:
        """(per group, per group and CPU): cpuacct is a version 1 controller only."""
        groups = [] if self.version == 2 else self._groups("cpuacct")
        percpu: Groups = {}

        def read(path: str, name: str) -> dict[str, Any]:
            stat = keyed(f"{path}/cpuacct.stat")
            usages = (_read(f"{path}/cpuacct.usage_percpu") or b"").split()
            for cpu, usage in enumerate(usages):
                if usage.isdigit():
                    percpu[f"{name}::cpu{cpu}"] = {"cgroup.cpuacct.usage_percpu": int(usage)}
            return {
                "cgroup.cpuacct.stat.user": stat.get(b"user"),
                "cgroup.cpuacct.stat.system": stat.get(b"system"),
                "cgroup.cpuacct.usage": number(f"{path}/cpuacct.usage"),
                "cgroup.cpuacct.id.container": container_id(name),
            }

        return self._each(groups, read), percpu

    @cached_property
    def cpusched(self) -> Groups:
        def read(path: str, name: str) -> dict[str, Any]:
            stat = keyed(f"{path}/cpu.stat")
            quota = signed(f"{path}/cpu.cfs_quota_us")
            return {
                "cgroup.cpusched.shares": number(f"{path}/cpu.shares"),
                "cgroup.cpusched.periods": stat.get(b"nr_periods"),
                "cgroup.cpusched.throttled": stat.get(b"nr_throttled"),
                "cgroup.cpusched.throttled_time": stat.get(b"throttled_time"),
                "cgroup.cpusched.cfs_period": number(f"{path}/cpu.cfs_period_us"),
                "cgroup.cpusched.cfs_quota": None if quota == -1 else quota,  # -1: no limit
                "cgroup.cpusched.id.container": container_id(name),
            }

        return self._each(self._groups("cpu", "cpu.shares"), read)

    @cached_property
    def memory(self) -> Groups:
        def read(path: str, name: str) -> dict[str, Any]:
            values: dict[str, Any] = {
                _MEMORY_FIELDS[field]: value
                for field, value in keyed(f"{path}/memory.stat").items()
                if field in _MEMORY_FIELDS
            }
            values["cgroup.memory.current"] = number(f"{path}/memory.current")
            values["cgroup.memory.usage"] = number(f"{path}/memory.usage_in_bytes")
            values["cgroup.memory.limit"] = number(f"{path}/memory.limit_in_bytes")
            values["cgroup.memory.failcnt"] = number(f"{path}/memory.failcnt")
            values["cgroup.memory.id.container"] = container_id(name)
            return values

        return self._each(self._groups("memory", "memory.stat"), read)

    @cached_property
    def netclass(self) -> Groups:
        return self._each(
            self._groups("net_cls", "net_cls.classid"),
            lambda path, name: {
                "cgroup.netclass.classid": number(f"{path}/net_cls.classid"),
                "cgroup.netclass.id.container": container_id(name),
            },
        )

    @cached_property
    def blkio(self) -> tuple[Groups, Groups]:
        """(per group: the disks' sums, per group and disk)."""
        per_disk: Groups = {}
        return self._each(
            self._groups("blkio", "blkio.time"), lambda p, n: self._blkio(p, n, per_disk)
        ), per_disk

    def _blkio(self, path: str, name: str, per_disk: Groups) -> dict[str, Any]:
        """One group's blkio sums, its disks' values added to PER_DISK (a disk's values
        that a file leaves out are 0, as pmdaproc's)."""
        sums: dict[str, Any] = {"cgroup.blkio.id.container": container_id(name)}
        disks: dict[str, dict[str, Any]] = {}
        for file, _ in BLKIO_FILES:
            totals = [0] * 5
            for disk, counts in self._blkio_ops(f"{path}/blkio.{file}"):
                values = disks.setdefault(disk, dict(_NO_BLKIO))
                for field, count in zip(BLKIO_FIELDS, counts, strict=True):
                    values[f"cgroup.blkio.dev.{file}.{field}"] = count
                totals = [t + c for t, c in zip(totals, counts, strict=True)]
            for field, total in zip(BLKIO_FIELDS, totals, strict=True):
                sums[f"cgroup.blkio.all.{file}.{field}"] = total
        for file, convert in (("sectors", _kbytes), ("time", self._ms)):
            total = 0
            for disk, value in self._blkio_values(f"{path}/blkio.{file}"):
                disks.setdefault(disk, dict(_NO_BLKIO))[f"cgroup.blkio.dev.{file}"] = convert(value)
                total += value
            sums[f"cgroup.blkio.all.{file}"] = convert(total)
        for disk, values in disks.items():
            per_disk[f"{name}::{disk}"] = values
        return sums

    def _ms(self, jiffies: int) -> int:
        """blkio.time to milliseconds, as pmdaproc converts it (as clock ticks)."""
        return jiffies * 1000 // self.hz & 0xFFFFFFFFFFFFFFFF

    def _blkio_ops(self, path: str) -> Iterator[tuple[str, list[int]]]:
        """A blkio file of "MAJ:MIN Op N" lines: (disk, [read, write, sync, async,
        total]) for each disk whose Total line it has."""
        counts = [0] * 5
        device = None
        for line in (_read(path) or b"").splitlines():
            words = line.split()
            if len(words) < 3 or words[1] not in _BLKIO_OPS or not words[2].isdigit():
                continue
            disk = self.disks.get(words[0])
            if disk is None:
                continue
            if words[0] != device:
                counts, device = [0] * 5, words[0]
            op = _BLKIO_OPS[words[1]]
            counts[op] = int(words[2])
            if op == 4:
                yield disk, list(counts)

    def _blkio_values(self, path: str) -> Iterator[tuple[str, int]]:
        """A blkio file of "MAJ:MIN N" lines: (disk, N) of each known disk."""
        for line in (_read(path) or b"").splitlines():
            words = line.split()
            if len(words) >= 2 and words[1].isdigit() and words[0] in self.disks:
                yield self.disks[words[0]], int(words[1])

    # -- version 2: every group of the cgroup2 filesystem ------------------------------

    @cached_property
    def v2_groups(self) -> list[tuple[str, str]]:
        return self._groups(None) if self.version == 2 else []

    @cached_property
    def cpu_stat(self) -> Groups:
        def read(path: str, name: str) -> dict[str, Any]:
            stat = keyed(f"{path}/cpu.stat")
            return {
                "cgroup.cpu.stat.user": stat.get(b"user_usec"),
                "cgroup.cpu.stat.system": stat.get(b"system_usec"),
                "cgroup.cpu.stat.usage": stat.get(b"usage_usec"),
            }

        return self._each(self.v2_groups, read)

    def pressure(self, resource: str, kinds: tuple[str, ...]) -> Groups:
        """cgroup.pressure.RESOURCE.* of each group, from RESOURCE.pressure's KINDS lines."""

        def read(path: str, name: str) -> dict[str, Any]:
            values: dict[str, Any] = {}
            for line in (_read(f"{path}/{resource}.pressure") or b"").splitlines():
                found = _PRESSURE.match(line)
                if found is None or found.group(1).decode() not in kinds:
                    continue
                prefix = f"cgroup.pressure.{resource}.{found.group(1).decode()}"
                avg10, avg60, avg300 = (float(found.group(i)) for i in (2, 3, 4))
                values[f"{prefix}.avg10sec"] = avg10
                values[f"{prefix}.avg1min"] = avg60
                values[f"{prefix}.avg5min"] = avg300
                values[f"{prefix}.total"] = int(found.group(5))
            return values

        return self._each(self.v2_groups, read)

    @cached_property
    def io_stat(self) -> Groups:
        """cgroup.io.stat.* of each group and disk, from io.stat."""
        out: Groups = {}
        leaves = ("rbytes", "wbytes", "rios", "wios", "dbytes", "dios")
        for path, name in self.v2_groups:
            for line in (_read(f"{path}/io.stat") or b"").splitlines():
                found = _IO_STAT.match(line)
                if found is None:
                    continue
                disk = self.disks.get(found.group(1) + b":" + found.group(2))
                if disk is not None:
                    out[f"{name}::{disk}"] = {
                        f"cgroup.io.stat.{leaf}": int(found.group(3 + i))
                        for i, leaf in enumerate(leaves)
                    }
        return out
