"""pmloglabel's command line: PCP's option table and usage text, read into Options.

pmloglabel reads its options with pmgetopt_r itself: complaints collect in order (as
pmprintf buffers them) and come out before the usage, except a bad -V version, which
pmloglabel prints at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import atoi
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

PROG = "pmloglabel"

USAGE_OPTIONS = (
    Opt("h", "host", "HOSTNAME", "set the hostname for all files in archive"),
    Opt("l", "label", None, "dump the archive label"),
    Opt("L", None, None, "more verbose form of label dump"),
    Opt("p", "pid", "PID", "set the logger process ID field for all files in archive"),
    Opt("s", None, None, "write the label sentinel values for all files in archive"),
    Opt("v", "verbose", None, "run in verbose mode, reporting on each stage of checking"),
    Opt("V", "version", "NUM", "write magic and version numbers for all files in archive"),
    Opt("Z", "timezone", "TZ", "set the timezone for all files in archive"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(PROG, "[options] archive", [("Options", USAGE_OPTIONS)])

SHORTS = "D:h:lLp:svV:Z:?"
#: long options in PCP's table order
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("host", "h", True), ("label", "l", False), ("pid", "p", True),
    ("verbose", "v", False), ("version", "V", True), ("timezone", "Z", True),
    ("help", "?", False),
)  # fmt: skip


@dataclass
class Options:
    """What the command line asked for."""

    host: str | None = None
    label: bool = False  # -l
    long_label: bool = False  # -L
    pid: int = 0
    verbose: bool = False
    version: int = 0
    timezone: str | None = None
    readonly: bool = True  # no -h, -p, -s, -V or -Z
    debug: set[str] = field(default_factory=set)
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer
    errors: int = 0

    def on(self, name: str) -> bool:
        return name in self.debug or "all" in self.debug


def _debug(o: Options, spec: str | None) -> None:
    if not debug_spec_ok(str(spec)):
        o.messages.append(f"{PROG}: unrecognized debug options specification ({spec})\n")
        o.errors += 1
        return
    o.debug.update(t.strip().lower() for t in str(spec).split(",") if t.strip())


def _host(o: Options, host: str | None) -> None:
    o.host, o.readonly = host, False


def _pid(o: Options, pid: str | None) -> None:
    o.pid, o.readonly = atoi(str(pid)), False


def _sentinels(o: Options, _: str | None) -> None:
    o.readonly = False


def _version(o: Options, text: str | None) -> None:
    o.version = atoi(str(text))
    if o.version not in (2, 3):
        sys.stderr.write(f"{PROG}: unknown version number ({text})\n")
        o.errors += 1
    o.readonly = False


def _timezone(o: Options, tz: str | None) -> None:
    o.timezone, o.readonly = tz, False


def _flag(name: str) -> Callable[[Options, str | None], None]:
    def action(o: Options, _: str | None) -> None:
        setattr(o, name, True)

    return action


def _bad(o: Options, message: str | None) -> None:
    o.messages.append(f"{PROG}: {message}\n")
    o.errors += 1


def _help(o: Options, _: str | None) -> None:
    o.errors += 1


ACTIONS: dict[str, Callable[[Options, str | None], None]] = {
    "!": _bad,
    "?": _help,
    "D": _debug,
    "h": _host,
    "l": _flag("label"),
    "L": _flag("long_label"),
    "p": _pid,
    "s": _sentinels,
    "v": _flag("verbose"),
    "V": _version,
    "Z": _timezone,
}


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmloglabel does."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
        else:
            ACTIONS[item[0]](o, item[1])
    if len(o.operands) != 1:
        o.messages.append(f"{PROG}: insufficient arguments\n")
        o.errors += 1
    check_layout_file()
    return o


def usage_exit(o: Options) -> SystemExit:
    """pmUsageMessage: the collected messages, then the usage."""
    sys.stdout.flush()
    sys.stderr.write("".join(o.messages) + TOOL.usage())
    return SystemExit(1)
