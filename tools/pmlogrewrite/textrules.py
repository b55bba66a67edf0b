"""Help text clauses: "text metric|indom ID [oneline|help|*] ["old text"] { ... }".

A clause picks the archive's help text of a metric (or metrics, with wildcards) or an
instance domain, of the kinds named (one-line by default), optionally only where the
text is as quoted; then deletes it, replaces it, or moves it to another identifier.
Messages are PCP's (their "unknown" kind of text included: PCP names the kind from the
whole type word, which also holds the PMID or InDom bit).
"""

from __future__ import annotations

from collections.abc import Iterator
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

from .specs import TextFlag, TextSpec

if TYPE_CHECKING:
    from .parser import Parser

PM_TEXT_ONELINE, PM_TEXT_HELP, PM_TEXT_PMID, PM_TEXT_INDOM = 1, 2, 4, 8
_MASK = PM_TEXT_ONELINE | PM_TEXT_HELP
PM_ID_NULL = 0xFFFFFFFF


def _kind(type_: int) -> str:
    return {PM_TEXT_ONELINE: "one line", PM_TEXT_HELP: "help"}.get(type_, "unknown")


def _target(spec: TextSpec) -> str:
    if spec.old_type & PM_TEXT_PMID:
        return f"{_kind(spec.old_type)} text for metric {pmIDStr(spec.old_id)}"
    return f"{_kind(spec.old_type)} text for indom {pmInDomStr(spec.old_id)}"


def start_text(p: Parser, type_: int, ident: int, text: str | None) -> TextSpec | None:
    for spec in p.rules.texts:
        if spec.old_type == type_ and spec.old_id == ident and text in (None, spec.old_text):
            return spec
    if text is None:
        text = p.source.text(type_, ident)
        if text is None:
            if type_ & PM_TEXT_PMID:
                p.wwarn(f"Text {pmIDStr(ident)}: pmLookupText: Unknown or illegal metric"
                        " identifier")  # fmt: skip
            else:
                p.wwarn(f"Text {pmInDomStr(ident)}: pmLookupInDomText: Unknown or illegal"
                        " instance domain identifier")  # fmt: skip
            return None
    spec = TextSpec(type_, ident, text, type_, ident)
    p.rules.texts.insert(0, spec)
    return spec


class TextClauses:
    """The text clause part of the parser."""

    def __init__(self, p: Parser) -> None:
        self.p = p
        self.current: TextSpec | None = None
        self.walking = False

    def walk(self, flag: TextFlag, which: str) -> Iterator[TextSpec]:
        if self.walking:
            targets = [s for s in self.p.rules.texts if s.flags & TextFlag.ACTIVE]
        else:
            targets = [self.current] if self.current is not None else []
        for spec in targets:
            spec.flags &= ~TextFlag.ACTIVE
            if spec.flags & flag:
                raise self.p.error(f"Duplicate {which} clause for {_target(spec)}")
            if flag != TextFlag.DELETE:
                if spec.flags & TextFlag.DELETE:
                    raise self.p.error(f"Conflicting {which} clause for deleted {_target(spec)}")
            elif spec.flags & ~TextFlag.DELETE:
                raise self.p.error(f"Conflicting delete and other clauses for {_target(spec)}")
            yield spec

    def clause(self) -> None:
        p = self.p
        tok = p.take()
        if tok.kind == "METRIC":
            ident = p.pmid_or_name(p.expect("PMID_INT", "PMID_STAR", "GNAME"))
            is_metric = True
        elif tok.kind == "INDOM":
            ident = p.indom_int(p.expect("FLOAT", "INDOM_STAR"))
            is_metric = False
        else:
            raise p.error("syntax error")
        types = 0
        while (t := p.accept("TEXT_STAR", "HELP", "ONELINE")) is not None:
            types |= {"TEXT_STAR": _MASK, "HELP": PM_TEXT_HELP, "ONELINE": PM_TEXT_ONELINE}[t.kind]
        types = types or PM_TEXT_ONELINE
        old = p.accept("STRING", "TEXT_STRING")
        text = str(old.value) if old is not None else None
        self.select(is_metric, ident, types, text)
        p.expect("LBRACE")
        if p.accept("RBRACE"):
            for _ in self.walk(TextFlag.ACTIVE, "active"):
                pass
            return
        while True:
            tok = p.take()
            if tok.kind == "DELETE":
                for spec in self.walk(TextFlag.DELETE, "delete"):
                    spec.flags |= TextFlag.DELETE
            elif tok.kind == "TEXT":
                p.expect("ASSIGN")
                self.change_text(str(p.expect("STRING", "TEXT_STRING").value))
            elif tok.kind == "METRIC" and is_metric:
                p.expect("ASSIGN")
                self.change_pmid(p.pmid_int(p.expect("PMID_INT", "PMID_STAR")))
            elif tok.kind == "INDOM" and not is_metric:
                p.expect("ASSIGN")
                self.change_indom(p.indom_int(p.expect("FLOAT", "INDOM_STAR")))
            else:
                raise p.error("syntax error")
            if p.accept("RBRACE"):
                return

    def select(self, is_metric: bool, ident: int, types: int, text: str | None) -> None:
        p = self.p
        self.current = None
        if is_metric and ident == PM_ID_NULL:
            self.walking = False
            return
        star = p.star_metric if is_metric else (1 if p.star_indom else 0)
        domain = pmID_domain(ident) if is_metric else pmInDom_domain(ident)
        cluster = pmID_cluster(ident) if is_metric and star == 1 else PM_ID_NULL
        target = (PM_TEXT_PMID if is_metric else PM_TEXT_INDOM) | types
        found = 0
        for this_type, inner in p.source.texts.items():
            if this_type & target != this_type:
                continue
            for key in inner:
                if star:
                    if is_metric:
                        ok = pmID_domain(key) == domain and (
                            cluster == PM_ID_NULL or cluster == pmID_cluster(key)
                        )
                    else:
                        ok = pmInDom_domain(key) == domain
                    if ok:
                        found += self._start(this_type, key, text)
                elif key == ident:
                    found += self._start(this_type, key, text)
                    target ^= this_type & _MASK
                    if not target & _MASK:
                        break
            if not target & _MASK:
                break
        self.walking = found > 1

    def _start(self, type_: int, key: int, text: str | None) -> int:
        spec = start_text(self.p, type_, key, text)
        if spec is None:
            return 0
        spec.flags |= TextFlag.ACTIVE
        self.current = spec
        return 1

    def change_text(self, text: str) -> None:
        p = self.p
        for spec in self.walk(TextFlag.TEXT, "text"):
            if spec.new_text is not None:
                if spec.new_text == text:
                    raise p.error("Duplicate text change clause")
                raise p.error("Conflicting text change clause")
            if spec.old_text == text:
                p.wwarn("Help text: No change")
            else:
                spec.new_text = text
                spec.flags |= TextFlag.TEXT

    def change_pmid(self, target: int) -> None:
        p = self.p
        for spec in self.walk(TextFlag.ID, "id"):
            old = spec.old_id
            if p.star_metric == 1:
                pmid = pmID_build(pmID_domain(target), pmID_cluster(target), pmID_item(old))
            elif p.star_metric == 2:
                pmid = pmID_build(pmID_domain(target), pmID_cluster(old), pmID_item(old))
            else:
                pmid = target
            if pmid == old:
                p.wwarn(f"Text for metric: {pmIDStr(old)}: metric: No change")
                continue
            for other in p.rules.texts:
                if (
                    other is not spec
                    and other.flags & TextFlag.ID
                    and other.new_type == spec.new_type
                    and other.new_id == pmid
                ):
                    raise p.error(
                        f"Text for metric: {pmIDStr(old)}: metric: Conflicting metric change"
                    )
            spec.new_id = pmid
            spec.flags |= TextFlag.ID

    def change_indom(self, target: int) -> None:
        p = self.p
        for spec in self.walk(TextFlag.ID, "id"):
            if spec.new_id != spec.old_id:
                raise p.error(f"Duplicate text clause for indom {pmInDomStr(spec.old_id)}")
            if p.star_indom:
                indom = pmInDom_build(pmInDom_domain(target), pmInDom_serial(spec.old_id))
            else:
                indom = target
            if indom != spec.old_id:
                spec.new_id = indom
                spec.flags |= TextFlag.ID
            else:
                p.wwarn(f"Text for instance domain {pmInDomStr(spec.old_id)}: indom: No change")
