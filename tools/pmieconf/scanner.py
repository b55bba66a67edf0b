"""The words of pmieconf's template language, and of its commands.

A template file is a run of `TYPE name [attribute = value]* ;` clauses; words are
separated by white space, `#` starts a comment to the end of the line, `=` and `;` stand
alone, and a double-quoted string (backslash quoting the next character) may span
lines.  The same reader splits a command line into words, where the end of the line
ends the command.  Text is handled as latin-1, one character a byte, as C sees it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

#: where a file's words end (the end of the text) and where a command's do
END_OF_TEXT = ""
END_OF_LINE = "\n"

#: read_token's outcomes besides a word
TOKEN_END = 0  # the end character was reached
TOKEN_ERROR = -1
TOKEN_EOF = -2  # the text ran out before the end character (commands only)

#: longest word of a template file, and of a command (PCP's buffer sizes)
TEMPLATE_WORD = 2048
COMMAND_WORD = 1025


def isgraph(c: str) -> bool:
    """C's isgraph in the C locale: a printable character other than space."""
    return len(c) == 1 and "!" <= c <= "~"


def isspace(c: str) -> bool:
    """C's isspace in the C locale."""
    return c != "" and c in " \t\n\v\f\r"


class Stream:
    """Characters read one at a time with one pushed back, as stdio's getc/ungetc, from a
    text given whole or from a source of further text (a terminal's lines)."""

    def __init__(self, text: str = "", more: Callable[[], str] | None = None) -> None:
        self._text = text
        self._pos = 0
        self._more = more
        self.eof = False  # stdio's end-of-file indicator

    def getc(self) -> str:
        """The next character, or "" at the end (which sets the indicator)."""
        if self._pos >= len(self._text) and self._more is not None and not self.eof:
            chunk = self._more()
            self._text, self._pos = chunk, 0
        if self._pos >= len(self._text):
            self.eof = True
            return ""
        c = self._text[self._pos]
        self._pos += 1
        return c

    def ungetc(self, c: str) -> None:
        """Push C back (nothing for the end), clearing the end-of-file indicator."""
        if c:
            self._pos -= 1
            self.eof = False

    def rest_lines(self) -> list[str]:
        """What is left, as fgets would give it line by line (at most 4095 bytes each)."""
        rest = self._text[self._pos :]
        self._pos = len(self._text)
        lines = []
        for line in re.findall(r"[^\n]*\n|[^\n]+", rest):
            while len(line) > 4095:
                lines.append(line[:4095])
                line = line[4095:]
            lines.append(line)
        return lines


@dataclass
class Position:
    """The file being read and its line number (0 while reading commands)."""

    filename: str = ""
    line: int = 0


def parse_error(where: Position, expected: str, found: str) -> str:
    """PCP's message for an unexpected word, in a file or in a command."""
    if where.line == 0:
        return f'input is invalid - expected {expected[:60]}, got "{found[:60]}"'
    return (
        f"file parsing error.\n    line number: {where.line} "
        f'("{where.filename}")\n    expected: {expected[:60]}\n    found: {found[:60]}'
    )


class TokenError(Exception):
    """A word that could not be read; the message is PCP's."""

    def __init__(self, message: str, partial: str) -> None:
        super().__init__(message)
        self.message = message
        self.partial = partial  # the characters read before the problem


def _first_char(f: Stream, end: str, where: Position) -> str | int:
    """Skip white space and comments: the word's first character, else TOKEN_END or
    TOKEN_EOF."""
    while True:
        c = f.getc()
        if c == "#":
            c = f.getc()
            while c not in ("\n", end, ""):
                c = f.getc()
        if c == end:
            return TOKEN_END
        if c == "":
            return TOKEN_EOF
        if c == "\n" and end != "\n":
            where.line += 1
        if isgraph(c):
            return c


def read_token(f: Stream, end: str, where: Position, size: int = TEMPLATE_WORD) -> str | int:
    """The next word (a str), or TOKEN_END / TOKEN_EOF; a bad word raises TokenError."""
    c = _first_char(f, end, where)
    if isinstance(c, int):
        return c
    word: list[str] = []
    if c == '"':
        c = f.getc()
        while c != '"':
            if c == "\\":
                c = f.getc()
            if c == end or c == "" or len(word) == size - 1:
                text = "".join(word)
                raise TokenError(parse_error(where, "end-of-string", text), text)
            if c == "\n" and end != "\n":
                where.line += 1
            word.append(c)
            c = f.getc()
        return "".join(word)
    if c in ";=":
        return c
    while isgraph(c):
        if c in "=;":
            f.ungetc(c)
            break
        if len(word) == size:
            text = "".join(word)
            raise TokenError(parse_error(where, "end-of-token", text), text)
        word.append(c)
        c = f.getc()
        if c == end or c == "":
            f.ungetc(c)
    if c == "\n" and end != "\n":
        where.line += 1
    return "".join(word)


# -- C's number conversions, as far as they read ------------------------------------------

_FLOAT = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:"
    r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?"
    r"|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
)
_INTEGER = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_LONG_MAX = 2**63 - 1
_ULONG_MAX = 2**64 - 1


def strtod(text: str) -> tuple[float, str]:
    """C's strtod: the number at the start of TEXT (0.0 if none) and what follows it."""
    m = _FLOAT.match(text)
    if m is None:
        return 0.0, text
    word = m.group(0).strip()
    try:
        value = float.fromhex(word) if "x" in word.lower() else float(word.split("(")[0])
    except (ValueError, OverflowError):
        value = float("inf") if not word.startswith("-") else float("-inf")
    return value, text[m.end() :]


def strtol(text: str) -> tuple[int, str]:
    """C's strtol in base 10 (clamped to long's range) and what follows the number."""
    m = _INTEGER.match(text)
    if m is None:
        return 0, text
    value = int(m.group(1) + m.group(2))
    return max(-_LONG_MAX - 1, min(_LONG_MAX, value)), text[m.end() :]


def strtoul(text: str) -> tuple[int, str]:
    """C's strtoul in base 10 (a minus sign wraps, as in C) and what follows the number."""
    m = _INTEGER.match(text)
    if m is None:
        return 0, text
    value = min(int(m.group(2)), _ULONG_MAX)
    if m.group(1) == "-" and value:
        value = _ULONG_MAX + 1 - value
    return value, text[m.end() :]


def atoi(text: str) -> int:
    """C's atoi: the leading decimal number of TEXT, 0 if there is none."""
    value, _rest = strtol(text)
    return max(-(2**31), min(2**31 - 1, value))


def c_g(value: float) -> str:
    """printf's %g of VALUE."""
    if value != value:
        return "-nan" if str(value).startswith("-") else "nan"
    return format(value, "g")
