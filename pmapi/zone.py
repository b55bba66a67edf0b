"""The zone a context's times are shown in: pmNewContextZone, and an archive's own zone."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from purepcp.pmapi.errors import PM_ERR_VALUE, PMError  # type: ignore[attr-defined]
from purepcp.pmapi.ids import PM_ID_NULL
from purepcp.pmapi.timewindow import new_zone, pcp_timezone, pcp_zoneinfo
from purepcp.pmapi.types import ValFmt

__all__ = ["archive_zone", "context_zone"]


def archive_zone(ctx: Any) -> tzinfo:
    """The zone an archive was written in (its label's zoneinfo, else its TZ string)."""
    label = ctx.archive.label
    return new_zone(label.zoneinfo or label.timezone)


def context_zone(ctx: Any) -> tzinfo:
    """pmNewContextZone: the zone of the metrics source (pmcd.zoneinfo or pmcd.timezone)."""
    if ctx.kind == "archive":
        return archive_zone(ctx)
    if ctx.kind != "host":
        return new_zone(pcp_zoneinfo() or pcp_timezone())
    pmids = ctx.lookup_names(["pmcd.timezone", "pmcd.zoneinfo"])
    wanted = [pmid for pmid in pmids if pmid != PM_ID_NULL]
    if not wanted:
        raise PMError(PM_ERR_VALUE)
    result = ctx.fetch(wanted).result
    found = {vset.pmid: vset for vset in result.vsets}
    for pmid in reversed(pmids):  # the zone file's name first
        vset = found.get(pmid)
        if vset is not None and vset.numval == 1 and vset.valfmt != ValFmt.PM_VAL_INSITU:
            value = vset.values[0]
            if not isinstance(value, str):
                value = value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            return new_zone(value)
    raise PMError(PM_ERR_VALUE)
