"""The record-by-record summary: every record of the window, in order, as pmlogsummary
reads them with pmFetchArchive (its calcaverage, markrecord and calcbinning).

This is the whole of pmlogsummary's arithmetic, marks, counter wraps, late instances,
error value sets and multi-archive sets included; columns.py does the same sums as
arrays for archives whose records are plain (no marks, no errors), the common case.
The walk alone tells what it does under -D appl0, appl1 and appl2 (Trace), in PCP's
words and at PCP's moments.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_CONV, PMError, pmErrStr
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueSet

from .options import PROG
from .report import cfloat
from .stats import (
    DISCRETE,
    InstStats,
    MetricStats,
    counter_wrap,
    findbin,
    seconds,
    tsub,
)

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext

    from .options import Options
    from .report import Printer

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


@dataclass(frozen=True)
class Trace:
    """pmlogsummary's -D traces, worded as PCP's.  appl0: each instance's first value,
    a counter's base value, the bin chosen, marks (on stdout) and the second pass;
    appl1: counter wraps and each value's running sums; appl2: a counter rate's new
    extremes.  NAMES is pmNameAll, INST_NAME pmNameInDomArchive (None: no name), CLOCK
    pmPrintStamp and STAMP printstamp with a delimiter, all in the reporting zone."""

    appl: frozenset[str]
    names: Callable[[int], list[str]]
    inst_name: Callable[[int, int], str | None]
    clock: Callable[[int], str]
    stamp: Callable[[int, str], str]
    precision: int
    nbins: int

    def on(self, option: str) -> bool:
        return option in self.appl

    def name(self, pmid: int) -> str:
        """__pmPrintMetricNames: every name, joined by " or "."""
        return " or ".join(self.names(pmid)) or "<nonames>"

    def initially(self, pmid: int, s: InstStats) -> None:
        if self.on("appl0"):
            _err(f"{self.name(pmid)} Initially - min/max={_f(s.min)}/{_f(s.max)}\n")

    def base_value(self, pmid: int, value: float, count: int) -> None:
        if self.on("appl0"):
            _err(f"{self.name(pmid)} base value is {_f(value)}, count {_int(count)}\n")

    def wrapped(self, pmid: int) -> None:
        if self.on("appl1"):
            _err(f"{self.name(pmid)} counter wrapped or <mark>\n")

    def extremes(self, m: MetricStats, s: InstStats, rate: float, stamp: int) -> None:
        """A counter's rate below its minimum or above its maximum so far."""
        if not self.on("appl2") or not (rate < s.min or rate > s.max):
            return
        name = self.name(m.desc.pmid)
        inst = self.inst_name(m.desc.indom, s.inst) or ""
        where = f" (inst[{inst}]: {_f(rate)}) at {self.clock(stamp)}\n"
        if rate < s.min:
            _err(f"new min value for {name}{where}")
        if rate > s.max:
            _err(f"new max value for {name}{where}")

    def step(self, m: MetricStats, s: InstStats, diff: float, last: str, stamp: int) -> None:
        """A value counted: its time delta, the running sums and LAST (the counter's
        "rate=" or the other's "lastval=" line head, with its time sum increment)."""
        if not self.on("appl1"):
            return
        span = seconds(tsub(stamp, s.firsttime))
        _err(
            f"++ {self.name(m.desc.pmid)} timedelta={_f(diff)} count={_int(s.count)}\n"
            f"sum={_f(s.sum)} min={_f(s.min)} max={_f(s.max)} stocsum={_f(s.stocave)}\n"
            f"{last} timespan={_f(span)}\n"
        )

    def selected_bin(self, pmid: int, index: int, value: float, s: InstStats) -> None:
        if self.on("appl0"):
            p = self.precision
            _err(
                f"{self.name(pmid)} selected bin {index}/{self.nbins} (val={cfloat(value, p)}, "
                f"min={cfloat(s.min, p)}, max={cfloat(s.max, p)})\n"
            )

    def mark(self, stamp: int) -> None:
        if self.on("appl0"):
            sys.stdout.write(f"{self.stamp(stamp, chr(10))} - mark record\n\n")

    def second_pass(self) -> None:
        if self.on("appl0"):
            _err("resetting for second iteration\n")


def make_trace(o: Options, ctx: ArchiveContext, printer: Printer) -> Trace | None:
    """The Trace -D asked for, on CTX's names and PRINTER's clock (None: no tracing)."""
    if not o.appl:
        return None

    def names(pmid: int) -> list[str]:
        try:
            return list(ctx.pmns.names(pmid))
        except PMError:
            return []

    def inst_name(indom: int, inst: int) -> str | None:
        try:
            return ctx.instance_name_archive(indom, inst)
        except PMError:
            return None

    return Trace(o.appl, names, inst_name, printer.clock, printer.stamp, o.precision, o.nbins)


def _f(value: float) -> str:
    """printf's %f."""
    return cfloat(value, 6)


def _int(count: int) -> int:
    """An unsigned count as printf's %d prints it."""
    count &= 0xFFFFFFFF
    return count - (1 << 32) if count >= 1 << 31 else count


def _err(text: str) -> None:
    """One trace line on stderr, unbuffered as C's stderr is (stdout is not flushed)."""
    sys.stderr.write(text)
    sys.stderr.flush()


class Walker:
    """The two passes over the records: sums (calcaverage), then, with bins, binning."""

    def __init__(
        self,
        descs: Callable[[int], object],
        sumflag: bool,
        nbins: int,
        warn: Callable[[int, str], None],
        trace: Trace | None = None,
    ) -> None:
        self.descs = descs  # pmLookupDesc: a Desc, or a PMError code (int)
        self.sumflag = sumflag
        self.nbins = nbins
        self.warn = warn
        self.trace = trace
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
        if self.trace:
            self.trace.mark(stamp)
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
            if refused(vs, m.desc.type):
                self._corrupt(vs.pmid)
            for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
                self._first(m, inst, value, stamp)
            return
        bad = refused(vs, m.desc.type)
        for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
            s = m.find(inst) if (vs.numval > 1 or m.desc.indom != 0xFFFFFFFF) else m.insts[0]
            if s is None:
                if bad:
                    self._corrupt(vs.pmid)
                self._first(m, inst, value, stamp)
            elif bad:
                self.warn(vs.pmid, f"failed to extract value: {pmErrStr(PM_ERR_CONV)}\n")
            elif not math.isnan(value):
                self._update(m, s, value, stamp)

    def _corrupt(self, pmid: int) -> None:
        """newHashInst's end when a first value will not convert: the run stops."""
        self.warn(pmid, f"failed to extract value: {pmErrStr(PM_ERR_CONV)}\n")
        _err(f"{PROG}: possibly corrupt archive?\n")
        raise SystemExit(1)

    def _first(self, m: MetricStats, inst: int, value: float, stamp: int) -> None:
        """newHashInst: an instance's first value."""
        s = InstStats.first(inst, value, stamp, m.counter, self.nbins)
        m.add(s)
        if self.trace:
            self.trace.initially(m.desc.pmid, s)

    def _values(self, vs: ValueSet, m: MetricStats) -> list[float]:
        return [float(v) for v in vs.atoms(m.desc.type)]

    def _update(self, m: MetricStats, s: InstStats, value: float, stamp: int) -> None:
        diff = seconds(tsub(stamp, s.lasttime))
        if m.counter:
            diff *= m.scale
            if diff == 0.0:
                return
            self._update_counter(m, s, value, stamp, diff)
        else:
            self._update_other(m, s, value, stamp, diff)
        s.lastval = value
        s.lasttime = stamp

    def _update_counter(
        self, m: MetricStats, s: InstStats, value: float, stamp: int, diff: float
    ) -> None:
        """A counter's next value: a rate over DIFF seconds (scaled), or a wrap or mark
        that leaves the time since the last value out."""
        trace = self.trace
        val = value if s.marked else self._unwrap(value, s.lastval, m.desc.type)
        if trace:
            trace.base_value(m.desc.pmid, val, s.count + 1)
        if s.marked or val < s.lastval:
            if trace:
                trace.wrapped(m.desc.pmid)
            s.marked = False
            s.skip_slice(stamp)
            return
        delta = val - s.lastval
        rate = delta / diff
        s.stocave += rate
        s.timeave += delta
        if s.count == 0:
            s.min = s.max = rate
            s.sum = delta
        else:
            if trace:
                trace.extremes(m, s, rate, stamp)
            if rate < s.min:
                s.min, s.mintime = rate, stamp
            if rate > s.max:
                s.max, s.maxtime = rate, stamp
            s.sum += delta
        s.count += 1
        if trace:
            last = f"rate={_f(rate)} timesum={_f(s.timeave)} (+{_f(diff * delta / 2)})"
            trace.step(m, s, diff, last, stamp)

    def _update_other(
        self, m: MetricStats, s: InstStats, value: float, stamp: int, diff: float
    ) -> None:
        """A discrete or instantaneous metric's next value: the last one held for DIFF
        seconds (unless a mark came between)."""
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
        if self.trace:
            held = s.lastval * diff
            last = f"lastval={_f(s.lastval)} timesum={_f(s.timeave)} (+{_f(held)})"
            self.trace.step(m, s, diff, last, stamp)

    def _unwrap(self, current: float, previous: float, vtype: int) -> float:
        if current - previous < 0.0 and self.wrap:
            return current + _WRAP.get(vtype, 0.0)
        return current

    # -- the second pass: binning ----------------------------------------------------------

    def bin(self, records: Iterable[Record]) -> None:
        if self.trace:
            self.trace.second_pass()
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
        bad = refused(vs, m.desc.type)
        for inst, value in zip(vs.insts, self._values(vs, m), strict=True):
            s = m.find(inst) if (vs.numval > 1 or m.desc.indom != 0xFFFFFFFF) else m.insts[0]
            if s is None:
                self.warn(vs.pmid, "ignoring new instance found on second pass\n")
            elif bad:
                self.warn(vs.pmid, f"failed to extract value: {pmErrStr(PM_ERR_CONV)}\n")
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
                s.bins[self._findbin(m, s, value)] += 1
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
                s.bins[self._findbin(m, s, rate)] += 1
        else:
            s.bins[self._findbin(m, s, value)] += 1
        if not wrapped:
            s.count += 1
        s.lastval = value
        s.lasttime = stamp

    def _findbin(self, m: MetricStats, s: InstStats, value: float) -> int:
        index = findbin(value, s.min, s.max, self.nbins)
        if self.trace:
            self.trace.selected_bin(m.desc.pmid, index, value, s)
        return index


#: types pmExtractValue reads only from an insitu word, and only from a value block
_INSITU_ONLY = frozenset((int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32)))
_BLOCK_ONLY = frozenset(
    (int(PMType.PM_TYPE_64), int(PMType.PM_TYPE_U64), int(PMType.PM_TYPE_DOUBLE))
)


def refused(vs: ValueSet, vtype: int) -> bool:
    """Whether pmExtractValue refuses VS's values as VTYPE for their encoding (a 32-bit
    type in value blocks, or a 64-bit one insitu: PM_ERR_CONV), which the reader, more
    forgiving, still decodes."""
    insitu = vs.valfmt == ValFmt.PM_VAL_INSITU
    return vtype in _BLOCK_ONLY if insitu else vtype in _INSITU_ONLY


def warner(
    enabled: bool, names: Callable[[int], list[str]], prog: str
) -> Callable[[int, str], None]:
    """pmiderr: with -v, the first complaint about each metric, naming it (on stderr
    at once, stdout left buffered, as C's stdio does)."""
    from purepcp.pmapi.ids import pmIDStr

    told: set[int] = set()

    def warn(pmid: int, message: str) -> None:
        if not enabled or pmid in told:
            return
        told.add(pmid)
        listed = " or ".join(names(pmid)) or "<nonames>"
        _err(f"{prog}: {listed}({pmIDStr(pmid)}) - {message}")

    return warn
