"""pmieconf: display and set the variables of pmie rule templates, and generate from them
the pmie rules file, as PCP's pmieconf(1) does.

The parts: scanner (the template language's tokens, also the commands' words), model
(rules, variables and their types), templates (template files and the rules path),
values (checking, printing and $variable$ expansion), store (the rules read, their
lookup and changes), pmiefile (the generated file: its saved settings read back and the
file written), commands (the interactive and one-shot commands) and cli (the command
line).  Importing this package imports none of them.  Our own templates, for the metrics
our agents serve, are in rules/ (package data), used when PCP's
($PCP_VAR_DIR/config/pmieconf) are not installed.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmieconf(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
