"""pmstat: a one-line summary of a system's performance per sample (load, memory, swap,
disk, interrupts, CPU), as PCP's pmstat(1) prints it, from the local pmcd, one or more
hosts (-h, -H), this process's agents (-L) or archives (-a, replayed interpolated).

The parts: options (the command line, read as pmGetOptions reads it for several
sources), fetchgroup (pmstat's metrics fetched and converted as PCP's fetchgroup does),
report (the lines) and command (the run).  Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmstat(1) on ARGV (else sys.argv): its exit status."""
    from .command import main as run_main

    return run_main(argv)


__all__ = ["main"]
