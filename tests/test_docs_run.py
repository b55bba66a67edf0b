"""Docs that run: every shell block README.md and docs/*.md mark runnable runs as written.

The mark is a line ``<!-- runnable -->`` directly before a fenced ```` ```sh ```` block.
Blocks that cannot run here (they need root, the network or systemd) carry an HTML
comment saying why instead.

A page's blocks run in order, as a reader goes down the page (a later block may use
what an earlier one made: an archive, a file), each in ``bash -e -o pipefail`` (traced
with ``-x``) started in the same fresh temporary directory, as a reader who installed
purepcp would run them:

- ``PATH`` starts with a directory of wrappers: one ``exec python -m MODULE "$@"`` for
  every console script in pyproject.toml, ``python`` and ``python3`` (this interpreter),
  and ``pip``, whose ``install`` goes into a private directory on ``PYTHONPATH``,
  offline and without dependencies (they come from the environment running the tests,
  which the blocks must not change);
- ``PYTHONPATH`` is the tree, then that private directory;
- ``PUREPCP_CONF`` names a private layout whose pmcd is running, as the docs assume
  a reader's is: started on an ephemeral port (never 44321), its port in
  ``PMCD_PORT`` so that ``-h localhost`` finds it, stopped afterwards;
- ``HOME`` is in the temporary directory.

A block that fails fails the test with the block, its file and line, and its output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.layout import layout_text
from tests.support.our_pmcd import _stop, _wait_for_port, start_daemon
from tests.support.waiting import Notifications

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- runnable -->"
#: How long one block may take (pip builds a wheel in some).
BLOCK_TIMEOUT = 600


@dataclass(frozen=True)
class Block:
    """A runnable block: its shell text, and where it is (file, line of its ```sh)."""

    path: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def runnable_blocks(path: Path) -> list[Block]:
    """The blocks of PATH marked runnable; ValueError for a mark not followed by one."""
    lines = path.read_text().splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        if line.strip() != MARK:
            continue
        if number >= len(lines) or lines[number].strip() != "```sh":
            raise ValueError(f"{path}:{number}: {MARK} is not directly before a ```sh block")
        end = next((i for i in range(number + 1, len(lines)) if lines[i].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{path}:{number + 1}: the ```sh block never ends")
        found.append(Block(path, number + 1, "\n".join(lines[number + 1 : end]) + "\n"))
    return found


def all_blocks() -> list[Block]:
    return [block for path in documents() for block in runnable_blocks(path)]


def console_scripts() -> dict[str, str]:
    """Command name -> the module its entry point is in, from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {name: target.partition(":")[0] for name, target in project["scripts"].items()}


# -- the environment a block runs in ----------------------------------------------------


def _wrapper(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def tools_dir(bin_dir: Path, site: Path) -> Path:
    """BIN_DIR filled with the wrappers (see the module's docstring)."""
    bin_dir.mkdir()
    python = sys.executable
    for name, module in console_scripts().items():
        _wrapper(bin_dir / name, f'exec "{python}" -P -m {module} "$@"')
    for name in ("python", "python3"):
        _wrapper(bin_dir / name, f'exec "{python}" "$@"')
    _wrapper(
        bin_dir / "pip",
        'if [ "$1" = install ]; then shift\n'
        f'  exec "{python}" -m pip install -q --upgrade --target "{site}" --no-index --no-deps '
        '--no-build-isolation "$@"\n'
        f'fi\nexec "{python}" -m pip "$@"',
    )
    return bin_dir


@dataclass
class Sandbox:
    """A directory to run blocks in, with its tools, its layout and its running pmcd."""

    root: Path
    env: dict[str, str]
    pmcd: subprocess.Popen


@pytest.fixture
def sandbox(tmp_path) -> Iterator[Sandbox]:
    site = tmp_path / "site"
    site.mkdir()  # (before pmcd starts, so that its imports look in it)
    bin_dir = tools_dir(tmp_path / "bin", site)
    layout = tmp_path / "layout"
    conf = tmp_path / "pcp.conf"
    conf.write_text(layout_text(layout) + "PMCD_PORT=0\n")
    (tmp_path / "home").mkdir()
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PCP_", "PMCD_", "PMNS_", "PUREPCP_", "XDG_"))
    }
    env.update(
        PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        PYTHONPATH=f"{ROOT}{os.pathsep}{site}",
        PUREPCP_CONF=str(conf),
        HOME=str(tmp_path / "home"),
    )
    notifications = Notifications()
    stderr = tmp_path / "pmcd.stderr"
    pmcd = start_daemon(
        [str(bin_dir / "pmcd"), "-f", "-i", "127.0.0.1"], env, stderr, notifications=notifications
    )
    try:
        port = _wait_for_port(pmcd, stderr, notifications, layout / "log" / "pmcd" / "pmcd.log")
        work = tmp_path / "work"
        work.mkdir()
        yield Sandbox(work, dict(env, PMCD_PORT=str(port)), pmcd)
    finally:
        _stop(pmcd)
        notifications.close()


# -- the tests ---------------------------------------------------------------------------


def test_marks_are_on_sh_blocks_and_the_pages_have_some():
    blocks = all_blocks()  # (ValueError for a misplaced mark)
    pages = {block.path.name for block in blocks}
    assert {"agents.md", "operations.md", "pmcd.md"} <= pages, pages


def test_a_misplaced_mark_is_reported_with_its_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"text\n{MARK}\n\n```sh\ntrue\n```\n")
    with pytest.raises(ValueError, match=r"page.md:2: .* is not directly before a ```sh block"):
        runnable_blocks(page)
    page.write_text(f"{MARK}\n```sh\necho one\n```\n\n{MARK}\n```sh\necho two\n")
    with pytest.raises(ValueError, match=r"page.md:7: the ```sh block never ends"):
        runnable_blocks(page)


def test_a_failing_block_fails_with_block_line_and_output(sandbox):
    block = Block(ROOT / "docs" / "x.md", 12, "echo first\npminfo no.such.metric\necho never\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        run_block(block, sandbox)
    message = str(failed.value)
    assert message.startswith("docs/x.md:12: the block failed (status 1):\n")
    assert "   14  pminfo no.such.metric\n" in message  # (the block, numbered as in the file)
    output = message.split("output:\n", 1)[1]
    assert output == "+ echo first\nfirst\n+ pminfo no.such.metric\n" + (
        "Error: no.such.metric: Unknown metric name\n"
    )  # (traced, and stopped at the command that failed)


@pytest.mark.parametrize(
    "page",
    [path for path in documents() if runnable_blocks(path)],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_the_pages_blocks_run(page, sandbox):
    for block in runnable_blocks(page):
        run_block(block, sandbox)


def run_block(block: Block, sandbox: Sandbox) -> None:
    """Run BLOCK in SANDBOX; fail with the block, where it is and its output if it fails."""
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-x", "-c", block.text],
        cwd=sandbox.root,
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )
    if done.returncode != 0:
        numbered = "".join(
            f"{block.line + i:5}  {text}\n" for i, text in enumerate(block.text.splitlines(), 1)
        )
        pytest.fail(
            f"{block.where}: the block failed (status {done.returncode}):\n{numbered}"
            f"output:\n{done.stdout}",
            pytrace=False,
        )
