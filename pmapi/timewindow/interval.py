"""Intervals as pmParseInterval reads them: "2", "1.5h", "1 min 30 sec", "100msec"."""

from __future__ import annotations

import math
from fractions import Fraction

from ..cnumbers import cstring
from .epoch import NSEC, PM_MAX_TIME_T
from .scanning import EMPTY_MSG, WHAT_MSG, TimeParseError, is_alpha, parse_double, skip_space

_UNITS: tuple[tuple[str, Fraction], ...] = (
    ("nanosecond", Fraction(1, 10**9)),
    ("microsecond", Fraction(1, 10**6)),
    ("millisecond", Fraction(1, 1000)),
    ("second", Fraction(1)),
    ("minute", Fraction(60)),
    ("hour", Fraction(3600)),
    ("day", Fraction(86400)),
    ("msec", Fraction(1, 1000)),
    ("usec", Fraction(1, 10**6)),
    ("nsec", Fraction(1, 10**9)),
    ("sec", Fraction(1)),
    ("min", Fraction(60)),
    ("hr", Fraction(3600)),
    ("s", Fraction(1)),
    ("m", Fraction(60)),
    ("h", Fraction(3600)),
    ("d", Fraction(86400)),
)


def parse_interval(text: str) -> float:
    """Seconds in TEXT ("2", "1.5h", "1 min 30 sec", "100msec"), as pmParseInterval reads it.

    Raises TimeParseError with PCP's reason ("unexpected value", "Null or empty
    specification") and the offset libpcp points its caret at.
    """
    spec = cstring(text)
    if not spec:
        raise TimeParseError("", 0, EMPTY_MSG)
    i, sec = 0, 0.0
    while i < len(spec):
        i, d = parse_double(spec, i, 0.0, float(PM_MAX_TIME_T))
        if d is None:
            break
        i = skip_space(spec, i)
        if i == len(spec):
            sec += d
            break
        j = i
        while j < len(spec) and is_alpha(spec[j]):
            j += 1
        word = spec[i:j]
        if not word:
            sec += d
        else:
            if len(word) > 1 and word[-1] in "sS":
                word = word[:-1]
            scale = next((f for name, f in _UNITS if name == word.lower()), None)
            if scale is None:
                break
            # libpcp multiplies, or divides by the reciprocal, in double precision
            sec += d * int(scale) if scale >= 1 else d / int(1 / scale)
        i = j
    if i < len(spec):
        raise TimeParseError(spec, i, WHAT_MSG)
    return sec


def _real_to_ns(secs: float) -> int:
    """pmtimespecFromReal: whole seconds truncated, the fraction rounded to nanoseconds."""
    whole = int(secs)
    frac = Fraction(secs) - whole
    return whole * NSEC + math.floor(frac * NSEC + Fraction(1, 2))


def parse_interval_ns(text: str) -> int:
    """Nanoseconds in TEXT, as pmParseHighResInterval gives them (its timespec, flattened).

    A NaN ("nan sec") is refused here; libpcp accepts it and converts it to garbage.
    """
    secs = parse_interval(text)
    if math.isnan(secs):
        raise TimeParseError(cstring(text), 0, WHAT_MSG)
    return _real_to_ns(secs)
