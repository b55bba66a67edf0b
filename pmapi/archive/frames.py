"""An archive's records framed in one pass over each volume, as NumPy columns.

Each record's volume, offset, length, time and numpmid, up to the first frame the reader
refuses (a run of records of one length is checked at once, the rest one by one, as the
reader checks them); and the kernel let take back a mapped volume's pages once read, so
a pass over a large archive keeps little of it resident.
"""

from __future__ import annotations

import contextlib
import mmap
import struct
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import PM_ERR_LOGREC
from .format import LABEL_BYTES, PM_LOG_VERS03, ArchiveError
from .interp import NSEC

if TYPE_CHECKING:
    from .reader import Archive

_FRAME = struct.Struct(">i")
_PAGE = mmap.PAGESIZE
#: How much of a mapped volume a pass reads before letting the kernel take its pages back
#: (in volumes larger than LARGE: smaller ones are read whole, then let go).
SPAN = 32 << 20
LARGE = 128 << 20
#: No rows.
EMPTY = np.empty(0, np.int64)


class Frames:
    """Every record's frame in ARCHIVE, in file order up to the first bad one, as columns:
    its volume (`vol_of`, an index into `volumes`' order), offset, length, time (ns) and
    numpmid.  `first` is where records start in a volume, `smallest` the length of the
    least record (a <mark>); `problem` is the damage that ended the frames, if any."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.problem: ArchiveError | None = None
        self.first = LABEL_BYTES[archive.version]
        self.v3 = archive.version == PM_LOG_VERS03
        self.smallest = 24 if self.v3 else 20
        self.volumes: dict[int, Any]  # volume number -> its data
        self.volumes, self.vol_of, self.offsets, self.lengths, self.times, self.numpmid = (
            self._scan()
        )

    def _scan(self) -> tuple[Any, ...]:
        """Frame every volume: the volumes' data, and each record's volume (index),
        offset, length, time and numpmid, in file order."""
        datas: dict[int, Any] = {}
        parts: list[tuple[np.ndarray, ...]] = []
        for vol in self.archive.volume_paths:
            try:
                data = self.archive.volume(vol)
            except ArchiveError as exc:
                self.problem = detached(exc)
                break
            offs, heads = self._frames(vol, data)
            lens = heads[:, 0].astype(np.int64)
            parts.append((np.full(len(offs), len(datas)), offs, lens, *self._heads(heads)))
            if len(data) > LARGE:
                release(data, 0, len(data))
            datas[vol] = data
            if self.problem is not None:
                break
        columns = [
            np.concatenate([p[k] for p in parts]).astype(np.int64) if parts else EMPTY
            for k in range(5)
        ]
        return (datas, *columns)

    def _frames(self, vol: int, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """The offsets of VOL's records, up to any damage (kept in `problem`), and each
        one's first words (length, time, numpmid), read in one pass over the volume."""
        first, end, smallest = self.first, len(data), self.smallest
        nw = 5 if self.v3 else 4
        at = first
        offs: list[np.ndarray] = []
        heads: list[np.ndarray] = []
        if end - first >= 4:  # a run of records of one length: its frames checked at once
            length = _FRAME.unpack_from(data, first)[0]
            count = (end - first) // length if length >= smallest and not length & 3 else 0
            if count > 1:
                rows = np.frombuffer(data, ">i4", count * length >> 2, first)
                rows = rows.reshape(count, length >> 2)
                good = np.empty(count, dtype=bool)
                words = np.empty((count, nw), dtype=np.int32)
                step = max(1, SPAN // length)
                for c in range(0, count, step):
                    d = min(c + step, count)
                    good[c:d] = (rows[c:d, 0] == length) & (rows[c:d, -1] == length)
                    words[c:d] = rows[c:d, :nw]
                    if end > LARGE:  # (keep only the stretch being read)
                        release(data, first + c * length, first + d * length)
                del rows
                count = count if good.all() else int(np.argmin(good))
                offs.append(first + length * np.arange(count, dtype=np.int64))
                heads.append(words[:count])
                at = first + count * length
        head = struct.Struct(f">{nw}i")
        offsets: list[int] = []
        rest: list[tuple[int, ...]] = []
        released = at
        # the rest, one record at a time, checked as the reader checks it; fewer bytes
        # than a length word are the end of the volume, as in libpcp (Archive.records)
        while end - at >= 4:
            if end - at >= head.size:
                words_at = head.unpack_from(data, at)
                length = words_at[0]
            else:  # (too few bytes for a record: a bad frame)
                words_at = ()
                length = _FRAME.unpack_from(data, at)[0]
            if self._bad_frame(data, at, length):
                self.problem = self._frame_error(vol, data, at)
                break
            offsets.append(at)
            rest.append(words_at)
            at += length
            if at - released > SPAN and end > LARGE:
                release(data, released, at)
                released = at
        offs.append(np.array(offsets, dtype=np.int64))
        heads.append(np.array(rest, dtype=np.int32).reshape(len(rest), nw))
        return np.concatenate(offs), np.concatenate(heads)

    def _bad_frame(self, data: Any, at: int, length: int) -> bool:
        """Whether the frame of LENGTH at AT in DATA is one the reader refuses."""
        end = len(data)
        if length < self.smallest or length & 3 or at + length > end:
            return True
        return _FRAME.unpack_from(data, at + length - 4)[0] != length

    def _frame_error(self, vol: int, data: Any, at: int) -> ArchiveError:
        """The reader's error for the bad frame at AT in VOL (its words, so they agree)."""
        try:
            self.archive.frame_length(vol, data, at)
        except ArchiveError as exc:
            return detached(exc)
        path = self.archive.volume_paths[vol]
        return ArchiveError(PM_ERR_LOGREC, path, at, "bad record frame")

    def _heads(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The times (ns) and numpmid of records whose first words are WORDS (a row each)."""
        if self.v3:  # 64-bit seconds, low word first (see versions.swap_sec)
            low = words[:, 1].view(np.uint32).astype(np.int64)
            sec = words[:, 2].astype(np.int64) << 32 | low
            nsec = words[:, 3].astype(np.int64)
            numpmid = words[:, 4]
        else:
            sec = words[:, 1].astype(np.int64)
            nsec = words[:, 2].astype(np.int64) * 1000
            numpmid = words[:, 3]
        return sec * NSEC + nsec, numpmid


def release(data: Any, start: int, end: int) -> None:
    """Let the kernel take back the pages of DATA (a mapped volume) from START to END:
    they are read from the file again when next needed (the page cache mostly still
    holds them), so a pass over a large archive keeps no more of it resident than the
    part being read."""
    if not isinstance(data, mmap.mmap):
        return
    start -= start % _PAGE
    end = min(end, len(data))
    if end > start:
        with contextlib.suppress(OSError, ValueError):
            data.madvise(mmap.MADV_DONTNEED, start, end - start)


def detached(exc: ArchiveError) -> ArchiveError:
    """EXC without its traceback and context, whose frames hold views of the volumes
    (an archive cannot close a volume while a view of it lives)."""
    return ArchiveError(exc.code, exc.file, exc.offset, exc.reason)
