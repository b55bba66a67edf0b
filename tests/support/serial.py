"""Tests that need the machine to themselves when the suite runs on several workers (-n).

A test marked `serial` reads what the whole machine does, and cannot be made not to: PCP's
own per-process tools (`pcp ps -e`, `pmrep :proc-info`, ...) crash or misalign their
columns when a process ends between two of their fetches, and the other worker's tests
start and end processes all the time.  Such a test (its fixtures' set-up and tear-down
included) runs while no other test runs: every test holds the run's lock, shared, and a
serial one holds it alone.  A gate taken before the lock lets a waiting serial test in
ahead of the ordinary tests that come after it.  Without xdist there is nothing to share
the machine with, and no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def turn(item: pytest.Item) -> Iterator[None]:
    """ITEM's turn on the machine, for as long as it runs (set-up to tear-down)."""
    if not hasattr(item.config, "workerinput"):  # (not an xdist worker)
        yield
        return
    # every worker's basetemp (what tmp_path_factory gives) is popen-gwN in the run's own:
    # the locks go beside them
    shared = item.config._tmp_path_factory.getbasetemp().parent
    alone = item.get_closest_marker("serial") is not None
    with open(shared / "serial.gate", "a") as gate, open(shared / "serial.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if alone:  # through the gate only once the others are done: none start meanwhile
            fcntl.flock(lock, fcntl.LOCK_EX)
            fcntl.flock(gate, fcntl.LOCK_UN)
        else:
            fcntl.flock(gate, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
