"""The Agent base class: what a PMDA is, and how it answers pmcd's requests.

A subclass names itself and its default domain, declares its metrics and
instance domains (pmda.metrics), and supplies values.  The namespace comes from
`pmns/NAME` and the help text from `help/NAME`, with the symbol NAME.upper()
standing for the domain, as PCP's own agents ship them.  Everything here is
sans-IO: `handle` takes a request PDU record and returns the reply record (or
None where PCP sends none); pmda.serve moves the bytes.
"""

from __future__ import annotations

import errno
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_AGAIN,
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_IPC,
    PM_ERR_NAME,
    PM_ERR_NOTCONN,
    PM_ERR_PMID,
    PM_ERR_TEXT,
    PM_ERR_TYPE,
    PMError,
)
from purepcp.pmapi.helptext import load_help
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_cluster, pmID_domain, pmInDom_build
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_COMPOUND,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL,
    LabelSet,
    domain_labels,
)
from purepcp.pmapi.pdu.constants import (
    PM_PROFILE_INCLUDE,
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_PMID,
    PMCDState,
)
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    CredsPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.pmns import PMNS
from purepcp.pmapi.shipped import shipped_dir
from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .clients import Client, ClientTable
from .columns import Columns, column_value_sets, columns_for
from .metrics import NOSUPPORT, InDom, Metric, instance_map, refresh_of

#: Where the shipped agents' namespace and help sources live: DATA_DIR/pmns/NAME and
#: DATA_DIR/help/NAME (package data of pmda installed; the repository's pmns/ and help/)
DATA_DIR = shipped_dir(__file__, "pmns").parent


class FetchPlan(NamedTuple):
    """What a fetch of a list of PMIDs involves (Agent.fetch_plan)."""

    wanted: tuple[Metric | None, ...]  # the metric of each PMID (None if unknown)
    indoms: tuple[InDom, ...]  # the instance domains to refresh
    refreshes: tuple[tuple[int, Callable, bool], ...]  # (cluster, method, merge with earlier)
    names: frozenset[str]  # the names of the metrics asked for
    #: per PMID: (pmid, cluster, name, type, metric) where its value is one its cluster's
    #: refresh gives (no instances, no fetch method), else (pmid, -1, "", 0, metric)
    quick: tuple[tuple[int, int, str, int, Metric | None], ...]
    columns: Columns | None  # how its answer is written by columns (pmda.columns)


class Agent:
    """Base class of every agent: subclass it, name it, declare metrics, supply values.

    Class attributes: `name` (its pmns/ and help/ files, and its label
    {"agent": name}), `domain` (the default; pmcd's -d wins), `labels` (extra
    domain labels), `cluster_labels` ({cluster: labels}) and `metrics`: metrics
    declared as data (built from a table) rather than on methods, whose values
    come from their cluster's `refresh` method.  An agent that sets
    `wants_credentials` is told who each client is (pmcd forwards their
    credentials, pmda.clients); `self.client` is the one behind the request
    being answered.
    """

    name: ClassVar[str] = ""
    domain: ClassVar[int] = 0
    #: ask pmcd for each client's uid, gid, pid and container (PDU_FLAG_AUTH|CONTAINER)
    wants_credentials: ClassVar[bool] = False
    #: Whether it answers pmcd's namespace requests (for a dynamic subtree of pmcd's
    #: namespace) from its own namespace.
    dynamic_pmns: ClassVar[bool] = False
    labels: ClassVar[Mapping[str, Any]] = {}
    cluster_labels: ClassVar[Mapping[int, Mapping[str, Any]]] = {}
    metrics: ClassVar[Iterable[Metric]] = ()

    _metrics: ClassVar[tuple[Metric, ...]] = ()
    _indoms: ClassVar[tuple[InDom, ...]] = ()
    _refreshers: ClassVar[tuple[tuple[int, float | None, Callable], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            found.update(vars(klass))
        cls._metrics = (
            *(v for v in found.values() if isinstance(v, Metric)),
            *cls.metrics,
        )
        cls._indoms = tuple(v for v in found.values() if isinstance(v, InDom))
        cls._refreshers = tuple(
            (*marked, v) for v in found.values() if (marked := refresh_of(v)) is not None
        )

    def __init__(
        self,
        domain: int | None = None,
        *,
        pmns_path: str | Path | None = None,
        help_path: str | Path | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.domain = type(self).domain if domain is None else domain  # type: ignore[misc]
        self.log = log or logging.getLogger(f"pmda.{self.name}")
        symbols = {self.name.upper(): self.domain}
        self.pmns = _load_pmns(Path(pmns_path or type(self).source_file("pmns")), symbols)
        help_file = Path(help_path or type(self).source_file("help"))
        self.help = load_help(str(help_file), self.pmns, symbols) if help_file.exists() else None
        self._by_pmid: dict[int, Metric] = {}
        self._descs: dict[int, Desc] = {}
        for m in self._metrics:
            pmid = self.pmns.lookup(m.name)
            if pmID_domain(pmid) != self.domain:
                raise PMError(PM_ERR_PMID, f"{m.name}: {pmns_path} gives it domain {pmid >> 22}")
            indom = PM_INDOM_NULL if m.indom is None else self.indom_id(m.indom)
            self._by_pmid[pmid] = m
            self._descs[pmid] = Desc(pmid, m.type, indom, m.sem, m.units)
        self._indom_of: dict[int, InDom] = {self.indom_id(i): i for i in self._indoms}
        self._instances: dict[InDom, dict[int, str]] = {
            i: dict(i.instances or {}) for i in self._indoms
        }
        self._profile: ProfilePDU | None = None
        self._fetch_insts: dict[InDom, list[int]] = {}  # (the profiled instances, per fetch)
        self._plans: dict[tuple[int, ...], FetchPlan] = {}
        #: every client context's credentials, and the context of the current request
        self.clients = ClientTable()
        self._context = 0
        self._changes = PMCDState.PMCD_NO_CHANGE
        #: what each cluster's refresh method last returned: {metric name: values}
        self._cluster_values: dict[int, Mapping[str, Any] | PMError | None] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @classmethod
    def source_file(cls, kind: str) -> Path:
        """The agent's namespace ("pmns") or help ("help") source: a file of that name
        beside the module defining the class (an agent package), else KIND/NAME among
        the agents shipped with purepcp."""
        module = sys.modules.get(cls.__module__)
        where = getattr(module, "__file__", None)
        if where:
            beside = Path(where).with_name(kind)
            if beside.is_file():
                return beside
        return DATA_DIR / kind / cls.name

    # -- for subclasses -----------------------------------------------------------

    def indom_id(self, indom: InDom) -> int:
        """The pmInDom of INDOM in this agent's domain."""
        return pmInDom_build(self.domain, indom.serial)

    def set_instances(self, indom: InDom, instances: Iterable[str] | Mapping[int, str]) -> None:
        """Replace the instances of (dynamic) INDOM."""
        self._instances[indom] = instance_map(instances)
        self._fetch_insts.pop(indom, None)  # the profile's choice among them, made again

    def instances(self, indom: InDom) -> dict[int, str]:
        """The current {inst: name} of INDOM."""
        return self._instances[indom]

    def refresh_instances(self, indom: InDom) -> None:
        """Bring INDOM's instances up to date now, by its refresh method, as a fetch does
        for the instance domains of the metrics asked for: for a refresh that needs them
        (or their count) when none of those metrics is in the request."""
        self._refresh_indom(indom)

    @property
    def declared_metrics(self) -> tuple[Metric, ...]:
        """Every metric the agent's class declares: on methods, and in `metrics`."""
        return self._metrics

    @property
    def declared_indoms(self) -> tuple[InDom, ...]:
        """Every instance domain the agent's class and its bases declare."""
        return self._indoms

    def changed(self, *, labels: bool = False, names: bool = False) -> None:
        """Tell pmcd, with the next fetch's answer, that labels or names have changed.

        As pmdaExtSetFlags does: the flags ride in the RESULT's timestamp seconds
        once, and pmcd passes the news on to its clients.
        """
        self._changes |= (PMCDState.PMCD_LABEL_CHANGE if labels else 0) | (
            PMCDState.PMCD_NAMES_CHANGE if names else 0
        )

    def on_fetch(self) -> None:
        """Runs once at the start of every fetch; override for per-fetch work."""

    def instance_labels(self, indom: InDom, inst: int, name: str) -> Mapping[str, Any] | None:
        """Labels of one instance (PM_LABEL_INSTANCES); override to supply them."""
        return None

    # -- life cycle ---------------------------------------------------------------

    def start(self) -> None:
        """Start the background refreshes (refresh(..., every=N)); each runs once first."""
        for _cluster, every, method in self._refreshers:
            if every is not None:
                self._run_refresh(_cluster, method)
                thread = threading.Thread(
                    target=self._background,
                    args=(_cluster, method, every),
                    daemon=True,
                    name=f"{self.name}-{method.__name__}",
                )
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Stop the background refreshes."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _background(self, cluster: int, method: Callable, every: float) -> None:
        while not self._stop.wait(every):
            self._run_refresh(cluster, method, background=True)

    def _run_refresh(
        self, cluster: int, method: Callable, *, background: bool = False, merge: bool = False
    ) -> None:
        """Run a refresh method, keeping the values it returns for its cluster's metrics.

        With MERGE (a second refresh method of the same cluster in one fetch) its
        values are added to those the first gave.  A failure in a per-fetch
        refresh gives the cluster's metrics that error (PM_ERR_AGAIN for anything
        but a PMError) in this fetch; a failing background refresh is logged and
        the values it last gave stay in use.
        """
        try:
            values = method(self)
        except PMError as exc:
            error = exc
        except Exception as exc:  # a failing source must not end the agent
            self.log.error("%s: refresh %s failed: %s", self.name, method.__name__, exc)
            error = PMError(PM_ERR_AGAIN)
        else:
            earlier = self._cluster_values.get(cluster) if merge else None
            if isinstance(earlier, PMError):
                return  # the cluster has already failed in this fetch
            if earlier and values is not None:
                values = {**earlier, **values}
            elif earlier:
                values = earlier
            self._cluster_values[cluster] = values
            return
        if not background:
            self._cluster_values[cluster] = error

    # -- requests -------------------------------------------------------------------

    def handle(self, pdu: Any) -> Any:
        """The reply to request PDU (a record), or None where PCP sends no reply."""
        handler = _HANDLERS.get(type(pdu))
        if handler is None:
            self.log.error("%s: unexpected %s PDU ignored", self.name, type(pdu).__name__)
            return None
        self._context = getattr(pdu, "sender", 0)
        try:
            return handler(self, pdu)
        except PMError as exc:
            return ErrorPDU(exc.code)

    @property
    def client(self) -> Client:
        """The client whose request is being answered: its context and, if pmcd sent
        them (`wants_credentials`), its uid, gid, pid and container."""
        return self.clients.client(self._context)

    @property
    def context(self) -> int:
        """The pmcd context of the request being answered (`client.context`, without
        building the client): the key of an agent's per-client settings."""
        return self._context

    def _on_error(self, pdu: ErrorPDU) -> None:
        if pdu.code == PM_ERR_NOTCONN:  # the client in that context has gone
            self.clients.end(pdu.sender)
        return None  # nothing to answer

    def _on_profile(self, pdu: ProfilePDU) -> None:
        self._profile = pdu
        return None

    def _on_attr(self, pdu: AttrPDU) -> None:
        self.clients.set_attribute(pdu.sender, pdu.attr, pdu.value)
        return None

    def _on_creds(self, pdu: CredsPDU) -> None:
        return None

    def in_profile(self, indom: int, inst: int) -> bool:
        """Whether pmcd's instance profile asks for INST of INDOM (libpcp's rule)."""
        profile = self._profile
        if profile is None:
            return True
        for entry in profile.profiles:
            if entry.indom == indom:
                return (inst in entry.insts) != (entry.state == PM_PROFILE_INCLUDE)
        return profile.state == PM_PROFILE_INCLUDE

    def profiled(self, indom: InDom) -> list[int]:
        """INDOM's instances the current fetch's instance profile asks for (worked out
        once per fetch, and again whenever INDOM's instances change): the processes an
        agent reads in a refresh, say, when a client asks for only a few."""
        insts = self._fetch_insts.get(indom)
        if insts is None:
            indom_id = self.indom_id(indom)
            profile = self._profile
            if profile is None or (
                profile.state == PM_PROFILE_INCLUDE
                and all(entry.indom != indom_id for entry in profile.profiles)
            ):
                insts = list(self._instances[indom])  # all of them: the usual profile
            else:
                insts = [i for i in self._instances[indom] if self.in_profile(indom_id, i)]
            if indom.sorted_values:
                insts.sort()
            self._fetch_insts[indom] = insts
        return insts

    def _on_fetch(self, pdu: FetchPDU) -> ResultPDU:
        return ResultPDU(self.fetch(pdu.pmids))

    def fetch_plan(self, pmids: tuple[int, ...]) -> FetchPlan:
        """What a fetch of PMIDS involves, worked out once per list (clients such as
        pmlogger ask for the same list at every sample)."""
        plan = self._plans.get(pmids)
        if plan is None:
            by_pmid = self._by_pmid
            wanted = tuple(by_pmid.get(pmid) for pmid in pmids)
            known = [(pmid, m) for pmid, m in zip(pmids, wanted, strict=True) if m is not None]
            clusters = {pmID_cluster(pmid) for pmid, _ in known}
            refreshes, refreshed = [], set()
            for cluster, every, method in self._refreshers:
                if every is None and cluster in clusters:
                    refreshes.append((cluster, method, cluster in refreshed))
                    refreshed.add(cluster)
            plan = FetchPlan(
                wanted,
                tuple(dict.fromkeys(m.indom for _, m in known if m.indom is not None)),
                tuple(refreshes),
                frozenset(m.name for _, m in known),
                tuple(
                    (pmid, pmID_cluster(pmid), m.name, int(m.type), m)
                    if m is not None and m.fetcher is None and m.type != NOSUPPORT
                    else (pmid, -1, "", 0, m)
                    for pmid, m in zip(pmids, wanted, strict=True)
                ),
                columns_for(wanted),
            )
            if len(self._plans) >= 64:
                self._plans.clear()
            self._plans[pmids] = plan
        return plan

    def fetch(self, pmids: Iterable[int]) -> Result:
        """One value set per PMID, as pmdaFetch builds them."""
        pmids = tuple(pmids)
        self._fetch_insts = {}  # (what the last fetch's profile chose is not this one's)
        self.on_fetch()
        plan = self.fetch_plan(pmids)
        for indom in plan.indoms:
            self._refresh_indom(indom)
        for cluster, method, merge in plan.refreshes:
            self._run_refresh(cluster, method, merge=merge)
        self._fetch_insts = {}
        columns = plan.columns
        vsets = self.value_sets(plan) if columns is None else column_value_sets(self, plan, columns)
        changes = self._changes
        if changes:
            self._changes = PMCDState.PMCD_NO_CHANGE
        return Result(Timestamp(int(changes), 0), vsets)

    # -- how a fetch's value sets are built (pmda.columns builds them by columns) ------

    @property
    def cluster_values(self) -> Mapping[int, Mapping[str, Any] | PMError | None]:
        """What each cluster's refresh method last returned: {metric name: values}, or
        the PMError it raised."""
        return self._cluster_values

    def value_sets(
        self, plan: FetchPlan, made: Mapping[int, ValueSet] | None = None
    ) -> tuple[ValueSet, ...]:
        """The fetch's value sets, after its refreshes, the careful way: the commonest case
        (one value of a metric without instances, from its cluster's refresh) inline, the
        rest by fetch_one (or from MADE, sets already built this fetch, by index)."""
        cluster_values, fetch_one = self._cluster_values, self.fetch_one
        of_single, empty = ValueSet.of_single, ValueSet.empty
        vsets: list[ValueSet] = []
        append = vsets.append
        for index, (pmid, cluster, name, type_, m) in enumerate(plan.quick):
            if made and index in made:
                append(made[index])
                continue
            if cluster >= 0:
                supplied = cluster_values.get(cluster)
                if type(supplied) is dict:
                    value = supplied.get(name)
                    if m.indom is not None:  # type: ignore[union-attr]
                        if type(value) is dict:  # {inst: value}, as refreshes give them
                            append(self.value_set(pmid, m, self.instance_values(m, value)))
                            continue
                    elif value is None:
                        append(empty(pmid))
                        continue
                    elif type(value) is int or type(value) is float:
                        try:
                            append(of_single(pmid, type_, value))
                        except PMError as exc:
                            self.log.error("%s: %s: %s", self.name, name, exc)
                            append(ValueSet.of_error(pmid, PM_ERR_TYPE))
                        continue
            append(fetch_one(pmid, m))
        return tuple(vsets)

    def fetch_one(self, pmid: int, m: Metric | None) -> ValueSet:
        """The value set of one metric M (None: PMID is unknown) in this fetch, from its
        cluster's refresh or its own fetch method; a failure is the set's error."""
        if m is None:
            return ValueSet.of_error(pmid, PM_ERR_PMID)
        if m.indom is None and m.fetcher is not None and m.type != NOSUPPORT:
            # the common case, kept short: one value from the metric's own method
            supplied = self._cluster_values.get(pmID_cluster(pmid))
            if isinstance(supplied, PMError):
                return ValueSet.of_error(pmid, supplied.code)
            try:
                value = m.fetcher(self)
            except PMError as exc:
                return ValueSet.of_error(pmid, exc.code)
            return self.value_set(pmid, m, [] if value is None else [(PM_IN_NULL, value)])
        if m.type == NOSUPPORT:
            return ValueSet.of_atoms(pmid, m.type, ())
        status = 0
        pairs: list[tuple[int, Any]] = []
        # A stored PMError (a cluster's, or one metric's) is answered, never raised:
        # raising it would hang this fetch's frames on its traceback, a cycle that
        # keeps every value set of the fetch alive until the garbage collector runs.
        supplied = self._cluster_values.get(pmID_cluster(pmid))
        if isinstance(supplied, PMError):
            return ValueSet.of_error(pmid, supplied.code)
        try:
            if m.indom is None:  # (one with a fetch method took the short way above)
                value = (supplied or {}).get(m.name)
                if isinstance(value, PMError):
                    return ValueSet.of_error(pmid, value.code)
                if value is not None:
                    pairs.append((PM_IN_NULL, value))
            else:
                insts = self.profiled(m.indom)
                if m.fetcher is None:
                    mapping = (supplied or {}).get(m.name) or {}
                    if isinstance(mapping, PMError):
                        return ValueSet.of_error(pmid, mapping.code)
                    pairs = self.instance_values(m, mapping, insts)
                elif m.per_instance:
                    for inst in insts:
                        try:
                            value = m.fetcher(self, inst)
                        except PMError as exc:
                            status = exc.code
                            continue
                        if value is not None:
                            pairs.append((inst, value))
                else:
                    pairs = self.instance_values(m, m.fetcher(self), insts)
        except PMError as exc:
            status = exc.code
        if not pairs and status < 0:
            return ValueSet.of_error(pmid, status)
        return self.value_set(pmid, m, pairs)

    def value_set(self, pmid: int, m: Metric, pairs: list[tuple[int, Any]]) -> ValueSet:
        """The value set of PAIRS; PM_ERR_TYPE (and a log line) if a value will not fit."""
        try:
            return ValueSet.of_atoms(pmid, m.type, pairs)
        except PMError as exc:
            self.log.error("%s: %s: %s", self.name, m.name, exc)
            return ValueSet.of_error(pmid, PM_ERR_TYPE)

    def instance_values(
        self, m: Metric, values: Mapping, insts: list[int] | None = None
    ) -> list[tuple[int, Any]]:
        """(inst, value) pairs from a {inst or name: value} mapping, for INSTS (by default
        the instances the profile asks for)."""
        if insts is None:
            insts = self.profiled(m.indom)  # type: ignore[arg-type]
        get = values.get
        pairs = [(inst, value) for inst in insts if (value := get(inst)) is not None]
        if len(pairs) < len(insts) and len(values) > len(pairs):  # some keyed by name?
            names = self._instances[m.indom]  # type: ignore[index]
            found = dict(pairs)
            pairs = []
            for inst in insts:
                value = found.get(inst)
                if value is None:
                    value = get(names[inst])
                if value is not None:
                    pairs.append((inst, value))
        return pairs

    def _refresh_indom(self, indom: InDom) -> None:
        """Ask INDOM's refresh method for its instances.  One that fails (a source it
        cannot parse, say) is logged in one line and leaves the instances it last gave:
        like a failing cluster refresh, it must not fail the whole request."""
        if indom.refresher is not None:
            try:
                instances = indom.refresher(self)
            except Exception as exc:  # a failing source must not end the agent
                name = getattr(indom.refresher, "__name__", "?")
                self.log.error("%s: instances of %r (%s) failed: %s", self.name, indom, name, exc)
                return
            if instances is not None:
                self.set_instances(indom, instances)

    def _on_desc_req(self, pdu: DescReqPDU) -> DescPDU:
        desc = self._descs.get(pdu.pmid)
        if desc is None:
            raise PMError(PM_ERR_PMID)
        return DescPDU(desc)

    def _on_instance_req(self, pdu: InstanceReqPDU) -> InstancePDU:
        indom = self._indom_of.get(pdu.indom)
        if indom is None:
            raise PMError(PM_ERR_INDOM)
        self._refresh_indom(indom)
        instances = self._instances[indom]
        inst = pdu.inst & 0xFFFFFFFF
        if inst == PM_IN_NULL and pdu.name is None:
            return InstancePDU(pdu.indom, tuple(instances), tuple(instances.values()))
        if pdu.name is None:
            if inst not in instances:
                raise PMError(PM_ERR_INST)
            return InstancePDU(pdu.indom, (PM_IN_NULL,), (instances[inst],))
        return InstancePDU(pdu.indom, (match_instance_name(instances, pdu.name),), ("",))

    def _on_text_req(self, pdu: TextReqPDU) -> TextPDU:
        texts = None
        if self.help is not None:
            texts = (self.help.pmids if pdu.type & PM_TEXT_PMID else self.help.indoms).get(
                pdu.ident
            )
        if texts is None or not (pdu.type & (PM_TEXT_PMID | PM_TEXT_INDOM)):
            raise PMError(PM_ERR_TEXT)
        oneline, text = texts
        body = text if pdu.type & PM_TEXT_HELP else oneline
        return TextPDU(pdu.ident, body)

    def _on_result(self, pdu: ResultPDU) -> ErrorPDU:
        self.store(pdu.result)
        return ErrorPDU(0)

    def store(self, result: Result) -> None:
        """Store each value set's values through its metric's store method, in order.

        The first error ends the store: PM_ERR_PMID for an unknown metric, -EACCES
        for one that cannot be stored (seed 004, section 2.4.5 and example 2-28),
        or whatever the store method raised (values it accepted before then stay
        stored).
        """
        for vs in result.vsets:
            m = self._by_pmid.get(vs.pmid)
            if m is None:
                raise PMError(PM_ERR_PMID)
            if m.storer is None:
                raise PMError(-errno.EACCES)
            atoms = vs.atoms(m.type)
            if m.indom is None:
                if vs.numval > 0:
                    m.storer(self, atoms[0])
                continue
            self._refresh_indom(m.indom)
            for inst, value in zip(vs.insts, atoms, strict=True):
                if inst not in self._instances[m.indom]:
                    raise PMError(PM_ERR_INST)
                m.storer(self, inst, value)

    def _on_label_req(self, pdu: LabelReqPDU) -> LabelPDU:
        return LabelPDU(pdu.ident, pdu.type, self.label_sets(pdu.ident, pdu.type))

    def label_sets(self, ident: int, type_: int) -> tuple[LabelSet, ...]:
        """The label sets for a LABEL_REQ of TYPE about IDENT, as pmdaLabel answers.

        The domain's labels default to {"agent": name}; a level with no labels
        answers no set at all; instances answer one set each, empty ones included,
        for the instances the profile selects.
        """
        level = type_ & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        labels: Mapping[str, Any] = {}
        if level == PM_LABEL_DOMAIN:
            if not self.labels:
                return (domain_labels(self.name),)
            labels = self.labels
        elif level == PM_LABEL_INDOM:
            indom = self._indom_of.get(ident)
            labels = indom.labels if indom else {}
        elif level == PM_LABEL_CLUSTER:
            labels = self.cluster_labels.get(pmID_cluster(ident), {})
        elif level == PM_LABEL_ITEM:
            m = self._by_pmid.get(ident)
            labels = m.labels if m else {}
        elif level == PM_LABEL_INSTANCES:
            indom = self._indom_of.get(ident)
            if indom is None:
                return ()
            self._refresh_indom(indom)
            return tuple(
                _instance_set(inst, self.instance_labels(indom, inst, name))
                for inst, name in self._instances[indom].items()
                if self.in_profile(ident, inst)
            )
        return (LabelSet.from_dict(labels, level),) if labels else ()

    def _on_pmns(self, pdu: Any) -> Any:
        """A namespace request, which pmcd sends for names below a dynamic subtree root
        of its namespace (PCP's installed namespace has "proc.psinfo 3:*:*", say).

        An agent with `dynamic_pmns` answers from its own namespace, as pmdaTreePMID,
        pmdaTreeName and pmdaTreeChildren do; any other fails as libpcp_pmda's
        defaults do (a PMID's names: PM_ERR_PMID, anything else PM_ERR_NAME).
        """
        if not self.dynamic_pmns:
            raise PMError(PM_ERR_PMID if isinstance(pdu, PMNSIdsPDU) else PM_ERR_NAME)
        pmns = self.pmns
        if isinstance(pdu, PMNSIdsPDU):  # the names of one PMID
            if len(pdu.pmids) != 1:
                raise PMError(PM_ERR_IPC)
            return PMNSNamesPDU(tuple(pmns.names(pdu.pmids[0])))
        if isinstance(pdu, PMNSNamesPDU):  # the PMID of one name (a leaf's only)
            if len(pdu.names) != 1:
                raise PMError(PM_ERR_IPC)
            try:
                return PMNSIdsPDU(0, (pmns.lookup(pdu.names[0]),))
            except PMError:
                raise PMError(PM_ERR_NAME) from None
        if isinstance(pdu, PMNSChildPDU):  # the children of a name, relative
            kids = pmns.children(pdu.name)
            names = tuple(name for name, _ in kids)
            return PMNSNamesPDU(names, tuple(s for _, s in kids) if pdu.subtype == 1 else None)
        return PMNSNamesPDU(tuple(pmns.traverse(pdu.name)))  # every leaf at or below


def _load_pmns(path: Path, symbols: Mapping[str, int]) -> PMNS:
    """An agent's namespace file (its subtrees, as PCP ships them) under a root of its own."""
    return combined_pmns([path], symbols)


def combined_pmns(paths: Iterable[Path], symbols: Mapping[str, int]) -> PMNS:
    """Agents' namespace files under one root naming their top-level subtrees (and what
    a file's own root block names: a dynamic subtree, "mmv MMV:*:*", has no block).

    SYMBOLS gives each file's domain macro (NAME.upper() -> domain).
    """
    texts, entries = [], []
    for path in paths:
        text = path.read_text()
        own = _ROOT_BLOCK.search(text)
        if own is not None:
            entries += [line.strip() for line in own.group(1).splitlines() if line.strip()]
            text = text[: own.start()] + text[own.end() :]
        texts.append(text)
    tops = dict.fromkeys(m.group(1) for text in texts for m in _BLOCK_HEAD.finditer(text))
    root = "root {\n" + "".join(f"    {top}\n" for top in [*tops, *entries]) + "}\n"
    where = ", ".join(str(p) for p in paths)
    return PMNS.from_string("\n".join(texts) + "\n" + root, file=where, macros=symbols)


#: The first name component of each "name {" block head in a namespace file.
_BLOCK_HEAD = re.compile(r"^\s*([A-Za-z_]\w*)[\w.]*\s*\{", re.MULTILINE)
#: A namespace file's own "root { ... }" block (its entries go into the combined root).
_ROOT_BLOCK = re.compile(r"^\s*root\s*\{([^}]*)\}", re.MULTILINE)


def _instance_set(inst: int, labels: Mapping[str, Any] | None) -> LabelSet:
    """One instance's label set; an instance without labels has an empty set, as in PCP."""
    if not labels:
        return LabelSet(inst, 0, b"", ())
    return LabelSet.from_dict(labels, PM_LABEL_INSTANCES, inst=inst)


def match_instance_name(instances: Mapping[int, str], name: str) -> int:
    """pmdaInstance's lookup by name: exact, or (for a name without spaces) the first word."""
    for inst, full in instances.items():
        if full == name:
            return inst
    if " " not in name:
        for inst, full in instances.items():
            if full.split(" ", 1)[0] == name:
                return inst
    raise PMError(PM_ERR_INST)


_HANDLERS: dict[type, Callable[[Agent, Any], Any]] = {
    ErrorPDU: Agent._on_error,
    ProfilePDU: Agent._on_profile,
    AttrPDU: Agent._on_attr,
    CredsPDU: Agent._on_creds,
    FetchPDU: Agent._on_fetch,
    DescReqPDU: Agent._on_desc_req,
    InstanceReqPDU: Agent._on_instance_req,
    TextReqPDU: Agent._on_text_req,
    ResultPDU: Agent._on_result,
    LabelReqPDU: Agent._on_label_req,
    PMNSIdsPDU: Agent._on_pmns,
    PMNSNamesPDU: Agent._on_pmns,
    PMNSChildPDU: Agent._on_pmns,
    PMNSTraversePDU: Agent._on_pmns,
}

__all__ = ["DATA_DIR", "Agent", "combined_pmns"]
