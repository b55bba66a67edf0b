"""Pass 0: the physical structure of each file of the archive, in PCP's words.

Every file starts with a label record; the volumes and the .meta are then framed
records (a length before and after), the .index fixed-size entries.  Each file is read
as pmlogcheck reads it, a stream of lengths and bodies, so a damaged length is reported
at the record it was found in, followed by where the last whole record ended.  The
label is checked for its magic number and version and loaded as libpcp loads one; the
first good label becomes the golden one the others (and passes 1 and 3) are held to.
A .meta record of a type the archive's version does not have is reported, record by
record, without stopping the pass.
"""

from __future__ import annotations

import errno
import struct

from purepcp.pmapi.archive.format import LABEL_BYTES, LABEL_V2, LABEL_V3, MetaType
from purepcp.pmapi.archive.versions import PM_LOG_MAGIC, PM_LOG_VERS02, PM_LOG_VERS03, swap_sec
from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.errors import PM_ERR_LABEL, PM_ERR_NODATA, PMError, pmErrStr
from purepcp.pmapi.values import Timestamp

from .files import Kind, kind_of
from .state import FileState, Golden, Run, Sts, err

_WORD = struct.Struct(">i")
#: the .meta record types each archive version may not hold
_NOT_IN = {
    PM_LOG_VERS02: (MetaType.TYPE_INDOM, MetaType.TYPE_INDOM_DELTA, MetaType.TYPE_LABEL),
    PM_LOG_VERS03: (MetaType.TYPE_INDOM_V2, MetaType.TYPE_LABEL_V2),
}
_TYPE_WORDS = {
    MetaType.TYPE_DESC: "DESC",
    MetaType.TYPE_INDOM_V2: "INDOM_V2",
    MetaType.TYPE_LABEL_V2: "LABEL_V2",
    MetaType.TYPE_TEXT: "TEXT",
    MetaType.TYPE_INDOM: "INDOM",
    MetaType.TYPE_INDOM_DELTA: "INDOM_DELTA",
    MetaType.TYPE_LABEL: "LABEL",
}


def meta_type_str(mtype: int) -> str:
    """__pmLogMetaTypeStr: a .meta record type's name."""
    return _TYPE_WORDS.get(mtype, "UNKNOWN")  # type: ignore[call-overload]


def read_whole(path: str) -> bytes:
    """A file's contents, decompressed as __pmFopen decompresses it; OSError if it cannot."""
    import os

    from purepcp.pmapi.archive.reader import file_bytes

    try:
        return bytes(file_bytes(path))
    except PMError as exc:
        code = -exc.code if -4096 < exc.code < 0 else errno.EIO
        raise OSError(code, os.strerror(code)) from None


def load_label(data: bytes) -> tuple[int, int, Timestamp, int, int]:
    """__pmLogLoadLabel: the label at the start of DATA as (magic, pid, start, vol,
    version); PMError PM_ERR_NODATA (no label at all) or PM_ERR_LABEL, as libpcp's."""
    if len(data) < 8:
        raise PMError(PM_ERR_NODATA if not data else PM_ERR_LABEL)
    length, magic = struct.unpack_from(">iI", data)
    version = magic & 0xFF
    size = LABEL_BYTES.get(version)
    if size is None or length != size or len(data) < size:
        raise PMError(PM_ERR_LABEL)
    if _WORD.unpack_from(data, size - 4)[0] != length:
        raise PMError(PM_ERR_LABEL)
    if version == PM_LOG_VERS03:
        _, _, pid, sec, nsec, vol, *_ = LABEL_V3.unpack_from(data)
        return magic, pid, Timestamp(swap_sec(sec), nsec), vol, version
    _, _, pid, sec, usec, vol, *_ = LABEL_V2.unpack_from(data)
    return magic, pid, Timestamp(sec, int32(usec * 1000)), vol, version


class _Pass0:
    """One file's pass 0: its messages, its record count and where its last record ended."""

    def __init__(self, run: Run, fname: str, kind: Kind) -> None:
        self.run = run
        self.fname = fname
        self.kind = kind
        self.eol = True  # (-v: whether the "start pass0 ... " line is ended)
        self.nrec = 0
        self.offset = 0
        self.label_ok = Sts.OK

    def say(self, text: str) -> None:
        """A complaint, on a line of its own after -v's "start pass0 ... "."""
        if not self.eol:
            err("\n")
            self.eol = True
        err(text)

    def where(self) -> str:
        return self.fname if self.nrec == 0 else f"{self.fname}[record {self.nrec}]"

    def check(self, data: bytes) -> Sts:
        """The file's records, framed; FATAL at the first bad frame."""
        at, end, mtype = 0, len(data), 0
        f = self.fname
        while end - at >= 4:
            length = _WORD.unpack_from(data, at)[0]
            at += 4
            label = self.nrec == 0
            if 0 <= length < 8:  # (C compares unsigned: a negative length passes here)
                what = "in label record" if label else ""
                self.say(f"{self.where()}: illegal header record length ({length}){_sp(what)}\n")
                return Sts.FATAL
            body = max(length - 8, 0)
            if end - at < body:
                got = end - at
                rec = "label record body" if label else "record body"
                want = length - 8
                self.say(
                    f"{self.where()}: unexpected EOF in {rec}, wanted {want}, got {got} bytes\n"
                )
                return Sts.FATAL
            if self.kind is Kind.META and not label:
                for byte in data[at : at + min(body, 4)]:
                    mtype = int32((mtype << 8) | byte)
            at += body
            if end - at < 4:
                rec = "label record trailer" if label else "record trailer"
                got = end - at
                self.say(f"{self.where()}: unexpected EOF in {rec}, wanted 4, got {got} bytes\n")
                return Sts.FATAL
            trailer = _WORD.unpack_from(data, at)[0]
            at += 4
            if 0 <= trailer < 8:
                what = "in label record" if label else ""
                self.say(f"{self.where()}: illegal trailer record length ({trailer}){_sp(what)}\n")
                return Sts.FATAL
            if trailer != length:
                if label:
                    what = f"{f}: label record length mismatch"
                else:
                    what = f"{self.where()}: length mismatch"
                self.say(f"{what}: header {length} != trailer {trailer}\n")
                return Sts.FATAL
            if label:
                sts = self.check_label(data)
                if self.label_ok is Sts.OK:
                    self.label_ok = sts
            if self.kind is Kind.INDEX:
                return self.index_entries(data, at)
            if self.kind is Kind.META and not label:
                self.check_type(mtype)
            self.nrec += 1
            self.offset = at
        if end - at:
            self.say(
                f"{f}[record {self.nrec}]: unexpected EOF in record header, "
                f"wanted 4, got {end - at} bytes\n"
            )
            return Sts.FATAL
        return self.empty_check(Sts.OK)

    def index_entries(self, data: bytes, at: int) -> Sts:
        """After the .index's label: whole entries of the golden version's size."""
        size = 32 if self.run.golden_version >= PM_LOG_VERS03 else 20
        self.nrec += 1 + (len(data) - at) // size
        stray = (len(data) - at) % size
        if stray:
            self.say(
                f"{self.fname}[record {self.nrec}]: unexpected EOF in index entry, "
                f"wanted {size}, got {stray} bytes\n"
            )
            self.run.index_state = FileState.BAD
            return Sts.FATAL
        return self.empty_check(Sts.OK)

    def empty_check(self, sts: Sts) -> Sts:
        if self.nrec < 2:
            self.say(f"{self.fname}: contains no PCP data\n")
            return Sts.WARNING
        return sts

    def check_type(self, mtype: int) -> None:
        """A .meta record of a type the (golden) version does not have."""
        version = self.run.golden_version
        if mtype in _NOT_IN.get(version, ()):
            self.say(
                f"{self.fname}[record {self.nrec}]: unexpected record type "
                f"{meta_type_str(mtype)} ({mtype}) for V{version} archive\n"
            )

    def check_label(self, data: bytes) -> Sts:
        """checklabel: magic and version, then the label loaded as libpcp loads it; the
        first good one is golden, a later one must be of the golden version."""
        f = self.fname
        magic = struct.unpack_from(">I", data, 4)[0]
        if magic & 0xFFFFFF00 != PM_LOG_MAGIC:
            err(
                f"{f}: bad label magic number: 0x{magic & 0xFFFFFF00:x} "
                f"not 0x{PM_LOG_MAGIC:x} as expected\n"
            )
        version = magic & 0xFF
        if version not in (PM_LOG_VERS02, PM_LOG_VERS03):
            err(
                f"{f}: bad label version: {version} not {PM_LOG_VERS02} or "
                f"{PM_LOG_VERS03} as expected\n"
            )
        try:
            _, _, start, _, _ = load_label(data)
        except PMError as exc:
            err(f"{f}: cannot load label record: {pmErrStr(exc.code)}\n")
            return Sts.FATAL
        golden = self.run.golden
        if golden is None:
            self.run.golden = Golden(f, magic, start)
        elif version != golden.version:
            err(
                f"{f}: mismatched label version: {version} not {version} as expected "
                f"from {golden.fname}\n"
            )
            return Sts.FATAL
        return Sts.OK


def _sp(what: str) -> str:
    return f" {what}" if what else ""


def pass0(run: Run, fname: str) -> Sts:
    """Pass 0 over the file FNAME: its outcome, with the kind's state updated."""
    kind = kind_of(fname)
    if kind is None:
        err(f"{fname}: pass0 botch: bad file name?\n")
        raise SystemExit(1)
    p = _Pass0(run, fname, kind)
    try:
        data = read_whole(fname)
    except OSError as exc:
        err(f"{fname}: cannot open file: {exc.strerror}\n")
        sts = Sts.FATAL
    else:
        if run.vflag:
            err(f"{fname}: start pass0 ... ")
            p.eol = False
        sts = p.check(data)
    if sts is Sts.FATAL and p.offset > 0:
        err(f"{fname}: last valid record ends at offset {p.offset}\n")
    _update_state(run, kind, sts)
    if sts is Sts.OK:
        sts = p.label_ok
    if run.vflag and p.nrec > 0 and sts is not Sts.FATAL:
        err(f"found {p.nrec} records\n")
    return sts


def _update_state(run: Run, kind: Kind, sts: Sts) -> None:
    state = FileState.OK if sts is Sts.OK else FileState.BAD
    if kind is Kind.INDEX:
        run.index_state = state
    elif kind is Kind.META:
        run.meta_state = state
    elif run.log_state is FileState.OK and sts is not Sts.OK:
        run.log_state = FileState.BAD
    elif run.log_state is FileState.MISSING:
        run.log_state = state
