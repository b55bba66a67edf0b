"""From fetched values to a report's Blocks, as PCP's fetchgroup converts them, a block of
samples at a time in NumPy: counters become rates against the sample before (none for
the first, none where the counter went backwards unless PCP_COUNTER_WRAP is set), values
are rescaled to the report's units, and those delivered as integers truncate toward zero
(or have no value when out of the type's range)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from purepcp.pmapi.ids import PM_IN_NULL
from purepcp.pmapi.rate import counter_wrap_enabled
from purepcp.pmapi.types import PMSem, PMType

from .model import Block, Kind
from .resolve import ReportMetric

_LIMITS = {
    PMType.PM_TYPE_32: (-(2.0**31), 2.0**31 - 1),
    PMType.PM_TYPE_U32: (0.0, 2.0**32 - 1),
    PMType.PM_TYPE_64: (-(2.0**63), 2.0**63),
    PMType.PM_TYPE_U64: (0.0, 2.0**64),
}
_WRAP = {PMType.PM_TYPE_32: 2.0**32, PMType.PM_TYPE_U32: 2.0**32,
         PMType.PM_TYPE_64: 2.0**64, PMType.PM_TYPE_U64: 2.0**64}  # fmt: skip
NSEC = 1_000_000_000


class Raw:
    """A block of samples as fetched, before conversion: per report column a float64
    value (strings apart) and whether there was one."""

    def __init__(self, times: np.ndarray, values: np.ndarray, has: np.ndarray,
                 strings: dict[int, np.ndarray],
                 empty: np.ndarray | None = None) -> None:  # fmt: skip
        self.times, self.values, self.has, self.strings = times, values, has, strings
        # per sample and metric: the fetch gave the metric no values at all (numval 0)
        self.empty = empty


class Layout:
    """Where each metric's instances sit among the report's columns."""

    def __init__(self, metrics: Sequence[ReportMetric]) -> None:
        self.metrics = list(metrics)
        self.slices: list[slice] = []
        start = 0
        for m in self.metrics:
            self.slices.append(slice(start, start + len(m.insts)))
            start += len(m.insts)
        self.width = start

    def from_replay(self, replay) -> Raw:
        """A replay chunk (pmapi.archive.replay.Replay, its metrics in report order)."""
        rows = len(replay.times)
        values = np.zeros((rows, self.width))
        has = np.zeros((rows, self.width), dtype=bool)
        strings: dict[int, np.ndarray] = {}
        ok_rows = ~replay.eol
        if replay.failed is not None:
            ok_rows &= ~replay.failed
        empty = np.zeros((rows, len(self.metrics)), dtype=bool)
        for k, (m, sl, mr) in enumerate(
            zip(self.metrics, self.slices, replay.metrics, strict=True)
        ):
            if mr.desc is None:
                continue
            fails = np.zeros(rows, bool)
            if mr.error:
                fails = np.ones(rows, bool) if mr.failed is None else mr.failed
            none = ~mr.has.any(axis=1) if len(mr.insts) else np.ones(rows, bool)
            empty[:, k] = none & ok_rows & ~fails
            if not len(mr.insts):
                continue
            wanted = np.asarray(m.insts, dtype=np.int64)
            known = mr.insts.astype(np.int64)
            where = np.clip(np.searchsorted(known, wanted), 0, len(known) - 1)
            present = known[where] == wanted
            cols = np.arange(sl.start, sl.stop)[present]
            src = where[present]
            got = mr.has[:, src] & ok_rows[:, None]
            if mr.error:
                fails = np.ones(rows, bool) if mr.failed is None else mr.failed
                got &= ~fails[:, None]
            has[:, cols] = got
            if m.conv.kind() is Kind.STRING:
                for c, s in zip(cols.tolist(), src.tolist(), strict=True):
                    strings[c] = mr.values[:, s]
            else:
                values[:, cols] = mr.values[:, src].astype(np.float64)
        return Raw(replay.times, values, has, strings, empty)

    def from_fetch(self, fetched) -> Raw:
        """One fetch (pmapi.context.Fetched) as a one-row block."""
        values = np.zeros((1, self.width))
        has = np.zeros((1, self.width), dtype=bool)
        strings: dict[int, np.ndarray] = {}
        empty = np.zeros((1, len(self.metrics)), dtype=bool)
        for k, (m, sl) in enumerate(zip(self.metrics, self.slices, strict=True)):
            try:
                got = fetched.values(m.pmid)
            except Exception:  # (the metric failed or is not in this result)
                continue
            empty[0, k] = not got
            if m.insts == (PM_IN_NULL,) and got and PM_IN_NULL not in got:
                got = {PM_IN_NULL: next(iter(got.values()))}
            for c, inst in zip(range(sl.start, sl.stop), m.insts, strict=True):
                if inst not in got:
                    continue
                value = got[inst]
                has[0, c] = True
                if m.conv.kind() is Kind.STRING:
                    strings[c] = np.array([value], dtype=object)
                else:
                    values[0, c] = float(value)
        stamp = fetched.timestamp
        times = np.array([stamp.sec * NSEC + stamp.nsec], dtype=np.int64)
        return Raw(times, values, has, strings, empty)


class Converter:
    """Turns Raw blocks into Blocks, remembering the last sample for the next rates."""

    def __init__(self, layout: Layout, rank: int = 0, invert: bool = False,
                 predicates: Sequence[str] = ()) -> None:  # fmt: skip
        self.layout = layout
        self.predicates = list(predicates)  # -N: metrics whose ranked instances choose others'
        self.indom_ids = {}  # instance domain -> {instance: position}, for -N
        for m in layout.metrics:
            ids = self.indom_ids.setdefault(m.desc.indom, {})
            for inst in m.insts:
                ids.setdefault(inst, len(ids))
        self.invert = invert  # -n: rank before the live filter (-j), not after
        self.rank = rank  # -J N: each sample keeps a metric's N highest values (-N: lowest)
        self.wrap = counter_wrap_enabled()
        self.prev_values: np.ndarray | None = None
        self.prev_has: np.ndarray | None = None
        self.prev_time: int | None = None
        # per discrete metric: its last values, has and strings, for the fetches without
        self.held: dict[int, tuple[np.ndarray, np.ndarray, dict[int, object]]] = {}

    def hold_discrete(self, raw: Raw) -> None:
        """A discrete metric a fetch gives no values at all keeps the values it had, as
        PCP's fetchgroup leaves its outputs alone then (RAW is changed in place)."""
        if raw.empty is None or not len(raw.times):
            return
        rows = np.arange(len(raw.times))
        for k, (m, sl) in enumerate(zip(self.layout.metrics, self.layout.slices, strict=True)):
            if m.desc.sem != PMSem.PM_SEM_DISCRETE:
                continue
            empty = raw.empty[:, k]
            held = self.held.get(k)
            if empty.any():
                source = np.maximum.accumulate(np.where(empty, -1, rows))
                fill = empty & (source >= 0)
                raw.values[fill, sl] = raw.values[source[fill], sl]
                raw.has[fill, sl] = raw.has[source[fill], sl]
                for c in range(sl.start, sl.stop):
                    if c in raw.strings:
                        raw.strings[c] = raw.strings[c].copy()
                        raw.strings[c][fill] = raw.strings[c][source[fill]]
                before = empty & (source < 0)
                if held is not None and before.any():
                    values, has, strings = held
                    raw.values[before, sl] = values
                    raw.has[before, sl] = has
                    for c, text in strings.items():
                        column = raw.strings.get(c)
                        if column is None:
                            column = np.full(len(rows), None, dtype=object)
                        column = column.copy()
                        column[before] = text
                        raw.strings[c] = column
            last = {c: raw.strings[c][-1] for c in range(sl.start, sl.stop) if c in raw.strings}
            self.held[k] = (raw.values[-1, sl].copy(), raw.has[-1, sl].copy(), last)

    def convert(self, raw: Raw) -> Block:
        self.hold_discrete(raw)
        rows = len(raw.times)
        out = np.empty_like(raw.values)
        ok = raw.has.copy()
        if rows == 0:
            return Block(raw.times, out, ok, raw.strings)
        times = raw.times.astype(np.int64)
        first = self.prev_time if self.prev_time is not None else int(times[0])
        before = np.empty_like(times)
        before[0], before[1:] = first, times[:-1]
        # pmtimespecSub: whole seconds and nanoseconds apart, as doubles
        dt = (times // NSEC - before // NSEC).astype(np.float64) + (
            times % NSEC - before % NSEC
        ).astype(np.float64) / 1e9
        dt = np.maximum(dt, 1e-9)[:, None]
        for m, sl in zip(self.layout.metrics, self.layout.slices, strict=True):
            conv = m.conv
            shown = None if m.shown is None else np.array(m.shown, dtype=bool)
            if shown is not None and not self.invert:
                ok[:, sl] &= shown
            if conv.kind() is Kind.STRING:
                continue
            v = raw.values[:, sl]
            good = ok[:, sl]
            if conv.rate:
                delta = np.empty_like(v)
                delta[1:] = v[1:] - v[:-1]
                had = np.empty_like(good)
                had[1:] = raw.has[:-1, sl]
                if self.prev_values is not None:
                    delta[0] = v[0] - self.prev_values[0, sl]
                    had[0] = self.prev_has[0, sl]
                else:
                    delta[0] = 0.0
                    had[0] = False
                good &= had
                backwards = delta < 0.0
                if backwards.any():
                    if self.wrap and m.desc.type in _WRAP:
                        delta[backwards] += _WRAP[m.desc.type]
                    else:
                        good &= ~backwards
                result = delta / dt * conv.factor * conv.mult
            else:
                result = v * conv.factor * conv.mult
            limits = _LIMITS.get(conv.otype)
            if limits is not None:
                low, high = limits
                good &= (result >= low) & (result <= high)
                result = np.trunc(result)
            if m.name not in self.predicates:  # (a predicate's limit comes after its rank)
                good &= within(result, m.limit)
            out[:, sl] = result
        self._rank(out, ok)
        for m, sl in zip(self.layout.metrics, self.layout.slices, strict=True):
            if m.shown is not None and self.invert:
                ok[:, sl] &= np.array(m.shown, dtype=bool)
        self.prev_values = raw.values[-1:].copy()
        self.prev_has = raw.has[-1:].copy()
        self.prev_time = int(times[-1])
        return Block(raw.times, out, ok, raw.strings)

    def _rank(self, out: np.ndarray, ok: np.ndarray) -> None:
        """-J (each metric's highest or lowest instances) and -N (metrics of a predicate's
        instance domain keep the instances its ranking kept), as pmrep orders them."""
        chosen: dict[int, np.ndarray] = {}  # instance domain -> rows x instances kept
        pairs = zip(self.layout.metrics, self.layout.slices, strict=True)
        numeric = [(m, sl) for m, sl in pairs if m.conv.kind() is not Kind.STRING]
        for m, sl in numeric:
            if m.name in self.predicates:
                good = ok[:, sl]
                if self.rank:
                    good &= ranked(out[:, sl], good, self.rank)
                ids = self.indom_ids[m.desc.indom]
                kept = chosen.get(m.desc.indom)
                if kept is None:
                    kept = chosen[m.desc.indom] = np.zeros((len(out), len(ids)), bool)
                kept[:, [ids[i] for i in m.insts]] |= good
        for m, sl in numeric:
            good = ok[:, sl]
            if m.name in self.predicates:
                good &= within(out[:, sl], m.limit)
            elif m.desc.indom in chosen:
                ids = self.indom_ids[m.desc.indom]
                good &= chosen[m.desc.indom][:, [ids[i] for i in m.insts]]
            elif self.rank:
                good &= ranked(out[:, sl], good, self.rank)


def within(values: np.ndarray, limit: int) -> np.ndarray:
    """A value limit (-8, -9, a spec's): positive keeps values from it up, negative those
    up to its magnitude."""
    if limit > 0:
        return ~(values < limit)
    if limit < 0:
        return ~(values > -limit)
    return np.ones(values.shape, bool)


def ranked(values: np.ndarray, good: np.ndarray, rank: int) -> np.ndarray:
    """Per row, the RANK highest of VALUES that are GOOD (the -RANK lowest if negative),
    ties kept in instance order, as pmrep's sorted() ranks them."""
    key = np.where(good, -values if rank > 0 else values, np.inf)
    order = np.argsort(key, axis=1, kind="stable")[:, : abs(rank)]
    keep = np.zeros_like(good)
    np.put_along_axis(keep, order, True, axis=1)
    return keep & good
