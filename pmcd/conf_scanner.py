"""pmcd.conf's scanner: pmcd's line buffer and tokens, byte for byte (GetNextLine,
SkipWhitespace, FindNextToken and the Token* tests of src/pmcd/src/config.c).

`Scanner` reads one file's bytes into a `LineBuffer` shared by every file of a parse
(its size outlives a file, as pmcd's static buffer does), joining continued lines and
growing by `LINEBUF_SIZE` bytes at a time until a line is "ridiculously long".  The
token is `token`..`tokenend` in the buffer; `cur` is its first byte, `NL` at the end
of a line and `NUL` at the end of the file.  In the access section (`doing_access`)
the delimiters `,:;[]` are tokens of their own.  The scanner reports what pmcd prints
through the EMIT function it is given, with the line it was found on.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from purepcp.pmapi.cnumbers import int32

__all__ = ["LINEBUF_SIZE", "NL", "NUL", "LineBuffer", "Scanner"]

LINEBUF_SIZE = 200  # pmcd's line buffer starts at, and grows by, this many bytes
NL, NUL = 0x0A, 0x00
_SPACE = frozenset(b" \t\n\v\f\r")
_DELIMS = frozenset(b",:;[]")
_DIGITS = frozenset(b"0123456789")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class LineBuffer:
    """pmcd's static line buffer: its size outlives a file (and, in pmcd, a reload)."""

    def __init__(self) -> None:
        self.data = bytearray()


class Scanner:
    """GetNextLine, SkipWhitespace and FindNextToken over one file's bytes."""

    def __init__(self, data: bytes, lines: LineBuffer, emit: Callable[[str, int], None]) -> None:
        self.stream = io.BytesIO(data)
        self.feof = False
        self.lb = lines
        self.emit = emit
        self.init = False
        self.error = False
        self.doing_access = False
        self.quoted = False
        self.token = 0
        self.tokenend = 0
        self.n_lines = 0
        self.linesize = 0

    # -- what pmcd prints

    def note(self, text: str, line: int | None = None) -> None:
        """Report TEXT as found on LINE (by default the line being read)."""
        self.emit(text, self.n_lines if line is None else line)

    def complain(self, source: str, what: str) -> None:
        """Report an error on the line being read, in pmcd's words for SOURCE's file."""
        self.note(f"{source} config[line {self.n_lines}]: Error: {what}")

    # -- buffer access

    def ch(self, i: int) -> int:
        """The byte at I; past the buffer, a newline (see below)."""
        # pmcd only reads past its string after cutting the newline off a bad dso
        # line; it then reads on through heap memory, and where we tried it, it met
        # a newline there and went on with the next line
        buf = self.lb.data
        return buf[i] if 0 <= i < len(buf) else NL

    @property
    def cur(self) -> int:
        return self.ch(self.token)

    def _fgets(self, limit: int) -> bytes | None:
        """fgets(3): up to LIMIT-1 bytes, through a newline; None at end of file."""
        data = self.stream.readline(limit - 1)
        if not data:
            self.feof = True
            return None
        if len(data) < limit - 1 and not data.endswith(b"\n"):
            self.feof = True
        return data

    def _strlen(self) -> int:
        buf = self.lb.data
        end = buf.find(b"\0")
        return len(buf) if end < 0 else end

    def get_next_line(self) -> None:
        """The next line into the buffer, continuation lines joined."""
        buf = self.lb.data
        if not buf:
            buf.extend(bytes(LINEBUF_SIZE))
        buf[0] = NUL
        self.token = 0
        if self.feof:
            return
        end, still, at_eof = 0, len(buf), False
        while True:
            data = self._fgets(still)
            if data is None:
                at_eof = True
            else:
                buf[end : end + len(data) + 1] = data + b"\0"
            linesize = self._strlen()
            more = 0
            if linesize == 0:
                break
            if buf[linesize - 1] != NL:
                if self.feof:
                    buf[linesize] = NL  # final line without a newline: add one
                    if linesize + 1 < len(buf):
                        linesize += 1
                        buf[linesize] = NUL
                        break
                more = 1
            elif linesize > 1 and buf[linesize - 2] == ord("\\"):
                buf[linesize - 2] = ord(" ")
                linesize -= 1
                more = 2
            if not more:
                break
            if len(buf) > 10 * LINEBUF_SIZE:
                self.emit(
                    f"pmcd config[line {self.n_lines + 1}]: Error: ridiculously long line "
                    f"({len(buf)} characters)",
                    self.n_lines + 1,
                )
                buf[0] = NUL
                self.error = True
                self.linesize = linesize
                return
            buf.extend(bytes(LINEBUF_SIZE))
            end = linesize
            still = LINEBUF_SIZE + more
            if at_eof:
                buf[end + 1] = NUL
                linesize += 1
                break
        self.linesize = linesize
        self.n_lines += 1

    def skip_whitespace(self) -> None:
        while self.cur:
            c = self.cur
            if c in _SPACE:
                if c == NL:
                    return
                self.token += 1
            elif c == ord("#"):
                self.token = self.linesize - 1
                return
            else:
                return

    def next(self, source: str) -> None:
        """FindNextToken: move to the next token, setting token..tokenend."""
        while True:
            if self.init:
                if self.cur == NUL or self.error:
                    return
                if self.cur == NL:
                    self.get_next_line()
                else:
                    if self.quoted:
                        self.tokenend += 1
                        self.quoted = False
                    self.token = self.tokenend
                self.skip_whitespace()
            else:
                self.init = True
                self.error = False
                self.get_next_line()
                self.skip_whitespace()
            if not (self.doing_access and self.cur == NL):
                break

        c = self.cur
        if c in (NUL, NL):
            self.tokenend = self.token
            return
        if self.doing_access and c in _DELIMS:
            self.tokenend = self.token + 1
            return
        raw = self.token
        self.tokenend = self.token + 1
        if c == ord("#"):
            self.token = self.tokenend = self.linesize - 1
        else:
            self._find_end(source)
            if self.error:
                return
        if self.ch(raw) == ord('"'):
            self.token += 1
            self.quoted = True
        else:
            self.quoted = False

    def _find_end(self, source: str) -> None:
        """The rest of FindNextToken: where a word or quoted string ends."""
        in_quotes = self.cur == ord('"')
        fix = False
        limit = len(self.lb.data)
        while True:
            got_end = self.ch(self.tokenend) in _SPACE
            while not got_end:
                c = self.ch(self.tokenend)
                if c == ord("#"):
                    if self.ch(self.tokenend - 1) == ord("\\") or in_quotes:
                        fix = True
                    else:
                        got_end = True
                elif c in _DELIMS:
                    got_end = self.doing_access and not in_quotes
                elif c == ord('"'):
                    if self.ch(self.tokenend - 1) == ord("\\"):
                        fix = True
                    elif in_quotes:
                        in_quotes = False
                        got_end = True
                else:
                    got_end = c in _SPACE
                if got_end:
                    break
                self.tokenend += 1
            if in_quotes:
                while self.ch(self.tokenend) in _SPACE and self.ch(self.tokenend) != NL:
                    self.tokenend += 1
            if not (in_quotes and self.ch(self.tokenend) != NL):
                break
        if in_quotes:
            self.error = True
            self.lb.data[self.token] = NUL
            self.tokenend = self.token
            self.emit(
                f"{source} config[line {self.n_lines}]: Error: unterminated quoted string",
                self.n_lines,
            )
            return
        if fix:
            # drop each backslash before # or ", moving the token's end-aligned bytes up
            buf = self.lb.data
            start, stop = self.token, min(self.tokenend, limit - 1)
            kept = bytearray(
                buf[i]
                for i in range(start, stop + 1)
                if not (buf[i] == ord("\\") and self.ch(i + 1) in (ord("#"), ord('"')))
            )
            buf[stop + 1 - len(kept) : stop + 1] = kept
            self.token = stop + 1 - len(kept)

    # -- token tests --------------------------------------------------------

    def token_bytes(self) -> bytes:
        return bytes(self.lb.data[self.token : self.tokenend])

    def copy(self) -> str:
        """CopyToken."""
        return _text(self.token_bytes())

    def is_(self, word: str) -> bool:
        """TokenIs: the token is WORD, ignoring case."""
        return self.token_bytes().lower() == word.encode().lower()

    def is_number(self) -> bool:
        """TokenIsNumber: all digits (and not empty)."""
        if self.token == self.tokenend:
            return False
        p = self.token
        while self.ch(p) in _DIGITS:
            p += 1
        return p == self.tokenend

    def number(self) -> int:
        """TokenNumVal: the leading digits' value, wrapping as a C int does."""
        value, p = 0, self.token
        while self.ch(p) in _DIGITS:
            value = int32(value * 10 + self.ch(p) - ord("0"))
            p += 1
        return value

    def cut_rest_of_line(self) -> str:
        """From the token to the end of the line, as pmcd prints a bad DSO path: it cuts
        the newline off its line buffer to do so, so the scanner then meets the end of
        its string there (see `ch`)."""
        buf = self.lb.data
        end = buf.find(b"\0", self.token)
        rest = _text(bytes(buf[self.token : len(buf) if end < 0 else end]))
        if rest.endswith("\n"):
            buf[buf.find(b"\0", self.token) - 1] = NUL
            rest = rest[:-1]
        return rest

    def skip_line(self, source: str) -> None:
        """SkipLine."""
        while self.cur and self.cur != NL:
            self.next(source)
        self.next(source)
