"""pcp-pmlogsynth (PyPI), unmodified, writes its archives through our pcp.pmi; PCP's
pmlogcheck accepts them and PCP's pmdumplog reads them."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

PROFILE = """\
meta:
  hostname: synth01
  timezone: UTC
  duration: 600
  interval: 10
host:
  profile: generic-small
phases:
  - name: busy
    duration: 600
    cpu:
      utilization: 0.6
"""


@pytest.mark.slow
@pytest.mark.interop
def test_pmlogsynth_writes_archives_pcp_accepts(tmp_path):
    for tool in ("pmlogcheck", "pmdumplog"):
        if shutil.which(tool, path="/usr/bin") is None:
            pytest.skip(f"PCP's {tool} is not installed (Debian package pcp)")
    target = tmp_path / "site"
    got = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--pre",
            "--target",
            str(target),
            "pcp-pmlogsynth",
            "pyyaml",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if got.returncode != 0:
        pytest.skip(f"pcp-pmlogsynth could not be installed from PyPI: {got.stderr[-300:]}")
    (tmp_path / "profile.yaml").write_text(PROFILE)
    base = tmp_path / "synth"
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pmlogsynth",
            "generate",
            "-o",
            str(base),
            "--start",
            "2026-11-01 00:00:00 UTC",
            str(tmp_path / "profile.yaml"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    check = subprocess.run(
        ["/usr/bin/pmlogcheck", str(base)], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr
    label = subprocess.run(
        ["/usr/bin/pmdumplog", "-L", str(base)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "Performance metrics from host synth01" in label
    names = subprocess.run(
        ["/usr/bin/pminfo", "-a", str(base)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert "kernel.all.cpu.user" in names
