"""pmval's samples of an interpolated archive replay, answered ahead a chunk at a time.

Replaying an archive, pmval's fetches are known in advance: one per interval from the
origin.  So they are answered ahead, a bounded chunk of fetches at a time
(ArchiveContext.replays); pmval's loop walks over which of them have values, and the
rows it asks for are made a chunk at a time: rates from consecutive fetches and every
value's text computed a column at a time in NumPy, then handed to the writer as one
Block.  The memory it takes is the chunk's, however long the replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from purepcp.pmapi.archive.interp import seconds_since
from purepcp.pmapi.archive.replay import MetricReplay, Replay
from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.printvalue import pmval_reals, print_value
from purepcp.pmapi.rate import COUNTER_WRAP_SPAN, counter_wrap_enabled, time_scale
from purepcp.pmapi.types import PMSem, PMType

from .fatal import PROG, die
from .loop import Outcome
from .metric import Metric
from .model import Block, Status
from .writer import Writer

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext

_INTEGERS = (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64)
_REALS = (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)

Grid = list[list[str | None]]  # rows of cells


class _Got(IntEnum):
    """What a fetch gives pmval's loop."""

    OK = 0
    NONE = 1  # no values
    ERROR = 2  # the metric's error
    END = 3  # past the archive's end or the time window's
    FAIL = 4  # the fetch itself failed (the archive is damaged)


#: the loop's Outcome of each _Got (FAIL ends the run instead)
_OUTCOMES = (Outcome.OK, Outcome.NONE, Outcome.NONE, Outcome.END)


@dataclass(frozen=True)
class _Window:
    """The fetches of one chunk (and the last fetch before it, for rates): global fetch
    FIRST is row 0."""

    first: int
    times: np.ndarray  # int64 ns
    metric: MetricReplay
    got: list[int]  # a _Got per fetch
    fail_code: int = 0
    problem: PMError | None = None  # what the failing fetches fail for

    @property
    def stop(self) -> int:
        """The global index after the last fetch held."""
        return self.first + len(self.times)


def _window(chunk: Replay, first: int, before: _Window | None, finish: float) -> _Window:
    """The window of CHUNK (fetches FIRST on), holding BEFORE's last fetch as well."""
    m = chunk.metrics[0]
    times, eol, failed = chunk.times, chunk.eol, chunk.failed
    carried = before is not None and len(before.times) > 0
    if before is not None and carried:  # (the fetch carried keeps its outcome: below)
        b, last = before.metric, slice(-1, None)
        m = MetricReplay(
            m.pmid, m.desc, m.insts,
            np.concatenate([b.has[last], m.has]), np.concatenate([b.values[last], m.values]),
            m.error,
            None if m.failed is None else np.concatenate([[False], m.failed]),
        )  # fmt: skip
        times = np.concatenate([before.times[last], times])
        eol = np.concatenate([[False], eol])
        if failed is not None:
            failed = np.concatenate([[False], failed])
        first -= 1
    got = _outcomes(m, eol, failed, seconds_since(times, 0), finish)
    if before is not None and carried:
        got[0] = before.got[-1]
    return _Window(first, times, m, got, chunk.fail_code, chunk.problem)


def _outcomes(
    m: MetricReplay, eol: np.ndarray, failed: np.ndarray | None, secs: np.ndarray, finish: float
) -> list[int]:
    """What each fetch gives pmval: a _Got."""
    out = np.where(m.has.any(axis=1), _Got.OK, _Got.NONE)
    if m.error:
        out[slice(None) if m.failed is None else m.failed] = _Got.ERROR
    out[secs > finish] = _Got.END
    if failed is not None:  # (pmFetch failing comes before pmval looks at the time)
        out[failed] = _Got.FAIL
    out[eol] = _Got.END
    return out.tolist()


class ChunkedReplay:
    """The Samples of METRIC's interpolated replay in CTX (at most SAMPLES of them),
    written by WRITER a chunk at a time.  FINISH is the time window's end (seconds);
    cells are WIDTH wide, with FIXED decimals (-1: pmval's own layout); RATES makes
    a counter's rows its rates."""

    def __init__(self, ctx: ArchiveContext, metric: Metric, writer: Writer, samples: int, *,
                 rates: bool, finish: float, width: int, fixed: int) -> None:  # fmt: skip
        # (each sample takes at most two fetches: more are never asked for)
        self.chunks: Iterator[Replay] = iter(ctx.replays([metric.pmid], 2 * samples + 2))
        self.metric = metric
        self.writer = writer
        self.rates = rates
        self.finish = finish
        self.width, self.fixed = width, fixed
        self.window: _Window | None = None
        self.k = self.first = self.stop = 0  # the next fetch; the window's (kept at hand)
        self.status: list[Status] = []  # the rows asked for since the last block ...
        self.at: list[int] = []  # ... the fetch each is of ...
        self.values: list[int] = []  # ... those that are values ...
        self.notes: dict[int, str] = {}  # ... and what the errors say

    # -- the loop's questions ---------------------------------------------------------------

    def fetch(self) -> Outcome:
        """getvals on the next fetch; a row already says what one without values lacked."""
        while self.k >= self.stop:
            self._flush()
            chunk = next(self.chunks, None)
            if chunk is None:
                return Outcome.END
            self.window = _window(chunk, self.k, self.window, self.finish)
            self.first, self.stop = self.window.first, self.window.stop
        w = self.window
        assert w is not None
        got = w.got[self.k - self.first]
        self.k += 1
        if got == _Got.FAIL:
            self._flush()
            # (PCP's words; ours add where the archive is damaged, as a fetch's would)
            why = str(w.problem) if w.problem is not None else pmErrStr(w.fail_code)
            raise die(f"\n{PROG}: pmFetch: {why}\n")
        if got == _Got.ERROR:
            self.notes[len(self.status)] = f"\n{PROG}: pmFetch: {pmErrStr(w.metric.error)}\n"
            self._row(Status.ERROR)
        elif got == _Got.NONE:
            self._row(Status.NO_VALUES)
        return _OUTCOMES[got]

    def labels(self) -> None:
        if not self.metric.singular:
            self._row(Status.LABELS)

    def report(self) -> None:
        self.values.append(len(self.status))
        self.status.append(Status.VALUES)
        self.at.append(self.k - 1)

    def no_values(self) -> None:
        self._row(Status.NO_VALUES)

    def relabel(self) -> None:
        """(An archive's instances are all known from the start.)"""

    def pause(self) -> None:
        """(Replay does not wait.)"""

    def close(self) -> None:
        self._flush()

    # -- rows -------------------------------------------------------------------------------

    def _row(self, status: Status) -> None:
        """A row of the fetch just made."""
        self.status.append(status)
        self.at.append(self.k - 1)

    def _flush(self) -> None:
        """The rows asked for so far, as one Block to the writer."""
        w = self.window
        if not self.status or w is None:
            return
        at = np.asarray(self.at) - w.first
        cells: list[list[str | None]] = [[]] * len(self.status)
        if self.values:
            rows = at[self.values]
            grid = self._rates(w, rows) if self.rates else self._values(w, rows)
            for i, line in zip(self.values, grid, strict=True):
                cells[i] = line
        times = w.times[at].tolist()
        block = Block(self.status, times, cells, self.notes, tuple(self.metric.columns))
        self.status, self.at, self.values, self.notes = [], [], [], {}
        self.writer.write(block)

    def _values(self, w: _Window, rows: np.ndarray) -> Grid:
        """Each value row's cells, in pmPrintValue's or pmval's float format."""
        m = w.metric
        vals = m.values[rows]
        vtype = self.metric.desc.type
        cols = self.width
        flat = vals.reshape(-1)
        if vtype in _INTEGERS:
            fmt = f"%{cols}d"
            texts = [fmt % v for v in flat.tolist()]
        elif vtype in _REALS:
            texts = pmval_reals(flat.astype(np.float64), self.metric.desc.sem, cols, self.fixed)
        else:
            texts = [print_value(v, vtype, cols) if v is not None else "" for v in flat.tolist()]
        grid = np.array(texts, dtype=object).reshape(vals.shape)
        return self._columns(m, grid, m.has[rows])

    def _rates(self, w: _Window, now: np.ndarray) -> Grid:
        """Each rate row's cells: the change since the fetch before, over the time between."""
        m = w.metric
        desc = self.metric.desc
        then = now - 1
        ok = m.has[now] & m.has[then]
        secs = seconds_since(w.times, 0)
        v1 = m.values[now].astype(np.float64)
        v0 = m.values[then].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            diff = v1 - v0
            if counter_wrap_enabled() and desc.type in COUNTER_WRAP_SPAN:
                diff = np.where(diff < 0.0, diff + COUNTER_WRAP_SPAN[desc.type], diff)
            delta = time_scale(desc.units) * (secs[now] - secs[then])
            rates = diff / delta[:, None]
        if self.metric.singular:
            ok &= m.has[then].sum(axis=1, keepdims=True) == 1  # (pmval: one previous value)
        texts = pmval_reals(rates.reshape(-1), PMSem.PM_SEM_COUNTER, self.width, self.fixed)
        grid = np.array(texts, dtype=object).reshape(rates.shape)
        return self._columns(m, grid, ok)

    def _columns(self, m: MetricReplay, texts: np.ndarray, ok: np.ndarray) -> Grid:
        """Each row's cells in pmval's columns (its instances, sorted): the replay's text
        where it has a value, None where not (or where the replay has no such instance)."""
        cells = np.where(ok, texts, None)
        if self.metric.singular:
            return cells[:, :1].tolist()
        where = {int(inst): j for j, inst in enumerate(m.insts.tolist())}
        absent = len(m.insts)
        picks = [where.get(uint32(c.inst), absent) for c in self.metric.columns]
        if not picks:
            return [[] for _ in range(len(cells))]
        padded = np.concatenate([cells, np.full((len(cells), 1), None, dtype=object)], axis=1)
        return padded[:, picks].tolist()
