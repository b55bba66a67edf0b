"""Waking discovery when a pmlogger writes, as PCP's pmproxy does (libuv's file
events): inotify on the directories discovery walks, and from its events the archives
whose volumes were written.  Where inotify is not to be had (another OS, or the
limit on watches reached) there is no watcher, and discovery's scan a second is all.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
from collections.abc import Iterable

#: a volume's file name: the archive's base name, a dot and the volume number
_VOLUME = re.compile(r"^(.*)\.\d+$")


class Watcher:
    """inotify watches on a set of directories; `changed()` drains the events."""

    def __init__(self) -> None:
        from inotify_simple import INotify, flags

        self._inotify = INotify(nonblocking=True)
        self._mask = flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_TO
        self._dirs: dict[str, int] = {}
        self._wds: dict[int, str] = {}

    def fileno(self) -> int:
        return self._inotify.fileno()

    def watch(self, dirs: Iterable[str]) -> None:
        """Watch exactly DIRS (new ones added, gone ones dropped)."""
        wanted = set(dirs)
        for gone in set(self._dirs) - wanted:
            wd = self._dirs.pop(gone)
            self._wds.pop(wd, None)
            with contextlib.suppress(OSError):  # (gone with its directory, perhaps)
                self._inotify.rm_watch(wd)
        for new in wanted - set(self._dirs):
            try:
                wd = self._inotify.add_watch(new, self._mask)
            except OSError:  # (gone already, or the limit on watches: its scan remains)
                continue
            self._dirs[new] = wd
            self._wds[wd] = new

    def wait(self, timeout: float) -> None:
        """Until an event is there to read, or for TIMEOUT seconds."""
        select.select([self._inotify], [], [], timeout)

    def changed(self) -> set[str]:
        """The archives (base names) whose volumes were written since the last call."""
        bases: set[str] = set()
        try:
            events = self._inotify.read(timeout=0)
        except BlockingIOError:
            return bases
        for event in events:
            top = self._wds.get(event.wd)
            found = _VOLUME.match(event.name) if top is not None else None
            if found:
                bases.add(os.path.join(top, found.group(1)))  # type: ignore[arg-type]
        return bases

    def close(self) -> None:
        self._inotify.close()


def watcher() -> Watcher | None:
    """A Watcher, or None where inotify cannot be had."""
    try:
        return Watcher()
    except (ImportError, OSError):
        return None
