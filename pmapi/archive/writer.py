"""Writing a PCP archive: label, metadata, volume records, marks and the temporal index.

Every record goes to its file in one unbuffered write, so a reader (or a crash)
sees whole records only, up to the last one written.  The writer keeps what a
reader needs in order: descriptors before the values that use them (the caller's
job, checked here), an instance-domain record whenever a domain's membership
changes, and volumes switched before one outgrows the 2 GB the index can address.
What goes in the index, and when, is the caller's policy (pmlogger's); the writer
adds an entry at every volume switch since a reader needs one there.

A write that fails part way (a full disk, a file size limit, an I/O error) is cut
back off its file, so the file still ends at its last whole record, and the writer
takes nothing more: it raises ArchiveWriteError, naming the file and the OS error,
then and ever after.  (libpcp leaves the torn record in place, and PCP's own pmlogcheck and
pmdumplog then report the archive corrupt at its end.)
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Sequence

from ..desc import Desc
from ..errors import PM_ERR_LOGREC, PMError
from ..pdu.result import HIGHRES_PREAMBLE, RESULT_PREAMBLE, encode_value_sets
from ..pdu.result_layout import ColumnValueSets
from ..values import Result, Timestamp
from .format import (
    FRAME,
    LABEL_V2,
    LABEL_V3,
    MAX_VOLUME_BYTES,
    PM_LOG_VERS02,
    PM_LOG_VERS03,
    PM_LOG_VOL_META,
    PM_LOG_VOL_TI,
    DescRecord,
    IndexEntry,
    InDomRecord,
    LabelRecord,
    LogLabel,
    TextRecord,
    encode_desc,
    encode_index,
    encode_indom,
    encode_labels,
    encode_text,
    swap_sec,
)
from .versions import PM_LOG_MAGIC

_HEAD_V2 = struct.Struct(">iiii")  # len, sec, usec, numpmid
_HEAD_V3 = struct.Struct(">iqii")  # len, sec, nsec, numpmid
_PDU_RESULT = 0x7001
_V3_PREAMBLE = 28  # the PDU header, 64-bit seconds, nsec and numpmid a v3 record holds
assert RESULT_PREAMBLE == 24 and HIGHRES_PREAMBLE == 32


def encode_record(result: Result, version: int = PM_LOG_VERS02) -> bytes:
    """The framed volume record for RESULT (no value sets: a mark)."""
    ts = result.timestamp
    vsets = result.vsets
    if type(vsets) is ColumnValueSets and version == PM_LOG_VERS02:
        # a result decoded by a layout: its PDU, laid out as a RESULT, is the record's body
        pdu = vsets.layout.relay(vsets.source, RESULT_PREAMBLE, _PDU_RESULT, 0, ts.sec, ts.nsec)
        n = len(pdu) - 12 + 8
        frame = FRAME.pack(n)
        return b"".join((frame, memoryview(pdu)[12:], frame))
    numpmid = len(vsets)
    if version == PM_LOG_VERS03:
        chunks, size = encode_value_sets(result.vsets, _V3_PREAMBLE)
        n = size - 12 + 8  # a record keeps the PDU body, framed by its length
        head = _HEAD_V3.pack(n, swap_sec(ts.sec), ts.nsec, numpmid)
    else:
        chunks, size = encode_value_sets(result.vsets, RESULT_PREAMBLE)
        n = size - 12 + 8
        head = _HEAD_V2.pack(n, ts.sec, ts.nsec // 1000, numpmid)
    return b"".join((head, *chunks, FRAME.pack(n)))


def label_bytes(label: LogLabel) -> bytes:
    """format.encode_label's record, packed with struct: a writer's files begin with it,
    and construct's import would be most of a short copy's start-up (tests hold the two
    equal)."""
    magic = PM_LOG_MAGIC | label.version

    def fit(text: str, size: int) -> bytes:
        return text.encode("utf-8", "surrogateescape")[: size - 1].ljust(size, b"\0")

    if label.version == PM_LOG_VERS03:
        n = LABEL_V3.size
        return LABEL_V3.pack(
            n, magic, label.pid, swap_sec(label.start.sec), label.start.nsec, label.vol,
            label.features, 0, fit(label.hostname, 256), fit(label.timezone, 256),
            fit(label.zoneinfo, 256), n,
        )  # fmt: skip
    n = LABEL_V2.size
    return LABEL_V2.pack(
        n, magic, label.pid, label.start.sec, label.start.nsec // 1000, label.vol,
        fit(label.hostname, 64), fit(label.timezone, 40), n,
    )  # fmt: skip


class ArchiveWriteError(PMError):
    """A write to an archive file failed (the code is -errno); the message is one line."""

    def __init__(
        self, path: str, exc: OSError, written: int = 0, wanted: int = 0, op: str = "write"
    ) -> None:
        self.path = path
        self.errno = exc.errno or 5  # (EIO when the OS did not say)
        reason = exc.strerror or str(exc)
        what = f"returns {written} expecting {wanted}: " if wanted else ""
        super().__init__(-self.errno, f'{op} failed on "{path}": {what}{reason}')


def _create(path: str) -> int:
    """A new archive file, refusing to overwrite one that exists (as libpcp does)."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
    except FileExistsError:
        raise PMError(-17, f'"{path}" already exists, not over-written') from None
    except OSError as exc:
        raise PMError(-(exc.errno or 5), f'cannot create "{path}": {exc.strerror}') from None


class ArchiveWriter:
    """An archive being written: BASE.index, BASE.meta and volumes BASE.0, BASE.1, ..."""

    def __init__(
        self,
        base: str,
        *,
        hostname: str,
        timezone: str,
        start: Timestamp,
        version: int = PM_LOG_VERS02,
        pid: int | None = None,
        zoneinfo: str = "",
        volume_limit: int = MAX_VOLUME_BYTES,
        features: int = 0,
    ) -> None:
        if version not in (PM_LOG_VERS02, PM_LOG_VERS03):
            raise PMError(PM_ERR_LOGREC, f"archive version {version} cannot be written")
        self.base = base
        self.version = version
        self.volume_limit = min(volume_limit, MAX_VOLUME_BYTES)
        pid = os.getpid() if pid is None else pid
        self.label = LogLabel(version, pid, start, 0, hostname, timezone, zoneinfo, features)
        self.descs: dict[int, Desc] = {}
        self._indoms: dict[int, tuple[tuple[int, ...], tuple[str | None, ...]]] = {}
        self._fds: list[int] = []
        self._paths: dict[int, str] = {}  # fd -> its file's name, for messages
        #: The write that failed (ArchiveWriteError): nothing more is written after it.
        self.failed: ArchiveWriteError | None = None
        try:
            self._index_fd = self._open(base + ".index", PM_LOG_VOL_TI)
            self._meta_fd = self._open(base + ".meta", PM_LOG_VOL_META)
            self.vol = 0
            self._vol_fd = self._open(f"{base}.0", 0)
        except BaseException:
            # (no label, no archive: the files made so far go, rather than stay unreadable)
            for fd in self._fds:
                with contextlib.suppress(OSError):
                    os.unlink(self._paths[fd])
            self._close_all()
            raise
        self.index_offset = os.lseek(self._index_fd, 0, os.SEEK_END)
        self.meta_offset = os.lseek(self._meta_fd, 0, os.SEEK_END)
        self.log_offset = os.lseek(self._vol_fd, 0, os.SEEK_END)
        self._closed_volume_bytes = 0  # the sizes of the volumes before this one
        self.last_stamp = start

    def _open(self, path: str, vol: int) -> int:
        """A new file of the archive, its label written; one whose label fails is removed."""
        fd = _create(path)
        self._fds.append(fd)
        self._paths[fd] = path
        try:
            self._write(fd, label_bytes(self.label.with_vol(vol)), 0)
        except ArchiveWriteError:
            self._fds.remove(fd)
            del self._paths[fd]
            with contextlib.suppress(OSError):
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return fd

    def _write(self, fd: int, data: bytes, at: int) -> None:
        """Append DATA, one whole record, to FD, whose file is AT bytes long.

        If the OS refuses part way, the file is cut back to AT, so that it still ends
        with a whole record, and ArchiveWriteError says which file and why.
        """
        if self.failed is not None:
            raise self.failed
        done = 0
        try:
            while done < len(data):  # a short write (a signal, a full disk): finish the record
                done += os.write(fd, data[done:] if done else data)
        except OSError as exc:
            error = ArchiveWriteError(self._paths.get(fd, f"fd {fd}"), exc, done, len(data))
            if done:
                try:
                    os.ftruncate(fd, at)
                except OSError as cut:
                    error.detail = f"{error.detail} (a partial record is left: {cut.strerror})"
            self.failed = error
            raise error from None

    # -- metadata -------------------------------------------------------------------

    def _put_meta(self, data: bytes) -> int:
        at = self.meta_offset
        if at + len(data) > MAX_VOLUME_BYTES:
            raise PMError(-27, f"{self.base}.meta would pass the 2 GB an index can address")
        self._write(self._meta_fd, data, at)
        self.meta_offset += len(data)
        return at

    def put_desc(self, desc: Desc, names: Sequence[str]) -> None:
        """A metric's descriptor and names; once per metric, before its first value."""
        self._put_meta(encode_desc(DescRecord(desc, tuple(names))))
        self.descs[desc.pmid] = desc

    def put_indom(
        self,
        stamp: Timestamp,
        indom: int,
        insts: Sequence[int],
        names: Sequence[str],
        delta: bool = False,
    ) -> bool:
        """Record INDOM's members from STAMP on, if they differ from the last recorded.

        With DELTA, a v3 archive gets only the changes when they are fewer than the
        members (pmlogger's choice, libpcp_archive's pmaDeltaInDom); the members are
        expected in ascending instance order then, as pmlogger sorts them.
        True when a record was written (the caller may want an index entry then).
        """
        members = (tuple(insts), tuple(names))
        old = self._indoms.get(indom)
        if old == members:
            return False
        record = InDomRecord(stamp, indom, members[0], members[1])
        if delta and old is not None and self.version == PM_LOG_VERS03:
            changes = indom_delta(old, members)
            if changes is not None and not changes:
                return False
            if changes is not None:
                insts_, names_ = zip(*changes, strict=True)
                record = InDomRecord(stamp, indom, insts_, names_, delta=True)
        self._put_meta(encode_indom(record, self.version))
        self._indoms[indom] = members
        return True

    def indom_members(self, indom: int) -> frozenset[int] | None:
        """The instances of INDOM's last record here, None if it has none yet."""
        members = self._indoms.get(indom)
        return frozenset(members[0]) if members is not None else None

    def put_meta_bytes(self, data: bytes) -> int:
        """Append DATA, framed .meta records encoded by the caller (a tool copying
        another archive's metadata); returns the offset they were written at."""
        return self._put_meta(data)

    def put_text(self, type_: int, ident: int, text: str) -> None:
        self._put_meta(encode_text(TextRecord(type_, ident, text)))

    def put_labels(self, record: LabelRecord) -> None:
        self._put_meta(encode_labels(record, self.version))

    # -- values ----------------------------------------------------------------------

    def put_result(self, result: Result) -> int:
        """Append RESULT as a volume record; returns the offset it was written at.

        Every metric in it must have been described first.  A volume that would grow
        past the limit is closed and the record starts a new one.
        """
        vsets = result.vsets
        if type(vsets) is ColumnValueSets:
            pmids: Sequence[int] = vsets.layout.pmids  # (without building a ValueSet each)
        else:
            pmids = [vs.pmid for vs in vsets]
        descs = self.descs
        for pmid in pmids:
            if pmid not in descs:
                raise PMError(
                    PM_ERR_LOGREC, f"value for PMID {pmid:#x} logged before its descriptor"
                )
        return self._put_record(encode_record(result, self.version), result.timestamp)

    def put_record_bytes(self, data: bytes | memoryview, stamp: Timestamp) -> int:
        """Append DATA, one or more framed volume records of this archive's version
        (a tool copying another archive's records), STAMP the time of the last; no
        check of descriptors, and no switch of volume part way through DATA."""
        return self._put_record(data, stamp)

    def put_mark(self, stamp: Timestamp) -> int:
        """A <mark> record: logging was interrupted (no values are known across it)."""
        return self._put_record(encode_record(Result(stamp, ()), self.version), stamp)

    def _put_record(self, data: bytes | memoryview, stamp: Timestamp) -> int:
        if self.log_offset + len(data) > self.volume_limit and self.log_offset > len(
            label_bytes(self.label)
        ):
            self.new_volume(stamp)
        at = self.log_offset
        self._write(self._vol_fd, data, at)
        self.log_offset += len(data)
        self.last_stamp = stamp
        return at

    @property
    def volume_bytes(self) -> int:
        """The size of every volume so far, labels included (pmlogger -s SIZE counts these)."""
        return self._closed_volume_bytes + self.log_offset

    # -- index and volumes -----------------------------------------------------------

    def put_index(
        self, stamp: Timestamp, meta_offset: int | None = None, log_offset: int | None = None
    ) -> IndexEntry:
        """An index entry: at STAMP, read the .meta and the current volume from these offsets.

        By default the offsets are where the files end now; pmlogger gives the offsets
        from before a record and its metadata, so a reader seeking to STAMP reads both.
        """
        meta = self.meta_offset if meta_offset is None else meta_offset
        log = self.log_offset if log_offset is None else log_offset
        entry = IndexEntry(stamp, self.vol, meta, log)
        data = encode_index(entry, self.version)
        self._write(self._index_fd, data, self.index_offset)
        self.index_offset += len(data)
        return entry

    def new_volume(self, stamp: Timestamp, index: bool = True, vol: int | None = None) -> int:
        """Close the current volume and start the next (or VOL, a later number: a tool
        copying an archive follows its volume numbers); an index entry marks the switch
        (unless not INDEX: the caller then writes its own)."""
        if self.failed is not None:
            raise self.failed
        vol = self.vol + 1 if vol is None else max(vol, self.vol + 1)
        fd = self._open(f"{self.base}.{vol}", vol)
        old = self._vol_fd
        self._vol_fd = fd
        self._fds.remove(old)
        path = self._paths.pop(old)
        try:
            os.close(old)
        except OSError as exc:  # (NFS, a quota: what was written may not be kept)
            self.failed = ArchiveWriteError(path, exc, op="close")
            raise self.failed from None
        self._closed_volume_bytes += self.log_offset
        self.vol = vol
        self.log_offset = os.lseek(fd, 0, os.SEEK_END)
        if index:
            self.put_index(stamp)
        return self.vol

    def relabel(self, **changes: object) -> None:
        """Rewrite the label of every file written so far with CHANGES to its fields
        (a copying tool knows the start, host and zone only once it has read its
        inputs, after its files are made).  The label's size does not change."""
        import dataclasses

        self.label = dataclasses.replace(self.label, **changes)  # type: ignore[arg-type]
        files = [(self.base + ".index", PM_LOG_VOL_TI), (self.base + ".meta", PM_LOG_VOL_META)]
        files += [(f"{self.base}.{vol}", vol) for vol in range(self.vol + 1)]
        for path, vol in files:
            data = label_bytes(self.label.with_vol(vol))
            try:
                fd = os.open(path, os.O_WRONLY)
            except FileNotFoundError:  # (a volume already gone: nothing to relabel)
                continue
            try:
                os.pwrite(fd, data, 0)
            except OSError as exc:
                self.failed = ArchiveWriteError(path, exc, 0, len(data))
                raise self.failed from None
            finally:
                os.close(fd)

    def sync(self) -> None:
        """Push everything written so far to stable storage (ArchiveWriteError if it fails)."""
        for fd in self._fds:
            try:
                os.fsync(fd)
            except OSError as exc:
                self.failed = self.failed or ArchiveWriteError(self._paths[fd], exc, op="fsync")
                raise self.failed from None

    def close(self) -> None:
        """Close every file; ArchiveWriteError if the OS reports a failure on closing (the
        files are closed all the same)."""
        error = self._close_all()
        if error is not None and self.failed is None:
            self.failed = error
            raise error

    def _close_all(self) -> ArchiveWriteError | None:
        """Close every file, returning the first failure (NFS, a quota) rather than raising."""
        error = None
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError as exc:
                path = self._paths.get(fd, f"fd {fd}")
                error = error or ArchiveWriteError(path, exc, op="close")
        self._fds.clear()
        self._paths.clear()
        return error

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.close()
        else:  # (a failure on closing must not hide the one on its way out)
            self._close_all()


Members = tuple[tuple[int, ...], tuple[str | None, ...]]


def indom_delta(old: Members, new: Members) -> list[tuple[int, str | None]] | None:
    """The changes from OLD's members to NEW's, in instance order ((inst, None) for one
    gone, (inst, name) for one new); [] for none, and None where a full record is due:
    an instance renamed, or as many changes as members (pmaDeltaInDom's rule)."""
    was = dict(zip(*old, strict=True))
    now = dict(zip(*new, strict=True))
    changes: list[tuple[int, str | None]] = []
    for inst in sorted(was.keys() | now.keys()):
        if inst not in now:
            changes.append((inst, None))
        elif inst not in was:
            changes.append((inst, now[inst]))
        elif was[inst] != now[inst]:
            return None
    return None if len(changes) > len(now) else changes
