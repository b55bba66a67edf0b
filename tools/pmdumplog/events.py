"""Event records as pmdumplog prints an event metric's values: each record's time and
flags, then its parameters by name (or the count of records the source missed)."""

from __future__ import annotations

from typing import Any

from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_PMID_LOG, PMError, pmErrStr
from purepcp.pmapi.events import EventRecord, event_flags_str, unpack_event_records
from purepcp.pmapi.ids import PM_ID_NULL, PM_INDOM_NULL, pmIDStr
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import Timestamp, ValueSet

from .source import Source

#: the flag of a record that counts the records the source missed
_MISSED = 1 << 31


def event_text(src: Source, vset: ValueSet, v: Any, desc: Desc, stamp: Timestamp) -> str:
    """dump_event: one instance's event records, parameter by parameter."""
    parts = [f"    {pmIDStr(vset.pmid)} ({src.name_text(vset.pmid)}"]
    if desc.indom != PM_INDOM_NULL:
        parts.append(f"[{src.inst_text(desc.indom, v.inst, stamp)}])")
    else:
        parts.append(")")
    parts.append(": ")
    highres = desc.type == PMType.PM_TYPE_HIGHRES_EVENT
    want = PMType.PM_TYPE_HIGHRES_EVENT if highres else PMType.PM_TYPE_EVENT
    if vset.valfmt == ValFmt.PM_VAL_INSITU or v.value.vtype != want:
        return "".join(parts)  # pmUnpackEventRecords fails: PCP prints nothing more
    try:
        records = unpack_event_records(bytes(v.value.vbuf), highres)
    except PMError:
        return "".join(parts)
    if not records:
        return "".join([*parts, "No event records\n"])
    missed = _missed(records)
    parts.append(f"{len(records)}" + (f" (and {missed} missed)" if missed > 0 else ""))
    parts.append(" event record\n" if len(records) + missed == 1 else " event records\n")
    for r, record in enumerate(records):
        parts.append(_record_text(src, r, record, highres))
    return "".join(parts)


def _missed(records: list[EventRecord]) -> int:
    """The records the source says it missed (the counts of its "missed" records)."""
    return sum(
        r.params[1].value  # type: ignore[misc]
        for r in records
        if len(r.params) == 2
        and r.params[0].kind == "flags"
        and r.flags & _MISSED
        and r.params[1].kind == "missed"
    )


def _record_text(src: Source, r: int, record: EventRecord, highres: bool) -> str:
    """One event record: its header line (time, flags), then each parameter."""
    sec, nsec = record.stamp
    when = src.clock.highres(sec, nsec) if highres else src.clock.timeval(sec, nsec // 1000)
    parts = [f"        --- event record [{r}] timestamp {when}"]
    if not record.params:
        parts.append(" ---\n\t          No parameters\n")
        return "".join(parts)
    flags = 0
    for p, param in enumerate(record.params):
        text, flags = _param_text(src, param, p, flags)
        parts.append(text)
    return "".join(parts)


def _param_text(src: Source, param: Any, p: int, flags: int) -> tuple[str, int]:
    """dump_parameter: the flags (first), the missed count, or one parameter's value."""
    if param.kind == "flags" and p == 0:
        flags = param.value
        return f" flags 0x{flags:x} ({event_flags_str(flags)}) ---\n", flags
    if param.kind == "missed" and p == 1 and flags & _MISSED:
        return f"        ==> {int32(param.value)} missed event records\n", flags
    names = src.names(param.pmid) if param.pmid is not None else []
    if names:
        head = (" ---\n" if p == 0 else "") + f"        {pmIDStr(param.pmid)} ("
        head += " or ".join(names) + "):"
    else:
        head = f"        PMID: {pmIDStr(param.pmid if param.pmid is not None else PM_ID_NULL)}:"
    desc = src.meta.desc(param.pmid) if param.pmid is not None else None
    if desc is None:
        return f"{head} pmLookupDesc: {pmErrStr(PM_ERR_PMID_LOG)}\n", flags
    value = pmPrintValue(param.valfmt, desc.type, param.value, 1)
    return f"{head} value {value}\n", flags
