"""The PDUs between pmlc and pmlogger's control port (libpcp's p_lcontrol.c,
p_lrequest.c and p_lstatus.c): bytes to records and back, no I/O.

The exchange: pmlogger answers a connection with an ERROR PDU whose code is the
highest LOG PDU version it speaks and whose sender is its PID (a negative code
refuses the connection); pmlc replies with a CREDS PDU naming the version both
will use.  Then pmlc sends LOG_CONTROL (a state change or an enquiry over a set
of metrics and instances: a RESULT comes back, each value its logging state) or
LOG_REQUEST (status: a LOG_STATUS comes back; new volume, sync: an ERROR PDU
whose code is the answer).  ERROR, RESULT and CREDS are codec.py's.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass

from ..values import Result, Timestamp, ValueSet
from .codec import PDUError

PDU_LOG_CONTROL = 0x8000
PDU_LOG_STATUS_V2 = 0x8001
PDU_LOG_REQUEST = 0x8002
PDU_LOG_STATUS = 0x8003

#: LOG PDU versions: 2 (timeval times, fixed-size strings), 3 (nanosecond times)
LOG_PDU_VERSION2 = 2
LOG_PDU_VERSION3 = 3
LOG_PDU_VERSION = LOG_PDU_VERSION3

#: LOG_REQUEST's types
LOG_REQUEST_NEWVOLUME = 1
LOG_REQUEST_STATUS = 2
LOG_REQUEST_SYNC = 3

#: LOG_CONTROL's states and controls
PM_LOG_OFF = 0
PM_LOG_MAYBE = 1
PM_LOG_ON = 2
PM_LOG_MANDATORY = 11
PM_LOG_ADVISORY = 12
PM_LOG_ENQUIRE = 13

#: the bits of a value in LOG_CONTROL's answer (PMLC_GET_*): on, mandatory, the last
#: fetch had a value, the metric-instance is in the archive; the interval above them
PMLC_ON = 0x1
PMLC_MAND = 0x2
PMLC_AVAIL = 0x4
PMLC_INLOG = 0x8
PMLC_MAX_DELTA = 0x0FFFFFFF

#: an archive's state (__pmLogCtl's state): nothing written yet, or logging
PM_LOG_STATE_NEW = 0
PM_LOG_STATE_INIT = 1

_V2_HOSTLEN = 64  # PM_LOG_MAXHOSTLEN
_V2_TZLEN = 40  # PM_TZ_MAXLEN

_HEAD = struct.Struct(">iii")
_CONTROL = struct.Struct(">iiiiiii")  # header, control, state, delta, numpmid
_VLIST = struct.Struct(">Ii")  # pmid, numval
_PAIR = struct.Struct(">iI")  # inst, lval
_REQUEST = struct.Struct(">iiii")  # header, type
_STATUS_V3 = struct.Struct(">iii" + "IIi" * 3 + "ii" + "q" + "i" * 6)
_STATUS_V2 = struct.Struct(
    f">iii4s iiiiii ii q {_V2_HOSTLEN}s{_V2_HOSTLEN}s{_V2_TZLEN}s{_V2_TZLEN}s"
)


def state_value(on: bool, mandatory: bool, delta_ms: int, inlog: bool, avail: bool) -> int:
    """A metric-instance's logging state as one word of LOG_CONTROL's answer."""
    flags = (PMLC_ON if on else 0) | (PMLC_MAND if mandatory else 0)
    flags |= (PMLC_INLOG if inlog else 0) | (PMLC_AVAIL if avail and inlog else 0)
    return (delta_ms & PMLC_MAX_DELTA) << 4 | flags


def state_delta(value: int) -> int:
    """The interval (msec) in a state word."""
    return value >> 4 & PMLC_MAX_DELTA


@dataclass(frozen=True)
class LogControl:
    """A LOG_CONTROL request: CONTROL (mandatory, advisory, enquire), STATE (off,
    maybe, on), DELTA (msec), and per metric the instances meant (none: all)."""

    control: int
    state: int
    delta: int
    metrics: tuple[tuple[int, tuple[int, ...]], ...]  # (pmid, insts)
    sender: int = 0


@dataclass(frozen=True)
class LogStatus:
    """pmlogger's status (__pmLoggerStatus): archive state, start, last record and
    now, volume and its size, pmcd's host, access path and zone, pmlogger's zone."""

    state: int
    start: Timestamp
    last: Timestamp
    now: Timestamp
    vol: int
    size: int
    hostname: str | None
    fqdn: str | None
    pmcd_timezone: str | None
    pmcd_zoneinfo: str | None = None
    pmlogger_timezone: str | None = None
    pmlogger_zoneinfo: str | None = None


def pdu_type(frame: bytes) -> int:
    """The type word of FRAME's header."""
    return _HEAD.unpack_from(frame)[1]


def encode_control(req: LogControl) -> bytes:
    """LOG_CONTROL's bytes (libpcp's __pmSendLogControl)."""
    body = bytearray()
    for pmid, insts in req.metrics:
        body += _VLIST.pack(pmid, len(insts))
        for inst in insts:
            body += _PAIR.pack(inst, 0)
    size = _CONTROL.size + len(body)
    head = _CONTROL.pack(
        size, PDU_LOG_CONTROL, req.sender, req.control, req.state, req.delta, len(req.metrics)
    )
    return head + bytes(body)


def decode_control(frame: bytes) -> LogControl:
    """A LOG_CONTROL request from its bytes; PDUError (PM_ERR_IPC) if malformed."""
    if len(frame) < _CONTROL.size:
        raise PDUError("LOG_CONTROL: too short")
    _, _, sender, control, state, delta, numpmid = _CONTROL.unpack_from(frame)
    if numpmid < 0 or numpmid > len(frame):
        raise PDUError("LOG_CONTROL: bad metric count")
    at = _CONTROL.size
    metrics = []
    for _ in range(numpmid):
        if at + _VLIST.size > len(frame):
            raise PDUError("LOG_CONTROL: truncated")
        pmid, numval = _VLIST.unpack_from(frame, at)
        at += _VLIST.size
        count = max(numval, 0)
        if at + count * _PAIR.size > len(frame):
            raise PDUError("LOG_CONTROL: truncated")
        insts = tuple(_PAIR.unpack_from(frame, at + k * _PAIR.size)[0] for k in range(count))
        at += count * _PAIR.size
        metrics.append((pmid, insts))
    return LogControl(control, state, delta, tuple(metrics), sender)


def encode_request(kind: int, sender: int = 0) -> bytes:
    """LOG_REQUEST's bytes: status, new volume, sync (or a QA code)."""
    return _REQUEST.pack(_REQUEST.size, PDU_LOG_REQUEST, sender, kind)


def decode_request(frame: bytes) -> int:
    """LOG_REQUEST's type."""
    if len(frame) < _REQUEST.size:
        raise PDUError("LOG_REQUEST: too short")
    return _REQUEST.unpack_from(frame)[3]


def _cstr(text: str | None) -> bytes:
    return b"" if text is None else text.encode("utf-8", "surrogateescape") + b"\0"


def encode_status(status: LogStatus, version: int = LOG_PDU_VERSION, sender: int = 0) -> bytes:
    """LOG_STATUS's bytes (version 3), or LOG_STATUS_V2's (version 2)."""
    if version == LOG_PDU_VERSION2:
        return _STATUS_V2.pack(
            _STATUS_V2.size,
            PDU_LOG_STATUS_V2,
            sender,
            b"~~~~",
            status.start.sec,
            status.start.nsec // 1000,
            status.last.sec,
            status.last.nsec // 1000,
            status.now.sec,
            status.now.nsec // 1000,
            status.state,
            status.vol,
            status.size,
            *(
                _cstr(text)[: limit - 1]
                for text, limit in (
                    (status.hostname, _V2_HOSTLEN),
                    (status.fqdn, _V2_HOSTLEN),
                    (status.pmcd_timezone, _V2_TZLEN),
                    (status.pmlogger_timezone, _V2_TZLEN),
                )
            ),
        )
    texts = [
        _cstr(t)
        for t in (
            status.hostname,
            status.fqdn,
            status.pmcd_timezone,
            status.pmcd_zoneinfo,
            status.pmlogger_timezone,
            status.pmlogger_zoneinfo,
        )
    ]
    strings = b"".join(texts)
    pad = b"~" * (-len(strings) % 4)
    size = _STATUS_V3.size + len(strings) + len(pad)
    head = _STATUS_V3.pack(
        size,
        PDU_LOG_STATUS,
        sender,
        *_stamp(status.start),
        *_stamp(status.last),
        *_stamp(status.now),
        status.state,
        status.vol,
        status.size,
        *(len(t) for t in texts),
    )
    return head + strings + pad


def _stamp(ts: Timestamp) -> tuple[int, int, int]:
    """__pmPutTimestamp's words, as a little-endian libpcp sends them: the seconds' low
    32 bits first, then the high ones, then the nanoseconds."""
    return ts.sec & 0xFFFFFFFF, ts.sec >> 32 & 0xFFFFFFFF, ts.nsec


def decode_status(frame: bytes) -> LogStatus:
    """A LOG_STATUS (or LOG_STATUS_V2) PDU's status; PDUError if malformed."""
    kind = pdu_type(frame)
    if kind == PDU_LOG_STATUS_V2:
        if len(frame) < _STATUS_V2.size:
            raise PDUError("LOG_STATUS_V2: too short")
        f = _STATUS_V2.unpack_from(frame)
        names = [raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape") for raw in f[13:17]]
        return LogStatus(
            state=f[10],
            start=Timestamp(f[4], f[5] * 1000),
            last=Timestamp(f[6], f[7] * 1000),
            now=Timestamp(f[8], f[9] * 1000),
            vol=f[11],
            size=f[12],
            hostname=names[0],
            fqdn=names[1],
            pmcd_timezone=names[2],
            pmlogger_timezone=names[3],
        )
    if len(frame) < _STATUS_V3.size:
        raise PDUError("LOG_STATUS: too short")
    f = _STATUS_V3.unpack_from(frame)
    stamps = [Timestamp(f[k + 1] << 32 | f[k], f[k + 2]) for k in (3, 6, 9)]
    at = _STATUS_V3.size
    texts: list[str | None] = []
    for length in f[15:21]:
        if length == 0:
            texts.append(None)
            continue
        if length < 0 or at + length > len(frame):
            raise PDUError("LOG_STATUS: string beyond the PDU")
        texts.append(frame[at : at + length].split(b"\0", 1)[0].decode("utf-8", "surrogateescape"))
        at += length
    return LogStatus(f[12], stamps[0], stamps[1], stamps[2], f[13], f[14], *texts)


def control_result(vsets: list[tuple[int, int, list[tuple[int, int]]]]) -> Result:
    """LOG_CONTROL's answer as a Result (time zero): per metric its PMID, its count
    (negative: an error code) and its (instance, state word) pairs, all insitu."""
    sets = []
    for pmid, numval, pairs in vsets:
        insts = array("I", (inst & 0xFFFFFFFF for inst, _ in pairs))
        values = array("I", (value & 0xFFFFFFFF for _, value in pairs))
        sets.append(ValueSet(pmid, numval if numval < 0 else len(pairs), 0, 0, insts, values))
    return Result(Timestamp(0, 0), tuple(sets))
