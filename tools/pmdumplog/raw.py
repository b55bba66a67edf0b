"""pmdumplog -v FILE: any file's framed records in hex, with the framing checked."""

from __future__ import annotations

import errno
import os
import sys

from purepcp.pmapi.archive.format import FRAME

from .options import PROG


def raw_dump(data: bytes) -> str:
    """rawdump: each framed record's length, offset and bytes in hex, 32 to a line."""
    parts = []
    at = 0
    while at + 4 <= len(data):
        length = FRAME.unpack_from(data, at)[0]
        parts.append(f"Dump ... record len: {length} @ offset: {at}")
        at += 4
        body = length - 8
        chunk = data[at : at + max(body, 0)]
        parts.append(_hex(chunk))
        at += len(chunk)
        if len(chunk) < body:
            parts.append("Unexpected EOF\n")
        parts.append("\n")
        if at + 4 > len(data):
            if at >= len(data):
                parts.append("Unexpected EOF\n")
            break
        check = FRAME.unpack_from(data, at)[0]
        at += 4
        if check != length:
            parts.append(f"Trailer botch: {check} != {length}\n")
            break
    return "".join(parts)


def _hex(chunk: bytes) -> str:
    """A record's bytes in hex: 32 to a line, each line begun on a fresh one, in words of 4."""
    parts = []
    for i, byte in enumerate(chunk):
        if i % 32 == 0:
            parts.append("\n")
        if i % 4 == 0:
            parts.append(" ")
        parts.append(f"{byte:02x}")
    return "".join(parts)


def dump_raw_file(path: str) -> int:
    """-v PATH: the raw dump of the file (a folder reads as empty), or why it would not open."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            data = b""
        else:
            sys.stderr.write(f'{PROG}: Cannot open "{path}": {os.strerror(exc.errno or 0)}\n')
            return 1
    sys.stdout.write(f'Raw dump of physical archive file "{path}" ...\n')
    sys.stdout.write(raw_dump(data))
    return 0
