"""Label clauses: "label context|domain|cluster|item|indom|instances ... { ... }".

A clause picks the archive's label sets of one kind (optionally one label name,
value or instance), then deletes them, renames a label, changes a value, moves them
to another identifier or instance, or adds a NEW label.  Messages and their quirks
(a value clause's complaints speak of a cluster in every kind but item, indom and
instances) are PCP's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntFlag
from typing import TYPE_CHECKING

from purepcp.pmapi.ids import (
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmID_item,
    pmIDStr,
    pmInDom_build,
    pmInDom_domain,
    pmInDom_serial,
    pmInDomStr,
)
from purepcp.pmapi.labels import LabelSet, add_labels

if TYPE_CHECKING:
    from .parser import Parser

PM_ID_NULL = 0xFFFFFFFF
CONTEXT, DOMAIN, INDOM, CLUSTER, ITEM, INSTANCES = 1, 2, 4, 8, 16, 32
DYNAMIC_PMID = 511


class LabelFlag(IntFlag):
    ACTIVE = 0x01
    ID = 0x02
    LABEL = 0x04
    INSTANCE = 0x08
    VALUE = 0x10
    DELETE = 0x20
    NEW = 0x40


@dataclass
class LabelSpec:
    old_type: int
    old_id: int
    old_instance: int
    old_label: str | None
    old_value: str | None
    new_type: int = 0
    new_id: int = 0
    new_instance: int = 0
    new_label: str | None = None
    new_value: str | None = None
    new_labels: LabelSet | None = None
    flags: LabelFlag = field(default_factory=lambda: LabelFlag(0))
    ip: object = None  # the instance domain spec whose instance changes apply

    def __post_init__(self) -> None:
        self.new_type, self.new_id, self.new_instance = (
            self.old_type,
            self.old_id,
            self.old_instance,
        )


def _u(n: int) -> int:
    return n & 0xFFFFFFFF


def what(spec: LabelSpec) -> str:
    """How PCP's walk complaints name a spec's target."""
    t, i = spec.old_type, spec.old_id
    if t & CONTEXT:
        return "context label"
    if t & DOMAIN:
        return f"label for domain {pmID_domain(i)}"
    if t & CLUSTER:
        return f"label for cluster {pmID_domain(i)}.{pmID_cluster(i)}"
    if t & ITEM:
        return f"label for metric {pmIDStr(i)}"
    if t & INDOM:
        return f"label for indom {pmInDomStr(i)}"
    return f"label for the instances of indom {pmInDomStr(i)}"


def start_label(p: Parser, type_: int, ident: int, instance: int, inst_name: str | None,
                label: str | None, value: str | None) -> LabelSpec | None:  # fmt: skip
    """Find or make the change spec for these label sets (PCP's start_label)."""
    if inst_name is not None:
        from .words import inst_name_eq

        members = p.source.indom_members(ident)
        if members is None:
            p.wwarn(
                f"Instance domain {pmInDomStr(ident)}: Instance domain identifier not defined"
                " in the PCP archive log"
            )
            return None
        found = next((i for i, n in zip(*members, strict=True) if inst_name_eq(n, inst_name) > 0),
                     None)  # fmt: skip
        if found is None:
            p.wwarn(f'Instance domain {pmInDomStr(ident)}: no instance "{inst_name}" found')
            return None
        instance = found
    for spec in p.rules.labels:
        if (
            spec.old_type == type_
            and spec.old_id == ident
            and instance in (-1, spec.old_instance)
            and (label is None or spec.old_label == label)
            and (value is None or spec.old_value == value)
        ):
            return spec
    return create_label(p, type_, ident, instance, label, value)


def create_label(p: Parser, type_: int, ident: int, instance: int, label: str | None,
                 value: str | None) -> LabelSpec:  # fmt: skip
    spec = LabelSpec(type_, ident, instance, label, value)
    p.rules.labels.insert(0, spec)
    return spec


class LabelClauses:
    """The label clause part of the parser (its state and its grammar)."""

    def __init__(self, p: Parser) -> None:
        self.p = p
        self.name: str | None = None
        self.value: str | None = None
        self.instance = -1
        self.inst_name: str | None = None
        self.current: LabelSpec | None = None
        self.walk_count = 0
        self.ident = 0

    # -- walking -----------------------------------------------------------------------

    def walk(self, flag: LabelFlag, which: str, dupok: bool = False) -> Iterator[LabelSpec]:
        p = self.p
        if self.walk_count > 1:
            targets = [s for s in p.rules.labels if s.flags & LabelFlag.ACTIVE]
        else:
            targets = [self.current] if self.current is not None else []
        for spec in targets:
            spec.flags &= ~LabelFlag.ACTIVE
            if not dupok and spec.flags & flag:
                raise p.error(f"Duplicate {which} clause for {what(spec)}")
            if flag != LabelFlag.DELETE:
                if spec.flags & LabelFlag.DELETE:
                    raise p.error(f"Conflicting {which} clause for deleted {what(spec)}")
            elif spec.flags & ~LabelFlag.DELETE:
                raise p.error(f"Conflicting delete and other clauses for {what(spec)}")
            yield spec

    def deactivate(self) -> None:
        for _ in self.walk(LabelFlag.ACTIVE, "active"):
            pass

    # -- the clause head ---------------------------------------------------------------

    def jsonname(self, tok) -> str:
        return tok.text if tok.kind == "JSON_STRING" else f'"{tok.value}"'

    def optjsonvalue(self) -> str | None:
        p = self.p
        tok = p.peek()
        if tok.kind in ("JSON_STRING", "STRING"):
            return self.jsonname(p.take())
        if tok.kind in ("JSON_TRUE", "JSON_FALSE", "JSON_NULL"):
            return p.take().text
        if tok.kind in ("NUMBER", "JSON_NUMBER"):
            return p.take().text
        if tok.kind == "MINUS":
            p.take()
            return "-" + p.expect("NUMBER", "JSON_NUMBER").text
        return None

    def jsonvalue(self) -> str:
        value = self.optjsonvalue()
        if value is None:
            raise self.p.error("syntax error")
        return value

    def details(self) -> None:
        """optlabeldetails: a label name (or *) and a value (or *), both optional."""
        p = self.p
        tok = p.peek()
        if tok.kind in ("JSON_STRING", "STRING", "LABEL_STAR"):
            p.take()
            if p.accept("LABEL_STAR"):
                self.value = None
            else:
                self.value = self.optjsonvalue()
            self.name = None if tok.kind == "LABEL_STAR" else self.jsonname(tok)
        else:
            self.name = self.value = None

    def select(self, kind: int, match) -> None:
        """Make a change spec for every label set of KIND whose identifier MATCH takes."""
        p = self.p
        self.current = None
        found = 0
        inner = p.source.labels.get(kind)
        for ident in inner.keys() if inner is not None else ():
            if not match(ident):
                continue
            inst = self.instance if kind == INSTANCES else 0
            name = self.inst_name if kind == INSTANCES else None
            spec = start_label(p, kind, ident, inst, name, self.name, self.value)
            if spec is not None:
                spec.flags |= LabelFlag.ACTIVE
                self.current = spec
                found += 1
        self.walk_count = found

    def clause(self) -> None:
        p = self.p
        kind = p.take().kind
        handler = {"CONTEXT": self.context, "DOMAIN": self.domain, "CLUSTER": self.cluster,
                   "ITEM": self.item, "INDOM": self.indom,
                   "INSTANCES": self.instances}.get(kind)  # fmt: skip
        if handler is None:
            raise p.error("syntax error")
        handler()

    def _domain_number(self, tok) -> int:
        from .words import atoi

        domain = atoi(tok.text)
        if domain < 1 or domain > DYNAMIC_PMID:
            raise self.p.error(f"Illegal domain field ({domain}) for pmid")
        if domain == DYNAMIC_PMID:
            self.p.warn(f"Dynamic metric domain field ({domain}) for pmid")
        return domain

    def _cluster_id(self, tok) -> int:
        from .words import atoi

        head, _, tail = tok.text.partition(".")
        domain = self._domain_number(tok.__class__(tok.kind, head))
        if tok.kind == "INDOM_STAR":
            self.p.star_metric = 1
            return pmID_build(domain, 0, 0)
        cluster = atoi(tail)
        if cluster < 0 or cluster >= 4096:
            raise self.p.error(f"Illegal cluster field ({cluster}) for pmid")
        self.p.star_metric = 0
        return pmID_build(domain, cluster, 0)

    def context(self) -> None:
        self.details()
        self.select(CONTEXT, lambda ident: True)
        self.body(CONTEXT)

    def domain(self) -> None:
        p = self.p
        domain = self._domain_number(p.expect("NUMBER"))
        p.star_metric = 0
        self.details()
        self.ident = domain
        self.select(DOMAIN, lambda ident: ident == domain)
        self.body(DOMAIN)

    def cluster(self) -> None:
        p = self.p
        cluster = self._cluster_id(p.expect("FLOAT", "INDOM_STAR"))
        self.details()
        self.ident = cluster
        if p.star_metric:
            star = pmID_domain(cluster)
            self.select(CLUSTER, lambda ident: pmID_domain(ident) == star)
        else:
            self.select(CLUSTER, lambda ident: ident == cluster)
        self.body(CLUSTER)

    def item(self) -> None:
        p = self.p
        pmid = p.pmid_or_name(p.expect("PMID_INT", "PMID_STAR", "GNAME"))
        self.details()
        self.ident = pmid
        if pmid == PM_ID_NULL:
            self.current, self.walk_count = None, 0
        elif p.star_metric:
            domain = pmID_domain(pmid)
            cluster = pmID_cluster(pmid) if p.star_metric == 1 else PM_ID_NULL

            def match(ident: int) -> bool:
                return pmID_domain(ident) == domain and (
                    cluster == PM_ID_NULL or cluster == pmID_cluster(ident)
                )

            self.select(ITEM, match)
        else:
            self.select(ITEM, lambda ident: ident == pmid)
        self.body(ITEM)

    def _indom_head(self, kind: int) -> None:
        p = self.p
        indom = p.indom_int(p.expect("FLOAT", "INDOM_STAR"))
        if kind == INSTANCES:
            tok = p.peek()
            from .words import atoi

            if tok.kind == "STRING":
                p.take()
                self.details()
                self.instance, self.inst_name = -1, str(tok.value)
            elif tok.kind == "NUMBER":
                p.take()
                self.details()
                self.instance, self.inst_name = atoi(tok.text), None
            elif tok.kind == "LABEL_STAR":
                p.take()
                self.details()
                self.instance, self.inst_name = -1, None
            else:
                self.instance, self.inst_name = -1, None
                self.name = self.value = None
        else:
            self.details()
        self.ident = indom
        if p.star_indom:
            star = pmInDom_domain(indom)
            self.select(kind, lambda ident: pmInDom_domain(ident) == star)
        else:
            self.select(kind, lambda ident: ident == indom)
        self.body(kind)

    def indom(self) -> None:
        self._indom_head(INDOM)

    def instances(self) -> None:
        self._indom_head(INSTANCES)

    # -- the clause body ---------------------------------------------------------------

    def body(self, kind: int) -> None:
        p = self.p
        p.expect("LBRACE")
        if p.accept("RBRACE"):
            self.deactivate()
            return
        while True:
            tok = p.take()
            if tok.kind == "DELETE":
                for spec in self.walk(LabelFlag.DELETE, "delete"):
                    spec.flags |= LabelFlag.DELETE
            elif tok.kind == "LABEL":
                p.expect("ASSIGN")
                self.change_label(kind, self.jsonname(p.expect("JSON_STRING", "STRING")))
            elif tok.kind == "VALUE":
                p.expect("ASSIGN")
                self.change_value(kind, self.jsonvalue())
            elif tok.kind == "NEW":
                self.new_label(kind)
            elif kind == INSTANCES and tok.kind == "INSTANCE":
                p.expect("ASSIGN")
                self.change_instance(p.expect("NUMBER").text)
            elif _ID_KEYWORD.get(kind) == tok.kind:
                p.expect("ASSIGN")
                self.change_id(kind)
            else:
                raise p.error("syntax error")
            if p.accept("RBRACE"):
                return

    def change_label(self, kind: int, name: str) -> None:
        for spec in self.walk(LabelFlag.LABEL, "label"):
            if spec.new_label is not None:
                raise self.p.error(_LABEL_DUP[kind](spec))
            if spec.old_label is not None and spec.old_label == name:
                self.p.wwarn(_LABEL_SAME[kind](spec))
            else:
                spec.new_label = name
                spec.flags |= LabelFlag.LABEL

    def change_value(self, kind: int, value: str) -> None:
        for spec in self.walk(LabelFlag.VALUE, "value"):
            if spec.new_value is not None:
                raise self.p.error(_VALUE_DUP[kind](spec))
            if spec.old_value is not None and spec.old_value == value:
                self.p.wwarn(_VALUE_SAME[kind](spec))
            else:
                spec.new_value = value
                spec.flags |= LabelFlag.VALUE

    def change_instance(self, text: str) -> None:
        from .words import atoi

        for spec in self.walk(LabelFlag.ID, "id"):
            if spec.new_instance != spec.old_instance:
                raise self.p.error(
                    f"Duplicate label clause for instances of indom {pmInDomStr(spec.old_id)}"
                )
            instance = atoi(text)
            if instance != spec.old_instance:
                spec.new_instance = instance
                spec.flags |= LabelFlag.INSTANCE
            else:
                self.p.wwarn(
                    f"Label for instance domain {pmInDomStr(spec.old_id)} instance"
                    f" {spec.old_instance}: instance: No change"
                )

    def change_id(self, kind: int) -> None:
        p = self.p
        if kind == DOMAIN:
            from .words import atoi

            target = atoi(p.expect("NUMBER").text)
        elif kind == CLUSTER:
            target = self._cluster_id(p.expect("FLOAT", "INDOM_STAR"))
        elif kind == ITEM:
            target = p.pmid_int(p.expect("PMID_INT", "PMID_STAR"))
        else:
            target = p.indom_int(p.expect("FLOAT", "INDOM_STAR"))
        for spec in self.walk(LabelFlag.ID, "id"):
            old = spec.old_id
            if kind in (INDOM, INSTANCES) and spec.new_id != old:
                what_ = "indom" if kind == INDOM else "instances of indom"
                raise p.error(f"Duplicate label clause for {what_} {pmInDomStr(old)}")
            new = self._new_id(kind, target, old)
            if new == old:
                p.wwarn(_ID_SAME[kind](spec))
            else:
                spec.new_id = new
                spec.flags |= LabelFlag.ID

    def _new_id(self, kind: int, target: int, old: int) -> int:
        p = self.p
        if kind == DOMAIN:
            return target
        if kind == CLUSTER:
            cluster = pmID_cluster(old) if p.star_metric else pmID_cluster(target)
            return pmID_build(pmID_domain(target), cluster, PM_ID_NULL & 0x3FF)
        if kind == ITEM:
            if p.star_metric == 1:
                return pmID_build(pmID_domain(target), pmID_cluster(target), pmID_item(old))
            if p.star_metric == 2:
                return pmID_build(pmID_domain(target), pmID_cluster(old), pmID_item(old))
            return target
        if p.star_indom:
            return pmInDom_build(pmInDom_domain(target), pmInDom_serial(old))
        return target

    # -- NEW labels --------------------------------------------------------------------

    def new_label(self, kind: int) -> None:
        p = self.p
        name = self.jsonname(p.expect("JSON_STRING", "STRING"))
        value = self.jsonvalue()
        if self.name or self.value:
            p.warn(
                "The target label name and value must both not be specified for a NEW label"
                " and will be ignored"
            )
        self.name, self.value = name, value
        self.deactivate()
        text = f"{{{name}:{value}}}"
        targets = self._new_targets(kind)
        if not targets and kind != CONTEXT:
            noun = {DOMAIN: "domain", CLUSTER: "cluster", ITEM: "metric", INDOM: "indom",
                    INSTANCES: "indom instance"}[kind]  # fmt: skip
            p.warn(f"No matching {noun} for new label {text}")
        for ident, inst in targets:
            spec = next(
                (s for s in p.rules.labels
                 if s.old_type == kind and s.old_id == ident and s.old_label is None
                 and (kind != INDOM or s.old_instance == -1)
                 and (kind != INSTANCES or s.old_instance == inst)),
                None,
            )  # fmt: skip
            if spec is None:
                spec = create_label(p, kind, ident, inst if kind == INSTANCES else 0, None, None)
            try:
                spec.new_labels = add_labels(spec.new_labels, text, kind)
            except Exception as exc:
                noun = {CONTEXT: "context", DOMAIN: "domain", CLUSTER: "cluster",
                        ITEM: "metric item", INDOM: "indom",
                        INSTANCES: "indom instance"}[kind]  # fmt: skip
                raise p.error(f"Unable to add new {noun} label {text}: {exc}") from None
            spec.new_labels = LabelSet(_u(inst if kind == INSTANCES else 0),
                                       spec.new_labels.nlabels, spec.new_labels.json,
                                       spec.new_labels.labels)  # fmt: skip
            spec.flags |= LabelFlag.NEW

    def _new_targets(self, kind: int) -> list[tuple[int, int]]:
        p = self.p
        src = p.source
        if kind == CONTEXT:
            return [(PM_ID_NULL, -1)]
        out: list[tuple[int, int]] = []
        if kind == DOMAIN:
            for pmid in src.descs:
                if pmID_domain(pmid) == self.ident:
                    return [(self.ident, -1)]
            return []
        if kind in (CLUSTER, ITEM):
            seen: set[int] = set()
            for pmid in src.descs:
                if pmID_domain(pmid) != pmID_domain(self.ident):
                    continue
                if kind == CLUSTER:
                    if not p.star_metric and pmID_cluster(pmid) != pmID_cluster(self.ident):
                        continue
                    ident = pmID_build(pmID_domain(pmid), pmID_cluster(pmid), 0)
                else:
                    if p.star_metric < 2 and pmID_cluster(pmid) != pmID_cluster(self.ident):
                        continue
                    if not p.star_metric and pmid != self.ident:
                        continue
                    ident = pmid
                if ident not in seen:
                    seen.add(ident)
                    out.append((ident, -1))
                if not p.star_metric:
                    break
            return out
        for indom in src.indoms:
            if pmInDom_domain(indom) != pmInDom_domain(self.ident):
                continue
            if not p.star_indom and pmInDom_serial(indom) != pmInDom_serial(self.ident):
                continue
            if kind == INDOM:
                out.append((indom, -1))
            else:
                for record in src.indoms.get(indom):
                    for inst in record.insts:
                        if self.instance != -1 and inst != self.instance:
                            continue
                        out.append((indom, inst))
            if not p.star_indom:
                break
        return out


_ID_KEYWORD = {DOMAIN: "DOMAIN", CLUSTER: "CLUSTER", ITEM: "ITEM", INDOM: "INDOM",
               INSTANCES: "INSTANCES"}  # fmt: skip


def _cl(s: LabelSpec) -> str:
    return f"{pmID_domain(s.old_id)}.{pmID_cluster(s.old_id)}"


_LABEL_DUP = {
    CONTEXT: lambda s: "Duplicate label clause for context",
    DOMAIN: lambda s: f"Duplicate label clause for domain {s.old_id}",
    CLUSTER: lambda s: f"Duplicate label clause for cluster {_cl(s)}",
    ITEM: lambda s: f"Duplicate label clause for metric {pmIDStr(s.old_id)}",
    INDOM: lambda s: f"Duplicate label clause for indom {pmInDomStr(s.old_id)}",
    INSTANCES: lambda s: f"Duplicate label clause for instances of indom {pmInDomStr(s.old_id)}",
}
_LABEL_SAME = {
    CONTEXT: lambda s: "Label for context: label: No change",
    DOMAIN: lambda s: f"Label for domain {s.old_id}: label: No change",
    CLUSTER: lambda s: f"Label for cluster {_cl(s)}: label: No change",
    ITEM: lambda s: f"Label for metric {pmIDStr(s.old_id)}: label: No change",
    INDOM: lambda s: f"Label for instance domain {pmInDomStr(s.old_id)}: label: No change",
    INSTANCES: lambda s: (
        f"Label for instances of instance domain {pmInDomStr(s.old_id)}: label: No change"
    ),
}
_VALUE_DUP = {
    CONTEXT: lambda s: f"Duplicate value clause for cluster {_cl(s)}",
    DOMAIN: lambda s: f"Duplicate value clause for cluster {_cl(s)}",
    CLUSTER: lambda s: f"Duplicate value clause for cluster {_cl(s)}",
    ITEM: lambda s: f"Duplicate value clause for metric {pmIDStr(s.old_id)}",
    INDOM: lambda s: f"Duplicate value clause for indom {pmInDomStr(s.old_id)}",
    INSTANCES: lambda s: f"Duplicate value clause for instances of indom {pmInDomStr(s.old_id)}",
}
_VALUE_SAME = {
    CONTEXT: lambda s: f"Label for cluster {_cl(s)}: value: No change",
    DOMAIN: lambda s: f"Label for cluster {_cl(s)}: value: No change",
    CLUSTER: lambda s: f"Label for cluster {_cl(s)}: value: No change",
    ITEM: lambda s: f"Label for metric {pmIDStr(s.old_id)}: value: No change",
    INDOM: lambda s: f"Label for instance domain {pmInDomStr(s.old_id)}: value: No change",
    INSTANCES: lambda s: (
        f"Label for instances of instance domain {pmInDomStr(s.old_id)}: value: No change"
    ),
}
_ID_SAME = {
    DOMAIN: lambda s: f"Label for metric domain: {s.old_id}: No change",
    CLUSTER: lambda s: f"Label for cluster: {_cl(s)}: No change",
    ITEM: lambda s: f"Label for metric: {pmIDStr(s.old_id)}: item: No change",
    INDOM: lambda s: f"Label for instance domain {pmInDomStr(s.old_id)}: indom: No change",
    INSTANCES: lambda s: f"Label for instance domain {pmInDomStr(s.old_id)}: indom: No change",
}
