"""pmproxy's /series/* REST calls (pmwebapi(3)), answered from the key server pmseries
loads, in the JSON PCP 6.0.3's pmproxy writes.

Every call runs in a worker thread (redis-py is synchronous); the connection is made
on the first call and again after the server went away, so pmproxy starts, and keeps
serving the rest of its API, whether or not the key server is there.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import trio

from purepcp.pmapi.timewindow import parse_interval_ns
from purepcp.series.functions import values_of_expression
from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.loadspec import LoadSpecError, load_spec
from purepcp.series.query import run_query
from purepcp.series.read import SeriesError, SeriesReader, Window
from purepcp.series.store import Store, StoreConfig, StoreError

from .webapi import JSON, Reply, Request, html_error

OCTETS = "application/octet-stream"
#: the calls, matched by prefix after /series/ as pmproxy does
CALLS = ("query", "descs", "instances", "labels", "metrics", "sources", "values", "load", "ping")
#: the parameter each call cannot do without
REQUIRED = {"query": ("expr",), "descs": ("series",), "load": ("expr",)}


_PLAIN = re.compile(r"[ !#-\[\]-~]*")  # (printable ASCII but quote and backslash)


def sds_repr(text: str) -> str:
    """sdscatrepr: TEXT quoted, with C escapes and \\xNN for anything unprintable."""
    if _PLAIN.fullmatch(text):
        return '"' + text + '"'
    out = ['"']
    for byte in text.encode("utf-8", "surrogateescape"):
        c = chr(byte)
        if c in '\\"':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\a":
            out.append("\\a")
        elif c == "\b":
            out.append("\\b")
        elif 0x20 <= byte < 0x7F:
            out.append(c)
        else:
            out.append(f"\\x{byte:02x}")
    out.append('"')
    return "".join(out)


def _wrap(client: str | None, body: str) -> str:
    return f'{{"client":{sds_repr(client)},"result":{body}}}' if client is not None else body


class SeriesAPI:
    """The /series/ calls over one key server (or cluster)."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self._store: Store | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _reader(self) -> SeriesReader:
        with self._lock:
            if self._store is None:
                self._store = Store(self.config)
            return SeriesReader(self._store.client, self.config.cursor_count)

    def _forget(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
            self._store = None

    async def handle(self, request: Request) -> Reply:
        call = next((c for c in CALLS if request.path[len("/series/") :].startswith(c)), None)
        if call is None:
            return html_error(400, "unknown", "no handler for URL")
        params: dict[str, str] = dict(request.params)
        if request.method == "POST" and request.body:
            for key, value in parse_qsl(request.body.decode("utf-8", "replace")):
                params.setdefault(key, value)
        if request.method in ("OPTIONS", "HEAD"):
            return Reply(200, JSON, b"", allow="GET, POST")
        if any(k not in params for k in REQUIRED.get(call, ())):
            return html_error(400, "series", "failed to process URL")
        client = params.get("client")
        if call == "ping":
            return self._success(client)
        if call == "values" and not params.get("series"):
            return Reply(400, JSON, b'{"success":false}\r\n')
        work: Callable[[SeriesReader], Any] = getattr(self, "_" + call)(params)
        try:
            body = await trio.to_thread.run_sync(self._run, work)
        except (SeriesError, StoreError) as exc:
            who = f'"client":{sds_repr(client)},' if client is not None else ""
            text = f'{{{who}"message":{sds_repr(str(exc))},"success":false}}'
            return Reply(400, JSON, (text + "\r\n").encode())
        if body is None:
            return self._success(client)
        content = OCTETS if body in ("[]", "{}") else JSON
        return Reply(200, content, (_wrap(client, body) + "\r\n").encode())

    @staticmethod
    def _success(client: str | None) -> Reply:
        if client is not None:
            return Reply(
                200, OCTETS, f'{{"client":{sds_repr(client)},"success":true}}\r\n'.encode()
            )
        return Reply(200, OCTETS, b'{"success":true}\r\n')

    def _run(self, work: Callable[[SeriesReader], Any]) -> Any:
        import redis

        try:
            return work(self._reader())
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self._forget()
            raise StoreError(f"lost Redis at {self.config.servers[0][0]}:"
                             f"{self.config.servers[0][1]}: {exc}") from None  # fmt: skip

    # -- the calls: each returns work for a reader, giving the JSON body -------------------

    @staticmethod
    def _sids(params: Mapping[str, str], key: str = "series") -> list[str]:
        return [s for s in params.get(key, "").split(",") if s]

    def _descs(self, params):
        sids = self._sids(params)

        def work(reader: SeriesReader) -> str:
            items = [
                f'{{"series":"{d.series}","source":"{d.source}","pmid":"{d.pmid}",'
                f'"indom":"{d.indom}","semantics":"{d.semantics}","type":"{d.type}",'
                f'"units":"{d.units}"}}'
                for d in reader.descs(sids)
            ]
            return "[" + ",".join(items) + "]"

        return work

    def _instances(self, params):
        sids = self._sids(params)
        match = params.get("match")

        def work(reader: SeriesReader) -> str:
            if not sids:
                names = reader.names("inst.name", match)
                return "[" + ",".join(sds_repr(n) for n in names) + "]"
            items = [
                f'{{"series":"{i.series}","source":"{i.source}","instance":"{i.instance}",'
                f'"id":{i.id},"name":{sds_repr(i.name)}}}'
                for i in reader.instances(sids)
            ]
            return "[" + ",".join(items) + "]"

        return work

    def _labels(self, params):
        sids = self._sids(params)
        names = [n for n in (params.get("names") or params.get("name") or "").split(",") if n]
        match = params.get("match")

        def work(reader: SeriesReader) -> str:
            if sids:
                items = []
                for sid, pairs in reader.labels(sids):
                    inner = ",".join(f'"{n}":{v}' for n, v in pairs)
                    items.append(f'{{"series":"{sid}","labels":{{{inner}}}}}')
                return "[" + ",".join(items) + "]"
            if names:
                found = reader.label_values(names)
                inner = ",".join(f'"{n}":[' + ",".join(v) + "]" for n, v in found.items())
                return "{" + inner + "}"
            return "[" + ",".join(f'"{n}"' for n in reader.names("label.name", match)) + "]"

        return work

    def _metrics(self, params):
        sids = self._sids(params)
        match = params.get("match")

        def work(reader: SeriesReader) -> str:
            if sids:
                items = [
                    f'{{"series":"{s}","name":{sds_repr(n)}}}' for s, n in reader.metrics(sids)
                ]
                return "[" + ",".join(items) + "]"
            return "[" + ",".join(sds_repr(n) for n in reader.names("metric.name", match)) + "]"

        return work

    def _sources(self, params):
        sources = self._sids(params, "source")
        match = params.get("match")

        def work(reader: SeriesReader) -> str:
            if sources:
                items = [
                    f'{{"source":"{s}","name":{sds_repr(n)}}}' for s, n in reader.sources(sources)
                ]
                return "[" + ",".join(items) + "]"
            names = reader.names("context.name", match)
            return "[" + ",".join(sds_repr(n) for n in names) + "]"

        return work

    def _values(self, params):
        sids = self._sids(params)
        window = window_of(params)

        def work(reader: SeriesReader) -> str:
            found = []
            for sid in sids:
                values = reader.series_values(sid, window)
                if not values:  # (an expression's id: its query is evaluated again)
                    values = values_of_expression(reader, sid, window) or []
                found += values
            return values_json(found)

        return work

    def _query(self, params):
        text = params["expr"]

        def work(reader: SeriesReader) -> str:
            answer = run_query(reader, text)
            if answer.values is not None:
                return values_json(answer.values)
            return "[" + ",".join(f'"{sid}"' for sid in answer.sids) + "]"

        return work

    def _load(self, params):
        text = params["expr"]

        def work(reader: SeriesReader) -> None:
            """Load the archive the expression names (PCP 6.0.3's pmproxy fails here)."""
            try:
                spec = load_spec(text)
            except LoadSpecError as exc:
                raise SeriesError(str(exc)) from None
            with self._lock:
                store = self._store
            if store is None:
                raise SeriesError("no connection to the key server")
            try:
                ArchiveLoader(
                    store, spec.path, wanted=spec.metrics, start_ns=spec.start_ns,
                    finish_ns=spec.finish_ns,
                ).run()  # fmt: skip
            except LoadError as exc:
                raise SeriesError(str(exc)) from None
            return None

        return work


def values_json(values) -> str:
    items = []
    heads: dict[tuple[str, str], str] = {}
    for v in values:
        key = (v.series, v.instance)
        head = heads.get(key)
        if head is None:
            inst = f'"instance":"{v.instance}",' if v.instance != v.series else ""
            head = heads[key] = f'{{"series":"{v.series}",{inst}"timestamp":'
        items.append(head + v.timestamp + ',"value":' + sds_repr(v.value) + "}")
    return "[" + ",".join(items) + "]"


WINDOW_KEYS = ("samples", "count", "interval", "delta", "start", "begin", "finish", "end",
               "range", "offset", "align", "zone")  # fmt: skip


def window_of(params: Mapping[str, str]) -> Window:
    """The values window of a /series/values request: start/begin, finish/end (seconds
    since the epoch), interval/delta, samples/count."""

    def seconds(*keys: str) -> int:
        for key in keys:
            if params.get(key):
                try:
                    return int(float(params[key]) * 1_000_000_000)
                except ValueError:
                    raise SeriesError(f"invalid {key} {params[key]!r}") from None
        return 0

    def interval(*keys: str) -> int:
        for key in keys:
            if params.get(key):
                try:
                    return parse_interval_ns(params[key])
                except Exception:
                    raise SeriesError(f"invalid {key} {params[key]!r}") from None
        return 0

    count = 0 if any(params.get(k) for k in WINDOW_KEYS) else 1  # (no window: the newest)
    for key in ("samples", "count"):
        if params.get(key):
            if not params[key].isdigit():
                raise SeriesError(f"invalid {key} {params[key]!r}")
            count = int(params[key])
    return Window(
        start=seconds("start", "begin"),
        end=seconds("finish", "end"),
        delta=interval("interval", "delta"),
        count=count,
    )
