"""The metadata of every input, gathered first and written as records need it.

Gathering reads the inputs' .meta records round-robin (one wanted record from each
archive in turn), as PCP's nextmeta does, and checks each metric's descriptor against
what earlier records said of it (names, type, instance domain, semantics, units).
Writing follows PCP's write_metareclist for each record written: a metric's
descriptor the first time, then its label sets and help text, then the instance
domain record closest before the record (stamped with the record's time), and that
domain's label sets and help text.  Which of several equal records is picked, and
when, follows libpcp's hash tables and PCP's binary search (pmapi.hashtable).
"""

from __future__ import annotations

import dataclasses
import struct
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest

from purepcp.pmapi.archive.format import (
    PM_LOG_VERS03,
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_ONELINE,
    PM_TEXT_PMID,
    DescRecord,
    InDomRecord,
    LabelRecord,
    TextRecord,
    encode_desc,
    encode_indom,
    encode_labels,
    encode_text,
)
from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.archive.versions import swap_sec
from purepcp.pmapi.archive.writer import indom_delta
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.hashtable import HashCtl
from purepcp.pmapi.ids import (
    PM_INDOM_NULL,
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmIDStr,
    pmInDomStr,
)
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.units import pmUnitsStr
from purepcp.pmapi.values import Timestamp

from .abandon import Abandon
from .options import PROG
from .select import Selection

PM_LABEL_CONTEXT = 1 << 0
PM_LABEL_DOMAIN = 1 << 1
PM_LABEL_INDOM = 1 << 2
PM_LABEL_CLUSTER = 1 << 3
PM_LABEL_ITEM = 1 << 4
PM_LABEL_INSTANCES = 1 << 5
_WORD = struct.Struct(">i")
#: the archive version whose layout each .meta record type has (TYPE_INDOM_V2, TYPE_LABEL_V2,
#: TYPE_INDOM, TYPE_INDOM_DELTA, TYPE_LABEL)
_LAYOUT_VERSION = {2: 2, 3: 2, 5: 3, 6: 3, 7: 3}
_STAMP_V2 = struct.Struct(">ii")
_IDENT = struct.Struct(">II")
_STAMP_V3 = struct.Struct(">qi")
_NS = 1_000_000_000
_FOREVER = 1 << 62
_SEMS = {1: "counter", 3: "instant", 4: "discrete"}


def _sem(sem: int) -> str:
    return _SEMS.get(sem, f"unknown ({sem})")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


@dataclass
class Entry:
    """A metadata record waiting to be written (record None: none is known)."""

    record: object
    written: bool = False
    #: the record's bytes in its input (version VERSION), when they can be copied
    raw: bytes | None = None
    version: int = 0


@dataclass
class InDomHistory:
    """An instance domain's records from every input, in time order once sorted."""

    entries: list[Entry] = field(default_factory=list)
    sorted: bool = True

    def add(self, record: InDomRecord, raw: bytes | None, version: int) -> None:
        if self.entries and self.entries[0].record is None:
            self.entries[0] = Entry(record, False, raw, version)  # (a descriptor's place)
            return
        self.entries.append(Entry(record, False, raw, version))
        self.sorted = len(self.entries) == 1

    def closest(self, stamp: Timestamp) -> Entry | None:
        """PCP's choice for a record at STAMP: the only record there is, whatever its
        time; else the one PCP's binary search finds at or before STAMP."""
        entries = self.entries
        if len(entries) == 1:
            return entries[0]
        if not self.sorted:
            entries.sort(key=lambda e: e.record.stamp)  # type: ignore[attr-defined]
            self.sorted = True
        return _closest(entries, stamp)


def _closest(entries: list[Entry], stamp: Timestamp) -> Entry | None:
    """indom_closest: a binary search for STAMP, else the record it ends at if earlier."""
    first, last = 0, len(entries) - 1
    count = last
    middle = previous = (first + last) // 2
    cmp = -1
    while first <= last:
        at = entries[middle].record.stamp  # type: ignore[attr-defined]
        cmp = (at > stamp) - (at < stamp)
        if cmp == 0:
            return entries[middle]
        previous = middle
        if cmp < 0:
            if middle == count:
                break
            first = middle + 1
        else:
            if middle == 0:
                break
            last = middle - 1
        middle = (first + last) // 2
    if previous != middle:
        at = entries[middle].record.stamp  # type: ignore[attr-defined]
        cmp = (at > stamp) - (at < stamp)
    return entries[middle] if cmp < 0 else None


def _text_key(type_: int, ident: int) -> tuple[bool, bool, int]:
    return (bool(type_ & PM_TEXT_PMID), bool(type_ & PM_TEXT_HELP), ident)


class Catalog:
    """Every wanted metadata record of the inputs, and what of it has been written."""

    def __init__(self, selection: Selection | None, skip_mismatched: bool, version: int) -> None:
        self.selection = selection
        self.skip_mismatched = skip_mismatched
        self.version = version
        self.descs: HashCtl[Entry] = HashCtl()
        self.desc_of: dict[int, Entry] = {}
        self.indoms: dict[int, InDomHistory] = {}
        self.labels: HashCtl[HashCtl[Entry]] = HashCtl()
        self.texts: dict[tuple[bool, bool, int], Entry] = {}
        self.skipped: list[int] = []
        self._next_event: dict[int, int] = {}  # pmid -> when it may need metadata (ns)
        self._last_indom: dict[int, tuple[tuple[int, ...], tuple[str | None, ...]]] = {}

    # -- gathering -------------------------------------------------------------------

    def gather(self, archives: Sequence[Archive], names: Sequence[str]) -> None:
        """Every input's wanted records, one from each archive in turn.  Inputs of one
        name share one stream (libpcp opens an archive once for every context that
        names it, so they read one .meta between them: each record comes once)."""
        shared: dict[str, Iterator[tuple[Archive, object, bytes | None]]] = {}
        streams = [
            shared.setdefault(n, self._wanted(a)) for a, n in zip(archives, names, strict=True)
        ]
        for round_ in zip_longest(*streams):
            for item in round_:
                if item is not None:
                    self._take(*item)

    def _wanted(self, archive: Archive) -> Iterator[tuple[Archive, object, bytes | None]]:
        data = _meta_bytes(archive)
        for at, record in archive.meta:
            if self._wants(record):
                raw = None
                if data is not None:
                    raw = bytes(data[at : at + _WORD.unpack_from(data, at)[0]])
                yield archive, record, raw

    def _wants(self, record: object) -> bool:
        sel = self.selection
        if isinstance(record, DescRecord):
            pmid = record.desc.pmid
            return (sel is None or pmid in sel.pmids) and pmid not in self.skipped
        if sel is None:
            return True
        if isinstance(record, InDomRecord):
            return record.indom in sel.indoms
        if isinstance(record, LabelRecord):
            return sel.wants_label(record.type, record.ident)
        if isinstance(record, TextRecord):
            return sel.wants_text(record.type, record.ident)
        return False

    def _take(self, archive: Archive, record: object, raw: bytes | None) -> None:
        version = archive.version
        if raw is not None:  # (the record's own layout, which damage may make another's)
            version = _LAYOUT_VERSION.get(_WORD.unpack_from(raw, 4)[0], version)
            if (
                isinstance(record, LabelRecord)
                and version == 2
                and archive.version == PM_LOG_VERS03 == self.version
            ):
                # a v2 label set in a v3 archive: PCP reads it as a v3 one (its rewrite
                # is no rewrite between archives of one version), and so does this
                version = PM_LOG_VERS03
                type_, ident = _IDENT.unpack_from(raw, 20)
                record = LabelRecord(record.stamp, type_, ident, record.sets)
            if isinstance(record, InDomRecord | LabelRecord):  # (its time as written)
                record = dataclasses.replace(record, stamp=_raw_stamp(raw, version))
        if isinstance(record, DescRecord):
            self._take_desc(record, raw)
        elif isinstance(record, InDomRecord):
            if record.delta:
                if archive.version != PM_LOG_VERS03:  # (libpcp cannot encode one for v2)
                    what = pmInDomStr(record.indom)
                    sys.stderr.write(
                        f"__pmLogEncodeInDom(...,indom={what},type=6,...): Botch: bad type for"
                        f" archive version {archive.version}\n"
                        "nextmeta: Botch: delta indom encode failed: Generic error, already"
                        " reported above\n"
                    )
                    raise Abandon
                record, raw = _undelta(archive, record), None
            self.indoms.setdefault(record.indom, InDomHistory()).add(record, raw, version)
        elif isinstance(record, LabelRecord):
            by_ident = self.labels.find(record.type)
            if by_ident is None:
                by_ident = HashCtl()
                self.labels.add(record.type, by_ident)
            by_ident.add(record.ident, Entry(record, False, raw, version))
        elif isinstance(record, TextRecord):
            self._take_text(record, raw)

    def _mismatch(self, pmid: int, text: str) -> None:
        """A metric described two ways: an error, or with -x a warning and the metric
        is skipped."""
        word = "Warning" if self.skip_mismatched else "Error"
        sys.stderr.write(f"{PROG}: {word}: metric {text}\n")
        if not self.skip_mismatched:
            raise Abandon
        if pmid not in self.skipped:
            self.skipped.append(pmid)

    def _take_desc(self, record: DescRecord, raw: bytes | None) -> None:
        desc, pmid = record.desc, record.desc.pmid
        names = set(record.names)
        for key, entry in self.descs.items():
            if key == pmid:
                continue
            known: DescRecord = entry.record  # type: ignore[assignment]
            if names & set(known.names):
                self._mismatch(
                    known.desc.pmid,
                    f"{_names(known.names)}: PMID changed from {pmIDStr(known.desc.pmid)}"
                    f" to {pmIDStr(pmid)}!",
                )
        entry = self.desc_of.get(pmid)
        if entry is None:
            entry = Entry(record, False, raw)
            self.desc_of[pmid] = entry
            self.descs.add(pmid, entry)
            if desc.indom not in self.indoms:
                self.indoms[desc.indom] = InDomHistory([Entry(None)])
            return
        known = entry.record  # type: ignore[assignment]
        old: Desc = known.desc
        was = _names(known.names)
        if set(known.names) != names or not known.names or not record.names:
            self._mismatch(
                pmid,
                f"PMID {pmIDStr(pmid)}: name changed from {was} to {_names(record.names)}!",
            )
        changes = (
            ("type", old.type != desc.type, pmTypeStr(old.type), pmTypeStr(desc.type)),
            ("indom", old.indom != desc.indom, pmInDomStr(old.indom), pmInDomStr(desc.indom)),
            ("semantics", old.sem != desc.sem, _sem(old.sem), _sem(desc.sem)),
            ("units", old.units != desc.units, pmUnitsStr(old.units), pmUnitsStr(desc.units)),
        )
        for what, changed, before, after in changes:
            if changed:
                self._mismatch(pmid, f"{was}: {what} changed from {before} to {after}!")

    def _take_text(self, record: TextRecord, raw: bytes | None) -> None:
        t = record.type
        pmid_kind = bool(t & PM_TEXT_PMID) and not t & PM_TEXT_INDOM
        indom_kind = bool(t & PM_TEXT_INDOM) and not t & PM_TEXT_PMID
        if not (pmid_kind or indom_kind):
            sys.stderr.write(
                f"{PROG}: append_textreclist: Botch: bad type {t} for ident {record.ident}\n"
            )
            raise Abandon
        if bool(t & PM_TEXT_ONELINE) == bool(t & PM_TEXT_HELP):
            what = (
                f"pmid {pmIDStr(record.ident)}"
                if t & PM_TEXT_PMID
                else (f"indom {pmInDomStr(record.ident)}")
            )
            sys.stderr.write(f"{PROG}: append_textreclist: Botch: bad type {t} for {what}\n")
            raise Abandon
        key = _text_key(t, record.ident)
        entry = self.texts.get(key)
        if entry is None:
            self.texts[key] = Entry(record, False, raw)
            return
        old: TextRecord = entry.record  # type: ignore[assignment]
        if old.text != record.text:
            what = (
                f"metric PMID {pmIDStr(old.ident)}"
                if t & PM_TEXT_PMID
                else f"instance domain {pmInDomStr(old.ident)}"
            )
            if t & PM_TEXT_ONELINE:
                sys.stderr.write(
                    f'{PROG}: Warning: {what} one line text changed from\n  "{old.text}" to\n'
                    f'  "{record.text}"!\n'
                )
            else:
                sys.stderr.write(f"{PROG}: Warning: {what} help text changed!\n")
        entry.record, entry.raw = record, raw  # (the latest is kept)

    def report_skipped(self) -> None:
        if self.skipped:
            sys.stderr.write("Warning: the metrics below will be missing from the output archive\n")
            for pmid in self.skipped:
                sys.stderr.write(f"\tPMID: {pmIDStr(pmid)}\n")

    def context_pending(self) -> bool:
        """Whether a context label set is still to be written (each record asks)."""
        by_ident = self.labels.find(PM_LABEL_CONTEXT)
        entry = by_ident.find(0xFFFFFFFF) if by_ident is not None else None
        return entry is not None and not entry.written

    def wanted_pmid(self, pmid: int) -> bool:
        """Whether PMID's values may be written."""
        sel = self.selection
        return (sel is None or pmid in sel.pmids) and pmid not in self.skipped

    def quiet_until(self, pmids: Sequence[int]) -> int:
        """The earliest time (ns) at which a record with some of PMIDS' values may need
        metadata written (0: now)."""
        events = self._next_event
        return min((events.get(p, 0) for p in pmids), default=_FOREVER)

    def _note_next_event(self, pmid: int, indom: int, stamp: Timestamp) -> None:
        """After PMID's metadata is written for STAMP: when it may next need some (a
        label set not yet due, a later instance domain record)."""
        now = stamp.sec * _NS + stamp.nsec
        due = [_FOREVER]
        for type_ in (PM_LABEL_ITEM, PM_LABEL_DOMAIN, PM_LABEL_CLUSTER):
            due.append(self._label_due(type_, pmid))
        if indom != PM_INDOM_NULL:
            history = self.indoms[indom]
            if len(history.entries) == 1:
                if history.entries[0].record is None:
                    due.append(self._label_due(PM_LABEL_INDOM, indom))
                    due.append(self._label_due(PM_LABEL_INSTANCES, indom))
            else:
                for e in history.entries:
                    at = e.record.stamp  # type: ignore[attr-defined]
                    ns = at.sec * _NS + at.nsec
                    if not e.written and ns >= now:
                        # (one of several records of this time may be PCP's choice
                        # just after it, where its search ends differently)
                        due.append(ns if ns > now else now + 1)
        self._next_event[pmid] = min(due)

    def _label_due(self, type_: int, ident: int) -> int:
        by_ident = self.labels.find(type_)
        if by_ident is None:
            return _FOREVER
        if type_ == PM_LABEL_DOMAIN:
            ident = pmID_domain(ident)
        elif type_ == PM_LABEL_CLUSTER:
            ident = pmID_build(pmID_domain(ident), pmID_cluster(ident), 0)
        entry = by_ident.find(ident)
        if entry is None or entry.written:
            return _FOREVER
        at = entry.record.stamp  # type: ignore[attr-defined]
        return at.sec * _NS + at.nsec

    # -- writing ---------------------------------------------------------------------

    def write_for(self, pmids: Sequence[int], stamp: Timestamp, out: MetaSink) -> bool:
        """Write what the record at STAMP with PMIDS' values needs first; True if an
        instance domain record was written (the record then gets an index entry)."""
        indexed = False
        for pmid in pmids:
            entry = self.desc_of.get(pmid)
            if entry is None:
                sys.stderr.write(
                    f"{PROG}: Error: meta data (TYPE_DESC) for pmid {pmIDStr(pmid)}"
                    " has not been found.\n"
                )
                raise Abandon
            if not entry.written:
                out.put_meta(entry.raw or encode_desc(entry.record))  # type: ignore[arg-type]
                entry.written = True
            indom = entry.record.desc.indom  # type: ignore[attr-defined]
            self.write_labels(PM_LABEL_ITEM, pmid, stamp, out)
            self.write_labels(PM_LABEL_DOMAIN, pmid, stamp, out)
            self.write_labels(PM_LABEL_CLUSTER, pmid, stamp, out)
            self._write_text(PM_TEXT_PMID | PM_TEXT_ONELINE, pmid, out)
            self._write_text(PM_TEXT_PMID | PM_TEXT_HELP, pmid, out)
            if indom == PM_INDOM_NULL:
                continue
            chosen = self.indoms[indom].closest(stamp)
            if chosen is None or chosen.written:
                continue
            if chosen.record is not None:
                self._write_indom(chosen, stamp, out)
                chosen.written = True
                indexed = True
            self.write_labels(PM_LABEL_INDOM, indom, stamp, out)
            self.write_labels(PM_LABEL_INSTANCES, indom, stamp, out)
            self._write_text(PM_TEXT_INDOM | PM_TEXT_ONELINE, indom, out)
            self._write_text(PM_TEXT_INDOM | PM_TEXT_HELP, indom, out)
        for pmid in pmids:
            self._note_next_event(pmid, self.desc_of[pmid].record.desc.indom, stamp)  # type: ignore[attr-defined]
        return indexed

    def _write_indom(self, entry: Entry, stamp: Timestamp, out: MetaSink) -> None:
        """ENTRY's record restamped; in a v3 output a delta where pmaTryDeltaInDom
        prefers one."""
        record: InDomRecord = entry.record  # type: ignore[assignment]
        members = (record.insts, record.names)
        new = InDomRecord(stamp, record.indom, record.insts, record.names)
        if self.version == PM_LOG_VERS03:
            last = self._last_indom.get(record.indom)
            self._last_indom[record.indom] = members
            if last is not None:
                changes = indom_delta(last, members)
                if changes:
                    insts, names = zip(*changes, strict=True)
                    new = InDomRecord(stamp, record.indom, insts, names, delta=True)
                    out.put_meta(encode_indom(new, self.version))
                    return
        if entry.raw is not None and entry.version == self.version:
            out.put_meta(restamp(entry.raw, self.version, stamp))
        else:
            out.put_meta(encode_indom(new, self.version))

    def write_labels(self, type_: int, ident: int, stamp: Timestamp, out: MetaSink) -> None:
        """write_priorlabelset: the label set of TYPE for IDENT that libpcp's table finds,
        if it is from STAMP or before and not yet written (restamped STAMP)."""
        by_ident = self.labels.find(type_)
        if by_ident is None:
            return
        if type_ == PM_LABEL_DOMAIN:
            ident = pmID_domain(ident)
        elif type_ == PM_LABEL_CLUSTER:
            ident = pmID_build(pmID_domain(ident), pmID_cluster(ident), 0)
        entry = by_ident.find(ident)
        if entry is None or entry.written:
            return
        record: LabelRecord = entry.record  # type: ignore[assignment]
        if record.stamp > stamp:
            return
        if entry.raw is not None and entry.version == self.version:
            out.put_meta(restamp(entry.raw, self.version, stamp))
        else:
            new = LabelRecord(stamp, record.type, record.ident, record.sets)
            out.put_meta(encode_labels(new, self.version))
        entry.written = True

    def _write_text(self, type_: int, ident: int, out: MetaSink) -> None:
        entry = self.texts.get(_text_key(type_, ident))
        if entry is not None and not entry.written:
            out.put_meta(entry.raw or encode_text(entry.record))  # type: ignore[arg-type]
            entry.written = True


class MetaSink:
    """Where metadata goes (the output archive's .meta)."""

    def put_meta(self, data: bytes) -> None:  # pragma: no cover - an interface
        raise NotImplementedError


def _meta_bytes(archive: Archive) -> bytes | None:
    """The input's .meta as it is on disk (None when compressed: records are then
    encoded again)."""
    path = archive.meta_path
    if not path.endswith(".meta"):
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _raw_stamp(raw: bytes, version: int) -> Timestamp:
    """The time in an instance domain or label record RAW of VERSION's layout."""
    if version == PM_LOG_VERS03:
        sec, nsec = _STAMP_V3.unpack_from(raw, 8)
        return Timestamp(swap_sec(sec), nsec)
    sec, usec = _STAMP_V2.unpack_from(raw, 8)
    return Timestamp(sec, usec * 1000)


def restamp(raw: bytes, version: int, stamp: Timestamp) -> bytes:
    """An instance domain or label record (RAW, of VERSION) with its time set to STAMP."""
    buf = bytearray(raw)
    if version == PM_LOG_VERS03:
        _STAMP_V3.pack_into(buf, 8, swap_sec(stamp.sec), stamp.nsec)
    else:
        _STAMP_V2.pack_into(buf, 8, stamp.sec, stamp.nsec // 1000)
    return bytes(buf)


def _undelta(archive: Archive, record: InDomRecord) -> InDomRecord:
    """A v3 delta record as the full membership the input's reader knows at its time."""
    history = archive.indoms.get(record.indom, [])
    found = None
    for full in history:
        if full.stamp <= record.stamp:
            found = full
    if found is None:
        sys.stderr.write(
            f"nextmeta: Botch: undelta indom failed for indom {pmInDomStr(record.indom)}\n"
        )
        raise Abandon
    return InDomRecord(record.stamp, record.indom, found.insts, found.names)
