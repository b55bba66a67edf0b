"""pmrep's changing headers: -1 (--dynamic-header) reports, at each sample, only the
metrics and instances that have a value then, writing the header again whenever that
set changes; -7 (--fixed-header, with -X) keeps one header of every metric and lists
under it, at each sample, the instances with a value then.

The report's columns are every instance the source knows; a sample's "results" are the
columns with a value in it (after filtering and ranking), per metric in column order,
or in instance-number order when ranking (-J), as PCP's pmrep orders them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from purepcp.pmapi.ids import PM_INDOM_NULL

from .cells import CellSpec, Renderer
from .model import Block, Column, Kind
from .text import NO_INST, SINGULAR, ColxrowWriter, CsvWriter, StdoutWriter, stamps

NO_VAL = "N/A"
Key = tuple[tuple[str, tuple[int, ...]], ...]


class Results:
    """Which columns have a value in each sample, grouped by metric."""

    def __init__(self, columns: Sequence[Column], rank: bool) -> None:
        self.columns = list(columns)
        self.rank = rank
        self.metrics: dict[str, list[int]] = {}  # metric -> its columns, in order
        for i, c in enumerate(self.columns):
            self.metrics.setdefault(c.metric, []).append(i)

    def at(self, block: Block, r: int) -> dict[str, list[int]]:
        """Sample R's results: per metric (every one, in order) its columns with a value."""
        found = {}
        for metric, cols in self.metrics.items():
            present = [i for i in cols if block.has[r, i]]
            if self.rank:
                present.sort(key=lambda i: self.columns[i].inst)
            found[metric] = present
        return found

    @staticmethod
    def key(results: dict[str, list[int]], columns: Sequence[Column]) -> Key:
        """What a header depends on: each metric with results, and its instances."""
        return tuple(
            (metric, tuple(columns[i].inst for i in cols))
            for metric, cols in results.items()
            if cols
        )


def one_row(block: Block, r: int, cols: Sequence[int]) -> Block:
    """Sample R of BLOCK with COLS' columns alone (in that order)."""
    idx = list(cols)
    strings = {j: block.strings[i][r : r + 1] for j, i in enumerate(idx) if i in block.strings}
    return Block(
        block.times[r : r + 1],
        block.values[r : r + 1][:, idx],
        block.has[r : r + 1][:, idx],
        strings,
    )


class DynamicStdoutWriter(StdoutWriter):
    """-1: the header of the metrics and instances with values, again when they change
    (or every -E lines); a sample with no values at all is its time and "N/A"."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, rank: bool = False,
                 empty_width: int = 0, **kw) -> None:  # fmt: skip
        kw["repeat"] = 0 if kw.get("repeat") == "auto" else kw.get("repeat", 0)
        super().__init__(out, columns, **kw)
        self.kw = kw
        self.results = Results(self.columns, rank)
        self.empty_width = empty_width  # -w's (pmrep's width), for "N/A"
        self.all_indoms = any(c.indom != PM_INDOM_NULL for c in self.columns)
        self.prev: Key | None = None
        self.current: StdoutWriter | None = None
        self.cols: list[int] = []
        self.lines = 0

    def header(self, repeat: bool = False) -> None:
        """No header before the first sample: each sample writes its own."""

    def _subset(self, cols: list[int]) -> StdoutWriter:
        chosen = [self.columns[i] for i in cols]
        return StdoutWriter(self.out, chosen, indoms=self.all_indoms, **self.kw)

    def write(self, block: Block) -> None:
        for r in range(block.rows):
            results = self.results.at(block, r)
            key = Results.key(results, self.columns)
            if key and (self.repeat == self.lines or key != self.prev):
                self.cols = [i for cols in results.values() for i in cols]
                self.current = self._subset(self.cols)
                self.current.header(repeat=self.prev is not None)
                self.lines = 0
            self.lines += 1
            self.prev = key
            if not key:
                lead = ""
                if self.timestamp:
                    lead = stamps(block.times[r : r + 1], self.zone, self.timefmt)[0]
                self.out.write(f"{lead}{self.delimiter}{NO_VAL:>{self.empty_width}}\n")
                continue
            assert self.current is not None
            for lines in self.current._rows(one_row(block, r, self.cols)):
                self.out.write("\n".join(lines) + "\n")


class DynamicCsvWriter:
    """-1 with CSV: a header line of the columns with values, again when they change
    (or every -E lines); a sample with no values at all is its time alone."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, rank: bool = False,
                 repeat: int | str = 0, **kw) -> None:  # fmt: skip
        self.out, self.columns, self.kw = out, list(columns), kw
        self.results = Results(self.columns, rank)
        self.repeat = 0 if repeat in ("auto", "", None) else int(repeat)
        self.prev: Key | None = None
        self.current = CsvWriter(out, [], **kw)
        self.cols: list[int] = []
        self.lines = 0

    def header(self, repeat: bool = False) -> None:
        """No header before the first sample: each sample writes its own."""

    def write(self, block: Block) -> None:
        for r in range(block.rows):
            results = self.results.at(block, r)
            key = Results.key(results, self.columns)
            if key and (self.repeat == self.lines or key != self.prev):
                self.cols = [i for cols in results.values() for i in cols]
                writer = CsvWriter(self.out, [self.columns[i] for i in self.cols], **self.kw)
                writer.prev = self.current.prev  # (-k's interval runs on)
                self.current = writer
                writer.header()
                self.lines = 0
            self.lines += 1
            self.prev = key
            if key:
                self.current.write(one_row(block, r, self.cols))
                continue
            empty = CsvWriter(self.out, [], **self.kw)  # (the time alone)
            empty.prev = self.current.prev
            empty.write(one_row(block, r, []))
            self.current.prev = empty.prev

    def close(self) -> None:
        pass


class DynamicColxrowWriter(StdoutWriter):
    """-X with -1 or -7: per sample, a line for each instance with a value in it (a
    metric without instances is "="), a column per text label; "~" where the label's
    metric has no value for that instance.  -1 writes the header of the metrics with
    values whenever they change; -7 (FIXED) keeps every metric's header, written once
    (and every -E samples)."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, colxrow: str,
                 fixed: bool = False, sort: Sequence[tuple[str, bool]] = (),
                 rank: bool = False, **kw) -> None:  # fmt: skip
        kw["repeat"] = 0 if kw.get("repeat") == "auto" else kw.get("repeat", 0)
        super().__init__(out, columns, **kw)
        self.kw = kw
        self.colxrow, self.fixed, self.sort = colxrow, fixed, list(sort)
        self.results = Results(self.columns, rank)
        self.name_width = len(colxrow) if colxrow else 8
        self.static = ColxrowWriter(out, self.columns, colxrow=colxrow, by_metric=True, **kw)
        self.labels: dict[str, list[str]] = {}  # label -> its metrics, in order
        self._prepare({m: [] for m in self.results.metrics}, every=True)
        self.found: list[str | None] = []  # the instances' names, in the lines' order
        self.prev: Key | None = None
        self.lines = 0
        self._renderers: dict[tuple[int, ...], Renderer] = {}

    def header(self, repeat: bool = False) -> None:
        """-7: every metric's header (as -X's); -1: none before the first sample."""
        if self.fixed:
            self.static.header(repeat)

    def _prepare(self, results: dict[str, list[int]], every: bool) -> None:
        """The text labels (of the metrics with results, or EVERY metric's) and the
        instances with results, in order, as pmrep's prepare_stdout_colxrow makes them."""
        self.labels = {}
        for metric, cols in results.items():
            if not every and not cols:
                continue
            label = self.columns[self.results.metrics[metric][0]].label
            self.labels.setdefault(label, []).append(metric)
        names: list[str | None] = []
        for cols in results.values():
            for i in cols:
                if self.columns[i].instance not in names:
                    names.append(self.columns[i].instance)
        self.found = names

    def _header_now(self, results: dict[str, list[int]]) -> None:
        """-1's header of the metrics with results (their instances in -g's list)."""
        chosen = [self.columns[i] for cols in results.values() for i in cols]
        writer = ColxrowWriter(self.out, chosen, colxrow=self.colxrow, **self.kw)
        writer.header(repeat=self.prev is not None)

    def _renderer(self, cols: tuple[int, ...]) -> Renderer:
        found = self._renderers.get(cols)
        if found is None:
            specs = []
            for label, i in zip(self.labels, cols, strict=True):
                head = self.columns[self.results.metrics[self.labels[label][0]][0]]
                if i < 0:
                    specs.append(CellSpec(Kind.STRING, head.width, 0, NO_INST))
                else:
                    c = self.columns[i]
                    specs.append(CellSpec(c.kind, c.width, c.precision))
            found = self._renderers[cols] = Renderer(specs, self.delimiter)
        return found

    def _sorted(self, block: Block, r: int, results: dict[str, list[int]]) -> None:
        """-6: the instances by each sort metric's values, then the rest as they were."""
        first: list[str | None] = []
        for metric, descending in self.sort:
            pairs = [(self.columns[i].instance, float(block.values[r, i]))
                     for i in results.get(metric, [])]  # fmt: skip
            for name, _ in sorted(pairs, key=lambda p: p[1], reverse=descending):
                if name not in first:
                    first.append(name)
        self.found = first + [n for n in self.found if n not in first]

    def _lead(self, block: Block, r: int) -> str:
        if not self.timestamp:
            return ""
        stamp = stamps(block.times[r : r + 1], self.zone, self.timefmt)[0]
        return stamp[: self.stamp_width].ljust(self.stamp_width)

    def write(self, block: Block) -> None:
        for r in range(block.rows):
            if self.fixed and (
                (self.lines > 0 and self.repeat == self.lines)
                or (self.auto and self.lines >= self.repeat)
            ):
                self.static.header(repeat=True)
                self.lines = 0
            results = self.results.at(block, r)
            key = Results.key(results, self.columns)
            if self.fixed:
                self._prepare(results, every=True)
            elif key and (self.repeat == self.lines or key != self.prev):
                self._prepare(results, every=False)
                self._header_now(results)
                self.lines = 0
            self.lines += 1
            self.prev = key
            if self.sort:
                self._sorted(block, r, results)
            self.out.write(self._sample(block, r, results))

    def _sample(self, block: Block, r: int, results: dict[str, list[int]]) -> str:
        """Sample R's lines, one per instance with a value."""
        where = {(self.columns[i].metric, self.columns[i].instance): i
                 for cols in results.values() for i in cols}  # fmt: skip
        lead, d = self._lead(block, r), self.delimiter
        out = []
        for name in self.found:
            cols = tuple(where.get((metrics[0], name), -1) for metrics in self.labels.values())
            if not self.fixed and all(i < 0 for i in cols):
                continue
            idx = [max(i, 0) for i in cols]
            has = block.has[r : r + 1][:, idx].copy()
            has[:, [j for j, i in enumerate(cols) if i < 0]] = False
            strings = {j: block.strings[i][r : r + 1]
                       for j, i in enumerate(cols) if i in block.strings}  # fmt: skip
            cells = self._renderer(cols).lines(block.values[r : r + 1][:, idx], has, strings)[0]
            first = (name or SINGULAR)[: self.name_width].rjust(self.name_width)
            out.append(f"{lead}{d}{first}{d}{cells}")
        if out:
            return "\n".join(out) + "\n"
        if not self.fixed:
            return f"{lead}{d}{NO_VAL:>{len(self.colxrow)}}\n"
        first = NO_VAL[: self.name_width].rjust(self.name_width)
        blanks = [self.columns[self.results.metrics[m[0]][0]].width for m in self.labels.values()]
        return f"{lead}{d}{first}" + "".join(f"{d}{NO_INST:>{w}}" for w in blanks) + "\n"
