"""pmlogger_check: start (or, with -s, stop) the pmloggers the control file names.

    pmlogger_check [-CNpPqsTV] [-c control] [-l logfile]

As PCP 6's script: for each line of the control file (controlfile.py: $PCP_PMLOGGERCONTROL_PATH
and its .d directory), in the line's directory and under its lock file (DIR/lock), it
looks for the pmlogger already logging there -- the primary one from the
$PCP_TMP_DIR/pmlogger/primary link and $PCP_RUN_DIR/pmlogger.pid, another from the port
files $PCP_TMP_DIR/pmlogger/PID whose third line names an archive in that directory --
and starts one when there is none: the pmlogger of $PCP_BINADM_DIR (else the first on
$PATH) with the line's arguments, -P -N for the primary or -h HOST, ``-m pmlogger_check``
and the archive name %Y%m%d.%H.%M, its log file (-l, else pmlogger.log) kept as .prior.
It then waits until that pmlogger has written its port file (PCP asks pmlc) or exits.
-s stops the loggers instead (SIGTERM, then SIGKILL to those still there).

Unless -N, everything it says goes to $PCP_LOG_DIR/pmlogger/pmlogger_check.log (-l), the
previous one kept as .prev.  -N shows what would be done, -V says more (up to -VVV),
-T says less on failure, -p skips the primary line and -P all others, -q skips the
compression pmlogger_daily -K does when $PCP_LOG_DIR/pmlogger/pmlogger_daily.stamp
exists.  Not as PCP's: -C takes the pmlogger service as enabled (there is no chkconfig
or systemd to ask), and an existing pmlogconf-generated configuration is not refreshed
(one that is missing is created with pmlogconf, as PCP's does).
"""

from __future__ import annotations

import contextlib
import getopt
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.process import signal_quietly
from purepcp.pmapi.scriptlog import command_output, kill_survivors, now_text, ps_listing
from purepcp.pmapi.scriptlog import say as _say

from .controlfile import (
    ControlLine,
    ControlParser,
    Message,
    control_files,
    error,
    warning,
)
from .running import pcp_dirs, port_file_lines, primary_pid, running_pmlogger

PROG = "pmlogger_check"
USAGE = """\
Usage: pmlogger_check [options]

Options:
  -c FILE, --control=FILE
                        configuration of pmlogger instances to manage
  -l FILE, --logfile=FILE
                        send important diagnostic messages to FILE
  -C                    query system service runlevel information
  -N, --showme          perform a dry run, showing what would be done
  -p, --skip-primary    do not start or stop the primary pmlogger instance
  -P, --only-primary    only start or stop the primary pmlogger, no others
  -q, --quick           quick start, no compression
  -s, --stop            stop pmlogger processes instead of starting them
  -T, --terse           produce a terser form of output
  -V, --verbose         increase diagnostic verbosity
  -?, --help            show this usage message and exit
"""
_LONG = {
    "control=": "-c",
    "logfile=": "-l",
    "showme": "-N",
    "skip-primary": "-p",
    "only-primary": "-P",
    "quick": "-q",
    "stop": "-s",
    "terse": "-T",
    "verbose": "-V",
    "help": "-?",
}
ARCHIVE_NAME = "%Y%m%d.%H.%M"
LOCK_WAIT = 20.0  # seconds for a directory's lock file
STALE_LOCK = 30 * 60.0  # a lock file older than this is removed


@dataclass(frozen=True)
class Options:
    control: str | None = None
    logfile: str | None = None
    runlevel: bool = False
    showme: bool = False
    skip_primary: bool = False
    only_primary: bool = False
    quick: bool = False
    stop: bool = False
    terse: bool = False
    verbose: int = 0


def parse(argv: Sequence[str]) -> Options | None:
    """The options of ARGV; None for a usage error, -? or an operand."""
    try:
        pairs, operands = getopt.gnu_getopt(list(argv), "c:l:CNpPqsTV?", list(_LONG))
    except getopt.GetoptError:
        return None
    longs = {f"--{k.rstrip('=')}": v for k, v in _LONG.items()}
    values: dict[str, str] = {}
    verbose = 0
    for flag, value in pairs:
        flag = longs.get(flag, flag)
        verbose += flag == "-V"
        values[flag] = value
    if "-?" in values or operands:
        return None
    return Options(
        control=values.get("-c"),
        logfile=values.get("-l"),
        runlevel="-C" in values,
        showme="-N" in values,
        skip_primary="-p" in values,
        only_primary="-P" in values,
        quick="-q" in values,
        stop="-s" in values,
        terse="-T" in values,
        verbose=verbose,
    )


@dataclass
class Checker:
    """One run over the control files."""

    opts: Options
    dirs: dict[str, str]
    failed: bool = False
    seen_dirs: list[str] = field(default_factory=list)
    stopped: list[int] = field(default_factory=list)
    here: str = field(default_factory=os.getcwd)

    @property
    def port_dir(self) -> str:
        return os.path.join(self.dirs["PCP_TMP_DIR"], "pmlogger")

    def vv(self, text: str, end: str = "\n") -> None:
        if self.opts.verbose >= 2:
            _say(text, end)

    def run(self) -> int:
        self.vv(f"Start: {now_text()}")
        try:
            return self._run()
        finally:
            self.vv(f"End: {now_text()}")

    def _run(self) -> int:
        control = self.opts.control or self.dirs["PCP_PMLOGGERCONTROL_PATH"]
        if self.opts.stop and not os.path.isdir(self.port_dir):
            self.compressnow_text()
            return 0
        if not os.path.isfile(control):
            _say(f"{PROG}: Error: cannot find control file ({control})")
            return 1
        parser = ControlParser(
            PROG, self.dirs, showme=self.opts.showme, very_verbose=self.opts.verbose >= 2
        )
        for path in control_files(control):
            for item in parser.parse_file(path):
                if isinstance(item, Message):
                    _say(item.text)
                    self.failed |= item.kind == "error"
                else:
                    os.chdir(self.here)
                    self.one(item)
        os.chdir(self.here)
        status = self.kill_stopped()
        if os.path.isfile(
            os.path.join(self.dirs["PCP_LOG_DIR"], "pmlogger", "pmlogger_daily.stamp")
        ):
            self.compressnow_text()
        return 1 if self.failed or status else 0

    def compress_now(self) -> None:
        if self.opts.quick:
            self.vv("Skip compression, -q/--quick on command line")
            return
        self.vv("Doing compression ...")
        args = [os.path.join(self.dirs["PCP_BINADM_DIR"], "pmlogger_daily"), "-K"]
        if self.opts.control:
            args += ["-c", self.opts.control]
        if self.opts.logfile:
            args += ["-l", f"{self.opts.logfile}.from.check"]
        args += ["-N"] * self.opts.showme + ["-V"] * self.opts.verbose
        if not os.path.exists(args[0]):
            args[0] = "pmlogger_daily"
        sys.stdout.flush()
        subprocess.run(args, check=False)

    def error(self, entry: ControlLine, text: str) -> None:
        _say(error(PROG, f"{entry.file}:{entry.line}", text, entry.host).text)
        self.failed = True

    def warning(self, entry: ControlLine, text: str) -> None:
        _say(warning(PROG, f"{entry.file}:{entry.line}", text).text)

    def one(self, entry: ControlLine) -> None:
        """Check (start, or stop) the pmlogger of one control line."""
        if self.opts.skip_primary and entry.primary:
            self.vv("Skip, -p/--skip-primary on command line")
            return
        if self.opts.only_primary and not entry.primary:
            self.vv("Skip non-primary, -P/--only-primary on command line")
            return
        directory = entry.directory
        flag = " -P" if entry.primary else ""
        self.vv(f"Checking for: pmlogger{flag} -h {entry.target} ... in {directory} ...")
        if directory in self.seen_dirs:
            self.error(
                entry,
                f'Cannot start more than one pmlogger instance for archive directory "{directory}"',
            )
            return
        self.seen_dirs.append(directory)
        if not self.make_dir(entry):
            return
        try:
            os.chdir(directory)
        except OSError:
            self.error(entry, f"cannot chdir to directory ({directory}) for PCP archive files")
            return
        directory = os.path.realpath(os.getcwd())
        if self.opts.showme:
            _say(f"+ cd {directory}")
        lock = self.lock(entry, directory)
        if lock is False:
            return
        try:
            pid = self.find(entry, directory)
            if pid is None and not self.opts.stop:
                self.start(entry, directory)
            elif pid is not None and self.opts.stop:
                self.stop(pid)
        finally:
            if isinstance(lock, str):
                _remove(lock)

    def make_dir(self, entry: ControlLine) -> bool:
        if os.path.isdir(entry.directory):
            return True
        try:
            os.makedirs(entry.directory, mode=0o755)
        except OSError as exc:
            _say(f"mkdir: cannot create directory '{entry.directory}': {exc.strerror}")
            self.error(entry, f"cannot create directory ({entry.directory}) for PCP archive files")
            return False
        self.warning(entry, f"creating directory ({entry.directory}) for PCP archive files")
        return True

    def lock(self, entry: ControlLine, directory: str) -> str | bool | None:
        """DIRECTORY/lock, made as pmlock makes it; None when the directory is not
        writable (no lock then), False when another holds it for too long."""
        if not os.access(directory, os.W_OK):
            self.warning(entry, f"no write access in {directory}, skip lock file processing")
            _say(command_output(["ls", "-ld", directory]))
            return None
        path = os.path.join(directory, "lock")
        deadline = time.monotonic() + LOCK_WAIT
        while time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0))
            except FileExistsError:
                self._stale(path)
            except OSError as exc:
                _say(f"{PROG}: pmlock: {path}: {exc.strerror}")
                break
            else:
                if self.opts.verbose >= 2:
                    _say("Acquired lock:")
                    _say(command_output(["ls", "-l", path]))
                return path
            time.sleep(0.1)
        if os.path.exists(path):
            _say(f"{PROG}: Warning: is another PCP cron job running concurrently?")
            _say(command_output(["ls", "-l", path], {"LC_TIME": "POSIX"}))
        self.warning(entry, f"failed to acquire exclusive lock ({path}) ...")
        return False

    def _stale(self, path: str) -> None:
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            return
        if age > STALE_LOCK:
            _say(f"{PROG}: Warning: removing lock file older than 30 minutes")
            _say(command_output(["ls", "-l", path], {"LC_TIME": "POSIX"}))
            _remove(path)

    def find(self, entry: ControlLine, directory: str) -> int | None:
        """The PID of the pmlogger already logging for ENTRY, else None."""
        if entry.primary:
            return self._find_primary()
        for path in sorted(glob.glob(os.path.join(glob.escape(self.port_dir), "[0-9]*"))):
            lines = port_file_lines(path)
            host = lines[1] if len(lines) > 1 else ""
            archive = lines[2] if len(lines) > 2 else ""
            self.vv(f"... try {path} host={host} arch={archive}: ", end="")
            match = 2 if archive.rsplit("/", 1)[0] == directory and "/" in archive else 0
            self.vv(f"match={match} ", end="")
            if match != 2:
                self.vv("different directory, skip")
                continue
            pid = int(os.path.basename(path)) if os.path.basename(path).isdigit() else 0
            if running_pmlogger(pid):
                self.vv(f"pmlogger process {pid} identified, OK")
                return pid
            self.vv(f"pmlogger process {pid} not running, skip")
        return None

    def _find_primary(self) -> int | None:
        link = os.path.join(self.port_dir, "primary")
        if not os.path.lexists(link):
            if self.opts.verbose >= 2:
                _say(f"{link}: missing?")
                _say(f"Contents of {self.port_dir}")
                _say(command_output(["ls", "-l", self.port_dir]))
                _say("--- end of ls output ---")
            return None
        if self.opts.verbose >= 2:
            lines = port_file_lines(link)
            host = lines[1] if len(lines) > 1 else ""
            archive = lines[2] if len(lines) > 2 else ""
            _say(f"... try {link}: host={host} arch={archive}")
        pid = primary_pid(self.dirs)
        if pid is None:
            self.vv("primary pmlogger process pid not found")
            return None
        if running_pmlogger(pid):
            self.vv(f"primary pmlogger process {pid} identified, OK")
            return pid
        self.vv(f"primary pmlogger process {pid} not running")
        return None

    def start(self, entry: ControlLine, directory: str) -> None:
        """Start ENTRY's pmlogger in DIRECTORY (the current directory) and wait for it."""
        args = entry.args
        if entry.primary:
            args = f"-P {args}"
            iam = " primary"
            _remove(os.path.join(self.port_dir, "primary"))
            if not self.wait_for_pmcd():
                self.vv("pmcd not running, skip primary pmlogger")
                return
        else:
            args = f"-h {entry.target} {args}"
            iam = ""
        self.configure(entry, args)
        restarting = f'Restarting{iam} pmlogger for host "{entry.target}" ...'
        if self.opts.verbose:
            _say(restarting, end="")
        if entry.socks:
            self.warning(entry, "no pmsocks available, would run without")
        logfile = pmlogger_logfile(args)
        if os.path.isfile(logfile):
            if self.opts.verbose and self.opts.showme:
                _say("")
            if self.opts.showme:
                _say(f"+ mv -f {logfile} {logfile}.prior")
            else:
                os.replace(logfile, f"{logfile}.prior")
        if entry.primary:
            args = f"-N {args}"
        args = f"{args} -m pmlogger_check"
        pmlogger = self.pmlogger()
        if self.opts.showme:
            _say("")
            _say(f"+ {pmlogger} {args} {ARCHIVE_NAME}")
            return
        self.post(f"start pmlogger from {PROG} for host {entry.target}")
        env = {**os.environ, **dict(entry.env)}
        sys.stdout.flush()
        with tempfile.NamedTemporaryFile(prefix=f"{PROG}.", suffix=".out") as out:
            child = subprocess.Popen(
                ["sh", "-c", f"exec {shlex.quote(pmlogger)} {args} {ARCHIVE_NAME}"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
            self.wait_for_logger(child, logfile, restarting, out.name)

    def pmlogger(self) -> str:
        return self.binadm("pmlogger")

    def binadm(self, name: str) -> str:
        """$PCP_BINADM_DIR/NAME, else the first NAME on $PATH."""
        binadm = self.dirs.get("PCP_BINADM_DIR")
        if binadm and os.access(os.path.join(binadm, name), os.X_OK):
            return os.path.join(binadm, name)
        return shutil.which(name) or name

    def configure(self, entry: ControlLine, args: str) -> None:
        """The -c configuration: made with pmlogconf when missing, refreshed with
        pmlogconf -r when pmlogconf made it (PCP's _configure_pmlogger)."""
        config = pmlogger_config(args)
        if not config:
            return
        if not os.path.isfile(config) and os.path.basename(config) == config:
            config = os.path.join(self.dirs["PCP_VAR_DIR"], "config", "pmlogger", config)
        if os.path.isfile(config) and os.path.getsize(config) == 0:
            _remove(config)
        if os.path.isfile(config):
            self.reconfigure(entry, config)
        elif not os.path.exists(config):
            self.generate(entry, config)
        elif self.opts.verbose:
            _say(f'Botched: "{config}" (pmlogconf)')

    def generate(self, entry: ControlLine, config: str) -> None:
        command = [self.binadm("pmlogconf"), "-c", "-q", "-h", entry.target, config]
        if self.opts.showme:
            _say("+ " + " ".join(command))
            return
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            self.warning(entry, f'pmlogconf failed to generate "{config}"')
            _say((done.stdout + done.stderr).rstrip("\n"))
            _say("=== start pmlogconf file ===")
            _say(command_output(["cat", config]))
            _say("=== end pmlogconf file ===")
        elif self.opts.verbose:
            _say(f'Created: "{config}" (pmlogconf)')

    def reconfigure(self, entry: ControlLine, config: str) -> None:
        with open(config, errors="replace") as f:
            lines = f.read().splitlines()
        magic = 0 if lines and re.match(r"#pmlogconf [0-9]", lines[0]) else 1
        owned = 0 if any(ln.startswith("# Auto-generated by pmlogconf") for ln in lines) else 1
        skip = 0
        wanted = dict(entry.env).get("PMLOGGER_CHECK_SKIP_LOGCONF") or os.environ.get(
            "PMLOGGER_CHECK_SKIP_LOGCONF", ""
        )
        if wanted == "yes":
            if self.opts.verbose:
                _say(f'PMLOGGER_CHECK_SKIP_LOGCONF={wanted}: skip: "{config}" reconfigure')
            skip = 1
        if (magic, owned, skip) != (0, 0, 0):
            if self.opts.verbose:
                _say(
                    f"No reconfigure: magic={magic} auto-generated={owned} skip={skip}: "
                    f'"{config}" (pmlogconf)'
                )
            return
        scratch = f"{config}.tmp"
        command = [self.binadm("pmlogconf"), "-r", "-c", "-q", "-h", entry.target, scratch]
        if self.opts.showme:
            _say(f"+ cp {config} {scratch}")
            _say("+ " + " ".join(command))
            return
        try:
            shutil.copyfile(config, scratch)
            self._refresh(entry, config, scratch, command)
        finally:
            _remove(scratch)

    def _refresh(self, entry: ControlLine, config: str, scratch: str, command: list[str]) -> None:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        diag = done.stdout + done.stderr
        if done.returncode != 0:
            self.warning(entry, f'pmlogconf failed to reconfigure "{config}"')
            _say(diag.replace(scratch, config).rstrip("\n"))
            _say("=== start pmlogconf file ===")
            _say(command_output(["cat", scratch]))
            _say("=== end pmlogconf file ===")
        elif "No changes" in diag:
            if self.opts.verbose:
                _say(f'No change: "{config}" (pmlogconf)')
        elif os.access(config, os.W_OK):
            if self.opts.verbose:
                _say(f'Reconfigured: "{config}" (pmlogconf)')
            os.replace(scratch, config)
        else:
            self.warning(
                entry, f'no write access to pmlogconf file "{config}", skip reconfiguration'
            )
            _say(command_output(["ls", "-l", config]))

    def wait_for_pmcd(self, seconds: float = 5.0) -> bool:
        """Whether the local pmcd answers (pmcd.numclients > 0) within SECONDS."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["pmprobe", "pmcd.numclients"], capture_output=True, text=True, check=False
            )
            fields = done.stdout.split()
            if len(fields) > 1 and fields[1].lstrip("-").isdigit() and int(fields[1]) > 0:
                return True
            time.sleep(0.1)
        _say(time.strftime("%a %b %e %H:%M:%S %Z %Y"))
        _say(f"Arrgghhh ... pmcd at localhost failed to start after {int(seconds)} seconds")
        _say("=== failing pmprobes ===")
        _say(command_output(["pmprobe", "pmcd.numclients"]))
        self.failed = True
        return False

    def wait_for_logger(
        self, child: subprocess.Popen, logfile: str, restarting: str, out: str
    ) -> bool:
        """Wait for the new pmlogger's port file (it is then ready for pmlc) or its end."""
        if self.opts.verbose:
            _say(f" [process {child.pid}] ", end="")
        connect = float(os.environ.get("PMCD_CONNECT_TIMEOUT") or 5)
        request = float(os.environ.get("PMCD_REQUEST_TIMEOUT") or 5)
        deadline = time.monotonic() + connect + 20 * request
        port_file = os.path.join(self.port_dir, str(child.pid))
        ticks = 0
        while time.monotonic() < deadline:
            if os.path.exists(logfile) or child.poll() is not None:
                if os.path.exists(port_file) and child.poll() is None:
                    if self.opts.verbose:
                        _say(" done")
                    return True
                if child.poll() is not None:
                    if not self.opts.verbose:
                        _say(restarting, end="")
                    _say(" process exited!")
                    if not self.opts.terse:
                        _say(f"{PROG}: Error: failed to restart pmlogger")
                        _say("Current pmlogger processes:")
                        _say(_pmlogger_processes())
                        _say("")
                    self.check_archive(logfile)
                    self.failed = True
                    return False
            time.sleep(0.1)
            ticks += 1
            if self.opts.verbose and ticks % 10 == 0:
                _say(".", end="")
        if not self.opts.verbose:
            _say(restarting, end="")
        _say(" timed out waiting!")
        if not self.opts.terse:
            with open(out, errors="replace") as f:
                for line in f.read().splitlines():
                    _say(f"\t{line}")
        self.check_archive(logfile)
        self.failed = True
        return False

    def check_archive(self, logfile: str) -> None:
        """What the failed pmlogger's log file says."""
        if not os.path.exists(logfile):
            _say(f'{PROG}: Error: cannot find pmlogger output file at "{logfile}"')
            if not self.opts.terse:
                logdir = os.path.dirname(logfile) or "."
                _say(f"Directory ({os.path.realpath(logdir)}) contents:")
                _say(command_output(["ls", "-la", logdir], {"LC_TIME": "POSIX"}))
        elif os.path.isfile(logfile):
            _say(f'Contents of pmlogger output file "{logfile}" ...')
            with open(logfile, errors="replace") as f:
                sys.stdout.write(f.read())
            sys.stdout.flush()

    def stop(self, pid: int) -> None:
        self.vv(f"+ pmsignal -s TERM {pid}")
        if self.opts.showme:
            _say(f"+ kill -s TERM {pid}")
            return
        signal_quietly(pid, signal.SIGTERM)
        self.stopped.append(pid)

    def kill_stopped(self) -> int:
        """-s: SIGKILL for the stopped pmloggers still there, then wait for them to go."""
        if self.opts.showme or not self.stopped:
            return 0
        return kill_survivors(PROG, "pmlogger", self.stopped, self.opts.verbose >= 2)

    def post(self, text: str) -> None:
        """A line in $PCP_LOG_DIR/NOTICES, as pmpost writes it (best effort)."""
        binadm = self.dirs.get("PCP_BINADM_DIR") or ""
        pmpost = os.path.join(binadm, "pmpost")
        if os.access(pmpost, os.X_OK):
            subprocess.run([pmpost, text], check=False, capture_output=True)


def pmlogger_logfile(args: str) -> str:
    """The log file pmlogger's -l in ARGS names, else pmlogger.log (PCP's _get_logfile)."""
    words = args.split()
    for i, word in enumerate(words):
        if word == "-l":
            return words[i + 1] if i + 1 < len(words) else "pmlogger.log"
        if word.startswith("-l"):
            return word[2:]
    return "pmlogger.log"


def pmlogger_config(args: str) -> str:
    """The configuration file -c in ARGS names, else "" (PCP's _get_configfile)."""
    words = args.split()
    for i, word in enumerate(words):
        if word == "-c":
            return words[i + 1] if i + 1 < len(words) else ""
        if word.startswith("-c"):
            return word[2:]
    return ""


def _pmlogger_processes() -> str:
    """ps -ef's heading and its lines for the pmloggers running (PCP's listing)."""
    from .pidfile import is_pmlogger

    return ps_listing([int(e) for e in os.listdir("/proc") if e.isdigit() and is_pmlogger(int(e))])


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class LogRedirect:
    """Unless -N: stdout and stderr into PROGLOG.PID, which becomes PROGLOG at the end
    when not empty (the previous PROGLOG kept as .prev), as PCP's script does."""

    def __init__(self, proglog: str):
        self.proglog = proglog
        self.mine = f"{proglog}.{os.getpid()}"

    def __enter__(self) -> LogRedirect:
        os.makedirs(os.path.dirname(self.proglog) or ".", exist_ok=True)
        if os.path.exists(self.proglog):
            os.replace(self.proglog, f"{self.proglog}.prev")
        fd = os.open(self.mine, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        if os.path.exists(self.mine) and os.path.getsize(self.mine) > 0:
            os.replace(self.mine, self.proglog)
        else:
            _remove(self.mine)


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogger_check(1) on ARGV (else sys.argv): its exit status."""
    opts = parse(sys.argv[1:] if argv is None else argv)
    if opts is None:
        sys.stderr.write(USAGE)
        return 1
    try:
        dirs = pcp_dirs()
    except ValueError as exc:  # (a bad layout file)
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 1
    os.umask(0o022)
    checker = Checker(opts, dirs)
    try:
        if opts.showme:
            return checker.run()
        proglog = opts.logfile or os.path.join(dirs["PCP_LOG_DIR"], "pmlogger", f"{PROG}.log")
        with LogRedirect(proglog):
            return checker.run()
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
