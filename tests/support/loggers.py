"""A pmlogger (ours or PCP's) running with a control port of its own, for pmlc's tests.

`running_logger(kind, tmp, host, config)` starts the logger against the pmcd at HOST
with private $PCP_TMP_DIR and $PCP_RUN_DIR under TMP (so its port map files and
sockets are its own) and a control port searched from a free one, and waits until its
port map file is written.  `pmlc(kind, logger, script, *args)` runs our pmlc or PCP's
on a command script, in the logger's environment.  Processes are stopped on exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.client_servers import tool_env
from tests.support.reference_pmcd import free_port
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Logger:
    """A running pmlogger: its process, control port, environment and files."""

    proc: subprocess.Popen
    port: int
    env: dict[str, str]
    tmp: Path
    log: Path
    archive: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def portfile(self) -> Path:
        return Path(self.env["PCP_TMP_DIR"]) / "pmlogger" / str(self.pid)


def logger_env(tmp: Path) -> dict[str, str]:
    env = tool_env()
    env["PCP_TMP_DIR"] = str(tmp / "tmpdir")
    env["PCP_RUN_DIR"] = str(tmp / "rundir")
    (tmp / "tmpdir").mkdir(exist_ok=True)
    (tmp / "rundir").mkdir(exist_ok=True)
    return env


@contextlib.contextmanager
def running_logger(
    kind: str, tmp: Path, host: str, config: str, *args: str, env: dict | None = None
) -> Iterator[Logger]:
    """Our pmlogger (KIND "ours") or PCP's ("pcp") logging CONFIG from HOST's pmcd."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(env or logger_env(tmp))
    env.setdefault("PMLOGGER_PORT", str(free_port()))
    (tmp / "config").write_text(config)
    (tmp / "arch").mkdir(exist_ok=True)
    if kind == "ours":
        argv = [sys.executable, "-m", "purepcp.pmlogger.main"]
    else:
        argv = ["/usr/bin/pmlogger"]
    log = tmp / "pmlogger.log"
    argv += ["-h", host, "-c", str(tmp / "config"), "-l", str(log), *args, str(tmp / "arch/a")]
    proc = subprocess.Popen(
        argv, env=env, cwd=tmp, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        portfile = Path(env["PCP_TMP_DIR"]) / "pmlogger" / str(proc.pid)

        def ready() -> bool:
            text = portfile.read_text() if portfile.exists() else ""
            return text.count("\n") >= 3

        wait_until(f"{kind} pmlogger's port map file", ready, proc, describe=lambda: _text(log))
        port = int(portfile.read_text().split("\n")[0])
        yield Logger(proc, port, env, tmp, log, tmp / "arch" / "a")
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> int:
    """SIGTERM the logger and wait for it (SIGKILL if it will not go).  The signal is
    sent again each second: PCP's pmlogger can miss one that comes just before it
    blocks in select(), until its next timer (an hour away in these tests)."""
    for _ in range(60):
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(1)
        except subprocess.TimeoutExpired:
            continue
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else "(no log)"


def pmlc(
    kind: str, env: dict[str, str], script: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Our pmlc ("ours") or PCP's ("pcp") with ARGS, SCRIPT on stdin, stdout and stderr
    merged (as QA reads them)."""
    argv = [sys.executable, "-m", "purepcp.tools.pmlc"] if kind == "ours" else ["/usr/bin/pmlc"]
    return subprocess.run(
        [*argv, *args],
        input=script,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
