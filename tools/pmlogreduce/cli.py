"""pmlogreduce's command: read the command line, then reduce the archive.

A usage error imports nothing of the reduction (nor NumPy).
"""

from __future__ import annotations

from collections.abc import Sequence

from .options import TOOL, parse_options, usage_exit


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogreduce(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    o = parse_options(argv)
    if o.errors:
        raise usage_exit(o)
    from .reduce import run

    return run(o)
