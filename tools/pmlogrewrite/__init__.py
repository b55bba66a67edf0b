"""pmlogrewrite: rewrite a PCP archive's metadata and values by rules, as PCP 6's.

The parts: cli (the command line), run (one run: input, rules, checks, output),
lexer and parser (the rules language, with PCP's messages and line numbers), specs
(what the rules ask), source (the input's metadata in libpcp's order), checks
(cross-checks and the -v summary), rewrite (the record loop), values (a record's
values converted), output (an adapter over pmapi's ArchiveWriter).  Importing this
package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogrewrite(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
