"""Following the archives pmloggers write, as pmproxy's [discover] does: every archive
(an uncompressed .meta) under a directory, its records loaded as they are written.

An archive met for the first time is read from its end: what it held already is not
loaded (as PCP's discovery does); each later scan loads the records written since the
last one, with the loader (`load.py`) and the identity discovery gives a source (its
latest context labels, all of them).  A directory holding a file named `lock` is left
alone while it does (pmlogger_daily works there).  An archive whose .meta goes away is
forgotten.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from purepcp.pmapi.archive.format import ArchiveError
from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.errors import PMError

from .load import ArchiveLoader, LoadError, LoadReport
from .store import Store, StoreDown

NSEC = 1_000_000_000


@dataclass
class _Followed:
    """An archive being followed: the time of the last record loaded, and what the
    files looked like then (nothing is read again until they change)."""

    last_ns: int
    stamp: tuple = ()


@dataclass
class Discovery:
    """The archives under ROOT and where each is up to; `scan()` loads what is new."""

    root: str
    store: Store
    log: Callable[[str], None] = lambda message: None
    followed: dict[str, _Followed] = field(default_factory=dict)

    def archives(self) -> Iterator[tuple[str, bool]]:
        """Every archive under the root (each X.meta names archive X), and whether its
        directory is locked."""
        for top, dirs, files in os.walk(self.root):
            dirs.sort()
            locked = "lock" in files
            for name in sorted(files):
                if name.endswith(".meta"):
                    yield os.path.join(top, name[: -len(".meta")]), locked

    def scan(self) -> list[LoadReport]:
        """One pass: new archives noted at their ends, followed ones loaded from where
        they were up to.  StoreDown if the key server is not there."""
        reports = []
        present = set()
        for base, locked in self.archives():
            present.add(base)
            if locked:
                continue
            stamp = _files_stamp(base)
            known = self.followed.get(base)
            if known is None:
                end = _end_ns(base)
                if end is not None:
                    self.followed[base] = _Followed(end, stamp)
                    self.log(f"discovered archive {base}")
                continue
            if stamp == known.stamp:
                continue
            report = self._load(base, known)
            known.stamp = stamp
            if report is not None:
                reports.append(report)
        for gone in set(self.followed) - present:
            del self.followed[gone]
            self.log(f"archive {gone} is gone")
        return reports

    def _load(self, base: str, known: _Followed) -> LoadReport | None:
        end = _end_ns(base)
        if end is None or end <= known.last_ns:
            return None
        try:
            loader = ArchiveLoader(
                self.store, base, start_ns=known.last_ns + 1, finish_ns=end, discovered=True
            )
            report = loader.run()
        except LoadError as exc:
            self.log(str(exc))
            return None
        except StoreDown:
            raise
        known.last_ns = end
        return report


def _files_stamp(base: str) -> tuple:
    """Sizes and change times of an archive's files: what says it has grown."""
    directory, prefix = os.path.split(base)
    found = []
    try:
        names = sorted(os.listdir(directory or "."))
    except OSError:
        return ()
    for name in names:
        if name.startswith(os.path.basename(prefix) + "."):
            try:
                st = os.stat(os.path.join(directory, name))
            except OSError:
                continue
            found.append((name, st.st_size, st.st_mtime_ns))
    return tuple(found)


def _end_ns(base: str) -> int | None:
    """The time of an archive's last record (ns); None if it cannot be read (yet)."""
    try:
        with Archive(base) as archive:
            end = archive.end()
    except (ArchiveError, PMError, OSError):
        return None
    return end.sec * NSEC + end.nsec
