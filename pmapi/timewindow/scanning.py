"""Scanning as libpcp's rtime.c scans (C locale), and the error it reports.

Its names are the package's scanning primitives (the other modules read text with
them); C's numbers (strtod, strtol, truncating division, int widths) are pmapi.cnumbers'.
"""

from __future__ import annotations

from ..cnumbers import strtod, strtol

# libpcp's reasons, as its error text gives them
WHAT_MSG = "unexpected value"
MORE_MSG = "more information expected"
ALIGN_MSG = "alignment specified by -A switch could not be applied"
EMPTY_MSG = "Null or empty specification"


class TimeParseError(ValueError):
    """Text libpcp would reject: which text, where (a character offset) and PCP's reason.

    str() is one line; `errmsg` is libpcp's own two-line text (the spec, then a caret
    under the offending character and "-- reason"), which the tools print verbatim.
    """

    def __init__(self, spec: str, offset: int, reason: str) -> None:
        self.spec = spec
        self.offset = offset
        self.reason = reason
        super().__init__(spec, offset, reason)

    @property
    def errmsg(self) -> str:
        pad = "".join(c if not ("!" <= c <= "~") else " " for c in self.spec[: self.offset])
        return f"{self.spec}\n{pad}^ -- {self.reason}\n"

    def __str__(self) -> str:
        if not self.spec:
            return self.reason
        rest = self.spec[self.offset :]
        where = f" at {rest!r}" if rest and self.offset else ""
        return f"{self.spec!r}: {self.reason}{where}"

    def __reduce__(self):
        return (type(self), (self.spec, self.offset, self.reason))


# --- scanning, as rtime.c scans (C locale) ------------------------------------------

_SPACE = " \t\n\v\f\r"


def is_alpha(c: str) -> bool:
    """isalpha() in the C locale."""
    return "a" <= c <= "z" or "A" <= c <= "Z"


def is_digit(c: str) -> bool:
    """isdigit()."""
    return "0" <= c <= "9"


def skip_space(s: str, i: int) -> int:
    """Where the blanks (isspace(), C locale) from I on in S end."""
    while i < len(s) and s[i] in _SPACE:
        i += 1
    return i


def parse_double(s: str, i: int, lo: float, hi: float) -> tuple[int, float | None]:
    """parseDouble: skip blanks, strtod, range check; on failure stop after the blanks.

    A NaN passes the range check, as in C.
    """
    i = skip_space(s, i)
    d, j, _ = strtod(s, i)
    if j == i or d < lo or d > hi:
        return i, None
    return j, d


def parse_int(s: str, i: int, lo: int, hi: int) -> tuple[int, int | None]:
    """parseInt: skip blanks, strtol, range check; on failure stop after the blanks."""
    i = skip_space(s, i)
    n, j, _ = strtol(s, 10, i)
    if j == i or not lo <= n <= hi:
        return i, None
    return j, int(n)


def parse_char(s: str, i: int, c: str) -> tuple[int, bool]:
    """parseChar: skip blanks, then C or nothing (stopping after the blanks)."""
    i = skip_space(s, i)
    if i < len(s) and s[i] == c:
        return i + 1, True
    return i, False


def parse_3char(s: str, i: int, codes: tuple[str, ...]) -> tuple[int, int | None]:
    """parse3char: up to three letters, lower-cased, looked up in CODES."""
    i = skip_space(s, i)
    j, code = i, ""
    while j < len(s) and is_alpha(s[j]) and len(code) < 3:
        code += s[j].lower()
        j += 1
    if code in codes:
        return j, codes.index(code)
    return i, None
