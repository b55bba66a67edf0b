"""pmhostname: a host's name resolved as libpcp resolves it, as PCP's pmhostname."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from purepcp.tools import pmhostname
from tests.support.our_pmcd import ROOT

PCP_PMHOSTNAME = "/usr/lib/pcp/bin/pmhostname"


def test_names_resolve_back_or_stay_as_given(capsys):
    assert pmhostname.canonical("127.0.0.1") == socket.getnameinfo(("127.0.0.1", 0), 0)[0]
    assert pmhostname.canonical("no.such.host.invalid") == "no.such.host.invalid"
    assert pmhostname.main([]) == 0
    assert capsys.readouterr().out == pmhostname.canonical(socket.gethostname()) + "\n"


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (["a", "b"], pmhostname.USAGE),
        (["-x"], "pmhostname: invalid option -- 'x'\n" + pmhostname.USAGE),
        (["--bogus"], "pmhostname: unrecognized option '--bogus'\n" + pmhostname.USAGE),
        (["-Dfoo"], "pmhostname: unrecognized debug options specification (foo)\n"
         + pmhostname.USAGE),
        (["-?"], pmhostname.USAGE),
    ],
)  # fmt: skip
def test_refusals(capsys, args, err):
    assert pmhostname.main(args) == 1
    assert capsys.readouterr() == ("", err)


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [[], ["localhost"], ["127.0.0.1"], ["no.such.host.invalid"], [""], ["-Dpdu", "localhost"],
     ["a", "b"], ["-x"], ["--bogus"], ["--debug"]],
)  # fmt: skip
def test_as_pcps_pmhostname(args):
    import os

    if not os.path.exists(PCP_PMHOSTNAME):
        pytest.skip("reference PCP 6 is not installed (no pmhostname)")
    ours = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmhostname", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    theirs = subprocess.run([PCP_PMHOSTNAME, *args], capture_output=True, text=True, timeout=60)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr,
    )  # fmt: skip
