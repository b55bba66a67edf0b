"""pmlogrewrite's command: options, rules, checks, then the rewrite (or -i in place).

The order is PCP's: the command line, the input archive, the output's name (for
-i a temporary one beside the input), every rules file in turn, the cross-checks,
the -v summary, -C and -q exits, and only then the output archive.  A failure after
the output exists removes it ("Archive ... not created.") unless -d keeps it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .options import TOOL, USAGE_TAIL, Options, parse_options


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _usage(o: Options) -> int:
    sys.stdout.flush()
    for line in o.errors:
        sys.stderr.write(line + "\n")
    sys.stderr.write(TOOL.usage() + USAGE_TAIL)
    return 1


def _run(argv: list[str]) -> int:
    o = parse_options(argv)
    if o.bad:
        return _usage(o)
    from .run import run

    return run(o)


__all__ = ["Options", "main"]
