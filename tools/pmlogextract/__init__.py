"""pmlogextract: merge PCP archives, or pick metrics and a time window out of them, as PCP 6's.

The inputs' records are merged in time order (the earliest head first, ties to the
archive named first), with a <mark> where an input ends unless pmlogger's
prologue/epilogue says the next one carries on from the same pmcd; metadata goes
out just before the first record that needs it, as PCP's does; a -c configuration
picks metrics and instances.  Records no selection touches are copied through as
bytes, never decoded.

The parts: cli (main), options (the command line), config (the -c file),
inputs (the archives read), metadata (descriptors, instance domains, label sets and
help text, checked and written on demand), output (the archive written: index policy,
volumes, marks), merge (the record loop) and extract (one run, start to end).
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogextract(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
