"""pmseries' report modes (every mode but --load), as on_series_setup chooses them: the
function for each request.Mode, and `report`, which runs one against the key server.

A query is answered by `run_query`, the seam the tests replace with a fake engine."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import redis

from purepcp.pmapi.errors import pmErrStr
from purepcp.series.read import SeriesError, SeriesReader
from purepcp.series.store import StoreConfig

from .config import connect
from .formats import Value
from .lookups import (
    lookup_descs,
    lookup_instances,
    lookup_label_values,
    lookup_labels,
    lookup_metrics,
    lookup_sources,
)
from .options import TOOL
from .report import Report
from .request import Mode, Request
from .sids import sid_error
from .windows import WindowError, parse_window

if TYPE_CHECKING:  # (the engine is imported when a query is run)
    from purepcp.series.query import QueryAnswer

#: a piece of the metadata report: a lookup or a step of the printing, and its status
Step = Callable[[], int]


def metadata_steps(
    reader: SeriesReader, report: Report, sid: str | None, pattern: str | None
) -> list[Step]:
    """series_data_report: the pieces of the report on one series (or, with SID None,
    the listings of every name), in pmseries' order."""
    show = report.show
    one = [sid] if sid is not None else []
    steps: list[Step] = [lambda: report.header(sid)]
    if show.needs_descs:
        steps += [lambda: lookup_descs(reader, report, one), report.end_section]
    if show.sources:
        steps += [lambda: lookup_sources(reader, report, one, pattern), report.end_section]
    if show.metrics:
        steps += [lambda: lookup_metrics(reader, report, one, pattern), report.end_section]
    if show.labels:
        steps += [
            lambda: lookup_labels(reader, report, one, pattern),
            report.metric_labels,
            report.end_section,
        ]
    if show.needs_instances:
        steps += [
            lambda: lookup_instances(reader, report, one, pattern),
            report.instance_names,
            report.end_section,
        ]
    if show.labels and sid is not None:
        steps += [lambda: instance_label_lookup(reader, report), report.instance_labels,
                  report.end_section]  # fmt: skip
    steps.append(report.footer)
    return steps


def instance_label_lookup(reader: SeriesReader, report: Report) -> int:
    """The labels of the instances just listed, read by their own series ids."""
    if not report.insts:
        return 0
    report.expect_instance_labels()
    return lookup_labels(reader, report, list(report.iseries), None)


def comma_split(text: str) -> list[str]:
    """sdssplitlen on commas: nothing for an empty string, empty pieces kept."""
    return text.split(",") if text else []


def series_report(reader: SeriesReader, report: Report, request: Request) -> None:
    """The metadata report on each series id given, or the listings without any."""
    sids = comma_split(request.text)
    steps: list[Step] = []
    if not sids:
        steps = metadata_steps(reader, report, None, request.pattern)
    for sid in sids:
        steps += [*metadata_steps(reader, report, sid, request.pattern), report.next_report]
    for step in steps:
        report.done(step())


def series_sources(reader: SeriesReader, report: Report, request: Request) -> None:
    """-S: the names of the sources given, or of every source."""
    report.done(lookup_sources(reader, report, comma_split(request.text), request.pattern))


def series_label_values(reader: SeriesReader, report: Report, request: Request) -> None:
    """-v: each label name's values."""
    names = comma_split(request.text)
    if not names:
        report.fail(f"no label names in string '{request.text}': {pmErrStr(0)}")
        return
    report.done(lookup_label_values(reader, report, names))


def series_values(reader: SeriesReader, report: Report, request: Request) -> None:
    """-w: the values of the series given, in the time window."""
    given = comma_split(request.text)
    if not given:
        report.fail(f"no series identifiers in string '{request.text}': {pmErrStr(0)}")
        return
    text = request.window or ""
    if not text.startswith("["):
        text = f"[{text}]"
    try:
        window = parse_window(text)
    except WindowError as exc:
        report.log("Error", exc.message)
        report.fail(f"invalid time specification '{text}': {pmErrStr(exc.code)}")
        return
    sids = []
    for sid in given:
        bad = sid_error(sid)
        if bad is not None:
            report.log("Error", bad)
            return
        sids.append(sid[:40].lower())
    for sid in sids:
        for v in reader.values([sid], window, nudge=True):
            report.on_value(sid, Value(v.instance, v.timestamp, v.ns, v.value))
    report.done(0)


def run_query(reader: SeriesReader, text: str) -> QueryAnswer:
    """The query engine's answer to TEXT (its sids, and values when it has any)."""
    from purepcp.series.query import run_query as engine

    return engine(reader, text)


def series_query(reader: SeriesReader, report: Report, request: Request) -> None:
    """A query: the ids of the series it matches, or their values when it has a time
    window or a function (just the ids with -F)."""
    try:
        answer = run_query(reader, request.text)
    except SeriesError as exc:
        report.log("Error", str(exc))
        return
    except ImportError as exc:  # (an installation without the query engine)
        report.log("Error", f"cannot evaluate queries here: {exc}")
        return
    if answer.values is not None and not request.fast:
        for v in answer.values:
            report.on_value(v.series, Value(v.instance, v.timestamp, v.ns, v.value))
    else:
        for sid in answer.sids:
            report.on_match(sid)
    report.done(0)


#: the function of each report mode
MODES: dict[Mode, Callable[[SeriesReader, Report, Request], None]] = {
    Mode.QUERY: series_query,
    Mode.WINDOW: series_values,
    Mode.LABEL_VALUES: series_label_values,
    Mode.SOURCES: series_sources,
    Mode.METADATA: series_report,
}


def report(request: Request, config: StoreConfig) -> int:
    """The request's mode run against the key server: its exit status; a failure of
    the server (or anything else nobody foresaw) ends the run with one line."""
    colour = sys.stdout.isatty() and not os.environ.get("FAKETTY")
    out = Report(request.show, colour=colour)
    store = connect(config)
    reader = SeriesReader(store.client, config.cursor_count)
    try:
        MODES[request.mode](reader, out, request)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        TOOL.fail(f"[Error] lost Redis at {store.where}: {_first_line(exc)}")
    except redis.RedisError as exc:
        TOOL.fail(f"[Error] Redis at {store.where}: {_first_line(exc)}")
    except SeriesError as exc:
        TOOL.fail(f"[Error] {exc}")
    except BrokenPipeError:  # (stdout closed early, as by "| head": ends quietly)
        raise
    except Exception as exc:  # a failure nobody foresaw is still one line, not a traceback
        TOOL.fail(f"[Error] {type(exc).__name__}: {exc}")
    finally:
        store.close()
    return out.status


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
