"""pmproxy's /series/* REST calls (pmwebapi(3)), answered from the key server pmseries
loads, in the JSON PCP 6.0.3's pmproxy writes.

Every call runs in a worker thread (redis-py is synchronous); the connection is made
on the first call and again after the server went away, so pmproxy starts, and keeps
serving the rest of its API, whether or not the key server is there.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

import trio

from purepcp.pmapi.cnumbers import strtoul, uint32
from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    TimeParseError,
    parse_interval_ns,
    parse_time,
)
from purepcp.series.functions import instances_of_expression, values_of_expression
from purepcp.series.limits import Budget, QueryLimitError, QueryLimits
from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.loadspec import LoadSpecError, load_spec
from purepcp.series.query import run_query
from purepcp.series.read import SeriesError, SeriesReader, Window
from purepcp.series.store import Store, StoreConfig, StoreError

from .webapi import JSON, Reply, Request, html_error

log = logging.getLogger("pmproxy")
OCTETS = "application/octet-stream"
#: the calls, matched by prefix after /series/ as pmproxy does
CALLS = ("query", "descs", "instances", "labels", "metrics", "sources", "values", "load", "ping")
#: the parameter each call cannot do without
REQUIRED = {"query": ("expr",), "descs": ("series",), "load": ("expr",)}
#: the parameters that, when given, may not be empty (pmproxy's series.c)
NOT_EMPTY = {
    "query": ("expr",),
    "load": ("expr",),
    "descs": ("series",),
    "instances": ("series",),
    "labels": ("series", "name", "names"),
    "metrics": ("series",),
    "values": ("series",),
    "sources": ("source",),
}


def _unusable(call: str, params: dict[str, str]) -> bool:
    """Whether CALL's parameters make PCP's series servlet refuse the URL: a required
    one missing, or one that names something given empty."""
    if any(k not in params for k in REQUIRED.get(call, ())):
        return True
    return any(params.get(k) == "" for k in NOT_EMPTY.get(call, ()))


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


def _instances_of(reader: SeriesReader, sid: str) -> list:
    """SID's instances; for an expression's id (which has none stored), the instances of
    the expression's values, as PCP's series_lookup_instances_callback gives them."""
    found = reader.instances([sid])
    if found:
        return found
    return instances_of_expression(reader, sid) or []


def _wrap(client: str | None, body: str) -> str:
    return f'{{"client":{sds_repr(client)},"result":{body}}}' if client is not None else body


class SeriesAPI:
    """The /series/ calls over one key server (or cluster)."""

    def __init__(
        self,
        config: StoreConfig,
        limits: QueryLimits | None = None,
        load_paths: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.limits = limits if limits is not None else QueryLimits()
        #: the directories /series/load may load archives from, their links resolved
        self.load_paths = tuple(os.path.realpath(p) for p in load_paths)
        self._store: Store | None = None
        self._lock = threading.Lock()
        #: kept connected by keep_connected (PCP's start-up connection and reconnect
        #: timer); requests then never connect themselves
        self.monitored = False
        self._say_failures = True  # (a failed connection is logged once until one works)
        self._connecting = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def connect_once(self, features: Sequence[str]) -> bool:
        """Connect, unless connected: as PCP's pmproxy, say "Cannot connect to Redis" once
        until a connection works, then "Redis slots, FEATURES setup"."""
        with self._connecting:  # (one attempt at a time)
            return self._connect_once(features)

    def _connect_once(self, features: Sequence[str]) -> bool:
        with self._lock:
            if self._store is not None:
                return True
        try:
            store = Store(self.config)
        except StoreError as exc:
            if self._say_failures:
                log.info("Cannot connect to Redis: %s", exc.reason or exc)
                self._say_failures = False
            return False
        with self._lock:
            self._store = store
        self._say_failures = True
        log.info("%s setup", ", ".join(["Redis slots", *features]))
        return True

    async def keep_connected(self, features: Sequence[str], every: float = 1.0) -> None:
        """Connect now, and again EVERY seconds whenever the connection is lost."""
        self.monitored = True
        while True:
            await trio.to_thread.run_sync(self.connect_once, features, abandon_on_cancel=True)
            await trio.sleep(every)

    def _reader(self) -> SeriesReader:
        with self._lock:
            if self._store is None and self.monitored:
                raise StoreError("no connection to Redis (reconnecting)")
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
        if _unusable(call, params):
            return html_error(400, "series", "failed to process URL")
        client = params.get("client")
        if call == "ping":
            return self._success(client)
        if call == "values" and not params.get("series"):
            return Reply(400, JSON, b'{"success":false}\r\n')
        try:
            work: Callable[[SeriesReader], Any] = getattr(self, "_" + call)(params)
            body = await trio.to_thread.run_sync(self._run, work)
        except (SeriesError, StoreError) as exc:
            status = getattr(exc, "status", 400)
            if isinstance(exc, QueryLimitError) or status != 400:  # (a line for whoever runs it)
                log.warning("pmproxy: %s from %s: %s", request.path, request.peer or "local", exc)
            who = f'"client":{sds_repr(client)},' if client is not None else ""
            text = f'{{{who}"message":{sds_repr(str(exc))},"success":false}}'
            return Reply(status, JSON, (text + "\r\n").encode())
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
            if self._store is not None:
                log.error("Lost connection to Redis.")
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
                for sid in sids
                for i in _instances_of(reader, sid)
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
            budget = Budget(self.limits)
            budget.check_series(len(sids))
            found = []
            for sid in sids:
                budget.check_time()
                values = reader.series_values(sid, window)
                if not values:  # (an expression's id: its query is evaluated again)
                    values = values_of_expression(reader, sid, window, budget=budget) or []
                found += values
            return values_json(found)

        return work

    def _query(self, params):
        text = params["expr"]

        def work(reader: SeriesReader) -> str:
            answer = run_query(reader, text, budget=Budget(self.limits))
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
            self._check_load_path(spec.path)
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

    def _check_load_path(self, path: str) -> None:
        """Refuse (403) an archive that is not under one of [pmseries] load.paths: a
        client must not make pmproxy read whatever files it can read."""
        if not self.load_paths:
            raise Refused("loading archives is off in this pmproxy ([pmseries] load.paths)")
        real = os.path.realpath(path)
        for allowed in self.load_paths:
            if os.path.commonpath((real, allowed)) == allowed:
                return
        raise Refused(f"{path} is not under a directory in [pmseries] load.paths")


class Refused(SeriesError):
    """A request this pmproxy will not carry out for anyone (HTTP 403)."""

    status = 403


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


#: The /series/values parameters of each window field (the first one given wins), in the
#: order pmSeriesValues reads them, so that the first bad one is the one reported.
VALUES_WINDOW = (
    ("delta", ("interval", "delta")),
    ("align", ("align",)),
    ("start", ("start", "begin")),
    ("end", ("finish", "end")),
    ("range", ("range",)),
    ("count", ("samples", "count")),
    ("offset", ("offset",)),
    ("zone", ("zone",)),
)


def window_of(params: Mapping[str, str], now: int | None = None) -> Window:
    """The values window of a /series/values request, read as PCP 6.0.3's pmSeriesValues
    reads it: start/begin and finish/end with __pmParseHighResTime from the epoch with no
    end (a bare number is seconds since the epoch; "-2000second" and other dates are read
    against the clock, "-2000s" is an error),
    interval/delta and range as intervals, samples/count and offset as strtoul reads them;
    a parameter given empty still counts as given.  NOW is ns since the epoch (default the
    clock).  Raises SeriesError with PCP's message for the first text it refuses."""
    texts = {f: next((params[k] for k in keys if k in params), None) for f, keys in VALUES_WINDOW}
    now_ns = time.time_ns() if now is None else now
    clock = (now_ns // NSEC, now_ns % NSEC)
    times: dict[str, int] = {}
    for field, text in texts.items():
        if text is None or field == "zone":  # (any zone: pmNewZone accepts every text)
            continue
        try:
            if field in ("delta", "range"):
                times[field] = parse_interval_ns(text)
            elif field in ("start", "end", "align"):
                times[field] = parse_time(text, 0, None, now=clock)
        except TimeParseError as exc:
            parser = "pmParseHighResInterval" if field in ("delta", "range") else \
                "__pmParseHighResTime"  # fmt: skip
            raise SeriesError(f"Cannot parse time {field} with {parser}:\n{exc.errmsg}") from None
        if field in ("count", "offset"):
            scan = strtoul(text)
            if scan.end != len(text):
                word = "count" if field == "count" else "offset"
                raise SeriesError(f"Invalid sample {word} requested - {text}")
            times[field] = uint32(int(scan.value))
    given = {f for f, text in texts.items() if text is not None}
    start, end = times.get("start", 0), times.get("end", 0)
    if "range" in times:  # (from that long ago, with no end)
        start, end = now_ns - times["range"], 0
    timed = bool(given & {"range", "delta", "start", "end"})
    count = times.get("count", 0)
    if not timed and "count" not in given:
        count = 1  # (no window at all: the newest value)
    if start < 0:  # (a range reaching before the epoch: nothing, as PCP answers)
        return Window(start=1, end=1)
    return Window(
        start=start,
        end=max(end, 0) if end < PM_MAX_TIME_T * NSEC else 0,
        delta=times.get("delta", 0),
        count=count,
        count_only=bool(count) and not timed,
    )
