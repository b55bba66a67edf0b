"""Session set-up: the hypothesis profile, $PATH, the derived metrics, our layout, and the
turns of `serial` tests under xdist.

Installing this project puts its own pminfo, pmval, pmstore and pmprobe beside
the Python that runs the tests.  With that directory on $PATH (an activated
virtualenv), an interop test asking for PCP's `pminfo` would run ours and compare
ours with itself.  Our tools are always run as `python -m purepcp.tools.TOOL`, so that
directory is taken off $PATH for the whole session.

The whole suite (CI, the README's second line): `pytest -n auto`.  The inner loop:
`HYPOTHESIS_PROFILE=dev pytest -n auto -m "not slow"`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import serial
from tests.support.layout import layout_text

# Hypothesis: the profile named by $HYPOTHESIS_PROFILE (or `pytest --hypothesis-profile`).
# `ci`, the default (what the README's test command runs): hypothesis's 100 examples a
# test, derandomized so that a run is repeatable, no example database.  `dev`, for the
# inner loop: 10 examples a test, at random, failing examples kept in .hypothesis/.  Both
# drop the wall-clock limits (the 200 ms deadline per example and the too_slow health
# check), which a busy machine, or the other xdist worker, trips without any fault.  A
# test wanting more or fewer examples asks for tests.support.examples.examples(N): N
# under `ci`, scaled under `dev`.
settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")

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
_layout = Path(tempfile.mkdtemp(prefix="purepcp-tests-"))
(_layout / "pcp.conf").write_text(layout_text(_layout))
os.environ["PUREPCP_CONF"] = str(_layout / "pcp.conf")
atexit.register(shutil.rmtree, _layout, True)

# PCP's daemons and tools keep their port files (a running pmlogger's, pmie's) under
# $PCP_TMP_DIR, and every pmcd, PCP's or ours, reports the pmloggers it finds there
# (pmcd.pmlogger.*).  The session's own directory keeps a pmlogger one test (or the other
# xdist worker) starts out of the pmcd another test is comparing.
(_layout / "tmp" / "pmlogger").mkdir(parents=True)
os.environ["PCP_TMP_DIR"] = str(_layout / "tmp")


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: two workers a CPU (eight at most).  Most tests spend their time waiting on
    the processes they start (pmcd, agents, PCP's tools, Redis servers), so one worker a
    CPU leaves the CPUs half idle: on two CPUs, four workers run the suite in two thirds
    of the time."""
    return min(8, 2 * (os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def _fresh_derived_metrics(monkeypatch):
    """Each test starts with the process's derived metrics not yet loaded: the tools the
    tests run in-process (pminfo -c, pmprobe --derived) load definitions into them."""
    from purepcp.pmapi.derived import registry

    monkeypatch.setattr(registry, "_default", None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist, a test marked `serial` runs (set-up to tear-down) while no other test
    runs on any worker (tests/support/serial.py says why and how)."""
    with serial.turn(item):
        return (yield)


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC in this process (time.tzset) and in the commands it starts."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
