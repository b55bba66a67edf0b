"""The interpolation rules of seed 001 (with its erratum), on its own examples and at random."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.archive.interp import Series, c_integer, interpolate, series_of
from purepcp.pmapi.cnumbers import to_int
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.types import PMType
from tests.support.examples import examples
from tests.support.replay_archives import (
    COUNTER,
    COUNTS,
    DISCRETE,
    INSTANT,
    LEVELS,
    TIMES,
    S,
    plain,
)


def replay(values, sem, vtype, step, until=99, marks=()):
    series = series_of([t * S for t in TIMES], values, vtype)
    at = list(range(0, until + 1, step))
    got = interpolate(series, [t * S for t in at], sem, vtype, np.array(marks, dtype=np.int64) * S)
    pairs = zip(at, got.values, got.has, strict=True)
    return {t: v.item() if isinstance(v, np.generic) else v for t, v, has in pairs if has}


def test_counter_every_25():
    assert replay(COUNTS, COUNTER, PMType.PM_TYPE_U32, 25) == {25: 870, 50: 1020, 75: 1150}


def test_counter_every_3():
    got = replay(COUNTS, COUNTER, PMType.PM_TYPE_DOUBLE, 3)
    assert min(got) == 12 and max(got) == 90  # nothing before 10 or after 90
    for t, v in got.items():
        i = max(j for j, x in enumerate(TIMES) if x <= t)
        if TIMES[i] == t:
            assert v == COUNTS[i]
        else:
            rise = (COUNTS[i + 1] - COUNTS[i]) / 10
            assert v == pytest.approx(COUNTS[i] + (t - TIMES[i]) * rise)
    # integers round as libpcp does: 0.5 added, then truncated
    ints = replay(COUNTS, COUNTER, PMType.PM_TYPE_U32, 3)
    assert ints[12] == 632 and ints[87] == 1207 and ints[21] == 750


def test_instantaneous_every_15_takes_the_closest():
    got = replay(LEVELS, INSTANT, PMType.PM_TYPE_U32, 15)
    # 15 and 75 are midway: the tie goes to the prior observation
    assert got == {15: 400, 30: 650, 45: 1120, 60: 940, 75: 580, 90: 850}


def test_discrete_every_4_carries_on_after_the_last():
    got = replay(LEVELS, DISCRETE, PMType.PM_TYPE_U32, 4)
    assert min(got) == 12  # none before the first observation
    assert got[12] == 400 and got[16] == 880 and got[20] == 880 and got[24] == 880
    assert got[28] == 650 and got[64] == 940 and got[68] == 580 and got[72] == 580
    assert got[76] == 1200  # nearer 80 than 70
    assert got[92] == 850 and got[96] == 850  # after the last: the prior alone


def test_strings_take_the_prior():
    words = list("abcdefghi")
    got = replay(words, INSTANT, PMType.PM_TYPE_STRING, 5)
    assert got[15] == "a" and got[19 - 4] == "a" and got[20] == "b" and got[90] == "i"
    assert 95 not in got
    with pytest.raises(PMError):
        replay(words, COUNTER, PMType.PM_TYPE_STRING, 5)


def test_marks_cut_the_bounds():
    """A mark at 55: region A (after 50, up to 55) has no next bound, region B (55 up to 60)
    no prior; a discrete metric keeps its prior through A only."""
    counter = replay(COUNTS, COUNTER, PMType.PM_TYPE_DOUBLE, 1, marks=[55])
    assert 50 in counter and 60 in counter
    assert not any(t in counter for t in range(51, 60))
    instant = replay(LEVELS, INSTANT, PMType.PM_TYPE_U32, 1, marks=[55])
    assert not any(t in instant for t in range(51, 60))
    discrete = replay(LEVELS, DISCRETE, PMType.PM_TYPE_U32, 1, marks=[55])
    assert all(discrete[t] == 1120 for t in range(50, 55))
    assert not any(t in discrete for t in range(55, 60)) and discrete[60] == 940


def test_counter_wrap_only_when_asked():
    series = series_of([0, 10 * S], [2**32 - 100, 100], PMType.PM_TYPE_U32)
    down = interpolate(series, [5 * S], COUNTER, PMType.PM_TYPE_U32, wrap=False)
    wrapped = interpolate(series, [5 * S], COUNTER, PMType.PM_TYPE_U32, wrap=True)
    assert down.values[0] == (2**32 - 100 + 100) // 2  # straight down the line
    assert wrapped.values[0] == 0  # half of the 200 steps across the wrap


def test_exact_times_are_exact_for_big_integers():
    big = [2**63 + 1, 2**64 - 3]
    series = series_of([0, 10 * S], big, PMType.PM_TYPE_U64)
    got = interpolate(series, [0, 10 * S], COUNTER, PMType.PM_TYPE_U64)
    assert [int(v) for v in got.values] == big


# -- against a plain per-value implementation ---------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.data(),
    sem=st.sampled_from([COUNTER, INSTANT, DISCRETE]),
    vtype=st.sampled_from([PMType.PM_TYPE_64, PMType.PM_TYPE_DOUBLE]),
)
def test_agrees_with_the_plain_reading(data, sem, vtype):
    times = sorted(set(data.draw(st.lists(st.integers(0, 200), min_size=0, max_size=12))))
    values = data.draw(
        st.lists(st.integers(-(10**6), 10**6), min_size=len(times), max_size=len(times))
    )
    if vtype == PMType.PM_TYPE_DOUBLE:
        values = [v / 8 for v in values]
    marks = sorted(
        set(data.draw(st.lists(st.integers(0, 200), max_size=3))) - set(times)
    )  # (pmlogger never writes a mark at a record's own time)
    start = data.draw(st.integers(-10, 210))
    step = data.draw(st.integers(1, 30)) * data.draw(st.sampled_from([1, -1]))
    at = [start + i * step for i in range(data.draw(st.integers(1, 25)))]
    series = Series(np.array(times, dtype=np.int64), np.array(values, dtype=np.float64
                    if vtype == PMType.PM_TYPE_DOUBLE else np.int64))  # fmt: skip
    # (in whole seconds, so that libpcp's arithmetic on seconds as doubles is exact)
    series = Series(series.times * S, series.values)
    got = interpolate(series, np.array(at) * S, sem, vtype, np.array(marks, dtype=np.int64) * S)
    for t, has, value in zip(at, got.has, got.values, strict=True):
        want_has, want = plain(times, values, marks, t, sem, vtype)
        assert bool(has) == want_has, (t, times, marks)
        if want_has:
            assert value.item() == pytest.approx(want, rel=1e-12, abs=1e-9), (t, times, values)


def test_observations_from_an_archive(tmp_path):
    """Instances coming and going, a record without the metric, a mark: each instance's
    series holds exactly the records that hold it."""
    from purepcp.pmapi.archive import Archive, ArchiveWriter
    from purepcp.pmapi.archive.columns import Columns
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.values import Result, Timestamp, ValueSet

    u32, dbl, string = PMType.PM_TYPE_U32, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
    start = Timestamp(1_700_000_000, 0)
    base = str(tmp_path / "a")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=start) as w:
        w.put_desc(Desc(1, u32, 5, COUNTER), ["m.count"])
        w.put_desc(Desc(2, dbl, sem=INSTANT), ["m.level"])
        w.put_desc(Desc(3, string, sem=DISCRETE), ["m.word"])
        w.put_indom(start, 5, [0, 1, 2], ["a", "b", "c"])

        def at(sec):
            return Timestamp(start.sec + sec, 0)

        w.put_result(
            Result(
                at(0),
                (
                    ValueSet.of_atoms(1, u32, [(0, 10), (1, 20)]),
                    ValueSet.of_atoms(3, string, [(0xFFFFFFFF, "x")]),
                ),
            )
        )
        w.put_result(Result(at(1), (ValueSet.of_atoms(2, dbl, [(0xFFFFFFFF, 0.5)]),)))
        w.put_result(Result(at(2), (ValueSet.of_atoms(1, u32, [(1, 25), (2, 7)]),)))
        w.put_mark(Timestamp(start.sec + 2, 1_000_000))
        w.put_result(Result(at(5), (ValueSet.of_atoms(1, u32, [(0, 3), (2, 9)]),
                                    ValueSet.of_atoms(2, dbl, [(0xFFFFFFFF, 1.5)]))))  # fmt: skip
    with Archive(base) as a:
        obs = Columns(a)
    s0 = start.sec * S
    assert obs.marks.tolist() == [s0 + 2 * S + 1_000_000]
    counts = obs.series(1)
    assert sorted(counts) == [0, 1, 2]
    assert counts[0].times.tolist() == [s0, s0 + 5 * S] and counts[0].values.tolist() == [10, 3]
    assert counts[1].values.tolist() == [20, 25] and counts[2].values.tolist() == [7, 9]
    assert counts[0].values.dtype == np.uint32
    assert obs.series(2)[0xFFFFFFFF].values.tolist() == [0.5, 1.5]
    assert obs.series(3)[0xFFFFFFFF].values.tolist() == ["x"]
    assert obs.series(99) == {} and obs.pmids() == [1, 2, 3]
    # instance 0 skips the record at 2 s that lacks it; the mark still cuts it
    got = interpolate(counts[0], [s0 + S, s0 + 4 * S], COUNTER, u32, obs.marks)
    assert got.has.tolist() == [False, False]
    got = interpolate(counts[1], [s0 + S], COUNTER, u32, obs.marks)
    assert got.has.tolist() == [True] and got.values.tolist() == [23]  # trunc(0.5 + 22.5)


#: Doubles at the edges of the integer types' ranges, and past them.
_CAST_EDGES = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, -0.5, -1.5, 1.5, 2.0**31,
               2.0**31 - 0.5, -(2.0**31), -(2.0**31) - 1, 2.0**32, 4294967301.0, -(2.0**32),
               2.0**63, 2.0**63 - 1024, -(2.0**63), -(2.0**63) - 2048, 2.0**64, 2.0**64 - 2048,
               1.5 * 2.0**64, 1e30, -1e30]  # fmt: skip


@settings(max_examples=examples(300))
@given(st.lists(st.sampled_from(_CAST_EDGES) | st.floats(width=64), min_size=1, max_size=16))
def test_c_integer_follows_cnumbers_to_int(xs):
    """interp's vectorised cast gives, element for element, what the scalar rule gives."""
    for dtype, bits, signed in ((np.int32, 32, True), (np.uint32, 32, False),
                                (np.int64, 64, True), (np.uint64, 64, False)):  # fmt: skip
        assert c_integer(np.array(xs), dtype).tolist() == [to_int(x, bits, signed) for x in xs]
