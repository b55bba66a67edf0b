"""A pmlogger (ours or PCP's) running with a control port of its own, for pmlc's tests.

`running_logger(kind, tmp, host, config)` starts the logger against the pmcd at HOST
with private $PCP_TMP_DIR and $PCP_RUN_DIR under TMP (so its port map files and
sockets are its own) and a control port searched from a free one, and waits until its
port map file is written (and with -P, the primary links).  `pmlc(kind, env, script,
*args)` runs our pmlc or PCP's on a command script, in the logger's environment.
`pmlc_session(kind, env, *args)` runs one on a pipe instead, and `pmlc_in_parts` drives
it for scripts whose later commands depend on what the logger does meanwhile: the script
is written part by part on the one connection, and between parts the test waits on
events (pmlc's answer to all of the part, the records its changes of logging make).
Processes are stopped on exit.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.client_servers import tool_env
from tests.support.reference_pmcd import free_port
from tests.support.waiting import DEADLINE, complete_records, wait_until

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

    def records(self, volume: int = 0) -> int:
        """The whole records data volume VOLUME holds so far."""
        return complete_records(self.archive.with_suffix(f".{volume}"))

    def wait_for_records(self, count: int, volume: int = 0, knock: bool = False) -> None:
        """Until data volume VOLUME holds COUNT whole records (the logger's log told if it
        exits or the deadline passes first); with KNOCK, knocking between looks."""

        def there() -> bool:
            if self.records(volume) >= count:
                return True
            if knock:
                self.knock()
            return False

        wait_until(
            f"{count} records in volume {volume} of {self.archive}",
            there,
            self.proc,
            describe=lambda: f"(it holds {self.records(volume)})\n{_text(self.log)}",
        )

    def knock(self) -> None:
        """Knock on the control port while pmlc holds it: the logger turns the knock
        away (EADDRINUSE), which wakes it and takes it round its loop.  PCP's pmlogger
        needs that: its timers' SIGALRM only sets a flag, and one that comes just
        before it blocks in select() is seen when something next wakes it, which for a
        task pmlc has just started (its first fetch due at once) is pmlc's next command.
        (Not while no pmlc is connected: the knock would then be the client.)"""
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", self.port), timeout=DEADLINE) as conn,
        ):
            while conn.recv(64):  # (the refusal, then the logger's close)
                pass


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
        links = [portfile.parent / "primary", Path(env["PCP_RUN_DIR"]) / "pmlogger.primary.socket"]

        def ready() -> bool:
            """The port map file is whole, and with -P the links to it and to the socket
            (made after it) are there."""
            text = portfile.read_text() if portfile.exists() else ""
            if text.count("\n") < 3:
                return False
            return "-P" not in args or all(link.is_symlink() for link in links)

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


class PmlcSession:
    """pmlc on a pipe: its commands written part by part on the one connection, its
    output (stdout and stderr merged, as QA reads them: both are unbuffered) read as it
    comes."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.output = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._syncs = 0

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # (pmlc has gone: its output says why)
            self.proc.stdin.write(text.encode())

    def sync(self) -> None:
        """Write a statement pmlc answers at once and always alike (a query of a metric no
        namespace has: a warning naming it, then "Logging statement ignored"), and read
        until that answer is whole.  pmlc does one statement at a time and waits for the
        logger's reply to each request it sends, so everything written before has then
        been answered, and the logger has made each change it was asked for."""
        self._syncs += 1
        name = f"end.of.part{self._syncs}"
        self.send(f"query {name}\n")

        def answered() -> bool:
            at = self.output.find(f'"{name}"')
            return at >= 0 and "ignored due to error(s)\n" in self.output[at:]

        self.read_until(f"pmlc's answer to query {name}", answered)

    def read_until(self, what: str, done: Callable[[], bool], within: float = DEADLINE) -> None:
        """Read pmlc's output as it comes until DONE() holds; fail the test, naming WHAT
        and showing the output so far, if pmlc ends first or WITHIN seconds pass."""
        deadline = time.monotonic() + within
        while not done():
            if not self._read(deadline, what):
                status = self.proc.wait()
                pytest.fail(f"pmlc exited ({status}) before {what}\n{self.output}")

    def finish(self, within: float = DEADLINE) -> subprocess.CompletedProcess[str]:
        """Close pmlc's stdin (the script's end), read the rest of its output and wait
        for its exit status."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        deadline = time.monotonic() + within
        while self._read(deadline, "pmlc to end"):
            pass
        status = self.proc.wait(max(deadline - time.monotonic(), 1.0))
        return subprocess.CompletedProcess(self.proc.args, status, self.output)

    def _read(self, deadline: float, what: str) -> bool:
        """Wait for pmlc's next output and take it in; False at its end (EOF)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            pytest.fail(f"gave up waiting for {what}\n{self.output}")
        data = os.read(fd, 65536)
        self.output += self._decoder.decode(data, final=not data)
        return bool(data)


@contextlib.contextmanager
def pmlc_session(kind: str, env: dict[str, str], *args: str) -> Iterator[PmlcSession]:
    """Our pmlc ("ours") or PCP's ("pcp") with ARGS on a pipe, in ENV; killed on exit
    if it is still running."""
    argv = [sys.executable, "-m", "purepcp.tools.pmlc"] if kind == "ours" else ["/usr/bin/pmlc"]
    proc = subprocess.Popen(
        [*argv, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=env, cwd=ROOT, bufsize=0,
    )  # fmt: skip
    try:
        yield PmlcSession(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def pmlc_in_parts(
    kind: str, logger: Logger, parts: Sequence[tuple[str, int]], *args: str
) -> subprocess.CompletedProcess[str]:
    """Our pmlc or PCP's (KIND) with ARGS, on a script in PARTS for LOGGER: each part but
    the last is written, then (on the same connection) `sync`: pmlc has answered all of
    it; then LOGGER's first data volume must gain the part's count of records: those its
    requests make the logger write at once, which the next part's queries depend on
    (what a query says is "in the log" and "available" comes from the fetches); the
    logger is knocked on meanwhile (see Logger.knock).  The
    last part is written (its count is not waited for) and pmlc's stdin closed; its
    output and status are returned."""
    with pmlc_session(kind, logger.env, *args) as session:
        for script, records in parts[:-1]:
            before = logger.records()
            session.send(script)
            session.sync()
            logger.wait_for_records(before + records, knock=True)
        session.send(parts[-1][0])
        return session.finish()
