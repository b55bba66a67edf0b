"""This host's zone as PCP records it: __pmTimezone (pmcd.timezone, archive labels) and
__pmZoneinfo (pmcd.zoneinfo)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import tzinfo

from ..cnumbers import cdiv
from .epoch import NSEC, Timestamp, localtime, to_ns
from .tz import host_localtime, tzinfo_for


def _squash(zone: tzinfo, now: int) -> str:
    """__pmSquashTZ: the zone's name at NOW and its offset west of UTC in hours[:minutes]."""
    tm = localtime(now, zone)
    west = -tm.gmtoff
    if west == 0:
        return tm.name[:40]
    hours, mins = cdiv(west, 3600), abs(cdiv(west - cdiv(west, 3600) * 3600, 60))
    if mins == 0:
        return f"{tm.name[:37]}{hours:+d}"
    return f"{tm.name[:34]}{hours:+d}:{mins:02d}"


def pcp_timezone(now: Timestamp | None = None, environ: Mapping[str, str] = os.environ) -> str:
    """This host's zone as PCP records it (__pmTimezone: pmcd.timezone, archive labels).

    $TZ itself when it is set, has no leading colon and fits in 40 characters; otherwise
    the zone in force at NOW squashed to "NAME±H[:MM]", counted west of UTC ("AEDT-11",
    "UTC", "IST-5:30").
    """
    when = to_ns(now) // NSEC if now is not None else int(time.time())
    tz = environ.get("TZ")
    if tz is None or tz.startswith(":"):
        return _squash(tzinfo_for(tz) if tz is not None else host_localtime(), when)
    if len(tz) <= 40:
        return tz
    squeezed = "".join(tz.split(":00")[:-1]) if ":00" in tz else tz  # libpcp drops the tail
    return squeezed if len(squeezed) <= 40 else _squash(tzinfo_for(tz), when)


def pcp_zoneinfo(
    localtime: str = "/etc/localtime", zoneinfo_dir: str = "/usr/share/zoneinfo"
) -> str | None:
    """This host's zone file as a TZ value, ":Area/City" (__pmZoneinfo: pmcd.zoneinfo), or None.

    Read from where /etc/localtime links to, else found by content below the zoneinfo
    directory (the shortest matching name wins, as in libpcp).
    """
    try:
        target = os.readlink(localtime)
    except FileNotFoundError:
        return None
    except OSError:
        target = _zone_file_like(localtime, zoneinfo_dir)
        if target is None:
            return None
    at = target.find("/zoneinfo/")
    return ":" + (target[at + len("/zoneinfo/") :] if at >= 0 else target)


def _zone_file_like(path: str, base: str) -> str | None:
    """The shortest name below BASE of a file holding what PATH holds (a copied zone file)."""
    import hashlib  # imported here: only a copied, not linked, /etc/localtime needs it

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    digest, best = hashlib.sha256(data).digest(), None
    for root, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            candidate = os.path.join(root, name)
            try:
                if os.path.getsize(candidate) != len(data):
                    continue
                with open(candidate, "rb") as f:
                    same = hashlib.sha256(f.read()).digest() == digest
            except OSError:
                continue
            if same and (best is None or len(candidate) < len(best)):
                best = candidate
    return best
