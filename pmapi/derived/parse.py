"""Reading derived-metric expressions, with PCP 6.0.3's syntax errors.

PCP parses expressions with a bison LALR(1) parser whose error rules write the
diagnostics (pmDerivedErrStr) and whose error recovery decides where the returned
pointer ends up.  To give the same message at the same offset for any input, this
module builds the LALR(1) automaton of the same grammar (in the same rule order, with
the same precedences) and runs it the way bison's skeleton does: default reductions
only where bison makes them, error-token shifts, YYERROR from error rules, and the
10000-state stack limit.  The only extensions are the functions abs, floor, round,
sqrt, log and exp, which take any expression as scalar() does.

The lexer is PCP's derive_lex(); the tables are lalr.py's (bison's, for any grammar),
regcomp's messages for a bad matchinst pattern ere.py's.  unparse.py prints trees back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..cnumbers import cstring
from .ast import (
    SEMANTICS_NAMES,
    TYPE_NAMES,
    Anon,
    Binary,
    Call,
    MatchInst,
    MkConst,
    Name,
    Node,
    Number,
    Rescale,
    Select,
    Ternary,
    Unary,
)
from .ere import ere_error
from .lalr import Rule, Tables, build_tables

__all__ = [
    "DIGITS", "EXPR_FUNCTIONS", "KEYWORDS", "MAX_DEPTH", "NAME_FUNCTIONS", "OPERATOR_NAMES",
    "PRECEDENCE", "DerivedSyntaxError", "ere_error", "is_u32", "parse",
]  # fmt: skip

#: Deepest expression tree accepted: deeper ones would exhaust Python's recursion in
#: the code that walks trees; PCP itself is limited only by its parser's stack.
MAX_DEPTH = 200
#: bison's YYMAXDEPTH: the parser gives up when its stack reaches this many states.
STACK_LIMIT = 10000


class DerivedSyntaxError(Exception):
    """An expression pmRegisterDerived rejects: ``offset`` is where PCP's returned
    pointer points, ``message`` the pmDerivedErrStr text ("" when PCP has none)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message or "syntax error")
        self.offset = offset
        self.message = message


# --------------------------------------------------------------------------- lexer

#: The functions PCP 6.0.3 applies to a metric name only (HEAD lets delta, rate and
#: instant take any expression).
NAME_FUNCTIONS = ("avg", "count", "delta", "max", "min", "sum", "rate", "instant", "defined")
#: Functions of any expression: PCP's scalar and our extensions.
EXPR_FUNCTIONS = ("scalar", "abs", "floor", "round", "sqrt", "log", "exp")
#: Names the lexer turns into function tokens when "(" follows at once.
_FUNCTIONS = (*NAME_FUNCTIONS, "anon", "mkconst", "rescale", "matchinst", *EXPR_FUNCTIONS)
#: Names that are never metric names in an expression (mkconst's tags).
KEYWORDS = ("type", "semantics", "units")

_WHITE = frozenset(" \t\n\v\f\r")  # C's isspace() in the C locale
#: The characters of a number (C's isdigit()).
DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _LETTERS | DIGITS | frozenset("_.")
_SINGLE = frozenset("+-*()?:,")
_TWO = {"<": ("<=", "<"), ">": (">=", ">"), "=": ("==", "="), "!": ("!=", "!")}
_ILLEGAL = "Illegal character"


@dataclass(frozen=True)
class _Token:
    """One token: its grammar terminal, its value and where in the text it starts."""

    kind: str  # a grammar terminal
    text: str  # the token's value (unquoted, unescaped)
    start: int


class _Lexer:
    """PCP's derive_lex(): tokens on demand, remembering where the latest one starts."""

    def __init__(self, text: str) -> None:
        self.text = cstring(text)
        self.pos = 0
        self.lexicon = -1  # start of the latest token: PCP's error pointer
        self.message: str | None = None  # set by lexical errors (they overwrite)
        self.in_matchinst = False  # "/" starts a pattern while this is set

    def next(self) -> _Token:
        """The next token; at the end of the text, "EOS" (at its last character)."""
        text, n = self.text, len(self.text)
        i = self.pos
        while i < n and text[i] in _WHITE:
            i += 1
        if i >= n:
            self.pos = n
            self.lexicon = n - 1  # PCP points at the last character at the end
            return _Token("EOS", "", n - 1)
        self.lexicon = i
        kind, value, end = self._scan(i)
        self.pos = end
        return _Token(kind, value, i)

    def _error(self, message: str, end: int) -> tuple[str, str, int]:
        self.message = message
        return "ERROR", "", end

    def _scan(self, i: int) -> tuple[str, str, int]:
        text, n = self.text, len(self.text)
        c = text[i]
        if c in DIGITS:
            j = i + 1
            while j < n and text[j] in DIGITS:
                j += 1
            if j < n and text[j] == ".":
                return self._fraction(i, j + 1)
            if not is_u32(text[i:j]):
                return self._error("Constant value too large", j)
            return "INTEGER", text[i:j], j
        if c == ".":
            return self._fraction(i, i + 1)
        if c in _LETTERS:
            j = i + 1
            while j < n and text[j] in _NAME_CHARS:
                j += 1
            word = text[i:j]
            if j < n and text[j] == "(" and word in _FUNCTIONS:
                if word == "matchinst":
                    self.in_matchinst = True
                return word + "(", word, j
            return (word if word in KEYWORDS else "NAME"), word, j
        if c in _SINGLE:
            return c, c, i + 1
        if c == "/":
            if self.in_matchinst:
                return self._delimited(i, "/", "PATTERN", "unterminated pattern", escapes=True)
            return "/", c, i + 1
        if c in _TWO:
            pair, single = _TWO[c]
            if text.startswith(pair, i):
                return pair, pair, i + 2
            return single, single, i + 1
        if c in "&|":
            if text.startswith(c + c, i):
                return c + c, c + c, i + 2
            return self._error(_ILLEGAL, i + 1)
        if c == '"':
            return self._delimited(i, '"', "STRING", "unterminated STRING", escapes=False)
        if c == "[":
            return self._delimited(i, "]", "INSTNAME", "unterminated instance name", escapes=True)
        return self._error(_ILLEGAL, i + 1)

    def _fraction(self, i: int, j: int) -> tuple[str, str, int]:
        text, n = self.text, len(self.text)
        while j < n and text[j] in DIGITS:
            j += 1
        return "DOUBLE", text[i:j], j

    def _delimited(
        self, i: int, close: str, kind: str, unterminated: str, escapes: bool
    ) -> tuple[str, str, int]:
        """A string, [instance name] or /pattern/: a backslash keeps the next character."""
        text, n = self.text, len(self.text)
        out: list[str] = []
        j = i + 1
        while j < n:
            c = text[j]
            if escapes and c == "\\" and j + 1 < n:
                out.append(text[j + 1])
                j += 2
                continue
            if c == close:
                return kind, "".join(out), j + 1
            if not (escapes and c == "\\"):
                out.append(c)
            j += 1
        return self._error(unterminated, n)


def is_u32(digits: str) -> bool:
    """Whether DIGITS (ASCII, any length) is an unsigned 32-bit number."""
    digits = digits.lstrip("0")
    return len(digits) <= 10 and int(digits or "0") <= 0xFFFFFFFF


# ------------------------------------------------------------------------- grammar

#: The operators' precedence levels, lowest first (all left-associative, as PCP declares).
PRECEDENCE = {"?": 1, ":": 1, "&&": 2, "||": 2, "!": 3}
PRECEDENCE.update(dict.fromkeys(("<", "<=", "==", ">=", ">", "!="), 4))
PRECEDENCE.update({"+": 5, "-": 5, "*": 6, "/": 6})
_RELATIONAL = ("<", "<=", "==", ">=", ">", "!=")
#: The operators' token names, as PCP's error messages call them.
OPERATOR_NAMES = {
    "+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH", "<": "LT", "<=": "LEQ",
    "==": "EQ", ">=": "GEQ", ">": "GT", "!=": "NEQ", "&&": "AND", "||": "OR",
}  # fmt: skip
_AEXPR = "Arithmetic expression"
_BEXPR = "Boolean expression"
_OPERATOR = "Arithmetic or relational or boolean operator"

_Action = Callable[[list[Any], "_Parse"], Any]
#: What a rule does when reduced: a function of the values, an error rule's message (or
#: "accept"), or nothing.
_Step = _Action | str | None


class _Abort(Exception):
    """A grammar action gave up (PCP's `return -1` after gramerr)."""


@dataclass
class _Expr:
    """An expression on the parser's value stack: the node, where its text starts
    (including any opening parenthesis) and its depth."""

    node: Node
    start: int
    depth: int


def _tree(p: _Parse, node: Node, start: int, *kids: _Expr) -> _Expr:
    """NODE on the value stack, refused if it makes the tree deeper than MAX_DEPTH."""
    depth = 1 + max((k.depth for k in kids), default=0)
    if depth > MAX_DEPTH:
        p.fail(f"Expression nested too deeply (more than {MAX_DEPTH} levels)")
    return _Expr(node, start, depth)


def _leaf(v: list[Any], p: _Parse) -> _Expr:
    tok = v[0]
    if tok.kind == "NAME":
        return _Expr(Name(tok.text, at=tok.start), tok.start, 1)
    return _Expr(_number(tok), tok.start, 1)


def _number(tok: _Token) -> Number:
    if tok.kind == "INTEGER":
        return Number(tok.text, int(tok.text.lstrip("0") or "0"), at=tok.start)
    return Number(tok.text, float(tok.text) if tok.text != "." else 0.0, at=tok.start)


def _binary(v: list[Any], p: _Parse) -> _Expr:
    left, op, right = v
    return _tree(p, Binary(op.kind, left.node, right.node, at=left.start), left.start, left, right)


def _unary(v: list[Any], p: _Parse) -> _Expr:
    op, operand = v
    return _tree(p, Unary(op.kind, operand.node, at=op.start), op.start, operand)


def _ternary(v: list[Any], p: _Parse) -> _Expr:
    g, _, y, _, n = v
    return _tree(p, Ternary(g.node, y.node, n.node, at=g.start), g.start, g, y, n)


def _parens(v: list[Any], p: _Parse) -> _Expr:
    return _Expr(v[1].node, v[0].start, v[1].depth)


def _select_name(v: list[Any], p: _Parse) -> _Expr:
    name, inst = v
    base = _Expr(Name(name.text, at=name.start), name.start, 1)
    return _tree(p, Select(base.node, inst.text, at=name.start), name.start, base)


def _select_parens(v: list[Any], p: _Parse) -> _Expr:
    lp, inner, _, inst = v
    return _tree(p, Select(inner.node, inst.text, at=lp.start), lp.start, inner)


def _call_name(v: list[Any], p: _Parse) -> _Expr:
    func, _, name, _ = v
    arg = _Expr(Name(name.text, at=name.start), name.start, 1)
    return _tree(p, Call(func.text, arg.node, at=func.start), func.start, arg)


def _call_expr(v: list[Any], p: _Parse) -> _Expr:
    func, _, arg, _ = v
    return _tree(p, Call(func.text, arg.node, at=func.start), func.start, arg)


def _anon(v: list[Any], p: _Parse) -> _Expr:
    func, _, name, _ = v
    if not name.text.startswith("PM_TYPE_") or name.text[8:] not in TYPE_NAMES:
        # PCP prints "Error: type=... not allowed for anon()" and then crashes
        p.fail(f"type={name.text} not allowed for anon()")
    return _Expr(Anon(name.text[8:], at=func.start), func.start, 1)


def _rescale(v: list[Any], p: _Parse) -> _Expr:
    func, _, expr, _, units, _ = v
    p.check_units(units.text)
    return _tree(p, Rescale(expr.node, units.text.strip(), at=func.start), func.start, expr)


def _matchinst(v: list[Any], p: _Parse) -> _Expr:
    func, _, (invert, pattern), _, expr, _ = v
    p.lexer.in_matchinst = False
    node = MatchInst(pattern, invert, expr.node, at=func.start)
    return _tree(p, node, func.start, expr)


def _regexpr(v: list[Any], p: _Parse) -> tuple[bool, str]:
    bang, pattern = v
    problem = p.regex_check(pattern.text) if p.regex_check else None
    if problem is not None:
        p.fail(f"bad regular expression: '{problem}'")
    return bang, pattern.text


def _mkconst_start(v: list[Any], p: _Parse) -> None:
    p.specs = {}


def _mkconst(v: list[Any], p: _Parse) -> _Expr:
    func, _, num, *_ = v
    specs, p.specs = p.specs, {}
    if num.kind == "DOUBLE":
        kind = specs.get("type", "DOUBLE").upper()
        if kind not in ("DOUBLE", "FLOAT"):
            p.fail(f"Incompatible floating point constant and type '{kind}'")
    node = MkConst(
        _number(num), specs.get("type"), specs.get("semantics"), specs.get("units"),
        at=func.start,
    )  # fmt: skip
    return _Expr(node, func.start, 1)


def _spec(v: list[Any], p: _Parse) -> None:
    tag, _, value = v
    text = value.text
    if tag.kind == "type" and text.upper() not in TYPE_NAMES:
        p.fail(f"Unrecognized value for type '{text}'")
    if tag.kind == "semantics" and text.upper() not in SEMANTICS_NAMES:
        p.fail(f"Unrecognized value for semantics '{text}'")
    if tag.kind == "units":
        p.check_units(text)
        text = text.strip()
    p.specs[tag.kind] = text


def _first(v: list[Any], p: _Parse) -> Any:
    return v[0]


def _rules() -> list[Rule[_Step]]:
    """PCP 6.0.3's grammar, rule for rule in its order (the order settles bison's
    choice of default reductions), plus our functions of an expression."""
    rules: list[Rule[_Step]] = [Rule("$accept", ("defn", "$end"), None, None)]

    def add(lhs: str, rhs: str, action: _Step = None, prec: str = "") -> None:
        symbols = tuple(rhs.split())
        last = prec or next((s for s in reversed(symbols) if s not in _NONTERMINALS), "")
        rules.append(Rule(lhs, symbols, action, PRECEDENCE.get(last)))

    add("defn", "expr EOS", "accept")
    for op in ("+", "*", "/", "(", ")", *_RELATIONAL, "&&", "||"):
        add("defn", f"expr {op} error", f"Unexpected '{op}'")
    for op in ("+", "*", "/", "(", ")", *_RELATIONAL, "&&", "||", "?", ":"):
        add("defn", f"{op} error", f"Unexpected initial '{op}'")
    add("expr", "( expr )", _parens)
    add("expr", "NAME INSTNAME", _select_name)
    add("expr", "( expr ) INSTNAME", _select_parens)
    add("expr", "num", _first)
    add("expr", "NAME", _leaf)
    add("expr", "func", _first)
    for op in ("+", "-", "*", "/"):
        add("expr", f"expr {op} expr", _binary)
    add("expr", "- expr", _unary, prec="-")
    for op in _RELATIONAL:
        add("expr", f"expr {op} expr", _binary)
    add("expr", "expr ? expr : expr", _ternary)
    add("expr", "expr && expr", _binary)
    add("expr", "expr || expr", _binary)
    add("expr", "! expr", _unary)
    add("expr", "NAME error", f"{_OPERATOR} expected to follow NAME")
    for op in ("+", "-", "*", "/"):
        add("expr", f"expr {op} error", f"{_AEXPR} expected to follow {OPERATOR_NAMES[op]}")
    add("expr", "- error", f"{_AEXPR} expected to follow NEG")
    for op in _RELATIONAL:
        add("expr", f"expr {op} error", f"{_AEXPR} expected to follow {OPERATOR_NAMES[op]}")
    add("expr", "expr && error", f"{_BEXPR} expected to follow AND")
    add("expr", "expr || error", f"{_BEXPR} expected to follow OR")
    add("expr", "! error", f"{_BEXPR} expected to follow NOT")
    add("expr", "expr ? error", f"{_AEXPR} expected to follow QUEST")
    add("expr", "expr ? expr : error", f"{_AEXPR} expected to follow COLON")
    add("regexpr", "opt_bang PATTERN", _regexpr)
    add("opt_bang", "!", lambda v, p: True)
    add("opt_bang", "", lambda v, p: False)
    add("num", "INTEGER", _leaf)
    add("num", "DOUBLE", _leaf)
    for n, kind in enumerate(("INTEGER", "DOUBLE"), 1):
        add(f"$@{n}", "", _mkconst_start)  # bison's rule for a mid-rule action
        add("num", f"mkconst( ( {kind} , $@{n} speclist )", _mkconst)
    add("speclist", "speclist , spec")
    add("speclist", "spec")
    for tag in KEYWORDS:
        add("spec", f"{tag} = specval", _spec)
    for kind in ("STRING", "NAME", "INTEGER"):
        add("specval", kind, _first)
    add("func", "anon( ( NAME )", _anon)
    for f in NAME_FUNCTIONS:
        add("func", f"{f}( ( NAME )", _call_name)
    add("func", "rescale( ( expr , STRING )", _rescale)
    add("func", "matchinst( ( regexpr , expr )", _matchinst)
    add("func", "scalar( ( expr )", _call_expr)
    for f in ("anon", *NAME_FUNCTIONS[:-1]):  # defined( has no error rule
        add("func", f"{f}( ( error", f"Metric name expected to follow {f}(")
    add("func", "rescale( ( error", f"{_OPERATOR} expected to follow rescale(")
    add("func", "rescale( ( expr , error", "Units string expected to follow rescale(<expr>,")
    add("func", "matchinst( ( error", "<filter>, <expr>) expected to follow matchinst(")
    add("func", "matchinst( ( regexpr error", ", <expr>) expected to follow matchinst(<filter>")
    add("func", "matchinst( ( regexpr , error", "<expr>) expected to follow matchinst(<filter>,")
    add("func", "scalar( ( error", "<expr> expected to follow scalar(")
    for f in EXPR_FUNCTIONS[1:]:
        add("func", f"{f}( ( expr )", _call_expr)
        add("func", f"{f}( ( error", f"<expr> expected to follow {f}(")
    return rules


_NONTERMINALS = frozenset(
    ("$accept", "defn", "expr", "regexpr", "opt_bang", "num", "$@1", "$@2", "speclist")
) | {"spec", "specval", "func"}


@functools.cache
def _tables() -> Tables[_Step]:
    """The grammar's LALR(1) automaton, built once (on the first parse)."""
    return build_tables(_rules(), PRECEDENCE)


# -------------------------------------------------------------------------- driver


class _Parse:
    """One run of the parser: bison's yyparse() over the tables."""

    def __init__(
        self,
        text: str,
        units_check: Callable[[str], str | None] | None,
        regex_check: Callable[[str], str | None] | None,
    ) -> None:
        self.lexer = _Lexer(text)
        self.message: str | None = None
        self.specs: dict[str, str] = {}
        self.units_check = units_check
        self.regex_check = regex_check

    def gramerr(self, message: str) -> None:
        """Record a diagnostic unless an earlier one (the lexer's, say) stands."""
        if self.message is None and self.lexer.message is None:
            self.message = message

    def fail(self, message: str) -> None:
        self.gramerr(message)
        raise _Abort

    def check_units(self, text: str) -> None:
        problem = self.units_check(text) if self.units_check else None
        if problem is not None:
            self.fail(f"Illegal units: '{problem}'")

    def error(self) -> DerivedSyntaxError:
        message = self.lexer.message or self.message or ""
        return DerivedSyntaxError(max(self.lexer.lexicon, 0), message)

    def run(self) -> Node:
        t = _tables()
        states, values = [0], [None]
        token: _Token | None = None
        recovering = 0  # bison's yyerrstatus
        while True:
            if len(states) >= STACK_LIMIT:
                raise self.error()  # "memory exhausted": PCP has no message for it
            s = states[-1]
            row = t.actions[s]
            act = None
            if row:
                if token is None:
                    token = self.lexer.next()
                act = row.get(token.kind)
            if act is None and t.defaults[s] is not None:
                act = ~t.defaults[s]
            if act is not None and act >= 0:
                recovering = max(recovering - 1, 0)
                states.append(act)
                values.append(token)
                token = None
                continue
            if act is not None:
                rule = t.rules[~act]
                n = len(rule.rhs)
                args = values[len(values) - n :]
                if isinstance(rule.action, str):
                    if rule.action == "accept":
                        return args[0].node
                    self.gramerr(rule.action)  # an error rule, then YYERROR
                    del states[len(states) - n :], values[len(values) - n :]
                else:
                    try:
                        value = rule.action(args, self) if rule.action else None
                    except _Abort:
                        raise self.error() from None
                    del states[len(states) - n :], values[len(values) - n :]
                    states.append(t.gotos[states[-1]][rule.lhs])
                    values.append(value)
                    continue
            elif recovering == 3:
                token = None  # the lookahead failed again after recovery: discard it
            recovering = 3
            while "error" not in t.actions[states[-1]] or t.actions[states[-1]]["error"] < 0:
                if len(states) == 1:
                    raise self.error()
                states.pop()
                values.pop()
            states.append(t.actions[states[-1]]["error"])
            values.append(None)


def parse(
    text: str,
    *,
    units_check: Callable[[str], str | None] | None = None,
    regex_check: Callable[[str], str | None] | None = ere_error,
) -> Node:
    """The tree of a derived-metric expression, or DerivedSyntaxError as PCP 6 reports it.

    ``units_check`` (pmParseUnitsStr's role) and ``regex_check`` (regcomp's) return an
    error text for a bad units string or matchinst pattern; units are not checked by
    default, patterns by :func:`ere_error` (glibc's messages).
    """
    return _Parse(text, units_check, regex_check).run()
