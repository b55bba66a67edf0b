"""pmlc's command line and its read-do loop (pmlc.c's main).

`pmlc --help` and a usage error import nothing beyond the option parser.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from purepcp.pmapi.options import DEBUG, HELP, NAMESPACE, Opt, Parsed, Tool

ECHO = Opt("e", "echo", None, "echo input")
HOST = Opt("h", "host", "HOST", "connect to pmlogger using host specification")
INTERACTIVE = Opt("i", "interactive", None, "be interactive and prompt")
PMNS = Opt("n", "namespace", "FILE", "use an alternative PMNS")
PRIMARY = Opt("P", "primary", None, "connect to primary pmlogger")
PORT = Opt("p", "port", "N", "connect to pmlogger on this TCP/IP port")
TIMEZONE = Opt("Z", "timezone", "TZ", "set reporting timezone")
LOGZONE = Opt("z", "logzone", None, "set reporting timezone to local time for pmlogger")
HELP_PMLC = Opt("?", "help", None, "show this usage message and exit")

TOOL = Tool(
    "pmlc",
    "[options] [pid]",
    [
        ("Options", [ECHO, HOST, INTERACTIVE, PMNS, PRIMARY, PORT, TIMEZONE, LOGZONE, HELP_PMLC]),
        ("", [DEBUG]),
    ],
)
assert NAMESPACE.short == PMNS.short and HELP.short == HELP_PMLC.short

TITLE = "Performance Co-Pilot Logger Control (pmlc), Version {}\n\n{}\n"


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


class _Target:
    """Which logger the command line names (pmlc.c's pid, port, host and flags)."""

    def __init__(self) -> None:
        from .client import NO_PID, NO_PORT

        self.pid = NO_PID
        self.port = NO_PORT
        self.host: str | None = None
        self.is_local = self.is_unix = self.is_socket_path = False
        self.errors: list[str] = []


def _host_flags(host: str) -> tuple[bool, bool, bool]:
    """(local:, unix:, a socket path given) for a host specification."""
    prefix, colon, rest = host.partition(":")
    if not colon:
        return False, False, False
    local, unix = prefix == "local", prefix == "unix"
    return local, unix, (local or unix) and bool(rest.lstrip("/"))


def _target(parsed: Parsed) -> _Target:
    from purepcp.pmapi.cnumbers import int32, strtol

    from .client import NO_PID, NO_PORT, PRIMARY_PID, PRIMARY_PORT

    t = _Target()
    many = "pmlc: at most one of -P, -p, unix socket, or PID may be specified"
    for opt, value in parsed.pairs:
        if opt is HOST:
            t.host = value
            t.is_local, t.is_unix, t.is_socket_path = _host_flags(value)
        elif opt is PRIMARY:
            if t.port != NO_PORT or (t.is_unix and t.is_socket_path):
                t.errors.append(many)
            else:
                t.port = PRIMARY_PORT
        elif opt is PORT:
            if t.port != NO_PORT or t.is_unix:
                t.errors.append(many)
            else:
                scan = strtol(value)
                t.port = int32(int(scan.value))
                if scan.end != len(value) or t.port <= PRIMARY_PORT:
                    t.errors.append(f"pmlc: port must be numeric and greater than {PRIMARY_PORT}")
    ops = parsed.operands
    if len(ops) > 1:
        t.errors.append("")
    elif len(ops) == 1:
        if t.port != NO_PORT or (t.is_unix and t.is_socket_path):
            t.errors.append(many)
        else:
            scan = strtol(ops[0])
            t.pid = int32(int(scan.value))
            if scan.end != len(ops[0]) or t.pid <= PRIMARY_PID:
                t.errors.append(
                    f"pmlc: PID must be a numeric process ID and greater than {PRIMARY_PID}"
                )
    if not t.errors and t.host and t.pid == NO_PID and t.port == NO_PORT and not t.is_socket_path:
        t.errors.append("pmlc: -h may not be used without -P or -p or a socket path or a PID")
    return t


def _run(argv: list[str]) -> int:
    from purepcp.pmapi import debug
    from purepcp.pmapi.options import debug_spec_ok

    parsed = TOOL.parse(argv)
    if any(opt is HELP_PMLC for opt, _ in parsed.pairs):
        sys.stderr.write(TOOL.usage())
        return 1
    target = _target(parsed)
    for opt, value in parsed.pairs:
        if opt is DEBUG and not debug_spec_ok(value):
            target.errors.insert(0, f"pmlc: unrecognized debug options specification ({value})")
        elif opt is DEBUG:
            debug.set_options(value)
    if target.errors:
        sys.stdout.flush()
        for line in target.errors:
            if line:
                sys.stderr.write(line + "\n")
        sys.stderr.write(TOOL.usage())
        return 1
    return _session(parsed, target)


def _session(parsed: Parsed, target: _Target) -> int:
    """Connect (if the command line names a logger), then read and do statements."""
    from .client import NO_PID, NO_PORT, PRIMARY_PID, PRIMARY_PORT
    from .commands import Loop, Quit, run, tell_connect
    from .lexer import Output, Reader
    from .parser import Parser
    from .session import MENU, TZ_LOGGER, TZ_OTHER, Session

    out = Output()
    interactive = "interactive" in parsed or _isatty(sys.stdin)
    session = Session(out, lambda message: parser.error(message), TOOL.namespace(parsed))
    if "logzone" in parsed:
        session.zone.kind, session.zone.changed = TZ_LOGGER, True
    elif "timezone" in parsed:
        session.zone.kind, session.zone.tz = TZ_OTHER, str(parsed.get("timezone"))
        session.zone.changed = True
    host = target.host or "local:"
    loop = Loop(session, out, host, target.pid, target.port, False)
    loop.primary = loop.port == PRIMARY_PORT or loop.pid == PRIMARY_PID
    named = loop.pid != NO_PID or loop.port != NO_PORT or target.is_socket_path
    code = 0
    if named:
        code, loop.pid, loop.port = session.connect(host, loop.pid, loop.port)
    if interactive:
        from purepcp.pmapi import PCP_COMPAT_VERSION

        out.stdout(TITLE.format(PCP_COMPAT_VERSION, MENU))
    if named:
        tell_connect(loop, code, host, target.is_socket_path, True)
    reader = Reader(sys.stdin, out, "echo" in parsed, interactive)
    parser = Parser(reader, out, session)
    while True:
        st = parser.statement()
        if reader.at_end:  # (yywrap: a statement the input ended in is not done)
            if interactive:
                out.stdout("\n")
            break
        if st is None or st.failed or not st.kind:
            continue
        try:
            run(st, loop)
        except Quit:
            return 0
    session.disconnect()
    return 0


def _isatty(stream: object) -> bool:
    try:
        return os.isatty(stream.fileno())  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False
