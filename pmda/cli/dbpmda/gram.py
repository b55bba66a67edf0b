"""dbpmda's command grammar: one statement per parse, as PCP's yacc grammar accepts them.

The parser reads tokens only when the grammar needs one more to decide, and
runs each rule's side effect (resolving a metric name, warning about an
unknown PMID, changing the profile, opening an agent) at the point where
yacc would reduce that rule.  That keeps the order of warnings and errors, and
where the error caret points, the same as PCP's dbpmda.  Errors abort the
statement with `ParseAbort` after yyerror's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.ids import pmIDStr

from .lex import Lexer, Source, Token

_METRIC_START = frozenset({"NUMBER", "NUMBER2D", "NUMBER3D", "NAME"})
_INDOM_START = frozenset({"NUMBER", "NEGNUMBER", "NUMBER2D"})
_FNAME_START = frozenset({"NAME", "PATHNAME"})
_FLAG_WORDS = {"FETCH": "fetch", "PROFILE": "profile", "CTXT": "context", "INDOM": "indom"}
_FLAG_WORDS["ATTR"] = "attr"
#: Commands `help X` explains, by keyword.
HELP_TOPICS = frozenset(
    {
        "ATTR",
        "CLOSE",
        "DBG",
        "DESC",
        "FETCH",
        "GETDESC",
        "GETINAME",
        "INFO",
        "INSTANCE",
        "LABEL",
        "NAMESPACE",
        "OPEN",
        "PMNS_CHILDREN",
        "PMNS_NAME",
        "PMNS_PMID",
        "PMNS_TRAVERSE",
        "PROFILE",
        "QUIT",
        "STATUS",
        "STORE",
        "TIMER",
        "WAIT",
        "WATCH",
    }
)
_WARN_SIZE = 79  # dbpmda formats these messages into an 80-byte buffer


class ParseAbort(Exception):
    """The statement was refused (already reported)."""


@dataclass
class Stmt:
    """A parsed statement: its type (a keyword's name, HELP or EOL) and parameters."""

    type: str
    number: int = 0
    full: bool = False  # for HELP: the full text, not just the usage
    topic: str | None = None  # for HELP: which command (None: all of them)
    name: str | None = None
    pmid: int = 0
    indom: int = 0
    pmids: list[int] = field(default_factory=list)


class Session(Protocol):
    """What the grammar needs from dbpmda: name lookups and the actions rules run."""

    def lookup_name(self, name: str) -> int: ...
    def pmid_known(self, pmid: int) -> bool: ...
    def fix_dynamic_pmid(self, name: str, pmid: int) -> int: ...
    def action(self, what: str, *args: Any) -> None: ...


def pmid_of(domain: int, cluster: int, item: int) -> int:
    """A PMID from parts stored into C bit-fields (so out-of-range parts are truncated)."""
    return (domain & 0x1FF) << 22 | (cluster & 0xFFF) << 10 | item & 0x3FF


def indom_of(domain: int, serial: int) -> int:
    return (domain & 0x1FF) << 22 | serial & 0x3FFFFF


# Attribute names and codes (PCP_ATTR_*), as libpcp maps them both ways.
ATTR_BY_NAME = {
    "compress": 3,
    "userauth": 4,
    "authorise": 4,
    "authorize": 4,
    "user": 5,
    "username": 5,
    "realm": 9,
    "authmeth": 8,
    "method": 8,
    "pass": 7,
    "password": 7,
    "unix": 10,
    "unixsock": 10,
    "local": 13,
    "uid": 11,
    "userid": 11,
    "gid": 12,
    "groupid": 12,
    "pid": 14,
    "processid": 14,
    "secure": 2,
    "container": 15,
    "exclusive": 16,
}
ATTR_NAMES = {
    1: "protocol",
    2: "secure",
    3: "compress",
    4: "userauth",
    5: "username",
    6: "authname",
    7: "password",
    8: "method",
    9: "realm",
    10: "unixsock",
    11: "userid",
    12: "groupid",
    13: "local",
    14: "processid",
    15: "container",
    16: "exclusive",
}


class Parser:
    """Parses one statement at a time from a Lexer; see the module docstring."""

    def __init__(self, lexer: Lexer, session: Session) -> None:
        self.lexer = lexer
        self.source: Source = lexer.source
        self.session = session
        self._la: Token | None = None

    # -- token handling ---------------------------------------------------------------

    def peek(self) -> Token:
        if self._la is None:
            self._la = self.lexer.next_token()
        return self._la

    def take(self) -> Token:
        token = self.peek()
        self._la = None
        return token

    def expect(self, *kinds: str) -> Token:
        if self.peek().kind not in kinds:
            self.syntax_error()
        return self.take()

    def syntax_error(self) -> None:
        self.fail("syntax error")

    def fail(self, message: str) -> None:
        self._la = None  # yacc drops the look-ahead when it gives up
        self.source.error(message)
        raise ParseAbort

    def eol(self) -> None:
        self.expect("EOL")

    # -- statements -------------------------------------------------------------------

    def parse(self) -> Stmt | None:
        """The next statement; None at the end of input; ParseAbort if refused."""
        self._la = None
        token = self.peek()
        kind = token.kind
        if kind == "END":
            return None
        if kind == "EOL":
            self.take()
            return Stmt("EOL")
        handler = _STATEMENTS.get(kind)
        if handler is None:
            if self.source.at_eof:  # the last line had no newline: yacc accepts quietly
                return None
            self.fail("Unrecognized command")
        self.take()
        return handler(self)

    def _usage(self, topic: str) -> Stmt:
        self.take()
        return Stmt("HELP", topic=topic)

    def _open(self) -> Stmt:
        token = self.peek()
        if token.kind == "EOL":
            return self._usage("OPEN")
        if token.kind == "DSO":
            self.take()
            spec = self.fname(relative=False)
            init = None
            domain = None
            if self.peek().kind == "NAME":
                init = self.take().value
            if self.peek().kind == "NUMBER":
                domain = self.take().value
            self.eol()
            self.session.action("open_dso", spec, init, domain)
            return Stmt("OPEN")
        if token.kind == "PIPE":
            self.take()
            path = self.fname()
            argv = [path, *_args(self.source.rest_of_line())]
            self.session.action("open_pipe", argv)
            return Stmt("OPEN")
        if token.kind == "SOCK":
            self.take()
            kind = self.peek().kind
            if kind in _FNAME_START:
                self.session.action("open_unix", self.fname())
            elif kind == "UNIX":
                self.take()
                self.session.action("open_unix", self.fname())
            elif kind in ("INET", "IPV6"):
                self.take()
                port = self.servport()
                self.session.action("open_inet", port, kind == "IPV6")
            else:
                self.syntax_error()
            return Stmt("OPEN")
        self.syntax_error()
        raise AssertionError

    def _close(self) -> Stmt:
        self.eol()
        return Stmt("CLOSE")

    def _desc(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("DESC")
        pmid = self.metric()
        self.eol()
        return Stmt("DESC", pmid=pmid)

    def _fetch(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("FETCH")
        pmids = [self.metric()]
        while True:
            kind = self.peek().kind
            if kind == "EOL":
                self.take()
                return Stmt("FETCH", pmids=pmids)
            if kind == "COMMA":
                self.take()
                if self.peek().kind not in _METRIC_START:
                    self.syntax_error()
            elif kind not in _METRIC_START:
                self.syntax_error()
            pmids.append(self.metric())

    def _store(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("STORE")
        pmid = self.metric()
        value = self.expect("STRING").value
        self.eol()
        return Stmt("STORE", pmid=pmid, name=value)

    def _info(self) -> Stmt:
        kind = self.peek().kind
        if kind == "EOL":
            return self._usage("INFO")
        if kind == "INDOM":
            self.take()
            indom = self.indom()
            self.eol()
            return Stmt("INFO", number=8, indom=indom)  # PM_TEXT_INDOM
        pmid = self.metric()
        self.eol()
        return Stmt("INFO", number=4, pmid=pmid)  # PM_TEXT_PMID

    def _instance(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("INSTANCE")
        indom = self.indom()
        token = self.take()
        if token.kind == "EOL":
            return Stmt("INSTANCE", indom=indom, number=-1)
        if token.kind == "NUMBER":
            self.eol()
            return Stmt("INSTANCE", indom=indom, number=token.value)
        if token.kind in ("STRING", "NAME"):
            self.eol()
            return Stmt("INSTANCE", indom=indom, number=-1, name=token.value)
        self._la = token
        self.syntax_error()
        raise AssertionError

    def _profile(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("PROFILE")
        indom = self.indom()
        what = self.expect("ALL", "NONE", "ADD", "DEL").kind
        inst = None
        if what in ("ADD", "DEL"):
            inst = self.expect("NUMBER").value
        self.eol()
        try:
            self.session.action("profile", indom, what, inst)
        except PMError as exc:
            self.fail(pmErrStr(exc.code))
        return Stmt("EOL")

    def _watch(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("WATCH")
        path = self.fname()
        self.eol()
        self.session.action("watch", path)
        return Stmt("WATCH")

    def _pmns_name(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("PMNS_NAME")
        d, c, i = self.expect("NUMBER3D").value
        self.eol()
        return Stmt("PMNS_NAME", pmid=pmid_of(d, c, i))

    def _named(self, kind: str) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage(kind)
        name = self.expect("NAME").value
        self.eol()
        return Stmt(kind, name=name)

    def _pmns_pmid(self) -> Stmt:
        return self._named("PMNS_PMID")

    def _pmns_children(self) -> Stmt:
        return self._named("PMNS_CHILDREN")

    def _pmns_traverse(self) -> Stmt:
        return self._named("PMNS_TRAVERSE")

    def _namespace(self) -> Stmt:
        path = self.fname()
        self.eol()
        return Stmt("NAMESPACE", name=path)

    def _attr(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("ATTR")
        attr = self.attribute()
        value = None
        if self.peek().kind == "STRING":
            value = self.take().value
        self.eol()
        return Stmt("ATTR", number=attr, name=value)

    def _label(self) -> Stmt:
        token = self.take()
        kind = token.kind
        if kind == "EOL":
            return Stmt("HELP", topic="LABEL")
        if kind in ("CTXT", "DOMAIN"):
            self.eol()
            return Stmt("LABEL", number=1 if kind == "CTXT" else 2)
        if kind in ("INDOM", "INSTANCES"):
            indom = self.indom()
            self.eol()
            return Stmt("LABEL", number=4 if kind == "INDOM" else 32, indom=indom)
        if kind == "CLUSTER":
            token = self.expect("NUMBER", "NUMBER2D")
            if token.kind == "NUMBER":
                pmid = uint32(token.value)
            else:
                pmid = pmid_of(token.value[0], token.value[1], 0)
            self.eol()
            return Stmt("LABEL", number=8, pmid=pmid)
        if kind == "ITEM":
            if self.peek().kind not in _METRIC_START:
                self.syntax_error()
            pmid = self.metric()
            self.eol()
            return Stmt("LABEL", number=16, pmid=pmid)
        self._la = token
        self.syntax_error()
        raise AssertionError

    def _help(self) -> Stmt:
        token = self.take()
        if token.kind == "EOL":
            return Stmt("HELP", full=True)
        if token.kind in HELP_TOPICS:
            self.eol()
            return Stmt("HELP", full=True, topic=token.kind)
        self._la = token
        self.syntax_error()
        raise AssertionError

    def _quit(self) -> Stmt:
        self.eol()
        return Stmt("QUIT")

    def _dbg(self) -> Stmt:
        kind = self.peek().kind
        if kind == "EOL":
            return self._usage("DBG")
        if kind in ("ALL", "NONE"):
            self.take()
            self.eol()
            self.session.action("debug_all", kind == "ALL")
            return Stmt("DBG")
        self.debug_item()
        while True:
            kind = self.peek().kind
            if kind == "EOL":
                self.take()
                return Stmt("DBG")
            if kind == "COMMA":
                self.take()
            self.debug_item()

    def _status(self) -> Stmt:
        self.eol()
        return Stmt("STATUS")

    def _switch(self, topic: str, what: str) -> Stmt:
        kind = self.peek().kind
        if kind == "EOL":
            return self._usage(topic)
        self.expect("ON", "OFF")
        self.eol()
        self.session.action(what, kind == "ON")
        return Stmt("EOL")

    def _timer(self) -> Stmt:
        return self._switch("TIMER", "timer")

    def _getdesc(self) -> Stmt:
        return self._switch("GETDESC", "getdesc")

    def _getiname(self) -> Stmt:
        return self._switch("GETINAME", "getiname")

    def _wait(self) -> Stmt:
        if self.peek().kind == "EOL":
            return self._usage("WAIT")
        seconds = self.expect("NUMBER").value
        self.eol()
        self.session.action("wait", seconds)
        return Stmt("EOL")

    # -- non-terminals ---------------------------------------------------------------

    def fname(self, relative: bool = True) -> str:
        """A file name; a plain word is relative to the current directory ("./word")."""
        token = self.expect(*_FNAME_START)
        text = token.value
        if token.kind == "NAME" and relative and not _absolute(text):
            return "./" + text
        return text

    def metric(self) -> int:
        """A metric: a name resolved in the namespace, or a PMID N, C.I or D.C.I."""
        token = self.take()
        if token.kind == "NAME":
            try:
                pmid = self.session.lookup_name(token.value)
                pmid = self.session.fix_dynamic_pmid(token.value, pmid)
            except PMError as exc:
                self.fail(pmErrStr(exc.code))
            return pmid
        if token.kind == "NUMBER":
            pmid = uint32(token.value)
        elif token.kind == "NUMBER2D":
            pmid = pmid_of(0, token.value[0], token.value[1])
        elif token.kind == "NUMBER3D":
            pmid = pmid_of(*token.value)
        else:
            self._la = token
            self.syntax_error()
            raise AssertionError
        if not self.session.pmid_known(pmid):
            self.source.warn(f"PMID ({pmIDStr(pmid)}) is not defined in the PMNS"[:_WARN_SIZE])
        return pmid

    def indom(self) -> int:
        token = self.expect(*_INDOM_START)
        if token.kind == "NUMBER2D":
            return indom_of(*token.value)
        return uint32(token.value)

    def attribute(self) -> int:
        token = self.expect("NUMBER", "STRING")
        if token.kind == "NUMBER":
            if token.value not in ATTR_NAMES:
                self.fail(f"Attribute ({token.value}) is not recognised"[:_WARN_SIZE])
            return token.value
        code = ATTR_BY_NAME.get(token.value)
        if code is None:
            self.fail(f"Attribute ({token.value}) is not recognised"[:_WARN_SIZE])
        return code

    def servport(self) -> int:
        import socket

        token = self.expect("NUMBER", "STRING")
        if token.kind == "NUMBER":
            return token.value
        try:
            port = socket.getservbyname(token.value)
        except OSError:
            self.fail(f"Failed to map ({token.value}) to a port number"[:_WARN_SIZE])
        self.source.warn(f"Mapped {token.value} to port number {port}"[:_WARN_SIZE])
        return port

    def debug_item(self) -> None:
        token = self.take()
        if token.kind == "NUMBER":
            spec = str(token.value)
        elif token.kind in ("NAME", "NEGNAME"):
            spec = token.value
        elif token.kind in _FLAG_WORDS:
            spec = _FLAG_WORDS[token.kind]
        else:
            self._la = token
            self.syntax_error()
            raise AssertionError
        try:
            self.session.action("debug", spec)
        except PMError:
            self.fail(f"Bad debug flag ({spec})"[:_WARN_SIZE])


_STATEMENTS = {
    kind: getattr(Parser, f"_{kind.lower()}")
    for kind in (
        "OPEN",
        "CLOSE",
        "DESC",
        "FETCH",
        "STORE",
        "INFO",
        "INSTANCE",
        "PROFILE",
        "WATCH",
        "PMNS_NAME",
        "PMNS_PMID",
        "PMNS_CHILDREN",
        "PMNS_TRAVERSE",
        "NAMESPACE",
        "ATTR",
        "LABEL",
        "HELP",
        "QUIT",
        "DBG",
        "STATUS",
        "TIMER",
        "GETDESC",
        "GETINAME",
        "WAIT",
    )
}


def _absolute(path: str) -> bool:
    return path.startswith("/") or (len(path) > 4 and path[1] == ":" and path[2] == "/")


def _args(text: str) -> list[str]:
    from .lex import split_args

    return split_args(text)


__all__ = [
    "ATTR_BY_NAME",
    "ATTR_NAMES",
    "HELP_TOPICS",
    "ParseAbort",
    "Parser",
    "Stmt",
    "indom_of",
    "pmid_of",
]
