"""A record's values rewritten by the metric specs (PCP's do_result).

Per value set, in PCP's order: a deleted metric's set goes; a new PMID is stamped
on; a change of instance domain keeps one value (OUTPUT), then instances are
renumbered or dropped, values rescaled (same dimensions, new scale), and retyped.
A value that will not convert ends the run with PCP's message.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence

from purepcp.pmapi.convert import extract_value, pmConvScale
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.ids import pmIDStr
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.values import Result, ValueSet

from .specs import PM_IN_NULL, PM_INDOM_NULL, InstFlag, MetricFlag, MetricSpec, Output

_I32, _U32, _I64, _U64, _FLT, _DBL = range(6)


class ConversionError(Exception):
    """A value could not be converted: the message PCP prints; then the record as
    far as it was rewritten (the set being converted holds the values done)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.result: Result | None = None
        self.failed: ValueSet | None = None


def rewrite_result(result: Result, specs: dict[int, MetricSpec]) -> Result | None:
    """RESULT with every value set rewritten; None when nothing of it is left
    (a mark record stays a mark)."""
    if not result.vsets:
        return result
    out: list[ValueSet] = []
    changed = False
    for vs in result.vsets:
        mp = specs.get(vs.pmid)
        if mp is None or (not mp.flags and mp.ip is None):
            out.append(vs)
            continue
        changed = True
        if mp.flags & MetricFlag.DELETE:
            continue
        try:
            out.append(rewrite_set(vs, mp))
        except ConversionError as exc:
            exc.result = result
            exc.failed = ValueSet.empty(vs.pmid)
            raise
    if not out:
        return None
    return Result(result.timestamp, tuple(out)) if changed else result


def _pairs(vs: ValueSet, type_: int) -> list[tuple[int, object]]:
    if vs.numval <= 0:
        return []
    return list(zip(vs.insts, vs.atoms(type_), strict=True))


def rewrite_set(vs: ValueSet, mp: MetricSpec) -> ValueSet:
    old = mp.old_desc
    pmid = mp.new_desc.pmid if mp.flags & MetricFlag.PMID else vs.pmid
    if vs.numval < 0:
        return ValueSet.of_error(pmid, vs.numval)
    type_ = old.type
    pairs = _pairs(vs, type_)
    if mp.flags & MetricFlag.INDOM and pairs and mp.output != Output.ALL:
        pairs = _pick(pairs, mp, type_)
    if mp.ip is not None:
        ip = mp.ip
        for k, flags in enumerate(ip.inst_flags):
            if flags & InstFlag.INST:
                pairs = [(ip.new_inst[k] if i == ip.old_inst[k] else i, v) for i, v in pairs]
            if flags & InstFlag.DELETE:
                pairs = [(i, v) for i, v in pairs if i != ip.old_inst[k]]
    if mp.flags & MetricFlag.RESCALE and type_ in range(6):
        pairs = [(i, _rescale(v, mp)) for i, v in pairs]
    if mp.flags & MetricFlag.TYPE:
        pairs = [(i, _retype(v, mp)) for i, v in pairs]
        type_ = mp.new_desc.type
    if not pairs:
        return ValueSet.empty(pmid)
    if (
        type_ not in range(6)
        and vs.numval > 0
        and len(pairs) == vs.numval
        and ([i for i, _ in pairs] == list(vs.insts))
    ):
        return vs._replace(pmid=pmid)
    if type_ not in range(6):  # (blocks kept as they are, under their output instances)
        insts = array("I", [i & 0xFFFFFFFF for i, _ in pairs])
        values = tuple(v for _, v in pairs)
        return vs._replace(pmid=pmid, numval=len(pairs), insts=insts, values=values)
    return ValueSet.of_atoms(pmid, type_, [(i & 0xFFFFFFFF, v) for i, v in pairs])


def _pick(pairs: list[tuple[int, object]], mp: MetricSpec, type_: int) -> list[tuple[int, object]]:
    """The one value an OUTPUT clause keeps, with its output instance."""
    o = mp.output
    pick: int | None = 0
    if o == Output.LAST:
        pick = len(pairs) - 1
    elif o == Output.ONE:
        want = mp.one_inst & 0xFFFFFFFF
        pick = next((j for j, (i, _) in enumerate(pairs) if i == want), None)
    elif o in (Output.MIN, Output.MAX):
        best = 0
        for j in range(1, len(pairs)):
            v, b = pairs[j][1], pairs[best][1]
            if (o == Output.MIN and v < b) or (o == Output.MAX and v > b):  # type: ignore[operator]
                best = j
        pick = best
    elif o in (Output.SUM, Output.AVG):
        total = _sum([v for _, v in pairs], type_)
        if o == Output.AVG:
            total = _avg(total, len(pairs), type_)
        pairs = [(pairs[0][0], total), *pairs[1:]]
        pick = 0
    if pick is None:
        return []
    inst, value = pairs[pick]
    if mp.new_desc.indom == PM_INDOM_NULL:
        inst = PM_IN_NULL
    elif mp.old_desc.indom == PM_INDOM_NULL:
        inst = mp.one_inst
    return [(inst & 0xFFFFFFFF, value)]


def _wrap(n: int, bits: int, signed: bool) -> int:
    n &= (1 << bits) - 1
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return n


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _sum(values: Sequence[object], type_: int) -> object:
    if type_ == _FLT:
        total = 0.0
        for v in values:
            total = _f32(total + v)  # type: ignore[operator]
        return total
    if type_ == _DBL:
        return float(sum(values))  # type: ignore[arg-type]
    total_i = sum(int(v) for v in values)  # type: ignore[call-overload]
    return _wrap(total_i, 32 if type_ in (_I32, _U32) else 64, type_ in (_I32, _I64))


def _avg(total: object, n: int, type_: int) -> object:
    if type_ == _FLT:
        return _f32(total / n)  # type: ignore[operator]
    if type_ == _DBL:
        return total / n  # type: ignore[operator]
    avg = 0.5 + total / n  # type: ignore[operator]
    return _wrap(int(avg), 32 if type_ in (_I32, _U32) else 64, type_ in (_I32, _I64))


def _trace_extract(value: object, itype: int, otype: int, out: object, code: int = 0) -> None:
    """libpcp's -Dvalue line for one pmExtractValue."""
    from purepcp.pmapi.printvalue import pmAtomStr

    result = f"Error: {pmErrStr(code)}" if code else pmAtomStr(out, otype)
    sys.stderr.write(
        f"pmExtractValue:  {pmAtomStr(value, itype)} [{pmTypeStr(itype)}] -> {result}"
        f" [{pmTypeStr(otype)}]\n"
    )


def _rescale(value: object, mp: MetricSpec) -> object:
    from purepcp.pmapi import debug

    tracing = debug.on("value")
    t = mp.old_desc.type
    if tracing:
        _trace_extract(value, t, t, value)
    try:
        out = pmConvScale(t, value, mp.old_desc.units, mp.new_desc.units)
    except PMError as exc:
        if tracing:
            from purepcp.pmapi.printvalue import pmAtomStr

            sys.stderr.write(
                f"pmConvScale: {pmAtomStr(value, t)} [{mp.old_desc.units}] -> Error:"
                f" {pmErrStr(exc.code)} [{mp.new_desc.units}]\n"
            )
        raise ConversionError(
            f"Botch: {mp.old_name} ({pmIDStr(mp.old_desc.pmid)}): scale conversion from"
            f" {mp.old_desc.units} to {mp.new_desc.units} failed: {pmErrStr(exc.code)}"
        ) from None
    if tracing:
        from purepcp.pmapi.printvalue import pmAtomStr

        sys.stderr.write(
            f"pmConvScale: {pmAtomStr(value, t)} [{mp.old_desc.units}] ->"
            f" {pmAtomStr(out, t)} [{mp.new_desc.units}]\n"
        )
    return out


def _retype(value: object, mp: MetricSpec) -> object:
    from purepcp.pmapi import debug

    itype, otype = mp.old_desc.type, mp.new_desc.type
    try:
        out = extract_value(value, itype, otype)
    except PMError as exc:
        if debug.on("value"):
            _trace_extract(value, itype, otype, None, exc.code)
        raise ConversionError(
            f"Error: {mp.old_name} ({pmIDStr(mp.old_desc.pmid)}): extracting value from type"
            f" {pmTypeStr(mp.old_desc.type)} to {pmTypeStr(mp.new_desc.type)}:"
            f" {pmErrStr(exc.code)}"
        ) from None
    if debug.on("value"):
        _trace_extract(value, itype, otype, out)
    return out


__all__ = ["ConversionError", "dump_result", "rewrite_result"]


def dump_result(result: Result, failed: ValueSet | None, source) -> str:
    """__pmResult's dump of RESULT as far as it was rewritten (FAILED for the set
    whose conversion failed), as PCP prints it before giving up."""
    from purepcp.pmapi.debug import result_dump
    from purepcp.pmapi.errors import PM_ERR_INST

    if failed is not None:
        vsets = tuple(failed if vs.pmid == failed.pmid else vs for vs in result.vsets)
        result = Result(result.timestamp, vsets)

    def names(pmid: int) -> list[str]:
        found = source.archive.pmns.names(pmid)
        if not found:
            raise PMError(-12357)
        return found

    def instance(indom: int, inst: int) -> str:
        raise PMError(PM_ERR_INST)  # (no time in the archive context: no names)

    descs = {vs.pmid: source.desc(vs.pmid) for vs in result.vsets}
    return result_dump(result, descs, names, instance)
