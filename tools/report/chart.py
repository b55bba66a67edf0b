"""pmrep's chart outputs (-o png|svg) and pmplot's: one line chart per metric, one line
per instance, drawn with matplotlib's non-GUI canvases once every sample is in.

Samples accumulate as the blocks' own arrays and are joined once at close(), so a live
report of one row a time and an archive replay of a few large blocks cost the same.
Figures are built with matplotlib.figure.Figure (no pyplot): nothing opens a window and
no global figure state is kept between reports.

Each chart has the same size (WIDTH x HEIGHT inches unless asked otherwise), titled with
the metric's full name, and the charts fill a grid a row at a time (one column up to
three charts, two up to eight, three beyond: `:vmstat`'s 17 are six rows of three).  The
time axis is in the report's zone (pmrep's: -z, -Z, else local), which the figure names.
When not one value was sampled, nothing is drawn: close() raises NoValues.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .model import Block, Column, Kind
from .settings import CHART_DPI, CHART_SIZE

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

EXTRA_MESSAGE = "pmrep: charts need matplotlib: pip install 'purepcp[plot]'"
FORMATS = ("png", "svg")
NO_VALUES = "no values"  # the note on a chart whose metric had no value in the window
NOTHING_TO_CHART = "no values to chart"  # no chart has a value: no image is written
WIDTH, HEIGHT = CHART_SIZE  # each chart's default size, in inches
AUTO_COLUMNS = ((3, 1), (8, 2))  # up to 3 charts in one column, up to 8 in two, else 3
TICK_INCHES = 0.9  # at most one time tick per this much of a chart's width
LEGEND_ROW, LEGEND_MARGIN = 0.21, 0.6  # inches: a legend's line, and what it cannot use
AGG_CHUNK = 10_000  # Agg draws long replays' lines in pieces (else: cell block limit)
SVG_SALT = "purepcp"  # fixed ids in SVG output, so the same data gives the same bytes


class MissingExtra(Exception):
    """The optional matplotlib is not installed; str() is a one-line message to print."""


class ChartError(Exception):
    """No chart can be written; str() is a one-line message (the command adds its name)."""


class NoValues(ChartError):
    """Not one value to draw (an empty time window, or only string metrics)."""


def require_matplotlib() -> None:
    """Import matplotlib's Agg canvas, or raise MissingExtra naming the extra to install."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    except ImportError:
        raise MissingExtra(EXTRA_MESSAGE) from None


@dataclass(frozen=True)
class ChartOptions:
    """Where and how big the charts are drawn (sizes per chart, in inches)."""

    path: str  # the output file (grid), or the base name for one file per metric
    fmt: str  # "png" or "svg"
    grid: bool = True  # one image of every chart; False: BASE-<metric>.<fmt> each
    width: float = WIDTH  # inches per chart
    height: float = HEIGHT
    dpi: int = CHART_DPI
    title: str | None = None  # the figure's title (the host or archive)
    tz: datetime.tzinfo | None = None  # the time axis's zone (None: UTC)
    columns: int | None = None  # charts side by side (None: by their number, AUTO_COLUMNS)


@dataclass(frozen=True)
class Chart:
    """One metric's chart: its name, title, unit (the y label) and the (non-string)
    columns it draws."""

    metric: str
    title: str
    unit: str
    columns: tuple[int, ...]


def chart_title(column: Column) -> str:
    """The metric's full name, after the user's own label when the spec gave one
    ("free (mem.util.free)"); never pmrep's abbreviation (m.u.free)."""
    if column.named and column.label != column.metric:
        return f"{column.label} ({column.metric})"
    return column.metric


def plan_charts(columns: Sequence[Column]) -> list[Chart]:
    """The columns grouped by metric in column order; string columns are left out."""
    groups: dict[str, list[int]] = {}
    first: dict[str, Column] = {}
    for i, c in enumerate(columns):
        if c.kind is Kind.STRING:
            continue
        groups.setdefault(c.metric, []).append(i)
        first.setdefault(c.metric, c)
    return [Chart(m, chart_title(first[m]), first[m].unit, tuple(ix)) for m, ix in groups.items()]


def grid_shape(charts: int, columns: int | None = None) -> tuple[int, int]:
    """(rows, columns) of a grid of CHARTS charts, filled a row at a time: COLUMNS side by
    side, or by their number (1 column up to 3 charts, 2 up to 8, else 3)."""
    if columns is None:
        columns = next((c for most, c in AUTO_COLUMNS if charts <= most), 3)
    columns = max(1, min(columns, charts))
    return -(-max(charts, 1) // columns), columns


def zone_name(tz: datetime.tzinfo | None, when_ns: int) -> str:
    """The zone's name at WHEN_NS ("AEST", "UTC"), else its offset ("UTC+10:00")."""
    when = datetime.datetime.fromtimestamp(when_ns / 1e9, tz or datetime.UTC)
    return when.tzname() or when.strftime("UTC%z")


def base_name(path: str) -> str:
    """PATH without its .png/.svg suffix: the stem of the one-file-per-metric names."""
    root, ext = os.path.splitext(path)
    return root if ext.lower().lstrip(".") in FORMATS else path


def metric_path(path: str, fmt: str, metric: str) -> str:
    """BASE-<metric>.<fmt>, with any path separator in the metric's name made harmless."""
    safe = metric.replace(os.sep, "_").replace("/", "_")
    return f"{base_name(path)}-{safe}.{fmt}"


def gaps(values: np.ndarray, has: np.ndarray) -> np.ndarray:
    """VALUES with NaN where there is no value, so matplotlib leaves a gap, not a zero."""
    return np.where(has, values, np.nan)


def isolated(has: np.ndarray) -> np.ndarray:
    """Which samples have no present neighbour: a line cannot show them, a marker can."""
    before = np.concatenate(([False], has[:-1]))
    after = np.concatenate((has[1:], [False]))
    return has & ~before & ~after


def date_numbers(times: np.ndarray) -> np.ndarray:
    """int64 ns since the epoch as matplotlib's dates (days since its epoch, UTC)."""
    from matplotlib.dates import date2num

    return np.asarray(date2num(times.astype("datetime64[ns]")), dtype=np.float64)


@contextmanager
def style(fmt: str) -> Iterator[None]:
    """matplotlib's default style (not the user's matplotlibrc), fixed SVG ids, and long
    lines drawn in chunks."""
    import matplotlib as mpl
    import matplotlib.style

    rc: dict[str, Any] = {"svg.hashsalt": SVG_SALT, "agg.path.chunksize": AGG_CHUNK}
    if "svg.id" in mpl.rcParams:
        rc["svg.id"] = "purepcp"
    with matplotlib.style.context(["default", rc]):
        yield


def time_axis(ax: Axes, tz: datetime.tzinfo | None, width: float) -> None:
    """Dates on the x axis, in zone TZ, labelled concisely: at least three ticks, and no
    more than a chart WIDTH inches wide has room for."""
    from matplotlib.dates import MINUTELY, SECONDLY, AutoDateLocator, ConciseDateFormatter

    zone = tz or datetime.UTC
    most = max(7, int(width / TICK_INCHES))
    locator = AutoDateLocator(tz=zone, minticks=3, maxticks=most)
    for unit in (SECONDLY, MINUTELY):  # (matplotlib's 1, 5, 10 ... leave 9 seconds 2 ticks)
        locator.intervald[unit] = [1, 2, 5, 10, 15, 30]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=zone))


def draw_line(ax: Axes, x: np.ndarray, y: np.ndarray, has: np.ndarray, label: str | None) -> None:
    """One instance's line; samples with no neighbour get a marker so they still show."""
    alone = isolated(has)
    kwargs: dict[str, Any] = {"linewidth": 1.2}
    if alone.any():
        kwargs.update(marker="o", markersize=3, markevery=alone.tolist())
    ax.plot(x, gaps(y, has), label=label, **kwargs)


def legend_rows(height: float) -> int:
    """How many names a legend beside a chart HEIGHT inches tall has room for in a column
    (its title and time labels take LEGEND_MARGIN of it; a name, LEGEND_ROW)."""
    return max(2, int((height - LEGEND_MARGIN) / LEGEND_ROW))


def legend(ax: Axes, height: float) -> None:
    """The instances' names beside the chart, in one column or two; as many as fit, then
    how many more there are."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    rows = legend_rows(height)
    columns = 1 if len(handles) <= rows else 2
    if len(handles) > columns * rows:
        keep = columns * rows - 1
        more = len(handles) - keep
        handles = [*handles[:keep], Line2D([], [], linestyle="none")]
        labels = [*labels[:keep], f"(+{more} more)"]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
              frameon=False, ncols=columns, columnspacing=1.0)  # fmt: skip


def no_values(ax: Axes) -> None:
    """An empty chart still shows its axes, with a note that nothing was sampled."""
    ax.text(0.5, 0.5, NO_VALUES, transform=ax.transAxes, ha="center", va="center",
            color="0.4")  # fmt: skip


class ChartWriter:
    """pmrep's png/svg output: accumulates blocks, draws and saves the charts at close()."""

    def __init__(self, columns: list[Column], options: ChartOptions) -> None:
        if options.fmt not in FORMATS:
            raise ValueError(f"chart format must be png or svg, not {options.fmt!r}")
        self.columns = list(columns)
        self.options = options
        self.charts = plan_charts(self.columns)
        self._times: list[np.ndarray] = []
        self._values: list[np.ndarray] = []
        self._has: list[np.ndarray] = []
        self.axes_by_metric: dict[str, Axes] = {}  # after close(): each metric's axes
        self.figures: list[Figure] = []  # after close(): the figures saved

    def header(self) -> None:
        """Charts have no header to print (pmrep calls this for every output)."""

    def write(self, block: Block) -> None:
        """Keep the block's arrays; they are joined once, when the charts are drawn."""
        if block.rows:
            self._times.append(block.times)
            self._values.append(block.values)
            self._has.append(block.has)

    def _samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every sample so far: times (ns), x as matplotlib dates, values and presence."""
        n = len(self.columns)
        if not self._times:
            return (np.empty(0, np.int64), np.empty(0), np.empty((0, n)),
                    np.zeros((0, n), dtype=bool))  # fmt: skip
        times = np.concatenate(self._times).astype(np.int64)
        values = np.concatenate(self._values).astype(np.float64, copy=False)
        has = np.concatenate(self._has).astype(bool, copy=False)
        self._times, self._values, self._has = [times], [values], [has]
        return times, date_numbers(times), values, has

    def _draw(self, ax: Axes, chart: Chart, x: np.ndarray, values: np.ndarray,
              has: np.ndarray) -> None:  # fmt: skip
        """One metric's chart on AX: a line per instance, a legend when it has instances."""
        time_axis(ax, self.options.tz, self.options.width)
        ax.set_title(chart.title, loc="left", fontsize="medium")
        if chart.unit:
            ax.set_ylabel(chart.unit)
        ax.margins(x=0)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.grid(True, alpha=0.3)
        labelled = False
        for i in chart.columns:
            name = self.columns[i].instance
            draw_line(ax, x, values[:, i], has[:, i], name)
            labelled |= name is not None
        if not has[:, list(chart.columns)].any():
            no_values(ax)
        elif labelled:
            legend(ax, self.options.height)
        self.axes_by_metric[chart.metric] = ax

    def _figure(self, charts: Sequence[Chart], times: np.ndarray, x: np.ndarray,
                values: np.ndarray, has: np.ndarray) -> Figure:  # fmt: skip
        """A figure of CHARTS in a grid a row at a time, sharing the time axis; each column's
        lowest chart shows the times, the figure says in which zone."""
        from matplotlib.figure import Figure

        o = self.options
        rows, cols = grid_shape(len(charts), o.columns)
        fig = Figure(figsize=(o.width * cols, o.height * rows), dpi=o.dpi, layout="constrained")
        axes = fig.subplots(rows, cols, sharex=True, squeeze=False).ravel()
        for i, ax in enumerate(axes):
            if i >= len(charts):
                fig.delaxes(ax)  # (the last row's empty places)
                continue
            self._draw(ax, charts[i], x, values, has)
            lowest = i + cols >= len(charts)
            ax.tick_params(axis="x", labelbottom=lowest)
            ax.xaxis.get_offset_text().set_visible(lowest)
        fig.supxlabel(f"time ({zone_name(o.tz, int(times[0]))})", fontsize="medium")
        if o.title:
            fig.suptitle(o.title)
        return fig

    def _save(self, fig: Figure, path: str) -> str:
        """Save FIG to PATH through the format's own canvas (Agg for png), deterministically."""
        if self.options.fmt == "svg":
            from matplotlib.backends.backend_svg import FigureCanvasSVG as Canvas
        else:
            from matplotlib.backends.backend_agg import FigureCanvasAgg as Canvas
        Canvas(fig)
        metadata = {"Date": None} if self.options.fmt == "svg" else None
        try:
            fig.savefig(path, format=self.options.fmt, dpi=self.options.dpi, metadata=metadata)
        except OSError as exc:
            raise ChartError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.figures.append(fig)
        return path

    def close(self) -> list[str]:
        """Draw the charts and save them: one image, or one file per metric; their paths.
        NoValues, and no file written, when not one chart has a value to draw."""
        times, x, values, has = self._samples()
        drawn = [i for chart in self.charts for i in chart.columns]
        if not has[:, drawn].any():
            raise NoValues(NOTHING_TO_CHART)
        o = self.options
        self.axes_by_metric, self.figures = {}, []
        with style(o.fmt):
            if o.grid:
                return [self._save(self._figure(self.charts, times, x, values, has), o.path)]
            figures = [(self._figure([c], times, x, values, has), c) for c in self.charts]
            return [self._save(fig, metric_path(o.path, o.fmt, c.metric)) for fig, c in figures]
