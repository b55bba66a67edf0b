"""The names PCP's C extension ``cpmda`` gives agents, over pcp.pmda's dispatch state.

Some of PCP's agents import it directly (``from cpmda import PMDA_FETCH_NOVALUES``,
``cpmda.set_need_refresh()``).  Like the C extension, this module holds the process's
agent state (`state`: the dispatch record pcp.pmda registers, the serving agent) and
imports nothing above purepcp.pmapi, so that a top-level ``cpmda`` can be this module.
"""

from __future__ import annotations

import logging
from typing import Any

from purepcp.pmapi.ids import pmID_build, pmInDom_build
from purepcp.pmapi.units import Units

#: The agent state of this process, as cpmda's C statics hold it: "dispatch" (pcp.pmda's
#: Dispatch record), "agent" (the agent serving pmcd), "connected", "notify".
state: dict[str, Any] = {}

PMDA_FETCH_NOVALUES, PMDA_FETCH_STATIC, PMDA_FETCH_DYNAMIC = 0, 1, 2
PMDA_CACHE_LOAD, PMDA_CACHE_ADD, PMDA_CACHE_HIDE, PMDA_CACHE_CULL = 1, 2, 3, 4
PMDA_CACHE_EMPTY, PMDA_CACHE_SAVE, PMDA_CACHE_ACTIVE, PMDA_CACHE_INACTIVE = 5, 6, 8, 9
PMDA_CACHE_SIZE, PMDA_CACHE_SIZE_ACTIVE, PMDA_CACHE_SIZE_INACTIVE = 10, 11, 12
PMDA_CACHE_REUSE, PMDA_CACHE_WALK_REWIND, PMDA_CACHE_WALK_NEXT = 13, 14, 15
PMDA_CACHE_CHECK, PMDA_CACHE_REORG, PMDA_CACHE_SYNC = 16, 17, 18
PMDA_CACHE_DUMP, PMDA_CACHE_DUMP_ALL = 19, 20
PMDA_FLAG_AUTHORIZE, PMDA_FLAG_CONTAINER = 4, 64
PMDA_ATTR_USERNAME, PMDA_ATTR_USERID, PMDA_ATTR_GROUPID = 5, 11, 12
PMDA_ATTR_PROCESSID, PMDA_ATTR_CONTAINER = 14, 15


def _domain() -> int:
    dispatch = state.get("dispatch")
    return dispatch.domain if dispatch is not None else 0


def logger() -> logging.Logger:
    """The agent's log (pmNotifyErr's destination)."""
    dispatch = state.get("dispatch")
    return logging.getLogger(f"pcp.pmda.{dispatch.name if dispatch is not None else 'pmda'}")


def set_need_refresh() -> None:
    """Have the agent's tables (names, metrics, instances) read again before the next
    request."""
    dispatch = state.get("dispatch")
    if dispatch is not None:
        dispatch.need_refresh = True


def set_notify_change() -> None:
    """Tell pmcd, with the next fetch, that labels and names have changed."""
    agent = state.get("agent")
    if agent is not None:
        agent.changed(labels=True, names=True)
    else:
        state["notify"] = True


def pmid_build(domain: int, cluster: int, item: int) -> int:
    return pmID_build(domain, cluster, item)


def pmda_pmid(cluster: int, item: int) -> int:
    return pmID_build(_domain(), cluster, item)


def pmid_cluster(cluster: int) -> int:
    return pmID_build(_domain(), cluster, 0)


def indom_build(domain: int, serial: int) -> int:
    return pmInDom_build(domain, serial)


def pmda_indom(serial: int) -> int:
    return pmInDom_build(_domain(), serial)


def pmda_units(
    dim_space: int,
    dim_time: int,
    dim_count: int,
    scale_space: int,
    scale_time: int,
    scale_count: int,
) -> int:
    """The packed pmUnits word, as a C int."""
    word = Units(dim_space, dim_time, dim_count, scale_space, scale_time, scale_count).pack()
    word &= 0xFFFFFFFF
    return word - (1 << 32) if word & 0x80000000 else word


def pmda_uptime(seconds: int) -> str:
    """SECONDS as pmdaUptime writes them: [Nday[s] ]HH:MM:SS."""
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if days > 1:
        return f"{days}days {clock}"
    return f"{days}day {clock}" if days == 1 else clock


def pmda_log(message: str) -> None:
    logger().info("%s", message)


def pmda_dbg(message: str) -> None:
    logger().debug("%s", message)


def pmda_err(message: str) -> None:
    logger().error("%s", message)


__all__ = [
    "PMDA_ATTR_CONTAINER",
    "PMDA_ATTR_GROUPID",
    "PMDA_ATTR_PROCESSID",
    "PMDA_ATTR_USERID",
    "PMDA_ATTR_USERNAME",
    "PMDA_CACHE_ACTIVE",
    "PMDA_CACHE_ADD",
    "PMDA_CACHE_CHECK",
    "PMDA_CACHE_CULL",
    "PMDA_CACHE_DUMP",
    "PMDA_CACHE_DUMP_ALL",
    "PMDA_CACHE_EMPTY",
    "PMDA_CACHE_HIDE",
    "PMDA_CACHE_INACTIVE",
    "PMDA_CACHE_LOAD",
    "PMDA_CACHE_REORG",
    "PMDA_CACHE_REUSE",
    "PMDA_CACHE_SAVE",
    "PMDA_CACHE_SIZE",
    "PMDA_CACHE_SIZE_ACTIVE",
    "PMDA_CACHE_SIZE_INACTIVE",
    "PMDA_CACHE_SYNC",
    "PMDA_CACHE_WALK_NEXT",
    "PMDA_CACHE_WALK_REWIND",
    "PMDA_FETCH_DYNAMIC",
    "PMDA_FETCH_NOVALUES",
    "PMDA_FETCH_STATIC",
    "PMDA_FLAG_AUTHORIZE",
    "PMDA_FLAG_CONTAINER",
    "indom_build",
    "pmda_dbg",
    "pmda_err",
    "pmda_indom",
    "pmda_log",
    "pmda_pmid",
    "pmda_units",
    "pmda_uptime",
    "pmid_build",
    "pmid_cluster",
    "set_need_refresh",
    "set_notify_change",
]
