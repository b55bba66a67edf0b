"""pmdumptext's metrics and where they come from, as PCP's libpcp_qmc (QmcGroup,
QmcMetric) keeps them: one context per source, metrics named on the command line or
in a configuration (a name with no instances taken as every leaf below it), each with
a column per instance; each sample fetched from every context at once, counters turned
into rates over the time between a context's last two fetches."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.errors import PM_ERR_INST, PM_ERR_VALUE, PMError, pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.types import PMSem, PMType

from .options import PROG

_STRING = int(PMType.PM_TYPE_STRING)
_NOT_VALUES = {int(PMType.PM_TYPE_AGGREGATE), int(PMType.PM_TYPE_AGGREGATE_STATIC),
               int(PMType.PM_TYPE_UNKNOWN)}  # fmt: skip


@dataclass
class Source:
    """A context and what its fetches gave: the result before and the one now."""

    kind: str  # "archive", "host" or "local"
    name: str  # as the user named it
    ctx: Any
    stamps: list[float] = field(default_factory=list)  # the last two fetches' times
    vsets: dict[int, Any] = field(default_factory=dict)

    def delta(self) -> float:
        return self.stamps[-1] - self.stamps[-2] if len(self.stamps) > 1 else 0.0

    @property
    def separator(self) -> str:
        return "/" if self.kind == "archive" else ":"

    def host(self) -> str:
        from purepcp.pmapi.hostname import context_hostname

        return context_hostname(self.ctx)


@dataclass
class Column:
    """One instance of a metric: its values now and before (None where there is none)."""

    inst: int | None
    name: str | None
    now: float | str | None = None
    before: float | str | None = None
    now_error: int = PM_ERR_VALUE
    before_error: int = PM_ERR_VALUE


@dataclass
class Metric:
    """A metric reported: its source, name, descriptor, scale and columns."""

    source: Source
    name: str
    desc: Any
    scale: float
    columns: list[Column]
    explicit: bool = False

    @property
    def real(self) -> bool:
        return int(self.desc.type) != _STRING

    @property
    def has_instances(self) -> bool:
        return self.desc.indom != PM_INDOM_NULL

    def spec(self, with_source: bool, with_inst: bool, k: int) -> str:
        """ "source:name[\\"inst\\"]", as QmcMetric::spec writes it."""
        text = f"{self.source.name}{self.source.separator}" if with_source else ""
        text += self.name
        if self.has_instances and with_inst:
            text += f'["{self.columns[k].name}"]'
        return text

    def units(self) -> str:
        """Its units, as QmcDesc says them ("none"; counters "... / second")."""
        from purepcp.pmapi.units import pmUnitsStr

        text = pmUnitsStr(self.desc.units)
        if self.desc.sem == PMSem.PM_SEM_COUNTER:
            return f"{text} / second"
        return text or "none"

    def extract(self, vset: Any) -> None:
        """A fetch's values moved in (the previous ones kept for rates)."""
        for col in self.columns:
            col.before, col.before_error = col.now, col.now_error
            col.now, col.now_error = None, PM_ERR_VALUE
        if vset is None:
            return
        if vset.numval < 0:
            for col in self.columns:
                col.now_error = vset.numval
            return
        if vset.numval == 0:
            return
        try:
            atoms = dict(zip(vset.insts, vset.atoms(self.desc.type), strict=True))
        except (PMError, ValueError, TypeError):
            return
        for col in self.columns:
            if col.inst is None:
                if len(atoms) != 1:
                    continue
                atom = next(iter(atoms.values()))
            elif col.inst in atoms:
                atom = atoms[col.inst]
            else:
                continue
            col.now = _plain(atom, self.real)
            col.now_error = 0 if col.now is not None else PM_ERR_VALUE

    def value(self, k: int, raw: bool) -> tuple[int, float | str | None]:
        """Column K's (error, value): a rate for a counter unless RAW, over SCALE."""
        col = self.columns[k]
        if raw or not self.real:
            return col.now_error, col.now
        if col.now_error < 0:
            return col.now_error, None
        value = float(col.now)  # type: ignore[arg-type]
        if self.desc.sem == PMSem.PM_SEM_COUNTER:
            if col.before_error < 0:
                return col.before_error, None
            delta = self.source.delta()
            value -= float(col.before)  # type: ignore[arg-type]
            if (value < 0 < delta) or (value > 0 > delta):
                return PM_ERR_VALUE, None
            value = value / delta if delta else 0.0
        if self.scale:
            value /= self.scale
        return 0, value


def _plain(atom: Any, real: bool) -> float | str | None:
    if not real:
        if isinstance(atom, bytes):
            return atom.split(b"\0", 1)[0].decode("latin-1")
        return atom if isinstance(atom, str) else None
    return float(atom) if isinstance(atom, (int, float)) else None


class Group:
    """Every source and metric of the run (QmcGroup)."""

    def __init__(self, pmns: Any = None) -> None:
        self.sources: dict[tuple[str, str], Source] = {}
        self.default: Source | None = None
        self.metrics: list[Metric] = []
        self.pmns = pmns
        self.messages: list[str] = []

    def use(self, kind: str, name: str) -> Source | None:
        """The context for KIND NAME, opened the first time (None, complaint kept, if not)."""
        key = (kind, name)
        if key in self.sources:
            return self.sources[key]
        from purepcp.pmapi.context import Context

        try:
            if kind == "archive":
                from purepcp.pmapi.archive.context import ArchiveContext

                ctx: Any = ArchiveContext(name, self.pmns)
            elif kind == "local":
                ctx = Context.local([], self.pmns)
            else:
                ctx = Context.host(name, self.pmns)
                ctx.source.ensure()
        except PMError as exc:
            self.messages.append(f"{PROG}: Error: {name}: {pmErrStr(exc.code)}\n")
            return None
        source = Source(kind, name, ctx)
        self.sources[key] = source
        if self.default is None:
            self.default = source
        return source

    def add(self, source: Source, name: str, insts: list[str], scale: float) -> bool:
        """A metric (with INSTS, else all its instances) added; False, complaint kept, if not."""
        ctx = source.ctx
        where = "@" if source.kind == "local" else source.name
        try:
            pmid = ctx.lookup_name(name)
            desc = ctx.lookup_desc(pmid)
        except PMError as exc:
            self.messages.append(f"{PROG}: Error: {where}{source.separator}{name}: "
                                 f"{pmErrStr(exc.code)}\n")  # fmt: skip
            return False
        if int(desc.type) in _NOT_VALUES:
            from purepcp.pmapi.types import pmTypeStr

            self.messages.append(f'{PROG}: Error: {where}{source.separator}{name} has type '
                                 f'"{pmTypeStr(desc.type)}", which is not a number or a '
                                 "string\n")  # fmt: skip
            return False
        columns = self._columns(source, desc, insts, name)
        if columns is None:
            return False
        self.metrics.append(Metric(source, name, desc, scale, columns, bool(insts)))
        return True

    def _columns(
        self, source: Source, desc: Any, insts: list[str], name: str
    ) -> list[Column] | None:
        ctx = source.ctx
        if desc.indom == PM_INDOM_NULL:
            if insts:
                spec = f"{source.name}{source.separator}{name}"
                self.messages.append(
                    f"{PROG}: Error: {spec}[{insts[0]}]: {pmErrStr(PM_ERR_INST)}\n"
                )
                return None
            return [Column(None, None)]
        known = _instances(ctx, desc.indom, source.kind)
        if not insts:
            return [Column(i, n) for i, n in known]
        by_name = {n: i for i, n in known}
        columns = []
        for text in insts:
            inst = by_name.get(text)
            if inst is None:
                spec = f"{source.name}{source.separator}{name}"
                self.messages.append(f"{PROG}: Error: {spec}[{text}]: {pmErrStr(PM_ERR_INST)}\n")
                return None
            columns.append(Column(inst, text))
        return columns

    def fetch(self) -> None:
        """One sample from every source; each metric's values moved in."""
        import time

        for source in self.sources.values():
            pmids = list(dict.fromkeys(m.desc.pmid for m in self.metrics if m.source is source))
            if not pmids:
                continue
            try:
                result = source.ctx.fetch(pmids).result
                source.stamps = [*source.stamps[-1:], float(result.timestamp)]
                source.vsets = {vs.pmid: vs for vs in result.vsets}
            except PMError:
                source.stamps = [*source.stamps[-1:], time.time()]
                source.vsets = {}
        for metric in self.metrics:
            metric.extract(metric.source.vsets.get(metric.desc.pmid))

    def close(self) -> None:
        for source in self.sources.values():
            with contextlib.suppress(PMError, OSError):
                source.ctx.close()


def _instances(ctx: Any, indom: int, kind: str) -> list[tuple[int, str]]:
    try:
        if kind == "archive":
            return list(ctx.instances_archive(indom))
        return list(ctx.instances(indom))
    except PMError:
        return []


def say(messages: list[str]) -> None:
    sys.stderr.write("".join(messages))
    messages.clear()
