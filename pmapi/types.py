"""Metric data types, semantics and value formats: PCP's constants and their text forms."""

from __future__ import annotations

from enum import IntEnum


class PMType(IntEnum):
    """pmDesc.type: the base data type of a metric's values."""

    PM_TYPE_NOSUPPORT = -1
    PM_TYPE_32 = 0
    PM_TYPE_U32 = 1
    PM_TYPE_64 = 2
    PM_TYPE_U64 = 3
    PM_TYPE_FLOAT = 4
    PM_TYPE_DOUBLE = 5
    PM_TYPE_STRING = 6
    PM_TYPE_AGGREGATE = 7
    PM_TYPE_AGGREGATE_STATIC = 8
    PM_TYPE_EVENT = 9
    PM_TYPE_HIGHRES_EVENT = 10
    PM_TYPE_UNKNOWN = 255


class PMSem(IntEnum):
    """pmDesc.sem: how tools should interpret a metric's values."""

    PM_SEM_COUNTER = 1
    PM_SEM_INSTANT = 3
    PM_SEM_DISCRETE = 4


class ValFmt(IntEnum):
    """pmValueSet.valfmt: where the values of a value set live."""

    PM_VAL_INSITU = 0  # the 32-bit value is in the pmValue itself
    PM_VAL_DPTR = 1  # in a pmValueBlock, dynamically allocated
    PM_VAL_SPTR = 2  # in a pmValueBlock, statically allocated


# the members under their PCP names, as module constants (`from ... import PM_TYPE_U32`)
PM_TYPE_NOSUPPORT = PMType.PM_TYPE_NOSUPPORT
PM_TYPE_32 = PMType.PM_TYPE_32
PM_TYPE_U32 = PMType.PM_TYPE_U32
PM_TYPE_64 = PMType.PM_TYPE_64
PM_TYPE_U64 = PMType.PM_TYPE_U64
PM_TYPE_FLOAT = PMType.PM_TYPE_FLOAT
PM_TYPE_DOUBLE = PMType.PM_TYPE_DOUBLE
PM_TYPE_STRING = PMType.PM_TYPE_STRING
PM_TYPE_AGGREGATE = PMType.PM_TYPE_AGGREGATE
PM_TYPE_AGGREGATE_STATIC = PMType.PM_TYPE_AGGREGATE_STATIC
PM_TYPE_EVENT = PMType.PM_TYPE_EVENT
PM_TYPE_HIGHRES_EVENT = PMType.PM_TYPE_HIGHRES_EVENT
PM_TYPE_UNKNOWN = PMType.PM_TYPE_UNKNOWN
PM_SEM_COUNTER = PMSem.PM_SEM_COUNTER
PM_SEM_INSTANT = PMSem.PM_SEM_INSTANT
PM_SEM_DISCRETE = PMSem.PM_SEM_DISCRETE
PM_VAL_INSITU = ValFmt.PM_VAL_INSITU
PM_VAL_DPTR = ValFmt.PM_VAL_DPTR
PM_VAL_SPTR = ValFmt.PM_VAL_SPTR

#: Bytes of the vtype/vlen word that starts every pmValueBlock.
PM_VAL_HDR_SIZE = 4
#: Largest vlen a pmValueBlock can carry (24 bits).
PM_VAL_VLEN_MAX = 0x00FFFFFF

_TYPE_NAMES = (
    "32",
    "U32",
    "64",
    "U64",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "AGGREGATE",
    "AGGREGATE_STATIC",
    "EVENT",
    "HIGHRES_EVENT",
)

#: The words pminfo -d prints for each type ("Data Type: ...").
_TYPE_DESCRIPTIONS = {
    PMType.PM_TYPE_32: "32-bit int",
    PMType.PM_TYPE_U32: "32-bit unsigned int",
    PMType.PM_TYPE_64: "64-bit int",
    PMType.PM_TYPE_U64: "64-bit unsigned int",
    PMType.PM_TYPE_FLOAT: "float",
    PMType.PM_TYPE_DOUBLE: "double",
    PMType.PM_TYPE_STRING: "string",
    PMType.PM_TYPE_AGGREGATE: "aggregate",
    PMType.PM_TYPE_AGGREGATE_STATIC: "static aggregate",
    PMType.PM_TYPE_EVENT: "event record array",
    PMType.PM_TYPE_HIGHRES_EVENT: "highres event record array",
    PMType.PM_TYPE_NOSUPPORT: "Not Supported",
}


def pmTypeStr(type_: int) -> str:
    """Short type name as libpcp's pmTypeStr: `U32`, `DOUBLE`, `NO_SUPPORT`, `???`."""
    if 0 <= type_ < len(_TYPE_NAMES):
        return _TYPE_NAMES[type_]
    if type_ == PMType.PM_TYPE_NOSUPPORT:
        return "NO_SUPPORT"
    if type_ == PMType.PM_TYPE_UNKNOWN:
        return "UNKNOWN"
    return "???"


def type_description(type_: int) -> str:
    """Long type name as pminfo -d prints it: `32-bit unsigned int`, `double`, `???`."""
    try:
        return _TYPE_DESCRIPTIONS[PMType(type_)]
    except ValueError:
        return "???"


def pmSemStr(sem: int) -> str:
    """`counter`, `instant`, `discrete` or `???`, as libpcp's pmSemStr."""
    return {1: "counter", 3: "instant", 4: "discrete"}.get(sem, "???")
