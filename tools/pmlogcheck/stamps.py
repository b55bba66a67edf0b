"""Times as pmlogcheck prints them, in the reporting zone, and the C timestamp
arithmetic its checks use."""

from __future__ import annotations

from datetime import tzinfo

from purepcp.pmapi.cnumbers import cdiv, int32
from purepcp.pmapi.timewindow import pm_ctime
from purepcp.pmapi.timewindow.epoch import localtime
from purepcp.pmapi.values import Timestamp

NSEC = 1_000_000_000


def ts_dec(a: Timestamp, b: Timestamp) -> tuple[int, int]:
    """__pmTimestampDec: A - B as (sec, nsec), nsec borrowed into range once, as in C."""
    sec, nsec = a.sec - b.sec, int32(a.nsec - b.nsec)
    if nsec < 0:
        nsec += NSEC
        sec -= 1
    return sec, nsec


def before(a: Timestamp, b: Timestamp) -> bool:
    """Whether A - B, as pmlogcheck computes it, is negative."""
    sec, nsec = ts_dec(a, b)
    return sec < 0 or nsec < 0


class Stamps:
    """print_stamp: HH:MM:SS.mmm, with the date around it when the window spans a day."""

    def __init__(self, zone: tzinfo, dayflag: bool = False) -> None:
        self.zone = zone
        self.dayflag = dayflag

    def msec(self, t: Timestamp) -> str:
        tm = localtime(t.sec, self.zone)
        return f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}.{cdiv(int32(t.nsec), 1000000):03d}"

    def stamp(self, t: Timestamp) -> str:
        if not self.dayflag:
            return self.msec(t)
        ctime = self.ctime(t.sec)
        return f"{ctime[:10]} {self.msec(t)} {ctime[20:24]}"

    def ctime(self, sec: int) -> str:
        """pmCtime without its newline."""
        return pm_ctime(Timestamp(sec, 0), self.zone)

    def print_stamp(self, sec: int, usec: int) -> str:
        """pmPrintStamp of a timeval: HH:MM:SS.mmm."""
        tm = localtime(sec, self.zone)
        return f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}.{cdiv(usec, 1000):03d}"
