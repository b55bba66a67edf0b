"""series_calculate: the expression's values computed bottom-up, each function node by
its series_calculate_* (the table below), each arithmetic node by its operator."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ..parse import Binary, Call, Func
from .arith import binary
from .inplace import rate, rescale, unary
from .reduce import (
    extreme_inst,
    extreme_sample,
    percentile_inst,
    percentile_sample,
    stdev_inst,
    stdev_sample,
    sum_avg_inst,
    sum_avg_sample,
    topk_inst,
    topk_sample,
)
from .valuesets import Node, Run

__all__ = ["calculate"]

#: what computes each function's node from its argument's values
FUNCTIONS: dict[Func, Callable[[Node, Run], None]] = {
    Func.RATE: rate,
    Func.MAX: partial(extreme_inst, larger=True),
    Func.MAX_INST: partial(extreme_inst, larger=True),
    Func.MAX_SAMPLE: partial(extreme_sample, larger=True),
    Func.MIN: partial(extreme_inst, larger=False),
    Func.MIN_INST: partial(extreme_inst, larger=False),
    Func.MIN_SAMPLE: partial(extreme_sample, larger=False),
    Func.SUM: partial(sum_avg_inst, average=False),
    Func.SUM_INST: partial(sum_avg_inst, average=False),
    Func.SUM_SAMPLE: partial(sum_avg_sample, average=False),
    Func.AVG: partial(sum_avg_inst, average=True),
    Func.AVG_INST: partial(sum_avg_inst, average=True),
    Func.AVG_SAMPLE: partial(sum_avg_sample, average=True),
    Func.STDEV_INST: stdev_inst,
    Func.STDEV_SAMPLE: stdev_sample,
    Func.TOPK_INST: topk_inst,
    Func.TOPK_SAMPLE: topk_sample,
    Func.NTH_PERCENTILE_INST: percentile_inst,
    Func.NTH_PERCENTILE_SAMPLE: percentile_sample,
    Func.ABS: unary,
    Func.FLOOR: unary,
    Func.LOG: unary,
    Func.SQRT: unary,
    Func.ROUND: unary,
    Func.RESCALE: rescale,
}


def calculate(node: Node, run: Run) -> None:
    """series_calculate: children first, then this node's function or operator."""
    for child in node.children:
        calculate(child, run)
    if run.budget is not None:
        run.budget.check_time()
    if isinstance(node.expr, Binary):
        binary(node, run)
    elif isinstance(node.expr, Call):
        FUNCTIONS[node.expr.func](node, run)
