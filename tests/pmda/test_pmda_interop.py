"""Our agents under the real PCP 6 pmcd, driven by the real PCP tools (marker interop).

pmcd.conf runs `python -m purepcp.agents.trivial` and `python -m purepcp.agents.simple` as pipe
agents, exactly as a PCP user would add them; the namespace is our pmns files
under a root naming both.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.reference_pmcd import RunningPMCD, free_port, reference_pmcd, require_reference

pytestmark = pytest.mark.interop
ROOT = Path(__file__).resolve().parents[2]


def write_root(path: Path) -> None:
    """A namespace for PCP's pmcd naming our trivial and simple agents."""
    path.write_text(
        "#define TRIVIAL 250\n#define SIMPLE 253\nroot {\n    trivial\n    simple\n}\n"
        + (ROOT / "pmns" / "trivial").read_text()
        + (ROOT / "pmns" / "simple").read_text()
    )


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory) -> Iterator[RunningPMCD]:
    require_reference("pminfo", "pmval", "pmstore", "pmprobe")
    tmp = tmp_path_factory.mktemp("agents")
    root = tmp / "root"
    write_root(root)
    (tmp / "simple").mkdir()
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    python = sys.executable
    conf = [
        f"trivial\t250\tpipe\tbinary\t{python} -m purepcp.agents.trivial",
        f"simple\t253\tpipe\tbinary\t{python} -m purepcp.agents.simple -d 253",
    ]
    env = {"PYTHONPATH": str(ROOT), "PCP_PMDAS_DIR": str(tmp)}
    with reference_pmcd(conf, str(root), extra_env=env) as running:
        yield running


def ok(result) -> str:
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def test_pminfo_describes_and_fetches_both_agents(pmcd):
    out = ok(pmcd.run("pminfo", "-fdtT", "simple", "trivial"))
    assert "simple.color [Metrics which increment with each fetch]" in out
    assert "Data Type: 32-bit int  InDom: 253.0 0x3f400000" in out
    assert 'inst [1 or "green"] value' in out
    assert "simple.time.user [Time agent has spent executing user code]" in out
    assert "Semantics: counter  Units: sec" in out
    assert 'inst [2 or "hour"] value' in out
    assert "trivial.time [time in seconds since 1 Jan 1970]" in out
    assert "Data Type: 32-bit unsigned int  InDom: PM_INDOM_NULL 0xffffffff" in out


def test_pmval_shows_colors_incrementing(pmcd):
    out = ok(pmcd.run("pmval", "-s", "3", "-t", "0.1", "simple.color"))
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 3
    for before, after in itertools.pairwise(rows):
        assert [(int(b) + 1) % 256 for b in before] == [int(a) for a in after]


def test_pmstore_follows_seed_004(pmcd):
    refused = pmcd.run("pmstore", "simple.color", "300")
    assert "Impossible value or scale conversion" in refused.stdout + refused.stderr
    out = ok(pmcd.run("pmstore", "-i", "red", "simple.color", "7"))
    assert 'simple.color inst [0 or "red"] old value=' in out and "new value=7" in out
    after = ok(pmcd.run("pminfo", "-f", "simple.color"))
    assert 'inst [0 or "red"] value 8' in after
    denied = pmcd.run("pmstore", "simple.time.user", "3")
    assert "Permission denied" in denied.stdout + denied.stderr


def test_pmprobe_and_labels(pmcd):
    out = ok(pmcd.run("pmprobe", "-v", "simple.color", "simple.now", "trivial.time"))
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines["simple.color"].startswith("3 ")
    assert lines["simple.now"].startswith("3 ")
    assert lines["trivial.time"].startswith("1 ")
    labels = ok(pmcd.run("pminfo", "-l", "simple.now"))
    assert '"role":"testing"' in labels and '"units":"min"' in labels


def test_socket_agents_serve_the_real_pmcd(tmp_path):
    """-i PORT and -u PATH: pmcd starts the agent, waits as PCP's does, then connects."""
    require_reference("pminfo")

    port, path = free_port(), tmp_path / "trivial.socket"
    root = tmp_path / "root"
    write_root(root)
    python = sys.executable
    conf = [
        f"simple\t253\tsocket\tinet {port}\t{python} -m purepcp.agents.simple -d 253 -i {port}",
        f"trivial\t250\tsocket\tunix {path}\t{python} -m purepcp.agents.trivial -u {path}",
    ]
    env = {"PYTHONPATH": str(ROOT), "PCP_PMDAS_DIR": str(tmp_path)}
    with reference_pmcd(conf, str(root), extra_env=env) as running:
        out = ok(running.run("pminfo", "-f", "simple.numfetch", "simple.color", "trivial.time"))
    assert "simple.numfetch\n    value 1\n" in out
    assert 'inst [2 or "blue"] value 201' in out
    assert "trivial.time\n    value " in out
