"""How each proc.* value comes from the files of /proc/PID, as pmdaproc reads them.

Tables, not code, where the kernel is table-shaped: /proc/PID/stat is a list of
fields by position, /proc/PID/status, io and smaps_rollup are "Key: value" lines.
Each parser takes a file's bytes and the metrics the fetch asked for, and gives
their values for that process, in the units pmdaproc exports (ticks become
milliseconds, pages and bytes become Kbytes); a 32-bit metric fed by a wider
kernel field keeps its low 32 bits, as pmdaproc's C assignment does.
"""

from __future__ import annotations

import grp
import os
import pwd
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_LOW32 = 0xFFFFFFFF

#: /proc/PID/stat: metric -> (position among the fields after "(comm)", how to read it).
#: Position 0 is the state (the 3rd field of proc(5)).  The kinds: "u32" the low 32 bits,
#: "i32" signed, "u64" as it is, "ms" clock ticks as milliseconds, "kb" bytes as Kbytes,
#: "pages" pages as Kbytes, "tpgid" signed and absent when negative (no controlling tty).
STAT_FIELDS: dict[str, tuple[int, str]] = {
    "proc.psinfo.ppid": (1, "u32"),
    "proc.psinfo.pgrp": (2, "u32"),
    "proc.psinfo.session": (3, "u32"),
    "proc.psinfo.tty": (4, "u32"),
    "proc.psinfo.tty_pgrp": (5, "tpgid"),
    "proc.psinfo.flags": (6, "u32"),
    "proc.psinfo.minflt": (7, "u32"),
    "proc.psinfo.cmin_flt": (8, "u32"),
    "proc.psinfo.maj_flt": (9, "u32"),
    "proc.psinfo.cmaj_flt": (10, "u32"),
    "proc.psinfo.utime": (11, "ms"),
    "proc.psinfo.stime": (12, "ms"),
    "proc.psinfo.cutime": (13, "ms"),
    "proc.psinfo.cstime": (14, "ms"),
    "proc.psinfo.priority": (15, "i32"),
    "proc.psinfo.nice": (16, "i32"),
    # (17, the thread count, is not exported from here: proc.psinfo.threads reads status)
    "proc.psinfo.it_real_value": (18, "u32"),
    "proc.psinfo.start_time": (19, "ms"),
    "proc.psinfo.vsize": (20, "kb"),
    "proc.psinfo.rss": (21, "pages"),
    "proc.psinfo.rss_rlim": (22, "kb"),
    "proc.psinfo.start_code": (23, "u32"),
    "proc.psinfo.end_code": (24, "u32"),
    "proc.psinfo.start_stack": (25, "u32"),
    "proc.psinfo.esp": (26, "u32"),
    "proc.psinfo.eip": (27, "u32"),
    "proc.psinfo.signal": (28, "u32"),
    "proc.psinfo.blocked": (29, "u32"),
    "proc.psinfo.sigignore": (30, "u32"),
    "proc.psinfo.sigcatch": (31, "u32"),
    "proc.psinfo.wchan": (32, "u64"),
    "proc.psinfo.nswap": (33, "u32"),
    "proc.psinfo.cnswap": (34, "u32"),
    "proc.psinfo.exit_signal": (35, "u32"),
    "proc.psinfo.processor": (36, "u32"),
    "proc.psinfo.rt_priority": (37, "u32"),
    "proc.psinfo.policy": (38, "u32"),
    "proc.psinfo.delayacct_blkio_time": (39, "ms"),
    "proc.psinfo.guest_time": (40, "ms"),
    "proc.psinfo.cguest_time": (41, "ms"),
}

#: Scheduling policies by number, as pmdaproc names them (anything else is "?").
POLICY_NAMES = {0: "NORMAL", 1: "FIFO", 2: "RR", 3: "BATCH", 5: "IDLE", 6: "DEADLN"}

#: /proc/PID/statm: metric -> position (pages, exported as Kbytes).
STATM_FIELDS = {
    "proc.memory.size": 0,
    "proc.memory.rss": 1,
    "proc.memory.share": 2,
    "proc.memory.textrss": 3,
    "proc.memory.librss": 4,
    "proc.memory.datrss": 5,
    "proc.memory.dirty": 6,
}

#: /proc/PID/status: numeric metrics -> (line key, position in the line); a line the
#: kernel does not print counts 0 (pmdaproc's zeroed record).
STATUS_NUMBERS: dict[str, tuple[bytes, int]] = {
    "proc.id.uid": (b"Uid", 0),
    "proc.id.euid": (b"Uid", 1),
    "proc.id.suid": (b"Uid", 2),
    "proc.id.fsuid": (b"Uid", 3),
    "proc.id.gid": (b"Gid", 0),
    "proc.id.egid": (b"Gid", 1),
    "proc.id.sgid": (b"Gid", 2),
    "proc.id.fsgid": (b"Gid", 3),
    "proc.memory.vmsize": (b"VmSize", 0),
    "proc.memory.vmlock": (b"VmLck", 0),
    "proc.memory.vmrss": (b"VmRSS", 0),
    "proc.memory.vmdata": (b"VmData", 0),
    "proc.memory.vmstack": (b"VmStk", 0),
    "proc.memory.vmexe": (b"VmExe", 0),
    "proc.memory.vmlib": (b"VmLib", 0),
    "proc.memory.vmswap": (b"VmSwap", 0),
    "proc.psinfo.threads": (b"Threads", 0),
    "proc.psinfo.vctxsw": (b"voluntary_ctxt_switches", 0),
    "proc.psinfo.nvctxsw": (b"nonvoluntary_ctxt_switches", 0),
    "proc.memory.vmpeak": (b"VmPeak", 0),
    "proc.memory.vmpin": (b"VmPin", 0),
    "proc.memory.vmhwm": (b"VmHWM", 0),
    "proc.memory.vmpte": (b"VmPTE", 0),
}
#: status metrics whose line may be absent: no value then (PM_ERR_APPVERSION in pmdaproc).
STATUS_OPTIONAL_NUMBERS = {
    "proc.psinfo.ngid": b"Ngid",
    "proc.psinfo.tgid": b"Tgid",
    "proc.namespaces.envid": b"envID",
}
#: status metrics that are the rest of a line, as text.
STATUS_TEXTS = {
    "proc.psinfo.signal_s": b"SigPnd",
    "proc.psinfo.blocked_s": b"SigBlk",
    "proc.psinfo.sigignore_s": b"SigIgn",
    "proc.psinfo.sigcatch_s": b"SigCgt",
    "proc.psinfo.cpusallowed": b"Cpus_allowed_list",
    "proc.namespaces.tgid": b"NStgid",
    "proc.namespaces.pid": b"NSpid",
    "proc.namespaces.pgid": b"NSpgid",
    "proc.namespaces.sid": b"NSsid",
}
#: user and group names: metric -> the numeric metric whose id they name, and the table.
STATUS_NAMES = {
    "proc.id.uid_nm": ("proc.id.uid", "user"),
    "proc.id.euid_nm": ("proc.id.euid", "user"),
    "proc.id.suid_nm": ("proc.id.suid", "user"),
    "proc.id.fsuid_nm": ("proc.id.fsuid", "user"),
    "proc.id.gid_nm": ("proc.id.gid", "group"),
    "proc.id.egid_nm": ("proc.id.egid", "group"),
    "proc.id.sgid_nm": ("proc.id.sgid", "group"),
    "proc.id.fsgid_nm": ("proc.id.fsgid", "group"),
}

#: /proc/PID/io: metric -> line key.
IO_FIELDS = {
    "proc.io.rchar": b"rchar",
    "proc.io.wchar": b"wchar",
    "proc.io.syscr": b"syscr",
    "proc.io.syscw": b"syscw",
    "proc.io.read_bytes": b"read_bytes",
    "proc.io.write_bytes": b"write_bytes",
    "proc.io.cancelled_write_bytes": b"cancelled_write_bytes",
}

#: /proc/PID/schedstat: metric -> position.
SCHEDSTAT_FIELDS = {
    "proc.schedstat.cpu_time": 0,
    "proc.schedstat.run_delay": 1,
    "proc.schedstat.pcount": 2,
}

#: /proc/PID/smaps_rollup: metric -> line key (Kbytes as printed).
SMAPS_FIELDS = {
    "proc.smaps.rss": b"Rss",
    "proc.smaps.pss": b"Pss",
    "proc.smaps.pss_anon": b"Pss_Anon",
    "proc.smaps.pss_file": b"Pss_File",
    "proc.smaps.pss_shmem": b"Pss_Shmem",
    "proc.smaps.shared_clean": b"Shared_Clean",
    "proc.smaps.shared_dirty": b"Shared_Dirty",
    "proc.smaps.private_clean": b"Private_Clean",
    "proc.smaps.private_dirty": b"Private_Dirty",
    "proc.smaps.referenced": b"Referenced",
    "proc.smaps.anonymous": b"Anonymous",
    "proc.smaps.lazyfree": b"LazyFree",
    "proc.smaps.anonhugepages": b"AnonHugePages",
    "proc.smaps.shmempmdmapped": b"ShmemPmdMapped",
    "proc.smaps.filepmdmapped": b"FilePmdMapped",
    "proc.smaps.shared_hugetlb": b"Shared_Hugetlb",
    "proc.smaps.private_hugetlb": b"Private_Hugetlb",
    "proc.smaps.swap": b"Swap",
    "proc.smaps.swappss": b"SwapPss",
    "proc.smaps.locked": b"Locked",
}


def stat_converters(hz: int, pagesize: int) -> dict[str, Callable[[bytes], Any]]:
    """A converter per kind of STAT_FIELDS, for this machine's clock rate and page size."""

    def tpgid(text: bytes) -> int | None:
        value = int(text)
        return None if value < 0 else value & _LOW32

    return {
        "u32": lambda text: int(text) & _LOW32,
        "i32": int,
        "u64": int,
        "ms": lambda text: int(text) * 1000 // hz,
        "kb": lambda text: int(text) // 1024,
        "pages": lambda text: int(text) * pagesize // 1024,
        "tpgid": tpgid,
    }


def split_stat(data: bytes) -> tuple[bytes, list[bytes]]:
    """(comm, the fields after it) of /proc/PID/stat; comm may hold spaces and parens."""
    close = data.rfind(b")")
    return data[data.find(b"(") + 1 : close], data[close + 2 :].split()


def status_lines(data: bytes) -> dict[bytes, bytes]:
    """/proc/PID/status as {key: rest of the line, stripped}."""
    lines = {}
    for line in data.split(b"\n"):
        key, sep, rest = line.partition(b":")
        if sep:
            lines[key] = rest.strip()
    return lines


def keyed_numbers(data: bytes) -> dict[bytes, int]:
    """{key: first number} of "Key: number [kB]" lines (io, smaps_rollup)."""
    numbers = {}
    for line in data.split(b"\n"):
        key, sep, rest = line.partition(b":")
        if sep:
            words = rest.split()
            if words and words[0].isdigit():
                numbers[key] = int(words[0])
    return numbers


def cgroup_text(data: bytes) -> tuple[str, str]:
    """(proc.psinfo.cgroups, proc.id.container) from /proc/PID/cgroup.

    The cgroups as ps(1) prints them: each newline-ended "N:controllers:/path" line
    without its "N:", joined by ";".  The container id is pmdaproc's guess from the
    first cpuset line: a 64-character id as the last path element, or inside a
    "/docker-ID.scope" or "/libpod-ID.scope" element.
    """
    parts: list[str] = []
    container = ""
    found = False
    text = data.decode("utf-8", "surrogateescape")
    for line in text.split("\n")[:-1]:  # a last piece without its newline is left out
        _, sep, rest = line.partition(":")
        if not sep:
            continue
        parts.append(rest)
        if not found and rest.startswith("cpuset:"):
            guess = _container_id(rest[7:])
            if guess is not None:
                container, found = guess, True
    return ";".join(parts), container


def _container_id(path: str) -> str | None:
    slash = path.rfind("/")
    if slash <= 0:
        return None
    tail = path[slash:]
    if tail.startswith(("/libpod-", "/docker-")):
        ident, dot, _ = tail[8:].partition(".")
        return ident if dot and len(ident) == 64 else None
    if len(tail) - 1 == 65:  # pmdaproc's arithmetic: one character past a 64-long id
        return tail[1:65]
    return None


def joined_nul_text(data: bytes) -> str:
    """A NUL-separated file (cmdline, environ) as one line: trailing NULs dropped,
    the others become spaces."""
    return data.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "surrogateescape")


#: pmdaproc reads a command line into a 4096-byte buffer after "%06d ", keeping one byte
#: for its NUL: psargs holds at most this many bytes, less the pid's digits past six
CMDLINE_BUFFER = 4096


def command_line(where: str, pid: int) -> str:
    """psargs of the process at WHERE (/proc/PID or a thread's directory): its command
    line, NULs as spaces, cut to the bytes pmdaproc keeps; "" if it has none."""
    keep = CMDLINE_BUFFER - len(f"{pid:06d} ") - 1
    data = read_file(f"{where}/cmdline", whole=keep > 16384)
    return joined_nul_text(data[:keep]) if data else ""


def read_file(path: str, whole: bool = False) -> bytes | None:
    """PATH's bytes (to the end if WHOLE, else its first 16 KiB); None if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 16384)
        if whole and len(data) == 16384:
            parts = [data]
            while chunk := os.read(fd, 65536):
                parts.append(chunk)
            data = b"".join(parts)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


@lru_cache(maxsize=1 << 16)
def user_name(uid: int) -> str | None:
    """The name of user UID, None if it has none (kept, as pmdaproc keeps them)."""
    return _name_of(pwd.getpwuid, uid)


@lru_cache(maxsize=1 << 16)
def group_name(gid: int) -> str | None:
    """The name of group GID, None if it has none."""
    return _name_of(grp.getgrgid, gid)


def _name_of(look: Callable[[int], Any], ident: int) -> str | None:
    try:
        return look(ident)[0]  # (pw_name, gr_name)
    except KeyError:
        return None


def cgroup_members(cgroup: str, threads: bool = False) -> set[int]:
    """The pids (or with THREADS the thread ids) in CGROUP, a path below the cgroup
    version 2 mount (or, without one, below the first version 1 hierarchy): what
    proc.control.perclient.cgroups restricts a client's processes to.  Nothing if
    the cgroup cannot be read, as in pmdaproc."""
    mounts = _read_text("/proc/self/mounts")
    roots = [line.split()[1] for line in mounts.splitlines() if line.split()[2:3] == ["cgroup2"]]
    files = ["cgroup.threads" if threads else "cgroup.procs"]
    if not roots:
        roots = [line.split()[1] for line in mounts.splitlines() if line.split()[2:3] == ["cgroup"]]
        files = ["tasks" if threads else "cgroup.procs"]
    for root in roots[:1]:
        text = _read_text(f"{root}/{cgroup.strip('/')}/{files[0]}")
        return {int(word) for word in text.split() if word.isdigit()}
    return set()


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


class TtyNames:
    """Controlling-terminal names by device number, as pmdaproc finds them: the ranges
    of /proc/tty/drivers first, then the character devices of /dev/pts and /dev."""

    def __init__(self, root: str = "") -> None:
        self._root = root
        self._drivers: list[tuple[str, int, int, int]] | None = None
        self._found: dict[int, str] = {}

    def name(self, dev: int) -> str:
        if dev == 0:
            return "?"
        found = self._found.get(dev)
        if found is None:
            found = self._found[dev] = self._lookup(dev)
        return found

    def _lookup(self, dev: int) -> str:
        major, minor = os.major(dev), os.minor(dev)
        for path, drv_major, low, high in self._driver_table():
            if drv_major != major:
                continue
            if minor == low == high:
                return path
            if minor < low or minor > high:
                break
            return f"{path}/{minor}"
        for directory in ("/dev/pts", "/dev"):
            name = _char_device(directory, dev)
            if name is not None:
                return name
        return "?"

    def _driver_table(self) -> list[tuple[str, int, int, int]]:
        if self._drivers is None:
            self._drivers = []
            try:
                with open(f"{self._root}/proc/tty/drivers", "rb") as f:
                    lines = f.read().decode("utf-8", "replace").splitlines()
            except OSError:
                lines = []
            for line in lines:
                words = line.split()
                if len(words) < 5 or not words[2].isdigit():
                    break  # pmdaproc stops at the first line it cannot read
                path = words[1][5:] if words[1].startswith("/dev/") else words[1]
                low, _, high = words[3].partition("-")
                if not low.isdigit() or (high and not high.isdigit()):
                    break
                self._drivers.append((path, int(words[2]), int(low), int(high or low)))
        return self._drivers


def _char_device(directory: str, dev: int) -> str | None:
    import stat

    try:
        entries = os.listdir(directory)
    except OSError:
        return None
    for entry in entries:
        if entry.startswith("."):
            continue
        path = f"{directory}/{entry}"
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == dev:
            return path[5:]  # without "/dev/"
    return None


#: /proc/PID/stat states and the run queue count they go in (Z and vsize 0 aside).
RUNQ_STATES = {
    b"R": "runnable",
    b"S": "sleeping",
    b"t": "stopped",
    b"T": "stopped",
    b"D": "blocked",
    b"P": "blocked",
}


def security_label(data: bytes) -> str | None:
    """A security label; none when the file is empty (no security module: EINVAL)."""
    return data.rstrip(b"\n\0").decode("utf-8", "surrogateescape") if data else None


def oom_score(data: bytes) -> int | None:
    """proc.psinfo.oom_score from /proc/PID/oom_score: its digits, kept to 32 bits."""
    return int(data) & 0xFFFFFFFF if data.strip().isdigit() else None


def autogroup(data: bytes) -> tuple[int, int]:
    """(id, nice) of "/autogroup-ID nice N", read as sscanf would: what is missing is 0."""
    words = data.split()
    ident = nice = 0
    if words and words[0].startswith(b"/autogroup-") and words[0][11:].isdigit():
        ident = int(words[0][11:])
        if len(words) > 2 and words[1] == b"nice":
            try:
                nice = int(words[2])
            except ValueError:
                nice = 0
    return ident, nice


def status_kb(line: bytes | None) -> int:
    """The number of a status "VmXxx:   123 kB" line; 0 if the kernel printed none."""
    if not line:
        return 0
    return int(line.split()[0])
