"""Values at any time from an archive: PCP's interpolation rules, answered with NumPy.

A metric's observations are a Block: the times (int64 nanoseconds) of records and,
per instance, whether each record holds it and its value there (in the metric's own
NumPy type); the archive's <mark> times are one sorted array.  A value at time t then
takes two binary searches and two running indices: the prior observation (the latest
at or before t) and the next (the earliest at or after t), each usable only if no
<mark> lies between it and t.  Whole replays (many times, every instance) are the
same searches done as arrays; a Series is a Block of one instance.

The rules are seed 001's ("Explaining Value Interpolation with PCP Archives", with
its erratum: the closest observation wins and a tie goes to the prior one):

- counter: linear interpolation between the bounds, none unless both exist; integers
  rounded as libpcp does (add 0.5, truncate toward zero) and stored in their type as
  libpcp's C stores them (c_integer); a decrease interpolates downwards unless
  $PCP_COUNTER_WRAP is set, when an unsigned counter wraps;
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
from typing import Any

import numpy as np

from ..errors import PM_ERR_TYPE
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
_WRAP = {PMType.PM_TYPE_U32: 2.0**32}


def counter_wrap() -> bool:
    """$PCP_COUNTER_WRAP set (to anything): a decreasing unsigned counter has wrapped."""
    return "PCP_COUNTER_WRAP" in os.environ


@dataclass(frozen=True)
class Series:
    """One metric-instance's observations: times (int64 ns, ascending) and values."""

    times: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class Block:
    """A metric's observations as a table: one row per record (ascending in time, records
    of one time in file order), one column per instance; present[r, j] says whether
    record r holds instance j, values[r, j] is its value there."""

    times: np.ndarray  # int64 ns, (records,)
    insts: np.ndarray  # int64 instance ids, ascending, (instances,)
    values: np.ndarray  # (records, instances)
    present: np.ndarray  # bool, (records, instances)

    @staticmethod
    def empty(dtype: Any) -> Block:
        return Block(
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros((0, 0), dtype),
            np.zeros((0, 0), bool),
        )

    def columns(self, keep: np.ndarray) -> Block:
        """This block with only the columns KEEP (positions) selects."""
        return Block(self.times, self.insts[keep], self.values[:, keep], self.present[:, keep])


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
    one = Block(
        series.times,
        np.zeros(1, np.int64),
        series.values[:, None],
        np.ones((len(series.times), 1), dtype=bool),
    )
    answer = interpolate_block(one, np.asarray(at, dtype=np.int64), sem, vtype, marks, wrap, base)
    return Answer(answer.has[:, 0], answer.values[:, 0])


def interpolate_block(
    block: Block,
    at: np.ndarray,
    sem: int,
    vtype: int,
    marks: np.ndarray | None = None,
    wrap: bool | None = None,
    base: int = 0,
) -> Answer:
    """interpolate() of every column of BLOCK at once: has and values are (times, columns).

    Each instance's prior is the last record at or before t holding it, its next the
    first at or after t, found for all instances together from running indices over
    the table, so a replay of many instances costs a few array passes, not a pass each.
    """
    from ..errors import PMError

    t = np.asarray(at, dtype=np.int64)
    n, k = block.present.shape
    numeric = vtype in NUMERIC_DTYPES
    if sem == PMSem.PM_SEM_COUNTER and not numeric:
        raise PMError(PM_ERR_TYPE)
    if n == 0 or k == 0 or len(t) == 0:
        shape = (len(t), k)
        return Answer(np.zeros(shape, dtype=bool), np.empty(shape, dtype=block.values.dtype))
    at_or_before = np.searchsorted(block.times, t, side="right") - 1
    at_or_after = np.searchsorted(block.times, t, side="left")
    if block.present.all():  # (every record holds every instance: one index per time)
        ip, inx = at_or_before[:, None], at_or_after[:, None]
    else:
        # per record and instance: the last row at or before it holding the instance,
        # and the first at or after it (-1 and n where there is none)
        rows = np.arange(n)[:, None]
        last = np.maximum.accumulate(np.where(block.present, rows, -1), axis=0)
        first = np.minimum.accumulate(np.where(block.present, rows, n)[::-1], axis=0)[::-1]
        ip = np.where(at_or_before[:, None] >= 0, last[np.clip(at_or_before, 0, n - 1)], -1)
        inx = np.where(at_or_after[:, None] < n, first[np.clip(at_or_after, 0, n - 1)], n)
    has_p = ip >= 0
    has_n = inx < n
    ipc = np.clip(ip, 0, n - 1)
    inc = np.clip(inx, 0, n - 1)
    tp, tn = block.times[ipc], block.times[inc]
    tt = t[:, None]
    if marks is not None and len(marks):
        # a mark in (t_prior, t] cuts the prior off; one in [t, t_next) the next
        has_p = has_p & (
            np.searchsorted(marks, t, "right")[:, None] == np.searchsorted(marks, tp, "right")
        )
        has_n = has_n & (
            np.searchsorted(marks, t, "left")[:, None] == np.searchsorted(marks, tn, "left")
        )
    if ip.shape[1] == 1:  # (whole rows)
        vp, vn = block.values[ipc[:, 0]], block.values[inc[:, 0]]
    else:
        cols = np.arange(k)[None, :]
        vp, vn = block.values[ipc, cols], block.values[inc, cols]
    has_p, has_n = np.broadcast_to(has_p, vp.shape), np.broadcast_to(has_n, vp.shape)
    has = has_p if sem == PMSem.PM_SEM_DISCRETE else has_p & has_n  # (discrete: prior alone)
    if not numeric:  # strings, aggregates, events: the prior observation
        return Answer(has, vp)
    if sem == PMSem.PM_SEM_COUNTER:
        at_rows = seconds_since(block.times, base)  # (once per record, then looked up)
        rel = (seconds_since(t, base)[:, None], at_rows[ipc], at_rows[inc])
        out = _counter(*rel, vp, vn, vtype, counter_wrap() if wrap is None else wrap)
        return Answer(has, np.where(tt == tp, vp, np.where(tt == tn, vn, out)))
    take_next = has_n & (2 * tt > tp + tn)
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
    libpcp's arithmetic: (0.5 + p) + (f * diff) / dt for integers, then stored as C
    stores a double in the type (c_integer).  As in interp.c, a 64-bit unsigned
    counter's values are compared and its prior taken as signed 64-bit numbers, and
    the differences are the types' own (wrapping) ones."""
    dt = tn - tp
    f = t - tp
    span = np.where(dt > 0, dt, 1.0)
    if vtype == PMType.PM_TYPE_U64:
        return _counter_u64(f, span, vp, vn, wrap)
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
        between = c_integer(exact, vp.dtype)
    return between


def _counter_u64(
    f: np.ndarray, span: np.ndarray, vp: np.ndarray, vn: np.ndarray, wrap: bool
) -> np.ndarray:
    """interp.c's PM_TYPE_U64 counter, as the installed libpcp computes it: the prior is
    taken as a signed 64-bit number, and the next is above it when their difference,
    modulo 2**64, is (gcc tests the sign of next - prior rather than comparing them, as
    the C's signed overflow allows; PCP 6.0.3's pmval shows it on qa/archives/kenj-pc-2's
    sample.wrap.ulonglong)."""
    with np.errstate(over="ignore"):
        rise = vn - vp  # (modulo 2**64)
        fall = vp - vn
    up = (rise.view(np.int64) >= 0) | wrap  # (wrapping, a decrease is a modular increase)
    rise, fall = rise.astype(np.float64), fall.astype(np.float64)
    p = vp.view(np.int64).astype(np.float64)
    exact = np.where(up, 0.5 + p + f * rise / span, 0.5 + p - f * fall / span)
    return c_integer(exact, np.uint64)


_2_31, _2_63 = 2.0**31, 2.0**63


def c_integer(x: np.ndarray, dtype: Any) -> np.ndarray:
    """Doubles X stored into DTYPE (an integer type) as libpcp's C stores them on x86-64:
    pmapi.cnumbers.to_int's rule (the scalar one, which this follows element for element),
    done in NumPy: truncated, and out of the type's range cvttsd2si's "integer indefinite".
    A counter that decreases by more than half its range between two records (a 32-bit
    counter wrapping) so gives libpcp's value, and pmval its "!" at the same sample."""
    x = np.trunc(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        if dtype == np.int32:
            inside = (x >= -_2_31) & (x < _2_31)
            return np.where(inside, x, -_2_31).astype(np.int32)
        in64 = (x >= -_2_63) & (x < _2_63)  # (NaN is in no range)
        as64 = np.where(in64, x, -_2_63).astype(np.int64)
        if dtype == np.int64:
            return as64
        if dtype == np.uint32:  # (via a 64-bit conversion: its low word; indefinite's is 0)
            return np.where(in64, as64, 0).astype(np.uint32)
        # uint64: below 2**63 as int64 (so negative ones wrap); above, less 2**63 first
        high = np.where(x >= _2_63, x - _2_63, np.nan)
        upper = (high >= 0) & (high < _2_63)
        out = as64.view(np.uint64)
        lifted = np.where(upper, high, 0).astype(np.int64).view(np.uint64) + np.uint64(1 << 63)
        out = np.where(x >= _2_63, np.where(upper, lifted, np.uint64(0)), out)
        return out.astype(dtype)
