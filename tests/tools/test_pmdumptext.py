"""pmdumptext: its command line, number formats, configuration lines and whole runs on
PCP's QA archives and against our pmcd.  PCP's own pmdumptext (Debian's pcp-gui) is not
the reference here: where it is installed the interop test compares the two; the
expectations otherwise come from PCP's QA outputs for the same commands (467, 1311,
1775), whose instantaneous values follow the closest-observation rule of later PCPs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from purepcp.tools.pmdumptext.command import format_number
from purepcp.tools.pmdumptext.options import USAGE, finish_options, read_options
from tests.support.qa_archives import qa

PY = sys.executable


def ours(*args: str, stdin: str = "", env: dict | None = None):
    return subprocess.run([PY, "-m", "purepcp.tools.pmdumptext", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, " 0.00 "), (1.5, " 1.50 "), (30450.0, "30.45K"), (26578176.0, "26.58M"),
     (2.5e9, " 2.50G"), (1e15, "  inf?"), (-1.5, "-1.50 "), (-30450.0, "-0.03M"),
     (-0.001, " 0.00  ")],
)  # fmt: skip
def test_format_number(value, text):
    assert format_number(value) == text


def test_widths_and_precisions_follow_the_options():
    o = read_options([])
    finish_options(o)
    assert (o.width, o.precision) == (5, 3)
    o = read_options(["-w", "10"])
    finish_options(o)
    assert (o.width, o.precision) == (10, 8)
    o = read_options(["-G", "-P", "4"])
    finish_options(o)
    assert (o.width, o.precision) == (5, 4)
    o = read_options(["-i"])
    finish_options(o)
    assert (o.width, o.fixed, o.nice) == (6, True, True)


def test_option_conflicts():
    assert read_options(["-F", "-G"]).messages == [
        "pmdumptext: -F and -G may not be used together\n"
    ]
    assert read_options(["-P", "2", "-w", "5"]).messages == [
        "pmdumptext: -P and -w may not be used together\n"
    ]
    assert read_options(["-w", "2"]).messages == ["pmdumptext: -w must be greater than 2\n"]
    assert read_options(["-d", "ab"]).messages == ["pmdumptext: delimiter must be one character\n"]
    assert read_options(["-d", "\\n"]).delimiter == "\n"
    assert read_options(["-a", "a,b c", "-a", "a"]).archives == ["a", "b", "c"]


def test_usage_and_its_exit_status():
    done = ours("-R", "0")
    assert done.returncode == 1
    assert done.stderr == "pmdumptext: -R requires a positive numeric argument\n" + USAGE
    assert USAGE.startswith("Usage: pmdumptext [options] [metrics ...]\n\nGeneral options:\n")
    assert "  -M                    show complete metrics names\n" in USAGE


def test_values_from_an_archive():
    done = ours("-z", "-a", qa("ac15"), "-S", "+10", "-s", "3", "kernel.all.cpu.user",
                "mem.util.free")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Sat Jul  9 08:48:39\t?\t26578176.000",
        "Sat Jul  9 08:48:40\t30450.000\t26578176.000",
        "Sat Jul  9 08:48:41\t30450.000\t26549440.000",
    ]


def test_headings_raw_values_and_formats():
    args = ["-z", "-a", qa("ac15"), "-S", "+10", "-s", "2"]
    done = ours(*args, "-F", "-u", "kernel.all.cpu.user", "mem.util.free")
    assert done.stdout.splitlines() == [
        "none\tmillisec / second\tKbyte",
        "Sat Jul  9 08:48:39\t?\t26.58M",
        "Sat Jul  9 08:48:40\t30.45K\t26.58M",
    ]
    done = ours(*args, "-r", "-m", "-d", ",", "-f", "%H:%M:%S", "kernel.all.cpu.user")
    assert done.stdout.splitlines() == [
        "Time,kernel.all.cpu.user",
        "08:48:39,1924106346.000",
        "08:48:40,1924136796.000",
    ]
    done = ours(*args[:-1], "1", "-M", "kernel.all.load")
    assert done.stdout.splitlines()[:4] == [
        '[ 1] kernel.all.load["1 minute"]',
        '[ 2] kernel.all.load["5 minute"]',
        '[ 3] kernel.all.load["15 minute"]',
        "",
    ]


def test_metrics_from_a_configuration_on_stdin():
    config = "# comment\n\nmem.util.free 1024\nno.such.metric\n"
    done = ours("-z", "-a", qa("ac15"), "-S", "+10", "-s", "1", stdin=config)
    assert done.stderr == (
        "pmdumptext: Error: no.such.metric: Unknown metric name\n"
        "pmdumptext: Warning: Some metrics ignored, continuing with valid metrics\n"
    )
    assert done.stdout == "Sat Jul  9 08:48:39\t25955.250\n"


def test_no_valid_metrics():
    done = ours("-a", qa("ac15"), "no.such.metric")
    assert done.returncode == 1
    assert done.stderr.endswith("pmdumptext: no valid metrics, exiting.\n")


@pytest.mark.interop
def test_beside_pcps_pmdumptext_where_installed():
    """PCP's pmdumptext comes with Debian's pcp-gui; compared when it is there."""
    if shutil.which("pmdumptext") is None:
        pytest.skip("PCP's pmdumptext (Debian's pcp-gui package) is not installed")
    args = ["-z", "-a", qa("ac15"), "-S", "+10", "-s", "3", "-H", "kernel.all.cpu.user"]
    theirs = subprocess.run(["pmdumptext", *args], capture_output=True, text=True, timeout=120)
    mine = ours(*args)
    assert (mine.returncode, mine.stdout, mine.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip


def test_live_from_our_pmcd(tmp_path):
    from tests.support.client_servers import ours_serving

    with ours_serving(tmp_path) as pmcd:
        done = ours("-h", pmcd.host, "-s", "2", "-t", "0.2", "-m", "-u", "hinv.ncpu",
                    "kernel.all.cpu.user", env=pmcd.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"Time\t{pmcd.host}:hinv.ncpu\t{pmcd.host}:kernel.all.cpu.user" or (
        lines[0].startswith("Time\t") and lines[0].endswith("kernel.all.cpu.user")
    )
    assert lines[1] == "none\tnone\tmillisec / second"
    assert len(lines) == 4
    assert lines[2].split("\t")[2] == "?"
