"""pmlogreduce: a PCP archive reduced to one interpolated record per interval, as PCP 6's.

Every -t (ten minutes by default) over the window, the values interpolated at that time
are written, each metric-instance only while the input observes it (the record-by-record
scan of the interval says which); 32-bit counters are written as 64-bit ones, <mark>
records are copied, instance domains are written as they change, and the temporal index
follows libpcp's rules.  The parts: cli (main), options (the command line), reduce (one
run) with scan (the record-by-record scan) and metrics (the output metadata).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogreduce(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
