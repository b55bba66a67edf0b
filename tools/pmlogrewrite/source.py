"""The input archive's metadata as the rules see it: libpcp's tables and lookups.

The parser resolves names, walks wildcards and reads instance domains through this
view; its tables are built in libpcp's order from the .meta, so wildcard rules
visit their targets in PCP's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from purepcp.pmapi.archive.format import DescRecord, LabelRecord, TextRecord
from purepcp.pmapi.hashtable import HashCtl

if TYPE_CHECKING:
    from purepcp.pmapi.archive.reader import Archive
    from purepcp.pmapi.desc import Desc

PM_LABEL_CONTEXT = 1 << 0
PM_ID_NULL = 0xFFFFFFFF


class Source:
    """The input archive, opened, with its metadata hashed as libpcp hashes it."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.label = archive.label
        self.descs = HashCtl()  # pmid -> Desc
        self.indoms = HashCtl()  # indom -> [InDomRecord], newest first
        self.texts = HashCtl()  # type -> CHash(ident -> text)
        self.labels = HashCtl()  # type -> CHash(ident -> [LabelRecord], newest first)
        for _, record in archive.meta:
            if isinstance(record, DescRecord):
                if record.desc.pmid not in self.descs:
                    self.descs.add(record.desc.pmid, record.desc)
            elif isinstance(record, TextRecord):
                self._add_text(record)
            elif isinstance(record, LabelRecord):
                self._add_labels(record)
        for indom, history in archive.indoms.items():
            self.indoms.add(indom, list(reversed(history)))

    def _add_text(self, record: TextRecord) -> None:
        inner = self.texts.get(record.type)
        if inner is None:
            inner = HashCtl()
            self.texts.add(record.type, inner)
        if record.ident not in inner:
            inner.add(record.ident, record.text)

    def _add_labels(self, record: LabelRecord) -> None:
        kind = record.type & 0xFF
        ident = PM_ID_NULL if kind == PM_LABEL_CONTEXT else record.ident
        inner = self.labels.get(kind)
        if inner is None:
            inner = HashCtl()
            self.labels.add(kind, inner)
        chain = inner.get(ident)
        if chain is None:
            inner.add(ident, [record])
        else:
            chain.insert(0, record)

    # -- lookups -----------------------------------------------------------------------

    def lookup_name(self, name: str) -> int | None:
        """pmLookupName in the archive's namespace; None when unknown."""
        try:
            return self.archive.pmns.lookup(name)
        except Exception:  # (PMError: an unknown name, or a non-leaf)
            return None

    def name_of(self, pmid: int) -> str | None:
        """pmNameID: a name of PMID in the archive's namespace."""
        try:
            return self.archive.pmns.name(pmid)
        except Exception:
            return None

    def desc(self, pmid: int) -> Desc | None:
        return self.descs.get(pmid)

    def indom_members(self, indom: int) -> tuple[list[int], list[str]] | None:
        """pmGetInDomArchive: every instance the archive ever had in INDOM, newest
        record first; None when INDOM has no records."""
        chain = self.indoms.get(indom)
        if not chain:
            return None
        insts: list[int] = []
        names: list[str] = []
        seen: set[int] = set()
        for record in chain:
            for inst, name in sorted(zip(record.insts, record.names, strict=True)):
                if inst not in seen:
                    seen.add(inst)
                    insts.append(inst)
                    names.append(name or "")
        return insts, names

    def text(self, type_: int, ident: int) -> str | None:
        inner = self.texts.get(type_)
        return inner.get(ident) if inner is not None else None
