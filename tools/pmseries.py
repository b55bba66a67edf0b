"""pmseries: load archives into a Redis (or Valkey) key server in PCP 6's layout, and
ask it about the time series it holds.

`pmseries --load ARCHIVE` (or `--load '{source.path: "ARCHIVE"}'`, with optional
`metric.name` qualifiers and a `[start:..., finish:...]` window) loads as PCP's does
and prints PCP's line; the key server comes from -h/-p, or from the [redis] section
of the configuration files PCP's pmseries reads.

Everything else prints what PCP 6.0.3's pmseries prints:

* arguments that are all series ids (or any arguments with -a -d -i -l -m -n -s -I -M):
  the metadata report of each (descriptor, source, metric names, labels, instances);
* no arguments with -S -i -l -m: every source, instance, label or metric name (-g GLOB);
* -S SOURCE...: the names of sources; -v NAME...: the values of labels;
* -w WINDOW SID...: the values of series in a time window (`[samples:N, start:T, ...]`);
* anything else is a query, answered by purepcp.series.query.

PCP's pmseries drives libpcp_web with callbacks and prints as they arrive, keeping a
little state between them (the series being reported, whether a line is open, whether
a comma is due).  Its blank lines and separators come from that state, so `Report`
keeps the same state and receives the same callbacks, in the order libpcp_web makes
them; the `lookup_*` functions play libpcp_web's part over a SeriesReader.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import IntFlag
from functools import cmp_to_key
from typing import Any, NoReturn

from purepcp.pmapi import version_line
from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.timewindow import (
    NSEC,
    TimeParseError,
    parse_interval_ns,
    parse_time,
    pm_ctime,
    tzinfo_for,
)
from purepcp.series import schema
from purepcp.series.ids import string_id
from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.loadspec import LoadSpec, LoadSpecError, load_spec
from purepcp.series.read import UNKNOWN_DESC, SeriesDesc, SeriesError, SeriesReader, Window
from purepcp.series.store import Store, StoreConfig, StoreDown, StoreError

PROG = "pmseries"
#: how long a load waits for a restarted key server before it reports where it stopped
RESUME_SECONDS = 30.0
DEFAULT_PORT = 6379

# --------------------------------------------------------------------------- options

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

REPORTING = (ALL, DESC, FULLINDOM, INSTANCES, FAST, GLOB, LABELS, FULLPMID, METRICS, NAMES,
             SOURCES, SERIES, TIMES, WINDOW, TIMEZONE, VERSION, HELP)  # fmt: skip

TOOL = Tool(
    PROG,
    "[options] [query ... | labels ... | series ... | source ...]",
    [
        ("Connection Options", (CONFIG, HOST, PORT)),
        ("General Options", (LOAD, QUERY, VALUES)),
        ("Reporting Options", REPORTING),
    ],
)
#: the long options in PCP's table order (an ambiguous prefix lists them in this order)
LONG_OPTIONS = (CONFIG, HOST, PORT, LOAD, QUERY, VALUES, DEBUG, ALL, DESC, FULLINDOM,
                INSTANCES, FAST, GLOB, LABELS, FULLPMID, METRICS, NAMES, SOURCES, SERIES,
                TIMES, WINDOW, TIMEZONE, VERSION, HELP)  # fmt: skip
#: pmseries' short options: -e is taken and does nothing but count as an error
SHORT_OPTIONS = "ac:dD:eFg:h:iIlLmMnqp:sStvVw:Z:?"
#: the same as pcp_getopt takes them: (long name, letter, takes an argument)
LONG_TABLE = tuple((o.long or "", o.short or "", bool(o.arg)) for o in LONG_OPTIONS)


class F(IntFlag):
    """pmseries' flags: what was asked for (OPT_*) and the state of the report."""

    COLOUR = 1 << 0
    FAST = 1 << 1
    FULLINDOM = 1 << 2
    FULLPMID = 1 << 3
    SERIESID = 1 << 4
    NEED_EOL = 1 << 5
    NEED_COMMA = 1 << 6
    INSTLABELS = 1 << 7
    ONLY_NAMES = 1 << 8
    NEED_DESCS = 1 << 9
    NEED_INSTS = 1 << 10
    NEED_RESET = 1 << 11
    TIMES = 1 << 13
    OPT_ALL = 1 << 16
    OPT_SOURCE = 1 << 17
    OPT_DESC = 1 << 18
    OPT_INSTS = 1 << 19
    OPT_LABELS = 1 << 20
    OPT_LOAD = 1 << 21
    OPT_METRIC = 1 << 22
    OPT_QUERY = 1 << 23
    OPT_VALUES = 1 << 24
    OPT_WINDOW = 1 << 25


NO_FLAGS = F(0)
META_OPTS = F.OPT_DESC | F.OPT_INSTS | F.OPT_LABELS | F.OPT_METRIC
#: the flags each option letter sets
LETTER_FLAGS = {
    "a": F.OPT_ALL | F.SERIESID, "d": F.OPT_DESC, "F": F.FAST, "i": F.OPT_INSTS,
    "I": F.FULLINDOM, "l": F.OPT_LABELS, "L": F.OPT_LOAD, "m": F.OPT_METRIC,
    "M": F.FULLPMID, "n": F.OPT_LABELS | F.ONLY_NAMES, "q": F.OPT_QUERY, "s": F.SERIESID,
    "S": F.OPT_SOURCE, "t": F.TIMES, "v": F.OPT_VALUES, "w": F.OPT_WINDOW,
}  # fmt: skip
#: option conflicts, checked in this order (only the first that applies is reported)
CONFLICTS = (
    (F.OPT_LOAD, META_OPTS | F.OPT_SOURCE | F.OPT_VALUES | F.OPT_WINDOW,
     "cannot use load and reporting options together"),
    (F.OPT_LOAD, F.OPT_QUERY, "cannot use load and querying options together"),
    (F.OPT_QUERY, META_OPTS | F.OPT_SOURCE | F.OPT_VALUES,
     "cannot use query and metadata options together"),
    (F.OPT_QUERY, F.OPT_WINDOW, "cannot use query and time window options together"),
)  # fmt: skip


@dataclass
class Options:
    """What the command line asked for, as pmseries' flags and arguments."""

    flags: F = NO_FLAGS
    operands: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # c h p g w Z D: the last given
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer, shown with usage
    errors: int = 0
    exit_now: bool = False  # -V
    spaced: bool = False  # -L or -q given

    @property
    def query(self) -> str:
        """The arguments as one string: PCP joins them with spaces when -L or -q is
        given, else with commas (even for a query it chose itself)."""
        return (" " if self.spaced else ",").join(self.operands)


def parse_options(argv: Sequence[str]) -> Options:
    """pmseries' option loop, its conflict checks and its choice of mode (query, or the
    metadata report when every argument is a series id)."""
    o = Options()
    for item in pcp_getopt(argv, SHORT_OPTIONS, LONG_TABLE):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        if letter == "!":
            sys.stderr.write(f"{PROG}: {value}\n")  # getopt complains at once
            o.errors += 1
        elif letter in ("?", "e"):
            o.errors += 1
        elif letter == "V":
            sys.stderr.write(version_line(PROG) + "\n")
            o.exit_now = True
        elif letter == "D" and not debug_spec_ok(str(value)):
            o.messages.append(f"{PROG}: unrecognized debug options specification ({value})\n")
            o.errors += 1
        else:
            o.flags |= LETTER_FLAGS.get(letter, NO_FLAGS)
            o.spaced = o.spaced or letter in ("L", "q")
            if value is not None:
                o.values[letter] = value
    if o.flags & F.OPT_ALL:
        o.flags |= META_OPTS
    for have, against, message in CONFLICTS:
        if o.flags & have and o.flags & against:
            o.messages.append(f"{PROG}: error - {message}\n")
            o.errors += 1
            break
    if o.flags & (F.FULLPMID | F.FULLINDOM | F.SERIESID):
        o.flags |= F.NEED_DESCS
    if o.flags & F.OPT_LABELS:
        o.flags |= F.NEED_INSTS
    choose_mode(o)
    return o


def choose_mode(o: Options) -> None:
    """PCP's default mode: the report of every metadata (-a) when all arguments are
    series ids, else a query; then the complaints about missing arguments."""
    chosen = META_OPTS | F.OPT_LOAD | F.OPT_SOURCE | F.OPT_VALUES | F.NEED_DESCS | F.NEED_INSTS
    if not o.flags & chosen:
        if o.operands and all(issid(arg) for arg in o.operands):
            o.flags |= F.OPT_ALL | META_OPTS | F.SERIESID
        else:
            o.flags |= F.OPT_QUERY
    if o.operands or o.errors or o.exit_now:
        return
    missing = None
    if o.flags & F.OPT_QUERY:
        missing = "no query string provided"
    elif o.flags & F.OPT_VALUES:
        missing = "no label name(s) provided"
    elif not o.flags & (META_OPTS | F.OPT_SOURCE) or o.flags & F.OPT_ALL:
        missing = "no series string(s) provided"
    if missing:
        o.messages.append(f"{PROG}: error - {missing}\n")
        o.errors += 1


def issid(text: str) -> bool:
    """Whether TEXT is a series id as PCP recognises one: 40 lower-case hex digits."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def usage_exit(o: Options) -> NoReturn:
    """pmUsageMessage: the collected complaints and the usage (status 1), or after -V
    nothing more (status 0)."""
    sys.stdout.flush()
    if o.exit_now:
        raise SystemExit(0)
    sys.stderr.write("".join(o.messages) + TOOL.usage())
    raise SystemExit(1)


# --------------------------------------------------------------------- configuration


def config_paths(given: str | None) -> list[str]:
    """-c's file alone, else the files PCP's pmseries merges, later ones winning."""
    if given:
        return [given]
    sysconf = os.environ.get("PCP_SYSCONF_DIR", "/etc/pcp")
    home = os.path.expanduser("~")
    return [
        os.path.join(sysconf, "pmseries", "pmseries.conf"),
        os.path.join(home, ".pmseries.conf"),
        os.path.join(home, ".pcp", "pmseries.conf"),
        "pmseries.conf",
    ]


def store_config(o: Options) -> StoreConfig:
    """The configuration; -h and -p replace its servers as PCP's do (the host defaults
    to localhost, and -p 6379 alone changes nothing)."""
    given = o.values.get("c")
    if given and not os.path.exists(given):
        TOOL.fail(f"cannot read {given}: No such file or directory")
    try:
        config = StoreConfig.from_files(config_paths(given))
    except StoreError as exc:
        TOOL.fail(str(exc))
    host = o.values.get("h")
    port = DEFAULT_PORT
    if "p" in o.values:
        try:
            port = int(o.values["p"])
        except ValueError:
            TOOL.fail(f"invalid port {o.values['p']!r}")
    if host is not None or port != DEFAULT_PORT:
        return replace(config, servers=((host or "localhost", port),))
    return config


def connect(config: StoreConfig) -> Store:
    try:
        return Store(config)
    except StoreError as exc:
        TOOL.fail(f"[Error] {exc}")


# ------------------------------------------------------------------------------ load


def load(o: Options, config: StoreConfig) -> int:
    text = o.query
    try:
        spec: LoadSpec = load_spec(text)
    except LoadSpecError as exc:
        TOOL.fail(f"[Error] {exc}")
    store = connect(config)
    loader = None
    try:
        loader = ArchiveLoader(
            store,
            spec.path,
            wanted=spec.metrics,
            start_ns=spec.start_ns,
            finish_ns=spec.finish_ns,
            metadata_only=bool(o.flags & F.FAST),
            reconnect=lambda: Store(config),
            resume_for=RESUME_SECONDS,
        )
        report = loader.run()
    except LoadError as exc:
        TOOL.fail(f"[Error] {exc}")
    except StoreDown as exc:
        TOOL.fail(f"[Error] {spec.path}: {exc}")
    finally:
        (loader.store if loader is not None else store).close()
    for error in report.errors[:10]:
        sys.stderr.write(f"pmseries: [Warning] {error}\n")
    if report.resumed:
        sys.stderr.write(
            f"pmseries: [Info] the key server went away and came back {report.resumed} "
            f"time(s); the load resumed\n"
        )
    sys.stdout.write(
        f"pmseries: [Info] processed {report.records} archive records from {spec.path}\n"
    )
    return 0


# ----------------------------------------------------------------------- the report

#: pmseries' phrases for the descriptor's type words (compared ignoring case)
TYPE_PHRASES = {
    "32": "32-bit int",
    "64": "64-bit int",
    "u32": "32-bit unsigned int",
    "u64": "64-bit unsigned int",
    "float": "float",
    "double": "double",
    "string": "string",
    "aggregate": "aggregate",
    "aggregate_static": "aggregate static",
    "event": "event record array",
    "highres_event": "highres event record array",
    "no_support": "Not Supported",
}
UNKNOWN = "???"
#: libpcp_web's log levels as pmLogLevelPrint names and colours them
LEVELS = {
    "Info": "\x1b[32m",
    "Warning": "\x1b[33m",
    "Error": "\x1b[31m",
    "Bad request": "\x1b[47m\x1b[31m",
    "Bad response": "\x1b[47m\x1b[31m",
    "Corrupt TSDB": "\x1b[41m\x1b[30m",
}
NULL_ID = 0xFFFFFFFF


@dataclass
class Inst:
    """An instance of the series being reported, and its labels once read."""

    instid: str
    name: str
    series: str
    labels: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Value:
    """One value as on_series_value sees it: INSTANCE is the instance's series id, or
    the metric's own for a metric without instances."""

    instance: str
    timestamp: str
    ns: int
    value: str


class Report:
    """pmseries' printing state and callbacks (on_series_*), one per kind of answer."""

    def __init__(self, flags: F, out: Any = None, err: Any = None) -> None:
        self.flags = flags
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.status = 0
        self.series = ""
        self.source = ""
        self.labels: list[tuple[str, str]] = []
        self.insts: list[Inst] = []
        self.iseries: list[str] = []
        self.zone = tzinfo_for(None)

    # -- state ----------------------------------------------------------------------------

    def write(self, text: str) -> None:
        self.out.write(text)

    def set(self, flag: F) -> None:
        self.flags |= flag

    def clear(self, flag: F) -> None:
        self.flags &= ~flag

    def next_series(self, sid: str) -> bool:
        """series_next: a new series closes the open line and forgets the last one's
        labels and instances."""
        if sid == self.series:
            return False
        self.clear(F.NEED_COMMA | F.NEED_RESET)
        if self.flags & F.NEED_EOL:
            self.clear(F.NEED_EOL)
            self.write("\n")
        self.series = sid
        self.source = ""
        self.labels = []
        self.insts = []
        return True

    def reset(self) -> None:
        """series_data_reset: between the series of a report."""
        self.series = ""
        self.source = ""
        self.clear(F.INSTLABELS)
        self.labels = []
        self.insts = []

    def done(self, sts: int = 0) -> None:
        """on_series_done: the end of each step (a lookup, or a piece of the report)."""
        if self.flags & F.NEED_RESET:
            self.clear(F.NEED_RESET)
            self.reset()
        if self.flags & F.NEED_EOL:
            self.clear(F.NEED_EOL)
            self.write("\n")
        if self.status == 0 and sts < 0:
            self.out.flush()
            self.err.write(f"{PROG}: {pmErrStr(sts)}\n")
            self.status = 1

    def log(self, level: str, message: str) -> None:
        """on_series_info: libpcp_web's diagnostics, "pmseries: [Error] message"; errors
        make the exit status 1, information goes to stdout."""
        if level in ("Info", "Warning"):
            stream = self.out
        else:
            self.status = 1
            stream = self.err
            self.out.flush()
        if self.flags & F.COLOUR:
            stream.write(f"{PROG}: [{LEVELS[level]}{level}\x1b[0m] {message}\n")
        else:
            stream.write(f"{PROG}: [{level}] {message}\n")

    def get_inst(self, series: str) -> Inst | None:
        return next((ip for ip in self.insts if ip.series == series), None)

    # -- callbacks ------------------------------------------------------------------------

    def on_match(self, sid: str) -> None:
        if self.next_series(sid):
            self.write(f"{sid}\n")

    def on_value(self, sid: str, value: Value) -> None:
        if self.next_series(sid):
            self.write(f"\n{sid}\n")
        stamp = value.timestamp if self.flags & F.TIMES else self.ctime_stamp(value.ns)
        line = f"    [{stamp}] {value.value}"
        if value.instance != sid:
            ip = self.get_inst(value.instance)
            line += f" {value.instance}" if ip is None else f' "{ip.name}"'
        self.write(line + "\n")

    def ctime_stamp(self, ns: int) -> str:
        """printstamp: ctime's text with nanoseconds before the year, in $TZ (-Z)."""
        sec, nsec = divmod(ns, NSEC)
        text = pm_ctime(sec, self.zone)
        return f"{text[:19]}.{nsec:09d} {text[20:24]}"

    def on_desc(self, sid: str, desc: SeriesDesc) -> None:
        if self.next_series(sid):
            self.write(f"\n{sid}")
        else:
            self.write("   ")
        self.source = desc.source
        pmid, pmid_value = pmid_parts(desc.pmid)
        indom, indom_value = indom_parts(desc.indom)
        flags = self.flags
        text = ""
        if flags & (F.FULLPMID | F.OPT_DESC):
            text += f" PMID: {pmid}"
        if flags & F.FULLPMID:
            text += f" = {pmid_value} = 0x{pmid_value:x}"
        if flags & (F.FULLPMID | F.OPT_DESC):
            text += "\n"
        if flags & F.OPT_DESC:
            text += f"    Data Type: {TYPE_PHRASES.get(desc.type.lower(), UNKNOWN)}"
            if desc.type == UNKNOWN:
                text += f" ({desc.type})"
        if flags & (F.FULLINDOM | F.OPT_DESC):
            text += f"  InDom: {indom}"
        if flags & F.FULLINDOM:
            text += f" = {indom_value} ="
        if flags & (F.FULLINDOM | F.OPT_DESC):
            text += f" 0x{indom_value:x}\n"
        if flags & F.OPT_DESC:
            text += f"    Semantics: {desc.semantics}"
            if desc.semantics == UNKNOWN:
                text += f" ({desc.semantics})"
            text += f"  Units: {desc.units or 'none'}\n"
        if flags & F.SERIESID:
            text += f"    Source: {desc.source}\n"
        self.write(text)
        self.clear(F.NEED_EOL)

    def on_instance(self, name: str) -> None:
        """An instance name of the listing without arguments."""
        if self.flags & F.OPT_INSTS:
            self.write(f"{name}\n")

    def on_inst(self, sid: str, instid: str, name: str, series: str) -> None:
        if self.next_series(sid) and self.flags & F.OPT_INSTS:
            self.write(f"\n{sid}\n")
        if self.get_inst(series) is None:
            self.insts.append(Inst(instid, name, series))

    def on_label(self, series: str | None, name: str) -> None:
        if series is None:  # the listing of every label name
            self.write(f"{name}\n")
            return
        if not self.flags & F.ONLY_NAMES:
            return
        if self.next_series(series):
            self.write(f"\n{series}")
        self.write(f", {name}" if self.flags & F.NEED_COMMA else f"    Labels: {name}")
        self.set(F.NEED_COMMA | F.NEED_EOL)

    def on_labelmap(self, series: str | None, name: str, value: str) -> None:
        if self.flags & F.OPT_VALUES:  # label values: the name stands in for a series
            self.write(f"{name}: {value}" if self.next_series(name) else f", {value}")
            self.set(F.NEED_EOL)
            return
        assert series is not None
        if self.flags & F.INSTLABELS:
            ip = self.get_inst(series)
            if ip is not None:
                ip.labels.append((name, value))
            return
        if self.next_series(series) and not self.flags & F.SERIESID:
            self.write(f"\n{series}\n")
        self.labels.append((name, value))

    def on_metric(self, series: str | None, name: str) -> None:
        if series is None:
            self.write(f"{name}\n")
            return
        if self.next_series(series):
            self.write(f"\n{series}")
        self.write(f", {name}" if self.flags & F.NEED_COMMA else f"    Metric: {name}")
        self.set(F.NEED_COMMA | F.NEED_EOL)

    def on_context(self, source: str | None, name: str) -> None:
        if source is None:
            self.write(f"{name}\n")
            return
        self.source = source
        self.write(f", {name}" if self.flags & F.NEED_COMMA else f"    Context: {name}")
        self.set(F.NEED_COMMA | F.NEED_EOL)

    # -- the pieces of the metadata report ------------------------------------------------

    def header(self, sid: str | None) -> int:
        if sid is not None and self.next_series(sid):
            self.write(f"\n{sid}\n")
        return 0

    def end_section(self) -> int:
        self.clear(F.NEED_COMMA)
        return 0

    def footer(self) -> int:
        self.clear(F.NEED_EOL)
        return 0

    def next_report(self) -> int:
        self.set(F.NEED_RESET)
        return 0

    def instance_names(self) -> int:
        """The instances of the series, by number then name, as pmseries sorts them."""
        self.insts.sort(key=cmp_to_key(compare_insts))
        for ip in self.insts:
            if self.flags & F.OPT_INSTS:
                self.write(f'    inst [{ip.instid} or "{ip.name}"] series {ip.series}\n')
        self.iseries = [ip.series for ip in self.insts]
        return 0

    def metric_labels(self) -> int:
        if not self.flags & F.ONLY_NAMES:
            text = sorted_labels(self.labels)
            if len(text) > 2:
                self.write(f"    labels {text}\n")
        return 0

    def instance_labels(self) -> int:
        if not self.flags & F.ONLY_NAMES:
            for ip in self.insts:
                text = sorted_labels(ip.labels)
                self.write(f'    inst [{ip.instid} or "{ip.name}"] labels {text}\n')
        return 0


def compare_insts(a: Inst, b: Inst) -> int:
    """series_instance_compare: numbers as numbers (their difference as a C int), then
    names byte by byte."""
    if a.instid != b.instid:
        return c_int(_atoll(a.instid) - _atoll(b.instid))
    return (a.name > b.name) - (a.name < b.name)


def c_int(value: int) -> int:
    """VALUE truncated to a 32-bit signed int, as a C cast does."""
    return (value + 2**31) % 2**32 - 2**31


def _atoll(text: str) -> int:
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def sorted_labels(labels: list[tuple[str, str]]) -> str:
    """Labels as pmseries prints them: by name, `{"name":value,...}`."""
    ordered = sorted(labels, key=lambda nv: nv[0].encode("utf-8", "surrogateescape"))
    return "{" + ",".join(f'"{n}":{v}' for n, v in ordered) + "}"


def pmid_parts(text: str) -> tuple[str, int]:
    """A descriptor's pmid field: its text as printed and its number (PM_ID_NULL when
    it is not domain.cluster.item)."""
    m = re.match(r"\s*(\d+)\.\s*(\d+)\.\s*(\d+)", text)
    if m:
        d, c, i = (int(g) % 2**32 for g in m.groups())
        return text, (d & 0x1FF) << 22 | (c & 0xFFF) << 10 | (i & 0x3FF)
    return ("PM_ID_NULL" if text == "none" else text), NULL_ID


def indom_parts(text: str) -> tuple[str, int]:
    """A descriptor's indom field: its text as printed and its number."""
    m = re.match(r"\s*(\d+)\.\s*(\d+)", text)
    if m:
        d, s = (int(g) % 2**32 for g in m.groups())
        return text, (d & 0x1FF) << 22 | (s & 0x3FFFFF)
    return ("PM_INDOM_NULL" if text == "none" else text), NULL_ID


# --------------------------------------------------------------------------- lookups
#
# libpcp_web's pmSeries* calls, each calling back in the order PCP's replies arrive and
# returning a status (negative: an error number).  Ids that are not 40 lower-case hex
# digits name keys nobody writes, so they find nothing (and a descriptor "unknown").


def glob_regex(pattern: str) -> re.Pattern[str]:
    """fnmatch(3) with no flags as a regular expression: `*`, `?`, brackets (`!` or `^`
    negates, `[:class:]`), backslash quoting the next character."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "\\" and i < n:
            out.append(re.escape(pattern[i]))
            i += 1
        elif c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            bracket, i = _bracket(pattern, i)
            out.append(bracket)
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


_CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
}  # fmt: skip


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The bracket expression after `[` at I: its regex and where it ends; a `[` that
    is never closed is itself."""
    start, n = i, len(pattern)
    negate = i < n and pattern[i] in "!^"
    if negate:
        i += 1
    parts: list[str] = []
    first = True
    while i < n and (pattern[i] != "]" or first):
        first = False
        c = pattern[i]
        if c == "[" and pattern.startswith(":", i + 1):
            end = pattern.find(":]", i + 2)
            if end > 0 and pattern[i + 2 : end] in _CLASSES:
                parts.append(_CLASSES[pattern[i + 2 : end]])
                i = end + 2
                continue
        if c == "\\" and i + 1 < n:
            i += 1
            c = pattern[i]
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            parts.append(f"{re.escape(c)}-{re.escape(pattern[i + 2])}")
            i += 3
            continue
        parts.append(re.escape(c))
        i += 1
    if i >= n:
        return re.escape("["), start
    return "[" + ("^" if negate else "") + "".join(parts) + "]", i + 1


def listing(reader: SeriesReader, mapname: str, pattern: str | None) -> list[str]:
    """A string map's names (HVALS order), those fnmatch accepts when PATTERN is given."""
    names = reader.map_values(mapname)
    if pattern is None:
        return names
    regex = glob_regex(pattern)
    return [name for name in names if regex.fullmatch(name)]


def expr_query(reader: SeriesReader, sid: str) -> str | None:
    """The query text of an expression's series id (pcp:expr:series:<sid>), if any."""
    if not issid(sid):
        return None
    raw = reader.client.hget(schema.expr_key(bytes.fromhex(sid)), "query")
    return raw.decode("utf-8", "surrogateescape") if raw is not None else None


def lookup_descs(reader: SeriesReader, report: Report, sids: Sequence[str]) -> int:
    if not sids:
        return -errno.EINVAL
    for sid in sids:
        desc = reader.descs([sid])[0] if issid(sid) else SeriesDesc(sid, *_unknown_desc())
        report.on_desc(sid, desc)
    return 0


def _unknown_desc() -> tuple[str, ...]:
    """UNKNOWN_DESC in SeriesDesc's field order (source, pmid, indom, semantics, type,
    units)."""
    indom, pmid, sem, source, type_, units = UNKNOWN_DESC
    return source, pmid, indom, sem, type_, units


def lookup_sources(
    reader: SeriesReader, report: Report, sources: Sequence[str], pattern: str | None
) -> int:
    if not sources:
        for name in listing(reader, "context.name", pattern):
            report.on_context(None, name)
        return 0
    later = []  # an expression's query text arrives after every name (a second read)
    for src in sources:
        found = reader.sources([src]) if issid(src) else []
        for _, name in found:
            report.on_context(src, name)
        if not found:
            later.append(src)
    for src in later:
        query = expr_query(reader, src)
        if query is not None:
            report.on_context(src, query)
    return 0


def lookup_metrics(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    if not sids:
        for name in listing(reader, "metric.name", pattern):
            report.on_metric(None, name)
        return 0
    for sid in sids:
        for series, name in reader.metrics([sid]) if issid(sid) else []:
            report.on_metric(series, name)
    return 0


def lookup_labels(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    """Label names of each series as its hash has them (on_label), then their values
    (on_labelmap) once every name has been seen."""
    if not sids:
        for name in listing(reader, "label.name", pattern):
            report.on_label(None, name)
        return 0
    found = reader.labels([sid for sid in sids if issid(sid)])
    for sid, pairs in found:
        for name, _ in pairs:
            report.on_label(sid, name)
    for sid, pairs in found:
        for name, value in pairs:
            report.on_labelmap(sid, name, value)
    return 0


def lookup_instances(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    if not sids:
        for name in listing(reader, "inst.name", pattern):
            report.on_instance(name)
        return 0
    for sid in sids:
        for inst in reader.instances([sid]) if issid(sid) else []:
            report.on_inst(sid, str(inst.id), inst.name, inst.instance)
    return 0


def lookup_label_values(reader: SeriesReader, report: Report, names: Sequence[str]) -> int:
    for name in names:
        for value in reader.map_values(schema.label_value_map(string_id(name))):
            report.on_labelmap(None, name, value)
    return 0


# --------------------------------------------------------------------- report modes

Step = Callable[[], int]


def metadata_steps(
    reader: SeriesReader, report: Report, sid: str | None, pattern: str | None
) -> list[Step]:
    """series_data_report: the pieces of the report on one series (or, with SID None,
    the listings of every name), in pmseries' order."""
    flags = report.flags
    one = [sid] if sid is not None else []
    steps: list[Step] = [lambda: report.header(sid)]
    if flags & (F.OPT_DESC | F.NEED_DESCS):
        steps += [lambda: lookup_descs(reader, report, one), report.end_section]
    if flags & F.OPT_SOURCE:
        steps += [lambda: lookup_sources(reader, report, one, pattern), report.end_section]
    if flags & F.OPT_METRIC:
        steps += [lambda: lookup_metrics(reader, report, one, pattern), report.end_section]
    if flags & F.OPT_LABELS:
        steps += [
            lambda: lookup_labels(reader, report, one, pattern),
            report.metric_labels,
            report.end_section,
        ]
    if flags & (F.OPT_INSTS | F.NEED_INSTS):
        steps += [
            lambda: lookup_instances(reader, report, one, pattern),
            report.instance_names,
            report.end_section,
        ]
    if flags & F.OPT_LABELS and sid is not None:
        steps += [lambda: instance_label_lookup(reader, report), report.instance_labels,
                  report.end_section]  # fmt: skip
    steps.append(report.footer)
    return steps


def instance_label_lookup(reader: SeriesReader, report: Report) -> int:
    """The labels of the instances just listed, read by their own series ids."""
    if not report.insts:
        return 0
    report.set(F.INSTLABELS)
    return lookup_labels(reader, report, list(report.iseries), None)


def comma_split(text: str) -> list[str]:
    """sdssplitlen on commas: nothing for an empty string, empty pieces kept."""
    return text.split(",") if text else []


def series_report(reader: SeriesReader, report: Report, o: Options) -> None:
    """The metadata report on each series id given, or the listings without any."""
    pattern = o.values.get("g")
    sids = comma_split(o.query)
    steps: list[Step] = []
    if not sids:
        steps = metadata_steps(reader, report, None, pattern)
    for sid in sids:
        steps += [*metadata_steps(reader, report, sid, pattern), report.next_report]
    for step in steps:
        report.done(step())


def series_sources(reader: SeriesReader, report: Report, o: Options) -> None:
    """-S: the names of the sources given, or of every source."""
    report.done(lookup_sources(reader, report, comma_split(o.query), o.values.get("g")))


def series_label_values(reader: SeriesReader, report: Report, o: Options) -> None:
    """-v: each label name's values."""
    names = comma_split(o.query)
    if not names:
        report.err.write(f"{PROG}: no label names in string '{o.query}': {pmErrStr(0)}\n")
        report.status = 1
        return
    report.done(lookup_label_values(reader, report, names))


def series_values(reader: SeriesReader, report: Report, o: Options) -> None:
    """-w: the values of the series given, in the time window."""
    given = comma_split(o.query)
    if not given:
        report.err.write(f"{PROG}: no series identifiers in string '{o.query}': {pmErrStr(0)}\n")
        report.status = 1
        return
    text = o.values.get("w", "")
    if not text.startswith("["):
        text = f"[{text}]"
    try:
        window = parse_window(text)
    except WindowError as exc:
        report.log("Error", exc.message)
        report.err.write(f"{PROG}: invalid time specification '{text}': {pmErrStr(exc.code)}\n")
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


def sid_error(text: str) -> str | None:
    """PCP's complaint about a series id whose first 40 characters are not hex pairs."""
    for off in range(0, 40, 2):
        pair = text[off : off + 2]
        if len(pair) != 2 or not all(c in "0123456789abcdefABCDEF" for c in pair):
            return f"Invalid SID {text} near offset {off}"
    return None


def run_query(reader: SeriesReader, text: str) -> Any:
    """The query engine's answer to TEXT (QueryAnswer: sids, values, expression)."""
    from purepcp.series.query import run_query as engine  # type: ignore[import-not-found]

    return engine(reader, text)


def series_query(reader: SeriesReader, report: Report, o: Options) -> None:
    """A query: the ids of the series it matches, or their values when it has a time
    window or a function (just the ids with -F)."""
    try:
        answer = run_query(reader, o.query)
    except SeriesError as exc:
        report.log("Error", str(exc))
        return
    except ImportError as exc:  # (an installation without the query engine)
        report.log("Error", f"cannot evaluate queries here: {exc}")
        return
    if answer.values is not None and not report.flags & F.FAST:
        for v in answer.values:
            report.on_value(v.series, Value(v.instance, v.timestamp, v.ns, v.value))
    else:
        for sid in answer.sids:
            report.on_match(sid)
    report.done(0)


# ------------------------------------------------------------------------ windows


class WindowError(Exception):
    """A time window pmSeriesWindow rejects: MESSAGE is libpcp_web's text, CODE the
    error number pmseries reports with it."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Token:
    kind: str  # [ ] : , INTEGER DOUBLE RANGE STRING NAME, a keyword, OTHER, ERROR, EOS
    text: str
    at: int


#: the window keywords and their synonyms
KEYWORDS = {
    "interval": "INTERVAL", "delta": "INTERVAL", "timezone": "TIMEZONE", "tz": "TIMEZONE",
    "start": "START", "begin": "START", "finish": "FINISH", "end": "FINISH",
    "samples": "SAMPLES", "count": "SAMPLES", "offset": "OFFSET", "from": "OFFSET",
    "align": "ALIGN", "alignment": "ALIGN",
}  # fmt: skip
NAME_CHARS = "_.*%\\"
TWO_CHAR_OPS = "<=~>!&|"


def lex(text: str) -> Iterator[Token]:
    """The query language's tokens, as its lexer cuts them (only those a time window
    can hold are told apart; any other is OTHER or ERROR, a syntax error either way)."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\n\v\f\r":
            i += 1
        if i >= n:
            yield Token("EOS", "", max(n - 1, 0))
            return
        start, c = i, text[i]
        if c.isascii() and c.isdigit():
            i += 1
            while i < n and text[i].isascii() and text[i].isdigit():
                i += 1
            if i < n and text[i] == ".":
                i = _digits(text, i + 1)
                yield Token("DOUBLE", text[start:i], start)
            elif i < n and text[i].isascii() and text[i].isalpha():
                while i < n and text[i].isascii() and text[i].isalpha():
                    i += 1
                yield Token("RANGE", text[start:i], start)
            elif int(text[start:i]) > 0xFFFFFFFF:
                yield Token("ERROR", text[start:i], start)
            else:
                yield Token("INTEGER", text[start:i], start)
        elif c == ".":
            i = _digits(text, i + 1)
            yield Token("DOUBLE", text[start:i], start)
        elif c.isascii() and c.isalpha():
            i += 1
            while i < n and ((text[i].isascii() and text[i].isalnum()) or text[i] in NAME_CHARS):
                i += 1
            word = text[start:i]
            yield Token(KEYWORDS.get(word, "NAME"), word, start)
        elif c == '"':
            end = text.find('"', i + 1)
            if end < 0:
                yield Token("ERROR", text[start:], start)
                return
            i = end + 1
            yield Token("STRING", text[start + 1 : end], start)
        elif c in "[]:,":
            i += 1
            yield Token(c, c, start)
        elif c in "+-*/(){}" or c in TWO_CHAR_OPS:
            i += 1
            yield Token("OTHER", c, start)
        else:
            yield Token("ERROR", c, start)
            return


def _digits(text: str, i: int) -> int:
    while i < len(text) and text[i].isascii() and text[i].isdigit():
        i += 1
    return i


@dataclass
class WindowSpec:
    """The window's fields as written (pmSeriesTimeWindow) and as numbers."""

    texts: dict[str, str] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    delta: int = 0
    range: int = 0
    count: int = 0


#: the duplicate complaints: (what, whether the new text is named first)
DUPLICATES = {
    "INTERVAL": ("time delta", False), "TIMEZONE": ("timezone", False),
    "SAMPLES": ("sample count", True), "OFFSET": ("time offset", True),
    "ALIGN": ("alignment", False), "START": ("start time", False),
    "FINISH": ("end time", False), "RANGE": ("time range", False),
}  # fmt: skip
TIMESPECS = ("STRING", "INTEGER", "DOUBLE")
#: what may follow each keyword's colon
VALUE_KINDS = {
    "INTERVAL": TIMESPECS, "TIMEZONE": ("STRING",), "SAMPLES": ("INTEGER",),
    "OFFSET": ("INTEGER",), "ALIGN": TIMESPECS, "START": TIMESPECS, "FINISH": TIMESPECS,
}  # fmt: skip


def parse_window(text: str, now_ns: int | None = None) -> Window:
    """pmSeriesWindow then pmSeriesValues' reading of a `[key:value, ...]` window, as a
    SeriesReader Window; WindowError as PCP words each failure."""
    tokens = lex(text)
    spec = WindowSpec()

    def syntax_error(tok: Token) -> NoReturn:
        where = TimeParseError(text, tok.at, "syntax error").errmsg
        raise WindowError(f"cannot parse given string\n\n{where}", -errno.EINVAL)

    def expect(*kinds: str) -> Token:
        tok = next(tokens)
        if tok.kind not in kinds:
            syntax_error(tok)
        return tok

    expect("[")
    while True:
        tok = expect("RANGE", *VALUE_KINDS)
        if tok.kind == "RANGE":
            window_field(spec, "RANGE", tok.text, now_ns)
        else:
            expect(":")
            window_field(spec, tok.kind, expect(*VALUE_KINDS[tok.kind]).text, now_ns)
        if expect(",", "]").kind == "]":
            break
    expect("EOS")
    return reader_window(spec)


def window_field(spec: WindowSpec, key: str, value: str, now_ns: int | None) -> None:
    """One `key:value` of a window: checked and converted as the grammar's actions do
    (a second, different value for a key is refused)."""
    if key in ("START", "FINISH", "ALIGN"):
        ns = window_time(value)
        if key == "START":
            spec.start = ns
        elif key == "FINISH":
            spec.end = ns
    elif key == "INTERVAL":
        spec.delta = window_interval(value, "time delta")
    elif key == "RANGE":
        spec.range = window_interval(value, "range")
    elif key == "SAMPLES":
        count = c_int(int(value))
        if count < 0:
            raise WindowError(f'Invalid sample count requested - "{value}"', -errno.EINVAL)
        spec.count = count
    old = spec.texts.get(key)
    if old is not None and old != value:
        what, new_first = DUPLICATES[key]
        first, second = (value, old) if new_first else (old, value)
        raise WindowError(
            f'Invalid second {what} requested - "{first}" vs "{second}"', -errno.EINVAL
        )
    spec.texts[key] = value
    if key == "RANGE":
        now = time.time_ns() if now_ns is None else now_ns
        spec.start = now - spec.range


def window_time(value: str) -> int:
    """A start, finish or alignment time (__pmParseHighResTime from the epoch, open
    ended), in nanoseconds."""
    try:
        return parse_time(value, 0, None, tz=tzinfo_for(None))
    except TimeParseError as exc:
        raise WindowError(
            f"Cannot parse time with __pmParseHighResTime:\n{exc.errmsg}", -errno.EPERM
        ) from None


def window_interval(value: str, what: str) -> int:
    """An interval or range (pmParseHighResInterval), in nanoseconds."""
    try:
        return parse_interval_ns(value)
    except TimeParseError as exc:
        raise WindowError(
            f"Cannot parse {what} with pmParseHighResInterval:\n{exc.errmsg}", -errno.EPERM
        ) from None


def reader_window(spec: WindowSpec) -> Window:
    """The window as SeriesReader.values reads it.  Without any key the newest value
    is wanted; a start, end, interval or range written as zero still means "read
    forwards from the oldest", which the reader is told with a start of 1ns."""
    windowed = any(k in spec.texts for k in ("START", "FINISH", "INTERVAL", "RANGE"))
    count = spec.count
    if not windowed and "SAMPLES" not in spec.texts:
        count = 1
    start = spec.start
    if windowed and not (spec.start or spec.end or spec.delta or spec.range):
        start = 1
    return Window(start=start, end=spec.end, delta=spec.delta, count=count, range=spec.range)


# ------------------------------------------------------------------------------ main


def run(argv: Sequence[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names and values may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    if o.errors or o.exit_now:
        usage_exit(o)
    if "Z" in o.values:  # as PCP's setenv: ctime's zone, and the window's times
        os.environ["TZ"] = o.values["Z"]
    config = store_config(o)
    if o.flags & F.OPT_LOAD:
        return load(o, config)
    return report(o, config)


def report(o: Options, config: StoreConfig) -> int:
    """Every mode but --load, as on_series_setup chooses it."""
    import redis

    flags = o.flags
    if sys.stdout.isatty() and not os.environ.get("FAKETTY"):
        flags |= F.COLOUR
    out = Report(flags)
    store = connect(config)
    reader = SeriesReader(store.client, config.cursor_count)
    try:
        if flags & F.OPT_QUERY:
            series_query(reader, out, o)
        elif flags & F.OPT_WINDOW:
            series_values(reader, out, o)
        elif flags & F.OPT_VALUES:
            series_label_values(reader, out, o)
        elif flags & F.OPT_SOURCE and not flags & META_OPTS:
            series_sources(reader, out, o)
        else:
            series_report(reader, out, o)
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


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(run, argv)


if __name__ == "__main__":
    sys.exit(main())
