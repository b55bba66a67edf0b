"""What else may end a pmlogger run, and who it runs as: -p PID (log for the lifetime of a
process), -x FD (a recording session's control channel, pmRecordControl's) and -U USER.

The logging loop asks `Watch.ended` between samples; it gives the reason logging ends,
in PCP's pmlogger's words, or None to go on.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from purepcp.pmapi.process import process_exists

#: a control message longer than this is absurd (PCP's MAXPATHLEN)
_MAX_MESSAGE = 4096


class Watch:
    """-p's process and -x's control channel, looked at between samples.

    A recording session (pmRecordControl's launcher on -x's channel) says V0, F<folio>,
    P<program>, R (the archive can be replayed), then Q (quit), D (detach), ? (status),
    or goes away (end of file).  The last three, a message not understood and Q bring
    up PCP's dialog through $PCP_XCONFIRM_PROG; with no answer from it, the dialog is
    written to the log instead and taken as "Yes" (terminate).
    """

    def __init__(
        self, pid: int | None, control_fd: int | None, log: TextIO, trace: bool = False
    ) -> None:
        self.pid = pid or None  # (-p 0 asks for nothing, as in PCP)
        self.control_fd = control_fd
        self.log = log  # (PCP's pmlogger's stderr is its log)
        self.trace = trace  # -D appl2: each control message, as it comes
        self.session = Session()

    def ended(self) -> str | None:
        """Why logging ends now (None: it goes on)."""
        if self.control_fd is not None and self._control_says_stop():
            return "Recording session terminated"
        if self.pid is not None and not process_exists(self.pid):
            return "process from -p has vanished"
        return None

    def _control_says_stop(self) -> bool:
        """A message on -x's channel, if one waits, acted on as pmlogger.c acts on it."""
        fd = self.control_fd
        assert fd is not None
        try:
            ready, _, _ = select.select([fd], [], [], 0)
        except (OSError, ValueError):
            ready = [fd]  # (a closed descriptor reads as end of file)
        if not ready:
            return False
        message, end = self._read_message(fd)
        if end == "eof":
            if self.trace:
                self.log.write("recording session control: eof\n")
            if message:
                self.log.write(
                    f'Error: incomplete recording session control message: "{message}"\n'
                )
            return self._dialog("X")
        if end == "absurd":
            text = f"{message[:100]} ..."
            self.log.write(f'Error: absurd recording session control message: "{text}"\n')
            return self._dialog("X")
        if self.trace:
            self.log.write(f'recording session control: "{message}"\n')
        s = self.session
        if message in ("Q", "D", "?"):
            return self._dialog(message)
        if message[:1] == "F":
            s.folio = message[1:]
        elif message[:1] == "P":
            s.program = message[1:]
        elif message == "R":
            s.replay = True
        elif not message.startswith("V0"):
            self.log.write(f'Error: illegal recording session control message: "{message}"\n')
            return self._dialog("X")
        return False

    def _dialog(self, cmd: str) -> bool:
        """pmlogger.c's do_dialog for CMD (D, Q, ?, or X: the launcher has gone or said
        something wrong); True if the session ends, else it is detached from (but ?)."""
        text = self.session.dialog_text(cmd)
        answer = _confirm(text, cmd, self.session.program)
        if answer is None:
            level = "Warning" if cmd == "?" else "Error"
            self.log.write(f"\n{level}: pmconfirm(1) failed for recording session dialog\n")
            self.log.write(f"Dialog:\n{text}")
            answer = "Yes"
        self.log.flush()
        if cmd == "Q" or (cmd == "X" and answer == "Yes"):
            return True
        if cmd != "?":
            with contextlib.suppress(OSError):  # (detach: "silently go off to the races")
                os.close(self.control_fd)  # type: ignore[arg-type]
            self.control_fd = None
        return False

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


@dataclass
class Session:
    """What the recording session's launcher has said, and what the dialog reports."""

    folio: str = "<unknown>"
    program: str = "<unknown>"
    replay: bool = False
    host: str = ""  # the host logged (pmlogger's pmcd_host)
    archive_bytes: Callable[[], int] = lambda: 0  # the data volumes' bytes so far
    started: float = field(default_factory=time.time)  # when -x was given

    def dialog_text(self, cmd: str) -> str:
        """do_dialog's message for CMD, in PCP's words."""
        seconds = int(time.time() - self.started) or 1  # ("hack is close enough!")
        size = float(self.archive_bytes())
        took = f"{seconds} seconds" if seconds < 240 else f"{(seconds + 30) // 60} minutes"
        text = (
            f'PCP recording for the archive folio "{self.folio}" and the host "{self.host}"'
            f" has been in progress for {took} and in that time the pmlogger process has"
            f" created an archive of {_size(size)}."
        )
        if self.replay:
            text += "\n\nThis archive may be replayed with the following command:\n"
            text += f"  $ pmafm {self.folio} replay"
        rates = (
            f"{_size(size * 3600 / seconds)} per hour or {_size(size * 86400 / seconds)} per day."
        )
        if cmd == "D":
            text += (
                "\n\nThe application that launched pmlogger has asked pmlogger to continue"
                f" independently and the PCP archive will grow at the rate of {rates}"
            )
        if cmd == "X":
            text += (
                "\n\nThe application that launched pmlogger has exited and you must decide if"
                " the PCP recording session should be terminated or continued.  If recording"
                f" is continued the PCP archive will grow at the rate of {rates}"
            )
        if cmd == "Q":
            text += (
                "\n\nThe application that launched pmlogger has terminated this PCP"
                " recording session.\n"
            )
        else:
            text += "\n\nAt any time this pmlogger process may be terminated with the"
            text += f" following command:\n  $ pmsignal -s TERM {os.getpid()}\n"
        if cmd == "X":
            text += "\n\nTerminate this PCP recording session now?"
        return text


def _size(d: float) -> str:
    """pmlogger.c's do_size: bytes, Kbytes or Mbytes, as it words them."""
    if d < 10 * 1024:
        return f"{int(d)} bytes"
    if d < 10.0 * 1024 * 1024:
        return f"{d / 1024:.1f} Kbytes"
    if d < 10.0 * 1024 * 1024 * 1024:
        return f"{d / (1024 * 1024):.1f} Mbytes"
    return f"{int(d) // (1024 * 1024)} Mbytes"


def _confirm(text: str, cmd: str, program: str) -> str | None:
    """Ask $PCP_XCONFIRM_PROG (pmconfirm(1)) with TEXT: its answer's first line, or None
    when it gives none (a program that cannot be run gives none, as PCP's child that
    fails to exec)."""
    import shlex
    import subprocess
    import tempfile

    prog = os.environ.get("PCP_XCONFIRM_PROG") or "pmconfirm"
    header = f"PCP Archive Recording Session - {program}"
    with tempfile.NamedTemporaryFile("w", prefix="msg", delete=False) as msg:
        msg.write(text)
    try:
        argv = [*shlex.split(prog), "-c", "-header", header, "-file", msg.name]
        if cmd == "X":
            argv += ["-icon", "question", "-B", "Yes", "-b", "No"]
        else:
            argv += ["-icon", "info", "-b", "Close"]
        try:
            out = subprocess.run(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout
        except (OSError, ValueError):
            return None
        if not out:
            return None
        return out.split(b"\n", 1)[0].decode(errors="replace")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(msg.name)
