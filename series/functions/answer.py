"""Answering a query whose expression is a function call or arithmetic: the expression
evaluated over the store (its data nodes read, its values calculated, its id and
descriptor hashed and written) and its values reported, for /series/query and for
/series/values of an expression's id."""

from __future__ import annotations

import time

from purepcp.pmapi.cnumbers import uint32

from .. import schema
from ..limits import Budget
from ..parse import Binary, Call, Expr, Query, QuerySyntaxError, parse
from ..read import SeriesError, SeriesInst, SeriesReader, SeriesValue, Window
from ..vectors import QueryAnswer, select
from .calculate import calculate
from .datanodes import Sampling, load, resolve
from .exprhash import hash_expression
from .valuesets import Run, Series, tree

__all__ = ["instances_of_expression", "run_function", "values_of_expression"]


def _evaluate(
    reader: SeriesReader,
    expr: Expr,
    sampling: Sampling | None,
    now: int,
    budget: Budget | None = None,
) -> tuple[str | None, list[Series]]:
    """EXPR computed over READER's store: its id and result series (values picked with
    SAMPLING; without it, descriptors only).  SeriesError with PCP's first message
    (QueryLimitError when it goes over BUDGET's limits)."""
    run = Run(budget)
    root = tree(expr, run)
    load(reader, root, sampling, now, budget.selector(select) if budget is not None else select)
    calculate(root, run)
    sid = hash_expression(reader, root, run)
    if run.failed:
        raise SeriesError(run.messages[0])
    return sid, root.values


def _values(series: list[Series]) -> list[SeriesValue]:
    """series_node_values_report: every series' samples, instances in order."""
    return [
        SeriesValue(s.sid, v.series, v.timestamp, v.ns, v.data)
        for s in series
        for v in s.each_value()
    ]


def run_function(
    reader: SeriesReader, query: Query, *, now: int | None = None, budget: Budget | None = None
) -> QueryAnswer:
    """The answer to QUERY, whose expression is a function call or arithmetic: without a
    time window the expression's id (`[]` when nothing matched), with one its values.
    NOW (ns since the epoch) is what relative times count from.  Writes the expression's
    `pcp:desc:series:<id>` and `pcp:expr:series:<id>` as PCP does; SeriesError with
    PCP's message for an expression PCP refuses."""
    now = time.time_ns() if now is None else now
    if not query.wants_values:
        sid, _ = _evaluate(reader, query.expr, None, now, budget)
        return QueryAnswer([sid] if sid else [], expression=True)
    timing = resolve(query.window, now)
    sampling = Sampling(start=timing.start, delta=timing.delta, count=uint32(timing.count))
    sid, series = _evaluate(reader, query.expr, sampling, now, budget)
    if sid is None:
        return QueryAnswer([], [], expression=True)
    return QueryAnswer([sid], _values(series), expression=True)


def values_of_expression(
    reader: SeriesReader,
    sid: str,
    window: Window,
    *,
    now: int | None = None,
    budget: Budget | None = None,
) -> list[SeriesValue] | None:
    """/series/values for SID when it is an expression's id (series_query_expr_reply):
    the canonical text stored in `pcp:expr:series:<sid>` parsed again and evaluated with
    WINDOW as PCP does it - every vector's whole stream is read (the text has no
    windows), and WINDOW only picks samples: its samples cap (1 when the request gave
    no window), its interval (stepping from its start, or the first sample), never its
    start or finish as bounds.  So without a window the answer is each result's first
    value over the oldest sample, e.g. a raw sample for rate().  None when SID has no
    stored expression.  Rewrites the expression's descriptor, as PCP does;
    SeriesError with PCP's message when the expression fails."""
    raw = bytes.fromhex(sid)
    text = reader.client.hget(schema.expr_key(raw), "query")
    if text is None:
        return None
    try:
        query = parse(text.decode("utf-8", "surrogateescape"))
    except QuerySyntaxError as exc:
        raise SeriesError(exc.message) from None
    if not isinstance(query.expr, (Call, Binary)):
        return None
    if budget is not None:
        budget.check_terms(query.expr)
    now = time.time_ns() if now is None else now
    start = now - window.range if window.range else window.start
    count = window.count
    if not (window.start or window.end or window.delta or window.count or window.range):
        count = 1
    sampling = Sampling(start=start, delta=window.delta, count=uint32(count))
    expr_sid, series = _evaluate(reader, query.expr, sampling, now, budget)
    if expr_sid is None:
        return []
    return _values(series)


def instances_of_expression(reader: SeriesReader, sid: str) -> list[SeriesInst] | None:
    """/series/instances for SID when it is an expression's id (series_inst_expr_reply):
    the expression evaluated again for one sample, and the instance of each value it
    gives reported as SID's.  None when SID has no stored expression."""
    values = values_of_expression(reader, sid, Window())
    if values is None:
        return None
    isids = [bytes.fromhex(v.instance) for v in values if len(v.instance) == 40]
    return reader.instance_rows(sid, isids)
