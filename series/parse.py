"""The pmseries query language, read as PCP 6.0.3's libpcp_web reads it (query_parser.y):
`parse` gives a `Query` (a syntax tree of frozen dataclasses) or raises QuerySyntaxError
with the message PCP reports, and `canonical` prints an expression back as query.c does
for the series id of an expression (`expr_sid`).  rescale's units text is read by
purepcp.pmapi.units_parse (pmParseUnitsStr), re-exported here as `parse_units`.

The language, in short:

    query   := [NAME "="] (vector | expr | "{" quals "}" ["[" window "]"])
    vector  := NAME ["{" quals "}"] ["[" window "]"]         NAME with an unescaped * is a glob
    quals   := test (("," | "&&" | "||") test)*               "," lowest; && || equal, left first
    test    := name ("<" | "<=" | ">" | ">=") number
             | name ("==" | "!=" | ":" | "~~") (string | name | number)
             | name ("=~" | "!~") (string | name)
    window  := (key ":" value | RANGE) ("," ...)*            see purepcp.series.window
    expr    := operand (("+" | "-" | "*" | "/") operand)*    * and / before + and -
    operand := vector | func "(" expr [, arg] ")" | number "*" operand | operand "*" number

Every vector of an expression has a window, or none has; a number can only be a factor.
A name takes in "*" (a*2 is a pattern: write a * 2).  Names in qualifiers select by prefix:
instance./inst./i. the instance name, metric./m. the metric name, context./source./c./s.
the source's name (context.name), label./l. or any other name a label.  Strings have no
escapes; a "*" in a metric name is escaped by a "\\" or "%" before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import NoReturn

from purepcp.pmapi.cnumbers import atof, cstring
from purepcp.pmapi.units import Units
from purepcp.pmapi.units_parse import parse_units

from .ids import expr_id
from .window import TIME_KEYWORDS, VALUE_TOKENS, Window, WindowError

__all__ = [
    "And", "Arith", "Binary", "Call", "Expr", "Filter", "Func", "NameKind", "Number", "Op",
    "Or", "Qualifier", "Query", "QuerySyntaxError", "ValueKind", "Vector", "canonical",
    "expr_sid", "name_kind", "parse", "parse_units", "parse_window",
]  # fmt: skip


class QuerySyntaxError(ValueError):
    """A query PCP refuses: MESSAGE is PCP's text (the REST "message"), POSITION the
    character its caret points at (None for messages without one)."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


# --- the tree --------------------------------------------------------------------------


class Op(Enum):
    """A qualifier's operator, named as PCP's nodes; the value is its canonical spelling
    (":" is GLOB).  PCP 6.0.3 evaluates EQ, GLOB, REQ and RNE; the others match nothing."""

    LT = "<"
    LEQ = "<="
    EQ = "=="
    GLOB = "~~"
    GEQ = ">="
    GT = ">"
    NEQ = "!="
    REQ = "=~"
    RNE = "!~"


class Arith(Enum):
    """An arithmetic operator between expressions."""

    PLUS = "+"
    MINUS = "-"
    STAR = "*"
    SLASH = "/"


class NameKind(Enum):
    """What a qualifier's name selects (node_subtype), with the map its values are in."""

    INSTANCE = "inst.name"
    METRIC = "metric.name"
    CONTEXT = "context.name"
    LABEL = "label"


class ValueKind(Enum):
    """How a qualifier's value was written: "quoted", a bare word, or a number."""

    STRING = "string"
    NAME = "name"
    INTEGER = "integer"
    DOUBLE = "double"


class Func(Enum):
    """The functions of the language, named as PCP's nodes; the value is the name written."""

    RATE = "rate"
    MAX = "max"
    MAX_INST = "max_inst"
    MAX_SAMPLE = "max_sample"
    MIN = "min"
    MIN_INST = "min_inst"
    MIN_SAMPLE = "min_sample"
    SUM = "sum"
    SUM_INST = "sum_inst"
    SUM_SAMPLE = "sum_sample"
    AVG = "avg"
    AVG_INST = "avg_inst"
    AVG_SAMPLE = "avg_sample"
    STDEV_INST = "stdev_inst"
    STDEV_SAMPLE = "stdev_sample"
    TOPK_INST = "topk_inst"
    TOPK_SAMPLE = "topk_sample"
    NTH_PERCENTILE_INST = "nth_percentile_inst"
    NTH_PERCENTILE_SAMPLE = "nth_percentile_sample"
    ABS = "abs"
    FLOOR = "floor"
    LOG = "log"
    SQRT = "sqrt"
    ROUND = "round"
    RESCALE = "rescale"


#: A function's second argument: an integer (k, or a percentage up to 100), an optional
#: number (the base of a logarithm), or a units string; the rest take one expression.
_SECOND_ARG = {
    Func.TOPK_INST: "integer", Func.TOPK_SAMPLE: "integer",
    Func.NTH_PERCENTILE_INST: "percent", Func.NTH_PERCENTILE_SAMPLE: "percent",
    Func.LOG: "number?", Func.RESCALE: "units",
}  # fmt: skip

#: How canonical text writes a call: the name and the separator before a second argument
#: (query.c writes nth_percentile_sample as nth_percentile_inst).
_CANONICAL_CALL = {
    Func.TOPK_INST: ("topk_inst", ", "), Func.TOPK_SAMPLE: ("topk_sample", ", "),
    Func.NTH_PERCENTILE_INST: ("nth_percentile_inst", ", "),
    Func.NTH_PERCENTILE_SAMPLE: ("nth_percentile_inst", ", "),
    Func.LOG: ("log", ","),
}  # fmt: skip

#: Qualifier name prefixes, tried in query.c's order; a prefix needs a name after it.
_NAME_PREFIXES = (
    (NameKind.INSTANCE, ("instance.", "inst.", "i.")),
    (NameKind.METRIC, ("metric.", "m.")),
    (NameKind.CONTEXT, ("context.", "source.", "c.", "s.")),
)
_LABEL_PREFIXES = ("label.", "l.")


def name_kind(name: str) -> tuple[NameKind, str | None]:
    """What qualifier name NAME selects, and for a label the label's name."""
    for kind, prefixes in _NAME_PREFIXES:
        if any(name.startswith(p) and len(name) > len(p) for p in prefixes):
            return kind, None
    for prefix in _LABEL_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return NameKind.LABEL, name[len(prefix) :]
    return NameKind.LABEL, name


@dataclass(frozen=True)
class Number:
    """A numeric literal: a factor in arithmetic or a function's second argument."""

    text: str

    @property
    def value(self) -> int | float:
        """Its value: an integer, or the double atof reads (a lone "." is 0)."""
        return int(self.text) if self.text.isdigit() else atof(self.text)


@dataclass(frozen=True)
class Qualifier:
    """One test `name OP value`: NAME as written (NAME_QUOTED if it was a "string"), VALUE
    without quotes and VALUE_KIND how it was written."""

    name: str
    op: Op
    value: str
    value_kind: ValueKind
    name_quoted: bool = False

    @property
    def kind(self) -> NameKind | None:
        """What the name selects; None for a quoted name (PCP 6.0.3 crashes on those)."""
        return None if self.name_quoted else name_kind(self.name)[0]

    @property
    def label(self) -> str | None:
        """The label a label test is about ("hostname" for hostname, l.hostname...)."""
        return None if self.name_quoted else name_kind(self.name)[1]

    @property
    def match_text(self) -> str:
        """The text an exact test looks up (hashed for the series key): a quoted value of a
        label test in its JSON form, "v" with the quotes; any other value as written."""
        if self.kind is NameKind.LABEL and self.value_kind is ValueKind.STRING:
            return f'"{self.value}"'
        return self.value


@dataclass(frozen=True)
class And:
    """Both tests hold (`,` or `&&`): the intersection of their series."""

    left: Filter
    right: Filter


@dataclass(frozen=True)
class Or:
    """Either test holds (`||`): the union of their series."""

    left: Filter
    right: Filter


Filter = Qualifier | And | Or


@dataclass(frozen=True)
class Vector:
    """Series by metric NAME and QUALS.  WINDOW is the window PCP gives this node (what
    functions read): every window read so far in the query; None for a vector without one
    and for a query by QUALS alone (NAME None), whose window is only the Query's."""

    name: str | None
    quals: Filter | None = None
    window: Window | None = None

    @property
    def glob(self) -> bool:
        """Whether NAME is a pattern: its first * is not escaped by \\ or %."""
        if self.name is None or "*" not in self.name:
            return False
        star = self.name.index("*")
        return star == 0 or self.name[star - 1] not in "%\\"


@dataclass(frozen=True)
class Call:
    """FUNC applied to ARG; PARAM is topk's k, nth_percentile's percentage or log's base,
    UNITS rescale's units text."""

    func: Func
    arg: Expr
    param: Number | None = None
    units: str | None = None

    @property
    def scale(self) -> Units | None:
        """The units rescale converts to, as pmParseUnitsStr reads them."""
        return None if self.units is None else parse_units(self.units)[0]


@dataclass(frozen=True)
class Binary:
    """LEFT OP RIGHT; a Number only ever stands beside a * (PCP has no number*number)."""

    op: Arith
    left: Expr | Number
    right: Expr | Number


Expr = Vector | Call | Binary


@dataclass(frozen=True)
class Query:
    """A parsed query: EXPR, the WINDOW of the whole query (every window in it, in order;
    what PCP uses outside functions), and the NAME of `NAME = ...` (PCP drops it)."""

    expr: Expr
    window: Window | None = None
    name: str | None = None

    @property
    def has_function(self) -> bool:
        """Whether results are computed (a function or arithmetic at the top)."""
        return isinstance(self.expr, (Call, Binary))

    @property
    def wants_values(self) -> bool:
        """Whether the query answers values rather than series ids (series_time_window)."""
        return self.window is not None and self.window.is_time_window


# --- reading the text ------------------------------------------------------------------

_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"
_ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NAME_CHARS = frozenset(_ALPHA + _DIGITS + "_.*%\\")
_SINGLE = {
    "+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH", "(": "LPAREN", ")": "RPAREN",
    "{": "LBRACE", "}": "RBRACE", "[": "LSQUARE", "]": "RSQUARE", ":": "COLON", ",": "COMMA",
}  # fmt: skip
#: Two-character operators by first character: {second: token}, and the token for the
#: first character alone (ERROR: "Illegal character").
_DOUBLE = {
    "<": ({"=": "LEQ"}, "LT"),
    ">": ({"=": "GEQ"}, "GT"),
    "=": ({"=": "EQ", "~": "REQ"}, "ASSIGN"),
    "~": ({"~": "GLOB"}, "ERROR"),
    "!": ({"=": "NEQ", "~": "RNE"}, "ERROR"),
    "&": ({"&": "AND"}, "ERROR"),
    "|": ({"|": "OR"}, "ERROR"),
}
#: Words that are tokens of their own: function names (only right before "("; "count(" is
#: a function with no rule), and the reserved words of no rule.
_FUNC_WORDS = {f.value: "FUNC" for f in Func} | {"count": "COUNT"}
_RESERVED = {"type": "TYPE", "semantics": "SEMANTICS", "units": "UNITS"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


def _lex(text: str) -> list[_Token]:
    """The tokens of TEXT as series_lex makes them, up to the end (EOS, placed at the last
    character, as PCP's caret is) or the first ERROR token."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i == n:
            tokens.append(_Token("EOS", "", n - 1))
            return tokens
        c, j = text[i], i + 1
        if c in _DIGITS or c == ".":
            while j < n and text[j] in _DIGITS:
                j += 1
            kind = "INTEGER" if c != "." else "DOUBLE"
            if kind == "INTEGER" and j < n and text[j] == ".":
                kind, j = "DOUBLE", j + 1
                while j < n and text[j] in _DIGITS:
                    j += 1
            elif kind == "INTEGER" and j < n and text[j] in _ALPHA:
                kind = "RANGE"
                while j < n and text[j] in _ALPHA:
                    j += 1
            if kind == "INTEGER" and int(text[i:j]) > 0xFFFFFFFF:
                kind = "ERROR"  # "Constant value too large"
        elif c in _ALPHA:
            while j < n and text[j] in _NAME_CHARS:
                j += 1
            word = text[i:j]
            kind = _FUNC_WORDS.get(word, "NAME") if text[j : j + 1] == "(" else "NAME"
            if kind == "NAME":
                kind = _RESERVED.get(word) or ("TIME" if word in TIME_KEYWORDS else "NAME")
        elif c == '"':
            close = text.find('"', j)
            if close < 0:  # PCP's lexer loops at an unclosed string until memory runs out
                tokens.append(_Token("ERROR", text[i:], i))
                return tokens
            tokens.append(_Token("STRING", text[j:close], i))
            i = close + 1
            continue
        elif c in _SINGLE:
            kind = _SINGLE[c]
        elif c in _DOUBLE:
            seconds, alone = _DOUBLE[c]
            kind = seconds.get(text[j : j + 1], "")
            if kind:
                j += 1
            else:
                kind = alone
        else:
            kind = "ERROR"  # "Illegal character"
        tokens.append(_Token(kind, text[i:j], i))
        if kind == "ERROR":
            return tokens
        i = j


def _caret_message(text: str, pos: int, reason: str = "syntax error") -> str:
    """series_error's text: the query, a caret under POS (tabs and such kept), REASON."""
    pad = "".join(" " if "!" <= c <= "~" else c for c in text[: max(pos, 0)])
    return f"cannot parse given string\n\n{text}\n{pad}^ -- {reason}\n"


_QUAL_OPS = {
    "LT": Op.LT, "LEQ": Op.LEQ, "EQ": Op.EQ, "GEQ": Op.GEQ, "GT": Op.GT, "NEQ": Op.NEQ,
    "REQ": Op.REQ, "RNE": Op.RNE, "COLON": Op.GLOB, "GLOB": Op.GLOB,
}  # fmt: skip
#: The value tokens each operator takes: numbers for orderings, strings for regexes.
_QUAL_VALUES = {
    Op.LT: ("INTEGER", "DOUBLE"), Op.LEQ: ("INTEGER", "DOUBLE"),
    Op.GEQ: ("INTEGER", "DOUBLE"), Op.GT: ("INTEGER", "DOUBLE"),
    Op.EQ: ("STRING", "NAME", "INTEGER", "DOUBLE"), Op.NEQ: ("STRING", "NAME", "INTEGER", "DOUBLE"),
    Op.GLOB: ("STRING", "NAME", "INTEGER", "DOUBLE"), Op.REQ: ("STRING", "NAME"),
    Op.RNE: ("STRING", "NAME"),
}  # fmt: skip
_ARITH = {"PLUS": Arith.PLUS, "MINUS": Arith.MINUS, "STAR": Arith.STAR, "SLASH": Arith.SLASH}
_PRECEDENCE = {Arith.PLUS: 1, Arith.MINUS: 1, Arith.STAR: 2, Arith.SLASH: 2}
_MAX_DEPTH = 200  # nested calls and factors; bison's stack would allow some thousands


class _Parser:
    """A recursive descent over the tokens that fails on the same token as PCP's LALR
    parser (the first one no query can continue with), and runs its checks at the same
    points (a window setting as soon as its value is read, rescale's units and a
    percentage at the closing parenthesis)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.at = 0
        self.window: Window | None = None  # every setting so far, as PCP's series_t.time
        self.mode: str | None = None  # "ids" or "values": vectors without or with windows
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self, *kinds: str) -> _Token:
        token = self.tokens[self.at]
        if kinds and token.kind not in kinds:
            self.fail(token)
        self.at += 1
        return token

    def fail(self, token: _Token, reason: str = "syntax error") -> NoReturn:
        raise QuerySyntaxError(_caret_message(self.text, token.pos, reason), max(token.pos, 0))

    def query(self) -> tuple[Expr | None, str | None]:
        """query: [NAME "="] vector; a bare window gives no expression."""
        name = None
        if self.peek().kind == "NAME" and self.tokens[self.at + 1].kind == "ASSIGN":
            name = self.take().text
            self.take()
        first = self.peek()
        if first.kind == "LSQUARE":
            self.take()
            self.timelist()
            self.take("RSQUARE")
            self.take("EOS")
            return None, name
        if first.kind == "LBRACE":
            self.take()
            quals = self.quals()
            self.take("RBRACE")
            if self.peek().kind == "LSQUARE":
                self.take()
                self.timelist()
                self.take("RSQUARE")
            self.take("EOS")
            return Vector(None, quals), name
        expr = self.expr()
        self.take("EOS")
        return expr, name

    def expr(self, min_precedence: int = 1) -> Expr:
        """Operands and operators, * and / first, each level left to right."""
        left: Expr = self.operand()
        while (op := _ARITH.get(self.peek().kind)) and _PRECEDENCE[op] >= min_precedence:
            self.take()
            if op is Arith.STAR:  # the right side of * is one operand, maybe a number
                right: Expr | Number = self.factor()
            else:
                right = self.expr(_PRECEDENCE[op] + 1)
            left = Binary(op, left, right)
        return left

    def factor(self) -> Expr | Number:
        """The right side of a *: a number alone, or an operand."""
        token = self.peek()
        if token.kind in ("INTEGER", "DOUBLE"):
            self.take()
            return Number(token.text)
        return self.operand()

    def operand(self) -> Expr:
        """A vector, a call, or a number times an operand (numbers group to the right:
        2*3*x is 2*(3*x), as PCP has no rule for a number times a number)."""
        token = self.peek()
        if token.kind in ("INTEGER", "DOUBLE"):
            self.take()
            self.take("STAR")
            with _Deeper(self, token):
                return Binary(Arith.STAR, Number(token.text), self.operand())
        if token.kind == "NAME":
            return self.vector()
        if token.kind == "FUNC":
            with _Deeper(self, token):
                return self.call()
        self.fail(token)

    def vector(self) -> Vector:
        """NAME [{quals}] [[window]]: one kind for the whole expression."""
        name = self.take().text
        quals = None
        if self.peek().kind == "LBRACE":
            self.take()
            quals = self.quals()
            self.take("RBRACE")
        token = self.peek()
        if token.kind == "LSQUARE":
            if self.mode == "ids":
                self.fail(token)
            self.mode = "values"
            self.take()
            self.timelist()
            self.take("RSQUARE")
            return Vector(name, quals, self.window)
        if self.mode == "values":
            self.fail(token)
        self.mode = "ids"
        return Vector(name, quals)

    def call(self) -> Call:
        """FUNC(expr [, second argument])."""
        func = Func(self.take().text)
        self.take("LPAREN")
        arg = self.expr()
        second = _SECOND_ARG.get(func)
        if second in ("integer", "percent"):
            self.take("COMMA")
            param = Number(self.take("INTEGER").text)
            close = self.take("RPAREN")
            if second == "percent" and int(param.text) > 100:
                self.fail(close)
            return Call(func, arg, param)
        if second == "units":
            self.take("COMMA")
            units = self.take("STRING").text
            close = self.take("RPAREN")
            try:
                parse_units(units)
            except ValueError:
                self.fail(close)
            return Call(func, arg, units=units)
        if second == "number?" and self.peek().kind == "COMMA":
            self.take()
            param = Number(self.take("INTEGER", "DOUBLE").text)
            self.take("RPAREN")
            return Call(func, arg, param)
        self.take("RPAREN")
        return Call(func, arg)

    def quals(self) -> Filter:
        """Tests joined by "," (lowest), "&&" and "||" (equal, left to right)."""
        result = self.boolean()
        while self.peek().kind == "COMMA":
            self.take()
            result = And(result, self.boolean())
        return result

    def boolean(self) -> Filter:
        result: Filter = self.test()
        while self.peek().kind in ("AND", "OR"):
            join = And if self.take().kind == "AND" else Or
            result = join(result, self.test())
        return result

    def test(self) -> Qualifier:
        name = self.take("NAME", "STRING")
        op = _QUAL_OPS.get(self.peek().kind)
        if op is None:
            self.fail(self.peek())
        self.take()
        value = self.take(*_QUAL_VALUES[op])
        kind = ValueKind(value.kind.lower())
        return Qualifier(name.text, op, value.text, kind, name.kind == "STRING")

    def timelist(self) -> None:
        """Window settings, each checked as soon as its value is read."""
        while True:
            token = self.take("TIME", "RANGE")
            if token.kind == "RANGE":
                self.setting("range", token.text)
            else:
                field = TIME_KEYWORDS[token.text]
                self.take("COLON")
                self.setting(field, self.take(*VALUE_TOKENS[field]).text)
            if self.peek().kind != "COMMA":
                return
            self.take()

    def setting(self, field: str, text: str) -> None:
        try:
            self.window = (self.window or Window()).add(field, text)
        except WindowError as e:
            raise QuerySyntaxError(e.message) from None


class _Deeper:
    """One more level of nesting; too many end the parse as bison's full stack would."""

    def __init__(self, parser: _Parser, token: _Token) -> None:
        self.parser, self.token = parser, token

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > _MAX_DEPTH:
            self.parser.fail(self.token, "memory exhausted")

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def parse(text: str) -> Query:
    """The query TEXT (up to a NUL, as PCP reads it); QuerySyntaxError with PCP's message.

    PCP 6.0.3 crashes on an empty query (the tests here point the caret at the start).
    """
    parser = _Parser(cstring(text))
    expr, name = parser.query()
    if expr is None:
        raise QuerySyntaxError("Invalid series query specification")
    return Query(expr, parser.window, name)


def parse_window(text: str) -> Window:
    """A bare window such as "[samples:2]", as pmSeriesWindow reads it (pmseries -w)."""
    parser = _Parser(cstring(text))
    expr, _ = parser.query()
    if expr is not None:
        raise QuerySyntaxError("Invalid time window specification")
    return parser.window or Window()


# --- canonical text --------------------------------------------------------------------


def canonical(
    node: Query | Expr | Number | Filter, metric_name: Callable[[Vector], str] | None = None
) -> str:
    """NODE printed back as series_expr_canonical prints it for the expression's series id:
    no spaces, no windows, no parentheses, qualifier values in quotes except for orderings
    and regexes.  Where PCP prints the metric name of the node's first series (a glob, or
    a vector with qualifiers), METRIC_NAME(vector) gives it; by default the name written.
    """
    names = metric_name or (lambda v: v.name or "")
    match node:
        case Query():
            return canonical(node.expr, metric_name)
        case Number():
            return node.text
        case Vector(name=None, quals=quals):
            return canonical(quals, metric_name) if quals is not None else ""
        case Vector(quals=None):
            return names(node) if node.glob else node.name or ""
        case Vector(quals=quals):
            return f"{names(node)}{{{canonical(quals, metric_name)}}}"
        case And() | Or() | Binary():
            return _canonical_infix(node, metric_name)
        case Qualifier():
            return _canonical_test(node)
        case Call(func=Func.RESCALE, arg=arg, units=units):
            return f'rescale({canonical(arg, metric_name)},"{units}")'
        case Call(func=func, arg=arg, param=param):
            inner = canonical(arg, metric_name)
            name, comma = _CANONICAL_CALL.get(func, (func.value, ","))
            return f"{name}({inner}{comma}{param.text})" if param else f"{name}({inner})"
    raise TypeError(f"not a query node: {node!r}")


def _canonical_infix(node: And | Or | Binary, metric_name: Callable[[Vector], str] | None) -> str:
    """LEFT OP RIGHT with no parentheses; a long chain (a+b+c..., leaning left) is walked
    down its left side in a loop, not by recursion."""
    rights: list[str] = []
    left: Query | Expr | Number | Filter = node
    while isinstance(left, (And, Or, Binary)):
        sign = "&&" if isinstance(left, And) else "||" if isinstance(left, Or) else left.op.value
        rights.append(sign + canonical(left.right, metric_name))
        left = left.left
    return canonical(left, metric_name) + "".join(reversed(rights))


def _canonical_test(test: Qualifier) -> str:
    """A qualifier: an exact test on a prefix of "metric.name" loses its name (query.c
    compares only the name's length), and metric.name==X is just X."""
    name, value, op = test.name, test.value, test.op
    if op is Op.EQ:
        if not test.name_quoted and name == "metric.name":
            return value
        if not test.name_quoted and "metric.name".startswith(name):
            name = ""
    if op in (Op.EQ, Op.GLOB, Op.NEQ):
        return f'{name}{op.value}"{value}"'
    return f"{name}{op.value}{value}"


def expr_sid(node: Query | Expr, metric_name: Callable[[Vector], str] | None = None) -> str:
    """The hex40 series id PCP gives the expression NODE (SHA-1 of its canonical text)."""
    return expr_id(canonical(node, metric_name)).hex()
