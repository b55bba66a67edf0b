"""pmrep's record outputs: -o archive (a PCP archive of the raw values, through our archive
writer, as pmrep's goes through pmi) and -o json (JSON Lines: a header object, then one
object per sample; our own layout, as PCP 6's pmrep has no JSON output)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

import numpy as np

from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .model import Block, Column, Kind
from .resolve import ReportMetric

NSEC = 1_000_000_000
_INT_TYPES = (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64)


def _stamp(ns: int) -> Timestamp:
    return Timestamp(ns // NSEC, ns % NSEC)


class ArchiveOut:
    """The report's metrics with their own descriptors and PMIDs, each sample that has a
    value one record; a discrete metric's unchanged values are not repeated."""

    def __init__(self, out: TextIO, metrics: Sequence[ReportMetric], path: str, *,
                 hostname: str, timezone: str, samples: int | None, interval: float,
                 live: bool, texts: Sequence[tuple[int, int, str]] = ()) -> None:  # fmt: skip
        self.out, self.metrics, self.path = out, list(metrics), path
        self.texts = list(texts)  # --include-texts: (PM_TEXT_* type, identifier, text)
        self.hostname, self.timezone = hostname, timezone
        self.samples, self.interval, self.live = samples, interval, live
        self.writer = None
        self.prev: dict[int, dict[int, object]] = {}  # per metric: the last sample's values
        # per instance domain: the instances written so far (pmrep adds each to its pmi
        # log as it first has a value), and how many its last indom record had
        self.indoms: dict[int, dict[int, str]] = {}
        self.written: dict[int, int] = {}

    def header(self, repeat: bool = False) -> None:
        self.out.write(f"Recording {len(self.metrics)} metrics to {self.path}")
        if self.samples:
            duration = (self.samples - 1) * self.interval
            self.out.write(f":\n{self.samples} samples(s) with {self.interval:.1f} sec "
                           f"interval ~ {int(duration)} sec duration.\n")  # fmt: skip
        else:
            self.out.write("..." + (" (Ctrl-C to stop)" if self.live else "") + "\n")
        self.out.flush()

    def _open(self, first: int) -> None:
        from purepcp.pmapi.archive.writer import ArchiveWriter

        self.writer = w = ArchiveWriter(self.path, hostname=self.hostname,
                                        timezone=self.timezone, start=_stamp(first))  # fmt: skip
        for m in self.metrics:
            w.put_desc(m.desc, [m.name])
        for kind, ident, text in self.texts:
            w.put_text(kind, ident, text)
        w.put_index(_stamp(first))

    def write(self, block: Block) -> None:
        if block.rows == 0:
            return
        if self.writer is None:
            self._open(int(block.times[0]))
        w = self.writer
        assert w is not None
        slices = []
        start = 0
        for m in self.metrics:
            slices.append(slice(start, start + len(m.insts)))
            start += len(m.insts)
        for r, ns in enumerate(block.times.tolist()):
            stamp = _stamp(ns)
            vsets = []
            for m, sl in zip(self.metrics, slices, strict=True):
                pairs = self._pairs(block, r, m, sl)
                before = self.prev.get(m.pmid)
                self.prev[m.pmid] = dict(pairs)
                if m.desc.sem == PMSem.PM_SEM_DISCRETE and before is not None:
                    # (pmrep: an instance's unchanged discrete value is not written again)
                    pairs = [(i, v) for i, v in pairs if i not in before or before[i] != v]
                if not pairs:
                    continue
                if m.desc.indom != PM_INDOM_NULL:
                    known = self.indoms.setdefault(m.desc.indom, {})
                    for inst, name in zip(m.insts, m.names, strict=True):
                        if any(i == inst for i, _ in pairs):
                            known.setdefault(inst, name or "")
                vsets.append(ValueSet.of_atoms(m.pmid, m.desc.type, pairs))
            for indom, known in self.indoms.items():
                if self.written.get(indom) != len(known):  # (in instance order, as pmi's)
                    ordered = sorted(known.items())
                    w.put_indom(stamp, indom, [i for i, _ in ordered], [n for _, n in ordered])
                    self.written[indom] = len(known)
            if vsets:
                w.put_result(Result(stamp, tuple(vsets)))

    @staticmethod
    def _pairs(block: Block, r: int, m: ReportMetric, sl: slice) -> list[tuple[int, object]]:
        """Sample R's (instance, value) pairs of metric M (its columns SL)."""
        pairs: list[tuple[int, object]] = []
        for c, inst in zip(range(sl.start, sl.stop), m.insts, strict=True):
            if not block.has[r, c]:
                continue
            if m.desc.type == PMType.PM_TYPE_STRING:
                value: object = str(block.strings[c][r])
            elif m.desc.type in _INT_TYPES:
                value = int(block.values[r, c])
            else:
                value = float(block.values[r, c])
            pairs.append((inst, value))
        return pairs

    def close(self) -> None:
        if self.writer is not None:
            self.writer.put_index(self.writer.last_stamp)
            self.writer.close()
            self.writer = None


class JsonOut:
    """JSON Lines: {"host", "source", "interval", "metrics": [...]} first, then per sample
    {"timestamp": ISO 8601 with the zone's offset, "values": {metric: value, or
    {instance: value}}}; no value is null."""

    def __init__(self, out: TextIO, columns: Sequence[Column], *, host: str, source: str,
                 interval: float, zone) -> None:  # fmt: skip
        self.out, self.columns = out, list(columns)
        self.host, self.source, self.interval, self.zone = host, source, interval, zone

    def header(self, repeat: bool = False) -> None:
        metrics: dict[str, dict] = {}
        for c in self.columns:
            entry = metrics.setdefault(c.metric, {"name": c.metric, "label": c.label,
                                                   "unit": c.unit, "instances": []})  # fmt: skip
            if c.instance is not None:
                entry["instances"].append(c.instance)
        head = {"host": self.host, "source": self.source, "interval": self.interval,
                "metrics": list(metrics.values())}  # fmt: skip
        self.out.write(json.dumps(head) + "\n")

    def write(self, block: Block) -> None:
        from datetime import datetime

        lines = []
        values = block.values
        for r, ns in enumerate(block.times.tolist()):
            when = datetime.fromtimestamp(ns // NSEC, self.zone).replace(
                microsecond=ns % NSEC // 1000
            )
            sample: dict[str, object] = {}
            for c, col in enumerate(self.columns):
                v: object = None
                if block.has[r, c]:
                    if col.kind is Kind.STRING:
                        v = str(block.strings[c][r])
                    elif col.kind is Kind.INT:
                        v = int(values[r, c])
                    else:
                        x = float(values[r, c])
                        v = round(x, col.precision) if np.isfinite(x) else str(x)
                if col.instance is None:
                    sample[col.metric] = v
                else:
                    inner = sample.setdefault(col.metric, {})
                    inner[col.instance] = v  # type: ignore[index]
            lines.append(json.dumps({"timestamp": when.isoformat(), "values": sample}))
        if lines:
            self.out.write("\n".join(lines) + "\n")

    def close(self) -> None:
        pass


PM_TEXT_ONELINE, PM_TEXT_HELP, PM_TEXT_PMID, PM_TEXT_INDOM = 1, 2, 4, 8


def help_texts(ctx, metrics: Sequence[ReportMetric]) -> list[tuple[int, int, str]]:
    """Each metric's one-line and full help, and its instance domain's, as pmrep
    --include-texts records them (those the source has; each instance domain once)."""
    from purepcp.pmapi.errors import PMError

    found: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    for m in metrics:
        asks = [(PM_TEXT_PMID, m.pmid, False)]
        if m.desc.indom != PM_INDOM_NULL:
            asks.append((PM_TEXT_INDOM, m.desc.indom, True))
        for kind, ident, indom in asks:
            for level, full in ((PM_TEXT_ONELINE, False), (PM_TEXT_HELP, True)):
                if (kind | level, ident) in seen:
                    continue
                try:
                    text = ctx.text(ident, help=full, indom=indom, direct=True)
                except PMError:
                    continue
                if text:
                    seen.add((kind | level, ident))
                    found.append((kind | level, ident, text))
    return found
