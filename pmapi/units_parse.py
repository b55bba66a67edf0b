"""pmParseUnitsStr as libpcp reads units text ("millisec / s", "Kbyte", "count x 10^3"):
the units and the multiplier of any numbers in it, or ValueError with libpcp's reason.
pmseries reads rescale()'s units and the stored descriptors' units with it, and PCP's
pmParseUnitsStr (pcp.pmapi), pmrep and pmstat the units of their metric specs."""

from __future__ import annotations

from .cnumbers import fdiv, strtod
from .units import Units

__all__ = ["parse_units"]

_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"

#: pmParseUnitsStr's words, longest first where one is a prefix of another, with scales.
_TIME_UNITS = (
    ("nanoseconds", 0), ("nanosecond", 0), ("nanosec", 0), ("ns", 0),
    ("microseconds", 1), ("microsecond", 1), ("microsec", 1), ("us", 1),
    ("milliseconds", 2), ("millisecond", 2), ("millisec", 2), ("ms", 2),
    ("seconds", 3), ("second", 3), ("sec", 3), ("s", 3),
    ("minutes", 4), ("minute", 4), ("min", 4),
    ("hours", 5), ("hour", 5), ("hr", 5), ("h", 5),
    *((f"time-{n}", n) for n in (0, *range(2, 16), 1)),
)  # fmt: skip
#: pmParseUnitsStr's space words by scale: a prefix's abbreviations, binary and old names.
_SPACE_NAMES = (("K", "Kibi", "Kilo"), ("M", "Mebi", "Mega"), ("G", "Gibi", "Giga"),
                ("T", "Tebi", "Tera"), ("P", "Pebi", "Peta"), ("E", "Exbi", "Exa"),
                ("Z", "Zebi", "Zetta"), ("Y", "Yobi", "Yotta"))  # fmt: skip
_SPACE_UNITS = (
    ("bytes", 0), ("byte", 0),
    *((word, scale)
      for scale, (p, binary, old) in enumerate(_SPACE_NAMES, start=1)
      for word in (f"{p}B", f"{p}iB", f"{p}bytes", f"{p}byte",
                   f"{binary}bytes", f"{binary}byte", f"{old}bytes", f"{old}byte")),
    *((f"space-{n}", n) for n in (0, *range(2, 16), 1)),
)  # fmt: skip
_COUNT_UNITS = (
    *((f"count x 10^{n}", n) for n in (-8, -7, -6, -5, -4, -3, -2, -1, 2, 3, 4, 5, 6, 7)),
    ("count x 10", 1), ("counts", 0), ("count", 0),
)  # fmt: skip
_EXPONENTS = tuple((f"^{n}", n) for n in (*range(-8, 1), *range(2, 16), 1))
_TIME_SCALES = (1e-9, 1e-6, 1e-3, 1.0, 60.0, 3600.0)


def _keyword(
    text: str, i: int, end: int, words: tuple[tuple[str, int], ...]
) -> tuple[int, int] | None:
    """The first of WORDS at I (any case) followed by a space, "^" or END: (scale, new I)."""
    for word, scale in words:
        j = i + len(word)
        if j <= end and text[i:j].lower() == word.lower() and (j == end or text[j] in _SPACE + "^"):
            return scale, j
    return None


def _units_part(text: str, i: int, end: int) -> tuple[list[int], list[int], float]:
    """__pmParseUnitsStrPart: dimensions and scales (space, time, count) and a multiplier."""
    dims, scales, mult = [0, 0, 0], [0, 0, 0], 1.0
    while i != end:
        if text[i] in _SPACE:
            i += 1
            continue
        if text[i] in "-." or text[i] in _DIGITS:
            number = strtod(text, i)  # (the text goes on past END, as C's string does)
            if number.erange or number.end == i or number.end > end:
                raise ValueError("invalid floating point literal")
            mult *= number.value
            i = number.end
            continue
        found = None
        for dim, words in ((1, _TIME_UNITS), (0, _SPACE_UNITS), (2, _COUNT_UNITS)):
            if dims[dim] == 0 and (hit := _keyword(text, i, end, words)) is not None:
                found = dim, hit
                break
        if found is None:
            raise ValueError("unrecognized or duplicate base unit")
        dim, (scales[dim], i) = found
        if i == end or text[i] in _SPACE:
            dims[dim] = 1
        elif (power := _keyword(text, i, end, _EXPONENTS)) is not None:
            dims[dim], i = power
    return dims, scales, mult


def parse_units(text: str) -> tuple[Units, float]:
    """pmParseUnitsStr: the units in TEXT ("millisec / s", "Kbyte", "count x 10^3") and
    the multiplier of its numbers; ValueError with libpcp's reason when they are not units.

    ("time-7 / sec" makes libpcp abort on an assertion; here it is a ValueError.)
    """
    slash = text.find("/")
    if slash < 0:
        top, bottom = _units_part(text, 0, len(text)), ([0, 0, 0], [0, 0, 0], 1.0)
    else:
        top, bottom = _units_part(text, 0, slash), _units_part(text, slash + 1, len(text))
    (tdims, tscales, tmult), (bdims, bscales, bmult) = top, bottom
    dims = [t - b for t, b in zip(tdims, bdims, strict=True)]
    for dim, name in enumerate(("space", "time", "count")):
        if not -8 <= dims[dim] <= 7:
            raise ValueError(f"{name} dimension out of bounds")
    mult = fdiv(bmult, tmult)
    scales = [0, 0, 0]
    for dim, base, one in ((0, 1024.0, 0), (2, 10.0, 0), (1, None, 3)):
        if tdims[dim] == 0 and bdims[dim] != 0:
            scales[dim] = bscales[dim]
        elif bdims[dim] == 0 and tdims[dim] != 0:
            scales[dim] = tscales[dim]
        else:
            if base is None:
                if tscales[dim] > 5 or bscales[dim] > 5:
                    raise ValueError("time scale out of range")
                mult *= _TIME_SCALES[tscales[dim]] ** -tdims[dim]
                mult *= _TIME_SCALES[bscales[dim]] ** bdims[dim]
            else:
                mult *= (base ** tscales[dim]) ** -tdims[dim]
                mult *= (base ** bscales[dim]) ** bdims[dim]
            scales[dim] = one if dims[dim] else 0
    return Units(dims[0], dims[1], dims[2], scales[0], scales[1], scales[2]), mult
