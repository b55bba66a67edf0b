"""What pmlc may see and change: each metric's (and instance's) logging state.

PCP's pmlogger keeps, for every metric of its configuration, one request per task (a
state and an interval: mandatory or advisory, on or off) naming all of the metric's
instances or a list of them; pmlc's LOG_CONTROL asks for the state of some metrics
(enquire) or moves them to another task.  The rules are dopdu.c's:

* mandatory requests always win; an advisory one is refused where a mandatory state
  is set (on or off), and "mandatory maybe" lifts the mandatory state, leaving
  advisory control, which "advisory off" removes altogether;
* a metric logged for all its instances cannot take a request for some of them;
* a state and interval already a task's joins that task, else a new task starts
  (logging one interval from now).

The answer gives for each metric instance a word: on, mandatory, the interval, and
whether it is in the archive and had a value at its last fetch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from purepcp.pmapi.errors import PM_ERR_PMID, PMError
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.pdu import logcontrol as lc
from purepcp.pmapi.values import Result

from .logger import Group, Logger
from .optfetch import OptFetch, Request


@dataclass(eq=False)
class Entry:
    """One request (PCP's optreq): a metric, all its instances (None) or some, a task."""

    pmid: int
    indom: int
    insts: list[int] | None
    task: Group


@dataclass(frozen=True)
class _Want:
    """The state a request asks for."""

    on: bool
    mandatory: bool
    maybe: bool

    @property
    def drops(self) -> bool:
        """Advisory off and mandatory maybe leave no request behind."""
        return self.maybe or (not self.mandatory and not self.on)

    def allowed_over(self, task: Group) -> bool:
        """update_ok: only a mandatory (or maybe) request overrides a mandatory state."""
        return self.mandatory or self.maybe or not task.mandatory


def _signed(inst: int) -> int:
    return inst - (1 << 32) if inst >= 1 << 31 else inst


def _u(inst: int) -> int:
    """An instance as the logger keeps it (PM_IN_NULL is 0xFFFFFFFF)."""
    return inst & 0xFFFFFFFF


class LogState:
    """The logger's requests, by metric, and LOG_CONTROL's work on them."""

    def __init__(self, logger: Logger) -> None:
        self.logger = logger
        self.entries: dict[int, list[Entry]] = {}
        for task in logger.tasks:
            for req in task.plan.requests():
                insts = None if req.instances is None else list(req.instances)
                self.entries.setdefault(req.pmid, []).append(
                    Entry(req.pmid, req.indom, insts, task)
                )

    # -- lookups ------------------------------------------------------------------------------

    def find(self, pmid: int, inst: int) -> Entry | None:
        """findoptreq: the request for one instance (one naming it, else an all-instances one)."""
        every = None
        for e in self.entries.get(pmid, ()):
            if e.insts is None:
                every = e
            elif inst in e.insts:
                return e
        return every

    def value(self, pmid: int, inst: int) -> int:
        """The state word of one metric instance."""
        e = self.find(pmid, inst)
        on = mandatory = False
        delta = 0
        if e is not None:
            on, mandatory = e.task.on, e.task.mandatory
            if on and e.task.interval_ns is not None:
                delta = e.task.interval_ns // 1_000_000
        seen = self.logger.history.get(pmid)
        inlog = avail = False
        if seen:
            if (e is not None and e.indom == PM_INDOM_NULL) or inst == PM_IN_NULL:
                inlog, avail = True, next(iter(seen.values()))
            elif inst in seen:
                inlog, avail = True, seen[inst]
        return lc.state_value(on, mandatory, delta, inlog, avail)

    # -- LOG_CONTROL ----------------------------------------------------------------------

    def control(self, request: lc.LogControl, client: str, log: TextIO) -> Result:
        """Do REQUEST (or answer an enquiry): the answer, each metric's states."""
        changing = request.control in (lc.PM_LOG_MANDATORY, lc.PM_LOG_ADVISORY)
        if changing:
            self._tell(request, client, log)
            self._change(request)
        answers = []
        for pmid, insts in request.metrics:
            if changing:
                log.write("  metric: " + " or ".join(self._names(pmid)))
            if insts:
                pairs = [(_u(i), self.value(pmid, _u(i))) for i in insts]
                numval = len(pairs)
            else:
                numval, listed = self._instances(pmid, request.control == lc.PM_LOG_ENQUIRE)
                pairs = [(i, self.value(pmid, i)) for i in listed]
            if changing:
                self._tell_insts(request, pmid, pairs, log)
            answers.append((pmid, numval, pairs))
        log.flush()
        return lc.control_result(answers)

    def _names(self, pmid: int) -> list[str]:
        try:
            return list(self.logger.ctx.name_all(pmid))
        except PMError:
            from purepcp.pmapi.ids import pmIDStr

            return [pmIDStr(pmid)]

    def _instances(self, pmid: int, with_history: bool) -> tuple[int, list[int]]:
        """build_vset: the metric's instances now, then (for an enquiry) those logged
        before and gone; a negative count is why there are none."""
        ctx = self.logger.ctx
        try:
            (desc,) = ctx.lookup_descs([pmid])
        except PMError as exc:
            return exc.code, []
        except ValueError:
            return PM_ERR_PMID, []
        if desc is None:
            return PM_ERR_PMID, []
        if desc.indom == PM_INDOM_NULL:
            return 1, [PM_IN_NULL]
        try:
            now = [inst for inst, _ in ctx.instances(desc.indom)]
        except PMError as exc:
            return exc.code, []
        listed = list(now)
        if with_history:
            seen = self.logger.history.get(pmid, {})
            listed += [i for i in seen if i not in now]
        return len(listed), listed

    def _tell(self, request: lc.LogControl, client: str, log: TextIO) -> None:
        control = "mandatory" if request.control == lc.PM_LOG_MANDATORY else "advisory"
        if request.state == lc.PM_LOG_ON:
            how = " on once" if request.delta == 0 else f" on {request.delta / 1000:.1f} sec"
        elif request.state == lc.PM_LOG_OFF:
            how = " off"
        else:
            how = " maybe"
        log.write(f"\n{time.ctime()}\npmlc request from {client}: {control}{how}\n")

    def _tell_insts(
        self, request: lc.LogControl, pmid: int, pairs: Sequence[tuple[int, int]], log: TextIO
    ) -> None:
        """pmlogger's log: each instance, and whether it took the state asked for."""
        if request.state != lc.PM_LOG_MAYBE:
            want = (lc.PMLC_MAND if request.control == lc.PM_LOG_MANDATORY else 0) | (
                lc.PMLC_ON if request.state == lc.PM_LOG_ON else 0
            )
            mask = lc.PMLC_MAND | lc.PMLC_ON
        else:
            want, mask = 0, lc.PMLC_MAND
        want_delta = request.delta if want & lc.PMLC_ON else 0
        for j, (inst, value) in enumerate(pairs):
            e = self.find(pmid, inst)
            if e is not None and e.indom != PM_INDOM_NULL:
                if j == 0:
                    log.write("\n")
                log.write(f"    instance: {self._inst_name(e.indom, inst)}")
            elif len(pairs) > 1 or inst != PM_IN_NULL:
                if j == 0:
                    log.write("\n")
                log.write(f"    instance: #{_signed(inst)}")
            if value & mask != want or lc.state_delta(value) != want_delta:
                log.write(" [request failed]")
            log.write("\n")

    def _inst_name(self, indom: int, inst: int) -> str:
        try:
            return self.logger.ctx.instance_name(indom, inst)
        except PMError:
            return f"#{_signed(inst)}"

    # -- changing states ----------------------------------------------------------------

    def _change(self, request: lc.LogControl) -> None:
        on = request.state == lc.PM_LOG_ON
        maybe = request.control == lc.PM_LOG_MANDATORY and request.state == lc.PM_LOG_MAYBE
        want = _Want(on, request.control == lc.PM_LOG_MANDATORY and not maybe, maybe)
        interval = None if not on or request.delta == 0 else request.delta * 1_000_000
        task = None
        if request.delta != 0:
            task = next(
                (
                    t
                    for t in self.logger.tasks
                    if t.on == want.on
                    and t.mandatory == want.mandatory
                    and t.interval_ns == interval
                ),
                None,
            )
        fresh = task is None
        if task is None:
            task = Group(interval, [], mandatory=want.mandatory, on=want.on)
        touched: set[int] = {id(task)}
        owners: dict[int, Group] = {id(task): task}
        for pmid, insts in request.metrics:
            mine = self.entries.get(pmid)
            for e in mine or ():
                touched.add(id(e.task))
                owners[id(e.task)] = e.task
            if not mine:
                if want.on or (want.mandatory and not want.maybe):
                    self._add(pmid, [_u(i) for i in insts], task)
            else:
                self._update(pmid, [_u(i) for i in insts], want, task)
        if fresh and any(e.task is task for es in self.entries.values() for e in es):
            self.logger.tasks.insert(0, task)
        self._replan([owners[k] for k in touched])

    def _add(self, pmid: int, insts: list[int], task: Group) -> None:
        try:
            (desc,) = self.logger.ctx.lookup_descs([pmid])
        except (PMError, ValueError):
            return
        if desc is None:
            return
        listed = None if desc.indom == PM_INDOM_NULL or not insts else list(insts)
        self.entries.setdefault(pmid, []).append(Entry(pmid, desc.indom, listed, task))

    def _update(self, pmid: int, insts: list[int], want: _Want, task: Group) -> None:
        """update_metric: PMID, already requested, under the state WANT asks for."""
        mine = self.entries[pmid]
        first = mine[0]
        if first.indom == PM_INDOM_NULL:
            e = mine[0]
            if not want.allowed_over(e.task):
                return
            if want.drops:
                mine.remove(e)
            else:
                e.task = task
        elif insts:
            if first.insts is None:
                return  # (all instances logged: a list of some cannot be carved out)
            for inst in insts:
                e = self.find(pmid, inst)
                if e is not None:
                    if e.task is task or not want.allowed_over(e.task):
                        continue
                    assert e.insts is not None
                    e.insts.remove(inst)
                    if not e.insts:
                        mine.remove(e)
                if want.drops:
                    continue
                into = min(
                    (x for x in mine if x.task is task and x.insts is not None),
                    key=lambda x: len(x.insts or ()),
                    default=None,
                )
                if into is None:
                    mine.append(Entry(pmid, first.indom, [inst], task))
                else:
                    assert into.insts is not None
                    into.insts.append(inst)
        else:
            has_mand = any(e.task.mandatory for e in mine)
            if has_mand and not want.mandatory and not want.maybe:
                return
            if first.insts is None:
                e = first
                if not e.task.mandatory and want.maybe:
                    return  # (advisory on, all instances: kept)
                if want.drops:
                    mine.remove(e)
                else:
                    e.task = task
            else:
                if want.maybe and not has_mand:
                    return
                mine.clear()
                if not want.drops:
                    mine.append(Entry(pmid, first.indom, None, task))
        if not mine:
            del self.entries[pmid]

    def _replan(self, tasks: list[Group]) -> None:
        """Each task touched gets fetch groups for its requests as they now stand; the
        logger then logs the tasks that are on and have something to fetch."""
        for task in tasks:
            plan = OptFetch()
            pmids: list[int] = []
            for es in self.entries.values():
                for e in es:
                    if e.task is task:
                        insts = None if e.insts is None else tuple(e.insts)
                        plan.request(Request(e.pmid, e.indom, insts))
                        if e.pmid not in pmids:
                            pmids.append(e.pmid)
            task.plan = plan
            task.pmids = pmids
            for pmid in pmids:
                if pmid not in task.names:
                    names = self._names(pmid)
                    task.names[pmid] = names[0] if names else str(pmid)
        logger = self.logger
        live = [t for t in logger.tasks if t.on and t.fetches]
        logger.groups = sorted(live, key=lambda g: g.interval_ns is not None)
        logger.schedule_changed = True
