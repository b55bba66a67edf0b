"""pmlogger_merge: merge archives into one with pmlogextract, as PCP 6's script.

    pmlogger_merge [-fNVE] [input-basename ... output-name]

Each INPUT names archives by prefix: INPUT itself (INPUT.meta...) and INPUT-* (the
-NN archives a restarted pmlogger leaves).  An archive without a .meta or a volume 0,
or an output archive whose files exist already, is fatal ("no output archive has been
created"); one whose files are all empty is skipped.  The archives are handed to the
pmlogextract first on $PATH, 35 at a time (partial merges in a private directory when
there are more); -f removes the inputs once the output exists, -N shows the commands
instead of running them, -V says what is merged, -E passes pmlogextract -x.  Without
arguments it merges today's archives (YYYYMMDD) into a nameless output, as PCP's does.
"""

from __future__ import annotations

import getopt
import glob
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

PROG = "pmlogger_merge"
USAGE = """\
Usage: pmlogger_merge [options] [input-basename ... output-name]

Options:
  -f, --force           remove input files after creating output files
  -N, --showme          perform a dry run, showing what would be done
  -V, --verbose         increase diagnostic verbosity
  -E, --expunge         expunge metrics with metadata mismatches between archives
  -?, --help            show this usage message and exit
"""
LONG = {"force": "-f", "showme": "-N", "verbose": "-V", "expunge": "-E", "help": "-?"}
#: libpcp's compress_suffixes, after "" for an uncompressed file.
SUFFIXES = ("", ".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")
#: How many archives one pmlogextract run merges.
BATCH = 35
#: The parts whose absence or emptiness is checked, and how the messages name them.
PARTS = (("index", '"index" file'), ("meta", '"meta" file'), ("0", '"volume 0" file'))


@dataclass(frozen=True)
class Options:
    force: bool = False
    showme: bool = False
    verbose: bool = False
    expunge: bool = False


class Abandon(Exception):
    """Fatal problems found before anything was written."""


def parse(argv: Sequence[str]) -> tuple[Options, list[str]] | None:
    """The options and operands, None for a usage error (or -?)."""
    try:
        pairs, operands = getopt.gnu_getopt(list(argv), "fNVE?", list(LONG))
    except getopt.GetoptError:
        return None
    flags = {LONG.get(flag[2:], flag) for flag, _ in pairs}
    if "-?" in flags or len(operands) == 1:
        return None
    opts = Options("-f" in flags, "-N" in flags, "-V" in flags, "-E" in flags)
    return opts, operands


def find_inputs(prefixes: Sequence[str]) -> list[str]:
    """The archives each prefix names (PREFIX and PREFIX-*), in the shell's glob order."""
    found: list[str] = []
    for prefix in prefixes:
        for pattern in (f"{prefix}.meta*", f"{prefix}-*.meta*"):
            for meta in sorted(glob.glob(pattern)):
                base = meta[: meta.rindex(".meta")]
                if base not in found:
                    found.append(base)
    return found


def existing_part(base: str, part: str) -> str | None:
    """BASE.PART, or its first compressed variant that exists."""
    return next((p for s in SUFFIXES if os.path.isfile(p := f"{base}.{part}{s}")), None)


def check_inputs(inputs: Sequence[str], out: list[str]) -> tuple[list[str], bool]:
    """The archives worth merging, and whether a fatal problem was found (messages to OUT)."""
    merge: list[str] = []
    fail = False
    for base in inputs:
        empty = 0
        for part, what in PARTS:
            path = existing_part(base, part)
            if path is not None:
                empty += os.path.getsize(path) == 0
            elif part == "index":
                out.append(f'{PROG}: Warning: {what} missing for archive "{base}"')
                empty += 1
            else:
                out.append(f'{PROG}: Error: {what} missing for archive "{base}"')
                fail = True
                if part == "0":
                    out.append(_shell("ls *"))
        if empty == 3:
            out.append(f'{PROG}: Warning: archive "{base}" is empty and will be skipped')
        else:
            merge.append(base)
    return merge, fail


def check_output(output: str, out: list[str]) -> bool:
    """True if a file of the output archive exists already (said in OUT)."""
    fail = False
    for part, what in PARTS:
        if os.path.isfile(f"{output}.{part}"):
            out.append(f'{PROG}: Error: {what} already exists for output archive "{output}"')
            fail = True
    return fail


def _shell(command: str) -> str:
    """What COMMAND prints (stdout and stderr), without its last newline."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    return (done.stdout + done.stderr).rstrip("\n")


def _say(text: str, end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


class Merger:
    """The merge itself: pmlogextract runs, partial ones first when there are many."""

    def __init__(self, opts: Options, scratch: str):
        self.opts = opts
        self.scratch = scratch
        self.ok = True  # false once a pmlogextract has failed (no removal then)

    def extract(self, listed: str, output: str, partial: bool = False) -> None:
        """pmlogextract on LISTED (the inputs as PCP's script strings them) into OUTPUT."""
        expunge = "-x" if self.opts.expunge else ""
        if self.opts.showme:
            _say(f"+ pmlogextract {expunge} {listed} {output}")
            return
        sys.stdout.flush()
        args = ["pmlogextract", *(["-x"] if self.opts.expunge else []), *listed.split(), output]
        if subprocess.run(args, check=False).returncode != 0:
            if partial and not self.opts.verbose:
                _say(f"\t\t-> partial merge to {output}")
            _say(f"{PROG}: Directory: {os.getcwd()}")
            _say(f"{PROG}: Failed: pmlogextract {listed} {output}")
            _say(f"{PROG}: Trying to continue, although output archive may be corrupted.")
            self.ok = False

    def merge(self, archives: Sequence[str], output: str) -> None:
        if not archives:
            if self.opts.verbose:
                _say("No archives to be merged.")
            return
        if self.opts.verbose:
            _say("Input archives to be merged:")
        listed = ""  # (" a b": the script's $list, spaces and all)
        count = part = 0
        for base in archives:
            if count >= BATCH:
                target = os.path.join(self.scratch, str(part))
                if self.opts.verbose:
                    _say(f"\t\t-> partial merge to {target}")
                self.extract(listed, target, partial=True)
                listed, count, part = target, 0, part + 1
            listed = f"{listed} {base}"
            if self.opts.verbose:
                volumes = len(glob.glob(f"{glob.escape(base)}.[0-9]*"))
                _say(f"\t{base}" + (f" ({volumes} volumes)" if volumes > 1 else ""))
            count += 1
        self.extract(listed, output)
        if not self.opts.showme:
            self._check_output(output)

    def _check_output(self, output: str) -> None:
        if self.opts.verbose:
            _say("Output archive files:")
        for path in (f"{output}.meta", f"{output}.index", f"{output}.0"):
            if not os.path.isfile(path):
                _say(f'{PROG}: Error: file "{path}" not created')
                self.ok = False
            elif self.opts.verbose:
                sys.stdout.flush()
                subprocess.run(["ls", "-l", path], env={**os.environ, "LC_TIME": "POSIX"})


def remove_inputs(inputs: Sequence[str], opts: Options) -> None:
    """-f: remove every file of each input (as the shell globs them; -N only shows)."""
    if opts.verbose:
        _say("Removing input archive files ", end="")
    for base in inputs:
        files: list[str] = []
        for pattern in (".index*", ".meta*", ".[0-9]*"):
            matched = sorted(glob.glob(glob.escape(base) + pattern))
            files += matched or [base + pattern]  # (an unmatched glob stays as it is)
        if opts.verbose:
            _say("." * len(files), end="")
        if opts.showme:
            _say("+ rm -f " + " ".join(files))
            continue
        for path in files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                sys.stderr.write(f"rm: cannot remove '{path}': {exc.strerror}\n")
    if opts.verbose:
        _say(" done")


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogger_merge(1) on ARGV (else sys.argv): its exit status."""
    parsed = parse(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        sys.stderr.write(USAGE)
        return 1
    opts, operands = parsed
    if operands:
        prefixes, output = operands[:-1], operands[-1]
    else:  # (PCP's script then names no output: its $input is unset)
        prefixes, output = [time.strftime("%Y%m%d")], ""
    try:
        return _run(opts, prefixes, output)
    except KeyboardInterrupt:
        return 130


def _run(opts: Options, prefixes: Sequence[str], output: str) -> int:
    out: list[str] = []
    inputs = find_inputs(prefixes)
    archives, fail = check_inputs(inputs, out)
    fail = check_output(output, out) or fail
    for line in out:
        _say(line)
    if fail:
        _say(f"{PROG}: These error(s) are fatal, no output archive has been created.")
        return 1
    tmpdir = os.environ.get("PCP_TMPFILE_DIR") or tempfile.gettempdir()
    with tempfile.TemporaryDirectory(prefix=f"{PROG}.", dir=tmpdir) as scratch:
        merger = Merger(opts, scratch)
        merger.merge(archives, output)
    if opts.force and merger.ok:
        remove_inputs(inputs, opts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
