"""pmval (tools/pmval/): parsing, layout and sampling against a scripted context,
then beside PCP 6's own pmval, against the reference pmcd and against ours (interop).

The scripted context answers the calls pmval makes (names, descriptors, instances,
fetch, store) from a list of samples, and time.sleep is a no-op there, so the main
loop's paths (a counter's first sample, a failed sample, instances coming and
going) are checked exactly.  The interop tests run both pmvals one after the other
on the same pmcd and compare their output once times of day and absolute values are
taken out.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.pmapi.context import Fetched
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_AGAIN, PM_ERR_NAME, PM_ERR_NONLEAF, PMError  # type: ignore
from purepcp.pmapi.events import event_flags_str, unpack_event_records
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.metricspec import SpecError, parse_metric_spec
from purepcp.pmapi.options import SAMPLES
from purepcp.pmapi.profile import Profile
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools import pmval
from purepcp.tools.pmval.options import TOOL, read_options, split_instances
from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.reference_pmcd import RunningPMCD, reference_pmcd, require_reference

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable

# --- a scripted context -------------------------------------------------------------------

HOSTNAME_PMID = pmID_build(2, 0, 7)
PMID = pmID_build(253, 0, 1)
PARAM_PMID = pmID_build(253, 1, 1)
INDOM = pmInDom_build(253, 0)


class Script:
    """What the fake pmcd answers: one descriptor, instances, and a queue of samples.

    A sample is a list of (inst, value) pairs, None for no values, or a negative error
    code for the metric's value set; a PMError instance makes the whole fetch fail.
    """

    def __init__(self, desc: Desc, samples, instances=(), name: str = "test.metric"):
        self.desc = desc
        self.samples = list(samples)
        self.instances_list = list(instances)
        self.name = name
        self.fetches = 0


class FakeContext:
    kind = "host"

    def __init__(self, script: Script) -> None:
        self.script = script
        self.profile = Profile()
        self.stored: list[Result] = []
        self.closed = False

    def lookup_name(self, name: str) -> int:
        if name == "pmcd.hostname":
            return HOSTNAME_PMID
        if name == self.script.name:
            return self.script.desc.pmid
        if self.script.name.startswith(name + "."):
            raise PMError(PM_ERR_NONLEAF)
        raise PMError(PM_ERR_NAME)

    def lookup_names(self, names):
        return [self.lookup_name(n) if n == "pmcd.hostname" else 0xFFFFFFFF for n in names]

    def lookup_desc(self, pmid: int) -> Desc:
        if pmid == PARAM_PMID:
            return Desc(PARAM_PMID, PMType.PM_TYPE_STRING)
        return self.script.desc

    def name_all(self, pmid: int) -> list[str]:
        return ["test.param"]

    def instances(self, indom: int):
        return list(self.script.instances_list)

    def instance_id(self, indom: int, name: str) -> int:
        for inst, iname in self.script.instances_list:
            if iname == name:
                return inst
        raise PMError(-12360)

    def instance_name(self, indom: int, inst: int) -> str:
        return dict(self.script.instances_list)[inst]

    def fetch(self, pmids):
        if pmids == [HOSTNAME_PMID]:
            vset = ValueSet.of_atoms(HOSTNAME_PMID, PMType.PM_TYPE_STRING, [(PM_IN_NULL, "fake")])
            return Fetched(Result(Timestamp(1, 0), (vset,)), {})
        desc = self.script.desc
        sample = self.script.samples.pop(0)
        self.script.fetches += 1
        stamp = Timestamp(1_000 + self.script.fetches, 0)
        if isinstance(sample, PMError):
            raise sample
        if sample is None:
            vset = ValueSet.of_atoms(desc.pmid, desc.type, [])
        elif isinstance(sample, int):
            vset = ValueSet.of_error(desc.pmid, sample)
        else:
            vset = ValueSet.of_atoms(desc.pmid, desc.type, sample)
        return Fetched(Result(stamp, (vset,)), {desc.pmid: desc})

    def store(self, result: Result) -> None:
        self.stored.append(result)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake(monkeypatch):
    """run(script, *argv) -> (status, stdout, stderr, context) with the scripted context."""
    monkeypatch.setattr(time, "sleep", lambda seconds: None)

    def run(script: Script, *argv: str, operand: str | None = None):
        ctx = FakeContext(script)
        monkeypatch.setattr(TOOL, "context", lambda parsed: ctx)
        status = pmval.main([*argv, script.name if operand is None else operand])
        return status, ctx

    return run


def counter(type_=PMType.PM_TYPE_U32, indom=PM_INDOM_NULL, units=None) -> Desc:
    units = units or Units(dimCount=1)
    return Desc(PMID, type_, indom, PMSem.PM_SEM_COUNTER, units)


def instant(type_=PMType.PM_TYPE_U32, indom=PM_INDOM_NULL) -> Desc:
    return Desc(PMID, type_, indom, PMSem.PM_SEM_INSTANT, Units())


HEADER = "\nmetric:    test.metric\nhost:      fake\n"


def test_singular_instant_values(fake, capsys):
    script = Script(instant(), [[(PM_IN_NULL, 5)], [(PM_IN_NULL, 6)], [(PM_IN_NULL, 70)]])
    status, ctx = fake(script, "-s", "3", "-t", "2")
    out = capsys.readouterr().out
    assert status == 0 and ctx.closed
    assert out == HEADER + (
        "semantics: instantaneous value\nunits:     none\nsamples:   3\n"
        "interval:  2.00 sec\n          5\n          6\n         70\n"
    )


def test_counter_rates_need_a_previous_sample(fake, capsys):
    samples = [[(PM_IN_NULL, v)] for v in (100, 110, 130, 129)]
    status, _ = fake(Script(counter(), samples), "-s", "3")
    out = capsys.readouterr().out
    assert status == 0
    assert out == HEADER + (
        "semantics: cumulative counter (converting to rate)\n"
        "units:     count (converting to count / sec)\n"
        "samples:   3\ninterval:  1.00 sec\n"
        "    10.00  \n    20.00  \n          !\n"
    )


def test_counter_wrap_from_the_environment(fake, capsys, monkeypatch):
    monkeypatch.setenv("PCP_COUNTER_WRAP", "")
    samples = [[(PM_IN_NULL, 2**32 - 1)], [(PM_IN_NULL, 1)]]
    fake(Script(counter(), samples), "-s", "1")
    assert capsys.readouterr().out.endswith("\n     2.000 \n")


def test_raw_counter_and_time_utilization(fake, capsys):
    ms = Units(dimTime=1, scaleTime=2)  # milliseconds: rates are a utilization
    samples = [[(PM_IN_NULL, 0)], [(PM_IN_NULL, 500)]]
    fake(Script(counter(PMType.PM_TYPE_U64, units=ms), samples), "-s", "1")
    out = capsys.readouterr().out
    assert "units:     millisec (converting to time utilization)\n" in out
    assert out.endswith("samples:   1\n" + " " * 15 + "0.5000\n")
    fake(Script(counter(units=ms), [[(PM_IN_NULL, 7)], [(PM_IN_NULL, 9)]]), "-r", "-s", "2")
    out = capsys.readouterr().out
    assert "semantics: cumulative counter\nunits:     millisec\n" in out
    assert out.endswith("          7\n          9\n")


def test_failed_samples_restart_the_rate(fake, capsys):
    samples = [[(PM_IN_NULL, 0)], [(PM_IN_NULL, 1)], PM_ERR_AGAIN, None,
               [(PM_IN_NULL, 5)], [(PM_IN_NULL, 9)]]  # fmt: skip
    fake(Script(counter(), samples), "-s", "4")
    captured = capsys.readouterr()
    rows = captured.out.split("interval:  1.00 sec\n")[1]
    assert rows == "     1.000 \nNo values available\nNo values available\n     4.000 \n"
    assert captured.err == "\npmval: pmFetch: Try again. Information not currently available\n"


def test_instance_columns_missing_and_unknown_instances(fake, capsys):
    insts = [(2, "two"), (1, "one"), (30, "a-rather-long-name")]
    samples = [[(1, 10), (2, 20), (30, 3)], [(2, 21), (1, 11), (9, 99)]]
    status, _ = fake(Script(instant(indom=INDOM), samples, insts), "-s", "2")
    out = capsys.readouterr().out.split("interval:  1.00 sec\n")[1]
    assert status == 0
    assert out == (
        "full label for instance[0]: one\nfull label for instance[1]: two\n"
        "full label for instance[2]: a-rather-long-name\n"
        "\n        one         two a-rather-lo \n"
        "         10          20           3 \n"
        # instance 9 is not in the instance domain: the labels are fetched again
        "\n        one         two a-rather-lo \n"
        "         11          21           ? \n"
        "Warning: value=99, but instance=9 is unknown\n"
    )


def test_rate_columns_shift_names_over_the_decimals(fake, capsys):
    insts = [(0, "red"), (1, "green")]
    samples = [[(0, 0), (1, 0)], [(0, 3), (1, 4)], [(0, 6)]]
    fake(Script(counter(indom=INDOM), samples, insts), "-s", "2")
    out = capsys.readouterr().out.split("interval:  1.00 sec\n")[1]
    assert out == "\n     red       green    \n     3.000       4.000  \n     3.000            ? \n"
    fake(Script(counter(indom=INDOM), samples[:2], insts), "-s", "1", "-f", "1", "-w", "6")
    out = capsys.readouterr().out.split("samples:   1\n")[1]
    assert out == "\n   red  green \n   3.0    4.0 \n"


def test_instances_option_sets_the_profile(fake, capsys):
    insts = [(0, "red"), (1, "green"), (2, "blue")]
    script = Script(instant(indom=INDOM), [[(0, 1), (2, 3)]], insts)
    status, ctx = fake(script, "-s", "1", "-i", "blue, 'red'")
    out = capsys.readouterr().out
    assert status == 0
    assert out.endswith("\n        red        blue \n          1           3 \n")
    assert [ctx.profile.wants(INDOM, i) for i in (0, 1, 2)] == [True, False, True]


def test_unknown_instance_and_singular_instances(fake, capsys):
    status, _ = fake(Script(instant(indom=INDOM), [], [(0, "red")]), "-i", "purple")
    assert status == 1
    assert capsys.readouterr().err == "pmval: instance purple not available\n"
    status, _ = fake(Script(instant(), []), operand="test.metric[x]")
    assert status == 1
    assert capsys.readouterr().err == "pmval: test.metric: singular metrics do not have instances\n"


def test_lookup_errors(fake, capsys):
    assert fake(Script(instant(), [], name="a.b.c"), operand="a.b")[0] == 1
    assert (
        capsys.readouterr().err == "pmval: pmLookupName(a.b): Metric name is not a leaf in PMNS\n"
    )
    assert fake(Script(instant(), []), operand="x.y")[0] == 1
    assert capsys.readouterr().err == "pmval: pmLookupName(x.y): Unknown metric name\n"


def test_filter_is_stored_first(fake, capsys):
    insts = [(0, "red"), (1, "green")]
    status, ctx = fake(
        Script(instant(indom=INDOM), [[(0, 5), (1, 5)]], insts), "-x", "5", "-s", "1"
    )
    assert status == 0
    (vset,) = ctx.stored[0].vsets
    assert list(vset.insts) == [0, 1] and list(vset.atoms(PMType.PM_TYPE_U32)) == [5, 5]
    capsys.readouterr()
    status, ctx = fake(Script(instant(), []), "-x", "abc")
    assert status == 1 and not ctx.stored
    err = capsys.readouterr().err
    assert err == 'pmval: filter "abc" incompatible with metric type (PM_TYPE_U32)\n'
    status, _ = fake(Script(instant(), []), "-x", "99999999999")
    err = capsys.readouterr().err
    assert (
        err
        == 'pmval: filter value "99999999999" is out of range for metric data type (PM_TYPE_U32)\n'
    )


def test_fetch_failure_ends_the_run(fake, capsys):
    status, _ = fake(Script(instant(), [[(PM_IN_NULL, 1)], PMError(-12366)]), "-s", "3")
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.endswith("          1\n")
    assert captured.err == "\npmval: pmFetch: IPC protocol failure\n"


def test_precision_too_wide_and_unknown_type(fake, capsys):
    status, _ = fake(Script(instant(), []), "-f", "10")
    captured = capsys.readouterr()
    assert status == 1 and captured.out == "\n"
    assert captured.err == "pmval: -f 10 too large for column width 11\n"
    nosupport = Desc(PMID, PMType.PM_TYPE_NOSUPPORT, PM_INDOM_NULL, 0, Units())
    status, _ = fake(Script(nosupport, []))
    assert capsys.readouterr().err == "pmval: unknown performance metric value type NO_SUPPORT\n"


def test_floats_and_strings(fake, capsys):
    fake(Script(instant(PMType.PM_TYPE_DOUBLE), [[(PM_IN_NULL, 0.05)], [(PM_IN_NULL, 12.5)]]),
         "-s", "2")  # fmt: skip
    assert capsys.readouterr().out.endswith(" " * 12 + "5.000E-02\n" + " " * 14 + "12.50  \n")
    fake(Script(instant(PMType.PM_TYPE_STRING), [[(PM_IN_NULL, "hi")]]), "-s", "1")
    assert capsys.readouterr().out.endswith("samples:   1\n" + " " * 17 + '"hi"\n')


def test_no_values_and_samples_zero(fake, capsys):
    fake(Script(instant(), [None, None]), "-s", "2")
    out = capsys.readouterr().out
    assert out.endswith("interval:  1.00 sec\nNo values available\nNo values available\n")
    fake(Script(instant(), []), "-s", "0")
    assert capsys.readouterr().out.endswith("units:     none\nsamples:   0\n")


def test_timezone_notes(fake, capsys):
    fake(Script(instant(), [[(PM_IN_NULL, 1)]]), "-s", "1", "-Z", "UTC")
    out = capsys.readouterr().out
    assert out.startswith('Note: timezone set to "TZ=UTC"\n\nmetric:    test.metric\n')


# --- event records ---------------------------------------------------------------------------


def event_array(records, highres=False) -> bytes:
    """An event array payload as pmcd sends it: big-endian records and parameters."""
    out = struct.pack(">i", len(records))
    for sec, sub, flags, params in records:
        head = ">qqIi" if highres else ">iiIi"
        count = params if isinstance(params, int) else len(params)  # missed: a count
        out += struct.pack(head, sec, sub, flags, count)
        params = [] if isinstance(params, int) else params
        for pmid, ptype, payload in params:
            padded = payload + b"\0" * (-len(payload) % 4)
            out += struct.pack(">II", pmid, ptype << 24 | (4 + len(payload))) + padded
    return out


def test_unpack_event_records():
    payload = event_array(
        [(10, 2000, 1, [(PARAM_PMID, PMType.PM_TYPE_STRING, b"hello")]),
         (11, 0, 1 << 31, 3),
         (12, 0, 0, [(PARAM_PMID, PMType.PM_TYPE_U32, struct.pack(">I", 7))])]
    )  # fmt: skip
    first, missed, third = unpack_event_records(payload, False)
    assert first.stamp == (10, 2_000_000) and first.flags == 1
    assert [p.kind for p in first.params] == ["flags", "param"]
    assert first.params[1].value.vbuf == b"hello"
    assert [(p.kind, p.value) for p in missed.params] == [("flags", 1 << 31), ("missed", 3)]
    assert [(p.kind, p.value) for p in third.params] == [("param", 7)]
    assert event_flags_str(0x1A) == "start,id,parent"
    assert event_flags_str(1 << 31) == "missed"
    with pytest.raises(PMError):
        unpack_event_records(payload[:20], False)


def test_event_metric_report(fake, capsys, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    desc = Desc(PMID, PMType.PM_TYPE_EVENT, INDOM, PMSem.PM_SEM_INSTANT, Units())
    payload = event_array([(3600, 5000, 1, [(PARAM_PMID, PMType.PM_TYPE_STRING, b"hi")]),
                           (3601, 0, 0, [])])  # fmt: skip
    samples = [[(0, payload)], [(0, event_array([]))], None]
    status, _ = fake(Script(desc, samples, [(0, "zero")]), "-s", "3", "-v", "-Z", "UTC")
    assert status == 0
    assert capsys.readouterr().out == (
        'Note: timezone set to "TZ=UTC"\n\nhost:      fake\nsamples:   3\ninterval:  1.00 sec\n'
        "test.metric[zero]: 2 event records\n"
        "  01:00:00.005 --- event record [0] flags 0x1 (point) ---\n"
        '    test.param "hi"\n'
        "  01:00:01.000 --- event record [1] ---\n    ==> No parameters\n"
        "test.metric[zero]: 0 event records\n"
        "test.metric: No values available\n"
    )


# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("kernel.all.load", ("kernel.all.load", None, "host", [])),
        ("host:1234:m.x[a,b]", ("m.x", "host:1234", "host", ["a", "b"])),
        ('m.x[ "1 minute" , 5]', ("m.x", None, "host", ["1 minute", "5"])),
        ("/tmp/arch/m.x", ("m.x", "/tmp/arch", "archive", [])),
        ("@:m.x", ("m.x", "@", "local", [])),
        ("m\\.y", ("m.y", None, "host", [])),
    ],
)
def test_metric_specs(spec, expected):
    got = parse_metric_spec(spec)
    assert (got.metric, got.source, got.kind, got.insts) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("m.x[", "m.x[\n    ^ -- closing ] expected\n"),
        (" : m.x", " : m.x\n ^ -- host name expected\n"),
        ("m.x]", "m.x]\n   ^ -- unexpected character in metric name\n"),
        ("m.x [a] b", "m.x [a] b\n        ^ -- unexpected extra characters\n"),
        ('m.x["a]', 'm.x["a]\n       ^ -- closing " and ] expected\n'),
        ("host:", "host:\n     ^ -- performance metric name expected\n"),
    ],
)
def test_metric_spec_errors(spec, message):
    with pytest.raises(SpecError) as caught:
        parse_metric_spec(spec)
    assert caught.value.errmsg == message


def test_instance_lists():
    assert split_instances("a,b c\t'd e' \"f\"") == ["a", "b", "c", "d e", "f"]


def test_counts_are_read_as_strtol_reads_them_into_an_int():
    def samples(text: str) -> tuple[int | None, bool]:
        o = read_options([(SAMPLES, text)])
        return o.samples, not o.errors

    assert samples("12") == (12, True) and samples("1x") == (1, False)
    assert samples(" +7") == (7, True) and samples("") == (0, True)
    assert samples("-3") == (-3, False) and samples("4294967297") == (1, True)


@pytest.mark.parametrize(
    ("argv", "first_lines"),
    [
        ([], "pmval: error - no metricname specified\n"),
        (["a", "b"], "pmval: error - too many arguments\n"),
        (["-f", "x", "-w", "0", "m"],
         "pmval: -f requires +ve numeric argument\npmval: -w requires +ve numeric argument\n"),
        (["-s", "-1", "m"], "pmval: -s requires a positive numeric argument\n"),
        (["-t", "bogus", "m"],
         "pmval: -t argument not in pmParseHighResInterval(3) format:\nbogus\n"
         "^ -- unexpected value\n\n"),
        (["-d", "m"], "pmval: delay can only be used with archives\n"),
        (["-S", "+1", "m"], "pmval: time window options are supported for archives only\n"),
        (["-z", "-Z", "UTC", "m"], "pmval: at most one of -Z and -z allowed\n"),
        (["-h", "a", "-h", "b", "m"], "pmval: too many hosts requested: b\n"),
        (["-h", "a", "-a", "b", "m"], "pmval: only one host or archive allowed\n"),
        (["m["], "m[\n  ^ -- closing ] expected\n"),
        (["-q", "m"], "pmval: invalid option -- 'q'\n"),
    ],
)  # fmt: skip
def test_usage_errors(capsys, argv, first_lines):
    assert pmval.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(first_lines + "Usage: pmval [options] metricname\n")
    assert "\nReporting options:\n" in err


def test_usage_has_pcp_pmvals_words(capsys):
    """pmval's usage message is PCP's pmval's, word for word (QA 434)."""
    assert pmval.main(["-?"]) == 1
    err = capsys.readouterr().err
    for line in (
        "  -A TIME, --align=TIME align sample times on natural boundaries\n",
        "  -a FILE, --archive=FILE\n                        metrics source is a PCP log archive\n",
        "  -h HOST, --host=HOST  metrics source is PMCD on host\n",
        "  -?, --help            show this usage message and exit\n",
        "  --derived=FILE        load derived metric definitions from FILE(s)\n",
        "  -r, --raw             output raw counter values (no rate conversion)\n",
    ):
        assert line in err


@pytest.mark.interop
def test_usage_equals_pcps():
    require_reference("pmval")
    mine = subprocess.run(
        [PY, "-m", "purepcp.tools.pmval"], env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    ref = subprocess.run(["pmval"], capture_output=True, text=True, timeout=60)
    assert (mine.returncode, mine.stderr) == (ref.returncode, ref.stderr)


def test_a_missing_archive_is_named(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = 'pmval: Cannot open archive "somewhere": No such file or directory\n'
    assert pmval.main(["-a", "somewhere", "m"]) == 1
    assert capsys.readouterr().err == message
    assert pmval.main(["somewhere/m"]) == 1
    assert capsys.readouterr().err == message


def test_unsupported_options_say_so(capsys):
    assert pmval.main(["-g", "m"]) == 1
    assert capsys.readouterr().err == "pmval: --guimode: not available in purepcp\n"


# --- beside PCP's pmval ----------------------------------------------------------------------

STAMP = re.compile(r"\d\d:\d\d:\d\d\.\d+")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d*)?(?:E[-+]\d+)?")


def ours(host: str, *argv: str, env=None) -> subprocess.CompletedProcess[str]:
    env = dict(env or os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [PY, "-m", "purepcp.tools.pmval", "-h", host, *argv],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def theirs(host: str, *argv: str, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pmval", "-h", host, *argv], env=env, capture_output=True, text=True, timeout=120
    )


def without_usage(text: str) -> str:
    return text.split("Usage: ")[0]


def split(text: str) -> tuple[list[str], list[str]]:
    """(header lines up to "interval:"/"samples:", the rest)."""
    lines = text.splitlines()
    cut = max(i for i, line in enumerate(lines) if line.startswith(("samples:", "interval:")))
    return lines[: cut + 1], lines[cut + 1 :]


def shape(line: str) -> str:
    """A value line with its numbers blanked, keeping where each column ends."""
    return NUMBER.sub(lambda m: "#" * len(m.group()), line)


@pytest.fixture(scope="module")
def our_server(tmp_path_factory) -> Iterator[OurPMCD]:
    require_reference("pmval")
    tmp = tmp_path_factory.mktemp("pmval-ours")
    (tmp / "simple").mkdir()
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    conf = (
        "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
        "simple 253 dso Simple purepcp.agents.simple\n"
        "linux 60 dso Linux purepcp.agents.linux\n"
    )
    with our_pmcd(conf, tmp) as running:
        yield running


SAMPLE_DIR = "/var/lib/pcp/pmdas/sample"
PMCD_DIR = "/var/lib/pcp/pmdas/pmcd"
PMNS_DIR = "/var/lib/pcp/pmns"


@pytest.fixture(scope="module")
def ref_server() -> Iterator[RunningPMCD]:
    """PCP's pmcd running our simple agent (a pipe agent) and PCP's own sample agent."""
    require_reference("pmval", "pmstore")
    tmp = Path(tempfile.mkdtemp(prefix="purepcp-pmval-"))
    try:
        (tmp / "simple").mkdir()
        (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
        root = tmp / "root"
        text = "#define SIMPLE 253\nroot {\n    simple\n"
        tail = (ROOT / "pmns" / "simple").read_text()
        conf = [f"simple\t253\tpipe\tbinary\t{PY} -m purepcp.agents.simple -d 253"]
        if os.path.exists(f"{PMCD_DIR}/pmda_pmcd.so"):  # pmcd.hostname, pmcd.timezone
            text += "    pmcd\n"
            pmcd_ns = Path(PMNS_DIR, "root_pmcd").read_text()
            tail += re.sub(r"(?s)^.*?root\s*\{[^}]*\}", "", pmcd_ns, count=1)
            conf.append(f"pmcd\t2\tdso\tpmcd_init\t{PMCD_DIR}/pmda_pmcd.so")
        if os.path.exists(f"{SAMPLE_DIR}/pmdasample"):
            text = "#define SAMPLE 29\n" + text + "    sample\n"
            tail += Path(f"{SAMPLE_DIR}/pmns").read_text()
            conf.append(f"sample\t29\tpipe\tbinary\t{SAMPLE_DIR}/pmdasample -d 29")
        root.write_text(text + "}\n" + tail)
        env = {"PYTHONPATH": str(ROOT), "PCP_PMDAS_DIR": str(tmp)}
        with reference_pmcd(conf, str(root), extra_env=env) as running:
            yield running
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(params=["reference-pmcd", "our-pmcd"])
def server(request):
    return request.getfixturevalue(
        "ref_server" if request.param == "reference-pmcd" else "our_server"
    )


def both(server, *argv: str):
    ref = theirs(server.host, *argv, env=server.env)
    mine = ours(server.host, *argv, env=server.env)
    return ref, mine


@pytest.mark.interop
def test_numfetch_beside_pmval(server):
    ref, mine = both(server, "-s", "3", "-t", "0.5", "simple.numfetch")
    assert ref.returncode == mine.returncode == 0, ref.stderr + mine.stderr
    assert ref.stderr == mine.stderr == ""
    ref_head, ref_rows = split(ref.stdout)
    my_head, my_rows = split(mine.stdout)
    assert my_head == ref_head
    assert ref_head[:2] == ["", "metric:    simple.numfetch"]
    assert ref_head[3:] == ["semantics: instantaneous value", "units:     none",
                            "samples:   3", "interval:  0.50 sec"]  # fmt: skip
    for rows in (ref_rows, my_rows):
        values = [int(row) for row in rows]
        assert len(values) == 3 and values == list(range(values[0], values[0] + 3))
        assert all(len(row) == 11 for row in rows)


@pytest.mark.interop
def test_instance_columns_beside_pmval(server):
    ref, mine = both(server, "-s", "3", "-t", "0.1", "-x", "5", "simple.color")
    assert mine.returncode == ref.returncode == 0, ref.stderr + mine.stderr
    assert mine.stdout == ref.stdout  # the filter makes the values the same too
    assert mine.stdout.endswith(
        "\n        red       green        blue \n"
        "          6           6           6 \n"
        "          7           7           7 \n"
        "          8           8           8 \n"
    )
    ref, mine = both(server, "-s", "2", "-t", "0.1", "-x", "0", "-i", "blue red", "-w", "3",
                     "simple.color")  # fmt: skip
    assert mine.stdout == ref.stdout
    assert "full label for instance[1]: blue\n\nred blu \n  1   1 \n  2   2 \n" in mine.stdout


@pytest.mark.interop
@pytest.mark.parametrize("extra", [[], ["-f", "3"], ["-r"]], ids=["rate", "fixed", "raw"])
def test_counter_beside_pmval(server, extra):
    ref, mine = both(server, "-s", "3", "-t", "0.2", *extra, "simple.time.user")
    assert ref.returncode == mine.returncode == 0, ref.stderr + mine.stderr
    ref_head, ref_rows = split(ref.stdout)
    my_head, my_rows = split(mine.stdout)
    assert my_head == ref_head
    assert ("semantics: cumulative counter (converting to rate)" in my_head) == (extra != ["-r"])
    assert len(my_rows) == len(ref_rows) == 3
    assert {len(row) for row in my_rows} == {len(row) for row in ref_rows}


@pytest.mark.interop
def test_linux_counter_columns_beside_pmval(our_server):
    ref, mine = both(our_server, "-s", "2", "-t", "0.2", "kernel.percpu.cpu.user")
    assert ref.returncode == mine.returncode == 0, ref.stderr + mine.stderr
    ref_head, ref_rows = split(ref.stdout)
    my_head, my_rows = split(mine.stdout)
    assert my_head == ref_head
    assert "units:     millisec (converting to time utilization)" in my_head
    assert my_rows[:2] == ref_rows[:2]  # the blank line and the cpu names, shifted left
    assert [len(row) for row in my_rows] == [len(row) for row in ref_rows]


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["no.such.metric"],
        ["simple"],
        ["-i", "purple", "simple.color"],
        ["simple.numfetch[x]"],
        ["-f", "12", "simple.color"],
        ["-x", "abc", "simple.numfetch"],
        ["-x", "3", "simple.now"],
        ["-S", "+1", "simple.color"],
        ["-t", "0.1", "-T", "bogus", "simple.color"],
        ["-s", "0", "simple.color"],
        ["-Z", "UTC", "-s", "0", "simple.color"],
        ["simple.color[red"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_errors_beside_pmval(server, argv):
    ref, mine = both(server, "-s", "1", *argv)
    assert mine.returncode == ref.returncode
    assert mine.stdout == ref.stdout
    assert without_usage(mine.stderr) == without_usage(ref.stderr)


@pytest.mark.interop
def test_no_pmcd_beside_pmval():
    require_reference("pmval")
    ref = theirs("127.0.0.1:1", "simple.color")
    mine = ours("127.0.0.1:1", "simple.color")
    assert (mine.returncode, mine.stdout, mine.stderr) == (ref.returncode, ref.stdout, ref.stderr)


def needs_sample(server: RunningPMCD) -> None:
    if not os.path.exists(f"{SAMPLE_DIR}/pmdasample"):
        pytest.skip("PCP's sample agent is not installed")


def reset_events(server: RunningPMCD) -> None:
    for metric in ("sample.event.reset", "sample.event.reset_highres"):
        subprocess.run(["pmstore", "-h", server.host, metric, "0"], env=server.env,
                       capture_output=True, check=True, timeout=60)  # fmt: skip


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["sample.event.records"],
        ["-i", "fungus", "-v", "sample.event.records"],
        ["-z", "sample.event.highres_records"],
        ["-v", "sample.event.no_indom_records"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_event_records_beside_pmval(ref_server, argv):
    needs_sample(ref_server)
    reset_events(ref_server)
    ref = theirs(ref_server.host, "-s", "6", "-t", "0.1", *argv, env=ref_server.env)
    reset_events(ref_server)
    mine = ours(ref_server.host, "-s", "6", "-t", "0.1", *argv, env=ref_server.env)
    assert mine.returncode == ref.returncode == 0, ref.stderr + mine.stderr
    assert STAMP.sub("T", mine.stdout) == STAMP.sub("T", ref.stdout)
    assert "event record [0]" in mine.stdout


@pytest.mark.interop
@pytest.mark.parametrize(
    "metric",
    ["sample.float.bin", "sample.double.bin_ctr", "sample.string.hullo", "sample.aggregate.hullo",
     "sample.bad.novalues", "sample.bad.fetch.again", "sample.bad.nosupport",
     "sample.dynamic.counter"],
)  # fmt: skip
def test_sample_types_beside_pmval(ref_server, metric):
    needs_sample(ref_server)
    ref = theirs(ref_server.host, "-s", "2", "-t", "0.1", metric, env=ref_server.env)
    mine = ours(ref_server.host, "-s", "2", "-t", "0.1", metric, env=ref_server.env)
    assert (mine.returncode, mine.stderr) == (ref.returncode, ref.stderr)
    assert [shape(line) for line in mine.stdout.splitlines()] == [
        shape(line) for line in ref.stdout.splitlines()
    ]


def test_x_flag_puts_the_date_round_archive_times(capsys):
    """QA 1320: -X was read and then ignored; archive rows' times get pmCtime's date and
    microseconds (-XX nanoseconds), and the labels move over as pmval's printlabels does."""
    from tests.support.qa_archives import qa

    archive = qa("ok-foo")
    for flags, stamp, indent in (
        (["-X"], "Fri Aug  7 04:34:33.248687 1998", 31),
        (["-XX"], "Fri Aug  7 04:34:33.248687000 1998", 34),
    ):
        pmval.main([*flags, "-z", "-U", archive, "sample.colour"])
        lines = capsys.readouterr().out.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("Fri Aug"))
        assert lines[first].startswith(stamp + "        119 ")
        assert lines[first - 1].startswith(" " * indent + "        red ")


@pytest.mark.interop
def test_v3_first_sample_starts_at_whole_microseconds():
    """PCP 6.0.3's pmval sets its origin as a timeval: at a v3 archive's first record
    (nanoseconds) the first sample falls just before it, so a discrete metric has no
    value yet; before, ours printed one (QA 1420)."""
    from tests.support.qa_archives import qa

    archive = qa("omnibus-nomark_v3")
    argv = ["-a", archive, "-z", "-w", "12", "-t", "1sec", "pmcd.seqnum"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    mine = subprocess.run([PY, "-m", "purepcp.tools.pmval", *argv], capture_output=True,
                          text=True, env=env)  # fmt: skip
    ref = subprocess.run(["pmval", *argv], capture_output=True, text=True)
    assert mine.stdout == ref.stdout and mine.returncode == ref.returncode == 0
    assert "\n14:53:33.493  No values available\n14:53:34.493          18\n" in mine.stdout
