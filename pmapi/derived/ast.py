"""The expression trees of derived metrics: one frozen node class per construct.

Each node records where its text starts in the expression (``at``, an offset) so
errors can point there; nodes compare equal on their meaning only (``at`` is
excluded), so a printed and re-parsed expression gives an equal tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Functions of one operand (the seed's, PCP 6's, and our mathematical extensions).
AGGREGATES = ("avg", "count", "max", "min", "sum")
UNARY_FUNCTIONS = (
    *AGGREGATES,
    "delta",
    "rate",
    "instant",
    "defined",
    "scalar",
    "abs",
    "floor",
    "round",
    "sqrt",
    "log",
    "exp",
)
#: Binary operators from loosest to tightest binding (ternary ?: is looser still).
BOOLEAN_OPS = ("&&", "||")
RELATIONAL_OPS = ("<", "<=", "==", ">=", ">", "!=")
ADDITIVE_OPS = ("+", "-")
MULTIPLICATIVE_OPS = ("*", "/")
#: anon() and mkconst(type=) take a metric type named without PM_TYPE_.
TYPE_NAMES = ("32", "U32", "64", "U64", "FLOAT", "DOUBLE")
#: mkconst(semantics=) takes a semantics named without PM_SEM_.
SEMANTICS_NAMES = ("COUNTER", "INSTANT", "DISCRETE")


@dataclass(frozen=True)
class Node:
    """Any expression; ``at`` is the offset of its first character in the text."""

    at: int = field(default=0, compare=False, kw_only=True)


@dataclass(frozen=True)
class Name(Node):
    """A metric name (a regular metric or another derived metric)."""

    name: str


@dataclass(frozen=True)
class Number(Node):
    """A numeric constant: an unsigned 32-bit integer, or a double if it has a point
    or an exponent.  ``text`` is as written (messages quote it)."""

    text: str
    value: int | float

    @property
    def is_double(self) -> bool:
        return isinstance(self.value, float)


@dataclass(frozen=True)
class Unary(Node):
    """``-x`` (negation) or ``!x`` (boolean not)."""

    op: str
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    """``left OP right`` for an arithmetic, relational or boolean OP."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Ternary(Node):
    """``guard ? yes : no``."""

    guard: Node
    yes: Node
    no: Node


@dataclass(frozen=True)
class Call(Node):
    """``func(arg)`` for one of UNARY_FUNCTIONS."""

    func: str
    arg: Node


@dataclass(frozen=True)
class Anon(Node):
    """``anon(TYPE)``: a metric with that type and never any values."""

    type_name: str


@dataclass(frozen=True)
class MkConst(Node):
    """``mkconst(number, type=..., semantics=..., units=...)``: a constant with metadata.

    Unset attributes are None; set ones are as written, unquoted."""

    number: Number
    type_name: str | None = None
    semantics: str | None = None
    units: str | None = None


@dataclass(frozen=True)
class Rescale(Node):
    """``rescale(expr, "units")``: EXPR's values converted to UNITS (same dimensions)."""

    expr: Node
    units: str


@dataclass(frozen=True)
class MatchInst(Node):
    """``matchinst([!]/regex/, expr)``: EXPR's instances whose names match (or not)."""

    pattern: str
    invert: bool
    expr: Node


@dataclass(frozen=True)
class Select(Node):
    """``expr[name]``: the one instance of EXPR with external name NAME."""

    expr: Node
    instance: str
