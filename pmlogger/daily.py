"""pmlogger_daily: the daily housekeeping of the archives under $PCP_ARCHIVE_DIR.

    pmlogger_daily [-KMNrVzZ] [-k TIME] [-x TIME] [-X xz]
    pmlogger_daily --version

-V is --verbose, as in PCP's script (which has no version option): it runs the job and
says what it does.  --version prints the version and runs nothing.

Run once a day (pmlogger_daily.timer), as PCP 6's script is, it

1. sends the running primary pmlogger (its PID from $PCP_RUN_DIR/pmlogger.pid) SIGUSR2,
   so that each day's data starts a new archive; skipped when the archive it is
   writing began today (PCP's script looks at the name; we at the archive's label), so
   a timer that fires at boot does not cut a fresh archive in two;
2. in each host's directory ($PCP_ARCHIVE_DIR/HOST), removes the archives last
   modified more than TIME ago (-k, else $PCP_CULLAFTER, 14 days);
3. compresses the data volumes and .meta of the archives last modified more than
   TIME ago (-x, else $PCP_COMPRESSAFTER, 1 day) into NAME.0.xz, NAME.meta.xz, leaving
   the .index as it is, as PCP's does (``xz -0 --block-size=10MiB``; compress.py).

TIME is find-filter(1)'s DD[:HH[:MM]], or ``forever`` / ``never``.  An archive's age
is that of its most recently modified file, as PCP's find(1) and find-filter(1) use
each file's mtime; taken per archive, an archive is never split (PCP can cull a
.meta written days before the last volume).  Compressed files keep their mtime.

Only PCP's date-named archives are touched (a file name starting YYYYMMDD. or -, or
YYMMDD.), and never the one being written.  PCP asks pmlc and pmcd which archive and
volume the primary pmlogger has open; we have no pmlc, so an archive is left alone if

* the primary pmlogger holds one of its files open (from /proc/PID/fd), or
* it is the newest archive of its directory: it may be what a pmlogger we cannot see
  is writing, or what the primary writes when /proc does not tell us (another user).

As PCP's, this pmlogger_daily merges an earlier day's archives (those named
YYYYMMDD.HH.MM[-NN], or YYMMDD...) into one named for the day, YYYYMMDD, running
pmlogextract on them in name order and removing them once it succeeds (PCP's
pmlogger_merge -f); -M turns that off, and a day whose merged archive exists already is
left as it is, with a warning.  Unlike PCP's, it does not rename a day's only archive
(pmlogmv) or rewrite archives (pmlogrewrite): -r, which asks for exactly that, is
accepted.  Not supported: -c (there is no control
file: every directory under $PCP_ARCHIVE_DIR is a host's), -D, -E, -f, -l (messages go
to stdout and stderr, the service's journal), -m, -o, -p (the timer is Persistent),
-R, -s, -t, -Y, and -X with any program but xz.  Where PCP lets $PCP_CULLAFTER and
$PCP_COMPRESSAFTER override -k and -x (with a warning), here the command line wins:
the variables come from our layout file, where defaults always stand.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
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
from purepcp.pmapi.pidfile import read_pid

from .compress import PARTIAL, compress_file
from .pidfile import FILENAME as PIDFILE
from .pidfile import is_pmlogger

COMPRESSONLY = Opt("K", None, None, "compress, but no other changes")
DISCARD = Opt("k", "discard", "TIME", "remove archives after TIME (format DD[:HH[:MM]])")
NOMERGE = Opt("M", None, None, "do not rewrite, merge or rename archives")
SHOWME = Opt("N", "showme", None, "perform a dry run, showing what would be done")
NOREWRITE = Opt("r", "norewrite", None, "do not rewrite archives (never done here)")
VERBOSE = Opt("V", "verbose", None, "verbose output (as in PCP; the version is --version)")
AFTER = Opt("x", "compress-after", "TIME", "compress archive data files after TIME")
COMPRESSOR = Opt("X", "compressor", "PROGRAM", "program for compression (only xz)")
FORCE_USR2 = Opt("Z", None, None, "send the primary pmlogger SIGUSR2 even if not needed")
SKIP_USR2 = Opt("z", None, None, "do not send the primary pmlogger SIGUSR2")

TOOL = Tool(
    "pmlogger_daily",
    "[options]",
    [
        (
            "Options",
            [COMPRESSONLY, DISCARD, NOMERGE, SHOWME, NOREWRITE, VERBOSE, AFTER, COMPRESSOR],
        ),
        ("QA options", [FORCE_USR2, SKIP_USR2]),
        ("General options", [LONG_VERSION, HELP]),
    ],
)

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
        self.now = time.time()
        self.status = 0
        self.merging = True  # (-M: no merging)

    def info(self, text: str) -> None:
        """-V's commentary (on stdout, as PCP's script writes it)."""
        if self.verbose:
            print(text, flush=True)

    def warn(self, text: str) -> None:
        sys.stdout.flush()
        print(f"pmlogger_daily: Warning: {text}", file=sys.stderr, flush=True)

    def error(self, text: str) -> None:
        sys.stdout.flush()
        print(f"pmlogger_daily: {text}", file=sys.stderr, flush=True)
        self.status = 1

    # -- the primary pmlogger -----------------------------------------------------------

    def primary(self, run_dir: Path, quiet: bool = False) -> Primary | None:
        """The primary pmlogger named by RUN_DIR/pmlogger.pid, if it is running (QUIET:
        its absence is no news, as for -K, which sends no signal)."""
        path = run_dir / PIDFILE
        try:
            pid = read_pid(path)
        except (OSError, ValueError) as exc:
            self.error(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")
            return None
        if pid is None or not is_pmlogger(pid):
            why = "no PID file" if pid is None else f"PID {pid} is not a running pmlogger"
            if not quiet:
                self.warn(f"no primary pmlogger running ({path}: {why}), so no new archive")
            return None
        return Primary(pid, _open_files(pid))

    def rotate(self, primary: Primary, mode: str) -> None:
        """SIGUSR2 to the primary pmlogger: its archive ends, a new one begins."""
        if mode == "skip":
            return
        if mode != "force":
            current = _current_archive(primary)
            if current is not None and _began_today(current, self.now):
                self.info(f"Skip sending SIGUSR2 to {primary.pid} ({current} began today)")
                return
        if self.showme:
            print(f"+ kill -s USR2 {primary.pid}", flush=True)
            return
        self.info(f"Sending SIGUSR2 to {primary.pid}")
        try:
            os.kill(primary.pid, signal.SIGUSR2)
        except OSError as exc:
            self.error(f"cannot signal pmlogger {primary.pid}: {exc.strerror}")

    # -- one host's directory -----------------------------------------------------------

    def tidy(self, directory: Path, primary: Primary | None, compress_only: bool) -> None:
        """Cull, then compress, the archives of DIRECTORY, holding its lock throughout."""
        self.info(f"=== daily maintenance of PCP archives in {directory} ===")
        try:
            lock = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            self.error(f"{directory}: cannot read: {exc.strerror}")
            return
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.warn(f"{directory}: another pmlogger_daily is working there, skipped")
                return
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
            todo += [f for a in squeeze for f in _compressible(a)]
            if todo and not self.showme and not os.access(directory, os.W_OK):
                self.error(f"{directory}: directory is not writable, its archives left as they are")
                return
            self._remove(directory, partials, "Interrupted compressions being removed ...")
            if culled:
                age = _describe(self.cull)
                names = [f for a in culled for f in a.files]
                self._remove(directory, names, f"Archive files older than {age} being removed ...")
            if self.merging and not compress_only:
                survivors = {b: a for b, a in archives.items() if b not in {c.base for c in culled}}
                if self.merge(directory, survivors, keep):  # (then what is left to compress)
                    archives, _ = _scan(directory)
                    squeeze = self._old(archives, keep, self.after)
            self._compress(directory, squeeze)
        finally:
            os.close(lock)

    def merge(self, directory: Path, archives: dict[str, ArchiveFiles], keep: set[str]) -> bool:
        """Merge each earlier day's archives (two or more, none in KEEP) into one named
        for the day, as pmlogger_merge does with pmlogextract; True if any was merged."""
        today = time.strftime("%Y%m%d", time.localtime(self.now))
        days: dict[str, list[str]] = {}
        for base in sorted(archives, key=_merge_order):
            if _MERGEABLE.fullmatch(base) and not base.startswith(today + "."):
                days.setdefault(base.split(".", 1)[0], []).append(base)
        merged = False
        for day, inputs in days.items():
            if len(inputs) < 2 or keep & set(inputs):
                continue
            if any((directory / f"{day}{s}").exists() for s in (".0", ".index", ".meta")):
                self.warn(f"output archive ({day}) already exists, not merging {day}'s archives")
                continue
            if self.showme:
                print(f"+ pmlogger_merge -f {' '.join(inputs)} {day}", flush=True)
                continue
            self.info(f"Merging {' '.join(inputs)} into {day} ...")
            done = subprocess.run(
                ["pmlogextract", *inputs, day], cwd=directory, capture_output=True, text=True
            )
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or ["pmlogextract failed"])[-1]
                self.error(f"problems executing pmlogger_merge in {directory}: {why}")
                continue
            self._remove(directory, [f for b in inputs for f in archives[b].files], "")
            merged = True
        return merged

    def _in_use(
        self, directory: Path, archives: dict[str, ArchiveFiles], primary: Primary | None
    ) -> set[str]:
        """The archives never to touch: the newest, and those the primary has open."""
        keep = set()
        if archives:
            newest = max(archives.values(), key=lambda a: (a.mtime_ns, a.base))
            keep.add(newest.base)
        if primary is not None and primary.open_files:
            for archive in archives.values():
                paths_ = {os.path.realpath(directory / f) for f in archive.files}
                if paths_ & primary.open_files:
                    keep.add(archive.base)
        for base in sorted(keep):
            self.info(f"Leaving {base} alone: it may be the archive being written")
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
        if self.showme:
            print("+ rm -f " + " ".join(names), flush=True)
            return
        for name in names:
            try:
                os.unlink(directory / name)
            except FileNotFoundError:
                pass
            except OSError as exc:
                self.error(f"cannot remove {directory / name}: {exc.strerror}")

    def _compress(self, directory: Path, archives: list[ArchiveFiles]) -> None:
        names = [f for a in archives for f in _compressible(a)]
        if not names:
            return
        self.info(f"Archive files older than {_describe(self.after)} being compressed ...")
        if self.showme:
            print(f"+ {_COMMAND} " + " ".join(names), flush=True)
            return
        for archive in archives:
            for name in _compressible(archive):
                try:
                    compress_file(str(directory / name))
                except OSError as exc:
                    why = exc.strerror or str(exc)
                    self.error(f"cannot compress {directory / name}: {why}")
                    break  # (the rest of this archive stays as it is)


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


def _compressible(archive: ArchiveFiles) -> list[str]:
    """The files of ARCHIVE pmlogger_daily compresses: volumes and .meta, not yet compressed."""
    out = []
    for name in archive.files:
        m = _FILE.fullmatch(name)
        if m is not None and m.group("ext") is None and m.group("part") != "index":
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


def _host_dirs(archive_dir: Path) -> list[Path]:
    """The directories under ARCHIVE_DIR, each one host's archives, each once."""
    seen, out = set(), []
    with os.scandir(archive_dir) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir() and (real := os.path.realpath(entry.path)) not in seen:
                seen.add(real)
                out.append(Path(entry.path))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    if parsed.operands:
        TOOL.fail(f"unexpected argument: {parsed.operands[0]}", usage=True)
    if "Z" in parsed and "z" in parsed:
        TOOL.fail("-Z and -z are mutually exclusive")
    if "compressor" in parsed and str(parsed.get("compressor")).split()[:1] != ["xz"]:
        TOOL.fail(f"-X {parsed.get('compressor')}: only xz is supported")
    try:
        layout = paths()
    except LayoutError as exc:
        TOOL.fail(str(exc))
    try:
        if "discard" in parsed:
            cull = parse_period(str(parsed.get("discard")), "-k")
        else:
            cull = parse_period(layout["PCP_CULLAFTER"], "$PCP_CULLAFTER")
        if "compress-after" in parsed:
            after = parse_period(str(parsed.get("compress-after")), "-x")
        else:
            after = parse_period(layout["PCP_COMPRESSAFTER"], "$PCP_COMPRESSAFTER")
    except ValueError as exc:
        TOOL.fail(f"Error: {exc}")
    run = Daily(cull, after, "showme" in parsed, "verbose" in parsed)
    run.merging = "M" not in parsed
    compress_only = "K" in parsed
    primary = run.primary(layout.run_dir, quiet=compress_only)
    if primary is not None and not compress_only:
        run.rotate(primary, "force" if "Z" in parsed else "skip" if "z" in parsed else "")
    archive_dir = layout.archive_dir
    try:
        directories = _host_dirs(archive_dir)
    except FileNotFoundError:
        run.info(f"No archives: {archive_dir} does not exist")
        return run.status
    except OSError as exc:
        run.error(f"{archive_dir}: cannot read: {exc.strerror}")
        return run.status
    for directory in directories:
        run.tidy(directory, primary, compress_only)
    return run.status


if __name__ == "__main__":
    raise SystemExit(main())
