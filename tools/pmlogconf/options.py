"""pmlogconf's command line, read as PCP's pmlogconf reads it (libpcp's pmGetOptions
with pmlogconf's own letters): complaints collect in order, then the usage follows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import debug_complaint, pcp_getopt

PROG = "pmlogconf"

#: PCP's pmlogconf usage message (interface text, as PCP prints it)
USAGE = """\
Usage: pmlogconf [options] configfile
  -h HOST, --host=HOST  metrics source is PMCD on host
  -c                    add message and timestamp (not for interactive use)
  -g TAG, --group=TAG   report the logging state for a specific metrics group
  -d DIR, --groups=DIR  specify path to the pmlogconf groups directory
  -q, --quiet           quiet, suppress logging interval dialog
  -r, --reprobe         every group reconsidered for inclusion in configfile
  -s FILE, --setup=FILE report default logging state for a group file
  -v, --verbose         increase diagnostic verbosity
  -V, --version         display version number and exit
  -?, --help            show this usage message and exit
"""

SHORTS = "D:h:cd:g:qrs:vV?"
LONGS = (
    ("debug", "D", True), ("host", "h", True), ("group", "g", True), ("groups", "d", True),
    ("quiet", "q", False), ("reprobe", "r", False), ("setup", "s", True),
    ("verbose", "v", False), ("version", "V", False), ("help", "?", False),
)  # fmt: skip


@dataclass
class Options:
    """What the command line asked for; messages in the order pmprintf keeps them."""

    hosts: list[str] = field(default_factory=list)
    autocreate: bool = False  # -c
    groupdir: str = ""  # -d
    finaltag: str | None = None  # -g
    quick: bool = False  # -q
    reprobe: bool = False  # -r
    setupfile: str | None = None  # -s
    verbose: bool = False  # -v
    prompt: bool = True  # (asking about each group: an existing file, none of -c -g -s)
    version: bool = False
    operands: list[str] = field(default_factory=list)
    getopt_errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    errors: int = 0


def read_options(argv: Sequence[str]) -> Options:
    """ARGV read in order, then the combinations pmlogconf refuses."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        _apply(o, letter, value or "")
    if o.autocreate and (o.finaltag is not None or o.setupfile is not None):
        _complain(o, "Option -c cannot be used with -g,--group or -s,--setup\n")
    if o.groupdir and o.setupfile is not None:
        _complain(o, "Options -d,--groupdir and -s,--setup are mutually exclusive\n")
    if o.finaltag is not None and o.setupfile is not None:
        _complain(o, "Options -g,--group and -s,--setup are mutually exclusive\n")
    return o


def _complain(o: Options, message: str) -> None:
    o.messages.append(message)
    o.errors += 1


def _apply(o: Options, letter: str, value: str) -> None:
    """One option's effect on O."""
    if letter == "!":
        o.getopt_errors.append(f"{PROG}: {value}\n")
        o.errors += 1
    elif letter == "?":
        o.errors += 1
    elif letter == "V":
        from purepcp.pmapi import version_line

        o.messages.append(version_line(PROG) + "\n")
        o.version = True
    elif letter == "D":
        problem = debug_complaint(value)
        if problem:
            _complain(o, f"{PROG}: {problem}\n")
    elif letter == "h":
        if o.hosts:
            _complain(o, f"{PROG}: too many hosts requested: {value}\n")
        else:
            o.hosts.append(value)
    elif letter in "cgs":
        o.prompt = False
        o.autocreate = o.autocreate or letter == "c"
        if letter == "g":
            o.finaltag = value
        elif letter == "s":
            o.setupfile = value
    else:
        FLAGS[letter](o, value)


def _set(name: str, as_text: bool = False):
    def action(o: Options, value: str) -> None:
        setattr(o, name, value if as_text else True)

    return action


FLAGS = {
    "d": _set("groupdir", as_text=True),
    "q": _set("quick"),
    "r": _set("reprobe"),
    "v": _set("verbose"),
}
