"""The input's volume records as bytes, with just what the rewrite loop needs first.

Most records of an archive pass through a rewrite untouched, so they are not decoded:
the loop needs only a record's time and the metrics it holds (to know which metadata
goes before it); a record the rules touch is decoded on demand.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from purepcp.pmapi.archive.format import PM_LOG_VERS03
from purepcp.pmapi.archive.versions import swap_sec
from purepcp.pmapi.values import Timestamp

if TYPE_CHECKING:
    from purepcp.pmapi.archive.reader import Archive, LogRecord

_V2 = struct.Struct(">iii")  # sec, usec, numpmid (after the length)
_V3 = struct.Struct(">qii")  # sec, nsec, numpmid
_SET = struct.Struct(">Ii")  # pmid, numval


@dataclass(frozen=True)
class RawRecord:
    """One volume record: where it is, its bytes, its time and its metrics."""

    vol: int
    offset: int
    data: bytes
    stamp: Timestamp
    pmids: tuple[int, ...]

    def decode(self, archive: Archive) -> LogRecord:
        return archive.decode_record(self.vol, self.offset, self.data)


def raw_records(archive: Archive) -> Iterator[RawRecord]:
    """Every record of ARCHIVE in file order (ArchiveError at damage, as the reader)."""
    v3 = archive.version == PM_LOG_VERS03
    for vol in archive.volume_paths:
        data = archive.volume(vol)
        at = archive.label_bytes
        end = len(data)
        while end - at >= 4:
            length = archive.frame_length(vol, data, at)
            record = bytes(data[at : at + length])
            if v3:
                sec, nsec, numpmid = _V3.unpack_from(record, 4)
                stamp = Timestamp(swap_sec(sec), nsec)
                pos = 20
            else:
                sec, usec, numpmid = _V2.unpack_from(record, 4)
                stamp = Timestamp(sec, usec * 1000)
                pos = 16
            pmids = []
            try:
                for _ in range(max(numpmid, 0)):
                    pmid, numval = _SET.unpack_from(record, pos)
                    pmids.append(pmid)
                    pos += 8 + (4 + 8 * numval if numval > 0 else 0)
            except struct.error:
                stamp = archive.decode_record(vol, at, record).stamp  # (says what is wrong)
            yield RawRecord(vol, at, record, stamp, tuple(pmids))
            at += length
