"""A private reference PCP 6 pmcd for interop tests: ephemeral port, temp dir, cleaned up.

`reference_pmcd(conf_lines, pmns_path)` starts Debian's /usr/lib/pcp/bin/pmcd with
the given pmcd.conf lines and namespace, waits until it answers, yields a
`RunningPMCD` (its host spec and the environment to run PCP's tools with), and
stops it and everything it started afterwards.  Tests call `require_reference()`
first, which skips them with a clear reason when PCP is not installed.

"Answers" means pmcd has sent a client its first PDU, not merely that its port
accepts connections: pmcd.c's main() listens on its request ports *before*
pmOpenLog() creates pmcd.log (unlink, then freopen of stderr), then starts its
agents and logs them, its access lists and its request ports, flushes the log,
and only then enters ClientLoop(), which accepts connections and greets each one
(CheckNewClient's __pmSendXtendError, allowed or refused).  The kernel completes
a TCP handshake from the listen backlog long before that, so a connect alone
can race with pmcd.log's creation; a greeting means the start-up log is there
and complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from tests.support.waiting import DEADLINE

PMCD = "/usr/lib/pcp/bin/pmcd"
PMNS_ROOT = "/var/lib/pcp/pmns/root"


def require_reference(*tools: str) -> None:
    """Skip the calling test unless the reference pmcd and TOOLS (e.g. "pminfo") exist."""
    if not os.path.exists(PMCD):
        pytest.skip(f"reference PCP 6 is not installed: no {PMCD} (Debian package pcp)")
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"reference PCP 6 is not installed: no {tool} (Debian package pcp)")


@dataclass(frozen=True)
class RunningPMCD:
    host: str  # for -h: 127.0.0.1:PORT
    env: dict[str, str]
    tmp: str

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a PCP tool against this pmcd (its -h added), capturing text output."""
        return subprocess.run(
            [argv[0], "-h", self.host, *argv[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def log(self) -> str:
        with open(os.path.join(self.tmp, "pmcd.log"), errors="replace") as f:
            return f.read()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_answering(proc: subprocess.Popen, port: int, timeout: float = DEADLINE) -> bool:
    """Whether pmcd PROC greets a client on PORT (so its start-up log is complete)
    before it exits or TIMEOUT seconds pass; see the module's docstring."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=min(left, 0.5)) as s:
                # pmcd greets from ClientLoop() only; until then the connection waits in
                # its backlog, and if pmcd exits first it is reset
                s.settimeout(max(deadline - time.monotonic(), 0.01))
                if s.recv(1):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def _read_log(path: str) -> str:
    """pmcd's log for a failure message (pmcd writes none if it fails before pmOpenLog)."""
    if not os.path.exists(path):
        return f"(no {path}: pmcd exited before opening its log)"
    with open(path, errors="replace") as f:
        return f.read()


def _stop(proc: subprocess.Popen) -> None:
    """Stop pmcd and whatever it started (it leads its own process group)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # agents left behind, if any


@contextmanager
def reference_pmcd(
    conf_lines: Sequence[str], pmns_path: str = PMNS_ROOT, *, extra_env: dict | None = None
) -> Iterator[RunningPMCD]:
    """A reference pmcd serving CONF_LINES' agents with the namespace PMNS_PATH."""
    tmp = tempfile.mkdtemp(prefix="purepcp-ref-pmcd-")
    proc = None
    try:
        conf = os.path.join(tmp, "pmcd.conf")
        with open(conf, "w") as f:
            f.write("".join(line + "\n" for line in conf_lines))
        os.mkdir(os.path.join(tmp, "run"))
        # PCP_VAR_DIR only moves agents' pmdaCache files (instance ids they would save
        # under /var/lib/pcp/config/pmda) into the temp dir; every other path is explicit
        env = dict(
            os.environ,
            PCP_RUN_DIR=os.path.join(tmp, "run"),
            PCP_VAR_DIR=tmp,
            PCP_DERIVED_CONFIG="",
            **(extra_env or {}),
        )
        for _attempt in range(3):  # another process may take the port we picked
            port = free_port()
            proc = subprocess.Popen(
                [
                    PMCD,
                    "-f",
                    "-A",
                    "-i",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-s",
                    os.path.join(tmp, "run", "pmcd.socket"),
                    "-c",
                    conf,
                    "-n",
                    pmns_path,
                    "-l",
                    os.path.join(tmp, "pmcd.log"),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp,
                start_new_session=True,
            )
            if _wait_answering(proc, port):
                break
            _stop(proc)
        else:
            log = _read_log(os.path.join(tmp, "pmcd.log"))
            pytest.fail(f"reference pmcd did not start:\n{log}")
        yield RunningPMCD(f"127.0.0.1:{port}", env, tmp)
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
