"""pmdumptext: metric values as columns of text, a line per sample, as PCP's
pmdumptext(1) writes them, from the local pmcd, a host (-h) or archives (-a, replayed
interpolated); metrics from the command line, a configuration file (-c) or stdin.

The parts: options (the command line), metrics (sources, metrics and their values, as
PCP's libpcp_qmc keeps them) and command (the run: headings and lines).  Importing
this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmdumptext(1) on ARGV (else sys.argv): its exit status."""
    from .command import main as run_main

    return run_main(argv)


__all__ = ["main"]
