"""pmproxy's web contexts: one PMAPI context per REST client, and what each call asks of it.

A web context is a host context on a pmcd, named by a random number and kept for
``polltimeout`` seconds after its last use (libpcp_web's webgroup).  Its calls run in
a worker thread, one at a time per context, and cache what libpcp_web caches: metric
descriptors and names, instance names, label sets and help text.  The calls answer
with plain records (webrecords.py); webapi.py turns them into JSON and openmetrics.py
into text, with webtext.py's conventions.

Which label sets a merge includes follows PCP 6.0.3's pmproxy: the domain and cluster
levels only once a metric lookup (``/pmapi/metric``) in this context has read them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from purepcp.pmapi.cnumbers import atoi, uint32
from purepcp.pmapi.derived.parse import DerivedSyntaxError
from purepcp.pmapi.derived.registry import (
    ContextRegistry,
    DerivedError,
    add_metric_message,
    default_registry,
)
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_IPC, PMError, pmErrStr
from purepcp.pmapi.hostname import context_hostname
from purepcp.pmapi.ids import (
    DYNAMIC_PMID,
    PM_ID_NULL,
    PM_IN_NULL,
    PM_INDOM_NULL,
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmInDom_domain,
)
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    LabelSet,
)
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.series.ids import merged_json, metric_id, sha1_text

from .openmetrics import open_labels
from .webrecords import FetchedMetric, InDom, Metric, ScrapeSample, WebError
from .webtext import derived_config_lines, name_matcher, value_text

__all__ = ["WebContext"]


class WebContext:
    """One REST client's PMAPI context and what it has learnt.  Not thread-safe: the
    group runs one call at a time on it."""

    def __init__(self, ident: int, hostspec: str, timeout: float, connect: Callable[[str], Any]):
        self.ident = ident
        self.hostspec = hostspec
        self.timeout = timeout
        try:
            self.ctx = connect(hostspec)
        except PMError as exc:
            raise WebError(f"cannot connect to PMCD: {pmErrStr(exc.code)}") from None
        self.registry = ContextRegistry(default_registry())
        self.ctx.use_registry(self.registry)
        self.ctx.derived_err = _Discard()
        self.metrics_by_name: dict[str, Metric] = {}
        self.metrics_by_pmid: dict[int, Metric] = {}
        self.indoms: dict[int, InDom] = {}
        self.domain_labels: dict[int, LabelSet | None] = {}
        self.cluster_labels: dict[int, LabelSet | None] = {}
        self.last_stamp = Timestamp(0, 0)  # of the latest scrape's fetch
        self._generation = getattr(self.ctx.source, "generation", 0)  # (see _check_changes)
        try:
            self.host = context_hostname(self.ctx)
            sets = self.ctx.labels(PM_ID_NULL, PM_LABEL_CONTEXT)
        except PMError as exc:
            self.close()
            raise WebError(f"failed to get context labels: {pmErrStr(exc.code)}") from None
        self.context_labels = sets[0] if sets and sets[0].nlabels > 0 else None
        if self.context_labels is None:
            self.context_labels = LabelSet.from_dict({"hostname": self.host}, PM_LABEL_CONTEXT)
        self.labels_json = merged_json([self.context_labels], identifying=False) or "{}"
        self.source = sha1_text('{"series":"source","labels":' + self.labels_json + "}")

    def close(self) -> None:
        with contextlib.suppress(OSError, PMError):
            self.ctx.close()

    def _check_reconnected(self) -> None:
        """Before using what this context learnt: if it connected again since (pmcd
        restarted, perhaps with other agents), forget it all."""
        if getattr(self.ctx.source, "generation", 0) != self._generation:
            self._check_changes()

    def _check_changes(self) -> None:
        """After a fetch: if pmcd says its agents, names or labels changed, or the context
        had to connect again (pmcd restarted, perhaps with other agents), forget what
        this context has learnt of them (it is read again when next needed)."""
        generation = getattr(self.ctx.source, "generation", 0)
        reconnected = generation != self._generation
        self._generation = generation
        if self.ctx.changes() or reconnected:
            self.metrics_by_name.clear()
            self.metrics_by_pmid.clear()
            self.indoms.clear()
            self.domain_labels.clear()
            self.cluster_labels.clear()

    # -- metrics ------------------------------------------------------------------------

    def metric_by_name(self, name: str) -> Metric | None:
        """webgroup_lookup_metric: the metric NAME names, None if pmcd knows no such one."""
        self._check_reconnected()
        metric = self.metrics_by_name.get(name)
        if metric is not None:
            return metric
        try:
            pmid = self.ctx.lookup_names([name])[0]
        except PMError:
            return None
        if pmid == PM_ID_NULL:
            return None
        return self._new_metric(pmid, name)

    def metrics_by_names(self, names: Sequence[str]) -> list[Metric | None]:
        """metric_by_name for many names, looked up in one exchange."""
        self._check_reconnected()
        out: list[Metric | None] = [self.metrics_by_name.get(n) for n in names]
        wanted = [n for n, m in zip(names, out, strict=True) if m is None]
        if not wanted:
            return out
        try:
            pmids = dict(zip(wanted, self.ctx.lookup_names(wanted), strict=True))
        except PMError:
            pmids = {}
        fresh = [pmids[n] for n in wanted if pmids.get(n, PM_ID_NULL) != PM_ID_NULL]
        fresh = [p for p in dict.fromkeys(fresh) if p not in self.metrics_by_pmid]
        if fresh:
            try:
                descs = dict(zip(fresh, self.ctx.lookup_descs(fresh), strict=True))
            except PMError:
                descs = {}
            named = {pmids[n]: n for n in reversed(wanted) if n in pmids}
            for pmid, desc in descs.items():
                if desc is not None:
                    self._add_metric(desc, named[pmid])
        for i, name in enumerate(names):
            if out[i] is None and pmids.get(name, PM_ID_NULL) != PM_ID_NULL:
                out[i] = self._new_metric(pmids[name], name)
        return out

    def metric_by_pmid(self, pmid: int) -> Metric | None:
        """webgroup_lookup_pmid."""
        if pmid == PM_ID_NULL:
            return None
        metric = self.metrics_by_pmid.get(pmid)
        return metric if metric is not None else self._new_metric(pmid, None)

    def _new_metric(self, pmid: int, name: str | None) -> Metric | None:
        """pmwebapi_new_pmid: describe PMID and learn all its names (plus NAME)."""
        metric = self.metrics_by_pmid.get(pmid)
        if metric is None:
            try:
                desc = self.ctx.lookup_desc(pmid)
            except PMError:
                return None
            metric = self._add_metric(desc, name)
            if metric is None:
                return None
        if name is not None and name not in metric.names:
            metric.names.append(name)
            self.metrics_by_name[name] = metric
        return metric

    def _add_metric(self, desc: Desc, name: str | None = None) -> Metric | None:
        """A metric for DESC known by NAME, or (NAME None) by every name pmcd gives it."""
        metric = Metric(desc, [name] if name is not None else [])
        if name is None and not self.all_names(metric):
            return None
        self.metrics_by_pmid[desc.pmid] = metric
        for n in metric.names:
            self.metrics_by_name[n] = metric
        return metric

    def all_names(self, metric: Metric) -> bool:
        """pmNameAll into METRIC's names (kept in pmcd's order, any other name after);
        False when pmcd cannot name it."""
        if metric.all_names:
            return True
        try:
            names = list(self.ctx.name_all(metric.pmid))
        except PMError:
            return False
        names += [n for n in metric.names if n not in names]
        metric.names = names
        metric.all_names = True
        for n in names:
            self.metrics_by_name[n] = metric
        return True

    def item_labels(self, metric: Metric) -> LabelSet | None:
        if not metric.item_labels_read:
            metric.item_labels = self._one_set(metric.pmid, PM_LABEL_ITEM)
            metric.item_labels_read = True
        return metric.item_labels

    def metric_text(self, metric: Metric) -> tuple[str | None, str | None]:
        """pmwebapi_metric_help: (one-line, help) text, each None when there is none."""
        oneline = self.metric_oneline(metric)
        if not metric.text_read:
            metric.helptext = self._text(metric.pmid, True, False)
            metric.text_read = True
        return oneline, metric.helptext

    def metric_oneline(self, metric: Metric) -> str | None:
        if not metric.oneline_read:
            metric.oneline = self._text(metric.pmid, False, False)
            metric.oneline_read = True
        return metric.oneline

    def _text(self, ident: int, help: bool, indom: bool) -> str | None:
        if not indom and pmID_domain(ident) == DYNAMIC_PMID:
            return self._derived_text(ident, help)
        try:
            return self.ctx.text(ident, help=help, indom=indom, direct=True)
        except PMError:
            return None

    def _derived_text(self, pmid: int, help: bool) -> str:
        """A derived metric's text as libpcp gives it: what its definition set, else ""."""
        definition = self.registry.by_pmid(pmid)
        if definition is None:
            return ""
        return (definition.helptext if help else definition.oneline) or ""

    def _one_set(self, ident: int, kind: int) -> LabelSet | None:
        try:
            sets = self.ctx.labels(ident, kind)
        except PMError:
            return None
        return sets[0] if sets and sets[0].nlabels > 0 else None

    def read_domain_cluster_labels(self, metric: Metric) -> None:
        """What webmetric_lookup reads before it describes a metric: domain and cluster."""
        pmid = metric.pmid
        domain = pmID_domain(pmid)
        if domain not in self.domain_labels:
            self.domain_labels[domain] = self._one_set(domain, PM_LABEL_DOMAIN)
        cluster = pmID_build(domain, pmID_cluster(pmid), 0)
        if cluster not in self.cluster_labels:
            self.cluster_labels[cluster] = self._one_set(cluster, PM_LABEL_CLUSTER)

    def _cluster_set(self, pmid: int) -> LabelSet | None:
        return self.cluster_labels.get(pmID_build(pmID_domain(pmid), pmID_cluster(pmid), 0))

    # -- instance domains ---------------------------------------------------------------

    def indom(self, indom: int, refresh: bool = False) -> InDom:
        """INDOM's instances (read again when REFRESH, or the first time)."""
        ip = self.indoms.get(indom)
        if ip is None:
            ip = self.indoms[indom] = InDom(indom)
            refresh = True
        if refresh:
            try:
                ip.names = {inst: name for inst, name in self.ctx.instances(indom) if name}
            except PMError:
                ip.names = {}
            ip.labels_read = False
        return ip

    def indom_labels(self, ip: InDom) -> None:
        """pmwebapi_add_instances_labels: the indom's label set and each instance's."""
        if ip.labels_read:
            return
        ip.labels = self._one_set(ip.indom, PM_LABEL_INDOM)
        try:
            sets = self.ctx.labels(ip.indom, PM_LABEL_INSTANCES)
        except PMError:
            sets = ()
        ip.inst_labels = {s.inst: s for s in sets if s.nlabels > 0}
        ip.labels_read = True

    def indom_text(self, ip: InDom) -> tuple[str | None, str | None]:
        if not ip.text_read:
            ip.oneline = self._text(ip.indom, False, True)
            ip.helptext = self._text(ip.indom, True, True)
            ip.text_read = True
        return ip.oneline, ip.helptext

    def instance_name(self, ip: InDom, inst: int) -> str | None:
        """An instance's name; an unknown one re-reads the domain, as libpcp_web does."""
        name = ip.names.get(inst)
        if name is None:
            self.indom(ip.indom, refresh=True)
            name = ip.names.get(inst)
        return name

    # -- merged labels ------------------------------------------------------------------

    def metric_labels_json(self, metric: Metric) -> str | None:
        """A metric's identifying labels: context, domain, indom, cluster, item."""
        indom = metric.desc.indom
        ip = self.indoms.get(indom) if indom != PM_INDOM_NULL else None
        sets = [
            self.context_labels,
            self.domain_labels.get(pmID_domain(metric.pmid)),
            ip.labels if ip is not None else None,
            self._cluster_set(metric.pmid),
            self.item_labels(metric),
        ]
        return merged_json(sets)

    def instance_labels_json(self, ip: InDom, inst: int | None) -> str | None:
        """An indom's (INST None) or instance's identifying labels: context, domain,
        indom, instance.  As in PCP 6.0.3's pmproxy, an instance without labels of its
        own is not given the indom's (libpcp_web merges its labels before it has read
        the indom's, and merges again only for instances that have labels)."""
        own = ip.inst_labels.get(inst) if inst is not None else None
        sets = [
            self.context_labels,
            self.domain_labels.get(pmInDom_domain(ip.indom)),
            ip.labels if inst is None or own is not None else None,
            own,
        ]
        return merged_json(sets)

    def series(self, metric: Metric, name: str) -> str:
        """pmwebapi_metric_hash: the metric's series identifier under NAME."""
        return metric_id(name, self.metric_labels_json(metric), metric.desc).hex()

    # -- the calls ----------------------------------------------------------------------

    def walk(self, prefix: str) -> Iterator[str]:
        """pmTraversePMNS under PREFIX; PMError when pmcd knows no such name.  A
        connection found broken (pmcd restarted) is made again and asked once more."""
        try:
            return iter(self.ctx.traverse(prefix))
        except PMError as exc:
            if exc.code != PM_ERR_IPC:
                raise
        return iter(self.ctx.traverse(prefix))

    def fetch(self, metrics: Sequence[Metric | None]) -> tuple[Timestamp, list[FetchedMetric]]:
        """webgroup_fetch: the values of METRICS (None for names that were not found)."""
        known = [m for m in metrics if m is not None]
        pmids = list(dict.fromkeys(m.pmid for m in known))
        if not pmids:
            return Timestamp.now(), []
        try:
            fetched = self.ctx.fetch(pmids)
        except PMError as exc:
            raise WebError(pmErrStr(exc.code)) from None
        self._check_changes()
        vsets = {vs.pmid: vs for vs in fetched.result.vsets}
        out = []
        for metric in known:
            self.all_names(metric)  # (a fetch answers under every name, as PCP's does)
            values = self._values(metric, vsets.get(metric.pmid))
            out.extend(FetchedMetric(metric.pmid, name, values) for name in metric.names)
        return fetched.timestamp, out

    def known_for_fetch(self, names: Sequence[str]) -> list[Metric] | None:
        """The metrics NAMES name, if this context knows them all (every name of each)
        and none is derived: what fetch_async needs.  None otherwise."""
        out = []
        for name in names:
            metric = self.metrics_by_name.get(name)
            if metric is None or not metric.all_names or pmID_domain(metric.pmid) == DYNAMIC_PMID:
                return None
            out.append(metric)
        return out if out and self.ctx.can_run_async() else None

    async def fetch_async(self, metrics: Sequence[Metric]) -> tuple[Timestamp, list[FetchedMetric]]:
        """fetch() from trio code for metrics known_for_fetch() gave: no worker thread,
        unless a value's instance must be looked up."""
        import trio

        try:
            fetched = await self.ctx.fetch_async(list(dict.fromkeys(m.pmid for m in metrics)))
        except PMError as exc:
            raise WebError(pmErrStr(exc.code)) from None
        self._check_changes()
        vsets = {vs.pmid: vs for vs in fetched.result.vsets}
        out = []
        for metric in metrics:
            vset = vsets.get(metric.pmid)
            values = self._values(metric, vset, lookup=False)
            if values is None:  # (an instance not seen before: ask its name in a thread)
                values = await trio.to_thread.run_sync(self._values, metric, vset)
            out.extend(FetchedMetric(metric.pmid, name, values) for name in metric.names)
        return fetched.timestamp, out

    def _values(
        self, metric: Metric, vset: ValueSet | None, lookup: bool = True
    ) -> tuple[tuple[int | None, str], ...] | None:
        """(instance, value text) pairs of VSET; None, without LOOKUP, if an instance's
        name would have to be asked for."""
        if vset is None or vset.numval <= 0:
            return ()
        desc = metric.desc
        atoms = vset.atoms(desc.type)
        if desc.indom == PM_INDOM_NULL:
            return ((None, value_text(desc.type, atoms[0])),)
        ip = self.indoms.get(desc.indom)
        if ip is None:
            if not lookup:
                return None
            ip = self.indom(desc.indom)
        out = []
        for inst, atom in zip(vset.insts, atoms, strict=True):
            if inst not in ip.names:
                if not lookup:
                    return None
                if self.instance_name(ip, inst) is None:
                    continue
            out.append((inst, value_text(desc.type, atom)))
        return tuple(out)

    def scrape(self, names: Sequence[str]) -> Iterator[ScrapeSample]:
        """webgroup_scrape: a fetch of NAMES, as /metrics lines (numeric metrics only)."""
        metrics = self.metrics_by_names(names)
        known = [m for m in metrics if m is not None]
        pmids = list(dict.fromkeys(m.pmid for m in known))
        if not pmids:
            return
        try:
            fetched = self.ctx.fetch(pmids)
        except PMError as exc:
            raise WebError(pmErrStr(exc.code)) from None
        self.last_stamp = fetched.timestamp
        self._check_changes()
        vsets = {vs.pmid: vs for vs in fetched.result.vsets}
        self._read_scrape_metadata(known)
        for name, metric in zip(names, metrics, strict=True):
            if metric is None:
                continue
            vset = vsets.get(metric.pmid)
            if vset is None or vset.numval <= 0:
                continue
            desc = metric.desc
            if not PMType.PM_TYPE_32 <= desc.type <= PMType.PM_TYPE_DOUBLE:
                continue
            atoms = vset.atoms(desc.type)
            sets = self._scrape_sets(metric)
            if desc.indom == PM_INDOM_NULL:
                text = value_text(desc.type, atoms[0], json=False)
                yield ScrapeSample(metric, name, open_labels(sets), text)
                continue
            ip = self.indoms[desc.indom]
            for inst, atom in zip(vset.insts, atoms, strict=True):
                iname = self.instance_name(ip, inst)
                if iname is None:
                    continue
                self.indom_labels(ip)  # (again, if the instances were read again)
                labels = open_labels([*sets, ip.inst_labels.get(inst)], inst, iname)
                yield ScrapeSample(metric, name, labels, value_text(desc.type, atom, json=False))

    def _read_scrape_metadata(self, metrics: Iterable[Metric]) -> None:
        """The item labels, help text and instances a scrape of METRICS needs, each read
        once per context."""
        for metric in metrics:
            self.item_labels(metric)
            self.metric_oneline(metric)
            indom = metric.desc.indom
            if indom != PM_INDOM_NULL:
                self.indom_labels(self.indoms.get(indom) or self.indom(indom))

    def _scrape_sets(self, metric: Metric) -> list[LabelSet | None]:
        indom = metric.desc.indom
        ip = self.indoms.get(indom) if indom != PM_INDOM_NULL else None
        return [
            self.context_labels,
            self.domain_labels.get(pmID_domain(metric.pmid)),
            ip.labels if ip is not None else None,
            self._cluster_set(metric.pmid),
            metric.item_labels,
        ]

    def store(
        self, metric: Metric, text: str, inames: Sequence[str] | None, insts: Sequence[str] | None
    ) -> None:
        """webgroup_store: set METRIC to TEXT (for the instances named or numbered)."""
        from purepcp.pmapi.convert import parse_typed_value

        desc = metric.desc
        atom = parse_typed_value(text, desc.type)  # (PM_ERR_TYPE or -ERANGE, as PCP's)
        if desc.indom == PM_INDOM_NULL:
            targets = [PM_IN_NULL]
        elif insts:
            targets = [uint32(atoi(i)) for i in insts]
        elif inames:
            ip = self.indom(desc.indom, refresh=True)
            wanted = set(inames)
            targets = [inst for inst, name in ip.names.items() if name in wanted]
        else:
            targets = [PM_IN_NULL]
        if desc.indom != PM_INDOM_NULL and (insts or inames):
            self.ctx.profile.delete(desc.indom)
            if targets:
                self.ctx.profile.add(desc.indom, targets)
        vset = ValueSet.of_atoms(metric.pmid, desc.type, [(i, atom) for i in targets])
        self.ctx.store(Result(Timestamp.now(), (vset,)))

    def profile(
        self,
        indom: int,
        add: bool,
        match: str | None,
        inames: Sequence[str] | None,
        insts: Sequence[str] | None,
    ) -> None:
        """webgroup_profile: pmAddProfile or pmDelProfile for the instances selected."""
        chosen: list[int] | None = None
        if indom != PM_INDOM_NULL and (inames or insts):
            ip = self.indom(indom, refresh=True)
            test = name_matcher(match, inames) if inames else None
            ids = {uint32(atoi(i)) for i in insts or ()}
            chosen = [
                inst
                for inst, name in ip.names.items()
                if (test(name) if test is not None else inst in ids)
            ]
        elif indom != PM_INDOM_NULL:
            chosen = []
        if add:
            self.ctx.profile.add(indom, chosen or None)
        else:
            self.ctx.profile.delete(indom, chosen or None)

    def derive(self, name: str, expr: str) -> None:
        """pmAddDerivedMetric in this context; WebError with libpcp's message."""
        registry = self.registry.copy()
        try:
            definition = registry.add(name, expr)
        except (DerivedSyntaxError, DerivedError) as exc:
            raise WebError(add_metric_message(name, expr, exc)) from None
        self.ctx.use_registry(registry)
        self.registry = registry
        dm = self.ctx.derived()
        reason = dm.semantic_error(definition.pmid) if dm is not None else None
        if reason is not None:
            registry.discard(name)
            self.ctx.use_registry(registry)
            err = _Reason(reason)
            raise WebError(add_metric_message(name, expr, err))
        # a name that now means a derived metric must be looked up afresh
        self.metrics_by_name.pop(name, None)

    def derive_config(self, config: str) -> None:
        """webgroup_derived_metrics: "name = expr" lines (# comments), each added."""
        for line, name, expr in derived_config_lines(config):
            if expr is None:
                raise WebError(
                    f'failed to parse derived metric "{name}" on line {line}'
                    " - incomplete expression\n"
                )
            try:
                self.derive(name, expr)
            except WebError as exc:
                raise WebError(
                    f'failed to create derived metric "{name}" on line {line} from: {expr}\n'
                    + exc.message
                ) from None


class _Reason(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Discard:
    """A stream for derived metrics' semantic errors: a web client hears of them when it
    adds the metric, so pmproxy's log need not."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
