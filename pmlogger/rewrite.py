"""pmlogger_rewrite: run pmlogrewrite -iq over archives in place, as PCP 6's wrapper does.

    pmlogger_rewrite [-dNsVvw] [-c config] archive|file|directory ...

Each operand is an archive's base name, one of its files (a volume, the .index or the
.meta, compressed or not) or a directory searched for such files; the names are reduced
to base names, duplicates dropped, and names that are not archives skipped.  For each
archive the wrapper checks that no running pmlogger still writes it (pmdumplog -L's
PID among pmprobe -I pmcd.pmlogger.port's instances) and that pmlogcheck -w finds it
sound, then runs pmlogrewrite -iq with the -c, -d, -s, -v and -w options given.  Files
pmlogrewrite changed are reported (-VV) and, where the original was compressed and
pmlogrewrite wrote it back plain, compressed again the same way.  -N shows the steps
instead.

The wrapper's helpers (pmlogrewrite, pmdumplog, pmprobe, pmlogcheck, bzip2, gzip) are
found on $PATH with PCP's directories added as pcp.env adds them; xz compression is
our own (pmlogger.compress, which writes what xz -0 --block-size=10MiB writes).  The
exit status is 4 for a usage error, else 0, whatever happened to the archives (as in
PCP's script).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool, pcp_getopt

PROG = "pmlogger_rewrite"
TOOL = Tool(
    PROG,
    "[options] archive ...",
    [
        (
            "Options",
            [
                Opt("c", "config", "FILE", "[pmlogrewrite] config file/dir"),
                Opt(
                    "d",
                    "desperate",
                    None,
                    "[pmlogrewrite] desperate, save output archive even after error",
                ),
                Opt("N", "showme", None, "perform a dry run, showing what would be done"),
                Opt("s", "scale", None, "[pmlogrewrite] do scale conversion"),
                Opt("V", "verbose", None, "increase diagnostic verbosity"),
                Opt("v", None, None, "[pmlogrewrite] increased diagnostic verbosity"),
                Opt("w", "warnings", None, "[pmlogrewrite] emit warnings"),
                Opt("?", "help", None, "show this usage message and exit"),
            ],
        )
    ],
)
_OPTS = [o for _, group in TOOL.sections for o in group]
SHORTS = "".join(o.short + (":" if o.arg else "") for o in _OPTS if o.short)
LONGS = [(o.long, o.short, o.arg is not None) for o in _OPTS if o.long]
USAGE_STATUS = 4

#: libpcp's compress_suffixes (pmconfig -L -s compress_suffixes), in its order.
COMPRESS_SUFFIXES = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")
#: The crude filter the script puts on a directory's files (grep -E).
_ARCHIVE_FILE = re.compile(
    r"(\.meta|\.index|\.[0-9][0-9]*)($|(\.xz|\.lzma|\.bz2|\.bz|\.gz|\.Z|\.z)$)"
)
#: The first seven bytes of an archive file's label (length, then the magic's top
#: three bytes), version 2 and version 3, as _is_archive looks for them.
LABEL_STARTS = (b"\0\0\0\x84P\x05&", b"\0\0\x03(P\x05&")
#: How a file compressed each way is put back, and the program that does it.
RECOMPRESS = {
    ".xz": "xz", ".lzma": "xz", ".bz2": "bzip2", ".bz": "bzip2", ".gz": "gzip", ".Z": "gzip",
    ".z": "gzip",
}  # fmt: skip


@dataclass
class Settings:
    """The command line."""

    rewrite_args: list[str] = field(default_factory=lambda: ["-iq"])
    showme: bool = False
    verbose: int = 0
    operands: list[str] = field(default_factory=list)
    bad: bool = False

    @property
    def very_verbose(self) -> bool:
        return self.verbose >= 2


def parse(argv: Sequence[str]) -> Settings:
    """The settings ARGV gives; pmlogrewrite's options kept in their order."""
    s = Settings()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            s.operands.append(item)
        elif item[0] in ("!", "?"):
            s.bad = True
        elif item[0] == "c":
            s.rewrite_args += ["-c", str(item[1])]
        elif item[0] in "dsvw":
            s.rewrite_args.append(f"-{item[0]}")
        elif item[0] == "N":
            s.showme = True
        elif item[0] == "V":
            s.verbose += 1
    if not s.operands:
        s.bad = True
    return s


def shown_args(args: Sequence[str]) -> str:
    """pmlogrewrite's options as the script's -N line shows them (-c's file quoted)."""
    words, i = [], 0
    while i < len(args):
        if args[i] == "-c" and i + 1 < len(args):
            words += ["-c", f'"{args[i + 1]}"']
            i += 2
        else:
            words.append(args[i])
            i += 1
    return " ".join(words)


# -- from names to archives -------------------------------------------------------------


def _bre(text: str) -> str:
    """TEXT, a basic regular expression as grep and sed read one, in Python's syntax
    (only '.' and '*' stand for something other than themselves here)."""
    return "".join(c if c in ".*" else re.escape(c) for c in text)


def find_files(folder: str) -> Iterator[str]:
    """find FOLDER -type f: regular files, depth first, in directory order."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        path = os.path.join(folder, entry.name)
        if entry.is_dir(follow_symlinks=False):
            yield from find_files(path)
        elif entry.is_file(follow_symlinks=True):
            yield path


def candidates(operands: Sequence[str]) -> list[str]:
    """The names to try: each operand, a directory replaced by its likely archive files
    (split on white space, as the script's `cat` list is)."""
    names: list[str] = []
    for operand in operands:
        if os.path.isdir(operand):
            names += [p for p in find_files(operand) if _ARCHIVE_FILE.search(p)]
        else:
            names.append(operand)
    return [word for name in names for word in name.split()]


def strip_compression(name: str) -> str:
    """NAME without the first compression suffix (taken as sed takes it) it ends with."""
    for suffix in COMPRESS_SUFFIXES:
        if re.search(_bre(suffix) + "$", name):
            return re.sub(_bre(suffix) + "$", "", name, count=1)
    return name


def base_name(name: str) -> str | None:
    """The archive NAME belongs to, None when it names none."""
    base = strip_compression(name)
    if base.endswith(".index"):
        return base[: -len(".index")]
    if base.endswith(".meta"):
        return base[: -len(".meta")]
    if any(fnmatch.fnmatchcase(base, p) for p in ("*.[0-9]", "*.[0-9][0-9]", "*.[0-9]*[0-9]")):
        return re.sub(r"\.[0-9]*[0-9]$", "", base)
    if os.path.isfile(base + ".meta"):
        return base
    if any(os.path.isfile(base + ".meta" + s) for s in COMPRESS_SUFFIXES):
        return base
    return None


def is_archive(path: str) -> bool:
    """_is_archive: PATH is a file whose (decompressed) start is an archive label's."""
    if not os.path.isfile(path):
        return False
    try:
        return _head(path, 7) in LABEL_STARTS
    except (OSError, EOFError, ValueError):
        return False


def _head(path: str, n: int) -> bytes:
    if path.endswith((".xz", ".lzma")):
        import lzma

        opener = lzma.open
    elif path.endswith((".bz2", ".bz")):
        import bz2

        opener = bz2.open
    elif path.endswith((".gz", ".Z", ".z")):
        import gzip

        opener = gzip.open
    else:
        opener = open
    with opener(path, "rb") as f:
        return f.read(n)


def _meta_of(base: str) -> str:
    """`echo $base.meta*`: the one matching file's name, several joined, or the pattern."""
    import glob

    found = sorted(glob.glob(glob.escape(base) + ".meta*"), key=os.fsencode)
    return " ".join(found) if found else base + ".meta*"


def select(settings: Settings, out) -> tuple[list[str], str]:
    """The archives to process, in order, and the last base name seen (the script's
    $base, which one of its warnings names)."""
    archives: list[str] = []
    base = ""
    for name in candidates(settings.operands):
        found = base_name(name)
        base = found or ""
        if found is None:
            if settings.verbose:
                out(f"Warning: {name}: not a PCP archive name")
            continue
        if name != found and settings.very_verbose:
            out(f"suffix stripping: arg: {name} -> {found}")
        pattern = re.compile("^" + _bre(found))
        if any(pattern.search(a) for a in archives):
            if settings.very_verbose:
                out(f"{found}: duplicate, already in archives list")
        elif settings.showme or is_archive(_meta_of(found)):
            archives.append(found)
    return archives, base


# -- the helpers ------------------------------------------------------------------------


def helper_env() -> dict[str, str]:
    """The environment for PCP's commands: $PATH with PCP's directories ahead of it, as
    pcp.env puts them (each only when a directory, and not on $PATH already)."""
    from purepcp.pmapi.paths import pcp_conf

    env = dict(os.environ)
    conf = pcp_conf()
    for name in ("PCP_BIN_DIR", "PCP_BINADM_DIR", "PCP_SHARE_DIR", "PCP_PLATFORM_PATHS"):
        if name not in env and name in conf:
            env[name] = conf[name]
    path = env.get("PATH", "")
    share = env.get("PCP_SHARE_DIR")
    dirs = ["/usr/sbin", env.get("PCP_BIN_DIR"), env.get("PCP_BINADM_DIR")]
    dirs += [os.path.join(share, "bin") if share else None]
    dirs += (env.get("PCP_PLATFORM_PATHS") or "").split()
    for folder in dirs:
        if folder and os.path.isdir(folder) and f":{folder}:" not in f":{path}:":
            path = f"{folder}:{path}"
    env["PATH"] = path
    return env


@dataclass
class Helpers:
    """PCP's commands, run as the script runs them (their stderr passes through)."""

    env: dict[str, str] = field(default_factory=helper_env)

    def run(self, args: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        sys.stdout.flush()
        sys.stderr.flush()
        program = shutil.which(args[0], path=self.env["PATH"]) or args[0]
        try:
            return subprocess.run([program, *args[1:]], env=self.env, check=False, **kwargs)
        except OSError as exc:
            sys.stderr.write(f"{PROG}: {args[0]}: {exc.strerror}\n")
            return subprocess.CompletedProcess(args, 127, b"", b"")

    def which(self, name: str) -> bool:
        return shutil.which(name, path=self.env["PATH"]) is not None

    def logger_pid(self, archive: str) -> str:
        """The PID pmdumplog -L reports, "" when it reports none."""
        done = self.run(["pmdumplog", "-L", archive], stdout=subprocess.PIPE)
        for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
            if line.startswith("PID for pmlogger: "):
                return line[len("PID for pmlogger: ") :]
        return ""

    def logging(self, pid: str) -> bool:
        """Whether a pmlogger with PID is one pmcd knows of (pmprobe -I's instances)."""
        done = self.run(["pmprobe", "-I", "pmcd.pmlogger.port"], stdout=subprocess.PIPE)
        return f'"{pid}"'.encode() in done.stdout


def checksums(archive: str) -> list[str]:
    """One line per file of ARCHIVE (`$archive.*`, in glob order): name and checksum."""
    import glob

    lines = []
    files = sorted(glob.glob(glob.escape(archive) + ".*"), key=os.fsencode)
    for path in files or [archive + ".*"]:
        try:
            with open(path, "rb") as f:
                data = f.read()
            lines.append(f"{path} {zlib.crc32(data)} {len(data)}")
        except OSError:
            lines.append(f"{path}")
    return lines


def comm_new(before: Sequence[str], after: Sequence[str]) -> list[str]:
    """comm -13: the lines of AFTER not in BEFORE, merged as comm merges (byte order)."""
    new, i = [], 0
    for line in after:
        key = os.fsencode(line)
        while i < len(before) and os.fsencode(before[i]) < key:
            i += 1
        if i < len(before) and before[i] == line:
            i += 1
        else:
            new.append(line)
    return new


# -- the command ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogger_rewrite(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    settings = parse(argv)
    if settings.bad:
        sys.stderr.write(TOOL.usage())
        return USAGE_STATUS
    archives, base = select(settings, _say)
    if not archives:
        if settings.verbose:
            _say("Warning: no PCP archives found")
        return 0
    helpers = Helpers()
    for archive in archives:
        if settings.showme:
            _say(f"+ check {archive} not active and OK")
            _say(f"+ pmlogrewrite {shown_args(settings.rewrite_args)} {archive}")
            continue
        rewrite(archive, base, settings, helpers)
    return 0


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def rewrite(archive: str, base: str, s: Settings, helpers: Helpers) -> None:
    """One archive: the checks, pmlogrewrite, and the changed files' report."""
    pid = helpers.logger_pid(archive)
    if not pid:
        helpers.run(["pmdumplog", "-L", archive])
        _say(f"Botch: cannot get pmlogger PID from label record for {archive}")
        return
    if helpers.logging(pid):
        if s.verbose:
            _say(f"Warning: skip archive {archive}, pmlogger PID {pid} is still running")
        return
    check = helpers.run(
        ["pmlogcheck", "-w", archive], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    if check.returncode != 0:
        if check.stdout:
            if s.verbose:
                sys.stdout.flush()
                sys.stdout.buffer.write(check.stdout)
            _say(f"Warning: {base}: bad archive, rewriting skipped")
        else:
            _say(f"Warning: {base}: bad archive (pmlogcheck exit status=1), rewriting skipped")
        return
    before = checksums(archive)
    helpers.run(["pmlogrewrite", *s.rewrite_args, archive])
    for line in comm_new(before, checksums(archive)):
        path = line.split()[0] if line.split() else ""
        _report_change(path, before, s, helpers)


def _report_change(path: str, before: Sequence[str], s: Settings, helpers: Helpers) -> None:
    """A file pmlogrewrite changed: said (-VV), and compressed again if it was before."""
    pattern = re.compile("^" + _bre(path))
    old = "\n".join(ln.split(" ")[0].split("\t")[0] for ln in before if pattern.search(ln))
    if path == old:
        if s.very_verbose:
            _say(f"changed: {old}")
        return
    suffix = next((x for x in COMPRESS_SUFFIXES if old.endswith(x)), None)
    if suffix is None:
        _say(f"Botch: cannot handle rewriting file name change: {old} -> {path}")
        return
    program = RECOMPRESS[suffix]
    if not recompress(path, program, helpers):
        _say(f"Warning: no {program}(1), cannot recompress {path}")
        return
    if s.very_verbose:
        _say(f"changed and recompressed: {old}")


def recompress(path: str, program: str, helpers: Helpers) -> bool:
    """Compress PATH with PROGRAM (xz our own way); False when PROGRAM is not there."""
    if program == "xz":
        from .compress import compress_file

        try:
            compress_file(path)
        except OSError as exc:
            sys.stderr.write(f"xz: {path}: {exc.strerror}\n")
        return True
    if not helpers.which(program):
        return False
    helpers.run([program, path])
    return True


if __name__ == "__main__":
    sys.exit(main())
