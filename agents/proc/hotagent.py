"""The proc agent's hotproc side: hotproc.control.*, hotproc.total.*, hotproc.predicate.*,
the hot processes' instance domain (3.39), and the hotproc.* copy of each proc.* cluster,
read over the hot processes.

`HotProcs` is a part of the Proc agent (agents/proc/__init__.py), which gives it what it
reads through: the per-client threads setting (`_threads_mode`), the instance names of
processes (`_names`, `_name_of`), the fetch's wanted names and the processes a cluster
reads (`_wanted`, `_view`) and each proc.* cluster's refresh (`_proc_refresh`).  The
timer that picks the hot processes is hotsampler.py's, the arithmetic hotproc.py's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from purepcp.pmapi.errors import PM_ERR_BADSTORE, PM_ERR_PERMISSION, PMError
from purepcp.pmda import STRING, U32, Agent, InDom, metric, refresh

from .catalog import HOT_CLUSTERS, HOTPROCS
from .hotproc import PredicateError
from .hotsampler import HotSampler

#: The hot processes (pmdaproc's HOTPROC_INDOM).
HOT = InDom(HOTPROCS)


def _hot_refresh(cluster: int) -> Callable[[Any], dict[str, Any]]:
    """The refresh method of hotproc's copy of proc.* CLUSTER."""

    def method(self: Any) -> dict[str, Any]:
        return self._as_hot(cluster)

    method.__name__ = f"_hot_{cluster}"
    return refresh(HOT_CLUSTERS[cluster])(method)


class HotProcs(Agent):
    """hotproc.*: the controls, the timer's outcome and the hot processes (see the module
    docstring for what the Proc agent supplies)."""

    hotprocs = HOT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; the timer, stopped until a configuration is loaded."""
        super().__init__(*args, **kwargs)
        self.hot = HotSampler(self.log, os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE"))

    def _proc_refresh(self, cluster: int) -> dict[str, Any]:
        """proc.* CLUSTER's refresh, over the processes of `_view` (the agent's)."""
        raise NotImplementedError

    # -- hotproc: its controls, its timer's outcome, its processes ---------------------

    def start(self) -> None:
        """Start, reading hotproc.conf as pmdaproc does ($PCP_PMDAS_DIR/proc/)."""
        super().start()
        self.hot.load_file(hotproc_conf())

    def stop(self) -> None:
        """Stop the timer, then the agent."""
        self.hot.stop()
        super().stop()

    def _root_only(self) -> None:
        if self.client.uid != 0:
            raise PMError(PM_ERR_PERMISSION)

    @metric("hotproc.control.refresh", U32)
    def hot_refresh(self) -> int:
        return self.hot.refresh

    @hot_refresh.store
    def _store_hot_refresh(self, value: int) -> None:
        self._root_only()
        self.hot.store_refresh(value)

    @metric("hotproc.control.config", STRING)
    def hot_config(self) -> str:
        return self.hot.config_text

    @hot_config.store
    def _store_hot_config(self, value: str) -> None:
        self._root_only()
        try:
            self.hot.store_config(value)
        except PredicateError as exc:
            self.log.error("%s: hotproc config refused: %s", self.name, exc)
            raise PMError(PM_ERR_BADSTORE) from None

    @metric("hotproc.control.config_gen", U32)
    def hot_config_gen(self) -> int:
        return self.hot.config_gen

    @metric("hotproc.control.reload_config", U32)
    def hot_reload(self) -> int:
        return 0

    @hot_reload.store
    def _store_hot_reload(self, value: int) -> None:
        self._root_only()
        self.hot.load_file(hotproc_conf())

    @refresh(60)
    def _hot_totals(self) -> dict[str, Any]:
        totals = self.hot.outcome.totals
        return {
            "hotproc.total.cpuidle": totals.cpuidle,
            "hotproc.total.cpuburn": totals.cpuburn,
            "hotproc.total.cpuother.transient": totals.transient,
            "hotproc.total.cpuother.not_cpuburn": totals.not_cpuburn,
            "hotproc.total.cpuother.total": totals.other_total,
            "hotproc.total.cpuother.percent": totals.other_percent,
        }

    @refresh(61)
    def _hot_predicate(self) -> dict[str, Any]:
        hot = self.hot.outcome.hot
        pids = [pid for pid in self.profiled(self.hotprocs) if pid in hot]
        return {
            f"hotproc.predicate.{leaf}": {pid: value(hot[pid]) for pid in pids}
            for leaf, value in _PREDICATE_VALUES.items()
        }

    @hotprocs.refresh
    def _hot_instances(self) -> dict[int, str]:
        """The hot processes of the last pass that are still there (with threads on,
        and their threads), named as in the process instance domain."""
        instances: dict[int, str] = {}
        threads = self._threads_mode()
        for pid in sorted(self.hot.outcome.hot):
            name = self._names.get((pid, 0))
            if name is None:
                if not os.path.exists(f"/proc/{pid}"):
                    continue
                name = self._names[pid, 0] = self._name_of(pid)
            instances[pid] = name[0]
            if threads:
                try:
                    tasks = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for task in tasks:
                    if task.isdigit() and int(task) != pid:
                        instances[int(task)] = f"{int(task):06d} {name[0].split(' ', 1)[1]}"
        return dict(sorted(instances.items()))

    # -- hotproc.*: the same clusters over the hot processes ----------------------------

    def _as_hot(self, cluster: int) -> dict[str, Any]:
        """proc.* CLUSTER's refresh over the hot processes, for its hotproc.* names."""
        wanted = self._wanted
        self._wanted = frozenset(name[3:] for name in wanted if name.startswith("hotproc."))
        self._view = self.hotprocs
        try:
            values = self._proc_refresh(cluster)
        finally:
            self._wanted, self._view = wanted, self.processes
        return {"hot" + name: value for name, value in values.items()}

    _hot_8, _hot_9, _hot_11, _hot_12 = (_hot_refresh(c) for c in (8, 9, 11, 12))
    _hot_24, _hot_31, _hot_32, _hot_33 = (_hot_refresh(c) for c in (24, 31, 32, 33))
    _hot_51, _hot_62, _hot_69, _hot_72, _hot_74 = (_hot_refresh(c) for c in (51, 62, 69, 72, 74))


#: hotproc.predicate.* from a hot process's values (virtualsize and residentsize are U32).
_PREDICATE_VALUES: dict[str, Callable[[Any], Any]] = {
    "ctxswitch": lambda d: d.ctxswitch,
    "virtualsize": lambda d: d.virtualsize & 0xFFFFFFFF,
    "residentsize": lambda d: d.residentsize & 0xFFFFFFFF,
    "iodemand": lambda d: d.iodemand,
    "iowait": lambda d: d.iowait,
    "schedwait": lambda d: d.schedwait,
    "cpuburn": lambda d: d.cpuburn,
}


def hotproc_conf() -> str:
    """Where pmdaproc reads its hotproc configuration."""
    return os.path.join(
        os.environ.get("PCP_PMDAS_DIR", "/var/lib/pcp/pmdas"), "proc", "hotproc.conf"
    )
