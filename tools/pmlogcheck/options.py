"""pmlogcheck's command line: PCP's option table and usage text, read into Options.

Read as pmGetOptions reads it: complaints collect in order (pmprintf's buffer) and
the usage follows them; "no archive" is pmlogcheck's own complaint.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi import optactions
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt
from purepcp.pmapi.paths import check_layout_file

if TYPE_CHECKING:
    from purepcp.pmapi.pmns import PMNS

PROG = "pmlogcheck"

USAGE_OPTIONS = (
    Opt("l", "label", None, "print the archive label"),
    Opt("m", "metadataonly", None, "skip checking log data volumes"),
    Opt("n", "namespace", "FILE", "use an alternative PMNS"),
    Opt("S", "start", "TIME", "start of the time window"),
    Opt("T", "finish", "TIME", "end of the time window"),
    Opt("v", "verbose", None, "verbose output"),
    Opt("w", "nowrap", None, "suppress counter wrap warnings"),
    Opt("Z", "timezone", "TZ", "set reporting timezone"),
    Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(PROG, "[options] archive", [("Options", USAGE_OPTIONS)])

SHORTS = "D:lmn:S:T:zvwZ:?"
#: long options in PCP's table order (an ambiguity's message lists them so)
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("debug", "D", True), ("label", "l", False), ("metadataonly", "m", False),
    ("namespace", "n", True), ("start", "S", True), ("finish", "T", True),
    ("verbose", "v", False), ("nowrap", "w", False), ("timezone", "Z", True),
    ("hostzone", "z", False), ("help", "?", False),
)  # fmt: skip


@dataclass
class Options:
    """What the command line asked for."""

    label: bool = False  # -l
    metadata_only: bool = False  # -m
    verbose: int = 0  # -v, repeated
    nowrap: bool = False  # -w
    namespace: PMNS | None = None
    start: str | None = None
    finish: str | None = None
    timezone: str | None = None
    hostzone: bool = False
    debug: set[str] = field(default_factory=set)
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer, in order
    errors: int = 0
    runtime_error: bool = False  # a namespace that would not load: no usage

    def complain(self, message: str) -> None:
        """One of pmGetOptions' complaints, counted as an error."""
        self.messages.append(f"{PROG}: {message}\n")
        self.errors += 1


def _set(name: str, value: object) -> Callable[[Options, str | None], None]:
    def action(o: Options, _: str | None) -> None:
        setattr(o, name, value)

    return action


def _more_verbose(o: Options, _: str | None) -> None:
    o.verbose += 1


def _debug(o: Options, spec: str | None) -> None:
    if not debug_spec_ok(str(spec)):
        o.complain(f"unrecognized debug options specification ({spec})")
        return
    o.debug.update(t.strip().lower() for t in str(spec).split(",") if t.strip())


def _bad_option(o: Options, message: str | None) -> None:
    o.complain(str(message))


def _help(o: Options, _: str | None) -> None:
    o.errors += 1


ACTIONS: dict[str, Callable[[Options, str | None], None]] = {
    "!": _bad_option,
    "?": _help,
    "D": _debug,
    "l": _set("label", True),
    "m": _set("metadata_only", True),
    "n": optactions.namespace,
    "S": optactions.start,
    "T": optactions.finish,
    "v": _more_verbose,
    "w": _set("nowrap", True),
    "Z": optactions.timezone,
    "z": optactions.hostzone,
}


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmGetOptions does for pmlogcheck."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
        else:
            ACTIONS[item[0]](o, item[1])
    if not o.errors and not o.operands:
        o.messages.append("Error: no archive specified\n\n")
        o.errors += 1
    check_layout_file()
    return o


def usage_exit(o: Options) -> SystemExit:
    """pmUsageMessage: the collected messages, then the usage (not after a runtime error)."""
    sys.stdout.flush()
    text = "".join(o.messages)
    if not o.runtime_error:
        text += TOOL.usage()
    sys.stderr.write(text)
    return SystemExit(1)
