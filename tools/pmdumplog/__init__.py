"""pmdumplog: dump a PCP archive's label, metadata, temporal index and records, as PCP 6's.

The sections come in PCP's order (label, descriptors, label sets, help text, on-disk
and in-memory instance domains, temporal index, records) and in PCP's own orders
within each section: descriptors and instance domains in the order libpcp's hash
tables hold them, label sets by time then type then identifier, help text by
identifier.  Records are read forwards or (-r) backwards from the time window's
edge; metric-name arguments pick value sets out of each record.  Damage in a data
volume ends the dump after every record before it, with one line naming the file
and byte offset; `-v FILE` dumps any file's framed records in hex.

The parts: cli (main), options (the command line), dump (one run: open, zone, window,
metric names, then the sections in order), source (what every section reads), the
sections label, descs, labelsets, helptext, indoms, tindex and records (with values
and events for a record's text), raw (-v); beneath them metadata (the .meta as libpcp
holds it, in pmapi.hashtable's orders), clock (times) and files (opening, sizes).
Importing this package imports none of them: each command line imports what its path
needs (`pmdumplog --version` never imports the dump).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmdumplog(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
