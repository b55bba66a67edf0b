"""__pmGetDate: libpcp's yacc grammar for free-form dates ("yesterday", "2026-11-21 10:00",
"last monday"), and its conversion to seconds since the epoch.

The grammar is parsed here by greedy descent (its shift/reduce conflicts all resolve by
shifting, which greed reproduces); the words and the lexer are in datewords.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo

from ..cnumbers import cdiv, cmod
from .datewords import Token, date_tokens
from .epoch import localtime


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

    def parse(self, toks: list[Token]) -> None:
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
        """One item of the grammar, chosen by its first token (the _ITEMS table)."""
        rule = _ITEMS.get(self.kind())
        if rule is None:
            raise _DateSyntax(self.kind())
        rule(self)

    def month_date(self) -> None:
        """date: tMONTH tUNUMBER [',' tUNUMBER] ("November 21, 2026")."""
        self.month = self.take()
        self.day = self.take("U")
        if self.kind() == ",":
            self.take()
            self.year = self.take("U")
        self.have_date += 1

    def weekday(self) -> None:
        """day: tDAY [','] ("monday")."""
        self.day_ordinal, self.day_number = 0, self.take()
        if self.kind() == ",":
            self.take()
        self.have_day += 1

    def zone_word(self) -> None:
        """zone: tZONE [tDST] or tDAYZONE ("est", "cet dst", "edt")."""
        kind = self.kind()
        self.zone, self.dst = self.take(), kind == "DAYZONE"
        if kind == "ZONE" and self.kind() == "DST":
            self.take()
            self.dst = True
        self.have_zone += 1

    def signed_rel(self) -> None:
        """rel: tSNUMBER unit ["ago"] ("-2 days")."""
        self.rel(self.take("S"))

    def unit_rel(self) -> None:
        """rel: unit ["ago"] ("day", "yesterday")."""
        self.rel(None)

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
            self.zone = -(cmod(offset, 100) + cdiv(offset, 100) * 60)
        else:
            self.meridian = 2
        self.have_time += 1

    def after_number(self) -> None:
        """An unsigned number starts a time, a day, a date or a relative unit, as the token
        after it says (the _AFTER_NUMBER table), or stands alone."""
        n = self.take()
        rule = _AFTER_NUMBER.get(self.kind(), _DateParse.bare_number)
        rule(self, n)

    def hour_meridian(self, n: int) -> None:
        """time: tUNUMBER tMERIDIAN ("3pm")."""
        self.hour, self.minutes, self.seconds, self.meridian = n, 0, 0, self.take()
        self.have_time += 1

    def colon_time(self, n: int) -> None:
        """time: tUNUMBER ':' tUNUMBER [':' tUNUMBER] [tMERIDIAN | tSNUMBER] ("10:00:01")."""
        self.take()
        minutes = self.take("U")
        if self.kind() == ":":
            self.take()
            self.clock(n, minutes, self.take("U"))
        else:
            self.clock(n, minutes, 0 if self.kind() != "S" else None)

    def ordinal_weekday(self, n: int) -> None:
        """day: tUNUMBER tDAY ("next monday", "last friday")."""
        self.day_ordinal, self.day_number = n, self.take()
        self.have_day += 1

    def slash_date(self, n: int) -> None:
        """date: tUNUMBER '/' tUNUMBER ['/' tUNUMBER] ("11/21", "11/21/2026", "2026/11/21")."""
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

    def iso_date(self, n: int) -> None:
        """date: tUNUMBER tSNUMBER tSNUMBER ("2026-11-21")."""
        self.year, self.month = n, -self.take()
        self.day = -self.take("S")
        self.have_date += 1

    def day_month(self, n: int) -> None:
        """date: tUNUMBER tMONTH [tSNUMBER | tUNUMBER] ("21 nov", "21 nov 2026", "21-nov-2026")."""
        self.month, self.day = self.take(), n
        if self.kind() == "S":
            self.year = -self.take()
        elif self.kind() == "U":
            self.year = self.take()
        self.have_date += 1

    def bare_number(self, n: int) -> None:
        """number: a year after a date and time, else a date (yyyymmdd) or a time (hhmm)."""
        if self.have_time and self.have_date and not self.have_rel:
            self.year = n
        elif n > 10000:
            self.have_date += 1
            self.day, self.month, self.year = n % 100, n // 100 % 100, n // 10000
        else:
            self.have_time += 1
            self.hour, self.minutes = (n, 0) if n < 100 else (n // 100, n % 100)
            self.seconds, self.meridian = 0, 2


_Rule = Callable[[_DateParse], None]
_NumberRule = Callable[[_DateParse, int], None]
#: the grammar's items, by their first token
_ITEMS: dict[str, _Rule] = {
    "U": _DateParse.after_number,
    "S": _DateParse.signed_rel,
    "MINUNIT": _DateParse.unit_rel,
    "SECUNIT": _DateParse.unit_rel,
    "MONUNIT": _DateParse.unit_rel,
    "DAUNIT": _DateParse.unit_rel,
    "MONTH": _DateParse.month_date,
    "DAY": _DateParse.weekday,
    "ZONE": _DateParse.zone_word,
    "DAYZONE": _DateParse.zone_word,
}
#: what an unsigned number starts, by the token after it (bare_number for any other)
_AFTER_NUMBER: dict[str, _NumberRule] = {
    "MER": _DateParse.hour_meridian,
    ":": _DateParse.colon_time,
    "DAY": _DateParse.ordinal_weekday,
    "/": _DateParse.slash_date,
    "S": _DateParse.iso_date,
    "MONTH": _DateParse.day_month,
    "MINUNIT": _DateParse.rel,
    "SECUNIT": _DateParse.rel,
    "MONUNIT": _DateParse.rel,
    "DAUNIT": _DateParse.rel,
}


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
    if dst or (dst is None and localtime(julian, zone).isdst):
        julian -= 3600
    return julian


def _dst_correct(start: int, future: int, zone: tzinfo) -> int:
    start_hour = (localtime(start, zone).hour + 1) % 24
    future_hour = (localtime(future, zone).hour + 1) % 24
    return (future - start) + (start_hour - future_hour) * 3600


def get_date(text: str, now_sec: int, zone: tzinfo) -> int | None:
    """__pmGetDate: seconds since the epoch for a free-form date, or None when it is not one."""
    tm = localtime(now_sec, zone)
    p = _DateParse(tm.year, tm.mon + 1, tm.mday, cdiv(-tm.gmtoff, 60) + 60 * tm.isdst)
    try:
        p.parse(date_tokens(text))
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
        at = localtime(start, zone)
        months = 12 * at.year + at.mon + p.rel_month
        ymd, hms = (months // 12, months % 12 + 1, at.mday), (at.hour, at.min, at.sec)
        future = _convert(p, ymd, hms, 2, None, zone)
        start += _dst_correct(start, future, zone)
    if p.have_day and not p.have_date:
        wday = localtime(start, zone).wday
        ordinal = p.day_ordinal if p.day_ordinal <= 0 else p.day_ordinal - 1
        offset = start + 86400 * ((p.day_number - wday + 7) % 7) + 7 * 86400 * ordinal
        start += _dst_correct(start, offset, zone)
    return start
