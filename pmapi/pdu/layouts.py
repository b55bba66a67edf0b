"""construct declarations of every PDU PCP 6 exchanges, as libpcp's p_*.c lay them out.

Each layout describes a PDU *body*: the bytes after the 12-byte header (length,
type, from; big-endian int32 each).  All integers are big-endian.  Variable-length
strings are length-prefixed and padded to a 4-byte boundary with ``~`` bytes, as
libpcp pads them.  RESULT and HIGHRES_RESULT are declared here too (value sets,
then the value blocks they point at by 4-byte word offset from the start of the
PDU); the codec decodes those with precompiled structs (see result.py), and the
tests check the two agree byte for byte.
"""

from __future__ import annotations

from construct import (
    Aligned,
    Array,
    Bytes,
    Computed,
    GreedyBytes,
    If,
    IfThenElse,
    Int8ub,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    this,
)


def _padded(length) -> Aligned:
    """Bytes of the given length, padded to a 4-byte boundary with '~'."""
    return Aligned(4, Bytes(length), pattern=b"~")


Header = Struct("len" / Int32sb, "type" / Int32sb, "from" / Int32sb)

#: PDU_ERROR: a status code; pmcd's connection reply adds a datum word (20 bytes in all).
Error = Struct("code" / Int32sb)
XtendError = Struct("code" / Int32sb, "datum" / Int32ub)

#: PDU_FETCH and PDU_HIGHRES_FETCH: the same body; the old timestamp is always zero.
Fetch = Struct(
    "ctxid" / Int32sb,
    "unused" / Bytes(8),
    "numpmid" / Int32sb,
    "pmids" / Array(this.numpmid, Int32ub),
)

#: PDU_PROFILE: all per-indom headers first, then all their instance lists.
InDomProfileHeader = Struct(
    "indom" / Int32ub, "state" / Int32sb, "numinst" / Int32sb, "pad" / Int32sb
)
Profile = Struct(
    "ctxid" / Int32sb,
    "g_state" / Int32sb,
    "numprof" / Int32sb,
    "pad" / Int32sb,
    "profiles" / Array(this.numprof, InDomProfileHeader),
    "instances" / Array(lambda ctx: sum(p.numinst for p in ctx.profiles), Int32ub),
)

DescReq = Struct("pmid" / Int32ub)
DescBody = Struct(
    "pmid" / Int32ub, "type" / Int32sb, "indom" / Int32ub, "sem" / Int32sb, "units" / Int32ub
)
Descs = Struct("numdescs" / Int32sb, "descs" / Array(this.numdescs, DescBody))

#: PDU_PMNS_IDS and PDU_DESC_IDS (sts is -1 for DESC_IDS).
IDList = Struct("sts" / Int32sb, "numids" / Int32sb, "ids" / Array(this.numids, Int32ub))

InstanceReq = Struct(
    "indom" / Int32ub,
    "unused" / Bytes(8),
    "inst" / Int32ub,
    "namelen" / Int32sb,
    "name" / _padded(this.namelen),
)
InstanceEntry = Struct("inst" / Int32ub, "namelen" / Int32sb, "name" / _padded(this.namelen))
Instance = Struct(
    "indom" / Int32ub, "numinst" / Int32sb, "instances" / Array(this.numinst, InstanceEntry)
)

TextReq = Struct("ident" / Int32ub, "type" / Int32sb)
Text = Struct("ident" / Int32ub, "buflen" / Int32sb, "buffer" / _padded(this.buflen))

#: PDU_CREDS: each credential is one word (c_type:8, then three value bytes).
Creds = Struct("numcreds" / Int32sb, "creds" / Array(this.numcreds, Int32ub))

NameEntry = Struct("namelen" / Int32sb, "name" / _padded(this.namelen))
NameStatusEntry = Struct("status" / Int32sb, "namelen" / Int32sb, "name" / _padded(this.namelen))
PMNSNames = Struct(
    "nstrbytes" / Int32sb,
    "numstatus" / Int32sb,
    "numnames" / Int32sb,
    "names" / Array(this.numnames, IfThenElse(this.numstatus != 0, NameStatusEntry, NameEntry)),
)

#: PDU_PMNS_CHILD and PDU_PMNS_TRAVERSE requests (subtype: 1 asks for leaf status).
NameReq = Struct("subtype" / Int32sb, "namelen" / Int32sb, "name" / _padded(this.namelen))

#: PDU_ATTR: an attribute code and its raw value; the length is not padded.
Attr = Struct("attr" / Int32sb, "value" / GreedyBytes)

LabelReq = Struct("ident" / Int32ub, "type" / Int32sb)
LabelIndex = Struct(
    "name" / Int16ub,
    "namelen" / Int8ub,
    "flags" / Int8ub,
    "value" / Int16ub,
    "valuelen" / Int16ub,
)
LabelSetHeader = Struct(
    "inst" / Int32ub,
    "nlabels" / Int32sb,
    "json" / Int32sb,  # byte offset of this set's JSONB text from the start of the PDU
    "jsonlen" / Int32sb,
    "labels" / Array(lambda ctx: max(ctx.nlabels, 0), LabelIndex),
)
#: PDU_LABEL: all label-set headers, then every set's JSONB text back to back (unpadded).
Label = Struct(
    "ident" / Int32ub,
    "type" / Int32sb,
    "padding" / Int32sb,
    "nsets" / Int32sb,
    "sets" / Array(this.nsets, LabelSetHeader),
    "jsontext" / GreedyBytes,
)

# -- RESULT and HIGHRES_RESULT --------------------------------------------------------

#: One pmValue on the wire: the instance, then the insitu lval or a block's word offset.
WireValue = Struct("inst" / Int32ub, "value" / Int32sb)
#: One pmValueSet: valfmt is present only when numval > 0 (numval < 0 is an error code).
WireValueSet = Struct(
    "pmid" / Int32ub,
    "numval" / Int32sb,
    "valfmt" / If(this.numval > 0, Int32sb),
    "vlist" / Array(lambda ctx: max(ctx.numval, 0), WireValue),
)
#: One pmValueBlock: vtype:8 and vlen:24 (header included), payload, '~' padding.
ValueBlock = Struct(
    "header" / Int32ub,
    "vtype" / Computed(this.header >> 24),
    "vlen" / Computed(this.header & 0xFFFFFF),
    "vbuf" / _padded(lambda ctx: ctx.vlen - 4),
)
#: PDU_RESULT body: pmTimeval (int32 sec, int32 usec), then the value sets.
ResultPreamble = Struct("sec" / Int32sb, "usec" / Int32sb, "numpmid" / Int32sb)
#: PDU_HIGHRES_RESULT body: numpmid first, then a 64-bit timespec.
HighResResultPreamble = Struct("numpmid" / Int32sb, "sec" / Int64sb, "nsec" / Int64sb)
