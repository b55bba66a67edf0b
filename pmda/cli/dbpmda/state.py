"""dbpmda's settings between commands: the instance profile, debug options, value parsing.

`Profile` keeps libpcp's pmAddProfile/pmDelProfile rules (including their
quirks, so the PROFILE an agent receives is the one PCP's dbpmda would send);
`DebugOptions` is pmSetDebug/pmClearDebug's view of option names and old bit
numbers; `parse_store_value` reads a store's value text the way dbpmda's
fillValues does, with strtol/strtoul/strtod rules.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import int32, strtod, strtof, strtol, strtoul, uint32
from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_PROFILESPEC, PMError
from purepcp.pmapi.ids import PM_INDOM_NULL, pmInDomStr
from purepcp.pmapi.pdu.constants import PM_PROFILE_EXCLUDE, PM_PROFILE_INCLUDE
from purepcp.pmapi.pdu.records import InDomProfile, ProfilePDU
from purepcp.pmapi.types import PMType

from .fmt import DEBUG_BITS, DEBUG_OPTIONS


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
                InDomProfile(e.indom, e.state, tuple(uint32(i) for i in e.insts))
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
                f"\tProfile [{k}] indom={int32(e.indom)} [{pmInDomStr(e.indom)}] "
                f"state={names.get(e.state, 'EXCLUDE')} {len(e.insts)} instances\n"
            )
            if e.insts:
                lines.append("\t\tInstances:" + "".join(f" [{int32(i)}]" for i in e.insts) + "\n")
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
            number = strtol(rest)
            if number.end:  # an old bit mask (-1: every option)
                value = int(number.value)
                bits = 0x7FFFFFFF if value == -1 else value
                chosen |= {name for name, bit in DEBUG_BITS.items() if bits & bit}
                rest = rest[number.end :]
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

_ERANGE = -errno.ERANGE


class StoreValueError(Exception):
    """The value text does not suit the metric; `code` is the status fillValues returns."""

    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_store_value(text: str, type_: int) -> int | float | str:
    """The atom to store for TEXT in a metric of TYPE, or StoreValueError."""
    T = PMType
    value: int | float
    if type_ in (T.PM_TYPE_32, T.PM_TYPE_U32, T.PM_TYPE_64, T.PM_TYPE_U64):
        unsigned = type_ in (T.PM_TYPE_U32, T.PM_TYPE_U64)
        scan = (strtoul if unsigned else strtol)(text)  # (64 bits: strtoll, strtoull too)
        value = int(scan.value)
        if type_ == T.PM_TYPE_32:
            value = int32(value)
        elif type_ == T.PM_TYPE_U32:
            value = uint32(value)
    elif type_ in (T.PM_TYPE_FLOAT, T.PM_TYPE_DOUBLE):
        scan = (strtof if type_ == T.PM_TYPE_FLOAT else strtod)(text)
        value = float(scan.value)
    elif type_ == T.PM_TYPE_STRING:
        return text
    else:
        from purepcp.pmapi.types import pmTypeStr

        raise StoreValueError(
            -12397, f"Error: dbpmda does not support storing into {pmTypeStr(type_)} metrics"
        )
    if scan.erange:
        from purepcp.pmapi.errors import pmErrStr

        raise StoreValueError(_ERANGE, f"Error: Decoding value: {pmErrStr(_ERANGE)}")
    if scan.end != len(text):
        from purepcp.pmapi.types import pmTypeStr

        raise StoreValueError(
            -12351,
            f'Error: Value "{text}" is incompatible with metric type (PM_TYPE_{pmTypeStr(type_)})',
        )
    return value
