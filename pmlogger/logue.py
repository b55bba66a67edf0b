"""pmlogger's prologue and epilogue: records saying who logged an archive, and from where.

Like PCP's pmlogger, ours starts every archive with a record of five metrics it
supplies itself (not fetched as such): pmcd.pmlogger.host, .port and .archive, one
instance named by the logger's PID, and pmcd.pid and pmcd.seqnum as pmcd reports
them; the same record closes the archive.  A reader can then tell which pmcd was
logged (and whether it restarted, by pmcd.pid) between the two.  The descriptors
are fixed, as PCP fixes them, so they need no round trip to pmcd.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_ID_NULL, PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet

if TYPE_CHECKING:
    from purepcp.pmapi.context import Context

#: pmlogger's InDom for its own metrics: one instance, the logger's PID.
LOGGER_INDOM = pmInDom_build(2, 1)
HOST = pmID_build(2, 3, 3)
PORT = pmID_build(2, 3, 0)
ARCHIVE = pmID_build(2, 3, 2)
PMCD_PID = pmID_build(2, 0, 23)
PMCD_SEQNUM = pmID_build(2, 0, 24)

_D = PMSem.PM_SEM_DISCRETE
#: (descriptor, name) in the order the records hold them.
METRICS: tuple[tuple[Desc, str], ...] = (
    (Desc(HOST, PMType.PM_TYPE_STRING, LOGGER_INDOM, _D), "pmcd.pmlogger.host"),
    (Desc(PORT, PMType.PM_TYPE_U32, LOGGER_INDOM, _D), "pmcd.pmlogger.port"),
    (Desc(ARCHIVE, PMType.PM_TYPE_STRING, LOGGER_INDOM, _D), "pmcd.pmlogger.archive"),
    (Desc(PMCD_PID, PMType.PM_TYPE_U64, PM_INDOM_NULL, _D), "pmcd.pid"),
    (Desc(PMCD_SEQNUM, PMType.PM_TYPE_U32, PM_INDOM_NULL, _D), "pmcd.seqnum"),
)


def fqdn() -> str:
    """This host's name as pmlogger works it out: its address's name, else its hostname."""
    host = socket.gethostname()
    try:
        address = socket.getaddrinfo(host, None)[0][4]
        return socket.getnameinfo(address, socket.NI_NAMEREQD)[0]
    except (OSError, IndexError):
        return host


@dataclass(frozen=True)
class SourceFacts:
    """What the archive label says about the logged host, as that host's pmcd tells it.

    Each is None when pmcd cannot say (no pmcd agent, as with -o): the caller falls
    back to this machine's.
    """

    stamp: Timestamp | None = None
    hostname: str | None = None
    timezone: str | None = None
    zoneinfo: str | None = None


_FACTS = ("pmcd.hostname", "pmcd.timezone", "pmcd.zoneinfo")


def source_facts(ctx: Context) -> SourceFacts:
    """pmcd's time, hostname and timezone from one fetch, as pmlogger labels an archive."""
    try:
        pmids = ctx.lookup_names(list(_FACTS))
        wanted = [pmid for pmid in pmids if pmid != PM_ID_NULL]
        if not wanted:
            return SourceFacts()
        fetched = ctx.fetch(wanted)
    except PMError:
        return SourceFacts()
    found: list[str | None] = []
    for pmid in pmids:
        try:
            value = fetched.values(pmid).get(PM_IN_NULL) if pmid != PM_ID_NULL else None
        except (PMError, KeyError):
            value = None
        found.append(value if isinstance(value, str) and value else None)
    return SourceFacts(fetched.timestamp, *found)


def pmcd_identity(ctx: Context) -> tuple[Timestamp | None, int, int]:
    """(pmcd's time, pmcd.pid, pmcd.seqnum) from one fetch; (None, 0, 0) if pmcd cannot say."""
    try:
        fetched = ctx.fetch([PMCD_PID, PMCD_SEQNUM])
    except PMError:
        return None, 0, 0
    found = []
    for pmid in (PMCD_PID, PMCD_SEQNUM):
        try:
            values = fetched.values(pmid)
        except (PMError, KeyError):
            values = {}
        found.append(int(values.get(PM_IN_NULL, 0) or 0))
    return fetched.timestamp, found[0], found[1]


def logue_result(
    stamp: Timestamp, host: str, archive: str, pmcd_pid: int, seqnum: int, port: int = 0
) -> Result:
    """The prologue (or epilogue) record at STAMP.

    PORT is the logger's pmlc control port; this pmlogger has none, so it is 0.
    """
    me = os.getpid()
    values = {HOST: host, PORT: port, ARCHIVE: os.path.abspath(archive)}
    vsets = []
    for desc, _name in METRICS:
        if desc.pmid in values:
            pairs = [(me, values[desc.pmid])]
        else:
            pairs = [(PM_IN_NULL, pmcd_pid if desc.pmid == PMCD_PID else seqnum)]
        vsets.append(ValueSet.of_atoms(desc.pmid, desc.type, pairs))
    return Result(stamp, tuple(vsets))


def logger_instances() -> tuple[list[int], list[str]]:
    """pmlogger's InDom: its own PID, by number and by name."""
    me = os.getpid()
    return [me], [str(me)]
