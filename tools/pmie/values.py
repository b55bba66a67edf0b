"""pmie's value matrices: each expression node keeps a ring of recent samples.

A node's value is a sample of ``tspan`` values (one per instance, or per host
once instances are reduced), and the node keeps ``nsmpls`` such samples in a
ring buffer, most recent first, as pmie's Expr does.  ``valid`` counts the
consecutive evaluations that produced a value (0: the value is unknown, which
pmie prints as "?" or "unknown").  The shape fields keep pmie's conventions: a
domain of -1 has collapsed to a single value, 0 is empty, N has N members.

Truth values are pmie's three: false, true and unknown (Kleene logic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

B_FALSE, B_TRUE, B_UNKNOWN = 0, 1, 2

# value semantics: pmDesc's, then pmie's own
SEM_UNKNOWN = 0
PM_SEM_COUNTER = 1
PM_SEM_INSTANT = 3
PM_SEM_DISCRETE = 4
SEM_NUMVAR = 10
SEM_BOOLEAN = 11
SEM_CHAR = 12
SEM_NUMCONST = 13
SEM_REGEX = 14

#: the operators whose value is one number made from a set of them
AGGREGATES = frozenset(
    f"{op}_{axis}"
    for op in ("sum", "avg", "max", "min", "count")
    for axis in ("host", "inst", "sample")
)


def kleene_not(v: int) -> int:
    return (1 - v) if v in (B_TRUE, B_FALSE) else B_UNKNOWN


def kleene_and(x: int, y: int) -> int:
    if x == B_TRUE and y == B_TRUE:
        return B_TRUE
    return B_FALSE if B_FALSE in (x, y) else B_UNKNOWN


def kleene_or(x: int, y: int) -> int:
    if B_TRUE in (x, y):
        return B_TRUE
    return B_FALSE if x == B_FALSE and y == B_FALSE else B_UNKNOWN


def and_one(x: int) -> int:
    """AND with an operand that has no value: only false decides."""
    return B_FALSE if x == B_FALSE else B_UNKNOWN


def or_one(x: int) -> int:
    """OR with an operand that has no value: only true decides."""
    return B_TRUE if x == B_TRUE else B_UNKNOWN


def c_divide(a: float, b: float) -> float:
    """a / b as C's doubles divide (no exception for zero)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


@dataclass(eq=False)
class Bound:
    """A metric of a rule bound to its archive: pmie's per-host Metric."""

    name: str
    hconn: str  # the archive's path, or the pmcd's connection string
    hname: str  # its host
    pmid: int
    desc: Any
    conv: float  # factor into canonical units
    specinst: int  # how many instances the rule names (0: all)
    m_idom: int
    inames: list[str | None] | None
    iids: list[int] | None
    vset: list[tuple[int, Any]] | None = None  # this fetch's values, by instance
    stamp: float = 0.0
    stomp: float = 0.0  # the previous fetch's time, for rates
    vals: list[float] = field(default_factory=list)  # the previous raw counter values
    node: Node | None = None
    source: Any = None  # where it is fetched from (tools.pmie.sources)
    wanted: list[str] = field(default_factory=list)  # the instances the rule names
    ready: bool = False  # bound (its descriptor and instances known)
    namer: Any = None  # inst -> its name, at its source (fetching every instance)


@dataclass(eq=False)
class Node:
    """One expression node: its operator, operands, shape and ring of samples."""

    op: str
    a1: Node | None
    a2: Node | None
    hdom: int
    e_idom: int
    tdom: int
    nsmpls: int
    sem: int
    parent: Node | None = None
    metrics: Bound | None = None  # (of several hosts' metric: the first host's)
    hosts: list[Bound] | None = None  # a metric of several hosts (:h1 :h2): each host's
    tspan: int = 0
    nvals: int = 0
    valid: int = 0
    ring: list[list[Any]] = field(default_factory=list)
    ptrs: list[int] = field(default_factory=list)  # the ring slot of each sample
    stamps: list[float] = field(default_factory=list)
    evaluate: Callable[[Node], None] | None = None
    one1: bool = False  # operand 1 is a single value (findEval's arity)
    one2: bool = False
    extra: Any = None  # the percentage, the action's kind, the string's text
    text: str | None = None  # a string constant's text
    memo: Any = None  # action texts made from this node's bindings (show.py)
    options: Any = None  # a syslog action's -p and -t (its strings' node: for listing)

    def __post_init__(self) -> None:
        for arg in (self.a1, self.a2):
            if arg is not None:
                arg.parent = self
        self.tspan = self.e_idom if self.e_idom >= 0 else abs(self.hdom)
        self.nvals = self.tspan * self.nsmpls
        if self.a1 is not None:
            arg = primary(self.a1, self.a2)
            self.metrics, self.hosts = arg.metrics, arg.hosts

    # -- the ring ---------------------------------------------------------------------------

    def zero(self) -> Any:
        if self.sem in (SEM_BOOLEAN, SEM_CHAR):
            return B_FALSE
        m = self.metrics
        if m is not None and m.desc is not None and m.desc.type == STRING_TYPE:
            return ""
        return 0.0

    def new_ring(self) -> None:
        """newRingBfr: a zeroed ring, samples in slot order."""
        z = self.zero()
        self.ring = [[z] * self.tspan for _ in range(self.nsmpls)]
        self.ptrs = list(range(self.nsmpls))
        self.stamps = [0.0] * self.nsmpls

    def rotate(self) -> None:
        """ROTATE: the oldest sample's slot becomes the newest."""
        if self.nsmpls > 1:
            self.ptrs = self.ptrs[-1:] + self.ptrs[:-1]
            self.stamps = self.stamps[-1:] + self.stamps[:-1]

    def sample(self, k: int = 0) -> list[Any]:
        return self.ring[self.ptrs[k]]

    def run(self) -> None:
        """EVALARG: evaluate unless constant."""
        if self.evaluate is not None:
            self.evaluate(self)


STRING_TYPE = 6  # PM_TYPE_STRING


def primary(a1: Node, a2: Node | None) -> Node:
    """The operand a binary node takes its shape and metrics from."""
    if a2 is None or a1.nvals > 1:
        return a1
    if a2.nvals > 1:
        return a2
    if a1.metrics is not None and (a1.hdom != -1 or a1.e_idom != -1 or a1.tdom != -1):
        return a1
    if a2.metrics is not None and (a2.hdom != -1 or a2.e_idom != -1 or a2.tdom != -1):
        return a2
    return a1


def reshape(x: Node, e_idom: int) -> None:
    x.e_idom = e_idom
    x.tspan = e_idom if e_idom >= 0 else abs(x.hdom)
    x.nvals = x.tspan * x.nsmpls
    x.valid = 0
    x.new_ring()


def inst_expr(x: Node) -> None:
    """instExpr: a changed instance domain reshapes the parents that have one."""
    assert x.a1 is not None
    arg = primary(x.a1, x.a2)
    if x.e_idom != -1 and x.e_idom != arg.e_idom:
        reshape(x, arg.e_idom)
        if x.parent is not None:
            inst_expr(x.parent)


def bounds(x: Node) -> list[Bound]:
    """The metrics of X's values, host by host (one, but for a metric of several hosts)."""
    if x.hosts is not None:
        return x.hosts
    return [x.metrics] if x.metrics is not None else []


def instances(x: Node) -> int:
    """How many instances X's metrics have over its hosts (-1: none known)."""
    ninst = -1
    for m in bounds(x):
        if m.m_idom >= 0:
            ninst = m.m_idom if ninst == -1 else ninst + m.m_idom
    return ninst


def inst_fetch_expr(x: Node) -> None:
    """instFetchExpr: a node's semantics (when unknown) and shape follow its metric's."""
    m = x.metrics
    assert m is not None
    if x.sem == SEM_UNKNOWN and m.desc is not None:
        x.sem = PM_SEM_INSTANT if m.desc.sem == PM_SEM_COUNTER else m.desc.sem
    ninst = instances(x)
    if x.e_idom != ninst:
        reshape(x, ninst)
        if x.parent is not None:
            inst_expr(x.parent)


def change_samples(x: Node, nsmpls: int) -> None:
    """changeSmpls: keep NSMPLS samples."""
    if nsmpls == x.nsmpls:
        return
    x.nsmpls = nsmpls
    x.nvals = x.tspan * nsmpls
    x.valid = 0
    x.new_ring()
