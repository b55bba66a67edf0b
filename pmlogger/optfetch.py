"""The fetch groups PCP's pmlogger makes of one task's metrics, for the metadata's order.

PCP's pmlogger makes a task of the clauses sharing one interval and gives each metric of
it, in the order the configuration names them, to libpcp's optimised-fetch bundler
(src/libpcp/src/optfetch.c).  That puts the metric in the fetch group where it adds
least to a cost estimate, or in a new group, placed first, when that is cheaper.  Each
group is fetched on its own with its PMIDs highest first, and pmlogger describes the
metrics of each result in its order.  So PCP's metadata comes task by task, group by
group (the newest group first), highest PMID first.

We fetch a task's groups in one fetch, writing one record; `describe_order` gives the
order PCP's pmlogger would describe them in, so that our metadata is laid out as its is.

The estimate, with libpcp's default weights: 4 per agent domain among the group's PMIDs,
1 per domain among its instance domains, 2 per instance a metric gets without asking
(its instance domain's union of requested instances, less its own; asking for all of
an instance domain counts as 10 instances), and 15 for a new group.  A metric joins the
first group (the new one counted first) whose cost grows least.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.ids import pmID_domain

#: libpcp's default weights (optfetch.c's optcost): per PMID domain, per InDom domain, a
#: new fetch group, the instances assumed in an InDom, each instance fetched unasked.
C_PMID, C_INDOM, C_FETCH, C_INDOMSIZE, C_XTRAINST = 4, 1, 15, 10, 2

#: A request's instances: a tuple of instance ids, or None for all of them.
Instances = tuple[int, ...] | None


@dataclass(frozen=True)
class Request:
    """One metric as a configuration clause asks for it."""

    pmid: int
    indom: int
    instances: Instances = None


@dataclass
class _Group:
    """A fetch group: InDom -> PMID -> the instances each request for it asked for."""

    indoms: dict[int, dict[int, list[Instances]]] = field(default_factory=dict)

    def with_request(self, request: Request) -> _Group:
        """A copy of this group with REQUEST added."""
        copy = _Group({i: {p: list(r) for p, r in m.items()} for i, m in self.indoms.items()})
        copy.add(request)
        return copy

    def add(self, request: Request) -> None:
        metrics = self.indoms.setdefault(request.indom, {})
        metrics.setdefault(request.pmid, []).append(request.instances)

    def pmids(self) -> list[int]:
        """The group's PMIDs as PCP fetches them: highest first."""
        return sorted({p for metrics in self.indoms.values() for p in metrics}, reverse=True)

    def cost(self) -> int:
        """optfetch.c's optCost for this group."""
        pmids = self.pmids()
        cost = C_PMID * len({pmID_domain(p) for p in pmids})
        cost += C_INDOM * len({(indom >> 22) & 0x1FF for indom in self.indoms})
        for metrics in self.indoms.values():
            everything = _union(r for asked in metrics.values() for r in asked)
            for asked in metrics.values():
                cost += C_XTRAINST * _unasked(everything, _union(asked))
        return cost


def _union(requests: Iterable[Instances]) -> Instances:
    """The instances a list of requests asks for together (None: all)."""
    found: set[int] = set()
    for instances in requests:
        if instances is None:
            return None
        found.update(instances)
    return tuple(sorted(found))


def _unasked(fetched: Instances, asked: Instances) -> int:
    """optfetch.c's missinst: how many more instances FETCHED holds than ASKED."""
    if fetched is None:
        return C_INDOMSIZE - len(asked) if asked is not None and len(asked) < C_INDOMSIZE else 0
    return len(set(fetched) ^ set(asked or ()))


def fetch_groups(requests: Sequence[Request]) -> list[list[int]]:
    """The fetch groups PCP's pmlogger makes of one task's REQUESTS (in configuration
    order), newest first, each as the PMIDs it fetches in their order.

    A metric asked for again is treated as pmlogger's checks.c does within one task:
    asked for with all its instances, its earlier request is widened to all in place;
    instances asked for again are dropped, and a request left with none with them."""
    groups: list[_Group] = []
    asked: dict[int, list[Instances]] = {}  # pmid -> what the task asked for it so far
    for request in requests:
        before = asked.get(request.pmid)
        if before is not None:
            if None in before:
                continue  # all of it is asked for already
            if request.instances is None:
                for group in groups:
                    if request.pmid in group.indoms.get(request.indom, {}):
                        group.indoms[request.indom][request.pmid] = [None]
                asked[request.pmid] = [None]
                continue
            known = {i for instances in before for i in instances or ()}
            fresh = tuple(i for i in request.instances if i not in known)
            if not fresh:
                continue
            request = Request(request.pmid, request.indom, fresh)
        asked.setdefault(request.pmid, []).append(request.instances)
        # the new group is tried first, and an existing one is chosen only if cheaper
        new = _Group()
        choice, least = new, new.with_request(request).cost() + C_FETCH
        for group in groups:
            grows = group.with_request(request).cost() - group.cost()
            if grows < least:
                choice, least = group, grows
        if choice is new:
            groups.insert(0, new)
        choice.add(request)
    return [group.pmids() for group in groups]


def describe_order(tasks: Sequence[Sequence[Request]]) -> dict[int, int]:
    """PMID -> its place in the order PCP's pmlogger describes metrics at start-up: TASKS
    in the order it starts them (the "once" task first, then by first appearance)."""
    rank: dict[int, int] = {}
    for requests in tasks:
        for group in fetch_groups(requests):
            for pmid in group:
                rank.setdefault(pmid, len(rank))
    return rank
