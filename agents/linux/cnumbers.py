"""Numbers read from kernel text as pmdalinux's C reads them (strtoul, sscanf's %u and %lu).

pmdalinux parses /proc and /sys with the C library, and its answers carry the C
library's rules: white space and a sign are skipped, a negative number wraps modulo
2**64 ("-1" is 2**64 - 1), a number too large is 2**64 - 1, reading stops at the first
character that is not a digit.  Families that must give pmdalinux's exact values on odd
input read their numbers here.
"""

from __future__ import annotations

import re

U64 = (1 << 64) - 1
_SIGN = re.compile(rb"[ \t\n\v\f\r]*([+-]?)")
_DIGITS = {10: re.compile(rb"[0-9]+"), 8: re.compile(rb"[0-7]+"), 16: re.compile(rb"[0-9a-fA-F]+")}
_HEX = re.compile(rb"0[xX][0-9a-fA-F]")


def strtoul(text: bytes, base: int = 10) -> int | None:
    """TEXT's number as C's strtoull reads it (64 bits), or None if it has no digits.

    BASE 0 reads 0x... as hex and 0... as octal, as C does.
    """
    sign = _SIGN.match(text)
    assert sign is not None  # (the pattern matches the empty string)
    at = sign.end()
    if base in (0, 16) and _HEX.match(text, at):
        base, at = 16, at + 2
    elif base == 0:
        base = 8 if text[at : at + 1] == b"0" else 10
    digits = _DIGITS[base].match(text, at)
    if digits is None:
        return None
    value = int(digits[0], base)
    if value > U64:
        return U64
    return (-value) & U64 if sign[1] == b"-" else value
