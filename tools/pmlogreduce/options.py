"""pmlogreduce's command line: PCP's option table and usage text, read into Options.

pmlogreduce reads its options itself (pmgetopt_r, not pmGetOptions): -A, -S and -T are
kept as text for the window, -t and the counts are checked as they are read, and the
complaints collect, as pmprintf buffers them, ahead of the usage.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

PROG = "pmlogreduce"

USAGE_OPTIONS = (
    Opt("A", "align", "TIME", "align sample times on natural boundaries"),
    Opt("S", "start", "TIME", "start of the time window"),
    Opt("s", "samples", "N", "terminate after this many samples"),
    Opt("T", "finish", "TIME", "end of the time window"),
    Opt("t", "interval", "DELTA", "sample output interval [default 10min]"),
    Opt("v", None, "NUM", "switch log volumes after this many samples"),
    Opt("Z", "timezone", "TZ", "set reporting timezone"),
    Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(PROG, "[options] input-archive output-archive", [("Options", USAGE_OPTIONS)])
SHORTS = "A:D:S:s:T:t:v:Z:z?"
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("align", "A", True), ("debug", "D", True), ("start", "S", True),
    ("samples", "s", True), ("finish", "T", True), ("interval", "t", True),
    ("timezone", "Z", True), ("hostzone", "z", False), ("help", "?", False),
)  # fmt: skip
USEC = 1_000_000


@dataclass
class Options:
    """What the command line asked for (interval in microseconds, as a timeval)."""

    align: str | None = None
    start: str | None = None
    finish: str | None = None
    samples: int = -1
    interval_us: int = 600 * USEC
    volsamples: int = -1
    timezone: str | None = None
    hostzone: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


def _count(o: Options, text: str, letter: str) -> int | None:
    body = text.lstrip(" \t\n\r\f\v")
    digits = body[1:] if body[:1] in "+-" else body
    value = int(body) if digits.isdigit() and digits.isascii() else (0 if not text else None)
    if value is None or value < 0:
        o.complain(f"-{letter} requires numeric argument")
        return None
    return value


def _samples(o: Options, text: str | None) -> None:
    value = _count(o, str(text), "s")
    if value is not None:
        o.samples = value


def _volumes(o: Options, text: str | None) -> None:
    value = _count(o, str(text), "v")
    if value is not None:
        o.volsamples = value


def _interval(o: Options, text: str | None) -> None:
    """-t: pmParseInterval, kept as a timeval (pmtimevalFromReal's rounding)."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval

    try:
        secs = parse_interval(str(text))
    except TimeParseError as exc:
        o.messages.append(exc.errmsg)
        o.errors += 1
        return
    whole = int(secs)
    o.interval_us = whole * USEC + int((secs - whole) * 1e6 + 0.5)


def _timezone(o: Options, zone: str | None) -> None:
    if o.hostzone:
        o.complain("at most one of -Z and/or -z allowed")
    o.timezone = zone


def _hostzone(o: Options, _: str | None) -> None:
    if o.timezone is not None:
        o.complain("at most one of -Z and/or -z allowed")
    o.hostzone = True


def _debug(o: Options, spec: str | None) -> None:
    if not debug_spec_ok(str(spec)):
        o.complain(f"unrecognized debug options specification ({spec})")
        return
    from purepcp.pmapi import debug

    debug.set_options(str(spec))


def _keep(attr: str) -> Callable[[Options, str | None], None]:
    def action(o: Options, value: str | None) -> None:
        setattr(o, attr, value)

    return action


def _bad(o: Options, message: str | None) -> None:
    o.complain(str(message))


def _unknown(o: Options, _: str | None) -> None:
    o.errors += 1


ACTIONS: dict[str, Callable[[Options, str | None], None]] = {
    "!": _bad, "?": _unknown, "A": _keep("align"), "D": _debug, "S": _keep("start"),
    "s": _samples, "T": _keep("finish"), "t": _interval, "v": _volumes, "Z": _timezone,
    "z": _hostzone,
}  # fmt: skip


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmlogreduce's parseargs does."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
        else:
            ACTIONS[item[0]](o, item[1])
    if o.errors == 0 and len(o.operands) < 2:
        o.complain("Error: insufficient arguments")
    check_layout_file()
    return o


def usage_exit(o: Options) -> SystemExit:
    sys.stdout.flush()
    sys.stderr.write("".join(o.messages) + TOOL.usage())
    return SystemExit(1)
