"""Start-up is a feature: a live query imports only what a live query needs.

Each command runs in a child interpreter against our pmcd, as a user runs it, and
then reports which modules were loaded.  A live pminfo, pmprobe, pmval or pmstore
must not load the archive reader or format, NumPy, trio, construct (the PDU codec is
struct) or the derived-metric engine (nothing asked for a derived metric).  No
timing here: benchmarks/bench_startup.py times the commands against PCP's.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.client_servers import ours_serving
from tests.support.our_pmcd import ROOT
from tests.support.series_archives import write_mixed

#: module name prefixes a live one-metric query must never load
HEAVY = (
    "numpy",
    "trio",
    "construct",
    "purepcp.pmapi.archive.format",
    "purepcp.pmapi.archive.reader",
    "purepcp.pmapi.archive.context",
    "purepcp.pmapi.archive.replay",
    "purepcp.pmapi.derived",
)

RUN_AND_LIST = """
import importlib, json, sys
tool, args = sys.argv[1], sys.argv[2:]
module = importlib.import_module("purepcp.tools." + tool)
try:
    status = module.main(args)
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules(tool: str, args: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The modules TOOL ARGS had loaded when it ended (it must have succeeded)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, tool, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["status"] in (0, None), done.stdout + done.stderr
    return report["modules"]


def _heavy(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    with ours_serving(tmp_path_factory.mktemp("startup")) as running:
        yield running


@pytest.mark.parametrize(
    "command",
    [
        ["pminfo", "-f", "kernel.all.load"],
        ["pminfo", "-dT", "simple.numfetch"],
        ["pmprobe", "-v", "kernel.all.load"],
        ["pmval", "-s", "1", "simple.numfetch"],
        ["pmstore", "simple.numfetch", "3"],
    ],
    ids=lambda c: " ".join(c),
)
def test_a_live_query_imports_nothing_it_does_not_use(pmcd, command):
    tool, *args = command
    loaded = _heavy(_modules(tool, ["-h", pmcd.host, *args], pmcd.env))
    assert loaded == [], f"{tool} loaded {loaded}"


@pytest.mark.parametrize(
    "command",
    [
        ["pminfo", "-f", "test.ctr"],
        ["pmprobe", "-v", "test.ctr"],
        ["pmdumplog", "-l"],
        ["pmval", "-s", "2", "test.ctr"],
    ],
    ids=lambda c: " ".join(c),
)
def test_an_archive_query_reads_without_construct_or_the_pdu_layer(tmp_path, command):
    """The archive is read with struct (construct loads only to write one), and an archive
    query never loads the PDU codec, a connection or trio (pmval's replay may use NumPy)."""
    archive = str(tmp_path / "mixed")
    write_mixed(archive)
    tool, *args = command
    args = [*args[:1], archive, *args[1:]] if tool == "pmdumplog" else ["-a", archive, *args]
    heavy = ("construct", "trio", "purepcp.pmapi.pdu.codec", "purepcp.pmapi.connection")
    assert _heavy(_modules(tool, args), heavy) == []
