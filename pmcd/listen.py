"""pmcd's request ports: opened first, before anything slow, as PCP's pmcd opens them.

PCP's pmcd opens its ports before it loads the namespace and starts its agents, so a
client that connects while it starts waits in the listen backlog for its greeting
rather than being refused.  The pmcd command does the same with `open_request_ports`
(the socket module only, before trio and the daemon are imported); the daemon takes
the sockets as they are (or opens them itself, for a Daemon built in a test).
`port_table` is PCP's "pmcd request port(s)" table, which its log shows.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass

#: What PCP's pmcd calls the address of a port opened on every address (no -i).
ANY_ADDRESS = "INADDR_ANY"
#: The listen backlog of a TCP port (the kernel caps it at net.core.somaxconn).
TCP_BACKLOG = 0xFFFF
#: The listen backlog of the unix socket.
UNIX_BACKLOG = 128


@dataclass
class RequestPort:
    """One listening socket: its family (inet, ipv6, unix), port, address as pmcd's
    table names it, and where it is, as our messages say it ("0.0.0.0:44321")."""

    sock: socket.socket
    family: str
    port: int
    address: str
    where: str


def open_request_ports(
    port: int, addresses: Sequence[str], unix_path: str | None
) -> list[RequestPort]:
    """Listen on PORT (none when negative; 0: any free one, the same for every address)
    on ADDRESSES (default: every IPv4 and IPv6 address) and on the unix socket
    UNIX_PATH; OSError ("ADDRESS:PORT: why") if one cannot be had (the others closed)."""
    ports: list[RequestPort] = []
    try:
        if port >= 0:
            hosts = list(addresses) or ["0.0.0.0", "::"]
            for host in hosts:
                try:
                    found = _tcp_sockets(host, port)
                except OSError as exc:
                    if host == "::" and not addresses:
                        continue  # no IPv6 on this host: IPv4 alone will do
                    where = f"[{host}]" if ":" in host else host
                    raise OSError(exc.errno, f"{where}:{port}: {exc.strerror}") from exc
                for sock in found:
                    name = sock.getsockname()
                    family = "ipv6" if sock.family == socket.AF_INET6 else "inet"
                    shown = host if addresses else ANY_ADDRESS
                    ports.append(RequestPort(sock, family, name[1], shown, f"{name[0]}:{name[1]}"))
                    port = name[1]  # with -p 0, every address gets the port the first got
        if unix_path:
            ports.append(_unix_socket(unix_path))
    except BaseException:
        for opened in ports:
            opened.sock.close()
        raise
    return ports


def _tcp_sockets(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for each address HOST stands for, as trio's open_tcp_listeners
    makes them (SO_REUSEADDR; an IPv6 socket takes IPv6 alone)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    seen: set[tuple] = set()
    socks: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(TCP_BACKLOG)
            if port == 0:  # the other addresses of HOST share the port the first got
                port = sock.getsockname()[1]
                infos = [(f, k, p, c, (a[0], port, *a[2:])) for f, k, p, c, a in infos]
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


def _unix_socket(path: str) -> RequestPort:
    """The unix socket at PATH (a stale one replaced), open to every local user."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o777)
        sock.listen(UNIX_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return RequestPort(sock, "unix", 0, path, f"unix:{path}")


def port_table(ports: Sequence[RequestPort], prog: str = "pmcd") -> str:
    """PCP's table of request ports (__pmServerDumpRequestPorts): the unix socket first."""
    from purepcp.pmapi.daemonlog import port_table as table

    rows = [
        (rp.sock.fileno(), None if rp.family == "unix" else rp.port, rp.family, rp.address)
        for rp in ports
    ]
    return table(rows, prog)
