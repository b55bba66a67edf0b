"""Pass 3: the data volumes' records, in time order as read, in PCP's words.

Records are read as libpcp's __pmLogRead reads them (walk.py), from the start of the
time window: a record before the label's time, or before the record read before it,
is reported; for numeric counters, a value below the one before it (of the same
instance) is a counter wrap, unless -w.  A <mark> record forgets the values before it.
Damage ends the pass with the time of the last record read and libpcp's error.
The volume named in messages is the one reading started in, as pmlogcheck names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_EOL, PM_ERR_PMID_LOG, PMError, pmErrStr
from purepcp.pmapi.ids import pmIDStr
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Timestamp

from .rawvalues import RawSet, RawValue, as_double, raw_sets
from .stamps import NSEC, Stamps, before, ts_dec
from .state import Run, Sts, err
from .walk import Walk

if TYPE_CHECKING:
    from purepcp.pmapi.archive import Archive
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.pmns import PMNS

_NUMERIC = frozenset(
    (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64,
     PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)
)  # fmt: skip
_WRAPS = {
    PMType.PM_TYPE_32: "signed 32-bit",
    PMType.PM_TYPE_U32: "unsigned 32-bit",
    PMType.PM_TYPE_64: "signed 64-bit",
    PMType.PM_TYPE_U64: "unsigned 64-bit",
}
PM_IN_NULL = 0xFFFFFFFF


@dataclass
class _Inst:
    """An instance's last value and when it was seen (sec 0: forgotten at a mark)."""

    inst: int
    value: float
    sec: int
    nsec: int


@dataclass
class _Metric:
    """What pass 3 keeps of a numeric metric: its descriptor, encoding and instances."""

    desc: Desc
    valfmt: int
    insts: list[_Inst] = field(default_factory=list)
    first: dict[int, int] = field(default_factory=dict)  # instance -> its first place

    def add(self, inst: _Inst) -> None:
        self.first.setdefault(inst.inst, len(self.insts))
        self.insts.append(inst)


@dataclass(frozen=True)
class Window:
    """The time window: where reading starts (ns), where it stops (a timeval)."""

    start_ns: int
    finish_sec: int
    finish_usec: int


class Pass3:
    """Pass 3 over one archive."""

    def __init__(
        self, run: Run, archive: Archive, pmns: PMNS, archname: str, stamps: Stamps
    ) -> None:
        self.run = run
        self.archive = archive
        self.pmns = pmns
        self.archname = archname
        self.stamps = stamps
        self.metrics: dict[int, _Metric | None] = {}
        self.vol = 0

    def where(self, t: Timestamp) -> str:
        return f"{self.archname}.{self.vol}:[{self.stamps.stamp(t)}]"

    def metric_text(self, pmid: int) -> str:
        names = self.run.names.get(pmid)
        if names is None:
            try:
                names = self.pmns.names(pmid)
            except PMError:
                names = []
            self.run.names[pmid] = names
        return " or ".join(names) if names else pmIDStr(pmid)

    def run_pass(self, window: Window, index_ok: bool) -> Sts:
        if self.run.vflag:
            err(f"{self.archname}: start pass3\n")
        walk = Walk(self.archive, self.archive.index if index_ok else [])
        try:
            walk.set_time(window.start_ns)
        except PMError as exc:
            err(f"{self.archname}: pmSetMode failed: {pmErrStr(exc.code)}\n")
            return Sts.FATAL
        self.vol = walk.vol
        label = self.run.golden_start
        last = Timestamp(window.start_ns // NSEC, window.start_ns % NSEC // 1000 * 1000)
        while True:
            try:
                rec, raw = walk.next()
            except PMError as exc:
                if exc.code == PM_ERR_EOL:
                    return Sts.OK
                err(f"[after {self.stamps.stamp(last)}]: pmFetch: error: {pmErrStr(exc.code)}\n")
                return Sts.FATAL
            self.run.result_count += 1
            t = rec.result.timestamp
            if before(t, label):
                then = self.stamps.stamp(label)
                err(f"{self.where(t)}: timestamp before label timestamp: {then}\n")
            sets = raw_sets(raw, self.archive.version == 3)
            if self.run.debug("appl0"):
                self.trace_record(t, sets, last)
            if before(t, last):
                err(
                    f"{self.where(t)}: timestamp went backwards, prior timestamp: "
                    f"{self.stamps.stamp(last)}\n"
                )
            last = t
            if not _within(t, window):
                return Sts.OK
            if not sets:
                for metric in self.metrics.values():
                    for inst in metric.insts if metric is not None else ():
                        inst.sec = 0
                self.run.mark_count += 1
            else:
                self.check(t, sets)

    def trace_record(self, t: Timestamp, sets: list[RawSet], last: Timestamp) -> None:
        """-Dappl0: a line per record: its time, its step and what it holds."""
        sec, nsec = ts_dec(t, last)
        values = sum(v.numval for v in sets if v.numval > 0)
        none = sum(1 for v in sets if v.numval == 0)
        errors = sum(1 for v in sets if v.numval < 0)
        text = f"{self.archname}.{self.vol}:[{self.stamps.stamp(t)}"
        text += f"] delta(stamp)={sec + nsec / NSEC:.3f}sec"
        text += f" numpmid={len(sets)} sum(numval)={values}"
        if none:
            text += f" count(numval=0)={none}"
        if errors:
            text += f" count(numval<0)={errors}"
        err(text + "\n")

    # -- values ----------------------------------------------------------------------

    def check(self, t: Timestamp, sets: list[RawSet]) -> None:
        """docheck: each value set against what was seen of its metric before."""
        for vs in sets:
            if self.run.debug("appl1") and vs.numval <= 0:
                what = "no values returned"
                if vs.numval < 0:
                    what = f"error from numval: {pmErrStr(vs.numval)}"
                err(f"{self.where(t)} {self.metric_text(vs.pmid)}: {what}\n")
                continue
            if vs.numval <= 0:
                continue
            if vs.pmid not in self.metrics:
                self.first_seen(vs, t)
                continue
            metric = self.metrics[vs.pmid]
            if metric is None:
                continue
            if metric.valfmt != vs.valfmt:
                err(
                    f"{self.where(t)} {self.metric_text(vs.pmid)}: encoding botch "
                    f"valfmt={vs.valfmt} not {metric.valfmt} as expected\n"
                )
                continue
            self.update(metric, vs, t)

    def first_seen(self, vs: RawSet, t: Timestamp) -> None:
        desc = self.archive.descs.get(vs.pmid)
        if desc is None:
            err(
                f"{self.where(t)} {self.metric_text(vs.pmid)}: pmLookupDesc failed: "
                f"{pmErrStr(PM_ERR_PMID_LOG)}\n"
            )
            self.metrics[vs.pmid] = None
            return
        if desc.type not in _NUMERIC:
            return  # (not remembered: looked up again next time, as pmlogcheck does)
        metric = _Metric(desc, vs.valfmt)
        for value in vs.values:
            self.new_inst(metric, value, vs.valfmt, t)
        self.metrics[vs.pmid] = metric

    def new_inst(self, metric: _Metric, value: RawValue, valfmt: int, t: Timestamp) -> None:
        """newHashInst: remember an instance's first value (a value that will not convert
        ends the run, as it does pmlogcheck's)."""
        try:
            number = as_double(valfmt, value, metric.desc.type)
        except PMError as exc:
            err(
                f"{self.where(t)} {self.metric_text(metric.desc.pmid)}: pmExtractValue failed: "
                f"{pmErrStr(exc.code)}\npmlogcheck: possibly corrupt archive?\n"
            )
            raise SystemExit(1) from None
        metric.add(_Inst(value.inst, number, t.sec, t.nsec))
        if self.run.debug("appl1"):
            text = f"{self.where(t)} {self.metric_text(metric.desc.pmid)}: "
            if value.inst == PM_IN_NULL:
                text += "new singular metric"
            else:
                name = self.inst_name(metric.desc.indom, value.inst)
                text += "new metric-instance pair " + (
                    str(value.inst) if name is None else f'"{name}"'
                )
            err(text + "\n")

    def update(self, metric: _Metric, vs: RawSet, t: Timestamp) -> None:
        """Each value against the instance's last one: a counter going down is a wrap."""
        for j, value in enumerate(vs.values):
            k = self._slot(metric, vs, j, value.inst)
            if k is None:
                self.new_inst(metric, value, vs.valfmt, t)
                continue
            inst = metric.insts[k]
            try:
                number = as_double(vs.valfmt, value, metric.desc.type)
            except PMError as exc:
                err(
                    f"{self.where(t)} {self.metric_text(vs.pmid)}: pmExtractValue failed: "
                    f"{pmErrStr(exc.code)}\n"
                )
                continue
            if metric.desc.sem == PMSem.PM_SEM_COUNTER:
                dsec, dnsec = ts_dec(t, Timestamp(inst.sec, inst.nsec))
                if (dsec < 0 or dnsec < 0) or (dsec == 0 and dnsec == 0):
                    continue  # (no time has passed: a step back in time is clipped to none)
                if self.run.debug("appl2"):
                    err(
                        f"{self.where(t)} {self.metric_text(vs.pmid)}: current counter "
                        f"value is {number:.0f}\n"
                    )
                if not self.run.o.nowrap:
                    self.unwrap(metric, inst, number, t)
            inst.value, inst.sec, inst.nsec = number, t.sec, t.nsec

    @staticmethod
    def _slot(metric: _Metric, vs: RawSet, j: int, inst: int) -> int | None:
        """Which remembered instance value J of VS is (None: a new one)."""
        n = len(metric.insts)
        if vs.numval > 1 or metric.desc.indom != 0xFFFFFFFF:
            if j < n and metric.insts[j].inst != inst:
                return metric.first.get(inst)  # (the first with it, as a search finds)
            if j >= n:
                return None
        return j if j < n else None

    def unwrap(self, metric: _Metric, inst: _Inst, number: float, t: Timestamp) -> None:
        kind = _WRAPS.get(metric.desc.type)
        if kind is None or not (number - inst.value < 0.0 and inst.sec > 0):
            return
        text = f"{self.where(t)}: {self.metric_text(metric.desc.pmid)}"
        name = self.inst_name(metric.desc.indom, inst.inst)
        text += f": {kind} wrap" if name is None else f"[{name}]: {kind} wrap"
        then = self.stamps.stamp(Timestamp(inst.sec, inst.nsec))
        text += f"\n\tvalue {inst.value:.0f} at {then}"
        text += f"\n\tvalue {number:.0f} at {self.stamps.stamp(t)}\n"
        err(text)

    def inst_name(self, indom: int, inst: int) -> str | None:
        """pmNameInDomArchive: INST's name in the last instance domain record holding it."""
        for record in reversed(self.archive.indoms.get(indom, [])):
            for number, name in zip(record.insts, record.names, strict=True):
                if number == inst and name is not None:
                    return name
        return None


def _within(t: Timestamp, w: Window) -> bool:
    return w.finish_sec > t.sec or (w.finish_sec == t.sec and w.finish_usec >= t.nsec // 1000)
