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
    ChartOptions,
    ChartWriter,
    MissingExtra,
    date_numbers,
    require_matplotlib,
)
from purepcp.tools.report.model import Block, Column, Kind

pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is not installed")

ROWS = 120
START_NS = 1_700_000_000 * 1_000_000_000
STEP_NS = 10 * 1_000_000_000
WIDTH, HEIGHT, DPI = 6.0, 2.0, 100
C0, C1 = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)  # matplotlib's default cycle's first two
TOLERANCE = 0.05  # RGB distance (0..1 scale) from a series' colour blended over white


@pytest.fixture(scope="module", autouse=True)
def _private_matplotlib_cache(tmp_path_factory):
    """matplotlib's font cache goes to a directory of the test's, not the user's home."""
    with pytest.MonkeyPatch.context() as mp:
        if "matplotlib.font_manager" not in sys.modules:
            mp.setenv("MPLCONFIGDIR", str(tmp_path_factory.mktemp("mplconfig")))
        yield


def column(metric: str, label: str, instance: str | None, inst: int, unit: str,
           kind: Kind = Kind.FLOAT) -> Column:  # fmt: skip
    indom = PM_INDOM_NULL if instance is None else 1
    return Column(metric, label, instance, inst, unit, 8, 2, kind, indom)


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


def test_labels_legend_and_title(tmp_path):
    writer, _ = render(tmp_path, known_block(), title="somehost")
    a, b = writer.axes_by_metric["test.a"], writer.axes_by_metric["test.b"]
    assert a.get_ylabel() == "t.a [KB]"
    assert b.get_ylabel() == "t.b"  # no unit: no brackets
    assert [t.get_text() for t in a.get_legend().get_texts()] == ["one", "two"]
    assert b.get_legend() is None  # a singular metric needs no legend
    assert writer.figures[0].get_suptitle() == "somehost"


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

    writer, [path] = render(tmp_path, [], "empty.png")  # no samples at all
    texts = [[t.get_text() for t in ax.texts] for ax in writer.axes_by_metric.values()]
    assert texts == [[NO_VALUES], [NO_VALUES]]
    assert Path(path).exists()


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
