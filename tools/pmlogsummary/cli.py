"""pmlogsummary's command: read the command line, then summarise the archive.

A usage error or --version imports nothing of the summary (nor NumPy).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .options import TOOL, parse_options, usage_exit


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogsummary(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    if o.errors or o.exit_now:
        raise usage_exit(o)
    from .summary import run

    return run(o)
