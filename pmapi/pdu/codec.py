"""Encode PDU records to bytes and decode bytes to PDU records, as libpcp does.

decode() takes exactly one PDU (header included; see framer.py for streams) and
returns its record, or raises PDUError: any input whatsoever gives one or the
other.  Counts are checked against the bytes present before anything is built,
so a hostile length cannot make the decoder allocate or loop beyond the input's
size.  The construct layouts in layouts.py are the definition; every PDU but LABEL
is read and written with precompiled structs that the tests hold to those layouts
byte for byte (RESULT's in result.py).  Struct is quicker, and a client never imports
construct (30 ms of every command's start) unless it reads or sends labels.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from ..desc import Desc
from ..errors import PM_ERR_IPC, PM_ERR_TOOBIG, PMError
from ..labels import Label, LabelSet
from ..units import Units
from .constants import (
    HEADER_SIZE,
    LIMIT_ATTR_PDU,
    LIMIT_CREDS,
    PM_ERR_BASE1,
    PM_ERR_BASE2,
    PDUType,
)
from .records import (
    PDU,
    AttrPDU,
    Cred,
    CredsPDU,
    DescIdsPDU,
    DescPDU,
    DescReqPDU,
    DescsPDU,
    ErrorPDU,
    FetchPDU,
    HighResFetchPDU,
    HighResResultPDU,
    InDomProfile,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from .result import decode_result, encode_result

_HEADER = struct.Struct(">iii")
_FETCH_HEAD = struct.Struct(">iiii8xi")  # header, ctxid, unused timeval, numpmid
_MAX_LABELS = 255  # PM_MAXLABELS
_MAX_JSONLEN = 65535  # PM_MAXLABELJSONLEN


class PDUError(PMError):
    """A PDU that cannot be decoded or encoded: PM_ERR_IPC (or TOOBIG) and the reason."""

    def __init__(self, detail: str, code: int = PM_ERR_IPC) -> None:
        super().__init__(code, detail)


_INT = struct.Struct(">i")
#: Fixed-size bodies of the metadata requests, read and written with struct (construct's
#: layouts in layouts.py say the same; tests/pmapi/test_pdu_codec.py holds them equal).
_PMID = struct.Struct(">I")
_DESC = struct.Struct(">IiIiI")  # pmid, type, indom, sem, units
_IDENT_TYPE = struct.Struct(">Ii")  # TEXT_REQ and LABEL_REQ: ident, type
_DESC_REQ_PDU = struct.Struct(">iiiI")
_DESC_PDU = struct.Struct(">iiiIiIiI")
_IDENT_TYPE_PDU = struct.Struct(">iiiIi")
_XTEND_ERROR = struct.Struct(">iI")  # code, datum: pmcd's connection reply
_PROFILE_HEAD = struct.Struct(">iiii")  # ctxid, g_state, numprof, pad
_PROFILE_INDOM = struct.Struct(">Iiii")  # indom, state, numinst, pad
_INSTANCE_REQ = struct.Struct(">I8xIi")  # indom, unused timestamp, inst, namelen
_INDOM_COUNT = struct.Struct(">Ii")  # INSTANCE: indom, numinst; an entry: inst, namelen
_IDENT_LEN = struct.Struct(">Ii")  # TEXT: ident, buflen
_TWO_INTS = struct.Struct(">ii")  # PMNS_CHILD and PMNS_TRAVERSE: subtype, namelen


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _padded(raw: bytes) -> bytes:
    """RAW padded with '~' to a 4-byte boundary, as libpcp pads strings."""
    return raw + b"~" * (-len(raw) % 4)


def _string_at(frame: bytes, at: int, length: int, what: str) -> tuple[bytes, int]:
    """The LENGTH-byte string at AT, and where the next field starts (after its padding)."""
    if length < 0:
        raise PDUError(f"negative {what} length {length}")
    after = at + length + (-length % 4)
    if after > len(frame):
        raise PDUError(f"{what} of {length} bytes runs past the end of the PDU")
    return frame[at : at + length], after


def _all_used(frame: bytes, at: int, what: str) -> None:
    """Refuse bytes after the last field (AT), as libpcp refuses a PDU it cannot account for."""
    if at != len(frame):
        raise PDUError(f"bytes left over after the {what}")


def _construct_failure(exc: Exception) -> bool:
    """Whether EXC is construct's own (only LABEL is still read and written with it)."""
    return type(exc).__module__.split(".")[0] == "construct"


def _type_label(pdutype: int) -> str:
    try:
        return PDUType(pdutype).label
    except ValueError:
        return f"TYPE-{pdutype}?"


# -- decoding -------------------------------------------------------------------------


def decode(frame: bytes | bytearray | memoryview) -> PDU:
    """The record for the single PDU in FRAME (header included); PDUError if malformed."""
    if type(frame) is not bytes:
        frame = bytes(frame)
    if len(frame) < HEADER_SIZE:
        raise PDUError(f"{len(frame)} bytes is too short for a PDU header")
    length, pdutype, sender = _HEADER.unpack_from(frame)
    if length != len(frame):
        raise PDUError(
            f"{_type_label(pdutype)} PDU header says {length} bytes, but {len(frame)} were given"
        )
    decoder = _DECODERS.get(pdutype)
    if decoder is None:
        raise PDUError(f"unknown PDU type {pdutype:#x}")
    try:
        return decoder(frame, sender)
    except PDUError as exc:
        raise PDUError(f"{_type_label(pdutype)}: {exc.detail}", exc.code) from None
    except PMError as exc:  # e.g. a malformed value set: still a protocol failure
        raise PDUError(f"{_type_label(pdutype)}: {exc.detail or exc.message}") from None
    except (ValueError, OverflowError, struct.error) as exc:
        raise PDUError(f"{_type_label(pdutype)}: malformed body ({exc})") from None
    except Exception as exc:
        if not _construct_failure(exc):
            raise
        reason = str(exc).splitlines()[-1].strip() or type(exc).__name__
        raise PDUError(f"{_type_label(pdutype)}: malformed body ({reason})") from None


def _need(count: int, unit: int, frame: bytes, offset: int, what: str) -> None:
    """Refuse a COUNT of UNIT-byte items that cannot fit in the bytes after OFFSET."""
    if count < 0:
        raise PDUError(f"negative {what} count {count}")
    if count * unit > len(frame) - offset:
        raise PDUError(f"{what} count {count} does not fit in {len(frame)} bytes")


def _decode_error(frame: bytes, sender: int) -> ErrorPDU:
    if len(frame) == HEADER_SIZE + 4:
        return ErrorPDU(_INT.unpack_from(frame, HEADER_SIZE)[0], None, sender)
    if len(frame) == HEADER_SIZE + 8:
        code, datum = _XTEND_ERROR.unpack_from(frame, HEADER_SIZE)
        if code <= -PM_ERR_BASE1:  # the connection reply carries a PCP 1.x code
            code += PM_ERR_BASE1 - PM_ERR_BASE2
        return ErrorPDU(code, datum, sender)
    raise PDUError(f"length {len(frame)} is neither 16 nor 20 bytes")


def _decode_result(frame: bytes, sender: int) -> ResultPDU:
    return ResultPDU(decode_result(frame, False), sender)


def _decode_highres_result(frame: bytes, sender: int) -> HighResResultPDU:
    return HighResResultPDU(decode_result(frame, True), sender)


def _decode_profile(frame: bytes, sender: int) -> ProfilePDU:
    """A PROFILE, read with struct (construct's per-instance objects made a flood of
    large profiles cost pmcd ten times their size)."""
    if len(frame) < HEADER_SIZE + 16:
        raise PDUError(f"length {len(frame)} is shorter than a profile")
    ctxid, g_state, numprof = struct.unpack_from(">iii", frame, HEADER_SIZE)
    if ctxid < 0:
        raise PDUError(f"negative context {ctxid}")
    offset = HEADER_SIZE + 16
    _need(numprof, 16, frame, offset, "instance-domain profile")
    heads = struct.unpack_from(f">{numprof * 4}i", frame, offset)
    offset += 16 * numprof
    counts = heads[2::4]
    for k, numinst in enumerate(counts):
        if numinst < 0:
            indom = heads[4 * k] & 0xFFFFFFFF
            raise PDUError(f"negative instance count {numinst} for indom {indom:#x}")
    total = sum(counts)
    _need(total, 4, frame, offset, "instance")
    if offset + 4 * total != len(frame):
        raise PDUError("bytes left over after the profile")
    insts = struct.unpack_from(f">{total}I", frame, offset)
    profiles = []
    start = 0
    for k, numinst in enumerate(counts):
        indom, state = heads[4 * k] & 0xFFFFFFFF, heads[4 * k + 1]
        profiles.append(InDomProfile(indom, state, insts[start : start + numinst]))
        start += numinst
    return ProfilePDU(ctxid, g_state, tuple(profiles), sender)


def _fetch_pmids(frame: bytes) -> tuple[int, tuple[int, ...]]:
    if len(frame) < _FETCH_HEAD.size:
        raise PDUError(f"length {len(frame)} is shorter than a fetch request")
    _, _, _, ctxid, numpmid = _FETCH_HEAD.unpack_from(frame)
    if numpmid <= 0:
        raise PDUError(f"numpmid {numpmid} is not positive")
    if len(frame) != _FETCH_HEAD.size + 4 * numpmid:
        raise PDUError(f"length {len(frame)} does not match numpmid {numpmid}")
    return ctxid, struct.unpack_from(f">{numpmid}I", frame, _FETCH_HEAD.size)


def _decode_fetch(frame: bytes, sender: int) -> FetchPDU:
    return FetchPDU(*_fetch_pmids(frame), sender)


def _decode_highres_fetch(frame: bytes, sender: int) -> HighResFetchPDU:
    return HighResFetchPDU(*_fetch_pmids(frame), sender)


def _exact(frame: bytes, size: int) -> None:
    if len(frame) != HEADER_SIZE + size:
        raise PDUError(f"length {len(frame)} is not {HEADER_SIZE + size}")


def _decode_desc_req(frame: bytes, sender: int) -> DescReqPDU:
    _exact(frame, 4)
    return DescReqPDU(_PMID.unpack_from(frame, HEADER_SIZE)[0], sender)


def _decode_desc(frame: bytes, sender: int) -> DescPDU:
    _exact(frame, 20)
    pmid, type_, indom, sem, units = _DESC.unpack_from(frame, HEADER_SIZE)
    return DescPDU(Desc(pmid, type_, indom, sem, Units.unpack(units)), sender)


def _decode_descs(frame: bytes, sender: int) -> DescsPDU:
    if len(frame) < HEADER_SIZE + 4:
        raise PDUError(f"length {len(frame)} is shorter than a descriptor list")
    (numdescs,) = struct.unpack_from(">i", frame, HEADER_SIZE)
    if numdescs <= 0:
        raise PDUError(f"numdescs {numdescs} is not positive")
    _need(numdescs, 20, frame, HEADER_SIZE + 4, "descriptor")
    _all_used(frame, HEADER_SIZE + 4 + 20 * numdescs, "descriptors")
    descs = tuple(
        Desc(pmid, type_, indom, sem, Units.unpack(units))
        for pmid, type_, indom, sem, units in _DESC.iter_unpack(frame[HEADER_SIZE + 4 :])
    )
    return DescsPDU(descs, sender)


def _id_list(frame: bytes) -> tuple[int, tuple[int, ...]]:
    """(status word, ids) of an id list (struct, not construct: clients send many)."""
    if len(frame) < HEADER_SIZE + 8:
        raise PDUError(f"length {len(frame)} is shorter than an id list")
    sts, numids = struct.unpack_from(">ii", frame, HEADER_SIZE)
    if numids <= 0:
        raise PDUError(f"id count {numids} is not positive")
    _need(numids, 4, frame, HEADER_SIZE + 8, "id")
    if len(frame) != HEADER_SIZE + 8 + 4 * numids:
        raise PDUError("bytes left over after the id list")
    return sts, struct.unpack_from(f">{numids}I", frame, HEADER_SIZE + 8)


def _decode_desc_ids(frame: bytes, sender: int) -> DescIdsPDU:
    sts, ids = _id_list(frame)
    if sts != -1:
        raise PDUError(f"status word {sts} is not -1")
    return DescIdsPDU(ids, sender)


def _decode_pmns_ids(frame: bytes, sender: int) -> PMNSIdsPDU:
    sts, ids = _id_list(frame)
    return PMNSIdsPDU(sts, ids, sender)


def _decode_instance_req(frame: bytes, sender: int) -> InstanceReqPDU:
    indom, inst, namelen = _INSTANCE_REQ.unpack_from(frame, HEADER_SIZE)
    name, at = _string_at(frame, HEADER_SIZE + _INSTANCE_REQ.size, namelen, "instance name")
    _all_used(frame, at, "instance request")
    return InstanceReqPDU(indom, inst, _text(name) if namelen > 0 else None, sender)


def _decode_instance(frame: bytes, sender: int) -> InstancePDU:
    if len(frame) < HEADER_SIZE + 8:
        raise PDUError(f"length {len(frame)} is shorter than an instance list")
    indom, numinst = _INDOM_COUNT.unpack_from(frame, HEADER_SIZE)
    _need(numinst, 8, frame, HEADER_SIZE + 8, "instance")
    insts, names = [], []
    at = HEADER_SIZE + 8
    for _ in range(numinst):
        if at + 8 > len(frame):
            raise PDUError("instance list ends inside an entry")
        inst, namelen = _INDOM_COUNT.unpack_from(frame, at)
        if namelen < 0:
            raise PDUError(f"negative name length for instance {inst}")
        name, at = _string_at(frame, at + 8, namelen, "instance name")
        insts.append(inst)
        names.append(_text(name))
    _all_used(frame, at, "instances")
    return InstancePDU(indom, tuple(insts), tuple(names), sender)


def _decode_text_req(frame: bytes, sender: int) -> TextReqPDU:
    _exact(frame, 8)
    return TextReqPDU(*_IDENT_TYPE.unpack_from(frame, HEADER_SIZE), sender)


def _decode_text(frame: bytes, sender: int) -> TextPDU:
    ident, buflen = _IDENT_LEN.unpack_from(frame, HEADER_SIZE)
    buffer, at = _string_at(frame, HEADER_SIZE + 8, buflen, "text")
    _all_used(frame, at, "text")
    return TextPDU(ident, _text(buffer), sender)


def _decode_creds(frame: bytes, sender: int) -> CredsPDU:
    if len(frame) < HEADER_SIZE + 4:
        raise PDUError(f"length {len(frame)} is shorter than a credentials list")
    (numcreds,) = struct.unpack_from(">i", frame, HEADER_SIZE)
    if not 0 <= numcreds <= LIMIT_CREDS:
        raise PDUError(f"credential count {numcreds} outside 0..{LIMIT_CREDS}")
    _need(numcreds, 4, frame, HEADER_SIZE + 4, "credential")
    _all_used(frame, HEADER_SIZE + 4 + 4 * numcreds, "credentials")
    words = struct.unpack_from(f">{numcreds}I", frame, HEADER_SIZE + 4)
    return CredsPDU(tuple(Cred.unpack(w) for w in words), sender)


def _decode_pmns_names(frame: bytes, sender: int) -> PMNSNamesPDU:
    if len(frame) < HEADER_SIZE + 12:
        raise PDUError(f"length {len(frame)} is shorter than a name list")
    _, numstatus, numnames = struct.unpack_from(">iii", frame, HEADER_SIZE)
    _need(numnames, 4, frame, HEADER_SIZE + 12, "name")
    if numstatus not in (0, numnames):
        raise PDUError(f"status count {numstatus} is neither 0 nor the name count {numnames}")
    names, statuses = [], []
    at = HEADER_SIZE + 12
    for _ in range(numnames):  # struct, not construct: every lookup sends one of these
        if numstatus:
            if at + 4 > len(frame):
                raise PDUError("name list ends inside an entry")
            statuses.append(_INT.unpack_from(frame, at)[0])
            at += 4
        if at + 4 > len(frame):
            raise PDUError("name list ends inside an entry")
        (namelen,) = _INT.unpack_from(frame, at)
        if namelen < 0:
            raise PDUError(f"negative name length {namelen}")
        end = at + 4 + namelen
        if end > len(frame):
            raise PDUError(f"name of {namelen} bytes runs past the end of the PDU")
        names.append(_text(frame[at + 4 : end]))
        at = end + (-namelen % 4)
    if at != len(frame):
        raise PDUError("bytes left over after the names")
    return PMNSNamesPDU(tuple(names), tuple(statuses) if numstatus else None, sender)


def _decode_name_req(frame: bytes) -> tuple[str, int]:
    """(name, subtype) of a PMNS_CHILD or PMNS_TRAVERSE request."""
    subtype, namelen = _TWO_INTS.unpack_from(frame, HEADER_SIZE)
    name, at = _string_at(frame, HEADER_SIZE + 8, namelen, "name")
    _all_used(frame, at, "name")
    return _text(name), subtype


def _decode_pmns_child(frame: bytes, sender: int) -> PMNSChildPDU:
    return PMNSChildPDU(*_decode_name_req(frame), sender)


def _decode_pmns_traverse(frame: bytes, sender: int) -> PMNSTraversePDU:
    return PMNSTraversePDU(*_decode_name_req(frame), sender)


def _decode_attr(frame: bytes, sender: int) -> AttrPDU:
    if len(frame) < HEADER_SIZE + 4:
        raise PDUError(f"length {len(frame)} is shorter than an attribute")
    if len(frame) - HEADER_SIZE - 4 >= LIMIT_ATTR_PDU:
        raise PDUError(f"attribute value of {len(frame) - HEADER_SIZE - 4} bytes is too long")
    (attr,) = _INT.unpack_from(frame, HEADER_SIZE)
    return AttrPDU(attr, frame[HEADER_SIZE + 4 :], sender)


def _decode_label_req(frame: bytes, sender: int) -> LabelReqPDU:
    _exact(frame, 8)
    return LabelReqPDU(*_IDENT_TYPE.unpack_from(frame, HEADER_SIZE), sender)


def _decode_label(frame: bytes, sender: int) -> LabelPDU:
    if len(frame) < HEADER_SIZE + 16:
        raise PDUError(f"length {len(frame)} is shorter than a label list")
    (nsets,) = struct.unpack_from(">i", frame, HEADER_SIZE + 12)
    _need(nsets, 16, frame, HEADER_SIZE + 16, "label set")
    from . import layouts as L  # (construct: loaded by the first label list only)

    body = L.Label.parse(frame[HEADER_SIZE:])
    sets = []
    for i, s in enumerate(body.sets):
        if s.nlabels >= _MAX_LABELS or s.jsonlen >= _MAX_JSONLEN or s.jsonlen < 0:
            raise PDUError(f"label set {i}: {s.nlabels} labels, {s.jsonlen} JSON bytes")
        if s.json < 0 or s.json + s.jsonlen > len(frame):
            raise PDUError(f"label set {i}: JSON at byte {s.json} runs past the PDU")
        json = frame[s.json : s.json + s.jsonlen]
        labels = tuple(Label(x.name, x.namelen, x.flags, x.value, x.valuelen) for x in s.labels)
        for x in labels:
            if x.name + x.namelen > s.jsonlen or x.value + x.valuelen > s.jsonlen:
                raise PDUError(f"label set {i}: a label points outside its JSON text")
        sets.append(LabelSet(inst=s.inst, nlabels=s.nlabels, json=json, labels=labels))
    return LabelPDU(body.ident, body.type, tuple(sets), sender)


_DECODERS: dict[int, Callable[[bytes, int], Any]] = {
    PDUType.PDU_ERROR: _decode_error,
    PDUType.PDU_RESULT: _decode_result,
    PDUType.PDU_HIGHRES_RESULT: _decode_highres_result,
    PDUType.PDU_PROFILE: _decode_profile,
    PDUType.PDU_FETCH: _decode_fetch,
    PDUType.PDU_HIGHRES_FETCH: _decode_highres_fetch,
    PDUType.PDU_DESC_REQ: _decode_desc_req,
    PDUType.PDU_DESC: _decode_desc,
    PDUType.PDU_DESC_IDS: _decode_desc_ids,
    PDUType.PDU_DESCS: _decode_descs,
    PDUType.PDU_INSTANCE_REQ: _decode_instance_req,
    PDUType.PDU_INSTANCE: _decode_instance,
    PDUType.PDU_TEXT_REQ: _decode_text_req,
    PDUType.PDU_TEXT: _decode_text,
    PDUType.PDU_CREDS: _decode_creds,
    PDUType.PDU_PMNS_IDS: _decode_pmns_ids,
    PDUType.PDU_PMNS_NAMES: _decode_pmns_names,
    PDUType.PDU_PMNS_CHILD: _decode_pmns_child,
    PDUType.PDU_PMNS_TRAVERSE: _decode_pmns_traverse,
    PDUType.PDU_ATTR: _decode_attr,
    PDUType.PDU_LABEL_REQ: _decode_label_req,
    PDUType.PDU_LABEL: _decode_label,
}


# -- encoding -------------------------------------------------------------------------


def _frame(pdutype: int, sender: int, body: bytes) -> bytes:
    return _HEADER.pack(HEADER_SIZE + len(body), pdutype, sender) + body


def _encode_error(pdu: ErrorPDU) -> bytes:
    if pdu.datum is None:
        return _frame(pdu.TYPE, pdu.sender, _INT.pack(pdu.code))
    code = pdu.code
    if code <= -PM_ERR_BASE2:  # the connection reply carries a PCP 1.x code
        code += PM_ERR_BASE2 - PM_ERR_BASE1
    elif code <= -PM_ERR_BASE1:
        raise PDUError(f"code {code} cannot be sent in an extended error (PCP 1.x range)")
    return _frame(pdu.TYPE, pdu.sender, _XTEND_ERROR.pack(code, pdu.datum))


def _encode_profile(pdu: ProfilePDU) -> bytes:
    parts = [_PROFILE_HEAD.pack(pdu.ctxid, pdu.state, len(pdu.profiles), 0)]
    parts += [_PROFILE_INDOM.pack(p.indom, p.state, len(p.insts), 0) for p in pdu.profiles]
    insts = [inst for p in pdu.profiles for inst in p.insts]
    parts.append(struct.pack(f">{len(insts)}I", *insts))
    return _frame(pdu.TYPE, pdu.sender, b"".join(parts))


def _encode_fetch(pdu: FetchPDU | HighResFetchPDU) -> bytes:
    n = len(pdu.pmids)
    return _FETCH_HEAD.pack(_FETCH_HEAD.size + 4 * n, pdu.TYPE, pdu.sender, pdu.ctxid, n) + (
        struct.pack(f">{n}I", *pdu.pmids)
    )


def _encode_descs(pdu: DescsPDU) -> bytes:
    parts = [_INT.pack(len(pdu.descs))]
    parts += [_DESC.pack(d.pmid, d.type, d.indom, d.sem, d.units.pack()) for d in pdu.descs]
    return _frame(pdu.TYPE, pdu.sender, b"".join(parts))


def _encode_instance_req(pdu: InstanceReqPDU) -> bytes:
    name = _raw(pdu.name or "")
    body = _INSTANCE_REQ.pack(pdu.indom, pdu.inst, len(name)) + _padded(name)
    return _frame(pdu.TYPE, pdu.sender, body)


def _encode_instance(pdu: InstancePDU) -> bytes:
    if len(pdu.insts) != len(pdu.names):
        raise PDUError(f"{len(pdu.insts)} instances for {len(pdu.names)} names")
    parts = [_INDOM_COUNT.pack(pdu.indom, len(pdu.insts))]
    for inst, text in zip(pdu.insts, pdu.names, strict=True):
        name = _raw(text)
        parts.append(_INDOM_COUNT.pack(inst, len(name)) + _padded(name))
    return _frame(pdu.TYPE, pdu.sender, b"".join(parts))


def _encode_text(pdu: TextPDU) -> bytes:
    buffer = _raw(pdu.text)
    return _frame(pdu.TYPE, pdu.sender, _IDENT_LEN.pack(pdu.ident, len(buffer)) + _padded(buffer))


def _encode_creds(pdu: CredsPDU) -> bytes:
    words = [c.pack() for c in pdu.creds]
    return _frame(pdu.TYPE, pdu.sender, struct.pack(f">i{len(words)}I", len(words), *words))


def _encode_name_req(pdu: PMNSChildPDU | PMNSTraversePDU) -> bytes:
    name = _raw(pdu.name)
    return _frame(pdu.TYPE, pdu.sender, _TWO_INTS.pack(pdu.subtype, len(name)) + _padded(name))


def _encode_id_list(pdu: DescIdsPDU | PMNSIdsPDU, status: int) -> bytes:
    n = len(pdu.pmids)
    return _frame(pdu.TYPE, pdu.sender, struct.pack(f">ii{n}I", status, n, *pdu.pmids))


def _encode_pmns_names(pdu: PMNSNamesPDU) -> bytes:
    """A name list, each name padded with '~' to a word (struct: pmcd sends many)."""
    raws = [_raw(name) for name in pdu.names]
    statuses = pdu.statuses
    if statuses is not None and len(statuses) != len(raws):
        raise PDUError(f"{len(statuses)} statuses for {len(raws)} names")
    parts = [
        struct.pack(
            ">iii",
            sum(len(r) + 1 for r in raws),
            len(raws) if statuses is not None else 0,
            len(raws),
        )
    ]
    for i, raw in enumerate(raws):
        if statuses is not None:
            parts.append(_INT.pack(statuses[i]))
        parts.append(_INT.pack(len(raw)))
        parts.append(raw + b"~" * (-len(raw) % 4))
    return _frame(pdu.TYPE, pdu.sender, b"".join(parts))


def _encode_label(pdu: LabelPDU) -> bytes:
    offset = HEADER_SIZE + 16 + sum(16 + 8 * max(s.nlabels, 0) for s in pdu.sets)
    headers = []
    for s in pdu.sets:
        headers.append(
            dict(
                inst=s.inst,
                nlabels=s.nlabels,
                json=offset,
                jsonlen=len(s.json),
                labels=[
                    dict(
                        name=x.name,
                        namelen=x.namelen,
                        flags=x.flags,
                        value=x.value,
                        valuelen=x.valuelen,
                    )
                    for x in s.labels
                ],
            )
        )
        offset += len(s.json)
    from . import layouts as L  # (construct: loaded by the first label list only)

    body = L.Label.build(
        dict(
            ident=pdu.ident,
            type=pdu.type,
            padding=0,
            nsets=len(pdu.sets),
            sets=headers,
            jsontext=b"".join(bytes(s.json) for s in pdu.sets),
        )
    )
    return _frame(pdu.TYPE, pdu.sender, body)


_ENCODERS: dict[type, Callable[[Any], bytes]] = {
    ErrorPDU: _encode_error,
    ResultPDU: lambda p: encode_result(p.result, False, p.sender, p.TYPE),
    HighResResultPDU: lambda p: encode_result(p.result, True, p.sender, p.TYPE),
    ProfilePDU: _encode_profile,
    FetchPDU: _encode_fetch,
    HighResFetchPDU: _encode_fetch,
    DescReqPDU: lambda p: _DESC_REQ_PDU.pack(_DESC_REQ_PDU.size, p.TYPE, p.sender, p.pmid),
    DescPDU: lambda p: _DESC_PDU.pack(
        _DESC_PDU.size,
        p.TYPE,
        p.sender,
        p.desc.pmid,
        p.desc.type,
        p.desc.indom,
        p.desc.sem,
        p.desc.units.pack(),
    ),
    DescIdsPDU: lambda p: _encode_id_list(p, -1),
    DescsPDU: _encode_descs,
    InstanceReqPDU: _encode_instance_req,
    InstancePDU: _encode_instance,
    TextReqPDU: lambda p: _IDENT_TYPE_PDU.pack(
        _IDENT_TYPE_PDU.size, p.TYPE, p.sender, p.ident, p.type
    ),
    TextPDU: _encode_text,
    CredsPDU: _encode_creds,
    PMNSIdsPDU: lambda p: _encode_id_list(p, p.status),
    PMNSNamesPDU: _encode_pmns_names,
    PMNSChildPDU: _encode_name_req,
    PMNSTraversePDU: _encode_name_req,
    AttrPDU: lambda p: _frame(p.TYPE, p.sender, _INT.pack(p.attr) + bytes(p.value)),
    LabelReqPDU: lambda p: _IDENT_TYPE_PDU.pack(
        _IDENT_TYPE_PDU.size, p.TYPE, p.sender, p.ident, p.type
    ),
    LabelPDU: _encode_label,
}


def encode(pdu: PDU) -> bytes:
    """The bytes of PDU, exactly as libpcp would send it; PDUError if it cannot be sent."""
    encoder = _ENCODERS.get(type(pdu))
    if encoder is None:
        raise TypeError(f"not a PDU record: {pdu!r}")
    try:
        data = encoder(pdu)
    except PDUError:
        raise
    except PMError as exc:
        raise PDUError(f"{pdu.TYPE.label}: {exc.detail or exc.message}", exc.code) from None
    except Exception as exc:
        known = isinstance(exc, ValueError | OverflowError | struct.error | TypeError)
        if not known and not _construct_failure(exc):
            raise
        reason = str(exc).splitlines()[-1].strip() or type(exc).__name__
        raise PDUError(f"{pdu.TYPE.label}: cannot encode ({reason})") from None
    if len(data) > 0x7FFFFFFF - 1024:
        raise PDUError(f"{pdu.TYPE.label}: {len(data)} bytes is too large", PM_ERR_TOOBIG)
    return data
