"""pmlogcheck: check a PCP archive's integrity, as PCP 6's pmlogcheck does.

Four passes, in PCP's order and words: pass 0 frames every file of the archive
(labels, record lengths, index entries, metadata record types for the archive's
version), pass 1 checks the temporal index, pass 2 the metric descriptors, and pass 3
reads the data volumes as libpcp reads them, reporting time going backwards, records
before the label's time and counter wraps.  Damage ends a pass with the file and the
record or offset where it was found.

The parts: cli (main: one run, pass by pass), options (the command line), files (the
archive's files, found as pmlogcheck's directory scan finds them), state (what the
passes share), pass0 ... pass3, walk (libpcp's positioning and forward reads over the
volumes), stamps (times as pmlogcheck prints them) and logmeta (the -Dlogmeta lines of
a refused instance domain).  Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogcheck(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
