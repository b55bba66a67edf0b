"""glibc's complaints about a POSIX extended regular expression, as regcomp words them:
what the derived-metric parser reports for a bad matchinst() pattern."""

from __future__ import annotations

__all__ = ["ere_error"]

_CLASSES = frozenset(
    ("alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph")
) | {"cntrl", "blank", "alnum"}
_DIGITS = frozenset("0123456789")
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
