"""pmdiff: two archives' averages compared, as PCP's pmdiff script compares them."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from purepcp.tools import pmdiff
from tests.support.qa_archives import qa
from tests.support.reference_pmcd import require_reference


def test_fix_keeps_name_and_average_sorted_in_byte_order():
    summary = (
        'Note: timezone set to local timezone of host "bozo" from archive\n'
        "\n"
        "network.tcpconn.close  0.000 count\n"
        'swapdev.free ["/dev/sda7"] 3905208.000 Kbyte\n'
        "* sample.bad - insufficient archive data.\n"
        "Mem.x  1.5 none\n"
        'pmcd.pmlogger.port ["1"] 5 none\n'
        'kernel.all.load ["1 minute"] 0.610 none\n'
    )
    exclude = pmdiff.exclusions(pmdiff.ALWAYS_EXCLUDED)
    assert pmdiff.fix(summary, exclude) == [
        "Mem.x|1.5",
        'kernel.all.load ["1 minute"]|0.610',
        "network.tcpconn.close|0.000",
        'swapdev.free ["/dev/sda7"]|3905208.000',
    ]


def test_exclusions_know_posix_classes():
    (pattern,) = pmdiff.exclusions("^disk[.][[:alpha:]]+[[:digit:]]$\n")
    assert pattern.search("disk.dev9") and not pattern.search("disk.dev")
    (punct,) = pmdiff.exclusions("[[:punct:]]x")
    assert punct.search("a.x") and punct.search("[x") and not punct.search("ax")


def test_join_pairs_and_leftovers():
    left = ["a|1", "b|2", "d|4"]
    right = ["b|3", "c|5", "d|6", "d|7"]
    paired, only_left, only_right = pmdiff.join(left, right)
    assert paired == ["b|2|3", "d|4|6", "d|4|7"]
    assert only_left == ["a|1"]
    assert only_right == ["c|5"]


def test_awk_numbers_and_comparisons():
    assert pmdiff.awk_number("0.680") == 0.68
    assert pmdiff.awk_number("1.2.3") == 1.2
    assert pmdiff.awk_number("x") == 0
    assert pmdiff.awk_equal("0.000", "0")
    assert not pmdiff.awk_equal("1.2.3", "1.2")
    assert pmdiff.awk_greater("1000", 999)
    # a field that is not a number is compared as a string with the constant's text
    assert not pmdiff.awk_greater("1.2.3", 999)
    assert pmdiff.awk_greater("x", 999)


def test_columns_by_magnitude():
    c3, c5 = pmdiff.Columns(3), pmdiff.Columns(5)
    assert c3.value("0.029") == "          0.029 "
    assert c3.value("13") == "         13.00  "
    assert c3.value("301") == "        301.0   "
    assert c3.value("2000") == "       2000     "
    assert c3.value("191700868") == "      191700868 "
    assert c5.value("0.39996") == "          0.39996 "


def test_rows_new_gone_and_ratios():
    rows = pmdiff.compare(
        ["a|0|1", "b|1|0", "c|0|0.0", "d|1|2", "e|1|1.5", "f|1|500", "g|3000|2", "h|1|0.005"],
        2.0,
        pmdiff.Columns(3),
    )
    names = [row.split()[-1] for row in rows]
    assert names == ["a", "b", "d", "f", "g", "h"]
    ordered = pmdiff.order(rows)
    assert [row.split()[2] for row in ordered] == ["|+|", ">100", "2.00", "0.005", "<0.001", "|-|"]


def test_indent_as_sed_does():
    assert pmdiff._indent("a\nb\n") == "    a\n    b\n"
    assert pmdiff._indent("a\nb") == "    a\n    b"
    assert pmdiff._indent("") == ""


def test_usage_and_version(capsys):
    assert pmdiff.main([]) == 1
    assert capsys.readouterr().err == pmdiff.TOOL.usage()
    assert pmdiff.main(["a", "b", "c"]) == 1
    assert pmdiff.main(["-y", "a"]) == 1
    capsys.readouterr()
    assert pmdiff.main(["-V"]) == 0
    assert capsys.readouterr().out.startswith("pmdiff version ")


def test_usage_text_is_pcps():
    assert pmdiff.TOOL.usage() == (
        "Usage: pmdiff [options] archive1 [archive2]\n\n"
        "Options:\n"
        "  -d, --keep            debug, keep intermediate files\n"
        "  -p N, --precision=N   number of digits to display after the decimal point\n"
        "  -q N, --threshold=N   change interesting threshold to be > N or < 1/N [N=2]\n"
        "  --skip-missing        do not report metrics missing between the archives\n"
        "  --skip-excluded       do not report the list of metrics being excluded\n"
        "  -S TIME, --start=TIME start of the time window\n"
        "  -T TIME, --finish=TIME\n"
        "                        end of the time window\n"
        "  -B TIME, --begin=TIME start time for second archive (optional)\n"
        "  -E TIME, --end=TIME   end time for second archive (optional)\n"
        "  -x REGEX              egrep(1) pattern of metric(s) to be excluded\n"
        "  -X FILE               file containing egrep(1) patterns to exclude\n"
        "  -Z TZ, --timezone=TZ  set reporting timezone\n"
        "  -z, --hostzone        set reporting timezone to local time of metrics source\n"
        "  -V, --version         display version number and exit\n"
        "  -?, --help            show this usage message and exit\n"
    )


def test_keep_leaves_the_intermediate_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.setattr(pmdiff, "summarise", lambda opts, arch: ("m.a  1.0 none\n", ""))
    out = io.StringIO()
    pmdiff.report(pmdiff.parse(["-d", "x"]), out)
    assert (tmp_path / "tmp" / "1").read_text() == "m.a|1.0\n"
    assert out.getvalue().startswith(f"Directory: {tmp_path}\n")


# -- against PCP's pmdiff --------------------------------------------------------------------


def _cases() -> list[list[str]]:
    a, b, c = "ARCH:section-a", "ARCH:section-b", "ARCH:section-c"
    d1, d2 = "ARCH:diff1", "ARCH:diff2"
    return [
        ["-z", a, b],
        ["-z", "-q", "1.5", a, b],
        ["-z", "-p", "5", a, b],
        ["-z", "--skip-excluded", a, b],
        ["-z", "--skip-missing", a, c],
        ["-z", a, c],
        ["-z", "-q", "1", d1, d2],
        ["-z", d1, d2],
        ["-z", "-x", "disk", "-x", "^filesys", a],
        ["-q", "1", d1],
        ["-p", "20", "-q", "3", d2, d1],
        ["-z", "-p", "7", "-q", "1", d2, d1],
        ["-S", "@10:00", "-T", "+30s", a, b],
        ["-B", "+1m", "-E", "+2m", d1, d2],
        ["-Z", "UTC", d1, d2],
        ["--skip-missing", "--skip-excluded", d1, a],
        ["-X", "EXCLUDE", "-z", a, b],
        ["-X", "/nonexistent/file", d1],
        ["nosuch"],
        ["nosuch", d1],
        [],
        ["-y", d1],
        ["--help"],
        ["a", "b", "c"],
        ["-p"],
        ["-V"],
    ]


CASES = _cases()


def _resolve(args: list[str], folder: str) -> list[str]:
    out = []
    for arg in args:
        if arg.startswith("ARCH:"):
            arg = qa(arg[5:])
        out.append(arg.replace("EXCLUDE", os.path.join(folder, "exclude")))
    return out


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    """Each case as PCP's pmdiff and ours report it (the same pmlogsummary under both)."""
    require_reference("pmdiff", "pmlogsummary")
    folder = str(tmp_path_factory.mktemp("pmdiff"))
    with open(os.path.join(folder, "exclude"), "w") as f:
        f.write("^disk.dev\nfilesys.used \n")
    env = dict(os.environ, PWD=folder)
    found = []
    for args in CASES:
        argv = _resolve(args, folder)
        sides = []
        for command in (["pmdiff"], [sys.executable, "-m", "purepcp.tools.pmdiff"]):
            run = subprocess.run(
                [*command, *argv], capture_output=True, cwd=folder, env=env, timeout=120
            )
            sides.append((run.returncode, run.stdout, run.stderr))
        found.append(sides)
    return found


@pytest.mark.interop
@pytest.mark.parametrize("n", range(len(CASES)), ids=[" ".join(a) or "none" for a in CASES])
def test_as_pcps_pmdiff(both_sides, n):
    theirs, ours = both_sides[n]
    if CASES[n] == ["-V"]:  # (our version line is our own)
        assert ours[0] == theirs[0] == 0
        return
    assert ours == theirs
