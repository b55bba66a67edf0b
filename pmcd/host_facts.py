"""Facts about this host and process that pmcd's own metrics report, read as libpcp and
pmdapmcd read them: the time zone (pmcd.timezone, pmcd.zoneinfo) and the brk heap
(pmcd.datasize)."""

from __future__ import annotations

import hashlib
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from purepcp.pmapi.cnumbers import cdiv, cmod

__all__ = ["LOCALTIME", "ZONESHARED", "heap_bounds", "host_timezone", "host_zoneinfo"]

LOCALTIME = "/etc/localtime"
ZONESHARED = "/usr/share/zoneinfo"
PM_TZ_MAXLEN = 40


_zone_cache: dict[tuple[int, int, int], Any] = {}


def _local_zone() -> Any:
    """/etc/localtime's zone, parsed again only when the file changes (UTC if unreadable)."""
    try:
        st = os.stat(LOCALTIME)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        zone = _zone_cache.get(key)
        if zone is None:
            with open(LOCALTIME, "rb") as f:
                zone = ZoneInfo.from_file(f)
            _zone_cache.clear()
            _zone_cache[key] = zone
        return zone
    except (OSError, ValueError):
        return UTC


_tz_cache: dict[tuple[Any, int], str] = {}


def host_timezone(when: float | None = None) -> str:
    """pmcd.timezone: the system zone as a $TZ value ("UTC", "AEDT-11", "IST-5:30").

    Like pmcd, the zone is /etc/localtime's, whatever pmcd's own $TZ says.  The
    answer is worked out once a second at most (it changes only when the zone's
    offset or abbreviation does).
    """
    zone = _local_zone()
    second = int(time.time() if when is None else when)
    key = (zone, second)
    found = _tz_cache.get(key)
    if found is None:
        found = _tz_cache[key] = _tz_value(zone, second)
        if len(_tz_cache) > 1:
            _tz_cache.clear()
            _tz_cache[key] = found
    return found


def _tz_value(zone: Any, when: int) -> str:
    """The $TZ form of ZONE at time WHEN."""
    moment = datetime.fromtimestamp(when, zone)
    name = moment.tzname() or "UTC"
    offset = -int(moment.utcoffset().total_seconds())  # type: ignore[union-attr]
    if offset == 0:
        return name[:PM_TZ_MAXLEN]
    hours = cdiv(offset, 3600)  # __pmSquashTZ's int arithmetic
    minutes = abs(cdiv(cmod(offset, 3600), 60))
    if minutes == 0:
        return f"{name[: PM_TZ_MAXLEN - 3]}{hours:+d}"
    return f"{name[: PM_TZ_MAXLEN - 6]}{hours:+d}:{minutes:02d}"


def host_zoneinfo() -> str:
    """pmcd.zoneinfo: ":Area/City" from /etc/localtime's link (or contents); "" if unknown."""
    try:
        target = os.readlink(LOCALTIME)
    except FileNotFoundError:
        return ""
    except OSError:  # not a link: find the zone file with the same contents
        target = _zone_file_like(LOCALTIME) or ""
        if not target:
            return ""
    found = target.find("/zoneinfo/")
    if found >= 0:
        target = target[found + len("/zoneinfo/") :]
    return ":" + target


def _zone_file_like(path: str) -> str | None:
    """The shortest path below ZONESHARED with the same contents as PATH, if any."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if not data:
        return None
    digest = hashlib.sha256(data).digest()
    best: str | None = None
    for top, dirs, files in os.walk(ZONESHARED):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            candidate = os.path.join(top, name)
            if name.startswith(".") or (best is not None and len(candidate) >= len(best)):
                continue
            try:
                if os.path.getsize(candidate) != len(data):
                    continue
                if hashlib.sha256(Path(candidate).read_bytes()).digest() == digest:
                    best = candidate
            except OSError:
                continue
    return best


def heap_bounds() -> tuple[int, int] | None:
    """(start, end) of this process's brk heap, (0, 0) if it has none, None if unknown."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if line.rstrip().endswith("[heap]"):
                    start, end = line.split(None, 1)[0].split("-")
                    return int(start, 16), int(end, 16)
    except OSError:
        return None
    return 0, 0
