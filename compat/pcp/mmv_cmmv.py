"""The names PCP's C extension ``cmmv`` holds (mmv(5)'s limits, types, semantics, flags
and label types); a script that imports ``cmmv`` itself is given this module (see
pcp.cmodules)."""

from purepcp.pmapi.mmv import (  # noqa: F401  (cmmv's names, all of them)
    MMV_ARRAY_TYPE,
    MMV_BOOLEAN_TYPE,
    MMV_FLAG_NOPREFIX,
    MMV_FLAG_PROCESS,
    MMV_FLAG_SENTINEL,
    MMV_LABELMAX,
    MMV_MAP_TYPE,
    MMV_NAMEMAX,
    MMV_NULL_TYPE,
    MMV_NUMBER_TYPE,
    MMV_SEM_COUNTER,
    MMV_SEM_DISCRETE,
    MMV_SEM_INSTANT,
    MMV_STRING_TYPE,
    MMV_STRINGMAX,
    MMV_TYPE_DOUBLE,
    MMV_TYPE_ELAPSED,
    MMV_TYPE_FLOAT,
    MMV_TYPE_I32,
    MMV_TYPE_I64,
    MMV_TYPE_NOSUPPORT,
    MMV_TYPE_STRING,
    MMV_TYPE_U32,
    MMV_TYPE_U64,
)
