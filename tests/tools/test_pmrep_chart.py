"""pmrep's chart output (-o png|svg, pmplot): the images drawn are read back and their
pixels checked against the known values plotted, not only that a file was written."""

from __future__ import annotations

import os
import sys
from datetime import timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.tools.report.chart import (
    NO_VALUES,
    NOTHING_TO_CHART,
    ChartError,
    ChartOptions,
    ChartWriter,
    MissingExtra,
    NoValues,
    date_numbers,
    grid_shape,
    legend_rows,
    require_matplotlib,
    time_axis,
)
from purepcp.tools.report.model import Block, Column, Kind

pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is not installed")

ROWS = 120
START_NS = 1_700_000_000 * 1_000_000_000
STEP_NS = 10 * 1_000_000_000
WIDTH, HEIGHT, DPI = 6.0, 2.0, 100
C0, C1 = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)  # matplotlib's default cycle's first two
TOLERANCE = 0.05  # RGB distance (0..1 scale) from a series' colour blended over white


def column(metric: str, label: str, instance: str | None, inst: int, unit: str,
           kind: Kind = Kind.FLOAT, named: bool = False) -> Column:  # fmt: skip
    indom = PM_INDOM_NULL if instance is None else 1
    return Column(metric, label, instance, inst, unit, 8, 2, kind, indom, named=named)


COLUMNS = [
    column("test.a", "t.a", "one", 1, "KB"),
    column("test.a", "t.a", "two", 2, "KB"),
    column("test.b", "t.b", None, PM_IN_NULL, ""),
]


def times(rows: int = ROWS) -> np.ndarray:
    return START_NS + STEP_NS * np.arange(rows, dtype=np.int64)


def known_block(rows: int = ROWS) -> Block:
    """test.a "one" is 10 throughout, "two" ramps 0..100; test.b is a sine."""
    values = np.column_stack(
        [
            np.full(rows, 10.0),
            np.linspace(0.0, 100.0, rows),
            50 + 40 * np.sin(np.linspace(0, 6, rows)),
        ]
    )
    return Block(times(rows), values, np.ones(values.shape, dtype=bool), {})


def render(tmp_path: Path, block: Block | list[Block], name: str = "chart.png",
           columns: list[Column] = COLUMNS, **kw) -> tuple[ChartWriter, list[str]]:  # fmt: skip
    fmt = kw.pop("fmt", Path(name).suffix.lstrip("."))
    options = ChartOptions(str(tmp_path / name), fmt, width=WIDTH, height=HEIGHT, dpi=DPI, **kw)
    writer = ChartWriter(columns, options)
    for b in block if isinstance(block, list) else [block]:
        writer.write(b)
    return writer, writer.close()


def rgb(path: str) -> np.ndarray:
    from matplotlib.image import imread

    return imread(path)[:, :, :3]


def colour_mask(image: np.ndarray, colour: tuple[int, int, int]) -> np.ndarray:
    """Which pixels are COLOUR antialiased over white (a thin line covers a pixel only in
    part): 1 - pixel is a multiple (its coverage, here at least 30%) of 1 - COLOUR."""
    ink = 1.0 - np.array(colour) / 255.0
    away = 1.0 - image
    coverage = away @ ink / (ink @ ink)
    off = np.linalg.norm(away - coverage[..., None] * ink, axis=2)
    return (coverage >= 0.3) & (off < TOLERANCE)


def axes_box(writer: ChartWriter, metric: str, height_px: int) -> tuple[int, int, int, int]:
    """The metric's axes' inside as image rows and columns (top, bottom, left, right),
    a few pixels in from the spines."""
    box = writer.axes_by_metric[metric].get_window_extent()
    top, bottom = height_px - int(box.y1) + 3, height_px - int(box.y0) - 3
    return top, bottom, int(box.x0) + 3, int(box.x1) - 3


def pixel_row(writer: ChartWriter, metric: str, x: float, y: float, height_px: int) -> float:
    """The image row (0 at the top) where data point (X, Y) of METRIC's chart is drawn."""
    _, display_y = writer.axes_by_metric[metric].transData.transform((x, y))
    return height_px - display_y - 0.5


def pixel_column(writer: ChartWriter, metric: str, x: float) -> float:
    display_x, _ = writer.axes_by_metric[metric].transData.transform((x, 0.0))
    return display_x - 0.5


def test_png_size_and_lines_where_the_values_are(tmp_path):
    writer, paths = render(tmp_path, known_block(), grid=True, title="host")
    assert paths == [str(tmp_path / "chart.png")]
    image = rgb(paths[0])
    height_px = int(HEIGHT * 2 * DPI)
    assert image.shape[:2] == (height_px, int(WIDTH * DPI))  # two metrics stacked

    top, bottom, left, right = axes_box(writer, "test.a", height_px)
    inside = image[top:bottom, left:right]
    x = date_numbers(times())

    # "one" (C0) is 10 everywhere: one horizontal row, where 10 maps, across the chart
    ys, xs = np.nonzero(colour_mask(inside, C0))
    assert len(xs) > 0.8 * (right - left)
    expect = pixel_row(writer, "test.a", float(x[0]), 10.0, height_px) - top
    assert np.all(np.abs(ys - expect) <= 1.5), (expect, ys.min(), ys.max())
    assert xs.min() <= 2 and xs.max() >= right - left - 3

    # "two" (C1) ramps up: its pixels are higher (smaller rows) on the right
    ys, xs = np.nonzero(colour_mask(inside, C1))
    third = (right - left) // 3
    left_mean, right_mean = ys[xs < third].mean(), ys[xs >= 2 * third].mean()
    assert left_mean > right_mean + (bottom - top) / 4
    expect = pixel_row(writer, "test.a", float(x[-1]), 100.0, height_px) - top
    assert abs(ys[xs >= right - left - 3].mean() - expect) <= 2.0


def test_titles_units_legend_and_title(tmp_path):
    """Each chart is titled with the metric's full name, not pmrep's abbreviation (t.a),
    and the y axis says the unit."""
    writer, _ = render(tmp_path, known_block(), title="somehost")
    a, b = writer.axes_by_metric["test.a"], writer.axes_by_metric["test.b"]
    assert (a.get_title(loc="left"), a.get_ylabel()) == ("test.a", "KB")
    assert (b.get_title(loc="left"), b.get_ylabel()) == ("test.b", "")  # unitless: no label
    assert [t.get_text() for t in a.get_legend().get_texts()] == ["one", "two"]
    assert b.get_legend() is None  # a singular metric needs no legend
    assert writer.figures[0].get_suptitle() == "somehost"
    assert writer.figures[0].get_supxlabel() == "time (UTC)"


def test_the_users_label_comes_with_the_full_name(tmp_path):
    """A label the user gave (a metricset's "free") titles the chart, the name after it."""
    columns = [column("mem.util.free", "free", None, PM_IN_NULL, "KB", named=True),
               column("mem.util.used", "m.u.used", None, PM_IN_NULL, "KB")]  # fmt: skip
    block = known_block()
    writer, _ = render(tmp_path, Block(block.times, block.values[:, :2], block.has[:, :2], {}),
                       columns=columns)  # fmt: skip
    titles = {m: ax.get_title(loc="left") for m, ax in writer.axes_by_metric.items()}
    assert titles == {"mem.util.free": "free (mem.util.free)", "mem.util.used": "mem.util.used"}


def test_missing_values_are_gaps(tmp_path):
    block = known_block()
    has = block.has.copy()
    has[40:80, 0] = False  # "one" missing in the middle
    writer, paths = render(tmp_path, Block(block.times, block.values, has, {}))
    image = rgb(paths[0])
    height_px = image.shape[0]
    top, bottom, left, right = axes_box(writer, "test.a", height_px)
    x = date_numbers(times())
    ys, xs = np.nonzero(colour_mask(image[top:bottom, :], C0))
    xs = xs[(xs >= left) & (xs < right)]
    gap_from = pixel_column(writer, "test.a", float(x[39])) + 2
    gap_to = pixel_column(writer, "test.a", float(x[80])) - 2
    assert gap_to - gap_from > 50
    assert not np.any((xs > gap_from) & (xs < gap_to))  # a gap, not a line through 0
    assert np.any(xs < gap_from) and np.any(xs > gap_to)  # the line either side of it
    # nor is it drawn at zero: nothing of C0 near where 0 maps
    zero = pixel_row(writer, "test.a", float(x[60]), 0.0, height_px)
    assert zero > bottom or not np.any(np.abs(ys + top - zero) <= 1.5)


def test_blocks_of_one_row_draw_the_same_image(tmp_path):
    whole = known_block()
    rows = [
        Block(whole.times[i : i + 1], whole.values[i : i + 1], whole.has[i : i + 1], {})
        for i in range(whole.rows)
    ]
    _, [one] = render(tmp_path, whole, "whole.png")
    _, [many] = render(tmp_path, rows, "rows.png")
    assert np.array_equal(rgb(one), rgb(many))


def test_one_file_per_metric(tmp_path):
    writer, paths = render(tmp_path, known_block(), "out.png", grid=False)
    assert paths == [str(tmp_path / "out-test.a.png"), str(tmp_path / "out-test.b.png")]
    for p in paths:
        assert rgb(p).shape[:2] == (int(HEIGHT * DPI), int(WIDTH * DPI))
    assert sorted(os.listdir(tmp_path)) == ["out-test.a.png", "out-test.b.png"]
    assert set(writer.axes_by_metric) == {"test.a", "test.b"}


def test_svg_is_deterministic(tmp_path):
    _, [first] = render(tmp_path, known_block(), "one.svg", title="host")
    _, [second] = render(tmp_path, known_block(), "two.svg", title="host")
    data = Path(first).read_bytes()
    assert data.startswith(b"<?xml")
    assert b"<svg" in data
    assert data == Path(second).read_bytes()


def test_string_columns_are_skipped(tmp_path):
    columns = [*COLUMNS, column("test.s", "t.s", None, PM_IN_NULL, "", Kind.STRING)]
    block = known_block()
    values = np.column_stack([block.values, np.zeros(ROWS)])
    has = np.ones(values.shape, dtype=bool)
    strings = {3: np.array(["x"] * ROWS, dtype=object)}
    writer, [path] = render(tmp_path, Block(block.times, values, has, strings), columns=columns)
    assert list(writer.axes_by_metric) == ["test.a", "test.b"]
    assert rgb(path).shape[0] == int(HEIGHT * 2 * DPI)


def test_no_values_still_draws_the_axes(tmp_path):
    block = known_block()
    has = block.has.copy()
    has[:, 2] = False
    writer, _ = render(tmp_path, Block(block.times, block.values, has, {}))
    b = writer.axes_by_metric["test.b"]
    assert [t.get_text() for t in b.texts] == [NO_VALUES]
    assert len(writer.axes_by_metric["test.a"].texts) == 0


@pytest.mark.parametrize("case", ["no samples", "no values", "strings only"])
def test_nothing_to_chart_writes_no_file(tmp_path, case):
    """An empty window, or not one value in it, is NoValues: no 1970 chart of nothing."""
    columns, block = COLUMNS, known_block()
    if case == "no samples":
        blocks = []
    elif case == "no values":
        blocks = [Block(block.times, block.values, np.zeros(block.has.shape, bool), {})]
    else:
        columns = [column("test.s", "t.s", None, PM_IN_NULL, "", Kind.STRING)]
        strings = {0: np.array(["x"] * ROWS, dtype=object)}
        blocks = [Block(block.times, np.zeros((ROWS, 1)), np.ones((ROWS, 1), bool), strings)]
    with pytest.raises(NoValues) as caught:
        render(tmp_path, blocks, "empty.png", columns=columns)
    assert str(caught.value) == NOTHING_TO_CHART
    assert isinstance(caught.value, ChartError)
    assert os.listdir(tmp_path) == []


def test_lone_samples_get_a_marker(tmp_path):
    block = known_block(3)
    has = block.has.copy()
    has[1, :] = False  # each remaining sample stands alone
    writer, _ = render(tmp_path, Block(block.times, block.values, has, {}))
    [line] = writer.axes_by_metric["test.b"].get_lines()
    assert line.get_marker() == "o"
    assert np.isnan(line.get_ydata()[1])


def test_time_axis_in_the_zone(tmp_path):
    def hours(tz) -> list[int]:
        writer, _ = render(tmp_path, known_block(), tz=tz)
        labels = [t.get_text() for t in writer.axes_by_metric["test.b"].get_xticklabels()]
        return [int(text[:2]) for text in labels if len(text) == 5 and text[2] == ":"]

    utc, east = hours(None), hours(timezone(timedelta(hours=5)))
    assert utc and len(utc) == len(east)
    assert all((e - u) % 24 == 5 for u, e in zip(utc, east, strict=True))


def test_missing_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtra) as caught:
        require_matplotlib()
    message = str(caught.value)
    assert "purepcp[plot]" in message
    assert "\n" not in message


def many(metrics: int, rows: int = ROWS) -> tuple[list[Column], Block]:
    """METRICS singular metrics, each a ramp of its own."""
    columns = [
        column(f"test.m{i:02d}", f"t.m{i:02d}", None, PM_IN_NULL, "") for i in range(metrics)
    ]
    values = np.linspace(0.0, 1.0, rows)[:, None] * np.arange(1, metrics + 1)
    return columns, Block(times(rows), values, np.ones(values.shape, bool), {})


@pytest.mark.parametrize(
    ("charts", "shape"),
    [(1, (1, 1)), (3, (3, 1)), (4, (2, 2)), (8, (4, 2)), (9, (3, 3)), (17, (6, 3)), (40, (14, 3))],
)
def test_grid_shape(charts, shape):
    assert grid_shape(charts) == shape
    assert grid_shape(charts, 1) == (charts, 1)  # --columns 1: a column of them
    assert grid_shape(2, 5) == (1, 2)  # never more columns than charts


def test_many_charts_are_a_grid_of_same_sized_charts(tmp_path):
    """:vmstat's 17 metrics: six rows of three charts, each WIDTH x HEIGHT inches, not one
    column 17 charts tall; each column's lowest chart (row 6, or row 5 where the last row
    has no chart) shows the times."""
    columns, block = many(17)
    writer, [path] = render(tmp_path, block, "grid.png", columns=columns)
    assert rgb(path).shape[:2] == (int(6 * HEIGHT * DPI), int(3 * WIDTH * DPI))
    [fig] = writer.figures
    assert len(fig.axes) == 17  # the last row's empty place is no chart
    place = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        place[ax.get_title(loc="left")] = (spec.rowspan.start, spec.colspan.start)
        assert ax.get_window_extent().width > 0.6 * WIDTH * DPI  # (the labels take the rest)
        assert ax.get_window_extent().height > 0.4 * HEIGHT * DPI
    assert place["test.m00"] == (0, 0) and place["test.m02"] == (0, 2)  # a row at a time
    assert place["test.m16"] == (5, 1)
    shows_times = sorted(
        place[ax.get_title(loc="left")] for ax in fig.axes
        if any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())
    )  # fmt: skip
    assert shows_times == [(4, 2), (5, 0), (5, 1)]


def test_columns_asked_for(tmp_path):
    """--columns 2: three charts in two rows of two."""
    columns, block = many(3)
    options = ChartOptions(str(tmp_path / "two.png"), "png", width=WIDTH, height=HEIGHT, dpi=DPI,
                           columns=2)  # fmt: skip
    writer = ChartWriter(columns, options)
    writer.write(block)
    [path] = writer.close()
    assert rgb(path).shape[:2] == (int(2 * HEIGHT * DPI), int(2 * WIDTH * DPI))


SPANS = [int(s) for s in np.geomspace(2, 3 * 365 * 86_400, 60)]  # 2 seconds to 3 years


@pytest.mark.parametrize("width", [2.0, 6.4, 20.0])
def test_time_axis_has_three_ticks_or_more_and_room_for_them(width):
    """Any span, any chart width: at least three times on the axis, and no more than one
    every TICK_INCHES (matplotlib's own intervals left 9 seconds with two)."""
    from matplotlib.dates import date2num
    from matplotlib.figure import Figure

    from purepcp.tools.report.chart import TICK_INCHES

    start = np.datetime64(START_NS, "ns")
    for span in SPANS:
        ax = Figure(figsize=(width, HEIGHT)).subplots()
        time_axis(ax, None, width)
        lo, hi = date2num(start), date2num(start + np.timedelta64(span, "s"))
        ax.set_xlim(lo, hi)
        ticks = [t for t in ax.xaxis.get_major_locator()() if lo <= t <= hi]
        assert 3 <= len(ticks) <= max(7, width / TICK_INCHES), (span, len(ticks))


@pytest.mark.parametrize("span_s", [6, 9, 20 * 60, 86_400, 7 * 86_400])
def test_drawn_time_labels_are_several_and_distinct(tmp_path, span_s):
    rows = 200
    stamps = START_NS + np.linspace(0, span_s * 10**9, rows).astype(np.int64)
    block = known_block(rows)
    writer, _ = render(tmp_path, Block(stamps, block.values, block.has, {}))
    labels = [t.get_text() for t in writer.axes_by_metric["test.b"].get_xticklabels()]
    labels = [text for text in labels if text]
    assert len(set(labels)) == len(labels) >= 3, labels


@pytest.mark.filterwarnings("error")  # (a legend taller than its chart collapses the layout)
def test_a_long_legend_is_cut_short(tmp_path):
    rows = legend_rows(HEIGHT)
    count = 2 * rows + 8
    columns = [column("test.cpu", "t.cpu", f"cpu{i}", i, "") for i in range(count)]
    values = np.arange(ROWS, dtype=float)[:, None] + np.arange(count)
    writer, _ = render(tmp_path, Block(times(), values, np.ones(values.shape, bool), {}),
                       columns=columns)  # fmt: skip
    ax = writer.axes_by_metric["test.cpu"]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == [f"cpu{i}" for i in range(2 * rows - 1)] + ["(+9 more)"]
    assert len(ax.get_lines()) == count  # every instance is still drawn
    assert ax.get_window_extent().width > 0.4 * WIDTH * DPI


def test_a_file_that_cannot_be_written_is_a_one_line_error(tmp_path):
    with pytest.raises(ChartError) as caught:
        render(tmp_path / "no" / "such", known_block(), "x.png")
    assert str(caught.value) == f"cannot write {tmp_path}/no/such/x.png: No such file or directory"
