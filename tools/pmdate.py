"""pmdate: the date and time now, moved by offsets, in a strftime format, as PCP's pmdate
prints it (its scripts name archives with it: ``pmdate -1d %Y%m%d``).

Each argument but the last is an offset, +N or -N and a scale: S seconds, M minutes,
H hours, d days (added to the clock), m months and y years (added to the local date's
fields, then normalised by mktime, as PCP's does).  The last is the format.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence

PROG = "pmdate"
USAGE = (
    "Usage: pmdate { +valueS | -valueS } ... format\n\n"
    'where the scale "S" is one of: S (seconds), M (minutes), H (hours), \n'
    "d (days), m (months) or y (years)\n"
)
#: seconds per unit of the scales that move the clock
_SECONDS = {"S": 1, "M": 60, "H": 3600, "d": 86400}
#: what strtol reads after the sign
_NUMBER = re.compile(r"\s*[+-]?\d+")


class _Refused(Exception):
    """A message for stderr (pmdate then exits 1)."""


def _offset(text: str) -> tuple[int, str]:
    """An offset argument: its signed value and its scale letter (strtol's reading)."""
    if text[:1] == "+":
        sign = 1
    elif text[:1] == "-":
        sign = -1
    else:
        raise _Refused(f'{PROG}: incorrect leading sign for offset ({text}), must be "+" or "-"\n')
    number = _NUMBER.match(text, 1)
    value = _c_int(int(number.group())) if number else 0
    rest = text[number.end() :] if number else text[1:]
    scale = rest[:1]
    if scale == "":
        raise _Refused(f"{PROG}: missing scale after offset ({text})\n")
    if scale == "?":
        raise _Refused(USAGE)
    if scale not in "SMHdmy":
        raise _Refused(f"{PROG}: unknown scale after offset ({text})\n")
    return sign * value, scale


def _c_int(value: int) -> int:
    """VALUE as the C int pmdate casts strtol's long to."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def when(offsets: Sequence[str], now: float) -> time.struct_time:
    """The local time NOW moved by OFFSETS, as pmdate computes it."""
    months = years = 0
    clock = int(now)
    for text in offsets:
        value, scale = _offset(text)
        if scale in _SECONDS:
            clock += value * _SECONDS[scale]
        elif scale == "m":
            months += value
        else:
            years += value
    tm = list(time.localtime(clock))
    tm[0] += years
    if months:
        month = tm[1] - 1 + months  # (tm_mon counts from 0)
        while month < 0:
            month += 12
            tm[0] -= 1
        while month > 12:  # (as PCP's: 12 is left for mktime to carry)
            month -= 12
            tm[0] += 1
        tm[1] = month + 1
    try:
        return time.localtime(time.mktime(tuple(tm)))  # type: ignore[arg-type]
    except (OverflowError, ValueError):
        raise _Refused(f"{PROG}: impossible date conversion\n") from None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if not args or args[0] in ("-?", "--help"):
            raise _Refused(USAGE)
        tm = when(args[:-1], time.time())
        text = time.strftime(args[-1], tm)
        if not text:  # (C's strftime gives 0 for an empty result, which pmdate reports so)
            raise _Refused(f"{PROG}: format too long\n")
    except _Refused as refused:
        sys.stderr.write(str(refused))
        return 1
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
