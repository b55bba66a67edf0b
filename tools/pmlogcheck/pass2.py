"""Pass 2: each metric descriptor of the .meta, in libpcp's hash order, in PCP's words.

A descriptor's type and semantics must be known ones, its instance domain (if any)
of its metric's domain, its dimensions within -2..2, and a scale only where there is a
dimension (and within the known scales).  Not-supported metrics are not checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.hashtable import hash_order
from purepcp.pmapi.ids import pmIDStr
from purepcp.pmapi.types import PMSem, PMType

from .state import Run, Sts, err

if TYPE_CHECKING:
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.pmns import PMNS

PM_INDOM_NULL = 0xFFFFFFFF
PM_SPACE_EBYTE = 6
PM_TIME_HOUR = 5
_SEMS = (PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE)
#: the dimensions and their scales, by pmUnits' field names and PCP's words
_AXES = (("Space", "dimSpace", "scaleSpace"), ("Time", "dimTime", "scaleTime"),
         ("Count", "dimCount", "scaleCount"))  # fmt: skip
_MAX_SCALE = {"Space": PM_SPACE_EBYTE, "Time": PM_TIME_HOUR}


def _domain(ident: int) -> int:
    return (ident >> 22) & 0x1FF


def desc_problems(d: Desc) -> list[str]:
    """What pass 2 says of descriptor D, in its order (without the name prefix)."""
    if d.type == PMType.PM_TYPE_NOSUPPORT:
        return []
    out = []
    if not PMType.PM_TYPE_32 <= d.type <= PMType.PM_TYPE_HIGHRES_EVENT:
        out.append(f"bad type ({d.type}) in pmDesc")
    if d.indom != PM_INDOM_NULL and _domain(d.pmid) != _domain(d.indom):
        out.append(f"domain of pmid ({_domain(d.pmid)}) != domain of indom ({_domain(d.indom)})")
    if d.sem not in _SEMS:
        out.append(f"bad semantics ({d.sem}) in pmDesc")
    u = d.units
    for axis, dim, _ in _AXES:
        if not -2 <= getattr(u, dim) <= 2:
            out.append(f"bad dimension ({getattr(u, dim)}) for {axis} in pmDesc")
    for axis, dim, scale in _AXES:
        value = getattr(u, scale)
        if getattr(u, dim) == 0 and value != 0:
            out.append(f"non-zero scale ({value}) with zero dimension for {axis} in pmDesc")
        if axis in _MAX_SCALE and value > _MAX_SCALE[axis]:
            out.append(f"bad scale ({value}) for {axis} in pmDesc")
    return out


def pass2(run: Run, descs: dict[int, Desc], pmns: PMNS, archname: str) -> Sts:
    """Pass 2 over DESCS (each metric's first descriptor, in the order first read)."""
    if run.vflag:
        err(f"{archname}: start pass2\n")
    for pmid in hash_order(descs):
        try:
            name = pmns.name(pmid)
        except PMError as exc:
            err(f"{archname}.meta: PMID {pmIDStr(pmid)}: no name in PMNS: {pmErrStr(exc.code)}\n")
            name = "unknown"
        for problem in desc_problems(descs[pmid]):
            err(f"{archname}.meta: {name} [{pmIDStr(pmid)}]: {problem}\n")
    return Sts.OK
