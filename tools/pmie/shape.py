"""Which value axes an expression still has: pmie's host and time domains.

pmie checks, as it builds an aggregate or quantifier, that the axis it reduces
is there: constants have neither a host nor a time axis, a metric has both, and
reducing an axis (``sum_host``, ``some_sample``) removes it.  A binary operator
takes its axes from its "primary" operand, the first one that comes from a
metric.  (The instance axis depends on the metrics' instance domains, which are
known only once the metrics are bound.)
"""

from __future__ import annotations

from dataclasses import dataclass

from . import tree as t


@dataclass(frozen=True)
class Shape:
    """The axes an expression has, and whether its values come from metrics."""

    host: bool
    time: bool
    metric: bool


CONSTANT = Shape(host=False, time=False, metric=False)


def shape(node: object) -> Shape:
    """The axes of a parsed expression (constants have none)."""
    if isinstance(node, t.Fetch):
        return Shape(host=True, time=True, metric=True)
    if isinstance(node, (t.Unary, t.Match)):
        return shape(node.arg)
    if isinstance(node, t.Binary):
        left, right = shape(node.left), shape(node.right)
        if left.metric and (left.host or left.time):
            return left
        if right.metric and (right.host or right.time):
            return right
        return left
    if isinstance(node, (t.Aggregate, t.Quantifier)):
        inner = shape(node.arg)
        if node.axis == "host":
            return Shape(False, inner.time, inner.metric)
        if node.axis == "sample":
            return Shape(inner.host, False, inner.metric)
        return inner
    return CONSTANT


def missing_axis(axis: str, arg: object) -> str | None:
    """pmie's complaint when arg lacks the axis an operator reduces, else None."""
    found = shape(arg)
    if axis == "host" and not found.host:
        return "no host domain"
    if axis == "sample" and not found.time:
        return "no time domain"
    return None


def _stringness(node: object) -> bool | None:
    """Is node string valued (None: only its metrics can tell)?"""
    if isinstance(node, t.Macro):
        node = node.value
    if isinstance(node, t.Str):
        return True
    if isinstance(node, (t.Num, t.Clock)):
        return False
    return None


def mixed_types(left: object, right: object) -> bool:
    """== or != between a string and a number, as far as the parse shows."""
    sides = (_stringness(left), _stringness(right))
    return None not in sides and sides[0] != sides[1]
