"""pmlogrewrite's command line: PCP's options, their usage text and checks, read into
Options (the run, run.py, takes it from there)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt

PROG = "pmlogrewrite"

_OPTS = (
    Opt("c", "config", "PATH", "file or directory to load rules from"),
    Opt("C", "check", None, "parse config file(s) and quit (verbose warnings also)"),
    Opt("d", "desperate", None, "desperate, save output archive even after error"),
    Opt("i", None, None, "rewrite in place, input-archive will be over-written"),
    Opt("q", "quick", None, "quick mode, no output if no change"),
    Opt("s", "scale", None, "do scale conversion"),
    Opt("v", "verbose", None, "increased diagnostic verbosity"),
    Opt("V", "version", "N", "output archive in version N [2/3] format"),
    Opt("w", "warnings", None, "emit warnings [default is silence]"),
    Opt("?", "help", None, "show this usage message and exit"),
)
TOOL = Tool(PROG, "[options] input-archive [output-archive]", [("Options", _OPTS)])
SHORTS = "c:CdD:iqsvV:w?"
LONGS = (
    ("debug", "D", True), ("config", "c", True), ("check", "C", False),
    ("desperate", "d", False), ("quick", "q", False), ("scale", "s", False),
    ("verbose", "v", False), ("version", "V", True), ("warnings", "w", False),
    ("help", "?", False),
)  # fmt: skip


@dataclass
class Options:
    configs: list[str] = field(default_factory=list)
    check: bool = False
    desperate: bool = False
    inplace: bool = False
    quick: bool = False
    scale: bool = False
    verbose: int = 0
    version: int = 0
    warnings: bool = False
    debug: set[str] = field(default_factory=set)
    operands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad: int = 0


def _add_config(o: Options, path: str) -> None:
    try:
        st = os.stat(path)
    except OSError as exc:
        o.errors.append(f"{PROG}: stat({path}) failed: {exc.strerror}")
        o.bad += 1
        return
    import stat

    if stat.S_ISREG(st.st_mode):
        o.configs.append(path)
    elif stat.S_ISDIR(st.st_mode):
        for entry in os.listdir(path):  # (directory order, as readdir gives it)
            if entry.startswith("."):
                continue
            full = os.path.join(path, entry)
            try:
                if stat.S_ISREG(os.stat(full).st_mode):
                    o.configs.append(full)
            except OSError as exc:
                o.errors.append(f"{PROG}: {full}: {exc.strerror}")
                o.bad += 1
    else:
        o.errors.append(f"{PROG}: Error: -c config {path} is not a file or directory")
        o.bad += 1


def parse_options(argv: Sequence[str]) -> Options:
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, arg = item
        if letter == "!":
            sys.stderr.write(f"{PROG}: {arg}\n")
            o.bad += 1
        elif letter == "c":
            _add_config(o, str(arg))
        elif letter == "C":
            o.check, o.verbose, o.warnings = True, 1, True
        elif letter == "D":
            if not debug_spec_ok(str(arg)):
                o.errors.append(f"{PROG}: unrecognized debug options specification ({arg})")
                o.bad += 1
            else:
                from purepcp.pmapi import debug

                debug.set_options(str(arg))
                o.debug.update(t.strip().lower() for t in str(arg).split(","))
        elif letter == "V":
            from .words import atoi

            o.version = atoi(str(arg))
            if o.version not in (2, 3):
                o.errors.append(f"{PROG}: Error: unsupported version ({o.version}) requested")
                o.bad += 1
        elif letter == "?":
            o.bad += 1
        else:
            attr = {"d": "desperate", "i": "inplace", "q": "quick", "s": "scale",
                    "w": "warnings"}.get(letter)  # fmt: skip
            if attr:
                setattr(o, attr, True)
            elif letter == "v":
                o.verbose += 1
    if not o.bad and len(o.operands) != (1 if o.inplace else 2):
        o.bad += 1
    return o


USAGE_TAIL = "\noutput-archive is required unless -i is specified\n"
