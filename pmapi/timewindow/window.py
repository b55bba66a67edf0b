"""Times and windows as the tools' -S, -T, -O and -A give them: __pmParseHighResTime and
pmParseHighResTimeWindow."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from datetime import tzinfo

from ..cnumbers import cdiv, cstring, int32, int64
from .ctime import ctime_to_ns, parse_ctime
from .epoch import NSEC, PM_MAX_TIME_T, Timestamp, to_ns
from .interval import parse_interval_ns
from .scanning import ALIGN_MSG, TimeParseError, parse_char, skip_space
from .tz import Zone, resolve_zone

_RELATIVE_WORDS = re.compile(" (?:year|month|fortnight|week|day|hour|min|sec)", re.I | re.A)
_BACKWARD_WORDS = re.compile("last|ago", re.I | re.A)


def _relative_direction(text: str) -> int:
    """libpcp's guess whether a free-form date counts back from the end (-1), on from the
    start (1), or from now (0)."""
    text = text[skip_space(text, 0) :]
    if not _RELATIVE_WORDS.search(text):
        return 0
    return -1 if _BACKWARD_WORDS.search(text) or text.startswith("-") else 1


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
    end_ns = PM_MAX_TIME_T * NSEC if end is None else to_ns(end)
    now_ns = to_ns(now) if now is not None else time.time_ns()
    return _parse_time(cstring(text), to_ns(start), end_ns, resolve_zone(tz), now_ns)


def _parse_time(spec: str, start_ns: int, end_ns: int, zone: tzinfo, now_ns: int) -> int:
    """parse_time on C text and nanoseconds (END at PM_MAX_TIME_T seconds is open)."""
    if end_ns // NSEC >= PM_MAX_TIME_T:
        end_ns = PM_MAX_TIME_T * NSEC + NSEC - 1
    error: TimeParseError
    i, at = parse_char(spec, 0, "@")
    if at:
        try:
            return ctime_to_ns(parse_ctime(spec[i:]), start_ns, zone)
        except TimeParseError as e:
            error = e
    else:
        back = False
        if end_ns // NSEC < PM_MAX_TIME_T:
            i, back = parse_char(spec, i, "-")
        if not back:
            i, _ = parse_char(spec, i, "+")
        try:
            interval = parse_interval_ns(spec[i:])
        except TimeParseError as e:
            error = e
        else:
            sec, nsec = divmod(interval, NSEC)
            interval = int32(sec) * NSEC + nsec
            return end_ns - interval if back else start_ns + interval
    i, _ = parse_char(spec, i, "@")
    found = _free_form(spec[i:], start_ns, end_ns, zone, now_ns)
    if found is None:
        raise error
    return found


def _free_form(text: str, start_ns: int, end_ns: int, zone: tzinfo, now_ns: int) -> int | None:
    """TEXT read by the getdate grammar, counting from now, the start or the end as
    _relative_direction guesses; None when it is not a date."""
    from .getdate import get_date  # imported here: most times never need the grammar

    direction = _relative_direction(text)
    if direction == 0:
        base = now_ns
    elif direction < 0 and end_ns // NSEC < PM_MAX_TIME_T:
        base = end_ns
    else:
        base = start_ns
    try:
        found = get_date(text, base // NSEC, zone)
    except (OverflowError, ValueError):  # beyond the years a datetime can hold
        return None
    return None if found is None else found * NSEC


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
    zone = resolve_zone(tz)
    clock = to_ns(now) if now is not None else time.time_ns()
    first = to_ns(log_start)
    last = PM_MAX_TIME_T * NSEC if log_end is None else to_ns(log_end)
    lo = first
    hi = last + NSEC - 1 if last // NSEC == PM_MAX_TIME_T else last
    warning = None
    if start is not None:
        lo = _parse_time(cstring(start), lo, hi, zone, clock)
    lo = max(lo, first)
    delta = 0
    if align is not None:
        delta = parse_interval_ns(align)
        if delta == 0:
            raise TimeParseError(cstring(align), 0, ALIGN_MSG)
        aligned = _round_up(lo, delta)
        if first <= aligned <= last:
            lo = aligned
        else:
            warning = TimeParseError(cstring(align), 0, ALIGN_MSG).errmsg
    if end is not None:
        hi = _parse_time(cstring(end), lo, hi, zone, clock)
    hi = min(hi, last)
    origin = lo
    if offset is not None:
        origin = _parse_time(cstring(offset), lo, hi, zone, clock)
        origin = lo if origin < lo else hi if origin > hi else origin
        if align is not None:
            aligned = _round_up(origin, delta)
            if aligned > int64(hi):  # libpcp's nanosecond sum wraps for an open end
                aligned -= delta
            if lo <= aligned <= hi:
                origin = aligned
            else:
                warning = TimeParseError(cstring(align), 0, ALIGN_MSG).errmsg
    return TimeWindow(lo, hi, origin, warning)


def _round_up(t: int, delta: int) -> int:
    """T rounded up to a multiple of DELTA, as libpcp's -A rounds (C division)."""
    down = cdiv(t, delta) * delta
    return down + delta if down < t else down
