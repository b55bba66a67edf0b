"""A statement's metric list, built as pmlc builds it (util.c): names looked up in
the logged host's pmcd, instances checked against each metric's instance domain now,
and the warnings and errors pmlc gives on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_INDOM, PM_ERR_INST, PM_ERR_NAME, PM_ERR_PMID, PMError
from purepcp.pmapi.ids import PM_INDOM_NULL, pmInDomStr

if TYPE_CHECKING:
    from .lexer import Output

PM_TYPE_NOSUPPORT = -1


@dataclass
class InDom:
    """An instance domain's instances, as pmGetInDom gave them."""

    indom: int
    insts: list[int]
    names: list[str]


@dataclass
class Metric:
    """One metric of the list (metric_t)."""

    name: str
    pmid: int
    indom: int  # an index into the list's InDoms, -1: none
    insts: list[int] = field(default_factory=list)
    has_insts: bool = False
    selected: bool = False
    new: bool = False


class MetricList:
    """The metrics and instances of one statement (PCP's metric[] and indom[])."""

    def __init__(self, ctx: object, out: Output) -> None:
        self.ctx = ctx
        self.out = out
        self.metrics: list[Metric] = []
        self.indoms: list[InDom] = []
        self.status = 0  # metric_cnt: the count so far, or an error
        self._had_insts = False
        self._first_inst = True
        self._done_inst_msg = False

    # -- a group: one name (a subtree) and its instances ------------------------------------

    def begin_group(self) -> None:
        self._had_insts = False
        self._first_inst = True
        for m in self.metrics:
            m.selected = m.new = False

    def add_name(self, name: str) -> int:
        """A name from the statement: every leaf below it added; the status (< 0: bad)."""
        try:
            leaves = self.ctx.traverse(name)  # type: ignore[attr-defined]
        except PMError as exc:
            self.status = exc.code
            return exc.code
        if not leaves:
            self.status = PM_ERR_NAME
            return PM_ERR_NAME
        for leaf in leaves:
            self._add_metric(leaf)
        return self.status

    def _add_metric(self, name: str) -> None:
        if self.status < 0:
            return
        try:
            (pmid,) = self.ctx.lookup_names([name])  # type: ignore[attr-defined]
        except PMError as exc:
            self.status = exc.code
            return
        for m in self.metrics:
            if m.pmid == pmid:
                m.selected = True
                return
        try:
            desc = self.ctx.lookup_desc(pmid)  # type: ignore[attr-defined]
        except PMError as exc:
            if exc.code != PM_ERR_PMID:
                self.status = exc.code
            return
        if desc.type == PM_TYPE_NOSUPPORT:
            return
        index = -1
        if desc.indom != PM_INDOM_NULL:
            try:
                index = self._indom(desc.indom)
            except PMError as exc:
                self.status = exc.code
                return
        self.metrics.append(Metric(name, pmid, index, selected=True, new=True))
        self.status = len(self.metrics)

    def _indom(self, indom: int) -> int:
        for k, known in enumerate(self.indoms):
            if known.indom == indom:
                return k
        pairs = self.ctx.instances(indom)  # type: ignore[attr-defined]
        self.indoms.append(InDom(indom, [i for i, _ in pairs], [n for _, n in pairs]))
        return len(self.indoms) - 1

    def add_instance(self, name: str | None, number: int) -> None:
        """addinst: an instance (by NAME, else NUMBER) for the metrics of the group."""
        if self.status < 0:
            return
        self._had_insts = True
        selected = [m for m in self.metrics if m.selected]
        first = selected[0]
        if self._first_inst:
            self._first_inst = False
            if not self._same_indoms(selected):
                self.status = PM_ERR_INDOM
                return
        ip = self.indoms[first.indom]
        k = next(
            (
                j
                for j in range(len(ip.insts))
                if (
                    ip.names[j].lower() == name.lower()
                    if name is not None
                    else ip.insts[j] == number
                )
            ),
            None,
        )
        for m in selected:
            if k is None:
                self._unknown_instance(m, name, number)
                continue
            inst = ip.insts[k]
            if inst in m.insts:
                if m.has_insts:
                    if name is not None:
                        what = f"instance name {name} already specified for metric"
                    else:
                        what = f"instance number {number} already specified for"
                    self.out.stderr(f"Warning: {what} {m.name}\n")
                continue
            if m.new or m.has_insts:
                m.insts.append(inst)
                m.has_insts = True

    def _same_indoms(self, selected: list[Metric]) -> bool:
        first = selected[0]
        bad = nullindom = False
        for m in selected:
            if m.indom == -1:
                self.out.stderr(
                    f"Error: {m.name} has no instance domain but an instance was specified\n"
                )
                nullindom = True
            if m is first:
                continue
            if first.indom != m.indom:
                if not bad:
                    self.out.stderr("Error: different instance domains:\n")
                    self.out.stderr(f"    {first.name} ({self._indom_str(first)})\n")
                    bad = True
                self.out.stderr(f"    {m.name} ({self._indom_str(m)})\n")
        return not (bad or nullindom)

    def _indom_str(self, m: Metric) -> str:
        return "PM_INDOM_NULL" if m.indom == -1 else pmInDomStr(self.indoms[m.indom].indom)

    def _unknown_instance(self, m: Metric, name: str | None, number: int) -> None:
        if m.has_insts or m.new:
            self.status = PM_ERR_INST
            if name is not None:
                self.out.stderr(f"Error: metric {m.name} currently has no instance named {name}\n")
            else:
                self.out.stderr(
                    f"Error: metric {m.name} currently has no instance number {number}\n"
                )
            if not self._done_inst_msg:
                self.out.stderr(
                    "    - you may only specify metric instances active now.  However if no\n"
                    "      instances are specified, pmlogger will use all of the instances\n"
                    "      available at the time the metric is logged\n"
                )
                self._done_inst_msg = True
        else:
            what = f"instance name {name}" if name is not None else f"instance number {number}"
            self.out.stderr(
                f"Warning: {what} not currently in metric {m.name}'s instance domain\n"
                "         (getting all instances anyway)\n"
            )

    def end_group(self) -> None:
        """endmetgrp: a new metric without instances takes all; warnings for repeats."""
        if not self.metrics:
            if self.status >= 0:
                self.status = PM_ERR_PMID
            return
        for m in self.metrics:
            if not m.selected:
                continue
            if m.new:
                if m.indom != -1 and not self._had_insts:
                    m.insts = list(self.indoms[m.indom].insts)
                    m.has_insts = False
            elif m.indom == -1:
                self.out.stderr(f"Warning: {m.name} has already been specified\n")
            elif m.has_insts:
                if not self._had_insts:
                    self.out.stderr(
                        f"Warning: {m.name} had instance(s) specified previously.\n"
                        "         Using all instances since none specified this time\n"
                    )
                    m.insts = list(self.indoms[m.indom].insts)
                    m.has_insts = False
            elif not self._had_insts:
                self.out.stderr(f"Warning: already using all instances for {m.name}\n")
            else:
                self.out.stderr(
                    f"Warning: instance(s) specified for {m.name}\n"
                    "         (already using all instances)\n"
                )

    # -- the request ------------------------------------------------------------------------

    def request(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The metrics as LOG_CONTROL sends them (a singular one with PM_IN_NULL)."""
        out = []
        for m in self.metrics:
            if m.indom == -1:
                out.append((m.pmid, (-1,)))
            else:
                out.append((m.pmid, tuple(m.insts) if m.has_insts else ()))
        return tuple(out)

    def dump(self) -> str:
        """dumpmetrics: each metric with the instances the statement names (-D appl0)."""
        lines = ["     Inst  Inst Name", "    ====== ========="]
        for m in self.metrics:
            lines.append(m.name)
            if m.indom == -1:
                lines.append("           singular instance")
            else:
                ip = self.indoms[m.indom]
                for inst in m.insts if m.has_insts else ip.insts:
                    if inst in ip.insts:
                        lines.append(f"    {inst:6d} {ip.names[ip.insts.index(inst)]}")
                    else:
                        lines.append(f"    KAPOWIE! inst {inst} not found")
            lines.append("")
        return "\n".join(lines) + "\n"

    def inst_name(self, m: Metric, inst: int) -> str:
        ip = self.indoms[m.indom]
        for k, i in enumerate(ip.insts):
            if i == inst:
                return ip.names[k]
        return "???"
