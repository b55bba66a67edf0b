"""PMAPI contexts: where a client's metrics come from, and the operations on them.

``Context.host("localhost")`` talks to a pmcd; ``Context.local()`` loads the
Python agents of pmcd.conf into this process and asks them directly (PCP's
PM_CONTEXT_LOCAL, the tools' -L).  Both answer the same calls: names and PMIDs,
descriptors, instances, help text, labels, profiles, fetch and store.  A host
context whose pmcd went away reconnects on the next call, as pmReconnectContext
would.  ``AsyncContext`` has the same calls for trio code, each awaited.

The protocol lives in pmapi.requests as generators; a context only moves their
PDUs, so the synchronous and the trio flavours cannot drift apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .desc import Desc
from .errors import (
    PM_ERR_IPC,
    PM_ERR_NAME,
    PM_ERR_NOTCONN,
    PM_ERR_PMID,
    PMError,
)
from .ids import DYNAMIC_PMID, PM_ID_NULL, pmID_domain, pmID_item
from .labels import PM_LABEL_CLUSTER, PM_LABEL_DOMAIN, PM_LABEL_ITEM, LabelSet
from .pdu.constants import PDU_FLAG_DESCS, PDU_FLAG_HIGHRES
from .pmns import PMNS
from .profile import Profile
from .values import Result, Timestamp

#: -EBADF, -EPIPE: what pmFetch reports as PM_ERR_IPC (libpcp's __pmMapErrno)
_LOST_LINK = frozenset((-9, -32))

# (pmapi.requests, the protocol's exchanges, is imported where an exchange is made: an
# archive context never makes one, and never loads the PDU layer it would bring in)
if TYPE_CHECKING:
    from .derived.context import DerivedMetrics
    from .derived.registry import Registry

_handles = itertools.count()
#: The label levels that belong to a metric (a derived one has none of them).
_ITEM_LEVELS = PM_LABEL_DOMAIN | PM_LABEL_CLUSTER | PM_LABEL_ITEM


class Source(Protocol):
    """Somewhere PDUs go and answers come from: a pmcd connection or local agents."""

    kind: str  # "host" or "local"
    hostname: str
    features: int
    generation: int  # bumped on each (re)connection: the profile must be sent again
    changes: int  # PMCD_* state-change bits pmcd has reported and nobody has read


@dataclass(frozen=True)
class Fetched:
    """A fetch's answer: the raw pmResult, and typed values per metric.

    descs is shared by every fetch of the same metrics: read it, never change it.
    """

    result: Result
    descs: dict[int, Desc | None]

    @property
    def timestamp(self) -> Timestamp:
        return self.result.timestamp

    @property
    def seconds(self) -> float:
        """The timestamp as float seconds since the epoch."""
        return float(self.result.timestamp)

    def error(self, pmid: int) -> int:
        """PMID's error code in this result (0 if it has values or none)."""
        for vset in self.result.vsets:
            if vset.pmid == pmid:
                return min(vset.numval, 0)
        raise KeyError(pmid)

    def values(self, pmid: int) -> dict[int, Any]:
        """{instance id: value} for PMID, typed by its descriptor; PMError if it failed."""
        for vset in self.result.vsets:
            if vset.pmid == pmid:
                if vset.numval < 0:
                    raise PMError(vset.numval)
                desc = self.descs.get(pmid)
                atoms = vset.atoms(desc.type if desc is not None else None)
                return dict(zip(vset.insts, atoms, strict=True))
        raise KeyError(pmid)


class BaseContext:
    """The PMAPI calls every kind of context answers (host, local, archive), each one
    exchange run by the subclass's ``_run``; a subclass may answer the ``_real_*`` ones
    itself (an archive context reads its metadata)."""

    source: Any
    pmns: PMNS | None

    def __init__(self, source: Any, pmns: PMNS | None = None) -> None:
        self.source = source
        self.pmns = pmns  # a local namespace (-n FILE) answers name calls instead of pmcd
        self.handle = next(_handles)
        self.profile = Profile()
        self._profile_generation = -1
        self._descs: dict[int, Desc | None] = {}
        #: A fetch's descriptors, per list of PMIDs fetched (repeated fetches reuse them).
        self._fetch_descs: dict[tuple[int, ...], dict[int, Desc | None]] = {}
        #: Derived metrics, bound on first use (False: this kind of context has none).
        self._derived: DerivedMetrics | bool | None = None
        self._registry: Registry | None = None
        #: Where derived metrics' semantic errors go when first met (None: stderr).
        self.derived_err: Any = None

    def _run(self, op: Generator) -> Any:
        raise NotImplementedError

    # -- names ---------------------------------------------------------------------------

    def lookup_names(self, names: Sequence[str]) -> list[int]:
        """pmLookupName: PMIDs of NAMES (PM_ID_NULL for unknown ones, unless only one)."""
        return self._run(self._lookup_op(names))

    def _lookup_op(self, names: Sequence[str]) -> Generator:
        """As libpcp looks names up: the namespace first, then derived metrics for the
        names it lacks; so a lookup of real names never loads the derived definitions."""
        unknown: PMError | None = None
        try:
            found = yield from self._names_op(names)
        except PMError as exc:
            if exc.code != PM_ERR_NAME or len(names) != 1:
                raise
            found, unknown = [PM_ID_NULL], exc
        if PM_ID_NULL in found:
            dm = self.derived()
            if dm is not None:
                found = [
                    pmid if pmid != PM_ID_NULL else (dm.pmid(name) or PM_ID_NULL)
                    for name, pmid in zip(names, found, strict=True)
                ]
            if unknown is not None and found[0] == PM_ID_NULL:
                raise unknown  # the namespace's own answer for the one name asked
        return list(found)

    def _real_lookup_names(self, names: Sequence[str]) -> list[int]:
        """pmLookupName of real metrics only, PM_ID_NULL for every unknown name."""
        if len(names) == 1:
            try:
                return self._run(self._names_op(names))
            except PMError as exc:
                if exc.code != PM_ERR_NAME:
                    raise
                return [PM_ID_NULL]
        return self._run(self._names_op(names))

    def lookup_name(self, name: str) -> int:
        """The PMID of NAME; PMError(PM_ERR_NAME) if there is none."""
        return self._run(_first(self._lookup_op([name])))

    def _names_op(self, names: Sequence[str]) -> Generator:
        if self.pmns is not None:
            return _answered(self._local_lookup, names)
        from . import requests

        return requests.lookup_names(names, self.handle)

    def name_all(self, pmid: int) -> list[str]:
        """pmNameAll: every name of PMID."""
        dm = self.derived_among((pmid,))
        if dm is not None and dm.is_derived(pmid):
            return [dm.name(pmid)]  # type: ignore[list-item]
        if self.pmns is not None:
            return self._run(_answered(self._local_names, pmid))
        from . import requests

        return self._run(requests.name_all(pmid, self.handle))

    def children(self, name: str) -> list[tuple[str, bool]]:
        """pmGetChildrenStatus: (child, is_leaf) for each child of NAME ("" is the root)."""
        dm = self.derived()
        if dm is None:
            return self._real_children(name)
        extra = dm.children(name)
        try:
            real = self._real_children(name)
        except PMError as exc:
            if exc.code != PM_ERR_NAME or not extra:
                raise
            real = []
        have = {child for child, _ in real}
        return real + [(child, leaf) for child, leaf in extra if child not in have]

    def _real_children(self, name: str) -> list[tuple[str, bool]]:
        return self._run(self._children_op(name))

    def _children_op(self, name: str) -> Generator:
        from . import requests

        if self.pmns is not None and not self._agent_names(name):
            return _answered(self._local_children, name)
        return requests.children(name, self.handle)

    def _agent_names(self, name: str) -> bool:
        """Whether NAME's children come from its agent though a namespace was loaded (-n):
        in a local context, at or below a dynamic subtree's root, as libpcp asks the DSO."""
        source = self.source
        if source is None or source.kind != "local" or self.pmns is None:
            return False
        return self.pmns.find_dynamic_root(name) is not None

    def _children_walk_op(self, name: str) -> Generator:
        """The leaves at or below NAME by asking each non-leaf for its children, depth
        first, as libpcp's TraversePMNS_local does for a local context: a dynamic
        subtree's names come from its agent in the order its children are given."""
        children = yield from self._children_op(name)
        if not children:
            return [name] if name else []
        leaves: list[str] = []
        for child, leaf in children:
            full = f"{name}.{child}" if name else child
            leaves.extend([full] if leaf else (yield from self._children_walk_op(full)))
        return leaves

    def traverse(self, name: str) -> list[str]:
        """pmTraversePMNS: the leaf names at or below NAME ("" for all)."""
        real = self._real_before_derived(name)
        if real == [name]:
            return real
        if self.derived() is None:  # (an AsyncContext's call gives an awaitable)
            return self._real_traverse(name)
        return list(self._walk(name, real))

    def walk(self, name: str) -> Iterator[str]:
        """traverse(NAME) one name at a time, as pmTraversePMNS calls back: from a pmcd's
        namespace, its names, then the derived ones below NAME that bind in this context
        (each bound only then, its semantic error reported then, as libpcp's
        __dmtraverse); from a local namespace (-n, an archive's, a local context's), the
        derived names in their places in the tree, unbound.  A NAME that is one real
        metric is just that: the derived definitions are not loaded for it (no derived
        metric can sit below a leaf, and none may take a real metric's name)."""
        real = self._real_before_derived(name)
        if real == [name]:
            yield name
            return
        yield from self._walk(name, real)

    def _walk(self, name: str, real: list[str] | None) -> Iterator[str]:
        """walk(NAME), REAL being NAME's real leaves when already asked (else None)."""
        dm = self.derived()
        if dm is None:
            yield from self._real_traverse(name)
            return
        if self.pmns is None and self.kind == "host":
            if real is None:
                try:
                    real = self._real_traverse(name)
                except PMError as exc:
                    if exc.code != PM_ERR_NAME:
                        raise
                    real = []
            yield from real
            extra = dm.bound_leaves(name)
            if not real and not extra:
                raise PMError(PM_ERR_NAME)
            yield from extra
            return
        extra = dm.leaves(name)
        try:
            real = self._real_traverse(name)
        except PMError as exc:
            if exc.code != PM_ERR_NAME or not extra:
                raise
            real = []
        yield from _merged_leaves(real, extra)

    def _real_before_derived(self, name: str) -> list[str] | None:
        """NAME's real leaves ([] for none), asked before the derived definitions are
        loaded, so that a NAME that is one real metric never loads them (a traversal of
        it needs none: no derived metric can sit below a leaf, and none may take a real
        metric's name).  None once they are loaded anyway, or for the whole namespace."""
        if self._derived is not None or not name:
            return None
        try:
            return self._real_traverse(name)
        except PMError as exc:
            if exc.code != PM_ERR_NAME:
                raise
            return []

    def _real_traverse(self, name: str) -> list[str]:
        if self.source is not None and self.source.kind == "local":
            return self._run(self._children_walk_op(name))
        if self.pmns is not None:
            return self._run(_answered(self.pmns.traverse, name))
        from . import requests

        return self._run(requests.traverse(name, self.handle))

    def _local_lookup(self, names: Sequence[str]) -> list[int]:
        pmids = []
        for name in names:
            try:
                pmids.append(self.pmns.lookup(name))  # type: ignore[union-attr]
            except PMError:
                if len(names) == 1:
                    raise
                pmids.append(PM_ID_NULL)
        return pmids

    def _local_names(self, pmid: int) -> list[str]:
        names = self.pmns.names(pmid)  # type: ignore[union-attr]
        if not names:
            raise PMError(PM_ERR_PMID)
        return list(names)

    def _local_children(self, name: str) -> list[tuple[str, bool]]:
        return [(child, status == 0) for child, status in self.pmns.children(name)]  # type: ignore[union-attr]

    # -- metadata ------------------------------------------------------------------------

    def lookup_desc(self, pmid: int) -> Desc:
        """pmLookupDesc."""
        dm = self.derived_among((pmid,))
        if dm is not None and dm.is_derived(pmid):
            return dm.desc(pmid)
        return self._real_lookup_desc(pmid)

    def _real_lookup_desc(self, pmid: int) -> Desc:
        return self._run(self._desc_op(pmid))

    def _desc_op(self, pmid: int) -> Generator:
        from . import requests

        desc = yield from requests.lookup_desc(pmid, self.handle)
        self._descs[pmid] = desc
        return desc

    def _describe_each(self, pmids: Sequence[int]) -> Generator:
        """pmLookupDesc of each of PMIDS, None for those that fail (the fetch says why)."""
        for pmid in pmids:
            try:
                yield from self._desc_op(pmid)
            except PMError:
                self._descs[pmid] = None

    def lookup_descs(self, pmids: Sequence[int]) -> list[Desc | None]:
        """pmLookupDescs: descriptors of PMIDS, None for those pmcd does not know."""
        dm = self.derived_among(pmids)
        if dm is None or not any(dm.is_derived(p) for p in pmids):
            return self._real_lookup_descs(pmids)
        real = [p for p in pmids if not dm.is_derived(p)]
        found = iter(self._real_lookup_descs(real) if real else [])
        out: list[Desc | None] = []
        for pmid in pmids:
            if not dm.is_derived(pmid):
                out.append(next(found))
            elif (bound := dm.bound(pmid)) is not None:
                out.append(bound.desc)
            else:
                dm.report(pmid)
                out.append(None)
        return out

    def _real_lookup_descs(self, pmids: Sequence[int]) -> list[Desc | None]:
        return self._run(self._descs_op(pmids))

    def _descs_op(self, pmids: Sequence[int]) -> Generator:
        from . import requests

        batched = bool(self.source.features & PDU_FLAG_DESCS)
        descs = yield from requests.lookup_descs(pmids, self.handle, batched)
        self._descs.update(zip(pmids, descs, strict=True))
        return descs

    def instances(self, indom: int) -> list[tuple[int, str]]:
        """pmGetInDom: (instance id, name) pairs of INDOM."""
        from . import requests

        return self._run(requests.instances(indom, self.handle))

    def instance_name(self, indom: int, inst: int) -> str:
        """pmNameInDom."""
        from . import requests

        return self._run(requests.instance_name(indom, inst, self.handle))

    def instance_id(self, indom: int, name: str) -> int:
        """pmLookupInDom."""
        from . import requests

        return self._run(requests.instance_id(indom, name, self.handle))

    def text(
        self, ident: int, help: bool = False, indom: bool = False, direct: bool = False
    ) -> str:
        """pmLookupText (or pmLookupInDomText with indom=True): one-line text, or full help.

        Empty help falls back to the one-line text unless DIRECT (PM_TEXT_DIRECT).
        """
        dm = None if indom else self.derived_among((ident,))
        if dm is not None and dm.is_derived(ident):
            return dm.text(ident, help, direct)
        return self._real_text(ident, help, indom, direct)

    def _real_text(self, ident: int, help: bool, indom: bool, direct: bool) -> str:
        from . import requests

        return self._run(requests.text(ident, help, indom, self.handle, direct))

    def labels(self, ident: int, kind: int) -> tuple[LabelSet, ...]:
        """The label sets at one PM_LABEL_* level for IDENT (pmGetItemLabels and friends)."""
        dm = self.derived_among((ident,)) if kind & _ITEM_LEVELS else None
        if dm is not None and dm.is_derived(ident):
            return ()  # (a derived metric has no labels of its own)
        return self._real_labels(ident, kind)

    def _real_labels(self, ident: int, kind: int) -> tuple[LabelSet, ...]:
        from . import requests

        return self._run(requests.labels(ident, kind, self.handle))

    # -- values --------------------------------------------------------------------------

    def fetch(self, pmids: Sequence[int]) -> Fetched:
        """pmFetch: the values of PMIDS now, typed by their descriptors (and, with -D
        fetch, what it gave told on stderr as libpcp tells it: pmapi.debug)."""
        from . import debug

        if not debug.enabled:
            return self._fetch(pmids)
        self.source.fetch_news = 0
        try:
            fetched = self._fetch(pmids)
        except PMError as exc:
            debug.fetch_outcome(None, exc.code, 0, {}, self.name_all, self.instance_name)
            raise
        news = getattr(self.source, "fetch_news", 0)
        result, descs = fetched.result, fetched.descs
        debug.fetch_outcome(result, 0, news, descs, self.name_all, self.instance_name)
        return fetched

    def _fetch(self, pmids: Sequence[int]) -> Fetched:
        dm = self.derived_among(pmids)
        if dm is None or not any(dm.is_derived(p) for p in pmids):
            return self._real_fetch(pmids)
        operands = dm.operands(pmids)
        fetched = self._real_fetch(operands) if operands else self._fetch_nothing()
        result, descs = dm.fetch_result(pmids, fetched.result, fetched.descs)
        return Fetched(result, descs)

    def _real_fetch(self, pmids: Sequence[int]) -> Fetched:
        try:
            return self._run(self._fetch_op(pmids))
        except PMError as exc:
            if exc.code in _LOST_LINK:  # (__pmMapErrno: a connection gone is an IPC failure)
                raise PMError(PM_ERR_IPC) from None
            raise

    def _fetch_nothing(self) -> Fetched:
        """A fetch of no real metrics (derived ones of constants, or that failed): now."""
        return Fetched(Result(Timestamp.now(), ()), {})

    def _fetch_op(self, pmids: Sequence[int]) -> Generator:
        from . import requests

        key = tuple(pmids)
        descs = self._fetch_descs.get(key)
        if descs is None:  # (a new list of metrics: describe the ones not yet described)
            unknown = [pmid for pmid in dict.fromkeys(pmids) if pmid not in self._descs]
            if unknown:
                try:
                    yield from self._descs_op(unknown)
                except PMError:  # (one PMID cannot be described: the others still can)
                    yield from self._describe_each(unknown)
            descs = {pmid: self._descs.get(pmid) for pmid in pmids}
            if None not in descs.values():  # (a later lookup may still describe one)
                if len(self._fetch_descs) >= 64:
                    self._fetch_descs.clear()
                self._fetch_descs[key] = descs
        source = self.source
        profile = None
        if self.profile.changed or self._profile_generation != source.generation:
            profile = self.profile.pdu(self.handle, self.handle)
        highres = bool(source.features & PDU_FLAG_HIGHRES)
        result = yield from requests.fetch(pmids, self.handle, self.handle, profile, highres)
        if profile is not None:
            self.profile.changed = False
            self._profile_generation = source.generation
        return Fetched(result, descs)

    def store(self, result: Result) -> None:
        """pmStore: set the values in RESULT (its timestamp is ignored)."""
        from . import requests

        return self._run(requests.store(result, self.handle))

    # -- derived metrics -----------------------------------------------------------------

    def use_registry(self, registry: Registry) -> None:
        """Take derived metrics from REGISTRY instead of the process's (pmLoadDerivedConfig's)."""
        self._registry = registry
        self._derived = None

    def derived(self) -> DerivedMetrics | None:
        """This context's derived metrics (bound on first use), None where there are none."""
        dm = self._derived
        if dm is None:
            from .derived.context import DerivedMetrics, RealCalls
            from .derived.registry import default_registry

            real = RealCalls(
                self._real_lookup_names,
                self._real_lookup_descs,
                self._instance_name_at,
                self._instance_id_at,
            )
            registry = self._registry or default_registry()
            dm = self._derived = DerivedMetrics(registry, real, self.derived_err)
        return dm or None

    def derived_among(self, pmids: Iterable[int]) -> DerivedMetrics | None:
        """derived() when any of PMIDS is in the derived metrics' PMID space (domain
        DYNAMIC_PMID, item not 0), else None without loading the definitions: a tool
        that only asks about real metrics never pays for parsing them."""
        if any(pmID_domain(p) == DYNAMIC_PMID and pmID_item(p) for p in pmids):
            return self.derived()
        return None

    def _instance_name_at(self, indom: int, inst: int, stamp_ns: int) -> str:
        """pmNameInDom as at STAMP_NS (an archive context's instance domain then)."""
        return self.instance_name(indom, inst)

    def _instance_id_at(self, indom: int, name: str, stamp_ns: int) -> int:
        return self.instance_id(indom, name)

    # -- the context ---------------------------------------------------------------------

    def changes(self) -> int:
        """The PMCD_* state changes pmcd reported since the last call (then forgotten)."""
        changes, self.source.changes = self.source.changes, 0
        return changes

    @property
    def kind(self) -> str:
        return self.source.kind

    @property
    def hostname(self) -> str:
        """The host the metrics come from (pmGetContextHostName)."""
        return self.source.hostname


def _merged_leaves(real: Sequence[str], derived: Sequence[str]) -> list[str]:
    """REAL leaves (pmcd's order, kept) with DERIVED ones placed as libpcp's namespace has
    them: after the last name below their deepest existing parent (the end if none),
    grouped by their own parents, in a real leaf's place below it, and left out below
    a derived leaf."""
    if not derived:
        return list(real)
    tree: dict[str, dict] = {}
    taken: set[str] = set()
    for name in derived:  # (derived names in groups, as libpcp's namespace holds them)
        parts = name.split(".")
        if any(".".join(parts[:i]) in taken for i in range(1, len(parts))):
            continue
        taken.add(name)
        node = tree
        for part in parts:
            node = node.setdefault(part, {})
    grouped: list[str] = []

    def walk(node: dict, prefix: str) -> None:
        for part, below in node.items():
            name = f"{prefix}.{part}" if prefix else part
            if below:
                walk(below, name)
            else:
                grouped.append(name)

    walk(tree, "")
    out = list(real)
    for name in grouped:
        parts = name.split(".")
        for depth in range(len(parts) - 1, 0, -1):
            parent = ".".join(parts[:depth])
            if parent in out:  # (a real leaf: the derived name takes its place)
                out[out.index(parent)] = name
                break
            below = [k for k, n in enumerate(out) if n.startswith(parent + ".")]
            if below:
                out.insert(below[-1] + 1, name)
                break
        else:
            out.append(name)
    return out


def _answered(call: Callable[..., Any], *args: Any) -> Generator:
    """An exchange that sends nothing: CALL answers it locally."""
    return call(*args)
    yield  # pragma: no cover - makes this a generator


async def _driven(op: Generator, exchange: Callable[[Any], Any]) -> Any:
    """OP's answer, each PDU it yields sent with the awaitable EXCHANGE."""
    from . import requests

    try:
        request = next(op)
        while True:
            pdu = request.pdu if isinstance(request, requests.NoReply) else request
            request = op.send(await exchange(pdu))
    except StopIteration as stop:
        return stop.value


def _first(op: Generator) -> Generator:
    pmids = yield from op
    if pmids[0] == PM_ID_NULL:
        raise PMError(PM_ERR_NAME)
    return pmids[0]


#: the entry-point group naming what answers a local context (PM_CONTEXT_LOCAL)
LOCAL_SOURCE_GROUP = "purepcp.local"


def local_source_class() -> Any:
    """What runs a local context's agents, as the installed distribution names it.

    The client core knows no daemon: the package that can run agents in-process the
    way pmcd does (ours is pmcd.local's LocalSource) offers itself under the entry-point
    group LOCAL_SOURCE_GROUP, and a context looks it up by that name.
    """
    from importlib.metadata import entry_points

    for point in entry_points(group=LOCAL_SOURCE_GROUP):
        return point.load()
    raise PMError(PM_ERR_NOTCONN, "no local context: nothing installed runs agents in-process")


class Context(BaseContext):
    """A synchronous PMAPI context: ``with Context.host("localhost") as ctx: ...``."""

    @classmethod
    def host(cls, spec: str = "local:", pmns: PMNS | None = None) -> Context:
        """A context on the pmcd at SPEC (HOST, HOST:PORT, unix:PATH or local:)."""
        from .host import HostSource

        return cls(HostSource(spec), pmns)

    @classmethod
    def local(
        cls, changes: Iterable[str] = (), pmns: PMNS | None = None, config: str | None = None
    ) -> Context:
        """A context on this process's own agents (pmcd.conf's, edited by -K CHANGES)."""
        return cls(local_source_class().start(list(changes), config), pmns)

    def _run(self, op: Generator) -> Any:
        from . import requests

        source = self.source
        if self.source is not None and self.source.kind == "host":
            source.ensure()
        try:
            request = next(op)
            while True:
                pdu = request.pdu if isinstance(request, requests.NoReply) else request
                reply = source.exchange(pdu)
                request = op.send(reply)
        except StopIteration as stop:
            return stop.value

    def can_run_async(self) -> bool:
        """Whether run_async may be used now: a host context with its connection open."""
        source = self.source
        return source.kind == "host" and getattr(source, "connection", None) is not None

    async def run_async(self, op: Generator) -> Any:
        """Run one of this context's exchanges (e.g. ``_fetch_op``) from trio code, on
        its connection (see can_run_async), without a worker thread."""
        return await _driven(op, self.source.exchange_async)

    async def fetch_async(self, pmids: Sequence[int]) -> Fetched:
        """fetch() from trio code, for real metrics only (derived ones are evaluated by
        blocking calls: fetch them with fetch() in a worker thread)."""
        return await self.run_async(self._fetch_op(pmids))

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncContext(BaseContext):
    """A PMAPI context for trio code: every call is awaited.

    ``async with await AsyncContext.host("localhost") as ctx: await ctx.fetch(...)``
    """

    @classmethod
    async def host(cls, spec: str = "local:", pmns: PMNS | None = None) -> AsyncContext:
        from .host import AsyncHostSource

        source = AsyncHostSource(spec)
        await source.connect()
        return cls(source, pmns)

    @classmethod
    async def local(
        cls, changes: Iterable[str] = (), pmns: PMNS | None = None, config: str | None = None
    ) -> AsyncContext:
        import trio

        start = local_source_class().start
        source = await trio.to_thread.run_sync(start, list(changes), config)
        return cls(source, pmns)

    def fetch(self, pmids: Sequence[int]) -> Any:  # type: ignore[override]
        """pmFetch, awaited (no -D fetch trace: trio's callers are daemons)."""
        return self._fetch(pmids)

    def derived(self) -> None:
        """No derived metrics in trio contexts (yet): their calls are the real ones."""
        return None

    def _real_before_derived(self, name: str) -> None:  # type: ignore[override]
        return None  # (its traverse is the real one already)

    async def _run(self, op: Generator) -> Any:  # type: ignore[override]
        source = self.source
        exchange = getattr(source, "exchange_async", None) or source.exchange
        if source.kind == "host":
            await source.ensure()
        return await _driven(op, exchange)

    async def aclose(self) -> None:
        closer = getattr(self.source, "aclose", None)
        if closer is not None:
            await closer()
        else:
            self.source.close()

    async def __aenter__(self) -> AsyncContext:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
