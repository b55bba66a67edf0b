"""What a load makes of an archive as a source, and what loads report: shared by the
whole-archive loader (load.py) and discovery's follower (follow.py), without the
loader's NumPy."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.labels import PM_LABEL_CONTEXT, LabelSet

from . import schema
from .ids import merged_json, source_id, string_id
from .metadata import labels_at
from .store import Command

_CONTEXT_IDENT = 0xFFFFFFFF


class LoadError(Exception):
    """A load that cannot go on: MESSAGE names the archive (and where it stopped)."""


@dataclass
class LoadReport:
    """What a load did."""

    path: str
    records: int = 0
    metrics: int = 0
    values: int = 0
    entries: int = 0
    errors: list[str] = field(default_factory=list)
    resumed: int = 0


@dataclass(frozen=True)
class SourceIdentity:
    """An archive as a source: its id, names and context labels."""

    source: bytes
    name: str
    host: str
    context: LabelSet | None


def archive_source(archive: Archive, path: str) -> SourceIdentity:
    """The source `pmseries --load` makes of ARCHIVE given as PATH."""
    host = archive.label.hostname
    context = labels_at(archive, PM_LABEL_CONTEXT, _CONTEXT_IDENT, archive.label.start)
    if context is not None and not context.labels:
        context = None
    if context is None:
        context = LabelSet.from_dict({"hostname": host}, PM_LABEL_CONTEXT)
    source = source_id(merged_json([context]))
    name = os.path.realpath(path) if os.path.exists(path) else path
    return SourceIdentity(source, name, host, context)


def discovered_source(archive: Archive, path: str) -> SourceIdentity:
    """The source pmproxy's discovery makes of an archive it follows: the context labels
    of the archive's latest context label record, all of them, as they are written
    (`pmseries --load` takes the identifying ones at the start); the host name when
    there are none.  PATH is the archive's name (the .meta path without .meta)."""
    host = archive.label.hostname
    latest = None
    for record in archive.labels:
        if (
            record.type == PM_LABEL_CONTEXT
            and record.sets
            and (latest is None or record.stamp >= latest.stamp)
        ):
            latest = record
    if latest is None or not latest.sets[0].labels:
        context = LabelSet.from_dict({"hostname": host}, PM_LABEL_CONTEXT)
        return SourceIdentity(source_id(merged_json([context])), path, host, context)
    context = latest.sets[0]
    return SourceIdentity(source_id(context.json.decode("utf-8", "replace")), path, host, context)


def source_commands(ident: SourceIdentity) -> list[Command]:
    """What names a source: its archive's path and host name, and its location."""
    src = ident.source
    path_id, host_id = string_id(ident.name), string_id(ident.host)
    lon = lat = 0.0
    if ident.context is not None:
        found = ident.context.to_dict()
        lon = _float(found.get("longitude"))
        lat = _float(found.get("latitude"))
    return [
        # (PCP's loader maps the two names in either order, as its replies come back)
        ("HSET", schema.map_key("context.name"), host_id, ident.host),
        ("HSET", schema.map_key("context.name"), path_id, ident.name),
        ("SADD", schema.source_by_name_key(path_id), src),
        ("SADD", schema.source_by_name_key(host_id), src),
        ("SADD", schema.names_of_source_key(src), path_id, host_id),
        ("GEOADD", schema.LOCATION_KEY, f"{lon:.8f}", f"{lat:.8f}", src),
    ]


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def reason(exc: BaseException) -> str:
    if isinstance(exc, PMError):
        return pmErrStr(exc.code) if hasattr(exc, "code") else str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
