"""pmdumplog's command: read the command line, then dump the archive or (-v) a raw file.

Only a run that dumps imports the dump (dump, and the section modules it calls) or the
raw dump (raw): `pmdumplog --version` and a usage error import neither.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .options import TOOL, parse_options, usage_exit


def main(argv: Sequence[str] | None = None) -> int:
    """pmdumplog(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names and values may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    o = parse_options(argv)
    raw = "v" in o.flags
    if o.errors or o.exit_now or (raw and o.operands) or (not raw and not o.operands):
        raise usage_exit(o)
    if raw:
        from .raw import dump_raw_file

        return dump_raw_file(str(o.rawfile))
    from .dump import dump

    return dump(o)
