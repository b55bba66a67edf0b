"""How each operator evaluates, as pmie's evaluator functions do.

Every evaluator first evaluates its operands, then rotates its own ring and
writes its newest sample; it counts ``valid`` up when it made a value and sets
it to 0 when it could not.  Operands that are a single value (``one1``,
``one2``: pmie's arity) are used as that value against every value of the
other operand.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from . import values as v
from .stats import Perf
from .values import B_FALSE, B_TRUE, B_UNKNOWN, Node

UINT_WRAP = 4294967296.0
ULONG_WRAP = 18446744073709551616.0


class Clock:
    """What evaluation needs from the run: the time now, counter wrap, output."""

    def __init__(self, write: Callable[[str], None], ctime: Callable[[float], str]) -> None:
        self.now = 0.0
        self.dowrap = False
        self.write = write
        self.ctime = ctime
        self.curr: Node | None = None  # the rule being evaluated (for %v and friends)
        self.perf = Perf()  # the counters of pmie's statistics file


CLOCK: Clock = Clock(print, str)


# -- fetching ---------------------------------------------------------------------------------


def _dorate(x: Node) -> bool:
    """A counter becomes a rate unless an ancestor is 'instant'."""
    m = x.metrics
    assert m is not None
    if m.desc.sem != v.PM_SEM_COUNTER:
        return False
    p = x.parent
    while p is not None:
        if p.op == "instant":
            return False
        p = p.parent
    return True


def _number(m: v.Bound, value: float | str) -> float | str:
    """A decoded value (replay.decode) in the units the rule asked for."""
    return value if type(value) is str else m.conv * value


def _rates(x: Node, m: v.Bound, out: list[Any], first: int, count: int) -> None:
    """Turn COUNT raw values at OUT[FIRST:] into rates since the last fetch."""
    from purepcp.pmapi.types import PMType

    for j in range(count):
        raw = out[first + j]
        t = raw - m.vals[j]
        if t < 0.0 and CLOCK.dowrap:
            if m.desc.type in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32):
                t += UINT_WRAP
            elif m.desc.type in (PMType.PM_TYPE_64, PMType.PM_TYPE_U64):
                t += ULONG_WRAP
        t = v.c_divide(t, m.stamp - m.stomp)
        m.vals[j] = raw
        if t < 0.0:
            x.valid = 0
        else:
            out[first + j] = t
    if m.stomp == 0:
        x.valid = 0
    m.stomp = m.stamp


def fetch_one(x: Node) -> None:
    """cndFetch_1: a singular metric (or one whose instances are not wanted), a value
    from each host."""
    x.rotate()
    x.valid += 1
    out = x.sample()
    rate = _dorate(x)
    stamp = 0.0
    hosts = v.bounds(x)
    for i, m in enumerate(hosts):
        if m.vset is None or len(m.vset) != 1:
            x.valid = 0
            for rest in hosts[i:]:
                rest.stomp = 0
                rest.vset = None
            return
        out[i] = _number(m, m.vset[0][1])
        m.vset = None
        if rate and m.m_idom > 0:
            _rates(x, m, out, i, 1)
        elif rate:
            if m.stomp == 0:
                x.valid = 0
            m.stomp = m.stamp
        stamp = max(stamp, m.stamp)
    x.stamps[0] = stamp


def _indom_changed(m: v.Bound, names: Callable[[int], str | None]) -> bool:
    """Adopt the instances of this fetch when they differ from the last one's."""
    got = [inst for inst, _ in m.vset] if m.vset else []
    if got == (m.iids or [])[: m.m_idom] and len(got) == m.m_idom:
        return False
    counter = m.desc.sem == v.PM_SEM_COUNTER
    if counter and len(got) > m.m_idom:
        m.vals = (m.vals + [0.0] * len(got))[: max(len(got), len(m.vals))]
        for j in range(m.m_idom, len(got)):
            m.vals[j] = 0.0
    old_iids = (m.iids or [])[: m.m_idom]
    old_names = list((m.inames or [])[: m.m_idom])
    inames: list[str | None] = []
    for new, inst in enumerate(got):
        if inst in old_iids:
            old = old_iids.index(inst)
            inames.append(old_names[old])
            if counter and new != old:
                m.vals[new], m.vals[old] = m.vals[old], m.vals[new]
        else:
            inames.append(None)
    for new, inst in enumerate(got):
        if inames[new] is None:
            inames[new] = names(inst) or f"inst#{inst}?"
            if counter:
                m.vals[new] = 0.0
    m.inames, m.iids, m.m_idom = inames, got, len(got)
    return True


def fetch_all(x: Node) -> None:
    """cndFetch_all: every instance each host's fetch returned, host after host."""
    hosts = v.bounds(x)
    x.rotate()
    changed = False
    for m in hosts:
        if _indom_changed(m, m.namer):
            m.stomp = 0
            changed = True
    if changed:
        v.inst_fetch_expr(x)
    x.valid += 1
    out = x.sample()
    rate = _dorate(x)
    stamp = 0.0
    at = 0
    for m in hosts:
        for j, (_, value) in enumerate(m.vset or ()):
            out[at + j] = _number(m, value)
        m.vset = None
        if rate:
            _rates(x, m, out, at, m.m_idom)
        at += m.m_idom
        stamp = max(stamp, m.stamp)
    x.stamps[0] = stamp


def fetch_named(x: Node) -> None:
    """cndFetch_n: the instances the rule names, at each host (all must have values)."""
    x.rotate()
    x.valid += 1
    out = x.sample()
    rate = _dorate(x)
    stamp = 0.0
    at = 0
    hosts = v.bounds(x)
    for i, m in enumerate(hosts):
        assert m.iids is not None
        found = dict(m.vset) if m.vset is not None else None
        if found is None or any(m.iids[j] not in found for j in range(m.m_idom)):
            x.valid = 0
            for rest in hosts[i:]:
                rest.stomp = 0
                rest.vset = None
            return
        for j in range(m.m_idom):
            out[at + j] = _number(m, found[m.iids[j]])
        m.vset = None
        if rate:
            _rates(x, m, out, at, m.m_idom)
        at += m.m_idom
        stamp = max(stamp, m.stamp)
    x.stamps[0] = stamp


def fetch_waiting(x: Node) -> None:
    """A live metric not bound yet (its host down, or the metric not there): no value."""
    x.rotate()
    x.valid = 0
    for m in v.bounds(x):
        m.vset = None
        m.stomp = 0


def delay(x: Node) -> None:
    """cndDelay: the sample @N of the fetch below, kept for @N..M."""
    a = x.a1
    assert a is not None
    n = a.tdom
    a.run()
    x.rotate()
    if a.valid >= n and (x.one1 or x.tspan > 0):
        src = a.sample(n - 1)
        out = x.sample()
        count = 1 if x.one1 else x.tspan
        out[:count] = src[:count]
        x.stamps[0] = a.stamps[n - 1]
        x.valid += 1
    else:
        x.valid = 0


# -- unary and merging operators --------------------------------------------------------------

UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": lambda a: -a,
    "instant": lambda a: a,
    "not": v.kleene_not,
}


def unary(x: Node) -> None:
    a = x.a1
    assert a is not None
    f = UNARY[x.op]
    a.run()
    x.rotate()
    if x.one1:
        if a.valid:
            x.sample()[0] = f(a.sample()[0])
            x.stamps[0] = a.stamps[0]
            x.valid += 1
        else:
            x.valid = 0
        return
    if a.valid and x.tspan > 0:
        src, out = a.sample(), x.sample()
        for i in range(x.tspan):
            out[i] = f(src[i])
        x.stamps[0] = a.stamps[0]
        x.valid += 1
    else:
        x.valid = 0


def merge(x: Node) -> None:
    """rate, rising, falling: from the operand's last two samples."""
    a = x.a1
    assert a is not None
    a.run()
    x.rotate()
    if a.valid >= 2 and (x.one1 or x.tspan > 0):
        s1, s2, out = a.sample(0), a.sample(1), x.sample()
        delta = a.stamps[0] - a.stamps[1]
        for i in range(1 if x.one1 else x.tspan):
            if x.op == "rate":
                out[i] = v.c_divide(s1[i] - s2[i], delta)
            elif x.op == "rising":
                out[i] = int(s1[i] > s2[i])
            else:
                out[i] = int(s1[i] < s2[i])
        x.stamps[0] = a.stamps[0]
        x.valid += 1
    else:
        x.valid = 0


# -- binary operators -------------------------------------------------------------------------


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], int]:
    return lambda a, b: B_TRUE if op(a, b) else B_FALSE


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": v.c_divide,
    "==": _compare(operator.eq),
    "!=": _compare(operator.ne),
    "<": _compare(operator.lt),
    ">": _compare(operator.gt),
    "<=": _compare(operator.le),
    ">=": _compare(operator.ge),
    "==str": _compare(operator.eq),
    "!=str": _compare(operator.ne),
    "&&": v.kleene_and,
    "||": v.kleene_or,
}


def _c_mul(a: float, b: float) -> float:
    try:
        return a * b
    except OverflowError:
        return math.inf


def binary(x: Node) -> None:
    a, b = x.a1, x.a2
    assert a is not None and b is not None
    f = BINARY[x.op]
    a.run()
    b.run()
    x.rotate()
    if a.valid and b.valid and _fits(x, a, x.one1) and _fits(x, b, x.one2):
        s1, s2, out = a.sample(), b.sample(), x.sample()
        for i in range(1 if x.one1 and x.one2 else x.tspan):
            out[i] = f(s1[0 if x.one1 else i], s2[0 if x.one2 else i])
        x.stamps[0] = max(a.stamps[0], b.stamps[0])
        x.valid += 1
    else:
        x.valid = 0


def _fits(x: Node, arg: Node, one: bool) -> bool:
    """An n-valued operand must have as many values as the result."""
    return one or (x.tspan > 0 and x.tspan == arg.tspan)


def andor(x: Node) -> None:
    """&& and ||: one operand with values can decide on its own."""
    a, b = x.a1, x.a2
    assert a is not None and b is not None
    both = BINARY[x.op]
    alone = v.and_one if x.op == "&&" else v.or_one
    a.run()
    b.run()
    x.rotate()
    out = x.sample()
    many = not (x.one1 and x.one2)
    if a.valid and b.valid and (not many or (_fits(x, a, x.one1) and _fits(x, b, x.one2))):
        s1, s2 = a.sample(), b.sample()
        for i in range(x.tspan if many else 1):
            out[i] = both(s1[0 if x.one1 else i], s2[0 if x.one2 else i])
        x.stamps[0] = max(a.stamps[0], b.stamps[0])
    elif a.valid and (not many or (x.tspan > 0 and (x.one1 or x.tspan == a.tspan))):
        _alone(x, a, alone, x.one1 and many)
    elif b.valid and (not many or (x.tspan > 0 and (x.one2 or x.tspan == b.tspan))):
        _alone(x, b, alone, x.one2 and many)
    else:
        x.valid = 0
        return
    x.valid += 1


def _alone(x: Node, arg: Node, alone: Callable[[int], int], first_only: bool) -> None:
    """The result from ARG alone (a single-valued ARG sets only the first value)."""
    src, out = arg.sample(), x.sample()
    count = 1 if first_only or x.tspan == 0 else min(x.tspan, len(src))
    for i in range(count):
        out[i] = alone(src[i])
    x.stamps[0] = arg.stamps[0]


# -- aggregates and quantifiers ---------------------------------------------------------------


def _sum(vals: list[float]) -> float:
    a = vals[0]
    for d in vals[1:]:
        a += d
    return a


def _max(vals: list[float]) -> float:
    a = vals[0]
    for d in vals[1:]:
        if d > a:
            a = d
    return a


def _min(vals: list[float]) -> float:
    a = vals[0]
    for d in vals[1:]:
        if d < a:
            a = d
    return a


def _quantify(vals: list[int], decisive: int) -> int:
    """all (DECISIVE false) or some (true): the first value, then any decisive one
    decides, and an unknown makes an undecided result unknown, in pmie's order."""
    a = vals[0]
    for d in vals[1:]:
        if d == decisive:
            a = decisive
        elif d == B_UNKNOWN and a != B_UNKNOWN:
            a = B_UNKNOWN
    return a


def _all(vals: list[int]) -> int:
    return _quantify(vals, B_FALSE)


def _some(vals: list[int]) -> int:
    return _quantify(vals, B_TRUE)


def _pcnt(x: Node, vals: list[int]) -> int:
    a = _sum(vals)  # (unknown counts 2, as pmie adds truth values)
    assert x.a2 is not None
    return B_TRUE if a >= int(0.5 + x.a2.sample()[0] * len(vals)) else B_FALSE


REDUCE: dict[str, Callable[[Node, list[Any]], Any]] = {
    "sum": lambda x, vals: _sum(vals),
    "avg": lambda x, vals: _sum(vals) / len(vals),
    "max": lambda x, vals: _max(vals),
    "min": lambda x, vals: _min(vals),
    "count": lambda x, vals: float(sum(1 for d in vals if d == B_TRUE)),
    "all": lambda x, vals: _all(vals),
    "some": lambda x, vals: _some(vals),
    "pcnt": _pcnt,
}
QUANTIFIERS = ("all", "some", "pcnt")


def aggregate(x: Node) -> None:
    """An aggregate or quantifier over the host, instance or sample axis."""
    a = x.a1
    assert a is not None
    word, axis = x.op.rsplit("_", 1)
    reduce = REDUCE[word]
    a.run()
    x.rotate()
    out = x.sample()
    if axis == "sample":
        n = a.tdom
        if a.valid >= n and x.tspan > 0 and a.tdom > 0:
            for i in range(x.tspan):
                out[i] = reduce(x, [a.ring[j][i] for j in range(n)])
        else:
            x.valid = 0
            return
    elif not a.valid or (axis == "inst" and x.hdom == 0) or (axis == "host" and a.hdom <= 0):
        x.valid = 0
        return
    else:
        n = a.hdom if axis == "host" else a.e_idom
        if n < 1:
            if word not in QUANTIFIERS:
                x.valid = 0
                return
            out[0] = B_UNKNOWN
        else:
            out[0] = reduce(x, a.sample()[:n])
    x.stamps[0] = a.stamps[0]
    x.valid += 1


def match_inst(x: Node) -> None:
    """match_inst / nomatch_inst: keep the truth of instances whose names fit."""
    a, pattern = x.a1, x.a2
    assert a is not None and pattern is not None
    a.run()
    x.rotate()
    if a.tspan <= 0:
        x.valid = 0
        x.stamps[0] = a.stamps[0]
        return
    m = a.metrics
    src, out = a.sample(), x.sample()
    for n in range(a.tspan):
        if not pattern.valid or not a.valid:
            out[n] = B_UNKNOWN
        elif x.e_idom <= 0 or m is None or m.inames is None:
            out[n] = B_FALSE
        else:
            fits = pattern.extra(m.inames[n] or "")
            keep = fits if x.op == "match" else not fits
            out[n] = int(bool(src[n])) if keep else B_FALSE
    x.valid += 1
    x.stamps[0] = a.stamps[0]


# -- rules and actions ------------------------------------------------------------------------


def rule(x: Node) -> None:
    a, act = x.a1, x.a2
    assert a is not None and act is not None
    a.run()
    x.valid = a.valid
    perf = CLOCK.perf
    if x.valid > 0:
        x.ring[0][0] = a.ring[0][0]
        if x.ring[0][0] == B_TRUE:
            perf.eval_true += 1
            act.run()
        elif x.ring[0][0] == B_FALSE:
            perf.eval_false += 1
        else:
            perf.eval_unknown += 1
    else:
        perf.eval_unknown += 1


def _rule_in(rp: Node) -> None:
    """A rule of a rule set evaluated as the current rule (for its action's %v)."""
    saved = CLOCK.curr
    CLOCK.curr = rp
    rule(rp)
    CLOCK.curr = saved


def ruleset(x: Node) -> None:
    """The first rule that is true acts; else the unknown or otherwise clause."""
    x.valid = 0
    link: Node | None = x.a1
    all_unknown = True
    while link is not None:
        rp = link if link.op == "rule" else link.a1
        assert rp is not None and rp.a1 is not None
        _rule_in(rp)
        if rp.a1.valid:
            x.valid = rp.a1.valid
            x.ring[0][0] = rp.a1.ring[0][0]
            if x.valid > 0 and x.ring[0][0] == B_TRUE:
                return
            if x.valid > 0 and x.ring[0][0] == B_FALSE:
                all_unknown = False
        link = None if link.op == "rule" else link.a2
    other = x.a2
    if other is None:
        return
    assert other.a1 is not None and other.a2 is not None
    if all_unknown and other.a1.op == "rule":
        _rule_in(other.a1)
        return
    if other.a2.op == "rule":
        rp = other.a2
        CLOCK.curr = rp  # (pmie leaves it so)
        rule(rp)
        assert rp.a1 is not None
        x.valid = rp.a1.valid
        x.ring[0][0] = rp.a1.ring[0][0]


def act_and(x: Node) -> None:
    assert x.a1 is not None and x.a2 is not None
    x.a1.run()
    x.a2.run()
    x.ring[0][0] = int(x.a1.ring[0][0] == B_TRUE and x.a2.ring[0][0] == B_TRUE)


def act_or(x: Node) -> None:
    assert x.a1 is not None and x.a2 is not None
    x.a1.run()
    if x.a1.ring[0][0] == B_FALSE:
        x.a2.run()
        x.ring[0][0] = x.a2.ring[0][0]
    else:
        x.ring[0][0] = B_TRUE


def act_fake(x: Node) -> None:
    """An action replaying an archive: say what would be done (after any holdoff)."""
    now = CLOCK.now
    holdoff = x.a2
    if holdoff is None or x.stamps[0] == 0 or now >= holdoff.sample()[0] + x.stamps[0]:
        assert x.a1 is not None
        x.a1.run()
        x.ring[0][0] = B_TRUE
        x.stamps[0] = now
        CLOCK.write(f"{x.extra} {CLOCK.ctime(now)}: {x.a1.text}\n")


def act_arg(x: Node) -> None:
    """The action's strings with %h %i %v %c filled in for each satisfying binding (no
    binding, no text: pmie's null string, which printf shows as "(null)")."""
    from .show import format_satisfying

    assert CLOCK.curr is not None
    parts = [format_satisfying(CLOCK.curr, s) for s in x.extra]
    made = [p for p in parts if p is not None]
    x.text = "".join(made) if made else "(null)"
