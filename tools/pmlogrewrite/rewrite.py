"""The rewrite itself: the input's records and metadata, in step, through the specs.

As PCP's pmlogrewrite: volume records are read in order and, before each, the
metadata up to it (descriptors of the metrics it holds, instance domains and label
sets stamped no later than it, help text) is rewritten and written; a temporal
index entry goes where the input has one, after metadata and marks, and at the end.
Times move by the global time clause everywhere they appear.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import replace

from purepcp.pmapi.archive.format import (
    PM_LOG_VERS03,
    DescRecord,
    InDomRecord,
    LabelRecord,
    TextRecord,
    encode_meta,
)
from purepcp.pmapi.archive.versions import swap_sec
from purepcp.pmapi.archive.writer import ArchiveWriter, encode_record
from purepcp.pmapi.ids import pmIDStr, pmInDomStr
from purepcp.pmapi.labels import LabelSet, add_labels
from purepcp.pmapi.values import Result, Timestamp

from .rawrecords import RawRecord, raw_records
from .source import Source
from .specs import (
    INDOM_DUPLICATE,
    PM_INDOM_NULL,
    GlobalFlag,
    InstFlag,
    MetricFlag,
    Rules,
    TextFlag,
)
from .values import rewrite_result

PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT = 9, 10
PM_LABEL_DOMAIN, PM_LABEL_INDOM, PM_LABEL_CLUSTER, PM_LABEL_ITEM, PM_LABEL_INSTANCES = (
    2, 4, 8, 16, 32
)  # fmt: skip


class Rewriter:
    """One rewrite of SOURCE by RULES into an archive named BASE."""

    def __init__(self, source: Source, rules: Rules, base: str, version: int) -> None:
        self.source = source
        self.rules = rules
        self.base = base
        self.version = version
        self.specs = {m.old_desc.pmid: m for m in rules.metrics}
        self.refs = self._indom_refs()
        #: metrics whose values the rules change, and those whose blocks need padding
        self._touched = {p for p, m in self.specs.items() if m.flags or m.ip is not None}
        self._padded = {p for p, d in source.descs.items() if d.type not in (0, 1, 2, 3, 4, 5)}
        self.writer: ArchiveWriter | None = None
        self._last_full: dict[int, tuple[list[int], list[str | None]]] = {}  # input undelta
        self._delta_base: dict[int, tuple[list[int], list[str]]] = {}  # pmaTryDeltaInDom

    # -- set up ------------------------------------------------------------------------

    def _indom_refs(self) -> dict[int, int]:
        """How many output metrics use each input instance domain: one no metric uses
        is not written.  -D appl1 traces each count as PCP's pmlogrewrite does."""
        refs: dict[int, int] = {}
        for _, desc in self.source.descs.items():
            if desc.indom != PM_INDOM_NULL:
                refs[desc.indom] = refs.get(desc.indom, 0) + 1
                _trace_ref("ref++", desc.indom, refs[desc.indom], desc.pmid)
        for mp in self.rules.metrics:
            old, new, pmid = mp.old_desc.indom, mp.new_desc.indom, mp.old_desc.pmid
            if mp.flags & MetricFlag.DELETE:
                if old != PM_INDOM_NULL and old in refs:
                    refs[old] -= 1
                    _trace_ref("delete metric ref--", old, refs[old], pmid)
            elif mp.flags & MetricFlag.INDOM:
                if old != PM_INDOM_NULL and old in refs:
                    refs[old] -= 1
                    _trace_ref("renumber indom ref--", old, refs[old], pmid)
                if new != PM_INDOM_NULL:
                    if new not in refs:
                        ip = next((i for i in self.rules.indoms if i.new_indom == new), None)
                        if ip is None or ip.old_indom not in refs:
                            continue
                        new = ip.old_indom
                    refs[new] += 1
                    _trace_ref("renumber indom ref++", new, refs[new], pmid)
        return refs

    def _open(self, start: Timestamp) -> ArchiveWriter:
        label = self.source.label
        g = self.rules.glob
        return ArchiveWriter(
            self.base,
            hostname=g.hostname if g.flags & GlobalFlag.HOSTNAME else label.hostname,
            timezone=g.timezone if g.flags & GlobalFlag.TIMEZONE else label.timezone,
            zoneinfo=g.zoneinfo if g.flags & GlobalFlag.ZONEINFO else label.zoneinfo,
            features=g.features if g.flags & GlobalFlag.FEATURES else label.features,
            start=start,
            version=self.version,
            pid=label.pid,
        )

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> None:
        archive = self.source.archive
        shift = self.rules.glob.shift
        meta = iter(archive.meta)
        pending = next(meta, None)
        pending_stamp = pending[1].stamp if pending and hasattr(pending[1], "stamp") else None
        index = archive.index
        ti = 0
        seen_event = False
        needti = False
        doneti = False
        last_stamp = Timestamp(0, 0)
        old_log_offset = 0
        vol = None
        w: ArchiveWriter | None = None
        for rec in raw_records(archive):
            stamp = shift(rec.stamp)
            first = w is None
            if w is None:
                w = self.writer = self._open(stamp)
                vol = rec.vol
                needti = True
            elif rec.vol != vol:
                vol = rec.vol
                w.new_volume(stamp, index=False, vol=rec.vol)
            old_meta_offset = w.meta_offset
            if first:
                self.new_labelsets(stamp)
            if ti < len(index) and index[ti].stamp == rec.stamp:
                needti = True
                ti += 1
            pmids = set(rec.pmids)
            while pending is not None:
                record = pending[1]
                if isinstance(record, DescRecord):
                    t = record.desc.type
                    if not seen_event:
                        if t in (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT):
                            seen_event = True
                        elif record.desc.pmid not in pmids:
                            break
                    self.do_desc(record)
                elif isinstance(record, (InDomRecord, LabelRecord)):
                    # (PCP shifts the waiting record's time again each time it looks)
                    pending_stamp = shift(pending_stamp)
                    if pending_stamp > stamp:
                        break
                    needti = True
                    if isinstance(record, InDomRecord):
                        self.do_indom(record, pending_stamp)
                    else:
                        self.do_labels(record, pending_stamp)
                else:
                    needti = True
                    self.do_text(record)
                pending = next(meta, None)
                if pending is not None and hasattr(pending[1], "stamp"):
                    pending_stamp = pending[1].stamp
            last_stamp = stamp
            if needti:
                w.put_index(stamp, meta_offset=old_meta_offset)
                needti = False
                doneti = True
            else:
                doneti = False
            old_log_offset = w.log_offset
            if not rec.pmids:
                needti = True
            self.do_result(rec, stamp)
        if w is None:
            w = self.writer = self._open(self.source.label.start)
        if not doneti:
            w.put_index(last_stamp, log_offset=old_log_offset)

    # -- records -----------------------------------------------------------------------

    def do_desc(self, record: DescRecord) -> None:
        desc, names = record.desc, list(record.names)
        mp = self.specs.get(desc.pmid)
        if mp is not None and mp.flags:
            if _appl1():
                verb = "Delete" if mp.flags & MetricFlag.DELETE else "Rewrite"
                sys.stderr.write(f"{verb}: pmDesc for {pmIDStr(desc.pmid)}\n")
            if mp.flags & MetricFlag.DELETE:
                return
            desc = replace(
                desc,
                pmid=mp.new_desc.pmid if mp.flags & MetricFlag.PMID else desc.pmid,
                type=mp.new_desc.type if mp.flags & MetricFlag.TYPE else desc.type,
                indom=mp.new_desc.indom if mp.flags & MetricFlag.INDOM else desc.indom,
                sem=mp.new_desc.sem if mp.flags & MetricFlag.SEM else desc.sem,
                units=mp.new_desc.units if mp.flags & MetricFlag.UNITS else desc.units,
            )
            if mp.flags & MetricFlag.NAME:
                if mp.old_name not in names:
                    listed = ",".join(f" {n}" for n in names)
                    raise RewriteError(
                        f"Botch: old name {mp.old_name} not found in list of {len(names)}"
                        f" names for pmid {record.desc.pmid} ...{listed}"
                    )
                names[names.index(mp.old_name)] = mp.new_name
        assert self.writer is not None
        self.writer.put_desc(desc, names)

    def _undelta(self, record: InDomRecord) -> tuple[list[int], list[str | None]]:
        if record.delta:
            insts, names = self._last_full.get(record.indom, ([], []))
            members = dict(zip(insts, names, strict=True))
            for inst, name in zip(record.insts, record.names, strict=True):
                if name is None:
                    members.pop(inst, None)
                else:
                    members[inst] = name
            order = sorted(members)
            full = (order, [members[i] for i in order])
        else:
            full = (list(record.insts), list(record.names))
        self._last_full[record.indom] = full
        return full

    def do_indom(self, record: InDomRecord, stamp: Timestamp) -> None:
        insts, names = self._undelta(record)
        indom = record.indom
        if self.refs.get(indom, 1) == 0:
            if _appl1():
                unused = pmInDomStr(indom)
                sys.stderr.write(f"Delete: InDom: {unused}: no output metrics use this\n")
            return
        for ip in self.rules.indoms:
            if ip.old_indom != indom:
                continue
            if ip.indom_flags & INDOM_DUPLICATE:
                self._put_indom(stamp, indom, insts, names)
            if ip.new_indom != ip.old_indom:
                indom = ip.new_indom
            insts, names = list(insts), list(names)
            for k, flags in enumerate(ip.inst_flags):
                if ip.old_inst[k] not in insts:
                    continue
                j = insts.index(ip.old_inst[k])
                old_name, old_inst = ip.old_iname[k], ip.old_inst[k]
                if flags & InstFlag.DELETE:
                    if _appl1():
                        where = pmInDomStr(ip.old_indom)
                        sys.stderr.write(
                            f"Delete: instance {old_name} ({old_inst}) for indom {where}\n"
                        )
                    del insts[j]
                    del names[j]
                    continue
                if flags & InstFlag.INST:
                    insts[j] = ip.new_inst[k]
                if flags & InstFlag.INAME:
                    names[j] = ip.new_iname[k]
                if flags & (InstFlag.INST | InstFlag.INAME) and _appl1():
                    new_name = ip.new_iname[k] if flags & InstFlag.INAME else old_name
                    new_inst = ip.new_inst[k] if flags & InstFlag.INST else old_inst
                    sys.stderr.write(
                        f"Rewrite: instance {old_name} ({old_inst}) -> {new_name} ({new_inst}) "
                        f"for indom {pmInDomStr(ip.old_indom)}\n"
                    )
        if insts:
            self._put_indom(stamp, indom, insts, names)

    def _put_indom(self, stamp: Timestamp, indom: int, insts: list[int], names: list) -> None:
        """An instance domain record, as a delta when that is smaller (v3 output)."""
        assert self.writer is not None
        record = InDomRecord(stamp, indom, tuple(insts), tuple(names))
        if self.version == PM_LOG_VERS03:
            last = self._delta_base.get(indom)
            self._delta_base[indom] = (list(insts), list(names))
            if last is not None:
                changes = delta_changes(last, (list(insts), list(names)))
                if changes:
                    d_insts, d_names = zip(*changes, strict=True)
                    record = InDomRecord(stamp, indom, d_insts, d_names, delta=True)
        self.writer.put_meta_bytes(encode_meta(record, self.version))

    def do_labels(self, record: LabelRecord, stamp: Timestamp) -> None:
        """A label record through the label specs (PCP's do_labelset)."""
        from .labelrules import INSTANCES, LabelFlag

        assert self.writer is not None
        writer, version = self.writer, self.version

        def put(record: LabelRecord) -> None:
            writer.put_meta_bytes(encode_meta(record, version))

        type_, ident = record.type, record.ident
        sets = list(record.sets)
        for lp in self.rules.labels:
            if lp.old_type != type_ or lp.old_id != ident:
                continue
            flags = lp.flags & ~LabelFlag.NEW
            if not flags:
                continue
            whole = lp.old_label is None and lp.old_value is None
            full = whole and (
                lp.old_type != INSTANCES
                or lp.old_instance == -1
                or all(_i32(ls.inst) == lp.old_instance for ls in sets)
            )
            if full:
                if flags & LabelFlag.DELETE:
                    return
                if flags & LabelFlag.ID:
                    ident = lp.new_id
            at = 0
            while at < len(sets):
                lsp = sets[at]
                if lp.old_type == INSTANCES and lp.old_instance not in (-1, _i32(lsp.inst)):
                    at += 1
                    continue
                if whole:
                    if flags == LabelFlag.INSTANCE:
                        sets[at] = _with_inst(lsp, lp.new_instance)
                        at += 1
                        continue
                    del sets[at]
                    if flags & LabelFlag.DELETE:
                        if not sets:
                            return
                        continue
                    if flags & LabelFlag.INSTANCE:
                        lsp = _with_inst(lsp, lp.new_instance)
                    if flags & LabelFlag.LABEL:
                        lsp = _change_names(lsp, lp.new_label)
                    if flags & LabelFlag.VALUE:
                        lsp = _change_values(lsp, lp.new_value)
                    put(LabelRecord(stamp, type_, lp.new_id, (lsp,)))
                    continue
                ix = 0
                while (ix := _find_label(lsp, ix, lp.old_label, lp.old_value)) != -1:
                    if not flags & LabelFlag.DELETE:
                        put(LabelRecord(stamp, lp.new_type, lp.new_id, (_relabel(lsp, ix, lp),)))
                    lsp = _extract_label(lsp, ix)
                if lsp.nlabels == 0:
                    del sets[at]
                    continue
                sets[at] = lsp
                at += 1
        if sets:
            put(LabelRecord(stamp, type_, ident, tuple(sets)))

    def new_labelsets(self, stamp: Timestamp) -> None:
        """NEW labels, written before the first record's metadata."""
        from .labelrules import LabelFlag

        assert self.writer is not None
        for lp in self.rules.labels:
            if lp.flags & LabelFlag.NEW and lp.new_labels is not None:
                self.writer.put_meta_bytes(
                    encode_meta(
                        LabelRecord(stamp, lp.new_type, lp.new_id, (lp.new_labels,)), self.version
                    )
                )

    def do_text(self, record: TextRecord) -> None:
        assert self.writer is not None
        type_, ident, text = record.type, record.ident, record.text
        for tp in self.rules.texts:
            if tp.old_id != ident or tp.old_type != type_:
                continue
            if tp.old_text is not None and tp.old_text != text:
                continue
            if tp.flags & TextFlag.DELETE:
                return
            if tp.flags & TextFlag.ID:
                ident = tp.new_id
            if tp.flags & TextFlag.TYPE:
                type_ = tp.new_type
            if tp.flags & TextFlag.TEXT and tp.new_text is not None:
                text = tp.new_text
            break
        self.writer.put_text(type_, ident, text)

    def do_result(self, rec: RawRecord, stamp: Timestamp) -> None:
        assert self.writer is not None
        archive = self.source.archive
        if self._touched.isdisjoint(rec.pmids):
            # untouched: the input's bytes, as PCP copies a record's value blocks
            data = rec.data
            if self.version != archive.version:
                data = _v2_to_v3(data)
            data = _restamp(data, stamp, self.version)
            if not self._padded.isdisjoint(rec.pmids):
                data = _repad(data, self.version)
            self.writer.put_record_bytes(data, stamp)
            return
        result = rec.decode(archive).result
        out = rewrite_result(result, self.specs)
        if out is None:
            return
        out = Result(stamp, out.vsets)
        # (encoded here rather than by put_result: as in PCP, a value may come before
        # its descriptor when the input has it so)
        self.writer.put_record_bytes(encode_record(out, self.version), stamp)


def _i32(n: int) -> int:
    return n - (1 << 32) if n & 0x80000000 else n


def _with_inst(lsp: LabelSet, inst: int) -> LabelSet:
    return LabelSet(inst & 0xFFFFFFFF, lsp.nlabels, lsp.json, lsp.labels)


def _find_label(lsp: LabelSet, ix: int, label: str | None, value: str | None) -> int:
    """The index of the next label from IX named LABEL (quoted) with VALUE, or -1."""
    js = lsp.json
    for k in range(ix, max(lsp.nlabels, 0)):
        lab = lsp.labels[k]
        if label is not None and js[lab.name - 1 : lab.name + lab.namelen + 1] != label.encode():
            continue
        if value is not None and js[lab.value : lab.value + lab.valuelen] != value.encode():
            continue
        return k
    return -1


def _extract_label(lsp: LabelSet, ix: int) -> LabelSet:
    """LSP without its label IX, its JSONB cut as PCP cuts it."""
    if lsp.nlabels == 1:
        return LabelSet(lsp.inst, 0, b"", ())
    lab = lsp.labels[ix]
    size = lab.namelen + lab.valuelen + 4
    js = lsp.json
    if ix < lsp.nlabels - 1:
        pos = lab.name - 1
        js = js[:pos] + js[pos + size :]
        rest = [replace(x, name=x.name - size, value=x.value - size) for x in lsp.labels[ix + 1 :]]
        labels = (*lsp.labels[:ix], *rest)
    else:
        pos = lab.name - 2
        js = js[:pos] + js[pos + size :]
        labels = lsp.labels[:ix]
    return LabelSet(lsp.inst, lsp.nlabels - 1, js, tuple(labels))


def _change_names(lsp: LabelSet, new: str) -> LabelSet:
    """Every label of LSP renamed NEW (quoted), as PCP's change_labels does it: each
    label's value offset is left as it was."""
    js = bytearray(lsp.json)
    labels = list(lsp.labels)
    name = new[1:-1].encode()
    for i, lab in enumerate(labels):
        delta = len(name) - lab.namelen
        js[lab.name : lab.name + lab.namelen] = name
        labels[i] = replace(lab, namelen=len(name))
        for j in range(i + 1, len(labels)):
            labels[j] = replace(labels[j], name=labels[j].name + delta,
                                value=labels[j].value + delta)  # fmt: skip
    return LabelSet(lsp.inst, lsp.nlabels, bytes(js), tuple(labels))


def _change_values(lsp: LabelSet, new: str) -> LabelSet:
    """Every label of LSP given the value NEW (PCP's change_values)."""
    js = bytearray(lsp.json)
    labels = list(lsp.labels)
    value = new.encode()
    for i, lab in enumerate(labels):
        delta = len(value) - lab.valuelen
        js[lab.value : lab.value + lab.valuelen] = value
        labels[i] = replace(lab, valuelen=len(value))
        for j in range(i + 1, len(labels)):
            labels[j] = replace(labels[j], name=labels[j].name + delta,
                                value=labels[j].value + delta)  # fmt: skip
    return LabelSet(lsp.inst, lsp.nlabels, bytes(js), tuple(labels))


def _relabel(lsp: LabelSet, ix: int, lp) -> LabelSet:
    """A one-label set of label IX of LSP, renamed or revalued by LP."""
    from .labelrules import LabelFlag

    lab = lsp.labels[ix]
    js = lsp.json.decode("utf-8", "surrogateescape")
    name = (
        lp.new_label if lp.new_label is not None else js[lab.name - 1 : lab.name + lab.namelen + 1]
    )
    value = lp.new_value if lp.new_value is not None else js[lab.value : lab.value + lab.valuelen]
    new = add_labels(None, f"{{{name}:{value}}}", lp.new_type)
    inst = lp.new_instance if lp.flags & LabelFlag.INSTANCE else _i32(lsp.inst)
    return _with_inst(new, inst)


def _restamp(data: bytes, stamp: Timestamp, version: int) -> bytes:
    """A framed volume record with its timestamp set to STAMP."""
    if version == PM_LOG_VERS03:
        head = struct.pack(">qi", swap_sec(stamp.sec), stamp.nsec)
    else:
        head = struct.pack(">ii", stamp.sec, stamp.nsec // 1000)
    return data[:4] + head + data[4 + len(head) :]


def _v2_to_v3(data: bytes) -> bytes:
    """A version 2 record laid out as version 3 (64-bit seconds, nanoseconds): the value
    sets are the same, each block's offset one word further on."""
    n = len(data) + 4
    sec, usec, numpmid = struct.unpack_from(">iii", data, 4)
    buf = bytearray(struct.pack(">iqii", n, swap_sec(sec), usec * 1000, numpmid))
    buf += data[16:-4]
    buf += struct.pack(">i", n)
    at = 20
    for _ in range(max(numpmid, 0)):
        _, numval = struct.unpack_from(">Ii", buf, at)
        at += 8
        if numval <= 0:
            continue
        valfmt = struct.unpack_from(">i", buf, at)[0]
        at += 4
        for _ in range(numval):
            if valfmt != 0:
                word = struct.unpack_from(">i", buf, at + 4)[0]
                struct.pack_into(">i", buf, at + 4, word + 1)
            at += 8
    return bytes(buf)


def _repad(data: bytes, version: int) -> bytes:
    """RECORD with each value block's padding set to "~", as libpcp encodes a result
    (the blocks are otherwise copied as they are, type byte included)."""
    buf = bytearray(data)
    at = 20 if version == PM_LOG_VERS03 else 16
    numpmid = struct.unpack_from(">i", buf, at - 4)[0]
    try:
        for _ in range(max(numpmid, 0)):
            _, numval = struct.unpack_from(">Ii", buf, at)
            at += 8
            if numval <= 0:
                continue
            valfmt = struct.unpack_from(">i", buf, at)[0]
            at += 4
            for _ in range(numval):
                if valfmt != 0:
                    pos = struct.unpack_from(">i", buf, at + 4)[0] * 4 - 8
                    vlen = struct.unpack_from(">I", buf, pos)[0] & 0xFFFFFF
                    end = pos + ((vlen + 3) & ~3)
                    buf[pos + vlen : end] = b"~" * (end - pos - vlen)
                at += 8
    except struct.error:
        return data
    return bytes(buf)


class RewriteError(Exception):
    """A rewrite that cannot go on: PCP's message (after "pmlogrewrite: ")."""


def delta_changes(
    old: tuple[list[int], list], new: tuple[list[int], list]
) -> list[tuple[int, str | None]] | None:
    """pmaDeltaInDom's walk of two sorted member lists: the changes when a delta record
    is smaller, None for a full record (or no change at all)."""
    oi, on = old
    ni, nn = new
    i = j = 0
    dels: list[int] = []
    adds: list[int] = []
    while i < len(oi) or j < len(ni):
        if i < len(oi) and (j == len(ni) or oi[i] < ni[j]):
            dels.append(i)
            i += 1
        elif j < len(ni) and (i == len(oi) or oi[i] > ni[j]):
            adds.append(j)
            j += 1
        else:
            if on[i] != nn[j]:
                return None
            i += 1
            j += 1
    if not dels and not adds:
        return None
    if len(dels) + len(adds) > len(ni):
        return None
    # pass 2: the changes merged as PCP merges them (smaller instance first, an add
    # before a delete of the same number; lists out of order come out as they lie)
    gone, new = set(dels), set(adds)
    changes: list[tuple[int, str | None]] = []
    i = j = 0
    while i < len(oi) or j < len(ni):
        if i < len(oi) and j < len(ni):
            if i not in gone:
                i += 1
            elif j not in new:
                j += 1
            elif oi[i] < ni[j]:
                changes.append((oi[i], None))
                i += 1
            else:
                changes.append((ni[j], nn[j]))
                j += 1
        elif i < len(oi):
            if i in gone:
                changes.append((oi[i], None))
            i += 1
        else:
            if j in new:
                changes.append((ni[j], nn[j]))
            j += 1
    return changes


__all__ = ["RewriteError", "Rewriter"]


def _appl1() -> bool:
    """-D appl1: trace instance domain reference counts and descriptor rewrites."""
    from purepcp.pmapi import debug

    return debug.on("appl1")


def _trace_ref(what: str, indom: int, count: int, pmid: int) -> None:
    """One -D appl1 line about an instance domain's reference count (PCP's wording)."""
    if _appl1():
        indom_s, pmid_s = pmInDomStr(indom), pmIDStr(pmid)
        sys.stderr.write(f"{what} InDom: {indom_s} refcnt: {count} (for PMID: {pmid_s})\n")
