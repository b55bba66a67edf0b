"""Telling a service manager (systemd) about a daemon's state: the sd_notify protocol.

systemd passes a datagram socket's path in $NOTIFY_SOCKET (a leading "@" names an
abstract socket); a Type=notify service sends "READY=1" there once it serves, and
"RELOADING=1" ... "READY=1" around a reload.  This is what PCP's daemons do for
-N / --notify, without linking libsystemd.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from pathlib import Path


def notify(message: str) -> bool:
    """Send MESSAGE (newline-separated VAR=value lines) to $NOTIFY_SOCKET; False if none."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return False
    address = "\0" + path[1:] if path.startswith("@") else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            # never wait: a manager that reads none of its messages (its queue full)
            # must not stop the daemon, which sends from its event loop
            sock.setblocking(False)
            sock.sendto(message.encode(), address)
    except OSError:  # (BlockingIOError among them: the message is dropped)
        return False
    return True


def notify_ready(pid: int | None = None) -> bool:
    """READY=1 (and MAINPID): the daemon now serves."""
    return notify(f"READY=1\nMAINPID={os.getpid() if pid is None else pid}\n")


def notify_reloading() -> bool:
    """RELOADING=1, with the monotonic time systemd 253+ asks for: a reload has begun."""
    return notify(f"RELOADING=1\nMONOTONIC_USEC={time.monotonic_ns() // 1000}\n")


def notify_reloaded() -> bool:
    """READY=1 again: the reload is over."""
    return notify("READY=1\n")


def raise_fd_limit() -> str:
    """Raise the soft limit on open files to the hard limit, as far as the kernel allows,
    so that a daemon serves as many clients as the system lets it; say what it is now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = hard
    if hard == resource.RLIM_INFINITY:
        try:
            ceiling = int(Path("/proc/sys/fs/nr_open").read_text())
        except (OSError, ValueError):
            ceiling = soft
    if ceiling > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        except (OSError, ValueError) as exc:
            return f"file descriptor limit {soft} (could not raise it to {ceiling}: {exc})"
        return f"file descriptor limit {ceiling} (raised from {soft})"
    return f"file descriptor limit {soft}"


def first_os_error(failure: BaseException) -> OSError | None:
    """FAILURE if it is an OSError, else the first one in its (nested) exception group."""
    if isinstance(failure, OSError):
        return failure
    if isinstance(failure, BaseExceptionGroup):
        for exc in failure.exceptions:
            found = first_os_error(exc)
            if found is not None:
                return found
    return None


def daemon_ended(prog: str, failure: BaseException) -> int:
    """Exit status 1 for a daemon whose run ended with FAILURE, said in one line: that it
    could not listen (an OSError in it), else that a fault of ours ended it (logged too)."""
    import logging
    import sys

    exc = first_os_error(failure)
    if exc is None:
        logging.getLogger(prog).error("%s: ended by an internal error: %r", prog, failure)
        print(f"{prog}: ended by an internal error: {failure!r}", file=sys.stderr)
    else:
        print(f"{prog}: cannot listen: {exc.strerror or exc}", file=sys.stderr)
    return 1
