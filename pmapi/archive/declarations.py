"""The construct declarations of the archive's records: the layouts, written once.

pcp-archive(5) as data.  Nothing reads an archive through them (format.py's readers
use struct, and a tool replaying an archive never imports construct); the writers
build the few metadata records through them, and the tests hold every struct path to
them byte for byte.
"""

from __future__ import annotations

from construct import (
    Array,
    Bytes,
    Const,
    ExprSymmetricAdapter,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    this,
)

from .versions import PM_LOG_MAGIC, PM_LOG_VERS02, PM_LOG_VERS03, swap_sec

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
