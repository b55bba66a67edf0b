"""pminfo -x: the event records of one event metric's value, as PCP's pminfo prints them
(myeventdump): each record's time and flags, then each parameter's names and value."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import tzinfo
from typing import Any

from purepcp.pmapi.cnumbers import wrap
from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_INST, PM_ERR_TYPE, PMError, pmErrStr
from purepcp.pmapi.events import EventParam, EventRecord, event_flags_str, unpack_event_records
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmIDStr, pmInDomStr
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueSet

__all__ = ["event_dump"]

#: the records of a (single-valued) "missed" record are counted, not listed
_MISSED = 1 << 31

InstName = Callable[[int, int], "str | None"]


def event_dump(
    ctx: Any, vset: ValueSet, j: int, dtype: int, zone: tzinfo | None, instname: InstName
) -> str:
    """myeventdump: the records of VSET's J-th value, an event array of type DTYPE.

    Record times are shown in ZONE (None: local time); INSTNAME(indom, inst) names a
    parameter's instance.  When the value does not unpack, pminfo says why on stderr.
    """
    highres = dtype == PMType.PM_TYPE_HIGHRES_EVENT
    try:
        records = _unpack(vset, j, highres)
    except PMError as exc:
        caller = "pmUnpackHighResEventRecords" if highres else "pmUnpackEventRecords"
        sys.stderr.write(f"pminfo: {caller}: {pmErrStr(exc.code)}\n")
        return ""
    return "".join(_record(ctx, r, rec, highres, zone, instname) for r, rec in enumerate(records))


def _unpack(vset: ValueSet, j: int, highres: bool) -> list[EventRecord]:
    """pmUnpackEventRecords's checks of the value, then its records."""
    if vset.valfmt == ValFmt.PM_VAL_INSITU:
        raise PMError(PM_ERR_CONV)
    want = PMType.PM_TYPE_HIGHRES_EVENT if highres else PMType.PM_TYPE_EVENT
    if vset.vtype != want:
        raise PMError(PM_ERR_TYPE)
    return unpack_event_records(bytes(vset.values[j]), highres)


def _record(
    ctx: Any, r: int, record: EventRecord, highres: bool, zone: tzinfo | None, instname: InstName
) -> str:
    """One record: its header line (time, and flags if any), then its parameters."""
    from purepcp.pmapi.timewindow import format_stamp

    stamp = format_stamp(record.stamp, zone, digits=9 if highres else 3)
    out = [f"    --- event record [{r}] timestamp {stamp}"]
    if not record.params:
        out.append(" ---\n\tNo parameters\n")
        return "".join(out)
    for p, param in enumerate(record.params):
        out.append(_parameter(ctx, param, p, record.flags, instname))
    return "".join(out)


def _parameter(ctx: Any, param: EventParam, p: int, flags: int, instname: InstName) -> str:
    """dump_parameter: the flags (first), the missed count (second), or a named value."""
    if param.kind == "flags":
        return f" flags 0x{flags:x} ({event_flags_str(flags)}) ---\n"
    if param.kind == "missed" and flags & _MISSED:
        return f"        ==> {wrap(int(param.value), 32)} missed event records\n"  # type: ignore[arg-type]
    assert param.pmid is not None
    try:
        names = ctx.name_all(param.pmid)
    except PMError:
        names = []
    if names:
        out = (" ---\n" if p == 0 else "") + "    " + " or ".join(names)
        out += f" ({pmIDStr(param.pmid)})\n"
    else:
        out = f"\tPMID: {pmIDStr(param.pmid)}\n"
    try:
        desc = ctx.lookup_desc(param.pmid)
    except PMError as exc:
        return out + f"\tpmLookupDesc: {pmErrStr(exc.code)}\n"
    return out + "    " + _value(desc, param, instname)


def _value(desc: Any, param: EventParam, instname: InstName) -> str:
    """mydump for a parameter's one value (its instance is PM_IN_NULL)."""
    head = "   "
    if desc.indom != PM_INDOM_NULL:
        number = wrap(PM_IN_NULL, 32)
        name = instname(desc.indom, PM_IN_NULL)
        if name is None:
            head = (
                f"pmNameIndom: indom={pmInDomStr(desc.indom)} inst={number}: "
                f"{pmErrStr(PM_ERR_INST)}\n    inst [{number}]"
            )
        else:
            head = f'    inst [{number} or "{name}"]'
    return f"{head} value {pmPrintValue(param.valfmt, desc.type, param.value, 1)}\n"
