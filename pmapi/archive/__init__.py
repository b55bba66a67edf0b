"""PCP archives: the on-disk format (format), reading (reader) and writing (writer)."""

from .format import ArchiveError, IndexEntry, InDomRecord, LabelRecord, LogLabel, TextRecord
from .reader import Archive, LogRecord, base_name
from .writer import ArchiveWriter, encode_record

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
