"""-D/--debug in pmval and pminfo: libpcp's debug options (pmSetDebug's names, numbers)
are taken; those naming libpcp's internals change nothing here (its traces are its
own), -D fetch adds our trace of each fetch on stderr (pmapi.debug); one pmSetDebug
refuses is refused as PCP's tools refuse it: "unrecognized debug options
specification", the usage, status 1."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools import pminfo, pmval
from tests.support.reference_pmcd import require_reference

T0 = 1_700_000_000
LOAD = 0x0F000001
GOOD = [["-Dlog"], ["-D", "derive,appl2,logmeta"], ["--debug=interp,pdu"], ["-D3"], ["-Dpdu,"]]


def small(base: str) -> str:
    with ArchiveWriter(base, hostname="dbg", timezone="UTC", start=Timestamp(T0, 0)) as w:
        w.put_index(Timestamp(T0, 0))
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_U32, sem=PMSem.PM_SEM_INSTANT), ["d.load"])
        for k in range(4):
            w.put_result(Result(Timestamp(T0 + k, 0), (
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_U32, [(0xFFFFFFFF, k)]),)))  # fmt: skip
    return base


def run(tool, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = tool.main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("tool", [pmval, pminfo])
@pytest.mark.parametrize("flags", GOOD)
def test_debug_options_are_taken_and_change_nothing(tmp_path, tool, flags):
    base = small(str(tmp_path / "a"))
    argv = ["-z", "-a", base, "-t", "1", "d.load"] if tool is pmval else ["-a", base, "-df", "d"]
    plain = run(tool, *argv)
    assert plain[0] == 0
    assert run(tool, *flags, *argv) == plain


def test_dash_d_fetch_adds_the_fetch_trace_alone(tmp_path):
    """pminfo -Dfetch: stdout as without it, each fetch told on stderr; and the next run
    in this process starts without it."""
    base = small(str(tmp_path / "a"))
    argv = ["-a", base, "-f", "d"]
    plain = run(pminfo, *argv)
    status, out, err = run(pminfo, "-Dfetch", *argv)
    assert (status, out) == plain[:2]
    assert err.startswith("pmFetch returns ...\n__pmResult dump from 0x")
    assert "  60.0.1 (d.load): numval: 1 valfmt: 0 vlist[]:\n   value " in err
    assert run(pminfo, *argv) == plain


@pytest.mark.parametrize(("tool", "usage"), [
    (pmval, "Usage: pmval [options] metricname\n"),
    (pminfo, "Usage: pminfo [options] [metricname | pmid | indom]...\n"),
])  # fmt: skip
@pytest.mark.parametrize("spec", ["foo", "log,nosuch", "3x"])
def test_a_bad_debug_specification_is_refused(tool, usage, spec):
    status, out, err = run(tool, f"-D{spec}", "x")
    name = "pmval" if tool is pmval else "pminfo"
    assert (status, out) == (1, "")
    assert err.startswith(f"{name}: unrecognized debug options specification ({spec})\n{usage}")
    assert "-D" not in err.split("\n", 2)[2]  # (not listed in the usage, as in PCP's)


@pytest.mark.interop
@pytest.mark.parametrize("tool", ["pmval", "pminfo"])
@pytest.mark.parametrize("spec", ["log", "foo", "derive,appl0,appl1"])
def test_debug_options_beside_pcps(tmp_path, tool, spec):
    """The same status and output as PCP's tool but for libpcp's trace on stderr."""
    require_reference(tool)
    base = small(str(tmp_path / "a"))
    argv = ["-z", "-a", base, "-t", "1", "d.load"] if tool == "pmval" else ["-a", base, "-d", "d"]
    env = dict(os.environ, TZ="UTC", PCP_DERIVED_CONFIG="")
    theirs = subprocess.run([tool, f"-D{spec}", *argv], capture_output=True, text=True, env=env)
    mine = subprocess.run([sys.executable, "-m", f"purepcp.tools.{tool}", f"-D{spec}", *argv],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert (mine.returncode, mine.stdout) == (theirs.returncode, theirs.stdout)
    if spec == "foo":
        assert mine.stderr.splitlines()[:2] == theirs.stderr.splitlines()[:2]
