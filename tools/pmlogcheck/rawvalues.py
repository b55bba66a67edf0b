"""A record's values as libpcp hands them to pmlogcheck: each value block's payload is
byte-swapped only when the block's own type says it holds a 64-bit or floating-point
value, so the untyped blocks of old archives read as the host (little-endian) reads
them, and pmExtractValue refuses a block of the wrong size or type.  The archive
reader corrects such blocks; pass 3 must see what libpcp sees to find what it finds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

from purepcp.pmapi.convert import pmExtractValue
from purepcp.pmapi.errors import PM_ERR_CONV, PMError
from purepcp.pmapi.types import PMType, ValFmt

_WORD = struct.Struct(">i")
_UWORD = struct.Struct(">I")
#: block types libpcp swaps into host order, and how each is read
_SWAPPED = {
    PMType.PM_TYPE_64: "q",
    PMType.PM_TYPE_U64: "Q",
    PMType.PM_TYPE_DOUBLE: "d",
    PMType.PM_TYPE_FLOAT: "f",
}


class RawValue(NamedTuple):
    """One pmValue: its instance and either an insitu word or a block (type, payload)."""

    inst: int
    lval: int | None
    vtype: int = 0
    payload: bytes = b""


@dataclass(frozen=True)
class RawSet:
    """One pmValueSet as stored."""

    pmid: int
    numval: int
    valfmt: int
    values: tuple[RawValue, ...]


def raw_sets(record: bytes, v3: bool) -> list[RawSet]:
    """The value sets of RECORD (framed, already read cleanly by the reader)."""
    at = 20 if v3 else 16  # len, timestamp, numpmid
    numpmid = _WORD.unpack_from(record, at - 4)[0]
    out = []
    for _ in range(max(numpmid, 0)):
        pmid, numval = struct.unpack_from(">Ii", record, at)
        at += 8
        if numval <= 0:
            out.append(RawSet(pmid, numval, ValFmt.PM_VAL_INSITU, ()))
            continue
        valfmt = _WORD.unpack_from(record, at)[0]
        at += 4
        words = struct.unpack_from(">" + "Ii" * numval, record, at)
        at += 8 * numval
        pairs = zip(words[::2], words[1::2], strict=True)
        if valfmt == ValFmt.PM_VAL_INSITU:
            values = tuple(RawValue(inst, word) for inst, word in pairs)
        else:
            values = tuple(_block(record, inst, word) for inst, word in pairs)
        out.append(RawSet(pmid, numval, valfmt, values))
    return out


def _block(record: bytes, inst: int, word: int) -> RawValue:
    start = word * 4 - 8  # (a PDU word offset: the PDU has 12 header bytes)
    head = _UWORD.unpack_from(record, start)[0]
    vtype, vlen = head >> 24, head & 0xFFFFFF
    return RawValue(inst, None, vtype, bytes(record[start + 4 : start + vlen]))


def as_double(valfmt: int, value: RawValue, itype: int) -> float:
    """pmExtractValue of VALUE (of a metric of type ITYPE) to a double."""
    if valfmt == ValFmt.PM_VAL_INSITU:
        lval = value.lval or 0
        if itype == PMType.PM_TYPE_U32:
            return float(lval & 0xFFFFFFFF)
        if itype == PMType.PM_TYPE_32:
            return float(lval)
        return float(pmExtractValue(valfmt, lval, itype, PMType.PM_TYPE_DOUBLE))
    code = _SWAPPED.get(itype)  # type: ignore[call-overload]
    if code is None or value.vtype not in (itype, 0):
        raise PMError(PM_ERR_CONV)
    if len(value.payload) != struct.calcsize(code):
        raise PMError(PM_ERR_CONV)
    order = ">" if value.vtype in _SWAPPED else "<"
    return float(struct.unpack(order + code, value.payload)[0])
