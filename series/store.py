"""The connection to the key server: one Redis (or Valkey) or a cluster of them.

redis-py does the protocol (with hiredis when installed) and, for a cluster, the
routing of each key to its node.  Every command pmseries issues names one key, as
PCP's do, so nothing here needs keys to share a slot.  Writes go out in pipelined
batches: the next batch is sent before the replies to the last are read, so the
server works while this process prepares more.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

try:  # hiredis's packer, when installed: redis-py's wrapper round it costs more than it
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - redis-py packs alone
    _hiredis_pack = None

from . import schema
from .storeconfig import StoreConfig, StoreDown, StoreError, parse_servers  # noqa: F401

#: a command: its words, the key second
Command = tuple[Any, ...]
#: commands (or bytes of entries) sent before the replies to the batch before are read
BATCH = 4096
BATCH_BYTES = 1 << 20
#: keys whose cluster node is remembered (discovery writes the same streams each second)
NODES_KEPT = 1 << 18
#: the script that adds a batch of a stream's entries in the server (each XADD as PCP
#: sends it, without a round of packing and parsing per entry in this process)
ENTRIES_SCRIPT = (resources.files(__package__) / "entries.lua").read_text()
ENTRIES_SHA = hashlib.sha1(ENTRIES_SCRIPT.encode()).hexdigest()
#: what EVALSHA says of a script the server does not hold (one restarted, or a new node)
NO_SCRIPT = "No matching script"
#: the error XADD gives for an entry not newer than the stream's last: PCP ignores it
#: (reloading an archive, or discovery re-reading one, meets it)
STALE_ENTRY = "equal or smaller than the target stream top item"


class Store:
    """A connected key server, its schema version checked (and set on a new one)."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.cluster = False
        self.client: redis.Redis | RedisCluster = self._connect()
        self._nodes: dict[Any, ClusterNode] = {}  # a cluster's node of each key written
        self._kept: dict[int, Any] = {}  # a connection kept for each server sent to
        self._kept_lock = threading.Lock()
        self._maxlen = str(config.maxlen)
        self._expire = str(config.expire)

    @property
    def where(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.config.servers)

    def _connect(self) -> redis.Redis | RedisCluster:
        host, port = self.config.servers[0]
        auth = {"username": self.config.username, "password": self.config.password}
        timeouts = {
            "socket_timeout": self.config.timeout,
            "socket_connect_timeout": self.config.timeout,
        }
        try:
            first = redis.Redis(host=host, port=port, **auth, **timeouts)
            # the first contact is tried once, as PCP's is: Redis's client would retry a
            # refused connection for seconds (its callers here have retry loops of their own)
            kept = first.get_retry()
            first.set_retry(Retry(NoBackoff(), 0))
            info = first.info("server")
            if kept is not None:
                first.set_retry(kept)
            major = int(str(info.get("redis_version", "0")).split(".")[0])
            if major < 5:
                raise StoreError(f"unsupported redis server (got v{major}, expected v5 or above)")
            clustered = bool(first.info("cluster").get("cluster_enabled"))
            if clustered:
                first.close()
                nodes = [ClusterNode(h, p) for h, p in self.config.servers]
                client: redis.Redis | RedisCluster = RedisCluster(
                    startup_nodes=nodes, **auth, **timeouts
                )
                self.cluster = True
            else:
                if len(self.config.servers) > 1:
                    raise StoreError(
                        f"{self.where}: several servers configured, but {host}:{port} "
                        "is not in cluster mode"
                    )
                client = first
            # SMEMBERS in the server's order, as PCP's answers list members, not a set;
            # stream entries as the server sends them, [id, [field, value, ...]], not a
            # dict made per entry, which costs more than the rest of a values query.
            # (A cluster's nodes parse replies with their own clients' callbacks.)
            targets = [client]
            if isinstance(client, RedisCluster):
                targets += [n.redis_connection for n in client.get_nodes() if n.redis_connection]
            for target in targets:
                for command in ("SMEMBERS", "XRANGE", "XREVRANGE"):
                    target.set_response_callback(command, _as_list)
            self._check_schema(client)
            return client
        except redis.AuthenticationError as exc:
            raise StoreError(f"{self.where}: {exc}", reason=_auth_reason(exc)) from None
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreDown(
                f"cannot connect to Redis at {self.where}: {_first_line(exc)}",
                reason=_connect_reason(exc),
            ) from None
        except redis.RedisError as exc:
            raise StoreError(f"Redis at {self.where}: {_first_line(exc)}") from None

    @staticmethod
    def _check_schema(client: redis.Redis | RedisCluster) -> None:
        version = client.get(schema.VERSION_KEY)
        if version is None:
            client.set(schema.VERSION_KEY, str(schema.SCHEMA_VERSION))
            return
        try:
            number = int(version)
        except ValueError:
            number = -1
        if number not in (0, schema.SCHEMA_VERSION):
            raise StoreError(
                f"unsupported series schema (got v{version.decode(errors='replace')}, "
                f"expected v{schema.SCHEMA_VERSION})"
            )

    def close(self) -> None:
        with self._kept_lock:
            for conn in self._kept.values():
                conn.disconnect()
            self._kept.clear()
        self.client.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------

    def xadd(self, sid: bytes, entry_id: str, pairs: Sequence[Any]) -> Command:
        """PCP's XADD of one sample (PAIRS: field, value, ...)."""
        return ("XADD", schema.values_key(sid), "MAXLEN", "~", self._maxlen, entry_id, *pairs)

    def load_entries_script(self) -> None:
        """Put entries.lua in the script cache of the server (of every primary of a
        cluster): the batches of a stream's entries call it by its digest."""
        if self.cluster:
            for node in self.client.get_primaries():  # type: ignore[union-attr]
                self.client.get_redis_connection(node).script_load(ENTRIES_SCRIPT)
        else:
            self.client.script_load(ENTRIES_SCRIPT)

    def entries(self, sid: bytes, blob: bytes, ids: str, counts: str, values: str) -> Command:
        """A batch of one stream's entries, added by entries.lua (see there)."""
        return ("EVALSHA", ENTRIES_SHA, 1, schema.values_key(sid), blob, ids, counts, values)

    def trim(self, sid: bytes) -> Command:
        """The MAXLEN of PCP's XADDs, applied once after a batch of entries (the same
        entries stay, and each XADD is three words shorter)."""
        return ("XTRIM", schema.values_key(sid), "MAXLEN", "~", self._maxlen)

    def expire(self, sid: bytes) -> Command:
        return ("EXPIRE", schema.values_key(sid), self._expire)

    def send(self, commands: Iterable[Command]) -> list[str]:
        """Send COMMANDS (pipelined, in order per key) and return the errors they met,
        bar XADD's stale-entry error; StoreDown if the connection breaks."""
        errors: list[str] = []
        try:
            if self.cluster:
                self._send_cluster(commands, errors)
            else:
                self._send_to(self.client, commands, errors)  # type: ignore[arg-type]
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreDown(f"lost Redis at {self.where}: {_first_line(exc)}") from None
        return errors

    def _send_cluster(self, commands: Iterable[Command], errors: list[str]) -> None:
        client: RedisCluster = self.client  # type: ignore[assignment]
        by_node: dict[str, list[Command]] = {}
        nodes: dict[str, ClusterNode] = {}
        known = self._nodes
        if len(known) > NODES_KEPT:
            known.clear()
        for command in commands:
            key = _key_of(command)
            node = known.get(key)
            if node is None:
                node = known[key] = client.get_node_from_key(key)
            by_node.setdefault(node.name, []).append(command)
            nodes[node.name] = node
        batches = [(client.get_redis_connection(nodes[n]), b) for n, b in by_node.items()]
        if (
            len(batches) > 1
            and all(len(b) < BATCH for _, b in batches)
            and self._overlap(batches, errors)
        ):
            pass
        else:
            for node_client, batch in batches:
                self._send_to(node_client, batch, errors)
        if any(e.startswith(("MOVED", "ASK")) for e in errors):
            known.clear()  # (the cluster's slots moved: look them up again)

    def _overlap(self, batches: list[tuple[redis.Redis, list[Command]]], errors: list[str]) -> bool:
        """Small batches for several nodes, on the connections kept for them: every
        batch is sent before any replies are read, so the nodes work at once and the
        replies are mostly there when read.  False (nothing sent) when another thread
        holds the kept connections."""
        if not self._kept_lock.acquire(blocking=False):
            return False
        held: list[tuple[redis.Redis, Any]] = []
        try:
            try:
                for client, _ in batches:
                    held.append((client, self._kept_connection(client)))
                for (_, conn), (_, batch) in zip(held, batches, strict=True):
                    conn.send_packed_command(_packed(conn, batch), check_health=False)
                for (_, conn), (_, batch) in zip(held, batches, strict=True):
                    _read(conn, len(batch), errors)
            except BaseException:
                for client, conn in held:
                    conn.disconnect()
                    client.connection_pool.release(conn)
                raise
            for client, conn in held:
                self._kept[id(client)] = conn
            return True
        finally:
            self._kept_lock.release()

    def _kept_connection(self, client: redis.Redis) -> Any:
        """The connection kept for CLIENT's server (the caller holds _kept_lock), taken
        out of the keeping; a new one from the pool the first time."""
        conn = self._kept.pop(id(client), None)
        if conn is None:
            return client.connection_pool.get_connection()
        if _closed(conn):  # (the server went, or restarted: connect again)
            conn.disconnect()
        return conn

    def _send_to(self, client: redis.Redis, commands: Iterable[Command], errors: list[str]) -> None:
        """Send to one server on a connection of its own: the one this store keeps for
        it when no other thread has that (the pool's lending costs more than the
        sending of a record: discovery sends once a record and host), else one from
        the pool."""
        pool = client.connection_pool
        if self._kept_lock.acquire(blocking=False):
            try:
                conn = self._kept_connection(client)
                try:
                    self._write(conn, commands, errors)
                except BaseException:
                    pool.release(conn)  # (disconnected: the pool connects it again)
                    raise
                self._kept[id(client)] = conn
            finally:
                self._kept_lock.release()
            return
        conn = pool.get_connection()
        try:
            self._write(conn, commands, errors)
        finally:
            pool.release(conn)

    @staticmethod
    def _write(conn: Any, commands: Iterable[Command], errors: list[str]) -> None:
        """COMMANDS down CONN in pipelined batches, their replies read; CONN is
        disconnected if that fails."""
        healthy = False
        try:
            pending = 0
            size = 0
            batch: list[Command] = []

            def flush() -> None:
                nonlocal pending, size
                conn.send_packed_command(_packed(conn, batch), check_health=False)
                _read(conn, pending, errors)
                pending = len(batch)
                size = 0
                batch.clear()

            for command in commands:
                batch.append(command)
                if command[0] == "EVALSHA":  # (a batch of entries: big)
                    size += sum(len(word) for word in command[4:])
                if len(batch) >= BATCH or size >= BATCH_BYTES:
                    flush()
            if batch:
                flush()
            _read(conn, pending, errors)
            healthy = True
        finally:
            if not healthy:
                conn.disconnect()


def _packed(conn: Any, batch: list[Command]) -> list[bytes]:
    """BATCH in the protocol's words, by hiredis when it is there."""
    if _hiredis_pack is not None:
        return [b"".join(map(_hiredis_pack, batch))]
    return conn.pack_commands(batch)


def _closed(conn: Any) -> bool:
    """Whether a kept connection was closed by the server (or holds stray data): the
    check the pool makes of a connection it lends, without the rest of the pool."""
    try:
        return bool(conn.can_read(timeout=0))
    except (redis.ConnectionError, OSError):
        return True


def _key_of(command: Command) -> Any:
    """The one key a command names (EVALSHA names it after the digest and key count)."""
    return command[3] if command[0] == "EVALSHA" else command[1]


def _as_list(response: Any, **options: Any) -> list:
    return list(response) if response is not None else []


def _read(conn: Any, count: int, errors: list[str]) -> None:
    parser = getattr(conn, "_parser", None)
    reader = getattr(parser, "_reader", None)
    short = getattr(sys.modules.get(type(parser).__module__), "NOT_ENOUGH_DATA", None)
    if reader is not None and short is not None and hasattr(parser, "read_from_socket"):
        _read_hiredis(parser, reader, short, count, errors)
        return
    for _ in range(count):
        try:
            conn.read_response()
        except redis.ResponseError as exc:
            text = str(exc)
            if STALE_ENTRY not in text:
                errors.append(text)


def _read_hiredis(parser: Any, reader: Any, short: object, count: int, errors: list[str]) -> None:
    """_read straight from redis-py's hiredis reader: the replies to a batch of writes
    are counted and their errors kept, without redis-py's layers round each (a fifth
    of a discovery scan's time went there).  SHORT is what the reader gives when no
    whole reply is buffered yet."""
    gets = reader.gets
    while count:
        reply = gets()
        if reply is short:
            parser.read_from_socket()
            continue
        count -= 1
        if isinstance(reply, Exception):
            if isinstance(reply, redis.ConnectionError):
                raise reply
            text = str(reply)
            if STALE_ENTRY not in text:
                errors.append(text)


#: the server's error codes of the authentication failures redis-py names without them
_AUTH_CODES = (("invalid username-password pair", "WRONGPASS"), ("invalid password", "ERR"),
               ("Authentication required", "NOAUTH"), ("must be called with the client "
               "already authenticated", "NOAUTH"))  # fmt: skip
#: redis-py's words for a connection the system refused: "Error 111 connecting to H:P. Why."
_CONNECT_ERROR = re.compile(r"Error -?\d+ connecting to .*?\. (.*?)\.?$")


def _auth_reason(exc: BaseException) -> str:
    """An authentication failure as the server said it, its error code first."""
    text = _first_line(exc)
    code = next((code for words, code in _AUTH_CODES if words in text), None)
    return f"{code} {text}" if code and not text.startswith(code) else text


def _connect_reason(exc: BaseException) -> str:
    """Why a connection failed, as the system said it ("Connection refused"), or as the
    server did ("LOADING Redis is loading the dataset in memory")."""
    text = _first_line(exc)
    if isinstance(exc, redis.BusyLoadingError):
        return f"LOADING {text}"
    found = _CONNECT_ERROR.match(text)
    return found.group(1) if found else text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
