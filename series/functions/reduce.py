"""The functions that reduce a series to new values (series_calculate_max, _min,
_statistical, _standard_deviation, _topk, _nth_percentile and their time_domain forms):
max, min, sum, avg, stdev, topk and nth_percentile, per instance over the samples
(`_inst`, and max/min/sum/avg) or per sample over the instances (`_sample`).  The
result series are new, with no metric name; chosen values are copied, computed ones
printed %e."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

from purepcp.pmapi.cnumbers import atof, c_sqrt, c_sum, fdiv, scan_int

from ..parse import Number
from .loops import Grid, by_instance, by_sample, results
from .valuesets import Node, Run, Series, Value
from .valuetext import printf_e

__all__ = [
    "extreme_inst",
    "extreme_sample",
    "percentile_inst",
    "percentile_sample",
    "stdev_inst",
    "stdev_sample",
    "sum_avg_inst",
    "sum_avg_sample",
    "topk_inst",
    "topk_sample",
]


def _as_double(values: list[Series], *, instance: bool) -> None:
    """The results' type made double, and with INSTANCE their semantics "instance"."""
    for out in values:
        if instance:
            out.desc.semantics = "instance"
        out.desc.type = "double"


def _param_int(param: Number | None) -> int:
    """sscanf's %d of a function's number argument."""
    if param is None:
        return 0
    return scan_int(param.text, 32, True) or 0


# --- max and min ----------------------------------------------------------------------------


def _extreme_index(first: float, rest: Iterable[tuple[int, Value]], larger: bool) -> int:
    """Where the extreme value is: 0 (FIRST's), or the index of each later value strictly
    beyond the best so far."""
    index, best = 0, first
    for i, value in rest:
        d = atof(value.data)
        if (best < d) if larger else (best > d):
            index, best = i, d
    return index


def extreme_inst(node: Node, run: Run, *, larger: bool) -> None:
    """max, max_inst, min, min_inst: per instance the value of its extreme sample."""

    def pick(grid: Grid, k: int) -> Value:
        j = _extreme_index(atof(grid.sample(0)[k].data), grid.column(k, 1), larger)
        return replace(grid.sample(j)[k])

    by_instance(node, pick)


def extreme_sample(node: Node, run: Run, *, larger: bool) -> None:
    """max_sample, min_sample: per sample the value of its extreme instance."""

    def pick(grid: Grid, j: int) -> list[Value]:
        sample = grid.sample(j)
        k = _extreme_index(atof(sample[0].data), grid.row(j, 1), larger)
        return [replace(sample[k])]

    by_sample(node, pick)


# --- sum, average, standard deviation ---------------------------------------------------------


def sum_avg_inst(node: Node, run: Run, *, average: bool) -> None:
    """sum, sum_inst, avg, avg_inst: per instance over the samples, stamped with the first
    one's time; an average divides by the number of samples, those passed over too."""

    def pick(grid: Grid, k: int) -> Value:
        total = c_sum(atof(v.data) for _, v in grid.column(k))
        first = grid.sample(0)[k]
        text = printf_e(fdiv(total, grid.n_samples) if average else total)
        return Value(first.timestamp, first.ns, first.series, text)

    _as_double(by_instance(node, pick), instance=average)


def sum_avg_sample(node: Node, run: Run, *, average: bool) -> None:
    """sum_sample, avg_sample: per sample over the instances, one value with an empty
    instance id; an average divides by the first sample's number of instances."""

    def pick(grid: Grid, j: int) -> list[Value]:
        total = c_sum(atof(v.data) for _, v in grid.row(j))
        first = grid.sample(j)[0]
        text = printf_e(fdiv(total, grid.n_inst) if average else total)
        return [Value(first.timestamp, first.ns, "", text)]

    _as_double(by_sample(node, pick), instance=average)


def stdev_inst(node: Node, run: Run) -> None:
    """stdev_inst: per instance over the samples, the population standard deviation,
    stamped with the first sample's time.  The mean is over the complete samples, the
    deviations over every sample holding the instance (PCP reads past a shorter one)."""

    def pick(grid: Grid, k: int) -> Value:
        n = grid.n_samples
        mean = fdiv(c_sum(atof(v.data) for _, v in grid.column(k)), n)
        held = (grid.sample(j) for j in range(n))
        sd = c_sum(math.pow(atof(s[k].data) - mean, 2) for s in held if k < len(s))
        first = grid.sample(0)[k]
        return Value(first.timestamp, first.ns, first.series, printf_e(c_sqrt(fdiv(sd, n))))

    _as_double(by_instance(node, pick), instance=True)


def stdev_sample(node: Node, run: Run) -> None:
    """stdev_sample: per sample over the instances, one value with an empty instance id.
    The mean is over a complete sample's instances, the deviations over the sample's
    first instances, complete or not."""

    def pick(grid: Grid, j: int) -> list[Value]:
        n = grid.n_inst
        sample = grid.sample(j)
        mean = fdiv(c_sum(atof(v.data) for _, v in grid.row(j)), n)
        sd = c_sum(math.pow(atof(v.data) - mean, 2) for v in sample[:n])
        return [Value(sample[0].timestamp, sample[0].ns, "", printf_e(c_sqrt(fdiv(sd, n))))]

    _as_double(by_sample(node, pick), instance=True)


# --- topk and nth_percentile ------------------------------------------------------------------


def _insert_top(data: list[float], pointers: list[int], value: float, index: int) -> None:
    """Put VALUE (from INDEX) into the descending list DATA where it is larger than an
    entry, shifting the rest down (the smallest falls off)."""
    for pos in range(len(data)):
        if value > data[pos]:
            data[pos + 1 :] = data[pos:-1]
            pointers[pos + 1 :] = pointers[pos:-1]
            data[pos], pointers[pos] = value, index
            return


def topk_inst(node: Node, run: Run) -> None:
    """topk_inst (series_calculate_topk): per instance, its K largest samples (values
    above zero only); the result has one "sample" per instance holding K values.  As in
    PCP, only the first of the K running maxima is reset between instances."""
    k_wanted = _param_int(node.call.param)
    for grid, out in results(node):
        if grid is None:
            continue
        n = min(k_wanted, grid.n_samples)
        data, pointers = [0.0] * n, [0] * n
        out.num_samples = grid.n_inst
        for k in range(grid.n_inst):
            if n:
                data[0] = 0.0
            for j, v in grid.column(k):
                value = atof(v.data)
                if n and value > data[n - 1]:
                    _insert_top(data, pointers, value, j)
            held = (grid.sample(p) for p in pointers)
            out.samples.append([replace(sample[k]) for sample in held if k < len(sample)])
    _as_double(node.values, instance=True)


def topk_sample(node: Node, run: Run) -> None:
    """topk_sample: per sample, its K largest instances (values above zero only)."""
    k_wanted = _param_int(node.call.param)

    def pick(grid: Grid, j: int) -> list[Value]:
        n = min(k_wanted, grid.n_inst)
        data, pointers = [0.0] * n, [0] * n
        for k, v in grid.row(j):
            value = atof(v.data)
            if n and value > data[n - 1]:
                _insert_top(data, pointers, value, k)
        sample = grid.sample(j)
        return [replace(sample[p]) for p in pointers if p < len(sample)]

    _as_double(by_sample(node, pick), instance=True)


def _percentile_pick(values: list[tuple[float, int]], size: int, rank: int) -> int:
    """The index PCP's nth percentile picks: VALUES inserted into a descending list of
    SIZE zeroes (only values above an entry get in), then entry size-1-rank."""
    data, pointers = [0.0] * size, [0] * size
    for value, index in values:
        _insert_top(data, pointers, value, index)
    if rank == size:
        return pointers[0]
    return pointers[size - 1 - rank]


def percentile_inst(node: Node, run: Run) -> None:
    """nth_percentile_inst (series_calculate_nth_percentile): per instance over the
    samples, one sample; PCP never considers the first sample."""
    pct = _param_int(node.call.param)

    def pick(grid: Grid, k: int) -> Value | None:
        n = grid.n_samples
        values = [(atof(v.data), j) for j, v in grid.column(k, 1)]
        sample = grid.sample(_percentile_pick(values, n, int(pct / 100 * n)))
        return replace(sample[k]) if k < len(sample) else None

    by_instance(node, pick)


def percentile_sample(node: Node, run: Run) -> None:
    """nth_percentile_sample: per sample over the instances, one instance."""
    pct = _param_int(node.call.param)

    def pick(grid: Grid, j: int) -> list[Value]:
        n = grid.n_inst
        values = [(atof(v.data), k) for k, v in grid.row(j)]
        index = _percentile_pick(values, n, int(pct / 100 * n))
        sample = grid.sample(j)
        return [replace(sample[index])] if index < len(sample) else []

    by_sample(node, pick)
