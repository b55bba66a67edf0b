"""pmlogger_daily: the daily housekeeping of the archives the pmlogger control file names.

    pmlogger_daily [-DEfKMNoprVzZ] [-c control] [-k TIME] [-l logfile] [-x TIME] [-X xz]
    pmlogger_daily --version

-V is --verbose, as in PCP's script (which has no version option): it runs the job and
says what it does (-VV says more, on stderr).  --version prints the version and runs nothing.

Run once a day (pmlogger_daily.timer), and by pmlogger_check as ``pmlogger_daily -K``
once the stamp $PCP_LOG_DIR/pmlogger/pmlogger_daily.stamp exists, it does what PCP
6.0.3's script does, in its order and with its messages:

* unless -N, everything it says goes to $PCP_LOG_DIR/pmlogger/pmlogger_daily.log (with
  -K pmlogger_daily-K.log; -l names another), the previous log kept as .prev;
* a full run (not -K, not -N) writes the stamp: a comment with the date, then the time
  in seconds; -p exits at once when that is less than 23.5 hours old;
* then for each line of the control file (-c, else $PCP_PMLOGGERCONTROL_PATH, then its
  .d directory; controlfile.py reads them; with neither, the line PCP's packaged file
  has, the primary pmlogger's $PCP_ARCHIVE_DIR/HOSTNAME, which is where our
  pmlogger.service logs), in the line's directory and under its lock (DIR/lock, as
  pmlogger_check's):
  1. finds the line's pmlogger (the primary one, or the one whose port file names an
     archive there) and sends it SIGUSR2 so that each day's data starts a new archive,
     unless the archive it writes already began today (-Z always, -z never);
  2. unless -K, removes the archives last modified more than TIME ago (-k, else
     $PCP_CULLAFTER, 14 days);
  3. unless -K or -M, gathers each earlier day's archives (YYYYMMDD.HH.MM[-NN], or
     YYMMDD...; with -o, yesterday's only), rewrites them with pmlogrewrite -iq (not
     with -r) and renames a day's only archive YYYYMMDD with pmlogmv, or merges several
     into it with pmlogger_merge -f (-E passed on); then runs the merge callbacks
     (pmlogger_daily_report for the primary pmlogger unless -D, $PCP_MERGE_CALLBACK);
  4. compresses the data volumes and .meta of the archives last modified more than TIME
     ago (-x, else $PCP_COMPRESSAFTER, 1 day) into NAME.0.xz, NAME.meta.xz, leaving the
     .index as it is (``xz -0 --block-size=10MiB``; compress.py).

TIME is find-filter(1)'s DD[:HH[:MM]], or ``forever`` / ``never``.  An archive's age
is that of its most recently modified file; taken per archive, an archive is never
split (PCP can cull a .meta written days before the last volume).  Compressed files keep
their mtime.  Only PCP's date-named archives are touched (a file name starting
YYYYMMDD. or -, or YYMMDD.), and never the one being written: PCP asks pmlc which volume
the pmlogger writes; we leave alone an archive whose files the pmlogger holds open (from
/proc/PID/fd), the one its port file names, and the newest archive of the directory.

As PCP's, a directory whose pmlogger is not running gets no compression (PCP cannot ask
it which volume it writes), unless -f.  -X names another program, run on the files as PCP
runs it (xz is done here, compress.py); -Y the files not to compress.  Not supported: -m
(mail), -R and .NeedRewrite, -s (NOTICES rotation), -t, and the control file's
callbacks and $PCP_AUTOSAVE_DIR.  As PCP's, $PCP_COMPRESS, $PCP_COMPRESSAFTER and
$PCP_COMPRESSREGEX in the environment override -X, -x and -Y (with a warning), and a
control file's assignments of them override both; without any, the compression age is
our layout's $PCP_COMPRESSAFTER (PCP's is 0 where libpcp reads compressed archives).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from purepcp.pmapi.archive.format import decode_label
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.options import HELP, LONG_VERSION, Opt, Tool
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmapi.scriptlog import ScriptLog, is_chkconfig_on, save_prev

from .compress import PARTIAL, compress_file
from .controlfile import ControlLine

CONTROL = Opt("c", "control", "FILE", "pmlogger control file")
NOREPORT = Opt("D", "noreport", None, "do not run pmlogger_daily_report")
EXPUNGE = Opt("E", "expunge", None, "expunge metrics with metadata inconsistencies when merging")
FORCE = Opt("f", "force", None, "force actions (intended for QA, not production)")
COMPRESSONLY = Opt("K", None, None, "compress, but no other changes")
DISCARD = Opt("k", "discard", "TIME", "remove archives after TIME (format DD[:HH[:MM]])")
LOGFILE = Opt("l", "logfile", "FILE", "send important diagnostic messages to FILE")
NOMERGE = Opt("M", None, None, "do not rewrite, merge or rename archives")
SHOWME = Opt("N", "showme", None, "perform a dry run, showing what would be done")
OLD = Opt("o", None, None, "merge yesterdays logs only (old form, default is all)")
POLL = Opt("p", None, None, "poll and exit if processing already done for today")
NOREWRITE = Opt("r", "norewrite", None, "do not process archives with pmlogrewrite(1)")
VERBOSE = Opt("V", "verbose", None, "verbose output (as in PCP; the version is --version)")
AFTER = Opt("x", "compress-after", "TIME", "compress archive data files after TIME")
REGEX = Opt("Y", "regex", "REGEX", "grep -E filter when compressing files")
COMPRESSOR = Opt("X", "compressor", "PROGRAM", "use PROGRAM for archive data file compression")
FORCE_USR2 = Opt("Z", None, None, "send the primary pmlogger SIGUSR2 even if not needed")
SKIP_USR2 = Opt("z", None, None, "do not send the primary pmlogger SIGUSR2")

TOOL = Tool(
    "pmlogger_daily",
    "[options]",
    [
        (
            "Options",
            [
                CONTROL, NOREPORT, EXPUNGE, FORCE, DISCARD, COMPRESSONLY, LOGFILE, NOMERGE,
                SHOWME, OLD, POLL, NOREWRITE, VERBOSE, AFTER, COMPRESSOR, REGEX,
            ],
        ),
        ("QA options", [FORCE_USR2, SKIP_USR2]),
        ("General options", [LONG_VERSION, HELP]),
    ],
)  # fmt: skip

#: An archive's file: BASE.index, BASE.meta or BASE.N, perhaps compressed.
_FILE = re.compile(
    r"(?P<base>.+)\.(?P<part>index|meta|\d+)(?P<ext>\.(?:xz|lzma|bz2|bz|gz|Z|z|zst))?"
)
#: PCP's _filter_filename: the names pmlogger_check and pmlogger_daily manage.
_DATED = re.compile(r"[12]\d\d\d[01]\d[0-3]\d[-.]|\d\d[01]\d[0-3]\d[-.]")
_TIME = re.compile(r"(\d+)(?::(\d*)(?::(\d*))?)?")
#: The archives pmlogger_daily merges: pmlogger's YYYYMMDD.HH.MM[-NN] (or YYMMDD...).
_MERGEABLE = re.compile(r"\d+\.[0-2]\d\.[0-5]\d(?:-\d\d)?")
_COMMAND = "xz -0 --block-size=10MiB"  # (what PCP runs; -N shows it)
#: the files never compressed (-Y, $PCP_COMPRESSREGEX): PCP's default
_REGEX = r"\.(index|Z|gz|bz2|zip|xz|lzma|lzo|lz4)$"


def parse_period(text: str, what: str) -> float | None:
    """find-filter's DD[:HH[:MM]] in seconds; None for forever/never (ValueError if neither)."""
    if text in ("forever", "never"):
        return None
    m = _TIME.fullmatch(text.strip())
    hours = int(m.group(2) or 0) if m else 0
    minutes = int(m.group(3) or 0) if m else 0
    if m is None or hours > 23 or minutes > 59:
        raise ValueError(f'{what} value ({text}) must be number, time, "forever" or "never"')
    return ((int(m.group(1)) * 24 + hours) * 60 + minutes) * 60.0


@dataclass
class ArchiveFiles:
    """One archive in a directory: its files' names and the newest modification time."""

    base: str
    files: list[str] = field(default_factory=list)
    mtime_ns: int = 0


@dataclass
class Primary:
    """The running primary pmlogger: its PID and the files it has open (None: cannot tell)."""

    pid: int
    open_files: set[str] | None


class Daily:
    """One run: the settings, what it says (or, with -N, would do), and its exit status."""

    def __init__(self, cull: float | None, after: float | None, showme: bool, verbose: bool):
        self.cull, self.after = cull, after
        self.showme, self.verbose = showme, verbose
        self.very_verbose = False
        self.now = time.time()
        self.status = 0
        self.merging = True  # (-M: no merging)
        self.rewriting = True  # (-r: no pmlogrewrite before merging)
        self.old_only = False  # (-o: only yesterday's archives are merged)
        self.expunge = False  # (-E: pmlogger_merge -E)
        self.compress_only = False  # (-K)
        self.reexec = ""  # (-Z: "force", -z: "skip")
        self.after_text = ""  # COMPRESSAFTER as given, for PCP's message
        self.myargs = ""  # -N and -V, passed on to pmlogmv and pmlogger_merge
        self.callbacks: list[str] = []  # merge callbacks, shell commands
        self.dirs: dict[str, str] = {}
        self.where = ""  # the control line being worked on (FILE:LINE)
        self.host = ""
        self.force = False  # (-f: compress without knowing the pmlogger's volume)
        self.compressor = _COMMAND  # ($PCP_COMPRESS, else -X, else xz)
        self.regex = _REGEX  # ($PCP_COMPRESSREGEX, else -Y)
        self.cmdline: dict[str, str] = {}  # (-X, -x, -Y: what a control file may reset)
        self.settings: dict[str, str] = {}  # ($PCP_COMPRESS... as set now)
        self.defaults: dict[str, str] = {}
        self.enabled = False  # (is the pmlogger service on? see _pmlogger_enabled)

    def control_settings(self, env: dict[str, str]) -> None:
        """A control file's $PCP_COMPRESS, $PCP_COMPRESSAFTER, $PCP_COMPRESSREGEX: they
        replace the environment's and the options' values, with PCP's warnings."""
        for name, flag in _CONTROLLED.items():
            value = env.get(name)
            if value is None or value == self.settings.get(name):
                continue
            if name == "PCP_COMPRESSAFTER" and value:
                try:
                    parse_period(value, "")
                except ValueError:
                    self.line_error(
                        f'${name} value ({value}) must be number, time, "forever" or "never"'
                    )
                    self.settings[name] = value  # (reported once)
                    continue
            old, self.settings[name] = self.settings.get(name, ""), value
            if old:
                self.line_warning(
                    f"${name} ({value}) reset from control file, previous value ({old}) ignored"
                )
            given = self.cmdline.get(name, "")
            if value and given and value != given:
                self.line_warning(
                    f"${name} ({value}) reset from control file, {flag} value ({given}) ignored"
                )
                self.cmdline[name] = ""
        pick = {n: self.settings.get(n) or self.cmdline.get(n) or "" for n in _CONTROLLED}
        self.compressor = pick["PCP_COMPRESS"] or _COMMAND
        self.regex = pick["PCP_COMPRESSREGEX"] or _REGEX
        self.after_text = pick["PCP_COMPRESSAFTER"] or self.defaults["PCP_COMPRESSAFTER"]
        with contextlib.suppress(ValueError):
            self.after = parse_period(self.after_text, "")

    def info(self, text: str) -> None:
        """-V's commentary (on stdout, as PCP's script writes it)."""
        if self.verbose:
            print(text, flush=True)

    def say(self, text: str) -> None:
        print(text, flush=True)

    def vv(self, text: str) -> None:
        """-VV's commentary, on stderr as PCP's."""
        if self.very_verbose:
            sys.stdout.flush()
            print(text, file=sys.stderr, flush=True)

    def warn(self, text: str) -> None:
        sys.stdout.flush()
        print(f"pmlogger_daily: Warning: {text}", file=sys.stderr, flush=True)

    def error(self, text: str) -> None:
        sys.stdout.flush()
        print(f"pmlogger_daily: {text}", file=sys.stderr, flush=True)
        self.status = 1

    def line_warning(self, text: str) -> None:
        """PCP's _warning: the control line, then the warning."""
        self.say(f"pmlogger_daily: [{self.where}]\nWarning: {text}")

    def line_error(self, text: str) -> None:
        """PCP's _error: the control line, the error, and that logging is unchanged."""
        self.say(f"pmlogger_daily: [{self.where}]\nError: {text}")
        self.say(f'... logging for host "{self.host}" unchanged')
        self.status = 1

    def skipping(self, text: str) -> None:
        self.say(f"pmlogger_daily: Warning: {text}")
        self.say(f'[{self.where}] ... skip log merging and compressing for host "{self.host}"')

    # -- one control line ---------------------------------------------------------------

    def one(self, entry: ControlLine, where: str) -> None:
        """Rotate, cull, merge and compress in ENTRY's directory, under its lock."""
        self.where, self.host = where, entry.target
        if self.verbose:
            what = "compressing" if self.compress_only else "daily maintenance of"
            self.say(f"\n=== {what} PCP archives for host {self.host} ===\n")
        self.vv(f"Check pmlogger{' -P' if entry.primary else ''} -h {self.host} ... in "
                f"{entry.directory} ...")  # fmt: skip
        if not os.path.isdir(entry.directory):
            try:
                os.makedirs(entry.directory, mode=0o755)
            except OSError as exc:
                self.say(f"mkdir: cannot create directory '{entry.directory}': {exc.strerror}")
                self.line_error(
                    f"cannot create directory ({entry.directory}) for PCP archive files"
                )
                return
            self.line_warning(f"creating directory ({entry.directory}) for PCP archive files")
        directory = Path(os.path.realpath(entry.directory))
        if self.showme:
            self.say(f"+ cd {directory}")
            self.say("+ get mutex lock")
            lock = None
        else:
            lock = self.lock(directory)
            if lock is False:
                return
        try:
            pid = self.find(entry, str(directory))
            primary = None if pid is None else Primary(pid, _open_files(pid))
            if pid is None:
                complaint = f'no pmlogger instance running for host "{self.host}"'
                if self.enabled:  # (the service is on: a pmlogger should be there)
                    self.line_error(complaint)
                else:
                    self.line_warning(complaint)
                self.line_warning(
                    "skipping log rotation because we don't know which pmlogger to signal"
                )
            elif not self.compress_only:
                self.rotate(primary, self.reexec)
            self.tidy(directory, primary, self.compress_only, entry.primary)
        finally:
            if isinstance(lock, str):
                with contextlib.suppress(OSError):
                    os.unlink(lock)

    def lock(self, directory: Path) -> str | bool | None:
        """DIRECTORY/lock as pmlock makes it (pmlogger_check uses the same one); None
        when the directory is not writable, False when another holds it too long."""
        if not os.access(directory, os.W_OK):
            self.line_warning(f"no write access in {directory} skip lock file processing")
            return None
        path = str(directory / "lock")
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0))
                return path
            except FileExistsError:
                with contextlib.suppress(OSError):
                    if time.time() - os.stat(path).st_mtime > 1800:
                        self.line_warning("removing lock file older than 30 minutes")
                        os.unlink(path)
            except OSError as exc:
                self.say(f"pmlogger_daily: pmlock: {path}: {exc.strerror}")
                break
            time.sleep(0.1)
        if os.path.exists(path):
            self.line_warning("is another PCP cron job running concurrently?")
        self.line_error(f"failed to acquire exclusive lock ({path}) ...")
        return False

    def find(self, entry: ControlLine, directory: str) -> int | None:
        """The PID of the pmlogger logging for ENTRY: the primary one, or the one whose
        port file ($PCP_TMP_DIR/pmlogger/PID) names an archive in DIRECTORY."""
        from .running import port_file_lines, primary_pid, running_pmlogger

        if entry.primary:
            pid = primary_pid(self.dirs)
            if pid is not None and running_pmlogger(pid):
                self.vv(f"primary pmlogger process {pid} identified, OK")
                return pid
            self.vv("primary pmlogger process PID not found")
            return None
        port_dir = os.path.join(self.dirs.get("PCP_TMP_DIR", ""), "pmlogger")
        for path in sorted(glob.glob(os.path.join(glob.escape(port_dir), "[0-9]*"))):
            lines = port_file_lines(path)
            archive = lines[2] if len(lines) > 2 else ""
            name = os.path.basename(path)
            mine = archive.rsplit("/", 1)[0] == directory and name.isdigit()
            if mine and running_pmlogger(int(name)):
                self.vv(f"non-primary pmlogger process(es) {name} identified, OK")
                return int(name)
        self.vv("No non-primary pmlogger process(es) found")
        return None

    def port_archive(self, pid: int) -> str | None:
        """The archive base name pmlogger PID's port file names, if it has one."""
        from .running import port_file_lines

        lines = port_file_lines(
            os.path.join(self.dirs.get("PCP_TMP_DIR", ""), "pmlogger", str(pid))
        )
        return lines[2].rsplit("/", 1)[-1] if len(lines) > 2 and lines[2] else None

    # -- the pmlogger -------------------------------------------------------------------

    def rotate(self, primary: Primary, mode: str) -> None:
        """SIGUSR2 to the pmlogger: its archive ends, a new one begins."""
        if mode == "skip":
            return
        if mode != "force":
            current = self.port_archive(primary.pid)
            today = time.strftime("%Y%m%d", time.localtime(self.now))
            if current is not None:
                began = current.startswith(today)
            else:  # (no port file: the label of the archive it has open)
                opened = _current_archive(primary)
                began = opened is not None and _began_today(opened, self.now)
            if began:
                self.info(f"Skip sending SIGUSR2 to {primary.pid} (reexec already done)")
                return
        if self.showme:
            self.say(f"+ pmsignal -s USR2 {primary.pid}")
            return
        self.info(f"Sending SIGUSR2 to reexec {primary.pid}")
        try:
            os.kill(primary.pid, signal.SIGUSR2)
        except OSError as exc:
            self.error(f"cannot signal pmlogger {primary.pid}: {exc.strerror}")

    # -- one directory ------------------------------------------------------------------

    def tidy(
        self, directory: Path, primary: Primary | None, compress_only: bool, is_primary: bool
    ) -> None:
        """Cull, merge, then compress, the archives of DIRECTORY."""
        try:
            archives, partials = _scan(directory)
        except OSError as exc:
            self.error(f"{directory}: cannot read: {exc.strerror}")
            return
        keep = self._in_use(directory, archives, primary)
        culled = [] if compress_only else self._old(archives, keep, self.cull)
        survivors = {b: a for b, a in archives.items() if b not in {c.base for c in culled}}
        squeeze = self._old(survivors, keep, self.after)
        todo = partials + [f for a in culled for f in a.files]
        todo += [f for a in squeeze for f in _compressible(a, self.regex)]
        if todo and not self.showme and not os.access(directory, os.W_OK):
            self.error(f"{directory}: directory is not writable, its archives left as they are")
            return
        self._remove(directory, partials, "Interrupted compressions being removed ...")
        if culled:
            names = [f for a in culled for f in a.files]
            self._remove(
                directory,
                names,
                f"Archive files older than {_describe(self.cull)} being removed ...",
            )
        busy = self._busy(directory, survivors, primary)  # (not merged: as PCP, not today's)
        if not compress_only and self.merge(directory, survivors, busy, is_primary):
            archives, _ = _scan(directory)
            squeeze = self._old(archives, keep, self.after)
        if self.after is None:
            return
        program = self.compressor.split(" ", 1)[0]
        if program != "xz" and not shutil.which(program):
            self.line_error(f"{program}: compression program not found")
            return
        if primary is None and not self.force:  # (PCP asks pmlc, unless -f)
            self.line_warning("current volume of current pmlogger not known, compression skipped")
            return
        self._compress(directory, squeeze)

    def merge(
        self, directory: Path, archives: dict[str, ArchiveFiles], keep: set[str], primary: bool
    ) -> bool:
        """Each earlier day's archives into one named for the day, YYYYMMDD: pmlogmv for
        one, pmlogger_merge for more; True if anything was done."""
        today = time.strftime("%Y%m%d", time.localtime(self.now))
        days: dict[str, list[str]] = {}
        for base in sorted(archives, key=_merge_order):
            if _MERGEABLE.fullmatch(base) and not base.startswith(today + "."):
                days.setdefault(base.split(".", 1)[0], []).append(base)
        if self.old_only:  # (the day of about midday yesterday, as PCP's -o)
            hours = 12 + time.localtime(self.now).tm_hour
            yesterday = time.strftime("%y%m%d", time.localtime(self.now - hours * 3600))
            days = {d: i for d, i in days.items() if d.endswith(yesterday)}
        if not self.merging:
            return False
        if not days:
            if not self.showme:
                self.info("Warning: no archives found to merge")
            return False
        done = False
        for day, inputs in days.items():
            if any((directory / f"{day}{s}").exists() for s in (".0", ".index", ".meta")):
                self.skipping(f"output archive ({day}) already exists")
                continue
            if keep & set(inputs):
                continue  # (being written: see _busy)
            if self.rewriting and not self._rewrite(directory, inputs):
                continue
            if len(inputs) == 1:
                command, what = ["pmlogmv", *self.myargs.split(), *inputs, day], "pmlogmv"
            else:
                command = ["pmlogger_merge", *self.myargs.split()]
                command += ["-E"] * self.expunge + ["-f", *inputs, day]
                what = "pmlogger_merge"
            if self.showme:
                shown = (
                    " ".join(command)
                    if len(inputs) == 1
                    else (
                        f"pmlogger_merge{self.myargs} {'-E' if self.expunge else ''} -f "
                        + " ".join([*inputs, day])
                    )
                )
                self.say(f"+ {shown}")
            elif not self._execute(command, directory):
                self.line_error(f'problems executing {what} for host "{self.host}"')
                continue
            done = True
            self.callback(directory, day, primary)
        return done

    def _rewrite(self, directory: Path, inputs: list[str]) -> bool:
        """pmlogrewrite -iq with the rules of DIRECTORY/pmlogrewrite, else PCP's."""
        local = directory / "pmlogrewrite"
        rules = f"-c {local}" if os.path.lexists(local) else "-c $PCP_VAR_DIR/config/pmlogrewrite"
        self.vv(f"Rewriting input archives using {rules}")
        for base in inputs:
            if self.showme:
                self.say(f"+ pmlogrewrite -iq {rules} {base}")
                continue
            path = (
                str(local)
                if os.path.lexists(local)
                else os.path.join(self.dirs.get("PCP_VAR_DIR", ""), "config", "pmlogrewrite")
            )
            if not self._execute(["pmlogrewrite", "-iq", "-c", path, base], directory):
                self.skipping(f"rewrite for {base} failed using {rules} failed")
                return False
        return True

    def _execute(self, command: list[str], directory: Path) -> bool:
        """Run one of PCP's commands (ours, next to this Python, when not on $PATH)."""
        program = shutil.which(command[0]) or os.path.join(
            os.path.dirname(sys.executable), command[0]
        )
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            return subprocess.run([program, *command[1:]], cwd=directory).returncode == 0
        except OSError:
            return False

    def callback(self, directory: Path, day: str, primary: bool) -> None:
        """The merge callbacks, each given the new archive's path."""
        if not self.callbacks:
            return
        self.info("Merge callbacks ...")
        target = f"{directory}/{day}"
        report = os.path.join(self.dirs.get("PCP_BINADM_DIR", ""), "pmlogger_daily_report")
        for command in self.callbacks:
            if command.startswith(report + " ") and not primary:
                continue  # (the daily report is the primary pmlogger's alone)
            if self.showme:
                self.say(f"+ {command} {target}")
                continue
            self.info(f"callback: {command} {target}")
            sys.stdout.flush()
            status = subprocess.run(f"eval {command} {target}", shell=True).returncode
            if status:
                self.line_warning(f"{command} {target} returned status {status}")

    def _in_use(
        self, directory: Path, archives: dict[str, ArchiveFiles], primary: Primary | None
    ) -> set[str]:
        """The archives never to cull or compress: the newest, and the pmlogger's own."""
        keep = self._busy(directory, archives, primary)
        if archives and not self.force:  # (-f: as PCP's, the pmlogger's own only)
            newest = max(archives.values(), key=lambda a: (a.mtime_ns, a.base))
            keep.add(newest.base)
        for base in sorted(keep):
            self.vv(f"[{self.where}] skip cull for current {base} archive")
        return keep

    def _busy(
        self, directory: Path, archives: dict[str, ArchiveFiles], primary: Primary | None
    ) -> set[str]:
        """The archives the pmlogger writes: its port file's, and those it has open."""
        keep = set()
        if primary is not None:
            current = self.port_archive(primary.pid)
            if current in archives:
                keep.add(current)
        if primary is not None and primary.open_files:
            for archive in archives.values():
                paths_ = {os.path.realpath(directory / f) for f in archive.files}
                if paths_ & primary.open_files:
                    keep.add(archive.base)
        return keep

    def _old(
        self, archives: dict[str, ArchiveFiles], keep: set[str], period: float | None
    ) -> list[ArchiveFiles]:
        """The archives not in KEEP last modified more than PERIOD seconds ago."""
        if period is None:
            return []
        limit_ns = (self.now - period) * 1e9
        return [a for b, a in sorted(archives.items()) if b not in keep and a.mtime_ns < limit_ns]

    def _remove(self, directory: Path, names: list[str], heading: str) -> None:
        if not names:
            return
        if heading:
            self.info(heading)
            self.info(_fmt(names))
        if self.showme:
            self.say("+ rm -f " + " ".join(names))
            return
        for name in names:
            try:
                os.unlink(directory / name)
            except FileNotFoundError:
                pass
            except OSError as exc:
                self.error(f"cannot remove {directory / name}: {exc.strerror}")

    def _compress(self, directory: Path, archives: list[ArchiveFiles]) -> None:
        names = sorted(f for a in archives for f in _compressible(a, self.regex))
        if not names:
            self.vv("Warning: no archive files found to compress")
            return
        if self.after == 0:
            self.info("Archive files being compressed ...")
        else:
            self.info(f"Archive files older than {self.after_text} days being compressed ...")
        self.info(_fmt(names))
        program = self.compressor.split(" ", 1)[0]
        if self.showme:
            self.say(f"+ {self.compressor} " + " ".join(names))
            return
        if program != "xz":  # (xz is ours, compress.py; another is run, as PCP's xargs)
            if not self._execute([*shlex.split(self.compressor), *names], directory):
                self.error(f"{directory}: {self.compressor} failed")
            return
        for archive in archives:
            for name in _compressible(archive, self.regex):
                try:
                    compress_file(str(directory / name))
                except OSError as exc:
                    why = exc.strerror or str(exc)
                    self.error(f"cannot compress {directory / name}: {why}")
                    break  # (the rest of this archive stays as it is)


def _fmt(words: list[str]) -> str:
    """PCP's _fmt then an indent: the words filled into lines of at most 75 columns."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= 75:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join("    " + line for line in lines)


def _describe(period: float | None) -> str:
    """A period as pmlogger_daily's messages say it ("14 days", "1 day and 2 hours")."""
    if not period:
        return "0 days"
    days, rest = divmod(int(period // 60), 24 * 60)
    parts = [
        f"{n} {unit}{'' if n == 1 else 's'}"
        for n, unit in zip((days, *divmod(rest, 60)), ("day", "hour", "minute"), strict=True)
        if n
    ]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _scan(directory: Path) -> tuple[dict[str, ArchiveFiles], list[str]]:
    """DIRECTORY's date-named archives by base name, and its leftover .partial files."""
    archives: dict[str, ArchiveFiles] = {}
    partials = []
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if not _DATED.match(name) or not entry.is_file(follow_symlinks=False):
                continue
            if name.endswith(PARTIAL) and _FILE.fullmatch(name.removesuffix(PARTIAL)):
                partials.append(name)  # (never the only copy: see compress.py)
                continue
            m = _FILE.fullmatch(name)
            if m is None:
                continue
            archive = archives.setdefault(m.group("base"), ArchiveFiles(m.group("base")))
            archive.files.append(name)
            archive.mtime_ns = max(archive.mtime_ns, entry.stat(follow_symlinks=False).st_mtime_ns)
    for archive in archives.values():
        archive.files.sort()
    return archives, sorted(partials)


def _merge_order(base: str) -> tuple[float, str]:
    """sort -n's order of archive names: the number they start with, then the name."""
    m = re.match(r"\d+(?:\.\d*)?", base)
    return (float(m.group(0)) if m else 0.0, base)


def _compressible(archive: ArchiveFiles, regex: str = _REGEX) -> list[str]:
    """The files of ARCHIVE pmlogger_daily compresses: those not yet compressed that REGEX
    (grep -E's, PCP's -Y) does not match; by default the volumes and .meta."""
    try:
        skip = re.compile(regex)
    except re.error:
        skip = re.compile(_REGEX)
    out = []
    for name in archive.files:
        m = _FILE.fullmatch(name)
        if m is not None and m.group("ext") is None and not skip.search(name):
            out.append(name)
    return out


def _open_files(pid: int) -> set[str] | None:
    """The files process PID has open (real paths), from /proc; None if we may not look."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        names = os.listdir(fds)
    except OSError:
        return None
    found = set()
    for fd in names:
        with contextlib.suppress(OSError):
            target = os.readlink(fds / fd)
            if target.startswith("/"):
                found.add(os.path.realpath(target))
    return found


def _current_archive(primary: Primary) -> str | None:
    """The base name of the archive the primary pmlogger has open, if we can tell."""
    for path in sorted(primary.open_files or ()):
        m = _FILE.fullmatch(path)
        if m is not None and m.group("ext") is None:
            return m.group("base")
    return None


def _began_today(base: str, now: float) -> bool:
    """True if archive BASE's label says it began on NOW's (local) date."""
    for part in (".index", ".meta", ".0"):
        try:
            with open(base + part, "rb") as f:
                label = decode_label(f.read(1024), base + part)
        except (OSError, PMError):
            continue
        return time.localtime(label.start.sec)[:3] == time.localtime(now)[:3]
    return False


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    if parsed.operands:
        TOOL.fail(f"unexpected argument: {parsed.operands[0]}", usage=True)
    if "Z" in parsed and "z" in parsed:
        TOOL.fail("-Z and -z are mutually exclusive")
    if "K" in parsed and "p" in parsed:
        TOOL.fail("Error: -K and -p are mutually exclusive")
    try:
        layout = paths()
    except LayoutError as exc:
        TOOL.fail(str(exc))
    env_after = os.environ.get("PCP_COMPRESSAFTER", "")
    try:
        if env_after:  # (checked first, as PCP's script does)
            parse_period(env_after, "$PCP_COMPRESSAFTER")
        if "discard" in parsed:
            cull = parse_period(str(parsed.get("discard")), "-k")
        else:
            cull = parse_period(layout["PCP_CULLAFTER"], "$PCP_CULLAFTER")
        chosen = {}  # (-X, -x, -Y in command-line order, for the order of the warnings)
        for opt, _ in parsed.pairs:
            if opt in _OPTION_VARIABLES and opt.long not in chosen:
                chosen[opt.long] = _given(parsed, opt, _OPTION_VARIABLES[opt])
                if opt is AFTER and chosen[opt.long]:
                    parse_period(chosen[opt.long], "-x")
        given = chosen.get("compress-after", "")
        after_text = env_after or given or layout["PCP_COMPRESSAFTER"]
        after = parse_period(after_text, "$PCP_COMPRESSAFTER")
    except ValueError as exc:
        print(f"Error: {exc}", flush=True)  # (PCP's: on stdout, before the log)
        return 1
    compressor, regex = chosen.get("compressor", ""), chosen.get("regex", "")
    from .running import pcp_dirs

    try:
        dirs = pcp_dirs()
    except ValueError as exc:
        TOOL.fail(str(exc))
    verbosity = sum(1 for opt, _ in parsed.pairs if opt is VERBOSE)
    run = Daily(cull, after, "showme" in parsed, verbosity > 0)
    run.very_verbose = verbosity > 1
    run.after_text, run.dirs = after_text, dirs
    run.merging = "M" not in parsed
    run.rewriting = "M" not in parsed and "norewrite" not in parsed
    run.old_only, run.expunge = "o" in parsed, "expunge" in parsed
    run.compress_only = "K" in parsed
    run.reexec = "force" if "Z" in parsed else "skip" if "z" in parsed else ""
    run.myargs = "".join(f" -{o.short}" for o, _ in parsed.pairs if o in (SHOWME, VERBOSE))
    run.enabled = _pmlogger_enabled()
    run.force = "force" in parsed
    run.compressor = os.environ.get("PCP_COMPRESS") or compressor or _COMMAND
    run.regex = os.environ.get("PCP_COMPRESSREGEX") or regex or _REGEX
    run.cmdline = {
        "PCP_COMPRESS": compressor,
        "PCP_COMPRESSAFTER": given,
        "PCP_COMPRESSREGEX": regex,
    }
    run.defaults = {"PCP_COMPRESSAFTER": layout["PCP_COMPRESSAFTER"]}
    run.settings = {n: os.environ.get(n, "") for n in _CONTROLLED}
    if run.showme:
        return _daily(run, parsed)
    name = "pmlogger_daily-K.log" if run.compress_only else "pmlogger_daily.log"
    proglog = str(parsed.get("logfile") or os.path.join(dirs["PCP_LOG_DIR"], "pmlogger", name))
    try:
        with ScriptLog(proglog):
            return _daily(run, parsed)
    except OSError as exc:
        TOOL.fail(f"cannot write {exc.filename or proglog}: {exc.strerror}")


def _daily(run: Daily, parsed) -> int:
    """The run once the log is set up: callbacks, the stamp, then each control line."""
    dirs = run.dirs
    if not run.compress_only:
        _merge_callbacks(run, "noreport" not in parsed)
    stamp = os.path.join(dirs["PCP_LOG_DIR"], "pmlogger", "pmlogger_daily.stamp")
    if "p" in parsed and _done_today(run, stamp):
        return 0
    if run.showme:
        run.say("+ date-and-timestamp " + time.strftime("%Y-%m-%d %H:%M:%S %s"))
    elif not run.compress_only:
        _write_stamp(run, stamp)
    control = str(parsed.get("control") or dirs["PCP_PMLOGGERCONTROL_PATH"])
    implicit = "control" not in parsed and not os.path.lexists(control)
    if not implicit and not os.path.isfile(control):
        run.say(f"pmlogger_daily: Error: cannot find control file ({control})")
        return 1
    pidfile = os.path.join(dirs["PCP_RUN_DIR"], "pmlogger_daily.pid")
    if not run.showme:
        with contextlib.suppress(OSError):
            os.makedirs(dirs["PCP_RUN_DIR"], exist_ok=True)
            Path(pidfile).write_text(f"{os.getpid()}\n")
    try:
        if implicit:  # (our pmlogger.service logs without one: see _default_line)
            run.one(_default_line(dirs, control), f"{control}:0")
        else:
            _each_line(run, control)
    finally:
        if not run.showme:
            with contextlib.suppress(OSError):
                os.unlink(pidfile)
    return run.status


def _each_line(run: Daily, control: str) -> None:
    """The control file and its .d directory, line by line, with PCP's messages."""
    from .controlfile import ControlParser, Message

    parser = ControlParser(
        "pmlogger_daily", run.dirs, showme=run.showme, very_verbose=run.very_verbose
    )
    strip = os.path.dirname(run.dirs["PCP_PMLOGGERCONTROL_PATH"]) + "/"
    here = os.getcwd()
    try:
        for path in _control_files(control):
            shown = path.replace(strip, "", 1)
            for item in parser.parse_file(path):
                if isinstance(item, Message):
                    text = item.text.replace(f"[{path}:", f"[{shown}:", 1)
                    if item.kind == "warning":  # (pmlogger_daily's has a colon)
                        text = text.replace("pmlogger_daily [", "pmlogger_daily: [", 1)
                    if item.kind == "note" and run.very_verbose and not text.startswith(("#", "+")):
                        run.vv(text)
                    else:
                        run.say(text)
                    if item.kind == "error":
                        run.status = 1
                    continue
                os.chdir(here)
                run.where, run.host = f"{shown}:{item.line}", item.target
                run.control_settings(dict(item.env))
                run.one(item, f"{shown}:{item.line}")
    finally:
        os.chdir(here)


def _default_line(dirs: dict[str, str], control: str) -> ControlLine:
    """With no control file installed (our pmlogger.service runs the primary pmlogger
    itself), the line PCP's packaged control file has: the primary pmlogger, logging
    into $PCP_ARCHIVE_DIR/HOSTNAME."""
    import socket

    directory = os.path.join(dirs["PCP_ARCHIVE_DIR"], socket.gethostname() or "localhost")
    return ControlLine(control, 0, "LOCALHOSTNAME", True, False, directory, "-c config.default")


def _control_files(control: str) -> list[str]:
    from .controlfile import control_files

    return control_files(control)


def _merge_callbacks(run: Daily, report: bool) -> None:
    """pmlogger_daily_report (unless -D), then $PCP_MERGE_CALLBACK, as PCP orders them."""
    binadm, var = run.dirs.get("PCP_BINADM_DIR", ""), run.dirs.get("PCP_VAR_DIR", "")
    daily_report = os.path.join(binadm, "pmlogger_daily_report")
    zeroconf = os.path.join(var, "config", "pmlogconf", "zeroconf", "disk")
    if report and os.access(daily_report, os.X_OK) and os.path.isfile(zeroconf):
        sa_dir = os.environ.get("PCP_SA_DIR") or os.path.join(
            os.path.dirname(run.dirs.get("PCP_LOG_DIR", "")), "sa"
        )
        run.callbacks.append(f"{daily_report} -o {sa_dir} -a")
        run.info("Add merge callback for: pmlogger_daily_report")
    command = os.environ.get("PCP_MERGE_CALLBACK", "")
    if command:
        program = command.strip("\"'").split(" ", 1)[0]
        if shutil.which(program):
            run.callbacks.append(command.strip("\"'"))
            run.info(f"Add merge callback from environment: {command}")
        else:
            run.say(f"pmlogger_daily: [:]\nWarning: {program}: not a executable on PATH="
                    f"{os.environ.get('PATH', '')}")  # fmt: skip


#: the variables a control file may set for pmlogger_daily itself, and their options
_CONTROLLED = {"PCP_COMPRESS": "-X", "PCP_COMPRESSAFTER": "-x", "PCP_COMPRESSREGEX": "-Y"}
_OPTION_VARIABLES = {
    COMPRESSOR: "PCP_COMPRESS",
    AFTER: "PCP_COMPRESSAFTER",
    REGEX: "PCP_COMPRESSREGEX",
}


def _given(parsed, opt: Opt, name: str) -> str:
    """An option's value, unless $NAME is set otherwise: then PCP's warning, and ""."""
    value, flag = str(parsed.get(opt.long) or ""), opt.short
    env = os.environ.get(name, "")
    if value and env and env != value:
        print(
            f"Warning: -{flag} value ({value}) ignored because ${name} ({env}) set in environment",
            flush=True,
        )
        return ""
    return value


def _pmlogger_enabled() -> bool:
    """PCP's is_chkconfig_on pmlogger."""
    return is_chkconfig_on("pmlogger")


def _done_today(run: Daily, stamp: str) -> bool:
    """-p: True when the stamp says pmlogger_daily ran in the last 23.5 hours (or, with
    no stamp, when yesterday's archive already exists somewhere)."""
    try:
        lines = [ln for ln in Path(stamp).read_text().splitlines() if not ln.startswith("#")]
        last = int(lines[0]) if lines else None
    except (OSError, ValueError):
        last = None
    now = int(run.now)
    if last is not None:
        check = now - 23 * 3600 - 1800
        verdict = "do nothing" if last >= check else "do work"
        if run.showme:
            run.say(f"-p stamp {last} now {now} check {check} {verdict}")
        return last >= check
    name = time.strftime("%Y%m%d", time.localtime(run.now - 86400)) + ".index"
    for _root, _dirs, files in os.walk(run.dirs.get("PCP_ARCHIVE_DIR", "")):
        if name in files:
            if run.showme:
                run.say("-p start up already run heuristic match, do nothing")
            return True
    if run.showme:
        run.say("-p start up do work")
    return False


def _write_stamp(run: Daily, stamp: str) -> None:
    """The date-and-timestamp pmlogger_check and -p look for (the previous one kept)."""
    if not save_prev(stamp):
        run.say("Warning: cannot save previous date-and-timestamp")
    text = time.strftime("# %Y-%m-%d %H:%M:%S\n%s\n", time.localtime(run.now))
    try:
        Path(stamp).write_text(text)
    except OSError:
        run.say("Warning: cannot install new date-and-timestamp")


if __name__ == "__main__":
    raise SystemExit(main())
