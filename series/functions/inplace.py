"""The functions that rewrite their argument's values in place (series_calculate_rate,
_abs, _floor, _round, _log, _sqrt, _rescale): the result is the argument's own series,
metric names kept, its values and descriptor changed."""

from __future__ import annotations

from dataclasses import replace

from purepcp.pmapi.cnumbers import (
    atof,
    c_floor,
    c_log,
    c_round,
    c_sqrt,
    fdiv,
    float_of_double,
    wrap,
)
from purepcp.pmapi.convert import pmConvScale
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.units import Units, pmUnitsStr

from ..parse import Func
from .loops import Grid
from .valuesets import Node, Run, Series, Value, timespec_delta
from .valuetext import (
    DBL,
    FLT,
    I32,
    I64,
    UNKNOWN,
    atom_text,
    printf_f6,
    same_dims,
    scan,
    units_error,
    units_of,
    value_type,
)

__all__ = ["rate", "rescale", "unary"]


def _rate_of(s: Series) -> None:
    """A counter's rates, per instance (v[j-1]-v[j])/(t[j-1]-t[j]) in %.6f, stamped with
    sample j's time, into sample j-1; one sample fewer once the last is reached."""
    grid = Grid.of(s)
    if grid is None:
        return
    n = grid.n_samples
    for j in range(1, n):
        if not grid.complete(j):
            continue
        earlier, later = grid.sample(j - 1), grid.sample(j)
        if len(earlier) < grid.n_inst:  # PCP reads a missing sample here (and crashes)
            continue
        for k in range(grid.n_inst):
            t, v = earlier[k], later[k]
            rate = fdiv(atof(t.data) - atof(v.data), timespec_delta(t.ns, v.ns))
            earlier[k] = Value(v.timestamp, v.ns, t.series, printf_f6(rate))
        if j == n - 1:
            s.num_samples -= 1


def rate(node: Node, run: Run) -> None:
    """rate (series_calculate_rate): counters' rates per second, doubles with "instant"
    semantics and units per second; anything else is PCP's error."""
    left = node.children[0]
    node.values = left.values
    for i, s in enumerate(node.values):
        if s.desc.semantics.startswith("counter"):
            _rate_of(s)
        else:
            expr = run.canonical(left, i)
            run.fail(f"Can't rate convert '{expr}', counter semantics required\n")
            s.num_samples = -s.num_samples
        units = units_of(s.desc.units) or Units()
        units = replace(units, dimTime=wrap(units.dimTime - 1, 4), scaleTime=3)  # (C's 4 bits)
        s.desc.type = "double"
        s.desc.semantics = "instant"
        s.desc.units = pmUnitsStr(units)


def _type_of(s: Series, run: Run) -> int | None:
    """The series' value type for a function on values; None (and PCP's error, the sample
    count negated) when it is not numeric."""
    type_ = value_type(s.desc.type)
    if type_ == UNKNOWN:
        run.fail("Series values' Type extract fail, unsupported type\n")
        s.num_samples = -s.num_samples
        return None
    return type_


def unary(node: Node, run: Run) -> None:
    """abs, floor, round (the type kept), log and sqrt (double results), value by value
    in place.  As in PCP, the first value that cannot be read or printed ends the whole
    function (the rest stays as it was), and sqrt of a double prints nothing unless an
    earlier series set the result type."""
    call = node.call
    func = call.func
    node.values = node.children[0].values
    base = None
    if func is Func.LOG and call.param is not None:
        base = atof(call.param.text)
    otype = UNKNOWN
    for s in node.values:
        itype = _type_of(s, run)
        if itype is None:
            return
        for value in s.each_value():
            number = scan(itype, value.data)
            if number is None:
                return
            out_type = itype
            if func is Func.ABS:  # (negated when below zero: -0 and NaN keep their sign)
                result: float | int = -number if number < 0 else number
                if itype in (I32, I64):
                    result = wrap(int(result), 32 if itype == I32 else 64, True)
            elif func is Func.FLOOR:
                result = c_floor(number) if itype in (FLT, DBL) else number
            elif func is Func.ROUND:
                if itype == FLT:
                    result = c_round(float(number))
                elif itype == DBL:
                    result = c_round(float_of_double(float(number)))
                else:
                    result = number
            elif func is Func.LOG:
                otype = out_type = DBL
                result = c_log(float(number))
                if base is not None:
                    result = fdiv(result, c_log(base))
            else:  # SQRT: a double in stays a double without setting the result type
                if itype != DBL:
                    otype = DBL
                out_type = otype
                result = c_sqrt(float(number))
            text = atom_text(out_type, result)
            if text is None:
                return
            value.data = text
        if func in (Func.LOG, Func.SQRT):
            s.desc.type = pmTypeStr(otype)


def rescale(node: Node, run: Run) -> None:
    """rescale(expr, "units"): every value converted with pmConvScale as a double and
    printed %e; the units changed, the type text kept."""
    node.values = node.children[0].values
    target = node.call.scale
    assert target is not None  # (the parser gives rescale its units)
    for s in node.values:
        iunit = units_of(s.desc.units)
        if iunit is None:
            run.fail(f"Units string of {s.sid} parse error, {units_error(s.desc.units)}\n")
            s.num_samples = -s.num_samples
            return
        if not same_dims(iunit, target):
            run.fail(
                f"Dimensions of units mismatch, for series {s.sid} the units is {s.desc.units}\n"
            )
            s.num_samples = -s.num_samples
            return
        if _type_of(s, run) is None:
            return
        for value in s.each_value():
            number = scan(DBL, value.data)
            if number is None:
                return
            try:
                scaled = pmConvScale(DBL, number, iunit, target)
            except PMError:
                return
            text = atom_text(DBL, scaled)
            if text is None:
                return
            value.data = text
        s.desc.units = pmUnitsStr(target)
