"""pmdumptext's command line: PCP's option table (its usage message is interface text),
read in order as pmGetOptions and pmdumptext's own loop read it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import int32, strtol
from purepcp.pmapi.options import Opt, Tool, debug_complaint, pcp_getopt

PROG = "pmdumptext"

GENERAL = (
    Opt("A", "align", "TIME", "align sample times on natural boundaries"),
    Opt("a", "archive", "FILE", "metrics source is a PCP log archive"),
    Opt("h", "host", "HOST", "metrics source is PMCD on host"),
    Opt("n", "namespace", "FILE", "use an alternative PMNS"),
    Opt("O", "origin", "TIME", "initial sample time within the time window"),
    Opt("S", "start", "TIME", "start of the time window"),
    Opt("s", "samples", "N", "terminate after this many samples"),
    Opt("T", "finish", "TIME", "end of the time window"),
    Opt("t", "interval", "DELTA", "sampling interval"),
    Opt("Z", "timezone", "TZ", "set reporting timezone"),
    Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source"),
    Opt("V", "version", None, "display version number and exit"),
    Opt("?", "help", None, "show this usage message and exit"),
)
REPORTING = (
    Opt("c", "config", "FILE", "read list of metrics from FILE"),
    Opt("C", "check", None, "exit before dumping any values"),
    Opt("d", "delimiter", "CHAR", "character separating each column"),
    Opt("f", "time-format", "FMT", "time format string"),
    Opt("F", "fixed", None, "print fixed width values"),
    Opt("G", "scientific", None, "print values in scientific format if shorter"),
    Opt("H", "headers", None, "show all headers"),
    Opt("i", "interactive", None, "format columns for interactive use"),
    Opt("l", "source", None, "show source of metrics"),
    Opt("m", "metrics", None, "show metric names"),
    Opt("M", None, None, "show complete metrics names"),
    Opt("N", None, None, "show normalizing factor"),
    Opt("o", "offset", None, "prefix timestamp with offset in seconds"),
    Opt("P", "precision", "N", "floating point precision [default 3]"),
    Opt("R", "repeat", "N", "repeat the header after every N samples"),
    Opt("r", "raw", None, "output raw values, no rate conversion"),
    Opt("U", "unavailable", "STR", 'unavailable value string [default "?"]'),
    Opt("u", "units", None, "show metric units"),
    Opt("w", "width", "N", "set column width"),
    Opt("X", "extended", None, "show complete metrics names (extended form)"),
)
#: the usage message, as pmUsageMessage lays PCP's table out (-D is not listed)
USAGE = Tool(PROG, "[options] [metrics ...]",
             [("General options", GENERAL), ("Reporting options", REPORTING)]).usage()  # fmt: skip

SHORTS = "A:a:D:h:n:O:S:s:T:t:VZ:z?c:Cd:f:FGHilmMNoP:rR:uU:Vw:X"
LONGS = (
    *((o.long, o.short or "", o.arg is not None) for o in (*GENERAL, *REPORTING) if o.long),
    ("debug", "D", True),
)


@dataclass
class Options:
    """What the command line asked for; complaints in the order pmprintf keeps them."""

    archives: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    namespace: str | None = None
    start: str | None = None
    finish: str | None = None
    align: str | None = None
    origin: str | None = None
    interval: str | None = None
    samples: int = 0
    timezone: str | None = None
    hostzone: bool = False
    config: str = ""
    dump: bool = True  # -C: no values
    delimiter: str = "\t"
    time_format: str | None = None
    show_time: bool = True
    fixed: bool = False  # -F (descFlag)
    short: bool = False  # -G
    nice: bool = False  # -i
    source: bool = False  # -l
    metric_names: bool = False  # -m
    full: bool = False  # -M
    full_x: bool = False  # -X
    norm: bool = False  # -N
    offset: bool = False  # -o
    precision: int = 3
    precision_set: bool = False
    width: int = 6
    width_set: bool = False
    raw: bool = False
    repeat: int = 0
    units: bool = False
    unavailable: str = "?"
    headers: bool = False
    version: bool = False
    operands: list[str] = field(default_factory=list)
    getopt_errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


def read_options(argv: Sequence[str]) -> Options:
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        if letter == "!":
            o.getopt_errors.append(f"{PROG}: {value}\n")
            o.errors += 1
        else:
            _apply(o, letter, value or "")
    if len(o.hosts) > 1 and not o.archives:
        o.complain("only one host may be specified")
    return o


def _number(o: Options, text: str, least: int, complaint: str) -> int | None:
    scan = strtol(text)
    value = int32(int(scan.value))
    if scan.end != len(text) or value < least:
        o.complain(complaint)
        return None
    return value


def _apply(o: Options, letter: str, value: str) -> None:
    """One option's effect, checked against the ones before it as pmdumptext checks."""
    handler = _SIMPLE.get(letter)
    if handler is not None:
        setattr(o, handler[0], value if handler[1] else True)
        return
    if letter == "a":
        for name in value.replace(",", " ").replace("\t", " ").split():
            if o.hosts:
                o.complain("only one host or archive allowed")
            elif name not in o.archives:
                o.archives.append(name)
    elif letter == "h":
        if o.archives:
            o.complain("only one host or archive allowed")
        else:
            o.hosts.append(value)
    elif letter == "?":
        o.errors += 1
    elif letter == "V":
        from purepcp.pmapi import version_line

        o.messages.append(version_line(PROG) + "\n")
        o.version = True
    elif letter == "D":
        problem = debug_complaint(value)
        if problem:
            o.complain(problem)
    elif letter == "s":
        count = _number(o, value, 0, "-s requires a positive numeric argument")
        o.samples = count if count is not None else o.samples
    elif letter == "t":
        from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns

        try:
            parse_interval_ns(value)
            o.interval = value
        except TimeParseError as exc:
            o.messages.append(
                f"{PROG}: -t argument not in pmParseInterval(3) format:\n{exc.errmsg}\n"
            )
            o.errors += 1
    elif letter == "Z":
        if o.hostzone:
            o.complain("at most one of -Z and -z allowed")
        else:
            o.timezone = value
    elif letter == "z":
        if o.timezone is not None:
            o.complain("at most one of -Z and -z allowed")
        else:
            o.hostzone = True
    elif letter == "d":
        _delimiter(o, value)
    elif letter == "f":
        o.time_format = value
        o.show_time = bool(value)
    elif letter == "F":
        if o.short:
            o.complain("-F and -G options may not be used together")
        else:
            o.fixed = True
    elif letter == "G":
        if o.fixed:
            o.complain("-F and -G may not be used together")
        elif o.nice:
            o.complain("-i and -G may not be used together")
        else:
            o.short = True
    elif letter == "i":
        if o.precision_set:
            o.complain("-i and -P may not be used together")
        elif o.short:
            o.complain("-i and -G may not be used together")
        else:
            o.nice = True
    elif letter == "X":
        o.full = o.full_x = True
    elif letter == "P":
        if o.width_set:
            o.complain("-P and -w may not be used together")
        elif o.nice:
            o.complain("-i and -P may not be used together")
        else:
            scan = strtol(value)
            o.precision, o.precision_set = int32(int(scan.value)), True
            if scan.end != len(value) or o.precision < 0:
                o.complain("-P requires a positive numeric argument")
    elif letter == "R":
        scan = strtol(value)
        o.repeat = int32(int(scan.value))
        if scan.end != len(value) or o.repeat <= 0:
            o.complain("-R requires a positive numeric argument")
    elif letter == "w":
        if o.precision_set:
            o.complain("-P and -w may not be used together")
            return
        scan = strtol(value)
        o.width, o.width_set = int32(int(scan.value)), True
        if scan.end != len(value) or o.width < 0:
            o.complain("-w requires a positive numeric argument")
        elif o.width < 3:
            o.complain("-w must be greater than 2")


#: options that just set a field: (field, keeps the argument)
_SIMPLE = {
    "A": ("align", True), "n": ("namespace", True), "O": ("origin", True),
    "S": ("start", True), "T": ("finish", True), "c": ("config", True),
    "U": ("unavailable", True), "H": ("headers", False), "l": ("source", False),
    "m": ("metric_names", False), "M": ("full", False), "N": ("norm", False),
    "o": ("offset", False), "r": ("raw", False), "u": ("units", False),
}  # fmt: skip


def _delimiter(o: Options, text: str) -> None:
    if len(text) == 2 and text[0] == "\\":
        o.delimiter = {"n": "\n", "t": "\t"}.get(text[1], " ")
    elif len(text) > 1:
        o.complain("delimiter must be one character")
    else:
        o.delimiter = text[:1] or "\0"


def finish_options(o: Options) -> None:
    """The settings the options imply together (widths and precisions, -H, -X)."""
    if o.headers:
        o.metric_names = o.units = o.source = o.norm = True
    if o.full_x:
        o.nice = True
    if o.nice:
        o.width = max(o.width, 6)
        o.width_set = o.fixed = True
    if o.short:
        if o.width_set:
            o.width = max(o.width, 3)
            o.precision = o.width - 1
        else:
            o.precision = max(o.precision, 2)
            o.width = o.precision + 1
    elif o.width_set:
        o.width = max(o.width, 3)
        o.precision = o.width - 2
    else:
        o.precision = max(o.precision, 2)
        o.width = o.precision + 2
