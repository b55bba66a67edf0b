"""Zones as glibc reads $TZ, without touching the process environment: a zone file
(":Area/City"), else a POSIX rule ("AEDT-11", "EST5EDT,M3.2.0,M11.1.0"), else UTC;
and pmNewZone's reading of a TZ value."""

from __future__ import annotations

import functools
import os
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..cnumbers import cstring

#: A zone given by a caller: None (the host's local zone), a TZ string (as pmNewZone), a tzinfo.
Zone = str | tzinfo | None

_OFFSET = re.compile(r"([+-]?)([0-9]+)(?::([0-9]+))?(?::([0-9]+))?")
_NAME = re.compile(r"<([A-Za-z0-9+-]{3,})>|([A-Za-z]{3,})")
_RULE = re.compile(r"(?:J([0-9]+)|([0-9]+)|M([0-9]+)\.([0-9]+)\.([0-9]+))(?:/([+-]?[0-9:]+))?")
_DEFAULT_RULES = ((None, None, (3, 2, 0)), 7200, (None, None, (11, 1, 0)), 7200)
_MAX_OFFSET = 86400 - 1  # a tzinfo's offset must stay within a day


def _hms(m: re.Match[str], clamp: int) -> int:
    hh, mm, ss = (int(g) if g else 0 for g in m.group(2, 3, 4))
    secs = min(hh, clamp) * 3600 + min(mm, 59) * 60 + min(ss, 59)
    return -secs if m.group(1) == "-" else secs


def _rule_date(rule: tuple, year: int) -> date:
    julian, zero_based, mwd = rule
    if julian is not None:  # Jn: 1..365, February 29th never counted
        day = date(year, 1, 1) + timedelta(days=julian - 1)
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return day + timedelta(days=1) if leap and julian >= 60 else day
    if zero_based is not None:
        return date(year, 1, 1) + timedelta(days=zero_based)
    month, week, wday = mwd
    first = date(year, month, 1)
    day = 1 + (wday - (first.weekday() + 1) % 7) % 7 + (week - 1) * 7
    while True:
        try:
            return date(year, month, day)
        except ValueError:
            day -= 7


class PosixZone(tzinfo):
    """A POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0", "AEDT-11") as a tzinfo, read as glibc reads it.

    Offsets are east of UTC here (the TZ text counts west).  Wall times in a gap or a
    repeated hour resolve as Python's fold says; fold=0 is what glibc's mktime gives.
    """

    def __init__(self, std: str, std_off: int, dst: str, dst_off: int, rules: tuple) -> None:
        self.std, self.std_off, self.dst_name, self.dst_off = std, std_off, dst, dst_off
        self.start, self.start_time, self.end, self.end_time = rules

    def __repr__(self) -> str:
        return f"PosixZone({self.std!r}, {self.std_off}, {self.dst_name!r}, {self.dst_off})"

    def _is_dst(self, utc: int) -> bool:
        year = (datetime(1970, 1, 1) + timedelta(seconds=utc + self.std_off)).year
        epoch = date(1970, 1, 1)
        on = (_rule_date(self.start, year) - epoch).days * 86400 + self.start_time - self.std_off
        off = (_rule_date(self.end, year) - epoch).days * 86400 + self.end_time - self.dst_off
        return on <= utc < off if on < off else not off <= utc < on

    def _offset(self, dt: datetime) -> int:
        wall = (dt.replace(tzinfo=None) - datetime(1970, 1, 1)) // timedelta(seconds=1)
        as_std = not self._is_dst(wall - self.std_off)
        as_dst = self._is_dst(wall - self.dst_off)
        if as_std != as_dst:
            return self.std_off if as_std else self.dst_off
        big, small = max(self.std_off, self.dst_off), min(self.std_off, self.dst_off)
        if as_std:  # the hour that repeats: the first pass keeps the larger offset
            return small if dt.fold else big
        return big if dt.fold else small  # the hour that is skipped

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(seconds=self.std_off if dt is None else self._offset(dt))

    def dst(self, dt: datetime | None) -> timedelta:
        return self.utcoffset(dt) - timedelta(seconds=self.std_off)

    def tzname(self, dt: datetime | None) -> str:
        return self.dst_name if self.dst(dt) else self.std

    def fromutc(self, dt: datetime) -> datetime:
        utc = (dt.replace(tzinfo=None) - datetime(1970, 1, 1)) // timedelta(seconds=1)
        off = self.dst_off if self._is_dst(utc) else self.std_off
        local = dt + timedelta(seconds=off)
        other = self.std_off if off == self.dst_off else self.dst_off
        if off < other and local.replace(fold=0).utcoffset() != timedelta(seconds=off):
            local = local.replace(fold=1)
        return local


def parse_posix_tz(text: str) -> tzinfo | None:
    """A POSIX TZ rule as a tzinfo, or None when glibc would not accept TEXT as one.

    Without transition rules the US rules since 2007 (M3.2.0,M11.1.0) apply to every
    year; glibc replays its posixrules file (America/New_York) instead, so before 2007,
    and in the hours around its autumn change, the two differ.
    """
    m = _NAME.match(text)
    o = _OFFSET.match(text, m.end()) if m else None
    if m is None or o is None:
        return None
    std = m.group(1) or m.group(2)
    std_off = max(-_MAX_OFFSET, min(_MAX_OFFSET, -_hms(o, 24)))
    d = _NAME.match(text, o.end())
    if d is None:
        return timezone(timedelta(seconds=std_off), std)
    dst, i = d.group(1) or d.group(2), d.end()
    dst_off = std_off + 3600
    o = _OFFSET.match(text, i)
    if o:
        dst_off, i = max(-_MAX_OFFSET, min(_MAX_OFFSET, -_hms(o, 24))), o.end()
    rules = list(_DEFAULT_RULES)
    for k in (0, 2):
        if not text.startswith(",", i):
            break
        r = _RULE.match(text, i + 1)
        if r is None:
            break
        j, n, month, week, wday = (int(g) if g else None for g in r.group(1, 2, 3, 4, 5))
        if month is not None and not (1 <= month <= 12 and 1 <= week <= 5 and wday <= 6):
            break
        rules[k] = (j, n, (month, week, wday) if month is not None else None)
        if r.group(6):
            t = _OFFSET.fullmatch(r.group(6))
            if t is None:
                break
            rules[k + 1] = _hms(t, 167)
        i = r.end()
    return PosixZone(std, std_off, dst, dst_off, tuple(rules))


@functools.lru_cache(maxsize=64)
def _tz_value(value: str) -> tzinfo:
    """tzinfo_for's reading of a set TZ value, kept: a zone file, a POSIX rule, else UTC."""
    name = value[1:] if value.startswith(":") else value
    if not name:
        return UTC
    try:
        if name.startswith("/"):
            with open(name, "rb") as f:
                return ZoneInfo.from_file(f, key=name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        pass
    zone = parse_posix_tz(name)
    if zone is not None:
        return zone
    m = _NAME.match(name)  # glibc keeps a well-formed name, at UTC
    return timezone(timedelta(0), (m.group(1) or m.group(2)) if m else "")


@functools.lru_cache(maxsize=1)
def host_localtime() -> tzinfo:
    """The zone /etc/localtime holds (UTC without one), read once."""
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return UTC


def tzinfo_for(tz: str | None = None) -> tzinfo:
    """The zone a TZ value names, as glibc reads it: ":Area/City" or "Area/City" (a zone
    file), else a POSIX rule ("AEDT-11", "EST5EDT"), else UTC.  None: this host's local
    zone ($TZ, or /etc/localtime when $TZ is unset).
    """
    if tz is None:
        tz = os.environ.get("TZ")
        if tz is None:
            return host_localtime()
    return _tz_value(cstring(tz))


def new_zone(tz: str) -> tzinfo:
    """The zone pmNewZone sets for TZ (-Z, or the source's zone for -z).

    Like libpcp, a three-character TZ gets "+0" appended, so "UTC" stays UTC and "EST"
    means UTC labelled EST (not the zone file named EST).
    """
    tz = cstring(tz)
    return tzinfo_for(tz + "+0" if len(tz.encode()) == 3 else tz)


def resolve_zone(tz: Zone) -> tzinfo:
    """A caller's Zone as a tzinfo: None is the host's local zone, text is read by new_zone."""
    if tz is None:
        return tzinfo_for(None)
    return new_zone(tz) if isinstance(tz, str) else tz
