"""-w TIMESPEC: the time window of pmseries' values report, read as pmSeriesWindow reads
it (the query language's lexer and its `[key:value, ...]` grammar) and turned into the
SeriesReader Window pmSeriesValues reads."""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NoReturn

from purepcp.pmapi.cnumbers import atoi
from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns, parse_time, tzinfo_for
from purepcp.series.read import Window
from purepcp.series.window import TIME_KEYWORDS, VALUE_TOKENS, second_setting


class WindowError(Exception):
    """A time window pmSeriesWindow rejects: MESSAGE is libpcp_web's text, CODE the
    error number pmseries reports with it."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Token:
    """A token of the window's text and where it starts."""

    kind: str  # [ ] : , INTEGER DOUBLE RANGE STRING NAME TIME (a keyword) OTHER ERROR EOS
    text: str
    at: int


NAME_CHARS = "_.*%\\"
TWO_CHAR_OPS = "<=~>!&|"


def lex(text: str) -> Iterator[Token]:
    """The query language's tokens, as its lexer cuts them (only those a time window
    can hold are told apart; any other is OTHER or ERROR, a syntax error either way)."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\n\v\f\r":
            i += 1
        if i >= n:
            yield Token("EOS", "", max(n - 1, 0))
            return
        start, c = i, text[i]
        if c.isascii() and c.isdigit():
            i += 1
            while i < n and text[i].isascii() and text[i].isdigit():
                i += 1
            if i < n and text[i] == ".":
                i = _digits(text, i + 1)
                yield Token("DOUBLE", text[start:i], start)
            elif i < n and text[i].isascii() and text[i].isalpha():
                while i < n and text[i].isascii() and text[i].isalpha():
                    i += 1
                yield Token("RANGE", text[start:i], start)
            elif int(text[start:i]) > 0xFFFFFFFF:
                yield Token("ERROR", text[start:i], start)
            else:
                yield Token("INTEGER", text[start:i], start)
        elif c == ".":
            i = _digits(text, i + 1)
            yield Token("DOUBLE", text[start:i], start)
        elif c.isascii() and c.isalpha():
            i += 1
            while i < n and ((text[i].isascii() and text[i].isalnum()) or text[i] in NAME_CHARS):
                i += 1
            word = text[start:i]
            yield Token("TIME" if word in TIME_KEYWORDS else "NAME", word, start)
        elif c == '"':
            end = text.find('"', i + 1)
            if end < 0:
                yield Token("ERROR", text[start:], start)
                return
            i = end + 1
            yield Token("STRING", text[start + 1 : end], start)
        elif c in "[]:,":
            i += 1
            yield Token(c, c, start)
        elif c in "+-*/(){}" or c in TWO_CHAR_OPS:
            i += 1
            yield Token("OTHER", c, start)
        else:
            yield Token("ERROR", c, start)
            return


def _digits(text: str, i: int) -> int:
    """Where the digits from I end."""
    while i < len(text) and text[i].isascii() and text[i].isdigit():
        i += 1
    return i


@dataclass
class WindowSpec:
    """The window's fields as written (pmSeriesTimeWindow's, by the query language's field
    names: delta, zone, start, end, count, offset, align, range) and as numbers."""

    texts: dict[str, str] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    delta: int = 0
    range: int = 0
    count: int = 0


def parse_window(text: str, now_ns: int | None = None) -> Window:
    """pmSeriesWindow then pmSeriesValues' reading of a `[key:value, ...]` window, as a
    SeriesReader Window; WindowError as PCP words each failure."""
    tokens = lex(text)
    spec = WindowSpec()

    def syntax_error(tok: Token) -> NoReturn:
        where = TimeParseError(text, tok.at, "syntax error").errmsg
        raise WindowError(f"cannot parse given string\n\n{where}", -errno.EINVAL)

    def expect(*kinds: str) -> Token:
        tok = next(tokens)
        if tok.kind not in kinds:
            syntax_error(tok)
        return tok

    expect("[")
    while True:
        tok = expect("RANGE", "TIME")
        if tok.kind == "RANGE":
            window_field(spec, "range", tok.text, now_ns)
        else:
            key = TIME_KEYWORDS[tok.text]
            expect(":")
            window_field(spec, key, expect(*VALUE_TOKENS[key]).text, now_ns)
        if expect(",", "]").kind == "]":
            break
    expect("EOS")
    return reader_window(spec)


def window_field(spec: WindowSpec, key: str, value: str, now_ns: int | None) -> None:
    """One `key:value` of a window: checked and converted as the grammar's actions do
    (a second, different value for a key is refused)."""
    if key in ("start", "end", "align"):
        ns = window_time(value)
        if key == "start":
            spec.start = ns
        elif key == "end":
            spec.end = ns
    elif key == "delta":
        spec.delta = window_interval(value, "time delta")
    elif key == "range":
        spec.range = window_interval(value, "range")
    elif key == "count":
        count = atoi(value)
        if count < 0:
            raise WindowError(f'Invalid sample count requested - "{value}"', -errno.EINVAL)
        spec.count = count
    old = spec.texts.get(key)
    if old is not None and old != value:
        raise WindowError(second_setting(key, old, value), -errno.EINVAL)
    spec.texts[key] = value
    if key == "range":
        now = time.time_ns() if now_ns is None else now_ns
        spec.start = now - spec.range


def window_time(value: str) -> int:
    """A start, finish or alignment time (__pmParseHighResTime from the epoch, open
    ended), in nanoseconds."""
    try:
        return parse_time(value, 0, None, tz=tzinfo_for(None))
    except TimeParseError as exc:
        raise WindowError(
            f"Cannot parse time with __pmParseHighResTime:\n{exc.errmsg}", -errno.EPERM
        ) from None


def window_interval(value: str, what: str) -> int:
    """An interval or range (pmParseHighResInterval), in nanoseconds."""
    try:
        return parse_interval_ns(value)
    except TimeParseError as exc:
        raise WindowError(
            f"Cannot parse {what} with pmParseHighResInterval:\n{exc.errmsg}", -errno.EPERM
        ) from None


def reader_window(spec: WindowSpec) -> Window:
    """The window as SeriesReader.values reads it.  Without any key the newest value
    is wanted; a start, end, interval or range written as zero still means "read
    forwards from the oldest", which the reader is told with a start of 1ns."""
    windowed = any(k in spec.texts for k in ("start", "end", "delta", "range"))
    count = spec.count
    if not windowed and "count" not in spec.texts:
        count = 1
    start = spec.start
    if windowed and not (spec.start or spec.end or spec.delta or spec.range):
        start = 1
    return Window(start=start, end=spec.end, delta=spec.delta, count=count, range=spec.range)
