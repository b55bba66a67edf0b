"""Compressing an archive file as pmlogger_daily does, without ever losing it.

PCP 6's pmlogger_daily runs ``xz -0 --block-size=10MiB`` on each file: an xz stream
of independent 10 MiB blocks, which libpcp's transparent decompression seeks by
block (io_xz.c) instead of unpacking the whole volume.  Python's lzma writes one block
per stream, so each 10 MiB chunk is compressed on its own and the blocks are gathered
into one stream with one index, as xz would write them.

A file is replaced in this order: NAME.xz.partial is written and fsync'ed, renamed to
NAME.xz (the directory fsync'ed), and only then is NAME removed.  An interruption at
any moment leaves NAME whole (and perhaps a stale .partial, or a complete NAME.xz
beside it, which the next run replaces).  NAME.xz keeps NAME's mode and times, as xz
keeps them, so its age is still the archive's.
"""

from __future__ import annotations

import contextlib
import lzma
import os
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["BLOCK_SIZE", "PARTIAL", "compress_file", "write_xz"]

#: The uncompressed size of each xz block (xz --block-size=10MiB).
BLOCK_SIZE = 10 << 20
#: The suffix of a compressed file still being written.
PARTIAL = ".partial"
#: xz -0: PCP asks for the fastest preset.
PRESET = 0

_HEADER = 12  # stream header: magic, flags, CRC32
_FOOTER = 12  # stream footer: CRC32, backward size, flags, magic


def _varint(n: int) -> bytes:
    """xz's multibyte integer: seven bits a byte, least significant first."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        byte = data[at]
        at += 1
        n |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return n, at
        shift += 7


def _one_block(chunk: bytes) -> tuple[bytes, bytes, int]:
    """CHUNK as one xz block: (stream header, the block, its unpadded size)."""
    stream = lzma.compress(chunk, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=PRESET)
    backward = struct.unpack_from("<I", stream, len(stream) - 8)[0]
    index_at = len(stream) - _FOOTER - (backward + 1) * 4
    index = stream[index_at:]
    count, at = _read_varint(index, 1)  # (after the index indicator, 0x00)
    if count != 1:
        raise ValueError(f"lzma wrote {count} blocks for one chunk")
    unpadded, _ = _read_varint(index, at)
    return stream[:_HEADER], stream[_HEADER:index_at], unpadded


def _chunks(src: BinaryIO, size: int) -> Iterator[bytes]:
    while chunk := src.read(size):
        yield chunk


def write_xz(src: BinaryIO, dst: BinaryIO, block_size: int = BLOCK_SIZE) -> None:
    """Compress SRC into DST as one xz stream of BLOCK_SIZE blocks."""
    header = None
    records = []  # (unpadded size, uncompressed size) of each block
    for chunk in _chunks(src, block_size):
        head, block, unpadded = _one_block(chunk)
        if header is None:
            header = head
            dst.write(header)
        dst.write(block)
        records.append((unpadded, len(chunk)))
    if header is None:  # empty: lzma's own stream of no blocks
        dst.write(lzma.compress(b"", format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64))
        return
    index = bytearray(b"\0" + _varint(len(records)))
    for unpadded, size in records:
        index += _varint(unpadded) + _varint(size)
    index += b"\0" * (-len(index) % 4)
    index += struct.pack("<I", zlib.crc32(index))
    flags = header[6:8]
    tail = struct.pack("<I", len(index) // 4 - 1) + flags
    dst.write(bytes(index) + struct.pack("<I", zlib.crc32(tail)) + tail + b"YZ")


def _fsync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def compress_file(path: str, block_size: int = BLOCK_SIZE) -> str:
    """Replace PATH by PATH.xz, safely (see the module's docstring); the new name.

    OSError (naming the file) if PATH cannot be read or the directory written; PATH is
    then left as it was and no partial file stays behind.
    """
    final = path + ".xz"
    partial = final + PARTIAL
    with open(path, "rb") as src:
        info = os.fstat(src.fileno())
        try:
            with open(partial, "wb") as dst:
                write_xz(src, dst, block_size)
                dst.flush()
                os.fchmod(dst.fileno(), info.st_mode & 0o7777)
                os.fsync(dst.fileno())
            os.utime(partial, ns=(info.st_atime_ns, info.st_mtime_ns))
            os.replace(partial, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise
    _fsync_dir(final)
    os.unlink(path)
    _fsync_dir(path)
    return final
