"""Absolute times after "@", as __pmParseCtime reads them ("@ Sat Nov 21 10:00:00 2026",
"@10:00") and __pmConvertHighResTime completes them from an origin."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import tzinfo
from fractions import Fraction

from .epoch import MONTHS, NSEC, WDAYS, localtime, mktime
from .scanning import (
    MORE_MSG,
    WHAT_MSG,
    TimeParseError,
    parse_3char,
    parse_char,
    parse_double,
    parse_int,
    skip_space,
)


@dataclass
class _CTm:
    """A parsed ctime-style time; -1 marks a field not given.  nsec is the seconds' fraction."""

    year: int = -1
    mon: int = -1
    mday: int = -1
    hour: int = -1
    min: int = -1
    sec: int = -1
    nsec: int = -1


def parse_ctime(spec: str) -> _CTm:
    """__pmParseCtime: "[Ddd] [Mmm] [DD] [HH[:MM[:SS.frac]]] [am|pm] [YYYY]", in that order."""
    tm = _CTm()
    i, ignored = parse_3char(spec, 0, WDAYS)
    i, mon = parse_3char(spec, i, MONTHS)
    tm.mon = -1 if mon is None else mon
    i, v = parse_int(spec, i, 0, 31)
    tm.mday = -1 if v is None else v
    i, v = parse_int(spec, i, 0, 23)
    tm.hour = -1 if v is None else v
    if tm.mday == 0 and tm.hour != -1:
        tm.mday = -1
    if tm.hour == -1 and 0 <= tm.mday <= 23 and (tm.mon == -1 or spec.startswith(":", i)):
        tm.hour, tm.mday = tm.mday, -1
    i = _parse_clock(spec, i, tm)
    i = _parse_meridian(spec, i, tm)
    i, year = parse_int(spec, i, 1900, 9999)
    tm.year = -1 if year is None else year
    i = skip_space(spec, i)
    if i < len(spec):
        raise TimeParseError(spec, i, WHAT_MSG)
    if (ignored is not None and tm.mon == -1 and tm.mday == -1) or (
        tm.hour != -1 and tm.min == -1 and tm.mday == tm.mon == tm.year == -1
    ):
        raise TimeParseError(spec, i, MORE_MSG)
    _default_fields(tm)
    return tm


def _parse_clock(spec: str, i: int, tm: _CTm) -> int:
    """ ":MM[:SS.frac]" after the hour (an hour not given is 0) into TM; where it ends."""
    i, colon = parse_char(spec, i, ":")
    if not colon:
        return i
    tm.hour = max(tm.hour, 0)
    tm.min = 0
    i, v = parse_int(spec, i, 0, 59)
    tm.min = 0 if v is None else v
    i, colon = parse_char(spec, i, ":")
    if colon:
        i, d = parse_double(spec, i, 0.0, 61.0)
        if d is not None:
            if math.isnan(d):
                raise TimeParseError(spec, i, WHAT_MSG)
            tm.sec = int(d)
            tm.nsec = math.floor((Fraction(d) - tm.sec) * NSEC)
    return i


def _parse_meridian(spec: str, i: int, tm: _CTm) -> int:
    """ "am" or "pm" moves TM's hour to the 24-hour clock; after no hour, or one past 12,
    the word is left unread (so the text is refused).  Where it ends."""
    j, pm = parse_3char(spec, i, ("am", "pm"))
    if pm is None:
        return j
    if tm.hour > 12 or tm.hour == -1:
        return j - 2
    if pm and tm.hour < 12:
        tm.hour += 12
    elif not pm and tm.hour == 12:
        tm.hour = 0
    return j


def _default_fields(tm: _CTm) -> None:
    """Fields below the first one given start their period: January, the 1st, 00:00:00."""
    given = tm.year != -1
    for field, default in (("mon", 0), ("mday", 1), ("hour", 0), ("min", 0)):
        if getattr(tm, field) != -1:
            given = True
        elif given:
            setattr(tm, field, default)
    if tm.sec == -1 and given:
        tm.sec, tm.nsec = 0, 0


def ctime_to_ns(tm: _CTm, origin_ns: int, zone: tzinfo) -> int:
    """__pmConvertHighResTime for an absolute time: fields not given come from ORIGIN."""
    sec, nsec = divmod(origin_ns, NSEC)
    if tm.year != -1:
        return mktime(tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, zone) * NSEC + tm.nsec
    now = localtime(sec, zone)
    f = [now.year, now.mon, now.mday, now.hour, now.min, now.sec]
    given = (tm.mon, tm.mday, tm.hour, tm.min, tm.sec)
    for k, value in enumerate(given):  # the first field given, and all after it, replace
        if value != -1:
            if value < f[k + 1]:
                f[k] += 1  # a month before this one means next year, and so on down
            f[k + 1 :] = given[k:]
            nsec = tm.nsec
            break
    return mktime(*f, zone) * NSEC + nsec
