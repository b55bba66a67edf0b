"""hotproc.*: pmdaproc's "hot process" predicate language and arithmetic, as pure logic.

pmdaproc (PCP 6.0.3) keeps a second process instance domain, 3.39, holding the
processes a configured predicate calls "hot".  A timer re-evaluates every process
each `refresh` seconds; the hotproc.* metrics then serve those processes.  This
module is that logic without I/O or threads (the agent wires it):

Predicate language
    parse(text) -> Predicate | None      None: an empty config (disables hotproc)
    Predicate.evaluate(values) -> bool   values: VARIABLES' names -> number or str
    Predicate.text() / config_text(p)    what hotproc.control.config answers
    Predicate.warnings                   what pmdaproc logs yet accepts (see below)
    PredicateError(ValueError)           bad config: pmdaproc answers PM_ERR_BADSTORE
    PredicateRuntimeError(PredicateError)  raised by evaluate() where pmdaproc exits
    VARIABLES                            variable name -> "number" | "string"

Per-process inputs
    parse_reading(stat, status, io, schedstat, pagesize) -> Reading | None
    derive(previous, current, elapsed, hz) -> Derived   (hotproc.predicate.* values)
    fname_variable(comm), psargs_variable(pid, psargs), name_variable(name)
    variables(reading, derived, uname, gname, fname, psargs) -> dict for evaluate()
    select(predicate, candidates, previous, elapsed, hz) -> Selection  (one tick)

Totals
    idle_ticks(proc_stat) -> int;  totals(...) -> Totals;  NO_TOTALS

Facts (pmdaproc 6.0.3: hotproc.c, config.c, gram.y, lex.l, proc_pid.c, pmda.c)
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
- Patterns are glibc re_comp() regular expressions with its default syntax bits (0,
  i.e. GNU Emacs syntax): \\( \\) group, \\| alternation, * + ? repeat, no {m,n}, no
  [:class:], ( ) | { } are ordinary characters, \\w \\W \\s \\S \\b \\B \\< \\> \\` \\'
  work, a match is a search (unanchored).  translate_pattern() maps them to Python's re.
- pmdaproc exits (eval_error) when a predicate's evaluation reaches `syscalls`
  (parsed, never computed) or a pattern that does not compile; evaluate() raises
  PredicateRuntimeError there.  Suggested: log it and disable hotproc.
- hotproc.control.config answers pmdaproc's dump of the parse tree, not the text
  stored: every comparison and connective in parentheses, numbers as %d when
  integral and below 2**31 else %f, patterns in double quotes ("" when disabled).
- Variables: uid gid (real ids from status), uname gname (the names; "UNKNOWN"
  without one; at most 63 chars), fname (stat's comm; at most 255), psargs (the
  instance-name text after "NNNNNN ", i.e. the command line, NULs as spaces, or
  "(comm)"; at most 255), cpuburn ctxswitch iodemand iowait schedwait virtualsize
  residentsize (see Derived), syscalls (accepted, fatal when evaluated).
- Timer: refresh defaults to 10 s; it runs only while a config is present
  (config_gen != 0).  Its first pass comes one refresh after it starts; each pass
  reads stat, status, io and schedstat of every process (not threads; a process's
  stat already covers its threads), skips one whose stat or status cannot be read,
  keeps the readings for the next pass, and makes the hot list.  Between passes the
  instance domain is those hot pids still in /proc (plus their threads when threads
  are on); hotproc.nprocs counts that domain; hotproc.predicate.* of a pid not in
  the hot list is PM_ERR_INST.
- Stores (all of cluster 60): only a root client (else PM_ERR_PERMISSION); items other
  than refresh, config and reload_config give PM_ERR_PERMISSION.
  * hotproc.control.refresh (U32): any value, 0 included, becomes the interval; the
    timer restarts if one runs.
  * hotproc.control.config (STRING): parse error -> PM_ERR_BADSTORE, nothing changes;
    empty (whitespace, comments, skipped words) -> hotproc disabled: config_gen 0,
    config "", hot list emptied at once, timer stopped; else config_gen += 1, the new
    predicate applies from the next pass (the hot list stays until then), and the
    timer starts if config_gen became 1.
  * hotproc.control.reload_config (U32, value ignored, fetches 0): re-reads
    $PCP_PMDAS_DIR/proc/hotproc.conf (/var/lib/pcp/pmdas/proc/hotproc.conf): if it is
    missing or world-writable nothing changes; if it parses to a predicate, that
    predicate applies and config_gen becomes 1 (reset, not incremented); then the
    timer restarts if config_gen != 0.  (A failing parse leaves everything but is
    not reported to the client; an empty file blanks the config text but keeps
    config_gen, after which pmdaproc's next pass dereferences a null tree.)
  * At start-up the same file is read: a predicate there -> config_gen 1.
- config_gen counts the successful non-empty stores since the last disable (or the
  last load of hotproc.conf, which sets 1).
- Rates: pmdaproc takes one wall-clock time per pass in whole seconds (an integer
  division of tv_usec) and divides each counter's change by the change of that;
  a counter that went down counts as +2**64 (its 64-bit wrap rule).  A process
  not in the previous pass gets 0 for every rate.  Totals are computed from the
  second pass on (before that, all 0).
- Where this module deliberately differs (each a slip in pmdaproc; the agent may
  choose): `elapsed` is whatever the caller passes (we suggest exact monotonic
  seconds); iowait uses stat's delayacct_blkio_ticks as fractional seconds (pmdaproc
  reads the guest_time field, one place late, and truncates it to whole seconds);
  a pid whose start time changed is a new process (pmdaproc compares its counters
  with the old process's); evaluation errors raise instead of exiting.
  iodemand is bytes per second, as pmdaproc computes it, although its metric's
  units say Kbytes per second.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from . import fields

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
_INT_MIN = -(2**31)


def _f32(value: float) -> float:
    """VALUE as a C float would hold it (pmdaproc keeps cpuburn and the version so)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


# --------------------------------------------------------------------------------------
# Patterns: glibc re_comp() (syntax bits 0, GNU Emacs style) to Python re
# --------------------------------------------------------------------------------------

_WORD = "0-9A-Za-z_"
_SPACE = " \\t\\n\\r\\f\\v"
_ESCAPES = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
_ANCHOR_ESCAPES = {
    "b": r"\b",
    "B": r"\B",
    "<": f"(?<![{_WORD}])(?=[{_WORD}])",
    ">": f"(?<=[{_WORD}])(?![{_WORD}])",
    "`": r"\A",
    "'": r"\Z",
}


class PatternError(ValueError):
    """A pattern glibc's re_comp() rejects."""


def translate_pattern(source: str) -> str:
    """SOURCE, a re_comp() regular expression, as an equivalent Python re pattern
    (to compile with re.ASCII | re.MULTILINE, as re_comp anchors at newlines)."""
    out, pos = _Translator(source).alternation(0, top=True)
    assert pos == len(source)
    return out


class _Translator:
    """Recursive descent over glibc's Emacs-syntax grammar (see translate_pattern)."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.groups = 0
        self.closed: set[int] = set()

    def alternation(self, pos: int, top: bool) -> tuple[str, int]:
        branches = []
        while True:
            branch, pos = self.branch(pos)
            branches.append(branch)
            if self.src.startswith("\\|", pos):
                pos += 2
                continue
            if self.src.startswith("\\)", pos):
                if top:
                    raise PatternError("Unmatched ) or \\)")
                return "|".join(branches), pos
            if pos >= len(self.src):
                if not top:
                    raise PatternError("Unmatched ( or \\(")
                return "|".join(branches), pos

    def branch(self, pos: int) -> tuple[str, int]:
        items: list[str] = []
        repeatable = False  # a repetition here applies to the last item
        src = self.src
        while pos < len(src) and not src.startswith(("\\|", "\\)"), pos):
            c = src[pos]
            if c in "*+?" and repeatable:
                items[-1] = f"(?:{items[-1]}){c}"
                pos += 1
                continue
            repeatable = True
            if c == "^" and not items:
                items.append("^")
                repeatable = False
                pos += 1
            elif c == "$" and (pos + 1 == len(src) or src.startswith(("\\|", "\\)"), pos + 1)):
                items.append("$")
                repeatable = False
                pos += 1
            elif c == ".":
                items.append(".")
                pos += 1
            elif c == "[":
                text, pos = self.bracket(pos + 1)
                items.append(text)
            elif c == "\\":
                text, pos, repeatable = self.escape(pos + 1)
                items.append(text)
            else:
                items.append(re.escape(c))
                pos += 1
        return "".join(items), pos

    def escape(self, pos: int) -> tuple[str, int, bool]:
        """After a backslash: (python text, new position, whether it can repeat)."""
        if pos >= len(self.src):
            raise PatternError("Trailing backslash")
        c = self.src[pos]
        if c == "(":
            self.groups += 1
            number = self.groups
            inner, pos = self.alternation(pos + 1, top=False)
            self.closed.add(number)
            return f"({inner})", pos + 2, True
        if c in "123456789":
            if int(c) not in self.closed:
                raise PatternError("Invalid back reference")
            return f"(?:\\{c})", pos + 1, True
        if c in _ESCAPES:
            return _ESCAPES[c], pos + 1, True
        if c in _ANCHOR_ESCAPES:
            return _ANCHOR_ESCAPES[c], pos + 1, False
        return re.escape(c), pos + 1, True

    def bracket(self, pos: int) -> tuple[str, int]:
        """A [...] list starting after its '['; glibc's rules, backslash ordinary."""
        src = self.src
        negate = src.startswith("^", pos)
        pos += negate
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            if pos >= len(src):
                raise PatternError("Unmatched [, [^, [:, [., or [=")
            if src[pos] == "]" and not first:
                pos += 1
                break
            if src[pos] == "-" and not first and not src.startswith("]", pos + 1):
                raise PatternError("Invalid range end")
            start, pos = self.element(pos)
            first = False
            if src.startswith("-", pos) and not src.startswith("]", pos + 1) and pos + 1 < len(src):
                end, pos = self.element(pos + 1)
                ranges.append((start, end))
            else:
                ranges.append((start, start))
        parts = [
            re.escape(a) if a == b else f"{re.escape(a)}-{re.escape(b)}"
            for a, b in ranges
            if a <= b
        ]
        if not parts:  # only empty ranges: glibc allows them
            return ("(?s:.)" if negate else "(?!)"), pos
        return "[" + ("^" if negate else "") + "".join(parts) + "]", pos

    def element(self, pos: int) -> tuple[str, int]:
        """One character of a list: plain, or [.c.] / [=c=] (single characters only)."""
        src = self.src
        if src.startswith(("[.", "[="), pos) and pos + 2 < len(src):
            kind = src[pos + 1]
            close = src.find(kind + "]", pos + 2)
            if close < 0:
                raise PatternError("Unmatched [, [^, [:, [., or [=")
            name = src[pos + 2 : close]
            if len(name) != 1:
                raise PatternError("Invalid collation character")
            return name, close + 2
        return src[pos], pos + 1


def _class_item(low: str, high: str) -> str:
    return re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}"


def compile_pattern(source: str) -> re.Pattern[str]:
    """SOURCE compiled as pmdaproc's re_comp() would match it."""
    try:
        return re.compile(translate_pattern(source), re.ASCII | re.MULTILINE)
    except re.error as exc:
        raise PatternError(f"Invalid regular expression: {exc}") from None


# --------------------------------------------------------------------------------------
# The parse tree
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: float

    def dump(self) -> str:
        """C's (int) test then %d or %f; (int) of 2**31 or more is INT_MIN on x86."""
        value = self.value
        as_int = int(value) if math.isfinite(value) and value < 2**31 else _INT_MIN
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
            if _f32(number.value) != 1.0:
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


# --------------------------------------------------------------------------------------
# Per-process readings and the values derived from two of them
# --------------------------------------------------------------------------------------

_STAT = {name: fields.STAT_FIELDS[f"proc.psinfo.{name}"][0] for name in (
    "utime", "stime", "start_time", "vsize", "rss", "delayacct_blkio_time")}  # fmt: skip
_RUN_DELAY = fields.SCHEDSTAT_FIELDS["proc.schedstat.run_delay"]
_WRAP = float(2**64)  # pmdaproc's diff_counter() adds this to a negative change


@dataclass(frozen=True)
class Reading:
    """One process's counters at one timer pass, in the files' own units."""

    comm: str  # stat's command name, without its parentheses
    start_time: int  # clock ticks after boot: tells a reused pid from the old process
    cpu_ticks: int  # utime + stime
    blkio_ticks: int  # delayacct_blkio_ticks
    vsize_kb: int  # stat's vsize (bytes) // 1024
    rss_kb: int  # stat's rss (pages) * page size // 1024
    uid: int  # real ids, from status
    gid: int
    vctxsw: int
    nvctxsw: int
    read_bytes: int  # 0 when io cannot be read (pmdaproc's rule)
    write_bytes: int
    run_delay_ns: int  # 0 when schedstat cannot be read


def parse_reading(
    stat: bytes | None,
    status: bytes | None,
    io: bytes | None,
    schedstat: bytes | None,
    pagesize: int,
) -> Reading | None:
    """A Reading from /proc/PID/{stat,status,io,schedstat}'s bytes; None when stat or
    status is missing or unreadable (pmdaproc leaves such a process out of the pass)."""
    if not stat or not status:
        return None
    try:
        comm, rest = fields.split_stat(stat)
        numbers = {name: int(rest[index]) for name, index in _STAT.items()}
    except (ValueError, IndexError):
        return None
    lines = fields.status_lines(status)
    counts = fields.keyed_numbers(io) if io else {}
    try:
        run_delay = int(schedstat.split()[_RUN_DELAY]) if schedstat else 0
    except (ValueError, IndexError):
        run_delay = 0
    return Reading(
        comm=comm.decode("utf-8", "surrogateescape"),
        start_time=numbers["start_time"],
        cpu_ticks=numbers["utime"] + numbers["stime"],
        blkio_ticks=numbers["delayacct_blkio_time"],
        vsize_kb=numbers["vsize"] // 1024,
        rss_kb=numbers["rss"] * pagesize // 1024,
        uid=_first_number(lines.get(b"Uid")),
        gid=_first_number(lines.get(b"Gid")),
        vctxsw=_first_number(lines.get(b"voluntary_ctxt_switches")),
        nvctxsw=_first_number(lines.get(b"nonvoluntary_ctxt_switches")),
        read_bytes=counts.get(b"read_bytes", 0),
        write_bytes=counts.get(b"write_bytes", 0),
        run_delay_ns=run_delay,
    )


def _first_number(line: bytes | None) -> int:
    words = line.split() if line else []
    return int(words[0]) if words and words[0].isdigit() else 0


@dataclass(frozen=True)
class Derived:
    """A process's hotproc.predicate.* values for one pass, and its CPU use."""

    cpuburn: float  # CPU seconds per second (1.0 = one CPU), rounded to a C float
    ctxswitch: float  # voluntary + involuntary context switches per second
    iodemand: float  # bytes read + written (io's read_bytes, write_bytes) per second
    iowait: float  # seconds of block I/O delay per second
    schedwait: float  # seconds waiting on a run queue per second (schedstat run_delay)
    virtualsize: int  # Kbytes (hotproc.predicate.virtualsize is its low 32 bits)
    residentsize: int  # Kbytes
    cpu_seconds: float  # CPU seconds used since the previous pass (0 when first seen)


def _delta(now: float, before: float) -> float:
    change = now - before
    return change + _WRAP if change < 0 else change


def derive(previous: Reading | None, current: Reading, elapsed: float, hz: int) -> Derived:
    """The values pmdaproc derives from a process's readings ELAPSED seconds apart
    (HZ clock ticks a second).  First seen (no PREVIOUS, another process under the
    same pid, or no time elapsed): every rate is 0."""
    sizes = {"virtualsize": current.vsize_kb, "residentsize": current.rss_kb}
    if previous is None or previous.start_time != current.start_time or elapsed <= 0:
        return Derived(0.0, 0.0, 0.0, 0.0, 0.0, **sizes, cpu_seconds=0.0)
    cpu = _delta(current.cpu_ticks / hz, previous.cpu_ticks / hz)
    switches = _delta(current.vctxsw, previous.vctxsw) + _delta(current.nvctxsw, previous.nvctxsw)
    io = _delta(current.read_bytes, previous.read_bytes) + _delta(
        current.write_bytes, previous.write_bytes
    )
    return Derived(
        cpuburn=_f32(cpu / elapsed),
        ctxswitch=switches / elapsed,
        iodemand=io / elapsed,
        iowait=_delta(current.blkio_ticks, previous.blkio_ticks) / hz / elapsed,
        schedwait=_delta(current.run_delay_ns, previous.run_delay_ns) / (elapsed * 1e9),
        **sizes,
        cpu_seconds=cpu,
    )


def fname_variable(comm: str) -> str:
    """`fname` from stat's command name: pmdaproc drops one more pair of enclosing
    parentheses when the name starts with "(", and keeps 255 characters."""
    if comm.startswith("("):
        comm = comm[1:]
        if len(comm) < 256 and comm.endswith(")"):
            comm = comm[:-1]
    return comm[:255]


def psargs_variable(pid: int, psargs: str) -> str:
    """`psargs` for PID, whose proc.psinfo.psargs is PSARGS: pmdaproc takes its
    "%06d <psargs>" text from the 8th character, so a pid of 7 digits or more keeps
    some of its digits; 255 characters at most."""
    return f"{pid:06d} {psargs}"[7:][:255]


def name_variable(name: str | None) -> str:
    """`uname`/`gname` from a user or group NAME (None when the id has none)."""
    return "UNKNOWN" if name is None else name[:63]


def variables(
    reading: Reading, derived: Derived, *, uname: str, gname: str, fname: str, psargs: str
) -> dict[str, object]:
    """Every variable's value for one process, as evaluate() takes them (the strings
    already through fname_variable, psargs_variable, name_variable)."""
    return {
        "uid": reading.uid,
        "gid": reading.gid,
        "uname": uname,
        "gname": gname,
        "fname": fname,
        "psargs": psargs,
        "cpuburn": derived.cpuburn,
        "ctxswitch": derived.ctxswitch,
        "virtualsize": derived.virtualsize,
        "residentsize": derived.residentsize,
        "iodemand": derived.iodemand,
        "iowait": derived.iowait,
        "schedwait": derived.schedwait,
    }


@dataclass(frozen=True)
class Candidate:
    """One process at a timer pass: its reading and its string variables."""

    pid: int
    reading: Reading
    uname: str
    gname: str
    psargs: str  # already through psargs_variable


@dataclass(frozen=True)
class Selection:
    """One timer pass's outcome."""

    hot: dict[int, Derived]  # the hot pids (ascending) and their predicate values
    readings: dict[int, Reading]  # every candidate's reading: the next pass's previous
    hot_cpu_seconds: float  # CPU seconds the hot processes used since the last pass
    cold_cpu_seconds: float  # ... and the others


def select(
    predicate: Predicate,
    candidates: Iterable[Candidate],
    previous: Mapping[int, Reading],
    elapsed: float,
    hz: int,
) -> Selection:
    """Evaluate PREDICATE over one pass's CANDIDATES (PREVIOUS: the last pass's
    readings).  Raises PredicateRuntimeError where pmdaproc would exit."""
    hot: dict[int, Derived] = {}
    readings: dict[int, Reading] = {}
    spent = {True: 0.0, False: 0.0}
    for candidate in sorted(candidates, key=lambda c: c.pid):
        reading = candidate.reading
        derived = derive(previous.get(candidate.pid), reading, elapsed, hz)
        readings[candidate.pid] = reading
        values = variables(
            reading,
            derived,
            uname=candidate.uname,
            gname=candidate.gname,
            fname=fname_variable(reading.comm),
            psargs=candidate.psargs,
        )
        is_hot = predicate.evaluate(values)
        if is_hot:
            hot[candidate.pid] = derived
        spent[is_hot] += derived.cpu_seconds
    return Selection(hot, readings, spent[True], spent[False])


# --------------------------------------------------------------------------------------
# hotproc.total.*
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    """hotproc.total.*: CPU seconds per second, summed over all CPUs (percent aside)."""

    cpuidle: float  # the machine's idle time (/proc/stat's cpu idle)
    cpuburn: float  # used by the hot processes
    transient: float  # cpuother.transient: not idle and not seen in processes
    not_cpuburn: float  # cpuother.not_cpuburn: used by the other processes
    other_total: float  # cpuother.total: transient + not_cpuburn
    other_percent: float  # cpuother.percent: other_total / (other_total + cpuburn) * 100


#: Before the second pass pmdaproc has no totals and answers 0 for each.
NO_TOTALS = Totals(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def idle_ticks(proc_stat: bytes) -> int:
    """The idle clock ticks of all CPUs: /proc/stat's "cpu" line, 4th number (0 if
    unreadable, as pmdaproc's scanf failing)."""
    for line in proc_stat.split(b"\n"):
        words = line.split()
        if words[:1] == [b"cpu"]:
            try:
                return int(words[4])
            except (IndexError, ValueError):
                return 0
    return 0


def totals(
    elapsed: float,
    ncpus: int,
    idle_delta_ticks: int,
    hz: int,
    hot_cpu_seconds: float,
    cold_cpu_seconds: float,
) -> Totals:
    """hotproc.total.* for a pass ELAPSED seconds after the previous one, on NCPUS
    online CPUs, the cpu idle counter having moved IDLE_DELTA_TICKS (negative: +2**64).
    The transient part is what neither idle time nor the processes seen in both
    passes account for (processes that came or went, interrupts, I/O wait...),
    never below 0."""
    if elapsed <= 0:
        return NO_TOTALS
    idle = _delta(idle_delta_ticks, 0) / hz
    transient = max(0.0, ncpus * elapsed - (hot_cpu_seconds + cold_cpu_seconds + idle))
    burn, other, trans = hot_cpu_seconds / elapsed, cold_cpu_seconds / elapsed, transient / elapsed
    non_idle = trans + other + burn
    return Totals(
        cpuidle=idle / elapsed,
        cpuburn=burn,
        transient=trans,
        not_cpuburn=other,
        other_total=other + trans,
        other_percent=0.0 if non_idle == 0 else (trans + other) / non_idle * 100,
    )
