"""The archive written: records (buffered, whole records only), metadata, the
temporal index by PCP's rules, volume switches and <mark>s.

PCP's pmlogextract indexes a record when it starts a volume, when an instance domain
was written for it, or when the volume has grown 100,000 bytes since the last entry;
an entry points before the record and before the metadata written for it.  A last
entry at the end points before the last record written.  Every label gets the time of
the first record written (its host and zone come from the inputs) once that is known.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

from purepcp.pmapi.archive.format import LABEL_BYTES, PM_LOG_VERS02
from purepcp.pmapi.archive.writer import ArchiveWriter, encode_record
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.values import Result, Timestamp

from .abandon import Abandon
from .metadata import MetaSink
from .options import PROG

_FLUSH_BYTES = 1 << 20
_INDEX_EVERY = 100_000
_MAX_V2 = 0x7FFFFFFF
_MSEC = 1_000_000


def _stamp_text(stamp: Timestamp, zone: str | None) -> str:
    """__pmPrintTimestamp: HH:MM:SS.nnnnnnnnn in the run's zone (ZONE: -Z's or the
    archive's; None: local)."""
    from datetime import datetime

    from purepcp.pmapi.timewindow.tz import resolve_zone

    tm = datetime.fromtimestamp(stamp.sec, resolve_zone(zone))
    return f"{tm.hour:02d}:{tm.minute:02d}:{tm.second:02d}.{stamp.nsec:09d}"


class Output(MetaSink):
    """The output archive, created as __pmLogCreate makes it (no file may exist)."""

    def __init__(self, base: str, version: int, start: Timestamp) -> None:
        self.base = base
        self.version = version
        try:
            self.writer = ArchiveWriter(
                base, hostname="", timezone="", start=start, version=version,
                volume_limit=(1 << 63) - 1,
            )  # fmt: skip
        except PMError as exc:
            if exc.code == -errno.EEXIST and exc.detail:
                sys.stderr.write(f"__pmLogNewFile: {exc.detail}\n")
            sys.stderr.write(f"{PROG}: Error: __pmLogCreate: {pmErrStr(exc.code)}\n")
            raise SystemExit(1) from None
        self.label_size = LABEL_BYTES[version]
        self.zone: str | None = None  # the zone times are shown in (None: local)
        self.written = 0  # records and marks written (-s and -v count them)
        self.first_stamp: Timestamp | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._log_end = self.writer.log_offset  # the volume's length, buffered bytes too
        self._last_stamp = start
        self.old_log_offset = 0
        self.old_meta_offset = 0
        self._flush_at = _INDEX_EVERY

    @property
    def meta_offset(self) -> int:
        return self.writer.meta_offset

    def put_meta(self, data: bytes) -> None:
        self.writer.put_meta_bytes(data)

    # -- records -------------------------------------------------------------------

    def _append(self, data: bytes, stamp: Timestamp) -> None:
        self._pending.append(data)
        self._pending_bytes += len(data)
        self._log_end += len(data)
        self._last_stamp = stamp
        if self._pending_bytes >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self.writer.put_record_bytes(data, self._last_stamp)

    def new_volume(self, stamp: Timestamp) -> None:
        """Switch volumes (PCP says so on stderr)."""
        self.flush()
        vol = self.writer.new_volume(stamp, index=False)
        self._log_end = self.writer.log_offset
        self._flush_at = _INDEX_EVERY
        when = _stamp_text(stamp, self.zone)
        sys.stderr.write(f"{PROG}: New log volume {vol}, at {when}\n")

    def put_record(self, data: bytes, stamp: Timestamp, indexed: bool) -> None:
        """A data record (framed, this archive's version); INDEXED if its metadata
        included an instance domain.  The caller has written its metadata."""
        start = self._log_end
        self.old_log_offset = start
        self._append(data, stamp)
        self.written += 1
        if start in (0, self.label_size) or self._log_end > self._flush_at:
            indexed = True
        if indexed and stamp.sec * 1_000_000_000 + stamp.nsec > 0:
            self.writer.put_index(stamp, self.old_meta_offset, start)
            self.old_log_offset = self._log_end
            self.old_meta_offset = self.writer.meta_offset
            self._flush_at = self._log_end + _INDEX_EVERY

    def put_copy(self, data: memoryview, ns: int) -> bool:
        """put_record for a record copied as it is, needing no metadata, at NS; False
        (nothing written) if it would take a v2 volume past 2 GB: the general path
        switches volumes."""
        start = self._log_end
        size = len(data)
        if self.version == PM_LOG_VERS02 and start + size > _MAX_V2:
            return False
        self.old_meta_offset = self.writer.meta_offset  # (as each record's turn sets it)
        self.old_log_offset = start
        self._pending.append(data)
        self._pending_bytes += size
        self._log_end = end = start + size
        self.written += 1
        if start == self.label_size or end > self._flush_at:
            stamp = Timestamp.from_ns(ns)
            self._last_stamp = stamp
            self.writer.put_index(stamp, self.old_meta_offset, start)
            self.old_log_offset = end
            self.old_meta_offset = self.writer.meta_offset
            self._flush_at = end + _INDEX_EVERY
        if self._pending_bytes >= _FLUSH_BYTES:
            self._last_stamp = Timestamp.from_ns(ns)
            self.flush()
        return True

    def copy_span(
        self,
        views: list[memoryview],
        offsets: list[int],
        lengths: list[int],
        vol_of: list[int],
        times: list[int],
        i: int,
        j: int,
    ) -> int:
        """put_copy for records I to J of an input (adjacent in its volumes), written as
        whole stretches of the volumes; how many were written (fewer if a v2 volume
        would pass 2 GB)."""
        pos, flush_at, label = self._log_end, self._flush_at, self.label_size
        self.old_meta_offset = self.writer.meta_offset  # (as each record's turn sets it)
        limit = _MAX_V2 if self.version == PM_LOG_VERS02 else 1 << 62
        old = self.old_log_offset
        k = i
        while k < j:
            size = lengths[k]
            if pos + size > limit:
                break
            start = pos
            pos += size
            if start == label or pos > flush_at:
                self.writer.put_index(Timestamp.from_ns(times[k]), self.old_meta_offset, start)
                self.old_meta_offset = self.writer.meta_offset
                flush_at = pos + _INDEX_EVERY
                old = pos
            else:
                old = start
            k += 1
        if k == i:
            return 0
        self.flush()
        a = i
        while a < k:  # (a stretch per volume)
            b, vol = a + 1, vol_of[a]
            while b < k and vol_of[b] == vol:
                b += 1
            start, end = offsets[a], offsets[b - 1] + lengths[b - 1]
            self.writer.put_record_bytes(views[vol][start:end], Timestamp.from_ns(times[b - 1]))
            a = b
        self._log_end, self._flush_at, self.old_log_offset = pos, flush_at, old
        self.written += k - i
        return k - i

    def needs_volume(self, size: int) -> bool:
        """Whether a record of SIZE bytes would take a v2 volume past 2 GB."""
        return self.version == PM_LOG_VERS02 and self._log_end + size > _MAX_V2

    def put_mark(self, stamp: Timestamp) -> None:
        self._append(encode_record(Result(stamp, ()), self.version), stamp)
        self.written += 1

    # -- the end ---------------------------------------------------------------------

    def finish(self, current: Timestamp, hostname: str, timezone: str, zoneinfo: str) -> None:
        """The last index entry, then every label with the first record's time."""
        self.flush()
        log = self.old_log_offset or self.label_size
        self.writer.put_index(current, self.writer.meta_offset, log)
        self.relabel(hostname, timezone, zoneinfo)
        self.writer.close()

    def relabel(self, hostname: str, timezone: str, zoneinfo: str) -> None:
        changes: dict[str, object] = dict(hostname=hostname, timezone=timezone, zoneinfo=zoneinfo)
        if self.first_stamp is not None:
            changes["start"] = self.first_stamp
        self.writer.relabel(**changes)

    def abandon(self, desperate: bool) -> None:
        """abandon_extract: the files go (unless DESPERATE), and the run says so."""
        if desperate:
            with contextlib.suppress(PMError, OSError):
                self.flush()
                self.writer.close()
            return
        sys.stderr.write(f'Archive "{self.base}" not created.\n')
        with contextlib.suppress(PMError, OSError):
            self.writer._close_all()
        for vol in range(self.writer.vol, -1, -1):
            with contextlib.suppress(OSError):
                os.unlink(f"{self.base}.{vol}")
        for suffix in (".meta", ".index"):
            with contextlib.suppress(OSError):
                os.unlink(self.base + suffix)


__all__ = ["Abandon", "Output"]
