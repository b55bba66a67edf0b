"""pmlc: control a running pmlogger (PCP's pmlc, its command language and its output).

cli.py reads the command line and runs the read-do loop; lexer.py reads commands a
character at a time as PCP's scanner does, parser.py is the grammar, metrics.py builds
a statement's metric list, session.py carries out the commands, client.py talks to the
logger's control port.
"""

from __future__ import annotations

from .cli import main

__all__ = ["main"]
