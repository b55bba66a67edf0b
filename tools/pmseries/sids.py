"""Series ids as pmseries checks them: 40 lower-case hex digits name a key, and -w wants
hex pairs (it complains about the first that is not one)."""

from __future__ import annotations


def issid(text: str) -> bool:
    """Whether TEXT is a series id as PCP recognises one: 40 lower-case hex digits."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def sid_error(text: str) -> str | None:
    """PCP's complaint about a series id whose first 40 characters are not hex pairs."""
    for off in range(0, 40, 2):
        pair = text[off : off + 2]
        if len(pair) != 2 or not all(c in "0123456789abcdefABCDEF" for c in pair):
            return f"Invalid SID {text} near offset {off}"
    return None
