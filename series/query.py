"""Answering a pmseries query: the series its vectors select (vectors.py) and, with a
time window, their values; functions and arithmetic (rate, sum, rescale, ...) computed
by the functions package from the values read.  As libpcp_web's query.c answers."""

from __future__ import annotations

from .functions import run_function
from .limits import Budget
from .parse import Binary, Call, QuerySyntaxError, parse
from .read import SeriesError, SeriesReader
from .vectors import QueryAnswer, select, window_timing
from .window import WindowError

__all__ = ["QueryAnswer", "run_query", "select", "window_timing"]


def run_query(
    reader: SeriesReader, text: str, *, now: int | None = None, budget: Budget | None = None
) -> QueryAnswer:
    """TEXT's answer from READER's store; SeriesError with PCP's message when it cannot
    be parsed or answered (QueryLimitError when it goes over BUDGET's limits)."""
    try:
        query = parse(text)
    except QuerySyntaxError as exc:
        raise SeriesError(exc.message) from None
    except WindowError as exc:
        raise SeriesError(str(exc)) from None
    if budget is not None:
        budget.check_terms(query.expr)
    if isinstance(query.expr, (Call, Binary)):
        return run_function(reader, query, now=now, budget=budget)
    found = (budget.selector(select) if budget is not None else select)(reader, query.expr)
    sids = [s.hex() for s in found]
    if not query.wants_values:
        return QueryAnswer(sids)
    return QueryAnswer(sids, reader.values(sids, window_timing(query, now), nudge=True))
