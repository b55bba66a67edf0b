"""Reading a PCP archive: its label, metadata, temporal index and records, either way in time.

`Archive(name)` opens an archive by its base name, by any of its file names, or by a
compressed volume's name, and loads the label, the whole .meta and the .index.  Volume
records are read on demand, forwards or backwards, from any (volume, offset) or by
time through the index.  Damage (a truncated or corrupt record) ends a walk with an
ArchiveError naming the file and byte offset, after every record before it; damage in
the .meta or .index keeps what came before it and is reported in `problems`.
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
from collections.abc import Iterator
from dataclasses import dataclass

from ..desc import Desc
from ..errors import (  # type: ignore[attr-defined]
    PM_ERR_LABEL,
    PM_ERR_LOGFILE,
    PM_ERR_LOGREC,
    PM_ERR_NODATA,
    PMError,
)
from ..pdu.constants import PDUType
from ..pdu.result import ResultDecodeError, decode_result, decode_value_sets
from ..pmns import PMNS
from ..values import Result, Timestamp
from .format import (
    FRAME,
    LABEL_BYTES,
    META_HEADER,
    PM_LOG_VERS03,
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
    decode_meta,
    swap_sec,
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


def _find_file(base: str, suffix: str) -> str | None:
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
                    return decompress(f.read())
            except (OSError, lzma.LZMAError, EOFError, ValueError) as exc:
                raise PMError(PM_ERR_LOGFILE, f"{path}: cannot decompress: {exc}") from None
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
    """An open archive: label, metadata, index, and walks over its records."""

    def __init__(self, name: str) -> None:
        # only the name of an archive's file loses its suffix: otherwise NAME is the base
        # name itself, as libpcp reads it ("20231114.00.10" is a base, not volume 10)
        self.base = base_name(name) if _find_file(name, "") is not None else name
        self.problems: list[ArchiveError] = []
        meta_path = _find_file(self.base, ".meta")
        if meta_path is None:
            raise PMError(PM_ERR_LOGFILE, f"{self.base}: no .meta file for this archive")
        self.meta_path = meta_path
        self.volume_paths: dict[int, str] = self._find_volumes()
        if not self.volume_paths:
            raise PMError(PM_ERR_LOGFILE, f"{self.base}: no data volumes for this archive")
        meta = _read_file(meta_path)
        if len(meta) == 0:
            raise PMError(PM_ERR_NODATA, f"{meta_path}: empty archive file")
        self.label: LogLabel = decode_label(meta, meta_path)
        self.version = self.label.version
        self._label_bytes = LABEL_BYTES[self.version]
        self.meta: list[tuple[int, MetaRecord]] = []
        self.descs: dict[int, Desc] = {}
        self.names: dict[int, tuple[str, ...]] = {}
        self.pmns = PMNS()
        self.indoms: dict[int, list[InDomRecord]] = {}
        self._indom_stamps: dict[int, list[Timestamp]] = {}  # each history's times, for bisect
        self.labels: list[LabelRecord] = []
        self.texts: dict[tuple[int, int], str] = {}
        self._load_meta(meta)
        self.index: list[IndexEntry] = []
        self._index_stamps: list[Timestamp] = []
        self.index_path = _find_file(self.base, ".index")
        if self.index_path is not None:
            self._load_index()
        self._volumes: dict[int, bytes | mmap.mmap] = {}

    # -- opening --------------------------------------------------------------------

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
        at = self._label_bytes
        end = len(data)
        path = self.meta_path
        while at < end:
            if end - at < 8:
                self._problem(PM_ERR_LOGREC, path, at, f"{end - at} stray bytes at the end")
                return
            length, mtype = META_HEADER.unpack_from(data, at)
            if length < 12 or at + length > end:
                self._problem(PM_ERR_LOGREC, path, at, f"record length {length} runs past the end")
                return
            if FRAME.unpack_from(data, at + length - 4)[0] != length:
                self._problem(PM_ERR_LOGREC, path, at, "record trailer does not match its header")
                return
            try:
                record = decode_meta(mtype, bytes(data[at + 8 : at + length - 4]), path, at)
            except ArchiveError as exc:
                self.problems.append(exc)
                return
            if record is not None:
                self._add_meta(at, record)
            at += length

    def _add_meta(self, offset: int, record: MetaRecord) -> None:
        self.meta.append((offset, record))
        if isinstance(record, DescRecord):
            pmid = record.desc.pmid
            self.descs[pmid] = record.desc
            self.names[pmid] = self.names.get(pmid, ()) + tuple(
                n for n in record.names if n not in self.names.get(pmid, ())
            )
            for name in record.names:
                if name not in self.pmns:
                    # newest first at each level, as libpcp builds an archive's namespace;
                    # a name clashing with a subtree is dropped, as there
                    with contextlib.suppress(PMError):
                        self.pmns.add(name, pmid, at_front=True)
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

    def _load_index(self) -> None:
        assert self.index_path is not None
        data = _read_file(self.index_path)
        try:
            label = decode_label(data, self.index_path)
        except ArchiveError as exc:
            self.problems.append(exc)
            return
        self.index, stray = decode_index(data, label.version)
        self._index_stamps = [e.stamp for e in self.index]
        if stray:
            size = 32 if self.version == PM_LOG_VERS03 else 20
            at = len(data) - stray
            self._problem(
                PM_ERR_LOGREC, self.index_path, at, f"{stray} bytes of a {size}-byte index entry"
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
            label = decode_label(data, path)
            if label.version != self.version or label.vol != vol:
                what = f"label says volume {label.vol} of version {label.version}"
                raise ArchiveError(PM_ERR_LABEL, path, 0, what)
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
        """The LogRecord for RECORD (framed) read from VOL at OFFSET."""
        n = len(record)
        body = record[4 : n - 4]
        pdu = _PDU_HEADER.pack(n - 8 + 12, _PDU_RESULT, 0) + body
        try:
            if self.version == PM_LOG_VERS03:
                _, sec, nsec, numpmid = _HEAD_V3.unpack_from(record)
                sec = swap_sec(sec)
                vsets = decode_value_sets(pdu, _V3_PREAMBLE, numpmid)
                result = Result(Timestamp(sec, nsec), vsets)
            else:
                result = decode_result(pdu, False)
        except (ResultDecodeError, struct.error) as exc:
            detail = exc.detail if isinstance(exc, PMError) else str(exc)
            raise ArchiveError(
                PM_ERR_LOGREC, self.volume_paths[vol], offset, f"corrupt record: {detail}"
            ) from None
        return LogRecord(vol, offset, n, result)

    def _frame_at(self, vol: int, data: bytes | mmap.mmap, at: int) -> int:
        """The length of the record at AT in VOL, checked against its trailer."""
        end = len(data)
        path = self.volume_paths[vol]
        if end - at < 4:
            raise ArchiveError(PM_ERR_LOGREC, path, at, f"truncated record ({end - at} bytes)")
        length = FRAME.unpack_from(data, at)[0]
        smallest = 24 if self.version == PM_LOG_VERS03 else 20
        if length < smallest or length & 3:
            raise ArchiveError(PM_ERR_LOGREC, path, at, f"bad record length {length}")
        if at + length > end:
            raise ArchiveError(
                PM_ERR_LOGREC, path, at, f"truncated record: {length} bytes, {end - at} left"
            )
        if FRAME.unpack_from(data, at + length - 4)[0] != length:
            raise ArchiveError(PM_ERR_LOGREC, path, at, "record trailer does not match its header")
        return length

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
            while at < end:
                length = self._frame_at(v, data, at)
                yield self.decode_record(v, at, data[at : at + length])
                at += length

    def _walk_back(self, vol: int, data: bytes | mmap.mmap, at: int) -> Iterator[LogRecord]:
        path = self.volume_paths[vol]
        floor = self._label_bytes
        while at > floor:
            if at - floor < 4:
                raise ArchiveError(PM_ERR_LOGREC, path, at, "stray bytes before this record")
            length = FRAME.unpack_from(data, at - 4)[0]
            start = at - length
            if length < 20 or start < floor or FRAME.unpack_from(data, start)[0] != length:
                raise ArchiveError(
                    PM_ERR_LOGREC, path, at - 4, f"bad record length {length} (reading backwards)"
                )
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

    def end(self) -> Timestamp:
        """The time of the last record (the label's start time if there is none).

        ArchiveError when the tail is damaged: then, as with libpcp, the end is unknown.
        """
        for rec in self.records(backwards=True):
            return rec.stamp
        return self.label.start


def _apply_delta(prior: InDomRecord | None, delta: InDomRecord) -> InDomRecord:
    """A v3 delta record applied to the full instance domain before it."""
    members = dict(zip(prior.insts, prior.names, strict=True)) if prior else {}
    for inst, name in zip(delta.insts, delta.names, strict=True):
        if name is None:
            members.pop(inst, None)
        else:
            members[inst] = name
    return InDomRecord(delta.stamp, delta.indom, tuple(members), tuple(members.values()))
