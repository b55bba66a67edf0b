"""pmplot: line charts of metrics from an archive or a live window, as PNG or SVG.

pmrep with the chart output: every pmrep option and metricset works (-a, -h, -S/-T,
-t, -i, :metricsets, units), each metric one chart of its instances' lines, in one
image (a grid) or one file per metric (--separate).  Needs matplotlib: pip install
'purepcp[plot]'.
"""

from __future__ import annotations

from collections.abc import Sequence

from purepcp.pmapi.options import Tool
from purepcp.tools.report.command import CHART, GENERAL, REPORTING, run

TOOL = Tool(
    "pmplot",
    "[option...] metricspec [...]",
    (("General options", GENERAL), ("Reporting options", REPORTING), ("Chart options", CHART)),
    help_status=0,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Charts to -F FILE (default pmplot.png; a .svg name makes SVG)."""
    return TOOL.main(lambda args: run(args, TOOL, chart="png"), argv)


if __name__ == "__main__":
    raise SystemExit(main())
