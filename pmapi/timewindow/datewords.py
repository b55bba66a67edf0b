"""getdate's words and lexer: what "yesterday", "est", "fortnights" or "third" mean to the
free-form date grammar (getdate.py), and the tokens its yylex makes of a text."""

from __future__ import annotations

from .scanning import is_alpha, is_digit, skip_space

_MONTH_DAY = (
    ("january", "MONTH", 1), ("february", "MONTH", 2), ("march", "MONTH", 3),
    ("april", "MONTH", 4), ("may", "MONTH", 5), ("june", "MONTH", 6), ("july", "MONTH", 7),
    ("august", "MONTH", 8), ("september", "MONTH", 9), ("sept", "MONTH", 9),
    ("october", "MONTH", 10), ("november", "MONTH", 11), ("december", "MONTH", 12),
    ("sunday", "DAY", 0), ("monday", "DAY", 1), ("tuesday", "DAY", 2), ("tues", "DAY", 2),
    ("wednesday", "DAY", 3), ("wednes", "DAY", 3), ("thursday", "DAY", 4),
    ("thur", "DAY", 4), ("thurs", "DAY", 4), ("friday", "DAY", 5), ("saturday", "DAY", 6),
)  # fmt: skip
_UNIT_WORDS = {
    "year": ("MONUNIT", 12), "month": ("MONUNIT", 1), "fortnight": ("MINUNIT", 14 * 1440),
    "week": ("MINUNIT", 7 * 1440), "day": ("MINUNIT", 1440), "hour": ("MINUNIT", 60),
    "minute": ("MINUNIT", 1), "min": ("MINUNIT", 1), "second": ("SECUNIT", 1),
    "sec": ("SECUNIT", 1),
}  # fmt: skip
_OTHER_WORDS = {
    "tomorrow": ("DAUNIT", 1440), "yesterday": ("DAUNIT", -1440), "today": ("DAUNIT", 0),
    "now": ("MINUNIT", 0), "last": ("U", -1), "this": ("MINUNIT", 0), "next": ("U", 2),
    "first": ("U", 1), "third": ("U", 3), "fourth": ("U", 4), "fifth": ("U", 5),
    "sixth": ("U", 6), "seventh": ("U", 7), "eighth": ("U", 8), "ninth": ("U", 9),
    "tenth": ("U", 10), "eleventh": ("U", 11), "twelfth": ("U", 12), "ago": ("AGO", 1),
}  # fmt: skip
# zone words: minutes west of UTC, and whether the zone is a daylight one
_ZONE_WORDS = {
    "gmt": 0, "ut": 0, "utc": 0, "wet": 0, "bst": (0, True), "wat": 60, "at": 120,
    "ast": 240, "adt": (240, True), "est": 300, "edt": (300, True), "cst": 360,
    "cdt": (360, True), "mst": 420, "mdt": (420, True), "pst": 480, "pdt": (480, True),
    "yst": 540, "ydt": (540, True), "hst": 600, "hdt": (600, True), "cat": 600, "ahst": 600,
    "nt": 660, "idlw": 720, "cet": -60, "met": -60, "mewt": -60, "mest": (-60, True),
    "swt": -60, "sst": (-60, True), "fwt": -60, "fst": (-60, True), "eet": -120, "bt": -180,
    "zp4": -240, "zp5": -300, "zp6": -360, "wast": -420, "wadt": (-420, True), "cct": -480,
    "jst": -540, "east": -600, "eadt": (-600, True), "gst": -600, "nzt": -720,
    "nzst": -720, "nzdt": (-720, True), "idle": -720,
}  # fmt: skip
# the military letters: a..m (no j) are 1..12 hours west, n..y 1..12 east, z is UTC
_MILITARY = {c: 60 * (k + 1) for k, c in enumerate("abcdefghiklm")}
_MILITARY |= {c: -60 * (k + 1) for k, c in enumerate("nopqrstuvwxy")} | {"z": 0}

#: A token of the date grammar: its kind (a terminal) and its value.
Token = tuple[str, int]


def _zone_token(word: str) -> Token | None:
    west = _ZONE_WORDS.get(word)
    if west is None:
        return None
    return ("DAYZONE", west[0]) if isinstance(west, tuple) else ("ZONE", west)


def _lookup_word(word: str) -> Token:
    """LookupWord: what a run of letters (and dots) means to the date grammar."""
    word = word.lower()
    if word in ("am", "a.m."):
        return ("MER", 0)
    if word in ("pm", "p.m."):
        return ("MER", 1)
    if len(word) == 4 and word[3] == ".":
        word = word[:3]
    for name, kind, value in _MONTH_DAY:
        if (name[:3] == word) if len(word) == 3 else name == word:
            return (kind, value)
    found = _zone_token(word)
    if found:
        return found
    if word == "dst":
        return ("DST", 0)
    if word in _UNIT_WORDS:
        return _UNIT_WORDS[word]
    if word.endswith("s") and word[:-1] in _UNIT_WORDS:
        return _UNIT_WORDS[word[:-1]]
    if word in _OTHER_WORDS:
        return _OTHER_WORDS[word]
    if len(word) == 1 and is_alpha(word) and word in _MILITARY:
        return ("ZONE", _MILITARY[word])
    if "." in word:
        found = _zone_token(word.replace(".", ""))
        if found:
            return found
    return ("ID", 0)


def date_tokens(s: str) -> list[Token]:
    """getdate's yylex: numbers (a sign makes them signed), words, (comments) skipped."""
    out: list[Token] = []
    i = 0
    while True:
        i = skip_space(s, i)
        c = s[i] if i < len(s) else ""
        if is_digit(c) or c in ("-", "+"):
            sign = 0
            if c in "-+":
                sign = -1 if c == "-" else 1
                i += 1
                if i >= len(s) or not is_digit(s[i]):
                    continue
            j = i
            while j < len(s) and is_digit(s[j]):
                j += 1
            value = int(s[i:j])
            out.append(("S", sign * value) if sign else ("U", value))
            i = j
        elif is_alpha(c):
            j = i
            while j < len(s) and (is_alpha(s[j]) or s[j] == "."):
                j += 1
            out.append(_lookup_word(s[i:j][:19]))
            i = j
        elif c == "(":
            depth = 0
            while True:
                c = s[i] if i < len(s) else ""
                i += 1
                if not c:
                    out.append(("END", 0))
                    return out
                depth += (c == "(") - (c == ")")
                if depth <= 0:
                    break
        elif not c:
            out.append(("END", 0))
            return out
        else:
            out.append((c, 0))
            i += 1
