"""pmlogextract's command: read the command line, then run the extraction.

A usage error imports nothing of the archive code."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .options import TOOL, parse_options, usage_exit


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogextract(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    if o.errors:
        raise usage_exit(o)
    from .extract import extract

    return extract(o)
