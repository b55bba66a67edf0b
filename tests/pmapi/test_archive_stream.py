"""Replays a chunk at a time: the same answers as all at once, in memory bounded by the
chunk, whatever the span of the archive or of the fetches.

A chunk reads only the records around its own fetch times (Columns.block with the
observations just outside); these tests make the chunks tiny, so every boundary case
(an instance's prior or next far outside the chunk, marks, instances coming and going,
records decoded carefully or through templates) falls on a chunk's edge somewhere.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import purepcp.pmapi.archive.replay as replay_module
from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.columns import Columns
from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.examples import examples
from tests.support.replay_archives import (
    CTR,
    DIS,
    INS,
    archives,
    churn,
    classic,
    run_pmval,
    write_records,
)

S = 1_000_000_000
T0 = 1_700_000_000


def at(sec: float) -> Timestamp:
    return Timestamp(*divmod(T0 * S + round(sec * S), S))


def tiny(monkeypatch) -> None:
    """Chunks of at most 2 fetches, 3 values, and 2 records read."""
    monkeypatch.setattr(replay_module, "CHUNK_FETCHES", 2)
    monkeypatch.setattr(replay_module, "CHUNK_CELLS", 3)
    monkeypatch.setattr(replay_module, "CHUNK_READS", 2)


def answers(base: str, pmids, origin: float, step: float, count: int) -> list:
    with ArchiveContext(base) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(origin), round(step * S))
        run = ctx.replay(pmids, count)
    return [
        (bool(run.eol[k]), [(m.has[k].tolist(), m.values[k][m.has[k]].tolist())
                            for m in run.metrics])
        for k in range(count)
    ]  # fmt: skip


@settings(
    max_examples=examples(50),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    case=archives(),
    start=st.integers(-4, 70),
    step=st.integers(1, 9),
    count=st.integers(1, 30),
    few=st.sampled_from([1, 4]),
)
def test_tiny_chunks_answer_as_one(tmp_path, monkeypatch, case, start, step, count, few):
    """FEW is how many records of a layout make a template (1: nearly every record is
    read through one; 4: most of these few records are decoded one by one)."""
    import purepcp.pmapi.archive.columns as columns

    records, marks = case
    if not records:
        return
    base = write_records(tmp_path, records, marks)
    with monkeypatch.context() as m:
        m.setattr(columns, "_FEW", few)
        whole = answers(base, [CTR, INS, DIS], start / 2, step / 2, count)
        tiny(m)
        assert answers(base, [CTR, INS, DIS], start / 2, step / 2, count) == whole


@pytest.mark.parametrize(
    "argv",
    [
        ["-t", "3", "ex.counter"],
        ["-t", "0.9", "-s", "40", "ex.discrete"],
        ["-t", "2.5", "-r", "ex.counter"],
    ],
)
def test_pmval_in_tiny_chunks_prints_the_same(tmp_path, monkeypatch, argv):
    full = ["-a", classic(tmp_path, marks=[55]), "-z", *argv]
    whole = run_pmval(monkeypatch, full)
    tiny(monkeypatch)
    assert run_pmval(monkeypatch, full) == whole
    assert len(whole.splitlines()) > 15


def test_pmval_in_tiny_chunks_with_instances(tmp_path, monkeypatch):
    full = ["-a", churn(tmp_path), "-z", "-t", "0.5", "c.level"]
    whole = run_pmval(monkeypatch, full)
    tiny(monkeypatch)
    assert run_pmval(monkeypatch, full) == whole


class Counting:
    """An archive's Columns, counting what each block read."""

    def __init__(self, cols: Columns) -> None:
        self.cols = cols
        self.marks = cols.marks
        self.mark_gaps = cols.mark_gaps
        self.damage = cols.damage
        self.problem = cols.problem
        self.reads_on = cols.reads_on
        self.misencoded = cols.misencoded
        self.rows: list[int] = []

    def block(self, pmid, lo, hi, near=None):
        got = self.cols.block(pmid, lo, hi, near)
        self.rows.append(len(got.times))
        return got

    def instances(self, pmid):
        return self.cols.instances(pmid)

    def count(self, lo, hi):
        return self.cols.count(lo, hi)


def test_a_chunk_reads_only_the_records_around_it(tmp_path):
    """Twenty thousand records of 50 instances: a replay of all of them reads them a
    bounded number at a time (plus the observation just outside each end)."""
    base = str(tmp_path / "long")
    counter, indom = 0x0F000001, 0x0F000001
    u64 = PMType.PM_TYPE_U64
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(counter, u64, indom, PMSem.PM_SEM_COUNTER), ["l.counter"])
        w.put_indom(at(0), indom, list(range(50)), [f"i{i}" for i in range(50)])
        for k in range(20_000):
            w.put_result(
                Result(at(k), (ValueSet.of_atoms(counter, u64, [(i, k * i) for i in range(50)]),))
            )
    with ArchiveContext(base) as ctx:
        counting = Counting(Columns(ctx.archive))
        descs = ctx.archive.descs
        span = replay_module.Span(T0 * S, (T0 + 19_999) * S)
        chunks = replay_module.replays(counting, descs, [counter], T0 * S, S, 20_000, span,
                                       ctx._candidates)  # fmt: skip
        sizes = [len(chunk.times) for chunk in chunks]
    assert sum(sizes) == 20_000 and len(sizes) > 3
    assert max(sizes) <= replay_module.CHUNK_CELLS // 50
    assert max(counting.rows) <= replay_module.CHUNK_READS // 50 + 2


def test_a_label_decades_before_the_records_is_replayed_in_chunks(tmp_path):
    """The label says 1990, the records are from 2023: a billion fetches a second apart
    are answered a chunk at a time (all at once they would need gigabytes)."""
    base = str(tmp_path / "old")
    pmid = 0x0F000001
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=Timestamp(631_152_000)) as w:
        w.put_desc(Desc(pmid, PMType.PM_TYPE_U32, sem=PMSem.PM_SEM_COUNTER), ["d.counter"])
        for k in range(5):
            w.put_result(
                Result(at(k), (ValueSet.of_atoms(pmid, PMType.PM_TYPE_U32, [(0xFFFFFFFF, k)]),))
            )
    with ArchiveContext(base) as ctx:
        ctx.set_mode(PM_MODE_INTERP, ctx.archive.label.start, S)
        chunks = ctx.replays([pmid], 1_100_000_000)
        first = list(itertools.islice(chunks, 3))
    assert [len(c.times) for c in first] == [replay_module.CHUNK_FETCHES] * 3
    assert not any(c.metrics[0].has.any() for c in first)
    assert np.all(np.diff(np.concatenate([c.times for c in first])) == S)
