"""The fetch groups PCP's pmlogger makes of one task's metrics: libpcp's optfetch.

PCP's pmlogger makes a task of the clauses sharing one state and interval and gives each
metric of it, in the order the configuration names them, to libpcp's optimised-fetch
bundler (src/libpcp/src/optfetch.c).  That tries the metric in a new fetch group, placed
first, and in each existing group, and keeps it where a cost estimate of the whole group
is least (pmlogger asks for the "global" scope): the first such group, the new one on a
tie.  Each group is fetched on its own, its PMIDs highest first and its instance
profile the union of what its requests name (none for an instance domain one of them
wants all of), and each fetch is one record; pmlogger describes the metrics of each
record in its order, so PCP's metadata comes task by task, group by group.

The estimate, with libpcp's default weights: 4 per agent domain among the group's PMIDs,
1 per domain among its instance domains, and for each metric 2 per instance its
instance domain's union brings in that the metric did not ask for (asking for all of an
instance domain counts as 10 instances); a new group costs 15 more.

A metric asked for again in its task is treated as pmlogger's checks.c treats it:
asked for with all its instances, its earlier request is widened to all in place;
instances asked for again are dropped, and a request left with none with them.

`OptFetch.dump` is libpcp's __pmOptFetchDump (pmlogger -D optfetch,desperate prints it
after each metric is added), with this process's object ids for the C pointers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_domain, pmIDStr, pmInDomStr

#: libpcp's default weights (optfetch.c's optcost): per PMID domain, per InDom domain, a
#: new fetch group, the instances assumed in an InDom, each instance fetched unasked.
C_PMID, C_INDOM, C_FETCH, C_INDOMSIZE, C_XTRAINST = 4, 1, 15, 10, 2

#: optfetch's state bits (libpcp.h OPT_STATE_*), and their names as statestr gives them
NEW, PMID, PROFILE, XREQ, XPMID, XINDOM, XFETCH, XPROFILE = (1 << b for b in range(8))
UMASK = NEW | PMID | PROFILE
_STATE_NAMES = ("NEW", "PMID", "PROFILE", "XREQ", "XPMID", "XINDOM", "XFETCH", "XPROFILE")

#: A request's instances: a tuple of instance ids, or None for all of them.
Instances = tuple[int, ...] | None


@dataclass(frozen=True)
class Request:
    """One metric as a configuration clause asks for it."""

    pmid: int
    indom: int
    instances: Instances = None


def _addr(obj: object) -> str:
    return f"0x{id(obj):x}"


@dataclass(eq=False)
class _Req:
    """optreq_t: one request in the structures (its instances None for all)."""

    pmid: int
    indom: int
    insts: list[int] | None
    widened: bool = False  # (its list freed by checks.c and left dangling: dumped as "[0]")

    @property
    def numinst(self) -> int:
        return 0 if self.insts is None else len(self.insts)


@dataclass(eq=False)
class _Insts:
    """An instance list as optfetch keeps one: numinst -1 (nothing yet), 0 (all) or N."""

    numinst: int = -1
    insts: list[int] | None = None  # None: C's NULL list (a widened one keeps [])

    def add(self, req: _Req) -> bool:
        """addinst: REQ's instances merged in (sorted); False if all are here already."""
        if self.numinst == 0:
            return False
        if req.insts is None:
            self.numinst, self.insts = 0, None
            return True
        merged = [] if self.numinst == -1 else list(self.insts or ())[: self.numinst]
        for inst in req.insts:
            i = 0
            while i < len(merged) and merged[i] < inst:
                i += 1
            if i < len(merged) and merged[i] == inst:
                continue
            merged.insert(i, inst)
        self.numinst, self.insts = len(merged), merged
        return True

    def missing(self, asked: _Insts) -> int:
        """missinst: how many more instances this list holds than ASKED."""
        if self.numinst == 0:
            if asked.numinst != 0 and asked.numinst < C_INDOMSIZE:
                return C_INDOMSIZE - asked.numinst
            return 0
        mine = set((self.insts or ())[: self.numinst])
        theirs = set((asked.insts or ())[: max(asked.numinst, 0)])
        return len(mine ^ theirs)


@dataclass(eq=False)
class _PmidCtl(_Insts):
    """pmidctl_t: a PMID in an instance domain's list, and its requests (newest first)."""

    pmid: int = 0
    reqs: list[_Req] = field(default_factory=list)


@dataclass(eq=False)
class _InDomCtl(_Insts):
    """indomctl_t: an instance domain in a fetch group, its PMIDs (newest first)."""

    indom: int = PM_INDOM_NULL
    pmids: list[_PmidCtl] = field(default_factory=list)


@dataclass(eq=False)
class FetchGroup:
    """fetchctl_t: one fetch group, its instance domains newest first."""

    indoms: list[_InDomCtl] = field(default_factory=list)
    pmids: list[int] = field(default_factory=list)  # as fetched: highest first
    cost: int = 0
    newcost: int = 0
    state: int = 0

    def profile(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The instance profile pmlogger sets for this group's fetch: each instance domain
        whose requests all name instances, with the union of them."""
        return tuple(
            (idp.indom, tuple((idp.insts or ())[: idp.numinst]))
            for idp in self.indoms
            if idp.indom != PM_INDOM_NULL and idp.numinst > 0
        )

    def optcost(self) -> int:
        """optfetch.c's optCost for this group."""
        pmids = [pmp for idp in self.indoms for pmp in idp.pmids]
        cost = C_PMID * len({pmID_domain(pmp.pmid) for pmp in pmids})
        cost += C_INDOM * len({(idp.indom >> 22) & 0x1FF for idp in self.indoms})
        for idp in self.indoms:
            for pmp in idp.pmids:
                cost += C_XTRAINST * idp.missing(pmp)
        return cost

    def find(self, indom: int, pmid: int) -> tuple[_InDomCtl | None, _PmidCtl | None]:
        idp = next((i for i in self.indoms if i.indom == indom), None)
        if idp is None:
            return None, None
        return idp, next((p for p in idp.pmids if p.pmid == pmid), None)

    def add_pmid(self, pmid: int) -> bool:
        """addpmid: PMID into the fetch list (highest first); False if it is there."""
        if pmid in self.pmids:
            return False
        i = 0
        while i < len(self.pmids) and self.pmids[i] > pmid:
            i += 1
        self.pmids.insert(i, pmid)
        return True

    def redo_instances(self) -> None:
        """redoinst: every instance list again from the requests."""
        for idp in self.indoms:
            idp.numinst = -1
            for pmp in idp.pmids:
                pmp.numinst = -1
                for req in pmp.reqs:
                    pmp.add(req)
                    idp.add(req)


class OptFetch:
    """One task's fetch groups (newest first), built a request at a time as PCP's are."""

    def __init__(self) -> None:
        self.groups: list[FetchGroup] = []
        self._reqs: list[_Req] = []  # the task's requests, newest first (pmlogger's hash)
        self.trace: list[str] = []  # __pmOptFetchAdd's -D optfetch,desperate lines, if kept
        self.tracing = False

    def request(self, request: Request) -> bool:
        """REQUEST (checked as checks.c checks one within its task) into the groups: True
        if it was added (not dropped, nor merged into an earlier request)."""
        mine = [r for r in self._reqs if r.pmid == request.pmid]
        if request.instances is None:
            if mine:  # chk_all: the task has it; the request found is widened to all
                self._widen(mine[0])
                return False
            insts = None
        else:  # chk_one for each instance: one some request covers is dropped
            insts = [i for i in request.instances if not any(_covers(r, i) for r in mine)]
            if not insts:
                return False
        req = _Req(request.pmid, request.indom, insts)
        self._add(req)
        self._reqs.insert(0, req)
        return True

    def requests(self) -> list[Request]:
        """The task's requests as they stand, the oldest first."""
        return [
            Request(r.pmid, r.indom, None if r.insts is None else tuple(r.insts))
            for r in reversed(self._reqs)
        ]

    def _widen(self, req: _Req) -> None:
        if req.insts is None:
            return
        group = next(
            g for g in self.groups if any(req in p.reqs for i in g.indoms for p in i.pmids)
        )
        idp, _ = group.find(req.indom, req.pmid)
        if idp is not None and idp.numinst > 0:
            idp.numinst, idp.insts = 0, []  # (C frees the list and leaves it dangling)
        req.insts, req.widened = None, True

    def _add(self, req: _Req) -> None:
        """__pmOptFetchAdd, with pmlogger's global scope."""
        fresh = FetchGroup()
        self.groups.insert(0, fresh)
        trials = []
        for j, fp in enumerate(self.groups):
            fp.cost = fp.optcost()
            idp, pmp = fp.find(req.indom, req.pmid)
            change = XREQ if pmp is not None else (XPMID | XREQ if idp else XINDOM | XPMID | XREQ)
            if fp is fresh:
                change |= XFETCH
            fp.state = (fp.state & UMASK) | change
            if idp is None:
                idp = _InDomCtl(indom=req.indom)
                fp.indoms.insert(0, idp)
            if pmp is None:
                pmp = _PmidCtl(pmid=req.pmid)
                idp.pmids.insert(0, pmp)
            pmp.add(req)
            if idp.add(req):
                fp.state |= XPROFILE
            fp.newcost = fp.optcost() + (C_FETCH if fp is fresh else 0)
            trials.append((fp, idp, pmp))
            self._say(
                f"__pmOptFetchAdd: [{j}] fp={_addr(fp)} cost={fp.cost}, newcost={fp.newcost}"
                f" for {pmIDStr(req.pmid)}, state {_state(fp.state)}"
            )
        chosen = min(range(len(trials)), key=lambda k: (trials[k][0].newcost, k))
        tfp = trials[chosen][0]
        self._say(
            f"__pmOptFetchAdd: choose [{chosen}] fp={_addr(tfp)}, global cost={tfp.newcost}"
            f" for {pmIDStr(req.pmid)} change {_state(tfp.state)}"
        )
        for fp, idp, pmp in trials:
            if fp is tfp:
                self._say("__pmOptFetchAdd: chosen one is OK")
                if fp.state & XFETCH:
                    fp.state |= NEW
                if fp.add_pmid(req.pmid):
                    fp.state |= PMID
                if fp.state & XPROFILE:
                    fp.state |= PROFILE
                pmp.reqs.insert(0, req)
                fp.cost = fp.newcost
                fp.state &= UMASK
                continue
            if fp.state & XPMID:
                idp.pmids.remove(pmp)
            if fp.state & XINDOM:
                fp.indoms.remove(idp)
            if fp.state & XFETCH:
                self.groups.remove(fp)
            else:
                fp.redo_instances()
                fp.state &= UMASK

    def _say(self, line: str) -> None:
        if self.tracing:
            self.trace.append(line + "\n")

    def dump(self) -> str:
        """__pmOptFetchDump of the groups."""
        out = []
        for k, fp in enumerate(self.groups):
            nxt = _addr(self.groups[k + 1]) if k + 1 < len(self.groups) else "(nil)"
            out.append(f"Dump optfetch structures from {_addr(fp)} next={nxt}\n")
            out.append(f"Fetch Control @ {_addr(fp)}: cost={fp.cost} state={_state(fp.state)}\n")
            out.append(_list("PMIDs", len(fp.pmids), [pmIDStr(p) for p in fp.pmids]))
            for idp in fp.indoms:
                out.append(f"  InDom {pmInDomStr(idp.indom)} Control @ {_addr(idp)}:\n")
                out.append(_list("  instances", idp.numinst, idp.insts))
                for pmp in idp.pmids:
                    out.append(f"    PMID {pmIDStr(pmp.pmid)} Control @ {_addr(pmp)}:\n")
                    out.append(_list("    instances", pmp.numinst, pmp.insts))
                    for req in pmp.reqs:
                        out.append(f"      Request @ {_addr(req)}:\n")
                        insts = [] if req.widened else req.insts
                        out.append(_list("      instances", req.numinst, insts))
            out.append("\n")
        return "".join(out)


def _covers(req: _Req, inst: int) -> bool:
    return req.insts is None or inst in req.insts


def _state(state: int) -> str:
    return "".join(f"{name} " for b, name in enumerate(_STATE_NAMES) if state & (1 << b))


def _list(tag: str, count: int, items: Sequence[object] | None) -> str:
    """optfetch.c's dumplist: TAG, the count, then the items (or "(nil)")."""
    if items is None:
        return f"{tag}: [{count}] (nil)\n"
    return f"{tag}: [{count}]" + "".join(f" {i}" for i in list(items)[: max(count, 0)]) + "\n"


def fetch_groups(requests: Sequence[Request]) -> list[list[int]]:
    """The fetch groups PCP's pmlogger makes of one task's REQUESTS (in configuration
    order), newest first, each as the PMIDs it fetches in their order."""
    plan = OptFetch()
    for request in requests:
        plan.request(request)
    return [list(group.pmids) for group in plan.groups]


def describe_order(tasks: Sequence[Sequence[Request]]) -> dict[int, int]:
    """PMID -> its place in the order PCP's pmlogger describes metrics at start-up: TASKS
    in the order it starts them (the "once" task first, then by first appearance)."""
    return rank_of([fetch_groups(requests) for requests in tasks])


def rank_of(tasks: Sequence[Sequence[Sequence[int]]]) -> dict[int, int]:
    """PMID -> its place among TASKS' fetch groups' PMIDs, in turn."""
    rank: dict[int, int] = {}
    for groups in tasks:
        for group in groups:
            for pmid in group:
                rank.setdefault(pmid, len(rank))
    return rank
