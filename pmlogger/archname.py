"""Archive base names as pmlogger makes them: strftime(3) templates and the -NN rule.

pmlogger's archive argument may hold strftime(3) meta-characters (the service's is
``%Y%m%d.%H.%M``), expanded in local time each time an archive is created.  When the
expansion names an archive that exists already (pmlogger restarted, or SIGUSR2, within
the minute), PCP 6's pmlogger tries ``NAME-00``, ``NAME-01``, ... ``NAME-98`` in turn
(pmlogger.c; pmlogger_check left this to pmlogger in PCP 5).  A name without
meta-characters is used as it is, and an existing archive of that name is an error.

An archive "exists" when its .index, .meta or .0 does, compressed or not (PCP checks
the uncompressed names only; a compressed NAME.0.xz beside a new NAME.0 would make a
broken pair, so a compressed leftover counts too).
"""

from __future__ import annotations

import os
import time

__all__ = [
    "COMPRESSED",
    "ArchiveNameError",
    "archive_exists",
    "choose",
    "expand",
    "is_template",
    "make_parents",
]

#: Suffixes libpcp reads as compressed archive files (io.c's compress_ctl).
COMPRESSED = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst")
#: How many -NN suffixes pmlogger tries after the plain name (-00 to -98).
SUFFIXES = 99


class ArchiveNameError(ValueError):
    """No archive name could be made: the message says why, in one line."""


def is_template(name: str) -> bool:
    """True if NAME holds strftime(3) meta-characters (pmlogger looks for a '%')."""
    return "%" in name


def expand(template: str, when: float | None = None) -> str:
    """TEMPLATE with its meta-characters filled in for WHEN (default now), in local time.

    The zone is looked up afresh each time, as PCP's pmlogger does: it runs for days,
    across daylight-saving changes and changes to the machine's zone.
    """
    if not is_template(template):
        return template
    time.tzset()
    name = time.strftime(template, time.localtime(when))
    if not name:
        raise ArchiveNameError(f'strftime failed on "{template}"')
    return name


def archive_exists(base: str) -> bool:
    """True if an archive named BASE has any of .index, .meta or .0, compressed or not."""
    return any(
        os.path.lexists(base + part + ext)
        for part in (".index", ".meta", ".0")
        for ext in ("", *COMPRESSED)
    )


def choose(template: str, when: float | None = None) -> str:
    """The base name for a new archive from TEMPLATE: expanded, then made unique with -NN.

    A name without meta-characters comes back as it is, whether or not it exists (the
    writer then refuses to overwrite it, as PCP's does).
    """
    if not is_template(template):
        return template
    base = expand(template, when)
    for name in (base, *(f"{base}-{n:02d}" for n in range(SUFFIXES))):
        if not archive_exists(name):
            return name
    raise ArchiveNameError(f'"{base}" and "{base}-00" to "{base}-{SUFFIXES - 1:02d}" all exist')


def make_parents(base: str) -> None:
    """Create the directories BASE is to be written in (ArchiveNameError if we cannot)."""
    parent = os.path.dirname(base)
    if not parent:
        return
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise ArchiveNameError(f'cannot create directory "{parent}": {exc.strerror}') from None
