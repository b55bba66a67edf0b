"""Session set-up: PCP's tool names on $PATH must mean the reference PCP's tools.

Installing this project puts its own pminfo, pmval, pmstore and pmprobe beside
the Python that runs the tests.  With that directory on $PATH (an activated
virtualenv), an interop test asking for PCP's `pminfo` would run ours and compare
ours with itself.  Our tools are always run as `python -m pmapi.cli.TOOL`, so that
directory is taken off $PATH for the whole session.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_ours = Path(sys.executable).parent.resolve()
os.environ["PATH"] = os.pathsep.join(
    part
    for part in os.environ.get("PATH", "").split(os.pathsep)
    if part and not ((Path(part) / "pminfo").exists() and Path(part).resolve() == _ours)
)

# The process's derived metrics come from PCP_DERIVED_CONFIG, else from the machine's
# $PCP_VAR_DIR/config/derived (PCP's own definitions, where PCP is installed): the tests
# start from none but PCP's two anonymous event.* metrics, as `PCP_DERIVED_CONFIG=`.
os.environ["PCP_DERIVED_CONFIG"] = ""


@pytest.fixture(autouse=True)
def _fresh_derived_metrics(monkeypatch):
    """Each test starts with the process's derived metrics not yet loaded: the tools the
    tests run in-process (pminfo -c, pmprobe --derived) load definitions into them."""
    from pmapi.derived import registry

    monkeypatch.setattr(registry, "_default", None)
