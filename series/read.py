"""Reading what pmseries stored: descriptors, instances, labels, names, sources and
values of series, by the Redis reads libpcp_web's query.c makes (one key per command,
so a cluster routes each), answered as plain records in PCP's order.  pmproxy turns
them into JSON and the pmseries command into text."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import schema
from .errors import SeriesError
from .ids import string_id

NSEC = 1_000_000_000


@dataclass(frozen=True)
class SeriesDesc:
    series: str
    source: str
    pmid: str
    indom: str
    semantics: str
    type: str
    units: str


@dataclass(frozen=True)
class SeriesInst:
    series: str  # the metric's
    source: str
    instance: str  # the instance's series id
    id: int
    name: str


class SeriesValue(NamedTuple):
    """One value of one series (a tuple: a day of a metric makes a great many)."""

    series: str
    instance: str  # the instance's series id, or the metric's when it has none
    timestamp: str  # the stream entry id, `ms.usec` (pmproxy's JSON number)
    ns: int
    value: str  # as stored: decimal, %e, or a quoted string


@dataclass(frozen=True)
class Window:
    """A time window of values (ns since the epoch; 0 or None: unset), as timing_t."""

    start: int = 0
    end: int = 0
    delta: int = 0
    count: int = 0
    range: int = 0
    #: only a sample count was asked for, so the newest COUNT are read (PCP decides it by
    #: the window's texts: `start:0` is given, though its value is unset); None: decide by
    #: the values
    count_only: bool | None = None


UNKNOWN_DESC = ("unknown", "PM_ID_NULL", "unknown", "unknown", "unknown", "unknown")
SID_RE = re.compile(r"[0-9a-fA-F]{40}")


def parse_sid(text: str) -> bytes:
    """A hex40 series id as its 20 bytes; SeriesError as PCP words it."""
    text = text.strip()
    if not SID_RE.fullmatch(text):
        raise SeriesError(f"Invalid SID {text} near offset 0")
    return bytes.fromhex(text)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "surrogateescape") if raw is not None else ""


class SeriesReader:
    """The reads of PCP's series queries, over a redis-py client (or cluster client)."""

    def __init__(self, client: Any, cursor_count: int = schema.DEFAULT_CURSOR_COUNT) -> None:
        self.client = client
        self.cursor_count = cursor_count

    # -- maps ----------------------------------------------------------------------------

    def map_all(self, mapname: str) -> dict[bytes, str]:
        """A string map: id (bin20) -> name."""
        return {k: _text(v) for k, v in self.client.hgetall(schema.map_key(mapname)).items()}

    def map_values(self, mapname: str) -> list[str]:
        """A map's names, in the server's order (HVALS)."""
        return [_text(v) for v in self.client.hvals(schema.map_key(mapname))]

    def names(self, mapname: str, match: str | None = None) -> list[str]:
        """A map's names, those matching the glob MATCH when given."""
        found = self.map_values(mapname)
        if match:
            found = [n for n in found if fnmatch.fnmatchcase(n, match)]
        return found

    def scan_map(self, mapname: str, test: Callable[[str], bool]) -> list[bytes]:
        """The ids of a map's names that pass TEST (HSCAN, as PCP matches patterns)."""
        ids = []
        for key, value in self.client.hscan_iter(schema.map_key(mapname), count=self.cursor_count):
            if test(_text(value)):
                ids.append(key)
        return ids

    # -- sets of series --------------------------------------------------------------------

    def members(self, key: str) -> set[bytes]:
        return {m for m in self.client.smembers(key) if len(m) == 20}

    def by_name(self, what: str, name: str) -> set[bytes]:
        """The metric series having NAME in WHAT (`metric.name`, `inst.name`,
        `context.name`)."""
        return self.members(schema.series_key(what, string_id(name)))

    def by_label(self, name: str, json_value: str) -> set[bytes]:
        """The metric series carrying label NAME with the JSON text JSON_VALUE."""
        value_map = schema.label_value_map(string_id(name))
        return self.members(schema.series_key(value_map, string_id(json_value)))

    def by_map_ids(self, what: str, ids: Iterable[bytes]) -> set[bytes]:
        found: set[bytes] = set()
        for ident in ids:
            found |= self.members(schema.series_key(what, ident))
        return found

    # -- descriptors ----------------------------------------------------------------------

    def descs(self, sids: Sequence[str]) -> list[SeriesDesc]:
        out = []
        for sid in sids:
            raw = self.client.hmget(
                schema.desc_key(parse_sid(sid)), "indom", "pmid", "semantics", "source", "type",
                "units",
            )  # fmt: skip
            if raw[0] is None:
                indom, pmid, sem, source, type_, units = UNKNOWN_DESC
            else:
                indom, pmid, sem = _text(raw[0]), _text(raw[1]), _text(raw[2])
                source = raw[3].hex() if raw[3] is not None and len(raw[3]) == 20 else ""
                type_, units = _text(raw[4]), _text(raw[5])
            out.append(SeriesDesc(sid, source, pmid, indom, sem, type_, units))
        return out

    # -- instances -----------------------------------------------------------------------

    def instances(self, sids: Sequence[str]) -> list[SeriesInst]:
        """Each series' instances (series_lookup_instances); a series with none, such as
        an expression's, gets none here (see instances_of_expression)."""
        names = self.map_all("inst.name")
        out = []
        for sid in sids:
            isids = self.client.smembers(schema.instances_key(parse_sid(sid)))
            out += self.instance_rows(sid, isids, names)
        return out

    def instance_rows(
        self, sid: str, isids: Iterable[bytes], names: dict[bytes, str] | None = None
    ) -> list[SeriesInst]:
        """The instances ISIDS (20-byte ids) as SID's: `pcp:inst:series:<id>`'s inst,
        name and source, instances not stored left out."""
        if names is None:
            names = self.map_all("inst.name")
        out = []
        for isid in isids:
            if len(isid) != 20:
                continue
            inst, name_id, source = self.client.hmget(
                schema.inst_key(isid), "inst", "name", "source"
            )
            if inst is None:
                continue
            out.append(
                SeriesInst(
                    sid, source.hex() if source else "", isid.hex(), int(inst),
                    names.get(name_id or b"", ""),
                )
            )  # fmt: skip
        return out

    # -- labels ---------------------------------------------------------------------------

    def labels(self, sids: Sequence[str]) -> list[tuple[str, list[tuple[str, str]]]]:
        """Each series' labels (name, JSON value text) in the order stored; series with
        none are left out, as PCP leaves them."""
        label_names = self.map_all("label.name")
        value_maps: dict[bytes, dict[bytes, str]] = {}
        out = []
        for sid in sids:
            stored = self.client.hgetall(schema.labelvalue_key(parse_sid(sid)))
            pairs = []
            for name_id, value_id in stored.items():
                name = label_names.get(name_id)
                if name is None:
                    continue
                if name_id not in value_maps:
                    value_maps[name_id] = self.map_all(schema.label_value_map(name_id))
                pairs.append((name, value_maps[name_id].get(value_id, "null")))
            if pairs:
                out.append((sid, pairs))
        return out

    def label_values(self, names: Sequence[str]) -> dict[str, list[str]]:
        """Each label name's values (JSON texts) as stored; unknown names left out."""
        known = set(self.map_values("label.name"))
        return {
            name: self.map_values(schema.label_value_map(string_id(name)))
            for name in names
            if name in known
        }

    # -- metric and source names --------------------------------------------------------

    def metrics(self, sids: Sequence[str]) -> list[tuple[str, str]]:
        """(series, name) for each name of each series; an expression's series is named
        by its query text."""
        names = self.map_all("metric.name")
        out = []
        for sid in sids:
            raw = parse_sid(sid)
            ids = self.client.smembers(schema.names_key(raw))
            if ids:
                out += [(sid, names[i]) for i in ids if i in names]
                continue
            query = self.client.hget(schema.expr_key(raw), "query")
            if query is not None:
                out.append((sid, _text(query)))
        return out

    def sources(self, sources: Sequence[str]) -> list[tuple[str, str]]:
        names = self.map_all("context.name")
        out = []
        for src in sources:
            for name_id in self.client.smembers(schema.names_of_source_key(parse_sid(src))):
                if name_id in names:
                    out.append((src, names[name_id]))
        return out

    def source_of_names(self, name_ids: Iterable[bytes]) -> set[bytes]:
        found: set[bytes] = set()
        for ident in name_ids:
            found |= self.members(schema.source_by_name_key(ident))
        return found

    # -- values ----------------------------------------------------------------------------

    def values(self, sids: Sequence[str], window: Window, nudge: bool = True) -> list[SeriesValue]:
        """Each series' samples in WINDOW, selected as series_values_reply does (NUDGE: the
        /series/values path's extra nanosecond on the first goal)."""
        out: list[SeriesValue] = []
        for sid in sids:
            out += self.series_values(sid, window, nudge)
        return out

    def series_values(self, sid: str, window: Window, nudge: bool = True) -> list[SeriesValue]:
        key = schema.values_key(parse_sid(sid))
        only_count = window.count_only
        if only_count is None:
            only_count = bool(window.count) and not (
                window.range or window.delta or window.start or window.end
            )
        if only_count:
            entries = self.client.xrevrange(key, "+", "-", count=window.count)
        else:
            start = schema.stream_id(window.start) if window.start else "0-0"
            end = schema.stream_id(window.end) if window.end else "+"
            entries = self.client.xrange(key, start, end)
        return list(_select(sid, entries, window, nudge))


def flat_fields(fields: Any) -> list:
    """A stream entry's fields as [field, value, ...], whichever shape the client gave."""
    if isinstance(fields, dict):
        return [x for pair in fields.items() for x in pair]
    return list(fields)


def _select(sid: str, entries: list, window: Window, nudge: bool):
    """series_values_reply: every entry, or with an interval one per step (the entry
    before the next one passes the goal), at most COUNT of them."""
    count = 0
    step = window.delta
    goal = None
    names: dict[bytes, str] = {}  # (each field's id as hex, worked out once)
    new = tuple.__new__
    for n, (entry_id, flat) in enumerate(entries):
        if not flat:
            continue
        if isinstance(flat, dict):  # (a cluster's nodes parse entries their own way)
            flat = flat_fields(flat)
        ns = schema.stream_ns(entry_id)
        if step:
            if goal is None:
                goal = (window.start or ns) + (1 if nudge else 0)
            if n + 1 < len(entries):
                following = schema.stream_ns(entries[n + 1][0])
                if following - goal > 0:
                    if following - goal > 2 * (step // NSEC) * NSEC:
                        goal = following
                    goal += step
                else:
                    continue
        if window.count and count >= window.count:
            break
        count += 1
        stamp = schema.timestamp_json(entry_id)
        for i in range(0, len(flat) - 1, 2):
            field = flat[i]
            inst = names.get(field)
            if inst is None:
                if len(field) == 20:
                    inst = names[field] = field.hex()
                elif field == b"":
                    inst = names[field] = sid
                else:
                    continue
            value = flat[i + 1].decode("utf-8", "surrogateescape")
            yield new(SeriesValue, (sid, inst, stamp, ns, value))
