"""The rules language's tokens, scanned as PCP's flex scanner scans them.

The scanner is a table of (start conditions, pattern, token) rows tried as flex
tries them: the longest match wins, the earlier row on a tie.  Start conditions
are inclusive (a row without any applies in every state), keywords are
case-insensitive, and a few tokens switch the state (after "type" only type names
are keywords, after "units" the commas count off the scale fields).  The line
number moves only on a bare newline, as PCP's does (a quoted text spanning lines
does not move it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SpecError

# the scanner's states (flex start conditions), and its clause kinds (mystate)
INITIAL, GLOB, HOST, INDOM, METRIC, TEXT, LABEL = [
    "INITIAL",
    "glob",
    "host",
    "indom",
    "metric",
    "text",
    "label",
]
TYPE, IFTYPE, SEM, UNITS, SPACE, TIME, COUNT, OUTPUT = [
    "type",
    "iftype",
    "sem",
    "units",
    "space",
    "time",
    "count",
    "output",
]

#: PCP's types, semantics and scales by their keyword (the token's value)
TYPES = {"32": 0, "U32": 1, "64": 2, "U64": 3, "FLOAT": 4, "DOUBLE": 5}
SEMS = {"COUNTER": 1, "INSTANT": 3, "DISCRETE": 4}
SPACES = {"BYTE": 0, "KBYTE": 1, "MBYTE": 2, "GBYTE": 3, "TBYTE": 4, "PBYTE": 5, "EBYTE": 6}
TIMES = {"NSEC": 0, "USEC": 1, "MSEC": 2, "SEC": 3, "MIN": 4, "HOUR": 5}
OUTPUTS = {"FIRST": 1, "LAST": 2, "MIN": 4, "MAX": 5, "SUM": 6, "AVG": 7}


@dataclass(frozen=True)
class Token:
    """One token: its kind (PCP's TOK_ name without the prefix), text and value."""

    kind: str
    text: str
    value: object = None


def _kw(states: str | None, word: str, kind: str, to: str | None = None) -> tuple:
    return (states, re.escape(word), kind, to)


_STATES_TEXT_LIKE = "indom metric text label"

#: (states or None for all, pattern, kind, state to go to) in flex's rule order
_RULES: list[tuple] = [
    _kw("INITIAL", "global", "GLOBAL"),
    _kw("INITIAL", "metric", "METRIC"),
    _kw("INITIAL", "indom", "INDOM"),
    _kw("INITIAL", "text", "TEXT", TEXT),
    _kw("INITIAL", "label", "LABEL", LABEL),
    _kw("glob", "hostname", "HOSTNAME", HOST),
    _kw("glob", "time", "TIME"),
    _kw("glob", "tz", "TIMEZONE"),
    _kw("glob", "timezone", "TIMEZONE"),
    _kw("glob", "zoneinfo", "ZONEINFO"),
    _kw("glob", "features", "FEATURES"),
    _kw("glob", "bits", "BITS"),
    ("host", r"[A-Za-z0-9][A-Za-z0-9.-]*", "HNAME", GLOB),
    _kw(_STATES_TEXT_LIKE, "delete", "DELETE"),
    _kw("indom", "indom", "INDOM"),
    _kw("indom", "duplicate", "DUPLICATE"),
    _kw("indom", "iname", "INAME"),
    _kw("indom", "inst", "INST"),
    _kw("metric", "name", "NAME"),
    _kw("metric", "pmid", "PMID"),
    _kw("metric", "type", "TYPE", TYPE),
    _kw("metric", "indom", "INDOM"),
    _kw("metric", "NULL", "NULL_INT"),
    _kw("metric", "output", "OUTPUT", OUTPUT),
    _kw("metric", "sem", "SEM", SEM),
    _kw("metric", "units", "UNITS", UNITS),
    _kw("text", "metric", "METRIC"),
    _kw("text", "indom", "INDOM"),
    _kw("text", "oneline", "ONELINE"),
    _kw("text", "help", "HELP"),
    _kw("text", "text", "TEXT"),
    ("text", r"\*", "TEXT_STAR", None),
    _kw("label", "context", "CONTEXT"),
    _kw("label", "domain", "DOMAIN"),
    _kw("label", "cluster", "CLUSTER"),
    _kw("label", "item", "ITEM"),
    _kw("label", "indom", "INDOM"),
    _kw("label", "instances", "INSTANCES"),
    _kw("label", "instance", "INSTANCE"),
    _kw("label", "new", "NEW"),
    _kw("label", "label", "LABEL"),
    _kw("label", "value", "VALUE"),
    _kw("label", "true", "JSON_TRUE"),
    _kw("label", "false", "JSON_FALSE"),
    _kw("label", "null", "JSON_NULL"),
    ("label", r"\*", "LABEL_STAR", None),
    *(_kw("type", w, "TYPE_NAME", METRIC) for w in TYPES),
    _kw("type", "if", "IF", IFTYPE),
    *(_kw("iftype", w, "TYPE_NAME", TYPE) for w in TYPES),
    *(_kw("output", w, "OUTPUT_TYPE", METRIC) for w in OUTPUTS),
    _kw("output", "inst", "INST", METRIC),
    _kw("output", "iname", "INAME", METRIC),
    *(_kw("sem", w, "SEM_NAME", METRIC) for w in SEMS),
    ("units", ",", "UNITS_COMMA", None),
    _kw("metric", "rescale", "RESCALE"),
    *(_kw("space", w, "SPACE_NAME", UNITS) for w in SPACES),
    ("space", "0", "SPACE_NAME", UNITS),
    *(_kw("time", w, "TIME_NAME", UNITS) for w in TIMES),
    ("time", "0", "TIME_NAME", UNITS),
    _kw("count", "ONE", "COUNT_NAME", METRIC),
    ("count", r"[0-9]+", "COUNT_NAME", METRIC),
    (None, r'"[^"\n][^"\n]*"', "STRING", None),
    (None, r'"(?:\\"|[^"])+"', "TEXT_STRING", None),
    (None, r"[0-9]+", "NUMBER", None),
    (None, r"[0-9]+\.[0-9]*", "FLOAT", None),
    (None, r"[0-9]+\.\*", "INDOM_STAR", None),
    (None, r"[0-9]+\.[0-9]+\.[0-9]+", "PMID_INT", None),
    (None, r"[0-9]+\.[0-9]+\.\*", "PMID_STAR", None),
    (None, r"[0-9]+\.\*\.\*", "PMID_STAR", None),
    (None, r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", "JSON_NUMBER", None),
    (None, r'"(?:\\["\\/bfnrt]|\\u[A-Fa-f0-9]{4}|[^"\\\n])*"', "JSON_STRING", None),
    (None, r"[A-Za-z](?:[A-Za-z0-9_.]|[=-][A-Za-z0-9_.])*", "GNAME", None),
    (None, r"\#.*", "COMMENT", None),
    (None, r"[ \t\r]+", "SPACE", None),
    (None, "->", "ASSIGN", None),
    (None, r"\{", "LBRACE", None),
    (None, r"\}", "RBRACE", None),
    (None, r"\+", "PLUS", None),
    (None, "-", "MINUS", None),
    (None, ":", "COLON", None),
    (None, ",", "COMMA", None),
    (None, r"\(", "LPAREN", None),
    (None, r"\)", "RPAREN", None),
    (None, r"\n", "NEWLINE", None),
]

_COMPILED = [
    (frozenset(states.split()) if states else None, re.compile(pattern, re.IGNORECASE), kind, to)
    for states, pattern, kind, to in _RULES
]
_INITIAL_ONLY = frozenset((INITIAL,))
#: the clause keyword's state, entered at its "{" (PCP's mystate)
_BRACE_STATE = {"GLOBAL": GLOB, "INDOM": INDOM, "METRIC": METRIC}
#: the scale field each comma of a units clause leads to
_UNITS_COMMAS = {3: SPACE, 4: TIME, 5: COUNT}


class Lexer:
    """Tokens from one rules file's text, read on demand (the parser's lookahead
    decides when, and so which line a message names)."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0
        self.lineno = 1
        self.state = INITIAL
        self.clause: str | None = None  # (PCP's mystate)
        self._commas = 0
        self._peeked: Token | None = None

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._scan()
        return self._peeked

    def next(self) -> Token:
        tok = self.peek()
        self._peeked = None
        return tok

    def _scan(self) -> Token:
        while True:
            if self.pos >= len(self.text):
                return Token("EOF", "")
            best = None
            for states, regex, kind, to in _COMPILED:
                if states is not None and self.state not in states:
                    continue
                m = regex.match(self.text, self.pos)
                if m and m.end() > self.pos and (best is None or m.end() > best[0].end()):
                    best = (m, kind, to, states == _INITIAL_ONLY)
            if best is None:
                char = self.text[self.pos]
                raise SpecError(self.path, self.lineno, f"Unexpected character '{char}'")
            m, kind, to, _ = best
            initial = best[3]
            self.pos = m.end()
            text = m.group()
            if kind in ("COMMENT", "SPACE"):
                continue
            if kind == "NEWLINE":
                self.lineno += 1
                continue
            return self._token(kind, text, to, initial)

    def _token(self, kind: str, text: str, to: str | None, initial: bool) -> Token:
        value: object = None
        if initial:  # (a clause keyword)
            self.clause = kind
        if kind == "LBRACE":
            state = _BRACE_STATE.get(self.clause or "")
            if state is not None:
                self.state = state
        elif kind == "RBRACE":
            self.clause = None
            self.state = INITIAL
        elif kind == "UNITS":
            self._commas = 0
        elif kind == "UNITS_COMMA":
            self._commas += 1
            to = _UNITS_COMMAS.get(self._commas)
            kind = "COMMA"
        if to is not None:
            self.state = to
        upper = text.upper()
        if kind == "TYPE_NAME":
            value = TYPES[upper]
        elif kind == "SEM_NAME":
            value = SEMS[upper]
        elif kind == "SPACE_NAME":
            value = SPACES.get(upper, 0)
        elif kind == "TIME_NAME":
            value = TIMES.get(upper, 0)
        elif kind == "COUNT_NAME":
            value = 0 if upper == "ONE" else _atoi(text)
        elif kind == "OUTPUT_TYPE":
            value = OUTPUTS[upper]
        elif kind == "STRING":
            value = text[1:-1]
        elif kind == "TEXT_STRING":
            value = re.sub(r"\\(.)", r"\1", text[1:-1], flags=re.DOTALL)
        return Token(kind, text, value)


def _atoi(text: str) -> int:
    """C's atoi on digits: the low 32 bits, signed."""
    n = int(text) & 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n
