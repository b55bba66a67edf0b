"""The time window of a pmseries query (`[samples:3, interval:"1s"]`), as libpcp_web's
query parser keeps it: the texts as written (`Window`), checked as they are read, and
their values (`Timing`, PCP's timing_t) worked out by `resolve_window` for a given now.

PCP 6.0.3 reads start, finish and align with __pmParseHighResTime from the epoch with no
end: an interval counts on from 1970-01-01 00:00 UTC ("1h", "+1h", "10 minutes" and even
"1 hour ago", which is before 1970), "-1h" is an error, "@10:00" takes its date from 1970;
dates ("2019-01-01 00:00:00", in the local zone) and words such as "now", "yesterday",
"last monday" or "-30sec" are read against the clock.  A bare range such as `[5m]` starts
that long before now and has no end.  interval and range are intervals
(pmParseHighResInterval); samples and offset are integers as C's atoi reads them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from purepcp.pmapi.cnumbers import atoi, uint32
from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    TimeParseError,
    Zone,
    new_zone,
    parse_interval_ns,
    parse_time,
)

__all__ = [
    "TIME_KEYWORDS",
    "VALUE_TOKENS",
    "Timing",
    "Window",
    "WindowError",
    "resolve_window",
    "second_setting",
]

#: The query language's window keywords and the pmSeriesTimeWindow field each one sets.
TIME_KEYWORDS: dict[str, str] = {
    "interval": "delta", "delta": "delta",
    "timezone": "zone", "tz": "zone",
    "start": "start", "begin": "start",
    "finish": "end", "end": "end",
    "samples": "count", "count": "count",
    "offset": "offset", "from": "offset",
    "align": "align", "alignment": "align",
}  # fmt: skip

#: The tokens of the query language each field's value may be (the grammar's rules).
VALUE_TOKENS: dict[str, tuple[str, ...]] = {
    "delta": ("STRING", "INTEGER", "DOUBLE"), "align": ("STRING", "INTEGER", "DOUBLE"),
    "start": ("STRING", "INTEGER", "DOUBLE"), "end": ("STRING", "INTEGER", "DOUBLE"),
    "zone": ("STRING",), "count": ("INTEGER",), "offset": ("INTEGER",),
}  # fmt: skip

#: What PCP says when a field is set twice with different texts; True: new text first.
_SECOND = {
    "delta": ("Invalid second time delta requested", False),
    "start": ("Invalid second start time requested", False),
    "end": ("Invalid second end time requested", False),
    "align": ("Invalid second alignment requested", False),
    "range": ("Invalid second time range requested", False),
    "zone": ("Invalid second timezone requested", False),
    "count": ("Invalid second sample count requested", True),
    "offset": ("Invalid second time offset requested", True),
}

FIELDS = ("delta", "align", "start", "end", "range", "count", "offset", "zone")


class WindowError(ValueError):
    """A window PCP refuses; MESSAGE is PCP's text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def second_setting(field: str, old: str, new: str) -> str:
    """PCP's complaint when FIELD, set to OLD, is set again to a different NEW."""
    phrase, new_first = _SECOND[field]
    first, second = (new, old) if new_first else (old, new)
    return f'{phrase} - "{first}" vs "{second}"'


@dataclass(frozen=True)
class Window:
    """A window as written: (field, text) settings in the order read (order decides which
    of range and start/finish wins); fields are pmSeriesTimeWindow's, texts unquoted."""

    items: tuple[tuple[str, str], ...] = ()

    def get(self, field: str) -> str | None:
        """The text FIELD was set to (every setting of a field has the same text)."""
        return next((text for key, text in self.items if key == field), None)

    delta = property(lambda self: self.get("delta"), doc="interval/delta text")
    align = property(lambda self: self.get("align"), doc="align/alignment text")
    start = property(lambda self: self.get("start"), doc="start/begin text")
    end = property(lambda self: self.get("end"), doc="finish/end text")
    range = property(lambda self: self.get("range"), doc="a bare range such as 5m")
    count = property(lambda self: self.get("count"), doc="samples/count digits")
    offset = property(lambda self: self.get("offset"), doc="offset/from digits")
    zone = property(lambda self: self.get("zone"), doc="timezone/tz text")

    @property
    def is_time_window(self) -> bool:
        """series_time_window: whether values are wanted (zone, align, offset alone: no)."""
        return any(self.get(f) for f in ("range", "start", "end", "count", "delta"))

    @property
    def count_only(self) -> bool:
        """series_value_count_only: only samples, so the newest N by XREVRANGE."""
        return bool(self.count) and not any(self.get(f) for f in ("range", "delta", "start", "end"))

    def add(self, field: str, text: str) -> Window:
        """This window with FIELD set to TEXT, checked as the parser checks it (WindowError)."""
        problem = _check(field, text)
        old = self.get(field)
        if problem is None and old is not None and old != text:
            problem = second_setting(field, old, text)
        if problem is not None:
            raise WindowError(problem)
        return Window((*self.items, (field, text)))


def _check(field: str, text: str) -> str | None:
    """PCP's complaint about TEXT for FIELD, or None."""
    try:
        if field in ("delta", "range"):
            parse_interval_ns(text)
        elif field in ("start", "end", "align"):
            parse_time(text, 0, None)
    except TimeParseError as e:
        if field == "delta":
            return f"Cannot parse time delta with pmParseHighResInterval:\n{e.errmsg}"
        if field == "range":
            return f"Cannot parse range with pmParseHighResInterval:\n{e.errmsg}"
        return f"Cannot parse time with __pmParseHighResTime:\n{e.errmsg}"
    if field == "count" and atoi(text) < 0:
        return f'Invalid sample count requested - "{text}"'
    # a negative offset is complained about but then accepted; pmNewZone never fails
    return None


@dataclass(frozen=True)
class Timing:
    """A window's values as timing_t holds them: times in ns since the epoch, 0 when unset
    (so "finish at 0" is no finish, as in PCP); a range's end is PM_MAX_TIME_T seconds."""

    start: int = 0
    end: int = 0
    delta: int = 0
    align: int = 0
    count: int = 0
    offset: int = 0
    zone: str | None = None

    @property
    def open_ended(self) -> bool:
        """No finish: read to the newest value ("+")."""
        return self.end == 0 or self.end // NSEC >= PM_MAX_TIME_T


def resolve_window(window: Window, *, now: int | None = None, tz: Zone = None) -> Timing:
    """The values of WINDOW, settings applied in order as PCP's parser applies them.

    NOW (ns since the epoch, default the clock) is what free-form dates and a range count
    back from.  TZ (a TZ string or tzinfo, default the local zone) is the zone times are
    read in until a timezone setting, from which on that zone is used (pmNewZone).
    Raises WindowError for texts PCP refuses.
    """
    for field, text in window.items:
        problem = _check(field, text)
        if problem is not None:
            raise WindowError(problem)
    now_ns = time.time_ns() if now is None else now
    clock = (now_ns // NSEC, now_ns % NSEC)
    values: dict[str, int | str] = {}
    zone = tz
    for field, text in window.items:
        if field == "delta":
            values["delta"] = parse_interval_ns(text)
        elif field in ("start", "end", "align"):
            values[field] = parse_time(text, 0, None, tz=zone, now=clock)
        elif field == "range":
            values["start"] = now_ns - parse_interval_ns(text)
            values["end"] = PM_MAX_TIME_T * NSEC
        elif field == "count":
            values["count"] = atoi(text)
        elif field == "offset":
            values["offset"] = uint32(atoi(text))  # an unsigned int in timing_t
        elif field == "zone":
            values["zone"] = text
            zone = new_zone(text)
    return Timing(**values)  # type: ignore[arg-type]
