"""An archive's files: opening one by name as pmNewContext does, and their sizes as
__pmStat gives them (a compressed copy stands in for a missing file).
"""

from __future__ import annotations

import errno
import os

from purepcp.pmapi.archive import Archive
from purepcp.pmapi.archive.reader import base_name
from purepcp.pmapi.errors import PM_ERR_LOGFILE, PMError

#: the suffixes of compressed copies libpcp looks for
COMPRESSED = (".xz", ".lzma", ".bz2", ".gz", ".zst")


def open_archive(name: str) -> Archive:
    """The archive NAME, failing with the code pmNewContext would give for it (the
    reader makes libpcp's checks of labels and metadata at open)."""
    if name == "":  # C's basename("") is ".", and the folder's ".." then looks like a volume
        raise PMError(PM_ERR_LOGFILE)
    named = os.path.exists(name) or compressed(name)  # (a file of some archive, as named)
    base = base_name(name) if named else name
    found = [base + s for s in (".meta", ".index", ".0")]
    if not named and not any(os.path.exists(p) or compressed(p) for p in found):
        raise PMError(-errno.ENOENT)
    return Archive(name)


def compressed(path: str) -> bool:
    """Whether PATH has a compressed copy beside it."""
    return any(os.path.exists(path + ext) for ext in COMPRESSED)


def stat_size(path: str) -> int | None:
    """__pmStat's size: the file's, -1 for a compressed copy (size unknown), None if absent."""
    if os.path.exists(path):
        try:
            return os.path.getsize(path)
        except OSError:
            return None
    return -1 if compressed(path) else None
