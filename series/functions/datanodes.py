"""Reading the data nodes of an expression: each vector's series (as `select` finds
them) with their descriptors and metric names, and with a time window their values,
each stream read with the vector's own window and its samples picked with the whole
query's (series_node_prepare_time, series_values_store_to_node)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.cnumbers import uint32, uint64
from purepcp.pmapi.timewindow import NSEC, PM_MAX_TIME_T

from .. import schema
from ..parse import Vector
from ..read import SeriesError, SeriesReader
from ..window import Timing, WindowError, resolve_window
from .valuesets import EXPR_PMID, Desc, Node, Series, Value, timespec_delta

__all__ = ["Sampling", "load", "resolve"]


@dataclass(frozen=True)
class Sampling:
    """The part of a window that picks samples out of a stream reply (series_values_store_to
    _node reads the whole query's timing): ns since the epoch, 0 for unset."""

    start: int = 0
    delta: int = 0
    count: int = 0


@dataclass(frozen=True)
class _Range:
    """How a vector's stream is read (series_node_prepare_time, from the vector's timing)."""

    reverse: int = 0  # XREVRANGE + - COUNT reverse, when only samples were given
    start: int = 0
    end: int = 0

    def ids(self) -> tuple[str, str]:
        start = _stream_str(self.start)
        end = _stream_str(self.end) if self.end // NSEC else "+"
        return start, end


def _stream_str(ns: int) -> str:
    """timespec_stream_str: milliseconds (an unsigned 64-bit product) - microseconds."""
    sec, nsec = divmod(ns, NSEC)
    millis = uint64(sec * 1000 + nsec // 1_000_000)
    return f"{millis}-{nsec % 1_000_000 // 1000}"


def _vector_range(timing: Timing, texts: Any) -> _Range:
    count_only = texts is not None and texts.count_only
    if count_only and timing.count:
        return _Range(reverse=uint32(timing.count))
    end = timing.end
    if end and end // NSEC >= PM_MAX_TIME_T:
        end = PM_MAX_TIME_T * NSEC
    return _Range(start=timing.start, end=end)


def resolve(window: Any, now: int) -> Timing:
    """WINDOW's timing counted from NOW; SeriesError with PCP's message when it has none."""
    try:
        return resolve_window(window, now=now)
    except WindowError as exc:
        raise SeriesError(exc.message) from None


def _read_series(reader: SeriesReader, sids: Sequence[str]) -> list[Series]:
    """The descriptor and metric name of each series, as a data node holds them."""
    names = reader.map_all("metric.name")
    out = []
    for sid in sids:
        raw = bytes.fromhex(sid)
        fields = reader.client.hmget(
            schema.desc_key(raw), "indom", "semantics", "source", "type", "units"
        )
        if fields[0] is None:
            raise SeriesError(f"bad reply from {sid} HMGET (5)")
        text = [(f or b"").decode("utf-8", "surrogateescape") for f in fields]
        desc = Desc(text[0], EXPR_PMID, text[1], fields[2] or b"", text[3], text[4])
        metric_name = None
        for name_id in reader.client.smembers(schema.names_key(raw)):
            if name_id in names:
                metric_name = names[name_id]
        out.append(Series(sid, metric_name, desc))
    return out


def _fetch(reader: SeriesReader, sid: str, how: _Range) -> list:
    key = schema.values_key(bytes.fromhex(sid))
    if how.reverse:
        return reader.client.xrevrange(key, "+", "-", count=how.reverse)
    start, end = how.ids()
    return reader.client.xrange(key, start, end)


def _store(series: Series, entries: list, sampling: Sampling) -> None:
    """series_values_store_to_node: the picked samples, each in the slot of its position
    in the stream reply (so skipped ones leave empty slots and NUM_SAMPLES counts them
    all): every one, or one per interval (no extra nanosecond on the first goal), at
    most COUNT."""
    n = len(entries)
    series.num_samples = n
    series.samples = [[] for _ in range(n)]
    times = [schema.stream_ns(e[0]) for e in entries]
    picked = 0
    goal = 0
    for i, (entry_id, fields) in enumerate(entries):
        if sampling.delta:
            if i == 0:
                goal = sampling.start or times[0]
            if i + 1 < n:
                ahead = timespec_delta(times[i + 1], goal)
                if not ahead > 0:
                    continue
                if ahead > 2 * (sampling.delta // NSEC):
                    goal = times[i + 1]
                goal += sampling.delta
        if sampling.count and picked >= sampling.count:
            break
        picked += 1
        stamp = schema.timestamp_json(entry_id)
        slot = series.samples[i]
        for name, value in _field_pairs(fields):
            if name == b"":
                inst = series.sid
            elif len(name) == 20:
                inst = name.hex()
            else:
                continue
            slot.append(Value(stamp, times[i], inst, value.decode("utf-8", "surrogateescape")))


def _field_pairs(fields: Any) -> Iterator[tuple[bytes, bytes]]:
    """A stream entry's field/value pairs: a dict (redis-py's parsing) or the flat list
    the server sends (the Store's clients)."""
    if isinstance(fields, dict):
        yield from fields.items()
        return
    for i in range(0, len(fields) - 1, 2):
        yield fields[i], fields[i + 1]


def load(
    reader: SeriesReader,
    node: Node,
    sampling: Sampling | None,
    now: int,
    select: Callable[[SeriesReader, Vector], list[bytes]],
) -> None:
    """Fill every data node under NODE: descriptors, and with SAMPLING the values."""
    if isinstance(node.expr, Vector):
        sids = [s.hex() for s in select(reader, node.expr)]
        node.values = _read_series(reader, sids)
        if sampling is not None:
            window = node.expr.window
            timing = resolve(window, now) if window is not None else Timing()
            how = _vector_range(timing, window)
            for series in node.values:
                _store(series, _fetch(reader, series.sid, how), sampling)
        return
    for child in node.children:
        load(reader, child, sampling, now, select)
