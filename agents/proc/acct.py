"""acct.*: processes that ended lately, from the kernel's process accounting, as pmdaproc
reads it.

The kernel appends a record (struct acct_v3, 64 bytes) to an accounting file for each
process that exits, once accounting is switched on (acct(2)).  Like pmdaproc, the agent
reads the system's file ($PCP_PACCT_SYSTEM_PATH, /var/account/pacct) when the system
accounts (psacct, acct): it checks that by starting a process that exits at once and
seeing the file grow.  Without one, and only once a client has stored 1 in
acct.control.enable_acct, it switches accounting on into a file of its own
($PCP_VAR_DIR/pmcd/pacct), which it truncates at start, replaces when it outgrows
acct.control.file_size_threshold (checked every acct.control.refresh seconds) and
removes, accounting off again, when it is disabled or stops.

Each fetch of acct.* by a client with credentials reads the records added since the
last; a process is an instance (id the pid, name its command) for
acct.control.lifetime seconds after it ended, among the last 5000.  Only root may store
the controls.  Where pmdaproc checks whether accounting still runs (every
check_acct_interval seconds) and retries a failed open (every open_retry_interval),
so do we; its timer's size check is made at the first fetch after each interval.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

#: struct acct_v3: flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime,
#: then utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t), comm
RECORD = struct.Struct("=BBHIIIIIIf8H16s")
AFORK, ASU, ACORE, AXSIG = 0x01, 0x02, 0x08, 0x10
RING = 5000  # the most ended processes kept


@dataclass(frozen=True)
class Record:
    """One accounting record, its comp_t counts decoded."""

    flag: int
    tty: int
    exitcode: int
    uid: int
    gid: int
    pid: int
    ppid: int
    btime: int
    etime: float  # clock ticks
    counts: tuple[int, ...]  # utime, stime (ticks), mem, io, rw, minflt, majflt, swaps
    comm: str

    def end(self, hz: int) -> int:
        """When the process ended (seconds since the epoch), as pmdaproc works it out."""
        return self.btime + int(self.etime / hz)


def comp_t(value: int) -> int:
    """A comp_t: 13 bits of mantissa, 3 of base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 0x7))


def parse(data: bytes) -> Record | None:
    """The version 3 record of DATA (RECORD.size bytes); None for another version."""
    fields = RECORD.unpack(data)
    flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime, *counts, comm = fields
    if version & 0x0F != 3:
        return None
    return Record(
        flag, tty, exitcode, uid, gid, pid, ppid, btime, etime,
        tuple(comp_t(c) for c in counts), comm.split(b"\0", 1)[0].decode("utf-8", "replace"),
    )  # fmt: skip


def values(record: Record, hz: int, tty_name: Any, user: Any, group: Any) -> dict[str, Any]:
    """acct.psinfo.*, acct.id.*, acct.flag.* of RECORD (TTY_NAME, USER and GROUP name a
    tty device, a uid and a gid)."""
    utime, stime, mem, io, rw, minflt, majflt, swaps = record.counts
    return {
        "acct.psinfo.tty": record.tty,
        "acct.psinfo.ttyname": tty_name(record.tty),
        "acct.psinfo.exitcode": record.exitcode,
        "acct.psinfo.pid": record.pid,
        "acct.psinfo.ppid": record.ppid,
        "acct.psinfo.btime": record.btime,
        "acct.psinfo.etime": record.etime / hz,
        "acct.psinfo.utime": utime / hz,
        "acct.psinfo.stime": stime / hz,
        "acct.psinfo.mem": mem,
        "acct.psinfo.io": io,
        "acct.psinfo.rw": rw,
        "acct.psinfo.minflt": minflt,
        "acct.psinfo.majflt": majflt,
        "acct.psinfo.swaps": swaps,
        "acct.id.uid": record.uid,
        "acct.id.gid": record.gid,
        "acct.id.uid_nm": user(record.uid) or "",
        "acct.id.gid_nm": group(record.gid) or "",
        "acct.flag.fork": int(bool(record.flag & AFORK)),
        "acct.flag.su": int(bool(record.flag & ASU)),
        "acct.flag.core": int(bool(record.flag & ACORE)),
        "acct.flag.xsig": int(bool(record.flag & AXSIG)),
    }


def _acct(path: str | None) -> bool:
    """acct(2): switch accounting on into PATH, or off (None); whether it worked."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.acct(None if path is None else os.fsencode(path)) == 0


def accounts(fd: int) -> bool:
    """Whether the kernel appends to open file FD: a process started to exit at once
    leaves a record there if so."""
    try:
        before = os.fstat(fd).st_size
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return os.fstat(fd).st_size > before
    except OSError:
        return False


class Accounting:
    """The accounting file being read, the controls and the processes that ended lately."""

    def __init__(self, system_path: str, private_path: str, hz: int) -> None:
        self.system_path, self.private_path, self.hz = system_path, private_path, hz or 100
        self.open_retry_interval = 60
        self.check_interval = 600
        self.size_threshold = 10485760
        self.lifetime = 60
        self.refresh_interval = 600
        self.enabled = 0  # acct.control.enable_acct: may we account into our own file
        self.fd = -1
        self.private = False  # the file open is ours (we switched accounting on)
        self.path = ""
        self.size = 0
        self.failed_at = 0.0
        self.checked_at = 0.0
        self.timer_at = time.time()
        self.ended: OrderedDict[int, Record] = OrderedDict()  # pid -> record, oldest first

    # -- the file -------------------------------------------------------------------

    def _open(self, path: str, private: bool) -> bool:
        """Start reading PATH at its end (for PRIVATE, switching accounting on into it
        first): whether the kernel accounts there in version 3 records."""
        if not path:
            return False
        flags = os.O_RDONLY | (os.O_CREAT | os.O_TRUNC if private else 0)
        try:
            fd = os.open(path, flags, 0o400)
        except OSError:
            return False
        size = os.fstat(fd).st_size
        if private and not _acct(path):
            os.close(fd)
            return False
        header = os.pread(fd, 2, 0) if accounts(fd) else b""
        if len(header) < 2 or header[1] & 0x0F != 3:
            if private:
                _acct(None)
            os.close(fd)
            return False
        self.fd, self.private, self.path, self.size = fd, private, path, size
        self.checked_at = time.time()
        return True

    def open(self) -> None:
        """Read the system's file if it is in use, else (when enabled) our own."""
        if self._open(self.system_path, False):
            return
        if self.enabled and self._open(self.private_path, True):
            return
        self.failed_at = time.time()

    def close(self) -> None:
        """Stop reading; switch our own accounting off and remove its file."""
        if self.fd < 0:
            return
        os.close(self.fd)
        if self.private:
            _acct(None)
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.fd, self.private, self.path, self.size = -1, False, "", 0

    def reopen(self) -> None:
        self.close()
        self.open()

    # -- the records ----------------------------------------------------------------

    def refresh(self, now: float) -> None:
        """Read the records added since the last refresh (pmdaproc's refresh_acct)."""
        if self.fd < 0:
            if now - self.failed_at > self.open_retry_interval:
                self.open()
            return
        if now - self.timer_at >= self.refresh_interval:
            self.timer_at = now
            if self.private and self._file_size() > self.size_threshold:
                self.reopen()
                return
        if now - self.checked_at > self.check_interval:
            if not accounts(self.fd):
                self.reopen()
                return
            self.checked_at = now
        self._forget(now)
        size = self._file_size()
        if size < 0:
            self.reopen()
            return
        count = (size - self.size) // RECORD.size
        data = os.pread(self.fd, count * RECORD.size, self.size) if count > 0 else b""
        for at in range(0, len(data) - RECORD.size + 1, RECORD.size):
            record = parse(data[at : at + RECORD.size])
            if record is None:
                self.reopen()
                return
            self._add(record, now)
        self.size += len(data) - len(data) % RECORD.size

    def _file_size(self) -> int:
        try:
            return os.fstat(self.fd).st_size
        except OSError:
            return -1

    def _add(self, record: Record, now: float) -> None:
        if not record.pid or record.pid in self.ended:
            return
        if now - record.end(self.hz) > self.lifetime:
            return
        self.ended[record.pid] = record
        while len(self.ended) > RING:
            self.ended.popitem(last=False)

    def _forget(self, now: float) -> None:
        for pid in [p for p, r in self.ended.items() if now - r.end(self.hz) > self.lifetime]:
            del self.ended[pid]

    def current(self, now: float) -> dict[int, Record]:
        """The processes that ended within the lifetime: {pid: record}."""
        if self.fd < 0:
            return {}
        return {p: r for p, r in self.ended.items() if now - r.end(self.hz) <= self.lifetime}
