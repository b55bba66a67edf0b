"""Following the archives pmloggers write, as pmproxy's [discover] does: every archive
(an uncompressed .meta) under a directory, its records loaded as they are written.

An archive met for the first time is read from its end: what it held already is not
loaded (as PCP's discovery does); from then on it stays open (follow.py) and each scan
that finds its volume grown loads the records written since the last one, with the
identity discovery gives a source (its latest context labels, all of them).  A
directory holding a file named `lock` is left alone while it does (pmlogger_daily
works there).  An archive whose .meta goes away is forgotten.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .follow import ArchiveFollower
from .source import LoadError, LoadReport
from .store import Store


@dataclass
class Discovery:
    """The archives under ROOT and where each is up to; `scan()` loads what is new."""

    root: str
    store: Store
    log: Callable[[str], None] = lambda message: None
    followed: dict[str, ArchiveFollower] = field(default_factory=dict)
    #: the directories the last scan walked (what a watcher should watch)
    dirs: list[str] = field(default_factory=list)
    _missing: bool = False  # (the root was not there at the last scan: said once)

    def reconnected(self, store: Store) -> None:
        """Go on with STORE, a new connection (perhaps to a server that lost what it
        held): every archive's source, metrics and instances are described again."""
        self.store = store
        for follower in self.followed.values():
            follower.store = store
            follower.forget()

    def archives(self) -> Iterator[tuple[str, bool]]:
        """Every archive under the root (each X.meta names archive X), and whether its
        directory is locked."""
        self.dirs = []
        missing = not os.path.isdir(self.root)
        if missing and not self._missing:
            self.log(f"{self.root}: no such directory (discovery waits for it)")
        self._missing = missing
        for top, dirs, files in os.walk(self.root):
            dirs.sort()
            self.dirs.append(top)
            locked = "lock" in files
            for name in sorted(files):
                if name.endswith(".meta"):
                    yield os.path.join(top, name[: -len(".meta")]), locked

    def scan(self) -> list[LoadReport]:
        """One pass: new archives noted at their ends, followed ones loaded from where
        they were up to.  StoreDown if the key server is not there."""
        reports: list[LoadReport] = []
        present = set()
        for base, locked in self.archives():
            present.add(base)
            if locked:
                continue
            known = self.followed.get(base)
            if known is None:
                try:
                    follower = ArchiveFollower(self.store, base, self.log)
                except LoadError:
                    continue  # (not readable yet: a pmlogger just starting it)
                self.followed[base] = follower
                self.log(f"discovered archive {base}")
                continue
            self._load(known, reports)
        for gone in set(self.followed) - present:
            self.followed.pop(gone).close()
            self.log(f"archive {gone} is gone")
        return reports

    def load_now(self, bases: set[str]) -> list[LoadReport]:
        """Load what is new in the followed archives BASES (a watcher saw their volumes
        written), bar those in a locked directory; the next scan finds the rest."""
        reports: list[LoadReport] = []
        for base in sorted(bases):
            known = self.followed.get(base)
            if known is None or os.path.exists(os.path.join(os.path.dirname(base), "lock")):
                continue
            self._load(known, reports)
        return reports

    def _load(self, follower: ArchiveFollower, reports: list[LoadReport]) -> None:
        try:
            report = follower.load()
        except LoadError as exc:
            self.log(str(exc))
            return
        if report is not None:
            reports.append(report)
