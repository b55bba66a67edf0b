"""pmie's grammar: a precedence-climbing parser that recovers from errors as yacc does.

PCP's pmie is a yacc parser whose error productions ("X error" and "error OP")
produce its messages ("arithmetic expression expected to follow +").  Here each
place where yacc can shift ``error`` is a :class:`Frame`: the operand after an
operator, the inside of '(', the start of a statement, a ':', '#' or '@'
qualifier, the strings of an action.  An error found anywhere unwinds to the
innermost frame, which then does what yacc's recovery does there: take an
operator that can follow the missing operand ("expected to precede OP") when
precedence lets it, or else report the missing operand ("expected to follow
OP"), or, with no such rule, drop tokens until one of those operators turns up.
After a message the scanner skips to the statement's end, and later errors in
the same statement stay silent until three tokens have been taken, as in yacc.

Expression kinds follow the grammar's nonterminals: "a" arithmetic, "s"
string, "b" logical, "act" action, "rule", "ruleset".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NoReturn

from . import tree as t
from .ere import valid_ere
from .lexicon import Lexer, Token
from .shape import missing_axis, mixed_types
from .syslog import syslog_options

AEXP = "arithmetic expression"
BEXP = "logical expression"
ACT = "action"
PEXP = "arithmetic or string expression"

# yacc's operator precedence levels (higher binds tighter)
PREC: dict[str, int] = {
    "ARROW": 1,
    **dict.fromkeys(("AND", "OR", "SEQ", "ALT"), 2),
    **dict.fromkeys(("NOT", "RISE", "FALL"), 3),
    **dict.fromkeys(("ALL_QUANT", "SOME_QUANT", "PCNT_QUANT"), 4),
    **dict.fromkeys(("MATCH", "NOMATCH"), 5),
    **dict.fromkeys((">", "<", "EQ_REL", "NEQ_REL", "GEQ_REL", "LEQ_REL"), 6),
    "+": 7,
    "-": 7,
    "*": 8,
    "/": 8,
    **dict.fromkeys(("UMINUS", "RATE", "INSTANT"), 9),
    **dict.fromkeys(("SUM_AGGR", "AVG_AGGR", "MAX_AGGR", "MIN_AGGR", "COUNT_AGGR"), 10),
    **dict.fromkeys(("SHELL", "ALARM", "SYSLOG", "PRINT", "STOMP"), 11),
    **dict.fromkeys((":", "#", "@"), 12),
}

SPELLING = {
    "ARROW": "->",
    "AND": "&&",
    "OR": "||",
    "SEQ": "&",
    "ALT": "|",
    "EQ_REL": "==",
    "NEQ_REL": "!=",
    "LEQ_REL": "<=",
    "GEQ_REL": ">=",
    "NOT": "!",
    "RISE": "rising",
    "FALL": "falling",
    "RATE": "rate",
    "INSTANT": "instant",
    "MATCH": "match_inst",
    "NOMATCH": "nomatch_inst",
}

ARITH = frozenset("+-*/")
RELATIONAL = frozenset(("<", ">", "LEQ_REL", "GEQ_REL", "EQ_REL", "NEQ_REL"))

# "error OP" productions: the operator, the kind it yields, what must precede it
PRECEDE: dict[str, tuple[str, str]] = {
    "ARROW": ("rule", BEXP),
    "SEQ": ("act", ACT),
    "ALT": ("act", ACT),
    "AND": ("b", BEXP),
    "OR": ("b", BEXP),
    "PCNT_QUANT": ("b", "number"),
    **{op: ("b", AEXP) for op in RELATIONAL},
    **{op: ("a", AEXP) for op in ARITH},
}
_A_OPS = ARITH
_B_OPS = _A_OPS | RELATIONAL | {"AND", "OR", "PCNT_QUANT"}
_ACT_OPS = frozenset(("SEQ", "ALT"))
_RULE_OPS = _B_OPS | {"ARROW"}
_ALL_OPS = _RULE_OPS | _ACT_OPS
PRECEDE_SETS = {"a": _A_OPS, "s": _A_OPS, "b": _B_OPS, "act": _ACT_OPS, "rule": _RULE_OPS}

# infix operator: (left kinds, right kinds, result kind, phrase for its operand)
INFIX: dict[str, tuple[frozenset[str], frozenset[str], str, str]] = {
    **{op: (frozenset("a"), frozenset("a"), "a", AEXP) for op in ARITH},
    **{op: (frozenset("a"), frozenset("a"), "b", AEXP) for op in ("<", ">", "LEQ_REL", "GEQ_REL")},
    **{op: (frozenset("as"), frozenset("as"), "b", PEXP) for op in ("EQ_REL", "NEQ_REL")},
    "AND": (frozenset("b"), frozenset("b"), "b", BEXP),
    "OR": (frozenset("b"), frozenset("b"), "b", BEXP),
    "ARROW": (frozenset("b"), frozenset(("act",)), "rule", ACT),
    "SEQ": (frozenset(("act",)), frozenset(("act",)), "act", ACT),
    "ALT": (frozenset(("act",)), frozenset(("act",)), "act", ACT),
}

# prefix operator: (operand kinds, result kind, precedence, phrase, spelling)
_AGGR = "aggregation operator"
_QUANT = "quantifier"
PREFIX: dict[str, tuple[frozenset[str], str, int, str, str]] = {
    "NOT": (frozenset("b"), "b", 3, BEXP, "!"),
    "RISE": (frozenset("b"), "b", 3, BEXP, "rising"),
    "FALL": (frozenset("b"), "b", 3, BEXP, "falling"),
    "RATE": (frozenset("a"), "a", 9, AEXP, "rate"),
    "INSTANT": (frozenset("a"), "a", 9, AEXP, "instant"),
    "-": (frozenset("a"), "a", 9, AEXP, "-"),
    "SUM_AGGR": (frozenset("a"), "a", 10, AEXP, _AGGR),
    "AVG_AGGR": (frozenset("a"), "a", 10, AEXP, _AGGR),
    "MAX_AGGR": (frozenset("a"), "a", 10, AEXP, _AGGR),
    "MIN_AGGR": (frozenset("a"), "a", 10, AEXP, _AGGR),
    "COUNT_AGGR": (frozenset("b"), "a", 10, BEXP, _AGGR),
    "ALL_QUANT": (frozenset("b"), "b", 4, BEXP, _QUANT),
    "SOME_QUANT": (frozenset("b"), "b", 4, BEXP, _QUANT),
    "PCNT_QUANT": (frozenset("b"), "b", 4, BEXP, _QUANT),
}
_UNARY_OPS = {
    "NOT": "!",
    "RISE": "rising",
    "FALL": "falling",
    "RATE": "rate",
    "INSTANT": "instant",
    "-": "-",
}
_AXES = {"HOST_DOM": "host", "INST_DOM": "inst", "TIME_DOM": "sample"}
ACTIONS = {
    "SHELL": "shell",
    "ALARM": "alarm",
    "SYSLOG": "syslog",
    "PRINT": "print",
    "STOMP": "stomp",
}
UNIT_TOKENS = frozenset(("SPACE_UNIT", "TIME_UNIT", "EVENT_UNIT"))
EXP_KINDS = frozenset(("rule", "ruleset", "b", "a", "act", "s"))

# what an expression of each kind can still grow into, given more operators
REACH: dict[str, frozenset[str]] = {
    "a": frozenset(("a", "b", "rule")),
    "s": frozenset(("s", "b", "rule")),
    "b": frozenset(("b", "rule")),
    "act": frozenset(("act",)),
    "rule": frozenset(("rule",)),
    "ruleset": frozenset(("ruleset",)),
}
# the kinds a token can begin (beside '(')
STARTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("IDENT", "VAR", "RATE", "INSTANT", "-"), ("a",)),
    **dict.fromkeys(("SUM_AGGR", "AVG_AGGR", "MAX_AGGR", "MIN_AGGR", "COUNT_AGGR"), ("a",)),
    "NUMBER": ("a", "b"),
    "STRING": ("s",),
    **dict.fromkeys(("TRU", "FALS", "NOT", "RISE", "FALL", "MATCH", "NOMATCH"), ("b",)),
    **dict.fromkeys(("ALL_QUANT", "SOME_QUANT"), ("b",)),
    **dict.fromkeys(("SHELL", "ALARM", "SYSLOG", "PRINT", "STOMP"), ("act",)),
    "RULESET": ("ruleset",),
}
PAREN_KINDS = frozenset(("rule", "act", "b", "a"))


@dataclass(frozen=True)
class Frame:
    """A parser state that can shift yacc's error token.

    ``follow`` is the message of its "OP error" production (None when it has
    none).  Such productions end in the error token, so they carry no
    precedence and yacc prefers shifting an operator of an "error OP"
    production; only unary minus's, declared with UMINUS's precedence, is
    reduced instead when the operator binds no tighter (``binding``).
    """

    precede: frozenset[str]
    follow: str | None = None
    binding: int | None = None

    def shifts(self, kind: str) -> bool:
        """Does recovery take kind as the operator of an "error OP" rule?"""
        if kind not in self.precede:
            return False
        return self.binding is None or kind == "PCNT_QUANT" or PREC[kind] > self.binding


START = Frame(_ALL_OPS)


class _SynErr(Exception):
    """An error was found; unwind to the innermost frame."""


class Abort(Exception):
    """yacc gave up on the statement (YYABORT)."""


Node = tuple[str, object]  # (kind, node or None)


class Parser:
    """Parses one statement per call of :meth:`statement`."""

    def __init__(self, lexer: Lexer, emit: Callable[[str], None]):
        self.lex = lexer
        self.emit = emit
        self.tok: Token | None = None
        self.errstatus = 0  # yacc's yyerrstatus: tokens to shift before errors show again
        self.quantifiable = True  # may NUMBER start an N%_axis quantifier here

    # ---- tokens and errors ---------------------------------------------

    def peek(self) -> str:
        if self.tok is None:
            self.tok = self.lex.token()
        return self.tok.kind

    def shift(self) -> Token:
        self.peek()
        tok, self.tok = self.tok, None
        if self.errstatus:
            self.errstatus -= 1
        assert tok is not None
        return tok

    def error(self) -> NoReturn:
        """yacc's error entry: report once, then unwind."""
        if self.errstatus == 0:
            self.lex.synerr()
        elif self.errstatus == 3:
            if self.peek() == "EOF":
                raise Abort
            self.tok = None
        raise _SynErr

    def warn(self, message: str) -> None:
        self.emit(f"pmie: warning - {self.lex.where()}")
        self.emit(message)

    def gramerr(self, message: str) -> None:
        self.emit(message)
        self.lex.sync()

    def recover(self, frame: Frame) -> str | None:
        """Error recovery at frame: the kind an "error OP" rule made, or None."""
        self.errstatus = 3
        while True:
            kind = self.peek()
            if frame.shifts(kind):
                self.shift()
                made, phrase = PRECEDE[kind]
                what = "percentage quantifier" if kind == "PCNT_QUANT" else SPELLING.get(kind, kind)
                self.gramerr(f"{phrase} expected to precede {what}")
                return made
            if frame.follow is not None:
                self.gramerr(frame.follow)
                return None
            if kind == "EOF":
                raise Abort
            self.tok = None

    def guarded(
        self, frame: Frame, start: Callable[[], Node], resume: Callable[[str], Node], failed: str
    ) -> Node:
        """Run start() in frame; after recovery continue with resume(kind)."""
        try:
            return start()
        except _SynErr:
            pass
        while True:
            made = self.recover(frame)
            if made is None:
                return failed, None
            try:
                return resume(made)
            except _SynErr:
                continue

    # ---- statements ------------------------------------------------------

    def statement(self) -> tuple[str | None, Node] | None:
        """One statement up to its end: (name, (kind, node)), or None if empty."""
        self.errstatus = 0
        self.tok = None
        self.quantifiable = True
        try:
            return self._statement()
        except (Abort, _SynErr):
            return None, ("a", None)
        except RecursionError:
            # nesting beyond any stack: give up on the statement, as yacc
            # does when its stack is exhausted
            self.lex.synerr()
            self.lex.sync()
            return None, ("a", None)

    def _statement(self) -> tuple[str | None, Node] | None:
        if self.peek() == "EOF":
            return None
        name: str | None = None
        first: Token | None = None
        if self.peek() == "IDENT":
            first = self.shift()
            if self.peek() == "=":
                self.shift()
                name, first = str(first.value), None

        def start() -> Node:
            return self._finish(self.expression(EXP_KINDS, 0, first))

        def resume(kind: str) -> Node:
            return self._finish(self.infix((kind, None), EXP_KINDS, 0))

        return name, self.guarded(START, start, resume, "a")

    def _finish(self, node: Node) -> Node:
        if node[0] not in EXP_KINDS or self.peek() != "EOF":
            self.error()
        return node

    # ---- expressions -----------------------------------------------------

    def expression(self, accept: frozenset[str], level: int, first: Token | None = None) -> Node:
        """An operand: a prefix form, then infix operators above level."""
        left = self.fetch(str(first.value)) if first is not None else self.prefix(accept)
        return self.infix(left, accept, level)

    def operand(self, accept: frozenset[str], level: int) -> Node:
        """An operand that must end up of one of the accepted kinds."""
        node = self.expression(accept, level)
        if node[0] not in accept:
            self.error()
        return node

    def infix(self, left: Node, accept: frozenset[str], level: int) -> Node:
        """Take operators binding tighter than level while the kind allows.

        When no operator could follow, the next token is not read at all:
        yacc reduces such states without looking ahead, and the line pmie
        reports for an error found then depends on it.
        """
        while True:
            if left[0] in accept and not _may_continue(left[0], accept, level):
                return left
            op = self.peek()
            rule = INFIX.get(op)
            if rule is None or left[0] not in rule[0] or not REACH[rule[2]] & accept:
                return left
            if left[0] in accept and PREC[op] <= level:
                return left
            left = self.binary(left, op, rule)

    def binary(
        self, left: Node, op: str, rule: tuple[frozenset[str], frozenset[str], str, str]
    ) -> Node:
        _, right_kinds, result, phrase = rule
        self.shift()
        spelling = SPELLING.get(op, op)
        frame = Frame(_precede(right_kinds), f"{phrase} expected to follow {spelling}")
        prec = PREC[op]

        def start() -> Node:
            return self.operand(right_kinds, prec)

        def resume(kind: str) -> Node:
            node = self.infix((kind, None), right_kinds, prec)
            if node[0] not in right_kinds:
                self.error()
            return node

        _, right = self.guarded(frame, start, resume, result)
        if op in ("EQ_REL", "NEQ_REL") and mixed_types(left[1], right):
            self.lex.synerr()
            self.emit("operands have mixed string and arithmetic types")
        return result, _combine(op, left[1], right, self.lex.line())

    def prefix(self, accept: frozenset[str]) -> Node:
        """An operand's first part; a token that cannot begin one is an error."""
        kind = self.peek()
        if kind == "(":
            inner = frozenset(k for k in PAREN_KINDS if REACH[k] & accept)
            if not inner:
                self.error()
            return self._paren(inner)
        if not any(REACH[k] & accept for k in STARTS.get(kind, ())):
            self.error()
        self.quantifiable = bool(REACH["b"] & accept)
        if kind in PREFIX:
            return self.prefix_operator(kind)
        handler = self._PRIMARY.get(kind)
        if handler is None:
            self.error()
        return handler(self)

    def prefix_operator(self, kind: str) -> Node:
        accept, result, prec, phrase, spelling = PREFIX[kind]
        tok = self.shift()
        axis = ""
        if kind.endswith(("_AGGR", "_QUANT")):
            if self.peek() not in _AXES:
                self.error()
            axis = _AXES[self.shift().kind]
        frame = Frame(
            _precede(accept),
            f"{phrase} expected to follow {spelling}",
            PREC["UMINUS"] if kind == "-" else None,
        )

        def resume(made: str) -> Node:
            node = self.infix((made, None), accept, prec)
            if node[0] not in accept:
                self.error()
            return node

        _, arg = self.guarded(frame, lambda: self.operand(accept, prec), resume, result)
        if arg is not None and self._rejects(kind, axis, arg):
            return result, None
        return result, _prefixed(kind, str(tok.value), axis, arg, self.lex.line())

    def _rejects(self, kind: str, axis: str, arg: object) -> bool:
        """pmie's checks as it builds the node: axes present, rate of a number."""
        complaint = missing_axis(axis, arg) if axis else None
        if kind == "RATE" and isinstance(arg, t.Macro) and isinstance(arg.value, t.Bool):
            complaint = 'operator "rate" requires numeric valued argument'
        if complaint is None:
            return False
        self.lex.synerr()
        self.emit(complaint)
        return True

    # ---- primaries -------------------------------------------------------

    def _paren(self, inner: frozenset[str]) -> Node:
        """'(' then what can grow into an accepted kind, then ')'."""
        self.shift()
        frame = Frame(_precede(inner))

        def close(node: Node) -> Node:
            if node[0] not in inner or self.peek() != ")":
                self.error()
            self.shift()
            return node

        return self.guarded(
            frame,
            lambda: close(self.expression(inner, 0)),
            lambda made: close(self.infix((made, None), inner, 0)),
            "a",
        )

    def _number(self) -> Node:
        value = float(self.shift().value)  # type: ignore[arg-type]
        if self.quantifiable and self.peek() == "PCNT_QUANT":
            kind, node = self.prefix_operator("PCNT_QUANT")
            assert isinstance(node, t.Quantifier) or node is None
            if node is not None:
                node = t.Quantifier("pcnt", node.axis, node.arg, value)
            return kind, node
        return "a", self.units(value)

    def units(self, value: float) -> t.Num:
        """The unit words after a number: 'Kbyte / sec', 'sec ^ 2'."""
        units = t.NO_UNITS
        while self.peek() in UNIT_TOKENS or self.peek() == "UNIT_SLASH":
            negate = self.peek() == "UNIT_SLASH"
            if negate:
                self.shift()
                if self.peek() not in UNIT_TOKENS:
                    self.error()
            one = self.shift().value
            assert isinstance(one, t.Units)
            if self.peek() == "^":
                self.shift()
                if self.peek() != "NUMBER":
                    self.error()
                power = int(float(self.shift().value))  # type: ignore[arg-type]
                one = _with_power(one, power)
            units = _merge_units(units, one, negate)
        return t.Num(units.factor() * value, units.canonical())

    def _string(self) -> Node:
        return "s", t.Str(str(self.shift().value))

    def _truth(self) -> Node:
        return "b", t.Bool(self.shift().kind == "TRU")

    def _var(self) -> Node:
        name, value = self.shift().value  # type: ignore[misc]
        return "a", t.Macro(name, value)

    def _ident(self) -> Node:
        return self.fetch(str(self.shift().value))

    def fetch(self, metric: str) -> Node:
        """metric[:host...][#inst...][@N[..M]]."""
        hosts = self._qualifiers(":", "host name")
        insts = self._qualifiers("#", "instance name")
        samples: tuple[int, int] | None = None
        if self.peek() == "@":
            samples = self._samples()
        return "a", t.Fetch(metric, hosts, insts, samples)

    def _qualifiers(self, mark: str, phrase: str) -> tuple[str, ...]:
        names: list[str] = []
        frame = Frame(frozenset(), f"{phrase} expected to follow {mark}")
        while self.peek() == mark:
            self.shift()

            def name() -> Node:
                if self.peek() != "IDENT":
                    self.error()
                return "name", t.Str(str(self.shift().value))

            _, got = self.guarded(frame, name, name, "name")
            if isinstance(got, t.Str):
                names.append(got.text)
            else:
                names.clear()
        return tuple(names)

    def _samples(self) -> tuple[int, int]:
        self.shift()
        frame = Frame(frozenset(), "sample number(s) expected to follow @")

        def numbers() -> Node:
            if self.peek() != "NUMBER":
                self.error()
            low = high = int(float(self.shift().value))  # type: ignore[arg-type]
            if self.peek() == "INTERVAL":
                self.shift()
                if self.peek() != "NUMBER":
                    self.error()
                high = int(float(self.shift().value))  # type: ignore[arg-type]
            return "samples", (min(low, high), max(low, high))

        _, got = self.guarded(frame, numbers, numbers, "samples")
        return got if isinstance(got, tuple) else (0, 0)

    def _match(self) -> Node:
        negate = self.shift().kind == "NOMATCH"
        spelling = "nomatch_inst" if negate else "match_inst"
        first = Frame(frozenset(), f"regular expression expected to follow {spelling}")

        def pattern() -> Node:
            if self.peek() != "STRING":
                self.error()
            return "s", t.Str(str(self.shift().value))

        _, regex = self.guarded(first, pattern, pattern, "b")
        if regex is None:
            return "b", None
        frame = Frame(_B_OPS, f"{BEXP} expected to follow regular expression")
        accept = frozenset("b")

        def resume(made: str) -> Node:
            node = self.infix((made, None), accept, PREC["MATCH"])
            if node[0] != "b":
                self.error()
            return node

        _, arg = self.guarded(frame, lambda: self.operand(accept, PREC["MATCH"]), resume, "b")
        assert isinstance(regex, t.Str)
        if arg is None:
            return "b", None
        if not valid_ere(regex.text):
            self.emit(f'illegal regular expression "{regex.text}"')
            return "b", None
        return "b", t.Match(negate, regex.text, arg)

    def _action(self) -> Node:
        kind = ACTIONS[self.shift().kind]
        frame = Frame(frozenset(), f"(time interval optional) and string expected to follow {kind}")

        def arguments() -> Node:
            holdoff = None
            if self.peek() == "NUMBER":
                holdoff = self.units(float(self.shift().value))  # type: ignore[arg-type]
            if self.peek() != "STRING":
                self.error()
            args: list[str] = []
            while self.peek() == "STRING":
                args.append(str(self.shift().value))
            if kind != "syslog":
                return "act", t.Action(kind, tuple(args), holdoff)
            options, message = syslog_options(tuple(args), self.warn)
            return "act", t.Action(kind, message, holdoff, options)

        return self.guarded(frame, arguments, arguments, "act")

    def _ruleset(self) -> Node:
        self.shift()
        rules = [self._ruleset_member()]
        while self.peek() == "ELSE":
            self.shift()
            rules.append(self._ruleset_member())
        unknown = otherwise = None
        if self.peek() == "UNKNOWN":
            self.shift()
            unknown = self._ruleset_action()
            if self.peek() == "OTHERWISE":
                self.shift()
                otherwise = self._ruleset_action()
        elif self.peek() == "OTHERWISE":
            self.shift()
            otherwise = self._ruleset_action()
        return "ruleset", t.RuleSet(tuple(rules), unknown, otherwise)

    def _ruleset_member(self) -> t.Expr | None:
        accept = frozenset(("rule",))
        _, node = self.guarded(
            Frame(_RULE_OPS),
            lambda: self.operand(accept, 0),
            lambda made: self._expect(self.infix((made, None), accept, 0), accept),
            "rule",
        )
        return node

    def _ruleset_action(self) -> t.Expr | None:
        if self.peek() != "ARROW":
            self.error()
        self.shift()
        accept = frozenset(("act",))
        _, node = self.guarded(
            Frame(_ACT_OPS),
            lambda: self.operand(accept, 1),
            lambda made: self._expect(self.infix((made, None), accept, 1), accept),
            "act",
        )
        return node

    def _expect(self, node: Node, accept: frozenset[str]) -> Node:
        if node[0] not in accept:
            self.error()
        return node

    _PRIMARY: ClassVar[dict[str, Callable[[Parser], Node]]] = {
        "NUMBER": _number,
        "STRING": _string,
        "TRU": _truth,
        "FALS": _truth,
        "VAR": _var,
        "IDENT": _ident,
        "MATCH": _match,
        "NOMATCH": _match,
        "RULESET": _ruleset,
        **dict.fromkeys(ACTIONS, _action),
    }


def _precede(kinds: frozenset[str]) -> frozenset[str]:
    """The operators of the "error OP" rules open where these kinds may start."""
    return frozenset().union(*(PRECEDE_SETS[k] for k in kinds))


def _may_continue(kind: str, accept: frozenset[str], level: int) -> bool:
    """Could an infix operator still extend an expression of this kind?"""
    return any(
        kind in lefts and REACH[result] & accept and PREC[op] > level
        for op, (lefts, _, result, _) in INFIX.items()
    )


def _with_power(one: t.Units, power: int) -> t.Units:
    if one.dim_space:
        return t.Units(dim_space=power, scale_space=one.scale_space)
    if one.dim_time:
        return t.Units(dim_time=power, scale_time=one.scale_time)
    return t.Units(dim_count=power, scale_count=one.scale_count)


def _merge_units(units: t.Units, one: t.Units, negate: bool) -> t.Units:
    """Apply one unit word to the units so far (the grammar's units rule)."""
    sign = -1 if negate else 1
    if one.dim_space:
        return t.Units(
            sign * one.dim_space,
            units.dim_time,
            units.dim_count,
            one.scale_space,
            units.scale_time,
            units.scale_count,
        )
    if one.dim_time:
        return t.Units(
            units.dim_space,
            sign * one.dim_time,
            units.dim_count,
            units.scale_space,
            one.scale_time,
            units.scale_count,
        )
    return t.Units(
        units.dim_space,
        units.dim_time,
        sign * one.dim_count,
        units.scale_space,
        units.scale_time,
        one.scale_count,
    )


def _combine(op: str, left: t.Expr | None, right: t.Expr | None, line: int = 0) -> t.Expr | None:
    if left is None or right is None:
        return None
    if op == "ARROW":
        return t.Rule(left, right)
    if op in _ACT_OPS:
        return t.ActionPair(SPELLING[op], left, right)
    return t.Binary(SPELLING.get(op, op), left, right, line)


def _prefixed(kind: str, word: str, axis: str, arg: t.Expr | None, line: int) -> t.Expr | None:
    if arg is None:
        return None
    if kind in _UNARY_OPS:
        return t.Unary(_UNARY_OPS[kind], arg)
    if kind.endswith("_AGGR"):
        return t.Aggregate(word, axis, arg, line)
    op = {"ALL_QUANT": "all", "SOME_QUANT": "some"}.get(kind, "pcnt")
    return t.Quantifier(op, axis, arg)
