"""Running our tools in tests: as `python -m purepcp.tools.TOOL` would, in the environment
the derived-metric tests compare PCP's tools and ours in, and many runs at once, forked
from one process that has imported the tools already."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="", TZ="UTC")
    env.pop("PCP_DEBUG", None)
    return env


# Runs many of our tool invocations quickly: the modules are imported once, and each
# invocation is a forked child (a fresh process but for the start-up), its output
# going to files; as many children at once as there are CPUs.
_FORKER = r"""
import json, os, sys, traceback
from purepcp.tools import pminfo, pmprobe, pmval
from purepcp.pmapi.derived.parse import parse
import numpy, purepcp.pmapi.archive.context, purepcp.pmapi.archive.replay
import purepcp.pmapi.derived.bind
parse("1")  # (the parser's tables, built on first use: once here)
TOOLS = {"pminfo": pminfo.main, "pmprobe": pmprobe.main, "pmval": pmval.main}
running = {}
def reap():
    pid, wait = os.wait()
    print(running.pop(pid), os.waitstatus_to_exitcode(wait), flush=True)
with open(sys.argv[1]) as f:
    jobs = json.load(f)
for n, (tool, argv, out, err) in enumerate(jobs):
    if len(running) >= (os.cpu_count() or 1):
        reap()
    pid = os.fork()
    if pid == 0:
        status = 70
        try:
            os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            try:
                status = TOOLS[tool](argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            except BaseException:
                traceback.print_exc()
                status = 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status or 0)
    running[pid] = n
while running:
    reap()
"""


def run_ours_many(tmp: Path, jobs: list[tuple[str, list[str]]], meanwhile=None):
    """Our tools' (stdout, stderr, status) for JOBS, (tool, argv) each; MEANWHILE(), if
    given, is called while they run and its answer returned too."""
    files = [(str(tmp / f"{n}.out"), str(tmp / f"{n}.err")) for n in range(len(jobs))]
    spec = [[tool, argv, out, err] for (tool, argv), (out, err) in zip(jobs, files, strict=True)]
    (tmp / "jobs.json").write_text(json.dumps(spec))
    with subprocess.Popen(
        [sys.executable, "-c", _FORKER, str(tmp / "jobs.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=run_env(),
        text=True,
        cwd=ROOT,
        start_new_session=True,  # (its children too are stopped if it takes too long)
    ) as proc:
        try:
            also = meanwhile() if meanwhile is not None else None
            stdout, stderr = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 0, stderr
    codes = dict(tuple(map(int, line.split())) for line in stdout.splitlines())
    assert sorted(codes) == list(range(len(jobs))), stderr
    ours = [
        (Path(out).read_text(), Path(err).read_text(), codes[n])
        for n, (out, err) in enumerate(files)
    ]
    return ours, also
