"""How a pmval run ends early: its message on stderr (after what stdout holds), status 1."""

from __future__ import annotations

import sys

PROG = "pmval"


def die(message: str) -> SystemExit:
    """Write MESSAGE (whole lines, "pmval: ..." as PCP words them) and give the exit to raise."""
    sys.stdout.flush()
    sys.stderr.write(message)
    sys.stderr.flush()
    return SystemExit(1)
