"""Daemon log files in libpcp's format: a header, pmNotifyErr-style lines, and a footer.

    Log for pmlogger on HOST started Sat Nov 21 10:44:22 2026

    [Sat Nov 21 10:44:22] pmlogger(7323) Info: Start
    ...
    Log finished Sat Nov 21 10:44:24 2026

PCP's daemons write their logs this way, and the scripts that watch them (and the
people who read them) expect it.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TextIO

#: syslog priorities by the word libpcp writes for them.
LEVELS = ("Emergency", "Alert", "Critical", "Error", "Warning", "Notice", "Info", "Debug")


def header(log: TextIO, prog: str, act: str = "started") -> None:
    """The first line (and blank line) of a log: which program, on which host, since when."""
    log.write(f"Log for {prog} on {socket.gethostname()} {act} {time.ctime()}\n\n")
    log.flush()


def notify(log: TextIO, prog: str, level: str, message: str) -> None:
    """One pmNotifyErr line: "[Sat Nov 21 10:44:22] prog(pid) Level: message"."""
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}")
    text = message if message.endswith("\n") else message + "\n"
    log.write(f"[{time.ctime()[:19]}] {prog}({os.getpid()}) {level}: {text}")
    log.flush()


def footer(log: TextIO, act: str = "finished") -> None:
    """The last line of a log, after a blank one."""
    log.write(f"\nLog {act} {time.ctime()}\n")
    log.flush()
