"""docs/pmrep.md's chart is what pmplot draws: this test draws it from a synthetic day of
two metrics and compares it with the page's copy (same size, nearly every pixel the
same: fonts may differ by a pixel between matplotlib builds).

    PUREPCP_REGENERATE_DOCS=1 .venv/bin/python -m pytest tests/tools/test_pmrep_docs.py

writes the page's copy anew (then commit docs/images/pmrep-chart.png)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from purepcp.pmapi.archive.writer import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "docs" / "images" / "pmrep-chart.png"
COMMAND = ["demo.load", "demo.net", "-t", "10min", "-F", "chart.png"]
START = 1_767_225_600  # 2026-01-01 00:00 UTC
LOAD, NET = pmID_build(245, 0, 0), pmID_build(245, 0, 1)
INDOM = pmInDom_build(245, 0)


def write_day(base: str) -> None:
    """demo.load (1, 5 and 15 minute loads of a working day) and demo.net (a byte
    counter whose rate follows the load), a sample a minute for a day."""
    with ArchiveWriter(base, hostname="demo", timezone="UTC", start=Timestamp(START, 0)) as w:
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT), ["demo.load"])
        w.put_desc(Desc(NET, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                        Units(dimSpace=1, scaleSpace=1)), ["demo.net"])  # fmt: skip
        w.put_index(Timestamp(START, 0))
        w.put_indom(Timestamp(START, 0), INDOM, [1, 5, 15], ["1 minute", "5 minute", "15 minute"])
        total = 0
        for minute in range(24 * 60):
            hour = minute / 60
            busy = max(0.0, math.sin((hour - 7) / 12 * math.pi)) * 3 + 0.2
            loads = [busy + 0.3 * math.sin(minute / 7), busy + 0.1 * math.sin(minute / 23), busy]
            total += int(busy * 60 * 1500)
            pairs = list(zip((1, 5, 15), loads, strict=True))
            vsets = (
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, pairs),
                ValueSet.of_atoms(NET, PMType.PM_TYPE_U64, [(0xFFFFFFFF, total)]),
            )
            w.put_result(Result(Timestamp(START + minute * 60, 0), vsets))


def test_the_pages_chart_is_pmplots(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is not installed")
    write_day(str(tmp_path / "day"))
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "purepcp.tools.pmplot", "-a", "day", *COMMAND]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = tmp_path / "chart.png"
    assert made.read_bytes()[:4] == b"\x89PNG"
    if os.environ.get("PUREPCP_REGENERATE_DOCS"):
        IMAGE.parent.mkdir(exist_ok=True)
        shutil.copyfile(made, IMAGE)
    from matplotlib.image import imread

    ours, page = imread(made), imread(IMAGE)
    assert ours.shape == page.shape
    differ = np.abs(ours - page).max(axis=-1) > 0.1
    assert differ.mean() < 0.01, f"{differ.mean():.2%} of the pixels differ from the page's"
    assert "images/pmrep-chart.png" in (ROOT / "docs" / "pmrep.md").read_text()
