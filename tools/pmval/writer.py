"""pmval's one writer: the heading, then every row its sources make, as PCP's pmval
prints them (printhdr, printlabels, and the lines of its main loop)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo

from purepcp.pmapi.rate import rate_units_str, timestamp_seconds
from purepcp.pmapi.timewindow import NSEC, format_stamp, format_stamps, pm_ctime
from purepcp.pmapi.types import PMSem
from purepcp.pmapi.units import pmUnitsStr
from purepcp.pmapi.values import Timestamp
from purepcp.tools.stdio import write

from .model import Block, Column, Heading, Status

_SEMANTICS = {
    PMSem.PM_SEM_COUNTER: "cumulative counter",
    PMSem.PM_SEM_INSTANT: "instantaneous value",
    PMSem.PM_SEM_DISCRETE: "discrete instantaneous value",
}
#: what the labels are indented by over archive rows: "HH:MM:SS.mmm"; -X's
#: "Ddd Mmm DD HH:MM:SS.uuuuuu YYYY"; -XX's, to the nanosecond
_STAMP_WIDTHS = (12, 31, 34)


def _cstr(text: str, width: int, prec: int | None = None) -> str:
    """printf's "%*.*s" of TEXT, counting bytes as C does."""
    raw = text.encode("utf-8", "surrogateescape")
    if prec is not None:
        raw = raw[:prec]
    return " " * max(0, width - len(raw)) + raw.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Layout:
    """How the rows are laid out."""

    width: int  # every column's
    singular: bool  # the metric has no instances: one cell, nothing after it
    stamped: bool  # an archive replay: each row after its time of day
    shifted: bool  # rates in pmval's own layout: names shifted left, over the integer part
    events: bool  # an event metric: no instance labels, records after the time
    no_values: str  # what a row with no values says
    zone: tzinfo
    xflag: int = 0  # -X: archive rows' times with the date and microseconds (-XX: ns)


class Writer:
    """Prints Blocks to stdout (errors to stderr), a block at a time."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.missing = _cstr("?", layout.width)
        self.style = -1  # printlabels' choice, made once: 0 fits, 1 short, 2 full names first

    def heading(self, h: Heading) -> None:
        write(heading_text(h, self.layout.zone))

    def write(self, block: Block) -> None:
        """Every row of BLOCK, in order; an ERROR row's note goes to stderr in its place."""
        lay = self.layout
        stamps = self._stamps(block.times) if lay.stamped else None
        out: list[str] = []
        values, error, cells, note = Status.VALUES, Status.ERROR, block.cells, block.notes.get
        for i, status in enumerate(block.status):
            lead = stamps[i] if stamps is not None else ""
            if status is values:
                out.append(lead + self.line(cells[i]) + note(i, ""))
            elif status is error:
                write("".join(out))
                out.clear()
                sys.stderr.write(block.notes[i])
                sys.stderr.flush()
            else:
                out.append(self._say(status, lead, block, i))
        write("".join(out))

    def _stamps(self, times: Sequence[int]) -> list[str]:
        """The rows' times as pmval's mytimestamp prints them (-X: pmCtime's date around
        the time of day, to the microsecond; -XX to the nanosecond)."""
        lay = self.layout
        if not lay.xflag:
            return format_stamps(times, lay.zone)
        digits = 6 if lay.xflag == 1 else 9
        return [format_stamp((ns // NSEC, ns % NSEC), lay.zone, digits=digits, date=True)
                for ns in times]  # fmt: skip

    def _say(self, status: Status, lead: str, block: Block, i: int) -> str:
        """A row that is not values: labels, no values, an archive's gap, event records."""
        if status is Status.LABELS:
            return self.labels(block.columns)
        lead += "  " if lead else ""  # (archive rows: rows of live sources have no time)
        if status is Status.NO_VALUES:
            return lead + self.layout.no_values
        if status is Status.SUSPENDED:
            return lead + "Archive logging suspended\n"
        return lead + block.notes.get(i, "")  # EVENTS

    def line(self, cells: Sequence[str | None]) -> str:
        """One row of values: each column's text (or "?"), a space after each (not after a
        singular metric's one)."""
        texts = [self.missing if c is None else c for c in cells] if None in cells else cells
        if self.layout.singular:
            return f"{texts[0]}\n"
        return " ".join(texts) + " \n" if texts else "\n"  # type: ignore[arg-type]

    def labels(self, columns: Sequence[Column]) -> str:
        """printlabels: the instance names over their columns (full names first if too long)."""
        lay = self.layout
        if lay.events:
            return ""
        out = []
        cols = lay.width
        if self.style == -1:
            self.style = _label_style(columns, cols)
            if self.style == 2:
                out += [f"full label for instance[{i}]: {c.name}\n"
                        for i, c in enumerate(columns)]  # fmt: skip
        out.append("\n")
        if lay.stamped and columns:
            out.append(" " * _STAMP_WIDTHS[min(lay.xflag, 2)])
        for c in columns:
            if not lay.shifted or self.style != 0:
                out.append(_cstr(c.name, cols, cols) + " ")
            else:  # rates have decimals: shift the names left over them
                out.append(_cstr(c.name, cols - 3, cols - 3) + "    ")
        if columns:
            out.append("\n")
        return "".join(out)


def _label_style(columns: Sequence[Column], cols: int) -> int:
    """0: every name fits its column; 1: one leaves no room to shift; 2: one is too long."""
    style = 0
    for c in columns:
        size = len(c.name.encode("utf-8", "surrogateescape"))
        if size > cols:
            return 2
        if size > cols - 3:
            style = 1
    return style


def heading_text(h: Heading, zone: tzinfo) -> str:
    """printhdr: what is reported, from where, how often."""
    lines = []
    if not h.events:
        lines.append(f"metric:    {h.metric}")
    if h.archive is not None:
        lines.append(f"archive:   {h.archive}")
    lines.append(f"host:      {h.hostname}")
    if h.start is not None:
        lines.append(f"start:     {pm_ctime(h.start, zone)}")
        if h.end is not None:
            lines.append(f"end:       {pm_ctime(h.end, zone)}")
    if not h.events:
        sem = _SEMANTICS.get(h.desc.sem, "unknown")
        lines.append(f"semantics: {sem}" + (" (converting to rate)" if h.rates else ""))
        units = f"units:     {pmUnitsStr(h.desc.units) or 'none'}"
        if h.rates:
            units += f" (converting to {rate_units_str(h.desc.units)})"
        lines.append(units)
    lines.append(f"samples:   {'all' if h.samples < 0 else h.samples}")
    if h.samples > 1 and h.interval_ns is not None:
        interval = timestamp_seconds(Timestamp(*divmod(h.interval_ns, NSEC)))
        lines.append(f"interval:  {interval:1.2f} sec")
    return "".join(line + "\n" for line in lines)
