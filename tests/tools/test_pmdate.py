"""pmdate: now moved by offsets, in a strftime format, as PCP's pmdate prints it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from purepcp.tools import pmdate
from tests.support.our_pmcd import ROOT
from tests.support.reference_pmcd import require_reference

#: 2024-01-31 12:00:00 UTC
NOON = 1706702400


def _at(offsets: list[str], fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, pmdate.when(offsets, NOON))


def test_clock_offsets(utc):
    assert _at([]) == "2024-01-31 12:00:00"
    assert _at(["-1d"]) == "2024-01-30 12:00:00"
    assert _at(["+90M", "-30S"]) == "2024-01-31 13:29:30"
    assert _at(["-25H"]) == "2024-01-30 11:00:00"


def test_months_and_years_move_the_date_fields_and_mktime_carries(utc):
    assert _at(["+1m"]) == "2024-03-02 12:00:00"  # (31 February is 2 March, as mktime says)
    assert _at(["-13m"]) == "2022-12-31 12:00:00"
    assert _at(["+12m"]) == "2025-01-31 12:00:00"
    assert _at(["+1y", "-1m"]) == "2024-12-31 12:00:00"


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (["x5d", "%Y"], 'pmdate: incorrect leading sign for offset (x5d), must be "+" or "-"\n'),
        (["+5", "%Y"], "pmdate: missing scale after offset (+5)\n"),
        (["+5q", "%Y"], "pmdate: unknown scale after offset (+5q)\n"),
        (["+5?", "%Y"], pmdate.USAGE),
        ([], pmdate.USAGE),
        (["--help"], pmdate.USAGE),
        ([""], "pmdate: format too long\n"),
    ],
)
def test_refusals(capsys, args, err):
    assert pmdate.main(args) == 1
    assert capsys.readouterr() == ("", err)


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [["%Y%m%d"], ["-1d", "%Y%m%d"], ["-13m", "%Y-%m-%d"], ["-1y", "+2m", "-3d", "%Y-%m-%d"],
     ["+ 5d", "%d"], ["+xd", "%Y"], ["-?"], []],
)  # fmt: skip
def test_as_pcps_pmdate(args):
    """The same arguments to PCP's pmdate (formats without seconds: both read the clock;
    PCP's is asked before and after ours, so a day or minute turning over in between
    cannot make them differ)."""
    require_reference("pmdate")

    def pcps() -> tuple[int, str, str]:
        done = subprocess.run(["pmdate", *args], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    before = pcps()
    ours = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmdate", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert (ours.returncode, ours.stdout, ours.stderr) in (before, pcps())
