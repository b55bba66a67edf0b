"""pmrep: report metrics from a live host or an archive, with pmrep(1)'s flags, pmrep.conf(5)
metricsets and outputs (stdout's columns, CSV, an archive, JSON, and charts as PNG or SVG).

An archive is replayed a chunk of samples at a time through the columnar reader, its
rates, scaling and text made in NumPy; a live source is fetched one sample at a time
through the same conversion and formatting.

The options and the pipeline are the report package's (report/command.py), which pmplot
shares.
"""

from __future__ import annotations

from collections.abc import Sequence

from purepcp.tools.report.command import TOOL, run


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
