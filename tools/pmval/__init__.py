"""pmval: report one metric's values, one row per sample, as PCP's pmval(1) reports them.

The metric may carry its own source and instances ("host:metric[inst,...]").  A
counter is reported as a rate over each sampling interval unless -r is given, so its
first sample only supplies the previous value.  Instances become columns headed by
their names (-i narrows them through the context's profile); event metrics are dumped
record by record.  Live sources (-h, -L, the local pmcd) and archives are supported:
an archive is replayed interpolated, one sample per interval from the start of the
time window, or record by record with -U.

The parts: command (the run: options checked, source opened, report set up), options
(the command line), loop (pmval's main loop, once for every source), the sources
fetching (a fetch at a time: live, -U, events) and replay (an interpolated replay
answered ahead in chunks, in NumPy), model (the rows they make), writer (the one
that prints them), metric (the metric and its instances), events (event records'
dumps) and fatal (how a run ends early).  Importing this package imports none of
them: `pmval -V` never imports the reporting modules.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmval(1) on ARGV (else sys.argv): its exit status."""
    from .command import main as run_main

    return run_main(argv)


__all__ = ["main"]
