"""Interpolated replay: many fetches of an archive context answered at once, as arrays.

A replay is what `count` PM_MODE_INTERP fetches from an origin, `delta` apart, would
return: per fetch time, per metric, per candidate instance, whether it has a value
and which (interp.py's rules over the archive's observation series, columns.py).
The candidates of a metric with an instance domain are, as libpcp takes them, every
instance any of the archive's instance-domain records ever named, less those the
context's profile leaves out; a singular metric has the one PM_IN_NULL.  A fetch
more than a millisecond before the archive's label start or after its last record
is PM_ERR_EOL, and the origin still moves on, as with libpcp.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..desc import Desc
from ..errors import PM_ERR_PMID_LOG, PM_ERR_TYPE  # type: ignore[attr-defined]
from ..ids import PM_IN_NULL, PM_INDOM_NULL
from ..types import PMSem, ValFmt
from ..values import NO_BLOCKS, ValueSet
from .columns import Columns
from .interp import NUMERIC_DTYPES, interpolate

#: How far outside [label start, last record] a fetch may ask before it is PM_ERR_EOL.
EOL_SLOP_NS = 1_000_000


@dataclass(frozen=True)
class MetricReplay:
    """One metric over a replay: has[k, j] says whether fetch k has instance insts[j]."""

    pmid: int
    desc: Desc | None
    insts: np.ndarray  # uint32 candidate instances, ascending
    has: np.ndarray  # bool, (fetches, instances)
    values: np.ndarray  # the metric's NumPy type (objects for strings...), same shape
    error: int = 0  # a PCP error some fetches give this metric instead (numval < 0) ...
    failed: np.ndarray | None = None  # ... those (bool per fetch); None: every fetch

    def fails(self, k: int) -> bool:
        """Whether fetch K gives this metric its error rather than values."""
        return bool(self.error) and (self.failed is None or bool(self.failed[k]))

    def value_set(self, k: int) -> ValueSet:
        """Fetch K's value set for this metric, as pmFetch would have returned it."""
        if self.fails(k):
            return ValueSet(self.pmid, self.error, _INSITU, NO_BLOCKS, array("I"), array("I"))
        row = self.has[k]
        if not row.any():
            return ValueSet(self.pmid, 0, _INSITU, NO_BLOCKS, array("I"), array("I"))
        assert self.desc is not None
        insts = self.insts[row].tolist()
        atoms = self.values[k][row].tolist()
        return ValueSet.of_atoms(self.pmid, self.desc.type, list(zip(insts, atoms, strict=True)))


_NO_INSTS = np.zeros(0, dtype=np.uint32)
_INSITU = ValFmt.PM_VAL_INSITU


@dataclass(frozen=True)
class Replay:
    """What a run of interpolated fetches returned: their times, EOLs and metrics."""

    times: np.ndarray  # int64 ns, each fetch's requested time (its result's timestamp)
    eol: np.ndarray  # bool: that fetch failed with PM_ERR_EOL
    metrics: tuple[MetricReplay, ...]


def fetch_times(origin_ns: int, delta_ns: int, count: int) -> np.ndarray:
    """The times of COUNT fetches from ORIGIN_NS, DELTA_NS apart (int64 ns)."""
    return origin_ns + np.arange(count, dtype=np.int64) * np.int64(delta_ns)


def replay(
    observations: Columns,
    descs: dict[int, Desc],
    pmids: Sequence[int],
    times: np.ndarray,
    window: tuple[int, int],
    candidates: Callable[[Desc, Sequence[int]], Sequence[int]],
) -> Replay:
    """Fetches of PMIDS at TIMES (int64 ns) from OBSERVATIONS (an archive's Columns).

    WINDOW is (label start, last record) in ns; CANDIDATES(desc, observed) gives the
    instances a fetch may return for a metric with an instance domain, ascending.
    """
    start, end = window
    eol = (times < start - EOL_SLOP_NS) | (times > end + EOL_SLOP_NS)
    marks = observations.marks
    metrics = []
    for pmid in pmids:
        desc = descs.get(pmid)
        if desc is None:
            empty = np.zeros((len(times), 0), dtype=bool)
            metrics.append(MetricReplay(pmid, None, _NO_INSTS, empty, empty, PM_ERR_PMID_LOG))
            continue
        series = observations.series(pmid)
        if desc.indom == PM_INDOM_NULL:
            insts = [PM_IN_NULL]
        else:
            insts = list(candidates(desc, sorted(series)))
        dtype = NUMERIC_DTYPES.get(desc.type, object)
        has = np.zeros((len(times), len(insts)), dtype=bool)
        values = np.zeros((len(times), len(insts)), dtype=dtype)
        # a counter that is no number fails where it has both bounds (libpcp: PM_ERR_TYPE)
        untyped = desc.sem == PMSem.PM_SEM_COUNTER and dtype is object
        sem = PMSem.PM_SEM_INSTANT if untyped else desc.sem  # (the same bounds needed)
        for j, inst in enumerate(insts):
            one = series.get(inst)
            if one is not None:
                answer = interpolate(one, times, sem, desc.type, marks, base=start)
                has[:, j] = answer.has
                values[:, j] = answer.values
        has[eol] = False
        error, failed = 0, None
        if untyped:
            error, failed = PM_ERR_TYPE, has.any(axis=1)
            has[:] = False
        insts_u32 = np.asarray(insts, dtype=np.uint32)
        metrics.append(MetricReplay(pmid, desc, insts_u32, has, values, error, failed))
    return Replay(times, eol, tuple(metrics))


def derived_replay(derived, pmids: Sequence[int], operands: Replay) -> Replay:
    """A replay of PMIDS, derived ones computed from OPERANDS (a replay of
    ``derived.operands(pmids)``) by the context's DerivedMetrics."""
    from ..derived.frame import Frame

    frames = {}
    for m in operands.metrics:
        err = np.zeros(len(operands.times), np.int32)
        if m.error:
            err[slice(None) if m.failed is None else m.failed] = m.error
        has = m.has & ~operands.eol[:, None]
        frames[m.pmid] = Frame(m.insts, has, m.values, err)
    computed = derived.evaluate(pmids, frames, operands.times)
    real = {m.pmid: m for m in operands.metrics}
    metrics = []
    for pmid in pmids:
        if pmid in real:
            metrics.append(real[pmid])
            continue
        frame = computed.get(pmid)
        if frame is None:  # (a derived metric that did not bind)
            empty = np.zeros((len(operands.times), 0), dtype=bool)
            metrics.append(MetricReplay(pmid, None, _NO_INSTS, empty, empty, PM_ERR_PMID_LOG))
            continue
        desc = derived.bound(pmid).desc
        failing = frame.err < 0
        # (one error code per metric: a replay of a derived metric reports its first)
        error = int(frame.err[failing][0]) if failing.any() else 0
        metrics.append(
            MetricReplay(pmid, desc, frame.insts.astype(np.uint32), frame.has, frame.values,
                         error, failing if error else None)
        )  # fmt: skip
    return Replay(operands.times, operands.eol, tuple(metrics))
