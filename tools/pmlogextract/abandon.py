"""How a run ends early: Abandon unwinds to the run, which removes the output
(unless -d) and says so, as PCP's abandon_extract does."""

from __future__ import annotations


class Abandon(Exception):
    """Stop: the messages are already out; the output archive goes (exit status 1)."""
