"""pmproxy's Redis protocol relay ([pmproxy] redis.enabled = true): Redis clients
(redis-cli, a client library) talk to pmproxy's port as to a Redis server, and pmproxy
sends each request on to the Redis server, or to the node of a Redis cluster, that holds
its key, and relays the reply.

As PCP's pmproxy: a connection whose first byte is a RESP type byte is a Redis client;
requests are relayed in order, pipelined ones included; a request with a key (by the
server's own COMMAND table: its first key's position) goes to the key's cluster node, any
other to the first server; a request with a key but the wrong number of arguments for
its command is answered with an error and not sent.  Replies are relayed byte for byte.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import trio

log = logging.getLogger("pmproxy")

#: the type bytes a RESP message starts with (PCP's pmproxy takes any as a Redis client)
RESP_TYPES = frozenset(b"-+:,$*#%~")
#: the longest request line or bulk length line taken (Redis's own limit is 64 KB)
MAX_LINE = 65536
#: the slots of a Redis cluster
CLUSTER_SLOTS = 16384


class ProtocolError(Exception):
    """Bytes that are not a RESP message."""


def wants_redis(first: bytes) -> bool:
    """Whether a connection's first bytes are a Redis client's."""
    return bool(first) and first[0] in RESP_TYPES


def _line(buffer: bytes | bytearray, start: int) -> tuple[bytes, int] | None:
    """The CRLF-ended line at START (without its CRLF) and where the next begins."""
    end = buffer.find(b"\r\n", start)
    if end < 0:
        if len(buffer) - start > MAX_LINE:
            raise ProtocolError("line too long")
        return None
    return bytes(buffer[start:end]), end + 2


def _int(text: bytes) -> int:
    try:
        return int(text)
    except ValueError:
        raise ProtocolError(f"bad length {text[:32]!r}") from None


def message_end(buffer: bytes | bytearray, start: int = 0) -> int | None:
    """Where the RESP message at START in BUFFER ends, None while it is incomplete."""
    got = _line(buffer, start)
    if got is None:
        return None
    line, pos = got
    if not line:
        raise ProtocolError("empty line")
    kind, rest = line[0:1], line[1:]
    if kind in (b"+", b"-", b":", b",", b"#", b"_", b"("):
        return pos
    if kind in (b"$", b"=", b"!"):
        size = _int(rest)
        if size < 0:
            return pos
        end = pos + size + 2
        return end if len(buffer) >= end else None
    if kind in (b"*", b"~", b">", b"%", b"|"):
        count = _int(rest) * (2 if kind in (b"%", b"|") else 1)
        for _ in range(max(count, 0)):
            pos = message_end(buffer, pos)
            if pos is None:
                return None
        return pos
    raise ProtocolError(f"unknown type byte {kind!r}")


def request(buffer: bytes | bytearray) -> tuple[list[bytes], int] | None:
    """The first request in BUFFER: its words and its length; None while incomplete.
    A request is an array of bulk strings, as every Redis client sends."""
    end = message_end(buffer)
    if end is None:
        return None
    got = _line(buffer, 0)
    assert got is not None
    head, pos = got
    if head[:1] != b"*":
        raise ProtocolError("a request must be an array")
    words = []
    for _ in range(_int(head[1:])):
        got = _line(buffer, pos)
        assert got is not None
        line, pos = got
        if line[:1] != b"$":
            raise ProtocolError("a request's words must be bulk strings")
        size = _int(line[1:])
        words.append(bytes(buffer[pos : pos + size]))
        pos += size + 2
    return words, end


def encode(words: list[bytes]) -> bytes:
    """WORDS as a RESP request."""
    parts = [b"*%d\r\n" % len(words)]
    for word in words:
        parts.append(b"$%d\r\n%s\r\n" % (len(word), word))
    return b"".join(parts)


def error(text: str) -> bytes:
    """An error reply."""
    return b"-" + text.replace("\r", " ").replace("\n", " ").encode() + b"\r\n"


@dataclass
class Command:
    """What the server's COMMAND table says of one command: its arity (negative: at
    least) and the position of its first key (0: none)."""

    arity: int
    first_key: int

    def fits(self, words: int) -> bool:
        return words == self.arity if self.arity >= 0 else words >= -self.arity


Node = tuple[str, int]


@dataclass
class Topology:
    """The servers' commands, and for a cluster which node serves each slot."""

    commands: dict[bytes, Command] = field(default_factory=dict)
    slots: list[Node] = field(default_factory=list)  # empty: not a cluster


class Relay:
    """The Redis servers pmproxy relays to (from [redis]/[pmseries] servers), with the
    topology learned from the first that answers, once, and again after a MOVED."""

    def __init__(self, servers: tuple[Node, ...], username: str | None, password: str | None):
        self.servers = servers
        self.username, self.password = username, password
        self.topology: Topology | None = None
        self._lock = trio.Lock()

    async def open(self, node: Node) -> Link:
        """A connection to NODE, authenticated when the configuration says so."""
        link = Link(await trio.open_tcp_stream(*node))
        if self.password:
            words = [b"AUTH"] + ([self.username.encode()] if self.username else [])
            reply = await link.ask(encode([*words, self.password.encode()]))
            if reply.startswith(b"-"):
                await link.stream.aclose()
                raise OSError(f"authentication refused by {node[0]}:{node[1]}")
        return link

    async def learn(self, links: dict[Node, Link]) -> Topology:
        """The topology, asked of the first server that answers (then kept)."""
        async with self._lock:
            if self.topology is not None:
                return self.topology
            failure: Exception | None = None
            for node in self.servers:
                try:
                    link = links.get(node) or await self.open(node)
                    links[node] = link
                    self.topology = await _topology(link)
                    return self.topology
                except (OSError, trio.BrokenResourceError, ProtocolError) as exc:
                    failure = exc
            raise OSError(f"no Redis server answers: {failure}")

    def forget(self) -> None:
        """The cluster moved a slot: learn the topology again on the next request."""
        self.topology = None


class Link:
    """One connection to a Redis server: a request out, its reply back, in order."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def ask(self, raw: bytes) -> bytes:
        """Send RAW (one request) and return the raw reply."""
        await self.stream.send_all(raw)
        while (end := message_end(self.buffer)) is None:
            data = await self.stream.receive_some(65536)
            if not data:
                raise trio.BrokenResourceError("the Redis server closed the connection")
            self.buffer += data
        reply = bytes(self.buffer[:end])
        del self.buffer[:end]
        return reply


async def _topology(link: Link) -> Topology:
    """COMMAND's table and, from a server in cluster mode, CLUSTER SLOTS' map."""
    top = Topology()
    for entry in _parse(await link.ask(encode([b"COMMAND"]))):
        if isinstance(entry, list) and len(entry) >= 4 and isinstance(entry[0], bytes):
            top.commands[entry[0].lower()] = Command(int(entry[1]), int(entry[3]))
    info = _parse(await link.ask(encode([b"INFO", b"cluster"])))
    if isinstance(info, bytes) and b"cluster_enabled:1" in info:
        top.slots = [("", 0)] * CLUSTER_SLOTS
        for row in _parse(await link.ask(encode([b"CLUSTER", b"SLOTS"]))):
            first, last, master = int(row[0]), int(row[1]), row[2]
            node = (master[0].decode() or "localhost", int(master[1]))
            for slot in range(first, last + 1):
                top.slots[slot] = node
    return top


def _parse(raw: bytes) -> object:
    """A reply as Python values (bulk and status strings as bytes, arrays as lists);
    an error reply raises ProtocolError."""
    value, _ = _value(raw, 0)
    return value


def _value(raw: bytes, pos: int) -> tuple[object, int]:
    got = _line(raw, pos)
    if got is None:
        raise ProtocolError("incomplete reply")
    line, pos = got
    kind, rest = line[:1], line[1:]
    if kind == b"-":
        raise ProtocolError(rest.decode(errors="replace"))
    if kind == b":":
        return int(rest), pos
    if kind == b"+":
        return rest, pos
    if kind == b"$":
        size = int(rest)
        return (None, pos) if size < 0 else (raw[pos : pos + size], pos + size + 2)
    if kind == b"*":
        items = []
        for _ in range(max(int(rest), 0)):
            item, pos = _value(raw, pos)
            items.append(item)
        return items, pos
    raise ProtocolError(f"unexpected reply type {kind!r}")


async def serve(stream: trio.abc.Stream, first: bytes, relay: Relay, peer: str) -> None:
    """Serve one Redis client on STREAM, FIRST its bytes so far, until it closes."""
    links: dict[Node, Link] = {}
    buffer = bytearray(first)
    try:
        async with stream:
            while True:
                while (got := request(buffer)) is not None:
                    words, end = got
                    raw = bytes(buffer[:end])
                    del buffer[:end]
                    await stream.send_all(await _answer(relay, links, words, raw))
                data = await stream.receive_some(65536)
                if not data:
                    return
                buffer += data
    except ProtocolError as exc:
        log.info("pmproxy: Redis client %s: failed to parse its request (%s), closed", peer, exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        for link in links.values():
            await link.stream.aclose()


async def _answer(relay: Relay, links: dict[Node, Link], words: list[bytes], raw: bytes) -> bytes:
    """The reply to one request: from the node its key belongs to, else the first server."""
    try:
        top = await relay.learn(links)
    except OSError as exc:
        return error(f"ERR pmproxy: {exc}")
    command = top.commands.get(words[0].lower()) if words else None
    keyed = command is not None and 0 < command.first_key < len(words)
    if keyed and not command.fits(len(words)):
        name = words[0].decode(errors="replace").lower()
        return error(f"Parse command error: wrong number of arguments for '{name}'")
    node = relay.servers[0]
    if keyed and top.slots:
        from redis.crc import key_slot

        node = top.slots[key_slot(words[command.first_key])]
    for _ in range(2):  # (once more after a MOVED: the cluster's map changed)
        try:
            link = links.get(node) or await relay.open(node)
            links[node] = link
            reply = await link.ask(raw)
        except (OSError, trio.BrokenResourceError) as exc:
            links.pop(node, None)
            return error(f"ERR pmproxy: Redis server {node[0]}:{node[1]}: {exc}")
        if not reply.startswith(b"-MOVED "):
            return reply
        relay.forget()
        where = reply.split()[2].decode()
        host, _, port = where.rpartition(":")
        node = (host or "localhost", int(port))
        await relay.learn(links)
    return reply
