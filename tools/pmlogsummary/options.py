"""pmlogsummary's command line: PCP's option table and usage text, read into Options.

Options are read as libpcp's pmGetOptions reads them with pmlogsummary's overrides
(-a, -H, -N, -p and -s are its own, not the shared meanings): complaints collect in
order, as pmprintf buffers them, and the usage follows them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi import optactions, version_line
from purepcp.pmapi.options import Opt, Tool, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

if TYPE_CHECKING:
    from purepcp.pmapi.pmns import PMNS

PROG = "pmlogsummary"

USAGE_OPTIONS = (
    Opt("a", "all", None, "print all information (equivalent to -blmMy)"),
    Opt("b", None, None, "print both stochastic and time averages for counter metrics"),
    Opt("B", "bins", "N", "print value distribution across a number of bins"),
    Opt("f", None, None, 'print using "spreadsheet" format (tab delimited fields)'),
    Opt("F", None, None, 'print using "spreadsheet" format (comma separated values)'),
    Opt("H", "header", None, "print one-line header at start showing each column"),
    Opt("i", "mintime", None, "also print timestamp for minimum value"),
    Opt("I", "maxtime", None, "also print timestamp for maximum value"),
    Opt("l", "label", None, "also print the archive label and time window"),
    Opt("m", "minimum", None, "also print minimum value"),
    Opt("M", "maximum", None, "also print maximum value"),
    Opt("n", "namespace", "FILE", "use an alternative PMNS"),
    Opt("N", None, None, "suppress warnings from individual archive fetches (default)"),
    Opt("p", "precision", "N", "number of digits to display after the decimal point"),
    Opt("s", "sum", None, "only print the sum of all values of each metric"),
    Opt("S", "start", "TIME", "start of the time window"),
    Opt("T", "finish", "TIME", "end of the time window"),
    Opt("v", "verbose", None, "verbose, enable warnings from individual archive fetches"),
    Opt("x", None, None, "print only stochastic averages for counter metrics"),
    Opt("y", "samples", None, "print sample count for each metric"),
    Opt("Z", "timezone", "TZ", "set reporting timezone"),
    Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source"),
    Opt("V", "version", None, "display version number and exit"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(
    PROG, "[options] archive [metricname ...]", [("Options", USAGE_OPTIONS)], exits_at_once=True
)

SHORTS = "abB:D:fFHiIlmMNn:p:rsS:T:vVxyzZ:?"
#: long options in PCP's table order (-D first: PMOPT_DEBUG heads the table)
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("debug", "D", True),
    *((o.long, o.short, o.arg is not None) for o in USAGE_OPTIONS if o.long and o.short),
)

#: the report's columns, in print order, and the letters that choose them
COLUMNS = ("stocave", "timeave", "sum", "min", "mintime", "max", "maxtime", "count")


@dataclass
class Options:
    """What the command line asked for."""

    columns: dict[str, bool] = field(
        default_factory=lambda: dict.fromkeys(COLUMNS, False) | {"timeave": True}
    )
    label: bool = False
    header: bool = False
    delimiter: str = " "
    nbins: int = 0
    precision: int = 3
    warn: bool = False
    namespace: PMNS | None = None
    start: str | None = None
    finish: str | None = None
    timezone: str | None = None
    hostzone: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer, in order
    errors: int = 0
    exit_now: bool = False  # --version
    runtime_error: bool = False  # a namespace that would not load: no usage
    appl: frozenset[str] = frozenset()  # -D: which of appl0, appl1, appl2 trace the walk

    @property
    def sumflag(self) -> bool:
        return self.columns["sum"]

    def complain(self, message: str) -> None:
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1

    def set_columns(self, **flags: bool) -> None:
        self.columns.update(flags)


def _all(o: Options, _: str | None) -> None:
    o.set_columns(stocave=True, timeave=True, count=True, min=True, max=True, sum=False)
    o.label = True


def _both(o: Options, _: str | None) -> None:
    o.set_columns(stocave=True, timeave=True, sum=False)


def _sum_only(o: Options, _: str | None) -> None:
    o.set_columns(stocave=False, timeave=False, count=False, min=False, max=False, sum=True)
    o.label = False


def _stochastic_only(o: Options, _: str | None) -> None:
    o.set_columns(stocave=True, timeave=False, sum=False)


def _bins(o: Options, text: str | None) -> None:
    value = _strtol(str(text))
    if value is None or value < 0:
        o.complain("-B requires positive numeric argument")
    else:
        o.nbins = value


def _precision(o: Options, text: str | None) -> None:
    value = _strtol(str(text))
    if value is None:
        o.complain("-p requires numeric argument")
        value = _strtol_prefix(str(text))
    o.precision = value


def _strtol(text: str) -> int | None:
    """strtol(TEXT, &end, 10) when it reads all of TEXT (an int in C's range), else None."""
    body = text.lstrip(" \t\n\r\f\v")
    digits = body[1:] if body[:1] in "+-" else body
    if not digits.isdigit() or not digits.isascii():
        return None if text else 0
    return _c_int(int(body))


def _strtol_prefix(text: str) -> int:
    """What strtol reads of TEXT's leading number (0 if none), as a C int."""
    body = text.lstrip(" \t\n\r\f\v")
    sign = body[:1] if body[:1] in "+-" else ""
    rest = body[len(sign) :]
    digits = ""
    for c in rest:
        if not ("0" <= c <= "9"):
            break
        digits += c
    return _c_int(int(sign + digits)) if digits else 0


def _c_int(value: int) -> int:
    """VALUE as strtol clamps it to a long, then cast to a 32-bit int."""
    value = max(min(value, 2**63 - 1), -(2**63))
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


def _version(o: Options, _: str | None) -> None:
    o.exit_now = True
    o.messages.append(version_line(PROG) + "\n")


#: the debug options pmlogsummary traces under, with their old-style -D bits
APPL_BITS = {"appl0": 1 << 11, "appl1": 1 << 12, "appl2": 1 << 13}


def _debug(o: Options, spec: str | None) -> None:
    """-D: checked as pmSetDebug checks it; appl0, appl1 and appl2 (by name, "all" or
    their bits in a number) turn on pmlogsummary's own traces."""
    before = o.errors
    optactions.debug(o, spec)
    if o.errors == before:
        o.appl |= appl_options(str(spec))


def appl_options(spec: str) -> frozenset[str]:
    """The appl0..appl2 names a -D SPEC pmSetDebug accepts sets (-1: every bit)."""
    found: set[str] = set()
    for token in spec.split(","):
        word = token.lower()
        if word == "all":
            return frozenset(APPL_BITS)
        if word in APPL_BITS:
            found.add(word)
        elif word.strip(" \t").lstrip("+-").isdigit():
            bits = int(word)
            found.update(n for n, bit in APPL_BITS.items() if bits == -1 or bits & bit)
    return frozenset(found)


def _set(attr: str, value: object) -> Callable[[Options, str | None], None]:
    def action(o: Options, _: str | None) -> None:
        setattr(o, attr, value)

    return action


def _column(name: str) -> Callable[[Options, str | None], None]:
    def action(o: Options, _: str | None) -> None:
        o.columns[name] = True

    return action


def _bad_option(o: Options, message: str | None) -> None:
    o.complain(str(message))


def _unknown_option(o: Options, _: str | None) -> None:
    o.errors += 1


#: what each option letter does ("!": pcp_getopt's complaint; -r is taken and ignored)
ACTIONS: dict[str, Callable[[Options, str | None], None]] = {
    "!": _bad_option,
    "?": _unknown_option,
    "a": _all,
    "b": _both,
    "B": _bins,
    "D": _debug,
    "f": _set("delimiter", "\t"),
    "F": _set("delimiter", ","),
    "H": _set("header", True),
    "i": _column("mintime"),
    "I": _column("maxtime"),
    "l": _set("label", True),
    "m": _column("min"),
    "M": _column("max"),
    "N": _set("warn", False),
    "n": optactions.namespace,
    "p": _precision,
    "s": _sum_only,
    "S": optactions.start,
    "T": optactions.finish,
    "v": _set("warn", True),
    "V": _version,
    "x": _stochastic_only,
    "y": _column("count"),
    "Z": optactions.timezone,
    "z": optactions.hostzone,
}


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmGetOptions with pmlogsummary's overrides."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        action = ACTIONS.get(letter)
        if action is not None:
            action(o, value)
    if not o.errors and not o.exit_now and not o.operands:
        o.messages.append("Error: no archive specified\n\n")
        o.errors += 1
    if not o.exit_now:
        check_layout_file()
    return o


def usage_exit(o: Options) -> SystemExit:
    """pmUsageMessage: the collected messages, then the usage unless not wanted."""
    sys.stdout.flush()
    text = "".join(o.messages)
    if not (o.exit_now or o.runtime_error):
        text += TOOL.usage()
    sys.stderr.write(text)
    return SystemExit(0 if o.exit_now else 1)
