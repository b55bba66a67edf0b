"""Writing the golden label, changed as the options ask, over every file's label.

Each file gets the golden label with its own volume number (-2 for the .index, -1 for
the .meta), written in place at the start of the file as __pmLogWriteLabel writes it;
the zoneinfo is dropped, as PCP 6's pmloglabel drops it.  A file that will not open or
take the label makes the status 3.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from purepcp.pmapi.archive.versions import PM_LOG_MAGIC
from purepcp.pmapi.errors import PM_ERR_LABEL, pmErrStr

from .labels import PM_LOG_VOL_META, PM_LOG_VOL_TI, encode_label

if TYPE_CHECKING:
    from .cli import Checker
    from .labels import Files, Label


def _write(path: str, label: Label) -> str | None:
    """LABEL over the start of PATH; what went wrong (PCP's words after the colon), if anything."""
    data = encode_label(label)
    try:
        f = open(path, "r+b")  # noqa: SIM115 (the open and the write fail differently)
    except OSError as exc:
        return f"open: {exc.strerror}"
    with f:
        if data is None:
            return f"label write: {pmErrStr(PM_ERR_LABEL)}"
        try:
            f.write(data)
        except OSError as exc:
            return f"label write: {exc.strerror}"
    return None


def rewrite(c: Checker, files: Files) -> int:
    """Write the labels; the status (3 if any write failed, else 0)."""
    o = c.o
    g = c.golden.copy()  # type: ignore[attr-defined]
    if o.version:
        g.magic = PM_LOG_MAGIC | o.version
    if o.pid:
        g.pid = o.pid
    if o.host is not None:
        g.hostname = o.host
    if o.timezone is not None:
        g.timezone = o.timezone
    g.zoneinfo = None
    c.golden = g
    status = 0
    for vol in range(files.minvol, files.maxvol + 1):
        c.say(f"Writing label on data volume {vol}\n")
        g.vol = vol
        failed = _write(files.volume(vol), g)
        if failed is not None:
            sys.stderr.write(f"Failed data volume {vol} {failed}\n")
            status = 3
    if files.index is not None:
        c.say("Writing label on temporal index\n")
        g.vol = PM_LOG_VOL_TI
        failed = _write(f"{files.name}.index", g)
        if failed is not None:
            sys.stderr.write(f"Failed temporal index {failed}\n")
            status = 3
    c.say("Writing label on metadata volume\n")
    g.vol = PM_LOG_VOL_META
    failed = _write(f"{files.name}.meta", g)
    if failed is not None:
        sys.stderr.write(f"Failed metadata volume {failed}\n")
        status = 3
    return status
