"""pmlogsummary's output: the label, the header line and one line per metric-instance.

Each line finishes the instance's figures as printsummary does (a discrete value runs
on to the window's end, averages divide by counts and spans) and prints the columns
asked for, in PCP's order, separated by the delimiter, numbers as printf's %.*f.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo
from typing import TextIO

from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.timewindow import format_stamp, pm_ctime
from purepcp.pmapi.units import pmUnitsStr
from purepcp.pmapi.values import Timestamp

from .options import Options
from .stats import COUNTER, DISCRETE, USEC, InstStats, MetricStats, div, seconds, tsub

#: the header's word for each column
HEADINGS = {
    "stocave": "stochastic_average", "timeave": "time_average", "sum": "sum",
    "min": "minimum", "mintime": "minimum_time", "max": "maximum",
    "maxtime": "maximum_time", "count": "count",
}  # fmt: skip


def cfloat(value: float, precision: int) -> str:
    """printf("%.*f", PRECISION, VALUE): "-nan" for the machine's NaN, "inf", "-inf"."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{precision if precision >= 0 else 6}f}"


@dataclass
class Window:
    """The time window (microseconds; finish None: the archive's end is unknown), its
    length in seconds and whether stamps carry their date (a window over a day long)."""

    start: int
    finish: int
    unknown_end: bool
    logspan: float
    dayflag: bool


def make_window(start: int, finish: int, unknown_end: bool) -> Window:
    logspan = seconds_of(finish) - seconds_of(start)
    return Window(start, finish, unknown_end, logspan, tsub(finish, start) // USEC > 86400)


def seconds_of(us: int) -> float:
    """pmtimevalToReal of a time of day (a timeval since the epoch)."""
    return seconds(us) if us >= 0 else float(us) / USEC


class Printer:
    """Prints lines to OUT as pmlogsummary does, in the reporting ZONE."""

    def __init__(self, o: Options, window: Window, zone: tzinfo, out: TextIO) -> None:
        self.o = o
        self.w = window
        self.zone = zone
        self.out = out
        self.d = o.delimiter
        self.columns = [c for c, on in o.columns.items() if on]

    def stamp(self, us: int, delim: str | None = None) -> str:
        """printstamp: DELIM (else the delimiter), then HH:MM:SS.mmm, or quoted with its
        date for a window over a day."""
        d = self.d if delim is None else delim
        t = Timestamp(us // USEC, us % USEC * 1000)
        clock = format_stamp(t, self.zone)
        if not self.w.dayflag:
            return f"{d}{clock}"
        ctime = pm_ctime(t, self.zone)
        return f"{d}'{ctime[:10]} {clock} {ctime[20:24]}'"

    def clock(self, us: int) -> str:
        """pmPrintStamp: HH:MM:SS.mmm in the reporting zone, whatever the window."""
        return format_stamp(Timestamp(us // USEC, us % USEC * 1000), self.zone)

    def label(self, magic_version: int, hostname: str) -> None:
        out = self.out
        out.write(f"Log Label (Log Format Version {magic_version})\n")
        out.write(f"Performance metrics from host {hostname}\n")
        out.write(f"  commencing {self._when(self.w.start)}\n")
        if self.w.unknown_end:
            out.write("  ending     UNKNOWN\n")
        else:
            out.write(f"  ending     {self._when(self.w.finish)}\n")

    def _when(self, us: int) -> str:
        t = Timestamp(us // USEC, us % USEC * 1000)
        ctime = pm_ctime(t, self.zone)
        return f"{ctime[:10]} {format_stamp(t, self.zone)} {ctime[20:24]}"

    def header(self) -> None:
        words = ["metric", *(HEADINGS[c] for c in self.columns)]
        if self.o.nbins:
            words.append("bins")
        words.append("units")
        self.out.write(self.d.join(words) + "\n")

    def metric(
        self,
        name: str,
        m: MetricStats,
        inst_name: Callable[[int, int], str | None],
        wanted: list[str] | None,
    ) -> None:
        """printsummary for one metric: a line per instance (WANTED: only these names)."""
        write = self.out.write
        for s in m.insts:
            span = self._finish(m, s)
            star = m.desc.sem == COUNTER and _ratio(span, self.w.logspan) <= 0.1
            iname = inst_name(m.desc.indom, s.inst)
            if iname is None:
                if wanted and m.desc.indom == PM_INDOM_NULL:
                    break
                head = "*" if star else ""
                if m.desc.indom == PM_INDOM_NULL:
                    write(f"{head}{name}{self.d}")
                else:
                    write(f"{head}{name}{self.d}[{s.inst}]")
            else:
                if wanted and iname not in wanted:
                    continue
                write(f'{"*" if star else ""}{name}{self.d}["{iname}"]')
            if m.desc.sem == COUNTER and span <= 0:
                write(f"{self.d}- insufficient archive data.\n")
                continue
            write(self._figures(m, s, span))

    def _finish(self, m: MetricStats, s: InstStats) -> float:
        """The instance's span in seconds, once a discrete value has run on to the end."""
        if m.desc.sem == DISCRETE:
            s.stocave += s.lastval
            s.timeave += s.lastval * seconds(tsub(self.w.finish, s.lasttime))
            s.lasttime = self.w.finish
            s.count += 1
        return seconds(tsub(s.lasttime, s.firsttime))

    def _figures(self, m: MetricStats, s: InstStats, span: float) -> str:
        p, d = self.o.precision, self.d
        stocave = div(s.stocave, float(s.count))
        if m.desc.sem == COUNTER:
            timeave = div(s.timeave, span * m.scale)
        else:
            timeave = div(s.timeave, span if span != 0 else 1.0)
        if m.desc.sem == DISCRETE:
            s.count = s.count - s.markcount - 1
        values = {"stocave": stocave, "timeave": timeave, "sum": s.sum, "min": s.min,
                  "max": s.max}  # fmt: skip
        parts = []
        for c in self.columns:
            if c == "mintime":
                parts.append(self.stamp(s.mintime))
            elif c == "maxtime":
                parts.append(self.stamp(s.maxtime))
            elif c == "count":
                parts.append(f"{d}{s.count & 0xFFFFFFFF}")
            else:
                parts.append(f"{d}{cfloat(values[c], p)}")
        nbins = self.o.nbins
        for j in range(nbins):
            if j > 0 and s.min == s.max:
                parts.append(f"{d}[]{d}0")
            else:
                bound = (s.max - s.min) / nbins * (j + 1) + s.min
                parts.append(f"{d}[<={cfloat(bound, p)}]{d}{s.bins[j]}")
        units = pmUnitsStr(m.desc.units)
        parts.append(f"{d}{units or 'none'}\n")
        return "".join(parts)


def _ratio(span: float, logspan: float) -> float:
    """metricspan / logspan as C divides (a zero logspan: an infinity or NaN)."""
    return div(span, logspan)
