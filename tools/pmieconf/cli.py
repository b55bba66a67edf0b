"""pmieconf's command line and run: where the rules and the pmie file are, then one
command, the commands read from the input, or (-F) just the file generated."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

PROG = "pmieconf"

#: PCP's usage message (interface text); the command summary follows it
USAGE = """\
Usage: pmieconf [options] [ command [args...] ]

Options:
  -c                    an automated pmie configuration by the system
  -F, --force           force creation/update of pmie file, then exit
  -f FILE, --config=FILE
                        location of generated pmie configuration file
  -r PATH, --rules=PATH path specifying groups of rule files
  -v, --verbose         increase level of diagnostics
  -?, --help            show this usage message and exit
"""

SHORTS = "cFf:r:v?"
LONGS = (
    ("force", "F", False), ("config", "f", True), ("rules", "r", True),
    ("verbose", "v", False), ("help", "?", False),
)  # fmt: skip

#: our own templates, used when PCP's are not installed
OUR_RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")


@dataclass
class Options:
    autocreate: bool = False  # -c
    force: bool = False  # -F
    pmiefile: str | None = None  # -f
    rulepath: str | None = None  # -r
    verbose: bool = False  # -v
    words: list[str] = field(default_factory=list)  # the command and its arguments
    complaints: list[str] = field(default_factory=list)  # getopt's, printed at once
    messages: list[str] = field(default_factory=list)  # printed with the usage
    errors: int = 0


def read_options(argv: Sequence[str]) -> Options:
    """ARGV as pmieconf's pmGetOptions reads it (options and command words mixed)."""
    from purepcp.pmapi.options import pcp_getopt

    o = Options()
    operands: list[str] = []
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            operands.append(item)
            continue
        letter, value = item
        if letter == "!":
            o.complaints.append(f"{PROG}: {value}\n")
            o.errors += 1
        elif letter == "?":
            o.errors += 1
        elif letter == "c":
            o.autocreate = True
        elif letter == "F":
            o.force = True
        elif letter == "f":
            o.pmiefile = value
        elif letter == "r":
            o.rulepath = value
        elif letter == "v":
            o.verbose = True
    if o.force and operands:
        o.messages.append(f"{PROG}: cannot use -F option with a command\n")
        operands = []
        o.errors += 1
    o.words = operands[:5]
    if len(operands) > 5:
        o.messages.append(f"{PROG}: too many arguments\n")
        o.errors += 1
    return o


def main(argv: Sequence[str] | None = None) -> int:
    """pmieconf(1): its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    args = [os.fsencode(a).decode("latin-1") for a in args]
    o = read_options(args)
    if o.errors:
        from .commands import HELP

        sys.stdout.flush()
        text = "".join(o.complaints) + "".join(o.messages) + USAGE + f"\nCommands:\n{HELP}\n"
        sys.stderr.buffer.write(text.encode("latin-1", "replace"))
        sys.stderr.flush()
        return 1
    from .output import Output

    out = Output(PROG)
    try:
        return _run(o, out)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except RecursionError:
        out.error("variable expansion does not end")
        return 1
    finally:
        out.flush()


def _run(o: Options, out) -> int:
    from .commands import Quit, Session
    from .model import ConfError
    from .scanner import Position, Stream
    from .store import Store
    from .templates import read_path

    interactive = not o.autocreate and not o.words
    store = Store()
    try:
        pmie = _pmie_file(o)
        rulepath = _rulepath(o)
        read_path(store, rulepath)
        warning = pmie.read(store, rulepath)
    except ConfError as exc:
        out.error(exc.message)
        return 1
    store.where = Position()
    store.sort()
    if len(store.rules) <= 1:
        out.flush()
        out.stderr(f"{PROG}: no rules were found using rule path: {rulepath}\n")
        return 1
    session = Session(
        store, pmie, rulepath, out, PROG, verbose=o.verbose, interactive=interactive,
        autocreate=o.autocreate, tmp_dir=_config("PCP_TMP_DIR"),
        etc_dirs=(_config("PCP_SYSCONF_DIR"), _config("PCP_BINADM_DIR")),
    )  # fmt: skip
    try:
        if o.force or warning:
            if not session.save():
                return 1
            if o.force:
                return 0
        if session.interactive:
            if not os.isatty(0):
                session.interactive = False
            elif os.isatty(1):
                out.scrolling = True
            session.interact(Stream(more=_stdin_lines()))
        elif session.run(o.words or [""]) == -1:
            return 1
        session.quit()
    except Quit:
        return 0
    return 0


def _stdin_lines():
    """A source of the standard input's lines (bytes as latin-1)."""
    stdin = sys.stdin.buffer

    def more() -> str:
        return stdin.readline().decode("latin-1")

    return more


def _config(name: str) -> str:
    """A PCP setting as pmGetConfig gives it: the environment's, else pcp.conf's, else
    our layout's."""
    value = os.environ.get(name)
    if value:
        return value
    from purepcp.pmapi.paths import LayoutError, paths, pcp_conf

    value = pcp_conf().get(name, "")
    if value:
        return value
    try:
        return paths()[name]
    except (LayoutError, KeyError):
        return ""


def _rulepath(o: Options) -> str:
    """-r's path, else $PMIECONF_PATH, else PCP's templates, else ours."""
    if o.rulepath is not None:
        return o.rulepath
    env = os.environ.get("PMIECONF_PATH")
    if env is not None:
        return env
    pcps = f"{_config('PCP_VAR_DIR')}/config/pmieconf"
    return pcps if os.path.isdir(pcps) else OUR_RULES


def _pmie_file(o: Options):
    """The pmie file to configure: -f's (root's resolved to an absolute name), else the
    system's (root) or the user's."""
    from .model import ConfError
    from .pmiefile import PmieFile, c_realpath

    if os.getuid() == 0:
        if o.pmiefile is None:
            if o.autocreate:
                return PmieFile(f"{_config('PCP_VAR_DIR')}/config/pmie/config.default")
            return PmieFile(f"{_config('PCP_SYSCONF_DIR')}/pmie/config.default")
        resolved, problem = c_realpath(o.pmiefile)
        if problem and problem != errno.ENOENT:
            raise ConfError(f"failed to resolve realpath for {o.pmiefile}: {os.strerror(problem)}")
        return PmieFile(resolved, resolved=not problem)
    home = os.environ.get("HOME")
    if home is None:
        raise ConfError("$HOME undefined in environment")
    if o.pmiefile is None:
        return PmieFile(f"{home}/.pcp/pmie/config.pmie")
    return PmieFile(o.pmiefile)
