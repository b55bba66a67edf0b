"""Reading and printing derived-metric expressions, with PCP 6.0.3's syntax errors.

PCP parses expressions with a bison LALR(1) parser whose error rules write the
diagnostics (pmDerivedErrStr) and whose error recovery decides where the returned
pointer ends up.  To give the same message at the same offset for any input, this
module builds the LALR(1) automaton of the same grammar (in the same rule order, with
the same precedences) and runs it the way bison's skeleton does: default reductions
only where bison makes them, error-token shifts, YYERROR from error rules, and the
10000-state stack limit.  The only extensions are the functions abs, floor, round,
sqrt, log and exp, which take any expression as scalar() does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.derived.ast import (
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

__all__ = ["MAX_DEPTH", "DerivedSyntaxError", "ere_error", "parse", "unparse"]

#: Deepest expression tree accepted: deeper ones would exhaust Python's recursion in
#: the code that walks trees; PCP itself is limited only by its parser's stack.
MAX_DEPTH = 200
#: bison's YYMAXDEPTH: the parser gives up when its stack reaches this many states.
STACK_LIMIT = 10000
#: The functions PCP 6.0.3 applies to a metric name only (HEAD lets delta, rate and
#: instant take any expression).
NAME_FUNCTIONS = ("avg", "count", "delta", "max", "min", "sum", "rate", "instant", "defined")
#: Functions of any expression: PCP's scalar and our extensions.
EXPR_FUNCTIONS = ("scalar", "abs", "floor", "round", "sqrt", "log", "exp")
#: Names the lexer turns into function tokens when "(" follows at once.
_FUNCTIONS = (*NAME_FUNCTIONS, "anon", "mkconst", "rescale", "matchinst", *EXPR_FUNCTIONS)
#: Names that are never metric names in an expression (mkconst's tags).
_KEYWORDS = ("type", "semantics", "units")


class DerivedSyntaxError(Exception):
    """An expression pmRegisterDerived rejects: ``offset`` is where PCP's returned
    pointer points, ``message`` the pmDerivedErrStr text ("" when PCP has none)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message or "syntax error")
        self.offset = offset
        self.message = message


# --------------------------------------------------------------------------- lexer

_WHITE = frozenset(" \t\n\v\f\r")  # C's isspace() in the C locale
_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _LETTERS | _DIGITS | frozenset("_.")
_SINGLE = frozenset("+-*()?:,")
_TWO = {"<": ("<=", "<"), ">": (">=", ">"), "=": ("==", "="), "!": ("!=", "!")}
_ILLEGAL = "Illegal character"


@dataclass(frozen=True)
class _Token:
    kind: str  # a grammar terminal
    text: str  # the token's value (unquoted, unescaped)
    start: int


class _Lexer:
    """PCP's derive_lex(): tokens on demand, remembering where the latest one starts."""

    def __init__(self, text: str) -> None:
        self.text = text.split("\0", 1)[0]  # a C string ends at its first NUL
        self.pos = 0
        self.lexicon = -1  # start of the latest token: PCP's error pointer
        self.message: str | None = None  # set by lexical errors (they overwrite)
        self.in_matchinst = False  # "/" starts a pattern while this is set

    def next(self) -> _Token:
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
        if c in _DIGITS:
            j = i + 1
            while j < n and text[j] in _DIGITS:
                j += 1
            if j < n and text[j] == ".":
                return self._fraction(i, j + 1)
            if not _is_u32(text[i:j]):
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
            return (word if word in _KEYWORDS else "NAME"), word, j
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
        while j < n and text[j] in _DIGITS:
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


# ------------------------------------------------------------------------- grammar

_PREC = {"?": 1, ":": 1, "&&": 2, "||": 2, "!": 3}
_PREC.update(dict.fromkeys(("<", "<=", "==", ">=", ">", "!="), 4))
_PREC.update({"+": 5, "-": 5, "*": 6, "/": 6})
_RELATIONAL = ("<", "<=", "==", ">=", ">", "!=")
_OP_NAME = {
    "+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH", "<": "LT", "<=": "LEQ",
    "==": "EQ", ">=": "GEQ", ">": "GT", "!=": "NEQ", "&&": "AND", "||": "OR",
}  # fmt: skip
_AEXPR = "Arithmetic expression"
_BEXPR = "Boolean expression"
_OPERATOR = "Arithmetic or relational or boolean operator"

_Action = Callable[[list[Any], "_Parse"], Any]


@dataclass(frozen=True)
class _Rule:
    lhs: str
    rhs: tuple[str, ...]
    action: _Action | str | None  # a function, an error rule's message, or None
    prec: int | None


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


def _is_u32(digits: str) -> bool:
    """Whether DIGITS (ASCII, any length) is an unsigned 32-bit number."""
    digits = digits.lstrip("0")
    return len(digits) <= 10 and int(digits or "0") <= 0xFFFFFFFF


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


def _rules() -> list[_Rule]:
    """PCP 6.0.3's grammar, rule for rule in its order (the order settles bison's
    choice of default reductions), plus our functions of an expression."""
    rules: list[_Rule] = [_Rule("$accept", ("defn", "$end"), None, None)]

    def add(lhs: str, rhs: str, action: _Action | str | None = None, prec: str = "") -> None:
        symbols = tuple(rhs.split())
        last = prec or next((s for s in reversed(symbols) if s not in _NONTERMINALS), "")
        rules.append(_Rule(lhs, symbols, action, _PREC.get(last)))

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
        add("expr", f"expr {op} error", f"{_AEXPR} expected to follow {_OP_NAME[op]}")
    add("expr", "- error", f"{_AEXPR} expected to follow NEG")
    for op in _RELATIONAL:
        add("expr", f"expr {op} error", f"{_AEXPR} expected to follow {_OP_NAME[op]}")
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
    for tag in _KEYWORDS:
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


# -------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class _Tables:
    rules: list[_Rule]
    actions: list[dict[str, int]]  # per state: terminal -> shift (>= 0) or ~rule
    defaults: list[int | None]  # per state: default reduction
    gotos: list[dict[str, int]]
    conflicts: tuple[int, int]  # (shift/reduce, reduce/reduce) left to defaults


@functools.cache
def _tables() -> _Tables:
    """The LALR(1) automaton, with bison's conflict resolution and default reductions."""
    rules = _rules()
    by_lhs: dict[str, list[int]] = {}
    for r, rule in enumerate(rules):
        by_lhs.setdefault(rule.lhs, []).append(r)
    nullable, first = _first_sets(rules)

    def first_of(symbols: tuple[str, ...]) -> tuple[set[str], bool]:
        out: set[str] = set()
        for s in symbols:
            if s not in _NONTERMINALS:
                out.add(s)
                return out, False
            out |= first[s]
            if s not in nullable:
                return out, False
        return out, True

    # LR(0) states, identified by their kernels
    def closure0(kernel: frozenset[tuple[int, int]]) -> list[tuple[int, int]]:
        items, seen = list(kernel), set(kernel)
        for r, d in items:
            rhs = rules[r].rhs
            if d < len(rhs) and rhs[d] in _NONTERMINALS:
                for r2 in by_lhs[rhs[d]]:
                    if (r2, 0) not in seen:
                        seen.add((r2, 0))
                        items.append((r2, 0))
        return items

    kernels: list[frozenset[tuple[int, int]]] = [frozenset({(0, 0)})]
    index = {kernels[0]: 0}
    transitions: list[dict[str, int]] = []
    for kernel in kernels:  # grows as new states are found
        moves: dict[str, set[tuple[int, int]]] = {}
        for r, d in closure0(kernel):
            rhs = rules[r].rhs
            if d < len(rhs):
                moves.setdefault(rhs[d], set()).add((r, d + 1))
        row = {}
        for sym, items in moves.items():
            k = frozenset(items)
            if k not in index:
                index[k] = len(kernels)
                kernels.append(k)
            row[sym] = index[k]
        transitions.append(row)

    # What expanding each nonterminal adds: per item (rule, 0) of its closure, the
    # lookaheads it generates itself and whether the expanding item's flow through
    _PARENT = "$parent"
    expansions: dict[str, list[tuple[int, frozenset[str], bool]]] = {}
    for nonterminal in by_lhs:
        items = {(r, 0): {_PARENT} for r in by_lhs[nonterminal]}
        work = list(items)
        while work:
            r, d = work.pop()
            rhs = rules[r].rhs
            if not rhs or rhs[0] not in _NONTERMINALS:
                continue
            la, through = first_of(rhs[1:])
            if through:
                la = la | items[(r, d)]
            for r2 in by_lhs[rhs[0]]:
                have = items.setdefault((r2, 0), set())
                if not la <= have:
                    have |= la
                    work.append((r2, 0))
        expansions[nonterminal] = [
            (r, frozenset(las - {_PARENT}), _PARENT in las) for (r, _), las in items.items()
        ]

    def closure1(seed: dict[tuple[int, int], set[str]]) -> dict[tuple[int, int], set[str]]:
        """The LR(1) closure of SEED (items and their lookaheads)."""
        items = {k: set(v) for k, v in seed.items()}
        for (r, d), las in seed.items():
            rhs = rules[r].rhs
            if d >= len(rhs) or rhs[d] not in _NONTERMINALS:
                continue
            flow, through = first_of(rhs[d + 1 :])
            if through:
                flow = flow | las
            for r2, own, inherits in expansions[rhs[d]]:
                have = items.setdefault((r2, 0), set())
                have |= own
                if inherits:
                    have |= flow
        return items

    # LALR lookaheads by spontaneous generation and propagation (the dragon book's way)
    lookahead = {(s, item): set() for s, k in enumerate(kernels) for item in k}
    propagate: dict[tuple[int, tuple[int, int]], list[tuple[int, tuple[int, int]]]] = {}
    for s, kernel in enumerate(kernels):
        for item in kernel:
            for (r, d), las in closure1({item: {"#"}}).items():
                rhs = rules[r].rhs
                if d >= len(rhs):
                    continue
                target = (transitions[s][rhs[d]], (r, d + 1))
                for a in las:
                    if a == "#":
                        propagate.setdefault((s, item), []).append(target)
                    else:
                        lookahead[target].add(a)
    changed = True
    while changed:
        changed = False
        for source, targets in propagate.items():
            for target in targets:
                if not lookahead[source] <= lookahead[target]:
                    lookahead[target] |= lookahead[source]
                    changed = True

    actions, defaults, gotos = [], [], []
    sr = rr = 0
    for s, kernel in enumerate(kernels):
        items = closure1({item: lookahead[(s, item)] for item in kernel})
        reductions = sorted((r, las) for (r, d), las in items.items() if d == len(rules[r].rhs))
        shifts = {t: n for t, n in transitions[s].items() if t not in _NONTERMINALS}
        gotos.append({t: n for t, n in transitions[s].items() if t in _NONTERMINALS})
        row: dict[str, int] = dict(shifts)
        counts: dict[int, int] = {}
        for r, las in reductions:
            counts[r] = 0
            for t in sorted(las):
                if t in shifts and row.get(t, -1) >= 0:
                    rule_prec, tok_prec = rules[r].prec, _PREC.get(t)
                    if rule_prec is None or tok_prec is None:
                        sr += 1  # bison shifts
                        continue
                    if rule_prec < tok_prec:
                        continue  # shift
                    del row[t]  # reduce (higher rule precedence, or left associative)
                elif t in row:
                    rr += 1  # the earlier rule keeps the token
                    continue
                row[t] = ~r
                counts[r] += 1
        default = None
        if len(reductions) == 1 and not shifts:
            default = reductions[0][0]  # a consistent state: no lookahead needed
        elif reductions and "error" not in shifts:
            best = max(counts.values())
            if best > 0:
                default = next(r for r, _ in reductions if counts[r] == best)
        if default is not None:
            row = {t: a for t, a in row.items() if a != ~default}
        actions.append(row)
        defaults.append(default)
    return _Tables(rules, actions, defaults, gotos, (sr, rr))


def _first_sets(rules: list[_Rule]) -> tuple[set[str], dict[str, set[str]]]:
    nullable: set[str] = set()
    first: dict[str, set[str]] = {n: set() for n in _NONTERMINALS}
    changed = True
    while changed:
        changed = False
        for rule in rules:
            out = first[rule.lhs]
            before = len(out)
            for s in rule.rhs:
                if s not in _NONTERMINALS:
                    out.add(s)
                    break
                out |= first[s]
                if s not in nullable:
                    break
            else:
                if rule.lhs not in nullable:
                    nullable.add(rule.lhs)
                    changed = True
            changed |= len(out) != before
    return nullable, first


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


# ------------------------------------------------------------ regular expressions

_CLASSES = frozenset(
    ("alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph")
) | {"cntrl", "blank", "alnum"}
_DUP_MAX = 0x7FFF  # glibc's RE_DUP_MAX
_BRACKET = "Unmatched [, [^, [:, [., or [="
_PRECEDING = "Invalid preceding regular expression"
_BRACES = "Invalid content of \\{\\}"
_ANCHOR_ESCAPES = frozenset("bB<>`'")  # GNU's anchors, which cannot be repeated


def ere_error(pattern: str) -> str | None:
    """glibc regcomp's message for a bad POSIX extended regular expression, else None.

    Covers the errors people make (unbalanced groups and brackets, misplaced
    repetition, bad intervals, ranges, classes and back references)."""
    i, n = 0, len(pattern)
    groups = 0
    opened: list[int] = []  # numbers of the groups still open
    closed: set[int] = set()  # numbers of the groups a back reference may name
    # per open group (and the whole): groups closed where it started, and in its
    # earlier alternatives (each alternative sees only its own, as in glibc)
    frames: list[tuple[set[int], set[int]]] = [(set(), set())]
    repeatable = False  # whether a repetition operator may follow here
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return "Trailing backslash"
            if pattern[i + 1] in "123456789" and int(pattern[i + 1]) not in closed:
                return "Invalid back reference"
            i, repeatable = i + 2, pattern[i + 1] not in _ANCHOR_ESCAPES
            continue
        if c == "[":
            end = _bracket_end(pattern, i)
        elif c in "*+?{" and not repeatable:
            return _PRECEDING
        elif c == "{":
            end = _interval_end(pattern, i)
        else:
            if c == "(":
                groups += 1
                opened.append(groups)
                frames.append((set(closed), set()))
            elif c == ")" and opened:
                closed |= frames.pop()[1]
                closed.add(opened.pop())
            elif c == "|" and not pattern.startswith(("|", ")" if opened else "|"), i + 1):
                start, earlier = frames[-1]
                earlier |= closed
                closed = set(start)
            repeatable = c not in "(|^$"
            i += 1
            continue
        if isinstance(end, str):
            return end
        i, repeatable = end, True
    return "Unmatched ( or \\(" if opened else None


def _interval_end(pattern: str, i: int) -> int | str:
    """Where the {m,n} at I ends, or regcomp's complaint (as glibc's parse_dup_op)."""
    low, j, stop = _interval_number(pattern, i + 1)
    high = low
    if low == -1:
        if stop != ",":
            return _BRACES  # {}
        low = 0
    if low != -2 and stop == ",":
        high, j, stop = _interval_number(pattern, j)
    if low == -2 or high == -2:
        return "Unmatched \\{" if stop == "" else _BRACES
    if (high != -1 and low > high) or stop != "}":
        return _BRACES
    if (low if high == -1 else high) > _DUP_MAX:
        return "Regular expression too big"
    return j


def _interval_number(pattern: str, j: int) -> tuple[int, int, str]:
    """A number in an interval: (value, or -1 if none, -2 if bad; where it stops; the
    stopping "}" or "," or "" at the end of the pattern)."""
    value = -1
    while j < len(pattern):
        c, escaped = pattern[j], pattern[j] == "\\"
        if escaped:
            if j + 1 >= len(pattern):
                return -2, j + 1, ""
            c = pattern[j + 1]
        j += 2 if escaped else 1
        if c == "," or (c == "}" and not escaped):
            return value, j, c
        if escaped or c not in _DIGITS or value == -2:
            value = -2
        else:
            value = min(_DUP_MAX + 1, max(value, 0) * 10 + int(c))
    return -2, j, ""


def _bracket_end(pattern: str, i: int) -> int | str:
    """Where the bracket expression at I ends, or regcomp's complaint."""
    n = len(pattern)
    j = i + 2 if pattern.startswith("[^", i) else i + 1
    if j >= n:
        return "Invalid regular expression"
    first, after_range = True, False
    low: str | None = None  # the previous element, if it may start a range
    while True:
        if j >= n:
            return _BRACKET
        if pattern[j] == "]" and not first:
            return j + 1
        ranged = pattern[j] == "-" and not first and not pattern.startswith("]", j + 1)
        if ranged and (after_range or low is None or pattern.startswith(("[:", "[="), j + 1)):
            if (
                pattern.startswith(("[:", "[="), j + 1)
                and pattern.find(pattern[j + 2] + "]", j + 3) < 0
            ):
                return _BRACKET
            return "Invalid range end"
        got = _bracket_element(pattern, j + 1) if ranged else _bracket_element(pattern, j)
        if isinstance(got, str):
            return got
        value, kind, j = got
        if ranged:
            if kind in ":=" or value < low:
                return "Invalid range end"
            low = None
        else:
            low = value if kind in "c." else None
        first, after_range = False, ranged


def _bracket_element(pattern: str, j: int) -> tuple[str, str, int] | str:
    """One element of a bracket expression: (value, kind, where it ends), kind being
    "c" for a character or the ":", "." or "=" of [:class:], [.x.] or [=x=]."""
    if j >= len(pattern):
        return _BRACKET
    if pattern.startswith("[", j) and j + 1 < len(pattern) and pattern[j + 1] in ":.=":
        kind = pattern[j + 1]
        close = pattern.find(kind + "]", j + 2)
        if close < 0:
            return _BRACKET
        name = pattern[j + 2 : close]
        if kind == ":" and name not in _CLASSES:
            return "Invalid character class name"
        if kind != ":" and len(name) != 1:
            return "Invalid collation character"
        return name, kind, close + 2
    return pattern[j], "c", j + 1


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


# --------------------------------------------------------------------- unparsing

_PRIMARY = 7
_TOKEN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_TOKEN_NUMBER = re.compile(r"[0-9]+|[0-9]*\.[0-9]*")


def unparse(node: Node) -> str:
    """Canonical text for NODE with only the parentheses PCP's grammar needs, so that
    ``parse(unparse(t)) == t``; ValueError for trees no text can produce."""
    return _Printer().show(node)[0]


class _Printer:
    """Prints left to right, tracking PCP's lexer quirk: from ``matchinst(`` until that
    call's closing parenthesis, "/" starts a pattern, so no division can be written."""

    def __init__(self) -> None:
        self.slash_is_pattern = False

    def show(self, node: Node) -> tuple[str, int, int]:
        """(text, precedence of its top construct, lowest precedence of the
        constructs left open at its right end, which a following operator could join)."""
        match node:
            case Binary(op=op, left=left, right=right) if op in _OP_NAME:
                level = _PREC[op]
                lt, _, lopen = self.show(left)
                if op == "/" and self.slash_is_pattern:
                    raise ValueError("PCP reads '/' inside matchinst()'s expression as a pattern")
                rt, rprec, ropen = self.show(right)
                if lopen < level:
                    lt = f"({lt})"
                if rprec <= level and isinstance(right, Binary | Ternary):
                    rt, ropen = f"({rt})", _PRIMARY
                return f"{lt} {op} {rt}", level, min(level, ropen)
            case Unary(op=op, operand=operand) if op in ("-", "!"):
                level = _PREC[op] if op == "!" else 5
                text, prec, open_ = self.show(operand)
                if prec <= level and isinstance(operand, Binary | Ternary):
                    text, open_ = f"({text})", _PRIMARY
                gap = " " if op == "-" and text.startswith("-") else ""
                return f"{op}{gap}{text}", level, min(level, open_)
            case Ternary(guard=guard, yes=yes, no=no):
                gt = self.show(guard)[0]
                yt = self.show(yes)[0]
                nt, _, nopen = self.show(no)
                if isinstance(no, Ternary):
                    nt, nopen = f"({nt})", _PRIMARY
                return f"{gt} ? {yt} : {nt}", 1, min(1, nopen)
        return self.primary(node), _PRIMARY, _PRIMARY

    def primary(self, node: Node) -> str:
        match node:
            case Name(name=name):
                return _name(name)
            case Number(text=text):
                if not _TOKEN_NUMBER.fullmatch(text) or ("." not in text and not _is_u32(text)):
                    raise ValueError(f"not a constant PCP can read: {text!r}")
                return text
            case Call(func=func, arg=arg) if func in NAME_FUNCTIONS:
                if not isinstance(arg, Name):
                    raise ValueError(f"PCP's {func}() takes a metric name only")
                return f"{func}({_name(arg.name)})"
            case Call(func=func, arg=arg) if func in EXPR_FUNCTIONS:
                return f"{func}({self.show(arg)[0]})"
            case Anon(type_name=type_name) if type_name in TYPE_NAMES:
                return f"anon(PM_TYPE_{type_name})"
            case MkConst(number=number, type_name=kind, semantics=sem, units=units):
                specs = [
                    f"{tag}={_spec_value(value, tag == 'units')}"
                    for tag, value in (("type", kind), ("semantics", sem), ("units", units))
                    if value is not None
                ]
                if not specs:
                    raise ValueError("PCP's mkconst() needs one of type, semantics or units")
                return f"mkconst({self.primary(number)}, {', '.join(specs)})"
            case Rescale(expr=expr, units=units):
                return f"rescale({self.show(expr)[0]}, {_quoted(units)})"
            case MatchInst(pattern=pattern, invert=invert, expr=expr):
                bang = "!" if invert else ""
                self.slash_is_pattern = True
                text = f"matchinst({bang}/{_escaped(pattern, '/')}/, {self.show(expr)[0]})"
                self.slash_is_pattern = False
                return text
            case Select(expr=Name(name=name), instance=instance):
                return f"{_name(name)}[{_escaped(instance, ']')}]"
            case Select(expr=expr, instance=instance):
                return f"({self.show(expr)[0]})[{_escaped(instance, ']')}]"
        raise ValueError(f"no derived-metric text for {node!r}")


def _name(name: str) -> str:
    if not _TOKEN_NAME.fullmatch(name) or name in _KEYWORDS:
        raise ValueError(f"not a metric name PCP can read: {name!r}")
    return name


def _quoted(text: str) -> str:
    if '"' in text or "\0" in text:
        raise ValueError(f"PCP's strings cannot hold {text!r}")
    return f'"{text}"'


def _spec_value(value: str, quote: bool) -> str:
    plain = _TOKEN_NAME.fullmatch(value) and value not in _KEYWORDS
    if quote or not (plain or (_DIGITS.issuperset(value) and value and _is_u32(value))):
        return _quoted(value)
    return value


def _escaped(text: str, close: str) -> str:
    if "\0" in text:
        raise ValueError(f"PCP's strings cannot hold {text!r}")
    return text.replace("\\", "\\\\").replace(close, "\\" + close)
