"""Every command the project installs runs, and so does every `python -m` form the
README and docs name: after files move between layers, a stale entry point or module
path would otherwise fail only on a user's machine."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def documented_modules() -> set[str]:
    """The modules the docs run as `python -m MODULE` (placeholders like NAME left out)."""
    found = set()
    for doc in DOCS:
        for name in re.findall(r"python3? -m (purepcp[\w.]*\w)", doc.read_text()):
            if not name.split(".")[-1].isupper():
                found.add(name)
    return found


def runnable(module: str) -> bool:
    """Whether `python -m MODULE` runs something: a package with a __main__, or a module
    with a main guard."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        return False
    if spec.submodule_search_locations is not None:
        return importlib.util.find_spec(f"{module}.__main__") is not None
    assert spec.origin is not None
    return 'if __name__ == "__main__":' in Path(spec.origin).read_text()


#: commands whose only argument PCP's takes as a format, "--version" included
FORMAT_ARGUMENT = {"pmdate"}
#: commands whose usage error ends with another status than 1, as PCP's scripts end
USAGE_STATUS = {"pmlogger_rewrite": 4}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_each_console_script_runs_as_a_module_too(script):
    """`python -m` of the command's module gives what the console script gives: here
    `--version` (a usage message where PCP's tool has no such option), never a traceback."""
    module, _, function = SCRIPTS[script].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    package_main = importlib.util.find_spec(module).submodule_search_locations is not None
    target = module if package_main or runnable(module) else None
    assert target is not None, f"python -m {module} runs nothing"
    done = subprocess.run(
        [sys.executable, "-m", target, "--version"], capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, USAGE_STATUS.get(script, 1)), done.stderr
    if script in FORMAT_ARGUMENT:  # (PCP's pmdate formats "--version" as any other text)
        assert done.stdout == "--version\n"
        return
    assert script in done.stdout + done.stderr


def test_the_docs_name_only_modules_that_run():
    documented = documented_modules()
    assert "purepcp.agents.simple" in documented
    assert sorted(m for m in documented if not runnable(m)) == []
