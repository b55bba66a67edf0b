"""Times as pmdumplog prints them, and the timestamp arithmetic they need.

A v2 archive's times print to the microsecond, a v3 archive's to the nanosecond; -x,
-xx and -xxx add the date, the offset from the archive's start and the epoch seconds.
"""

from __future__ import annotations

from datetime import tzinfo
from fractions import Fraction

from purepcp.pmapi.archive.format import PM_LOG_VERS03
from purepcp.pmapi.cnumbers import cdiv, uint64
from purepcp.pmapi.timewindow import NSEC, pm_ctime
from purepcp.pmapi.values import Timestamp


def ts_cmp(a: Timestamp, b: Timestamp) -> int:
    """A against B: below zero when A is earlier, zero when they are equal, else above."""
    return (a.sec - b.sec) or (a.nsec - b.nsec)


def ts_sub(a: Timestamp, b: Timestamp) -> float:
    """__pmTimestampSub: A - B in seconds, as a double."""
    return float(Fraction((a.sec - b.sec) * NSEC + a.nsec - b.nsec, NSEC))


class Clock:
    """Times as pmdumplog prints them: in the reporting zone, usec for v2 and nsec for v3."""

    def __init__(self, zone: tzinfo, version: int, start: Timestamp, xflag: int) -> None:
        self.zone = zone
        self.v3 = version == PM_LOG_VERS03
        self.start = start
        self.xflag = xflag
        self._ctimes: dict[int, str] = {}

    def ctime(self, sec: int) -> str:
        """pmCtime without its newline: "Sat Nov 21 09:42:24 2026"."""
        text = self._ctimes.get(sec)
        if text is None:
            text = self._ctimes[sec] = pm_ctime(sec, self.zone)
        return text

    def hms(self, t: Timestamp) -> str:
        """myPrintTimestamp: HH:MM:SS and the fraction (9 digits for v3, else 6)."""
        clock = self.ctime(t.sec)[11:19]
        return f"{clock}.{t.nsec:09d}" if self.v3 else f"{clock}.{cdiv(t.nsec, 1000):06d}"

    def stamp(self, t: Timestamp) -> str:
        """dump_pmTimestamp: with -x the date, -xx the offset from the start, -xxx the epoch."""
        text = self.hms(t)
        if self.xflag:
            ctime = self.ctime(t.sec)
            text = f"{ctime[:10]} {text} {ctime[20:24]}"
        if self.xflag >= 2:
            text += f" ({ts_sub(t, self.start):.{9 if self.v3 else 6}f})"
        if self.xflag >= 3:
            text += f" {uint64(t.sec)}"
        return text

    def timeval(self, sec: int, usec: int) -> str:
        """dump_timeval: an event record's time (microseconds, no epoch with -xxx)."""
        ctime = self.ctime(sec)
        text = f"{ctime[11:19]}.{usec:06d}"
        if self.xflag:
            text = f"{ctime[:10]} {text} {ctime[20:24]}"
        if self.xflag >= 2:
            start_usec = cdiv(self.start.nsec, 1000)
            offset = float(Fraction((sec - self.start.sec) * 10**6 + usec - start_usec, 10**6))
            text += f" ({offset:.6f})"
        return text

    def highres(self, sec: int, nsec: int) -> str:
        """pmPrintHighResStamp: HH:MM:SS.nnnnnnnnn."""
        return f"{self.ctime(sec)[11:19]}.{nsec:09d}"
