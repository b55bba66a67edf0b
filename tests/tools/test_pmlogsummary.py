"""pmlogsummary: ours prints what PCP 6.0.3's pmlogsummary prints, byte for byte.

Unit tests check the option parsing, the arithmetic PCP does (findbin, the counter
rate units, printf's %f of NaN) and that the columnar sums equal the record-by-record
ones on archives our writer makes (marks, wraps, late instances); interop tests run
PCP's pmlogsummary and ours on PCP's QA archives and on archives our writer makes,
comparing stdout, stderr and exit status.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmlogsummary import main
from purepcp.tools.pmlogsummary.options import appl_options, parse_options
from purepcp.tools.pmlogsummary.report import cfloat
from purepcp.tools.pmlogsummary.stats import MetricStats, findbin
from tests.support.qa_archives import qa

OURS = [sys.executable, "-m", "purepcp.tools.pmlogsummary"]
THEIRS = shutil.which("pmlogsummary", path="/usr/bin:/bin")
T0 = Timestamp(1_700_000_000, 250_000_000)
LOAD = pmID_build(245, 1, 1)
BYTES = pmID_build(245, 1, 2)
SMALL = pmID_build(245, 1, 3)
STATE = pmID_build(245, 1, 4)
INDOM = pmInDom_build(245, 1)


def _run_ours(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


# -- unit tests ------------------------------------------------------------------------------


def test_options_columns_and_errors():
    o = parse_options(["-a", "-F", "-p", "2", "-B", "4", "arch", "m"])
    assert o.delimiter == "," and o.precision == 2 and o.nbins == 4 and o.label
    assert [c for c, on in o.columns.items() if on] == ["stocave", "timeave", "min", "max", "count"]
    o = parse_options(["-s", "arch"])
    assert [c for c, on in o.columns.items() if on] == ["sum"]
    o = parse_options(["-B", "-7", "-p", "x", "arch"])
    assert o.errors == 2
    assert o.messages == [
        "pmlogsummary: -B requires positive numeric argument\n",
        "pmlogsummary: -p requires numeric argument\n",
    ]
    assert parse_options([]).messages == ["Error: no archive specified\n\n"]


def test_usage_and_version_exits():
    status, out, err = _run_ours("--help")
    assert status == 1 and out == ""
    assert err.startswith("Usage: pmlogsummary [options] archive [metricname ...]\n\nOptions:\n")
    assert "  -B N, --bins=N        print value distribution across a number of bins\n" in err
    status, _, err = _run_ours("-V")
    assert status == 0 and err.startswith("pmlogsummary version ")


def test_findbin_is_pcps_loop():
    assert findbin(0.0, 0.0, 3.0, 3) == 0
    assert findbin(1.0, 0.0, 3.0, 3) == 0  # (the bounds are inclusive: the first wins)
    assert findbin(1.5, 0.0, 3.0, 3) == 1
    assert findbin(3.0, 0.0, 3.0, 3) == 2
    assert findbin(7.0, 7.0, 7.0, 1) == 0


def test_counter_rate_units():
    ms = Desc(
        BYTES, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units(0, 1, 0, 0, 2, 0)
    )
    m = MetricStats.of(ms, sumflag=False)
    assert m.scale == 1000.0 ** (3 - 2) and m.desc.units.dimTime == 0
    count = Desc(
        BYTES, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units(1, 0, 0, 0, 0, 0)
    )
    m = MetricStats.of(count, sumflag=False)
    assert m.scale == 1.0 and (m.desc.units.dimTime, m.desc.units.scaleTime) == (-1, 3)
    assert MetricStats.of(count, sumflag=True).desc == count


def test_cfloat_is_printf():
    assert cfloat(2.5, 3) == "2.500"
    assert cfloat(float("-nan"), 3) == "-nan"
    assert cfloat(float("inf"), 3) == "inf"
    assert cfloat(1.23456789, -1) == "1.234568"  # (a negative precision: printf's default)


def test_debug_options_choose_the_traces():
    assert appl_options("appl0,appl2") == {"appl0", "appl2"}
    assert appl_options("ALL") == {"appl0", "appl1", "appl2"}
    assert appl_options("pdu,4096") == {"appl1"}
    assert appl_options("-1") == {"appl0", "appl1", "appl2"}
    assert appl_options("fetch") == frozenset()
    assert parse_options(["-Dappl1,appl0", "a"]).appl == {"appl0", "appl1"}
    o = parse_options(["-Dappl0,nonsense", "a"])  # (pmSetDebug refuses it all)
    assert o.appl == frozenset() and o.errors == 1
    assert o.messages == [
        "pmlogsummary: unrecognized debug options specification (appl0,nonsense)\n"
    ]


# -- archives our writer makes ---------------------------------------------------------------


def _write(base: str, *, marks: bool, version: int = 2) -> str:
    """An archive with an instantaneous and a discrete metric over three instances (one
    appearing late), a 64-bit counter that wraps, a 32-bit counter, and <mark>s."""
    with ArchiveWriter(base, hostname="summ", timezone="UTC", start=T0, version=version) as w:
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT, Units()),
                   ["test.load"])  # fmt: skip
        w.put_desc(Desc(BYTES, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                        Units(1, 0, 0, 1, 0, 0)), ["test.bytes"])  # fmt: skip
        w.put_desc(Desc(SMALL, PMType.PM_TYPE_U32, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                        Units(0, 1, 0, 0, 2, 0)), ["test.busy"])  # fmt: skip
        w.put_desc(Desc(STATE, PMType.PM_TYPE_32, INDOM, PMSem.PM_SEM_DISCRETE, Units()),
                   ["test.state"])  # fmt: skip
        w.put_indom(T0, INDOM, [0, 1, 2], ["a", "b", "c"])
        w.put_index(T0)
        last = T0
        for s in range(40):
            t = Timestamp(T0.sec + s * 2, T0.nsec + (s % 3) * 1000)
            if marks and s in (13, 29):
                w.put_mark(Timestamp(t.sec - 1, t.nsec))
            insts = [1, 0] + ([2] if s >= 7 else [])
            load = [(i, (s * 7 % 11) * 0.25 + i) for i in insts]
            total = s * 1000 + (s % 4) * 17 - (5000 if s > 30 else 0)
            w.put_result(Result(t, (
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, load),
                ValueSet.of_atoms(BYTES, PMType.PM_TYPE_U64, [(PM_IN_NULL, total)]),
                ValueSet.of_atoms(SMALL, PMType.PM_TYPE_U32, [(PM_IN_NULL, s * 250)]),
                ValueSet.of_atoms(STATE, PMType.PM_TYPE_32, [(i, s // 10 + i) for i in insts]),
            )))  # fmt: skip
            last = t
        w.put_index(last)
    return base


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("summary")
    return {
        "plain": _write(str(d / "plain"), marks=False),
        "marks": _write(str(d / "marks"), marks=True),
        "v3": _write(str(d / "v3"), marks=False, version=3),
    }


def test_columnar_equals_the_record_walk(archives, monkeypatch):
    """The NumPy sums give every line the record-by-record walk gives."""
    from purepcp.tools.pmlogsummary import fastpath

    for opts in (["-a", "-i", "-I"], ["-a", "-B", "3", "-p", "6"], ["-s"]):
        fast = _run_ours(*opts, archives["plain"])
        monkeypatch.setattr(fastpath, "columnar_summary", lambda *_: None)
        slow = _run_ours(*opts, archives["plain"])
        monkeypatch.undo()
        assert fast == slow
        assert fast[0] == 0 and "test.load" in fast[1]


def test_marks_are_walked(archives):
    status, out, _ = _run_ours("-a", "-H", archives["marks"])
    assert status == 0
    assert out.splitlines()[4].startswith("metric stochastic_average time_average")
    assert 'test.state ["c"] 3.833 3.790 2.000 5.000 33 none' in out


def test_traces_take_the_walk(archives, monkeypatch):
    """-D appl0..appl2: the record walk alone traces, so the fast path is not tried."""
    from purepcp.tools.pmlogsummary import fastpath

    def refuse(*_):
        raise AssertionError("the fast path was taken")

    monkeypatch.setattr(fastpath, "columnar_summary", refuse)
    status, out, err = _run_ours("-Dappl0,appl1,appl2", "-B", "2", archives["marks"])
    assert status == 0
    assert re.search(r"^\n\d\d:\d\d:\d\d\.250 - mark record\n\n", out)
    assert err.startswith("test.load Initially - min/max=1.000000/1.000000\n")
    assert "test.bytes counter wrapped or <mark>\n" in err
    assert "resetting for second iteration\n" in err
    assert "test.busy selected bin " in err
    assert err.count("++ test.state timedelta=") > 0


def test_unknown_archive_and_metric():
    status, _, err = _run_ours("/nonexistent/archive")
    assert status == 1
    assert (
        err
        == 'pmlogsummary: Cannot open archive "/nonexistent/archive": No such file or directory\n'
    )


# -- interop: PCP's pmlogsummary against ours ------------------------------------------------

needs_pcp = pytest.mark.skipif(
    THEIRS is None, reason="reference PCP 6 (pmlogsummary) is not installed"
)


def _both(args: list[str]) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    env = dict(os.environ, TZ="UTC")
    ours = subprocess.run([*OURS, *args], capture_output=True, env=env, check=False)
    theirs = subprocess.run([str(THEIRS), *args], capture_output=True, env=env, check=False)
    return ours, theirs


def _same(args: list[str]) -> None:
    ours, theirs = _both(args)
    assert ours.stdout.decode() == theirs.stdout.decode()
    assert ours.stderr.decode() == theirs.stderr.decode()
    assert ours.returncode == theirs.returncode


QA_CASES = [
    ("ace_v2", []),
    ("ace_v2", ["-a", "-F", "-H", "-i", "-I", "-l"]),
    ("ace_v2", ["-z", "-f", "-H", "kernel.all.cpu", "foo.bar", "bad["]),
    ("kenj-pc-1", ["-a", "-B", "3"]),
    ("binning", ["-ymMB", "4"]),
    ("count-mark", ["-a", "-i", "-I"]),
    ("mark-bug", ["-a"]),
    ("uwrap", ["-a", "-x"]),
    ("dyninsts", ["-a", "-B", "2"]),
    ("late", ["-a", "-s"]),
    ("omnibus_v3", ["-a", "-z"]),
    ("pcp-free-tera", ["-a", "-p", "1"]),
    ("interpmark", ["-vaiI"]),
    ("gap", ["-a", "-S", "+10", "-T", "-10"]),
]


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(("name", "opts"), QA_CASES, ids=[f"{n}{''.join(o)}" for n, o in QA_CASES])
def test_qa_archive_like_pcp(name, opts):
    _same([*opts, qa(name)] if not any(o.startswith(("kernel", "foo", "bad")) for o in opts)
          else [*[o for o in opts if o.startswith("-")], qa(name),
                *[o for o in opts if not o.startswith("-")]])  # fmt: skip


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("kind", ["plain", "marks", "v3"])
@pytest.mark.parametrize("opts", [[], ["-a", "-i", "-I", "-B", "3"], ["-bs", "-f", "-H"]])
def test_our_archive_like_pcp(archives, kind, opts):
    _same([*opts, archives[kind]])


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["-B", "x", "-p", "y", "a"],
        ["-z", "-Z", "UTC", "a"],
        ["-S", "@ foo", "ARCH"],
        ["--bogus", "a"],
        ["nosuch"],
    ],
)
def test_errors_like_pcp(args):
    arch = qa("ace_v2")
    args = [arch if a == "ARCH" else a for a in args]
    ours, theirs = _both(args)
    ours_err = ours.stderr.decode().replace("pmlogsummary version", "")
    assert ours.returncode == theirs.returncode
    assert ours_err == theirs.stderr.decode()
    assert ours.stdout == theirs.stdout


def test_no_traceback_on_empty_file(tmp_path):
    empty = tmp_path / "empty.meta"
    empty.write_bytes(b"")
    (tmp_path / "empty.0").write_bytes(b"")
    status, _, err = _run_ours(str(tmp_path / "empty"))
    assert status == 1 and "Traceback" not in err and err.startswith("pmlogsummary: ")


def test_command_ends_at_once_with_its_output_whole(tmp_path):
    """Run as its command, pmlogsummary ends without the interpreter's teardown
    (Tool(exits_at_once)): its output is still whole, and a reader that closes the pipe
    early gets status 1 and no traceback."""
    archive = qa("foo+")
    env = dict(os.environ, TZ="UTC")
    whole = subprocess.run([*OURS, "-a", archive], capture_output=True, text=True, env=env)
    inproc = subprocess.run(
        [sys.executable, "-c",
         "import sys; from purepcp.tools.pmlogsummary import main; print(main(sys.argv[1:]))",
         "-a", archive],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert whole.returncode == 0 and inproc.stdout == whole.stdout + "0\n"
    read, write = os.pipe()
    proc = subprocess.Popen([*OURS, "-a", archive], stdout=write, stderr=subprocess.PIPE, env=env)
    os.close(write)
    os.close(read)  # (closed before anything is read: every write fails)
    _, err = proc.communicate()
    assert proc.returncode == 1 and b"Traceback" not in err


# -- interop: the -D appl0, appl1 and appl2 traces ------------------------------------------

TRACE_CASES = [
    ("foo+", ["-Dappl0,appl1,appl2", "-zi", "-Mm", "-B", "5"]),  # (QA 765)
    ("wrap", ["-Dappl0,appl1,appl2", "-B", "2"]),
    ("uwrap", ["-Dappl0,appl1", "-x", "-B", "3"]),
    ("late", ["-Dappl0,appl1,appl2", "-a"]),
    ("changeinst", ["-Dappl1,appl2", "-iI"]),
    ("markmerge", ["-Dappl0,appl1,appl2", "-B", "2", "-i"]),
    ("binning", ["-D", "14336", "-ymMB", "4", "-p", "1"]),
    ("bug-1044", ["-Dappl0", "-z"]),  # (marks in a window over a day long)
    ("interpmark", ["-Dappl0,appl1,appl2", "-S", "+10", "-T", "+60", "-B", "2"]),
]


def _traced(args: list[str], tmp, env: dict[str, str]) -> dict[str, tuple]:
    """Each side's stdout, stderr and status through pipes, and both into one file
    (2>&1, as QA captures them: stdout then buffered in blocks)."""
    seen = {}
    for side, command in (("ours", OURS), ("pcp", [str(THEIRS)])):
        piped = subprocess.run([*command, *args], capture_output=True, env=env, check=False)
        merged = tmp / f"{side}.all"
        with open(merged, "wb") as sink:
            subprocess.run([*command, *args], stdout=sink, stderr=subprocess.STDOUT,
                           env=env, check=False)  # fmt: skip
        seen[side] = (piped.stdout, piped.stderr, piped.returncode, merged.read_bytes())
    return seen


@pytest.fixture(scope="module")
def traced_qa(tmp_path_factory) -> dict[str, dict[str, tuple]]:
    """Every trace case run by both sides, once for the module."""
    if THEIRS is None:
        pytest.skip("reference PCP 6 (pmlogsummary) is not installed")
    env = dict(os.environ, TZ="UTC")
    found = {}
    for name, opts in TRACE_CASES:
        found[name] = _traced([*opts, qa(name)], tmp_path_factory.mktemp("traced"), env)
    return found


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("name", [n for n, _ in TRACE_CASES])
def test_qa_traces_like_pcp(traced_qa, name):
    ours, pcp = traced_qa[name]["ours"], traced_qa[name]["pcp"]
    assert ours[1].decode() == pcp[1].decode()  # stderr: the traces
    assert ours[0].decode() == pcp[0].decode()  # stdout
    assert ours[2] == pcp[2]
    assert ours[3].decode() == pcp[3].decode()  # merged as QA merges them


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("wrap", [False, True])
def test_our_archive_traces_like_pcp(archives, tmp_path, wrap):
    env = dict(os.environ, TZ="UTC")
    env.pop("PCP_COUNTER_WRAP", None)
    if wrap:
        env["PCP_COUNTER_WRAP"] = "1"
    args = ["-Dappl0,appl1,appl2", "-a", "-B", "3", archives["marks"]]
    seen = _traced(args, tmp_path, env)
    ours, pcp = seen["ours"], seen["pcp"]
    assert b"mark record" in pcp[0] and b"counter wrapped" in pcp[1]
    assert ours[1].decode() == pcp[1].decode()
    assert ours[0].decode() == pcp[0].decode()
    assert ours[2] == pcp[2]
    assert ours[3].decode() == pcp[3].decode()


# -- the columnar fast path: exact as C's loops, and read as the reader reads ----------------

FLOATY = pmID_build(245, 2, 1)
RATE = pmID_build(245, 2, 2)
TICKS = pmID_build(245, 2, 3)
LEVEL = pmID_build(245, 2, 4)
SINGLE = pmID_build(245, 2, 5)
INDOM2 = pmInDom_build(245, 2)


def _awkward(rng, shape: tuple[int, ...]):
    """Doubles that round differently in every order of addition: magnitudes from 1e-300
    to 1e17, both signs, zeros of both signs, subnormals."""

    v = rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 17, shape)
    picks = rng.random(shape)
    v[picks < 0.05] = -0.0
    v[(picks >= 0.05) & (picks < 0.08)] = 5e-324
    v[(picks >= 0.08) & (picks < 0.12)] = 1e17
    return v


def _c_sums(values, spans):
    """pmlogsummary's own loop over one instance (an instantaneous metric): the sum from
    the first value on, and the time sum from 0.0 on, one addition at a time."""
    total, timed = values[0], 0.0
    for i in range(1, len(values)):
        total += values[i]
        timed += values[i - 1] * spans[i - 1]
    return total, timed


def _c_rates(values, spans):
    """... and a counter's: the rate sum from 0.0 on, the delta sum from the first on."""
    stoc, total = 0.0, None
    for i in range(1, len(values)):
        delta = values[i] - values[i - 1]
        stoc += delta / spans[i - 1]
        total = delta if total is None else total + delta
    return stoc, total


@pytest.mark.parametrize("rows", [1, 2, 3, 17, 2050])
@pytest.mark.parametrize("cols", [1, 2, 3, 10, 33])
def test_columnar_sums_are_cs_loop(rows, cols):
    """Every sum is the double C's sequential loop makes, bit for bit, whatever the
    table's shape or layout (one column, C order, Fortran order, columns of a wider
    table)."""
    import numpy as np

    from purepcp.tools.pmlogsummary.columnar import summarise

    rng = np.random.default_rng(rows * 1000 + cols)
    times = np.cumsum(rng.integers(1, 3_000_000, rows)) + 1_700_000_000_000_000
    spans = [float(np.float64(np.longdouble(d // 1_000_000) + np.longdouble(d % 1_000_000)
                              / np.longdouble(1_000_000)))
             for d in np.diff(times).tolist()]  # fmt: skip
    v = _awkward(rng, (rows, cols))
    wider = np.zeros((rows, cols + 5))
    wider[:, 2 : 2 + cols] = v
    inst = Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT, Units())
    need = frozenset({"stocave", "timeave", "sum"})
    for table in (v, np.asfortranarray(v), wider[:, 2 : 2 + cols]):
        m = MetricStats.of(inst, False)
        assert summarise(m, times, table, list(range(cols)), 0, need)
        for j, s in enumerate(m.insts):
            total, timed = _c_sums(v[:, j].tolist(), spans)
            assert (s.sum, s.stocave, s.timeave) == (total, total, timed)
            assert repr(s.timeave) == repr(timed) and repr(s.sum) == repr(total)
    counts = np.cumsum(np.abs(_awkward(rng, (rows, cols))), axis=0)  # (never decreasing)
    ctr = Desc(BYTES, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_COUNTER, Units())
    m = MetricStats.of(ctr, True)
    assert summarise(m, times, counts, list(range(cols)), 0, need)
    if rows > 1:
        for j, s in enumerate(m.insts):
            stoc, total = _c_rates(counts[:, j].tolist(), spans)
            assert repr((s.stocave, s.sum, s.timeave)) == repr((stoc, total, total))


def test_columnar_zero_sums_start_from_zero():
    """C starts the time sum at 0.0, so -0.0 values make +0.0 there (not -0.0), while
    the plain sum starts from the first value and stays -0.0."""
    import numpy as np

    from purepcp.tools.pmlogsummary.columnar import summarise

    inst = Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT, Units())
    for cols in (1, 2):
        m = MetricStats.of(inst, False)
        times = np.array([0, 1_000_000, 2_500_000, 4_000_000])
        assert summarise(m, times, np.full((4, cols), -0.0), list(range(cols)), 0,
                         frozenset({"timeave", "sum"}))  # fmt: skip
        for s in m.insts:
            assert repr((s.timeave, s.sum)) == repr((0.0, -0.0))


def test_columnar_nan_goes_to_the_walk():
    """A NaN value (which PCP skips) leaves the metric to the record walk."""
    import numpy as np

    from purepcp.tools.pmlogsummary.columnar import summarise

    inst = Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT, Units())
    times = np.arange(5) * 1_000_000
    for row in range(5):
        v = np.ones((5, 2))
        v[row, 1] = np.nan
        for need in ({"timeave"}, {"sum"}, {"min"}, {"count"}):
            assert not summarise(MetricStats.of(inst, False), times, v, [0, 1], 0,
                                 frozenset(need))  # fmt: skip


def _write_steady(base: str, version: int = 2) -> str:
    """An archive of one steady layout (every record holds every value), as loggers
    write most of the time: instances listed out of order, irregular times, a float, an
    insitu 32-bit counter that wraps, a 64-bit counter, a discrete metric and a
    singular one."""
    indom = [3, 1, 0, 2]
    with ArchiveWriter(base, hostname="steady", timezone="UTC", start=T0,
                       version=version) as w:  # fmt: skip
        w.put_desc(Desc(FLOATY, PMType.PM_TYPE_FLOAT, INDOM2, PMSem.PM_SEM_INSTANT, Units()),
                   ["steady.floaty"])  # fmt: skip
        w.put_desc(Desc(RATE, PMType.PM_TYPE_U64, INDOM2, PMSem.PM_SEM_COUNTER,
                        Units(1, 0, 0, 1, 0, 0)), ["steady.rate"])  # fmt: skip
        w.put_desc(Desc(TICKS, PMType.PM_TYPE_U32, INDOM2, PMSem.PM_SEM_COUNTER,
                        Units(0, 1, 0, 0, 2, 0)), ["steady.ticks"])  # fmt: skip
        w.put_desc(Desc(LEVEL, PMType.PM_TYPE_DOUBLE, INDOM2, PMSem.PM_SEM_DISCRETE, Units()),
                   ["steady.level"])  # fmt: skip
        w.put_desc(Desc(SINGLE, PMType.PM_TYPE_DOUBLE, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT,
                        Units()), ["steady.single"])  # fmt: skip
        w.put_indom(T0, INDOM2, indom, [f"i{i}" for i in indom])
        w.put_index(T0)
        t = T0
        for s in range(300):
            t = Timestamp(T0.sec + s * 10 + s % 7, (s * 137_001) % 1_000_000 * 1000)
            w.put_result(Result(t, (
                ValueSet.of_atoms(FLOATY, PMType.PM_TYPE_FLOAT,
                                  [(i, (s * 13 % 17) * 0.3 + i / 7) for i in indom]),
                ValueSet.of_atoms(RATE, PMType.PM_TYPE_U64,
                                  [(i, s * s * 1_000_003 * (i + 1) + 2**60) for i in indom]),
                ValueSet.of_atoms(TICKS, PMType.PM_TYPE_U32,
                                  [(i, (s * 400_000_000 * (i + 1)) % 2**32) for i in indom]),
                ValueSet.of_atoms(LEVEL, PMType.PM_TYPE_DOUBLE,
                                  [(i, float(s // 50 + i) / 3) for i in indom]),
                ValueSet.of_atoms(SINGLE, PMType.PM_TYPE_DOUBLE, [(PM_IN_NULL, s * 0.1)]),
            )))  # fmt: skip
        w.put_index(t)
    return base


@pytest.fixture(scope="module")
def steady(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("steady")
    return {"v2": _write_steady(str(d / "v2")), "v3": _write_steady(str(d / "v3"), 3)}


@pytest.mark.parametrize("kind", ["v2", "v3"])
@pytest.mark.parametrize("chunk", [None, 700])
def test_dense_tables_read_what_blocks_read(steady, kind, chunk, monkeypatch):
    """Columns.dense_tables gives each metric's values as block() does (instances in
    value-list order), read a stretch of records at a time or all at once."""
    import numpy as np

    from purepcp.pmapi.archive import columns
    from purepcp.pmapi.archive.reader import Archive

    if chunk is not None:
        monkeypatch.setattr(columns, "_STRIDED_BYTES", chunk)
    with Archive(steady[kind]) as archive:
        c = columns.Columns(archive)
        pmids = c.pmids()
        for together in (None, lambda pmid: pmid in (RATE, TICKS)):
            for dtype in (None, np.float64):
                tables = c.dense_tables(pmids, 0, 2**62, dtype, together)
                assert sorted(tables) == sorted(pmids)
                for pmid, table in tables.items():
                    block = c.block(pmid, None, None)
                    assert table.times.tolist() == block.times.tolist()
                    order = np.argsort(table.insts)
                    assert block.insts.tolist() == sorted(table.insts)
                    want = block.values if dtype is None else block.values.astype(dtype)
                    got = table.values[:, order]
                    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        lo, hi = int(c.times[20]), int(c.times[40])
        table = c.dense(FLOATY, lo, hi)
        assert table is not None and table.times.tolist() == c.times[20:41].tolist()


def test_value_patterns():
    import numpy as np

    from purepcp.pmapi.archive.columns import _pattern

    assert _pattern(np.array([0])) == ((1,), (8,))
    assert _pattern(np.array([4, 16, 28])) == ((3,), (12,))
    assert _pattern(np.array([0, 12, 24, 120, 132, 144])) == ((2, 3), (120, 12))
    assert _pattern(np.array([0, 12, 24, 120, 132])) == (None, ())
    assert _pattern(np.array([0, 12, 40, 52, 100, 112])) == (None, ())


STEADY_OPTIONS = [
    [],
    ["-a"],
    ["-a", "-i", "-I", "-B", "4"],
    ["-x", "-y"],
    ["-s"],
    ["-b", "-p", "9"],
]


@pytest.mark.parametrize("opts", STEADY_OPTIONS)
def test_steady_columnar_equals_the_record_walk(steady, opts, monkeypatch):
    from purepcp.tools.pmlogsummary import fastpath

    for kind in ("v2", "v3"):
        fast = _run_ours(*opts, steady[kind], "steady")
        monkeypatch.setattr(fastpath, "columnar_summary", lambda *_: None)
        slow = _run_ours(*opts, steady[kind], "steady")
        monkeypatch.undo()
        assert fast == slow and fast[0] == 0 and "steady.rate" in fast[1]


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("opts", STEADY_OPTIONS)
def test_steady_archive_like_pcp(steady, opts):
    _same([*opts, steady["v2"]])
    _same([*opts, "-S", "+40", "-T", "+2000", steady["v3"]])


def test_unextractable_values_are_walked(steady):
    """Values libpcp's pmExtractValue refuses for their type (here a 32-bit counter in
    64-bit value blocks) are not summed from columns: the walk meets them as PCP does."""
    from purepcp.pmapi.archive.columns import Columns
    from purepcp.pmapi.archive.reader import Archive
    from purepcp.tools.pmlogsummary.fastpath import columnar_summary
    from purepcp.tools.pmlogsummary.report import make_window

    with Archive(steady["v2"]) as archive:
        assert all(Columns(archive).extractable(p) for p in archive.descs)
    with Archive(qa("logsummary-bug")) as archive:
        c = Columns(archive)
        (pmid,) = c.pmids()
        assert not c.extractable(pmid)
        found = columnar_summary(
            parse_options([archive.base]), archive, make_window(0, 2**53, False)
        )
        assert found is not None and found[1] == {pmid} and not found[0]


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("flags", [[], ["-v"]], ids=["quiet", "verbose"])
def test_a_value_pmextractvalue_refuses_ends_the_run_as_pcps(flags):
    """A U32 counter stored in 8-byte value blocks (QA 317's archive): libpcp's
    pmExtractValue refuses it, so PCP's pmlogsummary stops ("possibly corrupt archive?",
    status 1).  Before, ours decoded the blocks leniently and printed a rate."""
    args = [*flags, qa("logsummary-bug")]
    _same(args)
    ours, _ = _both(args)
    assert ours.returncode == 1 and ours.stderr.endswith(b"possibly corrupt archive?\n")


@pytest.mark.interop
@needs_pcp
def test_verbose_names_metrics_with_only_error_value_sets():
    """-v: PCP's names each metric whose value sets were errors ("failed in archive
    value fetch"); ours named none of those that had nothing but errors (QA's bug1057,
    swap.in and swap.out), which the columnar path dropped before the walk."""
    _same(["-v", qa("bug1057")])
