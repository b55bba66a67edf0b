"""pmGetOptions as PCP's ``cpmapi`` offers it to Python: one set of options per process,
built up by pmSetShortOptions and the pmSetLongOption* calls, filled in by
pmGetOptionsFromList (GNU getopt_long's rules as libpcp runs them: permuted or POSIX
ordering, unique prefixes of long names, the standard PCP options -A -a -D -g -H -h -K
-L -N -n -O -p -S -s -T -t -V -Z -z and the PCP_* environment variables) and read back
by the pmGetOption* calls.  Messages are held, as pmprintf holds them, until
pmUsageMessage (or pmflush) writes them to stderr.

The parsing rules and messages are libpcp's getopt.c; the time syntax, the archive folio,
the derived metrics and the debug options are purepcp.pmapi's own (one copy of each).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# pmOptions.flags (pmapi.h's PM_OPTFLAG_*)
INIT, DONE, MULTI, USAGE_ERR, RUNTIME_ERR, EXIT, POSIX, MIXED = (1 << n for n in range(8))
ENV_ONLY, LONG_ONLY, BOUNDARIES, STDOUT_TZ, NOFLUSH, QUIET = (1 << n for n in range(8, 14))

_HOST, _ARCHIVE, _LOCAL = 1, 2, 3  # PM_CONTEXT_*
_PM_ERR_GENERIC, _PM_ERR_APPVERSION = -12345, -12350
_NSEC = 1_000_000_000
_PCP_VERSION = "6.0.3"  # what -V prints after the program's name (PCP_VERSION)


@dataclass(frozen=True)
class LongOption:
    """One entry of pmOptions.long_options (pmLongOptions): a short_opt of "-" is a
    section heading, "|" a line of text, "" no short form; no message, not listed."""

    long_opt: str
    has_arg: int
    short_opt: str
    argname: str | None
    message: str | None


def _std(name: str, arg: int, letter: str, argname: str | None, text: str | None) -> LongOption:
    return LongOption(name, arg, letter, argname, text)


#: the standard options (pmapi.h's PMOPT_*), by the cpmapi call that adds each
STANDARD: dict[str, LongOption] = {
    "Align": _std("align", 1, "A", "TIME", "align sample times on natural boundaries"),
    "Archive": _std("archive", 1, "a", "FILE", "metrics source is a PCP log archive"),
    "Debug": _std("debug", 1, "D", "DBG", None),
    "Host": _std("host", 1, "h", "HOST", "metrics source is PMCD on host"),
    "HostsFile": _std("hostsfile", 1, "H", "FILE", "read metric source hosts from a file"),
    "SpecLocal": _std(
        "spec-local", 1, "K", "SPEC", "optional additional PMDA spec for local connection"
    ),
    "LocalPMDA": _std("local-PMDA", 0, "L", None, "metrics source is local connection to a PMDA"),
    "Origin": _std("origin", 1, "O", "TIME", "initial sample time within the time window"),
    "Start": _std("start", 1, "S", "TIME", "start of the time window"),
    "Samples": _std("samples", 1, "s", "N", "terminate after this many samples"),
    "Finish": _std("finish", 1, "T", "TIME", "end of the time window"),
    "Interval": _std("interval", 1, "t", "DELTA", "sampling interval"),
    "Version": _std("version", 0, "V", None, "display version number and exit"),
    "TimeZone": _std("timezone", 1, "Z", "TZ", "set reporting timezone"),
    "HostZone": _std(
        "hostzone", 0, "z", None, "set reporting timezone to local time of metrics source"
    ),
    "Help": _std("help", 0, "?", None, "show this usage message and exit"),
    "ArchiveList": _std(
        "archive-list", 1, "", "FILES", "comma-separated list of metric source archives"
    ),
    "ArchiveFolio": _std(
        "archive-folio", 1, "", "FILE", "read metric source archives from a folio"
    ),
    "HostList": _std("host-list", 1, "", "HOSTS", "comma-separated list of metric source hosts"),
    "Container": _std("container", 1, "", "NAME", "specify an individual container to be queried"),
}


@dataclass
class Options:
    """The process's pmOptions: what was asked for, what was given, how parsing went."""

    short_options: str | None = None
    short_usage: str | None = None
    flags: int = 0
    long_options: list[LongOption] = field(default_factory=list)
    errors: int = 0
    context: int = 0
    hosts: list[str] = field(default_factory=list)
    archives: list[str] = field(default_factory=list)
    Lflag: bool = False
    tzflag: bool = False
    guiflag: bool = False
    timezone: str | None = None
    align_optarg: str | None = None
    start_optarg: str | None = None
    finish_optarg: str | None = None
    origin_optarg: str | None = None
    guiport_optarg: str | None = None
    samples: int = 0
    interval_ns: int = 0
    start_ns: int = 0
    finish_ns: int = 0
    origin_ns: int = 0
    specs: list[str] = field(default_factory=list)
    namespace: Any = None  # the PMNS -n/-N loaded (pmLoadASCIINameSpace)
    zone: Any = None  # the tzinfo pmSetContextOptions chose (-Z or -z), if any
    index: int = 0  # of the last long option found
    argv: list[str] = field(default_factory=list)
    scan: _Getopt | None = None


_opts = Options()
_option_callback: list[Callable[..., Any]] = []
_override_callback: list[Callable[..., Any]] = []
_pending: list[str] = []  # pmprintf's buffer


def state() -> Options:
    """The process's options (for pcp.pmapi: the namespace, the zone, the -K specs)."""
    return _opts


# --- pmprintf and pmflush ---------------------------------------------------------------


def pmprintf(text: str) -> int:
    """Hold TEXT for the next pmflush; its length in bytes, as pmprintf counts."""
    _pending.append(text)
    return len(text.encode("utf-8", "surrogateescape"))


def pmflush() -> int:
    """Write what pmprintf holds to stderr (or to the file $PCP_STDERR names)."""
    text = "".join(_pending)
    _pending.clear()
    if not text:
        return 0
    target = os.environ.get("PCP_STDERR", "")
    if target and target.lower() != "display":
        try:
            with open(target, "a", errors="surrogateescape") as f:
                f.write(text)
            return 0
        except OSError as exc:
            sys.stderr.write(
                f"pmflush: cannot append to file '{target}' (from $PCP_STDERR): {exc.strerror}\n"
            )
    sys.stderr.write(text)
    sys.stderr.flush()
    return 0


#: pmGetProgname: the name messages begin with ("pcp" until options are parsed)
_progname = ["pcp"]


def _prog() -> str:
    return _progname[0]


def _set_progname(argv0: str) -> None:
    """pmSetProgname: ARGV0's last component, for our messages and purepcp's."""
    from purepcp.pmapi import set_progname

    _progname[0] = argv0.rsplit("/", 1)[-1]
    set_progname(_progname[0])


def _complain(message: str, runtime: bool = False) -> None:
    """pmprintf "prog: MESSAGE" and count the error (a runtime one, if so)."""
    pmprintf(f"{_prog()}: {message}\n")
    _opts.errors += 1
    if runtime:
        _opts.flags |= RUNTIME_ERR


# --- getopt_long, as libpcp's pmgetopt_r runs it -----------------------------------------

_EOF = None


class _Getopt:
    """The scan of one argument vector: ARGV is permuted in place (non-options moved after
    the options) unless the ordering is POSIX's, and optind is left at the first operand.

    next() gives (c, optarg): c a letter, "" for a long-only option (opts.index says
    which), "?" (or ":") for an error already reported, "\\x01" for an operand given in
    order, None at the end.
    """

    def __init__(self, opts: Options) -> None:
        self.o = opts
        self.argv = opts.argv
        self.optind = 1
        self.first_nonopt = self.last_nonopt = 1
        self.nextchar = ""  # what is left of a cluster of short options
        shorts = opts.short_options or ""
        posix = bool(opts.flags & POSIX) or "POSIXLY_CORRECT" in os.environ
        if shorts[:1] == "-":
            self.ordering = "in-order"
        elif shorts[:1] == "+" or posix:
            self.ordering = "require"
        else:
            self.ordering = "permute"
        self.shorts = shorts[1:] if shorts[:1] in "-+" and shorts else shorts
        self.quiet = self.shorts[:1] == ":" or bool(opts.flags & QUIET)

    def say(self, message: str) -> None:
        if not self.quiet:
            pmprintf(f"{_prog()}: {message}\n")

    def operands(self) -> list[str]:
        return self.argv[self.optind :]

    def next(self) -> tuple[str | None, str | None]:
        if not self.nextchar:
            found = self._next_element()
            if found is not True:
                return found
            arg = self.argv[self.optind]
            long_form = arg[1] == "-" or (
                self.o.flags & LONG_ONLY and (len(arg) > 2 or arg[1] not in self.shorts)
            )
            if long_form:
                result = self._long(arg)
                if result is not None:
                    return result
            self.nextchar = arg[1:]
        return self._short()

    def _exchange(self) -> None:
        """Move the non-options skipped so far after the options seen since."""
        a, b, c = self.first_nonopt, self.last_nonopt, self.optind
        self.argv[a:c] = self.argv[b:c] + self.argv[a:b]
        self.first_nonopt += c - b
        self.last_nonopt = c

    def _is_operand(self, i: int) -> bool:
        arg = self.argv[i]
        return not arg.startswith("-") or arg == "-"

    def _next_element(self) -> tuple[str | None, str | None] | bool:
        """Step to the next option element: True, or what ends the step (end, operand)."""
        argc = len(self.argv)
        self.last_nonopt = min(self.last_nonopt, self.optind)
        self.first_nonopt = min(self.first_nonopt, self.optind)
        if self.ordering == "permute":
            if self.first_nonopt != self.last_nonopt and self.last_nonopt != self.optind:
                self._exchange()
            elif self.last_nonopt != self.optind:
                self.first_nonopt = self.optind
            while self.optind < argc and self._is_operand(self.optind):
                self.optind += 1
            self.last_nonopt = self.optind
        if self.optind != argc and self.argv[self.optind] == "--":
            self.optind += 1
            if self.first_nonopt != self.last_nonopt and self.last_nonopt != self.optind:
                self._exchange()
            elif self.first_nonopt == self.last_nonopt:
                self.first_nonopt = self.optind
            self.last_nonopt = self.optind = argc
        if self.optind == argc:
            if self.first_nonopt != self.last_nonopt:
                self.optind = self.first_nonopt
            return (_EOF, None)
        if self._is_operand(self.optind):
            if self.ordering == "require":
                return (_EOF, None)
            self.optind += 1
            return ("\x01", self.argv[self.optind - 1])
        return True

    def _matches(self, name: str) -> tuple[int, list[int]]:
        """The long option NAME is (the exact one, else the first it is a prefix of; -1
        for none), and the others it is a prefix of that make it ambiguous (the latest
        first, as libpcp lists them)."""
        table = self.o.long_options
        first, others = -1, []
        for i, opt in enumerate(table):
            if not opt.long_opt.startswith(name):
                continue
            if len(opt.long_opt) == len(name):
                return i, []
            if first < 0:
                first = i
            elif (
                self.o.flags & LONG_ONLY
                or table[first].has_arg != opt.has_arg
                or table[first].short_opt != opt.short_opt
            ):
                others.insert(0, i)
        return first, others

    def _long(self, arg: str) -> tuple[str | None, str | None] | None:
        """A long option at optind; None when it is to be read as short options instead."""
        body = arg[2:] if arg[1] == "-" else arg[1:]
        name, eq, value = body.partition("=")
        found, others = self._matches(name)
        table = self.o.long_options
        if others:
            listed = "".join(f" '--{table[i].long_opt}'" for i in [found, *others])
            self.say(f"option '{arg}' is ambiguous; possibilities:{listed}")
            self.optind += 1
            return ("?", None)
        if found >= 0:
            opt = table[found]
            self.optind += 1
            if eq and not opt.has_arg:
                dash = "--" if arg[1] == "-" else arg[0]
                self.say(f"option '{dash}{opt.long_opt}' doesn't allow an argument")
                return ("?", None)
            optarg = value if eq else None
            if not eq and opt.has_arg == 1:
                if self.optind >= len(self.argv):
                    self.say(f"option '--{opt.long_opt}' requires an argument")
                    return (":" if self.shorts[:1] == ":" else "?", None)
                optarg = self.argv[self.optind]
                self.optind += 1
            self.o.index = found
            return (opt.short_opt, optarg)
        if arg[1] == "-" or body[:1] not in self.shorts or not self.o.flags & LONG_ONLY:
            dash = "--" if arg[1] == "-" else arg[0]
            self.say(f"unrecognized option '{dash}{body}'")
            self.optind += 1
            return ("?", None)
        return None

    def _short(self) -> tuple[str | None, str | None]:
        c, self.nextchar = self.nextchar[0], self.nextchar[1:]
        if not self.nextchar:
            self.optind += 1
        at = self.shorts.find(c)
        if at < 0 or c in ":;":
            self.say(f"invalid option -- '{c}'")
            return ("?", None)
        spec = self.shorts[at + 1 : at + 3]
        if not spec.startswith(":"):
            return (c, None)
        rest, self.nextchar = self.nextchar, ""
        if rest:  # the rest of the element is the argument
            self.optind += 1
            return (c, rest)
        if spec == "::":
            return (c, None)
        if self.optind >= len(self.argv):
            self.say(f"option requires an argument -- '{c}'")
            return (":" if self.shorts[:1] == ":" else "?", None)
        self.optind += 1
        return (c, self.argv[self.optind - 1])


# --- the standard options ----------------------------------------------------------------


def _add_archive(name: str) -> None:
    """One more archive: a list of its own for each with PM_OPTFLAG_MULTI, else one
    comma-separated name (a repeat is dropped, as libpcp drops it)."""
    o = _opts
    if o.flags & MULTI:
        if name not in o.archives:
            o.archives.append(name)
        return
    if not o.archives:
        o.archives.append(name)
        return
    joined = o.archives[0]
    at = joined.find(name)
    if at >= 0 and (at == 0 or joined[at - 1] == ",") and joined[at + len(name) :][:1] in ("", ","):
        return
    o.archives[0] = f"{joined},{name}"


def add_archive(name: str) -> None:
    """-a NAME (__pmAddOptArchive)."""
    if _opts.hosts and not _opts.flags & MIXED:
        _complain("only one host or archive allowed")
    else:
        _add_archive(name)


def add_archive_list(names: str) -> None:
    """--archive-list NAMES (comma separated)."""
    if _opts.hosts and not _opts.flags & MIXED:
        _complain("only one of hosts or archives allowed")
    elif not _opts.flags & MULTI:
        add_archive(names)
    else:
        for name in names.split(","):
            if name:
                add_archive(name)


def add_archive_folio(path: str) -> None:
    """--archive-folio PATH: the archives a PCPFolio file lists."""
    from purepcp.pmapi.options import archive_folio

    if _opts.hosts and not _opts.flags & MIXED:
        _complain("only one of hosts or archives allowed")
        return
    try:
        names = archive_folio(path)
    except ValueError as exc:
        _complain(str(exc), runtime=True)
        return
    for name in names:
        add_archive(name)


def add_host(host: str) -> None:
    """-h HOST (__pmAddOptHost)."""
    o = _opts
    if o.hosts and not o.flags & MULTI:
        _complain(f"too many hosts requested: {host}")
    elif o.archives and not o.flags & MIXED:
        _complain("only one host or archive allowed")
    else:
        o.hosts.append(host)


def add_host_list(hosts: str) -> None:
    """--host-list HOSTS (comma separated)."""
    o = _opts
    if o.archives and not o.flags & MIXED:
        _complain("only one of hosts or archives allowed")
    else:
        o.hosts.extend(h for h in hosts.split(",") if h)
    if len(o.hosts) > 1 and not o.flags & MULTI:
        _complain(f"too many hosts requested: {hosts}")


def _add_hosts_file(path: str) -> None:
    """-H FILE: one host a line, '#' comments."""
    o = _opts
    if o.archives and not o.flags & MIXED:
        _complain("only one of hosts or archives allowed")
        return
    try:
        with open(path, errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        _complain(f"cannot open hosts file {path}: {exc.strerror}", runtime=True)
        return
    for line in lines:
        word = line.lstrip(" \t\v\f\r")
        if not word or word[0] == "#":
            continue
        if o.hosts and not o.flags & MULTI:
            _complain(f"too many hosts requested: {path}")
            break
        o.hosts.append(re.match(r"[^#\s]*", word).group())  # type: ignore[union-attr]


def _set_container(name: str) -> None:
    os.environ["PCP_CONTAINER"] = name or ""


def _set_debug(spec: str) -> None:
    from purepcp.pmapi import debug
    from purepcp.pmapi.options import debug_spec_ok

    if debug_spec_ok(spec):
        debug.set_options(spec)
    else:
        _complain(f"unrecognized debug options specification ({spec})")


def _set_derived(path: str) -> None:
    from purepcp.pmapi.options import load_derived

    failure = load_derived(path)
    if failure is not None:
        _complain(f"pmLoadDerivedConfig failed: {failure}")


def _spec_complaint(spec: str) -> str | None:
    """What pmSpecLocalPMDA says of SPEC ("add,DOMAIN,PATH,INIT", "del,...", "clear")."""
    from purepcp.pmapi.cnumbers import strtol

    op = next((w for w in ("add", "del", "clear") if spec.startswith(w)), None)
    if op is None:
        return "bad op in spec"
    rest = spec[len(op) :]
    if op == "clear":
        return "unexpected text after clear op in spec" if rest else None
    if not rest.startswith(","):
        return "expected , after op in spec"
    fields = rest[1:].split(",", 2)
    if fields[0] == "" and (len(fields) == 1 or op != "del"):
        return "missing domain in spec"
    if fields[0]:
        scan = strtol(fields[0])
        if scan.end != len(fields[0]) or not 0 <= scan.value <= 510:
            return "bad domain in spec"
    path = fields[1] if len(fields) > 1 else ""
    init = fields[2] if len(fields) > 2 else ""
    if op != "del":
        if not path and len(fields) < 3:
            return "missing dso-path in spec"
        if path and not init:
            return "missing init-routine in spec"
    if not fields[0] and not path:
        return "missing domain and dso-path in spec"
    return None


def _dropped(spec: str) -> bool:
    """Whether the "del" SPEC names an agent an earlier "add" put in the table (by
    domain or path) since the last "clear"."""
    from purepcp.pmapi.cnumbers import strtol

    _, domain, *rest = [*spec.split(","), ""]
    added = []
    for earlier in _opts.specs:
        if earlier == "clear":
            added.clear()
        elif earlier.startswith("add,"):
            added.append(earlier.split(",")[1:3])
    wanted = strtol(domain).value if domain else None
    return any(
        (wanted is not None and strtol(d).value == wanted) or (rest[0] and p == rest[0])
        for d, p in added
    )


def set_spec_local(spec: str) -> None:
    """-K SPEC: an agent to add to (or drop from) the local context's table."""
    from purepcp.pmapi.errors import PM_ERR_INDOM, pmErrStr

    complaint = _spec_complaint(spec)
    if complaint is None and spec.startswith("del") and not _dropped(spec):
        complaint = f"__pmLocalPMDA: {pmErrStr(PM_ERR_INDOM)}"
    if complaint is not None:
        _complain(f"pmSpecLocalPMDA failed: {complaint}")
    else:
        _opts.specs.append(spec)


def set_local() -> None:
    """-L: the metrics source is agents in this process."""
    if _opts.context and not _opts.flags & MULTI:
        _complain("at most one of -a, -h and -L allowed")
    else:
        _opts.Lflag = True


def _set_namespace(path: str, dupok: bool) -> None:
    """-n (or -N, one name for each PMID) PATH: the namespace, loaded now."""
    import errno

    from purepcp.pmapi.errors import PM_ERR_PMNS, PMError, SourceError, pmErrStr
    from purepcp.pmapi.pmns import PMNS

    try:
        _opts.namespace = PMNS.from_file(path, dupok=dupok)
        return
    except SourceError as exc:
        what = exc.what if exc.code == PM_ERR_PMNS else f'Cannot open "{path}"'
        pmprintf(f"Error Parsing ASCII PMNS: {what}\n")
        code = exc.code
    except PMError as exc:
        code = exc.code
    except OSError as exc:
        code = -(exc.errno or errno.EIO)
    _complain(f'Cannot load namespace from "{path}": {pmErrStr(code)}', runtime=True)


def _set_samples(count: str, message: str) -> None:
    from purepcp.pmapi.cnumbers import int32, strtol

    scan = strtol(count)
    _opts.samples = int32(scan.value)
    if scan.end != len(count) or _opts.samples < 0:
        _complain(message)


def set_interval(delta: str, message: str) -> None:
    """-t DELTA, as pmParseHighResInterval reads it."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns

    try:
        _opts.interval_ns = parse_interval_ns(delta)
    except TimeParseError as exc:
        pmprintf(f"{_prog()}: {message}\n{exc.errmsg}\n")
        _opts.errors += 1


def _set_timezone(zone: str) -> None:
    if _opts.tzflag:
        _complain("at most one of -Z and -z allowed")
    else:
        _opts.timezone = zone


def _set_hostzone() -> None:
    if _opts.timezone is not None:
        _complain("at most one of -Z and -z allowed")
    else:
        _opts.tzflag = True


def _set_guimode() -> None:
    if _opts.guiport_optarg is not None:
        _complain("at most one of -g and -p allowed")
    else:
        _opts.guiflag = True


def _set_guiport(port: str) -> None:
    if _opts.guiflag:
        _complain("at most one of -g and -p allowed")
    else:
        _opts.guiport_optarg = port


def _set_version() -> None:
    _opts.flags |= EXIT
    pmprintf(f"{_prog()} version {_PCP_VERSION}\n")


def _setter(attribute: str) -> Callable[[str], None]:
    return lambda value: setattr(_opts, attribute, value)


_T_MESSAGE = "-t argument not in pmParseHighResInterval(3) format:"

#: what each standard letter does with its argument
_BY_LETTER: dict[str, Callable[[str], None]] = {
    "A": _setter("align_optarg"),
    "a": add_archive,
    "D": _set_debug,
    "g": lambda _: _set_guimode(),
    "H": _add_hosts_file,
    "h": add_host,
    "K": set_spec_local,
    "L": lambda _: set_local(),
    "N": lambda path: _set_namespace(path, False),
    "n": lambda path: _set_namespace(path, True),
    "O": _setter("origin_optarg"),
    "p": _set_guiport,
    "S": _setter("start_optarg"),
    "s": lambda n: _set_samples(n, "-s requires a positive numeric argument"),
    "T": _setter("finish_optarg"),
    "t": lambda delta: set_interval(delta, _T_MESSAGE),
    "V": lambda _: _set_version(),
    "Z": _set_timezone,
    "z": lambda _: _set_hostzone(),
}

#: what each standard long-only name does (a long name is looked up by name, so that it
#: works whatever letter the script gave it)
_BY_NAME: dict[str, Callable[[str], None]] = {
    "align": _BY_LETTER["A"],
    "archive": add_archive,
    "archive-list": add_archive_list,
    "archive-folio": add_archive_folio,
    "container": _set_container,
    "debug": _set_debug,
    "derived": _set_derived,
    "guimode": _BY_LETTER["g"],
    "host": add_host,
    "hostsfile": _add_hosts_file,
    "spec-local": set_spec_local,
    "local-PMDA": _BY_LETTER["L"],
    "namespace": _BY_LETTER["n"],
    "uniqnames": _BY_LETTER["N"],
    "guiport": _set_guiport,
    "host-list": add_host_list,
    "interval": _BY_LETTER["t"],
    "origin": _BY_LETTER["O"],
    "samples": _BY_LETTER["s"],
    "start": _BY_LETTER["S"],
    "finish": _BY_LETTER["T"],
    "timezone": _set_timezone,
    "hostzone": _BY_LETTER["z"],
    "version": _BY_LETTER["V"],
}

#: the PCP_* environment variables read before the arguments, and what each sets
_FROM_ENVIRONMENT: dict[str, Callable[[str], None]] = {
    "ALIGN_TIME": _BY_LETTER["A"],
    "ARCHIVE": add_archive,
    "ARCHIVE_LIST": add_archive_list,
    "DEBUG": lambda _: None,  # (read first, below)
    "FOLIO": add_archive_folio,
    "GUIMODE": _BY_LETTER["g"],
    "HOST": add_host,
    "HOST_LIST": add_host_list,
    "SPECLOCAL": set_spec_local,
    "LOCALMODE": _BY_LETTER["L"],
    "LOCALPMDA": _BY_LETTER["L"],
    "NAMESPACE": _BY_LETTER["n"],
    "UNIQNAMES": _BY_LETTER["N"],
    "ORIGIN": _BY_LETTER["O"],
    "ORIGIN_TIME": _BY_LETTER["O"],
    "GUIPORT": _set_guiport,
    "START_TIME": _BY_LETTER["S"],
    "SAMPLES": _BY_LETTER["s"],
    "FINISH_TIME": _BY_LETTER["T"],
    "INTERVAL": _BY_LETTER["t"],
    "TIMEZONE": _set_timezone,
    "HOSTZONE": _BY_LETTER["z"],
}


def _start() -> None:
    """The options the environment sets, once, before the arguments."""
    if "PCP_DEBUG" in os.environ:
        _set_debug(os.environ["PCP_DEBUG"])
    for name, value in list(os.environ.items()):
        action = _FROM_ENVIRONMENT.get(name[4:]) if name.startswith("PCP_") else None
        if action is not None:
            action(value)
    _opts.flags |= INIT


def _archive_path() -> str:
    """Where this host's pmlogger writes (-O with no source named)."""
    import socket

    from purepcp.pmapi.paths import paths

    try:
        logdir = str(paths().archive_dir)
    except Exception:  # (no layout: PCP's own fallback)
        logdir = "/var/log/pcp/pmlogger"
    try:
        host = socket.gethostname()
    except OSError:
        host = "localhost"
    return f"{logdir}/{host}"


def _end() -> None:
    """Once every argument is read: the context type, and what needs one (__pmEndOptions)."""
    o = _opts
    if o.flags & DONE:
        return
    if not o.context:
        if o.Lflag:
            o.context = _LOCAL
        elif o.hosts and not o.archives:
            o.context = _HOST
        elif o.archives and not o.hosts:
            o.context = _ARCHIVE
        elif o.origin_optarg is not None:
            o.context = _ARCHIVE
            _add_archive(_archive_path())
    if (o.start_optarg or o.align_optarg or o.origin_optarg) and o.context != _ARCHIVE:
        _complain("time window options are supported for archives only")
    if o.tzflag and o.context not in (_ARCHIVE, _HOST):
        _complain("use of timezone from metric source requires a source")
    if o.errors and not o.flags & RUNTIME_ERR:
        o.flags |= USAGE_ERR
    o.flags |= DONE


def _standard_long(index: int, optarg: str | None) -> bool:
    """A long-only option of the standard set, done; False when it is the script's."""
    table = _opts.long_options
    action = _BY_NAME.get(table[index].long_opt) if index < len(table) else None
    if action is None:
        return False
    action(optarg or "")
    return True


def _options(argv: list[str]) -> Iterator[tuple[str, str | None]]:
    """pmGetOptions: the standard options done, the others (and those the override
    callback claims) given back, as (letter or "", argument)."""
    o = _opts
    if not o.flags & INIT:
        _set_progname(argv[0])
        _start()
    o.argv = list(argv)
    if o.flags & ENV_ONLY or o.short_options is None:
        _end()  # (no letters to look for: every argument is an operand)
        return
    o.scan = scan = _Getopt(o)
    while True:
        c, optarg = scan.next()
        if c is _EOF:
            break
        if _override_callback and c and _overridden(c):
            yield c, optarg
            continue
        action = _BY_LETTER.get(c)
        if c == "?":
            o.errors += 1
        elif action is not None:
            action(optarg or "")
        elif not (c == "" and _standard_long(o.index, optarg)):
            yield c, optarg
    _end()


def _overridden(c: str) -> bool:
    try:
        return bool(_override_callback[0](c))
    except Exception:
        sys.excepthook(*sys.exc_info())
        return True


def _call_back(c: str, optarg: str | None) -> None:
    table = _opts.long_options
    name = table[_opts.index].long_opt if c == "" and _opts.index < len(table) else c
    if not _option_callback:
        return
    try:
        _option_callback[0](name, optarg, _opts.index)
    except Exception:
        sys.excepthook(*sys.exc_info())


def _takes(formats: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The checks PyArg_ParseTuple makes of a C function's arguments, as FORMATS gives
    them ("s" a str, "i" an int), with its TypeError for anything else."""
    import functools
    import operator

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            for n, (kind, value) in enumerate(zip(formats, args, strict=False), start=1):
                if kind == "i":
                    operator.index(value)
                elif not isinstance(value, str):
                    what = "None" if value is None else type(value).__name__
                    raise TypeError(f"{func.__name__}() argument {n} must be str, not {what}")
            return func(*args, **kwargs)

        return checked

    return wrap


# --- cpmapi's functions ------------------------------------------------------------------


def pmResetAllOptions() -> None:
    """Forget every option set or given (a fresh pmOptions)."""
    global _opts
    _opts = Options()


@_takes("s")
def pmSetShortOptions(short_options: str) -> None:
    _opts.short_options = short_options


@_takes("s")
def pmSetShortUsage(short_usage: str) -> None:
    _opts.short_usage = short_usage


@_takes("i")
def pmSetOptionFlags(flags: int) -> None:
    _opts.flags |= flags


def pmGetOptionFlags() -> int:
    return _opts.flags


@_takes("i")
def pmSetOptionContext(context: int) -> None:
    _opts.context = context


def pmGetOptionContext() -> int | None:
    return _opts.context if _opts.context > 0 else None


@_takes("i")
def pmSetOptionErrors(errors: int) -> None:
    _opts.errors = errors


def pmGetOptionErrors() -> int:
    return _opts.errors


def _add_long(option: LongOption) -> int:
    _opts.long_options.append(option)
    return len(_opts.long_options) - 1


@_takes("sisss")
def pmSetLongOption(long_opt: str, has_arg: int, short_opt: str, argname: str, message: str) -> int:
    """A long option of the script's own (with a letter, or "" for none): its index."""
    return _add_long(LongOption(long_opt, has_arg, short_opt[:1], argname, message or None))


@_takes("s")
def pmSetLongOptionHeader(heading: str) -> None:
    _add_long(LongOption("", 0, "-", None, heading))


@_takes("s")
def pmSetLongOptionText(text: str) -> None:
    _add_long(LongOption("", 0, "|", None, text))


def _standard(name: str) -> Callable[[], int]:
    def add() -> int:
        return _add_long(STANDARD[name])

    add.__name__ = f"pmSetLongOption{name}"
    add.__doc__ = f"Add the standard --{STANDARD[name].long_opt} option: its index."
    return add


pmSetLongOptionAlign = _standard("Align")
pmSetLongOptionArchive = _standard("Archive")
pmSetLongOptionArchiveList = _standard("ArchiveList")
pmSetLongOptionArchiveFolio = _standard("ArchiveFolio")
pmSetLongOptionContainer = _standard("Container")
pmSetLongOptionDebug = _standard("Debug")
pmSetLongOptionHost = _standard("Host")
pmSetLongOptionHostList = _standard("HostList")
pmSetLongOptionHostsFile = _standard("HostsFile")
pmSetLongOptionSpecLocal = _standard("SpecLocal")
pmSetLongOptionLocalPMDA = _standard("LocalPMDA")
pmSetLongOptionOrigin = _standard("Origin")
pmSetLongOptionStart = _standard("Start")
pmSetLongOptionSamples = _standard("Samples")
pmSetLongOptionFinish = _standard("Finish")
pmSetLongOptionInterval = _standard("Interval")
pmSetLongOptionVersion = _standard("Version")
pmSetLongOptionTimeZone = _standard("TimeZone")
pmSetLongOptionHostZone = _standard("HostZone")
pmSetLongOptionHelp = _standard("Help")


@_takes("s")
def pmSetOptionArchive(archive: str) -> None:
    add_archive(archive)


@_takes("s")
def pmSetOptionArchiveList(archives: str) -> None:
    add_archive_list(archives)


@_takes("s")
def pmSetOptionArchiveFolio(folio: str) -> None:
    add_archive_folio(folio)


@_takes("s")
def pmSetOptionContainer(container: str) -> None:
    _set_container(container)


@_takes("s")
def pmSetOptionHost(host: str) -> None:
    add_host(host)


@_takes("s")
def pmSetOptionHostList(hosts: str) -> None:
    add_host_list(hosts)


@_takes("s")
def pmSetOptionSpecLocal(spec: str) -> None:
    set_spec_local(spec)


def pmSetOptionLocalPMDA() -> None:
    set_local()


@_takes("s")
def pmSetOptionSamples(count: str) -> None:
    """The sample count, as a script's own option gives it."""
    if _opts.finish_optarg is not None:
        _complain("at most one of finish time and sample count allowed")
    else:
        _set_samples(count, "sample count must be a positive numeric argument")


@_takes("s")
def pmSetOptionInterval(delta: str) -> None:
    """The sampling interval, as a script's own option gives it."""
    set_interval(delta, "interval argument not in pmParseHighResInterval(3) format:")


def pmSetOptionCallback(func: Callable[..., Any]) -> None:
    """FUNC(opt, optarg, index) is called for each option not of the standard set."""
    if not callable(func):
        raise TypeError("pmSetOptionCallback parameter not callable")
    _option_callback[:] = [func]


def pmSetOverrideCallback(func: Callable[..., Any]) -> None:
    """FUNC(opt) is asked of each option: true takes a standard letter for the script."""
    if not callable(func):
        raise TypeError("pmSetOverrideCallback parameter not callable")
    _override_callback[:] = [func]


def pmGetOptionsFromList(argv: list[str]) -> int:
    """Parse ARGV (its first item the program): the count of errors, or
    PM_ERR_APPVERSION after -V."""
    if argv is None:
        return 0
    if not isinstance(argv, list):
        raise TypeError("pmGetOptionsFromList uses a list")
    if not argv:
        return 0
    if not all(isinstance(a, str) for a in argv):  # (PCP's binding crashes here)
        raise TypeError("pmGetOptionsFromList uses a list of str")
    for c, optarg in _options(list(argv)):
        _call_back(c, optarg)
    if _opts.flags & EXIT:
        return _PM_ERR_APPVERSION
    return _opts.errors


def pmGetOperands() -> list[str] | None:
    """The arguments after the options (None if there are none)."""
    if not _opts.flags & DONE:
        raise RuntimeError("pmGetOptions is not yet done")
    found = _opts.scan.operands() if _opts.scan is not None else _opts.argv
    return found or None


def pmGetNonOptionsFromList(argv: list[str]) -> list[str] | None:
    """pmGetOperands (ARGV only checked to be a list)."""
    if not isinstance(argv, list):
        raise TypeError("pmGetNonOptionsFromList uses a list")
    return pmGetOperands()


def pmEndOptions() -> None:
    _end()


def pmUsageMessage() -> None:
    """The usage message (after what pmprintf holds); after -V, the version and exit(0)."""
    o = _opts
    if not o.flags & (RUNTIME_ERR | EXIT):
        usage = o.short_usage if o.short_usage is not None else "[options]"
        pmprintf(f"Usage: {_prog()} {usage}\n")
        for line in _usage_lines(o.long_options):
            pmprintf(line)
    if not o.flags & NOFLUSH:
        pmflush()
    if o.flags & EXIT:
        sys.stdout.flush()
        os._exit(0)


def _usage_lines(table: list[LongOption]) -> Iterator[str]:
    for opt in table:
        if opt.message is None:
            continue
        if opt.short_opt == "-":
            yield f"\n{opt.message}:\n"
            continue
        if opt.short_opt == "|":
            yield f"{opt.message}\n"
            continue
        yield _usage_line(opt)


def _usage_line(opt: LongOption) -> str:
    """One option's line: its forms padded to column 24, else the text on a line of its own."""
    arg = opt.argname or "?"
    if opt.long_opt and opt.short_opt and opt.has_arg:
        forms = f"  -{opt.short_opt} {arg}, --{opt.long_opt}={arg}"
    elif opt.long_opt and opt.short_opt:
        forms = f"  -{opt.short_opt}, --{opt.long_opt}"
    elif opt.long_opt:
        forms = f"  --{opt.long_opt}={arg}" if opt.has_arg else f"  --{opt.long_opt}"
    else:
        forms = f"  -{opt.short_opt} {arg}" if opt.has_arg else f"  -{opt.short_opt}"
    width = len(forms.encode("utf-8", "surrogateescape"))
    if width < 24:
        return f"{forms}{' ' * (24 - width)}{opt.message}\n"
    return f"{forms}\n{' ' * 24}{opt.message}\n"


def pmGetOptionHosts() -> list[str] | None:
    return list(_opts.hosts) or None


def pmGetOptionArchives() -> list[str] | None:
    """The archives named; -O alone names this host's pmlogger's."""
    o = _opts
    if o.origin_optarg is not None and not o.archives and not o.hosts and not o.Lflag:
        _add_archive(_archive_path())
    return list(o.archives) or None


def _seconds(ns: int) -> int | None:
    return ns // _NSEC if ns else None


def _useconds(ns: int) -> int | None:
    return ns % _NSEC // 1000 if ns else None


def _nseconds(ns: int) -> int | None:
    return ns % _NSEC if ns else None


def pmGetOptionStart_sec() -> int | None:
    return _seconds(_opts.start_ns)


def pmGetOptionStart_usec() -> int | None:
    return _useconds(_opts.start_ns)


def pmGetOptionStart_nsec() -> int | None:
    return _nseconds(_opts.start_ns)


def pmGetOptionFinish_sec() -> int | None:
    return _seconds(_opts.finish_ns)


def pmGetOptionFinish_usec() -> int | None:
    return _useconds(_opts.finish_ns)


def pmGetOptionFinish_nsec() -> int | None:
    return _nseconds(_opts.finish_ns)


def pmGetOptionOrigin_sec() -> int | None:
    return _seconds(_opts.origin_ns)


def pmGetOptionOrigin_usec() -> int | None:
    return _useconds(_opts.origin_ns)


def pmGetOptionOrigin_nsec() -> int | None:
    return _nseconds(_opts.origin_ns)


def pmGetOptionInterval_sec() -> int | None:
    return _seconds(_opts.interval_ns)


def pmGetOptionInterval_usec() -> int | None:
    return _useconds(_opts.interval_ns)


def pmGetOptionInterval_nsec() -> int | None:
    return _nseconds(_opts.interval_ns)


def pmGetOptionAlign_optarg() -> str | None:
    return _opts.align_optarg


def pmGetOptionFinish_optarg() -> str | None:
    return _opts.finish_optarg


def pmGetOptionSamples() -> int | None:
    return _opts.samples or None


def pmGetOptionTimezone() -> str | None:
    return _opts.timezone


def pmGetOptionHostZone() -> int:
    return int(_opts.tzflag)


def pmGetOptionContainer() -> str | None:
    return os.environ.get("PCP_CONTAINER")


def pmGetOptionLocalPMDA() -> int:
    return int(_opts.Lflag)


def pmServerStart() -> None:
    """--daemonize: carry on in a child in a session of its own, re-parented to init;
    the parent ends quietly (status 0).  Terminal job-control signals are ignored."""
    import contextlib
    import signal

    sys.stdout.flush()
    sys.stderr.flush()
    for sig in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    try:
        child = os.fork()
    except OSError as exc:
        sys.stderr.write(f"__pmServerStart: fork: {exc.strerror}\n")  # (and carry on)
        child = 0
    if child > 0:
        os._exit(0)
    with contextlib.suppress(OSError):  # (already a group leader: carry on, as libpcp does)
        os.setsid()


# --- the context ------------------------------------------------------------------------


@_takes("iii")
def pmSetContextOptions(context: int, mode: int, delta: int) -> int:
    """The parsed zone and time window applied to the context of handle CONTEXT (an
    archive's is positioned at the window's origin with MODE and DELTA seconds, or -t's
    interval): 0, or PM_ERR_GENERIC with the reasons held for pmUsageMessage."""
    sts = _get_context_options(context)
    if sts < 0:
        return sts
    o = _opts
    if o.context == _ARCHIVE and o.flags & BOUNDARIES:
        from purepcp.pmapi.errors import PMError, pmErrStr
        from purepcp.pmapi.values import Timestamp

        interval = o.interval_ns or delta * _NSEC
        try:
            _context(context).set_mode(mode, Timestamp.from_ns(o.origin_ns), interval)
        except PMError as exc:
            pmprintf(f"pmSetModeHighRes: {_prog()}: {pmErrStr(exc.code)}\n")
            o.flags |= RUNTIME_ERR
            o.errors += 1
            return exc.code
    return 0


def _context(handle: int) -> Any:
    """The purepcp context of HANDLE (PM_ERR_NOCONTEXT if none is open under it)."""
    from cpmapi import contexts
    from purepcp.pmapi.errors import PM_ERR_NOCONTEXT, PMError

    try:
        return contexts.lookup(handle)
    except KeyError:
        raise PMError(PM_ERR_NOCONTEXT) from None


def _get_context_options(handle: int) -> int:
    """pmGetContextOptions: the reporting zone and the time window, from the bounds of
    the context of HANDLE."""
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.timewindow import new_zone

    o = _opts
    if o.tzflag:
        from purepcp.pmapi.zone import context_zone

        try:
            ctx = _context(handle)
            o.zone = context_zone(ctx)
            if o.flags & STDOUT_TZ:
                where = " from archive" if o.context == _ARCHIVE else ""
                print(f'Note: timezone set to local timezone of host "{_hostname(ctx)}"{where}\n')
        except PMError as exc:
            _complain(f"Cannot set context timezone: {pmErrStr(exc.code)}")
    elif o.timezone is not None:
        try:
            o.zone = new_zone(o.timezone)
        except (PMError, ValueError) as exc:
            reason = pmErrStr(exc.code) if isinstance(exc, PMError) else str(exc)
            _complain(f'Cannot set timezone to "{o.timezone}": {reason}')
        else:
            if o.flags & STDOUT_TZ:
                print(f'Note: timezone set to "TZ={o.timezone}"\n')
    window = (
        any(v is not None for v in (o.start_optarg, o.finish_optarg, o.align_optarg))
        or o.origin_optarg is not None
        or o.flags & BOUNDARIES
    )
    if o.zone is not None:  # (the zone libpcp's pmLocaltime and pmCtime then use)
        from . import zones

        text = zones.context_text(_context(handle)) if o.tzflag else o.timezone
        zones.add(o.zone, text)
    if not o.errors and window:
        _time_window(handle)
    if o.errors:
        if not o.flags & USAGE_ERR:
            o.flags |= RUNTIME_ERR
        return _PM_ERR_GENERIC
    return 0


def _hostname(ctx: Any) -> str:
    archive = getattr(ctx, "archive", None)
    if archive is not None:
        return str(archive.label.hostname)
    return str(getattr(ctx, "hostname", "localhost"))


def _time_window(handle: int) -> None:
    """-S -T -A -O within the source's bounds (an archive's first and last record; now
    and never for a live source), as pmParseHighResTimeWindow sets them."""
    import time

    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.timewindow import TimeParseError, parse_time_window
    from purepcp.pmapi.values import Timestamp

    o = _opts
    if o.context == _ARCHIVE:
        from purepcp.pmapi.options import archive_end

        name = o.archives[0] if o.archives else ""
        try:
            archive = _context(handle).archive
        except PMError as exc:
            _complain(f"Cannot get archive {name} label record: {pmErrStr(exc.code)}")
            return
        first = archive.label.start
        last = archive_end(_prog(), name, archive)
    else:
        first, last = Timestamp.from_ns(time.time_ns()), None
    try:
        window = parse_time_window(
            o.start_optarg,
            o.finish_optarg,
            o.align_optarg,
            o.origin_optarg,
            first,
            last,
            tz=o.zone,
        )
    except TimeParseError as exc:
        pmprintf(f"{_prog()}: invalid time window.\n{exc.errmsg}\n")
        o.errors += 1
        return
    # (an alignment that could not be applied is no error: libpcp drops its warning)
    o.start_ns, o.finish_ns, o.origin_ns = window.start_ns, window.end_ns, window.origin_ns


# --- small conversions cpmapi offers ------------------------------------------------------


@_takes("ii")
def pmtimevalToReal(seconds: int, useconds: int) -> float:
    return seconds + useconds / 1e6


@_takes("ii")
def pmtimespecToReal(seconds: int, nanoseconds: int) -> float:
    return seconds + nanoseconds / 1e9


@_takes("iiiiii")
def pmUnits_int(
    dimSpace: int, dimTime: int, dimCount: int, scaleSpace: int, scaleTime: int, scaleCount: int
) -> int:
    """A pmUnits as the 32-bit int C passes it by value: dimSpace in the top four bits,
    then dimTime ... scaleCount, the pad byte lowest."""
    word = 0
    for nibble in (dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount):
        word = word << 4 | nibble & 0xF
    word <<= 8  # (the pad byte, lowest)
    return word - (1 << 32) if word >= 1 << 31 else word
