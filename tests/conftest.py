"""Session set-up: PCP's tool names on $PATH must mean the reference PCP's tools.

Installing this project puts its own pminfo, pmval, pmstore and pmprobe beside
the Python that runs the tests.  With that directory on $PATH (an activated
virtualenv), an interop test asking for PCP's `pminfo` would run ours and compare
ours with itself.  Our tools are always run as `python -m purepcp.tools.TOOL`, so that
directory is taken off $PATH for the whole session.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
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


# Our tools' layout (pmapi.paths) points into a directory of the session's own, so that no
# test reads or writes the machine's or the user's purepcp configuration, logs or run files.
# (PUREPCP_CONF is ours alone: PCP's own tools, which the interop tests run, never read it.)
def layout_text(top: Path) -> str:
    """A pcp.conf-style layout putting every directory of ours under TOP."""
    return "".join(
        f"{name}={top / sub}\n"
        for name, sub in (
            ("PCP_SYSCONF_DIR", "etc"),
            ("PCP_VAR_DIR", "var"),
            ("PCP_LOG_DIR", "log"),
            ("PCP_RUN_DIR", "run"),
            ("PCP_SYSTEMDUNIT_DIR", "units"),
        )
    )


_layout = Path(tempfile.mkdtemp(prefix="purepcp-tests-"))
(_layout / "pcp.conf").write_text(layout_text(_layout))
os.environ["PUREPCP_CONF"] = str(_layout / "pcp.conf")
atexit.register(shutil.rmtree, _layout, True)


@pytest.fixture(autouse=True)
def _fresh_derived_metrics(monkeypatch):
    """Each test starts with the process's derived metrics not yet loaded: the tools the
    tests run in-process (pminfo -c, pmprobe --derived) load definitions into them."""
    from purepcp.pmapi.derived import registry

    monkeypatch.setattr(registry, "_default", None)
