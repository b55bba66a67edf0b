"""The text a value set holds, read and written as libpcp_web's query.c does: values by
their descriptor's type (series_extract_value, series_pmAtomValue_conv_str), computed
values as its printf formats write them (%e, rate's %.6f), and the descriptor's type,
semantics and units fields."""

from __future__ import annotations

import math

from purepcp.pmapi.cnumbers import scan_int, strtod, strtof
from purepcp.pmapi.printvalue import pmAtomStr
from purepcp.pmapi.types import PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.units_parse import parse_units

__all__ = [
    "COUNTER",
    "DBL",
    "DISCRETE",
    "FLT",
    "I32",
    "I64",
    "INSTANT",
    "U32",
    "U64",
    "UNKNOWN",
    "atom_text",
    "printf_e",
    "printf_f6",
    "same_dims",
    "scan",
    "sem_code",
    "units_error",
    "units_of",
    "value_type",
]

I32, U32, I64, U64 = (int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32),
                      int(PMType.PM_TYPE_64), int(PMType.PM_TYPE_U64))  # fmt: skip
FLT, DBL = int(PMType.PM_TYPE_FLOAT), int(PMType.PM_TYPE_DOUBLE)
UNKNOWN = int(PMType.PM_TYPE_UNKNOWN)
COUNTER, INSTANT, DISCRETE = 1, 3, 4

#: a descriptor's type text (either spelling, matched by prefix) and its PM_TYPE
_TYPE_PREFIXES = (
    (("32",), I32), (("U32", "u32"), U32), (("64",), I64), (("U64", "u64"), U64),
    (("FLOAT", "float"), FLT), (("DOUBLE", "double"), DBL),
)  # fmt: skip
#: a descriptor's semantics text (matched by prefix) and its PM_SEM
_SEMANTICS = (("counter", COUNTER), ("instant", INSTANT), ("discrete", DISCRETE))


def value_type(text: str) -> int:
    """series_extract_type: a descriptor's type text as PM_TYPE, PM_TYPE_UNKNOWN for the
    rest."""
    for prefixes, code in _TYPE_PREFIXES:
        if text.startswith(prefixes):
            return code
    return UNKNOWN


def sem_code(text: str) -> int:
    """pmStrSem: a descriptor's semantics text as PM_SEM, -1 otherwise."""
    for word, code in _SEMANTICS:
        if text.startswith(word):
            return code
    return -1


def scan(type_: int, text: str) -> int | float | None:
    """series_extract_value: TEXT read with the sscanf conversion of TYPE_; None when
    that fails (PM_ERR_CONV)."""
    if type_ == I32:
        return scan_int(text, 32, True)
    if type_ == U32:
        return scan_int(text, 32, False)
    if type_ == I64:
        return scan_int(text, 64, True)
    if type_ == U64:
        return scan_int(text, 64, False)
    if type_ in (FLT, DBL):
        number = (strtof if type_ == FLT else strtod)(text)
        return None if number.end == 0 else float(number.value)
    return None


def atom_text(type_: int, value: int | float) -> str | None:
    """series_pmAtomValue_conv_str: pmAtomStr's text of a numeric VALUE, None (PCP logs an
    error and gives up) when the type is not numeric or the text does not start with a
    digit or a sign ("nan", "inf")."""
    if type_ not in (I32, U32, I64, U64, FLT, DBL):
        return None
    text = pmAtomStr(value, type_)
    if text[:1].isdigit() or text[:1] in "+-":
        return text
    return None


def printf_e(x: float) -> str:
    """printf's %e of X, as glibc prints it (a NaN with its sign bit set is "-nan"): the
    text of a computed value (pmAtomStr's for a double)."""
    return pmAtomStr(x, DBL)


def printf_f6(x: float) -> str:
    """printf's %.6f of X, as glibc prints it: the text of a rate."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:.6f}"


def units_of(text: str) -> Units | None:
    """pmParseUnitsStr's units of TEXT, None when it fails (PCP's out is then zeroed)."""
    try:
        return parse_units(text)[0]
    except ValueError:
        return None


def units_error(text: str) -> str:
    """pmParseUnitsStr's message for TEXT, "" when TEXT is units."""
    try:
        parse_units(text)
    except ValueError as exc:
        return str(exc)
    return ""


def same_dims(a: Units, b: Units) -> bool:
    """A and B measure the same thing (their dimensions agree, whatever the scales)."""
    return (a.dimSpace, a.dimTime, a.dimCount) == (b.dimSpace, b.dimTime, b.dimCount)
