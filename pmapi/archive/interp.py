"""Values at any time from an archive: PCP's interpolation rules, answered with NumPy.

Each (metric, instance) of an archive is read once into an observation series, the
times (int64 nanoseconds) and values (in the metric's own NumPy type) of every record
that holds that instance, and the archive's <mark> times are kept as one sorted array.
A value at time t then takes two binary searches: the prior observation (the latest
at or before t) and the next (the earliest at or after t), each usable only if no
<mark> lies between it and t.  Whole replays (many times at once) are the same
searches done as arrays.

The rules are seed 001's ("Explaining Value Interpolation with PCP Archives", with
its erratum: the closest observation wins and a tie goes to the prior one):

- counter: linear interpolation between the bounds, none unless both exist; integers
  rounded as libpcp does (add 0.5, truncate toward zero); a decrease interpolates
  downwards unless $PCP_COUNTER_WRAP is set, when an unsigned counter wraps;
- instantaneous: the closest observation, none unless both bounds exist;
- discrete: the closest when both exist, the prior alone when only it does;
- strings, aggregates and events: the prior observation, with the bounds each
  semantics requires (libpcp interpolates only numbers); a counter of such a type
  is PM_ERR_TYPE.

On an observation's own time its value is returned exactly.  PCP 6.0.3 (the reference
installed here) still takes the prior observation for instantaneous and discrete
metrics; the closest rule is PCP 6.3.2's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..errors import PM_ERR_TYPE  # type: ignore[attr-defined]
from ..types import PMSem, PMType

NSEC = 1_000_000_000

#: The NumPy type an observation series of each PCP type is kept in (others: objects).
NUMERIC_DTYPES: dict[int, type] = {
    PMType.PM_TYPE_32: np.int32,
    PMType.PM_TYPE_U32: np.uint32,
    PMType.PM_TYPE_64: np.int64,
    PMType.PM_TYPE_U64: np.uint64,
    PMType.PM_TYPE_FLOAT: np.float32,
    PMType.PM_TYPE_DOUBLE: np.float64,
}
_WRAP = {PMType.PM_TYPE_U32: 2.0**32, PMType.PM_TYPE_U64: 2.0**64}


def counter_wrap() -> bool:
    """$PCP_COUNTER_WRAP set (to anything): a decreasing unsigned counter has wrapped."""
    return "PCP_COUNTER_WRAP" in os.environ


@dataclass(frozen=True)
class Series:
    """One metric-instance's observations: times (int64 ns, ascending) and values."""

    times: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class Answer:
    """Values at requested times: has[i] says whether times[i] has one, values[i] is it."""

    has: np.ndarray
    values: np.ndarray


def series_of(times: Iterable[int], values: Iterable[object], vtype: int) -> Series:
    """A Series from parallel times (ns, ascending) and values of PCP type VTYPE."""
    dtype = NUMERIC_DTYPES.get(vtype, object)
    return Series(np.asarray(list(times), dtype=np.int64), np.asarray(list(values), dtype=dtype))


def interpolate(
    series: Series,
    at: np.ndarray | Sequence[int],
    sem: int,
    vtype: int,
    marks: np.ndarray | None = None,
    wrap: bool | None = None,
) -> Answer:
    """The values of SERIES at times AT (int64 ns), by semantics SEM, for a metric of VTYPE.

    MARKS are the archive's <mark> times (sorted): no bound is taken across one.
    A counter of a non-numeric type raises PMError(PM_ERR_TYPE), as libpcp answers it.
    """
    from ..errors import PMError

    t = np.asarray(at, dtype=np.int64)
    times, values = series.times, series.values
    n = len(times)
    numeric = vtype in NUMERIC_DTYPES
    if sem == PMSem.PM_SEM_COUNTER and not numeric:
        raise PMError(PM_ERR_TYPE)
    if n == 0:
        return Answer(np.zeros(len(t), dtype=bool), np.empty(len(t), dtype=values.dtype))
    ip = np.searchsorted(times, t, side="right") - 1  # prior: the latest at or before t
    inx = np.searchsorted(times, t, side="left")  # next: the earliest at or after t
    has_p = ip >= 0
    has_n = inx < n
    ipc = np.clip(ip, 0, n - 1)
    inc = np.clip(inx, 0, n - 1)
    tp, tn = times[ipc], times[inc]
    if marks is not None and len(marks):
        # a mark in (t_prior, t] cuts the prior off; one in [t, t_next) the next
        has_p &= np.searchsorted(marks, t, "right") == np.searchsorted(marks, tp, "right")
        has_n &= np.searchsorted(marks, t, "left") == np.searchsorted(marks, tn, "left")
    vp, vn = values[ipc], values[inc]
    has = has_p if sem == PMSem.PM_SEM_DISCRETE else has_p & has_n  # (discrete: prior alone)
    if not numeric:  # strings, aggregates, events: the prior observation
        return Answer(has, vp)
    if sem == PMSem.PM_SEM_COUNTER:
        out = _counter(t, tp, tn, vp, vn, vtype, counter_wrap() if wrap is None else wrap)
        return Answer(has, out)
    # instantaneous and discrete: the closest bound (a tie goes to the prior); without a
    # usable next bound (discrete only), the prior
    take_next = has_n & (2 * t > tp + tn)
    return Answer(has, np.where(take_next, vn, vp))


def _counter(
    t: np.ndarray,
    tp: np.ndarray,
    tn: np.ndarray,
    vp: np.ndarray,
    vn: np.ndarray,
    vtype: int,
    wrap: bool,
) -> np.ndarray:
    """Linear interpolation between (tp, vp) and (tn, vn) at t, in libpcp's arithmetic."""
    dt = (tn - tp).astype(np.float64)
    f = (t - tp).astype(np.float64)
    span = np.where(dt > 0, dt, 1.0)
    p = vp.astype(np.float64)
    if vtype == PMType.PM_TYPE_FLOAT:
        diff = (vn - vp).astype(np.float64)  # (libpcp subtracts in float)
    else:
        diff = vn.astype(np.float64) - p
    if wrap and vtype in _WRAP:
        diff = np.where(vn < vp, diff + _WRAP[vtype], diff)
    moved = f * diff / span
    if vtype in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        between = (p + moved).astype(vp.dtype)
    else:
        exact = np.trunc(0.5 + p + moved)
        if wrap and vtype in _WRAP:
            exact = np.mod(exact, _WRAP[vtype])
        info = np.iinfo(vp.dtype)
        top = np.float64(info.max)
        if int(top) > info.max:  # (2**63 - 1 and 2**64 - 1 round up as doubles)
            top = np.nextafter(top, 0.0)
        exact = np.clip(exact, float(info.min), top)
        between = exact.astype(vp.dtype)
    # on an observation's own time, its value exactly (no arithmetic)
    return np.where(t == tp, vp, np.where(t == tn, vn, between))


class Observations:
    """Every metric-instance's observation series in one archive, and its <mark> times.

    Built in one forward pass over the archive's records: each value set adds its
    instances and values as arrays (no per-value Python work); a metric's series are
    sorted out, per instance, the first time the metric is asked for.
    """

    def __init__(self, archive: object) -> None:
        from .reader import Archive

        assert isinstance(archive, Archive)
        self.archive = archive
        marks: list[int] = []
        chunks: dict[int, list[tuple[int, object, object]]] = {}
        for rec in archive.records():
            stamp = rec.stamp.sec * NSEC + rec.stamp.nsec
            if rec.is_mark:
                marks.append(stamp)
                continue
            for vs in rec.result.vsets:
                if vs.numval <= 0:
                    continue
                desc = archive.descs.get(vs.pmid)
                atoms = vs.atoms(desc.type if desc is not None else None)
                chunks.setdefault(vs.pmid, []).append((stamp, vs.insts, atoms))
        self.marks = np.array(sorted(marks), dtype=np.int64)
        self._chunks = chunks
        self._series: dict[int, dict[int, Series]] = {}

    def pmids(self) -> list[int]:
        """The metrics with at least one value in the archive."""
        return sorted(self._chunks)

    def series(self, pmid: int) -> dict[int, Series]:
        """PMID's observations, per instance (an empty dict if it has none)."""
        done = self._series.get(pmid)
        if done is not None:
            return done
        chunks = self._chunks.get(pmid, [])
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        out: dict[int, Series] = {}
        if chunks:
            counts = [len(insts) for _, insts, _ in chunks]
            times = np.repeat(np.array([s for s, _, _ in chunks], dtype=np.int64), counts)
            insts = np.concatenate([np.asarray(i, dtype=np.int64) for _, i, _ in chunks])
            if dtype is object:
                values = np.empty(len(insts), dtype=object)
                values[:] = [v for _, _, vals in chunks for v in vals]
            else:
                values = np.concatenate([np.asarray(v, dtype=dtype) for _, _, v in chunks])
            order = np.lexsort((times, insts))  # by instance, then time (stable)
            insts, times, values = insts[order], times[order], values[order]
            firsts = np.flatnonzero(np.r_[True, insts[1:] != insts[:-1]])
            for a, b in pairwise([*firsts.tolist(), len(insts)]):
                out[int(insts[a])] = Series(times[a:b], values[a:b])
        self._series[pmid] = out
        return out
