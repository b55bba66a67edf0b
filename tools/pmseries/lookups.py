"""libpcp_web's pmSeries* lookups over a SeriesReader, each calling the Report back in
the order PCP's replies arrive and returning a status (negative: an error number).

Ids that are not 40 lower-case hex digits name keys nobody writes, so they find nothing
(and a descriptor "unknown")."""

from __future__ import annotations

import errno
from collections.abc import Sequence

from purepcp.series import schema
from purepcp.series.ids import string_id
from purepcp.series.read import UNKNOWN_DESC, SeriesDesc, SeriesReader

from .globs import glob_regex
from .report import Report
from .sids import issid


def listing(reader: SeriesReader, mapname: str, pattern: str | None) -> list[str]:
    """A string map's names (HVALS order), those fnmatch accepts when PATTERN is given."""
    names = reader.map_values(mapname)
    if pattern is None:
        return names
    regex = glob_regex(pattern)
    return [name for name in names if regex.fullmatch(name)]


def expr_query(reader: SeriesReader, sid: str) -> str | None:
    """The query text of an expression's series id (pcp:expr:series:<sid>), if any."""
    if not issid(sid):
        return None
    raw = reader.client.hget(schema.expr_key(bytes.fromhex(sid)), "query")
    return raw.decode("utf-8", "surrogateescape") if raw is not None else None


def lookup_descs(reader: SeriesReader, report: Report, sids: Sequence[str]) -> int:
    if not sids:
        return -errno.EINVAL
    for sid in sids:
        desc = reader.descs([sid])[0] if issid(sid) else SeriesDesc(sid, *_unknown_desc())
        report.on_desc(sid, desc)
    return 0


def _unknown_desc() -> tuple[str, ...]:
    """UNKNOWN_DESC in SeriesDesc's field order (source, pmid, indom, semantics, type,
    units)."""
    indom, pmid, sem, source, type_, units = UNKNOWN_DESC
    return source, pmid, indom, sem, type_, units


def lookup_sources(
    reader: SeriesReader, report: Report, sources: Sequence[str], pattern: str | None
) -> int:
    if not sources:
        for name in listing(reader, "context.name", pattern):
            report.on_context(None, name)
        return 0
    later = []  # an expression's query text arrives after every name (a second read)
    for src in sources:
        found = reader.sources([src]) if issid(src) else []
        for _, name in found:
            report.on_context(src, name)
        if not found:
            later.append(src)
    for src in later:
        query = expr_query(reader, src)
        if query is not None:
            report.on_context(src, query)
    return 0


def lookup_metrics(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    if not sids:
        for name in listing(reader, "metric.name", pattern):
            report.on_metric(None, name)
        return 0
    for sid in sids:
        for series, name in reader.metrics([sid]) if issid(sid) else []:
            report.on_metric(series, name)
    return 0


def lookup_labels(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    """Label names of each series as its hash has them (on_label), then their values
    (on_labelmap) once every name has been seen."""
    if not sids:
        for name in listing(reader, "label.name", pattern):
            report.on_label(None, name)
        return 0
    found = reader.labels([sid for sid in sids if issid(sid)])
    for sid, pairs in found:
        for name, _ in pairs:
            report.on_label(sid, name)
    for sid, pairs in found:
        for name, value in pairs:
            report.on_labelmap(sid, name, value)
    return 0


def lookup_instances(
    reader: SeriesReader, report: Report, sids: Sequence[str], pattern: str | None
) -> int:
    if not sids:
        for name in listing(reader, "inst.name", pattern):
            report.on_instance(name)
        return 0
    for sid in sids:
        for inst in reader.instances([sid]) if issid(sid) else []:
            report.on_inst(sid, str(inst.id), inst.name, inst.instance)
    return 0


def lookup_label_values(reader: SeriesReader, report: Report, names: Sequence[str]) -> int:
    for name in names:
        for value in reader.map_values(schema.label_value_map(string_id(name))):
            report.on_label_value(name, value)
    return 0
