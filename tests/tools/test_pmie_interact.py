"""pmie -d, the interactive debugger: its command lines, and sessions of commands that
PCP's pmie and ours run alike (listings, runs that go on reading where the last one
stopped, errors)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from purepcp.tools.pmie.interact import LINE_LENGTH, command_lines
from tests.support.qa_archives import qa

PMIE = "/usr/bin/pmie"
OURS = [sys.executable, "-m", "purepcp.tools.pmie"]
needs_pmie = pytest.mark.skipif(
    not os.path.exists(PMIE), reason="PCP's pmie is not installed (Debian package pcp)"
)
_NOTIFY = re.compile(r"^\[[^]]*\] pmie\(\d+\)", re.M)

#: counters only: a rate is the same whatever the interpolation of instant values
RULES = """\
delta = 4 sec;
tick = sample.seconds > 0.5 -> print "tick %v" & shell 10 sec "echo %h";
ms = sample.milliseconds / 1000;
both = sample.seconds >= 0.9 && sample.milliseconds > 900 -> alarm "both %v";
"""
#: every command, each error they report, and a second file whose rules clash
SESSION = """\
l
   l tick
l nope
v both
v
T 10sec
r
r 8 sec
S +20
r
S junk
T
S
r bad
?
zz
f rules
l ms
q
"""


def _both(tmp_path, args: list[str], commands: str):
    """PCP's pmie and ours with ARGS, COMMANDS on standard input."""
    (tmp_path / "rules").write_text(RULES)
    out = []
    for cmd in ([PMIE, *args], [*OURS, *args]):
        done = subprocess.run(cmd, cwd=tmp_path, input=commands, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        out.append((done.stdout, _NOTIFY.sub("[TIME] pmie(PID)", done.stderr), done.returncode))
    return out


@pytest.mark.interop
@needs_pmie
def test_a_session_as_pcps(tmp_path):
    pcp, ours = _both(tmp_path, ["-d", "-a", qa("sample-secs"), "rules"], SESSION)
    assert "tick 1" in pcp[0] and "(shell 10" in pcp[0]
    assert ours == pcp


@pytest.mark.interop
@needs_pmie
def test_rules_read_from_standard_input(tmp_path):
    """f without a file reads the rest of standard input as rules; the commands end with
    it."""
    commands = 'f\nr = sample.seconds > 0 -> print "in %v";\n'
    pcp, ours = _both(tmp_path, ["-d", "-a", qa("sample-secs")], commands)
    assert ours == pcp


@pytest.mark.interop
@needs_pmie
@pytest.mark.parametrize(
    "args",
    [["-c", "rules", "-d"], ["-d", "-c", "rules"], ["-d", "-C", "rules"], ["-C", "-d"]],
    ids=str,
)
def test_options_with_d_as_pcps(tmp_path, args):
    """-c and -d are exclusive; -d -C checks the files named and ends."""
    pcp, ours = _both(tmp_path, [*args, "-a", qa("sample-secs")], "l\nq\n")
    assert ours == pcp


@pytest.mark.interop
@needs_pmie
def test_a_long_command_line_as_pcps(tmp_path):
    """A line longer than pmie reads at once: its first 255 characters are a command,
    the one after is lost, the rest is the next command."""
    line = "l " + "x" * (LINE_LENGTH - 2) + "A" + "l abc\n"
    pcp, ours = _both(tmp_path, ["-d", "-a", qa("sample-secs")], line + "q\n")
    assert 'rule "abc" not defined' in pcp[0]
    assert ours == pcp


def _lines(text: str) -> list[str]:
    return list(command_lines(io.StringIO(text)))


def test_command_lines_as_pmie_reads_them():
    assert _lines("  l x \n\n\t r\nq\n") == ["l x ", "r", "q"]
    # (a last line without its newline is the end of input: never run)
    assert _lines("l\nq") == ["l"]
    long = "l" + "x" * (LINE_LENGTH + 10) + "\n"
    # (cut at LINE_LENGTH characters, the next lost, the rest the next command)
    assert _lines(long) == [long[:LINE_LENGTH], "x" * 10]
    assert _lines("") == []
