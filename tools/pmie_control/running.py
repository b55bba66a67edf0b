"""What pmie_check and pmie_daily look at and touch outside the control file: PCP's
directories, the pmies running (by their statistics files and /proc), lock files, the
options, and the run itself (its log file)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from purepcp.pmapi.pmiestats import PMIE_SUBDIR, read_pmie_stats
from purepcp.pmapi.process import is_running
from purepcp.pmapi.scriptlog import say

from .control import Dialect, PmieControl, PmieLine, default_control_path, unsymlink

#: PCP's variables the scripts use.
NAMES = (
    "PCP_SYSCONF_DIR",
    "PCP_VAR_DIR",
    "PCP_LOG_DIR",
    "PCP_RUN_DIR",
    "PCP_TMP_DIR",
    "PCP_BIN_DIR",
    "PCP_BINADM_DIR",
    "PCP_PMIECONTROL_PATH",
    "PCP_SYSTEMDUNIT_DIR",
)
STALE_LOCK = 30 * 60.0  # seconds: a lock file older than this is removed


def pcp_dirs() -> dict[str, str]:
    """PCP's directories: the environment's (PCP's pcp.env), else our layout's; the
    commands, where neither names them, are ours (beside this Python)."""
    from purepcp.pmapi.paths import paths

    layout = dict(paths().values)
    found = {n: os.environ.get(n) or layout.get(n, "") for n in NAMES}
    found["PCP_PMIECONTROL_PATH"] = default_control_path(found)
    for name in ("PCP_BIN_DIR", "PCP_BINADM_DIR"):
        found[name] = found[name] or os.path.dirname(sys.executable)
    return found


def _argv(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [os.path.basename(a.decode(errors="replace")) for a in raw.split(b"\0")[:4]]


def is_pmie(pid: int) -> bool:
    """Whether PID is a live pmie: PCP's (the command pmie) or ours (its script, or
    python -m purepcp.tools.pmie)."""
    words = _argv(pid)
    return bool(words) and ("pmie" in words or "purepcp.tools.pmie" in words) and is_running(pid)


def pmie_pids() -> list[int]:
    """The pmies running, in PID order (PCP's _get_pids_by_name pmie)."""
    pids = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
    return [p for p in pids if p != os.getpid() and is_pmie(p)]


@dataclass(frozen=True)
class Stats:
    """A statistics file of $PCP_TMP_DIR/pmie: its PID, log file and pmcd host."""

    path: str
    pid: int
    logfile: str
    host: str


def stats_dir(dirs: Mapping[str, str]) -> str:
    return os.path.join(dirs["PCP_TMP_DIR"], PMIE_SUBDIR)


def stats_files(dirs: Mapping[str, str], numeric: bool = True) -> list[Stats]:
    """The statistics files in name order (only those named by a number if NUMERIC),
    with the log file each names (its directory's links resolved)."""
    directory = stats_dir(dirs)
    try:
        names = sorted(os.listdir(directory), key=lambda n: n.encode())
    except OSError:
        return []
    found = []
    for name in names:
        if numeric and not name[:1].isdigit():
            continue
        path = os.path.join(directory, name)
        stats = read_pmie_stats(path)
        logfile, host = (stats.logfile, stats.pmcd_host) if stats else ("", "")
        pid = int(name) if name.isdigit() else 0
        found.append(Stats(path, pid, unsymlink(logfile), host))
    return found


def take_lock(path: str) -> OSError | None:
    """Create PATH as pmlock does (exclusively, mode 0); the error when it cannot."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0))
    except OSError as exc:
        return exc
    return None


def lock_is_stale(path: str) -> bool:
    """Whether lock file PATH is older than 30 minutes."""
    try:
        return time.time() - os.stat(path).st_mtime >= STALE_LOCK
    except OSError:
        return False


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def pcp_owner() -> tuple[int, int] | None:
    """The pcp user's uid and gid, when we may give files to it (as root)."""
    if os.geteuid() != 0:
        return None
    import grp
    import pwd

    try:
        return pwd.getpwnam("pcp").pw_uid, grp.getgrnam("pcp").gr_gid
    except KeyError:
        return None


def give_to_pcp(path: str) -> None:
    """chown $PCP_USER:$PCP_GROUP PATH, quietly, as the scripts do."""
    owner = pcp_owner()
    if owner is not None:
        with contextlib.suppress(OSError):
            os.chown(path, *owner)


def mkdir_and_chown(path: str, mode: int = 0o755) -> str | None:
    """PCP's mkdir_and_chown: each missing directory of PATH made, with MODE, for pcp;
    the failure in its words, else None."""
    missing = []
    here = path
    while here and here not in (".", "/") and not os.path.exists(here):
        missing.append(here)
        here = os.path.dirname(here)
    if here and here not in (".", "/") and not os.path.isdir(here):
        return f"mkdir_and_chown: {here}: already exists and is not a directory"
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
            os.chmod(directory, mode)
        except OSError as exc:
            return (
                f"mkdir: cannot create directory '{directory}': {exc.strerror}\n"
                f"mkdir_and_chown: {directory}: mkdir -m {mode:o} failed"
            )
        give_to_pcp(directory)
    return None


def post(dirs: Mapping[str, str], text: str) -> None:
    """A line in $PCP_LOG_DIR/NOTICES, by pmpost (best effort, as the scripts)."""
    pmpost = os.path.join(dirs.get("PCP_BINADM_DIR") or "", "pmpost")
    if os.access(pmpost, os.X_OK):
        subprocess.run([pmpost, text], check=False, capture_output=True)


def pmie_program(dirs: Mapping[str, str]) -> str:
    """$PCP_BIN_DIR/pmie."""
    return os.path.join(dirs["PCP_BIN_DIR"], "pmie")


def usage_text(prog: str, table: Sequence[tuple[str, str | None, str | None, str]]) -> str:
    """pmgetopt's usage message for TABLE's options (letter, long name, argument, help)."""
    lines = [f"Usage: {prog} [options]", "", "Options:"]
    for letter, long, arg, text in table:
        head = f"  -{letter}"
        if arg:
            head += f" {arg}"
        if long:
            head += f", --{long}" + (f"={arg}" if arg else "")
        if len(head) < 24:
            lines.append(f"{head:<24}{text}")
        else:
            lines += [head, f"{'':24}{text}"]
    lines.append(f"{'  -?, --help':<24}show this usage message and exit")
    return "\n".join(lines) + "\n"


def getopt_table(
    argv: Sequence[str], table: Sequence[tuple[str, str | None, str | None, str]]
) -> tuple[list[tuple[str, str]], list[str]] | None:
    """ARGV's (letter, value) pairs and operands by TABLE, long names mapped to letters;
    None for a bad option or -?."""
    import getopt

    shorts = "".join(f"{c}:" if a else c for c, _, a, _ in table) + "?"
    longs = [f"{n}=" if a else n for _, n, a, _ in table if n] + ["help"]
    try:
        pairs, operands = getopt.gnu_getopt(list(argv), shorts, longs)
    except getopt.GetoptError:
        return None
    letters = {f"--{n}": c for c, n, _, _ in table if n} | {"--help": "?"}
    mapped = [(letters.get(f, f)[-1], v) for f, v in pairs]
    if any(f == "?" for f, _ in mapped):
        return None
    return mapped, operands


def run_logged(prog: str, body: Callable[[], int], showme: bool, logfile: str) -> int:
    """BODY's status, everything it says in LOGFILE unless SHOWME (as the scripts do
    once their arguments are checked); an unwritable log is one line, not a traceback."""
    try:
        if showme:
            return body()
        from purepcp.pmapi.scriptlog import ScriptLog

        if not os.path.isdir(os.path.dirname(logfile) or "."):
            mkdir_and_chown(os.path.dirname(logfile))
        with ScriptLog(logfile):
            return body()
    except OSError as exc:
        sys.stderr.write(f"{prog}: {exc.filename or ''}: {exc.strerror}\n")
        return 1
    except KeyboardInterrupt:
        return 130


class Settings(Protocol):
    """What every run reads of its options."""

    @property
    def verbose(self) -> int: ...

    @property
    def showme(self) -> bool: ...


@dataclass
class ScriptRun:
    """One run of a script over the control files: each line handed to `one` in the
    directory the run began in, the reader's messages printed where they come."""

    opts: Settings
    dirs: dict[str, str] = field(default_factory=dict)
    failed: bool = False
    here: str = field(default_factory=os.getcwd)

    @property
    def verbose(self) -> bool:
        return self.opts.verbose >= 1

    @property
    def very_verbose(self) -> bool:
        return self.opts.verbose >= 2

    def vv(self, text: str, end: str = "\n") -> None:
        if self.very_verbose:
            say(text, end)

    def each_line(self, prog: str, dialect: Dialect, control: str) -> bool:
        """Each line of CONTROL (and its .d) to `one`, as PROG reads them; False (with
        PCP's message) when there is no control file."""
        from purepcp.pmapi.controlfile import control_files

        if not os.path.isfile(control):
            say(f"{prog}: Error: cannot find control file ({control})")
            return False
        reader = PmieControl(
            prog,
            self.dirs,
            showme=self.opts.showme,
            dialect=dialect,
            very_verbose=self.very_verbose,
        )
        try:
            for path in control_files(control):
                for item in reader.parse_file(path):
                    if isinstance(item, PmieLine):
                        os.chdir(self.here)
                        self.one(item)
                    else:
                        say(item.text)
                        self.failed |= item.kind == "error"
        finally:
            os.chdir(self.here)
        return True

    def one(self, entry: PmieLine) -> None:
        raise NotImplementedError
