"""Evaluation of bound derived-metric expressions over frames, with libpcp's arithmetic.

Each plan node (built by bind.py) computes its frame from its operands' frames:
per-instance arithmetic over the instances both operands have (a singular operand
applies to every instance), values converted to the result's type as libpcp's
bin_op converts them (C's wrapping integers, float arithmetic for FLOAT, division
always in doubles with 0/x = 0), errors passed up, delta() and rate() against the
values the same node saw at the previous fetch (kept between calls, so a replay
evaluated in chunks and fetch-by-fetch evaluation agree).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..convert import pmConvScale
from ..errors import PMError
from ..ids import PM_IN_NULL, PM_INDOM_NULL
from ..types import PMType
from ..units import Units
from .frame import SINGULAR, Frame, align, columns, constant, dtype_of, empty

_32, _U32, _64, _U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
_FLOAT, _DOUBLE = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE


@dataclass
class Env:
    """What evaluation needs besides the operands' values.

    frames: the fetched operands, by PMID; stamps: each fetch's time (int64 ns);
    instance_name / instance_id: the context's pmNameInDom / pmLookupInDom at a time.
    """

    frames: dict[int, Frame]
    stamps: np.ndarray
    instance_name: Callable[[int, int, int], str]
    instance_id: Callable[[int, str, int], int]

    @property
    def rows(self) -> int:
        return len(self.stamps)


@dataclass(eq=False)
class Plan:
    """A bound expression node: its result type and how its frame is computed."""

    type: int
    indom: int

    def evaluate(self, env: Env) -> Frame:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget remembered fetches (a new context, or a jump in an archive)."""
        for kid in self.kids():
            kid.reset()

    def kids(self) -> tuple[Plan, ...]:
        return ()


@dataclass(eq=False)
class Metric(Plan):
    """A real metric's fetched values."""

    pmid: int

    def evaluate(self, env: Env) -> Frame:
        frame = env.frames.get(self.pmid)
        if frame is None:
            return empty(self.type, env.rows)
        if self.indom == PM_INDOM_NULL and frame.has.shape[1] == 0:
            # (a singular metric that returned no value: one empty column, as everywhere
            # a singular operand is spread over instances expects)
            return _no_column(frame)
        return frame


def _no_column(frame: Frame) -> Frame:
    """FRAME (singular, without columns) with its one column, empty, and its errors."""
    values = np.zeros((frame.rows, 1), dtype=frame.values.dtype)
    return Frame(SINGULAR, np.zeros((frame.rows, 1), bool), values, frame.err)


@dataclass(eq=False)
class Const(Plan):
    """A constant (a number, mkconst(), defined())."""

    value: Any

    def evaluate(self, env: Env) -> Frame:
        return constant(self.value, self.type, env.rows)


@dataclass(eq=False)
class NoValues(Plan):
    """anon(TYPE): never any values."""

    def evaluate(self, env: Env) -> Frame:
        return empty(self.type, env.rows)


@dataclass(eq=False)
class OfOne(Plan):
    """A node computed from one operand."""

    operand: Plan

    def kids(self) -> tuple[Plan, ...]:
        return (self.operand,)


def _as(values: np.ndarray, from_type: int, to_type: int) -> np.ndarray:
    """VALUES of FROM_TYPE converted to TO_TYPE as bin_op's C assignments convert them."""
    if from_type == to_type:
        return values
    if to_type in (_32, _U32) and from_type in (_32, _U32):
        return values.view(dtype_of(to_type))  # (the same 32 bits, read the other way)
    with np.errstate(all="ignore"):
        return values.astype(dtype_of(to_type))


def _combine(left: Frame, right: Frame, lindom: int, rindom: int):
    """Both operands on the result's columns: (insts, has, lvalues, rvalues, err)."""
    err = np.where(left.err < 0, left.err, right.err).astype(np.int32)
    if lindom != PM_INDOM_NULL and rindom != PM_INDOM_NULL:
        insts, lc, rc = columns(left, right)
        has = left.has[:, lc] & right.has[:, rc]
        return insts, has, left.values[:, lc], right.values[:, rc], err
    if lindom != PM_INDOM_NULL:  # the singular right operand applies to every instance
        has = left.has & right.has[:, :1]
        rv = np.broadcast_to(right.values[:, :1], left.values.shape)
        return left.insts, has, left.values, rv, err
    if rindom != PM_INDOM_NULL:
        has = right.has & left.has[:, :1]
        lv = np.broadcast_to(left.values[:, :1], right.values.shape)
        return right.insts, has, lv, right.values, err
    return (
        SINGULAR,
        left.has[:, :1] & right.has[:, :1],
        left.values[:, :1],
        right.values[:, :1],
        err,
    )


_ARITHMETIC = {"+": np.add, "-": np.subtract, "*": np.multiply}
_RELATIONAL = {
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    ">=": np.greater_equal,
    ">": np.greater,
    "!=": np.not_equal,
}


@dataclass(eq=False)
class BinaryOp(Plan):
    """left OP right, computed in PROMOTED (the result type for arithmetic)."""

    op: str
    left: Plan
    right: Plan
    promoted: int
    lscale: tuple[int, int] = (1, 1)  # (mul, div) applied to left's values (doubles only)
    rscale: tuple[int, int] = (1, 1)

    def kids(self) -> tuple[Plan, ...]:
        return (self.left, self.right)

    def evaluate(self, env: Env) -> Frame:
        lf, rf = self.left.evaluate(env), self.right.evaluate(env)
        insts, has, lv, rv, err = _combine(lf, rf, self.left.indom, self.right.indom)
        lv = _as(lv, self.left.type, self.promoted)
        rv = _as(rv, self.right.type, self.promoted)
        if self.promoted == _DOUBLE:
            lv = (lv / self.lscale[1]) * self.lscale[0]
            rv = (rv / self.rscale[1]) * self.rscale[0]
        op = self.op
        with np.errstate(all="ignore"):
            if op == "/":
                values = np.where(lv == 0, 0.0, lv / np.where(lv == 0, 1.0, rv))
            elif op in _ARITHMETIC:
                values = _ARITHMETIC[op](lv, rv)
            elif op in _RELATIONAL:
                values = _RELATIONAL[op](lv, rv).astype(np.uint32)
            elif op == "&&":
                values = ((lv != 0) & (rv != 0)).astype(np.uint32)
            else:
                values = ((lv != 0) | (rv != 0)).astype(np.uint32)
        values = np.asarray(values, dtype=dtype_of(self.type))
        return Frame(insts, has, values, err)


@dataclass(eq=False)
class Negate(OfOne):
    """-x: signed results (U32 gives 32, U64 gives 64), C's wrapping negation."""

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        values = _as(f.values, self.operand.type, self.type)
        with np.errstate(all="ignore"):
            values = np.negative(values)
        return Frame(f.insts, f.has, values, f.err)


@dataclass(eq=False)
class Not(OfOne):
    """!x: 1 where x is zero, else 0 (U32)."""

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        return Frame(f.insts, f.has, (f.values == 0).astype(np.uint32), f.err)


@dataclass(eq=False)
class Ternary(Plan):
    """guard ? yes : no, instance by instance (a singular part applies to all)."""

    guard: Plan
    yes: Plan
    no: Plan

    def kids(self) -> tuple[Plan, ...]:
        return (self.guard, self.yes, self.no)

    def evaluate(self, env: Env) -> Frame:
        g, y, n = (p.evaluate(env) for p in (self.guard, self.yes, self.no))
        parts = [(g, self.guard), (y, self.yes), (n, self.no)]
        # a fetch lacking every value of any part has none (libpcp needs all three)
        err = np.zeros(env.rows, np.int32)
        dead = np.zeros(env.rows, bool)
        for f, _ in parts:
            counts = f.counts()
            err = np.where((err == 0) & (counts < 0), counts, err).astype(np.int32)
            dead |= counts <= 0
        indoms = [f for f, p in parts if p.indom != PM_INDOM_NULL]
        if not indoms:
            insts = SINGULAR
        else:
            pick = (
                y
                if self.yes.indom != PM_INDOM_NULL
                else (n if self.no.indom != PM_INDOM_NULL else g)
            )
            insts = pick.insts
        spread = [self._spread(f, p, insts) for f, p in parts]
        (gh, gv), (yh, yv), (nh, nv) = spread
        truth = gv != 0
        values = np.where(truth, yv, nv)
        has = gh & np.where(truth, yh, nh) & ~dead[:, None]
        return Frame(insts, has, values.astype(dtype_of(self.type)), err)

    @staticmethod
    def _spread(f: Frame, plan: Plan, insts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if plan.indom == PM_INDOM_NULL:
            shape = (f.rows, len(insts))
            return (np.broadcast_to(f.has[:, :1], shape), np.broadcast_to(f.values[:, :1], shape))
        return align(insts, f)


@dataclass(eq=False)
class Aggregate(Plan):
    """sum, avg, min, max or count over the instances of each fetch: one value."""

    func: str
    operand: Plan

    def kids(self) -> tuple[Plan, ...]:
        return (self.operand,)

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        rows = env.rows
        has, values = f.has, f.values
        n = has.sum(axis=1)
        if self.func == "count":  # (an operand that failed counts no instances)
            counts = np.where(f.err < 0, 0, n).astype(np.uint32)
            return Frame(
                SINGULAR, np.ones((rows, 1), bool), counts[:, None], np.zeros(rows, np.int32)
            )
        out_type = dtype_of(self.type)
        with np.errstate(all="ignore"):
            if self.func == "sum":
                acc = np.zeros(rows, dtype=out_type)
                for j in range(has.shape[1]):  # (in instance order, as libpcp adds)
                    acc = acc + np.where(has[:, j], values[:, j], 0).astype(out_type)
                got = np.ones(rows, bool)
            elif self.func == "avg":
                acc = np.zeros(rows, dtype=np.float32)
                count = np.maximum(n, 1).astype(np.float32)
                for j in range(has.shape[1]):
                    term = values[:, j].astype(np.float32) / count
                    acc = acc + np.where(has[:, j], term, np.float32(0))
                got = np.ones(rows, bool)
            else:
                big = np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).max
                small = -np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).min
                if self.func == "max":
                    acc = np.where(has, values, small).max(axis=1, initial=small)
                else:
                    acc = np.where(has, values, big).min(axis=1, initial=big)
                got = n > 0
        acc = np.asarray(acc, dtype=out_type)
        return Frame(SINGULAR, got[:, None], acc[:, None], f.err.copy())


@dataclass(eq=False)
class Change(Plan):
    """delta(x) or rate(x): against the values this node saw at the previous fetch."""

    func: str
    operand: Plan
    time_scale: float = 1.0  # rate() of a time: the operand's unit in seconds
    last: Frame | None = field(default=None, repr=False)
    last_stamp: int = 0

    def kids(self) -> tuple[Plan, ...]:
        return (self.operand,)

    def reset(self) -> None:
        self.last = None
        super().reset()

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        rows = env.rows
        insts = f.insts
        prev_has = np.zeros_like(f.has)
        prev_values = np.zeros_like(f.values)
        prev_counts = np.zeros(rows, np.int64)
        prev_stamps = np.zeros(rows, np.int64)
        if rows > 1:
            prev_has[1:] = f.has[:-1]
            prev_values[1:] = f.values[:-1]
            prev_counts[1:] = f.counts()[:-1]
            prev_stamps[1:] = env.stamps[:-1]
        if self.last is not None:
            has0, values0 = align(insts, self.last)
            prev_has[0], prev_values[0] = has0[0], values0[0]
            prev_counts[0] = self.last.counts()[0]
            prev_stamps[0] = self.last_stamp
        # libpcp: numval is the smaller of this fetch's and the last fetch's numval
        counts = np.minimum(f.counts(), prev_counts)
        err = np.where(counts < 0, counts, 0).astype(np.int32)
        has = f.has & prev_has & (counts > 0)[:, None]
        otype = self.operand.type
        with np.errstate(all="ignore"):
            if self.func == "delta":
                if otype == _U32:
                    values = f.values.astype(np.int64) - prev_values.astype(np.int64)
                elif otype == _U64:
                    values = f.values.astype(np.float64) - prev_values.astype(np.float64)
                else:
                    values = f.values - prev_values
            else:
                diff = (f.values - prev_values).astype(np.float64)
                span = env.stamps - prev_stamps
                seconds = (span // 1_000_000_000).astype(np.float64) + (
                    span % 1_000_000_000
                ).astype(np.float64) / 1e9
                values = diff / seconds[:, None]
                if self.time_scale != 1.0:
                    values = values * self.time_scale
        self.last = Frame(insts, f.has[-1:].copy(), f.values[-1:].copy(), f.err[-1:].copy())
        self.last_stamp = int(env.stamps[-1])
        values = np.asarray(values, dtype=dtype_of(self.type))
        return Frame(insts, has, values, err)


@dataclass(eq=False)
class Same(OfOne):
    """instant(x): x's values, with other metadata."""

    def evaluate(self, env: Env) -> Frame:
        return self.operand.evaluate(env)


@dataclass(eq=False)
class Scalar(OfOne):
    """scalar(x): x's first value of each fetch, as a singular value."""

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        rows = env.rows
        got = f.has.any(axis=1) if f.has.shape[1] else np.zeros(rows, bool)
        first = f.has.argmax(axis=1) if f.has.shape[1] else np.zeros(rows, np.int64)
        values = np.zeros((rows, 1), dtype=f.values.dtype)
        if f.has.shape[1]:
            values[:, 0] = f.values[np.arange(rows), first]
        return Frame(SINGULAR, got[:, None], values, f.err)


@dataclass(eq=False)
class Rescale(OfOne):
    """rescale(x, units): each value converted by pmConvScale (failures dropped)."""

    source: Units
    target: Units

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        values = f.values.copy()
        has = f.has.copy()
        for r, j in zip(*np.nonzero(f.has), strict=True):
            try:
                values[r, j] = pmConvScale(self.type, values[r, j].item(), self.source, self.target)
            except PMError:
                has[r, j] = False
        return Frame(f.insts, has, values, f.err)


_MATH: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs,
    "floor": np.floor,
    "round": np.round,
    "sqrt": np.sqrt,
    "log": np.log,
    "exp": np.exp,
}


@dataclass(eq=False)
class Math(Plan):
    """abs, floor, round, sqrt, log, exp (our additions): values that are no real
    number (the log of a negative) are left out."""

    func: str
    operand: Plan

    def kids(self) -> tuple[Plan, ...]:
        return (self.operand,)

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        values = f.values
        if self.func in ("floor", "round") and values.dtype.kind != "f":
            return f  # (integers are whole already)
        if self.func == "abs" and values.dtype.kind == "u":
            return f
        if self.func in ("sqrt", "log", "exp"):
            values = values.astype(np.float64)
        with np.errstate(all="ignore"):
            if self.func == "round":  # half away from zero, as C's round()
                out = np.copysign(np.floor(np.abs(values) + 0.5), values)
            else:
                out = _MATH[self.func](values)
        out = out.astype(dtype_of(self.type))
        has = f.has & ~np.isnan(out) if out.dtype.kind == "f" else f.has
        return Frame(f.insts, has, out, f.err)


@dataclass(eq=False)
class Select(OfOne):
    """x[name] (one instance by external name) or matchinst([!]/regex/, x)."""

    name: str | None = None  # x[name]
    regex: re.Pattern | None = None  # matchinst()
    invert: bool = False
    _inst: int | None = field(default=None, repr=False)
    _matches: dict[int, bool] = field(default_factory=dict, repr=False)

    def evaluate(self, env: Env) -> Frame:
        f = self.operand.evaluate(env)
        if self.name is not None:
            if self._inst is None:
                self._inst = self._lookup(env, f)
            keep = [int(i) == self._inst for i in f.insts.tolist()]
        else:
            keep = [self._match(env, f, j, int(i)) for j, i in enumerate(f.insts.tolist())]
        mask = np.array(keep, dtype=bool)
        return Frame(f.insts, f.has & mask[None, :], f.values, f.err)

    def _lookup(self, env: Env, f: Frame) -> int | None:
        """x[name]'s instance, looked up at the first fetch where x has values (libpcp
        looks it up then); None while it is not in the domain."""
        rows = np.flatnonzero(f.has.any(axis=1))
        if not len(rows):
            return None
        with contextlib.suppress(PMError):  # (not in the domain yet: no value now)
            return env.instance_id(self.operand.indom, self.name, int(env.stamps[rows[0]]))
        return None

    def _match(self, env: Env, f: Frame, col: int, inst: int) -> bool:
        """Whether column COL (instance INST) matches: decided, as libpcp decides it, by
        the instance's name at the first fetch that has a value for it, then kept."""
        known = self._matches.get(inst)
        if known is None:
            rows = np.flatnonzero(f.has[:, col])
            if not len(rows):
                return False  # (no value to select: decided when one comes)
            stamp = int(env.stamps[rows[0]])
            try:
                name = env.instance_name(self.operand.indom, inst, stamp).split(" ", 1)[0]
            except PMError:
                known = False
            else:
                assert self.regex is not None
                known = (self.regex.search(name) is not None) != self.invert
            self._matches[inst] = known
        return known


__all__ = ["PM_IN_NULL", "Env", "Plan"]
