"""-Dlogmeta: the line libpcp's instance-domain loader prints when it refuses a record.

The archive reader says which .meta record it refused (file and offset); this reads
that record again to say what libpcp's trace says of it: the first instance with a
negative identifier, or a name offset that is negative or past the names.
"""

from __future__ import annotations

import struct

from purepcp.pmapi.archive.format import MetaType
from purepcp.pmapi.ids import pmInDomStr

from .pass0 import read_whole
from .state import err

_V2_HEAD = struct.Struct(">iiIi")  # sec, usec, indom, numinst
_V3_HEAD = struct.Struct(">qiIi")  # sec (two words), nsec, indom, numinst
_INDOMS = (MetaType.TYPE_INDOM_V2, MetaType.TYPE_INDOM, MetaType.TYPE_INDOM_DELTA)


def indom_complaint(record: bytes) -> str | None:
    """What __pmLogLoadInDom's trace says of RECORD (framed), None if nothing."""
    if len(record) < 12:
        return None
    length, mtype = struct.unpack_from(">ii", record)
    if mtype not in _INDOMS:
        return None
    body = record[8 : max(length - 4, 8)]
    head = _V2_HEAD if mtype == MetaType.TYPE_INDOM_V2 else _V3_HEAD
    if len(body) < head.size:
        return None
    _, _, indom, numinst = head.unpack_from(body)
    if numinst <= 0 or len(body) < head.size + 8 * numinst:
        return None
    max_idx = len(body) - head.size - 8 * numinst
    insts = struct.unpack_from(f">{numinst}i", body, head.size)
    stridx = struct.unpack_from(f">{numinst}i", body, head.size + 4 * numinst)
    name = pmInDomStr(indom)
    for i, (inst, idx) in enumerate(zip(insts, stridx, strict=True)):
        if inst < 0:
            what = f"bad instance identifier ({inst})"
            return f"__pmLogLoadInDom: InDom: {name}: instance[{i}]: {what}"
        if idx > max_idx:
            return (
                f"__pmLogLoadInDom: InDom: {name} instance[{i}]: bad string index ({idx}) "
                f"> max index based on record length ({max_idx})"
            )
        if idx < 0 and not (mtype == MetaType.TYPE_INDOM_DELTA and idx == -1):
            return f"__pmLogLoadInDom: InDom: {name} instance[{i}]: bad string index ({idx})"
    return None


def trace_refusal(exc: Exception) -> None:
    """The trace line for the refusal EXC (an ArchiveError in the .meta), if it has one."""
    path = getattr(exc, "file", None)
    offset = getattr(exc, "offset", None)
    if not isinstance(path, str) or not isinstance(offset, int) or ".meta" not in path:
        return
    try:
        data = read_whole(path)
    except OSError:
        return
    if offset + 8 > len(data):
        return
    length = struct.unpack_from(">i", data, offset)[0]
    line = indom_complaint(data[offset : offset + max(length, 12)])
    if line is not None:
        err(line + "\n")
