"""pmlc's input, a character at a time, and its tokens.

PCP's pmlc reads its commands one character at a time (so a prompt comes when a line
is about to be read, -e echoes each character as it is read, and a message about a
command comes out just where the reading has got to), and its flex scanner reads one
character past a token that could go on.  The Reader and the Lexer keep that timing:
the Lexer holds back at most the one character it looked at and did not use; the
Reader's `skip_line` (yyerror's skipAhead) reads on past it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TextIO

#: the parser's state, as the scanner and the prompt see it (pmlc.h)
GLOBAL, INSPEC, INSPECLIST = 0, 1, 2

EOF = ""

#: keywords (flex's rules, in their order), each a pattern and its token
KEYWORDS: tuple[tuple[str, str], ...] = (
    ("milliseconds?", "MSEC"),
    ("disconnect", "DISCONNECT"),
    ("mandatory", "MANDATORY"),
    ("advisory", "ADVISORY"),
    ("timezone", "TIMEZONE"),
    ("loggers?", "LOGGER"),
    ("minutes?", "MINUTE"),
    ("seconds?", "SECOND"),
    ("connect", "CONNECT"),
    ("primary", "PRIMARY"),
    ("status", "STATUS"),
    ("volume", "VOLUME"),
    ("flush", "SYNC"),
    ("sleep", "SLEEP"),
    ("every", "EVERY"),
    ("local", "LOCAL"),
    ("maybe", "MAYBE"),
    ("query", "QUERY"),
    ("hours?", "HOUR"),
    ("msecs?", "MSEC"),
    ("mins?", "MINUTE"),
    ("secs?", "SECOND"),
    ("help", "HELP"),
    ("once", "ONCE"),
    ("port", "PORT"),
    ("quit", "QUIT"),
    ("socket", "SOCK"),
    ("show", "SHOW"),
    ("sync", "SYNC"),
    ("log", "LOG"),
    ("new", "NEW"),
    ("off", "OFF"),
    ("on", "ON"),
    ("qa", "QA"),
    ("at", "AT"),
    ("h", "HELP"),
    ("q", "QUIT"),
)
_KEYWORD = [(re.compile(p), kind) for p, kind in KEYWORDS]
_URL = re.compile(r"(?:unix|local):[A-Za-z0-9_.\-/]*\*?")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_HOSTNAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")
_SINGLE = {"[": "LSQB", "]": "RSQB", ",": "COMMA", "{": "LBRACE", "}": "RBRACE", "@": "AT"}
#: characters that may go on a word, a number or a URL (the scanner reads until one isn't)
_WORDISH = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/:*")


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, HOSTNAME, URL, STRING, NUMBER, EOL, END, a keyword, punctuation
    text: str = ""
    value: int = 0


class Reader:
    """stdin a character at a time: a prompt before each line (-i), each character
    echoed (-e), lines counted as pmlc counts them."""

    def __init__(self, stream: TextIO, out: Output, echo: bool, prompt: bool) -> None:
        self.stream = stream
        self.out = out
        self.echo = echo
        self.prompt = prompt
        self.last = "\n"  # (pmlc's "in": the last character read)
        self.lineno = 0
        self.state = GLOBAL

    def getc(self) -> str:
        if self.last == "\n":
            self.lineno += 1
            if self.prompt:
                self.out.stdout("pmlc> " if self.state == GLOBAL else "? ")
        if self.last == EOF:
            return EOF
        ch = self.stream.read(1)
        self.last = ch
        if ch and self.echo:
            self.out.stdout(ch)
        return ch

    @property
    def at_end(self) -> bool:
        return self.last == EOF

    def skip_line(self) -> None:
        """skipAhead: past the metric list's "}" (inside one), then to the line's end."""
        if self.state & INSPECLIST:
            while self.last not in ("}", EOF):
                self.getc()
            self.state = GLOBAL
        while self.last not in ("\n", EOF):
            self.getc()


class Output:
    """stdout and stderr, each write flushed at once (pmlc's are unbuffered)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def stdout(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def stderr(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()


class Lexer:
    """pmlc's flex scanner: tokens from the Reader, a keyword a NAME inside a statement's
    metrics; an unexpected character is reported (as yyerror does) and skipped."""

    def __init__(self, reader: Reader, on_error: object) -> None:
        self.reader = reader
        self.held = ""  # the character read past the last token
        self.on_error = on_error  # (callable: message) yyerror

    def _next(self) -> str:
        if self.held:
            ch, self.held = self.held, ""
            return ch
        return self.reader.getc()

    def token(self) -> Token:
        while True:
            ch = self._next()
            if ch == EOF:
                return Token("END")
            if ch in " \r\t":
                continue
            if ch == "\n":
                if self.reader.state & INSPECLIST:
                    continue
                return Token("EOL", "\n")
            if ch == "#":
                while True:
                    ch = self._next()
                    if ch in ("\n", EOF):
                        self.held = ch
                        break
                continue
            if ch in _SINGLE:
                return Token(_SINGLE[ch], ch)
            if ch == "?":
                return self._word_token("?")
            if ch == '"':
                text = ""
                while True:
                    c = self._next()
                    if c == '"' and text:
                        return Token("STRING", text)
                    if c in ('"', "\n", EOF):
                        # (no string: the quote alone is unexpected; the rest is rescanned)
                        self.held = c
                        self._unexpected('"')
                        self._requeue(text)
                        break
                    text += c
                continue
            if ch.isdigit():
                text = ch
                while True:
                    c = self._next()
                    if not c.isdigit() or not c:
                        self.held = c
                        break
                    text += c
                return Token("NUMBER", text, int(text))
            if ch.isalpha():
                text = ch
                while True:
                    c = self._next()
                    if c and c in _WORDISH:
                        text += c
                        continue
                    self.held = c
                    break
                return self._word(text)
            self._unexpected(ch)

    def _unexpected(self, ch: str) -> None:
        self.on_error(f"Unexpected character '{ch}'")  # type: ignore[operator]

    def _word_token(self, text: str) -> Token:
        return self._ctx("HELP", text)

    def _ctx(self, kind: str, text: str) -> Token:
        if self.reader.state == GLOBAL:
            return Token(kind, text)
        return Token("NAME", text)

    def _word(self, text: str) -> Token:
        """The longest match among the word rules (the earlier on a tie); what is left
        over is scanned again."""
        best = ("", "")
        for pattern, kind in _KEYWORD:
            m = pattern.match(text)
            if m and len(m.group()) > len(best[0]):
                best = (m.group(), kind)
        for pattern, kind in ((_URL, "URL"), (_NAME, "NAME"), (_HOSTNAME, "HOSTNAME")):
            m = pattern.match(text)
            if m and len(m.group()) > len(best[0]):
                best = (m.group(), kind)
        matched, kind = best
        rest = text[len(matched) :]
        if rest:  # (scanned again: as flex backs up to the longest match)
            self._requeue(rest)
        if kind in ("URL", "NAME", "HOSTNAME"):
            return Token(kind, matched)
        return self._ctx(kind, matched)

    def _requeue(self, rest: str) -> None:
        """Characters matched too far (an odd word): put back in front of the input."""
        held = self.held
        self.held = ""
        queue = list(rest) + ([held] if held else [])
        original = self._next

        def replay() -> str:
            if queue:
                return queue.pop(0)
            self._next = original  # type: ignore[method-assign]
            return original()

        self._next = replay  # type: ignore[method-assign]
