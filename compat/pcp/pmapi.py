"""PCP's ``pcp.pmapi`` on purepcp's client library: ``pmContext`` and its PMAPI calls,
the exceptions ``pmErr`` and ``pmUsageErr``, and the value structures as PCP's binding
hands them to scripts.

The structures are ctypes ones laid out as libpcp's are (``pmResult``, ``pmValueSet``,
``pmValue``, ``pmValueBlock``, ``pmDesc``, ``pmUnits``, ``pmAtomValue``, ``timeval``...),
because scripts reach into them (``result.contents.get_vlist(0, 0)``,
``descs[0].contents.type``, ``atom.ull``); they are filled here from purepcp's own
records, so no C library is involved.
"""

from __future__ import annotations

from typing import Any

import cpmapi as c_api

from .context import pmContext
from .structures import (
    get_indom,
    pmAtomValue,
    pmDesc,
    pmDescPtr,
    pmErr,
    pmHighResLogLabel,
    pmHighResResult,
    pmID,
    pmInDom,
    pmLogLabel,
    pmResult,
    pmUnits,
    pmUsageErr,
    pmValue,
    pmValueBlock,
    pmValueSet,
    pmValueSetPtr,
    timespec,
    timeval,
    tm,
    valueDref,
)

__all__ = [
    "c_api",
    "get_indom",
    "pmAtomValue",
    "pmContext",
    "pmDesc",
    "pmDescPtr",
    "pmErr",
    "pmHighResLogLabel",
    "pmHighResResult",
    "pmID",
    "pmInDom",
    "pmLogLabel",
    "pmResult",
    "pmUnits",
    "pmUsageErr",
    "pmValue",
    "pmValueBlock",
    "pmValueSet",
    "pmValueSetPtr",
    "timespec",
    "timeval",
    "tm",
    "valueDref",
]


def __getattr__(name: str) -> Any:
    """pmOptions (pcp.pmoptions) and fetchgroup (pcp.fetchgroup), imported when a script
    first asks for them."""
    if name == "pmOptions":
        from .pmoptions import pmOptions

        return pmOptions
    if name == "fetchgroup":
        from .fetchgroup import fetchgroup

        return fetchgroup
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
