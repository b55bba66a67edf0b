"""pmseries' options, declared once (the usage, getopt's tables and what each asks for
come from these), and read into a Request as PCP 6.0.3's option loop reads them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from purepcp.pmapi import version_line
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

from .request import Mode, Request, Show
from .sids import issid

PROG = "pmseries"

CONFIG = Opt("c", "config", "FILE", "configuration file path")
HOST = Opt("h", "host", "HOST", "connect to Redis using given host name")
PORT = Opt("p", "port", "PORT", "connect to Redis using given TCP/IP port")
LOAD = Opt("L", "load", None, "load time series values and metadata")
QUERY = Opt("q", "query", None, "perform a time series query (default)")
VALUES = Opt("v", "values", None, "extract values for given series or label(s)")
ALL = Opt("a", "all", None, "report all metadata (-dilms) for time series")
DESC = Opt("d", "desc", None, "metric descriptor for time series")
FULLINDOM = Opt("I", "fullindom", None, "print InDom in verbose format")
INSTANCES = Opt("i", "instances", None, "report names for time series instances")
FAST = Opt("F", "fast", None, "query or load series metadata, not values")
GLOB = Opt("g", "glob", "PATTERN", "glob pattern to restrict matches")
LABELS = Opt("l", "labels", None, "list all labels for time series")
FULLPMID = Opt("M", "fullpmid", None, "print PMID in verbose format")
METRICS = Opt("m", "metrics", None, "report names and expressions for time series")
NAMES = Opt("n", "names", None, "print label names only, not values")
SOURCES = Opt("S", "sources", None, "report names for time series sources")
SERIES = Opt("s", "series", None, "print series ID for metrics, instances and sources")
TIMES = Opt("t", "times", None, "print numeric time stamps (in milliseconds)")
WINDOW = Opt("w", "window", "TIMESPEC", "restrict --values report to a time window")
TIMEZONE = Opt("Z", "timezone", "TZ", "set reporting timezone")
VERSION = Opt("V", "version", None, "display version number and exit")
HELP = Opt("?", "help", None, "show this usage message and exit")
#: accepted, not listed in the usage (as PCP's PMOPT_DEBUG)
DEBUG = Opt("D", "debug", "DBG", "set debug options")
#: in PCP 6.0.3's short options with no case of its own: taken, and counted as an error
STRAY = Opt("e", None, None, "not an option (an error, as in PCP 6.0.3)")

CONNECTION = (CONFIG, HOST, PORT)
GENERAL = (LOAD, QUERY, VALUES)
REPORTING = (ALL, DESC, FULLINDOM, INSTANCES, FAST, GLOB, LABELS, FULLPMID, METRICS, NAMES,
             SOURCES, SERIES, TIMES, WINDOW, TIMEZONE, VERSION, HELP)  # fmt: skip

TOOL = Tool(
    PROG,
    "[options] [query ... | labels ... | series ... | source ...]",
    [
        ("Connection Options", CONNECTION),
        ("General Options", GENERAL),
        ("Reporting Options", REPORTING),
    ],
)
#: every option in PCP's table order (an ambiguous prefix lists them in this order)
OPTIONS = (*CONNECTION, *GENERAL, DEBUG, *REPORTING)
#: getopt's tables as pcp_getopt takes them, and the option each letter stands for
SHORTS = "".join(o.short + (":" if o.arg else "") for o in (*OPTIONS, STRAY) if o.short)
LONGS = tuple((o.long, o.short or "", bool(o.arg)) for o in OPTIONS if o.long)
BY_LETTER = {o.short: o for o in (*OPTIONS, STRAY) if o.short}

#: the options of the metadata report's lookups (-a: all of them)
METADATA = frozenset({ALL, DESC, INSTANCES, LABELS, NAMES, METRICS})
#: option conflicts, checked in this order (only the first that applies is reported):
#: "cannot use WHAT options together"
CONFLICTS = (
    ({LOAD}, METADATA | {SOURCES, VALUES, WINDOW}, "load and reporting"),
    ({LOAD}, {QUERY}, "load and querying"),
    ({QUERY}, METADATA | {SOURCES, VALUES}, "query and metadata"),
    ({QUERY}, {WINDOW}, "query and time window"),
)
#: the options that choose the mode; without any, arguments that are all series ids are
#: reported on as with -a, and anything else is a query
CHOOSERS = METADATA | {LOAD, SOURCES, VALUES, FULLPMID, FULLINDOM, SERIES}
#: the option that picks each mode, in the order pmseries tests them (then -S alone is
#: the sources' names, and anything else the metadata report)
MODE_OPTIONS = ((LOAD, Mode.LOAD), (QUERY, Mode.QUERY), (WINDOW, Mode.WINDOW),
                (VALUES, Mode.LABEL_VALUES))  # fmt: skip


@dataclass
class CommandLine:
    """What the option loop found: the options given, the last value of each, the
    operands, and the complaints (pmprintf's buffer, shown with the usage)."""

    given: set[Opt] = field(default_factory=set)
    values: dict[Opt, str] = field(default_factory=dict)
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0
    version: bool = False  # -V

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


def parse_options(argv: Sequence[str]) -> Request:
    """pmseries' option loop, its conflict checks and its choice of mode; any complaint
    ends the run with the usage (status 1), and -V ends it with status 0."""
    line = read_options(argv)
    given = line.given
    clash = next(
        (what for have, against, what in CONFLICTS if given & have and given & against), None
    )
    if clash is not None:
        line.complain(f"error - cannot use {clash} options together")
    text = (" " if given & {LOAD, QUERY} else ",").join(line.operands)
    if not given & CHOOSERS:
        every_sid = bool(line.operands) and all(issid(arg) for arg in line.operands)
        given.add(ALL if every_sid else QUERY)
    if not (line.operands or line.errors or line.version):
        missing = missing_argument(given)
        if missing is not None:
            line.complain(f"error - {missing}")
    if line.errors or line.version:
        usage_exit(line)
    return Request(
        mode=mode_for(given),
        show=show_for(given),
        text=text,
        fast=FAST in given,
        config=line.values.get(CONFIG),
        host=line.values.get(HOST),
        port=line.values.get(PORT),
        pattern=line.values.get(GLOB),
        window=line.values.get(WINDOW),
        timezone=line.values.get(TIMEZONE),
    )


def read_options(argv: Sequence[str]) -> CommandLine:
    """The option loop: getopt's complaints are printed at once, as is -V's line."""
    line = CommandLine()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            line.operands.append(item)
            continue
        letter, value = item
        opt = BY_LETTER.get(letter)
        if opt is None:  # ("!", message)
            sys.stderr.write(f"{PROG}: {value}\n")
            line.errors += 1
        elif opt in (HELP, STRAY):
            line.errors += 1
        elif opt is VERSION:
            sys.stderr.write(version_line(PROG) + "\n")
            line.version = True
        elif opt is DEBUG and not debug_spec_ok(str(value)):
            line.complain(f"unrecognized debug options specification ({value})")
        else:
            line.given.add(opt)
            if value is not None:
                line.values[opt] = value
    if not line.version:  # (as every command: a $PUREPCP_CONF naming no file is an error)
        check_layout_file()
    return line


def missing_argument(given: set[Opt]) -> str | None:
    """What is missing when there are no arguments, if the options need some."""
    if QUERY in given:
        return "no query string provided"
    if VALUES in given:
        return "no label name(s) provided"
    if ALL in given or not given & (METADATA | {SOURCES}):
        return "no series string(s) provided"
    return None


def mode_for(given: set[Opt]) -> Mode:
    mode = next((mode for opt, mode in MODE_OPTIONS if opt in given), None)
    if mode is not None:
        return mode
    return Mode.SOURCES if SOURCES in given and not given & METADATA else Mode.METADATA


def show_for(given: set[Opt]) -> Show:
    every = ALL in given  # -a is -d -i -l -m -s
    return Show(
        descs=every or DESC in given,
        sources=SOURCES in given,
        metrics=every or METRICS in given,
        labels=every or LABELS in given or NAMES in given,
        instances=every or INSTANCES in given,
        series_ids=every or SERIES in given,
        label_names_only=NAMES in given,
        full_pmid=FULLPMID in given,
        full_indom=FULLINDOM in given,
        numeric_times=TIMES in given,
    )


def usage_exit(line: CommandLine) -> NoReturn:
    """pmUsageMessage: the complaints and the usage (status 1), or after -V nothing more
    (status 0)."""
    sys.stdout.flush()
    if line.version:
        raise SystemExit(0)
    sys.stderr.write("".join(line.messages) + TOOL.usage())
    raise SystemExit(1)
