"""One pmlogsummary run: open the archive, settle the zone and window, sum, then print.

The sums come from columnar.py where the archive allows (one archive, read to its end,
no <mark> in the window, records in time order), metric by metric, and from walk.py's
record-by-record passes for the rest; either way the lines print in namespace order.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import tzinfo
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_EOL, PMError, pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.values import Timestamp

from .options import PROG, Options
from .report import Printer, Window, make_window
from .stats import MetricStats
from .walk import NUMERIC, Record, Walker, make_trace, warner

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext

NSEC = 1_000_000_000


def run(o: Options) -> int:
    from purepcp.tools.stdio import c_stdout

    with c_stdout():  # (buffered as C's, for -D traces on stderr)
        return _run(o)


def _run(o: Options) -> int:
    ctx = _open(o)
    zone = _zone(o, ctx)
    window = _window(o, ctx, zone)
    printer = Printer(o, window, zone, sys.stdout)
    if o.label:
        label = ctx.archive.label
        printer.label(label.version, label.hostname)
    status = 0
    metrics, failure = _summarise(o, ctx, window, printer)
    if failure is not None:  # (stdout stays buffered, as C's)
        sys.stderr.write(f"{PROG}: fetch failed: {pmErrStr(failure)}\n")
        status = 1
    if o.header:
        printer.header()
    _print(o, ctx, printer, metrics)
    sys.stdout.flush()
    return status


def _open(o: Options) -> ArchiveContext:
    from purepcp.pmapi.archive.context import ArchiveContext

    name = o.operands[0]
    try:
        return ArchiveContext(name, o.namespace)
    except PMError as exc:
        sys.stderr.write(f'{PROG}: Cannot open archive "{name}": {pmErrStr(exc.code)}\n')
        raise SystemExit(1) from None


def _zone(o: Options, ctx: ArchiveContext) -> tzinfo:
    """The reporting zone (-z, -Z or local), with the note PCP prints on stdout."""
    from purepcp.pmapi.timewindow import new_zone, tzinfo_for
    from purepcp.pmapi.zone import archive_zone

    if o.hostzone:
        host = ctx.archive.label.hostname
        sys.stdout.write(f'Note: timezone set to local timezone of host "{host}" from archive\n\n')
        return archive_zone(ctx)
    if o.timezone is not None:
        sys.stdout.write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return new_zone(o.timezone)
    return tzinfo_for(None)


def _window(o: Options, ctx: ArchiveContext, zone: tzinfo) -> Window:
    """pmGetContextOptions' window: -S and -T within the archive, as timevals."""
    from purepcp.pmapi.options import archive_end
    from purepcp.pmapi.timewindow import PM_MAX_TIME_T, TimeParseError, parse_time_window

    archive = ctx.archive
    end = archive_end(PROG, o.operands[0], archive)
    try:
        w = parse_time_window(o.start, o.finish, None, None, archive.label.start, end, tz=zone)
    except TimeParseError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{PROG}: invalid time window.\n{exc.errmsg}\n")
        raise SystemExit(1) from None
    unknown = end is None and o.finish is None
    finish_ns = min(w.end_ns, PM_MAX_TIME_T * NSEC)
    return make_window(w.start_ns // 1000, finish_ns // 1000, unknown)


def _records(ctx: ArchiveContext, window: Window, failed: list[int]) -> Iterator[Record]:
    """The records of the window, in order, as pmFetchArchive gives them from its start."""
    from purepcp.pmapi.archive.context import PM_MODE_FORW

    start = Timestamp(window.start // 1_000_000, window.start % 1_000_000 * 1000)
    ctx.set_mode(PM_MODE_FORW, start)
    while True:
        try:
            result = ctx.fetch_archive()
        except PMError as exc:
            if exc.code != PM_ERR_EOL:
                failed.append(exc.code)
            return
        stamp = result.timestamp.sec * 1_000_000 + result.timestamp.nsec // 1000
        if stamp > window.finish:
            return
        yield Record(stamp, tuple(result.vsets), not result.vsets)


def _summarise(
    o: Options, ctx: ArchiveContext, window: Window, printer: Printer
) -> tuple[dict[int, MetricStats], int | None]:
    """Every metric's figures, and the error that ended reading early (None at the end)."""
    archive = ctx.archive
    warn = warner(o.warn, lambda pmid: ctx.pmns.names(pmid) if _named(ctx, pmid) else [], PROG)
    trace = make_trace(o, ctx, printer)  # (-D appl0..appl2: the walk alone traces)
    walker = Walker(lambda pmid: _desc(ctx, pmid), o.sumflag, o.nbins, warn, trace)
    fast: dict[int, MetricStats] = {}
    left: set[int] | None = None  # (None: every metric is walked)
    from purepcp.pmapi.archive.reader import Archive

    if isinstance(archive, Archive) and trace is None:
        from .fastpath import columnar_summary

        found = columnar_summary(o, archive, window)
        if found is not None:
            fast, left = found
    failed: list[int] = []
    if left is None or left:
        records = _records(ctx, window, failed)
        if left is not None:
            records = _only(records, left)
        walker.average(records)
        if o.nbins:
            again = _records(ctx, window, [])
            walker.bin(_only(again, left) if left is not None else again)
    metrics = {**walker.metrics, **fast}
    return metrics, failed[0] if failed else None


def _only(records: Iterator[Record], pmids: set[int]) -> Iterator[Record]:
    for rec in records:
        kept = tuple(vs for vs in rec.vsets if vs.pmid in pmids)
        if kept:
            yield Record(rec.stamp, kept, False)


def _named(ctx: ArchiveContext, pmid: int) -> bool:
    try:
        ctx.pmns.names(pmid)
    except PMError:
        return False
    return True


def _desc(ctx: ArchiveContext, pmid: int) -> object:
    try:
        return ctx.lookup_desc(pmid)
    except PMError as exc:
        return exc.code


def _print(
    o: Options, ctx: ArchiveContext, printer: Printer, metrics: dict[int, MetricStats]
) -> None:
    """The lines, in namespace order: every metric, or those the arguments name."""
    from purepcp.pmapi.metricspec import SpecError, parse_metric_spec

    def inst_name(indom: int, inst: int) -> str | None:
        if indom == PM_INDOM_NULL:
            return None
        try:
            return ctx.instance_name_archive(indom, inst)
        except PMError:
            return None

    def summary(name: str, wanted: list[str] | None) -> None:
        try:
            pmid = ctx.lookup_name(name)
        except PMError as exc:
            sys.stdout.flush()
            sys.stderr.write(
                f"{PROG}: failed to lookup metric name (pmid={name}): {pmErrStr(exc.code)}\n"
            )
            return
        m = metrics.pop(pmid, None)
        if m is not None:
            printer.metric(name, m, inst_name, wanted)

    if len(o.operands) < 2:
        for name in ctx.pmns.traverse(""):
            summary(name, None)
        return
    for arg in o.operands[1:]:
        try:
            spec = parse_metric_spec(arg)
        except SpecError as exc:
            sys.stdout.flush()
            sys.stderr.write(exc.errmsg)
            continue
        try:
            names = ctx.pmns.traverse(spec.metric)
        except PMError as exc:
            sys.stdout.flush()
            sys.stderr.write(
                f"{PROG}: PMNS traversal failed for {spec.metric}: {pmErrStr(exc.code)}\n"
            )
            continue
        for name in names:
            summary(name, spec.insts or None)


__all__ = ["NUMERIC", "run"]
