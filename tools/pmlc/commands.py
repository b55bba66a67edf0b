"""What each pmlc statement does once parsed (pmlc.c's switch), one small function a
statement, in a table."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from purepcp.pmapi.pdu import logcontrol as lc

from .client import NO_PID, NO_PORT, PRIMARY_PID, PRIMARY_PORT
from .lexer import Output
from .parser import Statement
from .session import MENU, TZ_LOGGER, Session


@dataclass
class Loop:
    """The read-do loop's state: the session, the -h host, and the logger named last."""

    session: Session
    out: Output
    host: str
    pid: int
    port: int
    primary: bool


class Quit(Exception):
    """The quit statement: pmlc ends, status 0."""


def run(st: Statement, loop: Loop) -> None:
    """Do statement ST (Quit if it ends pmlc)."""
    handler = HANDLERS.get(st.kind)
    if handler is not None:
        handler(st, loop)


def tell_connect(loop: Loop, code: int, host: str, socket_path: bool, at_start: bool) -> None:
    """What pmlc says of a connection made (stdout, at start-up only) or not (stderr)."""
    from purepcp.pmapi.errors import pmErrStr

    out, pid, port = loop.out, loop.pid, loop.port
    if code < 0:
        if loop.primary:
            lead = f"Unable to connect to primary pmlogger at {host}: "
        elif socket_path:
            the = "the " if at_start else ""
            lead = f"Unable to connect to pmlogger via {the}local socket at {host}: "
        elif port != NO_PORT:
            lead = f"Unable to connect to pmlogger on port {port} at {host}: "
        else:
            lead = f"Unable to connect to pmlogger pid {pid} at {host}: "
        out.stderr(lead)
        if loop.session.still_connected(code):
            out.stderr(f"{pmErrStr(code)}\n")
        return
    if not at_start:
        return
    if loop.primary:
        out.stdout(f"Connected to primary pmlogger at {host}\n")
    elif socket_path:
        out.stdout(f"Connected to pmlogger via local socket at {host}\n")
    elif port != NO_PORT:
        out.stdout(f"Connected to pmlogger on port {port} at {host}\n")
    else:
        out.stdout(f"Connected to pmlogger pid {pid} at {host}\n")


def _show(st: Statement, loop: Loop) -> None:
    loop.session.show(st.hostname or loop.host)


def _url_refused(loop: Loop, message: str) -> None:
    loop.out.stderr(message)
    if loop.session.still_connected(0):
        loop.out.stderr("\n")


def _connect(st: Statement, loop: Loop) -> None:
    assert st.pid is not None and st.port is not None
    if st.is_unix and st.pid == NO_PID and not st.is_socket_path:
        _url_refused(loop, "The 'unix:' url requires either 'primary', a pid or a socket path")
        return
    if st.is_local and st.pid == NO_PID and st.port == NO_PORT and not st.is_socket_path:
        _url_refused(
            loop, "The 'local:' url requires either 'primary', a pid, a port or a socket path"
        )
        return
    host = st.hostname or loop.host
    loop.primary = st.port == PRIMARY_PORT or st.pid == PRIMARY_PID
    code, loop.pid, loop.port = loop.session.connect(host, st.pid, st.port)
    if code < 0:
        tell_connect(loop, code, host, st.is_socket_path, False)
    elif loop.session.zone.kind == TZ_LOGGER:  # (the logger may be in another zone)
        loop.session.zone.changed = True


def _disconnect(st: Statement, loop: Loop) -> None:
    loop.session.disconnect()
    time.sleep(0.0001)  # (pmlogger's moment to notice, as pmlc's)


def _log(st: Statement, loop: Loop) -> None:
    assert st.metrics is not None
    if st.state == lc.PM_LOG_ENQUIRE:
        loop.session.query(st.metrics)
        return
    freq = 0 if st.logfreq == -1 else st.logfreq
    if st.state == lc.PM_LOG_ON:
        if freq < 0:
            loop.out.stderr(f"Logging delta ({freq} msec) must be positive\n")
            return
        if freq > lc.PMLC_MAX_DELTA:
            loop.out.stderr(
                f"Logging delta ({freq} msec) cannot be bigger than {lc.PMLC_MAX_DELTA} msec\n"
            )
            return
    loop.session.log(st.metrics, st.control, st.state, freq)


def _quit(st: Statement, loop: Loop) -> None:
    loop.out.stdout("Goodbye\n")
    loop.session.disconnect()
    raise Quit


def _timezone(st: Statement, loop: Loop) -> None:
    assert st.tz is not None
    loop.session.zone.kind, loop.session.zone.tz = st.tz
    loop.session.zone.changed = True


def _qa(st: Statement, loop: Loop) -> None:
    if st.number == 0:
        loop.out.stderr("QA Test Case deactivated\n")
    else:
        loop.out.stderr(f"QA Test Case #{st.number} activated\n")
    loop.session.qa(st.number)


HANDLERS: dict[str, Callable[[Statement, Loop], None]] = {
    "SHOW": _show,
    "CONNECT": _connect,
    "DISCONNECT": _disconnect,
    "HELP": lambda st, loop: loop.out.stdout(MENU + "\n"),
    "LOG": _log,
    "QUIT": _quit,
    "STATUS": lambda st, loop: loop.session.status(loop.pid, loop.primary),
    "NEW": lambda st, loop: loop.session.new_volume(),
    "TIMEZONE": _timezone,
    "SYNC": lambda st, loop: loop.session.sync(),
    "SLEEP": lambda st, loop: loop.session.sleep(st.number),
    "QA": _qa,
}
