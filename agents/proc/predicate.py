"""hotproc's predicate language, as pmdaproc (PCP 6.0.3: config.c, gram.y, lex.l) has it.

    parse(text) -> Predicate | None      None: an empty config (disables hotproc)
    Predicate.evaluate(values) -> bool   values: VARIABLES' names -> number or str
    Predicate.text() / config_text(p)    what hotproc.control.config answers
    Predicate.warnings                   what pmdaproc logs yet accepts (see below)
    PredicateError(ValueError)           bad config: pmdaproc answers PM_ERR_BADSTORE
    PredicateRuntimeError(PredicateError)  raised by evaluate() where pmdaproc exits
    VARIABLES                            variable name -> "number" | "string"

Facts
- The language: `&& || ! ( )`, numeric `< <= > >= == !=`, string `== !=`, string
  `~ !~` /pattern/; literals 12, 1.5, 5., .5 (no sign, no exponent), "string", /pat/,
  true, false; `# comment` to a newline; an optional leading `Version 1.0` (any
  number equal to 1.0 as a C float).  A string or pattern may end at a newline
  instead of its closing delimiter.  Type errors (uname == 0, uid == "x",
  fname ~ "x", (uid) == 0) are syntax errors, at parse time.
- pmdaproc's lexer reports but skips an unknown word or character: "uid == 0 xyz"
  is accepted as (uid == 0), "uid > -1" as (uid > 1), and "TRUE" (nothing left) as
  an empty config, which disables hotproc.  Likewise an invalid regular expression is
  only logged when stored.  Such configs parse here too, with `warnings`.
- Patterns are glibc re_comp() regular expressions (recomp.py).
- pmdaproc exits (eval_error) when a predicate's evaluation reaches `syscalls`
  (parsed, never computed) or a pattern that does not compile; evaluate() raises
  PredicateRuntimeError there.  Suggested: log it and disable hotproc.
- hotproc.control.config answers pmdaproc's dump of the parse tree, not the text
  stored: every comparison and connective in parentheses, numbers as %d when
  integral and below 2**31 else %f, patterns in double quotes ("" when disabled).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import float32, to_int

from .recomp import PatternError, compile_pattern

# --------------------------------------------------------------------------------------
# Errors and variables
# --------------------------------------------------------------------------------------


class PredicateError(ValueError):
    """A hotproc config pmdaproc refuses (PM_ERR_BADSTORE); the message is one line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


class PredicateRuntimeError(PredicateError):
    """An evaluation pmdaproc cannot do (it exits): `syscalls` or a bad pattern."""


#: The predicate's variables and their types, exactly pmdaproc's.
VARIABLES: dict[str, str] = {
    "uid": "number",
    "gid": "number",
    "cpuburn": "number",
    "syscalls": "number",
    "ctxswitch": "number",
    "virtualsize": "number",
    "residentsize": "number",
    "iodemand": "number",
    "iowait": "number",
    "schedwait": "number",
    "uname": "string",
    "gname": "string",
    "fname": "string",
    "psargs": "string",
}

_KEYWORDS = {
    **{name: name for name in VARIABLES},
    "Version": "VERSION",
    "true": "TRUE",
    "false": "FALSE",
}
_OPERATORS = ("&&", "||", "==", "!=", "<=", ">=", "!~", "!", "(", ")", "<", ">", "~")
_NUMERIC_OPS = {"<", "<=", ">", ">=", "==", "!="}
_STRING_OPS = {"==", "!="}
_MATCH_OPS = {"~", "!~"}


# --------------------------------------------------------------------------------------
# The parse tree
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: float

    def dump(self) -> str:
        """C's (int) test then %d or %f; (int) of 2**31 or more is INT_MIN on x86."""
        value = self.value
        as_int = to_int(value, 32, True)
        return str(as_int) if as_int == value else f"{value:f}"


@dataclass(frozen=True)
class String:
    value: str

    def dump(self) -> str:
        return f'"{self.value}"'


@dataclass(frozen=True)
class Pattern:
    source: str
    compiled: re.Pattern[str] | None = field(compare=False)
    problem: str | None = field(compare=False)  # why it does not compile

    def dump(self) -> str:
        return f'"{self.source}"'  # pmdaproc prints patterns as strings


@dataclass(frozen=True)
class Variable:
    name: str

    def dump(self) -> str:
        return self.name


Operand = Number | String | Pattern | Variable


@dataclass(frozen=True)
class Compare:
    op: str
    left: Operand
    right: Operand

    def dump(self) -> str:
        return f"({self.left.dump()} {self.op} {self.right.dump()})"

    def evaluate(self, values: Mapping[str, object]) -> bool:
        if self.op in _MATCH_OPS:
            assert isinstance(self.right, Pattern)
            if self.right.compiled is None:
                raise PredicateRuntimeError(f"pattern /{self.right.source}/: {self.right.problem}")
            found = self.right.compiled.search(_text(self.left, values)) is not None
            return found if self.op == "~" else not found
        if isinstance(self.left, String) or _is_string_var(self.left):
            equal = _text(self.left, values) == _text(self.right, values)
            return equal if self.op == "==" else not equal
        x, y = _number(self.left, values), _number(self.right, values)
        return {
            "<": x < y,
            "<=": x <= y,
            ">": x > y,
            ">=": x >= y,
            "==": x == y,
            "!=": x != y,
        }[self.op]


@dataclass(frozen=True)
class Connective:
    op: str  # "&&" or "||"
    left: Node
    right: Node

    def dump(self) -> str:
        return f"({self.left.dump()} {self.op} {self.right.dump()})"

    def evaluate(self, values: Mapping[str, object]) -> bool:
        if self.op == "&&":
            return self.left.evaluate(values) and self.right.evaluate(values)
        return self.left.evaluate(values) or self.right.evaluate(values)


@dataclass(frozen=True)
class Not:
    operand: Node

    def dump(self) -> str:
        return f"(! {self.operand.dump()})"

    def evaluate(self, values: Mapping[str, object]) -> bool:
        return not self.operand.evaluate(values)


@dataclass(frozen=True)
class Constant:
    value: bool

    def dump(self) -> str:
        return "(true)" if self.value else "(false)"

    def evaluate(self, values: Mapping[str, object]) -> bool:
        return self.value


Node = Compare | Connective | Not | Constant


def _is_string_var(operand: Operand) -> bool:
    return isinstance(operand, Variable) and VARIABLES[operand.name] == "string"


def _is_numeric(operand: Operand) -> bool:
    if isinstance(operand, Variable):
        return VARIABLES[operand.name] == "number"
    return isinstance(operand, Number)


def _number(operand: Operand, values: Mapping[str, object]) -> float:
    if isinstance(operand, Number):
        return operand.value
    assert isinstance(operand, Variable)
    if operand.name == "syscalls":
        raise PredicateRuntimeError("syscalls is not computed (pmdaproc exits here)")
    return float(values[operand.name])  # type: ignore[arg-type]


def _text(operand: Operand, values: Mapping[str, object]) -> str:
    if isinstance(operand, (String, Pattern)):
        return operand.value if isinstance(operand, String) else operand.source
    assert isinstance(operand, Variable)
    return str(values[operand.name])


@dataclass(frozen=True)
class Predicate:
    """A parsed hotproc config: its tree and what pmdaproc would log but accept."""

    root: Node
    warnings: tuple[str, ...] = ()

    def evaluate(self, values: Mapping[str, object]) -> bool:
        """Whether a process with these variable VALUES is hot (short-circuit, as C).

        Raises PredicateRuntimeError where pmdaproc exits; KeyError for a variable
        the predicate uses and VALUES lacks."""
        return self.root.evaluate(values)

    def text(self) -> str:
        """What hotproc.control.config answers: pmdaproc's dump of the tree."""
        return self.root.dump()

    def variables(self) -> frozenset[str]:
        """The variable names the predicate mentions."""
        found: set[str] = set()
        stack: list[object] = [self.root]
        while stack:
            node = stack.pop()
            if isinstance(node, Variable):
                found.add(node.name)
            elif isinstance(node, (Compare, Connective)):
                stack += [node.left, node.right]
            elif isinstance(node, Not):
                stack.append(node.operand)
        return frozenset(found)


def config_text(predicate: Predicate | None) -> str:
    """hotproc.control.config's value for PREDICATE ("" when none is configured)."""
    return "" if predicate is None else predicate.text()


# --------------------------------------------------------------------------------------
# Lexer and parser (lex.l's longest-match rules, gram.y's grammar)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  # a keyword, an operator, NUMBER, STRING, PATTERN or END
    text: str
    line: int
    value: object = None


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_BLANKS = frozenset("\t \r\n")


def _digits_end(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _DIGITS:
        pos += 1
    return pos


def _tokens(text: str, warnings: list[str]) -> list[_Token]:
    """TEXT's tokens; unknown words and characters are skipped with a warning, as
    pmdaproc's lexer reports them and carries on."""
    tokens: list[_Token] = []
    pos, line = 0, 1
    while pos < len(text):
        c = text[pos]
        start, start_line = pos, line
        if c in _BLANKS:
            line += c == "\n"
            pos += 1
            continue
        if c in _LETTERS:
            end = pos
            while end < len(text) and text[end] in _LETTERS:
                end += 1
            word = text[pos:end]
            if word in _KEYWORDS:
                tokens.append(_Token(_KEYWORDS[word], word, line))
            else:
                warnings.append(f"line {line}: illegal word {word!r} skipped")
            pos = end
            continue
        if c in _DIGITS or c == ".":
            end = _digits_end(text, pos)
            if end < len(text) and text[end] == ".":
                after = _digits_end(text, end + 1)
                if after > pos + 1:
                    end = after
            if end > pos and text[pos:end] != ".":
                tokens.append(_Token("NUMBER", text[pos:end], line, float(text[pos:end])))
                pos = end
                continue
        if c in '/"':
            ends = [i for i in (text.find(c, pos + 1), text.find("\n", pos + 1)) if i >= 0]
            if ends:
                end = min(ends)
                kind = "PATTERN" if c == "/" else "STRING"
                tokens.append(_Token(kind, text[pos : end + 1], line, text[pos + 1 : end]))
                line += text[end] == "\n"
                pos = end + 1
                continue
        if c == "#":
            end = text.find("\n", pos)
            if end >= 0:
                pos, line = end + 1, line + 1
                continue
        for op in _OPERATORS:
            if text.startswith(op, pos):
                tokens.append(_Token(op, op, line))
                pos += len(op)
                break
        if pos == start:
            warnings.append(f"line {start_line}: illegal character {c!r} skipped")
            pos += 1
    tokens.append(_Token("END", "", line))
    return tokens


class _Parser:
    """gram.y's grammar by recursive descent: || below &&, ! binding tightest."""

    def __init__(self, tokens: list[_Token], warnings: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.warnings = warnings

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self, *kinds: str) -> _Token:
        token = self.tokens[self.pos]
        if token.kind not in kinds:
            where = "at end of input" if token.kind == "END" else f"at {token.text!r}"
            raise PredicateError(f"syntax error {where}", token.line)
        self.pos += 1
        return token

    def config(self) -> Node | None:
        if self.peek().kind == "END":
            return None
        if self.peek().kind == "VERSION":
            self.pos += 1
            number = self.take("NUMBER")
            assert isinstance(number.value, float)
            if float32(number.value) != 1.0:
                raise PredicateError(
                    f"wrong version number: expected 1.00, given {number.value:.2f}", number.line
                )
        root = self.disjunction()
        self.take("END")
        return root

    def disjunction(self) -> Node:
        node = self.conjunction()
        while self.peek().kind == "||":
            self.pos += 1
            node = Connective("||", node, self.conjunction())
        return node

    def conjunction(self) -> Node:
        node = self.unary()
        while self.peek().kind == "&&":
            self.pos += 1
            node = Connective("&&", node, self.unary())
        return node

    def unary(self) -> Node:
        token = self.peek()
        if token.kind == "!":
            self.pos += 1
            return Not(self.unary())
        if token.kind == "(":
            self.pos += 1
            node = self.disjunction()
            self.take(")")
            return node
        if token.kind in ("TRUE", "FALSE"):
            self.pos += 1
            return Constant(token.kind == "TRUE")
        return self.comparison()

    def comparison(self) -> Compare:
        left = self.operand()
        if _is_numeric(left):
            op = self.take(*_NUMERIC_OPS).kind
            right = self.operand()
            if not (
                isinstance(right, Number)
                or (isinstance(right, Variable) and not _is_string_var(right))
            ):
                self.pos -= 1
                self.take("NUMBER")  # raises: a string where a number belongs
            return Compare(op, left, right)
        op = self.take(*_STRING_OPS, *_MATCH_OPS).kind
        if op in _MATCH_OPS:
            token = self.take("PATTERN")
            return Compare(op, left, self._pattern(token))
        right = self.operand()
        if not (isinstance(right, String) or _is_string_var(right)):
            self.pos -= 1
            self.take("STRING")  # raises: a number where a string belongs
        return Compare(op, left, right)

    def operand(self) -> Operand:
        token = self.take("NUMBER", "STRING", *VARIABLES)
        if token.kind == "NUMBER":
            assert isinstance(token.value, float)
            return Number(token.value)
        if token.kind == "STRING":
            return String(str(token.value))
        return Variable(token.kind)

    def _pattern(self, token: _Token) -> Pattern:
        source = str(token.value)
        try:
            return Pattern(source, compile_pattern(source), None)
        except PatternError as exc:
            self.warnings.append(
                f"line {token.line}: {exc} in /{source}/ (accepted, as pmdaproc does)"
            )
            return Pattern(source, None, str(exc))


def parse(text: str) -> Predicate | None:
    """TEXT, a hotproc config, as a Predicate; None when it holds no predicate (an
    empty config, which disables hotproc).  Raises PredicateError where pmdaproc
    refuses the config."""
    warnings: list[str] = []
    root = _Parser(_tokens(text, warnings), warnings).config()
    return None if root is None else Predicate(root, tuple(warnings))
