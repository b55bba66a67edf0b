"""What else may end a pmlogger run, and who it runs as: -p PID (log for the lifetime of a
process), -x FD (a recording session's control channel, pmRecordControl's) and -U USER.

The logging loop asks `Watch.ended` between samples; it gives the reason logging ends,
in PCP's pmlogger's words, or None to go on.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import select
import sys
from typing import TextIO

from purepcp.pmapi import logfile

#: a control message longer than this is absurd (PCP's MAXPATHLEN)
_MAX_MESSAGE = 4096


def process_exists(pid: int) -> bool:
    """__pmProcessExists: whether PID is a live process (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


class Watch:
    """-p's process and -x's control channel, looked at between samples."""

    def __init__(self, pid: int | None, control_fd: int | None, log: TextIO) -> None:
        self.pid = pid or None  # (-p 0 asks for nothing, as in PCP)
        self.control_fd = control_fd
        self.log = log  # (PCP's pmlogger's stderr is its log)

    def ended(self) -> str | None:
        """Why logging ends now (None: it goes on)."""
        if self.control_fd is not None and self._control_says_stop():
            return "Recording session terminated"
        if self.pid is not None and not process_exists(self.pid):
            return "process from -p has vanished"
        return None

    def _control_says_stop(self) -> bool:
        """A message on -x's channel, if one waits: Q, end of file (the launcher has gone)
        or a message not understood ends the session (PCP asks its user through
        pmconfirm(1) first, and takes no answer as yes: there is no one to ask here); D
        detaches from it; ?, F, P, R and V0 only inform PCP's dialogs, which we lack."""
        fd = self.control_fd
        assert fd is not None
        try:
            ready, _, _ = select.select([fd], [], [], 0)
        except (OSError, ValueError):
            ready = [fd]  # (a closed descriptor reads as end of file)
        if not ready:
            return False
        message, end = self._read_message(fd)
        if end == "absurd":
            text = f"{message[:100]} ..."
            self.log.write(f'Error: absurd recording session control message: "{text}"\n')
            return True
        if end == "eof":
            if message:
                self.log.write(
                    f'Error: incomplete recording session control message: "{message}"\n'
                )
            return True
        if message == "D":
            self.control_fd = None  # (detach: "silently go off to the races")
            with contextlib.suppress(OSError):
                os.close(fd)
            return False
        if message == "Q":
            return True
        if message in ("?", "R") or message[:1] in ("F", "P") or message.startswith("V0"):
            return False
        self.log.write(f'Error: illegal recording session control message: "{message}"\n')
        return True

    @staticmethod
    def _read_message(fd: int) -> tuple[str, str]:
        """One message, a byte at a time as PCP reads it: its text, and how it ended:
        "line" (a newline), "eof" or "absurd" (too long)."""
        data = bytearray()
        while len(data) < _MAX_MESSAGE:
            try:
                byte = os.read(fd, 1)
            except OSError:
                byte = b""
            if not byte:
                return data.decode(errors="replace"), "eof"
            if byte == b"\n":
                return data.decode(errors="replace"), "line"
            data += byte
        return data.decode(errors="replace"), "absurd"


def switch_user(user: str) -> None:
    """pmSetProcessIdentity (-U): become USER, its group first; each failure is a
    Critical line on stderr and the end of the run."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        _critical(f"cannot find the {user} user to switch to")
    try:
        os.setgid(entry.pw_gid)
    except OSError as exc:
        _critical(f"setgid to gid of {user} user (gid={entry.pw_gid}): {exc.strerror}")
    if os.getgroups():
        try:
            os.initgroups(user, entry.pw_gid)
        except PermissionError:
            pass  # (privileges dropped already: PCP allows EPERM)
        except OSError as exc:
            _critical(f"initgroups with gid of {user} user (gid={entry.pw_gid}): {exc.strerror}")
    try:
        os.setuid(entry.pw_uid)
    except OSError as exc:
        _critical(f"setuid to uid of {user} user (uid={entry.pw_uid}): {exc.strerror}")


def _critical(message: str) -> None:
    logfile.notify(sys.stderr, "pmlogger", "Critical", message)
    raise SystemExit(1)
