"""The small text rules pmlogconf's files are read and written by, as PCP's pmlogconf
applies them: C's idea of blanks, tokens ended by a blank, descriptions folded into
lines of about 65 columns, and sections of a file glued together line by line."""

from __future__ import annotations

#: C's isspace
BLANKS = " \t\n\v\f\r"


def trim(text: str) -> str:
    """TEXT without its leading blanks (a newline is kept: it marks an empty line)."""
    return text.lstrip(" \t\v\f\r")


def chop(text: str) -> str:
    """TEXT without its trailing newlines."""
    return text.rstrip("\n")


def line_of(text: str) -> str:
    """TEXT up to (not including) its first newline."""
    return text.split("\n", 1)[0]


def token_of(text: str) -> str:
    """TEXT's first word (up to the first blank)."""
    for i, c in enumerate(text):
        if c in BLANKS:
            return text[:i]
    return text


def is_token(text: str, token: str) -> bool:
    """Whether TEXT starts with the word TOKEN (followed by a blank or nothing)."""
    return text.startswith(token) and (len(text) == len(token) or text[len(token)] in BLANKS)


def append(text: str | None, more: str, sep: str) -> str:
    """MORE added to TEXT as pmlogconf glues descriptions (SEP " ") and file sections
    (SEP "\\n"): SEP goes between them unless MORE's first line already ends with it."""
    if text is None:
        return more if sep == "\n" else line_of(more)
    ends = "\n" if "\n" in more else ""
    if sep and ends != sep:
        text += sep
    return text + more


def fold(text: str, goal: int, maximum: int) -> list[str]:
    """TEXT cut into lines: each runs past GOAL columns to the next blank, but never
    beyond MAXIMUM; blanks at the start of a line are dropped."""
    lines: list[str] = []
    line = cut = 0
    n = len(text)
    while cut < n:
        if text[line] in BLANKS:
            line += 1
            cut = line
            continue
        cut += 1
        length = cut - line
        if length <= goal:
            continue
        if length < maximum and not (cut < n and text[cut] in BLANKS):
            continue
        lines.append(text[line:cut])
        line = cut
    if line != cut:
        lines.append(text[line:])
    return lines
