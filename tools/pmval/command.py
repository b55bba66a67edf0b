"""pmval's command: the command line checked, the source opened, then the report set up
(zone, time window, metric, layout) and its samples walked from the source that fits.

Only a run that reports imports the reporting modules: `pmval -V` and a usage error
import none of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from purepcp.pmapi.options import Parsed

from .fatal import PROG, die
from .options import TOOL, Options, read_options

if TYPE_CHECKING:
    from datetime import tzinfo

    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.context import BaseContext
    from purepcp.pmapi.metricspec import MetricSpec
    from purepcp.pmapi.timewindow import TimeWindow
    from purepcp.pmapi.values import Timestamp

    from .loop import Samples
    from .metric import Metric
    from .model import Heading
    from .writer import Writer

_ARCHIVE_DIR = "/var/log/pcp/pmlogger"
#: an interpolated archive replay's fetches are answered ahead, a chunk at a time (False:
#: one fetch at a time, as a live source's; the tests compare the two)
CHUNKED = True


def main(argv: Sequence[str] | None = None) -> int:
    """pmval(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(run, argv)


def run(argv: list[str]) -> int:
    """pmval(1) on ARGV: its exit status (SystemExit ends a run that failed)."""
    parsed = TOOL.parse(argv)  # unknown options, -?, -V
    o = read_options(parsed.pairs)
    operands = parsed.operands
    if not o.errors and not operands:
        o.complain("error - no metricname specified")
    elif not o.errors and len(operands) > 1:
        o.complain("error - too many arguments")
    if o.errors:
        raise _usage(o.errors)
    spec = _spec(o, operands[0])
    if o.errors:
        raise _usage(o.errors)
    if o.unsupported:
        raise die(f"{PROG}: {', '.join(o.unsupported)}: not available in purepcp\n")
    ctx = TOOL.context(Parsed(values=_source(o, spec), specs=o.specs))
    try:
        return report(ctx, o, spec)
    finally:
        from purepcp.pmapi.errors import PMError

        with contextlib.suppress(PMError, OSError):
            ctx.close()


def _usage(messages: list[str]) -> SystemExit:
    return die("".join(messages) + TOOL.usage())


def _spec(o: Options, text: str) -> MetricSpec:
    """The metric operand, its source merged with the options' (complaints into O)."""
    from purepcp.pmapi.metricspec import MetricSpec, SpecError, parse_metric_spec

    try:
        spec = parse_metric_spec(text)
    except SpecError as exc:
        o.errors.append(exc.errmsg)
        spec = MetricSpec(text)
    if spec.source is not None:
        if spec.kind == "archive":
            if o.hosts:
                o.complain("only one host or archive allowed")
            elif not o.archives:
                o.archives.append(spec.source)
        elif spec.kind == "local":
            o.local = True
        elif o.archives:
            o.complain("only one host or archive allowed")
        elif not o.hosts:
            o.hosts.append(spec.source)
    if not o.hosts and not o.archives and not o.local and o.origin is not None:
        import socket

        o.archives.append(f"{_ARCHIVE_DIR}/{socket.gethostname()}")
    if not o.archives or o.local:
        if o.start is not None or o.align is not None or o.origin is not None:
            o.complain("time window options are supported for archives only")
        if o.hostzone and o.local:
            o.complain("use of timezone from metric source requires a source")
        if o.nointerp:
            o.errors.append(f"{PROG}: uninterpolated mode can only be used with archives")
        if o.delay:
            o.complain("delay can only be used with archives")
    return spec


def _source(o: Options, spec: MetricSpec) -> dict[str, str | bool]:
    """The context's options: a host named by the spec wins over -h."""
    values: dict[str, str | bool] = {}
    if o.local:
        values["local-PMDA"] = True
    elif o.archives:
        values["archive"] = spec.source if spec.kind == "archive" and spec.source else o.archives[0]
    elif spec.kind == "host" and spec.source:
        values["host"] = spec.source
    elif o.hosts:
        values["host"] = o.hosts[0]
    if o.namespace is not None:
        values["namespace"] = o.namespace
    return values


def report(ctx: BaseContext, o: Options, spec: MetricSpec) -> int:
    """Report the metric SPEC names from CTX as O asks: the heading, then every sample."""
    from purepcp.pmapi.hostname import context_hostname
    from purepcp.pmapi.rate import timestamp_seconds
    from purepcp.pmapi.timewindow import NSEC
    from purepcp.tools.stdio import write

    from .loop import walk
    from .metric import Metric

    archive = ctx.kind == "archive"
    hostname = context_hostname(ctx)
    zone = _zone(ctx, o, hostname, archive)
    window = _window(ctx, o, zone, archive)
    metric = Metric(ctx, spec.metric, list(spec.insts) if spec.insts else o.insts)
    metric.lookup(bool(spec.insts))
    metric.init_instances()
    if ctx.kind == "host" and o.filter is not None:
        metric.store(o.filter)
    records = archive and (o.nointerp or metric.events)  # (events are never interpolated)
    interval_ns = o.interval_ns or NSEC
    if archive:
        _set_mode(ctx, window, records, interval_ns)
    samples = _sample_count(o, window, records, interval_ns)
    if o.timezone is None and not o.hostzone and not metric.events:
        write("\n")
    writer = _writer(o, metric, zone, archive)
    writer.heading(_heading(o, metric, hostname, window if archive else None, samples,
                            None if records else interval_ns))  # fmt: skip
    finish = timestamp_seconds(_stamp(window.end_ns))
    walk(_samples(ctx, o, metric, writer, finish, samples, records, interval_ns), samples)
    return 0


def _zone(ctx: BaseContext, o: Options, hostname: str, archive: bool) -> tzinfo:
    """pmGetContextOptions' reporting zone (-z, -Z, else this host's), noted as pmval notes it."""
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.timewindow import new_zone, tzinfo_for
    from purepcp.pmapi.zone import context_zone
    from purepcp.tools.stdio import write

    if o.hostzone:
        try:
            zone = context_zone(ctx)
        except PMError as exc:
            raise die(f"{PROG}: Cannot set context timezone: {pmErrStr(exc.code)}\n") from None
        where = " from archive" if archive else ""
        write(f'Note: timezone set to local timezone of host "{hostname}"{where}\n\n')
        return zone
    if o.timezone is not None:
        write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return new_zone(o.timezone)
    return tzinfo_for(None)


def _window(ctx: BaseContext, o: Options, zone: tzinfo, archive: bool) -> TimeWindow:
    """The time window: an archive's -S, -T, -A and -O within its records; a live source's
    only end is -T's."""
    import time

    from purepcp.pmapi.options import archive_end
    from purepcp.pmapi.timewindow import NSEC, TimeParseError, parse_time_window

    try:
        if archive:
            log = cast("ArchiveContext", ctx).archive
            end = archive_end(PROG, o.archives[0], log)
            return parse_time_window(o.start, o.finish, o.align, o.origin, log.label.start, end,
                                     tz=zone)  # fmt: skip
        now = time.time_ns()
        return parse_time_window(None, o.finish, None, None, (now // NSEC, now % NSEC), None,
                                 tz=zone)  # fmt: skip
    except TimeParseError as exc:
        raise die(f"{PROG}: invalid time window.\n{exc.errmsg}\n") from None


def _set_mode(ctx: BaseContext, window: TimeWindow, records: bool, interval_ns: int) -> None:
    """An archive replayed from the window's origin: record by record, or interpolated.
    PCP 6.0.3's pmval hands its origin and interval to the time-state API as timevals,
    so both start from whole microseconds: at a v3 archive's first record (nanoseconds)
    the first sample falls just before it (QA 1420)."""
    from purepcp.pmapi.archive.context import PM_MODE_FORW, PM_MODE_INTERP

    archive = cast("ArchiveContext", ctx)
    origin = _stamp(window.origin_ns - window.origin_ns % 1000)
    if records:
        archive.set_mode(PM_MODE_FORW, origin)
    else:
        step = interval_ns - interval_ns % 1000 or interval_ns  # (never a zero step)
        archive.set_mode(PM_MODE_INTERP, origin, step)


def _sample_count(o: Options, window: TimeWindow, records: bool, interval_ns: int) -> int:
    """-s's count; else, for interpolated samples in a closed window, as many as it holds
    (-1: as many as there are)."""
    from purepcp.pmapi.rate import timestamp_seconds

    if o.samples is not None:
        return o.samples
    if window.open_ended or records:
        return -1
    finish = timestamp_seconds(_stamp(window.end_ns))
    origin = timestamp_seconds(_stamp(window.origin_ns))
    delta = timestamp_seconds(_stamp(interval_ns))
    span = (finish - origin) / delta
    return 0 if span < 0 else int(span) + 1


def _writer(o: Options, metric: Metric, zone: tzinfo, archive: bool) -> Writer:
    """The writer, its columns -w wide (else as wide as the type's values need)."""
    from purepcp.pmapi.printvalue import pmval_width
    from purepcp.pmapi.types import pmTypeStr

    from .writer import Layout, Writer

    width, fixed = o.cols, o.fixed
    if width <= 0:
        try:
            width = pmval_width(metric.desc.type)
        except (KeyError, ValueError):
            type_ = pmTypeStr(metric.desc.type)
            raise die(f"{PROG}: unknown performance metric value type {type_}\n") from None
    if (fixed == 0 and fixed > width) or (fixed > 0 and fixed > width - 2):
        raise die(f"{PROG}: -f {fixed} too large for column width {width}\n")
    shifted = metric.counter and not o.raw and fixed == -1  # (rates, in pmval's own layout)
    if not metric.events:
        no_values = "No values available\n"
    else:
        no_values = f"{metric.name}: No values available\n" if o.verbose else ""
    singular, events = metric.singular, metric.events
    return Writer(Layout(width, singular, archive, shifted, events, no_values, zone, o.xflag))


def _heading(o: Options, metric: Metric, hostname: str, window: TimeWindow | None,
             samples: int, interval_ns: int | None) -> Heading:  # fmt: skip
    """What the report is of (WINDOW: an archive's; INTERVAL_NS: None when not sampled)."""
    from .model import Heading

    return Heading(
        metric=metric.name,
        desc=metric.desc,
        events=metric.events,
        rates=metric.counter and not o.raw,
        hostname=hostname,
        archive=None if window is None else (o.archives[0] if o.archives else ""),
        start=None if window is None else _stamp(window.origin_ns),
        end=None if window is None or window.open_ended else _stamp(window.end_ns),
        samples=samples,
        interval_ns=interval_ns,
    )


def _samples(ctx: BaseContext, o: Options, metric: Metric, writer: Writer, finish: float,
             samples: int, records: bool, interval_ns: int) -> Samples:  # fmt: skip
    """Where the samples come from: an interpolated replay answered ahead in chunks, else
    one fetch at a time (pausing between them live, or with -d).  FINISH: the time
    window's end, in seconds."""
    from purepcp.pmapi.timewindow import NSEC

    archive = ctx.kind == "archive"
    rates = metric.counter and not o.raw and not metric.events
    width = writer.layout.width
    if archive and not records and samples >= 0 and not o.delay and CHUNKED:
        from .replay import ChunkedReplay

        return ChunkedReplay(cast("ArchiveContext", ctx), metric, writer, samples, rates=rates,
                             finish=finish, width=width, fixed=o.fixed)  # fmt: skip
    from .fetching import FetchSamples

    pause = not archive or o.delay
    return FetchSamples(metric, writer, rates=rates, finish=finish,
                        interval=interval_ns / NSEC if pause else None, records=records,
                        width=width, fixed=o.fixed, zone=writer.layout.zone)  # fmt: skip


def _stamp(ns: int) -> Timestamp:
    from purepcp.pmapi.values import Timestamp

    return Timestamp(*divmod(ns, 1_000_000_000))
