"""pmplot: line charts of metrics from an archive or a live window, as PNG or SVG.

pmrep with the chart output: pmrep's options that choose metrics, instances and times
work (-a, -h, -S/-T, -t, -i, :metricsets, units; not the text-only ones such as -p or -X),
each metric one chart of its instances' lines, in one image (a grid of up to three
columns) or one file per metric (--separate).  Its only outputs are charts: -o png or
svg, or -F's suffix, .png or .svg; other -o values and suffixes are refused, and an
empty window is an error ("pmplot: no values to chart"), not an empty chart.  Needs
matplotlib: pip install 'purepcp[plot]'.
"""

from __future__ import annotations

from collections.abc import Sequence

from purepcp.pmapi.options import Tool
from purepcp.tools.report.command import CHART, DEBUG, PLOT_GENERAL, PLOT_REPORTING, run

TOOL = Tool(
    "pmplot",
    "[option...] metricspec [...]",
    (("General options", PLOT_GENERAL), ("Reporting options", PLOT_REPORTING),
     ("Chart options", CHART), ("", (DEBUG,))),
    help_status=0,
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Charts to -F FILE (default pmplot.png; a .svg name, or -o svg, makes SVG)."""
    return TOOL.main(lambda args: run(args, TOOL, chart="png"), argv)


if __name__ == "__main__":
    raise SystemExit(main())
