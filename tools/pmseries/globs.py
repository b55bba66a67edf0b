"""-g PATTERN: fnmatch(3) without flags, as a regular expression (pmseries matches the
names it lists with fnmatch)."""

from __future__ import annotations

import re


def glob_regex(pattern: str) -> re.Pattern[str]:
    """fnmatch(3) with no flags as a regular expression: `*`, `?`, brackets (`!` or `^`
    negates, `[:class:]`), backslash quoting the next character."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "\\" and i < n:
            out.append(re.escape(pattern[i]))
            i += 1
        elif c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            bracket, i = _bracket(pattern, i)
            out.append(bracket)
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


_CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
}  # fmt: skip


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The bracket expression after `[` at I: its regex and where it ends; a `[` that
    is never closed is itself."""
    start, n = i, len(pattern)
    negate = i < n and pattern[i] in "!^"
    if negate:
        i += 1
    parts: list[str] = []
    first = True
    while i < n and (pattern[i] != "]" or first):
        first = False
        c = pattern[i]
        if c == "[" and pattern.startswith(":", i + 1):
            end = pattern.find(":]", i + 2)
            if end > 0 and pattern[i + 2 : end] in _CLASSES:
                parts.append(_CLASSES[pattern[i + 2 : end]])
                i = end + 2
                continue
        if c == "\\" and i + 1 < n:
            i += 1
            c = pattern[i]
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            parts.append(f"{re.escape(c)}-{re.escape(pattern[i + 2])}")
            i += 3
            continue
        parts.append(re.escape(c))
        i += 1
    if i >= n:
        return re.escape("["), start
    return "[" + ("^" if negate else "") + "".join(parts) + "]", i + 1
