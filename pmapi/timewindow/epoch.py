"""Times as the C library keeps them: nanoseconds since the epoch, and localtime_r and
mktime over a tzinfo (struct tm's fields), with the C locale's day and month names."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, tzinfo
from fractions import Fraction
from typing import NamedTuple

PM_MAX_TIME_T = 2**63 - 1  # libpcp's "no end" sentinel for a 64-bit time_t
NSEC = 1_000_000_000
#: A time given by a caller: seconds (int or float) or an exact (seconds, nanoseconds) pair.
Timestamp = float | int | tuple[int, int]

# the C locale's day and month abbreviations (ctime's, and what __pmParseCtime reads)
WDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def to_ns(t: Timestamp) -> int:
    """T in nanoseconds since the epoch (a float rounded to the nearest)."""
    if isinstance(t, tuple):
        return t[0] * NSEC + t[1]
    if isinstance(t, int):
        return t * NSEC
    return math.floor(Fraction(t) * NSEC + Fraction(1, 2))


class Tm(NamedTuple):
    """struct tm as localtime_r fills it, with the zone's name (tm_zone)."""

    year: int  # full year
    mon: int  # 0..11
    mday: int
    hour: int
    min: int
    sec: int
    wday: int  # 0 = Sunday
    isdst: bool
    gmtoff: int  # seconds east of UTC
    name: str


_CYCLE = 146097 * 86400  # the Gregorian calendar (weekdays too) repeats every 400 years


def localtime(sec: int, zone: tzinfo) -> Tm:
    """localtime_r in ZONE; years a datetime cannot hold are moved by whole 400-year cycles."""
    cycles = 0
    if not -62_000_000_000 < sec < 253_000_000_000:
        cycles = (sec - 946_684_800) // _CYCLE  # to the cycle that starts in 2000
        sec -= cycles * _CYCLE
    dt = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=sec)).astimezone(zone)
    off = dt.utcoffset() or timedelta(0)
    wday = (dt.weekday() + 1) % 7
    clock = (dt.hour, dt.minute, dt.second)
    name = dt.tzname() or ""
    gmtoff = off // timedelta(seconds=1)
    return Tm(
        dt.year + 400 * cycles, dt.month - 1, dt.day, *clock, wday, bool(dt.dst()), gmtoff, name
    )


def mktime(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, zone: tzinfo) -> int:
    """mktime with tm_isdst = -1: out-of-range fields carry over, as the C library does."""
    y, m = divmod(year * 12 + mon, 12)
    wall = datetime(y, m + 1, 1) + timedelta(days=mday - 1, hours=hour, minutes=mins, seconds=sec)
    off = wall.replace(tzinfo=zone).utcoffset() or timedelta(0)
    return (wall - datetime(1970, 1, 1) - off) // timedelta(seconds=1)
