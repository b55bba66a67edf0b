"""pmdumplog's command line: PCP's option table and usage text, read into Options.

Options are read as libpcp's pmGetOptions reads them, with pmdumplog's overrides:
complaints collect in order, as pmprintf buffers them, and the usage follows them
(unless the run only asked for the version, or a namespace would not load).
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi import optactions, version_line
from purepcp.pmapi.errors import PM_ERR_PMNS, PMError, SourceError, pmErrStr
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

if TYPE_CHECKING:
    from purepcp.pmapi.pmns import PMNS

PROG = "pmdumplog"

ALL = Opt("a", "all", None, "dump everything")
DESCS = Opt("d", "descs", None, "dump metric descriptions")
LABELSETS = Opt("e", "labelsets", None, "dump all metric label metadata")
HELPTEXT = Opt("h", "helptext", None, "dump all metric help text")
DISKINDOMS = Opt("I", "on-disk-insts", None, "dump on-disk instance domain descriptions")
INDOMS = Opt("i", "insts", None, "dump instance domain descriptions")
VLABEL = Opt("L", None, None, "more verbose form of archive label dump")
LABEL = Opt("l", "label", None, "dump the archive label")
MARKS = Opt("M", "markrecs", None, "report <mark> records")
METRICS = Opt("m", "metrics", None, "dump values of the metrics (default)")
REVERSE = Opt("r", "reverse", None, "process archive in reverse chronological order")
SIZES = Opt("s", "sizes", None, "report size of data records in archive")
TINDEX = Opt("t", None, None, "dump the temporal index")
RAW = Opt("v", None, "FILE", "verbose hex dump of a physical file in raw format")
XSTAMP = Opt("x", None, None, "include date, usec (-xx) and Epoch (-xxx) in reported timestamps")

# PCP's own wording for the shared options in pmdumplog's usage message
_NAMESPACE = Opt("n", "namespace", "FILE", "use an alternative PMNS")
_START = Opt("S", "start", "TIME", "start of the time window")
_FINISH = Opt("T", "finish", "TIME", "end of the time window")
_TIMEZONE = Opt("Z", "timezone", "TZ", "set reporting timezone")
_HOSTZONE = Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source")
_VERSION = Opt("V", "version", None, "display version number and exit")
_HELP = Opt("?", "help", None, "show this usage message and exit")

USAGE_OPTIONS = (ALL, DESCS, LABELSETS, HELPTEXT, DISKINDOMS, INDOMS, VLABEL, LABEL, MARKS,
                 METRICS, _NAMESPACE, REVERSE, _START, SIZES, _FINISH, TINDEX, RAW, XSTAMP,
                 _TIMEZONE, _HOSTZONE, _VERSION, _HELP)  # fmt: skip
TOOL = Tool(PROG, "[options] [archive [metricname ...]]", [("Options", USAGE_OPTIONS)])

#: the short options pmdumplog takes (-V is long-only there: "--version")
SHORTS = "aD:dehIilLmMn:rS:sT:tv:xZ:z?"
#: long options in PCP's table order (ambiguity messages list them in this order)
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("debug", "D", True), ("all", "a", False), ("descs", "d", False),
    ("labelsets", "e", False), ("helptext", "h", False), ("on-disk-insts", "I", False),
    ("insts", "i", False), ("label", "l", False), ("markrecs", "M", False),
    ("metrics", "m", False), ("namespace", "n", True), ("reverse", "r", False),
    ("start", "S", True), ("sizes", "s", False), ("finish", "T", True),
    ("timezone", "Z", True), ("hostzone", "z", False), ("version", "V", False),
    ("help", "?", False),
)  # fmt: skip

#: the section and mode letters each option turns on (-a: all but -e, -h and -I)
DUMP_LETTERS = {"a": "diLlmst", "L": "Ll", **{c: c for c in "dehIilMmrst"}}
#: the letters that choose a section (without one, -m is implied)
SECTION_LETTERS = frozenset("dehIiltm")


@dataclass
class Options:
    """What the command line asked for, as pmdumplog's flags."""

    flags: set[str] = field(default_factory=set)  # the dump letters: d e h I i L l M m r s t v
    xflag: int = 0
    rawfile: str | None = None
    namespace: PMNS | None = None
    start: str | None = None
    finish: str | None = None
    timezone: str | None = None
    hostzone: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer, in order
    errors: int = 0
    exit_now: bool = False  # --version
    runtime_error: bool = False  # messages only, no usage (a namespace that would not load)

    def complain(self, message: str) -> None:
        """One of pmGetOptions' complaints: "pmdumplog: MESSAGE", counted as an error."""
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


def _bad_option(o: Options, message: str | None) -> None:
    o.complain(str(message))


def _unknown_option(o: Options, _: str | None) -> None:
    o.errors += 1  # (-? itself: the usage, with no message)


def _more_x(o: Options, _: str | None) -> None:
    o.xflag += 1


def _raw_file(o: Options, path: str | None) -> None:
    o.flags.add("v")
    o.rawfile = path


def _version(o: Options, _: str | None) -> None:
    o.exit_now = True
    o.messages.append(version_line(PROG) + "\n")


def _debug(o: Options, spec: str | None) -> None:
    """-D: a good specification is accepted and has no effect here."""
    if not debug_spec_ok(str(spec)):
        o.complain(f"unrecognized debug options specification ({spec})")


def _namespace(o: Options, path: str | None) -> None:
    """-n: load PATH now, as pmLoadASCIINameSpace does; a failure is a runtime error."""
    from purepcp.pmapi.pmns import PMNS

    try:
        o.namespace = PMNS.from_file(str(path))
        return
    except SourceError as exc:
        if exc.code == PM_ERR_PMNS:
            sys.stderr.write(f"Error Parsing ASCII PMNS: {exc.what}\n")
        else:  # the file would not open
            sys.stderr.write(f'Error Parsing ASCII PMNS: Cannot open "{path}"\n')
        code = exc.code
    except (OSError, PMError) as exc:
        code = exc.code if isinstance(exc, PMError) else -(exc.errno or errno.EIO)
    o.complain(f'Cannot load namespace from "{path}": {pmErrStr(code)}')
    o.runtime_error = True


#: what each option letter does beyond turning on dump letters ("!": pcp_getopt's complaint)
ACTIONS: dict[str, Callable[[Options, str | None], None]] = {
    "!": _bad_option,
    "?": _unknown_option,
    "x": _more_x,
    "v": _raw_file,
    "n": _namespace,
    "S": optactions.start,
    "T": optactions.finish,
    "Z": optactions.timezone,
    "z": optactions.hostzone,
    "V": _version,
    "D": _debug,
}


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmGetOptions with pmdumplog's overrides; complaints collect in messages."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        o.flags.update(DUMP_LETTERS.get(letter, ""))
        action = ACTIONS.get(letter)
        if action is not None:
            action(o, value)
    if not o.exit_now:  # (as every command: a $PUREPCP_CONF naming no file is an error)
        check_layout_file()
    return o


def usage_exit(o: Options) -> SystemExit:
    """pmUsageMessage: the collected messages, then the usage unless that is not wanted."""
    sys.stdout.flush()
    text = "".join(o.messages)
    if not (o.exit_now or o.runtime_error):
        text += TOOL.usage()
    sys.stderr.write(text)
    return SystemExit(0 if o.exit_now else 1)
