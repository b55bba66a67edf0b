"""What dbpmda's two kinds of agent connection share: storing values (fillValues), the
label commands' headings, printing a fetch, and the text of help and children replies.

The kinds: `daemon.DaemonAgent` speaks PDUs over a pipe (a child process) or a socket,
as dbpmda's pmda.c does, with its messages ("Error PDU: ...");
`inproc.InProcAgent` hands request records straight to a Python agent loaded into this
process (`Agent.handle`), the counterpart of dbpmda's DSO mode (dso.c), with that
mode's messages ("Error: DSO desc() failed: ...").  Both implement the same operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.ids import PM_IN_NULL, pmIDStr, pmInDomStr
from purepcp.pmapi.pdu.records import PMNSNamesPDU
from purepcp.pmapi.values import Result, ValueSet

from .fmt import cluster_text, format_value, print_result, values_of
from .state import StoreValueError, parse_store_value

if TYPE_CHECKING:
    from .main import Session

PM_LABEL_INDOM, PM_LABEL_CLUSTER, PM_LABEL_ITEM, PM_LABEL_INSTANCES = 4, 8, 16, 32


class Driver:
    """What both kinds of connection share."""

    dso = False
    name = ""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.out = session.output.out

    def heading(self, label_type: int, ident: int, indom: int) -> int:
        """Print a label request's heading; the ident to send."""
        if label_type & PM_LABEL_INDOM:
            self.out(f"pmInDom: {pmInDomStr(indom)}\n")
            return indom
        if label_type & PM_LABEL_CLUSTER:
            self.out(f"Cluster: {cluster_text(ident)}\n")
            return ident
        if label_type & PM_LABEL_ITEM:
            self.out(f"PMID: {pmIDStr(ident)}\n")
            return ident
        if label_type & PM_LABEL_INSTANCES:
            self.out(f"Instances of pmInDom: {pmInDomStr(indom)}\n")
            return indom
        return PM_IN_NULL

    def fill_values(self, vs: ValueSet, desc: Desc, pmid: int, text: str) -> ValueSet | None:
        """fillValues: show each old value -> the new one; the value set to send, or None."""
        try:
            atom = parse_store_value(text, desc.type)
        except StoreValueError as exc:
            if exc.message:
                self.out(exc.message + "\n")
            return None
        if vs.numval == 0:
            self.out(f"Error: {pmIDStr(pmid)} not available!\n")
            return None
        if vs.numval < 0:
            self.out(f"Error: {pmIDStr(pmid)}: {pmErrStr(vs.numval)}\n")
            return None
        try:
            new = ValueSet.of_atoms(vs.pmid, desc.type, [(inst, atom) for inst in vs.insts])
        except PMError as exc:
            self.out(f"Error: Decoding value: {pmErrStr(exc.code)}\n")
            return None
        olds = values_of(vs)
        news = values_of(new)
        for k, ((_, old), (_, value)) in enumerate(zip(olds, news, strict=True)):
            where = f"{pmIDStr(pmid)} [{k}]: " if vs.numval > 1 else f"{pmIDStr(pmid)}: "
            before = format_value(vs.valfmt, desc.type, old)
            after = format_value(new.valfmt, desc.type, value)
            self.out(f"{where}{before} -> {after}\n")
        return new

    def print_fetched(self, result: Result, descs: list[Desc] | None, iname: Callable) -> None:
        print_result(
            self.out,
            result,
            self.session.metric_names,
            ptr=id(result),
            dso=self.dso,
            descs=descs,
            iname=iname if self.session.get_iname else None,
        )

    def close(self) -> None:
        raise NotImplementedError


def text_line(text: str, oneline: bool) -> str:
    """A help text reply as dbpmda shows it: the one-liner in [], placeholders if empty."""
    text = text.split("\0", 1)[0]
    if oneline:
        return f"[{text}]\n" if text else "[<no one line help text specified>]\n"
    return f"{text}\n" if text else "<no help text specified>\n"


def child_lines(names: PMNSNamesPDU) -> str:
    statuses = names.statuses or (0,) * len(names.names)
    return "".join(
        f"   {'non-leaf' if s == 1 else 'leaf':>8.8} {n}\n"
        for n, s in zip(names.names, statuses, strict=True)
    )


__all__ = ["PM_LABEL_INSTANCES", "Driver", "child_lines", "text_line"]
