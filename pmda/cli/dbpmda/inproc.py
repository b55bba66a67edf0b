"""dbpmda's in-process agents, its DSO mode (dso.c) for Python agents: request records
handed straight to a loaded agent (`Agent.handle`), no bytes, with that mode's messages
("Error: DSO desc() failed: ...")."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.errors import (
    PM_ERR_GENERIC,
    PM_ERR_IPC,
    PM_ERR_NOTCONN,
    PM_ERR_VALUE,
    PMError,
    pmErrStr,
)
from purepcp.pmapi.ids import pmIDStr, pmInDomStr
from purepcp.pmapi.pdu.constants import PM_TEXT_HELP, PM_TEXT_ONELINE
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.values import Result

from .driver import Driver, child_lines, text_line
from .fmt import desc_text, instance_lines, label_lines
from .gram import ATTR_NAMES

if TYPE_CHECKING:
    from .main import Session


class InProcAgent(Driver):
    """A Python agent loaded into dbpmda, driven with request records (no bytes)."""

    dso = True

    def __init__(self, session: Session, name: str, agent: Any, interface: int = 7) -> None:
        super().__init__(session)
        self.name = name
        self.agent = agent
        self.interface = interface  # the DSO interface version its status reports

    def call(self, pdu: Any, want: type | None) -> Any:
        """The agent's reply to PDU: a WANT record, or a negative status (an error)."""
        try:
            reply = self.agent.handle(pdu)
        except Exception as exc:  # the agent's bug: report it on one line, carry on
            self.session.output.err(f"dbpmda: agent raised {type(exc).__name__}: {exc}\n")
            return PM_ERR_GENERIC
        if want is None:
            return reply.code if isinstance(reply, ErrorPDU) else 0
        if isinstance(reply, want):
            return reply
        if isinstance(reply, ErrorPDU):
            return reply.code if reply.code < 0 else PM_ERR_GENERIC
        return PM_ERR_IPC

    def failed(self, op: str, sts: int) -> int:
        self.out(f"Error: DSO {op}() failed: {pmErrStr(sts)}\n")
        return sts

    def close(self) -> None:
        self.call(ErrorPDU(PM_ERR_NOTCONN), None)
        with contextlib.suppress(Exception):
            self.agent.stop()

    def _desc(self, pmid: int) -> Any:
        got = self.call(DescReqPDU(pmid), DescPDU)
        if isinstance(got, DescPDU) and "pdu" in self.session.debug:
            self.out(desc_text(got.desc))
        return got

    def describe(self, pmid: int) -> int:
        """The `desc` command: the descriptor, or why not."""
        got = self._desc(pmid)
        if not isinstance(got, DescPDU):
            return self.failed("desc", got)
        self.out(desc_text(got.desc))
        return 0

    def send_profile(self, announce: bool = False) -> None:
        if self.session.profile_changed:
            if announce:
                self.out("Sending Profile...\n")
            self.call(self.session.profile.pdu(), None)
            self.session.profile_changed = False

    def fetch(self, pmids: list[int]) -> int:
        descs = None
        if self.session.get_desc or self.session.get_iname:
            descs = []
            for pmid in pmids:
                got = self._desc(pmid)
                if not isinstance(got, DescPDU):
                    return self.failed("desc", got)
                descs.append(got.desc)
        self.send_profile()
        got = self.call(FetchPDU(0, tuple(pmids)), ResultPDU)
        if not isinstance(got, ResultPDU):
            return self.failed("fetch", got)
        self.print_fetched(got.result, descs, self.iname)
        return 0

    def iname(self, indom: int, inst: int) -> str | None:
        got = self.call(InstanceReqPDU(indom, inst), InstancePDU)
        if not isinstance(got, InstancePDU):
            self.failed("instance", got)
            return None
        if len(got.insts) != 1:
            self.out(f"Warning: numinst={len(got.insts)}, not 1 as expected\n")
        return got.names[0] if got.names else ""

    def instance(self, indom: int, inst: int, name: str | None) -> int:
        self.out(f"pmInDom: {pmInDomStr(indom)}\n")
        got = self.call(InstanceReqPDU(indom, uint32(inst), name), InstancePDU)
        if not isinstance(got, InstancePDU):
            return self.failed("instance", got)
        self.out(instance_lines(got.insts, got.names))
        return 0

    def store(self, pmid: int, text: str) -> int:
        self.out(f"PMID: {pmIDStr(pmid)}\nGetting description...\n")
        got = self._desc(pmid)
        if not isinstance(got, DescPDU):
            return self.failed("desc", got)
        desc = got.desc
        self.send_profile(announce=True)
        self.out("Getting Result Structure...\n")
        fetched = self.call(FetchPDU(0, (desc.pmid,)), ResultPDU)
        if not isinstance(fetched, ResultPDU):
            return self.failed("fetch", fetched)
        if "fetch" in self.session.debug:
            self.print_fetched(fetched.result, [desc], self.iname)
        if not fetched.result.vsets:
            self.out(f"Error: {pmIDStr(pmid)} not available!\n")
            return PM_ERR_VALUE
        new = self.fill_values(fetched.result.vsets[0], desc, pmid, text)
        if new is None:
            return PM_ERR_VALUE
        result = Result(fetched.result.timestamp, (new, *fetched.result.vsets[1:]))
        sts = self.call(ResultPDU(result), None)
        if sts < 0:
            return self.failed("store", sts)
        return 0

    def text(self, ident: int, kind: int) -> int:
        sts = 0
        for first in (True, False):
            ttype = kind | (PM_TEXT_ONELINE if first else PM_TEXT_HELP)
            got = self.call(TextReqPDU(ident, ttype), TextPDU)
            if isinstance(got, TextPDU):
                self.out(text_line(got.text, first))
                sts = 0
            else:
                sts = self.failed("text", got)
        return sts

    def label(self, label_type: int, ident: int, indom: int) -> int:
        ident = self.heading(label_type, ident, indom)
        got = self.call(LabelReqPDU(ident, label_type), LabelPDU)
        if not isinstance(got, LabelPDU):
            return self.failed("label", got)
        if not got.sets:
            self.out("Info: DSO label() returns 0\n")
        self.out(label_lines(got.sets))
        return len(got.sets)

    def pmns_name(self, pmid: int) -> int:
        self.out(f"PMID: {pmIDStr(pmid)}\n")
        got = self.call(PMNSIdsPDU(0, (pmid,)), PMNSNamesPDU)
        if not isinstance(got, PMNSNamesPDU):
            return self.failed("name", got)
        if not got.names:
            self.out("Warning: DSO name() returns 0\n")
        self.out("".join(f"   {n}\n" for n in got.names))
        return len(got.names)

    def pmid(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        got = self.call(PMNSNamesPDU((name,)), PMNSIdsPDU)
        if isinstance(got, PMNSIdsPDU) and (got.status < 0 or not got.pmids):
            got = got.status if got.status < 0 else PM_ERR_IPC
        if not isinstance(got, PMNSIdsPDU):
            return self.failed("pmid", got)
        self.out(f"   {pmIDStr(got.pmids[0])}\n")
        return 0

    def _children(self, pdu: Any) -> int:
        got = self.call(pdu, PMNSNamesPDU)
        if not isinstance(got, PMNSNamesPDU):
            return self.failed("children", got)
        if not got.names:
            self.out("Warning: DSO children() returns 0\n")
        self.out(child_lines(got))
        return len(got.names)

    def children(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        return self._children(PMNSChildPDU(name, 1))

    def traverse(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        return self._children(PMNSTraversePDU(name))

    def attr(self, attr: int, value: str | None) -> int:
        self.out(
            f"Attribute: {ATTR_NAMES.get(attr, '')}={value if value is not None else chr(39) * 2}\n"
        )
        raw = b"" if value is None else value.encode("utf-8", "surrogateescape") + b"\0"
        sts = self.call(AttrPDU(attr, raw), None)
        if sts < 0:
            return self.failed("attribute", sts)
        self.out("Success\n")
        return 0

    def dynamic_pmid(self, name: str, pmid: int) -> int:
        got = self.call(PMNSNamesPDU((name,)), PMNSIdsPDU)
        if isinstance(got, PMNSIdsPDU):
            if got.status < 0:
                raise PMError(got.status)
            return got.pmids[0] if got.pmids else pmid
        raise PMError(got)

    def status_lines(self, pid: int) -> str:
        return (
            "Connection:             dso\n"
            f"DSO Interface Version:  {self.interface}\nPMDA PMAPI Version:     2\n"
        )


__all__ = ["InProcAgent"]
