"""The PCP tools' time options, read as libpcp reads them: -t, -S/-T/-O/-A, -z/-Z.

`parse_interval` is pmParseInterval; `parse_time` and `parse_time_window` are
__pmParseHighResTime and pmParseHighResTimeWindow, including the free-form dates
libpcp falls back to (its getdate grammar: "yesterday", "2026-11-21 10:00",
"last monday"); `new_zone` and `tzinfo_for` turn a TZ value (a zone file name or a
POSIX rule such as "AEDT-11") into a tzinfo, as glibc reads $TZ, without touching the
process environment; `pm_ctime` and `format_stamp` print times as pmCtime, pmPrintStamp
and pmval do.  Times are integer nanoseconds since the epoch inside, so results agree
with libpcp's timespecs exactly; floats are offered for convenience.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from fractions import Fraction
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "NSEC", "PM_MAX_TIME_T", "PosixZone", "TimeParseError", "TimeWindow", "Timestamp", "Zone",
    "format_stamp", "new_zone", "parse_interval", "parse_interval_ns", "parse_posix_tz",
    "parse_time", "parse_time_window", "pcp_timezone", "pcp_zoneinfo", "pm_ctime", "tzinfo_for",
]  # fmt: skip

PM_MAX_TIME_T = 2**63 - 1  # libpcp's "no end" sentinel for a 64-bit time_t
NSEC = 1_000_000_000

#: A time given by a caller: seconds (int or float) or an exact (seconds, nanoseconds) pair.
Timestamp = float | int | tuple[int, int]
#: A zone given by a caller: None (the host's local zone), a TZ string (as pmNewZone), a tzinfo.
Zone = str | tzinfo | None

WHAT_MSG = "unexpected value"
MORE_MSG = "more information expected"
ALIGN_MSG = "alignment specified by -A switch could not be applied"
EMPTY_MSG = "Null or empty specification"

_SPACE = " \t\n\v\f\r"


def _alpha(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _digit(c: str) -> bool:
    return "0" <= c <= "9"


def _cdiv(a: int, b: int) -> int:
    """C's integer division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cint(v: int) -> int:
    """V stored in a C int (wraps at 32 bits, as libpcp's struct tm fields do)."""
    return (v + 2**31) % 2**32 - 2**31


class TimeParseError(ValueError):
    """Text libpcp would reject: which text, where (a character offset) and PCP's reason.

    str() is one line; `errmsg` is libpcp's own two-line text (the spec, then a caret
    under the offending character and "-- reason"), which the tools print verbatim.
    """

    def __init__(self, spec: str, offset: int, reason: str) -> None:
        self.spec = spec
        self.offset = offset
        self.reason = reason
        super().__init__(spec, offset, reason)

    @property
    def errmsg(self) -> str:
        pad = "".join(c if not ("!" <= c <= "~") else " " for c in self.spec[: self.offset])
        return f"{self.spec}\n{pad}^ -- {self.reason}\n"

    def __str__(self) -> str:
        if not self.spec:
            return self.reason
        rest = self.spec[self.offset :]
        where = f" at {rest!r}" if rest and self.offset else ""
        return f"{self.spec!r}: {self.reason}{where}"

    def __reduce__(self):
        return (type(self), (self.spec, self.offset, self.reason))


# --- scanning primitives, as libpcp's rtime.c scans (C locale) -----------------------

_STRTOD = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))"
)
_STRTOL = re.compile(r"[+-]?[0-9]+")


def _ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in _SPACE:
        i += 1
    return i


def _strtod(s: str, i: int) -> tuple[int, float | None]:
    m = _STRTOD.match(s, i)
    if m is None:
        return i, None
    text = m.group()
    if "x" in text or "X" in text:
        return m.end(), float.fromhex(text)
    return m.end(), float(text)


def _parse_double(s: str, i: int, lo: float, hi: float) -> tuple[int, float | None]:
    """parseDouble: skip blanks, strtod, range check; on failure stop after the blanks.

    A NaN passes the range check, as in C.
    """
    i = _ws(s, i)
    j, d = _strtod(s, i)
    if d is None or d < lo or d > hi:
        return i, None
    return j, d


def _parse_int(s: str, i: int, lo: int, hi: int) -> tuple[int, int | None]:
    i = _ws(s, i)
    m = _STRTOL.match(s, i)
    if m is None or not lo <= int(m.group()) <= hi:
        return i, None
    return m.end(), int(m.group())


def _parse_char(s: str, i: int, c: str) -> tuple[int, bool]:
    i = _ws(s, i)
    if i < len(s) and s[i] == c:
        return i + 1, True
    return i, False


def _parse_3char(s: str, i: int, codes: tuple[str, ...]) -> tuple[int, int | None]:
    """parse3char: up to three letters, lower-cased, looked up in CODES."""
    i = _ws(s, i)
    j, code = i, ""
    while j < len(s) and _alpha(s[j]) and len(code) < 3:
        code += s[j].lower()
        j += 1
    if code in codes:
        return j, codes.index(code)
    return i, None


def _c_string(text: str) -> str:
    return text.split("\0", 1)[0]


# --- intervals (pmParseInterval) -----------------------------------------------------

_UNITS: tuple[tuple[str, Fraction], ...] = (
    ("nanosecond", Fraction(1, 10**9)),
    ("microsecond", Fraction(1, 10**6)),
    ("millisecond", Fraction(1, 1000)),
    ("second", Fraction(1)),
    ("minute", Fraction(60)),
    ("hour", Fraction(3600)),
    ("day", Fraction(86400)),
    ("msec", Fraction(1, 1000)),
    ("usec", Fraction(1, 10**6)),
    ("nsec", Fraction(1, 10**9)),
    ("sec", Fraction(1)),
    ("min", Fraction(60)),
    ("hr", Fraction(3600)),
    ("s", Fraction(1)),
    ("m", Fraction(60)),
    ("h", Fraction(3600)),
    ("d", Fraction(86400)),
)


def parse_interval(text: str) -> float:
    """Seconds in TEXT ("2", "1.5h", "1 min 30 sec", "100msec"), as pmParseInterval reads it.

    Raises TimeParseError with PCP's reason ("unexpected value", "Null or empty
    specification") and the offset libpcp points its caret at.
    """
    spec = _c_string(text)
    if not spec:
        raise TimeParseError("", 0, EMPTY_MSG)
    i, sec = 0, 0.0
    while i < len(spec):
        i, d = _parse_double(spec, i, 0.0, float(PM_MAX_TIME_T))
        if d is None:
            break
        i = _ws(spec, i)
        if i == len(spec):
            sec += d
            break
        j = i
        while j < len(spec) and _alpha(spec[j]):
            j += 1
        word = spec[i:j]
        if not word:
            sec += d
        else:
            if len(word) > 1 and word[-1] in "sS":
                word = word[:-1]
            scale = next((f for name, f in _UNITS if name == word.lower()), None)
            if scale is None:
                break
            # libpcp multiplies, or divides by the reciprocal, in double precision
            sec += d * int(scale) if scale >= 1 else d / int(1 / scale)
        i = j
    if i < len(spec):
        raise TimeParseError(spec, i, WHAT_MSG)
    return sec


def _real_to_ns(secs: float) -> int:
    """pmtimespecFromReal: whole seconds truncated, the fraction rounded to nanoseconds."""
    whole = int(secs)
    frac = Fraction(secs) - whole
    return whole * NSEC + math.floor(frac * NSEC + Fraction(1, 2))


def parse_interval_ns(text: str) -> int:
    """Nanoseconds in TEXT, as pmParseHighResInterval gives them (its timespec, flattened).

    A NaN ("nan sec") is refused here; libpcp accepts it and converts it to garbage.
    """
    secs = parse_interval(text)
    if math.isnan(secs):
        raise TimeParseError(_c_string(text), 0, WHAT_MSG)
    return _real_to_ns(secs)


# --- zones -----------------------------------------------------------------------------

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
def _host_localtime() -> tzinfo:
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
            return _host_localtime()
    return _tz_value(_c_string(tz))


def new_zone(tz: str) -> tzinfo:
    """The zone pmNewZone sets for TZ (-Z, or the source's zone for -z).

    Like libpcp, a three-character TZ gets "+0" appended, so "UTC" stays UTC and "EST"
    means UTC labelled EST (not the zone file named EST).
    """
    tz = _c_string(tz)
    return tzinfo_for(tz + "+0" if len(tz.encode()) == 3 else tz)


def _zone(tz: Zone) -> tzinfo:
    if tz is None:
        return tzinfo_for(None)
    return new_zone(tz) if isinstance(tz, str) else tz


class _Tm(NamedTuple):
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


def _localtime(sec: int, zone: tzinfo) -> _Tm:
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
    return _Tm(
        dt.year + 400 * cycles, dt.month - 1, dt.day, *clock, wday, bool(dt.dst()), gmtoff, name
    )


def _mktime(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, zone: tzinfo) -> int:
    """mktime with tm_isdst = -1: out-of-range fields carry over, as the C library does."""
    y, m = divmod(year * 12 + mon, 12)
    wall = datetime(y, m + 1, 1) + timedelta(days=mday - 1, hours=hour, minutes=mins, seconds=sec)
    off = wall.replace(tzinfo=zone).utcoffset() or timedelta(0)
    return (wall - datetime(1970, 1, 1) - off) // timedelta(seconds=1)


def pm_ctime(t: Timestamp, tz: Zone = None) -> str:
    """T as pmCtime prints it in zone TZ, "Sat Nov 21 10:00:00 2026" (pmCtime adds a newline)."""
    tm = _localtime(_ns(t) // NSEC, _zone(tz))
    day, month = _WDAYS[tm.wday].title(), _MONTHS[tm.mon].title()
    return f"{day} {month}{tm.mday:3d} {tm.hour:02d}:{tm.min:02d}:{tm.sec:02d} {tm.year}"


def format_stamp(t: Timestamp, tz: Zone = None, *, digits: int = 3, date: bool = False) -> str:
    """T's time of day in zone TZ, "10:00:01.123", its fraction truncated to DIGITS.

    digits=3 is pmPrintStamp and pmval's default; 6 is __pmPrintTimeval; 9 is
    pmPrintHighResStamp.  date=True is pmval -X ("Sat Nov 21 10:00:01.123456 2026",
    with digits=6; -XX uses 9).
    """
    ns = _ns(t)
    tm = _localtime(ns // NSEC, _zone(tz))
    text = f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}"
    if digits:
        text += f".{ns % NSEC // 10 ** (9 - digits):0{digits}d}"
    if date:
        ctime = pm_ctime(ns // NSEC, tz)
        text = f"{ctime[:10]} {text} {ctime[20:24]}"
    return text


def format_stamps(times_ns: Sequence[int], tz: Zone = None, *, digits: int = 3) -> list[str]:
    """format_stamp for many times at once (int ns): the zone is asked once per quarter
    hour the times fall in, and again per time only where its offset changes inside one."""
    zone = _zone(tz)
    offsets: dict[int, int | None] = {}
    out = []
    scale = 10 ** (9 - digits)
    for ns in times_ns:
        sec = ns // NSEC
        quarter = sec - sec % 900
        off = offsets.get(quarter, -1)
        if off == -1:
            lo, hi = _localtime(quarter, zone).gmtoff, _localtime(quarter + 899, zone).gmtoff
            off = offsets[quarter] = lo if lo == hi else None
        if off is None:
            off = _localtime(sec, zone).gmtoff
        day = (sec + off) % 86400
        text = f"{day // 3600:02d}:{day // 60 % 60:02d}:{day % 60:02d}"
        if digits:
            text += f".{ns % NSEC // scale:0{digits}d}"
        out.append(text)
    return out


def _squash(zone: tzinfo, now: int) -> str:
    """__pmSquashTZ: the zone's name at NOW and its offset west of UTC in hours[:minutes]."""
    tm = _localtime(now, zone)
    west = -tm.gmtoff
    if west == 0:
        return tm.name[:40]
    hours, mins = _cdiv(west, 3600), abs(_cdiv(west - _cdiv(west, 3600) * 3600, 60))
    if mins == 0:
        return f"{tm.name[:37]}{hours:+d}"
    return f"{tm.name[:34]}{hours:+d}:{mins:02d}"


def pcp_timezone(now: Timestamp | None = None, environ: Mapping[str, str] = os.environ) -> str:
    """This host's zone as PCP records it (__pmTimezone: pmcd.timezone, archive labels).

    $TZ itself when it is set, has no leading colon and fits in 40 characters; otherwise
    the zone in force at NOW squashed to "NAME±H[:MM]", counted west of UTC ("AEDT-11",
    "UTC", "IST-5:30").
    """
    when = _ns(now) // NSEC if now is not None else int(time.time())
    tz = environ.get("TZ")
    if tz is None or tz.startswith(":"):
        return _squash(tzinfo_for(tz) if tz is not None else _host_localtime(), when)
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


# --- absolute and relative times (__pmParseHighResTime) --------------------------------

_WDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


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


def _parse_ctime(spec: str) -> _CTm:
    """__pmParseCtime: "[Ddd] [Mmm] [DD] [HH[:MM[:SS.frac]]] [am|pm] [YYYY]", in that order."""
    tm = _CTm()
    i, ignored = _parse_3char(spec, 0, _WDAYS)
    i, mon = _parse_3char(spec, i, _MONTHS)
    tm.mon = -1 if mon is None else mon
    i, v = _parse_int(spec, i, 0, 31)
    tm.mday = -1 if v is None else v
    i, v = _parse_int(spec, i, 0, 23)
    tm.hour = -1 if v is None else v
    if tm.mday == 0 and tm.hour != -1:
        tm.mday = -1
    if tm.hour == -1 and 0 <= tm.mday <= 23 and (tm.mon == -1 or spec.startswith(":", i)):
        tm.hour, tm.mday = tm.mday, -1
    i, colon = _parse_char(spec, i, ":")
    if colon:
        tm.hour = max(tm.hour, 0)
        tm.min = 0
        i, v = _parse_int(spec, i, 0, 59)
        tm.min = 0 if v is None else v
        i, colon = _parse_char(spec, i, ":")
        if colon:
            i, d = _parse_double(spec, i, 0.0, 61.0)
            if d is not None:
                if math.isnan(d):
                    raise TimeParseError(spec, i, WHAT_MSG)
                tm.sec = int(d)
                tm.nsec = math.floor((Fraction(d) - tm.sec) * NSEC)
    j, pm = _parse_3char(spec, i, ("am", "pm"))
    if pm is not None:
        if tm.hour > 12 or tm.hour == -1:
            i = j - 2
        else:
            i = j
            if pm and tm.hour < 12:
                tm.hour += 12
            elif not pm and tm.hour == 12:
                tm.hour = 0
    else:
        i = j
    i, year = _parse_int(spec, i, 1900, 9999)
    tm.year = -1 if year is None else year
    i = _ws(spec, i)
    if i < len(spec):
        raise TimeParseError(spec, i, WHAT_MSG)
    if (ignored is not None and tm.mon == -1 and tm.mday == -1) or (
        tm.hour != -1 and tm.min == -1 and tm.mday == tm.mon == tm.year == -1
    ):
        raise TimeParseError(spec, i, MORE_MSG)
    given = tm.year != -1
    for field, default in (("mon", 0), ("mday", 1), ("hour", 0), ("min", 0)):
        if getattr(tm, field) != -1:
            given = True
        elif given:
            setattr(tm, field, default)
    if tm.sec == -1 and given:
        tm.sec, tm.nsec = 0, 0
    return tm


def _ctime_to_ns(tm: _CTm, origin_ns: int, zone: tzinfo) -> int:
    """__pmConvertHighResTime for an absolute time: fields not given come from ORIGIN."""
    sec, nsec = divmod(origin_ns, NSEC)
    if tm.year != -1:
        return _mktime(tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, zone) * NSEC + tm.nsec
    now = _localtime(sec, zone)
    f = [now.year, now.mon, now.mday, now.hour, now.min, now.sec]
    given = (tm.mon, tm.mday, tm.hour, tm.min, tm.sec)
    for k, value in enumerate(given):  # the first field given, and all after it, replace
        if value != -1:
            if value < f[k + 1]:
                f[k] += 1  # a month before this one means next year, and so on down
            f[k + 1 :] = given[k:]
            nsec = tm.nsec
            break
    return _mktime(*f, zone) * NSEC + nsec


# getdate: libpcp's yacc grammar for free-form dates, parsed here by greedy descent (the
# grammar's shift/reduce conflicts all resolve by shifting, which greed reproduces).

_MONTH_DAY = (
    ("january", "MONTH", 1), ("february", "MONTH", 2), ("march", "MONTH", 3),
    ("april", "MONTH", 4), ("may", "MONTH", 5), ("june", "MONTH", 6), ("july", "MONTH", 7),
    ("august", "MONTH", 8), ("september", "MONTH", 9), ("sept", "MONTH", 9),
    ("october", "MONTH", 10), ("november", "MONTH", 11), ("december", "MONTH", 12),
    ("sunday", "DAY", 0), ("monday", "DAY", 1), ("tuesday", "DAY", 2), ("tues", "DAY", 2),
    ("wednesday", "DAY", 3), ("wednes", "DAY", 3), ("thursday", "DAY", 4),
    ("thur", "DAY", 4), ("thurs", "DAY", 4), ("friday", "DAY", 5), ("saturday", "DAY", 6),
)  # fmt: skip
_UNIT_WORDS = {
    "year": ("MONUNIT", 12), "month": ("MONUNIT", 1), "fortnight": ("MINUNIT", 14 * 1440),
    "week": ("MINUNIT", 7 * 1440), "day": ("MINUNIT", 1440), "hour": ("MINUNIT", 60),
    "minute": ("MINUNIT", 1), "min": ("MINUNIT", 1), "second": ("SECUNIT", 1),
    "sec": ("SECUNIT", 1),
}  # fmt: skip
_OTHER_WORDS = {
    "tomorrow": ("DAUNIT", 1440), "yesterday": ("DAUNIT", -1440), "today": ("DAUNIT", 0),
    "now": ("MINUNIT", 0), "last": ("U", -1), "this": ("MINUNIT", 0), "next": ("U", 2),
    "first": ("U", 1), "third": ("U", 3), "fourth": ("U", 4), "fifth": ("U", 5),
    "sixth": ("U", 6), "seventh": ("U", 7), "eighth": ("U", 8), "ninth": ("U", 9),
    "tenth": ("U", 10), "eleventh": ("U", 11), "twelfth": ("U", 12), "ago": ("AGO", 1),
}  # fmt: skip
# zone words: minutes west of UTC, and whether the zone is a daylight one
_ZONE_WORDS = {
    "gmt": 0, "ut": 0, "utc": 0, "wet": 0, "bst": (0, True), "wat": 60, "at": 120,
    "ast": 240, "adt": (240, True), "est": 300, "edt": (300, True), "cst": 360,
    "cdt": (360, True), "mst": 420, "mdt": (420, True), "pst": 480, "pdt": (480, True),
    "yst": 540, "ydt": (540, True), "hst": 600, "hdt": (600, True), "cat": 600, "ahst": 600,
    "nt": 660, "idlw": 720, "cet": -60, "met": -60, "mewt": -60, "mest": (-60, True),
    "swt": -60, "sst": (-60, True), "fwt": -60, "fst": (-60, True), "eet": -120, "bt": -180,
    "zp4": -240, "zp5": -300, "zp6": -360, "wast": -420, "wadt": (-420, True), "cct": -480,
    "jst": -540, "east": -600, "eadt": (-600, True), "gst": -600, "nzt": -720,
    "nzst": -720, "nzdt": (-720, True), "idle": -720,
}  # fmt: skip
# the military letters: a..m (no j) are 1..12 hours west, n..y 1..12 east, z is UTC
_MILITARY = {c: 60 * (k + 1) for k, c in enumerate("abcdefghiklm")}
_MILITARY |= {c: -60 * (k + 1) for k, c in enumerate("nopqrstuvwxy")} | {"z": 0}

_Token = tuple[str, int]


def _zone_token(word: str) -> _Token | None:
    west = _ZONE_WORDS.get(word)
    if west is None:
        return None
    return ("DAYZONE", west[0]) if isinstance(west, tuple) else ("ZONE", west)


def _lookup_word(word: str) -> _Token:
    """LookupWord: what a run of letters (and dots) means to the date grammar."""
    word = word.lower()
    if word in ("am", "a.m."):
        return ("MER", 0)
    if word in ("pm", "p.m."):
        return ("MER", 1)
    if len(word) == 4 and word[3] == ".":
        word = word[:3]
    for name, kind, value in _MONTH_DAY:
        if (name[:3] == word) if len(word) == 3 else name == word:
            return (kind, value)
    found = _zone_token(word)
    if found:
        return found
    if word == "dst":
        return ("DST", 0)
    if word in _UNIT_WORDS:
        return _UNIT_WORDS[word]
    if word.endswith("s") and word[:-1] in _UNIT_WORDS:
        return _UNIT_WORDS[word[:-1]]
    if word in _OTHER_WORDS:
        return _OTHER_WORDS[word]
    if len(word) == 1 and _alpha(word) and word in _MILITARY:
        return ("ZONE", _MILITARY[word])
    if "." in word:
        found = _zone_token(word.replace(".", ""))
        if found:
            return found
    return ("ID", 0)


def _date_tokens(s: str) -> list[_Token]:
    """getdate's yylex: numbers (a sign makes them signed), words, (comments) skipped."""
    out: list[_Token] = []
    i = 0
    while True:
        i = _ws(s, i)
        c = s[i] if i < len(s) else ""
        if _digit(c) or c in ("-", "+"):
            sign = 0
            if c in "-+":
                sign = -1 if c == "-" else 1
                i += 1
                if i >= len(s) or not _digit(s[i]):
                    continue
            j = i
            while j < len(s) and _digit(s[j]):
                j += 1
            value = int(s[i:j])
            out.append(("S", sign * value) if sign else ("U", value))
            i = j
        elif _alpha(c):
            j = i
            while j < len(s) and (_alpha(s[j]) or s[j] == "."):
                j += 1
            out.append(_lookup_word(s[i:j][:19]))
            i = j
        elif c == "(":
            depth = 0
            while True:
                c = s[i] if i < len(s) else ""
                i += 1
                if not c:
                    out.append(("END", 0))
                    return out
                depth += (c == "(") - (c == ")")
                if depth <= 0:
                    break
        elif not c:
            out.append(("END", 0))
            return out
        else:
            out.append((c, 0))
            i += 1


class _DateSyntax(Exception):
    """The text is not in getdate's grammar."""


@dataclass
class _DateParse:
    """The grammar's state (libpcp's PARSER); zone is minutes west, dst None for "maybe"."""

    year: int
    month: int
    day: int
    zone: int
    dst: bool | None = None
    hour: int = 0
    minutes: int = 0
    seconds: int = 0
    meridian: int = 2  # 0 am, 1 pm, 2 the 24-hour clock
    day_ordinal: int = 0
    day_number: int = 0
    rel_seconds: int = 0
    rel_month: int = 0
    have_time: int = 0
    have_zone: int = 0
    have_date: int = 0
    have_day: int = 0
    have_rel: int = 0
    have_align: int = 0

    def parse(self, toks: list[_Token]) -> None:
        self.toks, self.i = toks, 0
        while self.kind() != "END":
            self.item()

    def kind(self) -> str:
        return self.toks[self.i][0]

    def take(self, *kinds: str) -> int:
        kind, value = self.toks[self.i]
        if kinds and kind not in kinds:
            raise _DateSyntax(kind)
        self.i += 1
        return value

    def item(self) -> None:
        kind = self.kind()
        if kind == "U":
            self.after_number()
        elif kind == "S" or kind in ("MINUNIT", "SECUNIT", "MONUNIT", "DAUNIT"):
            self.rel(self.take("S") if kind == "S" else None)
        elif kind == "MONTH":
            self.month = self.take()
            self.day = self.take("U")
            if self.kind() == ",":
                self.take()
                self.year = self.take("U")
            self.have_date += 1
        elif kind == "DAY":
            self.day_ordinal, self.day_number = 0, self.take()
            if self.kind() == ",":
                self.take()
            self.have_day += 1
        elif kind in ("ZONE", "DAYZONE"):
            self.zone, self.dst = self.take(), kind == "DAYZONE"
            if kind == "ZONE" and self.kind() == "DST":
                self.take()
                self.dst = True
            self.have_zone += 1
        else:
            raise _DateSyntax(kind)

    def rel(self, count: int | None) -> None:
        kind = self.kind()
        unit = self.take("MINUNIT", "SECUNIT", "MONUNIT", "DAUNIT")
        n = 1 if count is None else count
        if kind == "MONUNIT":
            self.rel_month += n * unit
        elif kind == "SECUNIT":
            self.rel_seconds += n
        else:
            self.rel_seconds += n * unit * 60
            self.have_align += kind == "DAUNIT"
        if self.kind() == "AGO":
            self.take()
            self.rel_seconds, self.rel_month = -self.rel_seconds, -self.rel_month
        self.have_rel += 1

    def clock(self, hour: int, minutes: int, seconds: int | None) -> None:
        self.hour, self.minutes = hour, minutes
        if seconds is not None:
            self.seconds = seconds
        if self.kind() == "MER":
            self.meridian = self.take()
        elif self.kind() == "S":
            offset = self.take()
            self.meridian, self.dst = 2, False
            self.zone = -(_cmod(offset, 100) + _cdiv(offset, 100) * 60)
        else:
            self.meridian = 2
        self.have_time += 1

    def after_number(self) -> None:
        """An unsigned number starts a time, a day, a date, a relative unit or stands alone."""
        n = self.take()
        kind = self.kind()
        if kind == "MER":
            self.hour, self.minutes, self.seconds, self.meridian = n, 0, 0, self.take()
            self.have_time += 1
        elif kind == ":":
            self.take()
            minutes = self.take("U")
            if self.kind() == ":":
                self.take()
                self.clock(n, minutes, self.take("U"))
            else:
                self.clock(n, minutes, 0 if self.kind() != "S" else None)
        elif kind == "DAY":
            self.day_ordinal, self.day_number = n, self.take()
            self.have_day += 1
        elif kind == "/":
            self.take()
            second = self.take("U")
            if self.kind() == "/":
                self.take()
                third = self.take("U")
                if n >= 100:
                    self.year, self.month, self.day = n, second, third
                else:
                    self.month, self.day, self.year = n, second, third
            else:
                self.month, self.day = n, second
            self.have_date += 1
        elif kind == "S":
            self.year, self.month = n, -self.take()
            self.day = -self.take("S")
            self.have_date += 1
        elif kind == "MONTH":
            self.month, self.day = self.take(), n
            if self.kind() == "S":
                self.year = -self.take()
            elif self.kind() == "U":
                self.year = self.take()
            self.have_date += 1
        elif kind in ("MINUNIT", "SECUNIT", "MONUNIT", "DAUNIT"):
            self.rel(n)
        elif self.have_time and self.have_date and not self.have_rel:
            self.year = n
        elif n > 10000:
            self.have_date += 1
            self.day, self.month, self.year = n % 100, n // 100 % 100, n // 10000
        else:
            self.have_time += 1
            self.hour, self.minutes = (n, 0) if n < 100 else (n // 100, n % 100)
            self.seconds, self.meridian = 0, 2


def _cmod(a: int, b: int) -> int:
    return a - _cdiv(a, b) * b


def _to_seconds(hours: int, minutes: int, seconds: int, meridian: int) -> int:
    if not (0 <= minutes <= 59 and 0 <= seconds <= 59):
        return -1
    if meridian == 2:
        return (hours * 60 + minutes) * 60 + seconds if 0 <= hours <= 23 else -1
    if not 1 <= hours <= 12:
        return -1
    return ((hours % 12 + 12 * meridian) * 60 + minutes) * 60 + seconds


def _convert(
    p: _DateParse,
    ymd: tuple[int, int, int],
    hms: tuple[int, int, int],
    meridian: int,
    dst: bool | None,
    zone: tzinfo,
) -> int:
    """getdate's Convert: its own calendar sum, with the parsed zone and a one-hour DST."""
    year, month, day = ymd
    year = abs(year)
    year += 2000 if year < 69 else 1900 if year < 100 else 0
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days_in = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if year < 1970 or not 1 <= month <= 12 or not 1 <= day <= days_in[month - 1]:
        return -1
    julian = day - 1 + sum(days_in[: month - 1])
    julian += 365 * (year - 1970) + (year - 1) // 4 - 1969 // 4  # every 4th year a leap
    julian = julian * 86400 + p.zone * 60
    tod = _to_seconds(*hms, meridian)
    if tod < 0:
        return -1
    julian += tod
    if dst or (dst is None and _localtime(julian, zone).isdst):
        julian -= 3600
    return julian


def _dst_correct(start: int, future: int, zone: tzinfo) -> int:
    start_hour = (_localtime(start, zone).hour + 1) % 24
    future_hour = (_localtime(future, zone).hour + 1) % 24
    return (future - start) + (start_hour - future_hour) * 3600


def _get_date(text: str, now_sec: int, zone: tzinfo) -> int | None:
    """__pmGetDate: seconds since the epoch for a free-form date, or None when it is not one."""
    tm = _localtime(now_sec, zone)
    p = _DateParse(tm.year, tm.mon + 1, tm.mday, _cdiv(-tm.gmtoff, 60) + 60 * tm.isdst)
    try:
        p.parse(_date_tokens(text))
    except _DateSyntax:
        return None
    if max(p.have_time, p.have_zone, p.have_date, p.have_day, p.have_align) > 1:
        return None
    if p.have_date or p.have_time or p.have_day or p.have_align:
        ymd, hms = (p.year, p.month, p.day), (p.hour, p.minutes, p.seconds)
        start = _convert(p, ymd, hms, p.meridian, p.dst, zone)
        if start < 0:
            return None
    else:
        start = now_sec
        if not p.have_rel:
            start -= (tm.hour * 60 + tm.min) * 60 + tm.sec
    start += p.rel_seconds
    if p.rel_month:
        at = _localtime(start, zone)
        months = 12 * at.year + at.mon + p.rel_month
        ymd, hms = (months // 12, months % 12 + 1, at.mday), (at.hour, at.min, at.sec)
        future = _convert(p, ymd, hms, 2, None, zone)
        start += _dst_correct(start, future, zone)
    if p.have_day and not p.have_date:
        wday = _localtime(start, zone).wday
        ordinal = p.day_ordinal if p.day_ordinal <= 0 else p.day_ordinal - 1
        offset = start + 86400 * ((p.day_number - wday + 7) % 7) + 7 * 86400 * ordinal
        start += _dst_correct(start, offset, zone)
    return start


_RELATIVE_WORDS = re.compile(" (?:year|month|fortnight|week|day|hour|min|sec)", re.I | re.A)
_BACKWARD_WORDS = re.compile("last|ago", re.I | re.A)


def _relative_direction(text: str) -> int:
    """libpcp's guess whether a free-form date counts back from the end (-1), on from the
    start (1), or from now (0)."""
    text = text[_ws(text, 0) :]
    if not _RELATIVE_WORDS.search(text):
        return 0
    return -1 if _BACKWARD_WORDS.search(text) or text.startswith("-") else 1


def _ns(t: Timestamp) -> int:
    if isinstance(t, tuple):
        return t[0] * NSEC + t[1]
    if isinstance(t, int):
        return t * NSEC
    return math.floor(Fraction(t) * NSEC + Fraction(1, 2))


def parse_time(
    text: str,
    start: Timestamp,
    end: Timestamp | None = None,
    *,
    tz: Zone = None,
    now: Timestamp | None = None,
) -> int:
    """The time TEXT names, in nanoseconds since the epoch, as __pmParseHighResTime reads it.

    "@" and a ctime-style time is absolute (fields left out come from START); "-" and an
    interval counts back from END (only when there is one); "+" or a bare interval counts
    on from START; anything else is tried as a free-form date.  END None is an open-ended
    (live) source.  TZ is the zone times are read in; NOW is what a date counts from when
    it is relative to neither (default: the clock).  Raises TimeParseError with the
    message libpcp reports when nothing fits.
    """
    end_ns = PM_MAX_TIME_T * NSEC if end is None else _ns(end)
    now_ns = _ns(now) if now is not None else time.time_ns()
    return _parse_time(_c_string(text), _ns(start), end_ns, _zone(tz), now_ns)


def _parse_time(spec: str, start_ns: int, end_ns: int, zone: tzinfo, now_ns: int) -> int:
    if end_ns // NSEC >= PM_MAX_TIME_T:
        end_ns = PM_MAX_TIME_T * NSEC + NSEC - 1
    error: TimeParseError
    i, at = _parse_char(spec, 0, "@")
    if at:
        try:
            return _ctime_to_ns(_parse_ctime(spec[i:]), start_ns, zone)
        except TimeParseError as e:
            error = e
    else:
        back = False
        if end_ns // NSEC < PM_MAX_TIME_T:
            i, back = _parse_char(spec, i, "-")
        if not back:
            i, _ = _parse_char(spec, i, "+")
        try:
            interval = parse_interval_ns(spec[i:])
        except TimeParseError as e:
            error = e
        else:
            sec, nsec = divmod(interval, NSEC)
            interval = _cint(sec) * NSEC + nsec
            return end_ns - interval if back else start_ns + interval
    i, _ = _parse_char(spec, i, "@")
    rest = spec[i:]
    direction = _relative_direction(rest)
    if direction == 0:
        base = now_ns
    elif direction < 0 and end_ns // NSEC < PM_MAX_TIME_T:
        base = end_ns
    else:
        base = start_ns
    try:
        found = _get_date(rest, base // NSEC, zone)
    except (OverflowError, ValueError):  # beyond the years a datetime can hold
        found = None
    if found is None:
        raise error
    return found * NSEC


@dataclass(frozen=True)
class TimeWindow:
    """A time window in nanoseconds since the epoch, as pmParseHighResTimeWindow gives it.

    warning is libpcp's text when -A could not be applied (the window is still usable).
    """

    start_ns: int
    end_ns: int
    origin_ns: int
    warning: str | None = None

    @property
    def open_ended(self) -> bool:
        return self.end_ns // NSEC >= PM_MAX_TIME_T

    @property
    def start(self) -> float:
        return self.start_ns / NSEC

    @property
    def end(self) -> float:
        """The end in seconds; infinity for an open-ended (live) window."""
        return math.inf if self.open_ended else self.end_ns / NSEC

    @property
    def origin(self) -> float:
        return self.origin_ns / NSEC


def parse_time_window(
    start: str | None,
    end: str | None,
    align: str | None,
    offset: str | None,
    log_start: Timestamp,
    log_end: Timestamp | None = None,
    *,
    tz: Zone = None,
    now: Timestamp | None = None,
) -> TimeWindow:
    """The window -S START, -T END, -A ALIGN and -O OFFSET give within [LOG_START, LOG_END].

    For an archive, LOG_START and LOG_END are its first and last record; for a live
    source LOG_START is now and LOG_END is None.  -S is clamped to the start, -T to the
    end, -O to the window; -A rounds -S (and -O) up to a multiple of the interval.
    Raises TimeParseError as pmParseHighResTimeWindow fails.
    """
    zone = _zone(tz)
    clock = _ns(now) if now is not None else time.time_ns()
    first = _ns(log_start)
    last = PM_MAX_TIME_T * NSEC if log_end is None else _ns(log_end)
    lo = first
    hi = last + NSEC - 1 if last // NSEC == PM_MAX_TIME_T else last
    warning = None
    if start is not None:
        lo = _parse_time(_c_string(start), lo, hi, zone, clock)
    lo = max(lo, first)
    delta = 0
    if align is not None:
        delta = parse_interval_ns(align)
        if delta == 0:
            raise TimeParseError(_c_string(align), 0, ALIGN_MSG)
        aligned = _round_up(lo, delta)
        if first <= aligned <= last:
            lo = aligned
        else:
            warning = TimeParseError(_c_string(align), 0, ALIGN_MSG).errmsg
    if end is not None:
        hi = _parse_time(_c_string(end), lo, hi, zone, clock)
    hi = min(hi, last)
    origin = lo
    if offset is not None:
        origin = _parse_time(_c_string(offset), lo, hi, zone, clock)
        origin = lo if origin < lo else hi if origin > hi else origin
        if align is not None:
            aligned = _round_up(origin, delta)
            if aligned > _i64(hi):  # libpcp's nanosecond sum wraps for an open end
                aligned -= delta
            if lo <= aligned <= hi:
                origin = aligned
            else:
                warning = TimeParseError(_c_string(align), 0, ALIGN_MSG).errmsg
    return TimeWindow(lo, hi, origin, warning)


def _i64(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def _round_up(t: int, delta: int) -> int:
    down = _cdiv(t, delta) * delta
    return down + delta if down < t else down
