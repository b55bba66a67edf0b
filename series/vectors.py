"""The series a pmseries query's vectors select: a metric name or pattern and label,
instance or source tests, as libpcp_web's query.c finds them, with its Redis reads and
its orders (see sets.py); and a query's time window as values to read with."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import schema, sets
from .ids import string_id
from .parse import (
    And,
    NameKind,
    Op,
    Or,
    Qualifier,
    Query,
    Vector,
)
from .read import SeriesError, SeriesReader, SeriesValue, Window
from .window import WindowError, resolve_window


@dataclass(frozen=True)
class QueryAnswer:
    """What a query found: series ids (hex40, PCP's order) and, when it asked for values
    (a time window), the values in PCP's order; EXPRESSION: the ids are computed ones."""

    sids: list[str]
    values: list[SeriesValue] | None = None
    expression: bool = False


def window_timing(query: Query, now: int | None = None) -> Window:
    """The query's window as values to read with."""
    if query.window is None:
        return Window()
    try:
        timing = resolve_window(query.window, now=now)
    except WindowError as exc:
        raise SeriesError(str(exc)) from None
    return Window(
        start=timing.start,
        end=0 if timing.open_ended else timing.end,
        delta=timing.delta,
        count=max(timing.count, 0),
        count_only=query.window.count_only,
    )


def select(reader: SeriesReader, vector: Vector) -> list[bytes]:
    """The metric series VECTOR names: by its name (or pattern), then its tests."""
    found: list[bytes] | None = None
    if vector.name is not None:
        if vector.glob:
            ids = reader.scan_map("metric.name", _glob(vector.name))
            found = _union_keys(reader, "metric.name", ids)
        else:
            found = _members(reader, schema.series_key("metric.name", string_id(vector.name)))
    if vector.quals is not None:
        tested = _filter(reader, vector.quals)
        found = tested if found is None else sets.intersect(found, tested)
    return found or []


def _filter(reader: SeriesReader, node) -> list[bytes]:
    if isinstance(node, And):
        return sets.intersect(_filter(reader, node.left), _filter(reader, node.right))
    if isinstance(node, Or):
        return sets.union(_filter(reader, node.left), _filter(reader, node.right))
    return _test(reader, node)


def _test(reader: SeriesReader, q: Qualifier) -> list[bytes]:
    """One test's series: an exact value's set, or every value of the map a pattern
    matches; the comparisons PCP 6.0.3 parses but does not evaluate select nothing."""
    kind = q.kind
    if kind is None:
        return []
    if kind is NameKind.LABEL:
        label_id = string_id(q.label or "")
        mapname = schema.label_value_map(label_id)
    else:
        mapname = kind.value
    if q.op is Op.EQ:
        return _members(reader, schema.series_key(mapname, string_id(q.match_text)))
    if q.op in (Op.GLOB, Op.REQ, Op.RNE):
        return _union_keys(reader, mapname, reader.scan_map(mapname, _pattern(q)))
    return []


def _pattern(q: Qualifier) -> Callable[[str], bool]:
    """string_pattern_match: glob or (negated) POSIX extended regular expression, over the
    stored text without the quotes a label's string value has."""
    if q.op is Op.GLOB:
        pattern = q.value

        def test(text: str) -> bool:
            return fnmatch.fnmatchcase(_unquoted(text), pattern)

        return test
    try:
        regex = re.compile(q.value)
    except re.error:
        raise SeriesError(f'invalid regular expression "{q.value}"') from None
    want = q.op is Op.REQ
    return lambda text: (regex.search(_unquoted(text)) is not None) == want


def _glob(pattern: str) -> Callable[[str], bool]:
    return lambda name: fnmatch.fnmatchcase(name, pattern)


def _unquoted(text: str) -> str:
    if len(text) > 1 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def _members(reader: SeriesReader, key: str) -> list[bytes]:
    return sets.union([], [m for m in reader.client.smembers(key) if len(m) == 20])


def _union_keys(reader: SeriesReader, what: str, ids: list[bytes]) -> list[bytes]:
    found: list[bytes] = []
    for ident in ids:
        found = sets.union(found, _members(reader, schema.series_key(what, ident)))
    return found
