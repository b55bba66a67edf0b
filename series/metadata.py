"""What PCP's loader writes about metrics and instances, worked out in its order.

libpcp_web reads an archive record by record and caches what it learns: a domain's,
cluster's, indom's and item's label set the first time one is there to read; an
instance's name and id when an instance domain is first read with it in (the labels
merged then); an instance's keys once, by the first metric that writes them (a later
metric on that indom writes them only at its own first record).  The identifiers
and keys depend on that order, so this module replays it over the events the archive's
columns show (a metric's first record, the records where new instances appear), in
time order and, within a record, in metric order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_domain, pmInDom_domain
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_ITEM,
    LabelSet,
    pmMergeLabelSets,
)
from purepcp.pmapi.values import Timestamp

from . import schema
from .ids import instance_id, merged_json, metric_id, string_id
from .store import Command

if TYPE_CHECKING:  # (NumPy is the loader's; a follower never loads it)
    import numpy as np

NSEC = 1_000_000_000


def labels_at(archive: Archive, kind: int, ident: int, stamp: Timestamp) -> LabelSet | None:
    """The label set of KIND for IDENT in force at STAMP, as stored; None if none."""
    best = None
    for record in archive.labels:
        if (
            record.type == kind
            and record.ident == ident
            and record.stamp <= stamp
            and (best is None or record.stamp >= best.stamp)
        ):
            best = record
    if best is None or not best.sets:
        return None
    return best.sets[0]


def stamp_of(ns: int) -> Timestamp:
    return Timestamp(ns // NSEC, ns % NSEC)


@dataclass
class MetricPlan:
    """One metric as the archive's columns show it: when it first has a value set (an
    error one first: ERROR_FIRST), and for each instance the time it is first seen."""

    pmid: int
    desc: Desc
    names: tuple[str, ...]
    first: int  # ns
    error_first: bool
    inst_first: dict[int, int]  # instance -> ns of its first value
    # filled in by the replay:
    sids: list[bytes] = field(default_factory=list)
    fields: dict[int, bytes] = field(default_factory=dict)  # instance -> its id (a field)


@dataclass
class _Instance:
    name: str
    isid: bytes
    levels: list[LabelSet | None]
    cached: bool = False


class MetadataReplay:
    """The commands PCP's loader sends for metrics and instances, in its order."""

    def __init__(self, archive: Archive, context: LabelSet | None, source: bytes, path: str):
        self.archive = archive
        self.context = context
        self.source = source
        self.path_id = string_id(path)
        self._labels: dict[tuple[int, int], LabelSet] = {}
        self._insts: dict[int, dict[int, _Instance]] = {}
        self.started: set[int] = set()  # metrics whose first record has been replayed
        self._seen: dict[int, list[int]] = {}  # each metric's instances so far, in order

    def _lookup(self, kind: int, ident: int, when: Timestamp) -> LabelSet | None:
        """A level's labels, read the first time there are any, then kept."""
        key = (kind, ident)
        if key not in self._labels:
            found = labels_at(self.archive, kind, ident, when)
            if found is None:
                return None
            self._labels[key] = found
        return self._labels[key]

    def replay(self, plans: Sequence[MetricPlan]) -> list[Command]:
        """The commands, in PCP's order (which decides what a key shared by two metrics
        ends up holding); sets each plan's sids and fields.  Called again with what
        later records show (a follower's next scan), it goes on from where it was: a
        metric already started is not described again, only its new instances."""
        events: list[tuple[int, int, int, list[int]]] = []  # (ns, position, seq, instances)
        for pos, plan in enumerate(plans):
            by_time: dict[int, list[int]] = {}
            for inst, ns in plan.inst_first.items():
                by_time.setdefault(ns, []).append(inst)
            if plan.first not in by_time:
                by_time[plan.first] = []
            for seq, ns in enumerate(sorted(by_time)):
                events.append((ns, pos, seq, sorted(by_time[ns])))
        events = self._in_record_order(events, plans)
        commands: list[Command] = []
        started, seen = self.started, self._seen
        for ns, pos, _, insts in events:
            plan = plans[pos]
            when = stamp_of(ns)
            first = plan.pmid not in started
            if first:
                started.add(plan.pmid)
                self._metric(plan, when, commands)
            seen.setdefault(plan.pmid, []).extend(insts)
            if plan.desc.indom == PM_INDOM_NULL:
                continue
            if first and plan.error_first:
                continue  # (labelled as a metric; its instances come with its first values)
            self._refresh(plan.desc.indom, when)
            cache = self._insts.get(plan.desc.indom, {})
            for inst in seen[plan.pmid]:
                known = cache.get(inst)
                if known is None:
                    continue
                plan.fields.setdefault(inst, known.isid)
                if known.cached and not first:
                    continue
                self._instance_commands(plan, inst, known, commands)
                known.cached = True
        return commands

    def _in_record_order(self, events: list, plans: Sequence[MetricPlan]) -> list:
        """EVENTS in time order and, where metrics share a record, in the order of their
        value sets in it (read from the record itself)."""
        count: dict[int, int] = {}
        for ns, *_ in events:
            count[ns] = count.get(ns, 0) + 1
        place: dict[int, dict[int, int]] = {}
        for ns in (t for t, n in count.items() if n > 1):
            place[ns] = self._record_order(ns)
        big = len(plans) + 1

        def key(event):
            ns, pos, seq, _ = event
            where = place.get(ns, {}).get(plans[pos].pmid, big + pos)
            return (ns, where, pos, seq)

        return sorted(events, key=key)

    def _record_order(self, ns: int) -> dict[int, int]:
        """The positions of the metrics' value sets in the (first) record at NS."""
        for rec in self.archive.records_from(stamp_of(ns)):
            stamp = rec.stamp
            if stamp.sec * NSEC + stamp.nsec != ns:
                break
            if rec.result.vsets:
                return {vs.pmid: i for i, vs in enumerate(rec.result.vsets)}
        return {}

    def _metric(self, plan: MetricPlan, when: Timestamp, commands: list[Command]) -> None:
        pmid, desc = plan.pmid, plan.desc
        domain = self._lookup(PM_LABEL_DOMAIN, pmID_domain(pmid), when)
        cluster = self._lookup(PM_LABEL_CLUSTER, pmid & ~0x3FF, when)
        indom = None
        if desc.indom != PM_INDOM_NULL:
            indom = self._lookup(PM_LABEL_INDOM, desc.indom, when)
        item = self._lookup(PM_LABEL_ITEM, pmid, when)
        levels = [self.context, domain, indom, cluster, item]
        identifying = merged_json(levels)
        plan.sids = [metric_id(n, identifying, desc) for n in plan.names]
        desc_fields = tuple(
            x for pair in schema.desc_fields(desc, self.source).items() for x in pair
        )
        # (what describes a series goes before the sets a query finds it by, so a query
        # while a load runs never finds a series it cannot describe)
        for name, sid in zip(plan.names, plan.sids, strict=True):
            name_id = string_id(name)
            commands.append(("HSET", schema.desc_key(sid), *desc_fields))
            commands.append(("HSET", schema.map_key("metric.name"), name_id, name))
            commands.append(("SADD", schema.names_key(sid), name_id))
            commands.append(("SADD", schema.series_key("metric.name", name_id), sid))
        commands.append(("SADD", schema.series_key("context.name", self.path_id), *plan.sids))
        if desc.indom == PM_INDOM_NULL or plan.error_first:
            commands += label_commands(plan.sids, plan.sids, levels)

    def _refresh(self, indom: int, when: Timestamp) -> None:
        """get_instance_metadata: the domain's labels, the indom's members (new ones get
        their names and ids with the labels known now), then the indom's labels."""
        domain = self._lookup(PM_LABEL_DOMAIN, pmInDom_domain(indom), when)
        record = self.archive.indom_at(indom, when)
        cache = self._insts.setdefault(indom, {})
        if record is not None:
            levels = [self.context, domain, self._labels.get((PM_LABEL_INDOM, indom))]
            for inst, name in zip(record.insts, record.names, strict=True):
                if not name:
                    continue
                known = cache.get(inst)
                if known is None or known.name != name:
                    isid = instance_id(name, merged_json(levels))
                    cache[inst] = _Instance(name, isid, list(levels))
        self._lookup(PM_LABEL_INDOM, indom, when)

    def _instance_commands(
        self, plan: MetricPlan, inst: int, known: _Instance, commands: list[Command]
    ) -> None:
        name_id = string_id(known.name)
        commands.append(("HSET", schema.map_key("inst.name"), name_id, known.name))
        commands.append(
            ("HSET", schema.inst_key(known.isid), "inst", str(inst), "name", name_id,
             "source", self.source)
        )  # fmt: skip
        commands += label_commands([known.isid], plan.sids, known.levels)
        for sid in plan.sids:
            commands.append(("SADD", schema.instances_key(sid), known.isid))
        commands.append(("SADD", schema.series_key("inst.name", name_id), *plan.sids))


def label_commands(
    keyed: Sequence[bytes], members: Sequence[bytes], levels: Sequence[LabelSet | None]
) -> list[Command]:
    """Every label of the merged LEVELS (optional ones too): its names in the maps, its
    value and flags under each id of KEYED, and MEMBERS under its value."""
    mapped, merged = _merged(tuple(levels))
    commands: list[Command] = []
    for name, value, name_id, value_id in mapped:
        commands.append(("HSET", schema.map_key("label.name"), name_id, name))
        value_map = schema.map_key(schema.label_value_map(name_id))
        commands.append(("HSET", value_map, value_id, value))
    for flags, name_id, value_id in merged:
        for sid in keyed:
            if flags != PM_LABEL_CONTEXT:
                commands.append(("HSET", schema.labelflags_key(sid), name_id, str(flags)))
            commands.append(("HSET", schema.labelvalue_key(sid), name_id, value_id))
        value_set = schema.series_key(schema.label_value_map(name_id), value_id)
        commands.append(("SADD", value_set, *members))
    return commands


_Mapped = tuple[tuple[str, str, bytes, bytes], ...]
_Merged = tuple[tuple[int, bytes, bytes], ...]


@functools.lru_cache(maxsize=1024)
def _merged(levels: tuple[LabelSet | None, ...]) -> tuple[_Mapped, _Merged]:
    """The names and values LEVELS map, in the order PCP maps them (its merge meets the
    labels level by level: each step's merged set, in name order), and the final merge:
    each label's flags and ids.  Instances share a few combinations: each is done once."""
    present = [s for s in levels if s is not None]
    mapped: list[tuple[str, str, bytes, bytes]] = []
    done: set[tuple[str, str]] = set()
    merged = None
    for step in range(1, len(present) + 1):
        merged = pmMergeLabelSets(present[:step])
        for label in merged.labels:
            pair = (merged.label_name(label), merged.label_value(label))
            if pair not in done:
                done.add(pair)
                mapped.append((*pair, string_id(pair[0]), string_id(pair[1])))
    final: list[tuple[int, bytes, bytes]] = []
    if merged is not None:
        for label in merged.labels:
            name, value = merged.label_name(label), merged.label_value(label)
            final.append((int(label.flags), string_id(name), string_id(value)))
    return tuple(mapped), tuple(final)


def first_seen(times: np.ndarray, insts: np.ndarray, present: np.ndarray) -> dict[int, int]:
    """Each instance's first time with a value (ns)."""
    if not present.size:
        return {}
    seen = present.any(axis=0)
    rows = present.argmax(axis=0)
    return {int(i): int(times[r]) for i, r, s in zip(insts, rows, seen, strict=True) if s}
