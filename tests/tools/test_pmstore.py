"""pmstore: local-context stores in this process, and interop against PCP 6's own pmstore.

The unit tests use -L (the packaged agents in-process, no daemon).  The interop
tests (marker interop) store with PCP's pmstore and with ours into the same pmcd
-- PCP's (with our simple agent and PCP's C sample agent) and ours -- and demand
the same output, messages and exit status.  Each store is done once beforehand
so that both tools find the same old value.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator

import pytest

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.profile import Profile
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools import pmstore
from tests.support.reference_pmcd import free_port
from tests.support.tool_pmcds import option_column, run, running_pmcd


@pytest.fixture(autouse=True)
def packaged_agents(monkeypatch):
    """-L loads the packaged pmcd.conf's agents, simple with its own simple.conf."""
    monkeypatch.delenv("PCP_PMCDCONF_PATH", raising=False)
    monkeypatch.delenv("PCP_PMDAS_DIR", raising=False)


def store(capsys, *args: str) -> tuple[int, str, str]:
    status = pmstore.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# -- unit: local context (-L), in this process ---------------------------------------------


def test_a_singular_metric(capsys):
    assert store(capsys, "-L", "simple.numfetch", "5") == (
        0,
        "simple.numfetch old value=1 new value=5\n",
        "",
    )
    # -F reports the value fetched after the store (simple.numfetch counts that fetch)
    assert store(capsys, "-L", "-F", "simple.numfetch", "5")[1] == (
        "simple.numfetch old value=1 new value=6\n"
    )


def test_every_instance_or_those_named(capsys):
    assert store(capsys, "-L", "simple.color", "7")[1] == (
        'simple.color inst [0 or "red"] old value=1 new value=7\n'
        'simple.color inst [1 or "green"] old value=101 new value=7\n'
        'simple.color inst [2 or "blue"] old value=201 new value=7\n'
    )
    red_and_blue = (
        'simple.color inst [0 or "red"] old value=1 new value=8\n'
        'simple.color inst [2 or "blue"] old value=201 new value=8\n'
    )
    for insts in (["-i", "red,blue"], ["-i", "red blue"], ["-i", "red", "--insts=blue"]):
        assert store(capsys, "-L", *insts, "simple.color", "8") == (0, red_and_blue, "")
    assert store(capsys, "-L", "-i", "", "simple.color", "8")[1].count("\n") == 3  # no names


def test_options_come_first_so_a_value_may_look_like_one(capsys):
    status, out, err = store(capsys, "-L", "-i", "red", "simple.color", "-5")
    assert (status, err) == (1, "")
    assert out.startswith('simple.color: new value="-5" pmStore: ')  # the agent refuses it
    status, out, err = store(capsys, "-L", "simple.numfetch", "-F", "7")
    assert (status, out) == (1, "")
    assert err.startswith("Usage: pmstore [options] metricname value\n")
    assert "POSIXLY_CORRECT" not in os.environ


@pytest.mark.parametrize("args", [[], ["-L"], ["-L", "simple.numfetch"], ["-L", "a", "b", "c"]])
def test_a_metric_and_a_value_or_the_usage(capsys, args):
    status, out, err = store(capsys, *args)
    assert (status, out) == (1, "")
    assert option_column(err) == [
        "Usage: pmstore [options] metricname value",
        "",
        "General options:",
        "  -h HOST, --host=HOST",
        "  -L, --local-PMDA",
        "  -K SPEC, --spec-local=SPEC",
        "  -n FILE, --namespace=FILE",
        "  -V, --version",
        "  -?, --help",
        "",
        "Value options:",
        "  -F, --fetch",
        "  -f, --force",
        "  -i INSTS, --insts=INSTS",
    ]


@pytest.mark.parametrize(
    ("metric", "value", "message"),
    [
        ("simple.color", "x", 'The value "x" is incompatible with the data type (PM_TYPE_32)'),
        ("simple.numfetch", "-1", 'The value "-1" is out of range for the data type (PM_TYPE_U32)'),
        ("simple.numfetch", "1.5",
         'The value "1.5" is incompatible with the data type (PM_TYPE_U32)'),
        ("simple.numfetch", "99999999999",
         'The value "99999999999" is out of range for the data type (PM_TYPE_U32)'),
        ("simple.time.user", "0x",
         'The value "0x" is incompatible with the data type (PM_TYPE_DOUBLE)'),
    ],
)  # fmt: skip
def test_values_the_type_cannot_hold(capsys, metric, value, message):
    assert store(capsys, "-L", metric, value) == (1, "", message + "\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no.such", "1"], "no.such: pmLookupName: Unknown metric name"),
        (["simple", "1"], "simple: pmLookupName: Metric name is not a leaf in PMNS"),
        (["-i", "bogus", "simple.color", "1"],
         "pmLookupInDom simple.color[bogus]: Unknown or illegal instance identifier"),
        (["-i", "red", "simple.numfetch", "1"],
         "pmLookupInDom simple.numfetch[red]: Unknown or illegal instance domain identifier"),
        (["simple.time.user", "5"], 'simple.time.user: new value="5" pmStore: Permission denied'),
        (["simple.color", "300"],
         'simple.color: new value="300" pmStore: Impossible value or scale conversion'),
    ],
)  # fmt: skip
def test_failures_are_one_line_on_stdout(capsys, args, message):
    assert store(capsys, "-L", *args) == (1, message + "\n", "")


class FakeContext:
    """Just enough of a Context for pmstore: a metric with no value now."""

    def __init__(self, type_: int = PMType.PM_TYPE_U32, indom: int = PM_INDOM_NULL) -> None:
        self.desc = Desc(7, type_, indom, PMSem.PM_SEM_DISCRETE, Units())
        self.profile = Profile()
        self.stored: list[Result] = []

    def lookup_names(self, names):
        return [7]

    def lookup_desc(self, pmid):
        return self.desc

    def fetch(self, pmids):
        class Fetched:
            result = Result(Timestamp(1, 0), (ValueSet(7, 0, 0, 255, array("I"), array("I")),))

        return Fetched()

    def store(self, result):
        self.stored.append(result)

    def instance_name(self, indom, inst):
        return "one"

    def close(self):
        pass


def test_force_stores_when_there_is_no_value(capsys, monkeypatch):
    ctx = FakeContext()
    monkeypatch.setattr(pmstore.TOOL, "context", lambda parsed: ctx)
    assert store(capsys, "m", "5") == (0 + 1, "m: No value(s) available!\n", "")
    assert ctx.stored == []
    assert store(capsys, "-f", "m", "5") == (0, 'm old value="(none)" new value=5\n', "")
    (vset,) = ctx.stored[0].vsets
    assert (vset.numval, list(vset.insts), list(vset.atoms(PMType.PM_TYPE_U32))) == (
        1,
        [PM_IN_NULL],
        [5],
    )


@pytest.mark.parametrize(
    ("type_", "message"),
    [
        (PMType.PM_TYPE_AGGREGATE, "pmstore: Cannot modify values for PM_TYPE_AGGREGATE metrics"),
        (PMType.PM_TYPE_EVENT, "pmstore: Cannot modify values for event type metrics"),
        (PMType.PM_TYPE_HIGHRES_EVENT, "pmstore: Cannot modify values for event type metrics"),
    ],
)
def test_aggregates_and_events_are_refused(capsys, monkeypatch, type_, message):
    monkeypatch.setattr(pmstore.TOOL, "context", lambda parsed: FakeContext(type_))
    assert store(capsys, "m", "5") == (1, "", message + "\n")


def test_version_help_and_bad_options(capsys):
    status, out, err = store(capsys, "-V")
    assert (status, out) == (0, "") and err.startswith("pmstore version ")
    status, out, err = store(capsys, "-?")
    assert (status, out) == (1, "") and err.startswith("Usage: pmstore ")
    status, out, err = store(capsys, "-x", "simple.numfetch", "1")
    assert (status, out) == (1, "")
    assert err.splitlines()[:2] == [
        "pmstore: invalid option -- 'x'",
        "Usage: pmstore [options] metricname value",
    ]


def test_no_pmcd_and_no_local_agents(capsys):
    port = free_port()
    assert store(capsys, "-h", f"127.0.0.1:{port}", "simple.numfetch", "1") == (
        1,
        "",
        f'pmstore: Cannot connect to PMCD on host "127.0.0.1:{port}": Connection refused\n',
    )
    status, out, err = store(capsys, "-L", "-K", "bogus", "simple.numfetch", "1")
    assert (status, out) == (1, "")
    assert err.startswith("pmstore: Cannot make standalone local connection: ")
    assert err.count("\n") == 1


# -- interop: PCP's pmstore and ours into the same pmcd ------------------------------------


@pytest.fixture(scope="module", params=["reference", "ours"])
def server(request, tmp_path_factory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(which, host, environment) of a running pmcd: PCP's, then ours."""
    with running_pmcd(request.param, tmp_path_factory.mktemp(f"pmcd-{request.param}")) as running:
        yield running


def same(server, *args: str) -> tuple[int, str, str]:
    """Store with PCP's pmstore (twice: the first sets the old value) and with ours."""
    _, host, env = server
    run("pmstore", "pcp", host, env, *args)
    theirs = run("pmstore", "pcp", host, env, *args)
    ours = run("pmstore", "ours", host, env, *args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    return ours.returncode, ours.stdout, ours.stderr


@pytest.mark.interop
def test_interop_numfetch(server):
    assert same(server, "simple.numfetch", "42") == (
        0,
        "simple.numfetch old value=43 new value=42\n",
        "",
    )
    assert same(server, "-F", "simple.numfetch", "42")[1] == (
        "simple.numfetch old value=44 new value=43\n"  # each run's -F fetch counts too
    )


@pytest.mark.interop
@pytest.mark.parametrize(
    "insts",
    [[], ["-i", "red,blue"], ["-i", "red blue"], ["-i", "red", "-i", "blue"], ["-i", "green"]],
)
def test_interop_color(server, insts):
    status, out, _ = same(server, *insts, "simple.color", "7")
    assert status == 0 and "simple.color inst [" in out and "old value=8 new value=7" in out
    same(server, "-F", *insts, "simple.color", "9")


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["simple.color", "300"],
        ["simple.color", "x"],
        ["simple.color", "1.5"],
        ["simple.numfetch", "-1"],
        ["simple.numfetch", "99999999999"],
        ["simple.numfetch", "0x"],
        ["-i", "bogus", "simple.color", "1"],
        ["-i", "red,bogus", "simple.color", "1"],
        ["-i", "red", "simple.numfetch", "1"],
        ["no.such", "1"],
        ["simple", "1"],
        ["simple.time.user", "5"],
        ["simple.now", "5"],
    ],
)
def test_interop_failures(server, args):
    assert same(server, *args)[0] == 1


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["sample.long.write_me", "5"],
        ["sample.long.write_me", "-5"],
        ["sample.long.write_me", "0x10"],
        ["sample.long.write_me", ""],
        ["sample.ulong.write_me", "4294967295"],
        ["sample.longlong.write_me", "-9"],
        ["sample.ulonglong.write_me", "-1"],
        ["sample.float.write_me", "1.5"],
        ["sample.float.write_me", "1e100"],
        ["sample.float.write_me", "x"],
        ["sample.double.write_me", "1e300"],
        ["sample.double.write_me", "-0.125"],
        ["sample.string.write_me", "hello world"],
        ["sample.string.write_me", ""],
        ["sample.aggregate.write_me", "x"],
        ["sample.event.records", "1"],
        ["sample.noinst", "1"],
        ["sample.needprofile", "1"],
        ["-i", "100", "sample.needprofile", "1"],
        ["sample.long.one", "5"],
        ["-i", "bin-100,bin-900", "sample.bin", "5"],
    ],
)
def test_interop_sample_types(server, args):
    same(server, *args)


@pytest.mark.interop
def test_interop_force_without_values(server):
    _, host, env = server
    # PCP's pmstore crashes here; ours stores one value and reports what pmcd said
    ours = run("pmstore", "ours", host, env, "-f", "sample.noinst", "1")
    assert ours.returncode == 1 and ours.stderr == ""
    assert ours.stdout.startswith('sample.noinst: new value="1" pmStore: ')


@pytest.mark.interop
@pytest.mark.parametrize("args", [[], ["simple.numfetch"], ["simple.numfetch", "-F", "1"], ["-x"]])
def test_interop_usage(server, args):
    _, host, env = server
    theirs = run("pmstore", "pcp", host, env, *args)
    ours = run("pmstore", "ours", host, env, *args)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stdout == theirs.stdout == ""
    assert option_column(ours.stderr) == option_column(theirs.stderr)
