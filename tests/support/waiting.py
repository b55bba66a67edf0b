"""Waiting for another process in tests: on a real condition, within a deadline, saying why.

`Notifications` stands in for systemd's notify socket: our pmcd says READY=1 on it once
it listens, RELOADING=1 and READY=1 around a SIGHUP reload, and our pmlogger -N says
READY=1 once its archive has begun.  A wait on it sleeps in select() on the socket and
on the process (a pidfd), so it ends the moment the message comes or the process dies.

`wait_until` is for conditions no process announces (a complete record in an archive
being written, a line in a log): it checks the condition until it holds, the process
ends, or the deadline passes, and fails the test naming what it waited for.
"""

from __future__ import annotations

import itertools
import os
import select
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

#: The longest any test waits for another process (or its own server) to reach a state: a
#: hang guard, which only a real hang trips.  It is minutes, not seconds: a wait is on an
#: event or a condition and ends the moment that comes, so a generous bound costs nothing
#: until something hangs, while on a busy machine (the other xdist worker, other work) a
#: start-up can take many times its usual second.
DEADLINE = 300.0

_names = itertools.count()


class Notifications:
    """An abstract datagram socket for $NOTIFY_SOCKET (no path, so no length limit)."""

    def __init__(self) -> None:
        self.name = f"@purepcp-test-{os.getpid()}-{next(_names)}-{os.urandom(4).hex()}"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + self.name[1:])

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """BASE with NOTIFY_SOCKET naming this socket."""
        return dict(base, NOTIFY_SOCKET=self.name)

    def wait(
        self,
        proc: subprocess.Popen,
        key: str,
        what: str,
        within: float = DEADLINE,
        describe: Callable[[], str] = lambda: "",
    ) -> dict[str, str]:
        """The next message of PROC's that sets KEY=1 (earlier ones are passed over);
        RuntimeError naming WHAT, with DESCRIBE()'s text, if PROC ends first or WITHIN
        seconds pass."""
        deadline = time.monotonic() + within
        try:
            pidfd = os.pidfd_open(proc.pid)
        except ProcessLookupError:
            pidfd = None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{what}: no {key}=1 within {within:g} s\n{describe()}")
                watched = [self.sock] if pidfd is None else [self.sock, pidfd]
                readable, _, _ = select.select(watched, [], [], left)
                if self.sock in readable:
                    message = self._receive()
                    if message.get(key) == "1":
                        return message
                elif readable or pidfd is None:
                    status = proc.wait()
                    raise RuntimeError(f"{what}: exited ({status}) before {key}=1\n{describe()}")
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def drain(self) -> None:
        """Pass over the messages already queued (a reload someone else caused, an earlier
        process's), so that the next wait sees only what follows."""
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(4096)
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)

    def _receive(self) -> dict[str, str]:
        data = self.sock.recv(4096).decode(errors="replace")
        return dict(line.split("=", 1) for line in data.splitlines() if "=" in line)

    def close(self) -> None:
        self.sock.close()


def wait_until(
    what: str,
    condition: Callable[[], bool],
    proc: subprocess.Popen | None = None,
    within: float = DEADLINE,
    describe: Callable[[], str] = lambda: "",
) -> None:
    """Check CONDITION until it holds; fail the test, naming WHAT (and DESCRIBE()'s
    text), if PROC ends first or WITHIN seconds pass."""
    deadline = time.monotonic() + within
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"exited ({proc.returncode}) while waiting for {what}\n{describe()}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {within:g} s waiting for {what}\n{describe()}")
        time.sleep(0.05)


def complete_records(volume: Path) -> int:
    """How many whole records a data volume being written holds past its label: each
    record is framed by its length at both ends, so a record is whole once the file
    holds the trailing copy of its length (0 while the volume does not exist)."""
    try:
        data = volume.read_bytes()
    except FileNotFoundError:
        return 0
    if len(data) < 8:
        return 0
    offset = int.from_bytes(data[:4], "big")  # (the label is a record too)
    count = 0
    while offset + 8 <= len(data):
        length = int.from_bytes(data[offset : offset + 4], "big")
        if length < 8 or offset + length > len(data):
            break
        if data[offset + length - 4 : offset + length] != data[offset : offset + 4]:
            break
        offset += length
        count += 1
    return count
