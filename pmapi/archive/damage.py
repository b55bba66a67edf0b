"""ArchiveError: damage or a misfit in an archive file, by file and byte offset.

Its own small module so that a tool can recognise an archive's damage without
importing the archive format (and construct) on a live query.
"""

from __future__ import annotations

from ..errors import PMError


class ArchiveError(PMError):
    """Damage or a misfit in an archive file: a PCP code, the file and the byte offset."""

    def __init__(self, code: int, file: str, offset: int, detail: str) -> None:
        super().__init__(code, f"{file}: offset {offset}: {detail}")
        self.file = file
        self.offset = offset
        self.reason = detail
