"""Which process is the primary pmlogger: $PCP_RUN_DIR/pmlogger.pid (pmapi.pidfile),
checked against /proc so that pmlogger_daily never signals a reused PID."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FILENAME", "is_pmlogger"]

FILENAME = "pmlogger.pid"


def is_pmlogger(pid: int) -> bool:
    """True if process PID exists and (where /proc tells) is a pmlogger, not a reused PID.

    A pmlogger is a process whose command names ``pmlogger`` (the installed script) or
    runs ``-m purepcp.pmlogger.main``; sending SIGUSR2 to anything else would likely kill it.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not Path("/proc/self/cmdline").exists():
        return True  # no /proc to ask: existing is all we can know
    try:
        argv = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False  # gone meanwhile
    words = [os.path.basename(a.decode(errors="replace")) for a in argv[:4]]
    return any(w == "pmlogger" or w == "purepcp.pmlogger.main" for w in words)
