"""Our pmrep on archives our writer makes (values known in advance), its pmrep.conf reading,
its cell formatting against PCP's rules, its outputs and its bad-input messages."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.archive.writer import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.report.cells import CellSpec, Renderer
from purepcp.tools.report.config import ConfigError, Loaded, compact_spec, load, wanted_metrics
from purepcp.tools.report.model import Kind
from purepcp.tools.report.resolve import fetch_conversion
from purepcp.tools.report.settings import Settings
from tests.support.examples import examples

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000
CTR, INST, MEM, TEXT = (pmID_build(245, 0, i) for i in range(4))
INDOM = pmInDom_build(245, 1)
NAMES = ("one", "two", "three")


def write_archive(base: str, samples: int = 6) -> None:
    """t.ctr (U64 counter, 3 instances, instance i grows 10*(i+1) a second), t.inst (double,
    the sample number plus a half), t.mem (U64 Kbyte, 2048 * the sample number), t.str."""
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=Timestamp(T0, 0)) as w:
        count = Units(dimCount=1)
        w.put_desc(Desc(CTR, PMType.PM_TYPE_U64, INDOM, PMSem.PM_SEM_COUNTER, count), ["t.ctr"])
        w.put_desc(Desc(INST, PMType.PM_TYPE_DOUBLE), ["t.inst"])
        kbyte = Units(dimSpace=1, scaleSpace=1)
        w.put_desc(Desc(MEM, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT, kbyte),
                   ["t.mem"])  # fmt: skip
        w.put_desc(Desc(TEXT, PMType.PM_TYPE_STRING), ["t.str"])
        w.put_index(Timestamp(T0, 0))
        w.put_indom(Timestamp(T0, 0), INDOM, [0, 1, 2], list(NAMES))
        for s in range(samples):
            vsets = (
                ValueSet.of_atoms(
                    CTR, PMType.PM_TYPE_U64, [(i, 10 * (i + 1) * s) for i in range(3)]
                ),
                ValueSet.of_atoms(INST, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, s + 0.5)]),
                ValueSet.of_atoms(MEM, PMType.PM_TYPE_U64, [(0xFFFFFFFF, 2048 * s)]),
                ValueSet.of_atoms(TEXT, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, f"s,{s}")]),
            )
            w.put_result(Result(Timestamp(T0 + s, 0), vsets))


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> str:
    base = str(tmp_path_factory.mktemp("pmrep") / "known")
    write_archive(base)
    return base


def pmrep(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="",
               PCP_SYSCONF_DIR="/nonexistent")  # fmt: skip
    return subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=cwd)  # fmt: skip


def test_stdout_columns_rates_and_units(archive):
    """Counters are rates (none for the first sample), MB rescales Kbyte, and values take
    the decimals their width leaves room for (as PCP 6.0.3's pmrep prints this archive)."""
    out = pmrep("-a", archive, "-p", "t.ctr", "t.inst", "t.mem,mem,,MB,,6")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "          t.ctr  t.ctr  t.ctr  t.inst     mem",
        "            one    two  three                ",
        "          count  count  count              MB",
        "22:13:20    N/A    N/A    N/A   0.500   0.000",
        "22:13:21  10.00  20.00  30.00   1.500   2.000",
        "22:13:22  10.00  20.00  30.00   2.500   4.000",
        "22:13:23  10.00  20.00  30.00   3.500   6.000",
        "22:13:24  10.00  20.00  30.00   4.500   8.000",
        "22:13:25  10.00  20.00  30.00   5.500  10.000",
    ]


def test_raw_counters_and_instances(archive):
    out = pmrep("-a", archive, "-r", "-i", "two,three", "t.ctr", "-s", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "  t.ctr  t.ctr",
        "    two  three",
        "  count  count",
        "      0      0",
        "     20     30",
        "     40     60",
    ]


def test_csv(archive):
    out = pmrep("-a", archive, "-o", "csv", "-P", "1", "t.ctr", "t.str", "-s", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        'Time,"t.ctr-one","t.ctr-two","t.ctr-three","t.str"',
        '2023-11-14 22:13:20,,,,"s_0"',  # (the delimiter in a string becomes "_")
        '2023-11-14 22:13:21,10.0,20.0,30.0,"s_1"',
        '2023-11-14 22:13:22,10.0,20.0,30.0,"s_2"',
    ]


def test_columns_and_rows_swapped(archive):
    out = pmrep("-a", archive, "-X", "INST", "-s", "2", "-U", "t.ctr,c,,,,7", "t.inst,i,,,,5")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "  INST        c      i",
        "   one      N/A      ~",
        "   two      N/A      ~",
        "  thre      N/A      ~",  # (names are cut to the width of -X's label)
        "     =        ~  0.500",
        "   one   10.000      ~",
        "   two   20.000      ~",
        "  thre   30.000      ~",
        "     =        ~  1.500",
    ]


def test_metricset_with_a_formula_and_quoted_instances(archive, tmp_path):
    conf = tmp_path / "my.conf"
    conf.write_text(
        "[options]\nprecision = 1\n\n[mine]\ntimestamp = no\n"
        't.ctr = c,"one",,,8\n'
        "double = t.double\ndouble.label = dbl\ndouble.formula = t.inst * 2\n"
        "double.width = 6\n"
    )
    out = pmrep("-a", archive, "-c", str(conf), ":mine", "-s", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "         c     dbl",
        "       one        ",
        "   count/s        ",
        "       N/A     1.0",
        "      10.0     3.0",
        "      10.0     5.0",
    ]


def test_archive_output_reads_back(archive, tmp_path):
    target = str(tmp_path / "copy")
    out = pmrep("-a", archive, "-o", "archive", "-F", target, "t.ctr", "t.mem", "t.str")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Recording 3 metrics to " + target)
    back = pmrep("-a", target, "-r", "t.ctr", "t.mem", "t.str", "-o", "csv")
    assert back.returncode == 0, back.stderr
    rows = back.stdout.splitlines()
    assert rows[0] == 'Time,"t.ctr-one","t.ctr-two","t.ctr-three","t.mem","t.str"'
    assert rows[-1] == '2023-11-14 22:13:25,50,100,150,10240,"s_5"'
    assert len(rows) == 7


def test_json_lines(archive):
    out = pmrep("-a", archive, "-o", "json", "t.ctr", "t.inst", "-s", "2")
    assert out.returncode == 0, out.stderr
    head, first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert head["metrics"][0] == {"name": "t.ctr", "label": "t.ctr", "unit": "count/s",
                                  "instances": list(NAMES)}  # fmt: skip
    assert first["values"] == {"t.ctr": {"one": None, "two": None, "three": None}, "t.inst": 0.5}
    assert second["timestamp"] == "2023-11-14T22:13:21+00:00"
    assert second["values"]["t.ctr"] == {"one": 10.0, "two": 20.0, "three": 30.0}


@pytest.mark.parametrize(
    ("args", "message", "stdout"),
    [
        ([":nosuch"], "Metricset definition ':nosuch' not found.", ""),
        (["no.such.metric"], "Invalid metric no.such.metric (PM_ERR_NAME Unknown metric name).",
         ""),
        (["-o", "paper", "t.ctr"], "Error while parsing options: Invalid output target specified.",
         ""),
        (["-t", "0", "t.ctr"], "Interval must be greater than zero.", ""),
        (["t.ctr", "-i", "nine"], "No matching instances found.",
         "\nRequested global instances:\n['nine']\n"),
        (["-w", "-3", "t.ctr"], "Error while reading option width: Non-negative integer expected.",
         ""),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(archive, args, message, stdout):
    """pmrep's message on stderr, exit 1 (and, for instances none matched, what -i asked
    for on stdout, as pmrep prints it)."""
    out = pmrep("-a", archive, *args)
    assert (out.returncode, out.stdout, out.stderr) == (1, stdout, message + "\n")


def test_bad_config_line_names_file_and_line(archive, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("[set]\nt.ctr = c,,,,\nthis is not an option line\n")
    out = pmrep("-a", archive, "-c", str(conf), ":set")
    assert out.returncode == 1
    assert out.stderr == (  # (pmrep's lines: the file and line, then configparser's)
        f"Failed to read configuration file '{conf}', line 3:\n"
        f"Source contains parsing errors: '{conf}'\n\t[line  3]: 'this is not an option line\\n'\n"
    )


def test_help_is_pcp_style():
    out = pmrep("--help")
    assert out.returncode == 0
    assert out.stderr.startswith("Usage: pmrep [option...] metricspec [...]\n\nGeneral options:\n")
    assert "  -t DELTA, --interval=DELTA" in out.stderr


def test_a_metricset_we_ship_reads_without_pcp(archive):
    """With PCP's configuration absent, :vmstat comes from our own files (here the archive
    lacks its metrics, which is the error PCP's pmrep gives)."""
    out = pmrep("-a", archive, ":vmstat")
    assert out.returncode == 1
    assert out.stderr == "Invalid metric kernel.all.running (PM_ERR_NAME Unknown metric name).\n"


# ---------------------------------------------------------------- pieces


def test_compact_specs():
    spec = compact_spec('disk.dev.read,rd,"sda,sdb",KB,raw,8,2,10')
    assert (spec.name, spec.label, spec.instances, spec.unit, spec.type) == (
        "disk.dev.read", "rd", ["sda", "sdb"], "KB", "raw")  # fmt: skip
    assert (spec.width, spec.precision, spec.limit) == ("8", "2", "10")
    assert not compact_spec("mem.util.free").label
    assert compact_spec("kernel.all.load,,1 minute").instances == ["1 minute"]


def test_config_errors(tmp_path):
    bad = tmp_path / "a.conf"
    bad.write_text("[options]\nbogus = 1\n")
    s = Settings()
    from purepcp.tools.report.config import apply_options

    with pytest.raises(ConfigError, match=r"Unknown option bogus in \[options\]"):
        apply_options(load([str(bad)]), s, [])
    with pytest.raises(ConfigError, match="Undeclared metric key x"):
        loaded = Loaded({"set": {"x.label": "y"}}, {"set": "f.conf"})
        wanted_metrics([":set"], loaded, s)


@pytest.mark.parametrize(
    ("units", "scale", "expected"),
    [
        (Units(dimSpace=1, scaleSpace=1), "MB", (False, 1 / 1024, 1.0)),
        (Units(dimCount=1), "count/s", (True, 1.0, 1.0)),
        (Units(dimTime=1, scaleTime=2), "s/s", (True, 1e6, 1e-9)),  # ms counter as a fraction
        (Units(dimSpace=1, scaleSpace=1), "MB/s", (True, 1 / 1024, 1.0)),
    ],
)
def test_fetchgroup_conversions(units, scale, expected):
    desc = Desc(1, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, units)
    rate, factor, mult = fetch_conversion(desc, scale)
    assert rate == expected[0]
    assert math.isclose(factor * mult, expected[1] * expected[2])


def pcp_stdout_cell(value, width: int, precision: int) -> str:
    """PCP 6.0.3's pmrep format_stdout_value and its format, one value at a time."""
    if isinstance(value, int):
        return "xxx".rjust(width) if len(str(value)) > width else f"{value:{width}d}"
    if math.isinf(value) or math.isnan(value):
        text = ("inf" if value > 0 else "-inf") if math.isinf(value) else "NaN"
        return (text if width >= len(text) else "xxx")[:width].rjust(width)
    s = len(str(int(value)))
    if s > width:
        return "xxx".rjust(width)
    if s + 2 > width:
        return f"{int(value):{width}d}"
    for c in range(precision, -1, -1):
        text = f"{value:{width}.{c}f}"
        if len(text) <= width:
            return text
    return f"{value:>{width}.{width}}"


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, width=64),
            st.floats(-1e6, 1e6),
            st.sampled_from([9.9996, 99.9995, -0.0004, 0.9999, 9.99949, -9.9996, 999.5]),
        ),
        min_size=1,
        max_size=30,
    ),
    st.integers(3, 12),
    st.integers(0, 6),
)
def test_stdout_cells_as_pcp_formats_them(values, width, precision):
    renderer = Renderer([CellSpec(Kind.FLOAT, width, precision)], "  ")
    column = np.array(values, dtype=np.float64)[:, None]
    lines = renderer.lines(column, np.ones(column.shape, bool), {})
    assert lines == [pcp_stdout_cell(v, width, precision) for v in values]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(-(2**53), 2**53), min_size=1, max_size=20), st.integers(3, 12))
def test_integer_cells_as_pcp_formats_them(values, width):
    renderer = Renderer([CellSpec(Kind.INT, width, 3)], " ")
    column = np.array(values, dtype=np.float64)[:, None]
    lines = renderer.lines(column, np.ones(column.shape, bool), {})
    assert lines == [pcp_stdout_cell(v, width, 3) for v in values]


def test_progress_bar_only_on_a_terminal_and_switchable(monkeypatch):
    from purepcp.tools.report import command as tool

    s = Settings()
    monkeypatch.delenv("PCP_NO_PROGRESS", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert tool._progress(1000, s) is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = tool._progress(1000, s)
    assert bar is not None and bar.total == 1000
    bar.close()
    s.progress = False  # --no-progress
    assert tool._progress(1000, s) is None
    s.progress = True
    monkeypatch.setenv("PCP_NO_PROGRESS", "1")
    assert tool._progress(1000, s) is None


def test_pmplot_without_matplotlib_names_the_extra(archive, tmp_path):
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from purepcp.tools.pmplot import main\n"
        f"sys.exit(main(['-a', {archive!r}, 't.mem', '-F', 'x.png']))"
    )
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)  # fmt: skip
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == "pmplot: charts need matplotlib: pip install 'purepcp[plot]'\n"
    assert not (tmp_path / "x.png").exists()


def test_rank_keeps_the_highest_per_sample_ties_in_instance_order():
    from purepcp.tools.report.values import ranked

    values = np.array([[5.0, 9.0, 9.0, 1.0], [3.0, 2.0, 1.0, 0.0]])
    good = np.array([[True, True, True, True], [False, True, True, True]])
    assert ranked(values, good, 2).tolist() == [[False, True, True, False],
                                                [False, True, True, False]]  # fmt: skip
    assert ranked(values, good, -1).tolist() == [[False, False, False, True],
                                                 [False, False, False, True]]  # fmt: skip


def test_daemonize_returns_at_once_and_the_report_goes_on(archive, tmp_path):
    from tests.support.waiting import wait_until

    target = tmp_path / "out.csv"
    out = pmrep("-a", archive, "--daemonize", "-o", "csv", "-F", str(target), "-d", "-t", "0.2",
                "-s", "4", "t.mem")  # fmt: skip
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    wait_until("the daemon's fourth line", lambda: target.exists()
               and len(target.read_text().splitlines()) == 5)  # fmt: skip
    assert target.read_text().splitlines()[1:] == [
        "2023-11-14 22:13:20,0", "2023-11-14 22:13:20,0",
        "2023-11-14 22:13:20,0", "2023-11-14 22:13:20,2048",
    ]  # fmt: skip


def test_extended_header_goes_to_the_output_file(archive, tmp_path):
    target = tmp_path / "report.txt"
    out = pmrep("-a", archive, "-x", "-s", "2", "-F", str(target), "t.mem")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    text = target.read_text()
    assert text.startswith(f"\n  archive: {archive}\n     host: box\n")
    assert text.endswith("  t.mem\n  Kbyte\n      0\n   2048\n")


@pytest.mark.parametrize("output", ["csv", "stdout", "json"])
def test_an_output_file_it_cannot_write_is_one_line(archive, output):
    """PCP's pmrep's words (its IOError printed), exit 1, and no traceback."""
    target = "/nonexistent/dir/out.txt"
    out = pmrep("-a", archive, "-o", output, "-F", target, "t.mem")
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == f"[Errno 2] No such file or directory: '{target}'\n"


@pytest.mark.interop
@pytest.mark.parametrize("output", ["csv", "stdout"])
def test_an_output_file_it_cannot_write_as_pcp_says(archive, tmp_path, output):
    from tests.support.reference_pmcd import require_reference

    require_reference("pmrep")
    argv = ["-a", archive, "-o", output, "-F", str(tmp_path / "no" / "out.csv"), "t.mem"]
    env = dict(os.environ, TZ="UTC", PCP_PYTHON_PROG="/usr/bin/python3")
    theirs = subprocess.run(["/usr/bin/pmrep", *argv], env=env, capture_output=True, text=True,
                            timeout=60)  # fmt: skip
    ours = pmrep(*argv)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip
    assert theirs.returncode == 1


def test_an_empty_window_is_the_header_alone(archive):
    """As PCP 6.0.3's pmrep: no samples in the window, the header, and exit 0."""
    out = pmrep("-a", archive, "-S", "+10", "t.mem")
    assert (out.returncode, out.stdout, out.stderr) == (0, "  t.mem\n  Kbyte\n", "")


# ---------------------------------------------------------------- PCP's messages, PCP's order


def test_a_dimensionless_counter_is_a_rate_even_raw():
    """Raw, a counter without units asks the fetchgroup for no scale at all, and so still
    gets a rate (PCP QA 1240's -r on sample.wrap.ulong)."""
    desc = Desc(1, PMType.PM_TYPE_U32, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units())
    assert fetch_conversion(desc, "") == (True, 1.0, 1.0)
    instant = Desc(1, PMType.PM_TYPE_U32, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT, Units())
    assert fetch_conversion(instant, "") == (False, 1.0, 1.0)


def test_qa_wrapping_counter_raw_is_rates_or_nothing():
    from tests.support.qa_archives import qa

    out = pmrep("-z", "-w", "15", "-r", "-a", qa("uwrap"), "sample.wrap.ulong", "-s", "6")
    assert out.stdout.splitlines()[2:] == [
        "              N/A", "              N/A", "              N/A", "              N/A",
        "       2142528635", "              N/A"]  # fmt: skip


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ({}, ["-c", "/no/such.conf", "t.mem"],
         "Failed to read configuration from '/no/such.conf':\nNo such file or directory."),
        ({"a.conf": "[options]\nbogus = 1\n"}, ["-c", "a.conf", "t.mem"],
         "Failed to read configuration file 'a.conf':\nUnknown option bogus in [options]."),
        ({"a.conf": "[x]\nt.mem =\n"}, ["-c", "a.conf", ":x"],
         "Failed to read configuration file 'a.conf':\nNo value set for t.mem in [x]."),
        ({}, ["-e", "z = 1 +", "t.mem"],
         "Failed to register derived metric:\nImpossible value or scale conversion Error: "
         'pmRegisterDerivedMetric("z", ...)\n1 +\n  ^\n'
         "Arithmetic expression expected to follow PLUS\n."),
        ({}, ["-e", "/no/such", "t.mem"],
         "Failed to load derived metric definitions from file '/no/such':\n"
         "No such file or directory."),
        ({}, ["t.mem,,,furlongs"], "PM_ERR_CONV Impossible value or scale conversion "
         "unrecognized or duplicate base unit: furlongs."),
        ({}, ["t.mem,,,count"], "pmrep: Impossible value or scale conversion"),
    ],
)  # fmt: skip
def test_pcp_messages_line_for_line(archive, tmp_path, files, args, message):
    """pmrep's messages over the lines PCP's pmrep writes them on (PCP QA 1548, 1069)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = pmrep("-a", archive, *args, cwd=str(tmp_path))
    assert (out.returncode, out.stdout, out.stderr) == (1, "", message + "\n")


def test_samples_and_interval_errors_then_the_usage(archive, tmp_path):
    """A file's bad sample count is libpcp's "pcp:" message; -t's the parser's lines."""
    (tmp_path / "a.conf").write_text("[options]\nsamples = -1\n")
    out = pmrep("-a", archive, "-c", "a.conf", "t.mem", cwd=str(tmp_path))
    assert out.returncode == 1
    assert out.stderr.startswith("pcp: sample count must be a positive numeric argument\n"
                                 "Usage: pmrep ")  # fmt: skip
    out = pmrep("-a", archive, "-t", "soon", "t.mem")
    assert out.stderr.startswith("pmrep: -t argument not in pmParseHighResInterval(3) format:\n"
                                 "soon\n^ -- unexpected value\n\nUsage: pmrep ")  # fmt: skip


def test_source_errors_as_pmrep_says_them(archive):
    """The source is opened after the metricsets are found and before the settings are
    checked; its failure is the error's message ("; is pmcd running?" when refused)."""
    assert pmrep("-a", "/no/such/archive", "t.mem").stderr == "pmrep: No such file or directory\n"
    refused = "pmrep: Connection refused; is pmcd running?\n"
    assert pmrep("-h", "127.0.0.1:1", "t.mem").stderr == refused
    assert pmrep("-h", "127.0.0.1:1", "-w", "x", "t.mem").stderr == refused
    out = pmrep("-h", "127.0.0.1:1", ":nosuch")
    assert out.stderr == "Metricset definition ':nosuch' not found.\n"


def test_debug_option_accepted_checked_and_unlisted(archive):
    """-D as pmrep takes it: not in the usage, a bad specification refused with the
    usage, appl1 listing the keywords pmrep.conf knows."""
    assert "--debug" not in pmrep("--help").stderr
    out = pmrep("-a", archive, "-D", "nonsense", "t.mem")
    assert out.returncode == 1
    assert out.stderr.startswith("pmrep: unrecognized debug options specification (nonsense)\n"
                                 "Usage: pmrep ")  # fmt: skip
    out = pmrep("-a", archive, "-D", "appl1", "-s", "1", "t.mem")
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("Known config file keywords: ('source', 'output', 'derived',")
    assert second == ("Known metric spec keywords: ('label', 'instances', 'unit', 'type', "
                      "'width', 'precision', 'limit', 'formula')")  # fmt: skip
    assert pmrep("-a", archive, "-D", "pdu,3", "-s", "1", "t.mem").returncode == 0


def test_extended_csv_header_keeps_its_commas(archive):
    out = pmrep("-a", archive, "-o", "csv", "-k", "-l", ";", "-s", "1", "t.mem")
    assert out.stdout.splitlines() == ['Host,Interval,Time;"t.mem"',
                                       "box;0;2023-11-14 22:13:20 UTC+0;0"]  # fmt: skip


def test_spec_local_on_the_command_line_replaces_the_files():
    from purepcp.tools.report.command import TOOL, settings_for

    parsed = TOOL.parse(["-K", "add,1,x.so,x_init", "t.mem"])
    s = Settings()
    s.speclocal = "clear"  # (as a file set it)
    parsed_settings, _ = settings_for(parsed)
    assert parsed_settings.speclocal == ";add,1,x.so,x_init"
    assert s.speclocal == "clear"


def test_zone_text_is_the_offset_at_the_first_sample():
    """pmrep's UTC+N: the zone's offset when the report starts, not now's."""
    from purepcp.pmapi.timewindow import tzinfo_for
    from purepcp.tools.report.command import current_tz, utc_offset

    melbourne = tzinfo_for("Australia/Melbourne")
    winter, summer = 960_000_000, 975_000_000  # (June and December 2000)
    assert (utc_offset(melbourne, winter), utc_offset(melbourne, summer)) == ("UTC+10", "UTC+11")
    assert current_tz(melbourne, winter) == "AEST-10"
    assert utc_offset(tzinfo_for("Asia/Kolkata"), winter) == "UTC+5:30"
    assert utc_offset(tzinfo_for("UTC"), winter) == "UTC+0"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "00:00:03"), (3.4, "00:00:03"), (90061, "1 day, 01:01:01"), (0, "00:00:00")],
)
def test_durations_round_half_up_as_pmrep(seconds, text):
    from purepcp.tools.report.command import _readable

    assert _readable(seconds) == text
