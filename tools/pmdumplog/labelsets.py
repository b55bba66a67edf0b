"""pmdumplog -e: the label sets in the archive, by time and then as libpcp orders them."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from purepcp.pmapi.hashtable import HashCtl, Node
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    LabelSet,
    pmLabelFlagString,
    pmLabelIdentString,
)
from purepcp.pmapi.values import Timestamp

from .clock import ts_sub
from .metadata import Metadata
from .source import Source

#: the label types in the order dumpLabelSets prints them at each time
KINDS = (PM_LABEL_CONTEXT, PM_LABEL_DOMAIN, PM_LABEL_CLUSTER, PM_LABEL_ITEM, PM_LABEL_INDOM,
         PM_LABEL_INSTANCES)  # fmt: skip


def labelsets_text(src: Source) -> str:
    """dumpLabelSets: by time, then context, domain, cluster, item, indom, instances."""
    by_time: dict[Timestamp, list[str]] = {}
    for kind in KINDS:
        outer = src.meta.labels.search(kind)
        for node in _label_nodes(kind, outer.data) if outer is not None else ():
            for rec in node.data:
                text = _print_label_sets(node.key, kind, rec.sets)
                by_time.setdefault(rec.stamp, []).append(text)
    parts = ["\nMetric Labels in the Log ...\n"]
    for when in _label_times(src.meta):
        parts.append(src.clock.stamp(when) + "\n")
        parts += by_time[when]
    return "".join(parts)


def _label_times(meta: Metadata) -> list[Timestamp]:
    """The times dumpLabelSets visits: each round, the nearest later one as a double
    sees it, the first met in hash order winning a tie (a tie's earlier times are lost,
    as in PCP; times at or before the epoch are never shown).
    """
    first_met: dict[Timestamp, int] = {}
    for outer in meta.labels.walk():
        for inner in outer.data.walk():
            for rec in inner.data:
                first_met.setdefault(rec.stamp, len(first_met))
    stamps = sorted(first_met)
    times: list[Timestamp] = []
    prev = Timestamp(0, 0)
    at = bisect.bisect_right(stamps, prev)
    while at < len(stamps):
        nearest = ts_sub(stamps[at], prev)
        last = at
        while last + 1 < len(stamps) and ts_sub(stamps[last + 1], prev) == nearest:
            last += 1
        pick = min(range(at, last + 1), key=lambda k: first_met[stamps[k]])
        prev = stamps[pick]
        times.append(prev)
        at = pick + 1
    return times


def _label_nodes(kind: int, inner: HashCtl) -> list[Node]:
    """The identifiers of one label type in PCP's order: context labels along their one
    chain, the others by increasing identifier (the first in hash order for a repeat).
    """
    if kind == PM_LABEL_CONTEXT:
        return next((c for c in inner.buckets if c), [])
    first: dict[int, Node] = {}
    for node in inner.walk():
        first.setdefault(node.key, node)
    return [first[key] for key in sorted(first)]


def _print_label_sets(ident: int, kind: int, sets: Iterable[LabelSet]) -> str:
    """pmPrintLabelSets for sets read from an archive (their JSONB is never NULL)."""
    idstr = pmLabelIdentString(ident, kind)
    lines = []
    for lset in sets:
        json = lset.json.decode("utf-8", "surrogateescape")
        where = f"{idstr}[{lset.inst}]" if kind & PM_LABEL_INSTANCES else idstr
        lines.append(f"    {where} labels ({len(lset.json)} bytes): {json}\n")
        for i, lp in enumerate(lset.labels):
            lines.append(
                f"        [{i}] name({lp.name},{lp.namelen}) : value({lp.value},{lp.valuelen}) "
                f"[{pmLabelFlagString(lp.flags)}]\n"
            )
    return "".join(lines)
