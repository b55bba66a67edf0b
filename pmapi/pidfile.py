"""A daemon's PID file, as libpcp's __pmServerCreatePIDFile writes it: the number alone,
no newline, mode 0444; pmcd's is $PCP_RUN_DIR/pmcd.pid, the primary pmlogger's
$PCP_RUN_DIR/pmlogger.pid.

The file is replaced in one rename, so a reader never sees half of it, and removed
at exit only while it still holds our PID (a successor's file is kept).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["read_pid", "remove_pidfile", "write_pidfile"]


def write_pidfile(path: Path, pid: int | None = None) -> Path:
    """Write PID (default ours) to PATH, creating its directory; OSError if we cannot."""
    pid = os.getpid() if pid is None else pid
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{pid}")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            os.write(fd, str(pid).encode())
        finally:
            os.close(fd)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return path


def read_pid(path: Path) -> int | None:
    """The PID in PATH; None if there is no such file.  OSError or ValueError if unreadable."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    pid = int(text.strip())
    if pid <= 0:
        raise ValueError(f"{pid} is not a process ID")
    return pid


def remove_pidfile(path: Path, pid: int | None = None) -> None:
    """Remove PATH if it still names PID (default ours)."""
    pid = os.getpid() if pid is None else pid
    with contextlib.suppress(OSError, ValueError):
        if read_pid(path) == pid:
            path.unlink()
