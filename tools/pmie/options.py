"""pmie's command line: the options read as pmGetOptions and pmie's own loop read
them, and the usage text (interface: PCP's words)."""

from __future__ import annotations

import getopt
from dataclasses import dataclass, field

PROG = "pmie"

USAGE = """\
Usage: pmie [options] [filename ...]

General options:
  -A TIME, --align=TIME align sample times on natural boundaries
  -a FILE, --archive=FILE
                        metrics source is a PCP log archive
  -h HOST, --host=HOST  metrics source is PMCD on host
  -n FILE, --namespace=FILE
                        use an alternative PMNS
  -O TIME, --origin=TIME
                        initial sample time within the time window
  -S TIME, --start=TIME start of the time window
  -T TIME, --finish=TIME
                        end of the time window
  -t DELTA, --interval=DELTA
                        sampling interval
  -Z TZ, --timezone=TZ  set reporting timezone
  -z, --hostzone        set reporting timezone to local time of metrics source
  -?, --help            show this usage message and exit

Runtime options:
  -C, --check           parse configuration and exit
  -c FILE, --config=FILE
                        configuration file
  -d, --interact        interactive debugging mode
  -P, --primary         execute as primary inference engine
  -f, --foreground      run in the foreground, not as a daemon
  -F, --systemd         systemd mode - notify service manager (if any) when started and ready
  -j FILE               stomp protocol (JMS) file
  -l FILE, --logfile=FILE
                        send status and error messages to FILE
  -U USER, --username=USER
                        run as named USER in daemon mode [default pcp]

Reporting options:
  -b, --buffer          one line buffered output stream, stdout on stderr
  -e, --timestamp       force timestamps to be reported with -V, -v or -W
  -q, --quiet           quiet mode, default diagnostics suppressed
  -v                    verbose mode, expression values printed
  -V, --verbose         verbose mode, annotated expression values printed
  -W                    verbose mode, satisfying expression values printed
  -X, --secret-applet   run in secret applet mode (thin client)
  -x, --secret-agent    run in secret agent mode (summary PMDA)
"""

SHORT = "A:a:h:n:O:S:T:t:Z:z?Cc:dPfFj:l:U:beqvVWXxD:"
LONG = {
    "align": "A", "archive": "a", "host": "h", "namespace": "n", "origin": "O",
    "start": "S", "finish": "T", "interval": "t", "timezone": "Z", "hostzone": "z",
    "help": "?", "check": "C", "config": "c", "interact": "d", "primary": "P",
    "foreground": "f", "systemd": "F", "logfile": "l", "username": "U", "buffer": "b",
    "timestamp": "e", "quiet": "q", "verbose": "V", "secret-applet": "X",
    "secret-agent": "x", "debug": "D",
}  # fmt: skip
TAKES_ARG = {letter for letter in "AahnOSTtZcjlUD"}
#: options that need what this pmie does not have yet (live hosts, daemon modes)
NOT_HERE = {"X": "-X", "x": "-x", "j": "-j", "n": "-n"}
VERBOSITY = {"v": 1, "V": 2, "W": 3}


@dataclass
class Options:
    archives: list[str] = field(default_factory=list)
    host: str | None = None  # -h: the default pmcd (else local:)
    config: str | None = None
    check: bool = False
    interactive: bool = False  # -d: the debugger's commands from standard input
    verbose: int = 0
    show_time: bool = False
    buffer: bool = False  # -b: line-buffered, standard output onto standard error
    quiet: bool = False
    interval: str | None = None
    start: str | None = None
    finish: str | None = None
    align: str | None = None
    origin: str | None = None
    timezone: str | None = None
    hostzone: bool = False
    logfile: str | None = None  # -l: the log (standard error goes there)
    username: str | None = None  # -U: the user a daemon runs as
    foreground: bool = False  # -f: not a daemon, whatever else says so
    primary: bool = False  # -P: the primary pmie (a PID file)
    systemd: bool = False  # -F: started by systemd (no new session)
    daemon: bool = False  # -l, -U, -P or -F without -f or -a: pmie's isdaemon
    debug: set[str] = field(default_factory=set)  # -D: the debug options named
    missing: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)


class Usage(Exception):
    """A bad command line: the message before the usage text."""


def parse(args: list[str]) -> Options:
    longs = [f"{name}=" if letter in TAKES_ARG else name for name, letter in LONG.items()]
    try:
        pairs, operands = getopt.gnu_getopt(args, SHORT, longs)
    except getopt.GetoptError as exc:
        opt = exc.opt
        if len(opt) == 1 and opt not in SHORT:
            raise Usage(f"{PROG}: invalid option -- '{opt}'\n") from None
        if len(opt) == 1:
            raise Usage(f"{PROG}: option requires an argument -- '{opt}'\n") from None
        raise Usage(f"{PROG}: unrecognized option '--{opt}'\n") from None
    o = Options(operands=operands)
    for flag, value in pairs:
        _apply(o, LONG.get(flag[2:], "") if flag.startswith("--") else flag[1:], value)
    ended = _end_options(o)
    if ended:
        raise Usage(ended)
    if o.config is not None and o.operands:
        raise Usage(f"{PROG}: extra filenames cannot be given after using -c\n")
    if o.foreground and o.systemd:
        raise Usage(f"{PROG}: the -f and -F options are mutually exclusive\n")
    if o.archives or o.foreground:
        o.daemon = False
    if o.interval is not None:
        _check_interval(o.interval)
    return o


def _end_options(o: Options) -> str:
    """pmGetOptions' last checks: what the time window and -z need of the source."""
    text = ""
    if (o.start is not None or o.align is not None or o.origin is not None) and not o.archives:
        text += f"{PROG}: time window options are supported for archives only\n"
    if o.hostzone and not o.archives and o.host is None:
        text += f"{PROG}: use of timezone from metric source requires a source\n"
    return text


def _check_interval(text: str) -> None:
    """pmGetOptions reads -t with pmParseInterval: a bad one is a usage error."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns

    try:
        parse_interval_ns(text)
    except TimeParseError as exc:
        raise Usage(f"{PROG}: -t argument not in pmParseInterval(3) format:\n"
                    f"{exc.errmsg}\n") from None  # fmt: skip


def _apply(o: Options, letter: str, value: str) -> None:
    if letter == "?":
        raise Usage("")
    if letter in ("a", "h") and (o.host is not None or (o.archives and letter == "h")):
        raise Usage(f"{PROG}: at most one of -a or -h allowed\n")
    if (letter == "Z" and o.hostzone) or (letter == "z" and o.timezone is not None):
        raise Usage(f"{PROG}: at most one of -Z and -z allowed\n")
    if letter in ("c", "d") and (o.interactive or (o.config is not None and letter == "d")):
        raise Usage(f"{PROG}: at most one of -c and -d allowed\n")
    if letter == "a":
        o.archives.extend(value.split(","))
    elif letter == "h":
        o.host = value
    elif letter == "l":
        if o.logfile is not None:
            raise Usage(f"{PROG}: at most one -l option is allowed\n")
        o.logfile, o.daemon = value, True
    elif letter == "U":
        o.username, o.daemon = value, True
    elif letter in ("P", "F"):
        setattr(o, "primary" if letter == "P" else "systemd", True)
        o.daemon = True
    elif letter == "f":
        o.foreground = True
    elif letter == "D":
        from purepcp.pmapi import debug

        o.debug.update(word.strip() for word in value.split(","))
        debug.set_options(value)  # (libpcp's traces: -D fetch...)
    elif letter in VERBOSITY:
        o.verbose = VERBOSITY[letter]
    elif letter in NOT_HERE:
        o.missing.append(NOT_HERE[letter])
    else:
        simple = {"c": "config", "t": "interval", "S": "start", "T": "finish", "A": "align",
                  "O": "origin", "Z": "timezone"}  # fmt: skip
        flags = {"C": "check", "e": "show_time", "q": "quiet", "z": "hostzone",
                 "b": "buffer", "d": "interactive"}  # fmt: skip
        if letter in simple:
            setattr(o, simple[letter], value)
        elif letter in flags:
            setattr(o, flags[letter], True)
