"""PCP's ``cpmapi``: the numbers PCP's Python scripts import from the C side of PCP's
bindings (``from cpmapi import PM_TYPE_U32, PM_CONTEXT_ARCHIVE``), as plain ints, taken
from purepcp's own tables where purepcp has them; the option functions of pmGetOptions
(``cpmapi.options``) are here too, as PCP's scripts call them through this module."""

from __future__ import annotations

from purepcp.pmapi import errors as _errors
from purepcp.pmapi import ids as _ids
from purepcp.pmapi import labels as _labels
from purepcp.pmapi import types as _types
from purepcp.pmapi import units as _units
from purepcp.pmapi.archive import format as _format
from purepcp.pmapi.archive import modes as _modes
from purepcp.pmapi.archive import versions as _versions
from purepcp.pmapi.pdu import constants as _pdu

#: what pmapi.h defines that purepcp's layers have no table for (the client API's own)
_OWN = {
    "HAVE_BITFIELDS_LTOR": 0,
    "HAVE_BITFIELDS_RTOL": 1,
    "PMAPI_VERSION_2": 2,
    "PMAPI_VERSION_3": 3,
    "PMAPI_VERSION": 3,
    "PMCD_AGENT_CHANGE": 7,  # (add, restart or drop)
    "PMNS_LOCAL": 1,
    "PMNS_REMOTE": 2,
    "PMNS_ARCHIVE": 3,
    "PM_NS_DEFAULT": 0,
    "PM_CONTEXT_UNDEF": -1,
    "PM_CONTEXT_HOST": 1,
    "PM_CONTEXT_ARCHIVE": 2,
    "PM_CONTEXT_LOCAL": 3,
    "PM_CONTEXT_TYPEMASK": 0xFF,
    "PM_CTXFLAG_EXCLUSIVE": 1 << 9,
    "PM_CTXFLAG_SECURE": 1 << 10,
    "PM_CTXFLAG_COMPRESS": 1 << 11,
    "PM_CTXFLAG_RELAXED": 1 << 12,
    "PM_DEBUG_APPL0": 1 << 11,
    "PM_DEBUG_APPL1": 1 << 12,
    "PM_DEBUG_APPL2": 1 << 13,
    "PM_EVENT_FLAG_POINT": 1 << 0,
    "PM_EVENT_FLAG_START": 1 << 1,
    "PM_EVENT_FLAG_END": 1 << 2,
    "PM_EVENT_FLAG_ID": 1 << 3,
    "PM_EVENT_FLAG_PARENT": 1 << 4,
    "PM_EVENT_FLAG_MISSED": 1 << 31,
    "PM_LOG_MAXHOSTLEN": 64,
    "PM_MAXERRMSGLEN": 128,
    "PM_MAX_HOSTNAMELEN": 256,
    "PM_MAX_TIMEZONELEN": 256,
    "PM_MAX_ZONEINFOLEN": 256,
    "PM_TZ_MAXLEN": 40,
    "PM_SIZEOF_SUSECONDS_T": 8,
    "PM_SIZEOF_TIME_T": 8,
    "PM_XTB_FLAG": 1 << 24,
    # pmOptions' flags (pmapi.h)
    "PM_OPTFLAG_INIT": 1 << 0,
    "PM_OPTFLAG_DONE": 1 << 1,
    "PM_OPTFLAG_MULTI": 1 << 2,
    "PM_OPTFLAG_USAGE_ERR": 1 << 3,
    "PM_OPTFLAG_RUNTIME_ERR": 1 << 4,
    "PM_OPTFLAG_EXIT": 1 << 5,
    "PM_OPTFLAG_POSIX": 1 << 6,
    "PM_OPTFLAG_MIXED": 1 << 7,
    "PM_OPTFLAG_ENV_ONLY": 1 << 8,
    "PM_OPTFLAG_LONG_ONLY": 1 << 9,
    "PM_OPTFLAG_BOUNDARIES": 1 << 10,
    "PM_OPTFLAG_STDOUT_TZ": 1 << 11,
    "PM_OPTFLAG_NOFLUSH": 1 << 12,
    "PM_OPTFLAG_QUIET": 1 << 13,
}


def _numbers() -> dict[str, int]:
    """Every number, by its PCP name."""
    found: dict[str, int] = dict(_OWN)
    for enum in (
        _types.PMType,
        _types.PMSem,
        _types.ValFmt,
        _units.Space,
        _units.Time,
        _labels.LabelFlag,
        _pdu.PMCDState,
        _errors.PMErr,
    ):
        found.update((m.name, int(m)) for m in enum)
    found.pop("PM_LABEL_COMPOUND", None)  # (a flag of libpcp's own, not in pmapi.h)
    for module, names in (
        (_ids, ("PM_ID_NULL", "PM_INDOM_NULL", "PM_IN_NULL")),
        (_types, ("PM_VAL_HDR_SIZE", "PM_VAL_VLEN_MAX")),
        (_units, ("PM_COUNT_ONE",)),
        (_pdu, ("PMCD_NO_CHANGE",)),
        (_labels, ("PM_MAXLABELS", "PM_MAXLABELJSONLEN")),
        (_modes, ("PM_MODE_LIVE", "PM_MODE_INTERP", "PM_MODE_FORW", "PM_MODE_BACK")),
        (_versions, ("PM_LOG_MAGIC", "PM_LOG_VERS02", "PM_LOG_VERS03")),
        (_format, ("PM_LOG_VOL_TI", "PM_LOG_VOL_META")),
        (
            _pdu,
            ("PM_TEXT_ONELINE", "PM_TEXT_HELP", "PM_TEXT_PMID", "PM_TEXT_INDOM", "PM_TEXT_DIRECT"),
        ),
        (_pmns(), ("PMNS_LEAF_STATUS", "PMNS_NONLEAF_STATUS")),
    ):
        found.update((name, int(getattr(module, name))) for name in names)
    return found


def _pmns():
    from purepcp.pmapi import pmns

    return pmns


globals().update(_numbers())
#: each error code's symbol (pmErrSym), as the C module's dict has them
pmErrSymDict: dict[int, str] = {int(e): e.name for e in _errors.PMErr}


def PM_XTB_SET(unit: int) -> int:
    """pmSetMode's extended time base: UNIT (a PM_TIME_*) in a mode's top bits."""
    return (1 << 24) | ((unit & 0x7F) << 16)


def PM_XTB_GET(mode: int) -> int:
    """The extended time base's unit in MODE, or -1 when it has none."""
    return ((mode & 0x7F0000) >> 16) if mode & (1 << 24) else -1


#: pmGetOptions's functions, as PCP's cpmapi has them (cpmapi.options holds them)
_OPTION_FUNCTIONS = frozenset(
    {
        "pmResetAllOptions", "pmSetShortOptions", "pmSetShortUsage", "pmSetOptionFlags",
        "pmGetOptionFlags", "pmSetOptionContext", "pmGetOptionContext", "pmSetOptionErrors",
        "pmGetOptionErrors", "pmSetLongOption", "pmSetLongOptionHeader", "pmSetLongOptionText",
        "pmSetOptionCallback", "pmSetOverrideCallback", "pmGetOptionsFromList",
        "pmGetOperands", "pmGetNonOptionsFromList", "pmEndOptions", "pmUsageMessage",
        "pmGetOptionHosts", "pmGetOptionArchives", "pmGetOptionAlign_optarg",
        "pmGetOptionFinish_optarg", "pmGetOptionSamples", "pmGetOptionTimezone",
        "pmGetOptionHostZone", "pmGetOptionContainer", "pmGetOptionLocalPMDA",
        "pmServerStart", "pmSetContextOptions", "pmtimevalToReal", "pmtimespecToReal",
        "pmUnits_int",
    }
    | {f"pmSetLongOption{std}" for std in (
        "Align", "Archive", "ArchiveFolio", "ArchiveList", "Container", "Debug", "Finish",
        "Help", "Host", "HostList", "HostZone", "HostsFile", "Interval", "LocalPMDA",
        "Origin", "Samples", "SpecLocal", "Start", "TimeZone", "Version")}
    | {f"pmSetOption{what}" for what in (
        "Archive", "ArchiveList", "ArchiveFolio", "Container", "Host", "HostList",
        "SpecLocal", "LocalPMDA", "Samples", "Interval")}
    | {f"pmGetOption{when}_{unit}" for when in ("Start", "Finish", "Origin", "Interval")
       for unit in ("sec", "usec", "nsec")}
)  # fmt: skip


#: libpcp's other calls PCP's cpmapi has (cpmapi.calls holds them)
_OTHER_CALLS = frozenset({"pmMktime", "pmnsTraverse", "pmSetProcessIdentity"})


def __getattr__(name: str):
    """pmGetOptions's functions (cpmapi.options) and libpcp's other calls
    (cpmapi.calls), imported when a script first calls one."""
    if name in _OPTION_FUNCTIONS:
        from . import options

        return getattr(options, name)
    if name in _OTHER_CALLS:
        from . import calls

        return getattr(calls, name)
    raise AttributeError(f"module 'cpmapi' has no attribute {name!r}")
