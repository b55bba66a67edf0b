"""The record-by-record summary: every record of the window, in order, as pmlogsummary
reads them with pmFetchArchive (its calcaverage, markrecord and calcbinning).

This is the whole of pmlogsummary's arithmetic, marks, counter wraps, late instances,
error value sets and multi-archive sets included; columns.py does the same sums as
arrays for archives whose records are plain (no marks, no errors), the common case.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import ValueSet

from .stats import (
    DISCRETE,
    InstStats,
    MetricStats,
    counter_wrap,
    findbin,
    seconds,
    tsub,
)

#: the types pmlogsummary can average (others are passed over)
NUMERIC = frozenset(
    int(t)
    for t in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64,
              PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)
)  # fmt: skip
_WRAP = {int(PMType.PM_TYPE_32): 2.0**32, int(PMType.PM_TYPE_U32): 2.0**32,
         int(PMType.PM_TYPE_64): 2.0**64, int(PMType.PM_TYPE_U64): 2.0**64}  # fmt: skip


@dataclass(frozen=True)
class Record:
    """One record of the window: its time (microseconds) and value sets (() for a mark)."""

    stamp: int
    vsets: tuple[ValueSet, ...]
    mark: bool


class Walker:
    """The two passes over the records: sums (calcaverage), then, with bins, binning."""

    def __init__(
        self,
        descs: Callable[[int], object],
        sumflag: bool,
        nbins: int,
        warn: Callable[[int, str], None],
    ) -> None:
        self.descs = descs  # pmLookupDesc: a Desc, or a PMError code (int)
        self.sumflag = sumflag
        self.nbins = nbins
        self.warn = warn
        self.metrics: dict[int, MetricStats] = {}
        self.wrap = counter_wrap()

    # -- the first pass ------------------------------------------------------------------

    def average(self, records: Iterable[Record]) -> None:
        for rec in records:
            if rec.mark:
                self._mark(rec.stamp)
            for vs in rec.vsets:
                self._average_set(vs, rec.stamp)

    def _mark(self, stamp: int) -> None:
        """markrecord: discrete values run on to the mark; every instance is marked."""
        for m in self.metrics.values():
            discrete = m.desc.sem == DISCRETE
            for s in m.insts:
                if discrete:
                    s.stocave += s.lastval
                    s.timeave += s.lastval * seconds(tsub(stamp, s.lasttime))
                    s.lasttime = stamp
                    s.count += 1
                s.marked = True
                s.markcount += 1

    def _average_set(self, vs: ValueSet, stamp: int) -> None:
        if vs.numval == 0:
            return
        if vs.numval < 0:
            self.warn(vs.pmid, f"failed in archive value fetch: {pmErrStr(vs.numval)}\n")
            return
        m = self.metrics.get(vs.pmid)
        if m is None:
            desc = self.descs(vs.pmid)
            if isinstance(desc, int):
                self.warn(vs.pmid, f"cannot find descriptor: {pmErrStr(desc)}\n")
                return
            if desc.type not in NUMERIC:  # type: ignore[attr-defined]
                return
            m = self.metrics[vs.pmid] = MetricStats.of(desc, self.sumflag)  # type: ignore[arg-type]
            for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
                m.add(InstStats.first(inst, value, stamp, m.counter, self.nbins))
            return
        for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
            s = m.find(inst) if (vs.numval > 1 or m.desc.indom != 0xFFFFFFFF) else m.insts[0]
            if s is None:
                m.add(InstStats.first(inst, value, stamp, m.counter, self.nbins))
            elif not math.isnan(value):
                self._update(m, s, value, stamp)

    def _values(self, vs: ValueSet, m: MetricStats) -> list[float]:
        return [float(v) for v in vs.atoms(m.desc.type)]

    def _update(self, m: MetricStats, s: InstStats, value: float, stamp: int) -> None:
        diff = seconds(tsub(stamp, s.lasttime))
        if m.counter:
            diff *= m.scale
            if diff == 0.0:
                return
            val = value if s.marked else self._unwrap(value, s.lastval, m.desc.type)
            if s.marked or val < s.lastval:
                s.marked = False
                s.skip_slice(stamp)
            else:
                delta = val - s.lastval
                rate = delta / diff
                s.stocave += rate
                s.timeave += delta
                if s.count == 0:
                    s.min = s.max = rate
                    s.sum = delta
                else:
                    if rate < s.min:
                        s.min, s.mintime = rate, stamp
                    if rate > s.max:
                        s.max, s.maxtime = rate, stamp
                    s.sum += delta
                s.count += 1
        else:
            s.sum += value
            s.stocave += value
            if value < s.min:
                s.min, s.mintime = value, stamp
            if value > s.max:
                s.max, s.maxtime = value, stamp
            if not s.marked:
                s.timeave += s.lastval * diff
            else:
                s.marked = False
                s.skip_slice(stamp)
            s.count += 1
        s.lastval = value
        s.lasttime = stamp

    def _unwrap(self, current: float, previous: float, vtype: int) -> float:
        if current - previous < 0.0 and self.wrap:
            return current + _WRAP.get(vtype, 0.0)
        return current

    # -- the second pass: binning ----------------------------------------------------------

    def bin(self, records: Iterable[Record]) -> None:
        for rec in records:
            if rec.mark:
                self._mark(rec.stamp)
            for vs in rec.vsets:
                self._bin_set(vs, rec.stamp)

    def _bin_set(self, vs: ValueSet, stamp: int) -> None:
        if vs.numval == 0:
            return
        if vs.numval < 0:
            self.warn(vs.pmid, f"failed in 2nd pass archive fetch: {pmErrStr(vs.numval)}\n")
            return
        m = self.metrics.get(vs.pmid)
        if m is None:
            return
        for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
            s = m.find(inst) if (vs.numval > 1 or m.desc.indom != 0xFFFFFFFF) else m.insts[0]
            if s is None:
                self.warn(vs.pmid, "ignoring new instance found on second pass\n")
            elif not math.isnan(value):
                self._bin_value(m, s, value, stamp)

    def _bin_value(self, m: MetricStats, s: InstStats, value: float, stamp: int) -> None:
        if s.bintotal == 0:  # (the instance's first value in this pass)
            s.bintotal = s.count
            s.lasttime = s.firsttime = stamp
            s.lastval = value
            if m.counter:
                s.count = 0
            else:
                s.count = 1
                s.bins[findbin(value, s.min, s.max, self.nbins)] += 1
            return
        diff = seconds(tsub(stamp, s.lasttime))
        wrapped = False
        if m.counter:
            diff *= m.scale
            if diff == 0.0:
                return
            val = value if s.marked else self._unwrap(value, s.lastval, m.desc.type)
            if s.marked or val < s.lastval:
                wrapped = True
                s.marked = False
                s.skip_slice(stamp)
            else:
                rate = (val - s.lastval) / diff
                s.bins[findbin(rate, s.min, s.max, self.nbins)] += 1
        else:
            s.bins[findbin(value, s.min, s.max, self.nbins)] += 1
        if not wrapped:
            s.count += 1
        s.lastval = value
        s.lasttime = stamp


def warner(
    enabled: bool, names: Callable[[int], list[str]], prog: str
) -> Callable[[int, str], None]:
    """pmiderr: with -v, the first complaint about each metric, naming it."""
    from purepcp.pmapi.ids import pmIDStr

    told: set[int] = set()

    def warn(pmid: int, message: str) -> None:
        if not enabled or pmid in told:
            return
        told.add(pmid)
        sys.stdout.flush()
        listed = " or ".join(names(pmid)) or "<nonames>"
        sys.stderr.write(f"{prog}: {listed}({pmIDStr(pmid)}) - {message}")

    return warn
