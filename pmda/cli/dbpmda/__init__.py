"""dbpmda, the PMDA debugger: `main` parses the command line, `run` executes a script.

Modules: main (command line and session), lex (reading and tokenising commands),
gram (the command grammar), driver (what the agent connections share), daemon (pipe
and socket agents), inproc (Python agents loaded in-process),
fmt (printing replies as PCP's dbpmda does), state (profile, debug flags, values).
"""

from .main import main, run

__all__ = ["main", "run"]
