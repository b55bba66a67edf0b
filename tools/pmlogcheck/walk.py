"""The data volumes read as pass 3 reads them: libpcp's __pmLogSetTime to position,
then __pmLogRead_ctx forwards, record by record, with no checks beyond its own.

A volume is taken when its label loads, names that volume and the file holds more than
the label (__pmLogChkLabel); a volume that fails is skipped, as libpcp skips it.  A
record is read from its length word: a length under 8, a body or trailer the file does
not hold, a trailer unlike the header or a body that does not decode is
PM_ERR_LOGREC; fewer than four bytes left in a volume are its end.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.errors import PM_ERR_EOL, PM_ERR_LOGFILE, PM_ERR_LOGREC, PMError

from .stamps import NSEC

if TYPE_CHECKING:
    from purepcp.pmapi.archive import Archive, IndexEntry
    from purepcp.pmapi.archive.reader import LogRecord

_WORD = struct.Struct(">i")


class Walk:
    """A read position in ARCHIVE's volumes, moved as libpcp moves it."""

    def __init__(self, archive: Archive, index: Sequence[IndexEntry]) -> None:
        self.archive = archive
        self.index = index
        self.label_bytes = archive.label_bytes
        vols = list(archive.volume_paths)
        self.minvol, self.maxvol = min(vols), max(vols)
        self._good: dict[int, Any] = {}  # volumes whose labels passed, and their data
        self.vol = -1  # ac_curvol
        self.data: Any = b""
        self.at = 0

    # -- volumes -------------------------------------------------------------------

    def _volume(self, vol: int) -> Any | None:
        """VOL's data if __pmLogChkLabel would take it, else None."""
        if vol in self._good:
            return self._good[vol]
        if vol not in self.archive.volume_paths:
            return None
        try:
            data = self.archive.volume(vol)
        except (PMError, OSError):
            return None
        if len(data) == self.label_bytes:  # (PM_ERR_NODATA: a label and nothing else)
            return None
        self._good[vol] = data
        return data

    def change_vol(self, vol: int) -> bool:
        """__pmLogChangeVol: make VOL current, positioned after its label."""
        if vol == self.vol:
            return True
        data = self._volume(vol)
        if data is None:
            return False
        self.vol, self.data, self.at = vol, data, self.label_bytes
        return True

    def _vol_skip(self, forward: bool, j: int) -> int:
        """VolSkip: from index entry J, the first entry whose volume can be read."""
        vol = self.index[j].vol
        while self.minvol <= vol <= self.maxvol:
            if self.change_vol(vol):
                return j
            step = 1 if forward else -1
            j += step
            while 0 <= j < len(self.index) and self.index[j].vol == vol:
                j += step
            if not 0 <= j < len(self.index):
                return -1
            vol = self.index[j].vol
        return -1

    # -- positioning ---------------------------------------------------------------

    def set_time(self, origin_ns: int) -> None:
        """__pmLogSetTime going forwards to ORIGIN (ns): PMError PM_ERR_LOGFILE if no
        volume can be read there."""
        if not self.index:
            for vol in range(self.minvol, self.maxvol + 1):
                if self.change_vol(vol):
                    self.at = self.label_bytes
                    return
            raise PMError(PM_ERR_LOGFILE)
        j, toobig, match = self._index_point(origin_ns)
        n = len(self.index)
        serial = True
        if match:
            j = self._seek_entry(True, j)
        elif j < 1:
            j = self._seek_entry(True, 0)
        elif j == n:
            j = self._seek_entry(False, n - 1)
        else:
            hi = _ns(self.index[j]) - origin_ns
            lo = origin_ns - _ns(self.index[j - 1])
            if hi <= lo and not toobig:
                j = self._seek_entry(True, j)
                serial = False
            else:
                j = self._seek_entry(True, j - 1)
            if serial:  # the index points at a record's end: back up one record
                self._back_one()

    def _index_point(self, origin_ns: int) -> tuple[int, bool, bool]:
        """The first index entry at or after ORIGIN (or past a truncated last volume)."""
        size = None
        for i, entry in enumerate(self.index):
            if entry.vol < self.minvol:
                continue
            if entry.vol == self.maxvol:
                if size is None:
                    data = self._volume(self.maxvol)
                    size = len(data) if data is not None else 0
                if entry.log_offset > size:
                    return i, True, False
            diff = _ns(entry) - origin_ns
            if diff >= 0:
                return i, False, diff == 0
        return len(self.index), False, False

    def _seek_entry(self, forward: bool, j: int) -> int:
        j = self._vol_skip(forward, j)
        if j < 0:
            raise PMError(PM_ERR_LOGFILE)
        self.at = self.index[j].log_offset
        return j

    def _back_one(self) -> None:
        """One record read backwards (its outcome unused), as libpcp backs up: the
        position ends at that record's start, or where a failed read leaves it."""
        while self.at <= self.label_bytes:
            for vol in range(self.vol - 1, self.minvol - 1, -1):
                if self.change_vol(vol):
                    self.at = len(self.data)
                    break
            else:
                return
        data, at = self.data, self.at
        if at - 4 < 0 or at > len(data):
            return
        head = _WORD.unpack_from(data, at - 4)[0]
        rlen = head - 8
        if rlen < 0 or rlen > at:
            return
        start = at - 4 - rlen - 4
        if start < 0:
            return
        if _WORD.unpack_from(data, start)[0] != head:
            self.at = start + 4
            return
        self.at = start

    # -- reading -------------------------------------------------------------------

    def next(self) -> tuple[LogRecord, bytes]:
        """The next record going forwards, and its bytes; PMError PM_ERR_EOL after the
        last volume, PM_ERR_LOGREC at damage."""
        while len(self.data) - self.at < 4:
            for vol in range(self.vol + 1, self.maxvol + 1):
                if self.change_vol(vol):
                    break
            else:
                raise PMError(PM_ERR_EOL)
        data, at = self.data, self.at
        head = _WORD.unpack_from(data, at)[0]
        if head < 8 or at + head > len(data):
            raise PMError(PM_ERR_LOGREC)
        if _WORD.unpack_from(data, at + head - 4)[0] != head:
            raise PMError(PM_ERR_LOGREC)
        raw = bytes(data[at : at + head])
        try:
            record = self.archive.decode_record(self.vol, at, raw)
        except Exception:  # (any failure to decode is a corrupt record to libpcp)
            raise PMError(PM_ERR_LOGREC) from None
        self.at = at + head
        return record, raw


def _ns(entry: IndexEntry) -> int:
    return entry.stamp.sec * NSEC + entry.stamp.nsec
