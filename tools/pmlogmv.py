"""pmlogmv: rename every file of a PCP archive, as PCP 6's pmlogmv.

    pmlogmv [-cfNV] oldname newname

OLDNAME is an archive's base name or the name of any of its files (a volume, the
.index or the .meta, compressed or not); it is opened as libpcp opens an archive, so
what no PCP tool could read is refused ("Cannot open archive").  The rename is done in
two passes so that the archive is never lost: first a hard link NEWNAME.PART for each
file (data volumes in order, then the .index, then the .meta; a copy when the link
would cross file systems, checked with -c), then the old names are removed.  If any
link fails, or the command is interrupted, the links made so far are removed again
(in the reverse order) and the exit status is 1.

-N shows the ln and rm steps without doing them, -V says what is done (twice: also the
files an archive lacks), -f accepts a NEWNAME holding shell metacharacters.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool

PROG = "pmlogmv"
HELP = Opt("?", "help", None, "show this usage message and exit")
TOOL = Tool(
    PROG,
    "[options] oldname newname",
    [
        ("", [Opt("D", "debug", "DBG", "set debug options")]),
        (
            "Options",
            [
                Opt("c", "checksum", None, "checksum all source and destintion files when copying"),
                Opt("f", "force", None, "force changes, even if they look unsafe"),
                Opt("N", "showme", None, "perform a dry run, showing what would be done"),
                Opt("V", "verbose", None, "increase diagnostic verbosity"),
                HELP,
            ],
        ),
    ],
)

#: libpcp's compress_suffixes (pmconfig -L), after "" for an uncompressed file.
SUFFIXES = ("", ".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")
#: What -f is needed for in a new name: characters a shell would take for its own.
METACHARACTERS = " $?*[(|;&<>"
#: The parts of an archive besides its data volumes (libpcp's PM_LOG_VOL_TI, _META).
INDEX, META = -2, -1


def part_name(base: str, vol: int, suffix: str) -> str:
    """The name of one file of archive BASE: a volume, the .index or the .meta."""
    word = {INDEX: "index", META: "meta"}.get(vol, str(vol))
    return f"{base}.{word}{suffix}"


def unsafe_character(name: str) -> str | None:
    """The first of METACHARACTERS found in NAME (in that list's order), else None."""
    return next((c for c in METACHARACTERS if c in name), None)


def open_archive(name: str) -> tuple[str, int, int]:
    """The archive NAME names, as libpcp opens it: its name (directory/base, as libpcp
    keeps it) and its first and last volume numbers; PMError if libpcp would refuse it."""
    from purepcp.pmapi.archive.reader import Archive, base_name, find_file, log_base_name
    from purepcp.pmapi.errors import PMError

    base = base_name(name) if find_file(name, "") is not None else name
    folder, stem = os.path.split(base)
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        entries = []
    if not any((log_base_name(e) or ("",))[0] == stem for e in entries):
        raise PMError(-errno.ENOENT)
    with Archive(base) as archive:
        vols = sorted(archive.volume_paths)
    return os.path.join(folder or ".", stem), vols[0], vols[-1]


@dataclass
class Mover:
    """One rename: the links made so far (for the clean-up) and the options."""

    old: str
    new: str
    minvol: int
    maxvol: int
    showme: bool = False
    verbose: int = 0
    checksum: bool = False
    made: list[int] = field(default_factory=list)  # the parts linked, in order
    _sum_cmd: str | None = None

    def link_all(self) -> bool:
        """The first pass: a link (or copy) to the new name for every existing file."""
        parts = [*range(self.minvol, self.maxvol + 1), INDEX, META]
        return all(self.link(vol) for vol in parts)

    def link(self, vol: int) -> bool:
        """Link the file of part VOL, whichever suffix it has; False on failure."""
        for suffix in SUFFIXES:
            src = part_name(self.old, vol, suffix)
            if not os.path.exists(src):
                continue
            dst = part_name(self.new, vol, suffix)
            if os.path.exists(dst):
                _err(f"{PROG}: {dst}: already exists")
                return False
            if self.showme:
                _out(f"+ ln {src} {dst}")
            elif not self._link(src, dst):
                return False
            self.made.append(vol)
            return True
        self._missing(vol)
        return True

    def _link(self, src: str, dst: str) -> bool:
        try:
            os.link(src, dst)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                _err(f"{PROG}: link {src} -> {dst} failed: {exc.strerror}")
                return False
            return self._copy(src, dst)
        if self.verbose:
            _out(f"link {src} -> {dst}")
        return True

    def _copy(self, src: str, dst: str) -> bool:
        """Copy across file systems, as cp(1) would; with -c, compare checksums."""
        import shutil

        before = self._sum(src) if self.checksum else ""
        if before and self.verbose:
            _out(f"source checksum: {before}")
        try:
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
        except OSError as exc:
            _err(f"{PROG}: copy {src} -> {dst} failed: {exc.strerror}")
            return False
        if self.checksum:
            after = self._sum(dst)
            if after and self.verbose:
                _out(f"destination checksum: {after}")
            if before != after:
                _err(f"{PROG}: checksums {before} ? {after} differ")
                try:
                    os.unlink(dst)
                except OSError as exc:
                    _err(f"{PROG}: unlink {dst} failed: {exc.strerror}")
                else:
                    if self.verbose:
                        _out(f"remove {dst}")
                return False
        if self.verbose:
            _out(f"copy {src} -> {dst}")
        return True

    def _sum(self, path: str) -> str:
        """PCP's first choice of checksum, md5sum's digest of the file."""
        import hashlib

        if self._sum_cmd is None:
            self._sum_cmd = "md5sum"
            if self.verbose:
                _out(f"checksum cmd: {self._sum_cmd}")
        digest = hashlib.md5(usedforsecurity=False)
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def _missing(self, vol: int) -> None:
        """-V's word on a part the archive lacks (the .meta at -V, others at -VV)."""
        if self.verbose > (0 if vol == META else 1):
            _err(f"{PROG}: Warning: source file {part_name(self.old, vol, '')} not found")

    def remove_all(self, base: str, vols: Sequence[int], cleanup: bool = False) -> None:
        """Remove the files of parts VOLS of archive BASE (the second pass, or a clean-up)."""
        for vol in vols:
            self.unlink(base, vol, cleanup)

    def unlink(self, base: str, vol: int, cleanup: bool) -> None:
        for suffix in SUFFIXES:
            path = part_name(base, vol, suffix)
            if not os.path.exists(path):
                continue
            if self.showme:
                _out(f"+ rm {path}")
                return
            if self.verbose:
                _out(f"{'cleanup: ' if cleanup else ''}remove {path}")
            try:
                os.unlink(path)
            except OSError as exc:
                _err(f"{PROG}: unlink {path} failed: {exc.strerror}")
            return

    def undo(self) -> None:
        """Remove the new names made so far, last made first, as PCP's clean-up does:
        the .meta and .index if made, then every volume up to the last one linked."""
        last = self.made[-1] if self.made else None
        if last == META:
            self.unlink(self.new, META, cleanup=True)
            last = INDEX
        if last == INDEX:
            self.unlink(self.new, INDEX, cleanup=True)
            last = self.maxvol
        if last is not None:
            self.remove_all(self.new, range(self.minvol, last + 1), cleanup=True)


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _err(text: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogmv(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    if "help" in parsed.values or len(parsed.operands) != 2:
        sys.stderr.write(TOOL.usage())
        return 1
    verbose = sum(1 for opt, _ in parsed.pairs if opt.short == "V")
    oldname, newname = parsed.operands
    from purepcp.pmapi.errors import PMError, pmErrStr

    try:
        old, minvol, maxvol = open_archive(oldname)
    except PMError as exc:
        _err(f'{PROG}: Cannot open archive "{oldname}": {pmErrStr(exc.code)}')
        return 1
    bad = None if "force" in parsed.values else unsafe_character(newname)
    if bad is not None:
        _err(f"{PROG}: newname ({newname}) unsafe [shell metacharacter '{bad}']")
        return 1
    mover = Mover(
        old,
        newname,
        minvol,
        maxvol,
        showme="showme" in parsed.values,
        verbose=verbose,
        checksum="checksum" in parsed.values,
    )
    _trap(mover)
    if not mover.link_all():
        mover.undo()
        return 1
    mover.remove_all(old, [*range(minvol, maxvol + 1), INDEX, META])
    return 0


def _trap(mover: Mover) -> None:
    """On SIGINT, SIGTERM or SIGHUP: undo the links made so far and exit 1, saying so."""

    def caught(sig: int, _frame: object) -> None:
        _err(f"Caught signal {sig}")
        mover.verbose = max(mover.verbose, 1)
        mover.undo()
        raise SystemExit(1)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, caught)


if __name__ == "__main__":
    raise SystemExit(main())
