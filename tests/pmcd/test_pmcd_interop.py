"""PCP 6's own tools against our pmcd, over TCP and its unix socket (marker interop).

Our pmcd runs as a process (tests/support/our_pmcd.py) with our agents in-process and
as pipe and socket agents, and with PCP's C pmdalinux as a pipe agent; PCP's
pminfo, pmval, pmprobe, pmstore, pmlogger and pmlogcheck are the clients.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.reference_pmcd import reference_pmcd, require_reference

pytestmark = pytest.mark.interop
PY = sys.executable


def ok(result) -> str:
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory) -> Iterator[OurPMCD]:
    require_reference("pminfo", "pmval", "pmstore", "pmprobe")
    tmp = tmp_path_factory.mktemp("ourpmcd")
    (tmp / "simple").mkdir()
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    conf = (
        f"trivial 250 socket unix {tmp}/trivial.sock "
        f"{PY} -m purepcp.agents.trivial -u {tmp}/trivial.sock\n"
        f"simple 253 pipe binary {PY} -m purepcp.agents.simple -d 253\n"
        "linux 60 dso Linux purepcp.agents.linux\n"
    )
    with our_pmcd(conf, tmp) as running:
        yield running


@pytest.mark.parametrize("via_unix", [False, True], ids=["tcp", "unix"])
def test_pminfo_fdtTl(pmcd, via_unix):
    out = ok(pmcd.run("pminfo", "-fdtTl", "simple", "trivial", via_unix=via_unix))
    assert "simple.color [Metrics which increment with each fetch]" in out
    assert "Data Type: 32-bit int  InDom: 253.0 0x3f400000" in out
    assert 'inst [1 or "green"] value' in out
    assert '"role":"testing"' in out and '"hostname"' in out
    assert "trivial.time [time in seconds since 1 Jan 1970]" in out


def test_pmval_five_samples(pmcd):
    out = ok(pmcd.run("pmval", "-s", "5", "-t", "0.1", "simple.color"))
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 5 and all(len(row) == 3 for row in rows)


def test_pmprobe_values_of_the_linux_agent(pmcd):
    out = ok(pmcd.run("pmprobe", "-v", "hinv.ncpu", "kernel.all.load", "mem.physmem"))
    counts = {line.split()[0]: int(line.split()[1]) for line in out.splitlines()}
    assert counts == {"hinv.ncpu": 1, "kernel.all.load": 3, "mem.physmem": 1}


def test_pmstore_through_our_pmcd(pmcd):
    refused = pmcd.run("pmstore", "simple.color", "300")
    assert "Impossible value or scale conversion" in refused.stdout + refused.stderr
    out = ok(pmcd.run("pmstore", "-i", "red", "simple.color", "7", via_unix=True))
    assert "new value=7" in out
    assert 'inst [0 or "red"] value 8' in ok(pmcd.run("pminfo", "-f", "simple.color"))


def test_pmlogger_records_from_our_pmcd_and_pmlogcheck_passes(pmcd, tmp_path):
    require_reference("pmlogger", "pmlogcheck")
    config = tmp_path / "config"
    config.write_text("log mandatory on every 100 msec { simple.color kernel.all.load }\n")
    archive = tmp_path / "arch"
    log = str(tmp_path / "pmlogger.log")
    argv = ["pmlogger", "-V", "2", "-s", "5", "-l", log, "-c", str(config), str(archive)]
    ok(pmcd.run(*argv, timeout=60))
    check = subprocess.run(  # pmlogcheck reads the archive, it takes no -h
        ["pmlogcheck", str(archive)], capture_output=True, text=True, env=pmcd.env, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_pcp_pmdalinux_as_our_pipe_agent_answers_as_under_pcp_pmcd(tmp_path):
    require_reference("pminfo")
    pmdalinux = "/var/lib/pcp/pmdas/linux/pmdalinux"
    line = f"linux 60 pipe binary {pmdalinux} -d 60\n"
    root = "/var/lib/pcp/pmns/root"
    names = ["hinv.ncpu", "hinv.physmem", "kernel.all.load"]
    with our_pmcd(line, tmp_path, "-n", root) as ours:
        mine = ok(ours.run("pminfo", "-f", *names))
    with reference_pmcd([line.strip().replace(" ", "\t", 4)], root) as theirs:
        real = ok(theirs.run("pminfo", "-f", *names))

    def shape(text: str) -> list[str]:  # load averages move: compare all but their values
        return [ln.rsplit(" value ", 1)[0] if "minute" in ln else ln for ln in text.splitlines()]

    assert shape(mine) == shape(real)


def test_sighup_reloads_pmcd_conf(tmp_path):
    require_reference("pminfo")
    with our_pmcd("trivial 250 dso Trivial purepcp.agents.trivial\n", tmp_path) as ours:
        assert "trivial.time" in ok(ours.run("pminfo", "trivial"))
        (tmp_path / "pmcd.conf").write_text(
            "simple 253 pipe binary " + PY + " -m purepcp.agents.simple\n"
        )
        ours.reload()
        assert "reload: started simple" in ours.log()
        out = ok(ours.run("pminfo", "-f", "simple.numfetch"))
        assert "value 1" in out
        assert ours.run("pminfo", "trivial").returncode != 0


def test_dynamic_subtrees_of_pcp_pmdasample_answer_as_under_pcp_pmcd(tmp_path):
    """sample.secret and sample.ghosts are "29:*:*" in pmcd's namespace: pmcd asks the agent."""
    require_reference("pminfo")
    pmdasample = "/var/lib/pcp/pmdas/sample/pmdasample"
    if not os.path.exists(pmdasample):
        pytest.skip("reference PCP 6 is not installed: no pmdasample (Debian package pcp)")
    root = tmp_path / "root"
    sample_pmns = Path("/var/lib/pcp/pmdas/sample/pmns").read_text()
    root.write_text("#define SAMPLE 29\nroot {\n    sample\n}\n" + sample_pmns)
    line = f"sample 29 pipe binary {pmdasample} -d 29 -l {tmp_path}/sample.log\n"
    queries = [
        ("pminfo", "sample.secret"),  # traverse into a dynamic subtree
        ("pminfo", "-m", "sample.secret.foo.bar.max.redirect"),  # a name inside one
        ("pminfo", "-f", "sample.secret"),
        ("pminfo", "-M", "sample.secret.bar"),  # the name of a PMID only the agent knows
        ("pminfo", "sample.dynamic.meta"),  # a static part next to the dynamic ones
        ("pminfo", "sample.secret.no.such"),
    ]
    mine, real = [], []
    with our_pmcd(line, tmp_path, "-n", str(root)) as ours:
        mine = [ours.run(*q) for q in queries]
    with reference_pmcd([line.strip().replace(" ", "\t", 4)], str(root)) as theirs:
        real = [theirs.run(*q) for q in queries]
    for query, a, b in zip(queries, mine, real, strict=True):
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), query
    assert "sample.secret.foo.bar.max.redirect" in mine[0].stdout


def test_pcp_c_dso_agent_is_served_by_a_host_process_as_under_pcp_pmcd(tmp_path):
    """PCP's sample agent as a library (sampledso, a dso line): our pmcd serves it through
    purepcp.pmda.dsohost and answers as PCP's pmcd, which loads it into itself."""
    require_reference("pminfo")
    library = "/var/lib/pcp/pmdas/sample/pmda_sample.so"
    if not os.path.exists(library):
        pytest.skip("reference PCP 6 is not installed: no pmda_sample.so (Debian package pcp)")
    root = tmp_path / "root"
    sample_pmns = Path("/var/lib/pcp/pmdas/sample/pmns").read_text()
    root.write_text(
        "#define SAMPLE 30\nroot {\n    sampledso\n}\n" + sample_pmns.replace("sample", "sampledso")
    )
    line = f"sampledso 30 dso sample_init {library}\n"
    queries = [
        ("pminfo", "-f", "sampledso.long.one", "sampledso.colour"),
        ("pminfo", "-d", "sampledso.ulong.hundred"),
        ("pminfo", "-f", "sampledso.needprofile"),  # an agent's error per metric
        ("pmstore", "sampledso.long.write_me", "42"),
        ("pminfo", "-f", "sampledso.long.write_me"),
    ]
    with our_pmcd(line, tmp_path, "-n", str(root)) as ours:
        mine = [ours.run(*q) for q in queries]
    with reference_pmcd([line.strip().replace(" ", "\t", 4)], str(root)) as theirs:
        real = [theirs.run(*q) for q in queries]
    for query, a, b in zip(queries, mine, real, strict=True):
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), query
    assert "value 42" in mine[-1].stdout
