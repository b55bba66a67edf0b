"""Our pmcd as a real process for tests: ephemeral port, private unix socket, cleaned up.

`our_pmcd(conf_text, tmp)` starts `python -m purepcp.pmcd.main -f` with that pmcd.conf,
waits for it to say READY=1 on a notify socket (sent after its log has PCP's table of
request ports, which gives the port), yields an `OurPMCD` (TCP host spec, unix socket path,
environment for PCP's tools), and stops it with SIGTERM (SIGKILL if it lingers) and
everything it started.  `OurPMCD.reload()` sends SIGHUP and waits for the reload to
end (RELOADING=1, then READY=1).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.waiting import Notifications

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class OurPMCD:
    host: str  # 127.0.0.1:PORT
    unix: str  # the unix socket's path
    tmp: Path
    env: dict[str, str]
    pid: int = 0  # pmcd's process
    proc: subprocess.Popen | None = None
    notifications: Notifications | None = None

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

    def reload(self, send: Callable[[], object] | None = None) -> None:
        """SIGHUP pmcd (or do SEND, which makes it reload) and wait until the reload ends."""
        assert self.proc is not None and self.notifications is not None
        self.notifications.drain()
        (send or (lambda: os.kill(self.pid, signal.SIGHUP)))()
        wait_reloaded(self.proc, self.notifications, self.log)


@contextlib.contextmanager
def our_pmcd(
    conf_text: str,
    tmp: Path,
    *extra: str,
    preexec_fn: Callable[[], object] | None = None,
    run_dir: Path | None = None,
) -> Iterator[OurPMCD]:
    """Run our pmcd with CONF_TEXT as its pmcd.conf in directory TMP (PREEXEC_FN runs in
    the child before pmcd starts: a resource limit, say; RUN_DIR is its PCP_RUN_DIR,
    TMP unless given)."""
    conf = tmp / "pmcd.conf"
    conf.write_text(conf_text)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_RUN_DIR=str(run_dir or tmp))
    env["PCP_PMDAS_DIR"] = str(tmp)
    sock = tmp / "pmcd.socket"
    argv = [sys.executable, "-m", "purepcp.pmcd.main", "-f", "-p", "0", "-i", "127.0.0.1"]
    argv += ["-s", str(sock), "-c", str(conf), "-l", str(tmp / "pmcd.log"), *extra]
    stderr = tmp / "pmcd.stderr"
    notifications = Notifications()
    try:
        proc = start_daemon(argv, env, stderr, preexec_fn, notifications)
        try:
            port = _wait_for_port(proc, stderr, notifications)
            yield OurPMCD(f"127.0.0.1:{port}", str(sock), tmp, env, proc.pid, proc, notifications)
        finally:
            _stop(proc)
    finally:
        notifications.close()


def start_daemon(
    argv: list[str],
    env: dict[str, str],
    stderr: Path,
    preexec_fn: Callable[[], object] | None = None,
    notifications: Notifications | None = None,
) -> subprocess.Popen:
    """Start ARGV in a session of its own (so _stop takes what it starts too), its stderr
    in the file STDERR (agents share pmcd's stderr, and a file never fills up), telling
    NOTIFICATIONS (as $NOTIFY_SOCKET) when it is ready."""
    if notifications is not None:
        notifications.drain()  # (an earlier daemon's messages)
        env = notifications.env(env)
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


def _wait_for_port(
    proc: subprocess.Popen, stderr: Path, notifications: Notifications, log: Path | None = None
) -> int:
    """pmcd's TCP port, once it has said READY=1 (after its agents started and its
    request ports table was written whole into its LOG, so the port read is all there)."""
    logfile = log or stderr.with_name("pmcd.log")  # (as our_pmcd starts it)

    def describe() -> str:
        text = logfile.read_text(errors="replace") if logfile.exists() else ""
        return f"our pmcd did not start: {stderr.read_text(errors='replace')}\n{text}"

    notifications.wait(proc, "READY", "our pmcd", describe=describe)
    port = logged_port(logfile.read_text(errors="replace"))
    if port is None:
        raise RuntimeError("our pmcd said READY=1 without its request ports: " + describe())
    return port


def logged_port(log: str) -> int | None:
    """The TCP port in a pmcd log's request ports table (PCP's, and ours), if any."""
    found = re.search(r"^  ok +\d+ +(\d+) (inet|ipv6) ", log, re.M)
    return int(found.group(1)) if found else None


def wait_reloaded(
    proc: subprocess.Popen, notifications: Notifications, log: Callable[[], str]
) -> None:
    """Wait for pmcd PROC's reload to begin (RELOADING=1) and end (READY=1)."""

    def describe() -> str:
        return "pmcd.log:\n" + log()

    notifications.wait(proc, "RELOADING", "pmcd's reload", describe=describe)
    notifications.wait(proc, "READY", "pmcd's reload", describe=describe)


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
