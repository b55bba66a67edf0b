"""pmie's scanner: characters to tokens, the way PCP 6's pmie reads rule files.

The scanner works on a stack of input contexts (the rule file, then one per
string-valued macro being expanded), each with its own first-in first-out
push-back queue: pmie's grammar relies on that queue to look ahead after '/'
(division or a units slash) and after '.' (a number or a '..' interval), and
its error positions ("near line N") count every character ever read from the
file, pushed back or not.  A ';' or '}' ends a statement (the parser sees it as
end of input); a statement end followed by '.' ends the whole input.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .tree import Units

EOF = ""  # the end-of-input character (C's EOF)
LEX_MAX = 254  # longest token pmie keeps

_ALPHA = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT = frozenset("0123456789")
_SPACE = frozenset(" \t\n\v\f\r")
_WORD_MARKS = frozenset("._\\$")  # besides letters and digits, inside a word

# word -> (token kind, dimension, scale); a trailing 's' is ignored ("bytes")
UNIT_WORDS: dict[str, tuple[str, str, int]] = {
    "byte": ("SPACE_UNIT", "space", 0),
    "Kbyte": ("SPACE_UNIT", "space", 1),
    "Mbyte": ("SPACE_UNIT", "space", 2),
    "Gbyte": ("SPACE_UNIT", "space", 3),
    "Tbyte": ("SPACE_UNIT", "space", 4),
    "nsec": ("TIME_UNIT", "time", 0),
    "usec": ("TIME_UNIT", "time", 1),
    "msec": ("TIME_UNIT", "time", 2),
    "sec": ("TIME_UNIT", "time", 3),
    "min": ("TIME_UNIT", "time", 4),
    "hour": ("TIME_UNIT", "time", 5),
    "count": ("EVENT_UNIT", "count", 0),
    "Kcount": ("EVENT_UNIT", "count", 3),
    "Mcount": ("EVENT_UNIT", "count", 6),
    "nanosec": ("TIME_UNIT", "time", 0),
    "nanosecond": ("TIME_UNIT", "time", 0),
    "microsec": ("TIME_UNIT", "time", 1),
    "microsecond": ("TIME_UNIT", "time", 1),
    "millisec": ("TIME_UNIT", "time", 2),
    "millisecond": ("TIME_UNIT", "time", 2),
    "second": ("TIME_UNIT", "time", 3),
    "minute": ("TIME_UNIT", "time", 4),
}

# prefix of "<prefix>_<axis>" -> token kind
QUANTIFIERS = {
    "sum": "SUM_AGGR",
    "avg": "AVG_AGGR",
    "max": "MAX_AGGR",
    "min": "MIN_AGGR",
    "count": "COUNT_AGGR",
    "all": "ALL_QUANT",
    "some": "SOME_QUANT",
    "%": "PCNT_QUANT",
}
AXES = {"host": "HOST_DOM", "inst": "INST_DOM", "sample": "TIME_DOM"}

RESERVED = {
    "true": "TRU",
    "false": "FALS",
    "rate": "RATE",
    "instant": "INSTANT",
    "shell": "SHELL",
    "alarm": "ALARM",
    "syslog": "SYSLOG",
    "print": "PRINT",
    "stomp": "STOMP",
    "rising": "RISE",
    "falling": "FALL",
    "match_inst": "MATCH",
    "nomatch_inst": "NOMATCH",
    "ruleset": "RULESET",
    "else": "ELSE",
    "unknown": "UNKNOWN",
    "otherwise": "OTHERWISE",
}

# two-character operators: first char -> (second char, kind if paired,
# kind if alone or None for the bare character)
_PAIRS: dict[str, tuple[str, str, str | None]] = {
    "-": (">", "ARROW", None),
    "=": ("=", "EQ_REL", None),
    "!": ("=", "NEQ_REL", "NOT"),
    "<": ("=", "LEQ_REL", None),
    ">": ("=", "GEQ_REL", None),
    "&": ("&", "AND", "SEQ"),
    "|": ("|", "OR", "ALT"),
    ".": (".", "INTERVAL", None),
}

_ESCAPES = {"n": "\n", "t": "\t", "v": "\v", "b": "\b", "r": "\r", "f": "\f", "a": "\a"}


@dataclass(frozen=True)
class Token:
    """One token: its kind (a name, or the character itself) and value."""

    kind: str
    value: object = None


END = Token("EOF")


@dataclass
class _Context:
    """One input: the rule file or the text of a macro being expanded."""

    name: str | None
    text: str
    macro: bool
    pos: int = 0
    lno: int = 1
    look: deque[str] = field(default_factory=deque)


class MacroError(Exception):
    """A macro could not be expanded (already reported)."""


# a macro's value as the scanner sees it: ("string", text) or ("value", node)
MacroLookup = Callable[[str], tuple[str, object] | None]


class Lexer:
    """Tokens of one rule file, with pmie's error sink and positions."""

    def __init__(
        self, text: str, name: str | None, macros: MacroLookup, emit: Callable[[str], None]
    ):
        self._stack: list[_Context] = [_Context(name, text, macro=False)]
        self._macros = macros
        self._emit = emit
        self._ahead: str | None = None
        self.errors = 0  # syntax errors raised by the scanner itself

    # ---- characters -------------------------------------------------

    def more(self) -> bool:
        """True while some input context is left."""
        return bool(self._stack)

    def nextc(self) -> str:
        while self._stack:
            ctx = self._stack[-1]
            if ctx.look:
                return ctx.look.popleft()
            if ctx.pos < len(ctx.text):
                c = ctx.text[ctx.pos]
                ctx.pos += 1
                if c != "\0":
                    if c == "\n":
                        ctx.lno += 1
                    return c
            self._stack.pop()
        return EOF

    def prevc(self, c: str) -> None:
        if self._stack and c != EOF:
            self._stack[-1].look.append(c)

    def prevs(self, s: str) -> None:
        for c in s:
            self.prevc(c)

    def sync(self) -> None:
        """Discard input up to the next ';' (kept) or the end (lexSync)."""
        c = self.nextc()
        while c not in (";", EOF):
            c = self.nextc()
        self.prevc(c)

    def where(self) -> str:
        """The position clause of pmie's error lines."""
        if not self._stack:
            return "at end of file"
        ctx = self._stack[-1]
        text = f"near line {ctx.lno} of "
        if not ctx.macro:
            return text + _source(ctx.name)
        text += f"macro ${ctx.name}"
        outer = [c for c in self._stack if not c.macro]
        if outer:
            text += " called from " + _source(outer[-1].name)
        return text

    def synerr(self) -> None:
        """Report a syntax error at the current position."""
        self.errors += 1
        self._emit(f"pmie: syntax error - {self.where()}")

    def line(self) -> int:
        """The current line of the innermost input (0 once input ended)."""
        return self._stack[-1].lno if self._stack else 0

    # ---- macros -------------------------------------------------------

    def _macro_name(self) -> str | None:
        """The name after '$' (plain or quoted), or None once reported."""
        c = self.nextc()
        quote = ""
        if c == "'":
            quote, c = c, self.nextc()
        if c not in _ALPHA:
            self._emit(f"macro name must begin with an alphabetic (not '{c or chr(0xFF)}')")
            self.sync()
            return None
        name: list[str] = []
        while True:
            if c == "\\":
                c = self.nextc()
            name.append(c)
            c = self.nextc()
            if not (
                len(name) < LEX_MAX
                and c != EOF
                and (c in _ALPHA or c in _DIGIT or c == "_" or (quote and c != quote))
            ):
                break
        if len(name) == LEX_MAX:
            self._emit(f"macro name too long: ${''.join(name[:20])}...")
            self.sync()
            return None
        if c == EOF:
            self._emit(f"unexpected end of file in macro name: ${''.join(name)}")
            self.sync()
            return None
        if not quote:
            self.prevc(c)
        return "".join(name)

    def _deref(self, name: str) -> tuple[str, object] | None:
        found = self._macros(name)
        if found is None:
            self._emit(f"undefined macro name ${name}")
            return None
        if found[0] == "string":
            self._stack.append(_Context(name, str(found[1]), macro=True))
        return found

    def _string_macro(self) -> None:
        """Expand '$name' inside a word or a string; only strings fit there."""
        name = self._macro_name()
        if name is None:
            raise MacroError
        found = self._deref(name)
        if found is None:
            self.sync()
            raise MacroError
        if found[0] != "string":
            self.synerr()
            self._emit(f"macro ${name} not string valued as expected")
            self.sync()
            raise MacroError

    # ---- tokens -------------------------------------------------------

    def token(self) -> Token:
        """The next token (yylex); END at a statement's end."""
        if self._ahead is not None:
            kind, self._ahead = self._ahead, None
            return Token(kind)
        try:
            return self._scan()
        except MacroError:
            return END

    def _skip_comment(self, c: str) -> str | None:
        """After '/', skip a comment and give the next character, else None."""
        d = self.nextc()
        if d == "*":
            c = self.nextc()
            while c != EOF:
                d = self.nextc()
                if c == "*" and d == "/":
                    return self.nextc()
                c = d
            return EOF
        if d == "/":
            while c not in ("\n", EOF):
                c = self.nextc()
            return c
        self.prevc(d)
        return None

    def _scan(self) -> Token:
        behind = ""
        c = self.nextc()
        while c != EOF:
            while c in _SPACE:
                c = self.nextc()
            if c == "/":
                after = self._skip_comment(c)
                if after is not None:
                    c = after
                    continue
            if c in _ALPHA or c in ("'", "%"):
                return self._word(c, behind)
            if behind:
                self.prevc(c)
                return Token(behind)
            if c == ".":
                # pmie looks at the next character and, when it is not a digit,
                # goes on with it as the current one (it is also pushed back)
                c = self.nextc()
                if c in _DIGIT:
                    self.prevc(".")
                    self.prevc(c)
                    c = "0"
                else:
                    self.prevc(c)
            if c in _DIGIT:
                return self._number(c)
            if c == '"':
                return self._string()
            if c in (";", "}"):
                return self._statement_end()
            if c == "$":
                name = self._macro_name()
                if name is None:
                    return END
                found = self._deref(name)
                if found is None:
                    self.sync()
                    return END
                if found[0] == "string":
                    c = self.nextc()
                    continue
                return Token("VAR", (name, found[1]))
            if c == "/":
                behind = c
                c = self.nextc()
                continue
            if c in _PAIRS:
                second, paired, alone = _PAIRS[c]
                d = self.nextc()
                if d == second:
                    return Token(paired)
                self.prevc(d)
                return Token(alone or c)
            return Token(c) if c != EOF else END
        return END

    def _statement_end(self) -> Token:
        d = self.nextc()
        while d in _SPACE:
            d = self.nextc()
        if d == ".":
            self._stack.clear()
        else:
            self.prevc(d)
        return END

    def _word(self, c: str, behind: str) -> Token:
        quote = c if c == "'" else ""
        if quote:
            c = self.nextc()
        chars: list[str] = []
        while True:
            if c == "$":
                self._string_macro()
                c = self.nextc()
            else:
                if c == "\\":
                    c = self.nextc()
                chars.append(c)
                c = self.nextc()
            if not (
                (
                    c in _ALPHA
                    or c in _DIGIT
                    or c in _WORD_MARKS
                    or (quote and c != quote and c != EOF)
                )
                and len(chars) < LEX_MAX
            ):
                break
        word = "".join(chars)
        if quote:
            c = self.nextc()
        else:
            stem = word[:-1] if word.endswith("s") else word
            unit = UNIT_WORDS.get(stem)
            if unit is not None:
                if behind == "/":
                    self.prevs(word)
                    self.prevc(c)
                    return Token("UNIT_SLASH")
                self.prevc(c)
                kind, dim, scale = unit
                return Token(kind, Units.one(dim, scale))
        if behind:
            self.prevs(word)
            self.prevc(c)
            return Token(behind)
        self.prevc(c)
        if not quote:
            head, sep, tail = word.partition("_")
            if sep and head in QUANTIFIERS and tail in AXES:
                self._ahead = AXES[tail]
                return Token(QUANTIFIERS[head], head)
            if word in RESERVED:
                return Token(RESERVED[word], word)
        return Token("IDENT", word)

    def _number(self, c: str) -> Token:
        chars: list[str] = []
        stage = 0  # 1 after '.', 2 after an exponent mark, 3 after '-'
        while True:
            chars.append(c)
            c = self.nextc()
            if stage == 0 and c == "." and len(chars) < LEX_MAX:
                c = self.nextc()
                if c == ".":
                    self.prevc(c)
                else:
                    stage = 1
                    chars.append(".")
            if stage <= 1 and len(chars) < LEX_MAX and c in ("e", "E"):
                stage = 2
                chars.append(c)
                c = self.nextc()
            if stage <= 2 and c == "-" and len(chars) < LEX_MAX:
                stage = 3
                chars.append(c)
                c = self.nextc()
            if not (c in _DIGIT and len(chars) < LEX_MAX):
                break
        self.prevc(c)
        return Token("NUMBER", strtod("".join(chars)))

    def _string(self) -> Token:
        chars: list[str] = []
        c = self.nextc()
        while c not in ('"', EOF) and len(chars) < LEX_MAX:
            escaped = c == "\\"
            if escaped:
                c = self.nextc()
                c = _ESCAPES.get(c, c)
            if c == "$" and not escaped:
                self._string_macro()
                c = self.nextc()
            chars.append(c)
            c = self.nextc()
        return Token("STRING", "".join(chars))


def _source(name: str | None) -> str:
    return f"file {name}" if name is not None else "standard input"


def strtod(text: str) -> float:
    """The value of the longest numeric prefix of text, as C's strtod."""
    import re

    m = re.match(r"\d*\.?\d*(?:[eE][-+]?\d+)?", text)
    head = m.group(0) if m else ""
    if head in ("", "."):
        return 0.0
    if head.endswith("."):
        head += "0"
    return float(head)
