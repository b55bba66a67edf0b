"""glibc's re_comp() regular expressions as Python re patterns: hotproc's `~` and `!~`.

pmdaproc (PCP 6.0.3) compiles a hotproc predicate's /pattern/ with re_comp(), whose
syntax bits are 0, i.e. GNU Emacs syntax: \\( \\) group, \\| alternation, * + ?
repeat, no {m,n}, no [:class:], ( ) | { } are ordinary characters, \\w \\W \\s \\S \\b
\\B \\< \\> \\` \\' work, and a match is a search (unanchored).  translate_pattern()
gives the equivalent Python pattern; compile_pattern() compiles it with the flags
that make it match as re_exec() does, or raises PatternError where re_comp() fails.
"""

from __future__ import annotations

import re

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


def compile_pattern(source: str) -> re.Pattern[str]:
    """SOURCE compiled as pmdaproc's re_comp() would match it."""
    try:
        return re.compile(translate_pattern(source), re.ASCII | re.MULTILINE)
    except re.error as exc:
        raise PatternError(f"Invalid regular expression: {exc}") from None
