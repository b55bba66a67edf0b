"""HTTP/1.1 for pmproxy: h11's protocol state machine over trio's streams.

One task per connection, each in its own scope: whatever a client sends, or however a
request fails, only that connection ends.  Requests on a connection are answered in
order (keep-alive and pipelining as h11 provides); every answer has a Content-Length,
which every HTTP client reads, and PCP's CORS headers.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from urllib.parse import parse_qsl, unquote

import h11
import trio

from .webapi import Reply, Request, html_error

#: The longest request line and headers pmproxy reads (PCP's MAX_URL_SIZE is 8192)
MAX_HEAD = 16384
MAX_URL = 8192
#: The largest request body (a derived-metric configuration, a stored value)
MAX_BODY = 1 << 20
#: the methods PCP's HTTP parser (http-parser) knows; any other ends the connection
HTTP_METHODS = frozenset(
    b"DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND "
    b"PROPPATCH SEARCH UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE "
    b"M-SEARCH NOTIFY SUBSCRIBE UNSUBSCRIBE PATCH PURGE MKCALENDAR LINK UNLINK SOURCE".split()
)
ALLOWED_HEADERS = b"Accept, Accept-Language, Content-Language, Content-Type"

Handler = Callable[[Request], Awaitable[Reply]]
log = logging.getLogger("pmproxy")


def parse_target(target: str) -> tuple[str, dict[str, str]]:
    """A request target's decoded path and parameters (the first of each name wins;
    "+" is a space, as in PCP's URL decoding)."""
    path, _, query = target.partition("?")
    params: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True, errors="replace"):
        if name:
            params.setdefault(name, value)
    return unquote(path, errors="replace"), params


def _headers(reply: Reply, request_headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    out = [
        (b"Access-Control-Allow-Origin", b"*"),
        (b"Access-Control-Allow-Headers", ALLOWED_HEADERS),
        (b"Access-Control-Max-Age", b"86400"),
    ]
    if reply.allow is not None:  # (an answer to a CORS preflight)
        origin = request_headers.get("origin")
        if origin:
            out[0] = (b"Access-Control-Allow-Origin", origin.encode("latin-1", "replace"))
        out.append((b"Access-Control-Allow-Methods", reply.allow.encode()))
    out.append((b"Content-Length", str(len(reply.body)).encode()))
    out.append((b"Content-Type", reply.content_type.encode()))
    out.append((b"Date", _date()))
    return out


_dates: dict[int, bytes] = {}


def _date() -> bytes:
    """The Date header's value, made once a second."""
    now = int(time.time())
    text = _dates.get(now)
    if text is None:
        _dates.clear()
        text = _dates[now] = formatdate(now, usegmt=True).encode()
    return text


class _Closed(Exception):
    """The client went away mid-request."""


class _Wire:
    """A connection's bytes: straight from and to its socket when it is one (read when
    epoll says it is readable, written at once when the socket takes it all), without
    trio's extra scheduler pass per call; through the stream otherwise."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        sock = getattr(stream, "socket", None)
        self.fd = sock.fileno() if sock is not None else -1
        self.sock = sock

    async def receive(self) -> bytes:
        if self.fd < 0:
            return await self.stream.receive_some(65536)
        waited = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                waited = True
                await trio.lowlevel.wait_readable(self.sock)
                continue
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from None
            if not waited:  # (a client always sending must not keep others waiting)
                await trio.lowlevel.checkpoint()
            return data

    async def send_all(self, data: bytes) -> None:
        if self.fd >= 0:
            try:
                sent = os.write(self.fd, data)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from None
            if sent == len(data):
                return
            data = data[sent:]
        await self.stream.send_all(data)


async def _next_event(conn: h11.Connection, wire: _Wire) -> object:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await wire.receive())  # (b"" at end of file)


async def _read_body(conn: h11.Connection, stream: _Wire) -> bytes | None:
    """The request's body; None when it is larger than MAX_BODY."""
    body = bytearray()
    while True:
        event = await _next_event(conn, stream)
        if isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                return None
        elif isinstance(event, h11.EndOfMessage):
            return bytes(body)
        else:
            raise _Closed


async def _send(
    conn: h11.Connection, stream: _Wire, reply: Reply, headers: dict[str, str], head: bool
) -> None:
    response = h11.Response(
        status_code=reply.status,
        headers=_headers(reply, headers),
        reason=HTTPStatus(reply.status).phrase.encode(),
    )
    data = conn.send(response) or b""
    if reply.body and not head:
        data += conn.send(h11.Data(data=reply.body)) or b""
    data += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(data)


@dataclass(frozen=True)
class HttpLimits:
    """[pmproxy] http.*: what one connection may hold of pmproxy (docs/pmproxy.md)."""

    #: seconds a kept-alive connection may wait with no request before it is closed
    idle: float = 60.0
    #: seconds a request may take to arrive whole, head and body, from its first byte
    timeout: float = 10.0
    #: bytes of request line and headers
    max_head: int = MAX_HEAD
    #: connections open at once; more are answered 503 and closed
    max_connections: int = 2000


_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}")
_LINE_REST = re.compile(rb"[^\x00-\x08\x0a-\x1f\x7f]*\r?")


def head_problem(buffer: bytes, max_line: int = MAX_URL + 64) -> str | None:
    """Why BUFFER, the start of a request not yet whole, can never be one: a request line
    must begin with a method token and a space and hold no control characters.  None
    while it may still become a request (h11 judges the whole head when it has it)."""
    buffer = buffer.lstrip(b"\r\n")  # (empty lines before a request are allowed)
    line, newline, _ = buffer.partition(b"\n")
    method = _TOKEN.match(line)
    if line and (method is None or line[method.end() : method.end() + 1] not in (b"", b" ")):
        return "the request line does not start with a method"
    if not _LINE_REST.fullmatch(line):
        return "control characters in the request line"
    if not newline and len(line) > max_line:
        return "request line too long"
    return None


async def serve_connection(
    stream: trio.abc.Stream,
    handler: Handler,
    peer: str = "",
    address: str = "",
    limits: HttpLimits = HttpLimits(),
    first: bytes = b"",
) -> None:
    """Answer the requests on STREAM until the client closes it or must be dropped: it
    waits past LIMITS.idle with no request, takes past LIMITS.timeout to send one, or
    sends what cannot be HTTP.  PEER names the client in log lines; ADDRESS is its
    address ("" on a unix socket); FIRST, bytes it sent already."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_head)
    conn.receive_data(first)
    wire = _Wire(stream)
    try:
        async with stream:
            while True:
                if not conn.trailing_data[0]:  # (nothing pipelined: wait for a request)
                    with trio.move_on_after(limits.idle):
                        data = await wire.receive()
                        conn.receive_data(data)
                        if not data:
                            return
                    if not conn.trailing_data[0] and not conn.trailing_data[1]:
                        return  # (idle too long: closed without a word, as keep-alive is)
                request: _Incoming | None = None
                with trio.move_on_after(limits.timeout):
                    request = await _receive(conn, wire)
                if request is None:
                    log.info("pmproxy: client %s: no whole request in %gs, closed",
                             peer, limits.timeout)  # fmt: skip
                    if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                        reply = html_error(408, "unknown", "request timed out")
                        await _send(conn, wire, reply, {}, head=False)
                    return
                if isinstance(request, Reply):  # (not HTTP: the client hears why, and goes)
                    await _send(conn, wire, request, {}, head=False)
                    return
                await _answer(conn, wire, request, handler, address)
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
    except (trio.BrokenResourceError, trio.ClosedResourceError, _Closed):
        return
    except h11.ProtocolError as exc:  # (h11 refused to go on: the connection ends)
        log.info("pmproxy: client %s: HTTP protocol error: %s", peer, exc)
    except Exception as exc:  # a fault of ours: that connection ends, nothing else
        log.error("pmproxy: client %s: internal error: %r", peer, exc)


async def refuse_connection(stream: trio.abc.Stream) -> None:
    """Answer a connection pmproxy has no room for with a 503, and close it."""
    reply = html_error(503, "unknown", "too many connections")
    head = (
        f"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
        f"Content-Type: {reply.content_type}\r\nContent-Length: {len(reply.body)}\r\n\r\n"
    )
    with trio.move_on_after(1.0):  # (a client that will not read is not waited for)
        try:
            async with stream:
                await stream.send_all(head.encode() + reply.body)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


@dataclass(frozen=True)
class _Incoming:
    """A request received whole: its head and body (None: the body was too large)."""

    head: h11.Request
    body: bytes | None


async def _receive(conn: h11.Connection, wire: _Wire) -> _Incoming | Reply | None:
    """The next request, head and body; a Reply (400, 431, 414) for bytes that are not
    one; None when the client closed or h11 cannot go on."""
    try:
        while True:
            event = conn.next_event()
            if event is not h11.NEED_DATA:
                break
            if conn.their_state is h11.IDLE:
                problem = head_problem(conn.trailing_data[0])
                if problem is not None:
                    status = 414 if problem == "request line too long" else 400
                    return html_error(status, "unknown", f"bad HTTP request: {problem}")
            conn.receive_data(await wire.receive())
    except h11.RemoteProtocolError as exc:
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            raise _Closed from None
        return html_error(exc.error_status_hint, "unknown", f"bad HTTP request: {exc}")
    if not isinstance(event, h11.Request):
        raise _Closed  # (closed, or a state h11 will not go on from)
    if event.method not in HTTP_METHODS:  # (PCP's parser drops the connection)
        method = event.method.decode("ascii", "replace")
        return html_error(400, "unknown", f"bad HTTP request: unknown method {method}")
    return _Incoming(event, await _read_body(conn, wire))


async def _answer(
    conn: h11.Connection, stream: _Wire, incoming: _Incoming, handler: Handler, address: str
) -> None:
    request, body = incoming.head, incoming.body
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
    method = request.method.decode("ascii", "replace")
    target = request.target.decode("latin-1")
    if len(target) >= MAX_URL:
        reply = html_error(414, "unknown", "request URL too long")
    elif body is None:
        reply = html_error(413, "webapi", "request body too large")
    else:
        path, params = parse_target(target)
        try:
            reply = await handler(Request(method, path, params, body, headers, address))
        except Exception as exc:  # a fault of ours: this request fails, the client stays
            log.error("pmproxy: %s %s: internal error: %r", method, path, exc)
            reply = html_error(500, "webapi", "internal error")
    await _send(conn, stream, reply, headers, head=method == "HEAD")
