"""pmproxy's request ports: each TCP port on each interface, and a unix domain socket.

As PCP's pmproxy: a port that cannot be opened is logged and the others serve; only
when none opens does pmproxy not start.  The unix socket (-s, $PMPROXY_SOCKET, else
$PCP_RUN_DIR/pmproxy.socket) replaces a stale file of that name, never the socket of
a pmproxy still answering on it.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
from dataclasses import dataclass, field

import trio

log = logging.getLogger("pmproxy")


@dataclass
class Opened:
    """The listeners that opened, how each is named, and the first failure."""

    listeners: list[trio.SocketListener]
    where: list[str]
    failure: OSError | None = None
    socket_path: str | None = None  # the unix socket this pmproxy made (removed at the end)
    socket_inode: int | None = None
    #: each listener as PCP's request ports table shows it (pmapi.daemonlog.PortRow)
    rows: list[tuple[int, int | None, str, str]] = field(default_factory=list)


def _name(listener: trio.SocketListener) -> str:
    address = listener.socket.getsockname()
    if isinstance(address, str):
        return address
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def open_ports(ports: tuple[int, ...], interfaces: tuple[str, ...]) -> Opened:
    """A listener for each of PORTS on each of INTERFACES (every address without)."""
    opened = Opened([], [])
    for port in ports:
        for host in interfaces or (None,):
            try:
                more = await trio.open_tcp_listeners(port, host=host)
            except OSError as exc:
                opened.failure = opened.failure or exc
                log.error("pmproxy: cannot listen on %s port %d: %s",
                          host or "INADDR_ANY", port, exc.strerror or exc)  # fmt: skip
                continue
            opened.listeners += more
            opened.where += [_name(listener) for listener in more]
            for listener in more:
                sock = listener.socket
                family = "ipv6" if sock.family == socket.AF_INET6 else "inet"
                row = (sock.fileno(), sock.getsockname()[1], family, host or "INADDR_ANY")
                opened.rows.append(row)
    return opened


def _in_use(path: str) -> bool:
    """Whether something answers on the unix socket PATH."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def open_unix(opened: Opened, path: str) -> None:
    """Add a listener on the unix domain socket PATH to OPENED (a failure is logged)."""
    try:
        if os.path.exists(path):
            if _in_use(path):
                raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))
            os.unlink(path)
        plain = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            plain.bind(path)
            os.chmod(path, 0o666)  # (uv_pipe_chmod: readable and writable by all)
            plain.listen(128)
        except OSError:
            plain.close()
            raise
        sock = trio.socket.from_stdlib_socket(plain)
    except OSError as exc:
        log.error("pmproxy: cannot listen on unix socket %s: %s", path, exc.strerror or exc)
        return
    opened.listeners.append(trio.SocketListener(sock))
    opened.where.append(path)
    opened.rows.append((sock.fileno(), None, "unix", path))
    opened.socket_path, opened.socket_inode = path, os.stat(path).st_ino


def remove_unix(opened: Opened) -> None:
    """Remove the unix socket this pmproxy made, if it is still that one."""
    if opened.socket_path is None:
        return
    try:
        if os.stat(opened.socket_path).st_ino == opened.socket_inode:
            os.unlink(opened.socket_path)
    except OSError:
        pass
