"""The PCP protocol proxy: what a client of libpcp gets through pmproxy (PMPROXY_HOST,
or a host spec "host@proxy:port") - a byte-for-byte relay to the pmcd it names.

The client says "pmproxy-client 1\\n", pmproxy answers "pmproxy-server 1\\n", the client
names its pmcd ("HOST PORT\\n") and from then on pmproxy passes the bytes both ways,
PDUs included, until either side closes.  A client that says anything else, or names a
pmcd that cannot be reached, is disconnected (as PCP's pmproxy does).
"""

from __future__ import annotations

import contextlib
import logging

import trio

from purepcp.pmapi.connection import PROXY_CLIENT_HELLO as CLIENT_HELLO
from purepcp.pmapi.connection import PROXY_SERVER_HELLO

SERVER_HELLO = PROXY_SERVER_HELLO + b"\n"
#: the longest "HOST PORT\n" line (PCP: MAXHOSTNAMELEN and a port)
MAX_TARGET = 1024 + 8
#: how long the client has to say who it is and where to go
HELLO_TIMEOUT = 10.0

log = logging.getLogger("pmproxy")


async def first_bytes(stream: trio.abc.Stream, idle: float) -> bytes:
    """A new connection's first bytes, which say its protocol; b"" when it sends none
    within IDLE seconds, or closes."""
    with (
        trio.move_on_after(idle),
        contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
    ):
        return await stream.receive_some(65536)
    return b""


def wants_pcp(first: bytes) -> bool:
    """Whether a connection's first bytes are a PCP client's: PCP's key is a first "p";
    ours, the start of the client's hello (other bytes get HTTP's 400)."""
    head = first[: len(CLIENT_HELLO)]
    return bool(head) and CLIENT_HELLO.startswith(head)


def _target(line: bytes) -> tuple[str, int] | None:
    """ "HOST PORT" as PCP reads it (one space, a decimal port), None if it is not."""
    host, sep, port = line.partition(b" ")
    if not sep or b" " in port or not port.isdigit() or int(port) > 65535 or not host:
        return None
    return host.decode("latin-1"), int(port)


async def _handshake(
    stream: trio.abc.Stream, buffer: bytes
) -> tuple[tuple[str, int], bytes] | None:
    """The pmcd the client names and any bytes after its line; None for a client that
    is not speaking the proxy protocol."""
    while len(buffer) < len(CLIENT_HELLO):
        more = await stream.receive_some(4096)
        if not more:
            return None
        buffer += more
    if not buffer.startswith(CLIENT_HELLO):
        return None
    await stream.send_all(SERVER_HELLO)
    buffer = buffer[len(CLIENT_HELLO) :]
    while b"\n" not in buffer:
        if len(buffer) > MAX_TARGET:
            return None
        more = await stream.receive_some(4096)
        if not more:
            return None
        buffer += more
    line, _, rest = buffer.partition(b"\n")
    target = _target(line)
    return None if target is None else (target, rest)


async def _pump(source: trio.abc.Stream, sink: trio.abc.Stream, done: trio.CancelScope) -> None:
    """SOURCE's bytes to SINK until SOURCE ends or either breaks; then end the relay."""
    try:
        while True:
            data = await source.receive_some(65536)
            if not data:
                break
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        done.cancel()


async def relay(stream: trio.abc.Stream, first: bytes, peer: str) -> None:
    """Serve one PCP client on STREAM, FIRST its bytes so far."""
    async with stream:
        try:
            with trio.fail_after(HELLO_TIMEOUT):
                said = await _handshake(stream, first)
        except (trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError):
            said = None
        if said is None:
            log.info("pmproxy: client %s: not a PCP proxy client, closed", peer)
            return
        (host, port), rest = said
        try:
            pmcd = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            log.info("pmproxy: client %s: cannot connect to pmcd on %s port %d: %s",
                     peer, host, port, exc.strerror or exc)  # fmt: skip
            return
        log.debug("pmproxy: client %s: relaying to pmcd on %s port %d", peer, host, port)
        async with pmcd:
            try:
                if rest:
                    await pmcd.send_all(rest)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_pump, stream, pmcd, nursery.cancel_scope)
                nursery.start_soon(_pump, pmcd, stream, nursery.cancel_scope)
