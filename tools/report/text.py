"""pmrep's text outputs: stdout (its column layout, or with -X its columns and rows
swapped) and CSV, written a block of samples at a time."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import TextIO

import numpy as np

from purepcp.pmapi.ids import PM_INDOM_NULL

from .cells import CellSpec, Renderer
from .model import Block, Column, Kind

NO_INST = "~"
_GONE = "\x01"  # (a missing value's twin, taken out of the line with its delimiter)
SINGULAR = "="
NSEC = 1_000_000_000


def stamps(times: np.ndarray, zone: tzinfo, fmt: str) -> list[str]:
    """Each time (int64 ns) as strftime(FMT) in ZONE, as pmrep prints its samples' times."""
    out = []
    for t in times.tolist():
        when = datetime.fromtimestamp(t // NSEC, zone).replace(microsecond=t % NSEC // 1000)
        out.append(when.strftime(fmt))
    return out


def auto_repeat(unitinfo: bool, indoms: bool, colxrow: bool, instances: int) -> int:
    """repeat_header = auto: a screenful less the header's lines (24 rows when stdout is
    not a terminal, as Python's get_terminal_size falls back)."""
    lines = shutil.get_terminal_size().lines
    if not colxrow:
        return lines - ((3 if unitinfo else 2) + (1 if indoms else 0))
    return int(lines / max(instances, 1)) - (2 if unitinfo else 1)


class StdoutWriter:
    """pmrep's default output: a header (labels, instances, units) over right-aligned
    columns, optionally with each sample's time first."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, delimiter: str,
                 timestamp: bool, timefmt: str, zone: tzinfo, header: bool, instinfo: bool,
                 unitinfo: bool, repeat: int | str, now_ns: int,
                 separate: bool = False, labels: bool = False,
                 indoms: bool | None = None) -> None:  # fmt: skip
        self.out = out
        # whether the instances line is written: any column's metric has instances, or
        # (INDOMS, for -1's changing columns) any of the report's metrics has
        self.indoms = any(c.indom != PM_INDOM_NULL for c in columns) if indoms is None else indoms
        self.labels = labels  # -m: a line of each column's labels
        self.separate = separate  # -g: a numbered list of the columns, numbers over them
        self.columns = list(columns)
        self.delimiter = delimiter
        self.timestamp = timestamp and bool(timefmt)
        self.timefmt, self.zone = timefmt, zone
        self.header_on, self.instinfo, self.unitinfo = header, instinfo, unitinfo
        specs = [CellSpec(c.kind, c.width, c.precision) for c in self.columns]
        self.renderer = Renderer(specs, delimiter)
        self.stamp_width = (
            len(stamps(np.array([now_ns]), zone, timefmt)[0]) if self.timestamp else 0
        )
        indoms = any(c.indom != PM_INDOM_NULL for c in self.columns)
        self.repeat, self.auto = self._repeat(repeat, indoms)
        self.lines = 0

    def _repeat(self, repeat: int | str, indoms: bool) -> tuple[int, bool]:
        if not self.header_on:
            return 0, False
        if repeat == "auto":
            return auto_repeat(self.unitinfo, indoms, False, 0), True
        return int(repeat or 0), False

    def _line(self, first: str, cells: Sequence[str]) -> str:
        lead = first.ljust(self.stamp_width) if self.timestamp else first
        return lead + self.delimiter + self.delimiter.join(cells)

    @staticmethod
    def _fit(text: str, width: int) -> str:
        return text[:width].rjust(width)

    def _listing(self, entries: Sequence[tuple[int, Column]], count: int) -> str:
        """-g's list: "[K] - metric["instance"] - unit" per column (K right-aligned)."""
        wide = len(str(count)) + 1
        lines = []
        for k, c in entries:
            line = f"[{str(k).rjust(wide)}] - {c.metric}"
            if c.instance is not None:
                line += f'["{c.instance}"]'
            if self.unitinfo:
                line += " - " + (c.unit or "none")
            lines.append(line + "\n")
            if self.labels:
                lines.append(f"[{str(k).rjust(wide)}] - {c.labels}\n")
        return "".join(lines) + "\n"

    def header(self, repeat: bool = False) -> None:
        if not self.header_on:
            return
        cols = self.columns
        if self.separate:
            listing = self._listing(list(enumerate(cols, start=1)), len(cols))
            numbers = self._line("", [self._fit(str(k), c.width) for k, c in enumerate(cols, 1)])
            self.out.write(("\n" if repeat else "") + listing + numbers + "\n")
            return
        lines = [self._line("", [self._fit(c.label, c.width) for c in cols])]
        if self.instinfo and self.indoms:
            names = [c.instance if c.instance else self.delimiter for c in cols]
            lines.append(
                self._line("", [self._fit(n, c.width) for n, c in zip(names, cols, strict=True)])
            )
        if self.labels:
            lines.append(self._line("", [self._fit(c.labels, c.width) for c in cols]))
        if self.unitinfo:
            lines.append(self._line("", [self._fit(c.unit, c.width) for c in cols]))
        self.out.write(("\n" if repeat else "") + "\n".join(lines) + "\n")

    def _due(self) -> bool:
        """Whether the header repeats before the next sample."""
        if not self.repeat:
            return False
        return (self.lines > 0 and self.repeat == self.lines) or (
            self.auto and self.lines >= self.repeat
        )

    def _rows(self, block: Block) -> list[list[str]]:
        """Per sample, its line."""
        cells = self.renderer.lines(block.values, block.has, block.strings)
        times = stamps(block.times, self.zone, self.timefmt) if self.timestamp else None
        d, pad = self.delimiter, self.stamp_width
        if times is None:
            return [[d + row] for row in cells]
        return [[t.ljust(pad) + d + row] for t, row in zip(times, cells, strict=True)]

    def write(self, block: Block) -> None:
        chunk: list[str] = []
        for lines in self._rows(block):
            if self._due():
                if chunk:
                    self.out.write("\n".join(chunk) + "\n")
                chunk = []
                self.header(repeat=True)
                self.lines = 0
            self.lines += 1
            chunk += lines
        if chunk:
            self.out.write("\n".join(chunk) + "\n")

    def close(self) -> None:
        pass


class ColxrowWriter(StdoutWriter):
    """-X LABEL: one line per instance, one column per text label (metrics sharing a
    label share its column, the first with the instance fills it), the instance's name
    first under LABEL ("=" for a metric without instances, "~" where none has it)."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, colxrow: str,
                 sort: Sequence[tuple[str, bool]] = (), by_metric: bool = False,
                 **kw) -> None:  # fmt: skip
        super().__init__(out, columns, **kw)
        self.by_metric = by_metric  # -g's list names each metric once (-7's fixed header)
        self.colxrow = colxrow
        self.sort = list(sort)  # -6: (metric, descending) the instance lines are sorted by
        groups: dict[str, list[str]] = {}  # label -> its metrics, in order
        where: dict[tuple[str, str | None], int] = {}  # (metric, instance) -> column
        self.instances: list[str | None] = []
        for i, c in enumerate(self.columns):
            metrics = groups.setdefault(c.label, [])
            if c.metric not in metrics:
                metrics.append(c.metric)
            where.setdefault((c.metric, c.instance), i)
            if c.instance not in self.instances:
                self.instances.append(c.instance)
        self.where = where
        self.groups = groups
        self.order = list(range(len(self.instances)))  # -6 keeps the last sample's order
        first = {c.metric: c for c in reversed(self.columns)}
        self.heads = [first[metrics[0]] for metrics in groups.values()]
        self.gather = [
            [next((where[m, name] for m in metrics if (m, name) in where), -1)
             for metrics in groups.values()]
            for name in self.instances
        ]  # fmt: skip
        self.renderers = []
        for row in self.gather:
            specs = []
            for head, i in zip(self.heads, row, strict=True):
                if i < 0:
                    specs.append(CellSpec(Kind.STRING, head.width, 0, NO_INST))
                else:
                    c = self.columns[i]
                    specs.append(CellSpec(c.kind, c.width, c.precision))
            self.renderers.append(Renderer(specs, self.delimiter))
        self.name_width = len(colxrow) if colxrow else 8
        if self.auto:
            self.repeat = auto_repeat(self.unitinfo, False, True, len(self.instances))

    def _line(self, first: str, cells: Sequence[str]) -> str:
        lead = first[: self.stamp_width].ljust(self.stamp_width) if self.timestamp else first
        return lead + self.delimiter + self.delimiter.join(cells)

    def header(self, repeat: bool = False) -> None:
        if not self.header_on:
            return
        w = self.name_width
        if self.separate:
            entries = []
            for k, metrics in enumerate(self.groups.values(), start=1):
                if self.by_metric:
                    whole = (self.columns[self.where_metric(m)] for m in metrics)
                    entries += [(k, replace(c, instance=None, labels=c.metric_labels))
                                for c in whole]  # fmt: skip
                    continue
                entries += [(k, c) for m in metrics for c in self.columns if c.metric == m]
            listing = self._listing(entries, len(self.groups))
            numbered = [self._fit(str(k), h.width) for k, h in enumerate(self.heads, 1)]
            numbers = self._line("", [self._fit("", w), *numbered])
            self.out.write(("\n" if repeat else "") + listing + numbers + "\n")
            return
        lines = [self._line("", [self._fit(self.colxrow, w)]
                            + [self._fit(h.label, h.width) for h in self.heads])]  # fmt: skip
        if self.labels:
            texts = [self._fit(h.metric_labels, h.width) for h in self.heads]
            lines.append(self._line("", [self._fit("", w), *texts]))
        if self.unitinfo:
            units = [self._fit(h.unit, h.width) for h in self.heads]
            lines.append(self._line("", [self._fit("", w), *units]))
        self.out.write(("\n" if repeat else "") + "\n".join(lines) + "\n")

    def where_metric(self, metric: str) -> int:
        """METRIC's first column."""
        return next(i for i, c in enumerate(self.columns) if c.metric == metric)

    def _rows(self, block: Block) -> list[list[str]]:
        """Per sample, its lines (one per instance)."""
        per_instance = []
        for row, renderer in zip(self.gather, self.renderers, strict=True):
            idx = [max(i, 0) for i in row]
            has = block.has[:, idx]
            has[:, [j for j, i in enumerate(row) if i < 0]] = False
            strings = {j: block.strings[i] for j, i in enumerate(row) if i in block.strings}
            per_instance.append(renderer.lines(block.values[:, idx], has, strings))
        times = stamps(block.times, self.zone, self.timefmt) if self.timestamp else None
        w, d = self.name_width, self.delimiter
        names = [self._fit(n if n else SINGULAR, w) for n in self.instances]
        rows = []
        for r in range(block.rows):
            lead = times[r][: self.stamp_width].ljust(self.stamp_width) if times else ""
            order = self._sorted(block, r) if self.sort else self.order
            rows.append([lead + d + names[i] + d + per_instance[i][r] for i in order])
        return rows

    def _sorted(self, block: Block, r: int) -> list[int]:
        """-6: sample R's instance lines, by each sort metric's values (highest first, or
        lowest for "-metric"), then the rest in the last sample's order, as pmrep does."""
        first: list[int] = []
        for metric, descending in self.sort:
            pairs = []
            for i, name in enumerate(self.instances):
                c = self.where.get((metric, name))
                if c is not None and block.has[r, c]:
                    pairs.append((i, float(block.values[r, c])))
            for i, _ in sorted(pairs, key=lambda p: p[1], reverse=descending):
                if i not in first:
                    first.append(i)
        self.order = first + [i for i in self.order if i not in first]
        return self.order


class CsvWriter:
    """pmrep -o csv (pcp2csv's layout): a quoted header of metric-instance names, then
    one line per sample, the time first."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, delimiter: str,
                 timefmt: str, zone: tzinfo, header: bool, extcsv: bool, host: str,
                 tzname: str, labels: bool = False) -> None:  # fmt: skip
        self.out, self.columns = out, list(columns)
        self.labels = labels  # -m: a label column after each, each value written twice
        self.delimiter, self.timefmt, self.zone = delimiter, timefmt, zone
        self.header_on, self.extcsv, self.host, self.tzname = header, extcsv, host, tzname
        specs = [CellSpec(c.kind, 0, c.precision) for c in self.columns]
        self.renderer = Renderer(specs, delimiter, csv=True)
        self.twins = Renderer([s for s in specs for _ in (0, 1)], delimiter, csv=True,
                              missing=("", _GONE))  # fmt: skip
        self.prev: int | None = None

    def header(self, repeat: bool = False) -> None:
        if not self.header_on:
            return
        d = self.delimiter
        parts = ["Host,Interval,Time"] if self.extcsv else ["Time"]  # (pmrep's commas, always)
        for c in self.columns:
            name = c.metric
            if c.indom != PM_INDOM_NULL:
                name += "-" + (c.instance or "")
            if d:
                name = name.replace(d, " ")
            parts.append('"' + name.replace("\n", " ").replace('"', " ") + '"')
            if self.labels:
                text = c.labels.replace(d, ";" if d == "," else ",") if d else c.labels
                parts.append('"' + text.replace("\n", " ").replace('"', " ") + '"')
        self.out.write(d.join(parts) + "\n")

    def write(self, block: Block) -> None:
        if self.labels:  # each column twice; a missing value once (pmrep skips its twin)
            twice = np.repeat(np.arange(len(self.columns)), 2)
            has = block.has[:, twice]
            strings = {j: block.strings[c] for j, c in enumerate(twice) if c in block.strings}
            cells = self.twins.lines(block.values[:, twice], has, strings)
            gone = self.delimiter + _GONE
            cells = [row.replace(gone, "") for row in cells]
        else:
            cells = self.renderer.lines(block.values, block.has, block.strings)
        times = stamps(block.times, self.zone, self.timefmt) if self.timefmt else [""] * block.rows
        d = self.delimiter
        if not self.extcsv:
            text = [t + d + row if self.columns else t for t, row in zip(times, cells, strict=True)]
        else:
            text = []
            for t, row, ns in zip(times, cells, block.times.tolist(), strict=True):
                secs = ns / NSEC
                gap = 0 if self.prev is None else int(secs - self.prev + 0.5)
                self.prev = secs
                cells = f"{d}{row}" if self.columns else ""
                text.append(f"{self.host}{d}{gap}{d}{t} {self.tzname}{cells}")
        if text:
            self.out.write("\n".join(text) + "\n")

    def close(self) -> None:
        pass


class OverallRankWriter:
    """-2 and -3 (with -J N, from an archive): each metric's N highest (or lowest)
    valued instances over the whole replay, printed once at the end; -3 as one
    pmrep-style metric spec per metric."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, rank: int, alt: bool,
                 delimiter: str) -> None:  # fmt: skip
        self.out, self.columns, self.rank, self.alt = out, list(columns), rank, alt
        self.delimiter = delimiter
        self.metrics: dict[str, list[int]] = {}
        for i, c in enumerate(self.columns):
            if c.kind is not Kind.STRING:
                self.metrics.setdefault(c.metric, []).append(i)
        self.ranked: dict[str, list[tuple[int, float]]] | None = None

    def header(self, repeat: bool = False) -> None:
        pass

    def write(self, block: Block) -> None:
        descending = self.rank > 0
        for r in range(block.rows):
            current = {
                metric: [(i, float(block.values[r, i])) for i in cols if block.has[r, i]]
                for metric, cols in self.metrics.items()
            }
            if self.ranked is None:
                self.ranked = {m: list(v) for m, v in current.items()}
            for metric, now in current.items():
                cols = self.metrics[metric]
                most = abs(self.rank) if self.columns[cols[0]].indom != PM_INDOM_NULL else 1
                kept: list[tuple[int, float]] = []
                for i, value in sorted(now + self.ranked[metric], key=lambda p: p[1],
                                       reverse=descending):  # fmt: skip
                    if len(kept) < most and all(i != k for k, _ in kept):
                        kept.append((i, value))
                self.ranked[metric] = kept

    def _text(self, i: int, value: float) -> str:
        c = self.columns[i]
        if c.kind is Kind.INT:
            return str(int(value))
        return format(value, f".{min(c.precision, c.width)}f")

    def close(self) -> None:
        ranked = self.ranked or {}
        m_len = i_len = u_len = v_len = 3
        for metric, kept in ranked.items():
            for i, value in kept:
                name = (self.columns[i].instance or "").replace("\n", " ")
                i_len = max(i_len, len(name))
                v_len = max(v_len, len(self._text(i, value)))
            if kept:
                m_len = max(m_len, len(metric))
                u_len = max(u_len, len(self.columns[self.metrics[metric][0]].unit))
        d = self.delimiter
        lines = []
        for metric, kept in ranked.items():
            names = [(self.columns[i].instance or "").replace("\n", " ") for i, _ in kept]
            if self.alt:
                if kept:
                    quoted = ",".join(f"'{n}'" for n in names)
                    lines.append(f"{metric},," + (f'"{quoted}"' if names[0] else ""))
                continue
            for (i, value), name in zip(kept, names, strict=True):
                unit = self.columns[i].unit
                lines.append(f"{metric:<{m_len + 1}}{d:<2}{name:<{i_len + 1}}{d:<2}"
                             f"{unit:>{u_len}} {d}{self._text(i, value):>{v_len + 1}}")  # fmt: skip
        if lines:
            self.out.write("\n".join(lines) + "\n")
