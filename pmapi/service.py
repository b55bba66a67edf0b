"""Telling a service manager (systemd) that a daemon is ready: the sd_notify protocol.

systemd passes a datagram socket's path in $NOTIFY_SOCKET (a leading "@" names an
abstract socket); a Type=notify service sends "READY=1" there once it serves.  This
is what PCP's daemons do for -N / --notify, without linking libsystemd.
"""

from __future__ import annotations

import os
import socket


def notify_ready(pid: int | None = None) -> bool:
    """Send READY=1 (and MAINPID) to $NOTIFY_SOCKET; False if there is no manager to tell."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return False
    address = "\0" + path[1:] if path.startswith("@") else path
    message = f"READY=1\nMAINPID={os.getpid() if pid is None else pid}\n".encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(message, address)
    except OSError:
        return False
    return True
