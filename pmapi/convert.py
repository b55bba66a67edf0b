"""Value conversions as libpcp does them: pmConvScale, pmExtractValue and pmstore's parse.

Each function reproduces PCP's C arithmetic on a 64-bit Linux host: integers wrap
where C's casts wrap, floats are rounded to single precision where C computes in
float, and out-of-range float-to-integer casts give what x86-64 gives.
"""

from __future__ import annotations

import errno
import struct
from typing import Any

from .cnumbers import (
    FLT_MAX,
    FLT_MIN,
    Scan,
    cdiv,
    float32,
    float32_of_int,
    strtod,
    strtol,
    strtoul,
    to_int,
    wrap,
)
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

__all__ = ["StoreValueError", "extract_value", "parse_typed_value", "pmConvScale", "pmExtractValue"]

_I32, _U32, _I64, _U64 = (int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32),
                          int(PMType.PM_TYPE_64), int(PMType.PM_TYPE_U64))  # fmt: skip
_FLT, _DBL, _STR = int(PMType.PM_TYPE_FLOAT), int(PMType.PM_TYPE_DOUBLE), int(PMType.PM_TYPE_STRING)
_AGG = int(PMType.PM_TYPE_AGGREGATE)
_INT64_MIN = -(1 << 63)


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
    if mult - cdiv(mult, div) * div == 0:
        mult, div = cdiv(mult, div), 1
    half = cdiv(div, 2)
    if type_ in (_I32, _U32, _I64):
        total = wrap(wrap(value * mult, 64, True) + half, 64, True)
        out = cdiv(total, div)
        return wrap(out, 32, type_ == _I32) if type_ != _I64 else wrap(out, 64, True)
    if type_ == _U64:
        u = (1 << 64) - 1
        return ((value * (mult & u) + (half & u)) & u) // (div & u)
    if type_ == _FLT:
        return float32(value * float32(float32_of_int(mult) / float32_of_int(div)))
    if type_ == _DBL:
        return value * (float(mult) / float(div))
    raise PMError(PM_ERR_CONV, f"cannot rescale a value of type {pmTypeStr(type_)}")


# --- pmExtractValue -------------------------------------------------------------------

_INT_LIMITS = {_I32: (32, True), _U32: (32, False), _I64: (64, True), _U64: (64, False)}


def _from_float(x: float, otype: int, single: bool) -> Any:
    """A float or double converted to OTYPE with pmExtractValue's range checks."""
    if otype == _FLT:
        return float32(x)
    if otype == _DBL:
        return x
    if otype not in _INT_LIMITS:
        raise PMError(PM_ERR_CONV)
    rnd = float32 if single else float
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
    return to_int(x, *_INT_LIMITS[otype])


def _from_int(n: int, itype: int, otype: int) -> Any:
    """An integer of ITYPE converted to OTYPE with pmExtractValue's range checks."""
    if otype == _FLT:
        return float32_of_int(n)
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


def _whole(scan: Scan, text: str) -> Scan:
    """SCAN when strto* read all of TEXT (pmstore refuses anything after the number)."""
    if scan.end != len(text):
        raise ValueError(text)
    return scan


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
            scan = _whole((strtol if signed else strtoul)(text, base), text)
            n = int(scan.value)
            if scan.erange or (bits == 32 and n != wrap(n, 32, signed)):
                raise StoreValueError(-errno.ERANGE, text, type_)
            return n
        if type_ in (_FLT, _DBL):
            if base == 16:
                raise ValueError(text)
            scan = _whole(strtod(text), text) if text else Scan(0.0, 0)
            d, overflow = float(scan.value), scan.erange
            if type_ == _FLT:
                overflow = overflow or abs(d) < FLT_MIN or abs(d) > FLT_MAX
                d = float32(d)
            if overflow:
                raise StoreValueError(-errno.ERANGE, text, type_)
            return d
    except ValueError:
        raise StoreValueError(PM_ERR_TYPE, text, type_) from None
    raise StoreValueError(PM_ERR_TYPE, text, type_)
