"""pmlogcheck's command: read the command line, then check the archive pass by pass.

Pass 0 runs over every file the directory scan finds; when one is beyond repair (or
the .meta or every volume is missing) the run ends there.  Then the archive is opened
as a context (what libpcp refuses ends the run with its error), the reporting zone and
time window are settled (a zone note goes to stdout), and passes 1, 2 and 3 follow.
The exit status is 0 once the archive opened, whatever the passes found, as PCP's.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PMError

from .options import PROG, TOOL, Options, parse_options, usage_exit
from .state import FileState, Run, Sts, err

if TYPE_CHECKING:
    from purepcp.pmapi.archive import Archive, LogLabel

    from .files import Names
    from .pass3 import Window
    from .stamps import Stamps


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogcheck(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    if o.errors:
        raise usage_exit(o)
    run = Run(o)
    try:
        return _check(run)
    finally:
        run.flush_stdout()  # (C's stdout is written at exit, after stderr's lines)


def _check(run: Run) -> int:
    o = run.o
    from .files import names_for

    names = names_for(o.operands[0])
    _pass0_all(run, names)
    archive = _open(run, names)
    with archive:
        stamps, window = _context_options(run, names, archive)
        if o.label:
            _dump_label(archive, stamps, window)
        _passes(run, names, archive, stamps, window)
    if o.verbose:
        if run.result_count > 0:
            err(f"Processed {run.result_count} pmResult records\n")
        if run.mark_count > 0:
            err(f"Processed {run.mark_count} <mark> records\n")
    return 0


def _pass0_all(run: Run, names: Names) -> None:
    """Pass 0 over each file of the archive; the end of the run if any was fatal."""
    from .files import scan
    from .pass0 import pass0

    if run.vflag:
        err(f'Scanning for components of archive "{names.path}"\n')
    found = scan(names, run.vflag)
    if not found:
        err(f'{PROG}: no PCP archive files match "{names.path}"\n')
        raise SystemExit(1)
    fatal = False
    for entry in found:
        if pass0(run, names.file_path(entry)) is Sts.FATAL:
            fatal = True
    where = f"{names.dirname}/{names.basename}"
    if run.meta_state is FileState.MISSING:
        err(f"{where}.meta: missing metadata file\n")
        fatal = True
    if run.log_state is FileState.MISSING:
        err(f"{where}.0 (or similar): missing log file \n")
        fatal = True
    if fatal:
        if run.vflag:
            err("Due to earlier errors, cannot continue ... bye\n")
        raise SystemExit(1)


def _open(run: Run, names: Names) -> Archive:
    """The archive as pmNewContext opens it, or libpcp's error and the end of the run."""
    from purepcp.pmapi.archive import Archive
    from purepcp.pmapi.archive.reader import empty_file_refusal
    from purepcp.pmapi.errors import PMError, pmErrStr

    try:
        code = empty_file_refusal(f"{names.dirname}/{names.basename}")
        if code is not None:
            raise PMError(code)
        return Archive(names.path)
    except PMError as exc:
        if run.debug("logmeta"):
            from .logmeta import trace_refusal

            trace_refusal(exc)
        err(f'{PROG}: cannot open archive "{names.path}": {pmErrStr(exc.code)}\n')
        err("Checking abandoned.\n")
        raise SystemExit(1) from None


def _context_options(run: Run, names: Names, archive: Archive) -> tuple[Stamps, Window]:
    """pmGetContextOptions: the reporting zone (noted on stdout) and the time window
    (the archive's span, cut by -S and -T); a bad window ends the run."""
    from purepcp.pmapi.options import warn_damaged_end
    from purepcp.pmapi.timewindow import (
        PM_MAX_TIME_T,
        TimeParseError,
        new_zone,
        parse_time_window,
        tzinfo_for,
    )
    from purepcp.pmapi.values import Timestamp

    from .pass3 import Window
    from .stamps import NSEC, Stamps

    o = run.o
    label = context_label(archive)
    if o.hostzone:
        run.stdout.append(
            f'Note: timezone set to local timezone of host "{label.hostname}" from archive\n\n'
        )
        zone = new_zone(label.timezone)
    elif o.timezone is not None:
        run.stdout.append(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        zone = new_zone(o.timezone)
    else:
        zone = tzinfo_for(None)
    end = archive.find_end()
    if end is None:
        run.flush_stdout()
        warn_damaged_end(PROG, names.path)
    start = label.start
    first = Timestamp(start.sec, start.nsec // 1000 * 1000)
    last = None if end is None else Timestamp(end.stamp.sec, end.stamp.nsec // 1000 * 1000)
    try:
        w = parse_time_window(o.start, o.finish, None, None, first, last, tz=zone)
    except TimeParseError as exc:
        err(f"{PROG}: invalid time window.\n{exc.errmsg}\n")
        raise SystemExit(1) from None
    start_ns = w.start_ns if o.start is not None else 0
    finish_ns = min(w.end_ns, PM_MAX_TIME_T * NSEC)
    finish_sec, finish_usec = finish_ns // NSEC, finish_ns % NSEC // 1000
    span = finish_sec - w.start_ns // NSEC
    if finish_usec < w.start_ns % NSEC // 1000:
        span -= 1
    return Stamps(zone, span > 86400), Window(start_ns, finish_sec, finish_usec)


def context_label(archive: Archive) -> LogLabel:
    """The label a context holds: the first volume's (the .meta's may differ in what
    libpcp does not compare)."""
    from purepcp.pmapi.archive.format import decode_label

    vol = min(archive.volume_paths)
    try:
        return decode_label(archive.volume(vol), archive.volume_paths[vol])
    except PMError:
        return archive.label


def _dump_label(archive: Archive, stamps: Stamps, window: Window) -> None:
    """-l: the label, on stderr, the end being the window's."""
    from purepcp.pmapi.timewindow import PM_MAX_TIME_T

    label = context_label(archive)
    err(f"Log Label (Log Format Version {label.version})\n")
    err(f"Performance metrics from host {label.hostname}\n")
    ctime = stamps.ctime(label.start.sec)
    err(f"  commencing {ctime[:10]} {stamps.print_stamp(label.start.sec, label.start.nsec // 1000)}"
        f" {ctime[20:24]}\n")  # fmt: skip
    if window.finish_sec == PM_MAX_TIME_T:
        err("  ending     UNKNOWN\n")
    else:
        ctime = stamps.ctime(window.finish_sec)
        stamp = stamps.print_stamp(window.finish_sec, window.finish_usec)
        err(f"  ending     {ctime[:10]} {stamp} {ctime[20:24]}\n")


def _passes(run: Run, names: Names, archive: Archive, stamps: Stamps, window: Window) -> None:
    from .pass1 import pass1
    from .pass2 import pass2
    from .pass3 import Pass3

    archname = names.archname
    pass1(run, archive, archname)
    index_ok = run.index_state is not FileState.BAD
    pmns = run.o.namespace if run.o.namespace is not None else archive.pmns
    pass2(run, archive.descs, pmns, archname)
    if not run.o.metadata_only:
        Pass3(run, archive, pmns, archname, stamps).run_pass(window, index_ok)


__all__ = ["Options", "main"]
