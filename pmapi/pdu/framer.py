"""Split a byte stream into PDUs, with PCP's size rules; no I/O.

Feed it whatever a socket or pipe gave you; take complete PDUs out.  A header
announcing fewer than 12 bytes is a protocol error (PM_ERR_IPC); one announcing
more than the framer's ceiling is PM_ERR_TOOBIG, as libpcp's __pmGetPDU rules
(pmcd caps client PDUs at 64 KB, everything else at INT_MAX - 1024).  Buffered
bytes never exceed one PDU plus what was fed, so memory stays bounded by the
ceiling.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from ..errors import PM_ERR_IPC, PM_ERR_TOOBIG
from .codec import PDUError, decode
from .constants import HEADER_SIZE, MAX_PDU_SIZE
from .records import PDU

_LEN_TYPE = struct.Struct(">ii")


class PDUFramer:
    """A sans-IO PDU splitter: feed() bytes in, next_frame()/frames()/pdus() out."""

    def __init__(self, ceiling: int = MAX_PDU_SIZE) -> None:
        self.ceiling = ceiling
        self._buf = bytearray()
        self._pos = 0
        self._failed: PDUError | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add bytes received from the peer."""
        if self._pos and self._pos * 2 > len(self._buf):
            del self._buf[: self._pos]  # compact: keep only the unconsumed tail
            self._pos = 0
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a PDU."""
        return len(self._buf) - self._pos

    def next_frame(self) -> bytes | None:
        """The next complete PDU's bytes, or None until more bytes arrive.

        Raises PDUError for a header no PDU can have; the stream is then unusable
        (as for libpcp, which drops such a connection) and every later call says so.
        """
        if self._failed is not None:
            raise self._failed
        available = len(self._buf) - self._pos
        if available < 4:
            return None
        (length,) = struct.unpack_from(">i", self._buf, self._pos)
        if length < HEADER_SIZE:
            self._failed = PDUError(f"PDU length {length} is shorter than its header", PM_ERR_IPC)
            raise self._failed
        if length > self.ceiling:
            self._failed = PDUError(
                f"PDU length {length} exceeds the limit of {self.ceiling} bytes", PM_ERR_TOOBIG
            )
            raise self._failed
        if available >= 8:
            _, pdutype = _LEN_TYPE.unpack_from(self._buf, self._pos)
            if pdutype < 0:
                self._failed = PDUError(f"PDU type {pdutype} is negative", PM_ERR_IPC)
                raise self._failed
        if available < length:
            return None
        frame = bytes(self._buf[self._pos : self._pos + length])
        self._pos += length
        if self._pos == len(self._buf):  # all taken: let a big PDU's buffer go now
            self._buf = bytearray()
            self._pos = 0
        return frame

    def frames(self) -> Iterator[bytes]:
        """Every complete PDU buffered so far."""
        while (frame := self.next_frame()) is not None:
            yield frame

    def pdus(self) -> Iterator[PDU]:
        """Every complete PDU buffered so far, decoded."""
        for frame in self.frames():
            yield decode(frame)

    def close(self) -> None:
        """Declare end of stream: PDUError (PM_ERR_IPC) if a partial PDU is left over."""
        if self.buffered:
            raise PDUError(
                f"stream ended inside a PDU ({self.buffered} bytes left over)", PM_ERR_IPC
            )


def split_stream(data: bytes) -> list[bytes]:
    """All PDUs in a complete byte stream (a capture file, a test vector)."""
    framer = PDUFramer()
    framer.feed(data)
    frames = list(framer.frames())
    framer.close()
    return frames
