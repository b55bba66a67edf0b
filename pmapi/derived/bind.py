"""Binding: a derived metric's expression checked against a context's metadata.

When a context opens, each derived metric's operands are looked up (names to
PMIDs, PMIDs to descriptors), PCP's semantic rules are checked (counters,
dimensions, types, instance domains), and the result's descriptor is worked out
bottom up by pmRegisterDerived(3)'s rules: the promotion table, scale conversion
to the larger scale (the result then a double), semantics from the operands.
What comes out is a plan (evaluate.py) to compute the values, or the semantic
error PCP prints, word for word.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..desc import Desc
from ..ids import PM_ID_NULL, PM_INDOM_NULL
from ..types import PMSem, PMType
from ..units import Units, parse_units_str
from . import ast
from . import evaluate as ev
from .bound import Bound

_32, _U32, _64, _U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
_FLOAT, _DOUBLE = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE
ARITHMETIC_TYPES = (_32, _U32, _64, _U64, _FLOAT, _DOUBLE)
_COUNTER, _INSTANT, _DISCRETE = PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE
NO_UNITS = Units()

#: The result type of + - * and the relational operators, by operand types: libpcp's
#: table, which (with PCP's type numbers 32 < U32 < 64 < U64 < FLOAT < DOUBLE) is the
#: larger of the two.
PROMOTE = {(a, b): max(a, b) for a in ARITHMETIC_TYPES for b in ARITHMETIC_TYPES}

#: Time scales in order, and what each is in the next larger one.
_TIME_FACTOR = (1000, 1000, 1000, 60, 60)

#: The operator and function names libpcp prints in messages.
_NODE_NAMES = {
    "avg": "AVG", "count": "COUNT", "delta": "DELTA", "max": "MAX", "min": "MIN",
    "sum": "SUM", "rate": "RATE", "instant": "INSTANT", "defined": "DEFINED",
    "scalar": "SCALAR", "abs": "ABS", "floor": "FLOOR", "round": "ROUND",
    "sqrt": "SQRT", "log": "LOG", "exp": "EXP",
}  # fmt: skip

_TYPE_NAMES = {"32": _32, "U32": _U32, "64": _64, "U64": _U64, "FLOAT": _FLOAT, "DOUBLE": _DOUBLE}
_SEM_NAMES = {"COUNTER": _COUNTER, "INSTANT": _INSTANT, "DISCRETE": _DISCRETE}


class SemanticError(Exception):
    """A derived metric that cannot be bound; str() is the line PCP prints, ``reason``
    its last part (what pmAddDerivedMetric's message says after the caret)."""

    def __init__(self, text: str, reason: str | None = None) -> None:
        super().__init__(text)
        self.reason = reason if reason is not None else text.rsplit(": ", 1)[-1]


class Unbindable(Exception):
    """An operand is missing from this context (PCP says nothing unless debugging)."""


@dataclass
class _Node:
    """A bound subexpression while binding: plan, metadata and what messages call it."""

    plan: ev.Plan
    desc: Desc
    constant: bool = False  # a number or mkconst(): its metadata yields to the other side
    label: str | None = None  # the name or number libpcp prints for it (None: "<expr>")


def _text(node: _Node) -> str:
    return node.label if node.label is not None else "<expr>"


class Binder:
    """Binds derived metrics in one context.

    lookup(name) gives a real metric's (pmid, desc) or raises Unbindable;
    derived(name) gives another derived metric's parsed tree (or None).
    """

    def __init__(
        self,
        lookup: Callable[[str], tuple[int, Desc]],
        derived: Callable[[str], ast.Node | None],
        defined: Callable[[str], bool],
    ) -> None:
        self.lookup = lookup
        self.derived = derived
        self.defined = defined
        self._stack: list[str] = []
        self._operands: dict[int, None] = {}

    def bind(self, name: str, pmid: int, tree: ast.Node) -> Bound:
        """NAME's plan and descriptor; SemanticError or Unbindable when it has none."""
        self._operands = {}
        self._stack = [name]
        node = self._bind(tree)
        return Bound(replace(node.desc, pmid=pmid), node.plan, tuple(self._operands))

    # -- the nodes ---------------------------------------------------------------------

    def _bind(self, node: ast.Node) -> _Node:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)

    def _fail(self, what: str, message: str) -> SemanticError:
        return SemanticError(
            f"Semantic error: derived metric {self._stack[0]}: {what}: {message}", message
        )

    def _name(self, node: ast.Name) -> _Node:
        tree = None
        try:
            pmid, desc = self.lookup(node.name)
        except Unbindable:
            tree = self.derived(node.name)
            if tree is None:
                raise
        if tree is None:
            self._operands[pmid] = None
            return _Node(ev.Metric(desc.type, desc.indom, pmid), desc, label=node.name)
        if node.name in self._stack:
            cycle = " -> ".join([*self._stack[self._stack.index(node.name) :], node.name])
            raise SemanticError(
                f"Semantic error: derived metric {self._stack[0]}: {node.name}: "
                f"Circular reference to derived metrics ({cycle})"
            )
        self._stack.append(node.name)
        try:
            inner = self._bind(tree)
        finally:
            self._stack.pop()
        return _Node(inner.plan, inner.desc, label=node.name)

    def _number(self, node: ast.Number) -> _Node:
        type_ = _DOUBLE if node.is_double else _U32
        desc = Desc(PM_ID_NULL, type_, PM_INDOM_NULL, _DISCRETE, NO_UNITS)
        return _Node(ev.Const(type_, PM_INDOM_NULL, node.value), desc, True, node.text)

    def _mkconst(self, node: ast.MkConst) -> _Node:
        type_ = _DOUBLE if node.number.is_double else _U32
        if node.type_name is not None:
            type_ = _TYPE_NAMES[node.type_name.upper()]
        sem = _SEM_NAMES[node.semantics.upper()] if node.semantics is not None else _DISCRETE
        units = NO_UNITS
        if node.units is not None:
            units = _units(node.units, self._stack[0])
        value = float(node.number.value) if type_ in (_FLOAT, _DOUBLE) else int(node.number.value)
        desc = Desc(PM_ID_NULL, type_, PM_INDOM_NULL, sem, units)
        return _Node(ev.Const(type_, PM_INDOM_NULL, value), desc, True, node.number.text)

    def _anon(self, node: ast.Anon) -> _Node:
        type_ = _TYPE_NAMES[node.type_name.upper()]
        desc = Desc(PM_ID_NULL, type_, PM_INDOM_NULL, _DISCRETE, NO_UNITS)
        return _Node(ev.NoValues(type_, PM_INDOM_NULL), desc)

    def _unary(self, node: ast.Unary) -> _Node:
        operand = self._bind(node.operand)
        d = operand.desc
        if node.op == "!":
            desc = Desc(PM_ID_NULL, _U32, d.indom, d.sem, NO_UNITS)
            return _Node(ev.Not(_U32, d.indom, operand.plan), desc)
        if d.type not in ARITHMETIC_TYPES:
            raise self._fail(f"- {_text(operand)}", "Non-arithmetic operand for unary negation")
        type_ = {_U32: _32, _U64: _64}.get(d.type, d.type)
        desc = Desc(PM_ID_NULL, type_, d.indom, _INSTANT, d.units)
        return _Node(ev.Negate(type_, d.indom, operand.plan), desc)

    def _call(self, node: ast.Call) -> _Node:
        func = node.func
        if func == "defined":
            arg = node.arg
            known = isinstance(arg, ast.Name) and self.defined(arg.name)
            desc = Desc(PM_ID_NULL, _U32, PM_INDOM_NULL, _DISCRETE, NO_UNITS)
            return _Node(ev.Const(_U32, PM_INDOM_NULL, int(known)), desc)
        operand = self._bind(node.arg)
        d = operand.desc
        what = f"{_NODE_NAMES[func]}({operand.label if operand.label is not None else '(null)'})"
        if func == "count":
            units = Units(dimCount=1)
            desc = Desc(PM_ID_NULL, _U32, PM_INDOM_NULL, _INSTANT, units)
            return _Node(ev.Aggregate(_U32, PM_INDOM_NULL, "count", operand.plan), desc)
        if func == "instant":
            sem = _INSTANT if d.sem == _COUNTER else d.sem
            return _Node(
                ev.Same(d.type, d.indom, operand.plan), replace(d, pmid=PM_ID_NULL, sem=sem)
            )
        if func == "scalar":
            desc = replace(d, pmid=PM_ID_NULL, indom=PM_INDOM_NULL)
            return _Node(ev.Scalar(d.type, PM_INDOM_NULL, operand.plan), desc)
        if d.type not in ARITHMETIC_TYPES:
            raise self._fail(what, "Non-arithmetic operand for function")
        if func in ast.AGGREGATES:
            type_ = _FLOAT if func == "avg" else d.type
            sem = d.sem if func == "sum" else _INSTANT
            desc = Desc(PM_ID_NULL, type_, PM_INDOM_NULL, sem, d.units)
            return _Node(ev.Aggregate(type_, PM_INDOM_NULL, func, operand.plan), desc)
        if func == "delta":
            type_ = {_U32: _64, _U64: _DOUBLE}.get(d.type, d.type)
            desc = Desc(PM_ID_NULL, type_, d.indom, _INSTANT, d.units)
            return _Node(ev.Change(type_, d.indom, "delta", operand.plan), desc)
        if func == "rate":
            return self._rate(operand, what)
        return self._math(func, operand, what)

    def _rate(self, operand: _Node, what: str) -> _Node:
        d = operand.desc
        u = d.units
        if u.dimTime not in (0, 1):
            raise self._fail(what, "Incorrect time dimension for operand")
        scale = 1.0
        if u.dimTime == 1:  # a time per second: utilisation, after the unit is made seconds
            if u.scaleTime > 3:
                for n in range(3, u.scaleTime):
                    scale *= _TIME_FACTOR[n]
            else:
                for _ in range(u.scaleTime, 3):
                    scale /= 1000
        dim_time = u.dimTime - 1
        units = replace(u, dimTime=dim_time, scaleTime=0 if dim_time == 0 else 3)
        desc = Desc(PM_ID_NULL, _DOUBLE, d.indom, _INSTANT, units)
        return _Node(ev.Change(_DOUBLE, d.indom, "rate", operand.plan, scale), desc)

    def _math(self, func: str, operand: _Node, what: str) -> _Node:
        d = operand.desc
        if func in ("abs", "floor", "round"):
            type_ = d.type
            desc = replace(d, pmid=PM_ID_NULL)
        else:
            if d.units != NO_UNITS and (d.units.dimSpace or d.units.dimTime or d.units.dimCount):
                raise self._fail(what, "Operand of function is not dimensionless")
            type_ = _DOUBLE
            desc = Desc(PM_ID_NULL, _DOUBLE, d.indom, _INSTANT, NO_UNITS)
        return _Node(ev.Math(type_, d.indom, func, operand.plan), desc)

    def _rescale(self, node: ast.Rescale) -> _Node:
        operand = self._bind(node.expr)
        d = operand.desc
        target = _units(node.units, self._stack[0])
        what = f"{_text(operand)} RESCALE {target or 'none'}"
        if d.type not in ARITHMETIC_TYPES:
            raise self._fail(what, "Non-arithmetic operand for function")
        if _dims(d.units) != _dims(target) and not _count_or_none(d.units, target):
            raise self._fail(what, "Incompatible dimensions")
        desc = replace(d, pmid=PM_ID_NULL, units=target)
        return _Node(ev.Rescale(d.type, d.indom, operand.plan, d.units, target), desc)

    def _matchinst(self, node: ast.MatchInst) -> _Node:
        operand = self._bind(node.expr)
        try:
            regex = re.compile(node.pattern)
        except re.error as exc:
            raise self._fail("FILTERINST ", f"Bad regular expression: {exc}") from None
        plan = ev.Select(
            operand.desc.type, operand.desc.indom, operand.plan, None, regex, node.invert
        )
        return _Node(plan, replace(operand.desc, pmid=PM_ID_NULL))

    def _select(self, node: ast.Select) -> _Node:
        operand = self._bind(node.expr)
        plan = ev.Select(operand.desc.type, operand.desc.indom, operand.plan, node.instance)
        return _Node(plan, replace(operand.desc, pmid=PM_ID_NULL))

    def _ternary(self, node: ast.Ternary) -> _Node:
        guard, yes, no = self._bind(node.guard), self._bind(node.yes), self._bind(node.no)
        whole = f"{_text(guard)} ? {_text(yes)} : {_text(no)}"
        colon = f"{_text(yes)} : {_text(no)}"
        y, n = yes.desc, no.desc
        if y.type != n.type:
            raise self._fail(colon, "Different types for ternary operands")
        if y.indom != n.indom and PM_INDOM_NULL not in (y.indom, n.indom):
            raise self._fail(colon, "Different instance domains for ternary operands")
        if y.sem != n.sem:
            raise self._fail(colon, "Different semantics for ternary operands")
        for axis in ("Space", "Time", "Count"):
            dim, scale = "dim" + axis, "scale" + axis
            if (getattr(y.units, dim), getattr(y.units, scale)) != (
                getattr(n.units, dim),
                getattr(n.units, scale),
            ):
                problem = f"Different units or scale ({axis.lower()}) for ternary operands"
                raise self._fail(colon, problem)
        if guard.desc.type not in ARITHMETIC_TYPES:
            raise self._fail(whole, "Non-arithmetic operand for ternary guard")
        if (
            y.indom == PM_INDOM_NULL
            and n.indom == PM_INDOM_NULL
            and guard.desc.indom != PM_INDOM_NULL
        ):
            raise self._fail(whole, "Non-scalar ternary guard with scalar expressions")
        indom = y.indom if y.indom != PM_INDOM_NULL else n.indom
        desc = replace(y, pmid=PM_ID_NULL, indom=indom)
        plan = ev.Ternary(y.type, indom, guard.plan, yes.plan, no.plan)
        return _Node(plan, desc)

    def _binary(self, node: ast.Binary) -> _Node:
        left, right = self._bind(node.left), self._bind(node.right)
        op = node.op
        what = f"{_text(left)} {op} {_text(right)}"
        ld, rd = left.desc, right.desc
        relational = op in ast.RELATIONAL_OPS
        boolean = op in ast.BOOLEAN_OPS
        if not (relational or boolean):
            if ld.sem == _COUNTER and rd.sem == _COUNTER and op not in "+-":
                raise self._fail(what, "Illegal operator for counters")
            if ld.sem == _COUNTER and rd.sem != _COUNTER and op not in "*/":
                raise self._fail(what, "Illegal operator for counter and non-counter")
            if ld.sem != _COUNTER and rd.sem == _COUNTER and op != "*":
                raise self._fail(what, "Illegal operator for non-counter and counter")
        base = rd if left.constant else ld  # (a metric's metadata over a constant's)
        sem = base.sem
        if ld.sem != _COUNTER and rd.sem != _COUNTER:
            sem = _DISCRETE if ld.sem == _DISCRETE and rd.sem == _DISCRETE else _INSTANT
        if ld.type not in ARITHMETIC_TYPES:
            raise self._fail(what, "Non-arithmetic type for left operand")
        if rd.type not in ARITHMETIC_TYPES:
            raise self._fail(what, "Non-arithmetic type for right operand")
        promoted = PROMOTE[ld.type, rd.type]
        if op == "/":
            type_ = _DOUBLE
        elif relational or boolean:
            type_ = _U32
        else:
            type_ = promoted
        lu, ru = ld.units, rd.units
        if op in "+-" and _dims(lu) != _dims(ru) and not _count_or_none(lu, ru):
            raise self._fail(what, "Dimensions are not the same")
        # a comparison with a constant may mix dimensions (so may one with a U32 operand:
        # libpcp 6 lets those through, and no expression it accepts is refused here)
        exempt = left.constant or right.constant or _U32 in (ld.type, rd.type)
        if relational and not exempt and _dims(lu) != _dims(ru) and not _count_or_none(lu, ru):
            raise self._fail(what, "Dimensions are not the same")
        if boolean and (_dims(lu) != (0, 0, 0) or _dims(ru) != (0, 0, 0)):
            raise self._fail(what, "Dimensions are not the same")
        if op in "*/" or relational:
            if ld.sem == _COUNTER and rd.sem != _COUNTER and _dims(ru) != (0, 0, 0):
                raise self._fail(what, "Non-counter and not dimensionless for right operand")
            if ld.sem != _COUNTER and rd.sem == _COUNTER and _dims(lu) != (0, 0, 0):
                raise self._fail(what, "Non-counter and not dimensionless for left operand")
        lscale = rscale = (1, 1)
        if relational or boolean:
            units = NO_UNITS
        else:
            units, lscale, rscale, scaled = _map_units(op, base.units, lu, ru)
            if scaled:
                type_ = _DOUBLE
        if ld.indom != PM_INDOM_NULL and rd.indom != PM_INDOM_NULL and ld.indom != rd.indom:
            raise self._fail(what, "Operands should have the same instance domain")
        indom = base.indom
        if ld.indom != PM_INDOM_NULL and rd.indom == PM_INDOM_NULL:
            indom = ld.indom
        elif rd.indom != PM_INDOM_NULL and ld.indom == PM_INDOM_NULL:
            indom = rd.indom
        compute = type_ if not (relational or boolean) else promoted
        plan = ev.BinaryOp(type_, indom, op, left.plan, right.plan, compute, lscale, rscale)
        return _Node(plan, Desc(PM_ID_NULL, type_, indom, sem, units))


def _dims(u: Units) -> tuple[int, int, int]:
    return (u.dimSpace, u.dimTime, u.dimCount)


def _count_or_none(a: Units, b: Units) -> bool:
    """libpcp lets "count" and "none" mix (as pmConvScale does)."""
    return {_dims(a), _dims(b)} == {(0, 0, 0), (0, 0, 1)}


def _units(text: str, name: str) -> Units:
    try:
        return parse_units_str(text)
    except ValueError as exc:
        raise SemanticError(
            f"Semantic error: derived metric {name}: {text}: {exc}", str(exc)
        ) from None


def _map_units(op: str, start: Units, lu: Units, ru: Units):
    """libpcp's map_units: the result's units and the scale factors for each side.

    Returns (units, (lmul, ldiv), (rmul, rdiv), scaled); START is the units of the
    operand whose metadata the result starts from.
    """
    scale = {"Space": start.scaleSpace, "Time": start.scaleTime, "Count": start.scaleCount}
    lmul = ldiv = rmul = rdiv = 1
    scaled = False
    for axis in ("Count", "Time", "Space"):
        ldim, rdim = getattr(lu, "dim" + axis), getattr(ru, "dim" + axis)
        lsc, rsc = getattr(lu, "scale" + axis), getattr(ru, "scale" + axis)
        if not (ldim and rdim) or lsc == rsc:
            continue
        scaled = True
        if lsc > rsc:  # the left's (larger) scale: the right operand is converted
            factor = _factor(axis, rsc, lsc)
            if rdim > 0:
                rdiv *= factor
            else:
                rmul *= factor
        else:
            scale[axis] = rsc
            factor = _factor(axis, lsc, rsc)
            # (libpcp decides time by the right operand's sign; count and space by the left's)
            positive = (rdim if axis in ("Time", "Space") else ldim) > 0
            if positive:
                ldiv *= factor
            else:
                lmul *= factor
    base_dims = [start.dimSpace, start.dimTime, start.dimCount]
    if op == "*":
        dims = [lu.dimSpace + ru.dimSpace, lu.dimTime + ru.dimTime, lu.dimCount + ru.dimCount]
    elif op == "/":
        dims = [lu.dimSpace - ru.dimSpace, lu.dimTime - ru.dimTime, lu.dimCount - ru.dimCount]
    else:
        dims = base_dims
    out_scale = []
    for i, axis in enumerate(("Space", "Time", "Count")):
        s = scale[axis]
        if dims[i] != 0 and getattr(lu, "dim" + axis) == 0:
            s = getattr(ru, "scale" + axis)
        if dims[i] == 0:
            s = 0
        out_scale.append(s)
    units = Units(dims[0], dims[1], dims[2], out_scale[0], out_scale[1], out_scale[2])
    return units, (lmul, ldiv), (rmul, rdiv), scaled


def _factor(axis: str, small: int, large: int) -> int:
    """How many of scale SMALL make one of scale LARGE on AXIS."""
    if axis == "Count":
        return 10 ** (large - small)
    if axis == "Space":
        return 1024 ** (large - small)
    factor = 1
    for i in range(small, large):
        factor *= _TIME_FACTOR[i]
    return factor
