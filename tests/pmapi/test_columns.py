"""Columns: an archive's series read as NumPy columns, equal to what Observations decodes."""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Sequence
from itertools import pairwise
from typing import Any
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.archive import Archive, ArchiveError, ArchiveWriter, columns
from purepcp.pmapi.archive.columns import Columns
from purepcp.pmapi.archive.interp import NSEC, NUMERIC_DTYPES, Series
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import NO_BLOCKS, Result, Timestamp, ValueSet
from tests.support.examples import examples

T0 = 1_700_000_000 * NSEC
I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLOAT, DOUBLE, STRING = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
ATOMS = {
    I32: st.integers(-(1 << 31), (1 << 31) - 1),
    U32: st.integers(0, (1 << 32) - 1),
    I64: st.integers(-(1 << 63), (1 << 63) - 1),
    U64: st.integers(0, (1 << 64) - 1),
    FLOAT: st.floats(width=32),
    DOUBLE: st.floats(),
    STRING: st.sampled_from(["", "up", "down", "é"]),  # few, so that layouts recur
}

#: ("rec", ms after the last step, value sets) | ("mark", ms) | ("vol",)
Step = tuple[Any, ...]


class Observations:
    """The plain reading Columns must equal: every record decoded by the reader, each
    value set's instances and values collected, sorted out per instance on demand."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        marks: list[int] = []
        chunks: dict[int, list[tuple[int, object, object]]] = {}
        for rec in archive.records():
            stamp = rec.stamp.sec * NSEC + rec.stamp.nsec
            if rec.is_mark:
                marks.append(stamp)
                continue
            for vs in rec.result.vsets:
                if vs.numval <= 0:
                    continue
                desc = archive.descs.get(vs.pmid)
                atoms = vs.atoms(desc.type if desc is not None else None)
                chunks.setdefault(vs.pmid, []).append((stamp, vs.insts, atoms))
        self.marks = np.array(sorted(marks), dtype=np.int64)
        self._chunks = chunks
        self._series: dict[int, dict[int, Series]] = {}

    def pmids(self) -> list[int]:
        """The metrics with at least one value in the archive."""
        return sorted(self._chunks)

    def series(self, pmid: int) -> dict[int, Series]:
        """PMID's observations, per instance (an empty dict if it has none)."""
        done = self._series.get(pmid)
        if done is not None:
            return done
        chunks = self._chunks.get(pmid, [])
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        out: dict[int, Series] = {}
        if chunks:
            counts = [len(insts) for _, insts, _ in chunks]
            times = np.repeat(np.array([s for s, _, _ in chunks], dtype=np.int64), counts)
            insts = np.concatenate([np.asarray(i, dtype=np.int64) for _, i, _ in chunks])
            if dtype is object:
                values = np.empty(len(insts), dtype=object)
                values[:] = [v for _, _, vals in chunks for v in vals]
            else:
                values = np.concatenate([np.asarray(v, dtype=dtype) for _, _, v in chunks])
            order = np.lexsort((times, insts))  # by instance, then time (stable)
            insts, times, values = insts[order], times[order], values[order]
            firsts = np.flatnonzero(np.r_[True, insts[1:] != insts[:-1]])
            for a, b in pairwise([*firsts.tolist(), len(insts)]):
                out[int(insts[a])] = Series(times[a:b], values[a:b])
        self._series[pmid] = out
        return out


def stamp(ns: int) -> Timestamp:
    return Timestamp(ns // NSEC, ns % NSEC)


def write(
    base: str,
    version: int,
    metrics: Sequence[tuple[int, int]],
    steps: Sequence[Step],
    undescribed: frozenset[int] = frozenset(),
    start: int = T0,
) -> None:
    """An archive of STEPS; metrics in UNDESCRIBED get values but no descriptor."""
    with ArchiveWriter(
        base, hostname="h", timezone="UTC", start=stamp(start), version=version
    ) as w:
        for pmid, vtype in metrics:
            if pmid in undescribed:
                w.descs[pmid] = Desc(pmid, vtype)  # (the writer's own check only)
            else:
                w.put_desc(Desc(pmid, vtype), [f"m.x{pmid}"])
        now = start
        for step in steps:
            if step[0] == "vol":
                w.new_volume(stamp(now))
                continue
            now += step[1] * 1_000_000
            if step[0] == "mark":
                w.put_mark(stamp(now))
            else:
                w.put_result(Result(stamp(now), step[2]))


def same_series(got: dict, want: dict) -> None:
    """Equal series: the same instances, times, value types and values (floats bitwise)."""
    assert sorted(got) == sorted(want)
    for inst, w in want.items():
        g = got[inst]
        assert g.times.dtype == np.int64 and np.array_equal(g.times, w.times), inst
        assert g.values.dtype == w.values.dtype, inst
        if w.values.dtype == object:
            assert [repr(v) for v in g.values] == [repr(v) for v in w.values], inst
        else:
            assert g.values.tobytes() == w.values.tobytes(), inst


def check_same(a: Archive) -> Columns:
    """Columns over A equals Observations over A; returns the Columns."""
    obs = Observations(a)
    cols = Columns(a)
    assert cols.problem is None
    assert cols.pmids() == obs.pmids()
    for pmid in obs.pmids():
        same_series(cols.series(pmid), obs.series(pmid))
    assert cols.series(0xDEAD) == {}
    assert np.array_equal(cols.marks, obs.marks) and cols.marks.dtype == np.int64
    records = list(a.records())
    assert cols.times.tolist() == [r.stamp.sec * NSEC + r.stamp.nsec for r in records]
    assert cols.fast_records + cols.careful_records == sum(not r.is_mark for r in records)
    for pmid in obs.pmids():
        same_blocks(cols, pmid)
    return cols


def _turned(self: Columns, t, g, rows) -> np.ndarray:
    return np.ascontiguousarray(self._gather(t, g, rows).T)


def same_blocks(cols: Columns, pmid: int) -> int:
    """block() of PMID, whole and windowed, equals the block made by gathering the values
    and turning them (the strided read's reference); returns how many it read strided."""
    times = cols.times
    windows = [(None, None)]
    if len(times) > 2:
        windows.append((int(np.sort(times)[1]), int(np.sort(times)[-2])))
    strided = 0
    for lo, hi in windows:
        with patch.object(Columns, "_gather", side_effect=Columns._gather, autospec=True) as g:
            got = cols.block(pmid, lo, hi)
        strided += not g.called
        with patch.object(Columns, "_gather_rows", _turned):
            want = cols.block(pmid, lo, hi)
        assert np.array_equal(got.times, want.times) and np.array_equal(got.insts, want.insts)
        assert np.array_equal(got.present, want.present)
        assert got.values.dtype == want.values.dtype and got.values.shape == want.values.shape
        if want.values.dtype == object:
            assert [repr(v) for v in got.values.flat] == [repr(v) for v in want.values.flat]
        else:
            assert got.values.tobytes() == want.values.tobytes()
    return strided


# -- random archives -----------------------------------------------------------------


@st.composite
def plans(draw: st.DrawFn) -> tuple[int, list, list[Step], frozenset[int]]:
    """A random archive: metrics of several types, a few layouts, records, marks, volumes."""
    version = draw(st.sampled_from([2, 3]))
    types = draw(st.lists(st.sampled_from(list(ATOMS)), min_size=1, max_size=5))
    metrics = [(0x0F000100 + i, t) for i, t in enumerate(types)]
    singular = [draw(st.booleans()) for _ in metrics]
    # (one metric at least is described: an archive of none is refused as libpcp does)
    undescribed = frozenset(p for p, _ in metrics[1:] if draw(st.integers(0, 9)) == 0)
    insts = st.lists(st.integers(0, 5), min_size=1, max_size=4)  # (an instance may repeat)
    entry = st.tuples(st.integers(0, len(metrics) - 1), insts, st.integers(0, 9))
    layouts = draw(st.lists(st.lists(entry, max_size=len(metrics) + 1), min_size=1, max_size=3))
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["rec"] * 8 + ["mark", "vol"]))
        ms = draw(st.sampled_from([0, 1, 250, 1000, 1000, -3]))
        if kind == "vol":
            steps.append(("vol",))
        elif kind == "mark":
            steps.append(("mark", ms))
        else:
            vsets = []
            for m, ids, error in draw(st.sampled_from(layouts)):
                pmid, vtype = metrics[m]
                if error == 0:
                    vsets.append(ValueSet.of_error(pmid, -12345))
                    continue
                ids = [PM_IN_NULL] if singular[m] else ids
                vsets.append(ValueSet.of_atoms(pmid, vtype, [(i, draw(ATOMS[vtype])) for i in ids]))
            steps.append(("rec", ms, tuple(vsets)))
    return version, metrics, steps, undescribed


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plans(), few=st.sampled_from([1, 4]), waste=st.sampled_from([0, 2]))
def test_random_archives_give_the_series_observations_gives(tmp_path_factory, plan, few, waste):
    """FEW (the fewest records a template must match) and WASTE (how many compares a
    layout of few records may cost) vary, so records go either way and series mix both."""
    version, metrics, steps, undescribed = plan
    base = str(tmp_path_factory.mktemp("c") / "a")
    write(base, version, metrics, steps, undescribed)
    with (
        Archive(base) as a,
        patch.object(columns, "_FEW", few),
        patch.object(columns, "_WASTE", waste),
    ):
        check_same(a)


def _layered(n: int = 300) -> tuple[list, list[Step]]:
    """N records in three recurring layouts (instances churn), marks and a volume switch."""
    metrics = [(1, U64), (2, DOUBLE), (3, I32), (4, FLOAT), (5, STRING), (6, U32)]
    shapes = [[0, 1, 2], [0, 1, 2, 3], [2, 1]]
    steps: list[Step] = []
    for i in range(n):
        if i and i % 100 == 0:
            steps.append(("mark", 10))
        if i == n // 2:
            steps.append(("vol",))
        ids = shapes[(i // 7) % 3]
        vsets = [
            ValueSet.of_atoms(1, U64, [(k, (i << 40) + k) for k in ids]),
            ValueSet.of_atoms(2, DOUBLE, [(PM_IN_NULL, i / 3)]),
            ValueSet.of_atoms(3, I32, [(k, -i * k) for k in ids]),
            ValueSet.of_atoms(4, FLOAT, [(k, i + k / 4) for k in ids]),
            ValueSet.of_atoms(5, STRING, [(PM_IN_NULL, "steady")]),
        ]
        if i % 2:
            vsets.append(ValueSet.of_atoms(6, U32, [(7, i)]))  # in every other record only
        steps.append(("rec", 1000, tuple(vsets)))
    return metrics, steps


@pytest.mark.parametrize("version", [2, 3])
def test_most_records_take_the_fast_way(tmp_path, version):
    base = str(tmp_path / "a")
    metrics, steps = _layered()
    write(base, version, metrics, steps)
    with Archive(base) as a:
        assert len(a.volume_paths) == 2
        cols = check_same(a)
    assert cols.fast_records == 300 and cols.careful_records == 0
    counts = cols.series(1)
    assert sorted(counts) == [0, 1, 2, 3]
    assert len(counts[3].times) == sum((i // 7) % 3 == 1 for i in range(300))  # one layout's
    assert counts[1].values.tolist() == [(i << 40) + 1 for i in range(300)]
    assert cols.series(5)[PM_IN_NULL].values.tolist() == ["steady"] * 300
    assert len(cols.series(6)[7].times) == 150


@pytest.mark.parametrize("version", [2, 3])
def test_blocks_of_one_layout_are_read_strided(tmp_path, version):
    """A steady logger's archive (one layout, instances out of order, two volumes): each
    numeric metric's block is read in strided passes, and equals the gathered one."""
    base = str(tmp_path / "a")
    metrics = [(1, U64), (2, I64), (3, DOUBLE), (4, I32), (5, U32), (6, FLOAT)]
    ids = [3, 1, 2, 0]
    steps: list[Step] = []
    for i in range(60):
        if i == 30:
            steps.append(("vol",))
        vsets = (
            ValueSet.of_atoms(1, U64, [(k, (i << 40) + k * 0x01000001) for k in ids]),
            ValueSet.of_atoms(2, I64, [(k, -(i << 35) - k) for k in ids]),
            ValueSet.of_atoms(3, DOUBLE, [(k, i / 7 - k) for k in ids]),
            ValueSet.of_atoms(4, I32, [(k, -i * k) for k in ids]),
            ValueSet.of_atoms(5, U32, [(k, i * 65537 + k) for k in ids]),
            ValueSet.of_atoms(6, FLOAT, [(k, i + k / 4) for k in ids]),
        )
        steps.append(("rec", 1000, vsets))
    write(base, version, metrics, steps)
    with Archive(base) as a:
        cols = check_same(a)
        strided = {pmid: same_blocks(cols, pmid) for pmid, _ in metrics}
    # (both windows of each, but the float's: the reader takes floats through a double)
    assert strided == {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 0}


def test_words_of_64_bit_values_and_block_offsets(tmp_path):
    """Values whose high and low words differ, in blocks, with a v3 time past 2**32 s:
    a swapped word, a block offset off by a word, or a wrong seconds word would show."""
    big = 0x0123456789ABCDEF
    third = struct.unpack(">d", bytes.fromhex("3ff5555555555555"))[0]
    metrics = [(1, U64), (2, I64), (3, DOUBLE), (4, FLOAT), (5, U32), (6, FLOAT)]
    steps: list[Step] = []
    for i in range(20):
        vsets = (
            ValueSet.of_atoms(5, U32, [(0, 0xDEADBEEF - i)]),
            ValueSet.of_atoms(1, U64, [(0, big + i), (1, (1 << 64) - 1 - i)]),
            ValueSet.of_atoms(2, I64, [(0, -big - i)]),
            ValueSet.of_atoms(3, DOUBLE, [(0, third + i), (9, -(2.0**-1070))]),
            ValueSet.of_atoms(4, FLOAT, [(0, 1.5 + i)]),
            # an insitu float, as old archives hold them: the IEEE bits in the value word
            ValueSet(6, 1, ValFmt.PM_VAL_INSITU, NO_BLOCKS, array("I", [3]), array("I", [i])),
        )
        steps.append(("rec", 1500, vsets))
    start = ((1 << 33) + 12345) * NSEC + 123_456_789  # seconds past 32 bits; nanoseconds
    base = str(tmp_path / "a")
    write(base, 3, metrics, steps, start=start)
    with Archive(base) as a:
        cols = check_same(a)
    assert cols.fast_records == 20
    times = [start + (i + 1) * 1_500_000_000 for i in range(20)]
    u64 = cols.series(1)
    assert u64[0].times.tolist() == times
    assert u64[0].values.tolist() == [big + i for i in range(20)]
    assert u64[1].values.tolist() == [(1 << 64) - 1 - i for i in range(20)]
    assert cols.series(2)[0].values.tolist() == [-big - i for i in range(20)]
    assert cols.series(3)[0].values.tolist() == [third + i for i in range(20)]
    assert cols.series(3)[9].values.tolist() == [-(2.0**-1070)] * 20
    assert cols.series(4)[0].values.tolist() == [1.5 + i for i in range(20)]
    assert cols.series(5)[0].values.tolist() == [0xDEADBEEF - i for i in range(20)]
    bits = cols.series(6)[3].values
    assert bits.dtype == np.float32 and bits.view(np.uint32).tolist() == list(range(20))


def test_a_signalling_nan_float_reads_as_the_reader_reads_it(tmp_path):
    """A float block holding a signalling NaN: the reader quiets it (via a Python float)."""
    steps: list[Step] = [("rec", 1000, (ValueSet.of_atoms(1, FLOAT, [(0, 2.0)]),))] * 6
    base = str(tmp_path / "a")
    write(base, 2, [(1, FLOAT)], steps)
    path = base + ".0"
    with open(path, "rb") as f:
        data = bytearray(f.read())
    two = struct.pack(">f", 2.0)
    at = data.find(two)
    data[at : at + 4] = struct.pack(">I", 0x7F800001)  # the first record's value
    with open(path, "wb") as f:
        f.write(data)
    with Archive(base) as a:
        cols = check_same(a)
    assert cols.fast_records == 6
    assert cols.series(1)[0].values.view(np.uint32)[0] == 0x7FC00001


def test_many_layouts_of_one_length_do_not_go_quadratic(tmp_path):
    """600 layouts of one length (a new instance every 5 records), and records each of
    its own layout and length (a string that grows): no template for most."""
    steps: list[Step] = [
        (
            "rec",
            1000,
            (ValueSet.of_atoms(1, U64, [(i // 5, i)]), ValueSet.of_atoms(2, U32, [(0, i)])),
        )
        for i in range(3000)
    ]
    steps += [
        (
            "rec",
            1,
            (ValueSet.of_atoms(2, U32, [(0, i)]), ValueSet.of_atoms(3, STRING, [(0, "x" * i)])),
        )
        for i in range(300)
    ]
    base = str(tmp_path / "a")
    write(base, 2, [(1, U64), (2, U32), (3, STRING)], steps)
    with Archive(base) as a:
        cols = check_same(a)
    assert 0 < cols.fast_records < 1000  # the template budget ran out: read one by one


def test_blocks_sharing_words_go_the_careful_way(tmp_path):
    """Two values pointing at one block (the reader accepts it): not a template."""
    vsets = (ValueSet.of_atoms(1, U64, [(0, 5), (1, 6)]),)
    steps: list[Step] = [("rec", 1000, vsets)] * 8
    base = str(tmp_path / "a")
    write(base, 2, [(1, U64)], steps)
    with Archive(base) as a:
        where = [r.offset for r in a.records()]
    for at in where[1:3]:
        with open(base + ".0", "rb") as f:
            f.seek(at + 4 * 8)  # v2: len, sec, usec, numpmid, pmid, numval, valfmt, inst, offset
            first = f.read(4)
        _patch(base + ".0", at + 4 * 10, struct.unpack(">I", first)[0])  # the second offset
    with Archive(base) as a:
        cols = check_same(a)
    assert cols.careful_records == 2 and cols.fast_records == 6
    assert cols.series(1)[1].values.tolist() == [6, 5, 5, 6, 6, 6, 6, 6]


# -- damage --------------------------------------------------------------------------


def _damaged(tmp_path, version: int, steps: list[Step], damage) -> tuple[Columns, list]:
    """Columns over the archive of STEPS after DAMAGE(volume paths, where the records are),
    which returns how many records are left before the damage; checked against the
    reader.  Returns the Columns and the records' (volume, offset) before the damage."""
    metrics = [(1, U64), (2, DOUBLE), (3, STRING)]
    base = str(tmp_path / "bad")
    write(base, version, metrics, steps)
    with Archive(base) as a:
        where = [(r.vol, r.offset) for r in a.records()]
        paths = dict(a.volume_paths)
    kept = damage(paths, where)
    with Archive(base) as a:
        cols = Columns(a)
        with pytest.raises(ArchiveError) as caught:
            list(a.records())
    want = caught.value
    assert cols.problem is not None
    assert (cols.problem.code, cols.problem.file, cols.problem.offset, str(cols.problem)) == (
        want.code,
        want.file,
        want.offset,
        str(want),
    )
    # every record before the damage, as an undamaged archive of just those records has them
    good = str(tmp_path / "good")
    write(good, version, metrics, _prefix(steps, kept))
    with Archive(good) as g:
        obs = Observations(g)
        assert len(cols.times) == kept == len(list(g.records()))
        assert cols.pmids() == obs.pmids()
        for pmid in obs.pmids():
            same_series(cols.series(pmid), obs.series(pmid))
        assert np.array_equal(cols.marks, obs.marks)
    return cols, where


def _prefix(steps: list[Step], records: int) -> list[Step]:
    """The steps that write the first RECORDS records (and the volume switches among them)."""
    out: list[Step] = []
    for step in steps:
        if step[0] != "vol":
            if records == 0:
                break
            records -= 1
        out.append(step)
    return out


def _steps(n: int, mixed: bool = False, volume_at: int | None = None) -> list[Step]:
    steps: list[Step] = []
    for i in range(n):
        if i == volume_at:
            steps.append(("vol",))
        if mixed and i % 5 == 4:
            steps.append(("mark", 1))
        vsets = [
            ValueSet.of_atoms(1, U64, [(0, i), (1, 2 * i)]),
            ValueSet.of_atoms(2, DOUBLE, [(PM_IN_NULL, i / 2)]),
        ]
        if mixed and i % 3 == 0:
            vsets.append(ValueSet.of_atoms(3, STRING, [(PM_IN_NULL, "x" * (i % 7))]))
        steps.append(("rec", 1000, tuple(vsets)))
    return steps


def _patch(path: str, offset: int, word: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(struct.pack(">I", word))


@pytest.mark.parametrize("version", [2, 3])
def test_a_truncated_last_record(tmp_path, version):
    def damage(paths, where):
        os.truncate(paths[0], os.path.getsize(paths[0]) - 6)
        return len(where) - 1

    cols, where = _damaged(tmp_path, version, _steps(40), damage)
    assert cols.problem.offset == where[-1][1]
    assert cols.problem.file.endswith(".0") and "truncated record" in str(cols.problem)
    assert cols.fast_records == 39


@pytest.mark.parametrize("mixed", [False, True])
def test_a_bad_trailer_in_the_middle(tmp_path, mixed):
    def damage(paths, where):
        vol, at = where[17]
        with open(paths[vol], "rb") as f:
            f.seek(at)
            length = struct.unpack(">i", f.read(4))[0]
        _patch(paths[vol], at + length - 4, length + 4)
        return 17

    cols, where = _damaged(tmp_path, 2, _steps(40, mixed), damage)
    assert "trailer" in cols.problem.reason  # (the reader's words: Columns reports its error)
    assert cols.problem.offset == where[17][1]


def test_a_corrupt_record_body_in_the_second_volume(tmp_path):
    """A record of the common length whose valfmt is nonsense: the template sees a new
    layout, the reader refuses it, and records after it are dropped though they match."""

    def damage(paths, where):
        vol, at = where[30]
        assert vol == 1
        _patch(paths[vol], at + 4 * 6, 7)  # the first value set's valfmt (v2: word 6)
        return 30

    cols, where = _damaged(tmp_path, 2, _steps(60, volume_at=20), damage)
    assert cols.problem.file.endswith(".1") and "bad valfmt 7" in str(cols.problem)
    assert cols.problem.offset == where[30][1]
    assert cols.fast_records == 30


def test_error_value_sets_are_kept_with_their_times(tmp_path):
    """A metric's error value sets (numval < 0) are reported by errors(), from records
    read through a template and from records decoded one by one; pmseries stores them."""
    from purepcp.pmapi.errors import PM_ERR_APPVERSION, PM_ERR_VALUE
    from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build
    from purepcp.pmapi.types import PMSem
    from purepcp.pmapi.units import Units

    base = str(tmp_path / "errs")
    good, bad = pmID_build(60, 0, 1), pmID_build(60, 0, 2)
    t0 = 1_700_000_000
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=Timestamp(t0, 0)) as w:
        for pmid, name in ((good, "e.good"), (bad, "e.bad")):
            w.put_desc(
                Desc(pmid, PMType.PM_TYPE_U32, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT, Units()),
                [name],
            )
        expect = []
        for i in range(40):
            stamp = Timestamp(t0 + i, 0)
            code = PM_ERR_APPVERSION if i < 30 else PM_ERR_VALUE  # (a run, then a few)
            vsets = [ValueSet.of_atoms(good, PMType.PM_TYPE_U32, [(PM_IN_NULL, i)])]
            if i % 3 == 0 or i >= 37:
                vsets.append(ValueSet(bad, code, ValFmt.PM_VAL_INSITU, 0, array("I"), ()))
                expect.append(((t0 + i) * NSEC, code))
            w.put_result(Result(stamp, tuple(vsets)))
    cols = Columns(Archive(base))
    times, codes = cols.errors(bad)
    assert list(zip(times.tolist(), codes.tolist(), strict=True)) == expect
    assert cols.error_pmids() == [bad]
    assert cols.errors(good)[0].size == 0
    assert bad not in cols.pmids()  # (it has no values)
