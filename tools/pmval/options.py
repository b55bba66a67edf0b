"""pmval's command line: its options (the shared ones and its own) read into Options.

Options are read in the order given, as libpcp's pmGetOptions and pmval's own loop
read them: each has an action in ACTIONS, and complaints collect in Options.errors,
so every one is reported before the usage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from purepcp.pmapi import optactions
from purepcp.pmapi.cnumbers import int32, strtol
from purepcp.pmapi.options import (
    ALIGN,
    ARCHIVE,
    DEBUG,
    DERIVED,
    FINISH,
    HELP,
    HOST,
    HOSTZONE,
    INTERVAL,
    LOCALPMDA,
    NAMESPACE,
    ORIGIN,
    SAMPLES,
    SPECLOCAL,
    START,
    TIMEZONE,
    VERSION,
    Opt,
    Tool,
    debug_complaint,
    load_derived,
)

from .fatal import PROG

# options pmval has that the shared set does not (or has with another letter), with
# PCP's pmval's help text (its usage message is interface: the text is PCP's)
GUIMODE = Opt("g", "guimode", None, "start in GUI mode with new time control")
GUIPORT = Opt("p", "guiport", "N", "port for connection to existing time control")
CONTAINER = Opt(None, "container", "NAME", "specify an individual container to be queried")
DELAY = Opt("d", "delay", None, "delay, pause between updates for archive replay")
PRECISION = Opt("f", "precision", "N", "fixed output format with N digits precision")
INSTANCES = Opt("i", "instances", "INST", "comma-separated metrics instance list")
RAW = Opt("r", "raw", None, "output raw counter values (no rate conversion)")
NOINTERP = Opt("U", "nointerp", "FILE", "non-interpolated fetching; ignores interval")
VERBOSE = Opt("v", "verbose", None, "increase diagnostic output")
WIDTH = Opt("w", "width", "N", "set the width of each column of output")
FILTER = Opt("x", "filter", "VALUE", "store to the metric before fetching (filter)")
STAMP = Opt("X", "timestamp", None, "include date and microseconds in reported timestamps")

#: the shared options' help text in PCP's words (libpcp's PMOPT_* set, as pmval lists them)
PCP_WORDS: dict[Opt, str] = {
    ALIGN: "align sample times on natural boundaries",
    ARCHIVE: "metrics source is a PCP log archive",
    HOST: "metrics source is PMCD on host",
    NAMESPACE: "use an alternative PMNS",
    ORIGIN: "initial sample time within the time window",
    SAMPLES: "terminate after this many samples",
    TIMEZONE: "set reporting timezone",
    HOSTZONE: "set reporting timezone to local time of metrics source",
    VERSION: "display version number and exit",
    HELP: "show this usage message and exit",
    SPECLOCAL: "optional additional PMDA spec for local connection",
    LOCALPMDA: "metrics source is local connection to a PMDA",
    DERIVED: "load derived metric definitions from FILE(s)",
}

GENERAL = (ALIGN, ARCHIVE, GUIMODE, HOST, NAMESPACE, ORIGIN, GUIPORT, START, SAMPLES, FINISH,
           INTERVAL, TIMEZONE, HOSTZONE, VERSION, HELP, SPECLOCAL, LOCALPMDA, CONTAINER,
           DERIVED)  # fmt: skip
REPORTING = (DELAY, PRECISION, INSTANCES, RAW, NOINTERP, VERBOSE, WIDTH, FILTER, STAMP)
SECTIONS = [("General options", GENERAL), ("Reporting options", REPORTING)]


class PmvalTool(Tool):
    """pmval's command line: the shared parsing, the usage message in PCP's pmval's words."""

    def usage(self) -> str:
        shown = [
            (title, [replace(o, help=PCP_WORDS.get(o, o.help)) for o in opts])
            for title, opts in self.sections
        ]
        return Tool(self.prog, self.synopsis, shown).usage()


TOOL = PmvalTool(
    PROG,
    "[options] metricname",
    # (-D is accepted, not listed, as PCP's pmval does)
    [*SECTIONS, ("", (DEBUG,))],
)


@dataclass
class Options:
    """What the command line asked for (and, in ERRORS, what was wrong with it)."""

    hosts: list[str] = field(default_factory=list)
    archives: list[str] = field(default_factory=list)
    local: bool = False
    specs: list[str] = field(default_factory=list)  # -K
    namespace: str | None = None
    start: str | None = None
    finish: str | None = None
    align: str | None = None
    origin: str | None = None
    interval_ns: int = 0
    samples: int | None = None  # -s N; None for as many as the source has
    timezone: str | None = None
    hostzone: bool = False
    delay: bool = False
    fixed: int = -1  # -f N; -1 for pmval's own float layout
    insts: list[str] | None = None  # -i names, None for every instance
    raw: bool = False
    nointerp: bool = False
    verbose: bool = False
    cols: int = 0  # -w N; 0 for the type's own width
    filter: str | None = None
    xflag: int = 0
    unsupported: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def complain(self, message: str) -> None:
        self.errors.append(f"{PROG}: {message}\n")


#: what an option does to the Options read so far, given its argument ("" if it takes none)
Action = Callable[[Options, str], None]


def read_options(pairs: list[tuple[Opt, str]]) -> Options:
    """The options (Tool.parse's pairs) read in order; complaints in the result's errors."""
    o = Options()
    for opt, value in pairs:
        action = ACTIONS.get(opt)
        if action is not None:
            action(o, value)
    return o


def _host(o: Options, host: str) -> None:
    if o.hosts:
        o.complain(f"too many hosts requested: {host}")
    elif o.archives:
        o.complain("only one host or archive allowed")
    else:
        o.hosts.append(host)


def _archive(o: Options, name: str) -> None:
    if o.hosts:
        o.complain("only one host or archive allowed")
    else:
        o.archives.append(name)


def _nointerp(o: Options, name: str) -> None:
    _archive(o, name)
    o.nointerp = True


def _interval(o: Options, text: str) -> None:
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns

    try:
        o.interval_ns = parse_interval_ns(text)
    except TimeParseError as exc:
        o.complain(f"-t argument not in pmParseHighResInterval(3) format:\n{exc.errmsg}")


def _instances(o: Options, text: str) -> None:
    o.insts = (o.insts or []) + split_instances(text)


def _derived(o: Options, path: str) -> None:
    problem = load_derived(path)
    if problem:
        o.complain(f"pmLoadDerivedConfig failed: {problem}")


def _debug(o: Options, spec: str) -> None:
    """-D: a specification pmSetDebug takes; our traces follow it where they mean
    something (pmapi.debug), libpcp's internal ones have none here."""
    problem = debug_complaint(spec)
    if problem:
        o.complain(problem)
        return
    from purepcp.pmapi import debug

    debug.set_options(spec)


def _spec(o: Options, spec: str) -> None:
    o.specs.append(spec)


def _more_x(o: Options, _: str) -> None:
    o.xflag += 1


def _unsupported(opt: Opt) -> Action:
    """An option purepcp has no counterpart for: named, and the run refused, later."""

    def action(o: Options, _: str) -> None:
        o.unsupported.append(f"--{opt.long}")

    return action


def _flag(name: str) -> Action:
    """An option that turns on the field NAME."""

    def action(o: Options, _: str) -> None:
        setattr(o, name, True)

    return action


def _text(name: str) -> Action:
    """An option whose argument is kept, as given, in the field NAME."""

    def action(o: Options, value: str) -> None:
        setattr(o, name, value)

    return action


def _count(name: str, least: int, complaint: str) -> Action:
    """An option whose argument is a C int, at least LEAST, kept in the field NAME."""

    def action(o: Options, value: str) -> None:
        scan = strtol(value)  # (a long, then kept in an int)
        count = int32(int(scan.value))
        setattr(o, name, count)
        if scan.end != len(value) or count < least:
            o.complain(complaint)

    return action


def split_instances(text: str) -> list[str]:
    """An -i argument's instance names: separated by commas or blanks, quotes kept together."""
    names, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in ", \t\n":
            i += 1
        if i >= n:
            return names
        if text[i] in "\"'":
            quote = text[i]
            end = text.find(quote, i + 1)
            end = n if end < 0 else end
            names.append(text[i + 1 : end])
            i = end + 2  # getinstance also swallows the character after the quote
        else:
            start = i
            while i < n and text[i] not in ", \t\n":
                i += 1
            names.append(text[start:i])
            i += 1


#: what each option does, in the order the command line gives them
ACTIONS: dict[Opt, Action] = {
    HOST: _host,
    ARCHIVE: _archive,
    NOINTERP: _nointerp,
    LOCALPMDA: _flag("local"),
    SPECLOCAL: _spec,
    NAMESPACE: _text("namespace"),
    START: _text("start"),
    FINISH: _text("finish"),
    ALIGN: _text("align"),
    ORIGIN: _text("origin"),
    INTERVAL: _interval,
    SAMPLES: _count("samples", 0, "-s requires a positive numeric argument"),
    TIMEZONE: optactions.timezone,
    HOSTZONE: optactions.hostzone,
    DELAY: _flag("delay"),
    PRECISION: _count("fixed", 0, "-f requires +ve numeric argument"),
    INSTANCES: _instances,
    RAW: _flag("raw"),
    VERBOSE: _flag("verbose"),
    WIDTH: _count("cols", 1, "-w requires +ve numeric argument"),
    FILTER: _text("filter"),
    STAMP: _more_x,
    DERIVED: _derived,
    DEBUG: _debug,
    GUIMODE: _unsupported(GUIMODE),
    GUIPORT: _unsupported(GUIPORT),
    CONTAINER: _unsupported(CONTAINER),
}
