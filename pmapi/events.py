"""Event records: pmUnpackEventRecords, pmUnpackHighResEventRecords and pmEventFlagsStr.

An event metric's value is a block holding an array of records, each a timestamp, flags
and parameters (a pmid and a typed value each), big-endian as pmcd sends it and as an
archive keeps it.  pmval and pmdumplog print what these give back.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from purepcp.pmapi.errors import (  # type: ignore[attr-defined]
    PM_ERR_CONV,
    PM_ERR_TOOBIG,
    PM_ERR_TOOSMALL,
    PM_ERR_TYPE,
    PMError,
)
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueBlock

__all__ = ["EventParam", "EventRecord", "event_flags_str", "unpack_event_records"]

#: PM_EVENT_FLAG_* bits with pmEventFlagsStr's words, and PM_EVENT_FLAG_MISSED
_FLAG_NAMES = ((1 << 0, "point"), (1 << 1, "start"), (1 << 2, "end"), (1 << 3, "id"),
               (1 << 4, "parent"))  # fmt: skip
_FLAG_MISSED = 1 << 31


@dataclass
class EventParam:
    pmid: int | None  # None for the flags and missed-count pseudo-parameters
    type: int
    valfmt: int
    value: int | ValueBlock
    kind: str = "param"  # "param", "flags" or "missed"


@dataclass
class EventRecord:
    stamp: tuple[int, int]  # seconds, nanoseconds
    flags: int
    params: list[EventParam]


def unpack_event_records(vbuf: bytes, highres: bool) -> list[EventRecord]:
    """The records in an event array's payload (big-endian, as pmcd sends it).

    PMError as libpcp's checks fail: PM_ERR_TOOSMALL, PM_ERR_TOOBIG, PM_ERR_CONV for
    other flags beside "missed", PM_ERR_TYPE for a nested event parameter.
    """
    if len(vbuf) < 4:
        raise PMError(PM_ERR_TOOSMALL)
    (nrecords,) = struct.unpack_from(">i", vbuf)
    if nrecords < 0:
        raise PMError(PM_ERR_TOOSMALL)
    header = struct.Struct(">qqIi" if highres else ">iiIi")
    records, base = [], 4
    for _ in range(nrecords):
        if base + header.size > len(vbuf):
            raise PMError(PM_ERR_TOOBIG)
        sec, sub, flags, nparams = header.unpack_from(vbuf, base)
        base += header.size
        if flags & _FLAG_MISSED and flags != _FLAG_MISSED:
            raise PMError(PM_ERR_CONV)
        params: list[EventParam] = []
        if flags:
            params.append(
                EventParam(None, PMType.PM_TYPE_U32, ValFmt.PM_VAL_INSITU, flags, "flags")
            )
        if flags & _FLAG_MISSED:
            missed = EventParam(None, PMType.PM_TYPE_32, ValFmt.PM_VAL_INSITU, nparams, "missed")
            params.append(missed)
            nparams = 0
        for _ in range(nparams):
            if base + 8 > len(vbuf):
                raise PMError(PM_ERR_TOOBIG)
            pmid, word = struct.unpack_from(">II", vbuf, base)
            ptype, plen = word >> 24, word & 0xFFFFFF
            size = 4 + (plen + 3) // 4 * 4
            if base + size > len(vbuf):
                raise PMError(PM_ERR_TOOBIG)
            payload = vbuf[base + 8 : base + 4 + plen]
            params.append(_event_param(pmid, ptype, payload))
            base += size
        nsec = sub if highres else sub * 1000
        records.append(EventRecord((sec, nsec), flags, params))
    return records


def _event_param(pmid: int, ptype: int, payload: bytes) -> EventParam:
    if ptype in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32):
        (word,) = struct.unpack(">i", payload[:4].ljust(4, b"\0"))
        return EventParam(pmid, ptype, ValFmt.PM_VAL_INSITU, word)
    sizes = {PMType.PM_TYPE_64: 8, PMType.PM_TYPE_U64: 8, PMType.PM_TYPE_FLOAT: 4,
             PMType.PM_TYPE_DOUBLE: 8}  # fmt: skip
    if ptype in sizes:
        payload = payload[: sizes[ptype]]
    elif ptype not in (PMType.PM_TYPE_STRING, PMType.PM_TYPE_AGGREGATE,
                       PMType.PM_TYPE_AGGREGATE_STATIC):  # fmt: skip
        raise PMError(PM_ERR_TYPE)
    return EventParam(pmid, ptype, ValFmt.PM_VAL_DPTR, ValueBlock(ptype, payload))


def event_flags_str(flags: int) -> str:
    """pmEventFlagsStr."""
    if flags & _FLAG_MISSED:
        return "missed"
    return ",".join(name for bit, name in _FLAG_NAMES if flags & bit)
