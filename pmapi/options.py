"""What every client tool shares: PCP-style options, usage text, errors and contexts.

Options are parsed as PCP's pmGetOptions does (GNU getopt: options and operands
mixed, unique long-option prefixes), usage is laid out as pmUsageMessage lays it
out (option text padded to column 24), errors go to stderr as "prog: message"
with exit status 1, and the metrics source (-h, -L with -K, -n) becomes a
pmapi Context.  Tools import only this and what they print.
"""

from __future__ import annotations

import contextlib
import getopt
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from purepcp.pmapi import set_progname, version_line
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.paths import LayoutError, check_layout_file


@dataclass(frozen=True)
class Opt:
    """One option: short letter and/or long name, its argument's name, a line of help."""

    short: str | None
    long: str | None
    arg: str | None
    help: str

    def usage_line(self) -> str:
        if self.long and self.short:
            text = f"  -{self.short} {self.arg}, --{self.long}={self.arg}" if self.arg else None
            text = text or f"  -{self.short}, --{self.long}"
        elif self.long:
            text = f"  --{self.long}={self.arg}" if self.arg else f"  --{self.long}"
        else:
            text = f"  -{self.short} {self.arg}" if self.arg else f"  -{self.short}"
        if len(text) < 24:
            return f"{text}{' ' * (24 - len(text))}{self.help}"
        return f"{text}\n{' ' * 24}{self.help}"


# the options PCP's tools share (pmapi.h's PMOPT_* set), in our words
ARCHIVE = Opt("a", "archive", "FILE", "metrics source is a PCP archive")
HOST = Opt("h", "host", "HOST", "metrics source is the pmcd on HOST")
LOCALPMDA = Opt("L", "local-PMDA", None, "metrics source is agents loaded in this process")
SPECLOCAL = Opt("K", "spec-local", "SPEC", "add, delete or clear agents for -L")
NAMESPACE = Opt("n", "namespace", "FILE", "use the namespace in FILE")
ORIGIN = Opt("O", "origin", "TIME", "first sample time within the time window")
START = Opt("S", "start", "TIME", "start of the time window")
FINISH = Opt("T", "finish", "TIME", "end of the time window")
ALIGN = Opt("A", "align", "TIME", "align sample times on this boundary")
INTERVAL = Opt("t", "interval", "DELTA", "sampling interval")
SAMPLES = Opt("s", "samples", "N", "stop after N samples")
TIMEZONE = Opt("Z", "timezone", "TZ", "report times in timezone TZ")
HOSTZONE = Opt("z", "hostzone", None, "report times in the metrics source's timezone")
DERIVED = Opt(None, "derived", "FILE", "load derived metric definitions from FILE")
VERSION = Opt("V", "version", None, "print the version and exit")
#: --version alone, for a command whose -V means something else (pmlogger_daily's verbose)
LONG_VERSION = Opt(None, "version", None, "print the version and exit")
HELP = Opt("?", "help", None, "print this usage message and exit")
#: -D: libpcp's debug options (PMOPT_DEBUG); accepted when pmSetDebug would take them
DEBUG = Opt("D", "debug", "DBG", "set debug options")

GENERAL = (ARCHIVE, HOST, LOCALPMDA, SPECLOCAL, NAMESPACE)


@dataclass
class Parsed:
    """The options a tool was given (last one wins; -K may repeat) and its operands."""

    values: dict[str, str | bool] = field(default_factory=dict)
    specs: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    #: every option in the order given, repeats included
    pairs: list[tuple[Opt, str]] = field(default_factory=list)

    def get(self, key: str, default=None):
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values


class Tool:
    """A command: its name, usage synopsis and option sections."""

    def __init__(
        self,
        prog: str,
        synopsis: str,
        sections: Sequence[tuple[str, Sequence[Opt]]],
        posix: bool = False,
        help_status: int = 1,
        checks_layout: bool = True,
        exits_at_once: bool = False,
    ):
        #: run as its command (no argv given), end the process as soon as the body is
        #: done, output flushed, without the interpreter's teardown (a tenth of a small
        #: reader's run, freeing what the exit frees anyway); only for tools that leave
        #: nothing to atexit handlers
        self.exits_at_once = exits_at_once
        self.help_status = help_status  # the exit status of --help (PCP's tools differ)
        # parse refuses a $PUREPCP_CONF naming no file, as PCP's tools refuse a $PCP_CONF
        # they cannot open (pmcd checks it itself: its --install-units writes that file)
        self.checks_layout = checks_layout
        self.prog = prog
        self.synopsis = synopsis
        self.sections = sections
        self.posix = posix  # options end at the first operand ("pmstore m -1" stores -1)

    def main(self, body: Callable[[list[str]], int], argv: Sequence[str] | None) -> int:
        """Run BODY(argv) and return its exit status; every failure ends as one line.

        SystemExit carries a status already reported (usage, connection); a PMError
        nobody expected, or a layout file that cannot be read, is printed as "prog:
        message"; a closed stdout (as in "| head") ends quietly; Ctrl-C is status 130.
        """
        status = self._main(body, argv)
        if argv is None and self.exits_at_once:
            _exit_at_once(status)
        return status

    def _main(self, body: Callable[[list[str]], int], argv: Sequence[str] | None) -> int:
        args = list(sys.argv[1:] if argv is None else argv)
        set_progname(self.prog)  # (libpcp's own messages then begin with it)
        _no_debug_options()  # (a run begins with none: -D sets them, pmapi.debug)
        # NumPy's vector work here needs no BLAS threads: one per core would spin up
        # with the import and cost a replay a third more CPU (set before NumPy loads)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            return body(args)
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else int(done.code is not None)
        except (PMError, LayoutError) as exc:  # (LayoutError: a bad or missing $PUREPCP_CONF)
            sys.stdout.flush()
            sys.stderr.write(f"{self.prog}: {exc}\n")
            return 1
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            quiet_stdout()
            return 1

    def usage(self) -> str:
        lines = [f"Usage: {self.prog} {self.synopsis}"]
        for title, opts in self.sections:
            if not title:  # accepted, not listed (as PCP's PMOPT_DEBUG and such)
                continue
            lines += ["", f"{title}:"]
            lines += [opt.usage_line() for opt in opts]
        return "\n".join(lines) + "\n"

    def fail(self, message: str, usage: bool = False, status: int = 1) -> NoReturn:
        """Print "prog: MESSAGE" (and the usage, if asked) to stderr and exit."""
        sys.stdout.flush()
        sys.stderr.write(f"{self.prog}: {message}\n")
        if usage:
            sys.stderr.write(self.usage())
        raise SystemExit(status)

    def parse(self, argv: Sequence[str]) -> Parsed:
        """Parse ARGV; -? and -V are handled here, bad options end the program."""
        for stream in (sys.stdout, sys.stderr):  # names and values may hold any bytes
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="surrogateescape")
        opts = [o for _, group in self.sections for o in group]
        shorts = "".join(o.short + (":" if o.arg else "") for o in opts if o.short)
        longs = [o.long + ("=" if o.arg else "") for o in opts if o.long]
        try:
            split = getopt.getopt if self.posix else getopt.gnu_getopt
            pairs, operands = split(list(argv), shorts, longs)
        except getopt.GetoptError as exc:
            self.fail(getopt_message(exc), usage=True)
        parsed = Parsed(operands=list(operands))
        by_flag = {f"-{o.short}": o for o in opts if o.short}
        by_flag.update({f"--{o.long}": o for o in opts if o.long})
        for flag, value in pairs:
            opt = by_flag[flag]
            parsed.pairs.append((opt, value))
            key = opt.long or opt.short or flag
            if opt is HELP:
                sys.stderr.write(self.usage())
                raise SystemExit(self.help_status)
            if opt is VERSION or opt is LONG_VERSION:
                sys.stderr.write(version_line(self.prog) + "\n")
                raise SystemExit(0)
            if opt is SPECLOCAL:
                parsed.specs.append(value)
            parsed.values[key] = value if opt.arg else True
        if self.checks_layout:  # (after -? and -V, which need no layout)
            check_layout_file()
        return parsed

    def namespace(self, parsed: Parsed):
        """The namespace -n (or -N, one name per PMID) names, None without either.

        A file that will not load ends the run, with libpcp's messages about it.
        """
        import errno

        from purepcp.pmapi.errors import pmErrStr
        from purepcp.pmapi.pmns import PMNS, load_complaint

        key = "namespace" if "namespace" in parsed else "uniqnames"
        if key not in parsed:
            return None
        path = str(parsed.get(key))
        try:
            return PMNS.from_file(path, dupok="uniqnames" not in parsed)
        except PMError as exc:
            sys.stderr.write(load_complaint(exc, path))
            code = exc.code
        except OSError as exc:
            code = -(exc.errno or errno.EIO)
        self.fail(f'Cannot load namespace from "{path}": {pmErrStr(code)}')

    def archive_origin(self, parsed: Parsed, ctx: Any) -> Any:
        """The time an archive context starts from: -O within the -S/-T/-A window."""
        from purepcp.pmapi.timewindow import TimeParseError, parse_time_window
        from purepcp.pmapi.values import Timestamp
        from purepcp.pmapi.zone import archive_zone

        archive = ctx.archive
        if not any(k in parsed for k in ("start", "finish", "align", "origin")):
            return archive.label.start  # no window asked for: the end is not looked up
        zone = archive_zone(ctx) if "hostzone" in parsed else parsed.get("timezone")
        try:
            window = parse_time_window(
                parsed.get("start"),
                parsed.get("finish"),
                parsed.get("align"),
                parsed.get("origin"),
                archive.label.start,
                archive_end(self.prog, str(parsed.get("archive")), archive),
                tz=zone,
            )
        except TimeParseError as exc:
            self.fail(exc.errmsg)
        except PMError as exc:
            self.fail(str(exc))
        return Timestamp.from_ns(window.origin_ns)

    def context(self, parsed: Parsed):
        """The Context the options name: -a ARCHIVE, -h HOST, -L (with -K), else the local pmcd."""
        from purepcp.pmapi.context import Context

        sources = [k for k in ("archive", "host", "local-PMDA") if k in parsed]
        if len(sources) > 1:
            self.fail("at most one of -a, -h and -L allowed", usage=True)
        pmns = self.namespace(parsed)
        if "archive" in parsed:
            from purepcp.pmapi.archive.context import ArchiveContext

            name = str(parsed.get("archive"))
            try:
                return ArchiveContext(name, pmns)
            except PMError as exc:
                self.fail(f'Cannot open archive "{name}": {exc}')
        try:
            if "local-PMDA" in parsed:
                return Context.local(parsed.specs, pmns)
            host = str(parsed.get("host") or os.environ.get("PMCD_HOST") or "local:")
            return Context.host(host, pmns)
        except PMError as exc:
            if exc.detail and exc.detail.startswith("Cannot connect"):
                self.fail(f"{exc.detail}: {exc.message}")
            if "local-PMDA" in parsed:
                self.fail(f"Cannot make standalone connection on localhost: {exc}")
            self.fail(str(exc))


def archive_end(prog: str, name: str, archive: Any) -> Any:
    """pmGetArchiveEnd: the time of the last record that reads cleanly (of the last
    archive, for a set), or None, warning as libpcp's tools do, if none does."""
    from purepcp.pmapi.archive.multi import end_of

    end = end_of(archive)
    if end is None:
        warn_damaged_end(prog, name)
    return end


def warn_damaged_end(prog: str, name: str) -> None:
    """What libpcp's tools say when an archive's end cannot be found (then they go on)."""
    from purepcp.pmapi.errors import PM_ERR_LOGREC, pmErrStr

    sys.stdout.flush()
    sys.stderr.write(
        f"{prog}: Cannot locate end of archive {name}: {pmErrStr(PM_ERR_LOGREC)}\n"
        "\nWARNING: This archive is sufficiently damaged that it may not be possible to\n"
        "         produce complete information.  Continuing and hoping for the best.\n\n"
    )
    sys.stderr.flush()


def _exit_at_once(status: int) -> NoReturn:
    """End the process with STATUS once stdout and stderr are flushed (output that
    cannot be written ends it with 1, quietly, as a closed stdout ends Tool.main)."""
    try:
        sys.stdout.flush()
    except OSError:  # (a closed pipe, a full disk: the output is not all there)
        status = 1
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(status)


def quiet_stdout() -> None:
    """After a broken pipe: whatever is still buffered goes to /dev/null, not to a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def getopt_message(exc: getopt.GetoptError) -> str:
    """Python's getopt complaint, worded as glibc's getopt words it."""
    opt = exc.opt
    if len(opt) == 1:  # a short option
        if "requires argument" in exc.msg:
            return f"option requires an argument -- '{opt}'"
        return f"invalid option -- '{opt}'"
    if "requires argument" in exc.msg:
        return f"option '--{opt}' requires an argument"
    if "must not have an argument" in exc.msg:
        return f"option '--{opt}' doesn't allow an argument"
    if "not a unique prefix" in exc.msg:
        return f"option '--{opt}' is ambiguous"
    return f"unrecognized option '--{opt}'"


def load_derived(path: str) -> str | None:
    """pmLoadDerivedConfig(PATH) into the process's derived metrics (as --derived and
    pminfo -c do); its diagnostics go to stderr.  The error text if it failed."""
    from purepcp.pmapi.derived.registry import default_registry, load_config
    from purepcp.pmapi.errors import pmErrStr

    sts = load_config(default_registry(), path, sys.stderr)
    return pmErrStr(sts) if sts < 0 else None


def archive_folio(path: str) -> list[str]:
    """The archives a PCPFolio file (--archive-folio, mkaf(1)'s format) lists, relative
    paths taken from the folio's directory; ValueError says, as libpcp does, what is wrong."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise ValueError(f"cannot open archive folio {path}: {exc.strerror}") from None
    if not lines:
        raise ValueError(f"archive folio {path} has no header")
    if not lines[0].startswith("PCPFolio"):
        raise ValueError(f"archive folio {path} has bad magic")
    if len(lines) < 2:
        raise ValueError(f"archive folio {path} has no version")
    if not lines[1].startswith("Version: 1"):
        raise ValueError(f"unknown version archive folio {path}")
    found = []
    base = os.path.dirname(path) or "."
    for number, line in enumerate(lines[2:], start=3):
        if not line.startswith("Archive:"):
            continue
        words = line.split()
        if len(words) < 2:
            raise ValueError(f"missing host on archive folio line {number}")
        if len(words) < 3:
            raise ValueError(f"missing path on archive folio line {number}")
        found.append(words[2] if os.path.isabs(words[2]) else os.path.join(base, words[2]))
    return found


def pcp_getopt(
    argv: Sequence[str], shorts: str, longs: Sequence[tuple[str, str, bool]]
) -> Iterator[tuple[str, str | None] | str]:
    """GNU getopt as libpcp's pmgetopt_r runs it: options and operands mixed, unique
    prefixes of long options.  shorts is getopt's string; longs (name, letter, takes an
    argument) in the tool's table order, which an ambiguity's message lists.

    Yields (letter, argument) for each option, an operand as a plain string, and an
    error as ("!", message) so parsing goes on after a bad option, as it does in C.
    """
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            yield from args[i:]
            return
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            exact = [o for o in longs if o[0] == name]
            found = exact or [o for o in longs if o[0].startswith(name)]
            if not found:
                yield ("!", f"unrecognized option '{arg}'")
            elif len(found) > 1:
                listed = " ".join(f"'--{o[0]}'" for o in found)
                yield ("!", f"option '--{name}' is ambiguous; possibilities: {listed}")
            else:
                long, letter, takes = found[0]
                if not takes and eq:
                    yield ("!", f"option '--{long}' doesn't allow an argument")
                elif takes and not eq and i >= len(args):
                    yield ("!", f"option '--{long}' requires an argument")
                elif takes and not eq:
                    yield (letter, args[i])
                    i += 1
                else:
                    yield (letter, value if takes else None)
            continue
        if not arg.startswith("-") or arg == "-":
            yield arg
            continue
        k = 1
        while k < len(arg):
            c = arg[k]
            k += 1
            at = shorts.find(c)
            if at < 0 or c == ":":
                yield ("!", f"invalid option -- '{c}'")
            elif shorts[at + 1 : at + 2] != ":":
                yield (c, None)
            elif k < len(arg):
                yield (c, arg[k:])
                break
            elif i < len(args):
                yield (c, args[i])
                i += 1
            else:
                yield ("!", f"option requires an argument -- '{c}'")


#: pmSetDebug's option names (pmdbg -l), and "all"
DEBUG_NAMES = frozenset(
    ("all", "pdu", "fetch", "profile", "value", "context", "indom", "pdubuf", "log", "logmeta",
     "optfetch", "af", "appl0", "appl1", "appl2", "pmns", "libpmda", "timecontrol", "pmc",
     "derive", "lock", "interp", "config", "pmapi", "fault", "auth", "discovery", "attr",
     "http", "desperate", "deprecated", "exec", "labels", "series", "libweb", "alloc",
     "services", "appl3", "appl4", "appl5", "access", "qa", "search", "query", "compress",
     "dev0", "dev1", "dev2", "pmlc", "appl6", "appl7", "appl8", "appl9", "tls")
)  # fmt: skip


def debug_complaint(spec: str) -> str | None:
    """What pmGetOptions says of a -D SPEC pmSetDebug refuses (None if it takes it)."""
    return None if debug_spec_ok(spec) else f"unrecognized debug options specification ({spec})"


def debug_spec_ok(spec: str) -> bool:
    """Whether pmSetDebug accepts SPEC (-D): numbers, "all" and option names, separated
    by commas (libpcp stops at the end of the text, after a comma or not)."""
    tokens = spec.split(",")
    if tokens[-1] == "":
        tokens.pop()
    return all(re.fullmatch(r"[ \t]*[+-]?[0-9]+", t) or t.lower() in DEBUG_NAMES for t in tokens)


def _no_debug_options() -> None:
    """Forget -D options an earlier run in this process was given (tests run tools in
    process; a command's own run starts with none)."""
    debug = sys.modules.get("purepcp.pmapi.debug")
    if debug is not None:
        debug.enabled.clear()  # type: ignore[attr-defined]
