"""Times printed as pmCtime, pmPrintStamp and pmval print them."""

from __future__ import annotations

from collections.abc import Sequence

from .epoch import MONTHS, NSEC, WDAYS, Timestamp, localtime, to_ns
from .tz import Zone, resolve_zone


def pm_ctime(t: Timestamp, tz: Zone = None) -> str:
    """T as pmCtime prints it in zone TZ, "Sat Nov 21 10:00:00 2026" (pmCtime adds a newline)."""
    tm = localtime(to_ns(t) // NSEC, resolve_zone(tz))
    day, month = WDAYS[tm.wday].title(), MONTHS[tm.mon].title()
    return f"{day} {month}{tm.mday:3d} {tm.hour:02d}:{tm.min:02d}:{tm.sec:02d} {tm.year}"


def format_stamp(t: Timestamp, tz: Zone = None, *, digits: int = 3, date: bool = False) -> str:
    """T's time of day in zone TZ, "10:00:01.123", its fraction truncated to DIGITS.

    digits=3 is pmPrintStamp and pmval's default; 6 is __pmPrintTimeval; 9 is
    pmPrintHighResStamp.  date=True is pmval -X ("Sat Nov 21 10:00:01.123456 2026",
    with digits=6; -XX uses 9).
    """
    ns = to_ns(t)
    tm = localtime(ns // NSEC, resolve_zone(tz))
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
    zone = resolve_zone(tz)
    offsets: dict[int, int | None] = {}
    out = []
    scale = 10 ** (9 - digits)
    for ns in times_ns:
        sec = ns // NSEC
        quarter = sec - sec % 900
        off = offsets.get(quarter, -1)
        if off == -1:
            lo, hi = localtime(quarter, zone).gmtoff, localtime(quarter + 899, zone).gmtoff
            off = offsets[quarter] = lo if lo == hi else None
        if off is None:
            off = localtime(sec, zone).gmtoff
        day = (sec + off) % 86400
        text = f"{day // 3600:02d}:{day // 60 % 60:02d}:{day % 60:02d}"
        if digits:
            text += f".{ns % NSEC // scale:0{digits}d}"
        out.append(text)
    return out
