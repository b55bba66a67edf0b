"""pmie_daily: the daily care of the log files of the pmies pmie's control file names.

    pmie_daily [-NV] [-c control] [-k discard] [-l logfile] [-m addresses]
               [-x compress-after] [-X compressor] [-Y regex]

As PCP 6's script: for each line of the control file (control.py), in the log file's
directory and under its lock file (DIR/lock), the running pmie writing that log file
(found by its statistics file in $PCP_TMP_DIR/pmie, those of vanished processes
removed) has its log moved to LOGFILE.YYYYMMDD (yesterday's date) and is sent SIGHUP
to start a new one; then the dated log files there older than -k days (14; "forever"
keeps them) are removed, and those older than -x days compressed with -X (xz), but for
names matching -Y.  -m mails what the rotated logs say beyond the OKs to the addresses
given (with Mail, mail or email; printed when there is none).

Unless -N, everything it says goes to $PCP_LOG_DIR/pmie/pmie_daily.log (-l), the
previous one kept as .prev.  -N shows what would be done, -V says more (-VV more
still).  Not as PCP's: -N does not move the current log files (PCP's script does,
while saying it would).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.process import process_exists
from purepcp.pmapi.scriptlog import command_output, say

from .control import DAILY, PmieLine, report
from .running import (
    ScriptRun,
    getopt_table,
    lock_is_stale,
    pcp_dirs,
    remove,
    run_logged,
    stats_dir,
    stats_files,
    take_lock,
    usage_text,
)

PROG = "pmie_daily"
REGEX = r"\.(meta|index|Z|gz|bz2|zip|xz|lzma|lzo|lz4)$"
#: (letter, long name, argument, help), as PCP's script gives them to pmgetopt.
OPTIONS = (
    ("c", "control", "FILE", "pmie control file"),
    ("k", "discard", "N", "remove pmie log files after N days"),
    ("l", "logfile", "FILE", "send important diagnostic messages to FILE"),
    ("m", "mail", "ADDRs", "send daily log files to email addresses"),
    ("N", "showme", None, "perform a dry run, showing what would be done"),
    ("V", "verbose", None, "verbose output (multiple times for very verbose)"),
    ("x", "compress-after", "N", "compress pmie log files after N days"),
    ("X", "compressor", "PROGRAM", "use PROGRAM for pmie log file compression"),
    ("Y", "regex", "REGEX", f'grep -E filter when compressing files ["{REGEX}"]'),
)
LOCK_TRIES = 4  # five seconds apart
#: the dated names the scripts manage, and the date in them
_DATED = re.compile(r"[-.][12]\d\d\d[01]\d[0-3]\d")
_SUMMARY_SKIP = re.compile(r"( OK | OK$|^$|^Log |^pmie: PID)")
_MAILED_SKIP = re.compile(r"( OK | OK$|^$)")


@dataclass(frozen=True)
class Options:
    control: str | None = None
    cull: str = "14"  # days, or "forever"
    logfile: str | None = None
    mail: str = ""
    showme: bool = False
    verbose: int = 0
    compress_after: str = ""
    compressor: str = "xz"
    regex: str = REGEX


def parse(argv: Sequence[str]) -> Options | str | None:
    """The options of ARGV; None for a usage error, or PCP's message for a bad number."""
    parsed = getopt_table(argv, OPTIONS)
    if parsed is None or parsed[1]:
        return None
    pairs = parsed[0]
    values = dict(pairs)
    for letter, value in pairs:  # (checked as they come, as PCP's loop does)
        digits_only = not re.sub(r"[0-9]", "", value)
        if letter == "k" and not digits_only and re.sub(r"[0-9]", "", value) != "forever":
            return f"Error: -k option ({value}) must be numeric"
        if letter == "x" and not digits_only:
            return f"Error: -x option ({value}) must be numeric"
    return Options(
        control=values.get("c"),
        cull=values.get("k", "14"),
        logfile=values.get("l"),
        mail=values.get("m", ""),
        showme="N" in values,
        verbose=sum(f == "V" for f, _ in pairs),
        compress_after=values.get("x", ""),
        compressor=values.get("X", "xz"),
        regex=values.get("Y", REGEX),
    )


def dated_files(names: Sequence[str], days: int, today: float | None = None) -> list[str]:
    """PCP's _date_filter: the dated NAMES whose date is not one of the last DAYS days
    (today included)."""
    now = time.time() if today is None else today
    recent = {time.strftime("%Y%m%d", time.localtime(now - i * 86400)) for i in range(days + 1)}
    found = []
    for name in names:
        if _DATED.search(name) and not any(_has_date(name, d) for d in recent):
            found.append(name)
    return found


def _has_date(name: str, date: str) -> bool:
    return f"-{date}" in name or f".{date}" in name


def fmt(names: Sequence[str]) -> str:
    """fmt(1)'s filling of NAMES, each line indented by four spaces."""
    try:
        done = subprocess.run(
            ["fmt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True
        )
        lines = done.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        lines = [" ".join(names)]
    return "\n".join(f"    {line}" for line in lines)


@dataclass
class Daily(ScriptRun):
    """One run over the control files."""

    opts: Options = field(default_factory=Options)
    enabled: bool = True  # is the pmie service on (PCP's PMIE_CTL)?
    mailed: list[str] = field(default_factory=list)
    summary: str = field(default_factory=lambda: time.strftime("%Y%m%d", _yesterday()))

    def report(self, label: str, entry: PmieLine, text: str) -> None:
        say(report(DAILY, PROG, label.lower(), entry.where, entry.host, text).text)
        if label == "Error":
            self.failed = True

    def run(self) -> int:
        control = self.opts.control or self.dirs["PCP_PMIECONTROL_PATH"]
        if not self.each_line(PROG, DAILY, control):
            return 1
        self.send_mail()
        return 1 if self.failed else 0

    def one(self, entry: PmieLine) -> None:
        """Rotate, cull and compress the log files of one control line."""
        directory = os.path.dirname(entry.logfile) or "."
        self.vv(f"Check pmie -h {entry.host} ... in {directory} ...")
        if not os.path.isdir(directory):
            if self.enabled:
                self.report("Error", entry, f"logfile directory ({directory}) does not exist")
            return
        try:
            os.chdir(directory)
        except OSError:
            problem = f"cannot chdir to directory ({directory}) for pmie log file"
            self.report("Error", entry, problem)
            return
        directory = os.path.realpath(os.getcwd())
        if self.opts.showme:
            say(f"+ cd {directory}")
        if self.verbose:
            say()
            say(f"=== daily maintenance of pmie log files for host {entry.host} ===")
            say()
        if not os.access(directory, os.W_OK):
            say(f"{PROG}: Warning: no write access in {directory}, skip lock file processing")
        elif not self.lock(entry, directory):
            return
        try:
            self.rotate(entry)
            self.cull()
            self.compress()
        finally:
            remove("lock")

    def lock(self, entry: PmieLine, directory: str) -> bool:
        """DIR/lock, four tries five seconds apart (a stale one removed), as PCP's."""
        failure: OSError | None = None
        for _ in range(LOCK_TRIES):
            failure = take_lock("lock")
            if failure is None:
                return True
            if lock_is_stale("lock"):
                say(f"{PROG}: Warning: removing lock file older than 30 minutes")
                say(command_output(["ls", "-l", f"{directory}/lock"], {"LC_TIME": "POSIX"}))
                remove("lock")
            time.sleep(5)
        if os.path.exists("lock"):
            say(f"{PROG}: Warning: is another PCP cron job running concurrently?")
            say(command_output(["ls", "-l", f"{directory}/lock"], {"LC_TIME": "POSIX"}))
        elif failure is not None:
            say(f"{PROG}: lock: {failure.strerror}")
        self.report("Warning", entry, f"failed to acquire exclusive lock ({directory}/lock) ...")
        return False

    def find(self, entry: PmieLine) -> int | None:
        """The PID of the running pmie writing ENTRY's log file (statistics files of
        vanished processes removed on the way)."""
        self.vv(f"Looking for logfile={entry.logfile}")
        if not os.path.isdir(stats_dir(self.dirs)):
            sys.stderr.write(
                f"ls: cannot access '{stats_dir(self.dirs)}': No such file or directory\n"
            )
            sys.stderr.flush()
            return None
        for stats in stats_files(self.dirs, numeric=False):
            name = os.path.basename(stats.path)
            self.vv(f"Check p_id={name} ... ", end="")
            if not process_exists(stats.pid):
                if self.opts.showme:
                    say(f"+ rm -f {stats.path}")
                else:
                    remove(stats.path)
                self.vv("process has vanished")
                continue
            self.vv(f"p_pmcd_host={stats.host} p_logfile={stats.logfile}", end="")
            self.vv(f"->{stats.logfile} ... ", end="")
            if stats.logfile == entry.logfile:
                self.vv("match")
                return stats.pid
            self.vv("no match")
        return None

    def rotate(self, entry: PmieLine) -> None:
        """The current log moved aside and its pmie told (SIGHUP) to start another."""
        pid = self.find(entry)
        if pid is None:
            if self.enabled:
                self.report("Error", entry, f'no pmie instance running for host "{entry.host}"')
            return
        rotated = f"{entry.logfile}.{self.summary}"
        if self.opts.showme:
            say(f"+ mv {entry.logfile} {entry.logfile}.{{SUMMARY_LOGNAME}}")
            self.vv(f"+ echo + kill -s HUP {pid}")
            say(f"+ kill -s HUP {pid}")
            self.mailed.append(rotated)
            return
        try:
            os.rename(entry.logfile, rotated)
        except OSError as exc:
            say(f"mv: cannot move '{entry.logfile}' to '{rotated}': {exc.strerror}")
            self.report(
                "Error", entry, f'problems moving logfile "{entry.logfile}" for host "{entry.host}"'
            )
            return
        self.vv(f"+ pmsignal -s HUP {pid}")
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGHUP)
        self.mailed.append(rotated)

    def cull(self) -> None:
        if self.opts.cull == "forever":
            return
        names = dated_files(_listing(), int(self.opts.cull))
        if not names:
            return
        if self.verbose:
            say(f"Log files older than {self.opts.cull} days being removed ...")
            say(fmt(names))
        if self.opts.showme:
            say("+ rm -f " + " ".join(names))
            return
        for name in names:
            remove(name)

    def compress(self) -> None:
        if not self.opts.compress_after:
            return
        skip = re.compile(self.opts.regex)
        names = [
            n for n in dated_files(_listing(), int(self.opts.compress_after)) if not skip.search(n)
        ]
        if not names:
            return
        if self.verbose:
            say(f"Log files older than {self.opts.compress_after} days being compressed ...")
            say(fmt(names))
        if self.opts.showme:
            say(f"+ {self.opts.compressor} " + " ".join(names))
            return
        sys.stdout.flush()
        try:
            subprocess.run([*self.opts.compressor.split(), *names], check=False)
        except OSError as exc:
            say(f"xargs: {self.opts.compressor}: {exc.strerror}")

    def send_mail(self) -> None:
        """-m: what the rotated logs say beyond the OKs, mailed (or printed)."""
        if not self.opts.mail or not self.mailed:
            return
        logs = [p for p in self.mailed if os.path.isfile(p)]
        if not any(_SUMMARY_SKIP.search(ln) is None for ln in _lines(logs)):
            return
        text = "".join(f"{ln}\n" for ln in _lines(logs) if _MAILED_SKIP.search(ln) is None)
        host = os.environ.get("LOCALHOSTNAME") or _hostname()
        mailer = next((m for m in ("Mail", "mail", "email") if shutil.which(m)), None)
        if mailer:
            subject = f"PMIE summary for {host}"
            subprocess.run(
                [mailer, "-s", subject, *self.opts.mail.split()], input=text, text=True, check=False
            )
            return
        say(f"{PROG}: PMIE summary for {host} ...")
        say(text, end="")


def _lines(paths: Sequence[str]) -> list[str]:
    """grep's view of PATHS: their lines, named by file when there are several."""
    found = []
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        found += [f"{path}:{ln}" if len(paths) > 1 else ln for ln in lines]
    return found


def _listing() -> list[str]:
    """ls: the current directory's names, in C order."""
    return sorted(os.listdir("."), key=lambda n: n.encode())


def _yesterday() -> time.struct_time:
    return time.localtime(time.time() - 86400)


def _hostname() -> str:
    import socket

    return socket.gethostname() or "localhost"


def main(argv: Sequence[str] | None = None) -> int:
    """pmie_daily(1) on ARGV (else sys.argv): its exit status."""
    opts = parse(sys.argv[1:] if argv is None else argv)
    if opts is None:
        sys.stderr.write(usage_text(PROG, OPTIONS))
        return 1
    if isinstance(opts, str):
        say(opts)
        return 1
    try:
        dirs = pcp_dirs()
    except ValueError as exc:  # (a bad layout file)
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 1
    from purepcp.pmapi.scriptlog import is_chkconfig_on

    enabled = is_chkconfig_on("pmie", dirs.get("PCP_SYSTEMDUNIT_DIR") or "")
    run = Daily(opts=opts, dirs=dirs, enabled=enabled)
    proglog = opts.logfile or os.path.join(dirs["PCP_LOG_DIR"], "pmie", f"{PROG}.log")
    return run_logged(PROG, run.run, opts.showme, proglog)


if __name__ == "__main__":
    raise SystemExit(main())
