"""C's number reading, printing and arithmetic as glibc on x86-64 does them, for the
pmseries functions (libpcp_web reads stored value text with strtod, atof and sscanf, and
prints results with printf): each function names the C it mirrors.  Nothing here knows
about series; a later step merges these into the one pmapi module for C's numbers.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from purepcp.pmapi.convert import wrap
from purepcp.pmapi.printvalue import pmAtomStr
from purepcp.pmapi.timewindow import NSEC
from purepcp.pmapi.types import PMType

__all__ = [
    "c_div",
    "c_floor",
    "c_int_div",
    "c_log",
    "c_round",
    "c_sqrt",
    "c_strtod",
    "c_strtof",
    "c_sum",
    "float_of_double",
    "fmt_e",
    "fmt_f6",
    "scan_double",
    "scan_int",
    "timespec_delta",
]

#: x86-64's default NaN, which its invalid operations give: the sign bit set ("-nan")
_NEG_NAN = math.copysign(math.nan, -1.0)

_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*([+-]?)(?:"
    r"(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?))"
)
_INTEGER = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")


# --- reading ------------------------------------------------------------------------------


def _number(text: str) -> tuple[Fraction | float, bool] | None:
    """The number strtod would read at the start of TEXT: (exact value or inf/nan,
    negative), None when it reads none."""
    m = _STRTOD.match(text)
    if m is None:
        return None
    negative = m.group(1) == "-"
    if m.group(2):
        body = m.group(2)[2:].lower()
        mantissa, _, exponent = body.partition("p")
        whole, _, frac = mantissa.partition(".")
        value = Fraction(int(whole or "0", 16) * 16 ** len(frac) + int(frac or "0", 16))
        value /= 16 ** len(frac)
        value *= Fraction(2) ** int(exponent or "0")
        return value, negative
    if m.group(3):
        return Fraction(m.group(3)), negative
    word = m.group(4).lower()
    return (math.inf if word.startswith("inf") else math.nan), negative


def c_strtod(text: str) -> float:
    """glibc's strtod (and atof): the double at the start of TEXT, 0.0 when there is none."""
    found = _number(text)
    if found is None:
        return 0.0
    value, negative = found
    if isinstance(value, Fraction):
        try:
            result = float(value)
        except OverflowError:
            result = math.inf
    else:
        result = value
    return -result if negative else result


def scan_double(text: str) -> float | None:
    """glibc's sscanf %lf: the double at the start of TEXT, None when there is none."""
    return c_strtod(text) if _number(text) is not None else None


def _nearest_f32(value: Fraction) -> float:
    """VALUE (>= 0) correctly rounded to single precision (ties to even), as strtof."""
    guess = np.float32(float(value)) if value < 2**129 else np.float32(np.inf)
    best = None
    below, above = np.nextafter(guess, np.float32(0)), np.nextafter(guess, np.float32(np.inf))
    for candidate in (below, guess, above):
        if not np.isfinite(candidate):
            continue
        distance = abs(Fraction(float(candidate)) - value)
        even = int(candidate.view(np.uint32)) % 2 == 0
        if best is None or distance < best[0] or (distance == best[0] and even):
            best = (distance, candidate)
    assert best is not None
    largest = Fraction(float(np.finfo(np.float32).max))
    half_ulp = Fraction(2) ** 103  # half the gap above FLT_MAX
    if value >= largest + half_ulp:
        return math.inf
    return float(best[1])


def c_strtof(text: str) -> float | None:
    """glibc's sscanf %f (strtof): the float at the start of TEXT (a Python float holding
    a single precision value), None when there is none."""
    found = _number(text)
    if found is None:
        return None
    value, negative = found
    result = _nearest_f32(value) if isinstance(value, Fraction) else value
    return -result if negative else result


def scan_int(text: str, bits: int, signed: bool) -> int | None:
    """glibc's sscanf %d, %u, %ld, %lu: strtol/strtoul (saturating at 64 bits), then
    stored in an integer of BITS bits; None when there are no digits."""
    m = _INTEGER.match(text)
    if m is None:
        return None
    n = int(m.group(2))
    if signed:
        n = -n if m.group(1) == "-" else n
        n = max(-(2**63), min(2**63 - 1, n))
    else:
        n = min(n, 2**64 - 1)
        n = (-n) % 2**64 if m.group(1) == "-" else n
    return wrap(n, bits, signed)


# --- printing -----------------------------------------------------------------------------


def fmt_e(x: float) -> str:
    """glibc's printf %e (a NaN with its sign bit set is "-nan")."""
    return pmAtomStr(x, int(PMType.PM_TYPE_DOUBLE))


def fmt_f6(x: float) -> str:
    """glibc's printf %.6f."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:.6f}"


# --- arithmetic ---------------------------------------------------------------------------


def c_sum(values: Iterable[float]) -> float:
    """A C loop's `total += x` from 0.0, left to right (Python's sum() of floats rounds
    differently from 3.12 on: it compensates)."""
    total = 0.0
    for x in values:
        total += x
    return total


def c_div(a: float, b: float) -> float:
    """C's double division (x86-64): x/0 is an infinity, 0/0 the negative default NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return a if math.isnan(a) else _NEG_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def c_int_div(a: int, b: int) -> int:
    """C's integer division: the quotient truncated towards zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_log(x: float) -> float:
    """glibc's log(): NaN kept, a negative number the negative NaN, log(0) minus infinity."""
    if math.isnan(x):
        return x
    if x < 0:
        return _NEG_NAN
    if x == 0:
        return -math.inf
    return math.log(x)


def c_sqrt(x: float) -> float:
    """glibc's sqrt(): NaN kept, a negative number the negative NaN."""
    if math.isnan(x):
        return x
    if x < 0:
        return _NEG_NAN
    return math.sqrt(x)


def c_floor(x: float) -> float:
    """glibc's floor(): infinities and NaN kept, the sign of zero kept."""
    return x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x)


def c_round(x: float) -> float:
    """glibc's round(): halves away from zero, the sign of zero kept."""
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return math.copysign(t, x) if t == 0 else t


def float_of_double(d: float) -> float:
    """The float member of a C union (little-endian) whose double member holds D: its
    low four bytes read as a float."""
    return struct.unpack("<f", struct.pack("<d", d)[:4])[0]


def timespec_delta(a_ns: int, b_ns: int) -> float:
    """libpcp's pmTimespec_delta(a, b): seconds between two timespecs (given as ns),
    computed in long double as gcc on x86-64 computes them, rounded to a double."""
    a_sec, a_nsec = divmod(a_ns, NSEC)
    b_sec, b_nsec = divmod(b_ns, NSEC)
    exact = np.longdouble(a_sec - b_sec) + np.longdouble(a_nsec - b_nsec) / np.longdouble(NSEC)
    return float(exact)
