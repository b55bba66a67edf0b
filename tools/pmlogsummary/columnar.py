"""The summary as arrays: walk.py's sums for archives whose records are plain.

When the window holds no <mark>, the records are in time order and a metric has no
error value sets, no NaN and (for a counter) no two records at one time, every one of
pmlogsummary's figures is a sequential sum, a first minimum or maximum, or a count over
that metric's values: this module computes them with NumPy from a table with a row per
record and a column per instance, and only the figures the report prints.

Sums are C's `sum += v`, one addition at a time in record order: NumPy's reduction down
the rows of a C-ordered table of two or more columns adds row after row (each column
sequentially, as tests/tools/test_pmlogsummary.py checks against a Python loop); its
sum along a row would add pairwise and round differently, so a single column is summed
with a cumulative sum instead.  A reduction starts from 0.0, a cumulative sum from the
first value, C's sums from either: the two starts differ only where every term is -0.0,
which _total puts right.  A metric whose figures come out NaN is left to walk.py, which
skips NaN values as PCP does.  Only the figures the report prints are computed, each
over a whole table of metrics at once (NumPy's cost is per row as much as per value),
with work arrays kept from one table to the next.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .stats import COUNTER, USEC, InstStats, MetricStats

_NSEC_PER_USEC = 1000
#: the figures each of the report's columns needs
_MIN = frozenset({"min", "mintime"})
_MAX = frozenset({"max", "maxtime"})


def seconds(us: np.ndarray) -> np.ndarray:
    """pmtimevalToReal of each span (microseconds): sec + usec/1e6 in long double."""
    sec, usec = np.divmod(us, USEC)
    if not usec.any():
        return sec.astype(np.float64)
    ld = np.longdouble
    return (sec.astype(ld) + usec.astype(ld) / ld(USEC)).astype(np.float64)


def summarise(
    m: MetricStats,
    times: np.ndarray,
    values: np.ndarray,
    order: Sequence[int],
    nbins: int,
    need: frozenset[str],
    spans: tuple[np.ndarray, np.ndarray] | None = None,
    scratch: Scratch | None = None,
) -> bool:
    """Add to M instances ORDER's figures from TIMES (us, ascending; rows) and VALUES
    (numbers, rows x instances, column j instance ORDER[j], every value present), those
    NEED names (the report's columns) and the bins.  SPANS: the times' differences and
    their seconds, if known; SCRATCH: work arrays to reuse.  False (nothing added) if
    the figures need walk.py's record-by-record arithmetic."""
    cols = [slice(0, len(order))]
    return summarise_table([m], times, values, cols, [order], nbins, need, spans, scratch)[0]


def summarise_table(
    ms: Sequence[MetricStats],
    times: np.ndarray,
    table: np.ndarray,
    bounds: Sequence[slice],
    orders: Sequence[Sequence[int]],
    nbins: int,
    need: frozenset[str],
    spans: tuple[np.ndarray, np.ndarray] | None = None,
    scratch: Scratch | None = None,
) -> list[bool]:
    """summarise() for metrics MS of one kind (all counters, or none) whose values are
    the columns BOUNDS of TABLE (numbers) (rows: TIMES; column j of MS[i]'s instance ORDERS[i][j]):
    each figure is one operation over the whole table, not one per metric (NumPy's cost
    is per row of a table as much as per value).  For each metric, whether it was summed."""
    if len(times) == 0:
        return [True] * len(ms)
    if spans is None:
        spans = spans_of(times)
    work = Scratch() if scratch is None else scratch
    if nbins:
        need = need | _MIN | _MAX
    v = _rowwise(table, work)
    insts = [inst for order in orders for inst in order]
    if ms[0].desc.sem == COUNTER:
        if len(spans[0]) and not (spans[0] > 0).all():
            return [False] * len(ms)
        scales = np.repeat([m.scale for m in ms], [len(order) for order in orders])
        made = _counter(scales, times, spans, v, insts, nbins, need, work)
    else:
        made = _other(times, spans, v, insts, nbins, need, work)
    done = []
    for m, cols in zip(ms, bounds, strict=True):
        part = made[cols]
        ok = all(s is not None for s in part)
        if ok:
            for s in part:
                m.add(s)  # type: ignore[arg-type]
        done.append(ok)
    return done


class Scratch:
    """Work arrays kept from one table to the next, by name (a name's array is reused:
    each is done with before it is asked for again): a large array made afresh costs
    its page faults every time."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def __call__(self, name: str, shape: tuple[int, int], dtype: type = np.float64) -> np.ndarray:
        """The work array NAME, of SHAPE and DTYPE (its contents are left over)."""
        size = shape[0] * shape[1]
        flat = self._arrays.get(name)
        if flat is None or flat.size < size or flat.dtype != dtype:
            flat = self._arrays[name] = np.empty(size, dtype)
        return flat[:size].reshape(shape)


def spans_of(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The spans between successive TIMES (us), and each in seconds."""
    spans = np.diff(times)
    return spans, seconds(spans)


def _other(
    times: np.ndarray,
    spans: tuple[np.ndarray, np.ndarray],
    v: np.ndarray,
    insts: Sequence[int],
    nbins: int,
    need: frozenset[str],
    work: Scratch,
) -> list[InstStats | None]:
    """Instantaneous and discrete metrics, a column each: sums of values, of value x
    time, extremes (None for a column with a NaN)."""
    n, k = v.shape
    probes = []  # (figures that come out NaN where a value is NaN)
    zeros = np.zeros(k)
    sums = zeros
    if need & {"stocave", "sum"}:
        sums = _total(v)
        probes.append(sums)
    timeave = zeros
    if "timeave" in need and n > 1:
        product = np.multiply(v[:-1], spans[1][:, None], out=work("delta", (n - 1, k)))
        timeave = _total(product) + 0.0
        probes += [timeave, v[-1]]
    lo_at, lo, hi_at, hi = _extremes(v, need, work)
    if need & (_MIN | _MAX):
        probes += [lo, hi]
    bad = _nan(probes) if probes else np.isnan(v).any(axis=0)
    first, last = int(times[0]), int(times[-1])
    lo_t, hi_t = times[lo_at].tolist(), times[hi_at].tolist()
    figures = [a.tolist() for a in (sums, timeave, lo, hi, v[-1])]
    out: list[InstStats | None] = []
    for j, inst in enumerate(insts):
        if bad[j]:
            out.append(None)
            continue
        total, tave, small, large, lastval = (f[j] for f in figures)
        bins = _bins(v[:, j], small, large, nbins)
        out.append(InstStats(inst, n, total, tave, small, large, total, lastval, first, last,
                             lo_t[j], hi_t[j], bins=bins))  # fmt: skip
    return out


def _counter(
    scales: np.ndarray,
    times: np.ndarray,
    spans: tuple[np.ndarray, np.ndarray],
    v: np.ndarray,
    insts: Sequence[int],
    nbins: int,
    need: frozenset[str],
    work: Scratch,
) -> list[InstStats | None]:
    """Counters, a column each (SCALES: each one's time scale): rates between successive
    values; a decrease is a wrap, left out (None for a column with a NaN)."""
    n, k = v.shape
    first, last = int(times[0]), int(times[-1])
    if n == 1:
        bad = np.isnan(v[0]).tolist()
        return [None if bad[j] else InstStats.first(inst, float(v[0, j]), first, True, nbins)
                for j, inst in enumerate(insts)]  # fmt: skip
    later, earlier = v[1:], v[:-1]
    good = np.greater_equal(later, earlier, out=work("good", (n - 1, k), np.bool_))
    allgood = bool(good.all())
    probes = []
    if not allgood:  # (else each value was compared: none is NaN)
        probes.append(np.isnan(v).any(axis=0))
    zeros = np.zeros(k)
    total = zeros
    delta = None
    if need & {"timeave", "sum"}:
        delta = np.subtract(later, earlier, out=work("delta", (n - 1, k)))
        total = _total(delta if allgood else np.where(good, delta, 0.0))
        probes.append(total)
    rate = None
    stoc = zeros
    if need & (_MIN | _MAX | {"stocave"}):
        if delta is None:
            delta = np.subtract(later, earlier, out=work("delta", (n - 1, k)))
        diff = np.multiply(spans[1][:, None], scales, out=work("rate", (n - 1, k)))
        rate = np.divide(delta, diff, out=diff)  # (C's diff *= scale; rate = delta / diff)
        if "stocave" in need:
            stoc = _total(rate if allgood else np.where(good, rate, 0.0)) + 0.0
            probes.append(stoc)
    lo_at = hi_at = np.zeros(k, np.int64)
    lo = hi = zeros
    if rate is not None and need & (_MIN | _MAX):
        lo_at, lo, hi_at, hi = _extremes(rate, need, work, None if allgood else good)
        probes += [lo, hi]
    bad = _nan(probes) if probes else [False] * k
    if allgood:
        count = [n - 1] * k
        skipped = [0] * k
        first_good = [0] * k
    else:
        count = good.sum(axis=0).tolist()
        skipped = np.where(good, 0, spans[0][:, None]).sum(axis=0).tolist()
        first_good = good.argmax(axis=0).tolist()
    figures = [a.tolist() for a in (stoc, total, lo, hi, v[-1], lo_at, hi_at)]
    out: list[InstStats | None] = []
    for j, inst in enumerate(insts):
        if bad[j]:
            out.append(None)
            continue
        stocave, sum_, small, large, lastval, at_lo, at_hi = (f[j] for f in figures)
        if count[j] == 0:
            s = InstStats(inst, 0, 0.0, 0.0, 0.0, 0.0, 0.0, lastval, first, last, first, first,
                          bins=[0] * nbins)  # fmt: skip
            s.firsttime = last if nbins else first + skipped[j]
            out.append(s)  # (never binned: every value of the second pass is a "first")
            continue
        mintime = first if at_lo == first_good[j] else int(times[at_lo + 1])
        maxtime = first if at_hi == first_good[j] else int(times[at_hi + 1])
        bins = []
        if nbins and rate is not None:
            bins = _bins(rate[:, j] if allgood else rate[good[:, j], j], small, large, nbins)
        out.append(InstStats(inst, count[j], stocave, sum_, small, large, sum_, lastval,
                             first + skipped[j], last, mintime, maxtime, bins=bins))  # fmt: skip
    return out


def _extremes(
    v: np.ndarray,
    need: frozenset[str],
    work: Scratch,
    good: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows of each column's first minimum and first maximum (C's strict < and >),
    and their values, where NEED asks for them (else zeros); GOOD: the rows that count
    (None: all; others are passed over).  A NaN is picked first (so found by the caller).
    For both, the columns are made rows first (a search along a row is quicker)."""
    n, k = v.shape
    cols = np.arange(k)
    lo_at = hi_at = np.zeros(k, np.int64)
    lo = hi = np.zeros(k)
    both = need & _MIN and need & _MAX
    if good is not None:
        low, high = np.where(good, v, np.inf), np.where(good, v, -np.inf)
    elif both:
        low = high = work("rows", (k, n))
        np.copyto(low, v.T)
    else:
        low = high = v
    along = 1 if both and good is None else 0
    if need & _MIN:
        lo_at = low.argmin(axis=along)
        lo = v[lo_at, cols]
    if need & _MAX:
        hi_at = high.argmax(axis=along)
        hi = v[hi_at, cols]
    return lo_at, lo, hi_at, hi


def _nan(probes: list[np.ndarray]) -> list[bool]:
    """For each column, whether one of PROBES (a value or a flag per column) is NaN or set."""
    bad = np.zeros(len(probes[0]), dtype=bool)
    for p in probes:
        bad |= p if p.dtype == np.bool_ else np.isnan(p)
    return bad.tolist()


def _total(rows: np.ndarray) -> np.ndarray:
    """Each column of ROWS summed top to bottom, one addition at a time, as C's loop
    sums from its first value (add 0.0 for C's sum from 0.0)."""
    if rows.shape[1] == 1:  # (one column: a reduction would add pairwise)
        return np.cumsum(rows[:, 0])[-1:]
    sums = np.add.reduce(_rowwise(rows), axis=0)
    zero = np.flatnonzero(sums == 0)  # (NumPy starts from 0.0: C's -0.0 + -0.0 is -0.0)
    for j in zero.tolist():
        if np.signbit(rows[:, j]).all() and not rows[:, j].any():
            sums[j] = -0.0
    return sums


def _rowwise(rows: np.ndarray, work: Scratch | None = None) -> np.ndarray:
    """ROWS as float64 (as astype casts) with each row's values side by side and the
    rows one after another (C order, or a slice of columns of it): what a reduction
    down the rows walks row by row.  A copy, if one is needed, in WORK's "values"."""
    size = rows.itemsize
    if (
        rows.dtype == np.float64
        and rows.strides[1] == size
        and rows.strides[0] >= size * rows.shape[1]
    ):
        return rows
    if work is None:
        return np.ascontiguousarray(rows, dtype=np.float64)
    out = work("values", rows.shape)
    np.copyto(out, rows, casting="unsafe")
    return out


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
