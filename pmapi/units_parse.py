"""pmParseUnitsStr as libpcp reads a units string: "N unit^e ... / M unit^e ...".

Each side of the first "/" is a run of numbers (multiplied together, read as strtod(3)
reads them) and base units, each base unit a keyword of the tables below (any case,
ending at a space, a "^" or the side's end) with an optional exponent; each of space,
time and count may be named once a side.  The result's dimensions are the dividend's
less the divisor's; its scales are the one side's where only one side has a dimension,
else bytes, seconds and plain counts with the difference folded into the multiplier,
which also holds the divisor's numbers over the dividend's.  Errors are ValueError with
libpcp's own message ("unrecognized or duplicate base unit", ...).
"""

from __future__ import annotations

import math
import re

from .units import Units

# the keyword tables, in libpcp's order (a longer keyword before its prefix): keyword -> scale
_TIME = (
    ("nanoseconds", 0), ("nanosecond", 0), ("nanosec", 0), ("ns", 0),
    ("microseconds", 1), ("microsecond", 1), ("microsec", 1), ("us", 1),
    ("milliseconds", 2), ("millisecond", 2), ("millisec", 2), ("ms", 2),
    ("seconds", 3), ("second", 3), ("sec", 3), ("s", 3),
    ("minutes", 4), ("minute", 4), ("min", 4),
    ("hours", 5), ("hour", 5), ("hr", 5), ("h", 5),
    ("time-0", 0), *((f"time-{n}", n) for n in range(2, 16)), ("time-1", 1),
)  # fmt: skip
_SPACE_NAMES = ("K", "Kibi", "Kilo"), ("M", "Mebi", "Mega"), ("G", "Gibi", "Giga"), \
    ("T", "Tebi", "Tera"), ("P", "Pebi", "Peta"), ("E", "Exbi", "Exa"), \
    ("Z", "Zebi", "Zetta"), ("Y", "Yobi", "Yotta")  # fmt: skip
_SPACE = (
    ("bytes", 0), ("byte", 0),
    *(
        (word, scale)
        for scale, (short, binary, decimal) in enumerate(_SPACE_NAMES, start=1)
        for word in (f"{short}B", f"{short}iB", f"{short}bytes", f"{short}byte",
                     f"{binary}bytes", f"{binary}byte", f"{decimal}bytes", f"{decimal}byte")
    ),
    ("space-0", 0), *((f"space-{n}", n) for n in range(2, 16)), ("space-1", 1),
)  # fmt: skip
_COUNT = (
    *((f"count x 10^{n}", n) for n in range(-8, 0)),
    *((f"count x 10^{n}", n) for n in range(2, 8)),
    ("count x 10", 1), ("counts", 0), ("count", 0),
)  # fmt: skip
_EXPONENT = (
    *((f"^{n}", n) for n in range(-8, 1)),
    *((f"^{n}", n) for n in range(2, 16)),
    ("^1", 1),
)  # fmt: skip

#: what strtod(3) reads at a "-", "." or digit: a decimal or hexadecimal number, or after
#: a sign, an infinity or NaN
_NUMBER = re.compile(
    r"[-+]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
    r"|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
    re.IGNORECASE,
)
_TIME_SECONDS = (1e-9, 1e-6, 1e-3, 1.0, 60.0, 3600.0)


def _strtod(text: str) -> float | None:
    """The number a strtod(3) reading TEXT's start would give, or None where it reads
    nothing or sets ERANGE (overflow, or underflow to zero)."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    word = match.group(0)
    body = word.lstrip("+-").lower()
    if body.startswith("0x"):
        hexadecimal = body if "p" in body else body + "p0"
        value = float.fromhex(("-" if word.startswith("-") else "") + hexadecimal)
    else:
        value = float(word.split("(")[0])
    if math.isinf(value) and not body.startswith("inf"):
        return None  # (overflow)
    mantissa = body[2:].split("p")[0] if body.startswith("0x") else body.split("e")[0]
    if value == 0 and re.search(r"[1-9a-f]", mantissa):
        return None  # (underflow)
    return value


def _keyword(text: str, pos: int, table) -> tuple[int, int] | None:
    """(scale, position after) of TABLE's first keyword at TEXT[pos:], in any case and
    followed by a space, "^" or the end, as libpcp's streqskip matches."""
    for word, scale in table:
        end = pos + len(word)
        if text[pos:end].lower() == word.lower() and (
            end == len(text) or text[end].isspace() or text[end] == "^"
        ):
            return scale, end
    return None


def _parse_part(text: str) -> tuple[list[int], list[int], float]:
    """One side: ([dimSpace, dimTime, dimCount], [their scales], its numbers' product)."""
    dims, scales, mult = [0, 0, 0], [0, 0, 0], 1.0
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
            continue
        if char in "-." or char.isdigit():
            value = _strtod(text[pos:])
            if value is None:
                raise ValueError("invalid floating point literal")
            pos += _NUMBER.match(text[pos:]).end()  # type: ignore[union-attr]
            mult *= value
            continue
        found = None
        for which, table in ((1, _TIME), (0, _SPACE), (2, _COUNT)):
            if dims[which] == 0:
                hit = _keyword(text, pos, table)
                if hit is not None:
                    found = which, *hit
                    break
        if found is None:
            raise ValueError("unrecognized or duplicate base unit")
        which, scales[which], pos = found
        if pos == len(text) or text[pos].isspace():
            dims[which] = 1
        else:
            exponent = _keyword(text, pos, _EXPONENT)
            if exponent is not None:
                dims[which], pos = exponent
    return dims, scales, mult


def _divide(top: float, bottom: float) -> float:
    """TOP / BOTTOM as C's doubles divide (by zero: an infinity, or NaN for 0/0)."""
    try:
        return top / bottom
    except ZeroDivisionError:
        if top == 0 or math.isnan(top):
            return math.nan
        return math.copysign(math.inf, top) * math.copysign(1.0, bottom)


def parse_units_mult(text: str) -> tuple[Units, float]:
    """libpcp's pmParseUnitsStr: TEXT's units and multiplier (ValueError: libpcp's message)."""
    top, slash, bottom = text.partition("/")
    a_dims, a_scales, a_mult = _parse_part(top)
    b_dims, b_scales, b_mult = _parse_part(bottom) if slash else ([0, 0, 0], [0, 0, 0], 1.0)
    dims = [a - b for a, b in zip(a_dims, b_dims, strict=True)]
    for name, dim in zip(("space", "time", "count"), dims, strict=True):
        if not -8 <= dim <= 7:
            raise ValueError(f"{name} dimension out of bounds")
    mult = _divide(b_mult, a_mult)  # (NB: the divisor's numbers over the dividend's)
    out = [0, 0, 0]
    bases = (0, 3, 0)  # bytes, seconds, a plain count
    factors = (lambda s: 1024.0**s, lambda s: _TIME_SECONDS[s], lambda s: 10.0**s)
    for i in (0, 2, 1):  # (libpcp's order: space, count, time)
        if a_dims[i] == 0 and b_dims[i] != 0:
            out[i] = b_scales[i]
        elif b_dims[i] == 0 and a_dims[i] != 0:
            out[i] = a_scales[i]
        else:
            if i == 1 and max(a_scales[1], b_scales[1]) > 5:
                raise ValueError("time scale out of range")  # (libpcp asserts)
            mult *= factors[i](a_scales[i]) ** -a_dims[i]
            mult *= factors[i](b_scales[i]) ** b_dims[i]
            out[i] = bases[i] if dims[i] else 0
    return Units(dims[0], dims[1], dims[2], out[0], out[1], out[2]), mult
