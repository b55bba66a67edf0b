"""Actions run for real, as pmie runs them against live hosts.

Each action fires when its rule is true, unless its holdoff has not passed
since it last fired.  ``print`` writes the time and its text on standard
output; ``shell`` runs its text with /bin/sh in a session of its own and
waits for it (true when it exits 0); ``syslog`` sends its text to the system
logger with the rule's -p priority and -t tag; ``alarm`` starts
$PCP_XCONFIRM_PROG without waiting (a new alarm is not posted while the last
one is still up).  Replaying an archive, :func:`operators.act_fake` reports
them instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

from .operators import CLOCK
from .values import B_FALSE, B_TRUE, Node

PROG = "pmie"
DEFAULT_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
_alarms: dict[int, subprocess.Popen] = {}  # each alarm node's last dialog, still up


def _due(x: Node) -> bool:
    """Not held off: never fired, no holdoff, or the holdoff has passed."""
    holdoff = x.a2
    return holdoff is None or x.stamps[0] == 0 or CLOCK.now >= holdoff.sample()[0] + x.stamps[0]


def _text(x: Node) -> str:
    assert x.a1 is not None
    x.a1.run()
    return x.a1.text or ""


def _fired(x: Node, ok: bool) -> None:
    x.ring[0][0] = B_TRUE if ok else B_FALSE
    x.stamps[0] = CLOCK.now
    CLOCK.perf.actions += 1


def act_print(x: Node) -> None:
    if not _due(x):
        return
    text = _text(x)
    _fired(x, True)
    CLOCK.write(f"{CLOCK.ctime(CLOCK.now)}: {text}\n")
    sys.stdout.flush()


def config(name: str) -> str:
    """pmGetConfig: NAME from the environment, our layout, else PCP's pcp.conf."""
    if name in os.environ:
        return os.environ[name]
    from purepcp.pmapi.paths import paths, pcp_conf

    ours = paths(missing_ok=True).values
    if name in ours:
        return ours[name]
    return pcp_conf().get(name, "")


def _shell_path() -> str:
    """PATH for the shell: the system's directories, then PCP's."""
    extra = [config(k) for k in ("PCP_BIN_DIR", "PCP_BINADM_DIR", "PCP_PLATFORM_PATHS")]
    return ":".join([DEFAULT_PATH, *(e for e in extra if e)])


def act_shell(x: Node) -> None:
    if not _due(x):
        return
    command = _text(x)
    sys.stdout.flush()
    sys.stderr.flush()
    env = dict(os.environ, PATH=_shell_path(), IFS="\t\n")
    try:
        status = subprocess.run(["/bin/sh", "-c", command], env=env, start_new_session=True,
                                check=False).returncode  # fmt: skip
    except OSError:
        _notify("Error", "fork for shell failed\n")
        x.ring[0][0] = B_FALSE
        return
    _fired(x, status == 0)


def act_syslog(x: Node) -> None:
    if not _due(x):
        return
    import syslog

    options = x.extra
    message = _text(x)
    syslog.openlog(options.tag, syslog.LOG_PID | syslog.LOG_CONS, syslog.LOG_DAEMON)
    syslog.syslog(options.priority, message)
    syslog.closelog()
    _fired(x, True)


def act_alarm(x: Node) -> None:
    last = _alarms.get(id(x))
    if last is not None:
        if last.poll() is None:
            return  # (the last alarm is still posted)
        del _alarms[id(x)]
    if not _due(x):
        return
    prog = config("PCP_XCONFIRM_PROG")
    if not prog:
        _notify("Error", "PCP_XCONFIRM_PROG not found, using echo(1)\n")
        prog = "/bin/echo"
    text = _text(x)
    when = time.ctime(int(CLOCK.now + 0.5)) + "\n"
    argv = [prog, "-header", "Performance Co-Pilot Alarm", "-b", "Cancel", "-icon", "warning",
            "-t", when, "-t", text]  # fmt: skip
    quiet = prog != "/bin/echo"  # (only echo keeps standard output)
    sys.stdout.flush()
    try:
        _alarms[id(x)] = subprocess.Popen(
            argv,
            start_new_session=True,
            stdin=subprocess.DEVNULL if quiet else None,
            stdout=subprocess.DEVNULL if quiet else None,
            stderr=subprocess.DEVNULL if quiet else None,
        )
    except OSError:
        _notify("Error", "fork for alarm failed\n")
        x.ring[0][0] = B_FALSE
        return
    _fired(x, True)


def _notify(level: str, message: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(f"[{time.ctime()[:19]}] {PROG}({os.getpid()}) {level}: {message}")
    sys.stderr.flush()


ACT: dict[str, Callable[[Node], None]] = {
    "print": act_print,
    "shell": act_shell,
    "syslog": act_syslog,
    "alarm": act_alarm,
}
