"""`pmda new`: the generated agent package works as written, installed, and under its tests.

The generated tests run in a subprocess, as its author would run them, and
must pass, and fail once the agent is broken; the agent loads in-process and
under dbpmda as its README says; pip installs it with the entry point `pmda
install` looks for and with its namespace and help files; bad requests fail
with one line and leave nothing behind.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from purepcp.pmapi.ids import pmID_build, pmID_domain
from purepcp.pmcd.pmcd_agent import PmcdAgent
from purepcp.pmda import COUNTER, U64
from purepcp.pmda.cli import newagent
from purepcp.pmda.cli.newagent import SHIPPED_AGENTS, NewAgentError, create_agent
from purepcp.pmda.inproc import agent_class, load_agent
from purepcp.pmda.testing import AgentHarness
from tests.support.wheels import can_build_wheels_offline

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "pmda" / "templates" / "agent"

#: the generated project, relative to its directory
LAYOUT = {
    "pyproject.toml",
    "README.md",
    ".gitignore",
    "dbpmda.pmns",
    "pcp_pmda_demo/__init__.py",
    "pcp_pmda_demo/__main__.py",
    "pcp_pmda_demo/pmns",
    "pcp_pmda_demo/help",
    "tests/test_demo.py",
}


def run(args: list, cwd: Path, pythonpath: Path | None = None, stdin: str | None = None):
    """Run ARGS in CWD with PYTHONPATH starting at PYTHONPATH; the completed process."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_tests(dest: Path):
    """The generated project's tests, run as its README says (pytest in its directory)."""
    return run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", dest / "tests"],
        cwd=dest,
        pythonpath=dest,
    )


@pytest.fixture
def forget_generated():
    """Drop generated agent modules imported by a test, so the next test imports its own."""
    yield
    for module in [m for m in sys.modules if m.startswith("pcp_pmda_")]:
        del sys.modules[module]


@pytest.fixture
def demo(tmp_path) -> Path:
    dest = tmp_path / "pmda-demo"
    create_agent("demo", 400, dest)
    return dest


def test_the_files_written(tmp_path):
    dest = tmp_path / "pmda-demo"
    written = create_agent("demo", 400, dest)
    assert {p.relative_to(dest).as_posix() for p in written} == LAYOUT
    assert len(written) == len(LAYOUT) and all(p.is_file() for p in written)
    assert {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} == LAYOUT
    pyproject = (dest / "pyproject.toml").read_text()
    assert 'name = "purepcp-agent-demo"' in pyproject
    # a compatible release of this purepcp, never PyPI's unrelated "purepcp" 1.0.0rc1
    major, minor = importlib.metadata.version("purepcp").split(".")[:2]
    assert f'dependencies = ["purepcp~={major}.{minor}"]' in pyproject
    assert '[project.entry-points."purepcp.agents"]\ndemo = "pcp_pmda_demo:DemoAgent"' in pyproject
    assert 'pcp_pmda_demo = ["pmns", "help"]' in pyproject
    assert "demo {\n    count\tDEMO:0:0\n}" in (dest / "pcp_pmda_demo" / "pmns").read_text()
    assert 'name, domain = "demo", 400' in (dest / "pcp_pmda_demo" / "__init__.py").read_text()
    assert "pip install . && pmda install demo" in " && ".join(
        line.strip() for line in (dest / "README.md").read_text().splitlines()
    )


def test_every_template_is_used():
    assert {t for t, _ in newagent.FILES} == {p.name for p in TEMPLATES.iterdir()}


def test_the_generated_tests_pass(demo):
    done = run_tests(demo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def test_the_generated_tests_catch_a_broken_agent(demo, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(demo, broken)
    module = broken / "pcp_pmda_demo" / "__init__.py"
    source = module.read_text()
    assert source.count("self.fetches += 1") == 1
    module.write_text(source.replace("self.fetches += 1", "self.fetches += 2"))
    done = run_tests(broken)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_count_counts_fetches FAILED" in done.stdout or "failed" in done.stdout


@pytest.mark.parametrize(
    ("name", "package", "cls"),
    [
        ("demo", "pcp_pmda_demo", "DemoAgent"),
        ("my_app2", "pcp_pmda_my_app2", "MyApp2Agent"),
        ("Mixed", "pcp_pmda_Mixed", "MixedAgent"),
    ],
)
def test_the_agent_loads_in_process(tmp_path, monkeypatch, forget_generated, name, package, cls):
    dest = tmp_path / f"pmda-{name}"
    create_agent(name, 400, dest)
    monkeypatch.syspath_prepend(str(dest))
    agent = load_agent(package)
    assert type(agent).__name__ == cls and agent.domain == 400
    assert type(agent).source_file("pmns") == dest / package / "pmns"
    assert type(agent).source_file("help") == dest / package / "help"
    with AgentHarness(agent) as harness:
        assert harness.names() == [f"{name}.count"]
        assert harness.pmid(f"{name}.count") == pmID_build(400, 0, 0)
        assert [harness.fetch(f"{name}.count") for _ in range(3)] == [1, 2, 3]
        desc = harness.desc(f"{name}.count")
        assert (desc.type, desc.sem, desc.units.text()) == (U64, COUNTER, "count")
        assert harness.oneline(f"{name}.count") == (
            f"Number of fetch requests the {name} agent has answered"
        )
        assert f"pmstore {name}.count 0" in harness.help(f"{name}.count")
    moved = load_agent(package, 401)
    assert pmID_domain(AgentHarness(moved).desc(f"{name}.count").pmid) == 401


def test_the_readme_dbpmda_session(demo):
    """dbpmda as the README runs it: in-process, then as a pipe agent (`python -m`)."""
    script = textwrap.dedent(f"""\
        open dso pcp_pmda_demo
        fetch demo.count
        desc demo.count
        store demo.count "0"
        fetch demo.count
        store demo.count "7"
        open pipe {sys.executable} -m pcp_pmda_demo
        fetch demo.count
        text demo.count
        """)
    done = run(
        [sys.executable, "-m", "purepcp.pmda.cli.dbpmda", "-n", "dbpmda.pmns", "-e"],
        cwd=demo,
        pythonpath=demo,
        stdin=script,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.count("400.0.0 (demo.count): numval: 1") == 3
    assert "Semantics: counter  Units: count" in out
    assert "400.0.0: 2 -> 0" in out  # (store fetches the old value first)
    assert "Error: DSO store() failed: Bad input to pmstore" in out
    # (dbpmda names the program by its base name, as PCP's does: python or python3)
    assert (
        f"Start {os.path.basename(sys.executable)} PMDA: {sys.executable} -m pcp_pmda_demo" in out
    )
    assert "[Number of fetch requests the demo agent has answered]" in out
    values = [line.strip() for line in out.splitlines() if line.strip().startswith("value ")]
    assert values == ["value 1", "value 1", "value 1"]  # reset by the store, then a new agent


INSTALLED_CHECK = """
import importlib.metadata, json, sys
from purepcp.pmda.testing import AgentHarness
found = [ep for ep in importlib.metadata.entry_points(group="purepcp.agents") if ep.name == "demo"]
cls = found[0].load()
with AgentHarness(cls()) as agent:
    values = [agent.fetch("demo.count") for _ in range(2)]
    oneline = agent.oneline("demo.count")
print(json.dumps({
    "entry_points": [ep.value for ep in found],
    "module": sys.modules[cls.__module__].__file__,
    "pmns": str(cls.source_file("pmns")),
    "help": str(cls.source_file("help")),
    "values": values,
    "oneline": oneline,
}))
"""


@pytest.mark.skipif(
    not can_build_wheels_offline(),
    reason="pip cannot build a wheel offline here: setuptools < 70.1 and no wheel package"
    " (add wheel, or setuptools>=70.1, to the environment)",
)
def test_pip_installs_the_agent_with_its_entry_point_and_files(demo, tmp_path):
    site = tmp_path / "site"
    done = run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "--target",
            site,
            demo,
        ],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for data in ("pmns", "help"):
        assert (site / "pcp_pmda_demo" / data).is_file()
    done = run([sys.executable, "-c", INSTALLED_CHECK], cwd=site.parent, pythonpath=site)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["entry_points"] == ["pcp_pmda_demo:DemoAgent"]
    installed = site.resolve() / "pcp_pmda_demo"
    assert Path(found["module"]).resolve() == installed / "__init__.py"
    assert Path(found["pmns"]).resolve() == installed / "pmns"
    assert Path(found["help"]).resolve() == installed / "help"
    assert found["values"] == [1, 2]
    assert found["oneline"] == "Number of fetch requests the demo agent has answered"


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_the_generated_python_passes_ruff(tmp_path):
    dest = tmp_path / "pmda-my_app"
    create_agent("my_app", 400, dest)
    rules = ["--isolated", "--target-version", "py311"]
    check = [sys.executable, "-m", "ruff", "check", "--no-cache", *rules]
    done = run([*check, "--select", "E,F,W,I,B,UP,SIM,RUF", "."], cwd=dest)
    assert done.returncode == 0, done.stdout + done.stderr
    done = run([sys.executable, "-m", "ruff", "format", "--check", "--no-cache", *rules, "."], dest)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("name", "domain", "message"),
    [
        ("my-agent", 400, "bad agent name 'my-agent'"),
        ("1st", 400, "bad agent name '1st'"),
        ("", 400, "bad agent name ''"),
        ("demo.sub", 400, "bad agent name 'demo.sub'"),
        ("_x", 400, "bad agent name '_x'"),
        ("DEMO", 400, "needs a lowercase letter"),
        ("simple", 400, "simple is the name of an agent shipped with purepcp"),
        ("pmcd", 400, "pmcd is the name of an agent shipped with purepcp"),
        ("root", 400, "root is the namespace's own root"),
        ("demo", 0, "bad domain 0: a domain is from 1 to 510"),
        ("demo", 511, "bad domain 511"),
        ("demo", -3, "bad domain -3"),
        ("demo", "400", "bad domain '400': a domain is a whole number"),
        ("demo", True, "bad domain True"),
        ("demo", 60, "domain 60 is the linux agent's"),
    ],
)
def test_bad_requests_fail_in_one_line_and_write_nothing(tmp_path, name, domain, message):
    dest = tmp_path / "new"
    with pytest.raises(NewAgentError) as refused:
        create_agent(name, domain, dest)
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert not dest.exists()


def test_an_existing_destination_is_never_touched(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("mine\n")
    for existing in (tmp_path / "dir", tmp_path / "file"):
        with pytest.raises(NewAgentError, match="already exists; choose a new directory"):
            create_agent("demo", 400, existing)
    assert list((tmp_path / "dir").iterdir()) == []
    assert (tmp_path / "file").read_text() == "mine\n"


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    real = newagent.render

    def render(template, values):
        if template == "help.tmpl":
            raise OSError(28, "No space left on device", "help")
        return real(template, values)

    monkeypatch.setattr(newagent, "render", render)
    dest = tmp_path / "parent" / "pmda-demo"
    with pytest.raises(NewAgentError, match=r"^cannot write help: No space left on device$"):
        create_agent("demo", 400, dest)
    assert not dest.exists()


def test_the_shipped_agents_are_the_ones_refused():
    """SHIPPED_AGENTS: pmcd's own agent and the agents purepcp's pyproject.toml declares."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    shipped = {name: agent_class(spec) for name, spec in declared["purepcp.agents"].items()}
    shipped["pmcd"] = PmcdAgent
    assert {name: cls.domain for name, cls in shipped.items()} == SHIPPED_AGENTS


def test_pmda_new_runs_outside_the_source_tree(tmp_path):
    """The templates are read as purepcp.pmda's package data: run from any directory (the
    tree's top-level `pmda` folder not importable), `pmda new` writes the agent.  It
    once looked them up as a top-level package `pmda`, found only in the tree."""
    done = subprocess.run(
        [sys.executable, "-m", "purepcp.pmcd.pmda_tool", "new", "--domain", "300", "outside"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pmda-outside" / "pyproject.toml").exists()
    assert "Traceback" not in done.stderr
