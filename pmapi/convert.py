"""Value conversions as libpcp does them: pmConvScale, pmExtractValue and pmstore's parse.

Each function reproduces PCP's C arithmetic on a 64-bit Linux host: integers wrap
where C's casts wrap, floats are rounded to single precision where C computes in
float, and out-of-range float-to-integer casts give what x86-64 gives.
"""

from __future__ import annotations

import errno
import math
import re
import struct
from fractions import Fraction
from typing import Any

from .errors import (
    PM_ERR_CONV,
    PM_ERR_SIGN,
    PM_ERR_TRUNC,
    PM_ERR_TYPE,
    PM_ERR_UNIT,
    PMError,
)
from .types import PMType, ValFmt, pmTypeStr
from .units import Units
from .values import ARRAY_CODES, ValueBlock

__all__ = [
    "StoreValueError",
    "extract_value",
    "f32",
    "f32_of_int",
    "parse_typed_value",
    "pmConvScale",
    "pmExtractValue",
    "wrap",
]

_I32, _U32, _I64, _U64 = (int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32),
                          int(PMType.PM_TYPE_64), int(PMType.PM_TYPE_U64))  # fmt: skip
_FLT, _DBL, _STR = int(PMType.PM_TYPE_FLOAT), int(PMType.PM_TYPE_DOUBLE), int(PMType.PM_TYPE_STRING)
_AGG = int(PMType.PM_TYPE_AGGREGATE)
_INT64_MIN = -(1 << 63)
FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
FLT_MIN = 2.0**-126
DBL_MIN = 2.0**-1022


# --- C arithmetic -------------------------------------------------------------------


def wrap(n: int, bits: int, signed: bool) -> int:
    """N cast to a C integer of BITS bits (two's complement wrap-around)."""
    n &= (1 << bits) - 1
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return n


def _cdiv(a: int, b: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def f32(x: float) -> float:
    """X rounded to IEEE single precision, as a C (float) cast does."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f32_of_int(n: int) -> float:
    """The integer N converted straight to float (one rounding, ties to even)."""
    if abs(n) < 1 << 53:
        return f32(float(n))
    shift = abs(n).bit_length() - 24
    mag, rest = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and mag & 1):
        mag += 1
    return f32(math.copysign(float(mag << shift), n))


def _to_int(x: float, bits: int, signed: bool) -> int:
    """A float cast to a C integer as x86-64 does it, NaN and overflow included."""
    if bits == 64 and not signed:
        if math.isnan(x):
            return 1 << 63  # cvttsd2si's "integer indefinite" on the small-value path
        if x >= 2.0**63:
            return (int(x - 2.0**63) ^ (1 << 63)) & ((1 << 64) - 1)
        return wrap(int(x) if x >= -(2.0**63) else _INT64_MIN, 64, False)
    if bits == 32 and signed:  # a 32-bit cvtts?2si: 0x80000000 when it cannot
        return -(1 << 31) if math.isnan(x) or not -(2.0**31) <= x < 2.0**31 else int(x)
    # int64 and uint32 casts go through a 64-bit cvtts?2si
    i = _INT64_MIN if math.isnan(x) or not -(2.0**63) <= x < 2.0**63 else int(x)
    return wrap(i, bits, signed)


# --- pmConvScale ----------------------------------------------------------------------

# factors relative to PCP's canonical units (Mbyte, second): (divide by, multiply by)
_SPACE = {0: (1 << 20, 1), 1: (1 << 10, 1), 2: (1, 1), 3: (1, 1 << 10), 4: (1, 1 << 20),
          5: (1, 1 << 30), 6: (1, 1 << 40)}  # fmt: skip
_TIME = {0: (10**9, 1), 1: (10**6, 1), 2: (1000, 1), 3: (1, 1), 4: (1, 60), 5: (1, 3600)}


def _scale(dim: int, d: int, m: int, div: int, mult: int) -> tuple[int, int]:
    """Fold one dimension's factors into (div, mult), raised to the power DIM (int64)."""
    for _ in range(abs(dim)):
        if dim > 0:
            div, mult = wrap(div * d, 64, True), wrap(mult * m, 64, True)
        else:
            div, mult = wrap(div * m, 64, True), wrap(mult * d, 64, True)
    return div, mult


def pmConvScale(type_: int, value: Any, iunit: Units, ounit: Units) -> Any:
    """VALUE of TYPE_ in units IUNIT rescaled to OUNIT, as libpcp's pmConvScale.

    Dimensionless units count as "count".  Raises PMError PM_ERR_CONV when the
    dimensions differ or TYPE_ is not numeric, PM_ERR_UNIT for a space scale above
    Ebyte or a time scale above hour.  Integers round half up (toward zero for
    negatives, C's division) and wrap to the type's width as C's casts do.
    """
    dims_in = (iunit.dimSpace, iunit.dimTime, iunit.dimCount)
    dims_out = (ounit.dimSpace, ounit.dimTime, ounit.dimCount)
    if dims_in == (0, 0, 0):
        dims_in = (0, 0, 1)
    if dims_out == (0, 0, 0):
        dims_out = (0, 0, 1)
    if dims_in != dims_out:
        raise PMError(PM_ERR_CONV, f"cannot convert [{iunit}] to [{ounit}]")
    dim_space, dim_time, dim_count = dims_in
    div = mult = 1
    for dim, table, iscale, oscale in (
        (dim_space, _SPACE, iunit.scaleSpace, ounit.scaleSpace),
        (dim_time, _TIME, iunit.scaleTime, ounit.scaleTime),
    ):
        if dim == 0:
            continue
        if iscale not in table or oscale not in table:
            raise PMError(PM_ERR_UNIT, f"unsupported scale in [{iunit}] or [{ounit}]")
        (d, m), (od, om) = table[iscale], table[oscale]
        div, mult = _scale(dim, d * om, m * od, div, mult)
    if dim_count:
        d = 10 ** max(0, -iunit.scaleCount) * 10 ** max(0, ounit.scaleCount)
        m = 10 ** max(0, iunit.scaleCount) * 10 ** max(0, -ounit.scaleCount)
        div, mult = _scale(dim_count, d, m, div, mult)
    if div == 0 or (div == -1 and mult == _INT64_MIN):  # int64 overflow: libpcp would trap
        raise PMError(PM_ERR_CONV, f"scale factor overflow from [{iunit}] to [{ounit}]")
    if mult - _cdiv(mult, div) * div == 0:
        mult, div = _cdiv(mult, div), 1
    half = _cdiv(div, 2)
    if type_ in (_I32, _U32, _I64):
        total = wrap(wrap(value * mult, 64, True) + half, 64, True)
        out = _cdiv(total, div)
        return wrap(out, 32, type_ == _I32) if type_ != _I64 else wrap(out, 64, True)
    if type_ == _U64:
        u = (1 << 64) - 1
        return ((value * (mult & u) + (half & u)) & u) // (div & u)
    if type_ == _FLT:
        return f32(value * f32(f32_of_int(mult) / f32_of_int(div)))
    if type_ == _DBL:
        return value * (float(mult) / float(div))
    raise PMError(PM_ERR_CONV, f"cannot rescale a value of type {pmTypeStr(type_)}")


# --- pmExtractValue -------------------------------------------------------------------

_INT_LIMITS = {_I32: (32, True), _U32: (32, False), _I64: (64, True), _U64: (64, False)}


def _from_float(x: float, otype: int, single: bool) -> Any:
    """A float or double converted to OTYPE with pmExtractValue's range checks."""
    if otype == _FLT:
        return f32(x)
    if otype == _DBL:
        return x
    if otype not in _INT_LIMITS:
        raise PMError(PM_ERR_CONV)
    rnd = f32 if single else float
    if otype == _I32:
        if rnd(abs(x)) >= rnd(0x7FFFFFFF):
            raise PMError(PM_ERR_TRUNC)
    elif otype == _U32:
        if x >= rnd(0xFFFFFFFF):
            raise PMError(PM_ERR_TRUNC)
        if x < 0:
            raise PMError(PM_ERR_SIGN)
    elif otype == _I64:
        if x >= 2.0**63:
            raise PMError(PM_ERR_TRUNC)
    else:
        if x >= 2.0**64:
            raise PMError(PM_ERR_TRUNC)
        if x < 0:
            raise PMError(PM_ERR_SIGN)
    return _to_int(x, *_INT_LIMITS[otype])


def _from_int(n: int, itype: int, otype: int) -> Any:
    """An integer of ITYPE converted to OTYPE with pmExtractValue's range checks."""
    if otype == _FLT:
        return f32_of_int(n)
    if otype == _DBL:
        return float(n)
    if otype not in _INT_LIMITS:
        raise PMError(PM_ERR_CONV)
    if itype == _I32:  # only the sign can be lost
        if n < 0 and otype in (_U32, _U64):
            raise PMError(PM_ERR_SIGN)
        return n
    if (otype == _I32 and n > 0x7FFFFFFF) or (otype == _U32 and n > 0xFFFFFFFF):
        raise PMError(PM_ERR_TRUNC)
    if otype == _I64 and n > 0x7FFFFFFFFFFFFFFF:
        raise PMError(PM_ERR_TRUNC)
    if itype == _I64 and n < 0:
        if otype in (_U32, _U64):
            raise PMError(PM_ERR_SIGN)
        if otype == _I32:
            return wrap(n, 32, True)  # libpcp checks only the upper bound here
    return n


def extract_value(atom: Any, itype: int, otype: int) -> Any:
    """ATOM of type ITYPE converted to OTYPE as pmExtractValue converts it.

    Raises PMError PM_ERR_TRUNC (too big), PM_ERR_SIGN (negative into unsigned)
    or PM_ERR_CONV (no conversion: strings and aggregates convert only to their own
    type, events to nothing).  PM_TYPE_UNKNOWN is read as a 32-bit integer.
    """
    if itype == PMType.PM_TYPE_UNKNOWN:
        itype = _I32
    if itype in _INT_LIMITS:
        return _from_int(int(atom), itype, otype)
    if itype in (_FLT, _DBL):
        return _from_float(float(atom), otype, itype == _FLT)
    if itype == otype and itype in (_STR, _AGG):
        return atom
    raise PMError(PM_ERR_CONV, f"cannot convert {pmTypeStr(itype)} to {pmTypeStr(otype)}")


def pmExtractValue(valfmt: int, value: int | ValueBlock, itype: int, otype: int) -> Any:
    """The value of one pmValue (insitu lval or ValueBlock) converted from ITYPE to OTYPE.

    As libpcp: insitu values must be 32-bit (or old-style float) types and blocks must
    hold ITYPE (or vtype 0) with the right length, else PM_ERR_CONV.
    """
    if valfmt == ValFmt.PM_VAL_INSITU:
        if not isinstance(value, int):
            raise PMError(PM_ERR_CONV, "insitu value is not a 32-bit word")
        if itype == _U32:
            return extract_value(value & 0xFFFFFFFF, _U32, otype)
        if itype == _FLT:
            return extract_value(struct.unpack("<f", struct.pack("<I", value & 0xFFFFFFFF))[0],
                                 _FLT, otype)  # fmt: skip
        if itype in (_I32, PMType.PM_TYPE_UNKNOWN):
            return extract_value(wrap(value, 32, True), _I32, otype)
        raise PMError(PM_ERR_CONV, f"type {pmTypeStr(itype)} cannot be insitu")
    if valfmt not in (ValFmt.PM_VAL_DPTR, ValFmt.PM_VAL_SPTR) or not isinstance(value, ValueBlock):
        raise PMError(PM_ERR_CONV, f"bad valfmt {valfmt}")
    if itype not in (_I64, _U64, _FLT, _DBL, _STR, _AGG) or value.vtype not in (itype, 0):
        raise PMError(PM_ERR_CONV, f"block of type {value.vtype} read as {pmTypeStr(itype)}")
    code = ARRAY_CODES.get(itype)
    if code is not None:
        if len(value.vbuf) != struct.calcsize(code):
            raise PMError(PM_ERR_CONV, f"{len(value.vbuf)}-byte block for {pmTypeStr(itype)}")
        return extract_value(struct.unpack(">" + code, value.vbuf)[0], itype, otype)
    if itype == _STR:
        if otype != _STR:
            raise PMError(PM_ERR_CONV)
        return value.vbuf.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
    return extract_value(value.vbuf, itype, otype)


# --- pmstore's parse of a value -------------------------------------------------------

_WS = " \t\n\v\f\r"
_DEC_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_HEX_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?)(?:0[xX])?([0-9a-fA-F]+)")
_C_FLOAT = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:"
    r"(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<inf>(?i:inf(?:inity)?))|(?P<nan>(?i:nan(?:\([0-9A-Za-z_]*\))?)))"
)


class StoreValueError(PMError):
    """A value pmstore cannot store in a metric of its type; str() is pmstore's message.

    pmstore prints the message on stderr and exits with status 1.
    """

    def __init__(self, code: int, text: str, type_: int) -> None:
        self.text = text
        self.type = type_
        super().__init__(code, text)

    def __str__(self) -> str:
        kind = f"PM_TYPE_{pmTypeStr(self.type)}"
        if self.code == PM_ERR_TYPE:
            return f'The value "{self.text}" is incompatible with the data type ({kind})'
        if self.code == -errno.ERANGE:
            return f'The value "{self.text}" is out of range for the data type ({kind})'
        return f'pmstore: cannot convert string value "{self.text}": {self.message}'

    def __reduce__(self):
        return (type(self), (self.code, self.text, self.type))


def _is_hex(text: str) -> bool:
    """pmstore's test for hex: "0x" (after blanks and a minus) then only hex digits."""
    body = text.lstrip(_WS)
    body = body[1:] if body.startswith("-") else body
    return body[:2].lower() == "0x" and all(c in "0123456789abcdefABCDEF" for c in body[2:])


def _strtoint(text: str, base: int, bits: int, signed: bool) -> tuple[int, bool]:
    """(value, overflowed) as strtol/strtoul (64-bit long) read TEXT entirely."""
    match = (_HEX_INT if base == 16 else _DEC_INT).fullmatch(text)
    if match is None:
        raise ValueError(text)
    mag = int(match.group(2), base)
    neg = match.group(1) == "-"
    if signed:
        n = -mag if neg else mag
        if not -(1 << (bits - 1)) <= n < 1 << (bits - 1):
            return (-(1 << 63) if neg else (1 << 63) - 1), True
        return n, False
    if mag >= 1 << 64:
        return (1 << 64) - 1, True
    return (-mag if neg else mag) & ((1 << 64) - 1), False


def _nan_with_payload(word: str) -> float:
    """glibc's NaN for "nan(chars)": chars read as strtoull base 0 fill the low 51 bits."""
    chars = word[4:-1] if word.endswith(")") else ""
    base = 16 if chars[:2].lower() == "0x" else 8 if chars.startswith("0") else 10
    try:
        payload = int(chars[2:] if base == 16 else chars, base) if chars else 0
    except ValueError:
        payload = 0
    bits = 0x7FF8000000000000 | payload & ((1 << 51) - 1)
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _strtod(text: str) -> tuple[float, bool]:
    """(value, ERANGE) as glibc's strtod reads TEXT entirely (ERANGE: overflow, or a
    result below DBL_MIN that is not exact)."""
    match = _C_FLOAT.fullmatch(text)
    if match is None:
        raise ValueError(text)
    sign = -1.0 if text.lstrip(_WS).startswith("-") else 1.0
    if match["nan"]:
        return math.copysign(_nan_with_payload(match["nan"]), sign), False
    if match["inf"]:
        return sign * math.inf, False
    number = match["dec"] or match["hex"]
    try:
        d = float.fromhex(number) if match["hex"] else float(number)
    except OverflowError:
        d = math.inf
    if d == 0.0:
        low = number.lower()
        mantissa = low[2:].partition("p")[0] if match["hex"] else low.partition("e")[0]
        tiny = any(c not in "0." for c in mantissa)
    elif d < DBL_MIN:  # subnormal: the literal's exponent is small, so exact is cheap
        if match["hex"]:
            mant, _, exp = number[2:].lower().partition("p")
            whole, _, frac = mant.partition(".")
            exact = Fraction(int(whole + frac, 16)) * Fraction(2) ** (int(exp or 0) - 4 * len(frac))
        else:
            exact = Fraction(number)
        tiny = Fraction(d) != exact
    else:
        tiny = False
    return sign * d, math.isinf(d) or tiny


def parse_typed_value(text: str, type_: int) -> Any:
    """TEXT as a value of metric type TYPE_, read as pmstore reads its value argument.

    Integers are decimal, or hex with a 0x prefix; unsigned types take a minus sign as
    strtoul does (wrapping modulo 2^64); floats follow strtod (hex floats, inf, nan)
    but reject plain "0x..." hex, and PM_TYPE_FLOAT refuses magnitudes below FLT_MIN,
    zero included.  An empty string is 0.  Raises StoreValueError: PM_ERR_TYPE when
    TEXT is not entirely a number of that kind, -ERANGE when it does not fit.
    """
    base = 16 if _is_hex(text) else 10
    try:
        if type_ == _STR:
            return text
        if type_ in _INT_LIMITS:
            if not text:
                return 0
            bits, signed = _INT_LIMITS[type_]
            n, overflow = _strtoint(text, base, 64, signed)
            if not overflow and bits == 32 and n != wrap(n, 32, signed):
                overflow = True
            if overflow:
                raise StoreValueError(-errno.ERANGE, text, type_)
            return n
        if type_ in (_FLT, _DBL):
            if base == 16:
                raise ValueError(text)
            d, overflow = _strtod(text) if text else (0.0, False)
            if type_ == _FLT:
                overflow = overflow or abs(d) < FLT_MIN or abs(d) > FLT_MAX
                d = f32(d)
            if overflow:
                raise StoreValueError(-errno.ERANGE, text, type_)
            return d
    except ValueError:
        raise StoreValueError(PM_ERR_TYPE, text, type_) from None
    raise StoreValueError(PM_ERR_TYPE, text, type_)
