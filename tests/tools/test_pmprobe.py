"""pmprobe: local-context runs in this process, and interop against PCP 6's own pmprobe.

The unit tests use -L (the packaged agents loaded in-process: no daemon).  The
interop tests (marker interop) run PCP's pmprobe and ours, one after the other,
against the same pmcd -- PCP's pmcd with its pmcd and linux agents, its C sample
agent and our simple agent, then our pmcd with its packaged agents -- and demand
the same output, with values that change between two runs normalised.

The pmcds and the runs are tests/support/tool_pmcds.py's, shared with test_pmstore.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from purepcp.tools import pmprobe
from tests.support.reference_pmcd import free_port
from tests.support.tool_pmcds import option_column, run, running_pmcd


@pytest.fixture(scope="module", params=["reference", "ours"])
def server(request, tmp_path_factory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(which, host, environment) of a running pmcd: PCP's, then ours."""
    with running_pmcd(request.param, tmp_path_factory.mktemp(f"pmcd-{request.param}")) as running:
        yield running


_TOKEN = re.compile(r'"[^"]*"|\S+')
_NUMBER = re.compile(r"[-+]?(?:\d[\w.+-]*|nan|inf)|\[[0-9a-f]*\]")  # numbers, blobs
# lines about this very client (its own instance in pmcd.client.*), with timestamps
# of the moment (event records) or with instances that come and go differ per run
_PER_RUN = ("pmcd.client.", "sample.event.", "sample.scramble.", "sample.proc.", "sample.mirage")


def normalised(text: str, values: bool = True) -> list[str]:
    """TEXT's lines with values that change between runs replaced by N (if VALUES)."""
    lines = []
    for line in text.splitlines():
        tokens = _TOKEN.findall(line)
        if line.startswith(_PER_RUN):
            tokens = tokens[:1]
        elif values:
            tokens = tokens[:2] + ["N" if _NUMBER.fullmatch(t) else t for t in tokens[2:]]
        lines.append(" ".join(tokens))
    return lines


# -- unit: local context (-L), in this process ---------------------------------------------


@pytest.fixture(autouse=True)
def packaged_agents(monkeypatch):
    """-L loads the packaged pmcd.conf's agents, simple with its own simple.conf."""
    monkeypatch.delenv("PCP_PMCDCONF_PATH", raising=False)
    monkeypatch.delenv("PCP_PMDAS_DIR", raising=False)


def probe(capsys, *args: str) -> tuple[int, list[str], str]:
    status = pmprobe.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_counts_of_each_leaf_below_a_name(capsys):
    assert probe(capsys, "-L", "simple") == (
        0,
        [
            "simple.numfetch 1",
            "simple.color 3",
            "simple.time.user 1",
            "simple.time.sys 1",
            "simple.now 3",
        ],
        "",
    )


def test_values(capsys):
    status, out, _ = probe(capsys, "-L", "-v", "simple.numfetch", "simple.color")
    assert status == 0
    assert out == ["simple.numfetch 1 1", "simple.color 3 1 101 201"]


def test_instance_ids_and_names(capsys):
    names = ["simple.color", "simple.numfetch"]
    assert probe(capsys, "-L", "-i", *names)[1] == [
        "simple.color 3 ?0 ?1 ?2",
        "simple.numfetch 1 PM_IN_NULL",
    ]
    assert probe(capsys, "-L", "-I", *names)[1] == [
        'simple.color 3 "red" "green" "blue"',
        "simple.numfetch 1 PM_IN_NULL",
    ]
    both = [
        'simple.color 3 ?0 "red" ?1 "green" ?2 "blue"',
        "simple.numfetch 1 PM_IN_NULL PM_IN_NULL",
    ]
    assert probe(capsys, "-L", "-iI", *names)[1] == both
    assert probe(capsys, "-L", "-f", "-I", "-i", *names)[1] == both  # from the domain, no fetch


def test_unknown_names_and_non_leaves(capsys):
    status, out, err = probe(capsys, "-L", "no.such", "simple.numfetch")
    assert (status, err) == (0, "")
    assert out == ["no.such -12357 Unknown metric name", "simple.numfetch 1"]
    # -F: names go to the lookup as given; alone, the lookup itself fails
    assert probe(capsys, "-L", "-F", "simple")[1] == [
        "simple -12394 Metric name is not a leaf in PMNS"
    ]
    assert probe(capsys, "-L", "-F", "no.such")[1] == ["no.such -12357 Unknown metric name"]
    # with others, an unknown name is fetched as PM_ID_NULL, which no agent serves
    # (PCP's pmprobe -L says the same for "no.such sample")
    assert probe(capsys, "-L", "-F", "-v", "no.such", "simple")[1] == [
        "no.such -12386 No PMCD agent for domain of request (pmLookupDesc)",
        "simple -12386 No PMCD agent for domain of request (pmLookupDesc)",
    ]
    assert probe(capsys, "-L", "-F", "simple", "simple.numfetch")[1] == [
        "simple -12386 No PMCD agent for domain of request",
        "simple.numfetch 1",
    ]
    # but names are looked up -b at a time: one by one, each lookup fails on its own
    assert probe(capsys, "-L", "-F", "simple", "simple.numfetch", "-b", "1")[1] == [
        "simple -12394 Metric name is not a leaf in PMNS",
        "simple.numfetch 1",
    ]


def test_every_name_when_none_is_given(capsys):
    status, out, _ = probe(capsys, "-L")
    assert status == 0 and "simple.numfetch 1" in out and "trivial.time 1" in out
    assert not any(line.startswith("pmcd.") for line in out)  # pmcd's agent is not local
    assert all(re.fullmatch(r"\S+ (-?\d+)( .*)?", line) for line in out)


def test_small_batches_give_the_same_lines(capsys):
    assert (
        probe(capsys, "-L", "-b", "2", "-i", "simple")[1] == probe(capsys, "-L", "-i", "simple")[1]
    )


def test_a_namespace_file(capsys, tmp_path):
    ns = tmp_path / "ns"
    ns.write_text("root {\n    simple\n}\nsimple {\n    numfetch 253:0:0\n    bogus 253:9:9\n}\n")
    status, out, _ = probe(capsys, "-L", "-n", str(ns), "-v")
    assert status == 0
    assert out == [
        "simple.numfetch 1 1",
        "simple.bogus -12358 Unknown or illegal metric identifier (pmLookupDesc)",
        "event.flags 0",  # (PCP's anonymous derived metrics, which never have values)
        "event.missed 0",
    ]


def test_pdu_counts_of_a_local_context_are_zero(capsys):
    _, out, _ = probe(capsys, "-L", "-V", "simple.numfetch")
    zeros = " ".join(["  0"] * 23)
    assert out == [
        "simple.numfetch 1",
        f"PDUs send {zeros}",
        "Total: 0",
        f"PDUs recv {zeros}",
        "Total: 0",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-b", "x"], "pmprobe: -b requires numeric argument"),
        (["-b", "3x"], "pmprobe: -b requires numeric argument"),
        (["-b", "0"], "pmprobe: -b requires a positive numeric argument"),
        (["-i", "-v"], "pmprobe: at most one of -v and (-i or -I) allowed"),
        (["-v", "-I"], "pmprobe: at most one of -I and -v allowed"),
        (["-v", "-i"], "pmprobe: at most one of -i and -v allowed"),
        (["-O", "now"], "pmprobe: time window options are supported for archives only"),
        (["-z", "-Z", "UTC", "-h", "x"], "pmprobe: at most one of -Z and -z allowed"),
        (["-z"], "pmprobe: use of timezone from metric source requires a source"),
        (
            ["--derived=/no/such/file"],
            "pmprobe: pmLoadDerivedConfig failed: No such file or directory",
        ),
        (["-x"], "pmprobe: invalid option -- 'x'"),
        (["--values=1"], "pmprobe: option '--values' doesn't allow an argument"),
        (["-b"], "pmprobe: option requires an argument -- 'b'"),
    ],
)
def test_bad_options_are_one_line_and_the_usage(capsys, args, message):
    status, out, err = probe(capsys, "simple", *args)
    assert (status, out) == (1, [])
    lines = err.splitlines()
    assert lines[0] == message
    assert lines[1] == "Usage: pmprobe [options] [metricname ...]"
    assert "Reporting options:" in lines and "Protocol options:" in lines


def test_usage_sections_and_version(capsys):
    status, out, err = probe(capsys, "-?")
    assert (status, out) == (1, [])
    assert option_column(err) == [
        "Usage: pmprobe [options] [metricname ...]",
        "",
        "General options:",
        "  -a FILE, --archive=FILE",
        "  -h HOST, --host=HOST",
        "  --derived=FILE",
        "  -L, --local-PMDA",
        "  -K SPEC, --spec-local=SPEC",
        "  -n FILE, --namespace=FILE",
        "  -O TIME, --origin=TIME",
        "  -Z TZ, --timezone=TZ",
        "  -z, --hostzone",
        "  -d, --version",  # (as PCP's lists it; -d itself is refused, as PCP's refuses it)
        "  -?, --help",
        "",
        "Protocol options:",
        "  -b N, --batch=N",
        "",
        "Reporting options:",
        "  -f, --force",
        "  -F, --faster",
        "  -I, --external",
        "  -i, --internal",
        "  -V, --verbose",
        "  -v, --values",
    ]
    status, out, err = probe(capsys, "--version")
    assert (status, out) == (0, []) and err.startswith("pmprobe version ")


def test_every_option_letter_of_pcps_getopt_string(capsys):
    """PCP's pmprobe takes -D (debug options: no effect here), refuses -e with the usage
    alone and -d as an invalid option (though its usage lists -d for --version)."""
    assert probe(capsys, "-D", "appl0,pdu", "-L", "simple.numfetch")[:2] == (
        0,
        ["simple.numfetch 1"],
    )
    status, _, err = probe(capsys, "-D", "nosuch", "-L", "simple.numfetch")
    assert status == 1
    assert err.startswith("pmprobe: unrecognized debug options specification (nosuch)\nUsage:")
    status, _, err = probe(capsys, "-e", "-L", "simple.numfetch")
    assert (status, err.splitlines()[0]) == (1, "Usage: pmprobe [options] [metricname ...]")
    status, _, err = probe(capsys, "-d")
    assert (status, err.splitlines()[0]) == (1, "pmprobe: invalid option -- 'd'")
    assert "-D" not in err and "  -e" not in err


def test_derived_definitions_are_loaded_and_fetched(capsys, tmp_path):
    conf = tmp_path / "derived"
    conf.write_text("# only a comment\n\n")
    assert probe(capsys, "-L", "--derived", str(conf), "simple.numfetch")[:2] == (
        0,
        ["simple.numfetch 1"],
    )
    conf.write_text("my.double = simple.numfetch * 2\n")
    status, out, err = probe(capsys, "-L", "-v", "--derived", str(conf), "simple.numfetch",
                             "my.double")  # fmt: skip
    assert (status, err) == (0, "")
    (name, count, value), (dname, dcount, dvalue) = (line.split() for line in out)
    assert (name, count, dname, dcount) == ("simple.numfetch", "1", "my.double", "1")
    assert int(dvalue) == 2 * int(value)  # (one fetch of the operand serves both)


def test_no_pmcd_and_no_archive(capsys):
    port = free_port()
    status, out, err = probe(capsys, "-h", f"127.0.0.1:{port}", "simple")
    assert (status, out) == (1, [])
    assert (
        err == f'pmprobe: Cannot connect to PMCD on host "127.0.0.1:{port}": Connection refused\n'
    )
    status, out, err = probe(capsys, "-a", "/no/such/archive", "simple")
    assert status == 1 and err.count("\n") == 1 and "archive" in err


# -- interop: PCP's pmprobe and ours against the same pmcd ---------------------------------

SUBTREES = ("pmcd", "simple", "kernel", "hinv")
# metrics whose values do not change from one run to the next (sample's only on PCP's pmcd)
STEADY = [
    "pmcd.version",
    "pmcd.numagents",
    "pmcd.agent.type",
    "pmcd.agent.status",
    "pmcd.numclients",
    "pmcd.hostname",
    "pmcd.services",
    "pmcd.timezone",
    "pmcd.pmlogger",
    "pmcd.control.timeout",
    "pmcd.control.register",
    "hinv.ncpu",
    "hinv.ndisk",
    "kernel.uname",
    "kernel.all.nusers",
    "sample.long",
    "sample.ulong",
    "sample.longlong",
    "sample.ulonglong.million",
    "sample.ulonglong.write_me",
    "sample.float",
    "sample.double",
    "sample.string",
    "sample.aggregate",
    "sample.noinst",
    "sample.needprofile",
    "sample.bin",
]


def both(server, tool: str, *args: str):
    """PCP's and our TOOL's results for ARGS against SERVER, PCP's first."""
    _, host, env = server
    return run(tool, "pcp", host, env, *args), run(tool, "ours", host, env, *args)


def same(server, *args: str, values: bool = True) -> list[str]:
    theirs, ours = both(server, "pmprobe", *args)
    assert theirs.returncode == ours.returncode == 0, theirs.stderr + ours.stderr
    assert ours.stderr == theirs.stderr == ""
    assert normalised(ours.stdout, values) == normalised(theirs.stdout, values)
    return ours.stdout.splitlines()


@pytest.mark.interop
def test_interop_counts(server):
    out = same(server, *SUBTREES, values=False)
    assert "simple.color 3" in out and "pmcd.version 1" in out


@pytest.mark.interop
def test_interop_values(server):
    out = same(server, "-v", *SUBTREES)
    assert any(line.startswith("simple.color 3 ") for line in out)


@pytest.mark.interop
def test_interop_steady_values_exactly(server):
    out = same(server, "-v", *STEADY, values=False)
    assert 'pmcd.version 1 "6.0.3"' in out


@pytest.mark.interop
@pytest.mark.parametrize("flags", [["-i"], ["-I"], ["-i", "-I"], ["-f", "-i"], ["-f", "-iI"]])
def test_interop_instances(server, flags):
    out = same(server, *flags, *SUBTREES, values=False)
    assert any(line.startswith("simple.color 3 ") for line in out)


@pytest.mark.interop
def test_interop_sample_agent_values(server):
    out = same(server, "-v", "sample", values=True)
    assert 'sample.aggregate.hullo 1 "hullo world!" [68756c6c6f20776f726c6421]' in out


@pytest.mark.interop
def test_interop_unknown_and_non_leaf_names(server):
    same(server, "no.such", "simple.color", "simple.nothing", values=False)
    same(server, "-F", "no.such", "simple", "simple.numfetch", values=False)
    same(server, "-F", "-v", "no.such", "simple", "simple.numfetch")
    same(server, "-F", "-i", "no.such", "simple.color")
    same(server, "-F", "-f", "-I", "no.such", "simple.color")
    same(server, "-F", "simple")
    same(server, "-F", "-v", "no.such")


@pytest.mark.interop
def test_interop_batches(server):
    same(server, "-b", "2", "-v", "simple", "pmcd.pdu_in")
    same(server, "-b", "1", "-i", "-I", "simple")


@pytest.mark.interop
def test_interop_pdu_report_layout(server):
    theirs, ours = both(server, "pmprobe", "-V", "simple.numfetch")
    shape = [re.sub(r"\d+", "N", line) for line in theirs.stdout.splitlines()]
    assert [re.sub(r"\d+", "N", line) for line in ours.stdout.splitlines()] == shape


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["-b", "x"],
        ["-i", "-v"],
        ["-v", "-I"],
        ["-v", "-i"],
        ["-O", "now"],
        ["-z", "-Z", "UTC"],
        ["-x"],
        ["--values=1"],
        ["--derived=/no/such/file"],
        ["-?"],
    ],
)
def test_interop_option_errors(server, args):
    theirs, ours = both(server, "pmprobe", *args, "simple")
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout == ""
    mine, pcps = option_column(ours.stderr), option_column(theirs.stderr)
    # PCP lists --container (not ours)
    pcps = [line for line in pcps if not line.startswith("  --container")]
    assert mine == pcps


@pytest.mark.interop
def test_interop_no_pmcd(server):
    _, _, env = server
    host = f"127.0.0.1:{free_port()}"
    theirs = run("pmprobe", "pcp", host, env, "simple")
    ours = run("pmprobe", "ours", host, env, "simple")
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )


def test_an_archive_zone_is_noted_first(capsys):
    """-z and -Z with an archive: pmGetContextOptions's note, then the metrics (QA 585)."""
    from tests.support.qa_archives import qa

    archive = qa("moomba.client")
    _, out, _ = probe(capsys, "-z", "-a", archive, "-v", "-O", "30s", "kernel.percpu.cpu.user")
    assert out == [
        'Note: timezone set to local timezone of host "moomba" from archive',
        "",
        "kernel.percpu.cpu.user 4 21779000 21276570 23297770 22473800",
    ]
    _, out, _ = probe(capsys, "-Z", "UTC", "-a", archive, "kernel.percpu.cpu.user")
    assert out == ['Note: timezone set to "TZ=UTC"', "", "kernel.percpu.cpu.user 4"]
    _, out, _ = probe(capsys, "-a", archive, "kernel.percpu.cpu.user")
    assert out == ["kernel.percpu.cpu.user 4"]
