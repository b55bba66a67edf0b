"""dbpmda's settings between commands: the instance profile, debug options, value parsing.

`Profile` keeps libpcp's pmAddProfile/pmDelProfile rules (including their
quirks, so the PROFILE an agent receives is the one PCP's dbpmda would send);
`DebugOptions` is pmSetDebug/pmClearDebug's view of option names and old bit
numbers; `parse_store_value` reads a store's value text the way dbpmda's
fillValues does, with strtol/strtoul/strtod rules.
"""

from __future__ import annotations

import errno
import math
import re
import struct
from dataclasses import dataclass, field

from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_PROFILESPEC, PMError
from purepcp.pmapi.ids import PM_INDOM_NULL, pmInDomStr
from purepcp.pmapi.pdu.constants import PM_PROFILE_EXCLUDE, PM_PROFILE_INCLUDE
from purepcp.pmapi.pdu.records import InDomProfile, ProfilePDU
from purepcp.pmapi.types import PMType

from .fmt import DEBUG_BITS, DEBUG_OPTIONS
from .lex import c_int


@dataclass
class _Entry:
    indom: int
    state: int
    insts: list[int] = field(default_factory=list)


class Profile:
    """The one instance profile dbpmda keeps and sends before fetches."""

    def __init__(self) -> None:
        self.state = PM_PROFILE_INCLUDE
        self.entries: list[_Entry] = []

    def _entry(self, indom: int) -> _Entry:
        for entry in self.entries:
            if entry.indom == indom:
                return entry
        entry = _Entry(indom, PM_PROFILE_EXCLUDE)
        self.entries.append(entry)
        return entry

    def _change(self, indom: int, insts: list[int] | None, adding: bool) -> None:
        if indom == PM_INDOM_NULL:
            if insts is not None:
                raise PMError(PM_ERR_PROFILESPEC)
            self.entries = []
            self.state = PM_PROFILE_INCLUDE if adding else PM_PROFILE_EXCLUDE
            return
        entry = self._entry(indom)
        if not insts:
            entry.insts = []
            entry.state = PM_PROFILE_INCLUDE if adding else PM_PROFILE_EXCLUDE
            return
        # with state INCLUDE the list names exclusions, with EXCLUDE inclusions
        grow = (entry.state == PM_PROFILE_EXCLUDE) == adding
        if grow:
            entry.insts += [i for i in dict.fromkeys(insts) if i not in entry.insts]
        else:
            entry.insts = [i for i in entry.insts if i not in insts]

    def add(self, indom: int, insts: list[int] | None = None) -> None:
        """pmAddProfile: include all of INDOM (no INSTS) or these instances."""
        self._change(indom, insts, True)

    def delete(self, indom: int, insts: list[int] | None = None) -> None:
        """pmDelProfile: exclude all of INDOM (no INSTS) or these instances."""
        self._change(indom, insts, False)

    def pdu(self) -> ProfilePDU:
        return ProfilePDU(
            0,
            self.state,
            tuple(
                InDomProfile(e.indom, e.state, tuple(i & 0xFFFFFFFF for i in e.insts))
                for e in self.entries
            ),
        )

    def dump(self) -> str:
        """__pmDumpProfile's text."""
        names = {PM_PROFILE_INCLUDE: "INCLUDE"}
        lines = [
            f"Dump Instance Profile state={names.get(self.state, 'EXCLUDE')}, "
            f"{len(self.entries)} profiles\n"
        ]
        for k, e in enumerate(self.entries):
            lines.append(
                f"\tProfile [{k}] indom={c_int(e.indom)} [{pmInDomStr(e.indom)}] "
                f"state={names.get(e.state, 'EXCLUDE')} {len(e.insts)} instances\n"
            )
            if e.insts:
                lines.append("\t\tInstances:" + "".join(f" [{c_int(i)}]" for i in e.insts) + "\n")
        return "".join(lines)


class DebugOptions:
    """libpcp's debug options: set or cleared by name, by old bit number, or all."""

    def __init__(self) -> None:
        self.on: set[str] = set()

    def change(self, spec: str, enable: bool = True) -> None:
        """pmSetDebug/pmClearDebug(SPEC): comma-separated names or numbers; PMError if bad."""
        chosen: set[str] = set()
        rest = spec
        while rest:
            m = re.match(r"[ \t\n\v\f\r]*[+-]?\d+", rest)
            if m:
                value = int(m.group().strip())
                bits = 0x7FFFFFFF if value == -1 else value
                chosen |= {name for name, bit in DEBUG_BITS.items() if bits & bit}
                rest = rest[m.end() :]
                if rest.startswith(","):
                    rest = rest[1:]
                    continue
                if rest:
                    raise PMError(PM_ERR_CONV)
                break
            word, _, rest = rest.partition(",")
            if word.lower() == "all":
                chosen |= set(DEBUG_OPTIONS)
            elif word.lower() in DEBUG_OPTIONS:
                chosen.add(word.lower())
            else:
                raise PMError(PM_ERR_CONV)
        if enable:
            self.on |= chosen
        else:
            self.on -= chosen

    def __contains__(self, name: object) -> bool:
        return name in self.on

    def describe(self) -> str:
        """As `status` shows them: (all), (none) or the names in libpcp's order."""
        if len(self.on) == len(DEBUG_OPTIONS):
            return "(all)"
        if not self.on:
            return "(none)"
        return " ".join(name for name in DEBUG_OPTIONS if name in self.on)


# -- store values ---------------------------------------------------------------------------

_SPACE = "[ \t\n\v\f\r]*"
_INTEGER = re.compile(_SPACE + r"([+-]?)(\d+)")
_FLOAT = re.compile(
    _SPACE + r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
)
_ERANGE = -errno.ERANGE
_FLT_MAX = 3.4028234663852886e38
_FLT_MIN = 1.1754943508222875e-38
_DBL_MIN = 2.2250738585072014e-308


class StoreValueError(Exception):
    """The value text does not suit the metric; `code` is the status fillValues returns."""

    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _strtoint(text: str, bits: int, unsigned: bool) -> tuple[int, str, int]:
    """strtol/strtoul/strtoll/strtoull in base 10: (value, unparsed rest, status)."""
    m = _INTEGER.match(text)
    if m is None:
        return 0, text, 0
    sign, digits = m.groups()
    magnitude = int(digits)
    limit = 1 << (bits - 1)
    status = 0
    if unsigned:
        if magnitude > (1 << bits) - 1:
            value, status = (1 << bits) - 1, _ERANGE
        else:
            value = (-magnitude) % (1 << bits) if sign == "-" else magnitude
    else:
        value = -magnitude if sign == "-" else magnitude
        if value >= limit:
            value, status = limit - 1, _ERANGE
        elif value < -limit:
            value, status = -limit, _ERANGE
    return value, text[m.end() :], status


def _strtofloat(text: str, single: bool) -> tuple[float, str, int]:
    """strtof/strtod: (value, unparsed rest, status)."""
    m = _FLOAT.match(text)
    if m is None:
        return 0.0, text, 0
    literal = m.group().strip()
    lower = literal.lower().lstrip("+-")
    if lower.startswith("nan"):
        value = math.nan
    elif lower.startswith("inf"):
        value = -math.inf if literal.startswith("-") else math.inf
    elif lower.startswith("0x"):
        hexpart = literal if "p" in lower else literal + "p0"
        value = float.fromhex(hexpart)
    else:
        value = float(literal)
    status = 0
    if not lower.startswith(("nan", "inf")):
        if single:
            if abs(value) > _FLT_MAX:
                value = math.copysign(math.inf, value)
                status = _ERANGE
            elif value != 0 and abs(value) < _FLT_MIN:
                status = _ERANGE
            else:
                value = struct.unpack("f", struct.pack("f", value))[0]
        else:
            mantissa = lower.split("p")[0] if lower.startswith("0x") else lower.split("e")[0]
            lost = value == 0 and any(c not in "0.x" for c in mantissa)
            if math.isinf(value) or lost or (value != 0 and abs(value) < _DBL_MIN):
                status = _ERANGE
    return value, text[m.end() :], status


def parse_store_value(text: str, type_: int) -> int | float | str:
    """The atom to store for TEXT in a metric of TYPE, or StoreValueError."""
    T = PMType
    if type_ in (T.PM_TYPE_32, T.PM_TYPE_U32, T.PM_TYPE_64, T.PM_TYPE_U64):
        unsigned = type_ in (T.PM_TYPE_U32, T.PM_TYPE_U64)
        value, rest, status = _strtoint(text, 64, unsigned)
        if type_ == T.PM_TYPE_32:
            value = c_int(value)
        elif type_ == T.PM_TYPE_U32:
            value &= 0xFFFFFFFF
    elif type_ in (T.PM_TYPE_FLOAT, T.PM_TYPE_DOUBLE):
        value, rest, status = _strtofloat(text, type_ == T.PM_TYPE_FLOAT)
    elif type_ == T.PM_TYPE_STRING:
        return text
    else:
        from purepcp.pmapi.types import pmTypeStr

        raise StoreValueError(
            -12397, f"Error: dbpmda does not support storing into {pmTypeStr(type_)} metrics"
        )
    if status < 0:
        from purepcp.pmapi.errors import pmErrStr

        raise StoreValueError(status, f"Error: Decoding value: {pmErrStr(status)}")
    if rest:
        from purepcp.pmapi.types import pmTypeStr

        raise StoreValueError(
            -12351,
            f'Error: Value "{text}" is incompatible with metric type (PM_TYPE_{pmTypeStr(type_)})',
        )
    return value
