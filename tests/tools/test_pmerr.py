"""pmerr: error codes decoded as PCP's pmerr decodes them, and libpcp's table listed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from purepcp.tools import pmerr
from tests.support.our_pmcd import ROOT
from tests.support.reference_pmcd import require_reference


def test_codes_decimal_hex_and_positive(capsys):
    assert pmerr.main(["-12357", "0xffffcfc5", "12357", "0"]) == 0
    assert capsys.readouterr().out == (
        "Code: -12357 0xffffcfbb Text: Unknown metric name\n"
        "Code: -12347 0xffffcfc5 Text: PMNS not accessible\n"
        "Code is positive, assume you mean -12357\n"
        "Code: -12357 0xffffcfbb Text: Unknown metric name\n"
        "Code: 0 0x0 Text: No error\n"
    )


def test_what_sscanf_makes_of_odd_arguments():
    assert pmerr.decode("12abc") == 12  # (%d stops at the first non-digit)
    assert pmerr.decode("0xZZ") == 0  # (not all hex: %d reads the 0)
    assert pmerr.decode(" 7") == 7
    assert pmerr.decode("0x80000000") == -(1 << 31)
    assert pmerr.decode("foo") is None
    assert pmerr.describe("foo") == 'Cannot decode "foo" - neither decimal nor hexadecimal\n'


def test_list_and_usage(capsys):
    assert pmerr.main(["-l"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "  Code  Symbolic Name          Message"
    assert out[1] == "-12345  PM_ERR_GENERIC         Generic error, already reported above"
    assert pmerr.main(["-s"]) == 1
    assert capsys.readouterr().err == "Illegal option -- s\n" + pmerr.USAGE
    assert pmerr.main(["-5"]) == 0  # (a hex digit after "-": a code, not an option)
    assert capsys.readouterr().out.startswith("Code: -5 0xfffffffb Text: ")


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [["-l"], ["--help"], ["-s"], ["-"], [], ["-12357", "foo", "0x1G", "-99999", "-131", "-12414"],
     ["2147483647", "-2147483648", "-0x10", "0x"]],
)  # fmt: skip
def test_as_pcps_pmerr(args):
    require_reference("pmerr")
    ours = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmerr", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    theirs = subprocess.run(["pmerr", *args], capture_output=True, text=True, timeout=60)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr,
    )  # fmt: skip
