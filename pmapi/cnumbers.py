"""C's numbers as glibc and gcc have them on 64-bit Linux: the one home for their rules.

PCP's tools, daemons and agents are C, and what they print depends on C's integer widths
(casts wrap), its division (truncated), its float casts (round to single precision; a
double out of an integer's range gives x86-64's "integer indefinite"), libm's answers
(a negative NaN from log(-1)), and on how strtol, strtoul, strtod, strtof and atoi read
text (blanks and a sign skipped, 0x and octal prefixes, clamping with ERANGE, a minus
sign wrapping an unsigned value, hex floats, "inf", "nan(payload)", correct rounding).
Every such rule the project needs lives here, so a fix is made once; each function
names the C it mirrors.  Scanners take ``str`` or ``bytes`` (agents read kernel text as
bytes) and say where they stopped, as C's ``endptr`` does: end == start means C read no
number at all.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # (fractions is imported where an exact value is needed: rarely)
    from fractions import Fraction

__all__ = [
    "DBL_MIN", "FLT_MAX", "FLT_MIN", "NEG_NAN", "Scan", "atof", "atoi", "atol", "c_floor", "c_log",
    "c_round", "c_sqrt", "cdiv", "cmod", "cstring", "fdiv", "float32", "float32_of_int", "int32",
    "int64", "long_double", "scan_int", "strtod", "strtof", "strtol", "strtoul", "to_int", "uint32",
    "uint64", "wrap",
]  # fmt: skip

FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
FLT_MIN = 2.0**-126
DBL_MIN = 2.0**-1022
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1
#: x86-64's default NaN (0/0, log(-1), sqrt(-1)): the sign bit set, printed "-nan"
NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]


# -- integer widths: what a C cast to an integer type keeps ------------------------------


def wrap(n: int, bits: int, signed: bool = True) -> int:
    """N cast to a C integer of BITS bits: the low BITS bits, two's complement if SIGNED."""
    n &= (1 << bits) - 1
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return n


def int32(n: int) -> int:
    """(int)N."""
    return wrap(n, 32, True)


def uint32(n: int) -> int:
    """(unsigned int)N."""
    return n & 0xFFFFFFFF


def int64(n: int) -> int:
    """(long)N."""
    return wrap(n, 64, True)


def uint64(n: int) -> int:
    """(unsigned long)N."""
    return n & _UINT64_MAX


def cdiv(a: int, b: int) -> int:
    """A / B for C integers: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def cmod(a: int, b: int) -> int:
    """A % B for C integers: the remainder takes the sign of A."""
    return a - b * cdiv(a, b)


# -- floating point: single precision, casts to integers, libm ----------------------------


def float32(x: float) -> float:
    """(float)X: X rounded to single precision; beyond FLT_MAX's rounding range, infinity."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def float32_of_int(n: int) -> float:
    """(float)N for an integer N: one rounding straight to single precision, ties to even
    (a detour through double would round twice)."""
    if abs(n) < 1 << 53:
        return float32(float(n))
    shift = abs(n).bit_length() - 24
    mag, rest = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and mag & 1):
        mag += 1
    return float32(math.copysign(float(mag << shift), n))


def to_int(x: float, bits: int, signed: bool) -> int:
    """A double cast to a C integer type as gcc compiles it for x86-64: truncated; NaN and
    values out of range give cvttsd2si's "integer indefinite" (the lowest value) through
    the conversion gcc uses for that type."""
    if bits == 64 and not signed:
        if math.isnan(x):
            return 1 << 63  # the indefinite value on the small-value path
        if x >= 2.0**63:  # less 2**63, converted, the top bit set again: 0 past 2**64
            return int(x - 2.0**63) | 1 << 63 if x < 2.0**64 else 0
        return wrap(int(x) if x >= -(2.0**63) else _INT64_MIN, 64, False)
    if bits == 32 and signed:  # a 32-bit cvttsd2si: 0x80000000 when it cannot
        return -(1 << 31) if math.isnan(x) or not -(2.0**31) <= x < 2.0**31 else int(x)
    # int64 and uint32 (and narrower) casts go through a 64-bit cvttsd2si
    i = _INT64_MIN if math.isnan(x) or not -(2.0**63) <= x < 2.0**63 else int(x)
    return wrap(i, bits, signed)


def long_double(x: Fraction) -> Fraction:
    """X (exact) rounded to gcc's long double on x86-64, the x87 format: a 64-bit
    significand, ties to even (the exponent's range is not modelled)."""
    from fractions import Fraction

    if x == 0:
        return x
    shift = 64 - (abs(x.numerator).bit_length() - x.denominator.bit_length())
    scaled = x * Fraction(2) ** shift
    while abs(scaled) >= 1 << 64:  # the estimate can be one bit off either way
        shift, scaled = shift - 1, scaled / 2
    while abs(scaled) < 1 << 63:
        shift, scaled = shift + 1, scaled * 2
    return Fraction(round(scaled)) / Fraction(2) ** shift


def fdiv(a: float, b: float) -> float:
    """A / B for C doubles: a nonzero over zero is a signed infinity, 0/0 the default NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if math.isnan(a):
            return a
        if a == 0:
            return NEG_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def c_log(x: float) -> float:
    """libm's log: -inf at zero, the default NaN below it."""
    if math.isnan(x):
        return x
    if x < 0:
        return NEG_NAN
    if x == 0:
        return -math.inf
    return math.log(x)


def c_sqrt(x: float) -> float:
    """libm's sqrt: the default NaN below zero (sqrt(-0.0) is -0.0)."""
    if math.isnan(x):
        return x
    if x < 0:
        return NEG_NAN
    return math.sqrt(x)


def c_floor(x: float) -> float:
    """libm's floor: infinities and NaN as they are, the sign of a zero kept."""
    return x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x)


def c_round(x: float) -> float:
    """libm's round: halves away from zero, the sign of a zero kept."""
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return math.copysign(t, x) if t == 0 else t


def cstring(text: str) -> str:
    """TEXT as a C string holds it: up to its first NUL."""
    return text.split("\0", 1)[0]


# -- reading numbers: strtol, strtoul, atoi, strtod, strtof --------------------------------


class Scan(NamedTuple):
    """What a strto* function gives: the value, where it stopped (C's endptr, as an index;
    the start index when there was no number) and whether it set errno to ERANGE."""

    value: int | float
    end: int
    erange: bool = False


class _Patterns(dict[type, re.Pattern]):
    """A pattern compiled for str and for bytes, each when first asked for (importing this
    module compiles nothing: every command imports it, few read numbers with it)."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def __missing__(self, kind: type) -> re.Pattern:
        pattern = self[kind] = re.compile(self.source.encode() if kind is bytes else self.source)
        return pattern


_SPACE = " \t\n\v\f\r"
_BLANK_BYTES = _SPACE.encode()
_SIGN = _Patterns(r"[ \t\n\v\f\r]*([+-]?)")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
#: base -> the pattern of its digits, for str and for bytes
_RUNS: dict[type, dict[int, re.Pattern]] = {str: {}, bytes: {}}


def _run(kind: type, base: int) -> re.Pattern:
    """The pattern of a run of BASE's digits (either case), compiled once."""
    pattern = _RUNS[kind].get(base)
    if pattern is None:
        digits = _DIGITS[:base]
        upper = digits[10:].upper()
        source = f"[{re.escape(digits + upper)}]+"
        pattern = re.compile(source.encode() if kind is bytes else source)
        _RUNS[kind][base] = pattern
    return pattern


def _magnitude(text: str | bytes, base: int, start: int) -> tuple[bool, int, int, int]:
    """The sign, digits and base C's strto*l read at START: (negative, magnitude, end,
    base); end is START when there are no digits."""
    kind = type(text)
    sign = _SIGN[kind].match(text, start)
    assert sign is not None  # (it matches the empty string)
    at = sign.end()
    negative = sign[1] in ("-", b"-")
    zero_x = text[at : at + 2] in ("0x", "0X", b"0x", b"0X")
    if base in (0, 16) and zero_x and _run(kind, 16).match(text, at + 2):
        base, at = 16, at + 2
    elif base == 0:
        base = 8 if text[at : at + 1] in ("0", b"0") else 10
    digits = _run(kind, base).match(text, at)  # ("0x" and no hex digit: the 0 is read)
    if digits is None:
        return False, 0, start, base
    return negative, int(digits[0], base), digits.end(), base


def strtol(text: str | bytes, base: int = 10, start: int = 0) -> Scan:
    """strtol (and strtoll: both 64 bits here) of TEXT from START: clamped to a long's
    range with ERANGE."""
    negative, mag, end, _ = _magnitude(text, base, start)
    n = -mag if negative else mag
    if n > _INT64_MAX:
        return Scan(_INT64_MAX, end, True)
    if n < _INT64_MIN:
        return Scan(_INT64_MIN, end, True)
    return Scan(n, end)


def strtoul(text: str | bytes, base: int = 10, start: int = 0) -> Scan:
    """strtoul (and strtoull) of TEXT from START: 64 bits; a minus sign wraps the value
    ("-1" is 2**64 - 1); too large a magnitude is 2**64 - 1 with ERANGE."""
    negative, mag, end, _ = _magnitude(text, base, start)
    if mag > _UINT64_MAX:
        return Scan(_UINT64_MAX, end, True)
    return Scan((-mag) & _UINT64_MAX if negative else mag, end)


def atol(text: str | bytes) -> int:
    """atol: strtol(TEXT, NULL, 10), 0 when there is no number."""
    return int(strtol(text).value)


def atoi(text: str | bytes) -> int:
    """atoi: strtol's long, then kept to an int's 32 bits."""
    return int32(int(strtol(text).value))


def scan_int(text: str | bytes, bits: int, signed: bool) -> int | None:
    """sscanf's %d, %u, %ld, %lu (and %hd ...): strtol or strtoul read at 64 bits, then
    stored in an integer of BITS bits; None when there are no digits (the match fails)."""
    digits = text.strip(_SPACE if type(text) is str else _BLANK_BYTES)  # type: ignore[arg-type]
    if len(digits) < 20 and digits.isdigit() and digits.isascii():  # the kernel's usual
        n = int(digits)
        return wrap(min(n, _INT64_MAX) if signed else n, bits, signed)
    scan = (strtol if signed else strtoul)(text)
    return None if scan.end == 0 else wrap(int(scan.value), bits, signed)


_REAL_SOURCE = (
    r"[ \t\n\v\f\r]*([+-]?)(?:"
    r"0[xX](?P<hex>[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP](?P<hexp>[+-]?[0-9]+))?"
    r"|(?P<dec>(?P<digits>[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE](?P<decp>[+-]?[0-9]+))?)"
    r"|(?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    r"|(?P<nan>[nN][aA][nN])(?:\((?P<payload>[0-9A-Za-z_]*)\))?)"
)
_REAL = _Patterns(_REAL_SOURCE)
_LOG2_5 = math.log2(5)


class _Real(NamedTuple):
    """A number strto[df] read: its sign, where it ended, and either a special value (inf,
    a NaN) or its magnitude, exactly MANTISSA * 2**EXP2 * 5**EXP5 (and its decimal
    literal, which float() rounds correctly and fast)."""

    negative: bool
    end: int
    special: float | None = None
    mantissa: int = 0
    exp2: int = 0
    exp5: int = 0
    decimal: str | None = None

    def order(self) -> float:
        """About log2 of the magnitude (within two): says overflow or underflow without
        building an exact value of a literal like 1e-99999999999."""
        return self.mantissa.bit_length() + self.exp2 + self.exp5 * _LOG2_5

    def exact(self) -> Fraction:
        from fractions import Fraction

        return Fraction(self.mantissa) * Fraction(2) ** self.exp2 * Fraction(5) ** self.exp5


def _read_real(text: str | bytes, start: int) -> _Real | None:
    m = _REAL[type(text)].match(text, start)
    if m is None:
        return None
    groups = {k: v.decode() if isinstance(v, bytes) else v for k, v in m.groupdict().items()}
    negative, end = m[1] in ("-", b"-"), m.end()
    if groups["digits"] is not None:
        whole, _, frac = groups["digits"].partition(".")
        exp10 = int(groups["decp"] or "0") - len(frac)
        return _Real(negative, end, None, int(whole + frac or "0"), exp10, exp10, groups["dec"])
    if groups["hex"] is not None:
        whole, _, frac = groups["hex"].partition(".")
        exp2 = int(groups["hexp"] or "0") - 4 * len(frac)
        return _Real(negative, end, None, int(whole + frac or "0", 16), exp2)
    if groups["inf"] is not None:
        return _Real(negative, end, math.inf)
    return _Real(negative, end, _nan(groups["payload"]))


def _nan(chars: str | None) -> float:
    """glibc's NaN for "nan(CHARS)": CHARS read as strtoull base 0 fill the low 51 bits of
    the quiet NaN (when all of them are read; else the plain quiet NaN)."""
    payload = 0
    if chars:
        scan = strtoul(chars, 0)
        payload = int(scan.value) if scan.end == len(chars) else 0
    bits = 0x7FF8000000000000 | payload & ((1 << 51) - 1)
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _rounded(
    real: _Real, highest: int, lowest: int, least: float, nearest: Callable[[_Real], float]
) -> tuple[float, bool]:
    """REAL's magnitude rounded by NEAREST, and whether that is ERANGE: an overflow to
    infinity, or an inexact result below LEAST (the type's least normal value).  Orders
    above HIGHEST overflow and below LOWEST underflow to zero without rounding."""
    if real.mantissa == 0:
        return 0.0, False
    order = real.order()
    if order > highest:
        return math.inf, True
    if order < lowest:
        return 0.0, True
    value = nearest(real)
    if math.isinf(value):
        return value, True
    return value, value < least and real.exact() != value  # (a Fraction compares exactly)


def _nearest_double(real: _Real) -> float:
    """The magnitude correctly rounded to a double (infinity past DBL_MAX's rounding)."""
    try:
        return float(real.decimal) if real.decimal is not None else float(real.exact())
    except OverflowError:
        return math.inf


def strtod(text: str | bytes, start: int = 0) -> Scan:
    """strtod of TEXT from START, correctly rounded: decimal and hex floats, "inf",
    "infinity", "nan(payload)".  ERANGE on overflow (the value is then an infinity) and on
    underflow (a result below DBL_MIN that is not exact, zero included)."""
    real = _read_real(text, start)
    if real is None:
        return Scan(0.0, start)
    sign = -1.0 if real.negative else 1.0
    if real.special is not None:
        return Scan(math.copysign(real.special, sign), real.end)
    value, erange = _rounded(real, 1030, -1080, DBL_MIN, _nearest_double)
    return Scan(math.copysign(value, sign), real.end, erange)


def _nearest_float(real: _Real) -> float:
    """The magnitude correctly rounded to single precision, ties to even, as strtof rounds
    (through the double first where that cannot round twice)."""
    if real.decimal is not None:
        rounded = _float32_of_decimal(real.decimal)
        if rounded is not None:
            return rounded
    return _nearest_float32(real.exact())


def strtof(text: str | bytes, start: int = 0) -> Scan:
    """strtof of TEXT from START: rounded once, straight to single precision (the value a
    Python float holds exactly); ERANGE on overflow and on an inexact result below FLT_MIN."""
    real = _read_real(text, start)
    if real is None:
        return Scan(0.0, start)
    sign = -1.0 if real.negative else 1.0
    if real.special is not None:
        return Scan(math.copysign(float32(real.special), sign), real.end)
    value, erange = _rounded(real, 130, -155, FLT_MIN, _nearest_float)
    return Scan(math.copysign(value, sign), real.end, erange)


def _float32_of_decimal(literal: str) -> float | None:
    """The decimal LITERAL rounded to single precision through its double, unless that
    double lies exactly halfway between two floats (then rounding twice could be wrong,
    and None says to round the exact value instead)."""
    d = float(literal)
    f = float32(d)
    if f == d or math.isinf(f):
        return None if math.isinf(f) else f
    word = struct.unpack("<I", struct.pack("<f", f))[0]
    other = struct.unpack("<f", struct.pack("<I", word + 1 if f < d else word - 1))[0]
    return None if d - f == other - d else f


_FLT_ROUND_LIMIT = FLT_MAX + 2.0**103  # half a gap above FLT_MAX (exact in a double)


def _nearest_float32(value: Fraction) -> float:
    """VALUE (>= 0) correctly rounded to single precision, ties to even."""
    from fractions import Fraction

    if value >= _FLT_ROUND_LIMIT:
        return math.inf
    guess = float32(float(value))
    bits = struct.unpack("<I", struct.pack("<f", guess))[0]
    best: tuple[Fraction, bool, float] | None = None
    for word in (bits - 1, bits, bits + 1):
        if not 0 <= word < 0x7F800000:  # (below zero, or infinity and NaN)
            continue
        candidate = struct.unpack("<f", struct.pack("<I", word))[0]
        key = (abs(Fraction(candidate) - value), word % 2 == 1)
        if best is None or key < best[:2]:
            best = (*key, candidate)
    assert best is not None
    return best[2]


def atof(text: str | bytes) -> float:
    """atof: strtod(TEXT, NULL), 0.0 when there is no number."""
    return float(strtod(text).value)


# -- the agents' readers of kernel text: the usual plain digits short, sscanf runs ----------

__all__ += ["scan_hex", "scan_ints", "strtoul_value"]


def strtoul_value(text: str | bytes) -> int:
    """strtoul(TEXT, NULL, 10)'s value alone, 0 when there is no number.  Plain decimal
    digits below 2**64 (what the kernel writes, nearly always) take a short way."""
    if len(text) < 20 and text.isdigit() and text.isascii():
        return int(text)
    return int(strtoul(text).value)


def scan_hex(text: str | bytes, bits: int = 32) -> int | None:
    """sscanf's %x (and %lx, %hx ...): strtoul in base 16 (blanks, a sign and 0x allowed),
    stored in an unsigned integer of BITS bits; None when there are no digits.  A word of
    at most 16 hex digits (what the kernel writes) takes a short way."""
    if len(text) <= 16 and text.isalnum() and text.isascii():
        try:
            return int(text, 16) & ((1 << bits) - 1)  # (int() takes a 0x too, as C does)
        except ValueError:  # not hex after all
            pass
    scan = strtoul(text, 16)
    return None if scan.end == 0 else wrap(int(scan.value), bits, False)


def scan_ints(text: str | bytes, count: int, bits: int = 64, signed: bool = False) -> list[int]:
    """sscanf's COUNT conversions of one kind in a row ("%lu %lu ...", "%d %d ..."): each
    value as scan_int stores it, up to the first conversion that fails (then fewer).  Bytes
    of plain decimal words (bytes.split's blanks are C's) take a short way."""
    if type(text) is bytes:
        words = text.split(None, count)[:count]
        if b"".join(words).isdigit() and max(map(len, words)) < 20:
            values = list(map(int, words))
            if max(values) >> (bits - signed) == 0:  # each as it is
                return values
            return [wrap(min(n, _INT64_MAX) if signed else n, bits, signed) for n in values]
    read = strtol if signed else strtoul
    found: list[int] = []
    at = 0
    while len(found) < count:
        scan = read(text, 10, at)
        if scan.end == at:
            break
        found.append(wrap(int(scan.value), bits, signed))
        at = scan.end
    return found


# -- doubles as C code holds and adds them ------------------------------------------------

__all__ += ["c_sum", "float_of_double"]


def float_of_double(d: float) -> float:
    """The float member of a (little-endian) C union whose double member holds D: the
    double's low four bytes read as a float, as code reading the wrong member gets."""
    return struct.unpack("<f", struct.pack("<d", d)[:4])[0]


def c_sum(values: Iterable[float]) -> float:
    """A C loop's ``total += x`` from 0.0, left to right, each step rounded (Python's sum()
    of floats compensates from 3.12 on, and so differs)."""
    total = 0.0
    for x in values:
        total += x
    return total


# -- a decimal number a caller's pattern has already matched (scanf's %f) -------------------

__all__ += ["strtof_decimal"]

_DECIMAL = _Patterns(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def strtof_decimal(literal: str | bytes) -> float:
    """strtof's value of LITERAL, the whole of it a plain decimal number (a sign, digits and
    a point, an exponent: what a pattern for scanf's %f matched), the short way: through
    its double where that cannot round twice, else by strtof's own reading."""
    if _DECIMAL[type(literal)].fullmatch(literal):
        text = literal.decode() if type(literal) is bytes else literal
        rounded = _float32_of_decimal(text.lstrip("+-"))  # type: ignore[union-attr]
        if rounded is not None:
            return -rounded if text[:1] == "-" else rounded
    return float(strtof(literal).value)
