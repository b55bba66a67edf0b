"""Our pmcd as a real process for tests: ephemeral port, private unix socket, cleaned up.

`our_pmcd(conf_text, tmp)` starts `python -m pmcd.main -f` with that pmcd.conf,
waits for its "listening on" line, yields an `OurPMCD` (TCP host spec, unix
socket path, environment for PCP's tools), and stops it with SIGTERM (SIGKILL
if it lingers) and everything it started.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class OurPMCD:
    host: str  # 127.0.0.1:PORT
    unix: str  # the unix socket's path
    tmp: Path
    env: dict[str, str]
    pid: int = 0  # pmcd's process

    def run(self, *argv: str, via_unix: bool = False, timeout: float = 60):
        """Run a PCP tool against this pmcd (its -h added), capturing text output."""
        host = f"unix:{self.unix}" if via_unix else self.host
        return subprocess.run(
            [argv[0], "-h", host, *argv[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def log(self) -> str:
        return (self.tmp / "pmcd.log").read_text(errors="replace")


@contextlib.contextmanager
def our_pmcd(
    conf_text: str, tmp: Path, *extra: str, preexec_fn: Callable[[], object] | None = None
) -> Iterator[OurPMCD]:
    """Run our pmcd with CONF_TEXT as its pmcd.conf in directory TMP (PREEXEC_FN runs in
    the child before pmcd starts: a resource limit, say)."""
    conf = tmp / "pmcd.conf"
    conf.write_text(conf_text)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_RUN_DIR=str(tmp), PCP_PMDAS_DIR=str(tmp))
    sock = tmp / "pmcd.socket"
    argv = [sys.executable, "-m", "pmcd.main", "-f", "-p", "0", "-i", "127.0.0.1"]
    argv += ["-s", str(sock), "-c", str(conf), "-l", str(tmp / "pmcd.log"), *extra]
    stderr = tmp / "pmcd.stderr"
    proc = start_daemon(argv, env, stderr, preexec_fn)
    try:
        port = _wait_for_port(proc, stderr)
        yield OurPMCD(f"127.0.0.1:{port}", str(sock), tmp, env, proc.pid)
    finally:
        _stop(proc)


def start_daemon(
    argv: list[str],
    env: dict[str, str],
    stderr: Path,
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.Popen:
    """Start ARGV in a session of its own (so _stop takes what it starts too), its stderr
    in the file STDERR: agents share pmcd's stderr, and a file never fills up."""
    with stderr.open("w") as err:
        return subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            preexec_fn=preexec_fn,
        )


def _wait_for_port(proc: subprocess.Popen, stderr: Path) -> int:
    """The port from pmcd's "listening on" line (printed once its agents have started)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"listening on \S*?:(\d+)", stderr.read_text(errors="replace"))
        if found:
            return int(found.group(1))
        time.sleep(0.05)
    raise RuntimeError("our pmcd did not start: " + stderr.read_text(errors="replace"))


def _stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # anything it started that is still there
