"""PCP archives: the on-disk format (format), reading (reader) and writing (writer).

The names below are loaded on first use, so a program that only writes archives
(pmlogger) never pays for importing the reader, and one that only reads never
imports the writer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Archive": "reader",
    "ArchiveError": "format",
    "ArchiveWriter": "writer",
    "InDomRecord": "format",
    "IndexEntry": "format",
    "LabelRecord": "format",
    "LogLabel": "format",
    "LogRecord": "reader",
    "TextRecord": "format",
    "base_name": "reader",
    "encode_record": "writer",
}
__all__ = [
    "Archive",
    "ArchiveError",
    "ArchiveWriter",
    "InDomRecord",
    "IndexEntry",
    "LabelRecord",
    "LogLabel",
    "LogRecord",
    "TextRecord",
    "base_name",
    "encode_record",
]
assert sorted(__all__) == sorted(_WHERE)

if TYPE_CHECKING:
    from .format import ArchiveError, IndexEntry, InDomRecord, LabelRecord, LogLabel, TextRecord
    from .reader import Archive, LogRecord, base_name
    from .writer import ArchiveWriter, encode_record


def __getattr__(name: str) -> Any:
    """NAME from the module that holds it, imported on first use (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
