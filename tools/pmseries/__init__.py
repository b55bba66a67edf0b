"""pmseries: load archives into a Redis (or Valkey) key server in PCP 6's layout, and
ask it about the time series it holds.

`pmseries --load ARCHIVE` (or `--load '{source.path: "ARCHIVE"}'`, with optional
`metric.name` qualifiers and a `[start:..., finish:...]` window) loads as PCP's does
and prints PCP's line; the key server comes from -h/-p, or from the [redis] section
of the configuration files PCP's pmseries reads.

Everything else prints what PCP 6.0.3's pmseries prints (request.Mode lists the modes):
the metadata report of series ids, the listings of every name, source names, label
values, values in a time window, and the series a query matches.

The parts: options (the command line, into a request.Request), config (the key server),
load (--load), modes (the report modes and the query seam, modes.run_query), report
(PCP's printing state and callbacks), lookups (libpcp_web's pmSeries* calls), windows
(the -w window), formats, globs and sids (the pieces they share), cli (main).
Importing this package imports none of them: each command line imports what its path
needs (`pmseries -V` reads no configuration and never imports redis).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmseries(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)
