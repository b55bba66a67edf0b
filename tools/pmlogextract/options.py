"""pmlogextract's command line: PCP's option table and usage text, read into Options.

Complaints collect in order, as pmprintf buffers them, and the usage follows them.
Numbers are read as strtol reads them (leading blanks, a sign, nothing after).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import strtol
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt

PROG = "pmlogextract"

USAGE_OPTIONS = (
    Opt("c", "config", "FILE", "file to load configuration from"),
    Opt("d", "desperate", None, "desperate, save output after fatal error"),
    Opt("f", "first", None, "use timezone from first archive [default is last]"),
    Opt("m", "mark", None, "ignore prologue/epilogue records and <mark> between archives"),
    Opt("S", "start", "TIME", "start of the time window"),
    Opt("s", "samples", "NUM", "terminate after NUM log records have been written"),
    Opt("T", "finish", "TIME", "end of the time window"),
    Opt("V", "outputversion", "VERSION", "output archive version"),
    Opt("v", None, "SAMPLES", "switch log volumes after this many samples"),
    Opt("w", None, None, "ignore day/month/year"),
    Opt("x", None, None, "skip metrics with mismatched metadata"),
    Opt("Z", "timezone", "TZ", "set reporting timezone"),
    Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(PROG, "[options] input-archive output-archive", [("Options", USAGE_OPTIONS)])
SHORTS = "c:D:dfmS:s:T:V:v:wxZ:z?"
#: long options in PCP's table order
LONGS: tuple[tuple[str, str, bool], ...] = tuple(
    (o.long, str(o.short), o.arg is not None) for o in USAGE_OPTIONS if o.long
)


@dataclass
class Options:
    """What the command line asked for."""

    config: str | None = None
    desperate: bool = False
    first_zone: bool = False  # -f
    old_marks: bool = False  # -m
    samples: int = -1  # -s
    start: str | None = None
    finish: str | None = None
    version: int = -1  # -V
    volume_samples: int = -1  # -v
    daily: bool = False  # -w
    skip_mismatched: bool = False  # -x
    timezone: str | None = None
    hostzone: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1

    @property
    def inputs(self) -> list[str]:
        return self.operands[:-1]

    @property
    def output(self) -> str:
        return self.operands[-1]


def _number(text: str) -> int | None:
    """TEXT as strtol reads it, None unless it is all a non-negative number."""
    scan = strtol(text)
    if scan.end != len(text) or int(scan.value) < 0:
        return None
    return int(scan.value)


def _config(o: Options, path: str) -> None:
    import os

    o.config = path
    try:
        os.stat(path)
    except OSError:
        o.complain(f"{path} - invalid file")


def _samples(o: Options, text: str) -> None:
    n = _number(text)
    if n is None:
        o.complain("-s requires numeric argument")
    o.samples = int(strtol(text).value)


def _version(o: Options, text: str) -> None:
    n = _number(text)
    if n is None:
        o.complain("-V requires numeric argument")
    o.version = int(strtol(text).value)
    if o.version not in (2, 3):
        o.complain("-V value must be 2 or 3")


def _volume(o: Options, text: str) -> None:
    n = _number(text)
    if n is None:
        o.complain("-v requires numeric argument")
    o.volume_samples = int(strtol(text).value)


def _timezone(o: Options, zone: str) -> None:
    if o.hostzone:
        o.complain("at most one of -Z and/or -z allowed")
    o.timezone = zone


def _hostzone(o: Options, _: str) -> None:
    if o.timezone is not None:
        o.complain("at most one of -Z and/or -z allowed")
    o.hostzone = True


def _debug(o: Options, spec: str) -> None:
    if not debug_spec_ok(spec):
        o.complain(f"unrecognized debug options specification ({spec})")


def _set(name: str, value: object) -> Callable[[Options, str], None]:
    def action(o: Options, _: str) -> None:
        setattr(o, name, value)

    return action


def _store(name: str) -> Callable[[Options, str], None]:
    def action(o: Options, text: str) -> None:
        setattr(o, name, text)

    return action


def _bad(o: Options, message: str) -> None:
    o.complain(message)


def _help(o: Options, _: str) -> None:
    o.errors += 1


ACTIONS: dict[str, Callable[[Options, str], None]] = {
    "!": _bad,
    "?": _help,
    "c": _config,
    "D": _debug,
    "d": _set("desperate", True),
    "f": _set("first_zone", True),
    "m": _set("old_marks", True),
    "s": _samples,
    "S": _store("start"),
    "T": _store("finish"),
    "V": _version,
    "v": _volume,
    "w": _set("daily", True),
    "x": _set("skip_mismatched", True),
    "Z": _timezone,
    "z": _hostzone,
}


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmlogextract's parseargs does; complaints collect in messages."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
        else:
            ACTIONS[item[0]](o, str(item[1]))
    if o.daily and (o.start is None or o.finish is None):
        sys.stderr.write(
            f"{PROG}: Warning: -w flag requires that both -S and -T are specified.\n"
            "Ignoring -w flag.\n"
        )
        o.daily = False
    if o.errors == 0 and len(o.operands) < 2:
        o.complain("Error: insufficient arguments")
    return o


def usage_exit(o: Options) -> SystemExit:
    """pmUsageMessage: the collected messages, then the usage."""
    sys.stdout.flush()
    sys.stderr.write("".join(o.messages) + TOOL.usage())
    return SystemExit(1)
