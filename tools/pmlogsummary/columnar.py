"""The summary as arrays: walk.py's sums for archives whose records are plain.

When the window holds no <mark>, the records are in time order and a metric has no
error value sets, no NaN and (for a counter) no two records at one time, every one of
pmlogsummary's figures is a sequential sum, a first minimum or maximum, or a count over
that metric's columns (pmapi/archive/columns.py): this module computes them with NumPy,
summing in record order (cumulative sums, not pairwise ones) so that every double is
the one PCP's loop makes.  A metric that does not qualify is left to walk.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .stats import COUNTER, USEC, InstStats, MetricStats

_NSEC_PER_USEC = 1000


def seconds(us: np.ndarray) -> np.ndarray:
    """pmtimevalToReal of each span (microseconds): sec + usec/1e6 in long double."""
    sec, usec = np.divmod(us, USEC)
    if not usec.any():
        return sec.astype(np.float64)
    ld = np.longdouble
    return (sec.astype(ld) + usec.astype(ld) / ld(USEC)).astype(np.float64)


def summarise(
    desc_metric: MetricStats,
    times: np.ndarray,
    values: np.ndarray,
    columns: Sequence[int],
    order: Sequence[int],
    nbins: int,
) -> bool:
    """Fill DESC_METRIC's instances ORDER from TIMES (us, ascending; rows) and VALUES
    (float64, rows x instances, every value present), from COLUMNS in that order.  False
    (nothing filled) if the figures need walk.py's record-by-record arithmetic."""
    m = desc_metric
    if len(times) == 0:
        return True
    if np.isnan(values).any():
        return False
    counter = m.desc.sem == COUNTER
    spans = np.diff(times)
    if counter and len(spans) and not (spans > 0).all():
        return False
    picked = list(columns)
    chosen = values if picked == list(range(values.shape[1])) else values[:, picked]
    cols = np.array(chosen.T, dtype=np.float64, order="C")  # (instances, rows): rows contiguous
    if counter:
        _counter(m, times, spans, cols, order, nbins)
    else:
        _other(m, times, spans, cols, order, nbins)
    return True


def _other(
    m: MetricStats, times: np.ndarray, spans: np.ndarray, v: np.ndarray, order: Sequence[int],
    nbins: int,
) -> None:  # fmt: skip
    """Instantaneous and discrete metrics: sums of values, of value x time, extremes."""
    sums = _total(v)
    timeave = _total(v[:, :-1] * seconds(spans)) if len(spans) else np.zeros(len(v))
    lo_at, hi_at = v.argmin(axis=1), v.argmax(axis=1)
    cols = range(len(v))
    lo, hi = v[cols, lo_at], v[cols, hi_at]
    first, last, n = int(times[0]), int(times[-1]), len(times)
    for j, inst in enumerate(order):
        s = InstStats(inst, n, float(sums[j]), float(timeave[j]), float(lo[j]), float(hi[j]),
                      float(sums[j]), float(v[j, -1]), first, last, int(times[lo_at[j]]),
                      int(times[hi_at[j]]), bins=_bins(v[j], lo[j], hi[j], nbins))  # fmt: skip
        m.add(s)


def _counter(
    m: MetricStats, times: np.ndarray, spans: np.ndarray, v: np.ndarray, order: Sequence[int],
    nbins: int,
) -> None:  # fmt: skip
    """Counters: rates between successive values; a decrease is a wrap, left out."""
    k = len(v)
    first, last = int(times[0]), int(times[-1])
    if len(spans) == 0:
        for j, inst in enumerate(order):
            m.add(InstStats.first(inst, float(v[j, 0]), first, True, nbins))
        return
    delta = v[:, 1:] - v[:, :-1]
    good = v[:, 1:] >= v[:, :-1]
    rate = delta / (seconds(spans) * m.scale)
    allgood = bool(good.all())
    if allgood:
        stoc = _total(rate)
        total = _total(delta)
        count = np.full(k, len(spans))
        lo_at, hi_at = rate.argmin(axis=1), rate.argmax(axis=1)
        skipped = np.zeros(k, np.int64)
        first_good = np.zeros(k, np.int64)
    else:
        stoc = _total(np.where(good, rate, 0.0))
        total = _total(np.where(good, delta, 0.0))
        count = good.sum(axis=1)
        lo_at = np.where(good, rate, np.inf).argmin(axis=1)
        hi_at = np.where(good, rate, -np.inf).argmax(axis=1)
        skipped = (np.where(good, 0, spans)).sum(axis=1)
        first_good = good.argmax(axis=1)
    cols = range(k)
    lo, hi = rate[cols, lo_at], rate[cols, hi_at]
    for j, inst in enumerate(order):
        if count[j] == 0:
            s = InstStats(inst, 0, 0.0, 0.0, 0.0, 0.0, 0.0, float(v[j, -1]), first, last, first,
                          first, bins=[0] * nbins)  # fmt: skip
            s.firsttime = first + int(skipped[j])
            if nbins:  # (never binned: every value of the second pass is a "first")
                s.firsttime = last
            m.add(s)
            continue
        mintime = first if lo_at[j] == first_good[j] else int(times[lo_at[j] + 1])
        maxtime = first if hi_at[j] == first_good[j] else int(times[hi_at[j] + 1])
        bins = _bins(rate[j] if allgood else rate[j, good[j]], lo[j], hi[j], nbins)
        s = InstStats(inst, int(count[j]), float(stoc[j]), float(total[j]), float(lo[j]),
                      float(hi[j]), float(total[j]), float(v[j, -1]), first + int(skipped[j]),
                      last, mintime, maxtime, bins=bins)  # fmt: skip
        m.add(s)


def _total(rows: np.ndarray) -> np.ndarray:
    """Each row summed left to right, one addition at a time, as C's loop sums (the last
    of its running sums; NumPy's sum would add pairwise and round differently)."""
    return np.cumsum(rows, axis=1)[:, -1]


def _bins(values: np.ndarray, lo: float, hi: float, nbins: int) -> list[int]:
    """findbin for every value: the first bin whose bounds (made by repeated addition
    of the bin size, as PCP makes them) hold it, else the last."""
    if not nbins:
        return []
    binsize = (hi - lo) / nbins
    edges = np.cumsum(np.concatenate(([lo], np.full(nbins - 1, binsize))))
    left = np.ones(len(values), dtype=bool)
    counts = []
    for i in range(nbins - 1):
        hit = left & (edges[i] <= values) & (values <= edges[i + 1])
        counts.append(int(hit.sum()))
        left &= ~hit
    counts.append(int(left.sum()))
    return counts


def window_rows(times_ns: np.ndarray, start: int, finish: int) -> np.ndarray:
    """The rows of a block (times in ns) whose times, as timevals, lie in [START, FINISH]."""
    us = times_ns // _NSEC_PER_USEC
    return np.flatnonzero((us >= start) & (us <= finish))


OrderOf = Callable[[int, np.ndarray, np.ndarray], list[int]]
