"""An archive's files as pmlogcheck finds them: the base name its argument gives, and a
scan of the directory (in the directory's own order, as scandir gives it unsorted)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum

from purepcp.pmapi.archive.reader import log_base_name

from .state import err


class Kind(Enum):
    """What a file of an archive is, by its name."""

    INDEX = "index"
    META = "meta"
    LOG = "log"


def kind_of(path: str) -> Kind | None:
    """The kind of archive file PATH names (pass 0's test), None if none."""
    split = log_base_name(path)
    if split is None:
        return None
    suffix = split[1]
    if suffix == "index":
        return Kind.INDEX
    if suffix == "meta":
        return Kind.META
    return Kind.LOG if suffix[:1].isdigit() else None


@dataclass(frozen=True)
class Names:
    """The argument, its directory and the archive's base name (no directory)."""

    path: str
    dirname: str
    basename: str

    @property
    def archname(self) -> str:
        """The base name with its directory, as the passes name the archive."""
        return self.basename if self.dirname == "." else f"{self.dirname}/{self.basename}"

    def file_path(self, entry: str) -> str:
        return entry if self.dirname == "." else f"{self.dirname}/{entry}"


def names_for(path: str) -> Names:
    """The archive PATH names: foo, foo.meta, foo.index and foo.N (compressed or not)
    are all foo; foo.N is left alone when no such file exists (foo-20150415.041154)."""
    base = os.path.basename(path.rstrip("/")) if path.rstrip("/") else path
    dot = base.rfind(".")
    if dot >= 0:
        digit = base[dot + 1 : dot + 2].isdigit()
        if not digit or os.path.exists(path):
            split = log_base_name(base)
            if split is not None:
                base = split[0]
    return Names(path, _c_dirname(path), base)


def _c_dirname(path: str) -> str:
    """dirname(3): "." for a name without a directory, "/" for the root."""
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    head = stripped.rpartition("/")[0]
    if not head and stripped.startswith("/"):
        return "/"
    return head.rstrip("/") or ("/" if head else ".")


def scan(names: Names, vflag: int) -> list[str] | None:
    """The directory's entries that are files of the archive, in directory order (None
    if the directory cannot be read); -vvv traces each entry's test, as pmlogcheck does."""
    try:
        entries = [".", "..", *os.listdir(names.dirname)]
    except OSError:
        return None
    base = names.basename
    if vflag > 2:
        err(f'archbasename="{base}" len={len(base.encode())}\n')
    return [e for e in entries if _wanted(e, base, vflag)]


def _wanted(entry: str, base: str, vflag: int) -> bool:
    def say(text: str) -> None:
        if vflag > 2:
            err(text)

    say(f'd_name="{entry}"? ')
    if entry[len(base) : len(base) + 1] != ".":
        say("no (not expected extension after basename)\n")
        return False
    split = log_base_name(entry)
    if split is None:
        say("no (not expected extension after basename)\n")
        return False
    if split[0] != base:
        say(f"no (first {len(base.encode())} chars not matched)\n")
        return False
    if split[1] not in ("meta", "index") and not split[1][:1].isdigit():
        say("no (non-digit after basename)\n")
        return False
    say("yes\n")
    return True
