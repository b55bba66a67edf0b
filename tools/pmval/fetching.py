"""pmval's samples one fetch at a time: a live source's (pausing an interval between),
an archive's record by record (-U, and always for event metrics), or its interpolated
fetches when they are not answered ahead (-d, an open-ended time window).  Each row
is written as soon as it is made, a one-row Block."""

from __future__ import annotations

import time
from datetime import tzinfo

from purepcp.pmapi.archive.damage import ArchiveError
from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.convert import pmExtractValue
from purepcp.pmapi.errors import PM_ERR_EOL, PM_ERR_NOTCONN, PMError, pmErrStr
from purepcp.pmapi.printvalue import pmPrintValue, pmval_real
from purepcp.pmapi.rate import CounterRates, timestamp_seconds
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Timestamp, Value, ValueSet

from .events import EventDump
from .fatal import PROG, die
from .loop import Outcome
from .metric import Metric, sorted_values
from .model import Block, Status
from .writer import Writer

_REAL_TYPES = (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)
_NSEC = 1_000_000_000

Cells = tuple[list[str | None], str]  # a row's cells, and the warnings after it


class FetchSamples:
    """The Samples of METRIC fetched one at a time, written by WRITER.

    FINISH is the time window's end (seconds); INTERVAL, when not None, the pause
    between samples; RECORDS replays an archive record by record.  Cells are WIDTH
    wide, floats with FIXED decimals (-1: pmval's own layout); RATES makes a counter's
    rows its rates."""

    def __init__(self, metric: Metric, writer: Writer, *, rates: bool, finish: float,
                 interval: float | None, records: bool, width: int, fixed: int,
                 zone: tzinfo) -> None:  # fmt: skip
        self.metric = metric
        self.writer = writer
        self.rates = rates
        self.finish = finish
        self.interval = interval
        self.records = records
        self.width, self.fixed = width, fixed
        self.call = "pmFetchArchive" if records else "pmFetch"
        self.dump = EventDump(metric, zone) if metric.events else None
        self.rate_of = CounterRates()
        self.current: dict[int, float | None] = {}  # each instance's rate at the last sample
        self.sample: tuple[ValueSet, Timestamp] | None = None  # the last with values
        self.insts: list[int] = []  # its instances (C ints, ascending) ...
        self.prev_insts: list[int] = []  # ... and those of the sample before it

    # -- the loop's questions ---------------------------------------------------------------

    def fetch(self) -> Outcome:
        """getvals: the next sample; a row already says what one without values lacked."""
        got = self._next()
        if isinstance(got, Outcome):
            return got
        vset, stamp = got
        if timestamp_seconds(stamp) > self.finish:
            return Outcome.END
        self._note_rates(vset, stamp)
        if vset.numval == 0:
            self._row(Status.NO_VALUES, stamp)
            return Outcome.NONE
        if vset.numval < 0:
            if self.dump is not None and vset.numval == PM_ERR_NOTCONN:
                return Outcome.END
            self._row(Status.ERROR, stamp, note=f"\n{PROG}: {self.call}: {pmErrStr(vset.numval)}\n")
            return Outcome.NONE
        self.sample = (vset, stamp)
        self.prev_insts, self.insts = self.insts, [inst for inst, _ in sorted_values(vset)]
        return Outcome.OK

    def labels(self) -> None:
        if not self.metric.singular and self.dump is None:
            self._row(Status.LABELS, self._stamp())

    def relabel(self) -> None:
        assert self.sample is not None
        if self.metric.every and self.metric.instances_changed(self.sample[0]):
            self.metric.init_instances()
            self.labels()

    def report(self) -> None:
        assert self.sample is not None
        vset, stamp = self.sample
        if self.dump is not None:
            self._row(Status.EVENTS, stamp, note=self.dump.text(vset))
            return
        cells, warnings = self._rate_cells(vset) if self.rates else self._value_cells(vset)
        self._row(Status.VALUES, stamp, cells, warnings)

    def no_values(self) -> None:
        self._row(Status.NO_VALUES, self._stamp())

    def pause(self) -> None:
        if self.interval is not None:
            time.sleep(self.interval)

    def close(self) -> None:
        """(Every row is written as it is made.)"""

    # -- fetching ---------------------------------------------------------------------------

    def _next(self) -> tuple[ValueSet, Timestamp] | Outcome:
        try:
            if self.records:
                return self._next_record()
            fetched = self.metric.ctx.fetch([self.metric.pmid])
            return fetched.result.vsets[0], fetched.timestamp
        except PMError as exc:
            if exc.code == PM_ERR_EOL:
                return Outcome.END
            # (PCP's words; ours add where the archive is damaged)
            why = str(exc) if isinstance(exc, ArchiveError) else pmErrStr(exc.code)
            raise die(f"\n{PROG}: {self.call}: {why}\n") from None

    def _next_record(self) -> tuple[ValueSet, Timestamp] | Outcome:
        """-U: the next record holding the metric, or MARK after a <mark> record."""
        archive = self.metric.archive
        assert archive is not None
        while True:
            result = archive.fetch_archive()
            if not result.vsets:
                self._row(Status.SUSPENDED, result.timestamp)
                return Outcome.MARK
            for vset in result.vsets:
                if vset.pmid == self.metric.pmid:
                    return vset, result.timestamp

    def _note_rates(self, vset: ValueSet, stamp: Timestamp) -> None:
        """Hand every counter sample to the shared rate helper (a failed one resets it)."""
        if not self.rates:
            return
        try:
            self.current = self.rate_of.update_set(self.metric.desc, vset, stamp)
        except PMError as exc:
            raise die(f"{PROG}:printrate pmExtractValue: {pmErrStr(exc.code)}\n") from None

    # -- rows -------------------------------------------------------------------------------

    def _stamp(self) -> Timestamp:
        return self.sample[1] if self.sample is not None else Timestamp(0, 0)

    def _row(self, status: Status, stamp: Timestamp, cells: list[str | None] | None = None,
             note: str = "") -> None:  # fmt: skip
        ns = stamp.sec * _NSEC + stamp.nsec
        notes = {0: note} if note else {}
        block = Block((status,), (ns,), (cells or [],), notes, tuple(self.metric.columns))
        self.writer.write(block)

    def _value_text(self, valfmt: int, value: Value, width: int, where: str) -> str:
        """One value in its column: pmval's own format for floats, else pmPrintValue's."""
        desc = self.metric.desc
        if desc.type in _REAL_TYPES:
            try:
                real = pmExtractValue(valfmt, value.value, desc.type, PMType.PM_TYPE_DOUBLE)
            except PMError as exc:
                raise die(f"{PROG}:{where} pmExtractValue: {pmErrStr(exc.code)}\n") from None
            return pmval_real(real, desc.sem, width, self.fixed)
        return pmPrintValue(valfmt, desc.type, value.value, width)

    def _value_cells(self, vset: ValueSet) -> Cells:
        """printvals: each column's value, None where an instance has none."""
        valfmt = vset.valfmt
        values = sorted_values(vset)
        width = self.width
        if self.metric.singular:
            if len(values) == 1:
                return [self._value_text(valfmt, values[0][1], width, "printvals")], ""
            return [None], ""
        by_inst = {inst: (j, v) for j, (inst, v) in enumerate(values)}
        cells: list[str | None] = []
        for c in self.metric.columns:
            found = by_inst.get(c.inst)
            cells.append(
                None
                if found is None
                else self._value_text(valfmt, found[1], width, f"printvals[{found[0]}]")
            )
        warnings = []
        if self.metric.every:
            known = {c.inst for c in self.metric.columns}
            for j, (inst, v) in enumerate(values):
                if inst not in known:
                    text = self._value_text(valfmt, v, 1, f"printvals[{j}]")
                    warnings.append(f"Warning: value={text}, but instance={inst} is unknown\n")
        return cells, "".join(warnings)

    def _rate(self, inst: int) -> float | None:
        return self.current.get(uint32(inst))

    def _rate_text(self, rate: float, width: int) -> str:
        return pmval_real(rate, PMSem.PM_SEM_COUNTER, width, self.fixed)

    def _rate_cells(self, vset: ValueSet) -> Cells:
        """printrates: each column's rate since the sample before, None without one."""
        insts = self.insts
        if self.metric.singular:
            rate = self._rate(insts[0]) if len(insts) == 1 else None
            if rate is None or len(self.prev_insts) != 1:
                return [None], ""
            return [self._rate_text(rate, self.width)], ""
        cells: list[str | None] = []
        for c in self.metric.columns:
            rate = self._rate(c.inst)
            cells.append(None if rate is None else self._rate_text(rate, self.width))
        warnings = []
        if self.metric.every:
            known = {c.inst for c in self.metric.columns}
            prev = self.prev_insts
            for j, inst in enumerate(insts):
                if inst in known or j >= len(prev) or prev[j] != inst:
                    continue
                rate = self._rate(inst)
                text = self._rate_text(rate if rate is not None else 0.0, 1)
                warnings.append(f"Warning: value={text}, but instance={inst} is unknown\n")
        return cells, "".join(warnings)
