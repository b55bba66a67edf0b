"""The libpcp calls PCP's cpmapi exposes beside pmGetOptions's: pmMktime (a struct tm's
fields to seconds, in the process's zone), pmnsTraverse (the current context's leaf
names, to a callback) and pmSetProcessIdentity (becoming a user)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from . import contexts, zones


def pmMktime(
    tm_sec: int,
    tm_min: int,
    tm_hour: int,
    tm_mday: int,
    tm_mon: int,
    tm_year: int,
    tm_wday: int,
    tm_yday: int,
    tm_isdst: int,
    tm_gmtoff: int,
    tm_zone: str,
) -> int:
    """Seconds since the epoch of the broken-down time, read in the zone in use (as
    libpcp's __pmMktime reads it: the day of the week and of the year are ignored)."""
    if not isinstance(tm_zone, str):
        raise TypeError("pmMktime() argument 11 must be str")
    from datetime import timedelta

    month = tm_mon % 12
    year = tm_year + 1900 + tm_mon // 12
    base = datetime(year, month + 1, 1, tzinfo=zones.current())
    moved = base + timedelta(days=tm_mday - 1, hours=tm_hour, minutes=tm_min, seconds=tm_sec)
    return int(moved.timestamp())


def pmnsTraverse(name: str, callback: Callable[[str], Any]) -> int:
    """Every leaf name at or below NAME of the current context, to CALLBACK: how many
    (or a PCP error code, as pmTraversePMNS_r returns it)."""
    from purepcp.pmapi.errors import PMError

    if not isinstance(name, str):
        raise TypeError("pmnsTraverse() argument 1 must be str")
    if not callable(callback):
        raise TypeError("pmnsTraverse needs a callable")
    try:
        ctx = contexts.current()
    except KeyError:
        return -12351  # (PM_ERR_NOCONTEXT)
    try:
        names = ctx.traverse(name)
    except PMError as exc:
        return exc.code
    for leaf in names:
        callback(leaf)
    return len(names)


def pmSetProcessIdentity(name: str) -> int:
    """Become the user NAME (its group first), as a daemon does; a failure ends the
    process with pmNotifyErr's message, as libpcp's does."""
    from purepcp.pmapi import progname
    from purepcp.pmapi.identity import switch_user

    if not isinstance(name, str):
        raise TypeError("pmSetProcessIdentity() argument 1 must be str")
    switch_user(name, progname())
    return 0
