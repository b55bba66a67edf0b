"""dbpmda's input: a character source with prompts and echo, and a tokenizer.

PCP's dbpmda reads its commands one character at a time (so it can prompt,
echo with -e and point at errors) and splits them with a flex scanner.  What a
user sees depends on exactly how far that scanner has read when a command is
parsed or refused: the caret of "^ at or near here" sits after the last
character read, and the character that ended a token is not read twice.  This
module reproduces that: `Source` is the character stream (prompt, echo,
.dbpmdarc first, line buffer, line number) and `Lexer` finds the longest
token, reading one character past it exactly when another character could
still have extended it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from purepcp.pmapi.cnumbers import atoi, int32

#: Words that are commands or keywords rather than names (flex tries them first).
KEYWORDS: dict[str, str] = {
    "add": "ADD",
    "all": "ALL",
    "attr": "ATTR",
    "attribute": "ATTR",
    "children": "PMNS_CHILDREN",
    "close": "CLOSE",
    "cluster": "CLUSTER",
    "context": "CTXT",
    "debug": "DBG",
    "delete": "DEL",
    "desc": "DESC",
    "domain": "DOMAIN",
    "dso": "DSO",
    "exit": "QUIT",
    "fetch": "FETCH",
    "getiname": "GETINAME",
    "getdesc": "GETDESC",
    "help": "HELP",
    "indom": "INDOM",
    "inet": "INET",
    "instance": "INSTANCE",
    "instances": "INSTANCES",
    "ipv6": "IPV6",
    "item": "ITEM",
    "label": "LABEL",
    "name": "PMNS_NAME",
    "namespace": "NAMESPACE",
    "none": "NONE",
    "off": "OFF",
    "on": "ON",
    "open": "OPEN",
    "pipe": "PIPE",
    "pmid": "PMNS_PMID",
    "profile": "PROFILE",
    "q": "QUIT",
    "quit": "QUIT",
    "socket": "SOCK",
    "status": "STATUS",
    "store": "STORE",
    "text": "INFO",
    "timer": "TIMER",
    "traverse": "PMNS_TRAVERSE",
    "unix": "UNIX",
    "wait": "WAIT",
    "watch": "WATCH",
}
#: Keywords after which the next word may be a file name (any non-blank characters).
_FNAME_KEYWORDS = frozenset({"dso", "namespace", "pipe", "socket", "watch"})
_PUNCT = {"?": "HELP", "=": "EQUAL", ",": "COMMA", "+": "PLUS"}

_ALPHA = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
_NAME_REST = _ALPHA | _DIGITS | frozenset("_./:-")
_MACRO_REST = _ALPHA | _DIGITS | frozenset("_-")
_BLANKS = frozenset("\r\t ")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind (a keyword's name, NAME, NUMBER, ..., EOL, END), text and value."""

    kind: str
    text: str = ""
    value: Any = None


# -- the scanner's rules ---------------------------------------------------------------
#
# Each rule says, for a candidate prefix S, whether S can still become (or is) a match
# (viable), whether S is a whole match (complete), and whether S could be extended.
# Rules are listed in flex's order: on equal lengths the earlier rule wins.


class _Rule:
    kind = ""

    def state(self, s: str) -> tuple[bool, bool] | None:
        """(complete, extendable) for prefix S, or None when S cannot match."""
        raise NotImplementedError


class _Literal(_Rule):
    def __init__(self, word: str, kind: str) -> None:
        self.word, self.kind = word, kind

    def state(self, s):
        if not self.word.startswith(s):
            return None
        return s == self.word, len(s) < len(self.word)


class _Pattern(_Rule):
    """A prefix-checking rule given as a function from S to (complete, extendable) or None."""

    def __init__(self, kind: str, check: Callable[[str], tuple[bool, bool] | None]) -> None:
        self.kind, self.check = kind, check

    def state(self, s):
        return self.check(s)


def _name(s: str):
    if s[0] not in _ALPHA or not all(c in _NAME_REST for c in s[1:]):
        return None
    return True, True


def _negname(s: str):
    if s[0] != "-":
        return None
    if len(s) == 1:
        return False, True
    return _name(s[1:])


def _macro(s: str):
    if s[0] != "$":
        return None
    if len(s) == 1:
        return False, True
    if s[1] not in _ALPHA or not all(c in _MACRO_REST for c in s[2:]):
        return None
    return True, True


def _hex(s: str):
    if s[0] != "0":
        return None
    if len(s) == 1:
        return False, True
    if s[1] not in "xX" or not all(c in _DIGITS for c in s[2:]):
        return None
    return len(s) > 2, True


def _digits_groups(s: str, groups: int):
    parts = s.split(".")
    if len(parts) > groups or not all(all(c in _DIGITS for c in p) for p in parts):
        return None
    if not parts[0]:
        return None
    complete = len(parts) == groups and all(parts)
    if any(not p for p in parts[:-1]):
        return None
    return complete, True


def _negnumber(s: str):
    if s[0] != "-":
        return None
    if len(s) == 1:
        return False, True
    if not all(c in _DIGITS for c in s[1:]):
        return None
    return True, True


def _quoted(quote: str, closed: bool):
    """A quoted string: closed by QUOTE (a STRING), or cut short by a newline (an error)."""

    def check(s: str):
        if s[0] != quote:
            return None
        body = s[1:]
        if not body:
            return False, True
        end = body[-1]
        inner = body[:-1]
        if any(c in (quote, "\n") for c in inner):
            return None
        if closed and end == quote:
            return (True, False) if inner else None
        if not closed and end == "\n":
            return (True, False) if inner else None
        if end in (quote, "\n"):
            return None
        return False, True

    return check


def _comment(s: str):
    if s[0] != "#":
        return None
    if "\n" in s[1:-1]:
        return None
    if len(s) > 1 and s[-1] == "\n":
        return True, False
    return False, True


def _blanks(s: str):
    return (True, True) if all(c in _BLANKS for c in s) else None


def _fname(s: str):
    return (True, True) if not any(c in "\t \n" for c in s) else None


_RULES: list[_Rule] = [
    *(_Literal(word, kind) for word, kind in KEYWORDS.items()),
    *(_Literal(ch, kind) for ch, kind in _PUNCT.items()),
    _Pattern("NAME", _name),
    _Pattern("NEGNAME", _negname),
    _Pattern("MACRO", _macro),
    _Pattern("HEX", _hex),
    _Pattern("NUMBER", lambda s: _digits_groups(s, 1)),
    _Pattern("NEGNUMBER", _negnumber),
    _Pattern("NUMBER2D", lambda s: _digits_groups(s, 2)),
    _Pattern("NUMBER3D", lambda s: _digits_groups(s, 3)),
    _Pattern("STRING", _quoted('"', True)),
    _Pattern("BADSTRING", _quoted('"', False)),
    _Pattern("STRING", _quoted("'", True)),
    _Pattern("BADSTRING1", _quoted("'", False)),
    _Pattern("COMMENT", _comment),
    _Pattern("BLANKS", _blanks),
    _Literal("\n", "EOL"),
    _Pattern("PATHNAME", _fname),  # only while a file name is expected
    _Pattern("ILLEGAL", lambda s: (True, False) if len(s) == 1 and s != "\n" else None),
]
_PATHNAME_RULE = _RULES[-2]


# -- the character source ---------------------------------------------------------------


class Output:
    """stdout and stderr, flushed as libpcp's line buffering would show them interleaved."""

    def __init__(self, stdout: IO[str], stderr: IO[str]) -> None:
        self.stdout, self.stderr = stdout, stderr

    def out(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stdout.flush()
        self.stderr.write(text)
        self.stderr.flush()


class Source:
    """Command characters, one at a time, as dbpmda's input routine hands them to the scanner.

    Prompts (with -i) are written when a new line starts, characters are echoed
    as read (with -e), and the characters of the current line are kept so an
    error can be pointed at.  An initial .dbpmdarc, if given, is read first with
    echo and prompts on, then the main input.  `readline_input` (a function like
    input()) replaces the stream for a terminal: it gets whole lines with
    editing and history, and echoes nothing.
    """

    def __init__(
        self,
        stream: IO[str] | None,
        output: Output,
        *,
        echo: bool = False,
        interactive: bool = False,
        rcfile: IO[str] | None = None,
        readline_input: Callable[[str], str] | None = None,
    ) -> None:
        self.output = output
        self.stream = stream
        self.readline_input = readline_input
        self.echo = echo
        self.interactive = interactive
        self.prompt = "dbpmda"
        self.configfile: str | None = None
        self.lastc = "\n"
        self.line: list[str] = []
        self.lineno = 0
        self._rc = rcfile
        self._saved: tuple[bool, bool] | None = None
        self._pending_line: str | None = None
        self._pos = 0
        if rcfile is not None:
            self._saved = (echo, interactive)
            self.echo = self.interactive = True
            self.prompt = self.configfile = ".dbpmdarc"

    @property
    def at_eof(self) -> bool:
        """Input is used up (dbpmda's yywrap)."""
        return self.lastc == ""

    @property
    def linepos(self) -> int:
        return len(self.line)

    def getc(self) -> str:
        """The next character ("" at the end of all input)."""
        if self.lastc == "\n":
            if self.interactive and not self._using_readline:
                self.output.out(f"{self.prompt}> ")
            self.lineno += 1
            self.line = []
        while True:
            c = self._raw()
            if c:
                self.line.append(c)
                self.lastc = c
                return c
            self.lastc = ""
            if self._rc is None:
                return ""
            self._end_rc()

    @property
    def _using_readline(self) -> bool:
        return self._rc is None and self.readline_input is not None

    def _end_rc(self) -> None:
        with contextlib.suppress(OSError):
            self._rc.close()  # type: ignore[union-attr]
        self._rc = None
        self.lineno = 1
        self.prompt = "dbpmda"
        self.configfile = None
        self.echo, self.interactive = self._saved or (False, False)
        if self.interactive:
            self.output.out("\n" if self._using_readline else "dbpmda> ")

    def _raw(self) -> str:
        if self._rc is not None:
            return self._from_stream(self._rc)
        if self.readline_input is not None:
            return self._from_readline()
        if self.stream is None:
            return ""
        return self._from_stream(self.stream)

    def _from_stream(self, stream: IO[str]) -> str:
        while True:
            c = stream.read(1)
            if c == "\r":
                continue
            if c and self.echo:
                self.output.out(c)
            return c

    def _from_readline(self) -> str:
        assert self.readline_input is not None
        while self._pending_line is None:
            try:
                text = self.readline_input("dbpmda> " if self.interactive else "")
            except EOFError:
                self.output.out("\n")  # GNU readline ends the prompt's line at end of file
                return ""
            if text:
                self._pending_line = text.replace("\r", "", 1)
                self._pos = 0
        if self._pos < len(self._pending_line):
            c = self._pending_line[self._pos]
            self._pos += 1
            return c
        self._pending_line = None
        return "\n"

    # -- messages that point into the input -------------------------------------------

    def warn(self, message: str) -> None:
        """yywarn: a warning on stderr (naming .dbpmdarc and its line when reading it)."""
        if self.configfile is None:
            self.output.err(f"Warning: {message}\n")
        else:
            self.output.err(f"Warning [{self.configfile}, line {self.lineno}]\n{message}\n")

    def error(self, message: str) -> None:
        """yyerror: skip the rest of the line, show where the error is, then the message."""
        mark = self.linepos
        c = self.lastc
        while c not in ("", "\n"):
            c = self.getc()
        pad = []
        for ch in self.line[:mark]:
            if ch in ("\n", "\0"):
                break
            pad.append("\t" if ch == "\t" else " ")
        self.output.out(" " * (len(self.prompt) + 1) + "".join(pad) + "^ at or near here\n")
        if self.configfile is None:
            self.output.err(f"Error: {message}\nType 'help' for a list of commands.\n")
        else:
            self.output.err(
                f"Error [{self.configfile}, line {self.lineno}]: {message}\n"
                "Type 'help' for a list of commands.\n"
            )

    def rest_of_line(self) -> str:
        """The raw characters after the scanner's look-ahead up to the end of the line.

        This is how dbpmda reads the arguments of `open pipe`: behind the scanner's
        back, so quotes group words and nothing is a token.
        """
        chars = []
        if self.lastc in ("\n", ""):
            return ""
        while True:
            c = self.getc()
            if c in ("\n", ""):
                return "".join(chars)
            chars.append(c)


def split_args(text: str) -> list[str]:
    """dbpmda's argument splitting: blanks separate, '...' or "..." group (quotes dropped)."""
    args: list[str] = []
    word: list[str] = []
    have = False
    quote = ""
    for c in text:
        if quote:
            if c == quote:
                quote = ""
                continue
        elif c in " \t":
            if have:
                args.append("".join(word))
                word, have = [], False
            continue
        elif c in "\"'":
            quote = c
            continue
        word.append(c)
        have = True
    if have:
        args.append("".join(word))
    return args


# -- the scanner -------------------------------------------------------------------------


class Lexer:
    """flex's scanner for dbpmda's commands, reading from a Source on demand.

    Characters the scanner has read but not yet used stay in `pending`, as in
    flex's buffer; errors the scanner itself finds (an illegal character, an
    unterminated string) are reported at once and scanning goes on.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.pending = ""
        self.fname_state = False

    def _rules(self) -> list[_Rule]:
        return _RULES if self.fname_state else [r for r in _RULES if r is not _PATHNAME_RULE]

    def _scan(self) -> tuple[str, str]:
        """(kind, text) of the longest match at the front of the input."""
        rules = self._rules()
        buf = self.pending
        consumed = 0  # characters the automaton has accepted into the current prefix
        while True:
            if consumed:
                states = [r.state(buf[:consumed]) for r in rules]
                if not any(st is not None and st[1] for st in states):
                    break  # no rule can grow this prefix: flex stops without reading on
            if consumed == len(buf):
                c = self.source.getc()
                if not c:
                    break
                buf += c
            candidate = buf[: consumed + 1]
            if any(r.state(candidate) is not None for r in rules):
                consumed += 1
            else:
                break  # the character just read ends the token (it stays pending)
        self.pending = buf
        for length in range(consumed, 0, -1):
            text = buf[:length]
            for rule in rules:
                st = rule.state(text)
                if st is not None and st[0]:
                    return rule.kind, text
        raise AssertionError("the catch-all rule matches any character")

    def next_token(self) -> Token:
        while True:
            if not self.pending:
                c = self.source.getc()
                if not c:
                    return Token("END")
                self.pending = c
            kind, text = self._scan()
            self.pending = self.pending[len(text) :]
            if kind == "BLANKS":
                continue
            if kind == "ILLEGAL":
                self.source.error("Illegal character")
                continue
            if kind in ("BADSTRING", "BADSTRING1"):
                self.source.error('Expected "' if kind == "BADSTRING" else "Expected '")
                continue
            if kind in ("EOL", "COMMENT"):
                return Token("EOL", text)
            if kind == "PATHNAME":
                self.fname_state = False
                return Token("PATHNAME", text, text)
            if text in _FNAME_KEYWORDS and kind == KEYWORDS.get(text):
                self.fname_state = True
            return _token(kind, text)


def _token(kind: str, text: str) -> Token:
    if kind == "HEX":
        return Token("NUMBER", text, int32(int(text[2:], 16)))
    if kind in ("NUMBER", "NEGNUMBER"):
        return Token(kind, text, atoi(text))
    if kind in ("NUMBER2D", "NUMBER3D"):
        return Token(kind, text, tuple(atoi(p) for p in text.split(".")))
    if kind == "STRING":
        return Token(kind, text, text[1:-1])
    if kind in ("NAME", "NEGNAME", "MACRO"):
        return Token(kind, text, text)
    return Token(kind, text)


def stdin_text() -> IO[str]:
    """Standard input as text that passes any bytes through."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin
    import io

    return io.TextIOWrapper(buffer, errors="surrogateescape", newline="")
