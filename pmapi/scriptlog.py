"""What PCP's housekeeping scripts (pmlogger_check, pmlogger_daily, pmie_check,
pmie_daily) share: their log file (unless -N, everything they say goes to a log file
of their own, the previous one kept as .prev, so that nothing reaches cron's mail),
whether the service they tend is enabled, the commands whose output they show (date,
ls, ps), and the end of the daemons they stop."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from .process import is_running, signal_quietly

__all__ = [
    "ScriptLog",
    "command_output",
    "is_chkconfig_on",
    "kill_survivors",
    "now_text",
    "ps_listing",
    "save_prev",
    "say",
]


class ScriptLog:
    """Unless -N, stdout and stderr into PROGLOG.PID, which becomes PROGLOG at the end if
    anything was written (the previous PROGLOG kept as PROGLOG.prev), as PCP's script
    does; the streams are given back afterwards (pmlogger_daily may run in-process)."""

    def __init__(self, proglog: str):
        self.proglog = proglog
        self.mine = f"{proglog}.{os.getpid()}"
        self.saved: list[int] = []

    def __enter__(self) -> ScriptLog:
        save_prev(self.proglog)
        fd = os.open(self.mine, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        self.streams = (sys.stdout, sys.stderr)
        sys.stdout = open(1, "w", closefd=False, errors="surrogateescape")
        sys.stderr = open(2, "w", closefd=False, errors="surrogateescape")
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = self.streams
        for fd, saved in zip((1, 2), self.saved, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        if os.path.exists(self.mine) and os.path.getsize(self.mine) > 0:
            os.replace(self.mine, self.proglog)
        else:
            with contextlib.suppress(OSError):
                os.unlink(self.mine)


def save_prev(path: str) -> bool:
    """PCP's _save_prev_file: PATH (a regular file) copied to PATH.prev, then removed."""
    if not os.path.lexists(path):
        return True
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with contextlib.suppress(OSError):
        os.unlink(path + ".prev")
    with contextlib.suppress(OSError):
        shutil.copy2(path, path + ".prev")
    with contextlib.suppress(OSError):
        os.unlink(path)
    return True


def is_chkconfig_on(service: str, unit_dir: str | None = None) -> bool:
    """PCP's is_chkconfig_on SERVICE: always for a tree of its own ($PCP_DIR), else
    what systemd says (when UNIT_DIR, PCP's $PCP_SYSTEMDUNIT_DIR, is given: only if it
    holds the service's unit, as PCP asks), else whether the run level 3 start link is
    there."""
    if os.environ.get("PCP_DIR"):
        return True
    unit = os.path.join(unit_dir or "", f"{service}.service")
    if shutil.which("systemctl") and (unit_dir is None or os.path.isfile(unit)):
        done = subprocess.run(
            ["systemctl", "-q", "is-enabled", f"{service}.service"],
            capture_output=True,
            check=False,
        )
        return done.returncode == 0
    return bool(glob.glob(f"/etc/rc3.d/S[0-9]*{service}"))


def say(text: str = "", end: str = "\n") -> None:
    """Print TEXT now (a script's output interleaves with the commands it runs)."""
    sys.stdout.write(text + end)
    sys.stdout.flush()


def command_output(args: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """What ARGS prints on stdout and stderr, without the last newline."""
    done = subprocess.run(
        list(args), capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False
    )
    return (done.stdout + done.stderr).rstrip("\n")


def now_text() -> str:
    """date '+%F %T.%N'."""
    ns = time.time_ns()
    return time.strftime("%F %T", time.localtime(ns // 10**9)) + f".{ns % 10**9:09d}"


def ps_listing(pids: Sequence[int], flags: str = "-ef") -> str:
    """ps FLAGS's heading and its lines for PIDS (the scripts' listing of a daemon's
    processes)."""
    wanted = {str(p) for p in pids}
    lines = command_output(["ps", flags]).splitlines()
    keep = lines[:1] + [ln for ln in lines[1:] if ln.split()[1:2] and ln.split()[1] in wanted]
    return "\n".join(keep)


def kill_survivors(prog: str, daemon: str, pids: Sequence[int], very_verbose: bool) -> int:
    """After SIGTERM to PIDS, as the scripts' -s: SIGKILL to those still there, then up to
    three seconds for them to go; 1 (with PCP's message) if some will not."""
    living = [p for p in pids if is_running(p)]
    if not living:
        return 0
    if very_verbose:
        say()
        say(f"+ pmsignal -KILL {' '.join(map(str, living))} ...", end="")
    for pid in living:
        signal_quietly(pid, signal.SIGKILL)
    deadline = time.monotonic() + 3.0
    while any(is_running(p) for p in living):
        if time.monotonic() > deadline:
            say(f"{prog}: Error: {daemon} process(es) will not die")
            say(command_output(["ps", "-f", "-p", ",".join(map(str, living))]))
            return 1
        time.sleep(0.1)
    return 0
