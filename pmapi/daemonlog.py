"""A daemon's log as PCP's daemons keep theirs (libpcp's pmOpenLog and pmNotifyErr):
pmcd's and pmproxy's.

The log file is created afresh and becomes the daemon's standard error and output, so
what it and the processes it starts (pmcd's agents) write there lands in it, as with
PCP's.  It begins "Log for PROG on HOST started DATE" and ends "Log finished DATE"; each
message is "[Sun Nov 29 17:10:09] PROG(PID) Info: ..." (Warning, Error, Critical by
level), and the start-up report ("PROG: PID = N, PDU version = 2" and the request ports
table) is written as is, at the start of a line, where PCP's QA looks for it.  With
"-" for the file, standard error is the log.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
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


def open_log(path: str, prog: str) -> None:
    """Make PATH ("-": standard error as it is) PROG's log: standard error and output go
    there (a file is created afresh), headed and, at exit, footed as pmOpenLog does
    (standard error too), and the root logger's INFO and above are written in
    pmNotifyErr's form."""
    from . import logfile

    if path != "-":
        _redirect(path)
    logfile.header(sys.stderr, prog)
    atexit.register(_footer)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(NotifyFormatter(prog))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _redirect(path: str) -> None:
    """PATH, created afresh, as file descriptors 2 and 1 (OSError if it cannot be)."""
    with contextlib.suppress(FileNotFoundError):  # (as pmOpenLog: the new file is ours)
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stderr.flush()
    sys.stdout.flush()
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)


def _footer() -> None:
    """What pmOpenLog's exit handler writes last."""
    from . import logfile

    with contextlib.suppress(OSError, ValueError):
        logfile.footer(sys.stderr)


#: One row of a request ports table: (fd, port (None for the unix socket), family
#: ("inet", "ipv6", "unix"), address ("INADDR_ANY", the -i address, the socket's path)).
PortRow = tuple[int, "int | None", str, str]


def port_table(rows: list[PortRow], prog: str) -> str:
    """PCP's table of request ports (__pmServerDumpRequestPorts), the unix socket first."""
    lines = [
        f"{prog} request port(s):",
        "  sts fd   port  family address",
        "  === ==== ===== ====== =======",
    ]
    for fd, port, family, address in sorted(rows, key=lambda row: row[2] != "unix"):
        number = "" if port is None else str(port)
        lines.append(f"  {'ok':<3} {fd:4d} {number:>5} {family:<6} {address}")
    return "\n".join(lines) + "\n"
