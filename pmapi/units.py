"""pmUnits: the dimension and scale of a metric's values, packed as PCP packs them.

The 32-bit word holds, most significant first: dimSpace:4, dimTime:4, dimCount:4
(signed), scaleSpace:4, scaleTime:4 (unsigned), scaleCount:4 (signed), pad:8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from .cnumbers import wrap


class Space(IntEnum):
    """pmUnits.scaleSpace: powers of 1024 bytes."""

    PM_SPACE_BYTE = 0
    PM_SPACE_KBYTE = 1
    PM_SPACE_MBYTE = 2
    PM_SPACE_GBYTE = 3
    PM_SPACE_TBYTE = 4
    PM_SPACE_PBYTE = 5
    PM_SPACE_EBYTE = 6
    PM_SPACE_ZBYTE = 7
    PM_SPACE_YBYTE = 8


class Time(IntEnum):
    """pmUnits.scaleTime."""

    PM_TIME_NSEC = 0
    PM_TIME_USEC = 1
    PM_TIME_MSEC = 2
    PM_TIME_SEC = 3
    PM_TIME_MIN = 4
    PM_TIME_HOUR = 5


# the members under their PCP names, as module constants (`from ... import PM_TYPE_U32`)
PM_SPACE_BYTE = Space.PM_SPACE_BYTE
PM_SPACE_KBYTE = Space.PM_SPACE_KBYTE
PM_SPACE_MBYTE = Space.PM_SPACE_MBYTE
PM_SPACE_GBYTE = Space.PM_SPACE_GBYTE
PM_SPACE_TBYTE = Space.PM_SPACE_TBYTE
PM_SPACE_PBYTE = Space.PM_SPACE_PBYTE
PM_SPACE_EBYTE = Space.PM_SPACE_EBYTE
PM_SPACE_ZBYTE = Space.PM_SPACE_ZBYTE
PM_SPACE_YBYTE = Space.PM_SPACE_YBYTE
PM_TIME_NSEC = Time.PM_TIME_NSEC
PM_TIME_USEC = Time.PM_TIME_USEC
PM_TIME_MSEC = Time.PM_TIME_MSEC
PM_TIME_SEC = Time.PM_TIME_SEC
PM_TIME_MIN = Time.PM_TIME_MIN
PM_TIME_HOUR = Time.PM_TIME_HOUR

#: pmUnits.scaleCount is a power of ten; this is 10^0.
PM_COUNT_ONE = 0

_SPACE_WORDS = ("byte", "Kbyte", "Mbyte", "Gbyte", "Tbyte", "Pbyte", "Ebyte", "Zbyte", "Ybyte")
_TIME_WORDS = ("nanosec", "microsec", "millisec", "sec", "min", "hour")
#: Time words Units.parse accepts: pmUnitsStr's and the usual short forms.
_TIME_NAMES = {w: i for i, w in enumerate(_TIME_WORDS)} | {"nsec": 0, "usec": 1, "msec": 2}


@dataclass(frozen=True, slots=True)
class Units:
    """pmUnits with PCP's field names; Units() is dimensionless ("none")."""

    dimSpace: int = 0
    dimTime: int = 0
    dimCount: int = 0
    scaleSpace: int = 0
    scaleTime: int = 0
    scaleCount: int = 0
    pad: int = 0  # carried unchanged so descriptors round-trip bit for bit

    def __post_init__(self) -> None:
        for name in ("dimSpace", "dimTime", "dimCount", "scaleCount"):
            if not -8 <= getattr(self, name) <= 7:
                raise ValueError(f"pmUnits.{name} {getattr(self, name)} out of range -8..7")
        for name in ("scaleSpace", "scaleTime"):
            if not 0 <= getattr(self, name) <= 15:
                raise ValueError(f"pmUnits.{name} {getattr(self, name)} out of range 0..15")
        if not 0 <= self.pad <= 0xFF:
            raise ValueError(f"pmUnits.pad {self.pad} out of range 0..255")

    def pack(self) -> int:
        """The unsigned 32-bit word PCP sends on the wire and writes to archives."""
        return (
            (self.dimSpace & 0xF) << 28
            | (self.dimTime & 0xF) << 24
            | (self.dimCount & 0xF) << 20
            | self.scaleSpace << 16
            | self.scaleTime << 12
            | (self.scaleCount & 0xF) << 8
            | self.pad
        )

    @classmethod
    def unpack(cls, word: int) -> Units:
        """The Units packed in WORD (any 32-bit pattern is valid)."""
        return cls(
            wrap(word >> 28, 4),  # (the signed 4-bit fields, as C reads them)
            wrap(word >> 24, 4),
            wrap(word >> 20, 4),
            word >> 16 & 0xF,
            word >> 12 & 0xF,
            wrap(word >> 8, 4),
            word & 0xFF,
        )

    def __str__(self) -> str:
        """libpcp's pmUnitsStr: "Kbyte / sec", "count x 10^6", "" when dimensionless."""
        return pmUnitsStr(self)

    def text(self) -> str:
        """As pminfo -d prints units: like str(), but "none" when dimensionless."""
        return pmUnitsStr(self) or "none"

    @classmethod
    def parse(cls, text: str) -> Units:
        """Units from the words pmUnitsStr prints ("Kbyte / sec", "count x 10^6",
        "millisec") or their short forms ("msec", "usec", "nsec"); "" or "none" is
        dimensionless.  ValueError names what is not understood."""
        dims = [0, 0, 0]
        scales = [0, 0, 0]
        words = text.replace("/", " / ").replace(" x 10", " x10").split()
        sign = 1
        for word in words:
            if word == "/":
                sign = -1
                continue
            if word == "none" and len(words) == 1:
                break
            base, _, power = word.partition("^")
            if base == "x10":  # a scale on counts: "count x 10^6"
                scales[2] = int(power or "1")
                continue
            try:
                exponent = sign * int(power or "1")
            except ValueError:
                raise ValueError(f"bad power in units {text!r}: {word!r}") from None
            if base in _SPACE_WORDS:
                dim, scale = 0, _SPACE_WORDS.index(base)
            elif base in _TIME_NAMES:
                dim, scale = 1, _TIME_NAMES[base]
            elif base == "count":
                dim, scale = 2, scales[2]
            else:
                raise ValueError(f"unknown unit {base!r} in {text!r}")
            dims[dim] += exponent
            scales[dim] = scale
        return cls(*dims, *scales)


def pmUnitsStr(units: Units) -> str:
    """Render units as libpcp's pmUnitsStr does (empty string for no dimension)."""
    space = time = count = ""
    if units.dimSpace:
        s = units.scaleSpace
        space = _SPACE_WORDS[s] if s < len(_SPACE_WORDS) else f"space-{s}"
    if units.dimTime:
        t = units.scaleTime
        time = _TIME_WORDS[t] if t < len(_TIME_WORDS) else f"time-{t}"
    if units.dimCount:
        c = units.scaleCount
        count = "count" if c == 0 else "count x 10" if c == 1 else f"count x 10^{c}"

    def term(word: str, power: int) -> str:
        return word if power == 1 else f"{word}^{power}"

    dims = ((space, units.dimSpace), (time, units.dimTime), (count, units.dimCount))
    upper = [term(w, p) for w, p in dims if p > 0]
    lower = [term(w, -p) for w, p in dims if p < 0]
    parts = upper + (["/", *lower] if lower else [])
    if parts:
        return " ".join(parts)
    if units.scaleCount == 1:
        return "x 10"
    if units.scaleCount != 0:
        return f"x 10^{units.scaleCount}"
    return ""


#: pmParseUnitsStr's words (lower case, singular) for each scale of space and time.
_SPACE_ALIASES = {
    w: i
    for i, words in enumerate(
        (
            ("byte", "b"),
            ("kbyte", "kb", "kilobyte", "kib"),
            ("mbyte", "mb", "megabyte", "mib"),
            ("gbyte", "gb", "gigabyte", "gib"),
            ("tbyte", "tb", "terabyte", "tib"),
            ("pbyte", "pb", "petabyte", "pib"),
            ("ebyte", "eb", "exabyte", "eib"),
            ("zbyte", "zb", "zettabyte"),
            ("ybyte", "yb", "yottabyte"),
        )
    )
    for w in words
}
_TIME_ALIASES = {
    w: i
    for i, words in enumerate(
        (
            ("nanosec", "ns", "nanosecond"),  # (not "nsec", "usec", "msec": libpcp's
            ("microsec", "us", "microsecond"),  # pmParseUnitsStr refuses those)
            ("millisec", "ms", "millisecond"),
            ("sec", "s", "second"),
            ("min", "minute"),
            ("hour", "hr", "h"),
        )
    )
    for w in words
}
_UNIT_TOKEN = re.compile(r"\s*(?:(/)|(\*)|(\^\s*-?\d+)|x\s*10\s*\^\s*(-?\d+)|([A-Za-z]+)|(\S))")


def parse_units_str(text: str) -> Units:
    """pmParseUnitsStr: units from text such as "Kbyte / sec", "millisec / count",
    "count x 10^6" or "Mbytes/hour", in any case, plurals allowed; "" or "none" is
    dimensionless.  ValueError says what is not understood."""
    dims = [0, 0, 0]
    scales = [0, 0, 0]
    seen = [False, False, False]
    sign = 1
    last: int | None = None
    pos = 0
    text = text.strip().strip('"')
    if text.lower() in ("", "none"):
        return Units()
    while pos < len(text):
        match = _UNIT_TOKEN.match(text, pos)
        if match is None or match.group(6) is not None:
            raise ValueError(f"unexpected {text[pos:].strip()[:1]!r} in units {text!r}")
        pos = match.end()
        slash, _star, power, count_scale, word = match.groups()[:5]
        if slash:
            sign, last = -1, None
        elif power:
            if last is None:
                raise ValueError(f"power without a unit in {text!r}")
            dims[last] += sign * (int(power[1:]) - 1)
        elif count_scale is not None:
            scales[2] = int(count_scale)
        elif word:
            lower = word.lower()
            for candidate in (lower, lower[:-1] if lower.endswith("s") else lower):
                if candidate in _SPACE_ALIASES:
                    last, scale = 0, _SPACE_ALIASES[candidate]
                    break
                if candidate in _TIME_ALIASES:
                    last, scale = 1, _TIME_ALIASES[candidate]
                    break
                if candidate == "count":
                    last, scale = 2, scales[2]
                    break
            else:
                raise ValueError(f"unknown unit {word!r} in {text!r}")
            if seen[last] and last != 2 and scales[last] != scale:
                raise ValueError(f"two scales for one dimension in {text!r}")
            seen[last] = True
            dims[last] += sign
            if last != 2:
                scales[last] = scale
    return Units(dims[0], dims[1], dims[2], scales[0], scales[1], scales[2])
