"""Interpolated fetches from archive contexts (PM_MODE_INTERP) and pmval -a replaying them.

Seed 001's tables through a real archive and context; marks; end of log; instance
churn and profiles; fetches against a plain per-value reading at random (any start,
interval, direction and change of direction); pmval's array-driven replay against
its own fetch-by-fetch loop; and counters beside PCP's pmval -a (interop).
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.context import PM_MODE_FORW, PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_EOL, PM_ERR_PMID_LOG, PMError
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, ValueSet
from tests.support.examples import examples
from tests.support.reference_pmcd import require_reference
from tests.support.replay_archives import (
    COL,
    COUNTER,
    CTR,
    DBL,
    DIS,
    DISCRETE,
    INDOM,
    INS,
    INSTANT,
    NULL,
    T0,
    U32,
    S,
    archives,
    at,
    carried,
    churn,
    classic,
    plain,
    run_pmval,
    write_records,
)


def _values(ctx, pmids, start, step, count):
    """COUNT interpolated fetches: per fetch, per metric, the one value or None."""
    ctx.set_mode(PM_MODE_INTERP, at(start), round(step * S))
    out = []
    for _ in range(count):
        try:
            fetched = ctx.fetch(pmids)
        except PMError as exc:
            assert exc.code == PM_ERR_EOL
            out.append("EOL")
            continue
        row = []
        for vs in fetched.result.vsets:
            atoms = vs.atoms(U32) if vs.numval > 0 else []
            row.append(atoms[0] if atoms else None)
        out.append(row if len(row) > 1 else row[0])
    return out


def test_the_seeds_tables_through_a_context(tmp_path):
    with ArchiveContext(classic(tmp_path, tail=True)) as ctx:
        assert _values(ctx, [CTR], 10, 25, 4) == [610, 1020, 1050, 1205]
        assert _values(ctx, [INS], 10, 15, 6) == [400, 880, 1120, 1120, 580, 1200]  # ties: prior
        got = _values(ctx, [DIS], 10, 4, 22)
        assert got[:6] == [400, 400, 880, 880, 650, 650]
        assert got[-3:] == [850, 850, 850]  # 90, 94 and 98 s: after the last, the prior
        assert _values(ctx, [CTR, INS], 94, 1, 1) == [[None, None]]
        assert _values(ctx, [CTR], 12, 3, 2) == [632, 665]  # trunc(0.5 + ...)


def test_fetch_times_and_the_end_of_the_log(tmp_path):
    with ArchiveContext(classic(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(35.5), 10 * S)
        fetched = ctx.fetch([CTR])
        assert fetched.timestamp == at(35.5)  # the time asked for, not a record's
        assert ctx.origin == at(45.5)
        # a millisecond of slop either side of [label start, last record], then EOL
        assert _values(ctx, [DIS], -0.002, 0.001, 3) == ["EOL", None, None]
        assert _values(ctx, [DIS], 89.999, 0.001, 4) == [850, 850, 850, "EOL"]  # closest: 90 s
        assert _values(ctx, [CTR, DIS], 90.0015, 0.001, 1) == ["EOL"]
        # backwards from beyond the end: EOL until back inside, the origin moving on regardless
        assert _values(ctx, [CTR], 91.1, -0.5, 5) == ["EOL", "EOL", "EOL", 1210, 1209]
        ctx.set_mode(PM_MODE_INTERP, at(200), S)
        with pytest.raises(PMError):
            ctx.fetch([CTR])
        assert ctx.origin == at(201)


def test_marks_cut_each_semantics_differently(tmp_path):
    with ArchiveContext(classic(tmp_path, marks=[55])) as ctx:
        # region A (after 50, before the mark): only the discrete prior; B: nothing
        assert _values(ctx, [CTR, INS, DIS], 52, 1, 1) == [[None, None, 1120]]
        assert _values(ctx, [CTR, INS, DIS], 57, 1, 1) == [[None, None, None]]
        assert _values(ctx, [CTR, INS, DIS], 60, 1, 1) == [[1050, 940, 940]]
        assert _values(ctx, [CTR, INS, DIS], 50, 1, 1) == [[1020, 1120, 1120]]


def test_unknown_metrics_and_the_default_mode(tmp_path):
    with ArchiveContext(classic(tmp_path)) as ctx:
        assert ctx.mode == PM_MODE_FORW  # as libpcp opens an archive
        ctx.set_mode(PM_MODE_INTERP, at(20), S)
        vsets = ctx.fetch([0x0F000999, CTR]).result.vsets
        assert vsets[0].numval == PM_ERR_PMID_LOG and vsets[1].numval == 1


def _by_inst(fetched) -> dict[int, float]:
    vs = fetched.result.vsets[0]
    return dict(zip(vs.insts, vs.atoms(DBL), strict=True)) if vs.numval > 0 else {}


def test_instances_come_and_go_and_the_profile_narrows_them(tmp_path):
    with ArchiveContext(churn(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(3.4), S)
        assert _by_inst(ctx.fetch([COL])) == {0: 3.0, 1: 2.1}  # green bridged over 3 and 4
        assert _by_inst(ctx.fetch([COL])) == {0: 4.0, 1: 5.1}  # 5 s is nearer than 2 s
        assert _by_inst(ctx.fetch([COL])) == {0: 5.0, 1: 5.1, 2: 5.2}
        assert ctx.instances(INDOM) == [(0, "red"), (1, "green"), (2, "blue")]  # at 6.4 s
        ctx.set_mode(PM_MODE_INTERP, at(7.7), S)
        assert _by_inst(ctx.fetch([COL])) == {}  # just after the mark: no prior bound
        ctx.profile.delete(INDOM)
        ctx.profile.add(INDOM, [2])
        assert _by_inst(ctx.fetch([COL])) == {2: 9.2}  # at 8.7 s
        ctx.set_mode(PM_MODE_INTERP, at(2), S)
        assert ctx.instances(INDOM) == [(0, "red"), (1, "green")]  # the domain at 2 s
        assert _by_inst(ctx.fetch([COL])) == {}


# -- at random, against a plain reading ----------------------------------------------------


def _expected(records, marks, t_ns, sem):
    out = {}
    for inst in (0, 1, 2):
        held = [(t * S, v[inst]) for t, v in records if inst in v]
        has, value = plain([x for x, _ in held], [v for _, v in held],
                           [round(m * S) for m in marks], t_ns, sem, DBL)  # fmt: skip
        if has:
            out[inst] = value
    return out


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=archives(), start=st.integers(-2, 70), step=st.integers(1, 9), runs=st.data())
def test_fetches_agree_with_the_plain_reading(tmp_path, case, start, step, runs):
    records, marks = case
    if not records:
        return
    base = write_records(tmp_path, records, marks)
    end = max([t for t, _ in records] + [m for m in marks])
    before = None  # (the fetch before: its time, and whether the counter had values)
    with ArchiveContext(base) as ctx:
        ctx.set_mode(
            PM_MODE_INTERP, at(start / 2), step * S // 2 * runs.draw(st.sampled_from([1, -1]))
        )
        for n in range(runs.draw(st.integers(1, 12))):
            if n and runs.draw(st.integers(0, 4)) == 0:  # turn round, from where we are
                ctx.set_mode(PM_MODE_INTERP, None, -ctx.delta_ns)
                before = None
            t_ns = ctx.origin.sec * S + ctx.origin.nsec - T0 * S
            try:
                fetched = ctx.fetch([CTR, INS, DIS])
            except PMError as exc:
                assert exc.code == PM_ERR_EOL
                assert t_ns < -1_000_000 or t_ns > end * S + 1_000_000
                continue
            # libpcp's rule: a counter that had values at the fetch before has none at one
            # that gets to its time past a mark
            crossed = before is not None and before[1] and any(
                min(before[0], t_ns) < m * S <= max(before[0], t_ns)
                if t_ns >= before[0] else t_ns <= m * S < before[0]
                for m in marks
            )  # fmt: skip
            for vs, sem in zip(fetched.result.vsets, (COUNTER, INSTANT, DISCRETE), strict=True):
                got = dict(zip(vs.insts, vs.atoms(DBL), strict=True)) if vs.numval > 0 else {}
                want = _expected(records, marks, t_ns, sem)
                if sem == COUNTER:
                    want = {} if crossed else want
                    before = (t_ns, bool(want))
                assert got.keys() == want.keys(), (t_ns, sem)
                for inst, value in got.items():
                    assert value == pytest.approx(want[inst], rel=1e-12), (t_ns, sem, inst)


def test_a_replay_is_the_fetches_it_stands_for(tmp_path):
    base = churn(tmp_path)
    with ArchiveContext(base) as one, ArchiveContext(base) as other:
        one.set_mode(PM_MODE_INTERP, at(0.3), 700_000_000)
        other.set_mode(PM_MODE_INTERP, at(0.3), 700_000_000)
        run = one.replay([COL, 0x0F000999], 20)
        assert one.origin == at(0.3 + 14)
        for k in range(20):
            try:
                fetched = other.fetch([COL, 0x0F000999])
            except PMError:
                assert run.eol[k]
                continue
            assert not run.eol[k]
            assert [m.value_set(k) for m in run.metrics] == list(fetched.result.vsets)


@st.composite
def steady_archives(draw):
    """Records that each hold all 3 instances (one layout: what Columns reads strided),
    some at the same time, with random marks between records."""
    times = sorted(draw(st.lists(st.integers(1, 60), min_size=1, max_size=25)))
    records = [(t, {i: draw(st.integers(0, 10_000)) for i in (0, 1, 2)}) for t in times]
    marks = [t + 0.5 for t in sorted(set(times)) if draw(st.integers(0, 4)) == 0]
    return records, marks


@settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=steady_archives(), start=st.integers(-8, 260), step=st.integers(1, 80),
       count=st.integers(1, 60))  # fmt: skip
def test_a_replay_reading_only_the_records_it_needs_is_the_same(tmp_path, case, start, step, count):
    """A replay of an archive of one layout reads only the records either side of each
    fetch (Columns.block's NEAR): it is the replay that reads every record."""
    from unittest.mock import patch

    from purepcp.pmapi.archive.columns import Columns

    records, marks = case
    base = write_records(tmp_path, records, marks)
    real = Columns.block
    runs = []
    for every in (False, True):
        with (
            ArchiveContext(base) as ctx,
            patch.object(Columns, "block", lambda self, pmid, lo, hi, near=None, every=every:
                         real(self, pmid, lo, hi, None if every else near)),
        ):  # fmt: skip
            ctx.set_mode(PM_MODE_INTERP, at(start / 4), step * S // 4)
            runs.append(ctx.replay([CTR, INS, DIS], count))
    near, every = runs
    assert np.array_equal(near.times, every.times) and np.array_equal(near.eol, every.eol)
    assert near.fail_code == every.fail_code
    for a, b in zip(near.metrics, every.metrics, strict=True):
        assert np.array_equal(a.has, b.has) and np.array_equal(a.insts, b.insts)
        assert np.array_equal(np.where(a.has, a.values, 0), np.where(b.has, b.values, 0))


# -- pmval -a ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["-t", "3", "ex.counter"],
        ["-t", "2.5", "-r", "ex.counter"],
        ["-t", "7", "ex.instant"],
        ["-t", "4", "-S", "+30", "-T", "+45", "ex.discrete"],
        ["-t", "1", "-f", "3", "ex.counter"],
        ["-t", "0.9", "-s", "40", "ex.discrete"],
    ],
)
def test_pmval_replays_as_its_fetch_loop_would(tmp_path, monkeypatch, argv):
    base = classic(tmp_path, marks=[55])
    full = ["-a", base, "-z", *argv]
    fast = run_pmval(monkeypatch, full)
    assert fast == run_pmval(monkeypatch, full, per_fetch=True)
    assert "No values available" in fast or "-r" in argv or "-T" in argv


@pytest.mark.parametrize(
    "argv", [["-t", "0.5"], ["-t", "2", "-i", "blue,red"], ["-t", "1.5", "-r"]]
)
def test_pmval_replays_instances_as_its_fetch_loop_would(tmp_path, monkeypatch, argv):
    full = ["-a", churn(tmp_path), "-z", *argv, "c.level"]
    fast = run_pmval(monkeypatch, full)
    assert fast == run_pmval(monkeypatch, full, per_fetch=True)
    assert "?" in fast


def test_pmval_replay_by_hand(tmp_path, monkeypatch):
    """Rates every 10 s of the seed's counter: the fetch at the label start has no prior,
    so the first value (10 s) only starts the rates; 60 s is bounded by records, but
    the fetch before it (50 s) had a value and the mark at 55 s lies between them, so
    (libpcp's rule, no rate across a mark) 60 s has none, and 70 s starts the rates
    again (PCP 6.0.3's pmval prints these lines)."""
    out = run_pmval(
        monkeypatch, ["-a", classic(tmp_path, marks=[55]), "-z", "-t", "10", "ex.counter"]
    )
    assert out.splitlines()[-12:] == [
        "samples:   10",
        "interval:  10.00 sec",
        "22:13:20.000  No values available",
        "22:13:30.000  No values available",
        "22:13:40.000    11.00  ",
        "22:13:50.000    30.00  ",
        "22:14:00.000     0.0   ",
        "22:14:10.000     0.0   ",
        "22:14:20.000  No values available",
        "22:14:30.000  No values available",
        "22:14:40.000    10.00  ",
        "22:14:50.000     1.000 ",
    ]


# -- beside PCP's pmval (interop) ------------------------------------------------------------


def _pcp_archive(path) -> str:
    """A counter, a level and a discrete value in 3 instances, logged every second for a
    minute, the middle instance missing for a while."""
    base = str(path / "pcp")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(CTR, PMType.PM_TYPE_U64, INDOM, COUNTER), ["i.counter"])
        w.put_desc(Desc(INS, DBL, INDOM, INSTANT), ["i.level"])
        w.put_desc(Desc(DIS, PMType.PM_TYPE_32, INDOM, DISCRETE), ["i.state"])
        w.put_indom(at(0), INDOM, [0, 1, 2], ["a", "b", "c"])
        w.put_index(at(0))  # (PCP reads an archive with an empty index as empty)
        rng = np.random.default_rng(7)
        total = np.zeros(3, dtype=np.int64)
        for t in range(60):
            insts = [0, 2] if 20 <= t < 27 else [0, 1, 2]
            total += rng.integers(0, 5000, size=3)
            w.put_result(Result(at(t + 0.25), (
                ValueSet.of_atoms(CTR, PMType.PM_TYPE_U64, [(i, int(total[i])) for i in insts]),
                ValueSet.of_atoms(INS, DBL, [(i, float(rng.normal(50, 20))) for i in insts]),
                ValueSet.of_atoms(DIS, PMType.PM_TYPE_32, [(i, int(t // 10 + i)) for i in insts]),
            )))  # fmt: skip
    return base


_GAP = re.compile(r"^22:13:4[0-6]\.")  # b's gap (20.25 to 26.25 s): the two rules differ there


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["-t", "0.7", "i.counter"],
        ["-t", "3", "-r", "i.counter"],
        ["-t", "1.3", "-S", "+5.1", "-T", "+40", "i.counter"],
        ["-t", "2", "-r", "-i", "c,a", "i.counter"],
        ["-t", "1", "-S", "+0.4", "i.level"],  # nearer the prior: both rules agree
        ["-t", "2", "-S", "+0.4", "i.state"],
    ],
)
def test_replay_beside_pcps_pmval(tmp_path, monkeypatch, argv):
    """Counters everywhere; instantaneous and discrete values where the closest rule and
    6.0.3's prior rule agree (everywhere but the gap in b, where they do not)."""
    require_reference("pmval")
    base = _pcp_archive(tmp_path)
    full = ["-a", base, "-z", *argv]
    ours = run_pmval(monkeypatch, full).splitlines()
    env = {"TZ": "UTC", "PATH": "/usr/bin:/bin"}
    run = subprocess.run(["pmval", *full], capture_output=True, text=True, env=env, check=True)
    theirs = carried(run.stdout).splitlines()
    if argv[-1] != "i.counter":
        ours, theirs = (
            [line for line in lines if not _GAP.match(line)] for lines in (ours, theirs)
        )
    assert ours == theirs
    assert len(ours) > 15


def test_the_docs_worked_example(tmp_path, monkeypatch):
    """docs/archives.md's replay example: its archive, its pmval lines, its Python."""
    import sys
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "archives.md").read_text()
    part = doc[doc.index("## Replaying an archive") :]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "TZ": "UTC"}
    for code in blocks[:1]:
        subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True)
    monkeypatch.chdir(tmp_path)
    for command, shown in re.findall(r"\$ pmval (.*?)\n(.*?)(?=\$ |```)", part, re.S):
        want = [line.split("  #")[0].rstrip() for line in shown.strip().splitlines()]
        got = run_pmval(monkeypatch, command.split()).splitlines()
        monkeypatch.chdir(tmp_path)
        assert [line.rstrip() for line in got[-len(want) :]] == want, command
    done = subprocess.run([sys.executable, "-c", blocks[1]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout == "0\n[400, 650, 1120, 940, 580, 850]\n"


def test_a_counter_of_strings_fails_only_where_it_would_have_a_value(tmp_path):
    from purepcp.pmapi.errors import PM_ERR_TYPE

    base = str(tmp_path / "words")
    string = PMType.PM_TYPE_STRING
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(CTR, string, sem=COUNTER), ["s.word"])
        for t in range(1, 5):
            w.put_result(Result(at(t), (ValueSet.of_atoms(CTR, string, [(NULL, f"x{t}")]),)))
    with ArchiveContext(base) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(0), S // 2)
        numvals = [ctx.fetch([CTR]).result.vsets[0].numval for _ in range(9)]
    assert numvals == [0, 0] + [PM_ERR_TYPE] * 7  # (as PCP's: no bounds before 1 s, no error)
