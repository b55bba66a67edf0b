"""pmcd's log as PCP's pmcd keeps it (libpcp's pmOpenLog and pmNotifyErr).

The log file is created afresh and becomes pmcd's standard error and output, so what
pmcd and the agents it starts write there lands in it, as with PCP's pmcd.  It begins
"Log for pmcd on HOST started DATE" and ends "Log finished DATE"; each message is
"[Sun Nov 29 17:10:09] pmcd(PID) Info: ..." (Warning, Error, Critical by level), and
pmcd's start-up report ("pmcd: PID = N, PDU version = 2" and its request ports
table) is written as is, at the start of a line, where PCP's QA looks for it.  With
"-" for the file, standard error is the log.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import socket
import sys
import time

#: pmNotifyErr's words for the levels.
LEVELS = {
    logging.DEBUG: "Debug",
    logging.INFO: "Info",
    logging.WARNING: "Warning",
    logging.ERROR: "Error",
    logging.CRITICAL: "Critical",
}


class NotifyFormatter(logging.Formatter):
    """A record as pmNotifyErr writes it: "[ctime] PROG(PID) Level: message"."""

    def __init__(self, prog: str) -> None:
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.ctime(record.created)[:19]
        level = LEVELS.get(record.levelno, "???")
        text = f"[{stamp}] {self.prog}({record.process}) {level}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def open_log(path: str, prog: str = "pmcd") -> None:
    """Make PATH ("-": standard error) pmcd's log: standard error and output go there
    (a file is created afresh, headed as PCP heads it, and footed at exit), and the
    root logger's INFO and above are written in pmNotifyErr's form."""
    if path != "-":
        _redirect(path, prog)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(NotifyFormatter(prog))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _redirect(path: str, prog: str) -> None:
    """PATH, created afresh, as file descriptors 2 and 1 (OSError if it cannot be)."""
    with contextlib.suppress(FileNotFoundError):  # (as pmOpenLog: the new file is ours)
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stderr.flush()
    sys.stdout.flush()
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)
    host = socket.gethostname()
    sys.stderr.write(f"Log for {prog} on {host} started {time.ctime()}\n\n")
    sys.stderr.flush()
    atexit.register(_footer)


def _footer() -> None:
    """What pmOpenLog's exit handler writes last."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"\nLog finished {time.ctime()}\n")
        sys.stderr.flush()
