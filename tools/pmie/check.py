"""Check a rule file as ``pmie -C`` does: parse every statement, collect messages.

Statements are parsed one at a time, in order, because a statement can define
a macro (``name = constant``) that later statements expand with ``$name``.  A
statement whose expression folds to a constant defines a variable; any other
defines a rule, named or given pmie's generated name ``expr_N``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from . import tree as t
from .grammar import Parser
from .lexicon import Lexer


@dataclass(frozen=True)
class CheckResult:
    """What a check found: statements in order, pmie's messages, exit status."""

    statements: tuple[t.Statement, ...]
    messages: tuple[str, ...]
    status: int  # pmie -C's: 1 when the last statement parsed had errors

    @property
    def rules(self) -> tuple[t.Statement, ...]:
        return tuple(s for s in self.statements if not s.variable)

    @property
    def variables(self) -> dict[str, t.Expr]:
        return {s.name: s.expr for s in self.statements if s.variable}


# values pmie defines before reading rules; $delta becomes a constant once set
CLOCKS = ("delta", "minute", "hour", "day", "month", "year", "day_of_week")


class Program:
    """The symbol tables a rule file builds while it is read."""

    def __init__(self) -> None:
        self.variables: dict[str, t.Expr] = {name: t.Clock(name) for name in CLOCKS}
        self.rule_names: set[str] = set()
        self.generated = 0

    def macro(self, name: str) -> tuple[str, object] | None:
        value = self.variables.get(name)
        if value is None:
            return None
        if isinstance(value, t.Str):
            return "string", value.text
        return "value", value


# yacc's parser stack holds 10000 states; nesting that deep takes some
# eight Python frames a level
_RECURSION_LIMIT = 90_000


def check(text: str, source_name: str | None, program: Program | None = None) -> CheckResult:
    """Parse a whole rule file; source_name None means standard input.  PROGRAM holds
    what earlier files defined (pmie -d loads several into one program)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    try:
        return _check(text, source_name, program if program is not None else Program())
    finally:
        sys.setrecursionlimit(limit)


def _check(text: str, source_name: str | None, program: Program) -> CheckResult:
    messages: list[str] = []
    lexer = Lexer(text, source_name, program.macro, messages.append)
    parser = Parser(lexer, messages.append)
    statements: list[t.Statement] = []
    errs = 0
    while lexer.more():
        lexer.errors = 0
        parsed = parser.statement()
        if parsed is not None and parsed[1][1] is not None:
            name, (_, node) = parsed
            stmt = _statement(program, name, node, lexer.errors, lexer, messages)
            if stmt is not None:
                statements.append(stmt)
        errs = lexer.errors
    return CheckResult(tuple(statements), tuple(messages), 1 if errs else 0)


def _statement(
    program: Program, name: str | None, node: object, errs: int, lexer: Lexer, messages: list[str]
):
    """Bind one parsed expression as pmie's statement() does."""
    folded = fold(node)
    line = lexer.line()
    if isinstance(folded, t.CONSTANTS):
        program.variables[name or _generate(program)] = folded
        return t.Statement(name or f"expr_{program.generated}", folded, True, line)
    rule_name = name or _generate(program)
    if rule_name in program.rule_names:
        lexer.synerr()
        messages.append(f'rule "{rule_name}" multiply defined')
        return None
    if errs:
        return None
    program.rule_names.add(rule_name)
    return t.Statement(rule_name, node, False, line)


def _generate(program: Program) -> str:
    program.generated += 1
    return f"expr_{program.generated}"


_ARITH = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: _divide(a, b),
}
_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


def _divide(a: float, b: float) -> float:
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def fold(node: object) -> object:
    """Constant-fold as pmie does when it builds the tree (evalConst)."""
    if isinstance(node, t.Macro):
        return node.value
    if isinstance(node, t.Unary) and node.op in ("-", "!"):
        arg = fold(node.arg)
        if node.op == "-" and isinstance(arg, t.Num):
            return t.Num(-arg.value, arg.units)
        if node.op == "!" and isinstance(arg, t.Bool):
            return t.Bool(not arg.value)
        return node
    if isinstance(node, t.Binary):
        left, right = fold(node.left), fold(node.right)
        if isinstance(left, t.Num) and isinstance(right, t.Num):
            if node.op in _ARITH:
                return t.Num(_ARITH[node.op](left.value, right.value), left.units)
            return t.Bool(_COMPARE[node.op](left.value, right.value))
        if isinstance(left, t.Str) and isinstance(right, t.Str) and node.op in ("==", "!="):
            return t.Bool(_COMPARE[node.op](left.text, right.text))
        if isinstance(left, t.Bool) and isinstance(right, t.Bool):
            if node.op == "&&":
                return t.Bool(left.value and right.value)
            if node.op == "||":
                return t.Bool(left.value or right.value)
    return node
