"""pmie, PCP's inference engine: its rule language, archive replay and live evaluation.

``check(text, source_name)`` parses a rule file as PCP 6's ``pmie -C`` does and
gives back a :class:`~.check.CheckResult`: the statements in order (each a
named rule, an ``expr_N`` rule, or a constant variable), the messages pmie
prints for bad input (syntax errors with pmie's positions, grammar messages,
warnings), and the exit status ``pmie -C`` would have.

Modules: :mod:`.lexicon` (the scanner, macro expansion, positions),
:mod:`.grammar` (the parser and yacc-style error recovery), :mod:`.tree` (the
frozen expression tree), :mod:`.shape` (host/time axes checked at parse time),
:mod:`.syslog` (syslog -p/-t options), :mod:`.ere` (POSIX patterns, checked and matched),
:mod:`.check` (statements, variables, rule names); then evaluation:
:mod:`.values` (value rings and truth values), :mod:`.bind` (metrics bound,
nodes shaped), :mod:`.operators` (how each operator evaluates), :mod:`.show`
(-v/-V/-W and action strings), :mod:`.sources` (an archive or a pmcd, as the
binder asks them), :mod:`.replay` (tasks, the loop, and the archive's feed),
:mod:`.live` (the live feed: wall clock, hosts lost and regained),
:mod:`.actions` (print, shell, syslog and alarm run for real), :mod:`.cli`
(the command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .check import CheckResult


def main(argv: list[str] | None = None) -> int:
    """pmie(1): see :mod:`.cli`."""
    from .cli import main as _main

    return _main(argv)


def check(text: str, source_name: str | None) -> CheckResult:
    """Parse rule text; see :func:`purepcp.tools.pmie.check.check`."""
    from .check import check as _check

    return _check(text, source_name)


__all__ = ["check", "main"]
