"""pcp.pmi, PCP's log-import API: units of its rules, and archives written by the same
script through PCP's pmi (libpcp_import) and ours, compared by pmdumplog and byte by byte."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cpmapi as c
from pcp import pmi

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"


def _pcp_bindings() -> bool:
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    if not (shutil.which("pmdumplog") and shutil.which("pmlogcheck")):
        return False
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "from pcp import pmi"], cwd="/", capture_output=True, check=False
    )
    return probe.returncode == 0


needs_pcp = pytest.mark.skipif(
    not _pcp_bindings(),
    reason="needs PCP's Python bindings (Debian package python3-pcp), pmdumplog and pmlogcheck",
)


# -- units ---------------------------------------------------------------------------------


def test_error_codes_and_messages() -> None:
    assert pmi.PMI_ERR_DUPMETRICNAME == -20001
    assert pmi.PMI_ERR_BADVERSION == -20025
    assert pmi.pmiErrSymDict[-20008] == "PMI_ERR_DUPVALUE"
    assert len(pmi.pmiErrSymDict) == 25
    assert pmi.pmiErrStr(pmi.PMI_ERR_NODATA) == "No data to output"
    assert pmi.pmiErrStr(-12357) == "Unknown metric name"
    err = pmi.pmiErr(pmi.PMI_ERR_DUPMETRICNAME)
    assert str(err) == "PMI_ERR_DUPMETRICNAME b'Metric name already defined'"
    assert err.errno() == -20001 and err.args == (-20001,)
    assert str(pmi.pmiErr(-12357)) == " "  # (PCP's binding names only its own codes)
    assert pmi.pmiErr("x").errno() == 0


def test_identifiers_and_units() -> None:
    log = pmi.pmiLogImport
    assert log.pmiID(60, 2, 0) == 251660288
    assert log.pmiID(600, 5000, 2000) == 370025424  # (each field cut to its bits)
    assert log.pmiID(-1, 0, 0) == 2143289344
    assert log.pmiInDom(600, 2**23 + 5) == 369098757
    assert log.pmiCluster(3, 4) == 12587008
    units = log.pmiUnits(1, -1, 0, 8, 3, -1)
    assert bytes(units).hex() == "003f081f"  # as libpcp_import's struct, in memory
    assert str(log.pmiUnits(1, -1, 0, 1, 3, 0)) == "Kbyte / sec"


@pytest.mark.parametrize(
    ("type_", "text", "value"),
    [
        (0, "12", 12),
        (0, "  -7", -7),
        (0, "+5", 5),
        (0, "", 0),
        (0, "4294967295", -1),  # strtol's long, cut to 32 bits
        (0, "99999999999999999999", -1),
        (1, "-1", 0xFFFFFFFF),
        (2, "-9223372036854775809", -(2**63)),
        (3, "-1", 2**64 - 1),
        (3, "99999999999999999999", 2**64 - 1),
        (4, "1e39", float("inf")),
        (4, "0.5", 0.5),
        (4, "1.000000059604644776257986737988403547205962240695953369140625", 1 + 2**-23),
        (4, "1.0000000596046447753906250", 1.0),  # (exactly halfway: to even)
        (5, "0x1p3", 8.0),
        (5, "-Infinity", float("-inf")),
        (5, " .5e1", 5.0),
        (6, "a b\tc", "a b\tc"),
    ],
)
def test_values_read_as_c_reads_them(type_: int, text: str, value: object) -> None:
    assert pmi._PARSERS[type_](text) == value


@pytest.mark.parametrize(
    ("type_", "text"),
    [(0, "12 "), (0, " "), (0, "0x10"), (1, "1.5"), (2, "+"), (4, "1e"), (5, "1.5x"), (5, "0x")],
)
def test_values_that_do_not_parse(type_: int, text: str) -> None:
    with pytest.raises(pmi._ConvError):
        pmi._PARSERS[type_](text)


def test_metric_names() -> None:
    good = ("a", "a.b", "a_1.b2.c_", "kernel.all.load")
    bad = ("", "1a", "a..b", "a.", ".a", "a.1b", "a._b", "a-b", "é")
    assert all(pmi._valid_metric_name(n) for n in good)
    assert not any(pmi._valid_metric_name(n) for n in bad)


def _error(call, *args) -> int:
    with pytest.raises(pmi.pmiErr) as info:
        call(*args)
    return info.value.errno()


def test_declarations_and_their_errors(tmp_path: Path) -> None:
    log = pmi.pmiLogImport(str(tmp_path / "a"))
    units = log.pmiUnits(0, 0, 0, 0, 0, 0)
    indom = log.pmiInDom(60, 1)
    assert log.pmiAddMetric("m.one", log.pmiID(60, 0, 1), 1, indom, 1, units) == 0
    assert _error(log.pmiAddMetric, "m.one", 7, 1, indom, 1, units) == pmi.PMI_ERR_DUPMETRICNAME
    assert _error(log.pmiAddMetric, "m.two", log.pmiID(60, 0, 1), 1, indom, 1, units) == -20002
    assert _error(log.pmiAddMetric, "m..two", 8, 1, indom, 1, units) == -20012
    assert _error(log.pmiAddMetric, "m.two", 8, 7, indom, 1, units) == pmi.PMI_ERR_BADTYPE
    assert _error(log.pmiAddMetric, "m.two", 8, 1, indom, 2, units) == pmi.PMI_ERR_BADSEM
    with pytest.raises(ctypes.ArgumentError, match="argument 2: TypeError: wrong type"):
        log.pmiAddMetric("m.two", "8", 1, indom, 1, units)
    with pytest.raises(ctypes.ArgumentError, match="expected pmUnits instance instead of int"):
        log.pmiAddMetric("m.two", 8, 1, indom, 1, 0)
    assert log.pmiAddInstance(indom, "cpu0 first", 0) == 0
    assert _error(log.pmiAddInstance, indom, "cpu0 second", 1) == pmi.PMI_ERR_DUPINSTNAME
    assert _error(log.pmiAddInstance, indom, "cpu1", 0) == pmi.PMI_ERR_DUPINSTID
    assert log.pmiAddInstance(indom, "cpu0", 2) == 0  # (no space: its whole name differs)
    assert _error(log.pmiPutValue, "m.nope", None, "1") == -12357  # PM_ERR_NAME
    assert _error(log.pmiPutValue, "m.one", None, "1") == pmi.PMI_ERR_INSTNULL
    assert _error(log.pmiPutValue, "m.one", "cpu9", "1") == -12360  # PM_ERR_INST
    assert log.pmiPutValue("m.one", "cpu0 whatever", "1") == 0  # (up to the space)
    assert _error(log.pmiPutValue, "m.one", "cpu0 first", "2") == pmi.PMI_ERR_DUPVALUE
    assert log.pmiGetHandle("m.one", "cpu0") == 1
    assert _error(log.pmiPutValueHandle, 2, "1") == pmi.PMI_ERR_BADHANDLE
    assert _error(log.pmiSetVersion, 4) == pmi.PMI_ERR_BADVERSION
    assert not list(tmp_path.iterdir())  # (nothing is written before the first write)
    assert log.pmiEnd() == 0
    assert _error(log.pmiEnd) == -12376  # PM_ERR_NOCONTEXT: the context is gone
    assert not list(tmp_path.iterdir())


def test_writes_and_their_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = pmi.pmiLogImport(str(tmp_path / "a"))
    log.pmiAddMetric("m.n", 7, 0, c.PM_INDOM_NULL, 1, log.pmiUnits(0, 0, 0, 0, 0, 0))
    assert _error(log.pmiWrite, 10, 0) == pmi.PMI_ERR_NODATA
    log.pmiPutValue("m.n", None, "1")
    assert log.pmiWrite(10, 0) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.0", "a.index", "a.meta"]
    log.pmiPutValue("m.n", None, "2")
    assert _error(log.pmiWrite, 9, 0) == pmi.PMI_ERR_BADTIMESTAMP
    assert "not greater than previous valid timestamp" in capsys.readouterr().err
    assert log.pmiWrite(10, 0) == 0  # (the values wait for a good time)
    assert _error(log.pmiPutValue, "m.n", None, "x") == -12362  # PM_ERR_CONV
    assert _error(log.pmiPutValue, "m.n", None, "3") == pmi.PMI_ERR_DUPVALUE
    assert log.pmiPutMark() == 0
    log.pmiEnd()
    again = pmi.pmiLogImport(str(tmp_path / "a"))
    again.pmiAddMetric("m.n", 7, 0, c.PM_INDOM_NULL, 1, log.pmiUnits(0, 0, 0, 0, 0, 0))
    again.pmiPutValue("m.n", None, "1")
    assert _error(again.pmiWrite, 10, 0) == -17  # (an archive is never overwritten)
    assert "already exists" in capsys.readouterr().err
    again.pmiEnd()


@pytest.mark.parametrize(("setting", "version"), [("3", 3), ("2", 2), ("7", 2), ("x", 2)])
def test_archive_version_from_the_environment(
    setting: str, version: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pmiStart's version is $PCP_ARCHIVE_VERSION's (2 for anything but 2 or 3 here)."""
    monkeypatch.setenv("PCP_ARCHIVE_VERSION", setting)
    log = pmi.pmiLogImport(str(tmp_path / "a"))
    log.pmiAddMetric("m.n", 7, 0, c.PM_INDOM_NULL, 1, log.pmiUnits(0, 0, 0, 0, 0, 0))
    log.pmiPutValue("m.n", None, "1")
    log.pmiWrite(10, 0)
    log.pmiEnd()
    assert (tmp_path / "a.meta").read_bytes()[7] == version  # the label's magic


def test_our_reader_reads_it(tmp_path: Path) -> None:
    from purepcp.pmapi.archive.reader import Archive

    base = str(tmp_path / "a")
    log = pmi.pmiLogImport(base)
    log.pmiSetVersion(3)
    log.pmiSetHostname("elsewhere")
    log.pmiSetTimezone("UTC")
    indom = log.pmiInDom(60, 1)
    log.pmiAddMetric("m.s", c.PM_ID_NULL, 6, indom, 1, log.pmiUnits(0, 0, 0, 0, 0, 0))
    log.pmiAddInstance(indom, "b", 2)
    log.pmiAddInstance(indom, "a", 1)
    for sec in (100, 101):
        log.pmiPutValue("m.s", "b", f"bee{sec}")
        log.pmiPutValue("m.s", "a", f"ay{sec}")
        log.pmiHighResWrite(sec, 5)
    log.pmiEnd()
    archive = Archive(base)
    try:
        assert archive.label.hostname == "elsewhere" and archive.label.version == 3
        assert archive.label.start == (100, 5)
        records = [r.result for r in archive.records()]
        assert [r.timestamp for r in records] == [(100, 5), (101, 5)]
        assert list(records[0].vsets[0].insts) == [1, 2]  # in instance order
        assert records[1].vsets[0].values == ("ay101", "bee101")
    finally:
        archive.close()


# -- interop: one script, PCP's pmi and ours --------------------------------------------------

PRELUDE = """\
import sys
from pcp import pmi
import cpmapi as c

def attempt(call, *args):
    try:
        print(call.__name__, "->", call(*args))
    except pmi.pmiErr as e:
        print(call.__name__, "pmiErr", e.args, "[%s]" % e, e.errno())
    except Exception as e:
        print(call.__name__, type(e).__name__, e)

log = pmi.pmiLogImport(sys.argv[1])
NONE = log.pmiUnits(0, 0, 0, 0, 0, 0)
"""

TYPES = """\
log.pmiSetVersion(VERSION)
log.pmiSetHostname("importer.example.com")
log.pmiSetTimezone("AEST-10")
indom = log.pmiInDom(60, 7)
for n, name in enumerate(("32", "u32", "64", "u64", "float", "double", "string")):
    attempt(log.pmiAddMetric, "single." + name, log.pmiID(60, 1, n), n,
            c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
    attempt(log.pmiAddMetric, "multi." + name, log.pmiID(60, 2, n), n, indom,
            c.PM_SEM_COUNTER if n < 4 else c.PM_SEM_DISCRETE,
            log.pmiUnits(1, -1, 0, c.PM_SPACE_KBYTE, c.PM_TIME_SEC, 0))
for inst, name in ((15, "fifteen minutes"), (1, "one minute"), (5, "five")):
    attempt(log.pmiAddInstance, indom, name, inst)
values = ("-5", "4000000000", "-9000000000", "18000000000000000000", "0.1", "2.5e-300", "hi")
for t in range(3):
    for n, name in enumerate(("32", "u32", "64", "u64", "float", "double", "string")):
        attempt(log.pmiPutValue, "single." + name, None, values[n])
        for inst in ("five", "fifteen minutes", "one minute"):
            attempt(log.pmiPutValue, "multi." + name, inst, values[n] if n < 6 else inst * t)
    attempt(log.pmiWrite, 1700000000 + t, 250000 * t)
attempt(log.pmiPutValue, "multi.u64", "one", "1")
attempt(log.pmiWrite, 1700000010, 999999)
attempt(log.pmiEnd)
"""

TEXT_AND_LABELS = """\
log.pmiSetVersion(VERSION)
log.pmiSetHostname("labelled")
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(60, 3)
pmid = log.pmiID(60, 3, 1)
attempt(log.pmiAddMetric, "lab.metric", pmid, c.PM_TYPE_U32, indom, c.PM_SEM_INSTANT, NONE)
attempt(log.pmiAddMetric, "lab.other", log.pmiID(60, 3, 2), c.PM_TYPE_U32, c.PM_INDOM_NULL,
        c.PM_SEM_INSTANT, NONE)
attempt(log.pmiAddInstance, indom, "zero", 0)
attempt(log.pmiAddInstance, indom, "one", 1)
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, pmid, "one line")
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, pmid, "help\\nmore help")
attempt(log.pmiPutText, c.PM_TEXT_INDOM, c.PM_TEXT_ONELINE, indom, "the domain")
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, pmid, "one line")
attempt(log.pmiPutText, 3, c.PM_TEXT_ONELINE, pmid, "x")
attempt(log.pmiPutText, c.PM_TEXT_PMID, 4, pmid, "x")
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, c.PM_ID_NULL, "x")
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, pmid, "")
attempt(log.pmiPutLabel, c.PM_LABEL_CONTEXT, 0, 0, "site", "lab")
attempt(log.pmiPutLabel, c.PM_LABEL_CONTEXT, 0, 0, "active", "TRUE")
attempt(log.pmiPutLabel, c.PM_LABEL_DOMAIN, pmid, 0, "agent", "sixty")
attempt(log.pmiPutLabel, c.PM_LABEL_CLUSTER, pmid, 0, "cluster", "three")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, pmid, 0, "units", "none")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM | c.PM_LABEL_OPTIONAL, pmid, 0, "note", "optional")
attempt(log.pmiPutLabel, c.PM_LABEL_INDOM, indom, 0, "kind", "cpu")
attempt(log.pmiPutLabel, c.PM_LABEL_INSTANCES, indom, 1, "which", "one")
attempt(log.pmiPutLabel, c.PM_LABEL_INSTANCES, indom, 0, "which", "zero")
attempt(log.pmiPutLabel, c.PM_LABEL_INSTANCES, indom, c.PM_IN_NULL, "which", "none")
attempt(log.pmiPutLabel, 1 << 9, pmid, 0, "a", "b")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, c.PM_ID_NULL, 0, "a", "b")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, pmid, 0, "", "b")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, pmid, 0, "a", "")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, pmid, 0, "bad name", "b")
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, pmid, 0, "quote", 'say "hi"')
attempt(log.pmiWrite, 1000, 0)
attempt(log.pmiPutValue, "lab.metric", "one", "1")
attempt(log.pmiWrite, 1001, 0)
attempt(log.pmiPutLabel, c.PM_LABEL_ITEM, log.pmiID(60, 3, 2), 0, "late", "label")
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, log.pmiID(60, 3, 2), "late text")
attempt(log.pmiWrite, 1002, 0)
attempt(log.pmiWrite, 1003, 0)
attempt(log.pmiEnd)
"""

ERRORS = """\
log.pmiSetTimezone("UTC")
attempt(log.pmiSetVersion, 4)
attempt(log.pmiSetVersion, "3")
indom = log.pmiInDom(30, 1)
for args in (("e.one", log.pmiID(30, 0, 1), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("e.one", log.pmiID(30, 0, 2), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("e.two", log.pmiID(30, 0, 1), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("e.two.", log.pmiID(30, 0, 2), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("2e", log.pmiID(30, 0, 2), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("e.two", log.pmiID(30, 0, 2), c.PM_TYPE_EVENT, indom, c.PM_SEM_INSTANT, NONE),
             ("e.two", log.pmiID(30, 0, 2), c.PM_TYPE_32, indom, 0, NONE),
             ("e.two", "x", c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, NONE),
             ("e.two", log.pmiID(30, 0, 2), c.PM_TYPE_32, indom, c.PM_SEM_INSTANT, 3),
             ("e.two", c.PM_ID_NULL, c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE),
             ("e.three", c.PM_ID_NULL, c.PM_TYPE_U64, log.pmiInDom(30, 9), c.PM_SEM_INSTANT,
              NONE)):
    attempt(log.pmiAddMetric, *args)
attempt(log.pmiAddInstance, indom, "red apple", 1)
attempt(log.pmiAddInstance, indom, "red pepper", 2)
attempt(log.pmiAddInstance, indom, "red", 2)
attempt(log.pmiAddInstance, indom, "red", 3)
attempt(log.pmiAddInstance, indom, "green", -4)
attempt(log.pmiWrite, 5, 0)
attempt(log.pmiPutValue, "e.nothing", None, "1")
attempt(log.pmiPutValue, "e.one", None, "1")
attempt(log.pmiPutValue, "e.two", "red", "1")
attempt(log.pmiPutValue, "e.three", "x", "1")
attempt(log.pmiPutValue, "e.one", "blue", "1")
attempt(log.pmiPutValue, "e.one", "red apples", "10")
attempt(log.pmiPutValue, "e.one", "red", "11")
attempt(log.pmiPutValue, "e.one", "red", "12")
attempt(log.pmiPutValue, "e.one", "green", "x")
attempt(log.pmiPutValue, "e.one", "green", "-4")
attempt(log.pmiPutValue, "e.two", None, "nope")
attempt(log.pmiPutValue, "e.two", None, "2.5")
attempt(log.pmiPutValue, "e.two", "", "2.5")
attempt(log.pmiGetHandle, "e.one", "red pepper")
attempt(log.pmiGetHandle, "e.one", "purple")
attempt(log.pmiPutValueHandle, 1, "13")
attempt(log.pmiPutValueHandle, 0, "13")
attempt(log.pmiPutValueHandle, 2, "13")
attempt(log.pmiWrite, 5, 0)
attempt(log.pmiPutValueHandle, 1, "14")
attempt(log.pmiWrite, 4, 999999)
attempt(log.pmiWrite, 5, 0)
attempt(log.pmiWrite, 6, 0)
attempt(log.pmiPutValue, "e.two", None, "inf")
attempt(log.pmiPutValue, "e.one", "red", "0x10")
attempt(log.pmiWrite, 6, 0)
attempt(log.pmiEnd)
attempt(log.pmiEnd)
attempt(log.pmiPutValue, "e.one", "red", "1")
"""

NUMBERS = """\
log.pmiSetTimezone("UTC")
log.pmiSetVersion(VERSION)
texts = ("0", "", " 12", "+5", "-1", "4294967296", "99999999999999999999",
         "-99999999999999999999", "1e3", "0x1p4", "inf", "-INFINITY", ".5", "5.", "1e-50",
         "3.4028235e38", "3.5e38", "1e-310", "0.1", "12 ", "1.5e", "0x", "x", "- 1",
         "1.000000059604644776257986737988403547205962240695953369140625",
         "-1.0000000596046447753906250", "nan", "-nan(x1)", "1.5E+2")
indom = log.pmiInDom(40, 1)
for n, name in enumerate(texts):
    attempt(log.pmiAddInstance, indom, "v%d" % n, n)
for n in range(7):
    attempt(log.pmiAddMetric, "num.t%d" % n, log.pmiID(40, 0, n), n, indom,
            c.PM_SEM_INSTANT, NONE)
    attempt(log.pmiAddMetric, "bad.t%d" % n, log.pmiID(40, 1, n), n, c.PM_INDOM_NULL,
            c.PM_SEM_INSTANT, NONE)
for n in range(7):
    for i, text in enumerate(texts):
        attempt(log.pmiPutValue, "num.t%d" % n, "v%d" % i, text)
    attempt(log.pmiPutValue, "bad.t%d" % n, None, "twelve")
    attempt(log.pmiPutValue, "bad.t%d" % n, None, "12")
attempt(log.pmiWrite, 1, 0)
attempt(log.pmiEnd)
"""

MARKS_AND_GROWTH = """\
log.pmiSetTimezone("UTC")
log.pmiSetVersion(VERSION)
attempt(log.pmiPutMark)
indom = log.pmiInDom(50, 1)
attempt(log.pmiAddMetric, "g.s", log.pmiID(50, 0, 0), c.PM_TYPE_STRING, indom,
        c.PM_SEM_INSTANT, NONE)
attempt(log.pmiAddInstance, indom, "first", 1)
handle = log.pmiGetHandle("g.s", "first")
for t in range(120):
    if t == 40:
        attempt(log.pmiAddInstance, indom, "second", 0)
        attempt(log.pmiAddMetric, "g.n", log.pmiID(50, 0, 1), c.PM_TYPE_U64, c.PM_INDOM_NULL,
                c.PM_SEM_COUNTER, log.pmiUnits(0, 0, 1, 0, 0, c.PM_COUNT_ONE))
    if t >= 40:
        log.pmiPutValue("g.n", None, str(t * 1000))
        log.pmiPutValue("g.s", "second", "y" * t)
    log.pmiPutValueHandle(handle, "x" * 3000)
    if t % 50 == 7:
        attempt(log.pmiWrite, 100 + t, 0)
        attempt(log.pmiPutMark)
    else:
        log.pmiWrite(100 + t, 0)
attempt(log.pmiEnd)
"""

VOLUMES = """\
import os
os.environ["PCP_LOGIMPORT_MAXLOGSZ"] = "150000"
"""

INHERIT = """\
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(70, 1)
attempt(log.pmiAddMetric, "i.m", log.pmiID(70, 0, 0), c.PM_TYPE_U32, indom, c.PM_SEM_INSTANT,
        NONE)
attempt(log.pmiAddInstance, indom, "a", 1)
attempt(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, log.pmiID(70, 0, 0), "inherited")
attempt(log.pmiPutValue, "i.m", "a", "1")
attempt(log.pmiWrite, 10, 0)
second = pmi.pmiLogImport(sys.argv[1] + "-second", 1)
print("contexts", log.ctx, second.ctx, second.path)
attempt(second.pmiSetTimezone, "UTC")
attempt(second.pmiAddInstance, indom, "b", 2)
attempt(second.pmiPutValue, "i.m", "b", "2")
attempt(second.pmiWrite, 9, 0)
attempt(second.pmiWrite, 11, 0)
attempt(log.pmiPutValue, "i.m", "a", "3")
attempt(log.pmiWrite, 12, 0)
attempt(second.pmiEnd)
attempt(log.pmiEnd)
"""

RESULTS = """\
from ctypes import POINTER, Structure, c_int, cast, create_string_buffer, pointer, sizeof
import struct
from pcp.pmapi import pmResult, pmHighResResult, pmValueSet, pmValue, pmValueBlock, timeval
from pcp.pmapi import timespec
log.pmiSetTimezone("UTC")
log.pmiSetVersion(VERSION)
indom = log.pmiInDom(80, 1)
attempt(log.pmiAddMetric, "r.insitu", log.pmiID(80, 0, 0), c.PM_TYPE_32, indom,
        c.PM_SEM_INSTANT, NONE)
attempt(log.pmiAddMetric, "r.block", log.pmiID(80, 0, 1), c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL,
        c.PM_SEM_INSTANT, NONE)
attempt(log.pmiAddMetric, "r.text", log.pmiID(80, 0, 2), c.PM_TYPE_STRING, indom,
        c.PM_SEM_INSTANT, NONE)
for inst in (3, 1, 2):
    attempt(log.pmiAddInstance, indom, "i%d" % inst, inst)
keep = []

def block(vtype, payload):
    raw = create_string_buffer(4 + max(len(payload), 4))
    keep.append(raw)
    pv = cast(raw, POINTER(pmValueBlock))
    pv.contents.vlen = 4 + len(payload)
    pv.contents.vtype = vtype
    raw[4:4 + len(payload)] = payload
    return pv

def value_set(pmid, valfmt, values):
    class VS(Structure):
        _fields_ = [("pmid", c_int), ("numval", c_int), ("valfmt", c_int),
                    ("vlist", pmValue * max(len(values), 1))]
    vs = VS()
    keep.append(vs)
    vs.pmid, vs.numval, vs.valfmt = pmid, len(values), valfmt
    for n, (inst, v) in enumerate(values):
        vs.vlist[n].inst = inst
        if valfmt == 0:
            vs.vlist[n].value.lval = v
        else:
            vs.vlist[n].value.pval = v
    return cast(pointer(vs), POINTER(pmValueSet))

def result(shape, stamp_type, sec, sub, sets):
    class R(Structure):
        _fields_ = [("timestamp", stamp_type), ("numpmid", c_int),
                    ("vset", POINTER(pmValueSet) * len(sets))]
    r = R()
    keep.append(r)
    r.timestamp.tv_sec = sec
    if stamp_type is timeval:
        r.timestamp.tv_usec = sub
    else:
        r.timestamp.tv_nsec = sub
    r.numpmid = len(sets)
    for n, vs in enumerate(sets):
        r.vset[n] = vs
    return cast(pointer(r), POINTER(shape))

first = result(pmResult, timeval, 500, 250, [
    value_set(log.pmiID(80, 0, 0), 0, [(3, -3), (1, 1), (2, 2)]),
    value_set(log.pmiID(80, 0, 1), 1, [(-1, block(c.PM_TYPE_DOUBLE, struct.pack("=d", 2.5)))]),
])
attempt(log.put_result, first)
broken = value_set(log.pmiID(80, 0, 1), 0, [])
broken.contents.numval = c.PM_ERR_VALUE
second = result(pmHighResResult, timespec, 501, 123456789, [
    value_set(log.pmiID(80, 0, 2), 1, [(2, block(c.PM_TYPE_STRING, b"two\\0")),
                                       (1, block(c.PM_TYPE_STRING, b"one\\0"))]),
    broken,
])
attempt(log.put_highres_result, second)
attempt(log.put_result, first)
attempt(log.pmiPutValue, "r.insitu", "i1", "7")
attempt(log.pmiWrite, 502, 0)
attempt(log.pmiEnd)
"""

UNFINISHED = """\
log.pmiSetTimezone("UTC")
attempt(log.pmiAddMetric, "u.m", 5, c.PM_TYPE_U32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
attempt(log.pmiPutValue, "u.m", None, "1")
attempt(log.pmiWrite, 10, 0)
other = pmi.pmiLogImport(sys.argv[1] + "-other")
attempt(other.pmiSetTimezone, "UTC")
attempt(other.pmiAddMetric, "u.m", 5, c.PM_TYPE_U32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
attempt(other.pmiPutValue, "u.m", None, "2")
attempt(other.pmiWrite, 20, 0)
attempt(other.pmiPutValue, "u.m", None, "3")
"""

ARGUMENTS = """\
for call, args in ((log.pmiWrite, (1.5, 0)), (log.pmiID, (1.5, 0, 0)),
                   (log.pmiAddInstance, (1, "x", 1.5)), (log.pmiPutValue, ("a", None, 5)),
                   (log.pmiPutValue, (5, None, "5")), (log.pmiSetVersion, ("3",)),
                   (log.pmiUnits, (0, 0, 0, 0, 0, None)), (log.pmiPutText, (-1, 1, 2, "x")),
                   (log.pmiWrite, (2**70, 0)), (log.pmiPutLabel, (1, 0, 0, "a", None)),
                   (log.pmiSetHostname, (None,)), (log.pmiGetHandle, ("a", 5)),
                   (log.pmiPutValueHandle, ("1", "x")), (log.pmiHighResWrite, (1, 2**40)),
                   (log.pmiAddMetric, (b"b.m", 2**32 + 1, 2**32 + 1, -1, 1, NONE)),
                   (log.pmiPutValue, (b"b.m", b"", b"7\\0junk")), (log.pmiWrite, (3, 0)),
                   (log.pmiAddMetric, ("b.\\u00e9", 2, 1, -1, 1, NONE)),
                   (log.pmiAddMetric, ("b.\\ud800", 2, 1, -1, 1, NONE)),
                   (log.pmiPutValueHandle, ("1", 2)), (log.pmiPutText, ("1", 2, 3, 4)),
                   (log.pmiPutLabel, ("1", 2, 3, "a", 4)), (log.pmiAddInstance, ("1", 2, 3))):
    attempt(call, *args)
print(log.path, log.ctx)
attempt(log.pmiEnd)
print(log.path, log.ctx)
"""

SCRIPTS = {
    "arguments": ARGUMENTS,
    "unfinished": UNFINISHED,
    "results-v2": RESULTS.replace("VERSION", "2"),
    "results-v3": RESULTS.replace("VERSION", "3"),
    "types-v2": TYPES.replace("VERSION", "2"),
    "types-v3": TYPES.replace("VERSION", "3"),
    "text-labels-v2": TEXT_AND_LABELS.replace("VERSION", "2"),
    "text-labels-v3": TEXT_AND_LABELS.replace("VERSION", "3"),
    "errors": ERRORS,
    "numbers-v2": NUMBERS.replace("VERSION", "2"),
    "numbers-v3": NUMBERS.replace("VERSION", "3"),
    "marks-growth-v2": MARKS_AND_GROWTH.replace("VERSION", "2"),
    "marks-growth-v3": MARKS_AND_GROWTH.replace("VERSION", "3"),
    "volumes-v2": VOLUMES + MARKS_AND_GROWTH.replace("VERSION", "2"),
    "volumes-v3": VOLUMES + MARKS_AND_GROWTH.replace("VERSION", "3"),
    "inherit": INHERIT,
}


def _run(python: str, script: Path, base: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [python, str(script), str(base)],
        cwd=script.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}".replace(str(base), "BASE")


def _archives(folder: Path) -> dict[str, bytes]:
    """Every archive file in FOLDER, its labels' pid (bytes 8-11 of each file) zeroed."""
    files = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".py":
            continue
        data = bytearray(path.read_bytes())
        data[8:12] = bytes(4)
        files[path.name] = bytes(data)
    return files


def _dump(folder: Path, env: dict[str, str]) -> str:
    """pmdumplog -a of every archive in FOLDER, with its pid line left out."""
    out = []
    for meta in sorted(folder.glob("*.meta")):
        done = subprocess.run(
            ["pmdumplog", "-a", str(meta.with_suffix(""))],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        text = done.stdout + done.stderr
        out += [line for line in text.splitlines() if not line.startswith("PID for pmlogger")]
    return "\n".join(out).replace(str(folder), "DIR")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pmi")


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_same_archive_as_pcp(name: str, runs: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PCP_"))}
    env["TZ"] = "Europe/Berlin"
    outputs, archives, dumps = [], [], []
    for side, python in (("pcp", SYSTEM_PYTHON), ("ours", str(ROOT / ".venv/bin/python"))):
        folder = runs / name / side
        folder.mkdir(parents=True)
        script = folder / "script.py"
        script.write_text(PRELUDE + textwrap.dedent(SCRIPTS[name]))
        outputs.append(_run(python, script, folder / "arch", env))
        archives.append(_archives(folder))
        dumps.append(_dump(folder, env))
    assert outputs[1] == outputs[0]
    assert dumps[1] == dumps[0]
    assert archives[1].keys() == archives[0].keys()
    for file in archives[0]:
        assert archives[1][file] == archives[0][file], file
    assert _checks(runs / name / "ours") == _checks(runs / name / "pcp")


def _checks(folder: Path) -> list[str]:
    """pmlogcheck's verdict on each archive in FOLDER (PCP's own tool)."""
    verdicts = []
    for meta in sorted(folder.glob("*.meta")):
        check = subprocess.run(
            ["pmlogcheck", str(meta.with_suffix(""))],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        verdicts.append(
            f"{check.returncode} {check.stdout}{check.stderr}".replace(str(folder), "DIR")
        )
    return verdicts


@pytest.mark.interop
@needs_pcp
def test_default_host_and_zone_as_pcp(runs: Path) -> None:
    """Without pmiSetHostname or pmiSetTimezone, the label names this host and its zone
    (and, in a v3 label, its zoneinfo) as libpcp_import's does."""
    script_text = PRELUDE + textwrap.dedent(
        """\
        log.pmiSetVersion(int(sys.argv[2]))
        log.pmiAddMetric("d.m", 1, c.PM_TYPE_U32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
        log.pmiPutValue("d.m", None, "1")
        log.pmiWrite(1000, 0)
        log.pmiEnd()
        """
    )
    for version in ("2", "3"):
        labels = []
        for side, python in (("pcp", SYSTEM_PYTHON), ("ours", str(ROOT / ".venv/bin/python"))):
            folder = runs / f"defaults-{version}" / side
            folder.mkdir(parents=True)
            script = folder / "script.py"
            script.write_text(script_text)
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
            done = subprocess.run(
                [python, str(script), str(folder / "arch"), version],
                cwd=folder,
                env=env,
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            labels.append(_archives(folder)["arch.meta"][:800])
        assert labels[1] == labels[0]


def test_a_script_runs_without_pcp(tmp_path: Path) -> None:
    """PCP's own example (pmi.py's docstring) runs on ours, in a fresh interpreter."""
    script = tmp_path / "example.py"
    script.write_text(
        textwrap.dedent(
            """\
            import sys
            from pcp import pmi
            import cpmapi as c
            log = pmi.pmiLogImport(sys.argv[1])
            log.pmiSetHostname("www.abc.com")
            log.pmiSetTimezone("EST-10")
            domain = 60
            pmid = log.pmiID(domain, 2, 0)
            indom = log.pmiInDom(domain, 2)
            units = log.pmiUnits(0, 0, 0, 0, 0, 0)
            log.pmiAddMetric("kernel.all.load", pmid, c.PM_TYPE_FLOAT, indom,
                             c.PM_SEM_INSTANT, units)
            for n in (1, 5, 15):
                log.pmiAddInstance(indom, "%d minute" % n, n)
                log.pmiPutValue("kernel.all.load", "%d minute" % n, "%f" % (n / 100))
            log.pmiWrite(-1, 0)
            del log
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "arch")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert {p.name for p in tmp_path.iterdir()} >= {"arch.0", "arch.meta", "arch.index"}
    index = (tmp_path / "arch.index").read_bytes()
    assert len(index) == 132 + 2 * 20  # the label, the first record's entry, pmiEnd's
