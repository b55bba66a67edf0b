"""pmie over an archive, all evaluations at once: each rule's expression is computed for
every sample time together (NumPy arrays, one row per evaluation), from one replay of the
archive, instead of node by node at each time.

It is the per-time evaluator's arithmetic, done on columns, for what can be done so: one
task (one interval), metrics with the same instances at every time (numbers, all
present), operators over one sample (no @ ranges, rate, rising or falling, no _sample or
_host axes, no rule sets, no clock variables), and nothing printed for each evaluation
(-v, -V, -W).  Anything else, and any archive that does not fit (values missing, the end
reached early), is left to the per-time evaluator (:func:`plan` says None).  Actions run
at the times their rule is true, on nodes put back in the state the per-time evaluator
would have left them in, so that what they print is its output exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import operators as ops
from . import values as v
from .values import B_FALSE, B_TRUE, B_UNKNOWN, Node

if TYPE_CHECKING:
    from .replay import Task

#: the operators computed here (beyond fetches, constants, rules and actions)
_BINARY = frozenset({"+", "-", "*", "/", "==", "!=", "<", ">", "<=", ">="})
_UNARY = frozenset({"neg", "not", "instant"})
_INST = frozenset(
    f"{op}_inst" for op in ("sum", "avg", "max", "min", "count", "all", "some", "pcnt")
)
_NUMERIC = frozenset(range(6))  # PM_TYPE_32 ... PM_TYPE_DOUBLE
_FETCHES = (ops.fetch_all, ops.fetch_named, ops.fetch_one)


@dataclass
class Column:
    """A node's values at every evaluation: what it wrote (rows), whether it wrote at
    each, and whether it was valid after each (its ``valid`` > 0)."""

    val: np.ndarray  # (evaluations, values)
    wrote: np.ndarray  # bool (evaluations,), or (evaluations, values) if partly
    ok: np.ndarray  # bool (evaluations,)


class NotHere(Exception):
    """Something the column evaluator does not do: the per-time evaluator does it."""


def times(t: Task, stop: float) -> list[float]:
    """The task's evaluation times, as the schedule makes them."""
    out = []
    tick = 0
    now = t.epoch
    while now <= stop:
        out.append(now)
        tick += 1
        now = t.epoch + tick * t.delta
    return out


def plan(t: Task, when: list[float]) -> dict[int, Column] | None:
    """Every node's column for the evaluations at WHEN, or None when the task is not one
    for columns (see the module's docstring)."""
    try:
        for _, node in t.rules:
            _check(node, top=True)
        fetched = _fetch(t, len(when))
        memo: dict[int, Column] = {}
        for _, node in t.rules:
            _column(node.a1 if node.op == "rule" else node, fetched, memo)
        return memo
    except NotHere:
        return None


def _check(x: Node, top: bool = False) -> None:
    """Refuse a tree with anything the columns do not do."""
    if top and x.op == "rule":
        assert x.a1 is not None
        _check(x.a1)
        return
    if x.nsmpls != 1 or x.sem in (v.SEM_CHAR, v.SEM_REGEX):
        raise NotHere
    if x.op == "nop":
        return
    if x.op == "fetch":
        m = x.metrics
        if x.evaluate not in _FETCHES or m is None or m.desc is None or m.desc.type not in _NUMERIC:
            raise NotHere
        if x.hosts is not None:
            raise NotHere  # (a metric of several hosts: the time-by-time evaluator)
        return
    if x.op in _BINARY or x.op in ("&&", "||"):
        assert x.a1 is not None and x.a2 is not None
        if x.one1 and x.one2 and x.tspan != 1:
            raise NotHere  # (only the first value written: rare, left to the evaluator)
        _check(x.a1)
        _check(x.a2)
        return
    if x.op in _UNARY or x.op in _INST:
        assert x.a1 is not None
        _check(x.a1)
        if x.op == "pcnt_inst":
            assert x.a2 is not None and x.a2.op == "nop"
        return
    raise NotHere


def _fetch(t: Task, count: int) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One replay of the task's metrics over COUNT evaluations: for each pmid, its
    instances (signed, ascending), values (evaluations x instances, doubles) and the
    fetches' times (seconds, whole microseconds)."""
    assert t.ctx is not None
    pmids = list(dict.fromkeys(m.pmid for m in t.metrics))
    rep = t.ctx.replay(pmids, count)
    if rep.failed is not None or bool(rep.eol.any()):
        raise NotHere
    ns = rep.times.astype(np.int64)
    stamps = (ns // 1_000_000_000) + (ns % 1_000_000_000 // 1000) / 1e6
    out = {}
    for m in rep.metrics:
        if m.error or m.desc is None or not bool(m.has.all()) or m.has.shape[1] == 0:
            raise NotHere
        insts = m.insts.astype(np.int64)
        insts = np.where(insts >= 0x80000000, insts - 0x100000000, insts)
        if np.any(np.diff(insts) < 0):
            raise NotHere
        out[m.pmid] = (insts, np.asarray(m.values, dtype=np.float64), stamps)
    return out


def _column(x: Node, fetched, memo: dict[int, Column]) -> Column:
    known = memo.get(id(x))
    if known is not None:
        return known
    if x.op == "nop":
        value = x.sample()[0]
        if not isinstance(value, int | float):
            raise NotHere
        n = len(next(iter(fetched.values()))[2]) if fetched else 0
        col = Column(np.full((n, 1), float(value)), np.zeros(n, bool), np.full(n, x.valid > 0))
    elif x.op == "fetch":
        col = _fetch_column(x, fetched)
    elif x.op in _UNARY:
        assert x.a1 is not None
        col = _unary(x, _column(x.a1, fetched, memo))
    elif x.op in ("&&", "||"):
        assert x.a1 is not None and x.a2 is not None
        col = _andor(x, _column(x.a1, fetched, memo), _column(x.a2, fetched, memo))
    elif x.op in _BINARY:
        assert x.a1 is not None and x.a2 is not None
        col = _binary(x, _column(x.a1, fetched, memo), _column(x.a2, fetched, memo))
    else:
        assert x.a1 is not None
        col = _aggregate(x, _column(x.a1, fetched, memo))
    memo[id(x)] = col
    return col


def _fetch_column(x: Node, fetched) -> Column:
    """cndFetch_all, _n and _1 on a metric with values for every instance every time."""
    m = x.metrics
    assert m is not None
    insts, raw, stamps = fetched[m.pmid]
    n = len(stamps)
    if x.evaluate is ops.fetch_one:
        if raw.shape[1] != 1:
            raise NotHere
        cols = raw
    else:
        wanted = list((m.iids or [])[: m.m_idom])
        have = insts.tolist()
        if x.evaluate is ops.fetch_all and (wanted != have or m.m_idom != len(have)):
            raise NotHere  # (the instances change at the first fetch: reshaping)
        try:
            cols = raw[:, [have.index(i) for i in wanted]]
        except ValueError:
            raise NotHere from None
    if x.tspan != cols.shape[1]:
        raise NotHere
    val = m.conv * cols
    ok = np.ones(n, bool)
    counter = m.desc.sem == v.PM_SEM_COUNTER and ops._dorate(x)
    if counter and (x.evaluate is not ops.fetch_one or m.m_idom > 0):
        val, ok = _rates(x, val, stamps)
    elif counter:
        ok[0] = False
    return Column(val, np.ones(n, bool), ok)


def _rates(x: Node, val: np.ndarray, stamps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_rates at every fetch: the first has no rate; a negative rate is not one."""
    m = x.metrics
    assert m is not None
    d = np.empty_like(val)
    d[0] = val[0]
    diff = val[1:] - val[:-1]
    if ops.CLOCK.dowrap:
        wrap = {5: ops.UINT_WRAP, 1: ops.UINT_WRAP, 2: ops.ULONG_WRAP, 3: ops.ULONG_WRAP}
        add = wrap.get(m.desc.type)
        if add is not None:
            diff = np.where(diff < 0.0, diff + add, diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = diff / (stamps[1:] - stamps[:-1])[:, None]
    negative = rate < 0.0
    d[1:] = np.where(negative, val[1:], rate)
    ok = np.ones(len(val), bool)
    ok[0] = False
    ok[1:] = ~negative.any(axis=1)
    return d, ok


def _unary(x: Node, a: Column) -> Column:
    ok = a.ok & (x.one1 or x.tspan > 0)
    src = a.val[:, :1] if x.one1 else a.val
    if x.op == "neg":
        val = -src
    elif x.op == "not":
        val = np.where(src == B_UNKNOWN, B_UNKNOWN, 1.0 - src)
    else:
        val = src
    return Column(val, ok.copy(), ok)


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, ">": np.greater,
            "<=": np.less_equal, ">=": np.greater_equal}  # fmt: skip


def _operands(x: Node, a: Column, b: Column) -> tuple[np.ndarray, np.ndarray]:
    s1 = a.val[:, :1] if x.one1 else a.val
    s2 = b.val[:, :1] if x.one2 else b.val
    return s1, s2


def _binary(x: Node, a: Column, b: Column) -> Column:
    fits = ops._fits(x, x.a1, x.one1) and ops._fits(x, x.a2, x.one2)  # type: ignore[arg-type]
    ok = a.ok & b.ok & fits
    if not fits:  # (operands of different sizes: never a value)
        return Column(np.zeros((len(ok), max(1, x.tspan))), ok.copy(), ok)
    s1, s2 = _operands(x, a, b)
    with np.errstate(all="ignore"):
        if x.op in _COMPARE:
            val = np.where(_COMPARE[x.op](s1, s2), float(B_TRUE), float(B_FALSE))
        elif x.op == "+":
            val = s1 + s2
        elif x.op == "-":
            val = s1 - s2
        elif x.op == "*":
            val = s1 * s2
        else:
            val = s1 / s2
    val = np.broadcast_to(val, (len(ok), max(1, x.tspan) if not (x.one1 and x.one2) else 1))
    return Column(np.array(val), ok.copy(), ok)


def _kleene(op: str, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    if op == "&&":
        return np.where((p == B_TRUE) & (q == B_TRUE), B_TRUE,
                        np.where((p == B_FALSE) | (q == B_FALSE), B_FALSE, B_UNKNOWN))  # fmt: skip
    return np.where((p == B_TRUE) | (q == B_TRUE), B_TRUE,
                    np.where((p == B_FALSE) & (q == B_FALSE), B_FALSE, B_UNKNOWN))  # fmt: skip


def _alone(op: str, p: np.ndarray) -> np.ndarray:
    if op == "&&":
        return np.where(p == B_FALSE, B_FALSE, B_UNKNOWN)
    return np.where(p == B_TRUE, B_TRUE, B_UNKNOWN)


def _andor(x: Node, a: Column, b: Column) -> Column:
    """&& and ||: both operands, else the one with values alone (a single-valued one
    then sets only the first value), else nothing."""
    a1, a2 = x.a1, x.a2
    assert a1 is not None and a2 is not None
    many = not (x.one1 and x.one2)
    fits = not many or (ops._fits(x, a1, x.one1) and ops._fits(x, a2, x.one2))
    fits_a = not many or (x.tspan > 0 and (x.one1 or x.tspan == a1.tspan))
    fits_b = not many or (x.tspan > 0 and (x.one2 or x.tspan == a2.tspan))
    s1, s2 = _operands(x, a, b)
    both = a.ok & b.ok & fits
    only_a = ~both & a.ok & fits_a
    only_b = ~both & ~only_a & b.ok & fits_b
    width = x.tspan if many else 1
    shape = (len(both), width)
    val = np.zeros(shape)
    wrote = np.zeros(shape, bool)
    if fits:  # (else never both: operands of different sizes)
        val[both] = np.broadcast_to(_kleene(x.op, s1, s2), shape)[both]
        wrote[both] = True
    for rows, src, one, arg in ((only_a, a.val, x.one1, a1), (only_b, b.val, x.one2, a2)):
        count = 1 if (one and many) or x.tspan == 0 else min(x.tspan, arg.tspan)
        val[rows, :count] = _alone(x.op, src[rows][:, :count])
        wrote[rows, :count] = True
    ok = both | only_a | only_b
    return Column(val, wrote, ok)


def _aggregate(x: Node, a: Column) -> Column:
    """The _inst aggregates and quantifiers, folded as pmie folds them (in order)."""
    word = x.op.rsplit("_", 1)[0]
    rows = len(a.ok)
    n = x.a1.e_idom  # type: ignore[union-attr]
    ok = a.ok & (x.hdom != 0)
    if n < 1:
        if word not in ops.QUANTIFIERS:
            return Column(np.zeros((rows, 1)), np.zeros(rows, bool), np.zeros(rows, bool))
        return Column(np.full((rows, 1), float(B_UNKNOWN)), ok.copy(), ok)
    vals = a.val[:, :n]
    acc = vals[:, 0].copy()
    if word in ("sum", "avg"):
        for j in range(1, n):
            acc = acc + vals[:, j]
        if word == "avg":
            acc = acc / n
    elif word in ("max", "min"):
        for j in range(1, n):
            d = vals[:, j]
            acc = np.where(d > acc if word == "max" else d < acc, d, acc)
    elif word == "count":
        acc = (vals == B_TRUE).sum(axis=1).astype(float)
    elif word in ("all", "some"):
        decisive = B_FALSE if word == "all" else B_TRUE
        for j in range(1, n):
            d = vals[:, j]
            unknown = np.where((d == B_UNKNOWN) & (acc != B_UNKNOWN), B_UNKNOWN, acc)
            acc = np.where(d == decisive, decisive, unknown)
    else:  # pcnt
        total = vals[:, 0].copy()
        for j in range(1, n):
            total = total + vals[:, j]
        need = int(0.5 + x.a2.sample()[0] * n)  # type: ignore[union-attr]
        acc = np.where(total >= need, float(B_TRUE), float(B_FALSE))
    return Column(acc[:, None].astype(float), ok.copy(), ok)


def run(t: Task, when: list[float], memo: dict[int, Column]) -> None:
    """The rules' actions, at the times their rule is true, in the evaluator's order.
    An action whose text :mod:`vector_text` makes from the columns is written so; for
    any other, the nodes of its condition are first given the state the evaluator
    would have left them in then (their ``valid``, and their last values written)."""
    from .vector_text import texts

    rules = []
    firing = np.zeros(len(when), bool)
    for _, node in t.rules:
        if node.op != "rule":
            continue
        assert node.a1 is not None and node.a2 is not None
        col = memo[id(node.a1)]
        fires = col.ok & (col.val[:, 0] == B_TRUE)
        firing |= fires
        at = np.flatnonzero(fires)
        made = texts(node, memo, at)
        if made is not None:
            rules.append((node, fires.tolist(), None, dict(zip(at.tolist(), made, strict=True))))
            continue
        shown = _shown(node)
        states = [_State(x, memo[id(x)], at) for x in _nodes(node.a1)
                  if id(x) in memo and id(x) in shown]  # fmt: skip
        rules.append((node, fires.tolist(), states, None))
    write, ctime = ops.CLOCK.write, ops.CLOCK.ctime
    for k in np.flatnonzero(firing).tolist():
        now = ops.CLOCK.now = when[k]
        stamp = None
        for node, fires, states, made in rules:
            if not fires[k]:
                continue
            assert node.a1 is not None and node.a2 is not None
            if made is not None:
                act = node.a2
                stamp = stamp or ctime(now)
                act.ring[0][0] = B_TRUE
                act.stamps[0] = now
                write(f"{act.extra} {stamp}: {made[k]}\n")
                continue
            for s in states:
                s.restore(k)
            node.valid = node.a1.valid
            node.ring[0][0] = B_TRUE
            ops.CLOCK.curr = node
            node.a2.run()


class _State:
    """A node's columns as Python values at the evaluations where they are put back
    (its rule's firings): only those rows are converted."""

    def __init__(self, x: Node, col: Column, at: np.ndarray) -> None:
        self.x = x
        self.partly = col.wrote.ndim == 2
        last = _last_written(col.wrote)[at]
        self.ok = dict(zip(at.tolist(), col.ok[at].tolist(), strict=True))
        self.last = dict(zip(at.tolist(), last.tolist(), strict=True))
        needed = np.unique(last[last >= 0])
        vals = col.val[needed]
        if x.sem == v.SEM_BOOLEAN:
            vals = vals.astype(np.int64)
        self.rows = dict(zip(needed.tolist(), vals.tolist(), strict=True))

    def restore(self, k: int) -> None:
        x = self.x
        x.valid = 1 if self.ok[k] else 0
        ring = x.ring[x.ptrs[0]]
        if self.partly:
            for j, i in enumerate(self.last[k][: len(ring)]):
                if i >= 0:
                    ring[j] = self.rows[i][j]
            return
        i = self.last[k]
        if i >= 0:
            row = self.rows[i]
            n = min(len(ring), len(row))
            ring[:n] = row[:n]


def _last_written(wrote: np.ndarray) -> np.ndarray:
    """For each evaluation (and value, if written value by value), the last evaluation
    at or before it that wrote (-1: none)."""
    steps = np.arange(len(wrote))
    idx = np.where(wrote, steps[:, None] if wrote.ndim == 2 else steps, -1)
    return np.maximum.accumulate(idx, axis=0) if len(idx) else idx


def _shown(rule: Node) -> set[int]:
    """The nodes an action's %h %i %v %c read: the bindings, their values, and what an
    extremum was taken from (show.py finds them by the tree's shape alone)."""
    from .show import _EXTREMA, find_bindings, find_values

    x1 = find_bindings(rule)
    x2 = find_values(x1)
    shown = {id(x1), id(x2)}
    if x1.op in _EXTREMA and x1.a1 is not None:
        shown.add(id(x1.a1))
    return shown


def _nodes(x: Node | None) -> list[Node]:
    """X and the nodes below it."""
    if x is None:
        return []
    return [x, *_nodes(x.a1), *_nodes(x.a2)]
