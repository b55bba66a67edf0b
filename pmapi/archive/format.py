"""The PCP archive format, versions 2 and 3, as pcp-archive(5) and libpcp lay it out.

Every file of an archive (volumes .0 .1 ..., .meta, .index) starts with a log label
record; volume and .meta records are framed by their length before and after; the
.index is a bare run of fixed-size entries.  All integers are big-endian.

The construct declarations in declarations.py are the layouts, written once.
Metadata records are few and are encoded through them directly (construct loads with
the first record written); everything is read with struct: labels, index entries, and
.meta records by read_meta, which reads a .meta as libpcp's __pmLogLoadMeta does (a
stream read field by field, with its checks and its leniencies), tested against the
declarations by round trips.  Volume records (one per sample, the bulk of an archive)
go through the precompiled pmResult codec in pdu/result.py.  A tool that only reads an
archive never imports construct.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from ..cnumbers import int32
from ..desc import Desc
from ..errors import (
    PM_ERR_LABEL,
    PM_ERR_LOGREC,
    PM_ERR_NODATA,
    PM_ERR_RECTYPE,
)
from ..labels import PM_MAXLABELJSONLEN, PM_MAXLABELS, Label, LabelSet
from ..units import Units
from ..values import Timestamp
from .damage import ArchiveError  # (its own module: a live query catches it cheaply)
from .versions import PM_LOG_MAGIC, PM_LOG_VERS02, PM_LOG_VERS03, swap_sec

PM_LOG_VOL_TI = -2  # the label's volume number in the .index
PM_LOG_VOL_META = -1  # ... and in the .meta
#: A volume may not grow past this: the v2 index holds 32-bit offsets.
MAX_VOLUME_BYTES = 0x7FFFFFFF

# text record types (pmapi.h PM_TEXT_*)
PM_TEXT_ONELINE = 1
PM_TEXT_HELP = 2
PM_TEXT_PMID = 4
PM_TEXT_INDOM = 8


class MetaType(IntEnum):
    """Record types in the .meta file (libpcp.h TYPE_*)."""

    TYPE_DESC = 1
    TYPE_INDOM_V2 = 2
    TYPE_LABEL_V2 = 3
    TYPE_TEXT = 4
    TYPE_INDOM = 5
    TYPE_INDOM_DELTA = 6
    TYPE_LABEL = 7


# -- struct layouts ------------------------------------------------------------------


FRAME = struct.Struct(">i")
META_HEADER = struct.Struct(">ii")  # length, type
INDEX_V2 = struct.Struct(">iiiii")
INDEX_V3 = struct.Struct(">qiiqq")
#: The log label records inside their frames (declarations.LabelV2 and LabelV3).
LABEL_V2 = struct.Struct(">iIiiii64s40si")
LABEL_V3 = struct.Struct(">iIiqiiII256s256s256si")
LABEL_BYTES = {PM_LOG_VERS02: LABEL_V2.size, PM_LOG_VERS03: LABEL_V3.size}


# -- records -------------------------------------------------------------------------


@dataclass(frozen=True)
class LogLabel:
    """The label every file of an archive starts with (vol -1 in .meta, -2 in .index)."""

    version: int
    pid: int
    start: Timestamp
    vol: int
    hostname: str
    timezone: str
    zoneinfo: str = ""
    features: int = 0

    def with_vol(self, vol: int) -> LogLabel:
        return LogLabel(
            self.version,
            self.pid,
            self.start,
            vol,
            self.hostname,
            self.timezone,
            self.zoneinfo,
            self.features,
        )


@dataclass(frozen=True)
class IndexEntry:
    """A temporal index entry: at STAMP, volume VOL, the .meta and volume offsets."""

    stamp: Timestamp
    vol: int
    meta_offset: int
    log_offset: int


@dataclass(frozen=True)
class DescRecord:
    """A metric's descriptor and its names."""

    desc: Desc
    names: tuple[str, ...]


@dataclass(frozen=True)
class InDomRecord:
    """An instance domain's membership from STAMP on (or, if delta, the changes at STAMP).

    In a delta record a name of None marks an instance that went away.
    """

    stamp: Timestamp
    indom: int
    insts: tuple[int, ...]
    names: tuple[str | None, ...]
    delta: bool = False


@dataclass(frozen=True)
class LabelRecord:
    """Label sets of one kind (PM_LABEL_*) for one identifier, from STAMP on."""

    stamp: Timestamp
    type: int
    ident: int
    sets: tuple[LabelSet, ...]


@dataclass(frozen=True)
class TextRecord:
    """One-line or help text (PM_TEXT_* bits in type) for a PMID or an InDom."""

    type: int
    ident: int
    text: str


MetaRecord = DescRecord | InDomRecord | LabelRecord | TextRecord


# -- labels ----------------------------------------------------------------------------


def _layouts():  # (a module)
    """The construct declarations: loaded by the first record written, never by a reader."""
    from . import declarations

    return declarations


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def encode_label(label: LogLabel) -> bytes:
    """The framed label record for LABEL (hostname and zones cut to their fields, as PCP does)."""
    if label.version == PM_LOG_VERS03:
        return _layouts().LabelV3.build(
            dict(
                pid=label.pid,
                sec=label.start.sec,
                nsec=label.start.nsec,
                vol=label.vol,
                features=label.features,
                reserved=0,
                hostname=_fit(label.hostname, 256),
                timezone=_fit(label.timezone, 256),
                zoneinfo=_fit(label.zoneinfo, 256),
            )
        )
    return _layouts().LabelV2.build(
        dict(
            pid=label.pid,
            sec=label.start.sec,
            usec=label.start.nsec // 1000,
            vol=label.vol,
            hostname=_fit(label.hostname, 64),
            timezone=_fit(label.timezone, 40),
        )
    )


def _fit(text: str, field: int) -> bytes:
    """TEXT as a FIELD-byte string field: cut to leave room for a NUL, NUL-padded."""
    return _raw(text)[: field - 1].ljust(field, b"\0")


def decode_label(data: bytes, where: str) -> LogLabel:
    """The label at the start of DATA; ArchiveError naming WHERE if it is not one.

    As __pmLogLoadLabel: fewer than 8 bytes is PM_ERR_NODATA (an empty file), any
    other misfit PM_ERR_LABEL.
    """
    if len(data) < 8:
        what = "empty file" if not len(data) else f"{len(data)} bytes, too few for a label record"
        raise ArchiveError(PM_ERR_NODATA, where, 0, what)
    length, magic = META_HEADER.unpack_from(data)
    if magic & 0xFFFFFF00 != PM_LOG_MAGIC:
        raise ArchiveError(PM_ERR_LABEL, where, 0, f"bad magic number 0x{magic & 0xFFFFFFFF:08x}")
    version = magic & 0xFF
    size = LABEL_BYTES.get(version)
    if size is None:
        raise ArchiveError(PM_ERR_LABEL, where, 0, f"archive version {version} is not supported")
    if length != size:
        what = f"label record length {length}, where a version {version} label is {size} bytes"
        raise ArchiveError(PM_ERR_LABEL, where, 0, what)
    if len(data) < size:
        what = f"the file ends at byte {len(data)}, inside its {size}-byte label record"
        raise ArchiveError(PM_ERR_LABEL, where, 0, what)
    trailer = FRAME.unpack_from(data, size - 4)[0]
    if trailer != size:
        what = f"label trailer {trailer} does not match its length {size}"
        raise ArchiveError(PM_ERR_LABEL, where, size - 4, what)
    if version == PM_LOG_VERS03:
        _, _, pid, sec, nsec, vol, features, _, host, tz, zoneinfo, _ = LABEL_V3.unpack_from(data)
        stamp = Timestamp(swap_sec(sec), nsec)
        return LogLabel(version, pid, stamp, vol, _cstr(host), _cstr(tz), _cstr(zoneinfo), features)
    _, _, pid, sec, usec, vol, host, tz, _ = LABEL_V2.unpack_from(data)
    stamp = Timestamp(sec, usec_ns(usec))
    return LogLabel(version, pid, stamp, vol, _cstr(host), _cstr(tz))


def usec_ns(usec: int) -> int:
    """A v2 timestamp's microseconds as nanoseconds, as libpcp's __pmLoadTimeval makes
    them: in a 32-bit int, so a damaged field's product wraps as it does there."""
    return int32(usec * 1000)


def _cstr(field: bytes) -> str:
    """A label string field as C reads it: up to its first NUL."""
    return _text(field.split(b"\0", 1)[0])


# -- errors ----------------------------------------------------------------------------


# -- metadata records ------------------------------------------------------------------


def _frame(mtype: int, body: bytes) -> bytes:
    n = len(body) + 12
    return META_HEADER.pack(n, mtype) + body + FRAME.pack(n)


def encode_desc(record: DescRecord) -> bytes:
    """A framed TYPE_DESC record."""
    d = record.desc
    names = [_raw(n) for n in record.names]
    body = _layouts().DescBody.build(
        dict(
            pmid=d.pmid,
            type=d.type,
            indom=d.indom,
            sem=d.sem,
            units=d.units.pack(),
            numnames=len(names),
            names=[dict(len=len(n), name=n) for n in names],
        )
    )
    return _frame(MetaType.TYPE_DESC, body)


def encode_indom(record: InDomRecord, version: int) -> bytes:
    """A framed instance-domain record (TYPE_INDOM_V2 for v2; full or delta for v3)."""
    table = bytearray()
    stridx = []
    for name in record.names:
        if name is None:
            stridx.append(-1)
        else:
            stridx.append(len(table))
            table += _raw(name) + b"\0"
    fields = dict(
        indom=record.indom,
        numinst=len(record.insts),
        insts=list(record.insts),
        stridx=stridx,
    )
    s = record.stamp
    if version == PM_LOG_VERS03:
        head = _layouts().InDomHeadV3.build(dict(fields, sec=s.sec, nsec=s.nsec))
        mtype = MetaType.TYPE_INDOM_DELTA if record.delta else MetaType.TYPE_INDOM
    else:
        head = _layouts().InDomHeadV2.build(dict(fields, sec=s.sec, usec=s.nsec // 1000))
        mtype = MetaType.TYPE_INDOM_V2
    return _frame(mtype, head + bytes(table))


def encode_labels(record: LabelRecord, version: int) -> bytes:
    """A framed label record (TYPE_LABEL_V2 for v2, TYPE_LABEL for v3)."""
    s = record.stamp
    common = dict(type=record.type, ident=record.ident, nsets=len(record.sets))
    if version == PM_LOG_VERS03:
        head = _layouts().LabelHeadV3.build(dict(common, sec=s.sec, nsec=s.nsec))
        mtype = MetaType.TYPE_LABEL
    else:
        head = _layouts().LabelHeadV2.build(dict(common, sec=s.sec, usec=s.nsec // 1000))
        mtype = MetaType.TYPE_LABEL_V2
    parts = [head]
    for ls in record.sets:
        parts.append(
            _layouts().LabelSetBody.build(
                dict(
                    inst=ls.inst,
                    jsonlen=len(ls.json),
                    json=ls.json,
                    nlabels=ls.nlabels,
                    labels=[
                        dict(
                            name=(lp.name << 16) | (lp.namelen << 8) | lp.flags,
                            value=(lp.value << 16) | lp.valuelen,
                        )
                        for lp in ls.labels
                    ],
                )
            )
        )
    return _frame(mtype, b"".join(parts))


def encode_text(record: TextRecord) -> bytes:
    """A framed TYPE_TEXT record (the text NUL-terminated)."""
    body = (
        _layouts().TextHead.build(dict(type=record.type, ident=record.ident))
        + _raw(record.text)
        + b"\0"
    )
    return _frame(MetaType.TYPE_TEXT, body)


def encode_meta(record: MetaRecord, version: int) -> bytes:
    """Any metadata record, framed, for an archive of VERSION."""
    if isinstance(record, DescRecord):
        return encode_desc(record)
    if isinstance(record, InDomRecord):
        return encode_indom(record, version)
    if isinstance(record, LabelRecord):
        return encode_labels(record, version)
    return encode_text(record)


def read_meta(
    data: bytes | memoryview, start: int, where: str
) -> tuple[list[tuple[int, MetaRecord]], int]:
    """The records of a .meta file (DATA) from byte START on, each with its offset, read
    as libpcp's __pmLogLoadMeta reads them, and where the reading stopped (the end, or
    a few stray bytes before it); ArchiveError (naming WHERE and the record's offset) at
    the first record libpcp would refuse.

    libpcp reads the file as a stream, not record by record, and this follows it:
    - fewer than 8 bytes left (no whole header) is the end, not damage;
    - a descriptor is read field by field (its names by their own lengths) and its
      trailer is the word after the last name, wherever the header's length says
      the record ends; a name is a C string, so one stored NUL-padded ends at its NUL;
    - a text record of a kind libpcp does not know is skipped without reading its
      trailer, so the next header is read from that trailer (libpcp 6.0.3's way);
    - an instance-domain record of no instances is read and ignored;
    - an unknown record type is PM_ERR_RECTYPE, any other damage PM_ERR_LOGREC.
    """
    end = len(data)
    at = start
    records: list[tuple[int, MetaRecord]] = []
    while end - at >= 8:
        length, mtype = META_HEADER.unpack_from(data, at)
        if length <= 0:
            what = f"record length {length}, where a record is 12 bytes or more"
            raise ArchiveError(PM_ERR_LOGREC, where, at, what)
        if mtype == MetaType.TYPE_DESC:
            record, body_end = _read_desc(data, at + 8, where, at)
            trailer_at = body_end
        elif mtype in _FRAMED:
            body_end = at + length - 4
            if length < 12:
                what = f"record length {length} is less than its 12-byte frame"
                raise ArchiveError(PM_ERR_LOGREC, where, at, what)
            if body_end > end:
                what = f"{_type_name(mtype)} record of {length} bytes, {end - at} left in the file"
                raise ArchiveError(PM_ERR_LOGREC, where, at, what)
            body = bytes(data[at + 8 : body_end])
            try:
                record = _FRAMED[mtype](mtype, body)
            except ValueError as exc:
                raise ArchiveError(
                    PM_ERR_LOGREC, where, at, f"{_type_name(mtype)} record: {exc}"
                ) from None
            if record is _SKIP_NO_TRAILER:
                at = body_end
                continue
            trailer_at = body_end
        else:
            what = f"unknown metadata record type {mtype}"
            raise ArchiveError(PM_ERR_RECTYPE, where, at, what)
        if end - trailer_at < 4:
            what = f"{_type_name(mtype)} record has no trailer: the file ends at byte {end}"
            raise ArchiveError(PM_ERR_LOGREC, where, at, what)
        trailer = FRAME.unpack_from(data, trailer_at)[0]
        if trailer != length:
            what = (
                f"{_type_name(mtype)} record's trailer at byte {trailer_at} is {trailer}, "
                f"not its length {length}"
            )
            raise ArchiveError(PM_ERR_LOGREC, where, at, what)
        if record is not None:
            records.append((at, record))  # type: ignore[arg-type]
        at = trailer_at + 4
    return records, at


def _type_name(mtype: int) -> str:
    try:
        return MetaType(mtype).name
    except ValueError:
        return f"type {mtype}"


_WORD = struct.Struct(">i")
_DESC_HEAD = struct.Struct(">IiIiIi")  # pmDesc, then numnames


def _read_desc(
    data: bytes | memoryview, at: int, where: str, offset: int
) -> tuple[DescRecord, int]:
    """The descriptor whose body starts at AT, and where its body ends: read field by
    field, names by their own lengths, as libpcp reads one."""
    end = len(data)
    if end - at < _DESC_HEAD.size:
        raise ArchiveError(
            PM_ERR_LOGREC, where, offset, f"TYPE_DESC record cut short: the file ends at byte {end}"
        )
    pmid, type_, indom, sem, units, numnames = _DESC_HEAD.unpack_from(data, at)
    at += _DESC_HEAD.size
    names = []
    for i in range(numnames):  # (a negative count reads no names, as in libpcp)
        if end - at < 4:
            what = f"TYPE_DESC record cut short in name {i} of {numnames}: the file ends"
            raise ArchiveError(PM_ERR_LOGREC, where, offset, what)
        size = _WORD.unpack_from(data, at)[0]
        at += 4
        if size < 0 or size > end - at:
            what = (
                f"TYPE_DESC record: name {i} of {numnames} claims {size} bytes, "
                f"{end - at} left in the file"
            )
            raise ArchiveError(PM_ERR_LOGREC, where, offset, what)
        names.append(_cstr(bytes(data[at : at + size])))
        at += size
    desc = Desc(pmid, type_, indom, sem, Units.unpack(units))
    return DescRecord(desc, tuple(names)), at


def _read_indom(mtype: int, body: bytes) -> InDomRecord | None:
    """An instance-domain record as __pmLogLoadInDom checks it; None for no instances."""
    if mtype == MetaType.TYPE_INDOM_V2:
        head = 16
        if len(body) < head:
            raise ValueError(f"{len(body)} bytes, less than its {head}-byte header")
        sec, usec, indom, numinst = struct.unpack_from(">iiIi", body)
        stamp = Timestamp(sec, usec_ns(usec))
    else:
        head = 20
        if len(body) < head:
            raise ValueError(f"{len(body)} bytes, less than its {head}-byte header")
        sec, nsec, indom, numinst = struct.unpack_from(">qiIi", body)
        stamp = Timestamp(swap_sec(sec), nsec)
    delta = mtype == MetaType.TYPE_INDOM_DELTA
    if numinst <= 0:
        return None  # libpcp keeps no instance domain record without instances
    table_at = head + 8 * numinst
    if table_at > len(body):
        raise ValueError(f"{numinst} instances do not fit in its {len(body)} bytes")
    insts = struct.unpack_from(f">{numinst}i", body, head)
    stridx = struct.unpack_from(f">{numinst}i", body, head + 4 * numinst)
    table = body[table_at:]
    names: list[str | None] = []
    for i, (inst, idx) in enumerate(zip(insts, stridx, strict=True)):
        if inst < 0:
            raise ValueError(f"instance {i} has a negative identifier ({inst})")
        if idx < 0:
            if delta and idx == -1:
                names.append(None)  # the instance went away
                continue
            raise ValueError(f"instance {inst} has a negative name offset ({idx})")
        if idx > len(table):
            raise ValueError(
                f"instance {inst}'s name offset {idx} is past its {len(table)}-byte name table"
            )
        names.append(_cstr(table[idx:]))  # (no NUL: C reads on into the trailer's 0 byte)
    return InDomRecord(stamp, indom, insts, tuple(names), delta)


def _read_labels(mtype: int, body: bytes) -> LabelRecord:
    """A label record as __pmLogLoadLabelSet checks it (bytes after the sets are ignored)."""
    v2 = mtype == MetaType.TYPE_LABEL_V2
    fmt = ">iiIIi" if v2 else ">qiIIi"
    at = struct.calcsize(fmt)
    if len(body) < at:
        raise ValueError(f"{len(body)} bytes, less than its {at}-byte header")
    sec, frac, type_, ident, nsets = struct.unpack_from(fmt, body)
    if not v2:
        sec = swap_sec(sec)
    if nsets < 0:
        raise ValueError(f"negative count of label sets ({nsets})")
    sets = []
    for i in range(nsets):
        if len(body) - at < 8:
            raise ValueError(f"label set {i} of {nsets} starts past its end")
        inst, jsonlen = struct.unpack_from(">Ii", body, at)
        at += 8
        if jsonlen < 0 or jsonlen > PM_MAXLABELJSONLEN:
            raise ValueError(f"label set {i} has a JSONB length of {jsonlen}")
        if len(body) - at < jsonlen + 4:
            raise ValueError(f"label set {i}'s {jsonlen}-byte JSONB runs past its end")
        json = body[at : at + jsonlen]
        at += jsonlen
        nlabels = _WORD.unpack_from(body, at)[0]
        at += 4
        if nlabels < 0:  # an error code in place of labels
            sets.append(LabelSet(inst, nlabels))
            continue
        if nlabels > PM_MAXLABELS or at + 8 * nlabels > len(body):
            raise ValueError(f"label set {i} claims {nlabels} labels")
        words = struct.unpack_from(f">{2 * nlabels}I", body, at)
        at += 8 * nlabels
        labels = tuple(
            Label(n >> 16, n >> 8 & 0xFF, n & 0xFF, v >> 16, v & 0xFFFF)
            for n, v in zip(words[::2], words[1::2], strict=True)
        )
        sets.append(LabelSet(inst, nlabels, json, labels))
    stamp = Timestamp(sec, usec_ns(frac) if v2 else frac)
    return LabelRecord(stamp, type_, ident, tuple(sets))


#: What a text record of a kind libpcp does not know reads as: skipped, trailer unread.
_SKIP_NO_TRAILER = object()


def _read_text(mtype: int, body: bytes) -> TextRecord | object:
    if len(body) < 8:
        raise ValueError(f"{len(body)} bytes, less than its 8-byte header")
    kind, ident = struct.unpack_from(">II", body)
    if not kind & (PM_TEXT_ONELINE | PM_TEXT_HELP) or not kind & (PM_TEXT_PMID | PM_TEXT_INDOM):
        return _SKIP_NO_TRAILER
    return TextRecord(kind, ident, _cstr(body[8:]))


#: Readers of the records whose bodies libpcp reads whole, by the header's length.
_FRAMED = {
    MetaType.TYPE_INDOM_V2: _read_indom,
    MetaType.TYPE_INDOM: _read_indom,
    MetaType.TYPE_INDOM_DELTA: _read_indom,
    MetaType.TYPE_LABEL_V2: _read_labels,
    MetaType.TYPE_LABEL: _read_labels,
    MetaType.TYPE_TEXT: _read_text,
}


# -- index -----------------------------------------------------------------------------


def encode_index(entry: IndexEntry, version: int) -> bytes:
    s = entry.stamp
    if version == PM_LOG_VERS03:
        sec = swap_sec(s.sec)
        return INDEX_V3.pack(sec, s.nsec, entry.vol, entry.meta_offset, entry.log_offset)
    return INDEX_V2.pack(s.sec, s.nsec // 1000, entry.vol, entry.meta_offset, entry.log_offset)


def decode_index(data: bytes, version: int) -> tuple[list[IndexEntry], int]:
    """The entries after the label in DATA, and the number of stray bytes after the last."""
    start = LABEL_BYTES[version]
    fmt = INDEX_V3 if version == PM_LOG_VERS03 else INDEX_V2
    frac_ns = int if version == PM_LOG_VERS03 else usec_ns
    n = (len(data) - start) // fmt.size
    fix = swap_sec if version == PM_LOG_VERS03 else int
    entries = [
        IndexEntry(Timestamp(fix(sec), frac_ns(frac)), vol, meta, log)
        for sec, frac, vol, meta, log in fmt.iter_unpack(data[start : start + n * fmt.size])
    ]
    return entries, len(data) - start - n * fmt.size
