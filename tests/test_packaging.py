"""What `pip install` puts on a machine: names that are ours, data beside its readers.

Built from a clean copy of the repository's tracked files, as pip builds it, then
installed into a private directory and run from there (no tree on the path): the
one import name is `purepcp` (every layer below it: no generic `pmapi`, `pmda`,
`agents`, `help` or `pmns` that would clash with other distributions), the agents'
namespace and help files are package data of purepcp.pmda, the unit templates of
purepcp.pmcd, a local context (-L) finds pmcd's agents through the installed entry point,
and `pmda install` finds every shipped agent through its own.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.wheels import can_build_wheels_offline

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = {"purepcp", "pcp", "cpmapi"}  # (PCP's own Python API names: scripts import them)
#: the layers under it, one a repository folder (setup.py)
LAYERS = {"pmapi", "pmda", "series", "agents", "pmcd", "pmlogger", "pmproxy", "tools"}

INSTALLED_CHECK = """
import json, sys
from purepcp.pmapi.context import Context
from purepcp.pmapi.paths import paths
from purepcp.pmcd.units import TEMPLATES, render_units
from purepcp.agents.simple import Simple
with Context.local() as ctx:
    names = ctx.traverse("simple")
units = render_units(paths(missing_ok=True))
print(json.dumps({
    "pmns": str(Simple.source_file("pmns")),
    "help": str(Simple.source_file("help")),
    "units": str(TEMPLATES),
    "documentation": [
        uri for text in units.values() for line in text.splitlines()
        if line.startswith("Documentation=") for uri in line.split("=", 1)[1].split()
    ],
    "names": names,
    "paths": [p for p in sys.path if "site" in p],
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if importlib.util.find_spec("setuptools") is None or not can_build_wheels_offline():
        pytest.skip("pip cannot build a wheel offline here (no setuptools, or < 70.1 and no wheel)")
    tmp = tmp_path_factory.mktemp("packaging")
    copy = tmp / "src"
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
            "--no-index", "-w", str(tmp / "dist"), str(copy)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (tmp / "dist").glob("*.whl")
    return built


def test_the_distribution_is_purepcp_and_claims_only_our_import_names(wheel):
    """Before: a distribution named pypcp (taken on PyPI) installing top-level `agents`,
    `help` and `pmns`."""
    assert wheel.name.startswith("purepcp-")
    with zipfile.ZipFile(wheel) as whl:
        tops = {name.split("/")[0] for name in whl.namelist()}
        names = set(whl.namelist())
        entry_points = next(
            whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")
        )
    assert {t for t in tops if not t.endswith(".dist-info")} == TOP_LEVEL
    assert {n.split("/")[1] for n in names if n.startswith("purepcp/") and n.count("/") > 1} == (
        LAYERS
    )
    for data in ("pmns", "help"):
        for agent in ("pmcd", "trivial", "simple", "linux", "proc"):
            assert f"purepcp/pmda/{data}/{agent}" in names
    assert "purepcp/pmcd/systemd/pmcd.service" in names
    assert "purepcp/pmcd/systemd/pmproxy.service" in names
    for doc in ("operations.md", "pmproxy.md"):  # (the units' Documentation=)
        assert f"purepcp/pmcd/docs/{doc}" in names
    assert "purepcp/pmcd/pmcd.conf" in names
    assert "purepcp/series/entries.lua" in names
    assert "purepcp/tools/report/conf/vmstat.conf" in names
    for agent in ("trivial", "simple", "linux", "proc"):
        assert f"{agent} = purepcp.agents.{agent}:" in entry_points


def test_installed_copy_runs_on_its_own_data(wheel, tmp_path):
    site = tmp_path / "site"
    argv = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
            "--target", str(site), str(wheel)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # -I: the tree and its editable install stay out of sys.path; only the copy is seen
    runner = f"import sys; sys.path.insert(0, {str(site)!r}); exec({INSTALLED_CHECK!r})"
    done = subprocess.run(
        [sys.executable, "-I", "-c", runner],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert Path(found["pmns"]) == site / "purepcp" / "pmda" / "pmns" / "simple"
    assert Path(found["help"]) == site / "purepcp" / "pmda" / "help" / "simple"
    assert Path(found["units"]) == site / "purepcp" / "pmcd" / "systemd"
    # every Documentation= of the installed copy's units is a file it installed (they
    # named the repository's docs/, which pip does not install)
    docs = site / "purepcp" / "pmcd" / "docs"
    assert sorted(set(found["documentation"])) == [
        f"file://{docs / 'operations.md'}",
        f"file://{docs / 'pmproxy.md'}",
    ]
    assert all(Path(uri.removeprefix("file://")).is_file() for uri in found["documentation"])
    assert "simple.color" in found["names"]
