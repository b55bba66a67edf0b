"""Arithmetic in pmseries expressions (series_calculate_plus, _minus, _star, _slash and
series_calculate_order_binary): value by value in the wider of the two types, into the
left side's values, with PCP's checks on the operands' indoms, sample counts, semantics,
types and units, and its quirks (see _operate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from purepcp.pmapi.cnumbers import atof, cdiv, fdiv, scan_int, wrap
from purepcp.pmapi.convert import pmConvScale
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.types import pmSemStr, pmTypeStr
from purepcp.pmapi.units import Units, pmUnitsStr

from ..parse import Arith, Binary, Number
from .valuesets import Node, Run, Series, Value
from .valuetext import (
    COUNTER,
    DBL,
    DISCRETE,
    FLT,
    I32,
    I64,
    INSTANT,
    U32,
    U64,
    UNKNOWN,
    atom_text,
    printf_e,
    scan,
    sem_code,
    units_error,
    units_of,
    value_type,
)

__all__ = ["binary"]


@dataclass
class _Operands:
    """What series_calculate_binary_check works out for two series."""

    l_type: int
    r_type: int
    l_sem: int
    r_sem: int
    l_units: Units
    r_units: Units
    large: list[int]  # scaleSpace, scaleTime, scaleCount of the result (dims set later)


def _binary_check(op: Arith, left: Series, right: Series, run: Run) -> _Operands | None:
    if left.desc.indom != right.desc.indom:
        run.fail("Operands should have the same instance domain for all of the binary operators.\n")
        return None
    if left.num_samples != right.num_samples:
        run.fail(
            f"Number of samples of two metrics are not identical, {left.sid} has "
            f"{left.num_samples} but {right.sid} has {right.num_samples}\n"
        )
        return None
    l_sem, r_sem = sem_code(left.desc.semantics), sem_code(right.desc.semantics)
    if l_sem == COUNTER and r_sem == COUNTER and op not in (Arith.PLUS, Arith.MINUS):
        run.fail(
            "Both operands have the semantics of counter, only addition or subtraction "
            "is allowed.\n"
        )
        return None
    if l_sem == COUNTER and r_sem != COUNTER and op not in (Arith.STAR, Arith.SLASH):
        run.fail(
            "Left operand is a counter and the right one is not, only multiplication or "
            "division is allowed.\n"
        )
        return None
    if l_sem != COUNTER and r_sem == COUNTER and op is not Arith.STAR:
        run.fail(
            "Left operand is not a counter and the right one is, only multiplication is allowed.\n"
        )
        return None
    l_type, r_type = value_type(left.desc.type), value_type(right.desc.type)
    if l_type == UNKNOWN or r_type == UNKNOWN:
        run.fail("Series values' Type extract fail, unsupported type\n")
        return None
    units = []
    for s in (left, right):
        parsed = units_of(s.desc.units)
        if parsed is None and not s.desc.units.startswith("none"):
            run.fail(f"Units string of {s.sid} parse error, {units_error(s.desc.units)}\n")
            return None
        units.append(parsed or Units())
    l_units, r_units = units
    scales = lambda u: [u.scaleSpace, u.scaleTime, u.scaleCount]  # noqa: E731
    large = [max(a, b) for a, b in zip(scales(l_units), scales(r_units), strict=True)]
    if large != scales(l_units):
        l_type = DBL
    if large != scales(r_units):
        r_type = DBL
    return _Operands(l_type, r_type, l_sem, r_sem, l_units, r_units, large)


def _result_type(op: Arith, l_type: int, r_type: int) -> int:
    types = (l_type, r_type)
    if DBL in types or op is Arith.SLASH:
        return DBL
    for candidate in (FLT, U64, I64, U32):
        if candidate in types:
            return candidate
    return I32


_WIDTH = {I32: (32, True), U32: (32, False), I64: (64, True), U64: (64, False)}


def _operate(op: Arith, otype: int, a: Any, b: Any, state: _BinaryState) -> Any:
    """calculate_plus/minus/star/slash: the result, None for "no value" (an unsigned
    difference below zero, an unsigned product that overflows, and see below)."""
    if otype == FLT:
        x, y = np.float32(a), np.float32(b)
        with np.errstate(all="ignore"):
            if op is Arith.PLUS:
                return float(x + y)
            if op is Arith.MINUS:
                return float(x - y)
            if op is Arith.STAR:
                return float(x * y)
            return float(x / y) if y != 0 else fdiv(float(x), float(y))
    if otype == DBL:
        if op is Arith.PLUS:
            return a + b
        if op is Arith.MINUS:
            return a - b
        if op is Arith.STAR:
            return a * b
        return fdiv(a, b)
    bits, signed = _WIDTH[otype]
    if op is Arith.PLUS:
        return wrap(a + b, bits, signed)
    if op is Arith.MINUS:
        if not signed and a < b:
            return None
        return wrap(a - b, bits, signed)
    if op is Arith.STAR:
        if not signed:
            if b != 0 and a > (2**bits - 1) // b:
                return None
            return a * b
        # PCP checks a signed product against its result variable before computing it:
        # `res / l != r`, with res uninitialised at first and then the last product
        # that passed; so in practice only a zero left operand (or an operation that
        # repeats the last passing one) gives a value, the rest "no value"
        if a != 0 and (state.res is None or cdiv(state.res, a) != b):
            return None
        state.res = wrap(a * b, bits, signed)
        return state.res
    return None  # never reached: a quotient is always a double


class _BinaryState:
    """The pmAtomValues PCP reuses across the values of one operation (a value that
    cannot be read leaves the previous one), and the result units' scales."""

    def __init__(self, ops: _Operands) -> None:
        self.ops = ops
        self.l_val: Any = 0
        self.r_val: Any = 0
        self.large = list(ops.large)
        self.otype = UNKNOWN
        self.res: int | None = None  # the signed product check's variable (see _operate)

    def units(self, dims: tuple[int, int, int]) -> Units:
        return Units(dims[0], dims[1], dims[2], *self.large)


def _order_binary(op: Arith, ops: _Operands, state: _BinaryState, lv: Value, rv: Value) -> None:
    """series_calculate_order_binary: LV.data = LV op RV, in the wider type."""
    otype = _result_type(op, ops.l_type, ops.r_type)
    state.otype = otype
    r_val, l_val = scan(otype, rv.data), scan(otype, lv.data)
    if r_val is not None:
        state.r_val = r_val
    if l_val is not None:
        state.l_val = l_val
    if otype in (FLT, DBL):
        state.l_val, state.r_val = float(state.l_val), float(state.r_val)
    else:
        state.l_val, state.r_val = int(state.l_val), int(state.r_val)
    # the scale conversion is done towards units whose dimensions are still all zero,
    # so it fails (and zeroes the result scales) unless the operand is dimensionless
    for which, units in (("l_val", ops.l_units), ("r_val", ops.r_units)):
        try:
            converted = pmConvScale(otype, getattr(state, which), units, state.units((0, 0, 0)))
        except PMError:
            state.large = [0, 0, 0]
        else:
            setattr(state, which, converted)
    result = _operate(op, otype, state.l_val, state.r_val, state)
    if result is None:
        lv.data = "no value"
    else:
        lv.data = atom_text(otype, result) or ""


def _meta_update(s: Series, units: Units, ops: _Operands, otype: int) -> None:
    """series_binary_meta_update: units, semantics and (when a value was computed) type."""
    s.desc.units = pmUnitsStr(units)
    if ops.l_sem == DISCRETE and ops.r_sem == DISCRETE:
        sem = DISCRETE
    elif ops.l_sem != COUNTER or ops.r_sem != COUNTER:
        sem = INSTANT
    else:
        sem = COUNTER
    if otype != UNKNOWN:
        s.desc.type = pmTypeStr(otype)
    s.desc.semantics = pmSemStr(sem)


def _dims(a: Units, b: Units, op: Arith) -> tuple[int, int, int]:
    """The result's dimensions, kept in pmUnits' 4-bit fields as C keeps them (wrapping)."""
    la, lb = (a.dimSpace, a.dimTime, a.dimCount), (b.dimSpace, b.dimTime, b.dimCount)
    if op is Arith.STAR:
        return (dim4(la[0] + lb[0]), dim4(la[1] + lb[1]), dim4(la[2] + lb[2]))
    if op is Arith.SLASH:
        return (dim4(la[0] - lb[0]), dim4(la[1] - lb[1]), dim4(la[2] - lb[2]))
    return la


def dim4(n: int) -> int:
    """N stored in a pmUnits dimension (a signed 4-bit field): -8 - 1 is 7, as in C."""
    return wrap(n, 4)


def _apply(op: Arith, run: Run, left: Series, right: Series) -> _BinaryState | None:
    """One series of LEFT op RIGHT, in place in LEFT's values; None after an error."""
    ops = _binary_check(op, left, right, run)
    if ops is None:
        return None
    state = _BinaryState(ops)
    for j in range(max(left.num_samples, 0)):
        lsample, rsample = left.slot(j), right.slot(j)
        if len(lsample) != len(rsample):
            run.fail("Number of instances of two metrics are inconsistent.\n")
            return None
        for lv, rv in zip(lsample, rsample, strict=True):
            _order_binary(op, ops, state, lv, rv)
    return state


def binary(node: Node, run: Run) -> None:
    """+, -, / (on the first series of each side only, the rest left as they are) and *
    (series by series, or every value times a number, %e)."""
    expr = node.expr
    assert isinstance(expr, Binary)
    op = expr.op
    lnode, rnode = node.children
    lvals, rvals = lnode.values, rnode.values
    if op is Arith.STAR and (not lvals or not rvals):
        _scalar(node, run)
        return
    if not lvals or not rvals:
        return
    if op is not Arith.STAR:
        state = _apply(op, run, lvals[0], rvals[0])
        if state is None:
            return
        units = state.units(_dims(state.ops.l_units, state.ops.r_units, op))
        _meta_update(lvals[0], units, state.ops, state.otype)
        node.values = lvals
        return
    otype = UNKNOWN  # (kept from one series to the next, as PCP keeps it)
    for i in range(len(lvals)):
        if i >= len(rvals):  # PCP reads past the right side's series here
            run.fail("Number of instances of two metrics are inconsistent.\n")
            return
        state = _apply(op, run, lvals[i], rvals[i])
        if state is None:
            return
        if state.otype != UNKNOWN:
            otype = state.otype
        units = state.units(_dims(state.ops.l_units, state.ops.r_units, op))
        _meta_update(lvals[0], units, state.ops, otype)
        node.values = lvals


def _scalar(node: Node, run: Run) -> None:
    """number * expr or expr * number: every value times the number, %e; a real number
    makes the type double and the semantics "instance"."""
    lnode, rnode = node.children
    number_node, data = (rnode, lnode) if not rnode.values else (lnode, rnode)
    if not isinstance(number_node.expr, Number):
        return  # PCP reads a missing number here (and crashes); nothing matched
    text = number_node.expr.text
    is_int = text.isdigit()
    factor: float = float(scan_int(text, 32, True) or 0) if is_int else atof(text)
    for s in data.values:
        for value in s.each_value():
            value.data = printf_e(atof(value.data) * factor)
        if not is_int:
            s.desc.type = "double"
            s.desc.semantics = "instance"
    node.values = data.values
