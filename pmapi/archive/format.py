"""The PCP archive format, versions 2 and 3, as pcp-archive(5) and libpcp lay it out.

Every file of an archive (volumes .0 .1 ..., .meta, .index) starts with a log label
record; volume and .meta records are framed by their length before and after; the
.index is a bare run of fixed-size entries.  All integers are big-endian.

The construct declarations below are the layouts, written once.  Metadata records
are few and are encoded and decoded through them directly; volume records (one per
sample, the bulk of an archive) go through the precompiled pmResult codec in
pdu/result.py, and index entries through one struct, each tested byte for byte
against its declaration here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from construct import (
    Array,
    Bytes,
    Const,
    ConstructError,
    ExprSymmetricAdapter,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    this,
)

from ..desc import Desc
from ..errors import PM_ERR_LABEL, PM_ERR_LOGREC, PMError  # type: ignore[attr-defined]
from ..labels import Label, LabelSet
from ..units import Units
from ..values import Timestamp

PM_LOG_MAGIC = 0x50052600
PM_LOG_VERS02 = 2
PM_LOG_VERS03 = 3
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


# -- declarations ----------------------------------------------------------------------


def swap_sec(sec: int) -> int:
    """A v3 timestamp's seconds as PCP 6.0 stores them, or back (the swap is its own inverse).

    __pmPutTimestamp writes the 64-bit seconds as two big-endian words with the low word
    first (on the little-endian hosts PCP runs on): read as one big-endian int64, that
    is the true value with its halves swapped.
    """
    u = sec & 0xFFFF_FFFF_FFFF_FFFF
    u = (u & 0xFFFF_FFFF) << 32 | u >> 32
    return u - (1 << 64) if u >= 1 << 63 else u


#: The seconds of a v3 timestamp (label, record, index entry, indom and label records).
SecV3 = ExprSymmetricAdapter(Int64sb, lambda obj, ctx: swap_sec(obj))

#: __pmLabel_v2 inside its frame: 132 bytes in all.
LabelV2 = Struct(
    "len" / Const(132, Int32sb),
    "magic" / Const(PM_LOG_MAGIC | PM_LOG_VERS02, Int32ub),
    "pid" / Int32sb,
    "sec" / Int32sb,
    "usec" / Int32sb,
    "vol" / Int32sb,
    "hostname" / Bytes(64),
    "timezone" / Bytes(40),
    "trailer" / Const(132, Int32sb),
)
#: __pmLabel_v3 inside its frame: 64-bit seconds, features, and a zoneinfo string.
LabelV3 = Struct(
    "len" / Const(808, Int32sb),
    "magic" / Const(PM_LOG_MAGIC | PM_LOG_VERS03, Int32ub),
    "pid" / Int32sb,
    "sec" / SecV3,
    "nsec" / Int32sb,
    "vol" / Int32sb,
    "features" / Int32ub,
    "reserved" / Int32ub,
    "hostname" / Bytes(256),
    "timezone" / Bytes(256),
    "zoneinfo" / Bytes(256),
    "trailer" / Const(808, Int32sb),
)
#: The start of a volume record (after its length): pmTimeval and the metric count.
ResultHeadV2 = Struct("sec" / Int32sb, "usec" / Int32sb, "numpmid" / Int32sb)
ResultHeadV3 = Struct("sec" / SecV3, "nsec" / Int32sb, "numpmid" / Int32sb)
#: Temporal index entries: v2 with 32-bit offsets, v3 with 64-bit seconds and offsets.
IndexV2 = Struct(
    "sec" / Int32sb, "usec" / Int32sb, "vol" / Int32sb, "meta" / Int32sb, "log" / Int32sb
)
IndexV3 = Struct(
    "sec" / SecV3, "nsec" / Int32sb, "vol" / Int32sb, "meta" / Int64sb, "log" / Int64sb
)
#: TYPE_DESC body: pmDesc, then the metric's names (length-prefixed, no NUL, no padding).
DescBody = Struct(
    "pmid" / Int32ub,
    "type" / Int32sb,
    "indom" / Int32ub,
    "sem" / Int32sb,
    "units" / Int32ub,
    "numnames" / Int32sb,
    "names" / Array(this.numnames, Struct("len" / Int32sb, "name" / Bytes(this.len))),
)
#: TYPE_INDOM_V2 / TYPE_INDOM(_DELTA) body up to the string table, which fills the rest:
#: names are NUL-terminated at byte offsets (stridx) from the table's start; -1 in a
#: delta record marks an instance that went away.
InDomHeadV2 = Struct(
    "sec" / Int32sb,
    "usec" / Int32sb,
    "indom" / Int32ub,
    "numinst" / Int32sb,
    "insts" / Array(this.numinst, Int32sb),
    "stridx" / Array(this.numinst, Int32sb),
)
InDomHeadV3 = Struct(
    "sec" / SecV3,
    "nsec" / Int32sb,
    "indom" / Int32ub,
    "numinst" / Int32sb,
    "insts" / Array(this.numinst, Int32sb),
    "stridx" / Array(this.numinst, Int32sb),
)
#: One label set in a label record: its JSONB inline, then its pmLabel index.
LabelSetBody = Struct(
    "inst" / Int32ub,
    "jsonlen" / Int32sb,
    "json" / Bytes(lambda ctx: max(ctx.jsonlen, 0)),
    "nlabels" / Int32sb,
    "labels"
    / Array(
        lambda ctx: max(ctx.nlabels, 0),
        Struct(
            "name" / Int32ub,  # u16 name offset, u8 namelen, u8 flags: one word
            "value" / Int32ub,  # u16 value offset, u16 valuelen
        ),
    ),
)
LabelHeadV2 = Struct(
    "sec" / Int32sb, "usec" / Int32sb, "type" / Int32ub, "ident" / Int32ub, "nsets" / Int32sb
)
LabelHeadV3 = Struct(
    "sec" / SecV3, "nsec" / Int32sb, "type" / Int32ub, "ident" / Int32ub, "nsets" / Int32sb
)
#: TYPE_TEXT body: the text's kind (PM_TEXT_* bits), the PMID or InDom, NUL-ended text.
TextHead = Struct("type" / Int32ub, "ident" / Int32ub)

FRAME = struct.Struct(">i")
META_HEADER = struct.Struct(">ii")  # length, type
INDEX_V2 = struct.Struct(">iiiii")
INDEX_V3 = struct.Struct(">qiiqq")
LABEL_BYTES = {PM_LOG_VERS02: LabelV2.sizeof(), PM_LOG_VERS03: LabelV3.sizeof()}


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


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def encode_label(label: LogLabel) -> bytes:
    """The framed label record for LABEL (hostname and zones cut to their fields, as PCP does)."""
    if label.version == PM_LOG_VERS03:
        return LabelV3.build(
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
    return LabelV2.build(
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
    """The label at the start of DATA; PMError(PM_ERR_LABEL) naming WHERE if it is not one."""
    if len(data) < 8:
        raise ArchiveError(PM_ERR_LABEL, where, 0, "file too short for a label record")
    length, magic = META_HEADER.unpack_from(data)
    if magic & 0xFFFFFF00 != PM_LOG_MAGIC:
        raise ArchiveError(PM_ERR_LABEL, where, 0, f"bad magic number 0x{magic & 0xFFFFFFFF:08x}")
    version = magic & 0xFF
    size = LABEL_BYTES.get(version)
    if size is None:
        raise ArchiveError(PM_ERR_LABEL, where, 0, f"archive version {version} is not supported")
    if length != size or len(data) < size:
        raise ArchiveError(PM_ERR_LABEL, where, 0, f"label record of {length} bytes, not {size}")
    if FRAME.unpack_from(data, size - 4)[0] != size:
        raise ArchiveError(PM_ERR_LABEL, where, size - 4, "label trailer does not match its header")
    if version == PM_LOG_VERS03:
        c = LabelV3.parse(data[:size])
        stamp = Timestamp(c.sec, c.nsec)
        return LogLabel(
            version,
            c.pid,
            stamp,
            c.vol,
            _cstr(c.hostname),
            _cstr(c.timezone),
            _cstr(c.zoneinfo),
            c.features,
        )
    c = LabelV2.parse(data[:size])
    stamp = Timestamp(c.sec, c.usec * 1000)
    return LogLabel(version, c.pid, stamp, c.vol, _cstr(c.hostname), _cstr(c.timezone))


def _cstr(field: bytes) -> str:
    """A label string field as C reads it: up to its first NUL."""
    return _text(field.split(b"\0", 1)[0])


# -- errors ----------------------------------------------------------------------------


class ArchiveError(PMError):
    """Damage or a misfit in an archive file: a PCP code, the file and the byte offset."""

    def __init__(self, code: int, file: str, offset: int, detail: str) -> None:
        super().__init__(code, f"{file}: offset {offset}: {detail}")
        self.file = file
        self.offset = offset
        self.reason = detail


# -- metadata records ------------------------------------------------------------------


def _frame(mtype: int, body: bytes) -> bytes:
    n = len(body) + 12
    return META_HEADER.pack(n, mtype) + body + FRAME.pack(n)


def encode_desc(record: DescRecord) -> bytes:
    """A framed TYPE_DESC record."""
    d = record.desc
    names = [_raw(n) for n in record.names]
    body = DescBody.build(
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
        head = InDomHeadV3.build(dict(fields, sec=s.sec, nsec=s.nsec))
        mtype = MetaType.TYPE_INDOM_DELTA if record.delta else MetaType.TYPE_INDOM
    else:
        head = InDomHeadV2.build(dict(fields, sec=s.sec, usec=s.nsec // 1000))
        mtype = MetaType.TYPE_INDOM_V2
    return _frame(mtype, head + bytes(table))


def encode_labels(record: LabelRecord, version: int) -> bytes:
    """A framed label record (TYPE_LABEL_V2 for v2, TYPE_LABEL for v3)."""
    s = record.stamp
    common = dict(type=record.type, ident=record.ident, nsets=len(record.sets))
    if version == PM_LOG_VERS03:
        head = LabelHeadV3.build(dict(common, sec=s.sec, nsec=s.nsec))
        mtype = MetaType.TYPE_LABEL
    else:
        head = LabelHeadV2.build(dict(common, sec=s.sec, usec=s.nsec // 1000))
        mtype = MetaType.TYPE_LABEL_V2
    parts = [head]
    for ls in record.sets:
        parts.append(
            LabelSetBody.build(
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
    body = TextHead.build(dict(type=record.type, ident=record.ident)) + _raw(record.text) + b"\0"
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


def decode_meta(mtype: int, body: bytes, where: str, offset: int) -> MetaRecord | None:
    """The record of MTYPE in BODY (between header and trailer); None for unknown text kinds.

    Raises ArchiveError(PM_ERR_LOGREC) naming WHERE and OFFSET when the body does not
    hold what its type says.
    """
    try:
        if mtype == MetaType.TYPE_DESC:
            return _decode_desc(body)
        if mtype in (MetaType.TYPE_INDOM_V2, MetaType.TYPE_INDOM, MetaType.TYPE_INDOM_DELTA):
            return _decode_indom(mtype, body)
        if mtype in (MetaType.TYPE_LABEL_V2, MetaType.TYPE_LABEL):
            return _decode_labels(mtype, body)
        if mtype == MetaType.TYPE_TEXT:
            return _decode_text(body)
    except ArchiveError:
        raise
    except (ValueError, IndexError, struct.error, UnicodeError) as exc:
        raise ArchiveError(
            PM_ERR_LOGREC, where, offset, f"malformed {_type_name(mtype)} record ({exc})"
        ) from None
    except ConstructError as exc:  # a count or length that runs past the record
        what = f"malformed {_type_name(mtype)} record ({type(exc).__name__})"
        raise ArchiveError(PM_ERR_LOGREC, where, offset, what) from None
    raise ArchiveError(PM_ERR_LOGREC, where, offset, f"unknown metadata record type {mtype}")


def _type_name(mtype: int) -> str:
    try:
        return MetaType(mtype).name
    except ValueError:
        return f"type {mtype}"


def _decode_desc(body: bytes) -> DescRecord:
    c = DescBody.parse(body)
    if DescBody.build(c) != body:
        raise ValueError(f"{len(body)} bytes where the names take {len(DescBody.build(c))}")
    desc = Desc(c.pmid, c.type, c.indom, c.sem, Units.unpack(c.units))
    return DescRecord(desc, tuple(_text(n.name) for n in c.names))


def _decode_indom(mtype: int, body: bytes) -> InDomRecord:
    if mtype == MetaType.TYPE_INDOM_V2:
        c = InDomHeadV2.parse(body)
        stamp = Timestamp(c.sec, c.usec * 1000)
        head = 16
    else:
        c = InDomHeadV3.parse(body)
        stamp = Timestamp(c.sec, c.nsec)
        head = 20
    if c.numinst < 0:
        raise ValueError(f"numinst {c.numinst}")
    table = body[head + 8 * c.numinst :]
    names: list[str | None] = []
    for idx in c.stridx:
        if idx == -1 and mtype == MetaType.TYPE_INDOM_DELTA:
            names.append(None)
            continue
        end = table.find(b"\0", idx)
        if idx < 0 or end < 0:
            raise ValueError(f"instance name offset {idx} outside the {len(table)}-byte table")
        names.append(_text(table[idx:end]))
    insts = tuple(i & 0xFFFFFFFF if i < 0 else i for i in c.insts)
    return InDomRecord(stamp, c.indom, insts, tuple(names), mtype == MetaType.TYPE_INDOM_DELTA)


def _decode_labels(mtype: int, body: bytes) -> LabelRecord:
    if mtype == MetaType.TYPE_LABEL_V2:
        c = LabelHeadV2.parse(body)
        stamp = Timestamp(c.sec, c.usec * 1000)
        at = LabelHeadV2.sizeof()
    else:
        c = LabelHeadV3.parse(body)
        stamp = Timestamp(c.sec, c.nsec)
        at = LabelHeadV3.sizeof()
    if c.nsets < 0:
        raise ValueError(f"nsets {c.nsets}")
    sets = []
    for _ in range(c.nsets):
        s = LabelSetBody.parse(body[at:])
        at += 12 + len(s.json) + 8 * max(s.nlabels, 0)
        if s.nlabels < 0:
            sets.append(LabelSet(s.inst, s.nlabels))
            continue
        labels = tuple(
            Label(x.name >> 16, x.name >> 8 & 0xFF, x.name & 0xFF, x.value >> 16, x.value & 0xFFFF)
            for x in s.labels
        )
        sets.append(LabelSet(s.inst, s.nlabels, bytes(s.json), labels))
    if at != len(body):
        raise ValueError(f"{len(body) - at} bytes left after {c.nsets} label sets")
    return LabelRecord(stamp, c.type, c.ident, tuple(sets))


def _decode_text(body: bytes) -> TextRecord | None:
    c = TextHead.parse(body)
    text = body[8:]
    end = text.find(b"\0")
    if end >= 0:
        text = text[:end]
    if not c.type & (PM_TEXT_ONELINE | PM_TEXT_HELP) or not c.type & (PM_TEXT_PMID | PM_TEXT_INDOM):
        return None  # libpcp skips text of a kind it does not know
    return TextRecord(c.type, c.ident, _text(text))


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
    scale = 1 if version == PM_LOG_VERS03 else 1000
    n = (len(data) - start) // fmt.size
    fix = swap_sec if version == PM_LOG_VERS03 else int
    entries = [
        IndexEntry(Timestamp(fix(sec), frac * scale), vol, meta, log)
        for sec, frac, vol, meta, log in fmt.iter_unpack(data[start : start + n * fmt.size])
    ]
    return entries, len(data) - start - n * fmt.size
