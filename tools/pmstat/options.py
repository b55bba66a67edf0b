"""pmstat's command line, read as libpcp's pmGetOptions reads it for a tool that takes
several sources (PM_OPTFLAG_MULTI): every -a and -h opens a context of its own, -H
reads hosts from a file, and the time window is settled later, once a source is open.

Complaints are kept in the order pmprintf would buffer them; getopt's own complaints
(an unknown option, a missing argument) are printed by getopt at once, so they are
kept apart and come first.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi import optactions
from purepcp.pmapi.cnumbers import int32, strtol
from purepcp.pmapi.options import debug_complaint, pcp_getopt

PROG = "pmstat"

#: PCP's pmstat usage message (interface text, reproduced as PCP prints it)
USAGE = """\
Usage: pmstat [options]

General options:
  -A TIME, --align=TIME align sample times on natural boundaries
  -a FILE, --archive=FILE
                        metrics source is a PCP log archive
  -g, --guimode         start in GUI mode with new time control
  -h HOST, --host=HOST  metrics source is PMCD on host
  -n FILE, --namespace=FILE
                        use an alternative PMNS
  -O TIME, --origin=TIME
                        initial sample time within the time window
  -p N, --guiport=N     port for connection to existing time control
  -S TIME, --start=TIME start of the time window
  -s N, --samples=N     terminate after this many samples
  -T TIME, --finish=TIME
                        end of the time window
  -t DELTA, --interval=DELTA
                        sampling interval
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -V, --version         display version number and exit
  -?, --help            show this usage message and exit

Alternate sources:
  -H FILE, --hostsfile=FILE
                        read metric source hosts from a file
  -L, --local-PMDA      metrics source is local connection to a PMDA

Reporting options:
  -l, --suffix          print last 7 charcters of the host name(s)
  -P, --pause           pause between updates for archive replay
  -x, --xcpu            extended CPU statistics reporting
"""

SHORTS = "A:a:D:gh:n:O:p:S:s:T:t:Z:zV?H:K:LlPx"
#: (long name, letter, takes an argument), in PCP's table order
LONGS = (
    ("align", "A", True), ("archive", "a", True), ("debug", "D", True),
    ("guimode", "g", False), ("host", "h", True), ("namespace", "n", True),
    ("origin", "O", True), ("guiport", "p", True), ("start", "S", True),
    ("samples", "s", True), ("finish", "T", True), ("interval", "t", True),
    ("timezone", "Z", True), ("hostzone", "z", False), ("version", "V", False),
    ("help", "?", False), ("hostsfile", "H", True), ("spec-local", "K", True),
    ("local-PMDA", "L", False), ("suffix", "l", False), ("pause", "P", False),
    ("xcpu", "x", False),
)  # fmt: skip

#: a source's kind, as pmGetOptions settles opts.context
ARCHIVE, HOST, LOCAL = "archive", "host", "local"


@dataclass
class Options:
    """What the command line asked for; messages are pmprintf's, in order."""

    archives: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    local: bool = False
    specs: list[str] = field(default_factory=list)  # -K
    namespace: str | None = None
    start: str | None = None
    finish: str | None = None
    align: str | None = None
    origin: str | None = None
    interval_us: int = 0  # -t, as pmParseInterval's timeval (microseconds)
    samples: int = 0  # -s N; 0 for no limit
    timezone: str | None = None
    hostzone: bool = False
    gui: bool = False
    suffix: bool = False  # -l
    pause: bool = False  # -P
    xcpu: bool = False  # -x
    version: bool = False
    operands: list[str] = field(default_factory=list)
    kind: str | None = None  # ARCHIVE, HOST or LOCAL once the options are read
    getopt_errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0
    runtime_error: bool = False  # (pmUsageMessage then prints no usage)

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


Action = Callable[[Options, str], None]


def read_options(argv: Sequence[str]) -> Options:
    """ARGV read in order, as pmGetOptions and pmstat's own loop read it."""
    o = Options()
    _from_environment(o, os.environ)
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        if letter == "!":
            o.getopt_errors.append(f"{PROG}: {value}\n")
            o.errors += 1
            continue
        ACTIONS[letter](o, value or "")
    _end_options(o)
    return o


#: the PCP_* variables pmGetOptions reads before the command line, and their options
ENVIRONMENT: dict[str, str] = {
    "ALIGN_TIME": "A", "ARCHIVE": "a", "GUIMODE": "g", "HOST": "h", "SPECLOCAL": "K",
    "LOCALMODE": "L", "LOCALPMDA": "L", "NAMESPACE": "n", "UNIQNAMES": "n", "ORIGIN": "O",
    "ORIGIN_TIME": "O", "GUIPORT": "p", "START_TIME": "S", "SAMPLES": "s", "FINISH_TIME": "T",
    "INTERVAL": "t", "TIMEZONE": "Z", "HOSTZONE": "z",
}  # fmt: skip


def _from_environment(o: Options, environ: Mapping[str, str]) -> None:
    """__pmStartOptions: $PCP_DEBUG, then the other PCP_* settings in the environment's
    order (as pcp(1) and the pcp-* wrappers pass their options on)."""
    if "PCP_DEBUG" in environ:
        _debug(o, environ["PCP_DEBUG"])
    for name, value in environ.items():
        if not name.startswith("PCP_"):
            continue
        key = name[4:]
        if key in ENVIRONMENT:
            ACTIONS[ENVIRONMENT[key]](o, value)
        elif key == "ARCHIVE_LIST":
            for part in value.split(","):
                if part:
                    _archive(o, part)
        elif key == "HOST_LIST":
            if o.archives:
                o.complain("only one of hosts or archives allowed")
            else:
                o.hosts.extend(h for h in value.split(",") if h)
        elif key == "FOLIO":
            _folio(o, value)


def _folio(o: Options, path: str) -> None:
    from purepcp.pmapi.options import archive_folio

    if o.hosts:
        o.complain("only one of hosts or archives allowed")
        return
    try:
        names = archive_folio(path)
    except ValueError as exc:
        o.complain(str(exc))
        o.runtime_error = True
        return
    for name in names:
        _archive(o, name)


def _end_options(o: Options) -> None:
    """__pmEndOptions: the source's kind, and what needs one."""
    if o.local:
        o.kind = LOCAL
    elif o.hosts and not o.archives:
        o.kind = HOST
    elif o.archives and not o.hosts:
        o.kind = ARCHIVE
    elif o.origin is not None:
        o.kind = ARCHIVE
        _add_archive(o, _default_archive())
    if (o.start is not None or o.align is not None or o.origin is not None) and o.kind != ARCHIVE:
        o.complain("time window options are supported for archives only")
    if o.hostzone and o.kind not in (ARCHIVE, HOST):
        o.complain("use of timezone from metric source requires a source")


def _default_archive() -> str:
    """Where -O alone looks: this host's directory under $PCP_ARCHIVE_DIR."""
    from purepcp.pmapi.paths import paths

    base = paths()["PCP_ARCHIVE_DIR"] or "/var/log/pcp/pmlogger"
    return os.path.join(base, socket.gethostname())


def _add_archive(o: Options, name: str) -> None:
    if name not in o.archives:  # (duplicates are dropped)
        o.archives.append(name)


def _archive(o: Options, name: str) -> None:
    if o.hosts:
        o.complain("only one host or archive allowed")
    else:
        _add_archive(o, name)


def _host(o: Options, name: str) -> None:
    if o.archives:
        o.complain("only one host or archive allowed")
    else:
        o.hosts.append(name)


def _hostsfile(o: Options, path: str) -> None:
    """-H: one host a line; blank lines and comments skipped, the first word kept."""
    if o.archives:
        o.complain("only one of hosts or archives allowed")
        return
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError as exc:
        o.complain(f"cannot open hosts file {path}: {os.strerror(exc.errno or 0)}")
        o.runtime_error = True
        return
    for line in lines:
        text = line.lstrip(" \t\r\f\v")
        if not text or text.startswith("#"):
            continue
        word = text.split("#", 1)[0].split()
        if word:
            o.hosts.append(word[0])


def _interval(o: Options, text: str) -> None:
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns

    try:
        o.interval_us = parse_interval_ns(text) // 1000
    except TimeParseError as exc:
        o.complain(f"-t argument not in pmParseInterval(3) format:\n{exc.errmsg}")


def _samples(o: Options, text: str) -> None:
    scan = strtol(text)
    o.samples = int32(int(scan.value))
    if scan.end != len(text) or o.samples < 0:
        o.complain("-s requires a positive numeric argument")


def _debug(o: Options, spec: str) -> None:
    problem = debug_complaint(spec)
    if problem:
        o.complain(problem)
        return
    from purepcp.pmapi import debug

    debug.set_options(spec)


def _namespace(o: Options, path: str) -> None:
    o.namespace = path


def _gui(o: Options, _: str) -> None:
    o.gui = True


def _version(o: Options, _: str) -> None:
    o.version = True


def _usage_request(o: Options, _: str) -> None:
    o.errors += 1


def _set(name: str, value: object = True) -> Action:
    def action(o: Options, _: str) -> None:
        setattr(o, name, value)

    return action


def _text(name: str) -> Action:
    def action(o: Options, value: str) -> None:
        setattr(o, name, value)

    return action


def _spec(o: Options, spec: str) -> None:
    o.specs.append(spec)


ACTIONS: dict[str, Action] = {
    "A": _text("align"),
    "a": _archive,
    "D": _debug,
    "g": _gui,
    "h": _host,
    "n": _namespace,
    "O": _text("origin"),
    "p": _gui,
    "S": _text("start"),
    "s": _samples,
    "T": _text("finish"),
    "t": _interval,
    "Z": optactions.timezone,
    "z": optactions.hostzone,
    "V": _version,
    "?": _usage_request,
    "H": _hostsfile,
    "K": _spec,
    "L": _set("local"),
    "l": _set("suffix"),
    "P": _set("pause"),
    "x": _set("xcpu"),
}
