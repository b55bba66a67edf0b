"""pminfo: ours prints what PCP 6's pminfo prints, against our pmcd and the reference one."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from purepcp.pmapi.options import HOST, SPECLOCAL, Opt, Tool
from tests.support.client_servers import (
    ours_serving,
    reference_serving,
    run_ours,
    run_theirs,
)
from tests.support.reference_pmcd import free_port, require_reference

# metrics whose values stay put between two runs
DISCRETE = [
    "hinv.ncpu",
    "hinv.ndisk",
    "kernel.uname.release",
    "kernel.uname.sysname",
    "pmcd.version",
    "pmcd.numagents",
    "pmcd.agent.type",
    "pmcd.agent.status",
    "pmcd.control.timeout",
    "simple.numfetch",  # in the list only to be asked for: its value is masked below
]


@pytest.fixture(scope="module", params=["our pmcd", "reference pmcd"])
def host(request, tmp_path_factory) -> Iterator[str]:
    require_reference("pminfo")
    tmp = tmp_path_factory.mktemp("pminfo")
    serving = ours_serving if request.param == "our pmcd" else reference_serving
    with serving(tmp) as running:
        yield running.host


def _masked(text: str) -> str:
    """simple.numfetch counts every fetch: its value cannot agree between two runs."""
    return re.sub(r"(simple\.numfetch\n    value )\d+", r"\1N", text)


def same(args: list[str]) -> tuple[str, str]:
    ours, theirs = run_ours("pminfo", *args), run_theirs("pminfo", *args)
    assert (_masked(ours.stdout), ours.stderr, ours.returncode) == (
        _masked(theirs.stdout),
        theirs.stderr,
        theirs.returncode,
    )
    return ours.stdout, ours.stderr


@pytest.mark.interop
@pytest.mark.parametrize("flags", ["-dtT", "-m", "-M", "-dI", "-t"])
def test_metadata_of_pmcd_kernel_simple(host, flags):
    out, _ = same(["-h", host, flags, "pmcd", "kernel", "simple"])
    assert "kernel.all.load" in out and "simple.color" in out


@pytest.mark.interop
def test_values_of_discrete_metrics(host):
    out, _ = same(["-h", host, "-f", *DISCRETE])
    assert "    value" in out


@pytest.mark.interop
def test_every_name_and_verify(host):
    """Every name, PCP's two anonymous derived event metrics included."""
    ours, theirs = run_ours("pminfo", "-h", host), run_theirs("pminfo", "-h", host)
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()
    assert "pmcd.pid" in ours.stdout.splitlines()
    same(["-h", host, "-v", "pmcd", "simple", "hinv"])


@pytest.mark.interop
def test_labels_and_series(host):
    same(["-h", host, "-l", "simple", "hinv.ncpu", "kernel.all.load"])
    same(["-h", host, "-s", "simple.color", "hinv.ncpu"])


@pytest.mark.interop
def test_pmids_indoms_and_errors(host):
    _, err = same(["-h", host, "-m", "253.0.1", "60.0.32", "253.0", "1.2.3", "no.such", "simple"])
    assert "Error: no.such: Unknown metric name" in err
    same(["-h", host, "-dt", "-I", "253.0", "60.2"])


@pytest.mark.interop
def test_small_batches(host):
    same(["-h", host, "-b", "3", "-f", *DISCRETE])
    ours, theirs = run_ours("pminfo", "-b", "x", "pmcd"), run_theirs("pminfo", "-b", "x", "pmcd")
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.splitlines()[:2] == theirs.stderr.splitlines()[:2]


@pytest.mark.interop
def test_dead_host_and_bad_options():
    require_reference("pminfo")
    port = free_port()
    _, err = same(["-h", f"localhost:{port}", "pmcd"])
    assert err == f'pminfo: Cannot connect to PMCD on host "localhost:{port}": Connection refused\n'
    ours, theirs = run_ours("pminfo", "-Q"), run_theirs("pminfo", "-Q")
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.splitlines()[:2] == theirs.stderr.splitlines()[:2]


def test_local_context_answers_as_our_pmcd(tmp_path):
    """-L loads pmcd.conf's agents in-process; the answers match those through pmcd."""
    args = ["-dtTf", "simple.color", "simple.numfetch", "hinv.ncpu"]
    local = run_ours("pminfo", "-L", *args)
    assert local.returncode == 0, local.stderr
    with ours_serving(tmp_path) as ours:
        remote = run_ours("pminfo", "-h", ours.host, *args)
    assert local.stdout == remote.stdout
    dropped = run_ours("pminfo", "-L", "-K", "del,253", "simple")
    assert dropped.returncode == 1
    assert dropped.stderr == "Error: simple: Unknown metric name\n"


def test_local_context_refuses_a_bad_spec():
    bad = run_ours("pminfo", "-L", "-K", "frob,1", "simple")
    assert bad.returncode == 1
    assert bad.stderr.startswith("pminfo: Cannot make standalone connection on localhost:")
    assert "Traceback" not in bad.stderr


def test_names_only_from_a_namespace_file_need_no_pmcd(tmp_path):
    pmns = tmp_path / "pmns"
    pmns.write_text("root {\n    a\n}\na {\n    b 1:2:3\n    c 1:2:4\n}\n")
    out = run_ours("pminfo", "-n", str(pmns), "-m")
    assert out.stdout == (  # (and PCP's anonymous derived metrics, as its pminfo lists them)
        "a.b PMID: 1.2.3\na.c PMID: 1.2.4\nevent.flags PMID: 511.0.1\nevent.missed PMID: 511.0.2\n"
    )
    assert out.returncode == 0


# namespaces libpcp will not load, as QA 145, 207 and 614 write them
BAD_NAMESPACES = [
    "root {\n    reserved_domain\t511:0:0\n}\n",
    "root {\n    big_cluster  0:4096:0\n}\n",
    "root {\n    bad_serial\t1:1:x\n}\n",
    "root {\n    dyn_bad_cluster\t13:0:*\n}\n",
    "root {\n    proc-nprocs 3:0:0\n}\n",
    "root {\n a 1:0:0\n a 1:0:1\n}\n",
    "root { a 1:0:0 b 1 : 0 :1 a 1:0:2 }\n",
    "root {\n a 1:0:0\n b\n}\n",
    "root {\n a 1:0:0\n}\nx {\n b 1:0:1\n}\ny {\n}\n",
    "root {\n ten 29:0:11\n another_ten 29:0:11\n yet\n}\nyet {\n again 29:0:11\n}\n",
    "",
    "root {\n#fumble\n}\n",
    "root {\n  a 1:0:0  b 1:0:1\n#fumble\n}\n",
]


@pytest.mark.interop
@pytest.mark.parametrize("flag", ["-n", "-N"])
@pytest.mark.parametrize("text", BAD_NAMESPACES)
def test_namespace_errors_as_libpcp_prints_them(tmp_path, text, flag):
    require_reference("pminfo")
    pmns = tmp_path / "bad.pmns"
    pmns.write_text(text)
    ours, theirs = (run("pminfo", flag, str(pmns), "-m") for run in (run_ours, run_theirs))
    assert (ours.stdout, ours.stderr, ours.returncode) == (
        theirs.stdout,
        theirs.stderr,
        theirs.returncode,
    )


def test_a_namespace_that_will_not_load_is_reported_as_libpcp_does(tmp_path):
    pmns = tmp_path / "ns"
    pmns.write_text("root {\n    ten\t29:0:11\n    another_ten\t29:0:11\n}\n")
    assert run_ours("pminfo", "-n", str(pmns)).stdout.startswith("ten\nanother_ten\nevent.")
    out = run_ours("pminfo", "-N", str(pmns))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == (
        "Error Parsing ASCII PMNS: Duplicate metric id (29.0.11) in name space"
        ' for metrics "another_ten" and "ten"\n\n'
        f'pminfo: Cannot load namespace from "{pmns}": Problems parsing PMNS definitions\n'
    )
    pmns.write_text("root {\n    big_domain\t512:0:0\n}\n")
    caret = "    " + " " * len("big_domain") + "\t^\n"
    assert run_ours("pminfo", "-n", str(pmns)).stderr == (
        f"[{pmns}:2] Error Parsing ASCII PMNS: Illegal domain field in PMID\n"
        "    big_domain\t512:0:0\n"
        f"{caret}"
        f"[{pmns}:2] Error Parsing ASCII PMNS: Expected NAME, PMID or }}\n"
        f"{caret}{caret}"
        f'pminfo: Cannot load namespace from "{pmns}": Problems parsing PMNS definitions\n'
    )


def test_empty_non_leaves_are_not_listed(tmp_path):
    """QA 028: libpcp hides a non-leaf with no leaf below it."""
    pmns = tmp_path / "ns"
    pmns.write_text(
        "root {\n empty\n me 1:2:0\n level_one\n}\nlevel_one {\n us 1:3:0\n level_two\n}\n"
        "level_one.level_two {\n empty\n}\nempty {\n}\nlevel_one.level_two.empty {\n}\n"
    )
    out = run_ours("pminfo", "-n", str(pmns))
    assert out.stdout == "me\nlevel_one.us\nevent.flags\nevent.missed\n"
    out = run_ours("pminfo", "-n", str(pmns), "empty", "level_one.level_two")
    assert out.stderr == (
        "Error: empty: Unknown metric name\nError: level_one.level_two: Unknown metric name\n"
    )
    assert out.returncode == 1


class _OneBadDesc:
    """A context whose pmcd refuses a batch of descriptors holding an unknown PMID."""

    source = None

    def lookup_names(self, names):
        return [1, 2][: len(names)]

    def lookup_descs(self, pmids):
        from purepcp.pmapi.errors import PM_ERR_PMID, PMError

        raise PMError(PM_ERR_PMID)

    def lookup_desc(self, pmid):
        from purepcp.pmapi.desc import Desc
        from purepcp.pmapi.errors import PM_ERR_PMID, PMError

        if pmid == 1:
            raise PMError(PM_ERR_PMID)
        return Desc(pmid)


def test_a_descriptor_pmcd_does_not_know_is_reported_per_metric():
    """QA 1086's sample.bad.unknown: pminfo -d reports it and goes on (pmLookupDesc each)."""
    import io

    from purepcp.tools.pminfo import TOOL, Report

    out = io.StringIO()
    report = Report(TOOL.parse(["-d", "bad", "good"]), out)
    report.ctx = _OneBadDesc()
    report.names = ["bad", "good"]
    report.report()
    assert out.getvalue() == (
        "bad: pmLookupDesc: Unknown or illegal metric identifier\n"
        "\ngood\n    Data Type: 32-bit unsigned int  InDom: PM_INDOM_NULL 0xffffffff\n"
        "    Semantics: instant  Units: none\n"
    )


def test_usage_layout_follows_pcp():
    """Option text shorter than 24 columns shares the line; longer text pushes help down."""
    assert HOST.usage_line() == "  -h HOST, --host=HOST  metrics source is the pmcd on HOST"
    assert SPECLOCAL.usage_line().split("\n")[0] == "  -K SPEC, --spec-local=SPEC"
    assert SPECLOCAL.usage_line().split("\n")[1].startswith(" " * 24 + "add")
    tool = Tool("x", "[options]", [("General options", [HOST, Opt("q", None, None, "quiet")])])
    assert re.fullmatch(
        r"Usage: x \[options\]\n\nGeneral options:\n.*\n  -q {20}quiet\n", tool.usage()
    )


# -- pminfo -x: event records unpacked ---------------------------------------------------


def test_events_are_unpacked_record_by_record():
    """-x prints each record of an event value: time, flags, then named parameters."""
    from tests.support.qa_archives import qa

    out = run_ours("pminfo", "-x", "-Z", "UTC", "-a", qa("eventrec-old"), "sample.event.records")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("sample.event.records")
    assert lines[start + 1].startswith("    value [5 event records (7 missed) timestamps ")
    assert lines[start + 2 : start + 6] == [
        "    --- event record [0] timestamp 04:26:00.073 ---",
        "    sample.event.type (29.0.127)",
        "        value 4",
        "    sample.event.param_u64 (29.0.131)",
    ]
    assert "    --- event record [2] timestamp 04:26:02.073 flags 0x2 (start) ---" in lines
    assert "        ==> 7 missed event records" in lines
    assert '        value "thirteen"' in lines


def test_event_dump_of_bare_and_unnamed_records():
    """Records without parameters, parameters without names or descriptors, highres
    times, and a value that is not an event array (said on stderr)."""
    import struct
    from array import array

    from purepcp.pmapi.errors import PM_ERR_PMID, PMError
    from purepcp.pmapi.ids import PM_IN_NULL
    from purepcp.pmapi.types import PMType, ValFmt
    from purepcp.pmapi.values import ValueSet
    from purepcp.tools.pminfo_events import event_dump

    class Ctx:
        def name_all(self, pmid: int) -> list[str]:
            raise PMError(PM_ERR_PMID)

        def lookup_desc(self, pmid: int):
            raise PMError(PM_ERR_PMID)

    param = struct.pack(">II", (1 << 22) | 5, (PMType.PM_TYPE_32 << 24) | 8) + struct.pack(">i", 3)
    records = struct.pack(">i", 2)
    records += struct.pack(">qqIi", 0, 5, 0, 0)
    records += struct.pack(">qqIi", 1, 123456789, 0, 1) + param
    vset = ValueSet(
        1, 1, ValFmt.PM_VAL_DPTR, PMType.PM_TYPE_HIGHRES_EVENT, array("I", [PM_IN_NULL]),
        (records,),
    )  # fmt: skip
    text = event_dump(Ctx(), vset, 0, PMType.PM_TYPE_HIGHRES_EVENT, "UTC", lambda i, j: None)
    assert text == (
        "    --- event record [0] timestamp 00:00:00.000000005 ---\n\tNo parameters\n"
        "    --- event record [1] timestamp 00:00:01.123456789\tPMID: 1.0.5\n"
        "\tpmLookupDesc: Unknown or illegal metric identifier\n"
    )


@pytest.mark.interop
@pytest.mark.parametrize("archive", ["eventrec", "eventrec-old"])
@pytest.mark.parametrize("flags", [["-x"], ["-x", "-Z", "UTC"], ["-xF"]])
def test_events_as_pcp_prints_them(archive, flags):
    from tests.support.qa_archives import qa

    require_reference("pminfo")
    out, _ = same([*flags, "-a", qa(archive), "sample.event"])
    assert "--- event record [0]" in out


def test_an_archive_zone_is_noted_first():
    """-z with an archive: pmGetContextOptions's note comes before the metrics (QA 585)."""
    from tests.support.qa_archives import qa

    out = run_ours(
        "pminfo", "-z", "-a", qa("moomba.client"), "-f", "-O", "30s", "kernel.percpu.cpu.user"
    )
    note = 'Note: timezone set to local timezone of host "moomba" from archive\n\n'
    assert out.stdout.startswith(note + "\nkernel.percpu.cpu.user\n")
    out = run_ours("pminfo", "-Z", "UTC", "-a", qa("moomba.client"), "hinv.ncpu")
    assert out.stdout == 'Note: timezone set to "TZ=UTC"\n\nhinv.ncpu\n'


def test_cluster_labels_are_asked_with_the_metrics_own_pmid():
    """QA 352: -l asks pmGetClusterLabels with the metric's own PMID, as PCP's pminfo does;
    an archive holds a cluster's labels under item 0, so it shows none of them."""
    from tests.support.qa_archives import qa

    out = run_ours("pminfo", "-l", "-a", qa("sample-labels"), "sample.colour")
    assert out.returncode == 0, out.stderr
    assert '"agent":"sample"' in out.stdout and '"cluster"' not in out.stdout


@pytest.mark.interop
def test_archive_labels_as_pcp_prints_them():
    from tests.support.qa_archives import qa

    require_reference("pminfo")
    same(["-l", "-a", qa("sample-labels")])
