"""Value sets as libpcp_web keeps them in query nodes: each node of the expression's tree
holds its series (series_sample_set_t), each series its samples, each sample its
instances' values (pmSeriesValue) as text.  The functions rewrite them in place or make
new ones, as query.c does."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from purepcp.pmapi.timewindow import NSEC

from ..parse import Binary, Call, Expr, Number, Vector, canonical

if TYPE_CHECKING:
    from ..limits import Budget

__all__ = ["EXPR_PMID", "Desc", "Node", "Run", "Series", "Value", "timespec_delta", "tree"]

#: the pmid of every expression's descriptor (and of every data node's, as PCP reads them)
EXPR_PMID = "511.0.0"


@dataclass
class Value:
    """pmSeriesValue: one instance's value in a sample."""

    timestamp: str  # the stream id with "." for "-"
    ns: int
    series: str  # the instance's series id, the metric's (no indom), or ""
    data: str


def timespec_delta(a_ns: int, b_ns: int) -> float:
    """libpcp's pmTimespec_delta(a, b): the seconds from time B to time A (both ns since
    the epoch, as values carry them), worked out in long double as gcc on x86-64 does
    (NumPy's longdouble is that type), then rounded to a double."""
    a_sec, a_nsec = divmod(a_ns, NSEC)
    b_sec, b_nsec = divmod(b_ns, NSEC)
    ld = np.longdouble
    return float(ld(a_sec - b_sec) + ld(a_nsec - b_nsec) / ld(NSEC))


@dataclass
class Desc:
    """A series' descriptor, its fields as the key server's text."""

    indom: str
    pmid: str
    semantics: str
    source: bytes
    type: str
    units: str


@dataclass
class Series:
    """series_sample_set_t: one series at a node.  SAMPLES are slots (an empty list is a
    slot with no instances); NUM_SAMPLES is how many of them count (PCP negates it when
    a function fails on the series)."""

    sid: str
    metric_name: str | None
    desc: Desc
    num_samples: int = 0
    samples: list[list[Value]] = field(default_factory=list)
    compatible: bool = True

    def derived(self) -> Series:
        """A new series for a function's result: same id and a copy of the descriptor,
        no metric name (PCP does not copy it), no samples yet."""
        return Series(self.sid, None, replace(self.desc))

    def slot(self, j: int) -> list[Value]:
        """Sample J's values; none for a slot past the end."""
        return self.samples[j] if 0 <= j < len(self.samples) else []

    def each_value(self) -> Iterator[Value]:
        """Every value of the counted samples, sample by sample, instances in order."""
        for j in range(max(self.num_samples, 0)):
            yield from self.slot(j)


@dataclass
class Node:
    """A query node: the parse tree's node and the value set computed there."""

    expr: Expr | Number
    children: list[Node]
    values: list[Series] = field(default_factory=list)

    @property
    def call(self) -> Call:
        """The function call this node is (only asked of a function's node)."""
        assert isinstance(self.expr, Call)
        return self.expr


class Run:
    """One evaluation: the messages PCP would report (the first is the answer) and the
    data nodes by vector."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.messages: list[str] = []
        self.vectors: dict[int, Node] = {}
        self.budget = budget  # (the request's limits: time is checked at each node)

    def fail(self, message: str) -> None:
        self.messages.append(message)

    @property
    def failed(self) -> bool:
        return bool(self.messages)

    def canonical(self, node: Node, idx: int) -> str:
        """series_expr_canonical of NODE, vectors named by their series IDX's metric."""

        def metric_name(vector: Vector) -> str:
            data = self.vectors.get(id(vector))
            if data is None or not 0 <= idx < len(data.values):
                return vector.name or ""
            return data.values[idx].metric_name or "(null)"

        return canonical(node.expr, metric_name)  # type: ignore[arg-type]


def tree(expr: Expr | Number, run: Run) -> Node:
    """The query nodes of EXPR (a function's number argument is a child node of its own),
    the data nodes noted in RUN by vector."""
    if isinstance(expr, Call):
        children = [tree(expr.arg, run)]
        if expr.param is not None:
            children.append(Node(expr.param, []))
        return Node(expr, children)
    if isinstance(expr, Binary):
        return Node(expr, [tree(expr.left, run), tree(expr.right, run)])
    node = Node(expr, [])
    if isinstance(expr, Vector):
        run.vectors[id(expr)] = node
    return node
