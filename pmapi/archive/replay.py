"""Interpolated replay: many fetches of an archive context answered at once, as arrays.

A replay is what `count` PM_MODE_INTERP fetches from an origin, `delta` apart, would
return: per fetch time, per metric, per candidate instance, whether it has a value
and which (interp.py's rules over the archive's observations, columns.py).
The candidates of a metric with an instance domain are, as libpcp takes them, every
instance any of the archive's instance-domain records ever named, less those the
context's profile leaves out; a singular metric has the one PM_IN_NULL, whatever
instance its values were logged under (old archives log some under instance 1), as
libpcp's interpolation takes them.  A fetch more than a millisecond before the
archive's label start or after its last record is PM_ERR_EOL, and the origin still
moves on, as with libpcp.

Replays are answered a chunk of fetches at a time (`replays`), each chunk reading only
the records around its own times, so the memory a replay needs is bounded by the
chunk, not by the span of the archive or of the fetches.  Where an archive is damaged
(its records end in one that cannot be read), a fetch that libpcp would have to read
past the damage to answer fails with PM_ERR_LOGREC, as libpcp's does.
"""

from __future__ import annotations

import functools
import os
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..desc import Desc
from ..errors import (
    PM_ERR_EOL,
    PM_ERR_LOGREC,
    PM_ERR_PMID_LOG,
    PM_ERR_TYPE,
    PMError,
)
from ..ids import PM_IN_NULL, PM_INDOM_NULL
from ..types import PMSem, ValFmt
from ..values import NO_BLOCKS, ValueSet
from .interp import NSEC, NUMERIC_DTYPES, Block, interpolate_block

#: How far outside [label start, last record] a fetch may ask before it is PM_ERR_EOL.
EOL_SLOP_NS = 1_000_000
#: A chunk of a replay holds at most this many fetches and (fetch, instance) values ...
CHUNK_FETCHES = 1 << 16
CHUNK_CELLS = 1 << 18
#: ... and reads at most this many (record, instance) observations (at least one
#: fetch's worth: the records at a fetch's own time are always read together).
CHUNK_READS = 1 << 20

#: candidates(desc, observed) -> the instances a fetch of DESC's metric may return,
#: ascending; OBSERVED() gives those with values anywhere (asked for only if needed).
Candidates = Callable[[Desc, Callable[[], Sequence[int]]], Sequence[int]]
#: lifetimes(desc) -> when each instance of DESC's domain came and went (lifetimes_of),
#: or None where libpcp keeps no such times.
Lifetimes = Callable[[Desc], dict[int, tuple[int, int | None]] | None]
#: libpcp notes instances' lifetimes only for domains that ever held this many (interp.c)
LIFETIME_THRESHOLD = 16


class Observations(Protocol):
    """What a replay reads: an archive's (or a chain of archives') observations."""

    marks: np.ndarray  # every <mark> time, ascending (int64 ns)
    mark_gaps: np.ndarray  # per mark, the time between the records either side (-1: none)

    def block(
        self, pmid: int, lo: int | None, hi: int | None, near: np.ndarray | None = None
    ) -> Block:
        """PMID's observations in [LO, HI] and each instance's nearest each side; given
        NEAR (times), a block whose every record holds every instance may keep only the
        records at or either side of each (all that interpolating at NEAR reads)."""
        ...

    def instances(self, pmid: int) -> list[int]:
        """The instances PMID has values for anywhere."""
        ...

    def count(self, lo: int, hi: int) -> int:
        """How many records have times in [LO, HI]."""
        ...

    @property
    def damage(self) -> int | None:
        """When the records became unreadable, as far as read (the time of the last record
        before the damage); None if they read to the end."""
        ...

    @property
    def reads_on(self) -> bool:
        """Whether archives follow the damaged one (a fetch past the end then fails)."""
        ...

    def misencoded(self, pmid: int) -> int | None:
        """When a record holding PMID's values misencoded is met (the time of the last
        record before it), which libpcp's interpolation cannot read; None if none is."""
        ...

    @property
    def problem(self) -> PMError | None:
        """What made them unreadable (an ArchiveError naming file and offset)."""
        ...


@dataclass(frozen=True)
class Span:
    """Where a replay's fetches may find values: from START (label start) to END (last
    record), ns."""

    start: int
    end: int


@dataclass
class Sequel:
    """What libpcp remembers from one interpolated fetch to the next, until the context's
    time is set again: when the last fetch was, and which metrics it gave values for
    (its per-metric last_numval).  A counter that had values at the fetch before has
    none at a fetch that reads past a <mark> to get to its time, so no rate is made
    across the mark (interp.c's seen_mark rule)."""

    time: int | None = None
    had: dict[int, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricReplay:
    """One metric over a replay: has[k, j] says whether fetch k has instance insts[j]."""

    pmid: int
    desc: Desc | None
    insts: np.ndarray  # uint32 candidate instances, ascending
    has: np.ndarray  # bool, (fetches, instances)
    values: np.ndarray  # the metric's NumPy type (objects for strings...), same shape
    error: int = 0  # a PCP error some fetches give this metric instead (numval < 0) ...
    failed: np.ndarray | None = None  # ... those (bool per fetch); None: every fetch

    def fails(self, k: int) -> bool:
        """Whether fetch K gives this metric its error rather than values."""
        return bool(self.error) and (self.failed is None or bool(self.failed[k]))

    def value_set(self, k: int) -> ValueSet:
        """Fetch K's value set for this metric, as pmFetch would have returned it."""
        if self.fails(k):
            return ValueSet(self.pmid, self.error, _INSITU, NO_BLOCKS, array("I"), array("I"))
        row = self.has[k]
        if not row.any():
            return ValueSet(self.pmid, 0, _INSITU, NO_BLOCKS, array("I"), array("I"))
        assert self.desc is not None
        insts = self.insts[row].tolist()
        atoms = self.values[k][row].tolist()
        return ValueSet.of_atoms(self.pmid, self.desc.type, list(zip(insts, atoms, strict=True)))


_NO_INSTS = np.zeros(0, dtype=np.uint32)
_INSITU = ValFmt.PM_VAL_INSITU


@dataclass(frozen=True)
class Replay:
    """What a run of interpolated fetches returned: their times, EOLs and metrics; and the
    fetches that failed as a whole (a read error, libpcp's pmFetch failing), if any."""

    times: np.ndarray  # int64 ns, each fetch's requested time (its result's timestamp)
    eol: np.ndarray  # bool: that fetch failed with PM_ERR_EOL
    metrics: tuple[MetricReplay, ...]
    failed: np.ndarray | None = None  # bool: that fetch failed with FAIL_CODE ...
    fail_code: int = 0
    problem: PMError | None = None  # ... because of this (the archive's damage)

    def fetch_error(self, k: int) -> PMError | None:
        """The error fetch K fails with as a whole (PM_ERR_EOL first), if any."""
        if self.eol[k]:
            return PMError(PM_ERR_EOL)
        if self.failed is not None and self.failed[k]:
            return self.problem if self.problem is not None else PMError(self.fail_code)
        return None


def fetch_times(origin_ns: int, delta_ns: int, count: int) -> np.ndarray:
    """The times of COUNT fetches from ORIGIN_NS, DELTA_NS apart (int64 ns)."""
    return origin_ns + np.arange(count, dtype=np.int64) * np.int64(delta_ns)


def concat(parts: Sequence[Replay]) -> Replay:
    """One replay of PARTS, replays of the same metrics of successive fetches."""
    if len(parts) == 1:
        return parts[0]
    metrics = []
    for ms in zip(*(p.metrics for p in parts), strict=True):
        first = ms[0]
        failed = None
        if first.error:
            failed = np.concatenate(
                [m.failed if m.failed is not None else np.ones(len(p.times), bool)
                 for m, p in zip(ms, parts, strict=True)]
            )  # fmt: skip
        metrics.append(
            MetricReplay(first.pmid, first.desc, first.insts,
                         np.concatenate([m.has for m in ms]),
                         np.concatenate([m.values for m in ms]), first.error, failed)
        )  # fmt: skip
    failed = None
    code = next((p.fail_code for p in parts if p.fail_code), 0)
    if code:
        failed = np.concatenate(
            [p.failed if p.failed is not None else np.zeros(len(p.times), bool) for p in parts]
        )
    problem = next((p.problem for p in parts if p.problem is not None), None)
    return Replay(
        np.concatenate([p.times for p in parts]),
        np.concatenate([p.eol for p in parts]),
        tuple(metrics),
        failed,
        code,
        problem,
    )


def replays(
    observations: Observations,
    descs: dict[int, Desc],
    pmids: Sequence[int],
    origin_ns: int,
    delta_ns: int,
    count: int,
    span: Span,
    candidates: Candidates,
    sequel: Sequel | None = None,
    lifetimes: Lifetimes | None = None,
) -> Iterator[Replay]:
    """COUNT fetches of PMIDS from ORIGIN_NS, DELTA_NS apart, as successive chunks (see
    the module's docstring): each chunk holds at most CHUNK_FETCHES fetches and
    CHUNK_CELLS values, and reads at most CHUNK_READS observations (or the records of a
    single fetch).  SEQUEL is what the fetch before the first left (updated as the
    chunks are made); LIFETIMES, if given, bounds a discrete metric's instances (replay)."""
    sequel = sequel if sequel is not None else Sequel()
    width = 1
    for pmid in pmids:
        desc = descs.get(pmid)
        if desc is not None and desc.indom != PM_INDOM_NULL:
            width = max(width, len(candidates(desc, _observed(observations, pmid))))
    most = max(1, min(CHUNK_FETCHES, CHUNK_CELLS // width))
    reads = max(1, CHUNK_READS // width)
    if count <= 0:  # (a replay of no fetches is one empty chunk)
        empty = fetch_times(0, 0, 0)
        yield replay(observations, descs, pmids, empty, span, candidates, sequel, lifetimes)
        return
    done = 0
    while done < count:
        times = fetch_times(origin_ns + done * delta_ns, delta_ns, min(most, count - done))
        n = _fits(observations, times, span, reads)
        yield replay(observations, descs, pmids, times[:n], span, candidates, sequel, lifetimes)
        done += n


def _fits(observations: Observations, times: np.ndarray, span: Span, reads: int) -> int:
    """How many of TIMES (in order) one chunk takes: as many as keep the records between
    the first and the last of them (inside the span) within READS; at least one."""
    lo, hi = span.start - EOL_SLOP_NS, span.end + EOL_SLOP_NS
    inside = np.clip(times, lo, hi)
    if observations.count(int(inside.min()), int(inside.max())) <= reads:
        return len(times)
    a, b = 1, len(times)  # the most that fit, by bisection
    while a < b:
        mid = (a + b + 1) // 2
        part = inside[:mid]
        if observations.count(int(part.min()), int(part.max())) <= reads:
            a = mid
        else:
            b = mid - 1
    return a


def replay(
    observations: Observations,
    descs: dict[int, Desc],
    pmids: Sequence[int],
    times: np.ndarray,
    span: Span | tuple[int, int],
    candidates: Candidates,
    sequel: Sequel | None = None,
    lifetimes: Lifetimes | None = None,
) -> Replay:
    """Fetches of PMIDS at TIMES (int64 ns) from OBSERVATIONS.

    SPAN says where the values are (a Span, or (label start, last record) in ns);
    CANDIDATES gives the instances a fetch may return for a metric with an instance
    domain (see Candidates); SEQUEL, if given, is what the fetch before TIMES left
    (the first fetch after the context's time is set has none), updated here.
    LIFETIMES, if given, says when instances came and went: a discrete metric's
    instance has no value before it came or after it went (interp.c: its prior value
    is not carried past the instance's going).
    """
    if not isinstance(span, Span):
        span = Span(*span)
    eol = (times < span.start - EOL_SLOP_NS) | (times > span.end + EOL_SLOP_NS)
    inside = times[~eol]
    lo = int(inside.min()) if len(inside) else None
    hi = int(inside.max()) if len(inside) else None
    marks = honoured_marks(observations)
    read: dict[int, Block] = {}
    for pmid in pmids:
        desc = descs.get(pmid)
        if desc is not None and pmid not in read:
            dtype = NUMERIC_DTYPES.get(desc.type, object)
            read[pmid] = (
                observations.block(pmid, lo, hi, inside) if lo is not None else Block.empty(dtype)
            )
    damage, problem = _damage(observations, list(read))  # (known once they are read)
    if damage is not None:  # (nothing after it is seen)
        read = {pmid: _upto(block, damage) for pmid, block in read.items()}
        if observations.reads_on:  # (past the end: the damage, not the end of the log)
            eol &= times <= span.end + EOL_SLOP_NS
    unreadable = times > damage if damage is not None else np.zeros(len(times), dtype=bool)
    if damage is not None and len(marks):  # (a mark before the damage ends any search)
        stopped = np.searchsorted(marks, times, "left") < np.searchsorted(marks, damage, "right")
    else:
        stopped = np.zeros(len(times), dtype=bool)
    metrics = []
    for pmid in pmids:
        desc = descs.get(pmid)
        if desc is None:
            empty = np.zeros((len(times), 0), dtype=bool)
            metrics.append(MetricReplay(pmid, None, _NO_INSTS, empty, empty, PM_ERR_PMID_LOG))
            continue
        block = read[pmid]
        if desc.indom == PM_INDOM_NULL:
            insts = [PM_IN_NULL]
            block = _singular(block)
        else:
            insts = list(candidates(desc, _observed(observations, pmid)))
        wanted = np.asarray(insts, dtype=np.int64)
        pos = np.searchsorted(wanted, block.insts)
        known = pos < len(wanted)
        known[known] = wanted[pos[known]] == block.insts[known]
        block = block.columns(np.flatnonzero(known))
        where = pos[known]
        dtype = NUMERIC_DTYPES.get(desc.type, object)
        has = np.zeros((len(times), len(insts)), dtype=bool)
        values = np.zeros((len(times), len(insts)), dtype=dtype)
        # a counter that is no number fails where it has both bounds (libpcp: PM_ERR_TYPE)
        untyped = desc.sem == PMSem.PM_SEM_COUNTER and dtype is object
        sem = PMSem.PM_SEM_INSTANT if untyped else desc.sem  # (the same bounds needed)
        answer = interpolate_block(block, times, sem, desc.type, marks, base=span.start)
        has[:, where] = answer.has
        values[:, where] = answer.values
        if desc.sem == PMSem.PM_SEM_DISCRETE and lifetimes is not None and insts:
            _alive(has, times, insts, lifetimes(desc))
        if desc.sem == PMSem.PM_SEM_COUNTER and not untyped and sequel is not None:
            _across_marks(pmid, has, times, eol, marks, sequel)
        if damage is not None and insts:
            unreadable |= _reads_past(block, where, len(insts), times) & ~stopped
        has[eol] = False
        error, failed = 0, None
        if untyped:
            error, failed = PM_ERR_TYPE, has.any(axis=1)
            has[:] = False
        insts_u32 = np.asarray(insts, dtype=np.uint32)
        metrics.append(MetricReplay(pmid, desc, insts_u32, has, values, error, failed))
    unreadable &= ~eol
    if sequel is not None:
        _remember(sequel, times, eol, metrics)
    if unreadable.any():
        return Replay(times, eol, tuple(metrics), unreadable, PM_ERR_LOGREC, problem)
    return Replay(times, eol, tuple(metrics))


def _damage(observations: Observations, pmids: Sequence[int]) -> tuple[int | None, PMError | None]:
    """Where reading PMIDS' records fails, and why: the archive's damage (the time of the
    last record before it, and the ArchiveError that says where) or the first record
    holding one of PMIDS' values misencoded (libpcp: PM_ERR_LOGREC, in its own words);
    (None, None) if neither is met."""
    damage = observations.damage
    misfits = [t for t in map(observations.misencoded, pmids) if t is not None]
    if misfits and (damage is None or min(misfits) < damage):
        return min(misfits), PMError(PM_ERR_LOGREC)
    return damage, observations.problem if damage is not None else None


def _upto(block: Block, last: int) -> Block:
    """BLOCK's observations at times up to LAST (ns)."""
    n = int(np.searchsorted(block.times, last, "right"))
    if n == len(block.times):
        return block
    return Block(block.times[:n], block.insts, block.values[:n], block.present[:n])


@functools.cache
def ignored_marks() -> float | None:
    """$PCP_IGNORE_MARK_RECORDS as libpcp reads it, once a process: None when unset (every
    <mark> counts), else the gap in seconds at or under which a mark between two records
    is ignored (0, also for an empty value: every mark is).  A value that is no interval
    is warned of, as libpcp does, and every mark counts."""
    value = os.environ.get("PCP_IGNORE_MARK_RECORDS")
    if value is None:
        return None
    if not value:
        return 0.0
    from ..timewindow.interval import parse_interval
    from ..timewindow.scanning import TimeParseError

    try:
        return parse_interval(value)
    except TimeParseError as exc:
        from .. import progname

        sys.stderr.write(
            f"{progname()}: Warning: bad $PCP_IGNORE_MARK_RECORDS: not in pmParseInterval(3) "
            f"format:\n{exc.errmsg}\n"
        )
        sys.stderr.flush()
        return None


def honoured_marks(observations: Observations) -> np.ndarray:
    """The <mark> times of OBSERVATIONS a replay stops at: all of them, unless
    $PCP_IGNORE_MARK_RECORDS says to ignore them all, or those with records either
    side of them no further apart than its gap (libpcp's update_bounds)."""
    marks = observations.marks
    if not len(marks):
        return marks
    gap = ignored_marks()
    if gap is None:
        return marks
    if gap == 0:
        return marks[:0]
    apart = observations.mark_gaps
    ignored = (apart >= 0) & (apart / NSEC <= gap)
    return marks[~ignored]


def lifetimes_of(history: Sequence) -> dict[int, tuple[int, int | None]] | None:
    """When each instance of an instance domain came and went, as libpcp's time_caliper
    finds them from its records HISTORY (InDomRecords, ascending by time): it came at
    the earliest record holding it, and went at the record after the latest one holding
    it (None: the last record holds it).  None if no record ever held LIFETIME_THRESHOLD
    instances (libpcp then keeps no lifetimes)."""
    if not history or max(len(r.insts) for r in history) < LIFETIME_THRESHOLD:
        return None
    out: dict[int, tuple[int, int | None]] = {}
    after: int | None = None  # (the time of the record after, walking back in time)
    for record in reversed(history):
        stamp = record.stamp.ns
        for inst in record.insts:
            known = out.get(inst)
            out[inst] = (stamp, after if known is None else known[1])
        after = stamp
    return out


def _alive(
    has: np.ndarray,
    times: np.ndarray,
    insts: Sequence[int],
    lives: dict[int, tuple[int, int | None]] | None,
) -> None:
    """Clear HAS (fetches x INSTS) where the fetch is before the instance came or after
    it went (LIVES, from lifetimes_of; an instance it does not name is unbounded)."""
    if not lives:
        return
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    spans = [lives.get(int(i), (lo, hi)) for i in insts]
    births = np.array([b for b, _ in spans], dtype=np.int64)
    deaths = np.array([hi if d is None else d for _, d in spans], dtype=np.int64)
    t = times[:, None]
    has &= (t >= births[None, :]) & (t <= deaths[None, :])


def _across_marks(
    pmid: int,
    has: np.ndarray,
    times: np.ndarray,
    eol: np.ndarray,
    marks: np.ndarray,
    sequel: Sequel,
) -> None:
    """libpcp's seen_mark rule (see Sequel): a counter fetch whose time is past a <mark>
    since the fetch before, which had values, has none."""
    if not len(marks) or not len(times):
        return
    before = np.empty(len(times), dtype=np.int64)
    before[1:] = times[:-1]
    before[0] = sequel.time if sequel.time is not None else times[0]
    lo, hi = np.minimum(before, times), np.maximum(before, times)
    forwards = times >= before
    # a mark in (before, t] reading forwards, in [t, before) reading backwards
    crossed = np.where(
        forwards,
        np.searchsorted(marks, hi, "right") > np.searchsorted(marks, lo, "right"),
        np.searchsorted(marks, hi, "left") > np.searchsorted(marks, lo, "left"),
    )
    if sequel.time is None:
        crossed[0] = False  # (the first fetch after the time is set: no fetch before)
    crossed &= ~eol  # (an EOL fetch leaves libpcp's memory as it was)
    if not crossed.any():
        return
    had = has.any(axis=1) & ~eol
    # the fetch before each, that was not EOL (-1: the one before this run)
    inside = np.where(~eol, np.arange(len(times)), -1)
    prior = np.empty(len(times), dtype=np.int64)
    prior[0] = -1
    prior[1:] = np.maximum.accumulate(inside)[:-1]
    for k in np.flatnonzero(crossed).tolist():  # (in order: a dropped fetch had no values)
        p = int(prior[k])
        if had[p] if p >= 0 else sequel.had.get(pmid, False):
            has[k] = False
            had[k] = False


def _remember(sequel: Sequel, times: np.ndarray, eol: np.ndarray, metrics) -> None:
    """Update SEQUEL to what the last of these fetches (that was not EOL) left."""
    inside = np.flatnonzero(~eol)
    if not len(inside):
        return
    k = int(inside[-1])
    sequel.time = int(times[k])
    for m in metrics:
        sequel.had[m.pmid] = bool(m.has[k].any()) and not m.fails(k)


def _observed(observations: Observations, pmid: int) -> Callable[[], Sequence[int]]:
    return lambda: observations.instances(pmid)


def _singular(block: Block) -> Block:
    """A singular metric's one column: its values under whatever instance they were
    logged (libpcp takes a value under any instance as PM_IN_NULL's; of a record's
    values, the last, and PM_IN_NULL sorts last)."""
    null = np.array([PM_IN_NULL], dtype=np.int64)
    n, k = block.present.shape
    if k <= 1:
        return Block(block.times, null[:k], block.values, block.present)
    last = k - 1 - np.argmax(block.present[:, ::-1], axis=1)
    values = block.values[np.arange(n), last][:, None]
    return Block(block.times, null, values, block.present.any(axis=1)[:, None])


def _reads_past(block: Block, where: np.ndarray, width: int, times: np.ndarray) -> np.ndarray:
    """Which fetches at TIMES must read on to bound some instance from above (no later
    observation of it is in BLOCK, whose column j is instance WHERE[j] of WIDTH)."""
    latest = np.full(width, np.iinfo(np.int64).min, dtype=np.int64)
    if len(block.times) and len(where):
        seen = np.where(block.present, block.times[:, None], np.iinfo(np.int64).min)
        latest[where] = seen.max(axis=0)
    return (times[:, None] > latest[None, :]).any(axis=1)


def derived_replay(derived, pmids: Sequence[int], operands: Replay) -> Replay:
    """A replay of PMIDS, derived ones computed from OPERANDS (a replay of
    ``derived.operands(pmids)``) by the context's DerivedMetrics."""
    from ..derived.frame import Frame

    frames = {}
    for m in operands.metrics:
        err = np.zeros(len(operands.times), np.int32)
        if m.error:
            err[slice(None) if m.failed is None else m.failed] = m.error
        has = m.has & ~operands.eol[:, None]
        frames[m.pmid] = Frame(m.insts, has, m.values, err)
    computed = derived.evaluate(pmids, frames, operands.times)
    real = {m.pmid: m for m in operands.metrics}
    metrics = []
    for pmid in pmids:
        if pmid in real:
            metrics.append(real[pmid])
            continue
        frame = computed.get(pmid)
        if frame is None:  # (a derived metric that did not bind)
            empty = np.zeros((len(operands.times), 0), dtype=bool)
            metrics.append(MetricReplay(pmid, None, _NO_INSTS, empty, empty, PM_ERR_PMID_LOG))
            continue
        desc = derived.bound(pmid).desc
        failing = frame.err < 0
        # (one error code per metric: a replay of a derived metric reports its first)
        error = int(frame.err[failing][0]) if failing.any() else 0
        metrics.append(
            MetricReplay(pmid, desc, frame.insts.astype(np.uint32), frame.has, frame.values,
                         error, failing if error else None)
        )  # fmt: skip
    return Replay(operands.times, operands.eol, tuple(metrics), operands.failed,
                  operands.fail_code, operands.problem)  # fmt: skip
