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
    base: int = 0,
) -> Answer:
    """The values of SERIES at times AT (int64 ns), by semantics SEM, for a metric of VTYPE.

    MARKS are the archive's <mark> times (sorted): no bound is taken across one.
    BASE (ns) is the archive's label start: counters are interpolated on seconds since
    it, as doubles, as libpcp does, so that values round as libpcp's do.
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
        rel = (seconds_since(x, base) for x in (t, tp, tn))
        out = _counter(*rel, vp, vn, vtype, counter_wrap() if wrap is None else wrap)
        # on an observation's own time, its value exactly (no arithmetic)
        return Answer(has, np.where(t == tp, vp, np.where(t == tn, vn, out)))
    # instantaneous and discrete: the closest bound (a tie goes to the prior); without a
    # usable next bound (discrete only), the prior
    take_next = has_n & (2 * t > tp + tn)
    return Answer(has, np.where(take_next, vn, vp))


def seconds_since(ns: np.ndarray, base: int) -> np.ndarray:
    """Seconds from BASE to each time (int64 ns) as libpcp's __pmTimestampSub gives them
    (and, from 0, pmtimespecToReal): whole seconds plus nanoseconds over 1e9 in long
    double (NumPy's longdouble is the platform C compiler's), rounded to a double."""
    sec, nsec = np.divmod(ns, NSEC)
    bsec, bnsec = divmod(base, NSEC)
    ld = np.longdouble
    return ((sec - bsec).astype(ld) + (nsec - bnsec).astype(ld) / ld(NSEC)).astype(np.float64)


def _counter(
    t: np.ndarray,
    tp: np.ndarray,
    tn: np.ndarray,
    vp: np.ndarray,
    vn: np.ndarray,
    vtype: int,
    wrap: bool,
) -> np.ndarray:
    """Linear interpolation between (tp, vp) and (tn, vn) at t (seconds, as doubles), in
    libpcp's arithmetic: (0.5 + p) + (f * diff) / dt for integers, then truncated."""
    dt = tn - tp
    f = t - tp
    span = np.where(dt > 0, dt, 1.0)
    p = vp.astype(np.float64)
    if vtype == PMType.PM_TYPE_FLOAT:
        diff = (vn - vp).astype(np.float64)  # (libpcp subtracts in float)
    elif vtype == PMType.PM_TYPE_DOUBLE:
        diff = vn - vp
    else:  # the integer difference, made a double (downwards: minus the upward one)
        up = vn >= vp
        diff = np.where(up, (vn - vp).astype(np.float64), -(vp - vn).astype(np.float64))
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
    return between
