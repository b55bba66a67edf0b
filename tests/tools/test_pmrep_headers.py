"""pmrep's changing headers (-1, and -7 with -X), its extended header without
interpolation, and a discrete metric a fetch has no values for, on an archive whose
instances come and go (written here; every expected line is PCP 6.0.3's pmrep's on it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive.writer import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000
READ, USED, HOST = (pmID_build(245, 0, i) for i in range(3))
INDOM = pmInDom_build(245, 1)
#: per record: d.read's instances and values, d.used (or None), d.host (or None)
PLAN = [({0: 0, 1: 0}, None, "x"), ({0: 1, 1: 1}, 1, None), ({1: 2, 2: 2}, 2, None),
        ({1: 3, 2: 3}, None, None), ({}, 4, None), ({2: 5}, None, None)]  # fmt: skip


def write_archive(base: str) -> None:
    """d.read (U32 counter; instances a, b, c come and go), d.used (Kbyte, singular, in
    some records), d.host (a discrete string, in the first record only)."""
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=Timestamp(T0, 0)) as w:
        w.put_desc(Desc(READ, PMType.PM_TYPE_U32, INDOM, PMSem.PM_SEM_COUNTER,
                        Units(dimCount=1)), ["d.read"])  # fmt: skip
        w.put_desc(Desc(USED, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT,
                        Units(dimSpace=1, scaleSpace=1)), ["d.used"])  # fmt: skip
        w.put_desc(Desc(HOST, PMType.PM_TYPE_STRING, PM_INDOM_NULL, PMSem.PM_SEM_DISCRETE,
                        Units()), ["d.host"])  # fmt: skip
        w.put_index(Timestamp(T0, 0))
        w.put_indom(Timestamp(T0, 0), INDOM, [0, 1, 2], ["a", "b", "c"])
        for s, (reads, used, host) in enumerate(PLAN):
            vsets = []
            if reads:
                vsets.append(ValueSet.of_atoms(READ, PMType.PM_TYPE_U32, list(reads.items())))
            if used is not None:
                vsets.append(ValueSet.of_atoms(USED, PMType.PM_TYPE_U64, [(0xFFFFFFFF, used)]))
            if host is not None:
                vsets.append(ValueSet.of_atoms(HOST, PMType.PM_TYPE_STRING,
                                               [(0xFFFFFFFF, host)]))  # fmt: skip
            w.put_result(Result(Timestamp(T0 + s, 0), tuple(vsets)))


@pytest.fixture(scope="module")
def where(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("headers")
    write_archive(str(top / "dyn"))
    return top


def env() -> dict[str, str]:
    return dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="",
                PCP_PYTHON_PROG="/usr/bin/python3")  # fmt: skip


def pmrep(where: Path, *args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", "-a", "dyn", *args],
                         env=env(), capture_output=True, text=True, cwd=where,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_dynamic_header(where):
    """-1: each sample's own columns, the header again (after a blank line) when they change."""
    assert pmrep(where, "-u", "-r", "-1", "-p", "d.read", "d.used") == [
        "          d.read  d.read", "               a       b", "           count   count",
        "22:13:20       0       0", "",
        "          d.read  d.read  d.used", "               a       b        ",
        "           count   count   Kbyte", "22:13:21       1       1       1", "",
        "          d.read  d.read  d.used", "               b       c        ",
        "           count   count   Kbyte", "22:13:22       2       2       2", "",
        "          d.read  d.read", "               b       c", "           count   count",
        "22:13:23       3       3", "",
        "          d.used", "                ", "           Kbyte", "22:13:24       4", "",
        "          d.read", "               c", "           count", "22:13:25       5",
    ]  # fmt: skip


def test_dynamic_header_rates_and_a_sample_without_values(where):
    """Interpolated rates: the first sample has none ("N/A" alone), and -x says the
    instances are those present in the archive, -T's duration as given."""
    lines = pmrep(where, "-x", "-1", "-s", "3", "-T", "4", "d.read", "d.used")
    assert lines[6:10] == ["  metrics: 2 (4 instances present in archive)", "  samples: 3",
                           " interval: 2.0 sec", " duration: 00:00:04"]  # fmt: skip
    assert lines[11:] == [
        "  N/A", "", "  d.read  d.used", "       b        ", "  count/   Kbyte",
        "   1.000       2", "", "  d.read  d.used", "       c        ", "  count/   Kbyte",
        "   1.000       4",
    ]  # fmt: skip


def test_dynamic_header_columns_and_rows_swapped(where):
    assert pmrep(where, "-u", "-r", "-1", "-X", "i", "-p", "d.read", "d.used")[:12] == [
        "          i  d.read", "              count", "22:13:20  a       0",
        "22:13:20  b       0", "", "          i  d.read  d.used", "              count   Kbyte",
        "22:13:21  a       1       ~", "22:13:21  b       1       ~", "22:13:21  =       ~       1",
        "", "          i  d.read  d.used",
    ]  # fmt: skip


def test_fixed_header(where):
    """-7 with -X: one header of every metric, the instances with values under it."""
    assert pmrep(where, "-u", "-r", "-7", "-g", "-X", "i", "-p", "d.read", "d.used") == [
        "[ 1] - d.read - count", "[ 2] - d.used - Kbyte", "",
        "                    1         2",
        "22:13:20  a         0         ~", "22:13:20  b         0         ~",
        "22:13:21  a         1         ~", "22:13:21  b         1         ~",
        "22:13:21  =         ~         1", "22:13:22  b         2         ~",
        "22:13:22  c         2         ~", "22:13:22  =         ~         2",
        "22:13:23  b         3         ~", "22:13:23  c         3         ~",
        "22:13:24  =         ~         4", "22:13:25  c         5         ~",
    ]  # fmt: skip


def test_dynamic_csv(where):
    assert pmrep(where, "-u", "-r", "-1", "-o", "csv", "d.read", "d.used") == [
        'Time,"d.read-a","d.read-b"', "2023-11-14 22:13:20,0,0",
        'Time,"d.read-a","d.read-b","d.used"', "2023-11-14 22:13:21,1,1,1",
        'Time,"d.read-b","d.read-c","d.used"', "2023-11-14 22:13:22,2,2,2",
        'Time,"d.read-b","d.read-c"', "2023-11-14 22:13:23,3,3",
        'Time,"d.used"', "2023-11-14 22:13:24,4", 'Time,"d.read-c"', "2023-11-14 22:13:25,5",
    ]  # fmt: skip


def test_dynamic_header_ranked_in_instance_order(where):
    assert pmrep(where, "-u", "-r", "-J", "1", "-1", "-p", "d.read") == [
        "          d.read", "               a", "           count", "22:13:20       0",
        "22:13:21       1", "", "          d.read", "               b", "           count",
        "22:13:22       2", "22:13:23       3", "", "          d.read", "               c",
        "           count", "22:13:25       5",
    ]  # fmt: skip


def test_uninterpolated_extended_header(where):
    """-u: the samples asked for "(requested)", no interval, the archive's duration."""
    lines = pmrep(where, "-u", "-r", "-x", "-s", "3", "d.read")
    assert lines[7:10] == ["  samples: 3 (requested)", " interval: N/A", " duration: 00:00:05"]
    lines = pmrep(where, "-u", "-x", "d.read")
    assert lines[7:9] == ["  samples: N/A", " interval: N/A"]


def test_a_discrete_metric_keeps_its_value(where):
    """-u: a fetch with no d.host (a discrete metric) keeps the last one, as PCP's
    fetchgroup does; a record with none of the metrics is no sample."""
    assert pmrep(where, "-u", "-p", "d.host", "d.used") == [
        "          d.host  d.used", "                   Kbyte", "22:13:20       x     N/A",
        "22:13:21       x       1", "22:13:22       x       2", "22:13:24       x       4",
    ]  # fmt: skip


CASES = [
    ["-u", "-r", "-1", "-p", "d.read", "d.used"],
    ["-1", "-p", "d.read", "d.used"],
    ["-u", "-r", "-1", "-g", "-X", "i", "-p", "d.read", "d.used"],
    ["-u", "-r", "-7", "-X", "", "-E", "2", "-p", "d.read", "d.used"],
    ["-u", "-r", "-1", "-X", "i", "-6", "d.read", "-p", "d.read", "d.used"],
    ["-u", "-r", "-1", "-j", "-i", "b,c", "-p", "d.read", "d.used"],
    ["-u", "-r", "-1", "-k", "-o", "csv", "-l", ";", "d.read"],
    ["-u", "-1", "-o", "csv", "d.host", "d.read"],
    ["-u", "-r", "-7", "-X", "i", "-p", "d.host", "d.read", "d.used"],
    ["-x", "-Z", "Australia/Melbourne", "-s", "2", "d.used"],
]


@pytest.mark.interop
@pytest.mark.parametrize("args", CASES, ids=[" ".join(a) for a in CASES])
def test_as_pcp(where, args):
    """The same output as PCP 6.0.3's pmrep, byte for byte."""
    require_reference("pmrep")
    theirs = subprocess.run(["/usr/bin/pmrep", "-a", "dyn", *args], env=env(),
                            capture_output=True, text=True, cwd=where, timeout=120)  # fmt: skip
    assert theirs.returncode == 0, theirs.stderr
    assert pmrep(where, *args) == theirs.stdout.splitlines()


def test_archive_output_adds_instances_as_they_come(where, tmp_path):
    """-o archive: an instance joins the written instance domain when it first has a value
    (as pmrep adds it to its pmi log), and a discrete metric's unchanged value is not
    written again."""
    from purepcp.pmapi.archive.context import ArchiveContext

    target = str(tmp_path / "out")
    out = subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", "-a", "dyn", "-u", "-J",
                          "1", "-o", "archive", "-F", target, "d.read", "d.host"], env=env(),
                         capture_output=True, text=True, cwd=where, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    ctx = ArchiveContext(target)
    history = ctx.archive.indoms[INDOM]
    assert [list(record.insts) for record in history] == [[0], [0, 1], [0, 1, 2]]
    ctx.close()
    back = subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", "-a", target, "-u",
                           "d.host"], env=env(), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert back.stdout.splitlines() == ["  d.host", "        ", "       x"]  # (written once)
