"""Scanning as libpcp's rtime.c scans (C locale), and the error it reports.

The C-number helpers (_cdiv, _cmod, _cint, _i64, _strtod, _c_string) give C's answers
where Python's differ: truncating division, fixed-width ints, strtod's syntax and
NUL-terminated text.
"""

from __future__ import annotations

import re

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


# --- C numbers and strings: C's answers where Python's differ -----------------------


def _cdiv(a: int, b: int) -> int:
    """C's integer division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - _cdiv(a, b) * b


def _cint(v: int) -> int:
    """V stored in a C int (wraps at 32 bits, as libpcp's struct tm fields do)."""
    return (v + 2**31) % 2**32 - 2**31


def _i64(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


_STRTOD = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))"
)


def _strtod(s: str, i: int) -> tuple[int, float | None]:
    m = _STRTOD.match(s, i)
    if m is None:
        return i, None
    text = m.group()
    if "x" in text or "X" in text:
        return m.end(), float.fromhex(text)
    return m.end(), float(text)


def _c_string(text: str) -> str:
    return text.split("\0", 1)[0]


# --- scanning, as rtime.c scans (C locale) ------------------------------------------

_SPACE = " \t\n\v\f\r"
_STRTOL = re.compile(r"[+-]?[0-9]+")


def _alpha(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _digit(c: str) -> bool:
    return "0" <= c <= "9"


def _ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in _SPACE:
        i += 1
    return i


def _parse_double(s: str, i: int, lo: float, hi: float) -> tuple[int, float | None]:
    """parseDouble: skip blanks, strtod, range check; on failure stop after the blanks.

    A NaN passes the range check, as in C.
    """
    i = _ws(s, i)
    j, d = _strtod(s, i)
    if d is None or d < lo or d > hi:
        return i, None
    return j, d


def _parse_int(s: str, i: int, lo: int, hi: int) -> tuple[int, int | None]:
    i = _ws(s, i)
    m = _STRTOL.match(s, i)
    if m is None or not lo <= int(m.group()) <= hi:
        return i, None
    return m.end(), int(m.group())


def _parse_char(s: str, i: int, c: str) -> tuple[int, bool]:
    i = _ws(s, i)
    if i < len(s) and s[i] == c:
        return i + 1, True
    return i, False


def _parse_3char(s: str, i: int, codes: tuple[str, ...]) -> tuple[int, int | None]:
    """parse3char: up to three letters, lower-cased, looked up in CODES."""
    i = _ws(s, i)
    j, code = i, ""
    while j < len(s) and _alpha(s[j]) and len(code) < 3:
        code += s[j].lower()
        j += 1
    if code in codes:
        return j, codes.index(code)
    return i, None
