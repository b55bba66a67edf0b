"""pmlogreduce: ours writes the archive PCP 6.0.3's pmlogreduce writes.

Unit tests check the command line and the output's metadata; interop tests reduce PCP's
QA archives with PCP's pmlogreduce and ours, check ours with PCP's pmlogcheck, and
compare PCP's pmdumplog of both: the label (but its pid), descriptors, instance
domains and temporal index always, and the values of archives whose metrics are all
counters or discrete (instantaneous values are interpolated by seed 001's rule, which
PCP adopted in 6.3.2, so PCP 6.0.3's may differ).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from purepcp.pmapi.archive import Archive
from purepcp.pmapi.types import PMType
from purepcp.tools.pmlogreduce import main
from purepcp.tools.pmlogreduce.options import parse_options
from tests.support.qa_archives import qa

OURS = [sys.executable, "-m", "purepcp.tools.pmlogreduce"]
THEIRS = "/usr/lib/pcp/bin/pmlogreduce"
needs_pcp = pytest.mark.skipif(
    shutil.which(THEIRS) is None or shutil.which("pmdumplog") is None,
    reason="reference PCP 6 (pmlogreduce, pmdumplog) is not installed",
)


def _run_ours(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def test_options():
    o = parse_options(["-t", "1min", "-s", "4", "-v", "2", "-S", "+1m", "in", "out"])
    assert (o.interval_us, o.samples, o.volsamples, o.start) == (60_000_000, 4, 2, "+1m")
    o = parse_options(["-s", "x", "-v", "-1", "-z", "-Z", "UTC", "a", "b"])
    assert o.messages == [
        "pmlogreduce: -s requires numeric argument\n",
        "pmlogreduce: -v requires numeric argument\n",
        "pmlogreduce: at most one of -Z and/or -z allowed\n",
    ]
    assert parse_options(["a"]).messages == ["pmlogreduce: Error: insufficient arguments\n"]
    assert parse_options(["-t", "foo", "a", "b"]).messages == ["foo\n^ -- unexpected value\n"]


def test_usage():
    status, _, err = _run_ours("-?")
    assert status == 1
    assert err.startswith("Usage: pmlogreduce [options] input-archive output-archive\n")
    assert "  -v NUM                switch log volumes after this many samples\n" in err


def test_missing_input(tmp_path):
    status, _, err = _run_ours("/nonexistent/in", str(tmp_path / "out"))
    assert status == 1
    assert err == (
        'pmlogreduce: Error: cannot open archive "/nonexistent/in" (ctx_a): '
        "No such file or directory\n"
    )


def test_counters_are_widened(tmp_path):
    out = str(tmp_path / "red")
    status, _, _ = _run_ours("-t", "1min", qa("uwrap"), out)
    assert status == 0
    with Archive(out) as a, Archive(qa("uwrap")) as src:
        for pmid, desc in src.descs.items():
            if desc.type == PMType.PM_TYPE_U32 and desc.sem == 1:  # (a 32-bit counter)
                assert a.descs[pmid].type == PMType.PM_TYPE_U64


def _dump(flags: str, base: str) -> str:
    text = subprocess.run(["pmdumplog", flags, base], capture_output=True, text=True,
                          check=False).stdout  # fmt: skip
    return re.sub(r"PID for pmlogger: \d+", "PID", text)


CASES = [
    ("kenj-pc-1", []),
    ("uwrap", ["-t", "1sec"]),
    ("conn20070309", ["-z", "-S", "+8h", "-T", "+3h", "-t", "20min"]),
    ("conn20070309", ["-s", "6"]),
    ("pmiostat_mark", ["-t", "1min"]),
    ("omnibus-nomark_v3", ["-t", "1sec"]),
    ("reduce-1", ["-t", "5min"]),
    ("count-mark", ["-t", "2sec", "-v", "3"]),
]


@pytest.fixture(scope="module")
def reduced(tmp_path_factory) -> dict[int, tuple[str, str, subprocess.CompletedProcess, ...]]:
    """Each case reduced by PCP and by us: (PCP's base, ours, PCP's run, our run)."""
    if shutil.which(THEIRS) is None:
        pytest.skip("reference PCP 6 (pmlogreduce) is not installed")
    d = tmp_path_factory.mktemp("reduce")
    out = {}
    for k, (name, opts) in enumerate(CASES):
        src = qa(name)
        theirs, ours = str(d / f"p{k}"), str(d / f"o{k}")
        tp = subprocess.run([THEIRS, *opts, src, theirs], capture_output=True, check=False)
        op = subprocess.run([*OURS, *opts, src, ours], capture_output=True, check=False)
        out[k] = (theirs, ours, tp, op)
    return out


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("k", range(len(CASES)), ids=[f"{n}{''.join(o)}" for n, o in CASES])
def test_reduced_like_pcp(reduced, k):
    theirs, ours, tp, op = reduced[k]
    assert op.returncode == tp.returncode
    assert op.stdout == tp.stdout
    assert op.stderr.decode() == tp.stderr.decode()
    check = subprocess.run(["pmlogcheck", ours], capture_output=True, text=True, check=False)
    pcp_check = subprocess.run(["pmlogcheck", theirs], capture_output=True, text=True, check=False)
    assert check.returncode == pcp_check.returncode
    for flags in ("-L", "-d", "-i", "-t"):
        assert _dump(flags, ours) == _dump(flags, theirs)


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("k", [1], ids=["uwrap"])
def test_values_like_pcp(reduced, k):
    """Counter-only archives: every record reads back the same, value for value."""
    theirs, ours, _, _ = reduced[k]
    assert _dump("-a", ours) == _dump("-a", theirs)
