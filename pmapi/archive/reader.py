"""Reading a PCP archive: its label, metadata, temporal index and records, either way in time.

`Archive(name)` opens an archive by its base name, by any of its file names, or by a
compressed volume's name, and loads the label, the whole .meta and the .index; what
libpcp refuses at open (a bad label, damage anywhere in the .meta) is refused with an
ArchiveError naming the file and byte offset.  Volume records are read on demand,
forwards or backwards, from any (volume, offset) or by time through the index, each
value block as its metric's descriptor types it.  Damage (a truncated or corrupt
record) ends a walk with an ArchiveError naming the file and byte offset, after every
record before it.
"""

from __future__ import annotations

import bisect
import bz2
import contextlib
import gzip
import lzma
import mmap
import os
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..desc import Desc
from ..errors import (
    PM_ERR_LABEL,
    PM_ERR_LOGCHANGEINDOM,
    PM_ERR_LOGCHANGESEM,
    PM_ERR_LOGCHANGETYPE,
    PM_ERR_LOGCHANGEUNITS,
    PM_ERR_LOGFILE,
    PM_ERR_LOGREC,
    PM_ERR_NODATA,
    PMError,
)
from ..ids import pmIDStr
from ..pdu.constants import PDUType
from ..pdu.result import ResultDecodeError, decode_result, decode_value_sets
from ..pmns import PMNS
from ..types import PMType, ValFmt
from ..values import Result, Timestamp, ValueSet
from .format import (
    FRAME,
    LABEL_BYTES,
    META_HEADER,
    PM_LOG_VERS03,
    PM_LOG_VOL_META,
    PM_LOG_VOL_TI,
    ArchiveError,
    DescRecord,
    IndexEntry,
    InDomRecord,
    LabelRecord,
    LogLabel,
    MetaRecord,
    TextRecord,
    decode_index,
    decode_label,
    read_meta,
    swap_sec,
    usec_ns,
)

#: Suffixes of compressed archive files, and how to open each.
_DECOMPRESS = {
    ".xz": lzma.decompress,
    ".lzma": lzma.decompress,
    ".bz2": bz2.decompress,
    ".gz": gzip.decompress,
}
_SUFFIX = re.compile(r"\.(?:meta|index|\d+)(?:\.(?:xz|lzma|bz2|gz|zst))?$")
_HEAD_V2 = struct.Struct(">iiii")  # len, sec, usec, numpmid
_HEAD_V3 = struct.Struct(">iqii")  # len, sec, nsec, numpmid
_PDU_HEADER = struct.Struct(">iii")  # len, type, from: the PDU a record body came from
_PDU_RESULT = int(PDUType.PDU_RESULT)
_V3_PREAMBLE = 28  # PDU header + 64-bit seconds + nsec + numpmid
_V2_PREAMBLE = 24  # PDU header + seconds, microseconds + numpmid
_WORD = struct.Struct(">i")
_SET_HEAD = struct.Struct(">Ii")  # pmid, numval
#: Descriptor types a value block may hold (the type byte of its header).
_BLOCK_TYPES = frozenset(t for t in PMType if 0 <= t < PMType.PM_TYPE_UNKNOWN)
#: What a second descriptor of a metric may not change, and libpcp's code if it does.
_DESC_CHANGES = (
    ("type", PM_ERR_LOGCHANGETYPE),
    ("sem", PM_ERR_LOGCHANGESEM),
    ("indom", PM_ERR_LOGCHANGEINDOM),
    ("units", PM_ERR_LOGCHANGEUNITS),
)


@dataclass(frozen=True)
class LogRecord:
    """One volume record: where it is and the pmResult it holds (no value sets: a mark)."""

    vol: int
    offset: int
    size: int
    result: Result

    @property
    def stamp(self) -> Timestamp:
        return self.result.timestamp

    @property
    def is_mark(self) -> bool:
        return not self.result.vsets


def base_name(name: str) -> str:
    """The archive base name for NAME: a base name, or any file of the archive."""
    return _SUFFIX.sub("", name)


def find_file(base: str, suffix: str) -> str | None:
    """BASE+SUFFIX, or a compressed variant of it, if one exists."""
    plain = base + suffix
    if os.path.exists(plain):
        return plain
    for ext in (*_DECOMPRESS, ".zst"):
        if os.path.exists(plain + ext):
            return plain + ext
    return None


def _read_file(path: str) -> bytes | mmap.mmap:
    """A file's whole contents, decompressed when its name says it is compressed."""
    for ext, decompress in _DECOMPRESS.items():
        if path.endswith(ext):
            try:
                with open(path, "rb") as f:
                    raw = f.read()
            except OSError as exc:
                code = -exc.errno if exc.errno else PM_ERR_LOGFILE
                raise PMError(code, f"{path}: {exc.strerror}") from None
            try:
                if not raw:  # (gzip and bzip2 take no bytes as nothing: libpcp's tools do not)
                    raise EOFError("an empty file")
                return decompress(raw)
            except (OSError, lzma.LZMAError, EOFError, ValueError) as exc:
                # (libpcp's word for a volume it cannot decompress: a corrupted record)
                raise PMError(PM_ERR_LOGREC, f"{path}: cannot decompress: {exc}") from None
    if path.endswith(".zst"):
        raise PMError(PM_ERR_LOGFILE, f"{path}: zstd-compressed volumes are not supported")
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        code = -exc.errno if exc.errno else PM_ERR_LOGFILE
        raise PMError(code, f"{path}: {exc.strerror}") from None


class Archive:
    """An open archive: label, metadata, index, and walks over its records.

    Opening checks what libpcp's __pmLogOpen checks, so an archive every PCP tool
    refuses is refused here, by every tool, with PCP's error code and the file and
    offset of the damage (ArchiveError): the first volume's label, the .index's and
    the .meta's labels (same version, host and logger PID), the whole of the .meta
    (read as __pmLogLoadMeta reads it; see format.read_meta), at least one metric
    descriptor, and no metric whose descriptors disagree.  What libpcp tolerates (a
    partial record at the end of the .meta or a partial entry at the end of the
    .index) is kept in `problems`.
    """

    def __init__(self, name: str) -> None:
        # only the name of an archive's file loses its suffix: otherwise NAME is the base
        # name itself, as libpcp reads it ("20231114.00.10" is a base, not volume 10)
        self.base = base_name(name) if find_file(name, "") is not None else name
        self.problems: list[ArchiveError] = []
        meta_path = find_file(self.base, ".meta")
        if meta_path is None:
            raise PMError(PM_ERR_LOGFILE, f"{self.base}: no .meta file for this archive")
        self.meta_path = meta_path
        self.volume_paths: dict[int, str] = self._find_volumes()
        if not self.volume_paths:
            raise PMError(PM_ERR_LOGFILE, f"{self.base}: no data volumes for this archive")
        self.index_path = find_file(self.base, ".index")
        self._volumes: dict[int, bytes | mmap.mmap] = {}
        self._labelled: set[int] = set()  # volumes whose labels have been checked
        self._layouts_checked: dict[object, bool] = {}  # learned layouts: mistyped blocks?
        self._end: End | bool | None = False  # find_end's answer, once known
        self.meta: list[tuple[int, MetaRecord]] = []
        self.descs: dict[int, Desc] = {}
        self.names: dict[int, tuple[str, ...]] = {}
        self.pmns = PMNS()
        self.indoms: dict[int, list[InDomRecord]] = {}
        self._indom_stamps: dict[int, list[Timestamp]] = {}  # each history's times, for bisect
        self.labels: list[LabelRecord] = []
        self.texts: dict[tuple[int, int], str] = {}
        self.index: list[IndexEntry] = []
        self._index_size = -1
        self._index_stamps: list[Timestamp] = []
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    @property
    def label_bytes(self) -> int:
        """The size of a volume's label: where its first record begins."""
        return self._label_bytes

    # -- opening --------------------------------------------------------------------

    def _open(self) -> None:
        """Labels, metadata and index, checked in __pmLogOpen's order."""
        first = self._first_volume()
        index = None
        if self.index_path is not None:
            index = _read_file(self.index_path)
            self._check_label(decode_label(index, self.index_path), first, self.index_path)
        meta = _read_file(self.meta_path)
        self.label: LogLabel = decode_label(meta, self.meta_path)
        self.version = self.label.version
        self._label_bytes = LABEL_BYTES[self.version]
        if self.label.version != first.version or self.label.vol != PM_LOG_VOL_META:
            self._check_label(self.label, first, self.meta_path)
        self._load_meta(meta)
        if index is not None:
            self._load_index(index)
        self._check_label(self.label, first, self.meta_path)  # (host and PID last, as libpcp)

    def _first_volume(self) -> LogLabel:
        """The first volume's label, which must be for that volume; its records must not be
        missing altogether (PM_ERR_NODATA) when it is the only volume."""
        vol = min(self.volume_paths)
        path = self.volume_paths[vol]
        data = _read_file(path)
        if not len(data):  # (PCP's words say it all: no damage to locate in an empty volume)
            raise PMError(PM_ERR_NODATA)
        label = decode_label(data, path)
        if label.vol != vol:
            what = f"the label says volume {label.vol}, the file's name volume {vol}"
            raise ArchiveError(PM_ERR_LABEL, path, 0, what)
        size = LABEL_BYTES[label.version]
        if len(data) <= size and len(self.volume_paths) == 1:
            # (PCP's words say it all: the data volume, whole, is a label; no damage to locate)
            raise PMError(PM_ERR_NODATA)
        self._volumes[vol] = data
        return label

    def _check_label(self, label: LogLabel, first: LogLabel, path: str) -> None:
        """LABEL (of the .index or the .meta at PATH) agrees with the first volume's."""
        vol = PM_LOG_VOL_TI if path == self.index_path else PM_LOG_VOL_META
        if label.vol != vol:
            what = f"the label says volume {label.vol}, where this file's is {vol}"
        elif label.version != first.version:
            what = f"a version {label.version} label, where the volumes' is version {first.version}"
        elif label.hostname != first.hostname:
            what = f"the label's host is {label.hostname!r}, the volumes' {first.hostname!r}"
        elif label.pid != first.pid:
            what = f"the label's pmlogger PID is {label.pid}, the volumes' {first.pid}"
        else:
            return
        raise ArchiveError(PM_ERR_LABEL, path, 0, what)

    def _find_volumes(self) -> dict[int, str]:
        folder = os.path.dirname(self.base) or "."
        stem = os.path.basename(self.base)
        pattern = re.compile(re.escape(stem) + r"\.(\d+)(\.(?:xz|lzma|bz2|gz|zst))?$")
        found: dict[int, str] = {}
        try:
            entries = os.listdir(folder)
        except OSError as exc:
            raise PMError(PM_ERR_LOGFILE, f"{self.base}: {exc.strerror}") from None
        for entry in entries:
            m = pattern.match(entry)
            if m:
                vol = int(m.group(1))
                if vol not in found or not m.group(2):  # prefer the uncompressed copy
                    found[vol] = os.path.join(folder, entry)
        return dict(sorted(found.items()))

    def _load_meta(self, data: bytes | mmap.mmap) -> None:
        """Every metadata record, as libpcp loads them; ArchiveError where it would fail."""
        path = self.meta_path
        records, stop = read_meta(data, self._label_bytes, path)
        for at, record in records:
            self._add_meta(at, record)
        self._meta_stop = stop
        if not self.descs:
            raise ArchiveError(PM_ERR_LOGREC, path, stop, "no metric descriptors in the file")
        if stop < len(data):  # (libpcp reads no further either, and says nothing)
            what = f"{len(data) - stop} stray bytes at the end, too few for a record header"
            self._problem(PM_ERR_LOGREC, path, stop, what)

    def _add_meta(self, offset: int, record: MetaRecord) -> None:
        if isinstance(record, DescRecord):
            known = self.descs.get(record.desc.pmid)
            if known is not None:
                self._check_same_desc(offset, known, record.desc)
        self.meta.append((offset, record))  # (as written: a delta stays a delta here)
        if isinstance(record, DescRecord):
            pmid = record.desc.pmid
            self.descs.setdefault(pmid, record.desc)  # (the first stays, as in libpcp)
            self.names[pmid] = self.names.get(pmid, ()) + tuple(
                n for n in record.names if n not in self.names.get(pmid, ())
            )
            for name in record.names:
                if name not in self.pmns:
                    # newest first at each level, as libpcp builds an archive's namespace;
                    # a name clashing with another metric's or a subtree is dropped, as there
                    with contextlib.suppress(PMError):
                        self.pmns.add(name, pmid, at_front=True, checked=False)
        elif isinstance(record, InDomRecord):
            history = self.indoms.setdefault(record.indom, [])
            stamps = self._indom_stamps.setdefault(record.indom, [])
            if record.delta:
                record = _apply_delta(history[-1] if history else None, record)
            pos = bisect.bisect_right(stamps, record.stamp)
            history.insert(pos, record)
            stamps.insert(pos, record.stamp)
        elif isinstance(record, LabelRecord):
            self.labels.append(record)
        elif isinstance(record, TextRecord):
            self.texts[(record.type, record.ident)] = record.text

    def refresh_volumes(self) -> None:
        """Forget the volumes' maps (a map does not grow with its file) and the end,
        and find new volumes.  A reader following a logger reads the volumes before
        refresh_meta(): pmlogger writes a record's metadata first, so every record
        read then has its metadata."""
        self._volumes.clear()  # (dropped, not closed: records' views may still hold one)
        self._end = False
        if os.path.exists(f"{self.base}.{max(self.volume_paths) + 1}"):  # (a new volume)
            self.volume_paths = self._find_volumes() or self.volume_paths

    def refresh_meta(self) -> None:
        """Take in the .meta records written since the last read (one still being
        written waits for the next call), and the .index if it changed.  A record
        that is all there and still cannot be read is damage: it goes into
        `problems` (once), and nothing after it is read."""
        try:
            grown = os.stat(self.meta_path).st_size > self._meta_stop
        except OSError as exc:
            raise PMError(PM_ERR_LOGFILE, f"{self.meta_path}: {exc.strerror}") from None
        if grown:
            meta = _read_file(self.meta_path)
            start = self._meta_stop
            try:
                records, stop = read_meta(meta, start, self.meta_path)
            except ArchiveError as exc:  # (the records before it are whole: keep them)
                try:
                    records, stop = read_meta(meta[: exc.offset], start, self.meta_path)
                except ArchiveError:
                    records, stop = [], start
                whole = len(meta) - exc.offset >= 8 and (
                    len(meta) - exc.offset >= META_HEADER.unpack_from(meta, exc.offset)[0]
                )
                if whole and all(p.offset != exc.offset for p in self.problems):
                    self.problems.append(exc)
            for at, record in records:
                self._add_meta(at, record)
            self._meta_stop = stop
        if self.index_path is not None:
            with contextlib.suppress(PMError, OSError):
                size = os.stat(self.index_path).st_size
                if size != self._index_size:
                    self.index, _ = decode_index(_read_file(self.index_path), self.version)
                    self._index_stamps = [e.stamp for e in self.index]
                    self._index_size = size

    def _check_same_desc(self, offset: int, known: Desc, new: Desc) -> None:
        """A metric described twice must be described alike (__pmLogAddDesc's checks)."""
        for field, code in _DESC_CHANGES:
            was, now = getattr(known, field), getattr(new, field)
            if field == "units":  # (the pad byte is no part of the units)
                was, now = was.pack() & ~0xFF, now.pack() & ~0xFF
            if was != now:
                what = f"metric {pmIDStr(new.pmid)} described again with another {field}"
                raise ArchiveError(code, self.meta_path, offset, what)

    def _load_index(self, data: bytes | mmap.mmap) -> None:
        assert self.index_path is not None
        self._index_size = len(data)
        self.index, stray = decode_index(data, self.version)
        self._index_stamps = [e.stamp for e in self.index]
        if stray:  # (libpcp stops at a partial entry, as here)
            size = 32 if self.version == PM_LOG_VERS03 else 20
            at = len(data) - stray
            self._problem(
                PM_ERR_LOGREC,
                self.index_path,
                at,
                f"{stray} stray bytes at the end, too few for a {size}-byte index entry",
            )

    def _problem(self, code: int, path: str, offset: int, detail: str) -> None:
        self.problems.append(ArchiveError(code, path, offset, detail))

    # -- metadata lookups ----------------------------------------------------------

    def indom_at(self, indom: int, stamp: Timestamp | None = None) -> InDomRecord | None:
        """The instance domain in force at STAMP (the latest record at or before it).

        With no STAMP, the last one.  None when the archive has none at that time.
        """
        history = self.indoms.get(indom)
        if not history:
            return None
        if stamp is None:
            return history[-1]
        pos = bisect.bisect_right(self._indom_stamps[indom], stamp)
        return history[pos - 1] if pos else None

    def text(self, ident: int, type_: int) -> str | None:
        """Help text of TYPE (PM_TEXT_* bits) for a PMID or InDom, if the archive has it."""
        return self.texts.get((type_, ident))

    # -- volumes ---------------------------------------------------------------------

    def volume(self, vol: int) -> bytes | mmap.mmap:
        """Volume VOL's whole contents, label checked (cached)."""
        data = self._volumes.get(vol)
        if data is None:
            path = self.volume_paths.get(vol)
            if path is None:
                raise PMError(PM_ERR_LOGFILE, f"{self.base}: no volume {vol}")
            data = _read_file(path)
            if vol not in self._labelled:  # (a volume mapped again after a refresh)
                label = decode_label(data, path)
                if label.vol != vol:
                    what = f"the label says volume {label.vol}, the file's name volume {vol}"
                    raise ArchiveError(PM_ERR_LABEL, path, 0, what)
                if label.version != self.version:
                    what = f"a version {label.version} label in a version {self.version} archive"
                    raise ArchiveError(PM_ERR_LABEL, path, 0, what)
                self._labelled.add(vol)
            self._volumes[vol] = data
        return data

    def close(self) -> None:
        for data in self._volumes.values():
            if isinstance(data, mmap.mmap):
                data.close()
        self._volumes.clear()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def decode_record(self, vol: int, offset: int, record: bytes) -> LogRecord:
        """The LogRecord for RECORD (framed) read from VOL at OFFSET.

        Value blocks are read as their metric's descriptor types them, as libpcp reads
        them: old archives have blocks whose own type field says 0 (PM_TYPE_32) for
        strings and 64-bit values, which libpcp never looks at.
        """
        n = len(record)
        pdu = _PDU_HEADER.pack(n - 8 + 12, _PDU_RESULT, 0) + record[4 : n - 4]
        try:
            result = self._decode(record, pdu)
        except (ResultDecodeError, struct.error) as exc:
            retyped = self._retyped(pdu)
            try:
                if retyped is None:
                    raise exc from None
                result = self._decode(record, retyped)
            except (ResultDecodeError, struct.error):
                detail = exc.detail if isinstance(exc, PMError) else str(exc)
                raise ArchiveError(
                    PM_ERR_LOGREC, self.volume_paths[vol], offset, f"corrupt record: {detail}"
                ) from None
        else:
            if self._mistyped(result.vsets):
                retyped = self._retyped(pdu)
                if retyped is not None:
                    with contextlib.suppress(ResultDecodeError, struct.error):
                        result = self._decode(record, retyped)
        return LogRecord(vol, offset, n, result)

    def _decode(self, record: bytes, pdu: bytes) -> Result:
        if self.version == PM_LOG_VERS03:
            _, sec, nsec, numpmid = _HEAD_V3.unpack_from(record)
            vsets = decode_value_sets(pdu, _V3_PREAMBLE, numpmid)
            return Result(Timestamp(swap_sec(sec), nsec), vsets)
        result = decode_result(pdu, False)
        nsec = result.timestamp.nsec
        if not -(1 << 31) <= nsec < 1 << 31:  # (damage: microseconds past 2**31 / 1000)
            result = Result(Timestamp(result.timestamp.sec, usec_ns(nsec // 1000)), result.vsets)
        return result

    def _mistyped(self, vsets: Sequence[ValueSet]) -> bool:
        """Whether any value set holds blocks of a type other than its descriptor's."""
        layout = getattr(vsets, "layout", None)
        if layout is not None:  # (a result read through a learned layout: checked once)
            known = self._layouts_checked.get(layout)
            if known is None:
                known = self._layouts_checked[layout] = any(
                    self._other_type(s.pmid, s.numval, s.valfmt, s.vtype) for s in layout.shape
                )
            return known
        return any(self._other_type(v.pmid, v.numval, v.valfmt, v.vtype) for v in vsets)

    def _other_type(self, pmid: int, numval: int, valfmt: int, vtype: int) -> bool:
        if numval <= 0 or valfmt == ValFmt.PM_VAL_INSITU:
            return False
        desc = self.descs.get(pmid)
        return desc is not None and desc.type != vtype and desc.type in _BLOCK_TYPES

    def _retyped(self, pdu: bytes) -> bytes | None:
        """PDU with each value block's type set to its metric's descriptor type; None if
        no block needs it or the value sets cannot be walked."""
        v3 = self.version == PM_LOG_VERS03
        preamble = _V3_PREAMBLE if v3 else _V2_PREAMBLE
        if len(pdu) < preamble:  # (a record too short for its header: nothing to walk)
            return None
        buf = bytearray(pdu)
        nw = len(buf) >> 2
        numpmid = _WORD.unpack_from(buf, preamble - 4)[0]
        o = preamble >> 2
        changed = False
        for _ in range(max(numpmid, 0)):
            if o + 2 > nw:
                return None
            pmid, numval = _SET_HEAD.unpack_from(buf, o << 2)
            if numval <= 0:
                o += 2
                continue
            stop = o + 3 + 2 * numval
            if stop > nw:
                return None
            desc = self.descs.get(pmid)
            valfmt = _WORD.unpack_from(buf, (o + 2) << 2)[0]
            if valfmt != ValFmt.PM_VAL_INSITU and desc is not None and desc.type in _BLOCK_TYPES:
                for slot in range(o + 4, stop, 2):
                    at = _WORD.unpack_from(buf, slot << 2)[0] << 2
                    if 0 <= at < len(buf) and buf[at] != desc.type:
                        buf[at] = desc.type
                        changed = True
            o = stop
        return bytes(buf) if changed else None

    def frame_length(self, vol: int, data: bytes | mmap.mmap, at: int, base: int = 0) -> int:
        """The length of the record at AT in VOL (its bytes DATA, read from byte BASE of
        the volume), checked against its trailer; ArchiveError, in the words every
        reader of the archive uses, if bad."""
        end = len(data)
        path = self.volume_paths.get(vol, f"{self.base}.{vol}")
        if end - at < 4:  # (a walk ends there: see records)
            what = f"{end - at} stray bytes at the end, too few for a record length"
            raise ArchiveError(PM_ERR_LOGREC, path, base + at, what)
        length = FRAME.unpack_from(data, at)[0]
        smallest = 24 if self.version == PM_LOG_VERS03 else 20
        if length < smallest or length & 3:
            what = f"bad record length {length} (records are {smallest}+ bytes, in 4-byte words)"
            raise ArchiveError(PM_ERR_LOGREC, path, base + at, what)
        if at + length > end:
            what = f"truncated record: its length is {length} bytes, {end - at} are left"
            raise ArchiveError(PM_ERR_LOGREC, path, base + at, what)
        trailer = FRAME.unpack_from(data, at + length - 4)[0]
        if trailer != length:
            what = f"record trailer {trailer} does not match its length {length}"
            raise ArchiveError(PM_ERR_LOGREC, path, base + at, what)
        return length

    def records_in(
        self, vol: int, data: bytes, base: int
    ) -> tuple[list[LogRecord], int, ArchiveError | None]:
        """The whole records in DATA, read from byte BASE of volume VOL (a follower's
        read of what was appended): the records, how many bytes they take, and the
        damage that stopped the walk, if any.  A record DATA holds only the start of
        (one being written) is left for the next read, and is no damage."""
        out: list[LogRecord] = []
        at, end = 0, len(data)
        while end - at >= 4:
            length = FRAME.unpack_from(data, at)[0]
            if at + length > end and length >= 4:
                break  # (its end is not written yet)
            try:
                length = self.frame_length(vol, data, at, base)
                out.append(self.decode_record(vol, base + at, data[at : at + length]))
            except ArchiveError as exc:
                return out, at, exc
            at += length
        return out, at, None

    def records(
        self, vol: int | None = None, offset: int | None = None, *, backwards: bool = False
    ) -> Iterator[LogRecord]:
        """Every record from (VOL, OFFSET) on, in file order or (BACKWARDS) reversed.

        By default a forward walk starts at the first record and a backward one at
        the end.  Going backwards, OFFSET is where the walk starts reading down from
        (the end of the record to read first).
        """
        vols = list(self.volume_paths)
        if backwards:
            start = vols.index(vol) if vol is not None else len(vols) - 1
            for i in range(start, -1, -1):
                v = vols[i]
                data = self.volume(v)
                at = offset if (offset is not None and v == vol) else len(data)
                yield from self._walk_back(v, data, at)
            return
        start = vols.index(vol) if vol is not None else 0
        for v in vols[start:]:
            data = self.volume(v)
            at = offset if (offset is not None and v == vol) else self._label_bytes
            end = len(data)
            while end - at >= 4:  # (fewer bytes than a length: libpcp's end of the volume)
                length = self.frame_length(v, data, at)
                yield self.decode_record(v, at, data[at : at + length])
                at += length

    def _walk_back(self, vol: int, data: bytes | mmap.mmap, at: int) -> Iterator[LogRecord]:
        path = self.volume_paths[vol]
        floor = self._label_bytes
        smallest = 24 if self.version == PM_LOG_VERS03 else 20  # (as frame_length)
        while at > floor:
            if at - floor < 4:
                what = f"{at - floor} stray bytes between the label and byte {at}"
                raise ArchiveError(PM_ERR_LOGREC, path, floor, what)
            length = FRAME.unpack_from(data, at - 4)[0]
            start = at - length
            if length < smallest or length & 3 or start < floor:
                what = f"bad record length {length} in the trailer ending at byte {at}"
                raise ArchiveError(PM_ERR_LOGREC, path, at - 4, what)
            head = FRAME.unpack_from(data, start)[0]
            if head != length:
                what = f"record length {head} does not match its trailer {length} at byte {at - 4}"
                raise ArchiveError(PM_ERR_LOGREC, path, start, what)
            yield self.decode_record(vol, start, data[start:at])
            at = start

    def records_from(self, stamp: Timestamp, *, backwards: bool = False) -> Iterator[LogRecord]:
        """Records at or after STAMP going forwards; at or before it going backwards.

        The temporal index picks where to start reading, so a seek costs a few records.
        """
        if backwards:
            # start from the first index entry after STAMP (or the end), reading down
            pos = bisect.bisect_right(self._index_stamps, stamp)
            vol = offset = None
            if pos < len(self.index):
                entry = self.index[pos]
                if entry.vol in self.volume_paths and entry.log_offset > self._label_bytes:
                    vol, offset = entry.vol, entry.log_offset
            for rec in self.records(vol, offset, backwards=True):
                if rec.stamp <= stamp:
                    yield rec
            return
        pos = bisect.bisect_right(self._index_stamps, stamp)
        vol = offset = None
        # entries are written before the records they point at: the last one strictly
        # before STAMP starts a walk that cannot miss a record at STAMP
        while pos > 0:
            entry = self.index[pos - 1]
            if entry.stamp < stamp and entry.vol in self.volume_paths:
                vol, offset = entry.vol, max(entry.log_offset, self._label_bytes)
                break
            pos -= 1
        for rec in self.records(vol, offset):
            if rec.stamp >= stamp:
                yield rec

    def find_end(self) -> End | None:
        """__pmGetArchiveEnd: the last record that reads cleanly, searching back through
        the volumes; a damaged tail is read forwards from the index entry before it.
        None if no volume yields one (then libpcp's tools say the end is unknown)."""
        if self._end is not False:
            return self._end
        found = None
        floor = self._label_bytes
        for vol in sorted(self.volume_paths, reverse=True):
            try:
                data = self.volume(vol)
            except PMError:
                continue
            physend = len(data)
            if physend <= floor:
                continue
            found, give_up = self._end_of(vol, physend)
            if found is not None or give_up:
                break
        self._end = found
        return found

    def _end_of(self, vol: int, physend: int) -> tuple[End | None, bool]:
        """The last clean record of VOL (PHYSEND bytes), as find_end looks for it, and
        whether to give up (libpcp does when the index leads to no clean record)."""
        last = self._read_back(vol, physend)
        if last is not None:
            return End(last.stamp, vol, physend), False
        starts = [e.log_offset for e in self.index if e.vol == vol and e.log_offset <= physend]
        if not starts:
            return None, False
        logend = starts[-1]
        if logend > self._label_bytes:
            before = self._read_back(vol, logend)
            if before is None:
                return None, True
            logend = before.offset
        found = None
        try:
            for rec in self.records(vol, logend):
                if rec.vol != vol:
                    break
                found = rec
        except PMError:
            pass
        if found is None:
            return None, False
        return End(found.stamp, vol, found.offset + found.size), False

    def _read_back(self, vol: int, offset: int) -> LogRecord | None:
        """The record ending at OFFSET in VOL, or None if it does not read cleanly."""
        try:
            return next(self.records(vol, offset, backwards=True), None)
        except PMError:
            return None

    def end(self) -> Timestamp:
        """The time of the last record that reads cleanly (find_end); the label's start
        time if there is no record at all.

        ArchiveError when no end can be found (a damaged tail the index cannot get
        round): then, as with libpcp, the end is unknown.
        """
        found = self.find_end()
        if found is not None:
            return found.stamp
        floor = self._label_bytes
        sizes = {v: len(self.volume(v)) for v in self.volume_paths}
        if all(size <= floor for size in sizes.values()):
            return self.label.start
        vol = max(v for v, size in sizes.items() if size > floor)
        what = "no record at the end of the archive reads cleanly: its end is unknown"
        raise ArchiveError(PM_ERR_LOGREC, self.volume_paths[vol], sizes[vol], what)


@dataclass(frozen=True)
class End:
    """Where an archive ends: the last good record's time, volume and end offset."""

    stamp: Timestamp
    vol: int
    offset: int


def _apply_delta(prior: InDomRecord | None, delta: InDomRecord) -> InDomRecord:
    """A v3 delta record applied to the full instance domain before it."""
    members = dict(zip(prior.insts, prior.names, strict=True)) if prior else {}
    for inst, name in zip(delta.insts, delta.names, strict=True):
        if name is None:
            members.pop(inst, None)
        else:
            members[inst] = name
    return InDomRecord(delta.stamp, delta.indom, tuple(members), tuple(members.values()))


def file_bytes(path: str) -> bytes | mmap.mmap:
    """One file of an archive, whole, decompressed when its name says it is compressed;
    PMError if it cannot be read (for tools that weigh files, as pmlogsize)."""
    return _read_file(path)


#: compressed-file suffixes libpcp knows (io.c's compress_ctl), for log_base_name
_COMPRESSED_SUFFIXES = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")
_VOLUME_WORD = re.compile(r"[ \t\n\v\f\r]*[+-]?\d+")


def log_base_name(name: str) -> tuple[str, str] | None:
    """__pmLogBaseName: NAME split into the archive's base and its file's word ("meta",
    "index", "0", ...), any compression suffix dropped; None if NAME is no archive file's
    name (as libpcp's tools test a directory's entries)."""
    dot = name.rfind(".")
    if dot < 0:
        return None
    if name[dot:] in _COMPRESSED_SUFFIXES:
        inner = name.rfind(".", 0, dot)
        if inner < 0:
            return None
        name, dot = name[:dot], inner
    word = name[dot + 1 :]
    if word in ("index", "meta") or _VOLUME_WORD.fullmatch(word):
        return name[:dot], word
    return None


def empty_file_refusal(base: str) -> int | None:
    """The PM_ERR_NODATA libpcp's archive open stops at, before reading any record, when
    the first volume, the .index or the .meta of the archive BASE holds a label and
    nothing more (each label checked in __pmLogOpen's order: a label libpcp refuses
    for another reason first, or one of another version, leaves it to the reader).
    None when there is no such file.

    (The reader lets such files by, or refuses them later for what follows: tools that
    must give libpcp's error call this first.)
    """
    folder, stem = os.path.dirname(base) or ".", os.path.basename(base)
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    vols = sorted(
        int(split[1])
        for split in map(log_base_name, entries)
        if split is not None and split[0] == stem and split[1].isdigit()
    )
    meta = find_file(base, ".meta")
    first = find_file(base, f".{vols[0]}") if vols else None
    if first is None or meta is None:
        return None
    label = _checked_label(first, vols[0])
    if isinstance(label, int):
        return label if label == PM_ERR_NODATA else None
    index = find_file(base, ".index")
    for path, vol in ((index, -2), (meta, -1)):
        if path is None:
            continue
        found = _checked_label(path, vol)
        if isinstance(found, int):
            return found if found == PM_ERR_NODATA else None
        if found[0] != label[0] or (vol == -2 and found[1:] != label[1:]):
            return None
    return None


def _checked_label(path: str, vol: int) -> tuple[int, int, str] | int:
    """__pmLogChkLabel of the file PATH for volume VOL: its (version, pid, host), or a
    PCP error code (PM_ERR_NODATA for a label and nothing more)."""
    try:
        data = file_bytes(path)
        label = decode_label(data, path)
    except PMError as exc:
        return exc.code
    if label.vol != vol:
        return PM_ERR_LABEL
    if len(data) == LABEL_BYTES[label.version]:
        return PM_ERR_NODATA
    return label.version, label.pid, label.hostname
