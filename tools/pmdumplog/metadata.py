"""The archive's metadata as libpcp holds it, so pmdumplog sees what PCP's sees.

Descriptors and instance domains sit in libpcp's hash tables (their walk is PCP's print
order); each instance domain is a newest-first chain of records, deltas undone against
the full record before them; label sets are chains by type and identifier, a set
repeated from the record before dropped, as libpcp's loader drops it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from purepcp.pmapi.archive import Archive
from purepcp.pmapi.archive.format import DescRecord, InDomRecord, LabelRecord
from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.hashtable import HashCtl, Node
from purepcp.pmapi.ids import PM_ID_NULL
from purepcp.pmapi.labels import (
    PM_LABEL_COMPOUND,
    PM_LABEL_CONTEXT,
    PM_LABEL_OPTIONAL,
    LabelSet,
)
from purepcp.pmapi.values import Timestamp

from .clock import ts_cmp


@dataclass
class LogInDom:
    """One __pmLogInDom: a time, whether it is a delta, members sorted by instance id."""

    stamp: Timestamp
    delta: bool
    insts: list[int]
    names: list[str | None]
    _lookup: dict[int, str | None] | None = field(default=None, repr=False)

    def name_of(self, inst: int) -> str | None:
        """The name of INST (the first entry for it), None when it is not a member."""
        if self._lookup is None:
            self._lookup = {}
            for i, name in zip(self.insts, self.names, strict=True):
                self._lookup.setdefault(i, name)
        return self._lookup.get(inst)


@dataclass
class LogLabelSet:
    """One __pmLogLabelSet: the label sets of one type and identifier from STAMP on."""

    stamp: Timestamp
    sets: list[LabelSet]


class Metadata:
    """The archive's .meta loaded into libpcp's shapes: hashed descriptors and instance
    domains, time-ordered chains of instance domains and label sets, and help text.
    """

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.descs = HashCtl()
        self.indoms = HashCtl()
        self.labels = HashCtl()
        self._timelines: dict[int, tuple[list[Timestamp], list[LogInDom]]] = {}
        for _, record in archive.meta:
            if isinstance(record, DescRecord):
                self._add_desc(record.desc)
            elif isinstance(record, InDomRecord) and record.insts:
                self._add_indom(record)
            elif isinstance(record, LabelRecord):
                self._add_labels(record)
        self._drop_duplicate_labels()
        for node in self.indoms.walk():
            undelta(node.data)

    def _add_desc(self, desc: Desc) -> None:
        """__pmLogAddDesc: the first descriptor of a PMID stays (the reader has refused
        an archive whose descriptors of one metric disagree)."""
        if self.descs.search(desc.pmid) is None:
            self.descs.add(desc.pmid, desc)

    def _add_indom(self, record: InDomRecord) -> None:
        """addindom: keep each chain newest first; a duplicate at the same time moves up."""
        pairs = sorted(
            zip((int32(i) for i in record.insts), record.names, strict=True), key=lambda p: p[0]
        )
        item = LogInDom(record.stamp, record.delta, [p[0] for p in pairs], [p[1] for p in pairs])
        node = self.indoms.search(record.indom)
        if node is None:
            self.indoms.add(record.indom, [item])
            return
        chain: list[LogInDom] = node.data
        at = 0
        while at < len(chain) and ts_cmp(chain[at].stamp, item.stamp) > 0:
            at += 1
        if at < len(chain) and ts_cmp(chain[at].stamp, item.stamp) == 0:
            same = at
            while same < len(chain) and ts_cmp(chain[same].stamp, item.stamp) == 0:
                if (chain[same].insts, chain[same].names) == (item.insts, item.names):
                    if same == at:
                        return
                    item = chain.pop(same)
                    break
                same += 1
        chain.insert(at, item)

    def _add_labels(self, record: LabelRecord) -> None:
        """addlabel: context labels share one identifier; chains are newest first."""
        kind = record.type & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        ident = PM_ID_NULL if kind == PM_LABEL_CONTEXT else record.ident
        item = LogLabelSet(record.stamp, list(record.sets))
        outer = self.labels.search(kind)
        inner = outer.data.search(ident) if outer is not None else None
        if inner is None or not inner.data[0].sets:
            if outer is None:
                outer = Node(kind, HashCtl())
                self.labels.add(kind, outer.data)
            outer.data.add(ident, [item])
            return
        chain: list[LogLabelSet] = inner.data
        at = 0
        while at < len(chain) and ts_cmp(chain[at].stamp, item.stamp) >= 0:
            at += 1
        chain.insert(at, item)

    def _drop_duplicate_labels(self) -> None:
        """check_dup_labels: a label set repeated from the record before it is dropped."""
        for outer in self.labels.walk():
            for inner in outer.data.walk():
                chain: list[LogLabelSet] = inner.data
                at = 0
                while at + 1 < len(chain):
                    newer, older = chain[at], chain[at + 1]
                    seen = {_labelset_key(s) for s in older.sets}
                    newer.sets = [s for s in newer.sets if _labelset_key(s) not in seen]
                    if newer.sets:
                        at += 1
                    else:
                        del chain[at]

    def desc(self, pmid: int) -> Desc | None:
        node = self.descs.search(pmid)
        return node.data if node is not None else None

    def indom_at(self, indom: int, stamp: Timestamp) -> LogInDom | None:
        """__pmLogSearchInDom: the first record at or before STAMP in the newest-first chain
        (of records at one time, the one nearest the chain's head).
        """
        timeline = self._timelines.get(indom)
        if timeline is None:
            node = self.indoms.search(indom)
            oldest_first = list(reversed(node.data)) if node is not None else []
            timeline = self._timelines[indom] = ([i.stamp for i in oldest_first], oldest_first)
        stamps, items = timeline
        at = bisect.bisect_right(stamps, stamp)
        return items[at - 1] if at else None

    def inst_name(self, indom: int, inst: int, stamp: Timestamp) -> str | None:
        """pmNameInDom in an archive context at STAMP; None when it fails."""
        item = self.indom_at(indom, stamp)
        return item.name_of(inst) if item is not None else None


def _labelset_key(lset: LabelSet) -> tuple:
    """What samelabelset compares: the instance, the label count, each name and its value.

    (Names within a set are unique, so comparing them as a set is PCP's comparison.)
    """
    js = lset.json
    pairs = frozenset(
        (js[x.name : x.name + x.namelen], js[x.value : x.value + x.valuelen]) for x in lset.labels
    )
    return (lset.inst, lset.nlabels, pairs)


def undelta(chain: list[LogInDom]) -> None:
    """__pmLogUndeltaInDom for a whole chain: oldest first, each delta applied to the
    full record before it (a delta with none before it is left as it is).
    """
    for k in range(len(chain) - 2, -1, -1):
        item, prior = chain[k], chain[k + 1]
        if item.delta and not prior.delta:
            item.insts, item.names = merge_delta(prior, item)
            item.delta = False


def merge_delta(full: LogInDom, delta: LogInDom) -> tuple[list[int], list[str | None]]:
    """A delta's additions (sorted in) and deletions (taken out) applied to FULL."""
    insts: list[int] = []
    names: list[str | None] = []
    i = j = 0
    while i < len(full.insts) or j < len(delta.insts):
        if i < len(full.insts) and j < len(delta.insts):
            gone = delta.names[j] is None
            if gone and full.insts[i] == delta.insts[j]:
                i += 1
                j += 1
                continue
            if not gone and full.insts[i] > delta.insts[j]:
                insts.append(delta.insts[j])
                names.append(delta.names[j])
                j += 1
                continue
        if i < len(full.insts):
            insts.append(full.insts[i])
            names.append(full.names[i])
            i += 1
        else:
            insts.append(delta.insts[j])
            names.append(delta.names[j])
            j += 1
    return insts, names
