"""pmloglabel's command: check every file's label against the golden one, write the
labels back when asked to change anything, then print the label if asked.

The exit status is PCP's: 0, 2 when a label was bad or disagreed (reported only when
nothing is to be written, or with -v), 3 when a label could not be written.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from .options import PROG, TOOL, Options, parse_options, usage_exit


def main(argv: Sequence[str] | None = None) -> int:
    """pmloglabel(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


@dataclass
class Checker:
    """One run's label checks: the golden label (the first good one) and the status."""

    o: Options
    warnings: bool
    golden: object = None  # Label, once the first file is seen
    goldfile: str | None = None
    gold: bool = False
    status: int = 0
    out: list[str] = field(default_factory=list)  # stdout, written as C's buffer is

    def say(self, text: str) -> None:
        if self.o.verbose:
            self.out.append(text)


def _run(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    if o.errors:
        raise usage_exit(o)
    c = Checker(o, warnings=o.readonly or o.verbose)
    try:
        return _label(c, o.operands[0])
    finally:
        if c.out:
            sys.stdout.write("".join(c.out))
        sys.stdout.flush()


def _label(c: Checker, archive: str) -> int:
    from purepcp.pmapi.errors import PMError, pmErrStr

    from .labels import find_open

    o = c.o
    c.say(f'Scanning for components of archive "{archive}"\n')
    try:
        files = find_open(archive, o.on("log"))
    except PMError as exc:
        sys.stderr.write(f'{PROG}: Cannot open archive "{archive}": {pmErrStr(exc.code)}\n')
        return 1
    _check_all(c, files)
    if not o.readonly:
        from .rewrite import rewrite

        c.status = rewrite(c, files) or c.status
    if o.label or o.long_label:
        _dump(c, archive)
    return c.status


def _check_all(c: Checker, files) -> None:
    """Each volume's label, then the .index's and the .meta's, against the golden one."""
    from purepcp.pmapi.errors import pmErrStr

    from .labels import PM_LOG_VOL_META, PM_LOG_VOL_TI, Label, check_label, read_file

    debug = c.o.on("log")
    lp = Label()
    for vol in range(files.minvol, files.maxvol + 1):
        c.say(f"Checking label on data volume {vol}\n")
        try:
            data = read_file(files.volume_file(vol))
        except OSError as exc:
            sts, data = -exc.errno, None
        else:
            sts = check_label(data, lp, vol, 3, debug)
            if sts >= 0 and debug:
                sys.stderr.write(f"__pmLogChangeVol: change to volume {vol}\n")
        if sts < 0 and c.warnings:
            sys.stderr.write(f"Bad data volume {vol} label: {pmErrStr(sts)}\n")
            c.status = 2
        _compare(c, data, f"data volume {vol}", sts, lp)
        lp.hostname = lp.timezone = lp.zoneinfo = None
    if files.index is not None:
        c.say("Checking label on temporal index\n")
        data = read_file(files.index)
        sts = check_label(data, lp, PM_LOG_VOL_TI, 4, debug)
        if sts < 0 and c.warnings:
            sys.stderr.write(f"Bad temporal index label: {pmErrStr(sts)}\n")
            c.status = 2
        _compare(c, data, "temporal index", sts, lp)
        lp.hostname = lp.timezone = lp.zoneinfo = None
    else:
        c.say("No temporal index found\n")
    c.say("Checking label on metadata volume\n")
    data = read_file(files.meta)
    sts = check_label(data, lp, PM_LOG_VOL_META, 5, debug)
    if sts < 0 and c.warnings:
        sys.stderr.write(f"Bad metadata volume label: {pmErrStr(sts)}\n")
        c.status = 2
    _compare(c, data, "metadata volume", sts, lp)


def _compare(c: Checker, data: bytes | None, what: str, sts: int, lp) -> None:
    """compare_golden: the first good label is golden; later ones (when reporting) must
    agree with it in version, PID, host, timezone and zoneinfo."""
    from purepcp.pmapi.errors import pmErrStr

    from .labels import load_label

    if not c.gold:
        c.golden = lp.copy()
        c.gold = sts >= 0
        if c.gold:
            c.goldfile = what
        lp.__init__()  # (libpcp clears the label it copied)
        return
    if not c.warnings or data is None:
        return
    code = load_label(data, lp, c.o.on("log"))
    if code < 0:
        sys.stderr.write(f"{what}: cannot load label record: {pmErrStr(code)}\n")
        return
    g = c.golden
    gf = c.goldfile
    if lp.version != g.version:
        sys.stderr.write(
            f"Mismatched version ({lp.version:x}/{g.version:x}) between {what} and {gf}\n"
        )
        c.status = 2
    if lp.pid != g.pid:
        sys.stderr.write(f"Mismatched PID ({lp.pid}/{g.pid}) between {what} and {gf}\n")
        c.status = 2
    for field_name, word in (("hostname", "hostname"), ("timezone", "timezone")):
        mine, gold = getattr(lp, field_name), getattr(g, field_name)
        if mine is None or gold is None or mine != gold:
            sys.stderr.write(f"Mismatched {word} ({_q(mine)}/{_q(gold)}) between {what} and {gf}\n")
            c.status = 2
    if lp.zoneinfo is not None and g.zoneinfo is not None and lp.zoneinfo != g.zoneinfo:
        sys.stderr.write(
            f"Mismatched zoneinfo ({lp.zoneinfo}/{g.zoneinfo}) between {what} and {gf}\n"
        )
        c.status = 2


def _q(text: str | None) -> str:
    return '""' if text is None else text


def _dump(c: Checker, archive: str) -> None:
    """-l and -L: the golden label, with the archive's end as a context finds it."""
    from purepcp.pmapi.archive import Archive
    from purepcp.pmapi.archive.reader import base_name, empty_file_refusal, find_file
    from purepcp.pmapi.errors import PM_ERR_LOGREC, PMError, pmErrStr
    from purepcp.pmapi.timewindow import pm_ctime, tzinfo_for
    from purepcp.pmapi.timewindow.epoch import localtime
    from purepcp.pmapi.values import Timestamp

    zone = tzinfo_for(None)
    g = c.golden

    def when(sec: int, usec: int) -> str:
        ctime = pm_ctime(Timestamp(sec, 0), zone)
        tm = localtime(sec, zone)
        clock = f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}.{usec // 1000:03d}"
        return f"{ctime[:10]} {clock} {ctime[20:24]}"

    out = c.out
    out.append(f"Log Label (Log Format Version {g.version})\n")
    out.append(f"Performance metrics from host {g.hostname}\n")
    out.append(f"  commencing {when(g.sec, max(g.nsec, 0) // 1000)}\n")
    try:
        base = base_name(archive) if find_file(archive, "") is not None else archive
        code = empty_file_refusal(base)
        if code is not None:
            raise PMError(code)
        with Archive(archive) as opened:
            end = opened.find_end()
    except PMError as exc:
        out.append(f"  ending     UNKNOWN (pmNewContext: {pmErrStr(exc.code)})\n")
    else:
        if end is None:
            out.append(f"  ending     UNKNOWN (pmGetArchiveEnd: {pmErrStr(PM_ERR_LOGREC)})\n")
        else:
            out.append(f"  ending     {when(end.stamp.sec, end.stamp.nsec // 1000)}\n")
    if c.o.long_label:
        out.append(f"Archive timezone: {g.timezone}\n")
        out.append(f"PID for pmlogger: {g.pid}\n")
