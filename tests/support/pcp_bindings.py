"""Running one script on PCP's own Python bindings (the system interpreter with Debian's
python3-pcp) and on ours (this interpreter, whose ``pcp`` and ``cpmapi`` are purepcp's),
to compare what they print."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"


def _pcp_bindings_here() -> bool:
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import pcp.pmapi, cpmapi"], cwd="/",
                           capture_output=True, timeout=60)  # fmt: skip
    return probe.returncode == 0


def require_pcp_bindings() -> None:
    """Skip, saying why, when PCP's own Python bindings are not installed."""
    if not _pcp_bindings_here():
        pytest.skip("PCP's Python bindings are not installed (Debian package python3-pcp)")


def run_both(script: str, args: list[str], where: Path, env: dict | None = None):
    """SCRIPT (Python source) with ARGS run by PCP's bindings and by ours, from WHERE
    (never the repository: its folders would shadow PCP's modules): (pcp, ours), each
    (stdout, stderr, exit status)."""
    path = where / "script.py"
    path.write_text(script)
    out = []
    for python in (SYSTEM_PYTHON, sys.executable):
        done = subprocess.run([python, str(path), *args], cwd=where, capture_output=True,
                              text=True, timeout=120, env=env)  # fmt: skip
        out.append((done.stdout, done.stderr, done.returncode))
    return out[0], out[1]
