"""Counters at the edges, as archives from the wild have them, beside PCP's pmval.

- a counter fetched just past a <mark> after a fetch that had values has none there
  (libpcp's seen_mark rule), so no rate is made across the mark;
- a counter whose interpolated value leaves its type's range is stored as libpcp's C
  stores it (a 32-bit counter wrapping: pmval's "!" at the same sample as PCP's);
  a 64-bit unsigned counter is interpolated as the installed libpcp does it;
- a singular metric logged under an instance other than PM_IN_NULL (old archives use
  1) is interpolated as PCP's, not "No values available";
- a truncated archive's end is its last good record (pmval's "end:" line), as
  libpcp's __pmGetArchiveEnd finds it.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.archive.interp import c_integer
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools import pmval
from tests.support.qa_archives import qa
from tests.support.reference_pmcd import require_reference
from tests.support.replay_archives import carried

S = 1_000_000_000
T0 = 1_700_000_000
NULL = 0xFFFFFFFF
COUNTER = PMSem.PM_SEM_COUNTER
CTR, COL, WRAP32, WRAP64, OLD = 0x0F000001, 0x0F000002, 0x0F000003, 0x0F000004, 0x0F000005
INDOM = 0x0F000001
I32, U32, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_U64


def at(sec: float) -> Timestamp:
    return Timestamp(*divmod(T0 * S + round(sec * S), S))


def edges(path: Path) -> str:
    """Records every second for 30 s, <mark>s at 8.5 and 17.2 s: a counter (singular and
    in instances), a 32-bit counter wrapping, a 64-bit one crossing 2**63 and 2**64, and
    a singular counter logged under instance 1."""
    base = str(path / "edges")
    with ArchiveWriter(base, hostname="wild", timezone="UTC", start=at(0)) as w:
        w.put_index(at(0))
        w.put_desc(Desc(CTR, U32, sem=COUNTER), ["e.counter"])
        w.put_desc(Desc(COL, U64, INDOM, COUNTER), ["e.col"])
        w.put_desc(Desc(WRAP32, I32, sem=COUNTER), ["e.wrap32"])
        w.put_desc(Desc(WRAP64, U64, sem=COUNTER), ["e.wrap64"])
        w.put_desc(Desc(OLD, U32, sem=COUNTER), ["e.old"])
        w.put_indom(at(0), INDOM, [0, 1], ["a", "b"])
        for k in range(31):
            wrapped = (k * 1_234_567_891) % 2**32
            wrapped -= 2**32 if wrapped >= 2**31 else 0
            crossing = (7 + k * 9_223_372_036_854_775_803) % 2**64
            w.put_result(Result(at(k), (
                ValueSet.of_atoms(CTR, U32, [(NULL, 1000 + 37 * k)]),
                ValueSet.of_atoms(COL, U64, [(0, 5 * k), (1, 11 * k * k)]),
                ValueSet.of_atoms(WRAP32, I32, [(NULL, wrapped)]),
                ValueSet.of_atoms(WRAP64, U64, [(NULL, crossing)]),
                ValueSet.of_atoms(OLD, U32, [(1, 500 + 3 * k * k)]),  # (instance 1, not PM_IN_NULL)
            )))  # fmt: skip
            if k in (8, 17):
                w.put_mark(at(k + 0.5 if k == 8 else k + 0.2))
    return base


def ours(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = pmval.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:2].isdigit()]


# -- without PCP --------------------------------------------------------------------------------


def test_no_rate_across_a_mark(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    base = edges(tmp_path)
    status, out, _ = ours("-z", "-a", base, "-t", "2", "-S", "+5.5", "-s", "8", "-r", "e.counter")
    assert status == 0
    assert rows(out) == [  # (as PCP's pmval prints them)
        "22:13:25.500       1204",
        "22:13:27.500       1278",
        "22:13:29.500  No values available",  # (9.5 s: bounded by 9 and 10 s, but the
        "22:13:31.500       1426",  #           mark at 8.5 s lies since the fetch before)
        "22:13:33.500       1500",
        "22:13:35.500       1574",
        "22:13:37.500  No values available",  # (17.5 s: the mark at 17.2 s cuts the prior)
        "22:13:39.500       1722",
    ]


def test_the_first_fetch_past_a_mark_has_no_values_if_the_one_before_had(tmp_path):
    with ArchiveContext(edges(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(7.5), 2 * S)
        numvals = [ctx.fetch([CTR]).result.vsets[0].numval for _ in range(3)]
        assert numvals == [1, 0, 1]  # 7.5 s, 9.5 s (past the mark at 8.5 s), 11.5 s
        ctx.set_mode(PM_MODE_INTERP, at(9.5), 2 * S)  # (no fetch before: the value is there)
        assert ctx.fetch([CTR]).result.vsets[0].numval == 1
        # the same run answered at once, for a singular counter and one with instances
        ctx.set_mode(PM_MODE_INTERP, at(5.5), 2 * S)
        run = ctx.replay([CTR, COL], 8)
        want = [True, True, False, True, True, True, False, True]
        assert run.metrics[0].has[:, 0].tolist() == want
        assert run.metrics[1].has.tolist() == [[w, w] for w in want]


def test_a_32_bit_counter_leaving_its_range_is_stored_as_c_stores_it(tmp_path):
    with ArchiveContext(edges(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(4.5), S)
        run = ctx.replay([WRAP32], 3)
        # 5 s: 1877872159, 6 s: -1182527246 (wrapped).  At 5.5 s the C arithmetic
        # (0.5 + prior + the int32 difference / 2) leaves the int32 range: x86's
        # conversion gives INT32_MIN there, as libpcp's does
        assert run.metrics[0].values[:, 0].tolist() == [1260588214, -2147483648, -565243300]


def test_c_integer_is_x86_64_gccs_conversion():
    """The values gcc -O2 gives on x86-64 for (int), (unsigned), (long long) and
    (unsigned long long) of these doubles (tests/ was written from its output)."""
    cases = {
        1.5: (1, 1, 1, 1),
        -1.5: (-1, 4294967295, -1, 18446744073709551615),
        2147483648.0: (-2147483648, 2147483648, 2147483648, 2147483648),
        -2147483649.0: (-2147483648, 2147483647, -2147483649, 18446744071562067967),
        4294967301.0: (-2147483648, 5, 4294967301, 4294967301),
        9.3e18: (-2147483648, 0, -9223372036854775808, 9300000000000000000),
        1.9e19: (-2147483648, 0, -9223372036854775808, 0),
        -9.3e18: (-2147483648, 0, -9223372036854775808, 9223372036854775808),
        float("nan"): (-2147483648, 0, -9223372036854775808, 9223372036854775808),
        float("inf"): (-2147483648, 0, -9223372036854775808, 0),
    }
    types = (np.int32, np.uint32, np.int64, np.uint64)
    for x, want in cases.items():
        got = tuple(int(c_integer(np.array([x]), t)[0]) for t in types)
        assert got == want, x


def test_a_singular_metric_logged_under_instance_1(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    status, out, _ = ours("-z", "-a", edges(tmp_path), "-t", "2", "-T", "+6", "-r", "e.old")
    assert status == 0
    assert rows(out) == [
        "22:13:20.000        500",
        "22:13:22.000        512",
        "22:13:24.000        548",
        "22:13:26.000        608",
    ]


def test_a_truncated_archive_keeps_its_end(tmp_path, monkeypatch):
    base = edges(tmp_path)
    Path(base + ".0").write_bytes(Path(base + ".0").read_bytes()[:-9])
    monkeypatch.setenv("TZ", "UTC")
    status, out, err = ours("-a", base, "-z", "-t", "10", "e.counter")
    assert status == 0 and err == ""  # (no "Cannot locate end of archive")
    assert "end:       Tue Nov 14 22:13:49 2023" in out.splitlines()  # (29 s: the last good)


# -- beside PCP's pmval (interop) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def wild(tmp_path_factory) -> str:
    require_reference("pmval")
    return edges(tmp_path_factory.mktemp("wild"))


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["-t", "1", "-S", "+0.5", "e.counter"],
        ["-t", "0.7", "e.counter"],
        ["-t", "0.4", "-r", "e.counter"],
        ["-t", "1.3", "e.col"],
        ["-t", "1", "-S", "+8", "-T", "+18", "e.col"],
        ["-t", "1", "-S", "+0.5", "e.wrap32"],
        ["-t", "0.5", "e.wrap32"],
        ["-t", "0.5", "-r", "e.wrap32"],
        ["-t", "1.5", "e.wrap64"],
        ["-t", "0.6", "-r", "e.wrap64"],
        ["-t", "2", "e.old"],
        ["-t", "0.75", "-r", "e.old"],
    ],
)
@pytest.mark.parametrize("wrap", [False, True])
def test_edges_beside_pcps_pmval(wild, argv, wrap):
    if wrap and argv[-1] == "e.wrap32":
        pytest.skip("PCP 6.0.3's pmval crashes (SIGSEGV) on a wrapping PM_TYPE_32 counter "
                    "with $PCP_COUNTER_WRAP set")  # fmt: skip
    env = dict(os.environ, TZ="UTC")
    env.pop("PCP_COUNTER_WRAP", None)
    if wrap:
        env["PCP_COUNTER_WRAP"] = "1"
    full = ["-z", "-a", wild, *argv]
    theirs = subprocess.run(["pmval", *full], capture_output=True, text=True, env=env)
    mine = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmval", *full],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, carried(theirs.stdout), theirs.stderr)  # fmt: skip
    assert len(rows(theirs.stdout)) > 3


@pytest.mark.interop
@pytest.mark.parametrize("tool", ["pmval", "pminfo", "pmprobe"])
def test_a_truncated_archive_beside_pcps_tools(wild, tmp_path, tool):
    require_reference(tool)
    base = str(tmp_path / "cut")
    for suffix in (".meta", ".index", ".0"):
        data = Path(wild + suffix).read_bytes()
        Path(base + suffix).write_bytes(data[:-9] if suffix == ".0" else data)
    argv = {
        "pmval": ["-z", "-a", base, "-t", "7", "e.col"],
        "pminfo": ["-a", base, "-f", "-O", "-2", "e"],
        "pmprobe": ["-a", base, "-v", "-O", "-0.5", "e.counter", "e.col"],
    }[tool]
    env = dict(os.environ, TZ="UTC", PCP_DERIVED_CONFIG="")
    theirs = subprocess.run([tool, *argv], capture_output=True, text=True, env=env)
    mine = subprocess.run(
        [sys.executable, "-m", f"purepcp.tools.{tool}", *argv], capture_output=True, text=True,
        env=env,
    )  # fmt: skip
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip


# -- discrete instances that come and go; <mark>s $PCP_IGNORE_MARK_RECORDS ignores -------------

BIG, SMALL = 0x0F000011, 0x0F000012
NAME, NUM, FEW = 0x0F000011, 0x0F000012, 0x0F000013
STR, DISCRETE = PMType.PM_TYPE_STRING, PMSem.PM_SEM_DISCRETE


def lives(path: Path) -> str:
    """Records every second for 5 s of discrete metrics: l.name (strings) and l.num over a
    domain of 16 instances, where at 2 s instance 15 goes and 16 comes, and l.few over
    one of 3, where at 2 s instance 2 goes and 3 comes."""
    base = str(path / "lives")
    first, later = list(range(16)), [*range(15), 16]
    with ArchiveWriter(base, hostname="lives", timezone="UTC", start=at(0)) as w:
        w.put_index(at(0))
        w.put_desc(Desc(NAME, STR, BIG, DISCRETE), ["l.name"])
        w.put_desc(Desc(NUM, I32, BIG, DISCRETE), ["l.num"])
        w.put_desc(Desc(FEW, STR, SMALL, DISCRETE), ["l.few"])
        for k in range(6):
            insts, few = (first, [0, 1, 2]) if k < 2 else (later, [0, 1, 3])
            if k in (0, 2):
                w.put_indom(at(k), BIG, insts, [f"p{i}" for i in insts])
                w.put_indom(at(k), SMALL, few, [f"f{i}" for i in few])
            w.put_result(Result(at(k), (
                ValueSet.of_atoms(NAME, STR, [(i, f"s{i}") for i in insts]),
                ValueSet.of_atoms(NUM, I32, [(i, 100 + i) for i in insts]),
                ValueSet.of_atoms(FEW, STR, [(i, f"x{i}") for i in few]),
            )))  # fmt: skip
    return base


def test_a_discrete_value_is_not_carried_past_its_instance_going(tmp_path):
    """libpcp (interp.c's time_caliper) notes when each instance of a domain that ever
    held 16 came and went: a discrete value is carried forward only while its instance is
    there; in a smaller domain it is carried on (qa/1288)."""
    with ArchiveContext(lives(tmp_path)) as ctx:
        for pmid in (NAME, NUM):
            ctx.set_mode(PM_MODE_INTERP, at(0.5), S // 2)
            m = ctx.replay([pmid], 10).metrics[0]
            column = dict(zip(m.insts.tolist(), m.has.T.tolist(), strict=True))
            assert column[15] == [True] * 4 + [False] * 6  # (gone at 2 s: none after)
            assert column[16] == [False] * 3 + [True] * 7  # (come at 2 s)
            assert column[14] == [True] * 10
        ctx.set_mode(PM_MODE_INTERP, at(0.5), S // 2)
        m = ctx.replay([FEW], 10).metrics[0]
        column = dict(zip(m.insts.tolist(), m.has.T.tolist(), strict=True))
        assert column[2] == [True] * 10  # (3 instances: carried on)
        assert m.values[-1, m.insts.tolist().index(2)] == "x2"


@pytest.fixture
def mark_setting(monkeypatch):
    """Set $PCP_IGNORE_MARK_RECORDS (None: unset) for a test, read afresh (libpcp reads it
    once a process)."""
    from purepcp.pmapi.archive.replay import ignored_marks

    def setting(value: str | None) -> None:
        if value is None:
            monkeypatch.delenv("PCP_IGNORE_MARK_RECORDS", raising=False)
        else:
            monkeypatch.setenv("PCP_IGNORE_MARK_RECORDS", value)
        ignored_marks.cache_clear()

    yield setting
    ignored_marks.cache_clear()


@pytest.mark.parametrize(
    ("value", "across"),
    [(None, False), ("", True), ("0", True), ("2", True), ("1 sec", True), ("0.5", False),
     ("1minuet", False)],
)  # fmt: skip
def test_ignored_marks(tmp_path, mark_setting, capsys, value, across):
    """$PCP_IGNORE_MARK_RECORDS, as libpcp's update_bounds reads it: empty (or 0) ignores
    every <mark>; an interval ignores those with records either side no further apart
    (here 1 s); one that is no interval is warned of, and every mark counts (qa/1354)."""
    mark_setting(value)
    with ArchiveContext(edges(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_INTERP, at(7.5), S)
        has = ctx.replay([CTR], 4).metrics[0].has[:, 0].tolist()
    # (at 8.5 s, the mark's own time, the prior at 8 s is cut off)
    assert has == ([True] * 4 if across else [True, False, True, True])
    err = capsys.readouterr().err
    if value == "1minuet":
        assert err.endswith(
            ": Warning: bad $PCP_IGNORE_MARK_RECORDS: not in pmParseInterval(3) format:\n"
            "1minuet\n ^ -- unexpected value\n\n"
        )
    else:
        assert err == ""


@pytest.mark.interop
@pytest.mark.parametrize("metric", ["l.name", "l.num", "l.few"])
def test_instances_coming_and_going_beside_pcps_pmval(tmp_path, metric):
    require_reference("pmval")
    env = dict(os.environ, TZ="UTC")
    full = ["-z", "-a", lives(tmp_path), "-t", "0.5", "-S", "+0.5", metric]
    theirs = subprocess.run(["pmval", *full], capture_output=True, text=True, env=env)
    mine = subprocess.run([sys.executable, "-m", "purepcp.tools.pmval", *full],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, carried(theirs.stdout), theirs.stderr)  # fmt: skip
    assert "?" in theirs.stdout


@pytest.mark.interop
@pytest.mark.parametrize("metric", ["proc.psinfo.utime", "proc.psinfo.sname", "proc.psinfo.cmd"])
def test_qa_1288_beside_pcps_pmval(metric):
    """qa/1288: the discrete metrics of a process that comes and goes."""
    require_reference("pmval")
    full = ["-z", "-i", "2956902,2956910", "-t", "1sec", "-a", qa("pcp-atop-boot"), metric]
    theirs = subprocess.run(["pmval", *full], capture_output=True, text=True)
    mine = subprocess.run([sys.executable, "-m", "purepcp.tools.pmval", *full],
                          capture_output=True, text=True)  # fmt: skip
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip


@pytest.mark.interop
@pytest.mark.parametrize("value", [None, "", "1", "6", "1minuet", "-123"])
@pytest.mark.parametrize("metric", ["sample.bin[bin-100]", "pmcd.pdu_in.fetch"])
def test_qa_1354_beside_pcps_pmval(value, metric):
    """qa/1354: pmval -zr over an archive with gaps, marks ignored or not (its
    proc.nprocs, an instantaneous metric, differs by seed 001's closest rule)."""
    require_reference("pmval")
    env = dict(os.environ)
    env.pop("PCP_IGNORE_MARK_RECORDS", None)
    if value is not None:
        env["PCP_IGNORE_MARK_RECORDS"] = value
    full = ["-zr", "-a", qa("gap2"), metric]
    theirs = subprocess.run(["pmval", *full], capture_output=True, text=True, env=env)
    mine = subprocess.run([sys.executable, "-m", "purepcp.tools.pmval", *full],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip
