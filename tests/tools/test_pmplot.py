"""pmplot as a command: charts only (-o png|svg, -F's suffix), one-line errors naming
pmplot for a file it cannot write, an output it does not make or an empty window, and the
charts people look at: full metric names, a grid of same-sized charts, times in the zone
pmrep would use.  Images are read back (their size) and the figures looked at."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive.writer import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.report.settings import CHART_DPI, CHART_SIZE

pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000  # 2023-11-14 22:13:20 UTC
STEP, SAMPLES = 60, 120  # two hours, a sample a minute
METRICS = 17  # as many as :vmstat reports
LOAD, TEXT = pmID_build(245, 1, 0), pmID_build(245, 1, 1)
INDOM = pmInDom_build(245, 1)
WIDTH_PX, HEIGHT_PX = (int(inches * CHART_DPI) for inches in CHART_SIZE)


def write_archive(base: str) -> None:
    """t.m00 ... t.m16 (doubles, each its own ramp), t.load (3 instances) and t.str, from
    host "box" in zone AEST-10."""
    with ArchiveWriter(base, hostname="box", timezone="AEST-10", start=Timestamp(T0, 0)) as w:
        kbyte = Units(dimSpace=1, scaleSpace=1)
        for i in range(METRICS):
            desc = Desc(pmID_build(245, 0, i), PMType.PM_TYPE_DOUBLE, PM_INDOM_NULL,
                        PMSem.PM_SEM_INSTANT, kbyte)  # fmt: skip
            w.put_desc(desc, [f"t.m{i:02d}"])
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, INDOM, PMSem.PM_SEM_INSTANT), ["t.load"])
        w.put_desc(Desc(TEXT, PMType.PM_TYPE_STRING), ["t.str"])
        w.put_index(Timestamp(T0, 0))
        w.put_indom(Timestamp(T0, 0), INDOM, [1, 5, 15], ["1 minute", "5 minute", "15 minute"])
        for s in range(SAMPLES):
            ramps = [[(0xFFFFFFFF, float(s * (i + 1)))] for i in range(METRICS)]
            vsets = [
                ValueSet.of_atoms(pmID_build(245, 0, i), PMType.PM_TYPE_DOUBLE, ramp)
                for i, ramp in enumerate(ramps)
            ]
            vsets.append(ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE,
                                           [(1, s % 7), (5, s % 5), (15, s % 3)]))  # fmt: skip
            vsets.append(ValueSet.of_atoms(TEXT, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, "x")]))
            w.put_result(Result(Timestamp(T0 + s * STEP, 0), tuple(vsets)))


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> str:
    base = str(tmp_path_factory.mktemp("pmplot") / "box")
    write_archive(base)
    return base


def environ() -> dict[str, str]:
    return {"TZ": "UTC", "PCP_DERIVED_CONFIG": "", "PCP_SYSCONF_DIR": "/nonexistent"}


def command(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """TOOL (pmplot or pmrep) as its own process: what a user sees, tracebacks included."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **environ())
    return subprocess.run([sys.executable, "-m", f"purepcp.tools.{tool}", *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=cwd)  # fmt: skip


@pytest.fixture
def run(monkeypatch, tmp_path, capsys):
    """pmplot in this process, in TMP_PATH: (status, stdout, stderr, the chart writers)."""
    from purepcp.tools import pmplot
    from purepcp.tools.report.chart import ChartWriter

    for name, value in environ().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    writers: list[ChartWriter] = []
    close = ChartWriter.close

    def spy(self: ChartWriter) -> list[str]:
        writers.append(self)
        return close(self)

    monkeypatch.setattr(ChartWriter, "close", spy)

    def go(*args: str, main=pmplot.main) -> tuple[int, str, str, list[ChartWriter]]:
        writers.clear()
        status = main(list(args))
        out, err = capsys.readouterr()
        return status, out, err, list(writers)

    return go


def test_a_file_it_cannot_write_is_one_line(archive, tmp_path):
    out = command("pmplot", "-a", archive, "t.m00", "-F", "/nonexistent/dir/x.png", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == "pmplot: cannot write /nonexistent/dir/x.png: No such file or directory\n"


def test_a_directory_in_its_place_is_one_line(archive, run, tmp_path):
    (tmp_path / "taken.png").mkdir()
    status, out, err, _ = run("-a", archive, "t.m00", "-F", "taken.png")
    assert (status, out, err) == (1, "", "pmplot: cannot write taken.png: Is a directory\n")


def test_pmrep_charts_say_pmrep(archive, run):
    from purepcp.tools import pmrep

    status, _, err, _ = run("-a", archive, "-o", "png", "-F", "/nonexistent/x.png", "t.m00",
                            main=pmrep.main)  # fmt: skip
    assert status == 1
    assert err == "pmrep: cannot write /nonexistent/x.png: No such file or directory\n"


@pytest.mark.parametrize("output", ["stdout", "csv", "json", "archive", "pdf"])
def test_only_charts_are_its_outputs(archive, run, tmp_path, output):
    status, out, err, writers = run("-a", archive, "-o", output, "t.m00")
    assert (status, out, writers) == (1, "", [])
    assert err == (f"pmplot: invalid output '{output}': pmplot draws charts, -o png or -o svg "
                   "(for text, csv, json or an archive use pmrep)\n")  # fmt: skip
    assert os.listdir(tmp_path) == []  # (no pmplot.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-F", "x.jpg"], "cannot write x.jpg: charts are png or svg, name the file .png or .svg"),
        (["-F", "x.pdf", "-o", "png"],
         "cannot write x.pdf: charts are png or svg, name the file .png or .svg"),
        (["-o", "svg", "-F", "x.png"], "cannot write x.png as svg: name the file .svg"),
    ],
)  # fmt: skip
def test_a_suffix_that_is_not_the_format_is_refused(archive, run, tmp_path, args, message):
    status, out, err, _ = run("-a", archive, "t.m00", *args)
    assert (status, out, err) == (1, "", f"pmplot: {message}\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "written", "magic"),
    [
        ([], "pmplot.png", b"\x89PNG"),
        (["-o", "svg"], "pmplot.svg", b"<?xml"),
        (["-F", "chart.SVG"], "chart.SVG", b"<?xml"),
        (["-F", "plain", "-o", "svg"], "plain", b"<?xml"),  # no suffix: -o says, else png
        (["-F", "plain"], "plain", b"\x89PNG"),
    ],
)
def test_the_format_is_the_suffix_or_o(archive, run, tmp_path, args, written, magic):
    status, _, err, _ = run("-a", archive, "t.m00", "-s", "3", *args)
    assert (status, err) == (0, f"pmplot: wrote {written}\n")
    assert (tmp_path / written).read_bytes().startswith(magic)


def test_an_empty_window_is_an_error_and_no_file(archive, tmp_path):
    """pmrep prints its header and nothing else (as PCP's pmrep does); a chart of nothing
    is no chart."""
    out = command("pmplot", "-a", archive, "-S", "+3h", "t.m00", "-F", "e.png", cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (1, "", "pmplot: no values to chart\n")
    assert os.listdir(tmp_path) == []
    out = command("pmrep", "-a", archive, "-S", "+3h", "t.m00", cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (0, "  t.m00\n  Kbyte\n", "")


def test_string_metrics_alone_are_no_values(archive, run, tmp_path):
    status, _, err, _ = run("-a", archive, "t.str", "-F", "s.png")
    assert (status, err) == (1, "pmplot: no values to chart\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-S", "@junk"], "invalid time window: junk: unexpected value"),
        (["--dpi", "x"], "--dpi requires a positive numeric argument"),
        (["--columns", "0"], "--columns requires a positive numeric argument"),
        (["--chart-size", "big"], "--chart-size wants WIDTHxHEIGHT in inches, not 'big'"),
    ],
)
def test_its_messages_name_pmplot(archive, run, args, message):
    status, out, err, _ = run("-a", archive, "t.m00", *args)
    assert (status, out, err) == (1, "", f"pmplot: {message}\n")


def test_a_bad_interval_is_pmreps_lines_and_usage(archive, run):
    """-t as PCP's option handling says it: the parser's lines, then the usage."""
    status, out, err, _ = run("-a", archive, "t.m00", "-t", "soon")
    assert (status, out) == (1, "")
    assert err.startswith("pmplot: -t argument not in pmParseHighResInterval(3) format:\n"
                          "soon\n^ -- unexpected value\n\nUsage: pmplot ")  # fmt: skip


def test_help_says_what_pmplot_does(run):
    status, _, out, _ = run("--help")  # (to stderr, as PCP's tools do)
    assert status == 0
    lines = out.splitlines()
    assert "stdout" not in out and "csv" not in out
    assert lines[lines.index("  -o FORMAT, --output=FORMAT") + 1].split() == [
        "chart", "format:", "png", "or", "svg", "(default:", "-F's", "suffix)"]  # fmt: skip
    assert "  --columns=N           charts side by side" in out
    for text_only in ("--timestamps", "--colxrow", "--delimiter", "--precision="):
        assert text_only not in out


def test_pmreps_help_still_lists_every_output(run):
    from purepcp.tools import pmrep

    status, _, out, _ = run("--help", main=pmrep.main)
    assert status == 0
    assert "output target: archive, csv, stdout (default), json, png, svg" in out
    assert "--timestamps" in out


def titles(writer) -> list[str]:
    return [ax.get_title(loc="left") for ax in writer.figures[0].axes]


def test_vmstat_sized_grid_with_full_names_and_the_users_labels(archive, run, tmp_path):
    """A metricset of 17 metrics (as :vmstat is): six rows of three charts of the default
    size each, not one column 17 charts tall; titles are the full names after the
    metricset's labels; the unit is the y axis's."""
    specs = "".join(f"t.m{i:02d} = v{i},,MB\n" for i in range(METRICS))
    (tmp_path / "plot.conf").write_text(f"[many]\n{specs}")
    status, _, err, [writer] = run("-a", archive, "-c", "plot.conf", ":many", "-F", "many.png")
    assert (status, err) == (0, "pmplot: wrote many.png\n")
    from matplotlib.image import imread

    assert imread(tmp_path / "many.png").shape[:2] == (6 * HEIGHT_PX, 3 * WIDTH_PX)
    assert titles(writer) == [f"v{i} (t.m{i:02d})" for i in range(METRICS)]
    assert {ax.get_ylabel() for ax in writer.figures[0].axes} == {"MB"}
    assert writer.figures[0].get_suptitle() == f"box: {archive}"


def test_names_are_whole_not_pmreps_abbreviations(archive, run):
    status, _, _, [writer] = run("-a", archive, "t.load", "t.m03", "-F", "x.svg")
    assert status == 0
    assert titles(writer) == ["t.load", "t.m03"]  # (pmrep's labels are t.load and t.m03 too)
    status, _, _, [writer] = run("-a", archive, "t.load,load", "t.m03", "-F", "x.svg")
    assert titles(writer) == ["load (t.load)", "t.m03"]
    legend = writer.axes_by_metric["t.load"].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["1 minute", "5 minute", "15 minute"]


def hours(writer) -> list[int]:
    ax = writer.figures[0].axes[-1]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    return [int(text[:2]) for text in labels if len(text) == 5 and text[2] == ":"]


def test_times_in_the_zone_pmrep_reports_in(archive, run):
    """Local time (TZ here is UTC) by default, the archive's own with -z, any with -Z; the
    figure says which, and there are several times on the axis."""
    _, _, _, [utc] = run("-a", archive, "t.m00", "-F", "utc.svg")
    _, _, _, [host] = run("-a", archive, "t.m00", "-z", "-F", "host.svg")
    _, _, _, [other] = run("-a", archive, "t.m00", "-Z", "EST5", "-F", "est.svg")
    assert [w.figures[0].get_supxlabel() for w in (utc, host, other)] == [
        "time (UTC)", "time (AEST)", "time (EST)"]  # fmt: skip
    assert len(hours(utc)) >= 3
    assert [(h - 22) % 24 for h in hours(utc)[:1]] in ([0], [1], [2])  # (22:13 UTC onwards)
    assert [(h - u) % 24 for u, h in zip(hours(utc), hours(host), strict=True)] == [10] * len(
        hours(utc)
    )
    assert [(u - h) % 24 for u, h in zip(hours(utc), hours(other), strict=True)] == [5] * len(
        hours(utc)
    )
