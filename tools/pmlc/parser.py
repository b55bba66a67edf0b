"""pmlc's command language (gram.y), one statement at a time.

    stmt     := action metrics EOL | "show" ["loggers"] [host] EOL
              | "connect" ("primary" | N | "port" N | "socket") [host] EOL
              | "disconnect" | "help" | "quit" | "status" | "new" "volume" | "flush" | "sync"
              | "timezone" ("local" | "logger" | STRING) | "sleep" N | "qa" N | (empty)
    action   := "query" | ["log"] ("mandatory" | "advisory") ("on" freq | "off")
              | ["log"] "mandatory" "maybe"
    freq     := ["every"] N unit | "once"
    metrics  := spec | "{" spec ([","] spec)* "}"
    spec     := NAME ["[" inst ([","] inst)* "]"]       host := "@" (NAME | URL | N | STRING)

The parser reads a token only when it must decide, as yacc does, so its messages
come where PCP's come in the input (which -e shows).  A statement's metrics are looked
up as they are read, in the logged host's pmcd (so "query" first checks the connection).
A syntax error is reported and the rest of the line (of the metric list, inside one)
is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from purepcp.pmapi import debug
from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.errors import PM_ERR_NOCONTEXT, pmErrStr
from purepcp.pmapi.pdu import logcontrol as lc

from .client import NO_PID, NO_PORT, PRIMARY_PID
from .lexer import GLOBAL, INSPEC, INSPECLIST, Lexer, Output, Reader, Token
from .metrics import MetricList
from .session import TZ_LOCAL, TZ_LOGGER, TZ_OTHER, Session

_UNITS = {"MSEC": 1, "SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000}


class _Abort(Exception):
    """A syntax error, reported: the statement is dropped."""


@dataclass
class Statement:
    """What one statement asked for (gram.y's globals after yyparse)."""

    kind: str  # the statement's first keyword's token, "" for an empty one
    state: int = 0
    control: int = 0
    logfreq: int = 0
    hostname: str | None = None
    pid: int | None = None  # connect's: the logger named
    port: int | None = None
    number: int = 0  # sleep's, qa's
    tz: tuple[int, str | None] | None = None
    is_local: bool = False
    is_unix: bool = False
    is_socket_path: bool = False
    metrics: MetricList | None = None
    failed: bool = False  # (metric_cnt < 0: the statement is not done)


class Parser:
    """Statements from the Reader, with the Session for what they look up as they go."""

    def __init__(self, reader: Reader, out: Output, session: Session) -> None:
        self.reader = reader
        self.out = out
        self.session = session
        self.lexer = Lexer(reader, self.error)
        self.look: Token | None = None

    # -- messages -------------------------------------------------------------------------

    def _where(self) -> str:
        return f"[<stdin>, line {self.reader.lineno}]\n"

    def warn(self, message: str) -> None:
        self.out.stderr("Warning " + self._where() + (f"{message}\n" if message else ""))

    def error(self, message: str) -> None:
        """yyerror: told, and the rest of the line skipped."""
        self.out.stderr("Error " + self._where() + (f"{message}\n" if message else ""))
        self.reader.skip_line()
        self.look = None  # (a character the scanner looked at stays, as flex's does)
        self.reader.state = GLOBAL

    # -- tokens -----------------------------------------------------------------------------

    def peek(self) -> Token:
        if self.look is None:
            self.look = self.lexer.token()
        return self.look

    def take(self, *kinds: str) -> Token:
        tok = self.peek()
        if tok.kind not in kinds:
            self.syntax()
        self.look = None
        return tok

    def syntax(self) -> None:
        self.error("syntax error")
        raise _Abort

    # -- statements -------------------------------------------------------------------------

    def statement(self) -> Statement | None:
        """The next statement; None at the end of the input (or a statement dropped)."""
        self.reader.state = GLOBAL
        self.look = None
        try:
            return self._statement()
        except _Abort:
            return Statement("")

    def _statement(self) -> Statement | None:
        tok = self.peek()
        kind = tok.kind
        if kind == "END":
            return None
        simple = {"DISCONNECT", "HELP", "QUIT", "STATUS", "SYNC"}
        if kind == "EOL":
            self.look = None
            return Statement("")
        if kind in simple:
            self.look = None
            self.take("EOL")
            return Statement(kind)
        if kind in ("QUERY", "LOG", "MANDATORY", "ADVISORY"):
            return self._log()
        self.look = None
        if kind == "SHOW":
            if self.peek().kind == "LOGGER":
                self.look = None
            st = Statement("SHOW")
            self._hostopt(st)
            self.take("EOL")
            return st
        if kind == "CONNECT":
            st = Statement("CONNECT")
            who = self.take("PRIMARY", "NUMBER", "PORT", "SOCK")
            if who.kind == "PRIMARY":
                st.pid, st.port = PRIMARY_PID, NO_PORT
            elif who.kind == "NUMBER":
                st.pid, st.port = int32(who.value), NO_PORT
            elif who.kind == "PORT":
                st.pid, st.port = NO_PID, int32(self.take("NUMBER").value)
            else:
                st.pid, st.port = NO_PID, NO_PORT
            self._hostopt(st)
            self.take("EOL")
            return st
        if kind == "NEW":
            self.take("VOLUME")
            self.take("EOL")
            return Statement("NEW")
        if kind == "TIMEZONE":
            tz = self.take("LOCAL", "LOGGER", "STRING")
            st = Statement("TIMEZONE")
            st.tz = {"LOCAL": (TZ_LOCAL, None), "LOGGER": (TZ_LOGGER, None)}.get(
                tz.kind, (TZ_OTHER, tz.text)
            )
            self.take("EOL")
            return st
        if kind in ("SLEEP", "QA"):
            number = self.take("NUMBER")
            self.take("EOL")
            return Statement(kind, number=int32(number.value))
        self.syntax()
        return None

    def _hostopt(self, st: Statement) -> None:
        if self.peek().kind != "AT":
            return
        self.look = None
        tok = self.take("NAME", "HOSTNAME", "URL", "NUMBER", "STRING")
        st.hostname = str(int32(tok.value)) if tok.kind == "NUMBER" else tok.text
        if tok.kind == "URL":
            prefix, _, rest = tok.text.partition(":")
            st.is_local = prefix == "local"
            st.is_unix = prefix == "unix"
            st.is_socket_path = bool(rest.lstrip("/"))

    def _log(self) -> Statement:
        st = Statement("LOG")
        tok = self.take("QUERY", "LOG", "MANDATORY", "ADVISORY")
        if tok.kind == "QUERY":
            st.state = lc.PM_LOG_ENQUIRE
        else:
            if tok.kind == "LOG":
                tok = self.take("MANDATORY", "ADVISORY")
            mandatory = tok.kind == "MANDATORY"
            st.control = lc.PM_LOG_MANDATORY if mandatory else lc.PM_LOG_ADVISORY
            what = self.take("ON", "OFF", "MAYBE") if mandatory else self.take("ON", "OFF")
            if what.kind == "ON":
                st.state = lc.PM_LOG_ON
                st.logfreq = self._frequency()
            elif what.kind == "OFF":
                st.state = lc.PM_LOG_OFF
            else:
                st.state = lc.PM_LOG_MAYBE
        # (yacc's action after the verb: the connection, then the metrics)
        self.reader.state |= INSPEC
        session = self.session
        if not session.connected():
            st.failed = True
            return st
        if session.connect_pmcd() < 0:
            self.error("")
            st.failed = True
            return st
        metrics = MetricList(session.ctx, self.out)
        st.metrics = metrics
        if self.peek().kind == "LBRACE":
            self.look = None
            self.reader.state |= INSPECLIST
            self._spec(metrics)
            while self.peek().kind != "RBRACE":
                if self.peek().kind == "COMMA":
                    self.look = None
                self._spec(metrics)
            self.look = None
        else:
            self._spec(metrics)
        self.reader.state = GLOBAL
        if metrics.status < 0:
            if session.link is not None:
                self.out.stderr("Logging statement ignored due to error(s)\n")
            st.failed = True
        elif debug.on("appl0"):
            self.out.stdout(metrics.dump())
        self.take("EOL")
        return st

    def _frequency(self) -> int:
        tok = self.take("EVERY", "NUMBER", "ONCE")
        if tok.kind == "ONCE":
            return -1
        if tok.kind == "EVERY":
            tok = self.take("NUMBER")
        unit = self.take("MSEC", "SECOND", "MINUTE", "HOUR")
        return int32(int32(tok.value) * _UNITS[unit.kind])

    def _spec(self, metrics: MetricList) -> None:
        name = self.take("NAME").text
        metrics.begin_group()
        if metrics.ctx is None:
            code = metrics.status = PM_ERR_NOCONTEXT
        else:
            code = metrics.add_name(name)
        if code < 0 or metrics.status == 0:
            self.warn(f'Problem with lookup for metric "{name}" ...')
            if code < 0:
                self.out.stderr(f"Reason: {pmErrStr(code)}\n")
        if self.peek().kind == "LSQB":
            self.look = None
            self._instance(metrics)
            while self.peek().kind != "RSQB":
                if self.peek().kind == "COMMA":
                    self.look = None
                self._instance(metrics)
            self.look = None
        metrics.end_group()

    def _instance(self, metrics: MetricList) -> None:
        tok = self.take("NAME", "NUMBER", "STRING")
        if tok.kind == "NUMBER":
            metrics.add_instance(None, int32(tok.value))
        else:
            metrics.add_instance(tok.text, 0)
