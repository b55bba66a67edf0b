"""The PMAPI's requests to a pmcd as sans-IO exchanges: PDUs out, PDUs in, answers out.

Each operation is a generator: it yields the PDU to send, is sent back pmcd's
reply, and returns the answer in Python shapes (or raises PMError).  A PDU that
gets no reply (PROFILE) is yielded wrapped in ``NoReply``.  The synchronous and
the trio contexts drive the same generators, so the protocol is written once.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, NamedTuple, TypeVar

from .desc import Desc
from .errors import (
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_IPC,
    PM_ERR_NAME,
    PM_ERR_PMID,
    PMError,
)
from .ids import PM_ID_NULL, PM_IN_NULL
from .labels import LabelSet
from .pdu.constants import PM_TEXT_HELP, PM_TEXT_INDOM, PM_TEXT_ONELINE, PM_TEXT_PMID
from .pdu.records import (
    PDU,
    DescIdsPDU,
    DescPDU,
    DescReqPDU,
    DescsPDU,
    ErrorPDU,
    FetchPDU,
    HighResFetchPDU,
    HighResResultPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from .values import Result

T = TypeVar("T")


class NoReply(NamedTuple):
    """A PDU pmcd answers with nothing (a profile)."""

    pdu: PDU


Exchange = Generator["PDU | NoReply", Any, T]


def _expect(reply: Any, kind: type) -> Any:
    """REPLY if it is a KIND; its code raised if it is an error; else PM_ERR_IPC."""
    if isinstance(reply, kind):
        return reply
    if isinstance(reply, ErrorPDU) and reply.code < 0:
        raise PMError(reply.code)
    raise PMError(PM_ERR_IPC, f"unexpected {type(reply).__name__} from pmcd")


def lookup_names(names: Sequence[str], sender: int) -> Exchange[list[int]]:
    """pmLookupName: PMIDs of NAMES, PM_ID_NULL for those unknown (an error if only one)."""
    reply = _expect((yield PMNSNamesPDU(tuple(names), None, sender)), PMNSIdsPDU)
    if len(reply.pmids) != len(names):
        raise PMError(PM_ERR_IPC, "pmcd answered a name lookup with the wrong count")
    if len(names) == 1 and reply.pmids[0] == PM_ID_NULL:
        raise PMError(PM_ERR_NAME)
    return list(reply.pmids)


def name_all(pmid: int, sender: int) -> Exchange[list[str]]:
    """pmNameAll: every name of PMID."""
    reply = _expect((yield PMNSIdsPDU(0, (pmid,), sender)), PMNSNamesPDU)
    if not reply.names:
        raise PMError(PM_ERR_PMID)
    return list(reply.names)


def children(name: str, sender: int) -> Exchange[list[tuple[str, bool]]]:
    """pmGetChildrenStatus: the children of NAME, each with whether it is a leaf."""
    reply = _expect((yield PMNSChildPDU(name, 1, sender)), PMNSNamesPDU)
    statuses = reply.statuses or (0,) * len(reply.names)
    return [(child, status == 0) for child, status in zip(reply.names, statuses, strict=False)]


def traverse(name: str, sender: int) -> Exchange[list[str]]:
    """pmTraversePMNS: every leaf name at or below NAME, in pmcd's order."""
    reply = _expect((yield PMNSTraversePDU(name, 0, sender)), PMNSNamesPDU)
    return list(reply.names)


def lookup_desc(pmid: int, sender: int) -> Exchange[Desc]:
    """pmLookupDesc."""
    reply = _expect((yield DescReqPDU(pmid, sender)), DescPDU)
    return reply.desc


def lookup_descs(pmids: Sequence[int], sender: int, batched: bool) -> Exchange[list[Desc | None]]:
    """pmLookupDescs: one DESC_IDS if pmcd offers it, else one DESC_REQ each; None if unknown."""
    if batched and pmids:
        reply = _expect((yield DescIdsPDU(tuple(pmids), sender)), DescsPDU)
        return [None if d.pmid == PM_ID_NULL else d for d in reply.descs]
    found: list[Desc | None] = []
    for pmid in pmids:
        reply = yield DescReqPDU(pmid, sender)
        if isinstance(reply, ErrorPDU) and reply.code in (PM_ERR_PMID, PM_ERR_NAME):
            found.append(None)
        else:
            found.append(_expect(reply, DescPDU).desc)
    return found


def instances(indom: int, sender: int) -> Exchange[list[tuple[int, str]]]:
    """pmGetInDom: (instance id, name) for each instance of INDOM."""
    reply = _expect((yield InstanceReqPDU(indom, PM_IN_NULL, None, sender)), InstancePDU)
    return list(zip(reply.insts, reply.names, strict=False))


def instance_name(indom: int, inst: int, sender: int) -> Exchange[str]:
    """pmNameInDom."""
    reply = _expect((yield InstanceReqPDU(indom, inst, None, sender)), InstancePDU)
    if not reply.names:
        raise PMError(PM_ERR_INST)
    return reply.names[0]


def instance_id(indom: int, name: str, sender: int) -> Exchange[int]:
    """pmLookupInDom."""
    reply = _expect((yield InstanceReqPDU(indom, PM_IN_NULL, name, sender)), InstancePDU)
    if not reply.insts:
        raise PMError(PM_ERR_INST)
    return reply.insts[0]


def text(ident: int, help: bool, indom: bool, sender: int, direct: bool = False) -> Exchange[str]:
    """pmLookupText / pmLookupInDomText: one-line (default) or full help for a PMID or InDom.

    DIRECT (PM_TEXT_DIRECT) takes the help text as it is, even empty, with no fallback.
    """
    kind = (PM_TEXT_HELP if help else PM_TEXT_ONELINE) | (PM_TEXT_INDOM if indom else PM_TEXT_PMID)
    if indom and ident == 0xFFFFFFFF:
        raise PMError(PM_ERR_INDOM)
    reply = yield TextReqPDU(ident, kind, sender)
    if help and not direct and not (isinstance(reply, TextPDU) and reply.text):
        # as libpcp: help text that is missing or empty falls back to the one-line text
        reply = yield TextReqPDU(ident, kind & ~PM_TEXT_HELP | PM_TEXT_ONELINE, sender)
    return _expect(reply, TextPDU).text


def labels(ident: int, kind: int, sender: int) -> Exchange[tuple[LabelSet, ...]]:
    """Label sets at one level of the hierarchy (a PM_LABEL_* kind) for IDENT."""
    reply = _expect((yield LabelReqPDU(ident, kind, sender)), LabelPDU)
    return reply.sets


def fetch(
    pmids: Sequence[int], ctxid: int, sender: int, profile: ProfilePDU | None, highres: bool
) -> Exchange[Result]:
    """pmFetch: the values of PMIDS, after sending PROFILE if it changed since the last."""
    if profile is not None:
        yield NoReply(profile)
    if highres:
        reply = _expect((yield HighResFetchPDU(ctxid, tuple(pmids), sender)), HighResResultPDU)
    else:
        reply = _expect((yield FetchPDU(ctxid, tuple(pmids), sender)), ResultPDU)
    return reply.result


def store(result: Result, sender: int) -> Exchange[None]:
    """pmStore: send RESULT's values; pmcd's ERROR says whether every agent took them."""
    reply = yield ResultPDU(result, sender)
    if not isinstance(reply, ErrorPDU):
        raise PMError(PM_ERR_IPC, f"unexpected {type(reply).__name__} from pmcd")
    if reply.code < 0:
        raise PMError(reply.code)
    return None
