"""Bounds on the work one query may cause: how big it may be, how many series it may
select, and how long it may run.  PCP has none; pmproxy answers anyone who can reach
it, so ours sets them ([pmseries] in pmproxy.conf; docs/pmproxy.md).  The pmseries
command runs unbounded, as PCP's does: its user is on the host already.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass

from .errors import SeriesError

__all__ = ["Budget", "QueryLimitError", "QueryLimits", "count_terms"]


class QueryLimitError(SeriesError):
    """A query over one of the limits; STATUS is the HTTP status pmproxy answers with
    (400: the query is too big, 503: it ran out of time)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class QueryLimits:
    """[pmseries] limit.terms, limit.series and limit.seconds; None: no limit."""

    #: metric names, numbers, label tests, functions and operators in one query
    terms: int | None = 256
    #: series one query's metric names select, all of them together
    series: int | None = 20_000
    #: seconds one query (or /series/values request) may take before it is given up
    seconds: float | None = 10.0

    @classmethod
    def unbounded(cls) -> QueryLimits:
        return cls(None, None, None)


def _children(node: object) -> Iterator[object]:
    if isinstance(node, (list, tuple)):
        yield from node
    elif is_dataclass(node) and not isinstance(node, type):
        for f in fields(node):
            yield getattr(node, f.name)


def count_terms(expr: object) -> int:
    """The parse nodes of EXPR (its windows not counted), walked without recursion so
    that a chain of thousands of terms costs no stack."""
    from .window import Window  # (a query has been parsed: the parser is loaded already)

    count, stack = 0, [expr]
    while stack:
        node = stack.pop()
        if is_dataclass(node) and not isinstance(node, type):
            if isinstance(node, Window):
                continue
            count += 1
        stack.extend(c for c in _children(node) if is_dataclass(c) or isinstance(c, (list, tuple)))
    return count


class Budget:
    """One request's share of the limits, spent as the query runs: its terms checked
    once, its series as each metric name selects them, its time at each step."""

    def __init__(self, limits: QueryLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.started = clock()
        self.selected = 0

    def check_terms(self, expr: object) -> None:
        limit = self.limits.terms
        if limit is None:
            return
        terms = count_terms(expr)
        if terms > limit:
            raise QueryLimitError(
                f"query has {terms} terms, more than this pmproxy allows ({limit}, "
                "[pmseries] limit.terms)"
            )

    def check_series(self, more: int) -> None:
        self.selected += more
        limit = self.limits.series
        if limit is not None and self.selected > limit:
            raise QueryLimitError(
                f"query selects more than {limit} series, more than this pmproxy allows "
                "([pmseries] limit.series)"
            )

    def check_time(self) -> None:
        limit = self.limits.seconds
        if limit is not None and self.clock() - self.started > limit:
            raise QueryLimitError(
                f"query took longer than {limit:g} seconds, more than this pmproxy allows "
                "([pmseries] limit.seconds)",
                status=503,
            )

    def selector(self, select: Callable) -> Callable:
        """SELECT (reader, vector -> series ids) counting what it selects, and the time."""

        def counted(reader, vector):
            self.check_time()
            found = select(reader, vector)
            self.check_series(len(found))
            return found

        return counted
