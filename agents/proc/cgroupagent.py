"""The proc agent's cgroup.* side: the control groups' instance domains and clusters.

`CgroupGroups` is a part of the Proc agent (agents/proc/__init__.py).  Each request
(fetch, instance request) reads the cgroup filesystems afresh, each part at most once
(a cgroups.Snapshot); instance ids are given in the order names are first seen and
kept for the agent's life, as pmdaproc's pmdaCache keeps them.  Values are served to
every client, with or without credentials, as pmdaproc serves them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from purepcp.pmda import Agent, InDom, refresh

from . import catalog as cat
from .cgroups import Groups, Snapshot

#: Each cgroup instance domain, by serial.
CGROUP_INDOMS = {serial: InDom(serial) for serial in cat.CGROUP_INDOMS}


class _Numbering:
    """Instance ids for names: 0, 1, 2, ... in the order first seen, kept."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __call__(self, names: Any) -> dict[int, str]:
        """{id: name} of NAMES, new names numbered after the known ones."""
        ids = self._ids
        for name in names:
            if name not in ids:
                ids[name] = len(ids)
        return {ids[name]: name for name in names}

    def ids(self) -> dict[str, int]:
        return self._ids


#: How each instance domain's groups come out of a snapshot.
_GROUPS_OF: dict[int, Callable[[Snapshot], Groups]] = {
    cat.CG2: lambda s: {name: {} for _, name in s.v2_groups},
    cat.CG2_DISKS: lambda s: s.io_stat,
    cat.CG_CPUSET: lambda s: s.cpuset,
    cat.CG_CPUACCT: lambda s: s.cpuacct[0],
    cat.CG_PERCPU: lambda s: s.cpuacct[1],
    cat.CG_CPUSCHED: lambda s: s.cpusched,
    cat.CG_MEMORY: lambda s: s.memory,
    cat.CG_NETCLS: lambda s: s.netclass,
    cat.CG_BLKIO: lambda s: s.blkio[0],
    cat.CG_BLKIO_DISKS: lambda s: s.blkio[1],
    cat.CG_SUBSYS: lambda s: {name: {} for name in s.subsystems},
    cat.CG_MOUNTS: lambda s: {m.path: {} for m in s.mounts},
}


def _indom_refresh(serial: int) -> Callable[[Any], dict[int, str]]:
    def method(self: Any) -> dict[int, str]:
        return self._cgroup_instances(serial)

    method.__name__ = f"_cgroup_indom_{serial}"
    return CGROUP_INDOMS[serial].refresh(method)


def _cluster_refresh(cluster: int, *serials: int) -> Callable[[Any], dict[str, Any]]:
    """The refresh of a cluster whose values are its groups' (of SERIALS' domains)."""

    def method(self: Any) -> dict[str, Any]:
        return self._cgroup_values(*serials)

    method.__name__ = f"_cgroup_cluster_{cluster}"
    return refresh(cluster)(method)


class CgroupGroups(Agent):
    """cgroup.*: the control groups (see the module docstring)."""

    cg2, cg2_disks, cg_cpuset, cg_cpuacct, cg_percpu, cg_cpusched = (
        CGROUP_INDOMS[s] for s in cat.CGROUP_INDOMS[:6]
    )
    cg_memory, cg_netcls, cg_blkio, cg_blkio_disks, cg_subsys, cg_mounts = (
        CGROUP_INDOMS[s] for s in cat.CGROUP_INDOMS[6:]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; PROC_STATSPATH and PROC_HERTZ as pmdaproc reads them."""
        super().__init__(*args, **kwargs)
        self._cgroup_root = os.environ.get("PROC_STATSPATH", "")
        hertz = os.environ.get("PROC_HERTZ", "")
        self._cgroup_hz = int(hertz) if hertz.isdigit() else os.sysconf("SC_CLK_TCK")
        self._cgroup_ids = {serial: _Numbering() for serial in cat.CGROUP_INDOMS}
        self._snapshot: Snapshot | None = None

    def handle(self, pdu: Any) -> Any:
        """Each request sees the cgroup filesystems afresh."""
        self._snapshot = None
        return super().handle(pdu)

    @property
    def cgroup_snapshot(self) -> Snapshot:
        """This request's view of the cgroup filesystems."""
        if self._snapshot is None:
            self._snapshot = Snapshot(self._cgroup_root, self._cgroup_hz)
        return self._snapshot

    def _cgroup_instances(self, serial: int) -> dict[int, str]:
        return self._cgroup_ids[serial](_GROUPS_OF[serial](self.cgroup_snapshot))

    def _cgroup_values(self, *serials: int) -> dict[str, Any]:
        """{metric name: {inst: value}} of the groups of SERIALS' instance domains."""
        values: dict[str, Any] = {}
        for serial in serials:
            values.update(self._values_of(serial, _GROUPS_OF[serial](self.cgroup_snapshot)))
        return values

    def _values_of(self, serial: int, groups: Groups) -> dict[str, Any]:
        """{metric name: {inst: value}} of GROUPS, groups of SERIAL's domain."""
        numbering = self._cgroup_ids[serial]
        numbering(groups)
        ids = numbering.ids()
        values: dict[str, Any] = {}
        for name, group in groups.items():
            inst = ids[name]
            for metric, value in group.items():
                if value is not None:
                    values.setdefault(metric, {})[inst] = value
        return values

    _indom_16, _indom_17, _indom_20, _indom_21 = (_indom_refresh(s) for s in (16, 17, 20, 21))
    _indom_22, _indom_23, _indom_24, _indom_25 = (_indom_refresh(s) for s in (22, 23, 24, 25))
    _indom_26, _indom_27, _indom_37, _indom_38 = (_indom_refresh(s) for s in (26, 27, 37, 38))

    @refresh(37)
    def _cgroup_subsys(self) -> dict[str, Any]:
        snapshot = self.cgroup_snapshot
        ids = self._cgroup_ids[cat.CG_SUBSYS](snapshot.subsystems)
        numbers = {inst: snapshot.subsystems[name] for inst, name in ids.items()}
        return {
            "cgroup.subsys.hierarchy": {i: n[0] for i, n in numbers.items()},
            "cgroup.subsys.num_cgroups": {i: n[1] for i, n in numbers.items()},
            "cgroup.subsys.enabled": {i: n[2] for i, n in numbers.items()},
            "cgroup.subsys.count": len(numbers),
        }

    @refresh(38)
    def _cgroup_mounts(self) -> dict[str, Any]:
        snapshot = self.cgroup_snapshot
        ids = self._cgroup_ids[cat.CG_MOUNTS]([m.path for m in snapshot.mounts])
        by_path = {m.path: m for m in snapshot.mounts}
        return {
            "cgroup.mounts.subsys": {
                inst: snapshot.mount_subsystems(by_path[path]) for inst, path in ids.items()
            },
            "cgroup.mounts.count": len(ids),
        }

    _cluster_39 = _cluster_refresh(39, cat.CG_CPUSET)
    _cluster_41 = _cluster_refresh(41, cat.CG_CPUACCT, cat.CG_PERCPU)
    _cluster_43 = _cluster_refresh(43, cat.CG_CPUSCHED)
    _cluster_45 = _cluster_refresh(45, cat.CG_MEMORY)
    _cluster_47 = _cluster_refresh(47, cat.CG_NETCLS)
    _cluster_49 = _cluster_refresh(49, cat.CG_BLKIO, cat.CG_BLKIO_DISKS)
    _cluster_68 = _cluster_refresh(68, cat.CG2_DISKS)

    @refresh(67)
    def _cgroup_cpu_stat(self) -> dict[str, Any]:
        return self._values_of(cat.CG2, self.cgroup_snapshot.cpu_stat)

    @refresh(64)
    def _cgroup_cpu_pressure(self) -> dict[str, Any]:
        return self._values_of(cat.CG2, self.cgroup_snapshot.pressure("cpu", ("some",)))

    @refresh(65)
    def _cgroup_io_pressure(self) -> dict[str, Any]:
        return self._values_of(cat.CG2, self.cgroup_snapshot.pressure("io", ("some", "full")))

    @refresh(66)
    def _cgroup_memory_pressure(self) -> dict[str, Any]:
        return self._values_of(cat.CG2, self.cgroup_snapshot.pressure("memory", ("some", "full")))

    @refresh(76)
    def _cgroup_irq_pressure(self) -> dict[str, Any]:
        return self._values_of(cat.CG2, self.cgroup_snapshot.pressure("irq", ("full",)))
