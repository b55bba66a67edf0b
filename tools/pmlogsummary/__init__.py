"""pmlogsummary: time-averaged values, rates and extremes of an archive's metrics, as PCP 6's.

For every metric-instance in the archive's time window: the time-weighted average (a
counter's as a rate), and on request the stochastic average, sum, minimum and maximum
with their times, the sample count and a distribution across bins, in PCP's columns and
formats.  The parts: cli (main), options (the command line), summary (one run), walk
(the record-by-record sums, PCP's arithmetic in full), columnar and fastpath (the same
sums as NumPy arrays over the archive's columns, for plain archives), stats (what is
kept per instance) and report (the lines).  Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogsummary(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
