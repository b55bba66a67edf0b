"""What every family of the linux agent shares: the /proc reader, per-fetch caching, CPUs.

The agent is one class (`purepcp.agents.linux.Linux`) made of one mixin per
family of metrics (agents/linux/*.py), each a subclass of `LinuxBase` with its
instance domains and its `refresh(cluster)` methods.  Several families may
refresh one cluster: the framework merges their values.  A refresh computes only
the metrics in `self._wanted` (the names the current fetch asked for) and reads
each source once per fetch through `self._once(key, read)`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from purepcp.pmapi.values import Result
from purepcp.pmda import Agent, InDom

from . import cputime, procfs
from .cputime import Ticks
from .netif import NetIoctl

#: A function giving one instance's labels: (agent, inst, instance name) -> labels or None.
InstanceLabels = Callable[[Any, int, str], Mapping[str, Any] | None]


class LinuxBase(Agent):
    """The linux agent's shared state and helpers (subclassed by each family's mixin).

    A family gives per-instance labels (PM_LABEL_INSTANCES) by setting
    `instance_label_rules = {indom serial: function(agent, inst, name)}` on its class;
    the rules of every family are gathered when the agent starts.
    """

    instance_label_rules: ClassVar[Mapping[int, InstanceLabels]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; the /proc files and the ioctl socket open when first needed."""
        super().__init__(*args, **kwargs)
        self.proc = procfs.ProcFiles(os.environ.get("LINUX_STATSPATH", ""))
        self.net = NetIoctl()
        # pmdalinux's test settings: a clock rate and a CPU count to match a copied /proc
        self.hz = int(os.environ.get("LINUX_HERTZ") or os.sysconf("SC_CLK_TCK"))
        self.ncpus_configured = int(
            os.environ.get("LINUX_NCPUS") or os.sysconf("SC_NPROCESSORS_CONF")
        )
        self.pagesize = os.sysconf("SC_PAGE_SIZE")
        self._all_names = frozenset(m.name for m in self.declared_metrics)
        self._wanted: frozenset[str] = self._all_names
        self._snapshot: dict[str, Any] | None = None
        self._last: dict[InDom, dict[int, str]] = {}
        #: pmdalinux's iowait rule, one state shared by every family reading CPU time
        self.cpu_wait_hold = cputime.WaitHold()
        rules: dict[int, InstanceLabels] = {}
        for klass in reversed(type(self).__mro__):
            rules.update(vars(klass).get("instance_label_rules", {}))
        self._label_rules = rules

    def _cache_file(self, indom: InDom) -> Path | None:
        """Where pmdaCache keeps INDOM's ids: only when $PCP_VAR_DIR is set, as under pmcd."""
        var = os.environ.get("PCP_VAR_DIR")
        return Path(var, "config", "pmda", f"{self.domain}.{indom.serial}") if var else None

    def fetch(self, pmids: Iterable[int]) -> Result:
        """A fetch, reading each source at most once and computing only the metrics asked for."""
        pmids = tuple(pmids)
        self._wanted = self.fetch_plan(pmids).names
        self._snapshot = {}
        try:
            return super().fetch(pmids)
        finally:
            self._snapshot = None
            self._wanted = self._all_names

    def stop(self) -> None:
        """Stop, closing the files and the socket kept open between fetches."""
        super().stop()
        self.proc.close()
        self.net.close()

    def instance_labels(self, indom: InDom, inst: int, name: str) -> Mapping[str, Any] | None:
        """One instance's labels, by its family's rule for INDOM (none without a rule)."""
        rule = self._label_rules.get(indom.serial)
        return None if rule is None else rule(self, inst, name)

    # -- sources, read once per fetch -------------------------------------------------

    def _once(self, key: str, read: Callable[[], Any]) -> Any:
        """READ(), or what it gave earlier in this fetch (outside a fetch, always fresh)."""
        snapshot = self._snapshot
        if snapshot is None:
            return read()
        if key not in snapshot:
            snapshot[key] = read()
        return snapshot[key]

    def _read(self, path: str, parse: Callable[[bytes], Any]) -> Any:
        """PARSE applied to the contents of PATH, or None if it cannot be read."""
        data = self.proc.read(path)
        return None if data is None else parse(data)

    def _read_once(self, path: str, parse: Callable[[bytes], Any] | None = None) -> Any:
        """PATH's contents (PARSEd), read at most once per fetch; None if unreadable."""
        if parse is None:
            return self._once(path, lambda: self.proc.read(path))
        return self._once(
            f"{path} {parse.__module__}.{parse.__qualname__}", lambda: self._read(path, parse)
        )

    def _stat(self) -> procfs.Stat | None:
        """/proc/stat, parsed (None if unreadable)."""
        return self._once("stat", lambda: self._read("/proc/stat", procfs.parse_stat))

    def _vmstat(self) -> bytes | None:
        """/proc/vmstat's bytes (None if unreadable), shared by clusters 0 and 28."""
        return self._once("vmstat", lambda: self.proc.read("/proc/vmstat"))

    def _percpu(self, stat: procfs.Stat) -> dict[int, Ticks]:
        """Ticks by CPU number; a kernel built for one CPU gets the all-CPU line, as in PCP."""
        if self.ncpus_configured == 1 and stat.all is not None:
            return {0: stat.all}
        return stat.cpus

    def _cpu_numbers(self) -> list[int]:
        """The CPU instances' ids (CPU numbers): those with a cpuN line in /proc/stat."""
        stat = self._stat()
        return [] if stat is None else list(self._percpu(stat))

    def _current(self, indom: InDom, current: dict[int, str]) -> dict[int, str] | None:
        """CURRENT in instance order, or None if INDOM's instances have not changed."""
        current = dict(sorted(current.items()))
        if current == self._last.get(indom):
            return None
        self._last[indom] = current
        return current
