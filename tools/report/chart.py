"""pmrep's chart outputs (-o png|svg) and pmplot's: one line chart per metric, one line
per instance, drawn with matplotlib's non-GUI canvases once every sample is in.

Samples accumulate as the blocks' own arrays and are joined once at close(), so a live
report of one row a time and an archive replay of a few large blocks cost the same.
Figures are built with matplotlib.figure.Figure (no pyplot): nothing opens a window and
no global figure state is kept between reports.
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

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

EXTRA_MESSAGE = "pmrep: charts need matplotlib: pip install 'purepcp[plot]'"
FORMATS = ("png", "svg")
NO_VALUES = "no values"
AGG_CHUNK = 10_000  # Agg draws long replays' lines in pieces (else: cell block limit)
SVG_SALT = "purepcp"  # fixed ids in SVG output, so the same data gives the same bytes


class MissingExtra(Exception):
    """The optional matplotlib is not installed; str() is a one-line message to print."""


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
    width: float = 10.0  # inches per chart
    height: float = 3.0
    dpi: int = 100
    title: str | None = None  # the figure's title (the host or archive)
    tz: datetime.tzinfo | None = None  # the time axis's zone (None: UTC)


@dataclass(frozen=True)
class Chart:
    """One metric's chart: its name, y label and the (non-string) columns it draws."""

    metric: str
    ylabel: str
    columns: tuple[int, ...]


def y_label(column: Column) -> str:
    """The metric's label with its unit in brackets ("m.u.free [KB]"), no brackets unitless."""
    return f"{column.label} [{column.unit}]" if column.unit else column.label


def plan_charts(columns: Sequence[Column]) -> list[Chart]:
    """The columns grouped by metric in column order; string columns are left out."""
    groups: dict[str, list[int]] = {}
    first: dict[str, Column] = {}
    for i, c in enumerate(columns):
        if c.kind is Kind.STRING:
            continue
        groups.setdefault(c.metric, []).append(i)
        first.setdefault(c.metric, c)
    return [Chart(m, y_label(first[m]), tuple(ix)) for m, ix in groups.items()]


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


def time_axis(ax: Axes, tz: datetime.tzinfo | None) -> None:
    """Dates on the x axis, in zone TZ, labelled concisely."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    zone = tz or datetime.UTC
    locator = AutoDateLocator(tz=zone)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=zone))


def draw_line(ax: Axes, x: np.ndarray, y: np.ndarray, has: np.ndarray, label: str | None) -> None:
    """One instance's line; samples with no neighbour get a marker so they still show."""
    alone = isolated(has)
    kwargs: dict[str, Any] = {"linewidth": 1.2}
    if alone.any():
        kwargs.update(marker="o", markersize=3, markevery=alone.tolist())
    ax.plot(x, gaps(y, has), label=label, **kwargs)


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

    def _samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every sample so far: x as matplotlib dates, values and presence (rows, columns)."""
        n = len(self.columns)
        if not self._times:
            return np.empty(0), np.empty((0, n)), np.zeros((0, n), dtype=bool)
        times = np.concatenate(self._times).astype(np.int64)
        values = np.concatenate(self._values).astype(np.float64, copy=False)
        has = np.concatenate(self._has).astype(bool, copy=False)
        self._times, self._values, self._has = [times], [values], [has]
        return date_numbers(times), values, has

    def _draw(self, ax: Axes, chart: Chart, x: np.ndarray, values: np.ndarray,
              has: np.ndarray) -> None:  # fmt: skip
        """One metric's chart on AX: a line per instance, a legend when it has instances."""
        time_axis(ax, self.options.tz)
        ax.set_ylabel(chart.ylabel)
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
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                      frameon=False)  # fmt: skip
        self.axes_by_metric[chart.metric] = ax

    def _figure(self, charts: Sequence[Chart], x: np.ndarray, values: np.ndarray,
                has: np.ndarray) -> Figure:  # fmt: skip
        """A figure of CHARTS stacked, sharing the time axis (one "no values" chart if none)."""
        from matplotlib.figure import Figure

        o = self.options
        rows = max(len(charts), 1)
        fig = Figure(figsize=(o.width, o.height * rows), dpi=o.dpi, layout="constrained")
        axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
        for ax, chart in zip(axes, charts, strict=False):
            self._draw(ax, chart, x, values, has)
        if not charts:
            no_values(axes[0])
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
        fig.savefig(path, format=self.options.fmt, dpi=self.options.dpi, metadata=metadata)
        self.figures.append(fig)
        return path

    def close(self) -> list[str]:
        """Draw the charts and save them: one image, or one file per metric; their paths."""
        x, values, has = self._samples()
        o = self.options
        self.axes_by_metric, self.figures = {}, []
        with style(o.fmt):
            if o.grid or not self.charts:
                return [self._save(self._figure(self.charts, x, values, has), o.path)]
            return [
                self._save(self._figure([c], x, values, has), metric_path(o.path, o.fmt, c.metric))
                for c in self.charts
            ]
