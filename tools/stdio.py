"""stdout buffered as C's stdio buffers it, so that output and diagnostics interleave
as a PCP tool's do.

PCP's tools print with printf and report problems on stderr, which is never
buffered.  On a terminal glibc's stdout is line-buffered; anywhere else (a pipe, a
file) it is written in whole blocks of st_blksize bytes, so in ``pminfo ... 2>&1 |
less`` a diagnostic lands where the last full block of output ended, often in the
middle of a line.  Python's own stdout flushes at other points, so a tool that wants
its merged output to read as PCP's does swaps in ``BlockStdout`` with ``c_stdout()``
and never flushes stdout itself before writing to stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO

__all__ = ["BlockStdout", "c_stdout", "write"]

_BUFSIZ = 8192  # glibc's block size where st_blksize says nothing


class BlockStdout(io.TextIOBase):
    """A text stream on file descriptor FD that writes only whole SIZE-byte blocks
    until it is flushed, as glibc's fully buffered streams do."""

    def __init__(self, fd: int, size: int, encoding: str, errors: str) -> None:
        super().__init__()
        self._fd = fd
        self._size = size
        self._encoding = encoding
        self._errors = errors
        self._pending = bytearray()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return self._errors

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._pending += text.encode(self._encoding, self._errors)
        full = len(self._pending) - len(self._pending) % self._size
        if full:
            self._write(full)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._write(len(self._pending))

    def _write(self, count: int) -> None:
        """Write the first COUNT pending bytes (all of them, however the kernel splits it)."""
        view = memoryview(self._pending)
        done = 0
        try:
            while done < count:
                done += os.write(self._fd, view[done:count])
        finally:
            view.release()
            del self._pending[:done]


@contextlib.contextmanager
def c_stdout() -> Iterator[TextIO]:
    """sys.stdout as a C program's for the duration: block-buffered (BlockStdout) when
    it is the process's real stdout and not a terminal; otherwise left as it is (a
    terminal's stdout is line-buffered in both languages, and a replaced stream, as a
    test's capture, is not ours to change).  Flushed on the way out."""
    stream = sys.stdout
    try:
        fd = stream.fileno()
        plain = stream is sys.__stdout__ and not os.isatty(fd)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        plain = False
    if not plain:
        yield stream
        return
    stream.flush()
    size = os.fstat(fd).st_blksize or _BUFSIZ
    block = BlockStdout(fd, size, stream.encoding or "utf-8", stream.errors or "strict")
    sys.stdout = block  # type: ignore[assignment]
    try:
        yield block  # type: ignore[misc]
    finally:
        sys.stdout = stream
        block.flush()


def write(text: str) -> None:
    """Write TEXT to stdout now (pmval's stdout is line buffered)."""
    if text:
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:
            sys.stdout.flush()
            encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
            sys.stdout.buffer.write(text.encode(encoding, "surrogateescape"))
        sys.stdout.flush()
