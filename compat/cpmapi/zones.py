"""The time zones a process keeps, as libpcp keeps them (pmNewZone, pmNewContextZone,
pmUseZone, and pmGetOptions's -Z and -z): the one in use is where pmLocaltime and
pmCtime read times."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

_MADE: list[tzinfo] = []  # the zones made, by handle
_TEXTS: list[str] = []  # ... and the TZ text each was made from (pmWhichZone's answer)
_IN_USE = [-1]  # the handle of the one in use (-1: the local zone)


def current() -> tzinfo:
    """The zone in use."""
    from purepcp.pmapi.timewindow import tzinfo_for

    return _MADE[_IN_USE[0]] if _IN_USE[0] >= 0 else tzinfo_for(None)


def add(zone: tzinfo, text: str | None = None) -> int:
    """ZONE (made from the TZ TEXT) made and put in use: its handle."""
    _MADE.append(zone)
    _TEXTS.append(text if text is not None else str(zone))
    _IN_USE[0] = len(_MADE) - 1
    return _IN_USE[0]


def use(handle: int) -> int | None:
    """The zone of HANDLE put in use: the handle in use before (None: no such zone)."""
    if not 0 <= handle < len(_MADE):
        return None
    previous, _IN_USE[0] = _IN_USE[0], handle
    return previous


def which() -> str:
    """pmWhichZone: the TZ text of the zone in use (the local one's: $TZ, else its name)."""
    import os
    import time

    if _IN_USE[0] >= 0:
        return _TEXTS[_IN_USE[0]]
    return os.environ.get("TZ") or time.tzname[0]


def context_text(ctx: Any) -> str | None:
    """The TZ text of a context's zone, as pmNewContextZone takes it: an archive's label's
    (its zoneinfo, else its TZ string); None for another context (then its zone's name)."""
    if getattr(ctx, "kind", None) != "archive":
        return None
    label = ctx.archive.label
    return label.zoneinfo or label.timezone


def local_time(seconds: Any) -> datetime:
    """SECONDS since the epoch in the zone in use."""
    return datetime.fromtimestamp(int(seconds), current())


def ctime(seconds: Any) -> str:
    """ctime(3)'s text of SECONDS in the zone in use, with its newline."""
    return local_time(seconds).strftime("%a %b %e %H:%M:%S %Y\n")
