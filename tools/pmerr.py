"""pmerr: PCP error codes and their messages, as PCP's pmerr prints them.

``pmerr CODE ...`` decodes each code (decimal, or hexadecimal after 0x; a positive one
is taken as its negative, as PCP's does) into "Code: -12357 0xffffcfbb Text: Unknown
metric name"; ``pmerr -l`` lists libpcp's error table.  PCP's pmerr reads its options
by hand, not with pmGetOptions, and so does this: only the first argument may be an
option, and one that is not a number is refused with the usage.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

USAGE = (
    "Usage: pmerr [options] [code]\n\n  -l, --list   causes all known error codes to be listed\n"
)
_HEX = re.compile(r"0[xX]([0-9a-fA-F]*)")
_DECIMAL = re.compile(r"\s*([+-]?\d+)")


def decode(text: str) -> int | None:
    """TEXT as pmerr's sscanf reads it: 0x and hex digits only, else a leading decimal
    number (what follows it ignored, as %d ignores it); None if neither."""
    hexa = _HEX.fullmatch(text)
    if hexa and hexa.group(1):
        return _int32(int(hexa.group(1), 16))
    decimal = _DECIMAL.match(text)
    if decimal is None:
        return None
    return _int32(int(decimal.group(1)))


def _int32(value: int) -> int:
    """VALUE as C's 32-bit int holds it (sscanf's %x and %d wrap)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def error_table() -> str:
    """libpcp's __pmDumpErrTab: a header, then each PM_ERR_* code, name and message."""
    from purepcp.pmapi.errors import PMErr, pmErrStr

    lines = ["  Code  Symbolic Name          Message"]
    lines += [f"{code.value:6d}  {code.name:<22} {pmErrStr(code.value)}" for code in PMErr]
    return "\n".join(lines) + "\n"


def describe(text: str) -> str:
    """pmerr's lines for one argument."""
    from purepcp.pmapi.errors import pmErrStr

    code = decode(text)
    if code is None:
        return f'Cannot decode "{text}" - neither decimal nor hexadecimal\n'
    out = ""
    if code > 0:
        code = -code
        out = f"Code is positive, assume you mean {code}\n"
    return out + f"Code: {code} 0x{code & 0xFFFFFFFF:x} Text: {pmErrStr(code)}\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-l", "--list"):
        sys.stdout.write(error_table())
        return 1  # (as PCP's: the list is its own exit)
    if args and (args[0] in ("-?", "--help") or _is_option(args[0])):
        if args[0] not in ("-?", "--help"):
            sys.stderr.write(f"Illegal option -- {args[0][1:]}\n")
        sys.stderr.write(USAGE)
        return 1
    sys.stdout.write("".join(describe(text) for text in args))
    return 0


def _is_option(text: str) -> bool:
    """An argument PCP's pmerr takes for an option: "-" and then not a hex digit."""
    return text.startswith("-") and not (len(text) > 1 and text[1] in "0123456789abcdefABCDEF")


if __name__ == "__main__":
    sys.exit(main())
