"""The input archives: each opened as pmNewContext opens it, its end found, its
records framed in one pass (times, sizes, offsets as NumPy columns).

A record is handed on as its bytes (a copy through needs nothing more) or decoded,
when a selection or a change of version needs its values.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.errors import PM_ERR_LOGREC, PM_ERR_NODATA, PMError, pmErrStr
from purepcp.pmapi.values import Result, Timestamp

from .options import PROG

NSEC = 1_000_000_000
_HEAD_V2 = struct.Struct(">iiii")  # length, seconds, microseconds, numpmid
_HEAD_V3 = struct.Struct(">iQii")  # length, seconds (words swapped), nanoseconds, numpmid
_WORD = struct.Struct(">i")


@dataclass
class Input:
    """One input archive (archive None: an empty one, skipped)."""

    name: str
    archive: Archive | None
    end: Timestamp | None = None
    #: the records' columns: time (ns), numpmid, offset, length, volume (index into vols)
    times: Any = None
    numpmid: Any = None
    offsets: Any = None
    lengths: Any = None
    vol_of: Any = None
    vols: list[int] = field(default_factory=list)
    datas: list[Any] = field(default_factory=list)
    #: the damage that ends the records read, if any
    problem: Any = None
    _padded: bool | None = None

    @property
    def empty(self) -> bool:
        return self.archive is None

    def frame(self) -> None:
        """Frame every record, up to any damage: one pass per volume (no NumPy: a
        merge is mostly start-up and copying, and NumPy's import would double it)."""
        from purepcp.pmapi.archive.damage import ArchiveError
        from purepcp.pmapi.archive.format import LABEL_BYTES, PM_LOG_VERS03
        from purepcp.pmapi.archive.versions import swap_sec

        archive = self.archive
        assert archive is not None
        v3 = archive.version == PM_LOG_VERS03
        first = LABEL_BYTES[archive.version]
        head = _HEAD_V3 if v3 else _HEAD_V2
        smallest = 24 if v3 else 20
        times: list[int] = []
        numpmid: list[int] = []
        offsets: list[int] = []
        lengths: list[int] = []
        vol_of: list[int] = []
        for vol in archive.volume_paths:
            try:
                data = archive.volume(vol)
            except ArchiveError as exc:
                self.problem = exc
                break
            k = len(self.vols)
            self.vols.append(vol)
            self.datas.append(data)
            at, end = first, len(data)
            run = _uniform(data, first, smallest, v3)
            if run is not None:  # (every record of the volume one length: framed at once)
                length, stamps, counts = run
                times += stamps
                numpmid += counts
                offsets.extend(range(first, end, length))
                lengths.extend([length] * len(counts))
                vol_of.extend([k] * len(counts))
                continue
            unpack, trailer = head.unpack_from, _WORD.unpack_from
            while end - at >= 4:
                if end - at >= head.size:
                    length, sec, frac, count = unpack(data, at)
                else:
                    length, sec, frac, count = _WORD.unpack_from(data, at)[0], 0, 0, 0
                if (
                    length < smallest
                    or length & 3
                    or at + length > end
                    or trailer(data, at + length - 4)[0] != length
                ):
                    try:
                        archive.frame_length(vol, data, at)
                    except ArchiveError as exc:
                        self.problem = exc
                    break
                if v3:
                    times.append(swap_sec(sec) * NSEC + frac)
                else:
                    times.append(sec * NSEC + frac * 1000)
                numpmid.append(count)
                offsets.append(at)
                lengths.append(length)
                vol_of.append(k)
                at += length
            if self.problem is not None:
                break
        self.times, self.numpmid, self.offsets = times, numpmid, offsets
        self.lengths, self.vol_of = lengths, vol_of

    def __len__(self) -> int:
        return len(self.times)

    def raw(self, i: int) -> bytes:
        """Record I's bytes, framed."""
        at = int(self.offsets[i])
        return self.datas[int(self.vol_of[i])][at : at + int(self.lengths[i])]

    def view(self, i: int) -> bytes | memoryview:
        """Record I's bytes, framed, as a view of the volume (no copy), or a copy with
        its blocks' padding made PCP's '~' if it was not."""
        at = int(self.offsets[i])
        view = memoryview(self.datas[int(self.vol_of[i])])[at : at + int(self.lengths[i])]
        if self.padded:
            return view
        return tilde_padding(view, self.v3)

    @property
    def padded(self) -> bool:
        """Whether every value block is a whole number of words (no padding to redo)."""
        if self._padded is None:
            assert self.archive is not None
            self._padded = all(d.type in _FIXED for d in self.archive.descs.values())
        return self._padded

    @property
    def v3(self) -> bool:
        assert self.archive is not None
        return self.archive.version == 3

    def decode(self, i: int) -> Result:
        """Record I's pmResult."""
        assert self.archive is not None
        vol = self.vols[int(self.vol_of[i])]
        return self.archive.decode_record(vol, int(self.offsets[i]), self.raw(i)).result


_COMPRESSED = (".xz", ".lzma", ".bz2", ".gz", ".zst")


def _exists(path: str) -> bool:
    return os.path.exists(path) or any(os.path.exists(path + c) for c in _COMPRESSED)


def _existing(name: str) -> str:
    """NAME, if any file of the archive it names is there; else ENOENT, as libpcp says."""
    from purepcp.pmapi.archive.reader import base_name

    named = _exists(name)
    base = base_name(name) if named else name
    if not named and not any(_exists(base + s) for s in (".meta", ".index", ".0")):
        raise PMError(-errno.ENOENT)
    return name


def open_input(name: str, desperate: bool) -> Input:
    """NAME opened (an empty archive is a warning; anything else that fails ends the run)."""
    try:
        archive = Archive(_existing(name))
    except PMError as exc:
        if exc.code == PM_ERR_NODATA:
            sys.stderr.write(f'{PROG}: Warning: empty archive "{name}" will be skipped\n')
            return Input(name, None)
        sys.stderr.write(f'{PROG}: Error: cannot open archive "{name}": {pmErrStr(exc.code)}\n')
        raise SystemExit(1) from None
    found = archive.find_end()
    if found is None:
        sys.stderr.write(
            f"{PROG}: Error: cannot get end of archive ({name}): {pmErrStr(PM_ERR_LOGREC)}\n"
        )
        if not desperate:
            raise SystemExit(1)
        end = Timestamp((1 << 63) - 1, 0)
    else:
        end = found.stamp
    return Input(name, archive, end)


#: value types whose blocks are whole words (no padding)
_FIXED = frozenset((0, 1, 2, 3, 4, 5))
_SET = struct.Struct(">Iii")  # pmid, numval, valfmt


def tilde_padding(record: memoryview, v3: bool) -> bytes | memoryview:
    """RECORD (framed) with the padding after each value block's bytes set to '~', as
    libpcp's encoding leaves it (a record written otherwise, copied as it is, would
    differ from PCP's copy in those bytes); RECORD itself when it is so already."""
    at = 20 if v3 else 16
    n = len(record)
    count = _WORD.unpack_from(record, at - 4)[0]
    fixes: list[tuple[int, int]] = []
    try:
        for _ in range(count):
            _, numval, valfmt = _SET.unpack_from(record, at)
            if numval <= 0:
                at += 8
                continue
            if valfmt != 0:
                for k in range(numval):
                    word = _WORD.unpack_from(record, at + 16 + 8 * k)[0]
                    start = 4 * word - 8  # (PDU offsets: the record lacks 8 header bytes)
                    if 0 <= start <= n - 8:
                        vlen = _WORD.unpack_from(record, start)[0] & 0xFFFFFF
                        pad = -vlen % 4
                        if pad and start + vlen + pad <= n - 4:
                            tail = bytes(record[start + vlen : start + vlen + pad])
                            if tail != b"~" * pad:
                                fixes.append((start + vlen, pad))
            at += 12 + 8 * numval
    except struct.error:
        return record
    if not fixes:
        return record
    buf = bytearray(record)
    for where, pad in fixes:
        buf[where : where + pad] = b"~" * pad
    return bytes(buf)


def _uniform(data: Any, first: int, smallest: int, v3: bool) -> tuple[int, list, list] | None:
    """If the records from FIRST fill DATA and are all one length (as a day of one
    pmlogger configuration often is): that length and their times (ns) and numpmids,
    read with a few whole-volume operations; else None."""
    from array import array

    end = len(data)
    if end - first < 8 or first & 3:
        return None
    length = _WORD.unpack_from(data, first)[0]
    if length < smallest or length & 3 or (end - first) % length:
        return None
    count = (end - first) // length
    words = memoryview(data)[first:end].cast("I")  # (native order: compared as bytes)
    step = length >> 2
    expect = _WORD.pack(length) * count
    if words[0::step].tobytes() != expect or words[step - 1 :: step].tobytes() != expect:
        return None

    def column(k: int, code: str = "i") -> array:
        col = array(code, words[k::step].tobytes())
        col.byteswap()
        return col

    if v3:
        low, high = column(1, "I"), column(2, "i")
        nsec, counts = column(3), column(4)
        stamps = [(h << 32 | lo) * NSEC + n for lo, h, n in zip(low, high, nsec, strict=True)]
    else:
        sec, usec, counts = column(1), column(2), column(3)
        stamps = [s * NSEC + u * 1000 for s, u in zip(sec, usec, strict=True)]
    return length, stamps, counts.tolist()
