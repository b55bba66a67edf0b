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
from purepcp.tools.pmlogsummary.options import parse_options
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
