"""One run of pmlogextract, in PCP's order: open the inputs, read the configuration,
set the zone, create the output, check the labels, parse the window, gather the
metadata, merge the records, and finish (or abandon) the output."""

from __future__ import annotations

import sys

from purepcp.pmapi.archive.format import LogLabel
from purepcp.pmapi.values import Timestamp

from .abandon import Abandon
from .inputs import Input, open_input
from .merge import NSEC, Merge, Window
from .metadata import Catalog
from .options import PROG, Options
from .output import Output

DAY = 86400


def extract(o: Options) -> int:
    """The whole run; its exit status.  What goes to stdout goes at the end unless it
    is a terminal, as C's stdio buffers it (so after every message on stderr)."""
    try:
        return _extract(o)
    finally:
        if _STDOUT:
            sys.stdout.write("".join(_STDOUT))
            _STDOUT.clear()


_STDOUT: list[str] = []


def _say(text: str) -> None:
    """TEXT for stdout: now on a terminal, else with the rest at the end."""
    if sys.stdout.isatty():
        sys.stdout.write(text)
    else:
        _STDOUT.append(text)


def _extract(o: Options) -> int:
    inputs = [open_input(name, o.desperate) for name in o.inputs]
    present = [i for i in inputs if not i.empty]
    if not present:
        sys.stderr.write(
            f"{PROG}: Warning: all input archive(s) are empty, no output archive created\n"
        )
        return 1
    log_start, log_end = _extent(inputs)
    selection = None
    if o.config is not None:
        from .config import read_config
        from .select import Resolver

        resolver = Resolver(o.config, [i.archive for i in present])  # type: ignore[misc]
        read_config(o.config, resolver)
        selection = resolver.selection
    zone = _zone(o, present)
    if zone is False:
        return 1
    version = o.version if o.version != -1 else max(i.archive.version for i in present)  # type: ignore[union-attr]
    out = Output(o.output, version, log_start)
    out.zone = zone  # type: ignore[assignment]
    try:
        label = _label(o, present, version)
        window = _window(o, *_first_extent(inputs), log_end, zone)
        catalog = Catalog(selection, o.skip_mismatched, version)
        catalog.gather([i.archive for i in present], [i.name for i in present])  # type: ignore[misc]
        catalog.report_skipped()
        for i in present:
            i.frame()
        merge = Merge(
            inputs, out, catalog, window,
            selection=selection, samples=o.samples, volume_samples=o.volume_samples,
            old_marks=o.old_marks,
        )  # fmt: skip
        merge.run()
        if merge.first:
            sys.stderr.write(f"{PROG}: Warning: no qualifying records found.\n")
            raise Abandon
        out.finish(Timestamp.from_ns(merge.current), label.hostname, label.timezone, label.zoneinfo)
    except Abandon:
        out.abandon(o.desperate)
        return 1
    return 0


def _extent(inputs: list[Input]) -> tuple[Timestamp, Timestamp]:
    """The earliest start and the latest end, as PCP works them out (an empty first
    input leaves the start at the epoch)."""
    start = end = Timestamp(0, 0)
    for k, inp in enumerate(inputs):
        if inp.empty:
            continue
        assert inp.archive is not None and inp.end is not None
        if k == 0:
            start, end = inp.archive.label.start, inp.end
            continue
        start = min(start, inp.archive.label.start)
        end = max(end, inp.end)
    return start, end


def _first_extent(inputs: list[Input]) -> tuple[Timestamp, Timestamp]:
    """The start and end -S and -T are taken within: the first input's alone, as PCP's
    pmlogextract hands pmParseTimeWindow (so -T 16 ends with the first archive if that
    ends sooner, whatever later inputs hold: QA 178)."""
    first = inputs[0]
    if first.empty:
        return Timestamp(0, 0), Timestamp(0, 0)
    assert first.archive is not None and first.end is not None
    return first.archive.label.start, first.end


def _zone(o: Options, present: list[Input]) -> object:
    """The zone -S and -T are read in (None: local); False if it cannot be set."""
    if o.hostzone:
        first = present[0].archive
        assert first is not None
        _say(
            "Note: timezone set to local timezone of host"
            f' "{first.label.hostname}" from archive\n\n'
        )
        return first.label.timezone
    if o.timezone is not None:
        _say(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return o.timezone
    return None


def _label(o: Options, present: list[Input], version: int) -> LogLabel:
    """newlabel: the output's host and zone, the inputs' versions and hosts checked."""
    for inp in present:
        assert inp.archive is not None
        vers = inp.archive.version
        if vers not in (2, 3):
            sys.stderr.write(
                f"{PROG}: Error: illegal version number {vers} in archive ({inp.name})\n"
            )
            raise Abandon
        if o.version != -1 and vers > o.version:
            sys.stderr.write(
                f"{PROG}: Error: input archive version must be no more than {o.version}\n"
                f"archive: {inp.name} version: {vers}\n"
            )
            raise Abandon
    first, last = present[0], present[-1]
    chosen = first if o.first_zone else last
    assert first.archive is not None and chosen.archive is not None
    host = first.archive.label.hostname
    tz = chosen.archive.label.timezone
    for inp in present:
        label = inp.archive.label  # type: ignore[union-attr]
        if label.hostname != host:
            sys.stderr.write(
                f"{PROG}: Error: host name mismatch for input archives\n"
                f"archive: {first.name} host: {host}\n"
                f"archive: {inp.name} host: {label.hostname}\n"
            )
            raise Abandon
        if label.timezone != tz:
            sys.stderr.write(
                f"{PROG}: Warning: timezone mismatch for input archives\n"
                f"archive: {chosen.name} timezone: {tz} [will be used]\n"
                f"archive: {inp.name} timezone: {label.timezone} [will be ignored]\n"
            )
    return LogLabel(
        version, 0, first.archive.label.start, 0, host, tz, chosen.archive.label.zoneinfo
    )


def _usec(ts: Timestamp) -> Timestamp:
    return Timestamp(ts.sec, ts.nsec // 1000 * 1000)


def _window(
    o: Options, log_start: Timestamp, log_end: Timestamp, last: Timestamp, zone: object
) -> Window:
    """pmParseTimeWindow on -S and -T (microseconds) within [LOG_START, LOG_END]; the end
    gets PCP's extra second.  LAST is the inputs' latest end."""
    end_ns = last.sec * NSEC + last.nsec
    start = end = None
    if o.start is not None or o.finish is not None:
        from purepcp.pmapi.timewindow import TimeParseError, parse_time_window

        try:
            w = parse_time_window(
                o.start, o.finish, None, None, _usec(log_start), _usec(log_end),
                tz=zone,  # type: ignore[arg-type]
            )  # fmt: skip
        except TimeParseError as exc:
            sys.stderr.write(f"{PROG}: Invalid time window specified: {exc.errmsg}\n")
            raise Abandon from None
        if o.start is not None:
            start = w.start_ns // 1000 * 1000
        if o.finish is not None:
            end = w.end_ns // 1000 * 1000 + NSEC
    daily = o.daily
    if daily and start is not None and end is not None and start + DAY * NSEC < end:
        sys.stderr.write(
            f"{PROG}: Warning: -S and -T must specify a time window within\n"
            "the same day, for -w to be used.  Ignoring -w flag.\n"
        )
        daily = False
    return Window(start, end, end_ns, daily)
