"""The proc agent (domain 3): per-process metrics, looking to PCP's clients like pmdaproc.

One instance per process (id the pid, name "000123 /usr/sbin/sshd", pmdaproc's),
refreshed once per fetch; each cluster reads its one file of /proc/PID for the
processes the fetch's profile asks for, and parses only the metrics asked for
(fields.py has the tables).  A process that ends in between is simply absent.
The hotproc.* side (its controls, totals and hot processes) is hotagent.py's, the
cgroup.* side (the control groups of /sys/fs/cgroup) cgroupagent.py's, the acct.* side
(processes that ended lately, from process accounting) acctagent.py's.

Access is pmdaproc's: a client pmcd vouches for (uid and gid, from the unix
socket) is served with this thread acting as that user, so the kernel decides
what it may read of other users' processes (creds.py); a client without
credentials (TCP) gets PM_ERR_PERMISSION for every per-process metric and for the
process instance list, and still gets the counts (proc.nprocs, proc.runq.*).
docs/proc-agent-notes.md says where we differ from pmdaproc and why.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import psutil

from purepcp.pmapi.errors import (
    PM_ERR_APPVERSION,
    PM_ERR_BADSTORE,
    PM_ERR_NOCONTEXT,
    PM_ERR_NOTCONN,
    PM_ERR_PERMISSION,
    PMError,
)
from purepcp.pmapi.pdu.records import ErrorPDU, FetchPDU, InstanceReqPDU, ResultPDU
from purepcp.pmapi.values import Result
from purepcp.pmda import STRING, U32, InDom, Metric, metric, refresh

from . import fields
from .acctagent import ENDED, Accounted
from .catalog import (
    ACCT,
    ACCT_METRICS,
    CGROUP_METRICS,
    DOMAIN,
    HOT_CLUSTERS,
    HOT_METRICS,
    HOTPROCS,
    METRICS,
    PROCS,
)
from .cgroupagent import CGROUP_INDOMS, CgroupGroups
from .creds import CredentialError, ThreadCredentials
from .hotagent import HOT, HotProcs

#: The controls, which have fetch and store methods of their own.
_NOT_TABLE = frozenset(
    name
    for name, cluster, item, *_ in (*METRICS, *HOT_METRICS, *ACCT_METRICS)
    if cluster == 10 or (cluster == 60 and item in (1, 8, 9, 10)) or (cluster == 70 and item >= 23)
)
_PERMISSION = PMError(PM_ERR_PERMISSION)
_APPVERSION = PMError(PM_ERR_APPVERSION)


def _by_cluster() -> dict[int, frozenset[str]]:
    clusters: dict[int, set[str]] = {}
    for name, cluster, *_ in METRICS:
        clusters.setdefault(cluster, set()).add(name)
    return {c: frozenset(names) for c, names in clusters.items()}


#: The metric names of each cluster.
CLUSTERS = _by_cluster()
#: The processes (pmdaproc's PROC_INDOM); the hot ones (HOTPROC_INDOM) are hotagent.py's.
PROCESSES = InDom(PROCS)
#: Every metric of the catalogue.
_TABLE = (*METRICS, *HOT_METRICS, *CGROUP_METRICS, *ACCT_METRICS)
#: Each instance domain of the catalogue, by serial.
_INDOMS: dict[int | None, InDom | None] = {
    None: None,
    PROCS: PROCESSES,
    HOTPROCS: HOT,
    ACCT: ENDED,
}
_INDOMS.update((serial, indom) for serial, indom in CGROUP_INDOMS.items())


class Proc(HotProcs, CgroupGroups, Accounted):
    """PCP's proc agent on this framework (see the module docstring)."""

    name, domain = "proc", DOMAIN
    wants_credentials = True
    dynamic_pmns = True  # PCP's namespace has proc.psinfo and the rest as 3:*:*
    processes = PROCESSES
    metrics = tuple(
        Metric(name, type_, sem, units, indom=_INDOMS[indom])
        for name, _, _, type_, indom, sem, units in _TABLE
        if name not in _NOT_TABLE
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hz = os.sysconf("SC_CLK_TCK")
        self.pagesize = os.sysconf("SC_PAGE_SIZE")
        self._convert = fields.stat_converters(self.hz, self.pagesize)
        self._stat_specs = {
            name: (pos, self._convert[kind]) for name, (pos, kind) in fields.STAT_FIELDS.items()
        }
        self.ttys = fields.TtyNames()
        self.creds = ThreadCredentials()
        #: pmdaproc's -A (or PROC_ACCESS=n): every client reads as the agent itself
        self.all_access = bool(os.environ.get("PROC_ACCESS"))
        self.threads = 1 if os.environ.get("PROC_THREADS") else 0  # proc.control.all.threads
        self._client_threads: dict[int, int] = {}  # proc.control.perclient.threads by context
        self._client_cgroups: dict[int, str] = {}  # proc.control.perclient.cgroups by context
        self._access = True  # whether the request being answered may read processes
        self._view = PROCESSES  # the processes a cluster reads: all of them, or the hot ones
        self._wanted: frozenset[str] = frozenset()
        self._files: dict[tuple[int, str], bytes | None] = {}  # this fetch's reads
        self._names: dict[tuple[int, int], tuple[str, str]] = {}  # (pid, mode) -> name, psargs
        self._paths: dict[int, str] = {}  # instance -> its /proc directory
        self._last_ids: list[int] | None = None

    # -- requests: access as pmdaproc grants it -------------------------------------

    def handle(self, pdu: Any) -> Any:
        if type(pdu) not in (FetchPDU, InstanceReqPDU, ResultPDU):
            if type(pdu) is ErrorPDU and pdu.code == PM_ERR_NOTCONN:  # that client has gone
                self._client_threads.pop(pdu.sender, None)
                self._client_cgroups.pop(pdu.sender, None)
            return super().handle(pdu)
        client = self.clients.client(getattr(pdu, "sender", 0))
        access = self.all_access or client.authenticated
        if (
            not access
            and type(pdu) is InstanceReqPDU
            and pdu.indom in (self.indom_id(self.processes), self.indom_id(self.hotprocs))
        ):
            return ErrorPDU(PM_ERR_PERMISSION)
        self._access = access
        if type(pdu) is InstanceReqPDU and pdu.name is not None and pdu.name.isdigit():
            pdu = dataclasses.replace(pdu, name=f"{int(pdu.name):06d}")  # "1" is "000001"
        if not access or self.all_access or client.uid is None or client.gid is None:
            return super().handle(pdu)
        try:
            acting = self.creds.acting_as(client.uid, client.gid)
            acting.__enter__()
        except CredentialError as exc:
            self.log.error("%s: %s", self.name, exc)
            self._access = False
            return super().handle(pdu)
        try:
            return super().handle(pdu)
        finally:
            acting.__exit__(None, None, None)

    def fetch(self, pmids: Iterable[int]) -> Result:
        """A fetch: each file of each process read at most once, only for what is asked."""
        pmids = tuple(pmids)
        self._wanted = self.fetch_plan(pmids).names
        self._files = {}
        try:
            return super().fetch(pmids)
        finally:
            self._files = {}

    # -- the processes ----------------------------------------------------------------

    def _threads_mode(self) -> int:
        return self._client_threads.get(self.context, self.threads)

    @processes.refresh
    def _process_instances(self) -> dict[int, str] | None:
        """Every process (and with threads on, every thread), named as pmdaproc names
        them; None when the list has not changed since the last time."""
        mode = self._threads_mode()
        ids = sorted(psutil.pids())
        cgroup = self._client_cgroups.get(self.context)
        if cgroup:
            members = fields.cgroup_members(cgroup, threads=bool(mode))
            ids = [pid for pid in ids if pid in members]
        paths = {pid: f"/proc/{pid}" for pid in ids}
        if mode:
            for pid in ids:
                try:
                    tasks = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for task in tasks:
                    if task.isdigit() and int(task) != pid:
                        paths[int(task)] = f"/proc/{pid}/task/{task}"
            ids = sorted(paths if not cgroup else (p for p in paths if p in members))
        self._paths = paths
        names = self._names
        for gone in [key for key in names if key[1] == mode and key[0] not in paths]:
            del names[gone]
        key_ids = [ids, mode, cgroup]
        if key_ids == self._last_ids:
            return None
        self._last_ids = key_ids
        instances = {}
        for pid in ids:
            known = names.get((pid, mode))
            if known is None:
                known = names[pid, mode] = self._name_of(pid)
            instances[pid] = known[0]
        return instances

    def _name_of(self, pid: int) -> tuple[str, str]:
        """(instance name, psargs) of a new process: "%06d" and the command line's first
        word; a process without a command line (a kernel thread) is "(its name)"."""
        where = self._where(pid)
        args = fields.command_line(where, pid)
        if not args:
            status = fields.read_file(f"{where}/status")
            if status is None:
                args = "<exiting>"
            else:
                name = fields.status_lines(status).get(b"Name", b"")
                args = "(" + name.decode("utf-8", "surrogateescape") + ")"
        label = f"{pid:06d} {args}"
        first, space, rest = label.partition(" ")
        return f"{first}{space}{rest.split(' ', 1)[0]}", args

    def instance_labels(self, indom: InDom, inst: int, name: str) -> Mapping[str, Any] | None:
        return {"pid": inst} if indom is self.processes or indom is self.hotprocs else None

    def _pids(self) -> list[int]:
        """The processes this fetch reads: the instances its profile asks for."""
        return self.profiled(self._view)

    def _where(self, pid: int) -> str:
        """The /proc directory of instance PID (a thread's is below its process's)."""
        return self._paths.get(pid, f"/proc/{pid}")

    def _file(self, pid: int, name: str, whole: bool = False) -> bytes | None:
        """/proc/PID/NAME, read at most once per fetch; None if it cannot be read."""
        key = (pid, name)
        data = self._files.get(key, b"")
        if data == b"" and key not in self._files:
            where = self._where(pid)
            data = self._files[key] = fields.read_file(f"{where}/{name}", whole)
        return data

    def _cluster(self, cluster: int) -> tuple[frozenset[str], dict[str, Any] | None]:
        """The metrics of CLUSTER this fetch asks for, and the values to give when this
        client may not read processes (None when it may)."""
        wanted = CLUSTERS[cluster] & self._wanted
        if self._access:
            return wanted, None
        return wanted, {name: _PERMISSION for name in wanted}

    # -- cluster 8: /proc/PID/stat (and wchan, environ, the command line) ------------

    @refresh(8)
    def _stat_cluster(self) -> dict[str, Any]:
        wanted, refused = self._cluster(8)
        values: dict[str, Any] = {}
        if "proc.nprocs" in wanted:
            self.refresh_instances(self._view)
            values["proc.nprocs"] = len(self.instances(self._view))
            wanted = wanted - {"proc.nprocs"}
        if refused is not None:
            return {**refused, **values}
        if not wanted:
            return values
        pids = self._pids()
        specs = [(name, *self._stat_specs[name]) for name in wanted if name in self._stat_specs]
        columns: dict[str, dict[int, Any]] = {name: {} for name in wanted}
        cmd = columns.get("proc.psinfo.cmd")
        sname = columns.get("proc.psinfo.sname")
        ttyname = columns.get("proc.psinfo.ttyname")
        policy_s = columns.get("proc.psinfo.policy_s")
        needs_stat = specs or cmd is not None or sname is not None or ttyname is not None
        needs_stat = needs_stat or policy_s is not None
        if needs_stat:
            for pid in pids:
                data = self._file(pid, "stat")
                if data is None:
                    continue
                comm, rest = fields.split_stat(data)
                try:
                    for name, pos, convert in specs:
                        value = convert(rest[pos])
                        if value is not None:
                            columns[name][pid] = value
                    if cmd is not None:
                        cmd[pid] = comm.decode("utf-8", "surrogateescape")
                    if sname is not None:
                        sname[pid] = rest[0].decode("ascii", "replace")
                    if ttyname is not None:
                        ttyname[pid] = self.ttys.name(int(rest[4]))
                    if policy_s is not None:
                        policy_s[pid] = fields.POLICY_NAMES.get(int(rest[38]), "?")
                except (IndexError, ValueError):
                    continue  # a short or damaged line: this process has no values
        if "proc.psinfo.pid" in columns:
            columns["proc.psinfo.pid"] = {pid: pid for pid in pids}
        if "proc.psinfo.psargs" in columns:
            mode = 0 if self._view is self.hotprocs else self._threads_mode()
            known = self._names
            columns["proc.psinfo.psargs"] = {
                pid: known[pid, mode][1] for pid in pids if (pid, mode) in known
            }
        if "proc.psinfo.wchan_s" in columns:
            wchan = columns["proc.psinfo.wchan_s"]
            for pid in pids:
                data = self._file(pid, "wchan")
                if data is not None:
                    wchan[pid] = data.split(b"\0", 1)[0].decode("utf-8", "replace")
        if "proc.psinfo.environ" in columns:
            environ = columns["proc.psinfo.environ"]
            for pid in pids:
                data = self._file(pid, "environ", whole=True)
                environ[pid] = "" if data is None else fields.joined_nul_text(data)
        values.update(columns)
        return values

    # -- cluster 9: /proc/PID/statm, and the maps -----------------------------------

    @refresh(9)
    def _statm_cluster(self) -> dict[str, Any]:
        wanted, refused = self._cluster(9)
        if refused is not None:
            return refused
        pids = self._pids()
        specs = [
            (name, fields.STATM_FIELDS[name]) for name in wanted if name in fields.STATM_FIELDS
        ]
        columns: dict[str, dict[int, Any]] = {name: {} for name in wanted}
        kb = self.pagesize // 1024
        if specs:
            for pid in pids:
                data = self._file(pid, "statm")
                if data is None:
                    continue
                words = data.split()
                try:
                    for name, pos in specs:
                        columns[name][pid] = (int(words[pos]) * kb) & 0xFFFFFFFF
                except (IndexError, ValueError):
                    continue
        if "proc.memory.maps" in columns:
            maps = columns["proc.memory.maps"]
            for pid in pids:
                data = self._file(pid, "maps", whole=True)
                maps[pid] = "" if data is None else data.decode("utf-8", "surrogateescape")
        return columns

    # -- cluster 10: the controls ------------------------------------------------------

    @metric("proc.control.all.threads", U32)
    def all_threads(self) -> int:
        return self.threads

    @metric("proc.control.perclient.threads", U32)
    def client_threads(self) -> int:
        return self._threads_mode()

    @all_threads.store
    def _store_all_threads(self, value: int) -> None:
        if not self._access:
            raise PMError(PM_ERR_PERMISSION)
        if value not in (0, 1):
            raise PMError(PM_ERR_BADSTORE)
        self.threads = value

    @client_threads.store
    def _store_client_threads(self, value: int) -> None:
        if not self.clients.known(self.context):
            raise PMError(PM_ERR_NOCONTEXT)
        if value not in (0, 1):
            raise PMError(PM_ERR_BADSTORE)
        self._client_threads[self.context] = value

    @metric("proc.control.perclient.cgroups", STRING)
    def client_cgroups(self) -> str:
        return self._client_cgroups.get(self.context, "")

    @client_cgroups.store
    def _store_client_cgroups(self, value: str) -> None:
        if not self.clients.known(self.context):
            raise PMError(PM_ERR_NOCONTEXT)
        if not value:
            raise PMError(PM_ERR_BADSTORE)
        self._client_cgroups[self.context] = value

    # -- cluster 11: cgroups; 12: security labels ------------------------------------

    @refresh(11)
    def _cgroup_cluster(self) -> dict[str, Any]:
        _, refused = self._cluster(11)
        if refused is not None:
            return refused
        cgroups: dict[int, str] = {}
        container: dict[int, str] = {}
        for pid in self._pids():
            data = self._file(pid, "cgroup")
            if data is not None:
                cgroups[pid], container[pid] = fields.cgroup_text(data)
        return {"proc.psinfo.cgroups": cgroups, "proc.id.container": container}

    def _one_file_cluster(
        self, cluster: int, file: str, name: str, value: Callable[[bytes], Any]
    ) -> dict[str, Any]:
        """CLUSTER's one metric NAME: VALUE of each process's FILE (None: no value)."""
        _, refused = self._cluster(cluster)
        if refused is not None:
            return refused
        values = {}
        for pid in self._pids():
            data = self._file(pid, file)
            if data is not None and (found := value(data)) is not None:
                values[pid] = found
        return {name: values}

    @refresh(12)
    def _label_cluster(self) -> dict[str, Any]:
        return self._one_file_cluster(
            12, "attr/current", "proc.psinfo.labels", fields.security_label
        )

    # -- cluster 13: the run queue, counted over every process ------------------------

    @refresh(13)
    def _runq_cluster(self) -> dict[str, Any]:
        self.refresh_instances(self.processes)
        counts = dict.fromkeys(
            (
                "runnable",
                "blocked",
                "sleeping",
                "stopped",
                "swapped",
                "defunct",
                "unknown",
                "kernel",
            ),
            0,
        )
        for pid in self.instances(self.processes):
            data = self._file(pid, "stat")
            if data is None:
                counts["unknown"] += 1
                continue
            _, rest = fields.split_stat(data)
            try:
                state, vsize = rest[0], int(rest[20])
            except (IndexError, ValueError):
                counts["unknown"] += 1
                continue
            if state == b"Z":
                counts["defunct"] += 1
            elif vsize == 0:
                counts["swapped"] += 1
            else:
                counts[fields.RUNQ_STATES.get(state, "unknown")] += 1
        return {f"proc.runq.{state}": count for state, count in counts.items()}

    # -- cluster 24: /proc/PID/status ---------------------------------------------------

    @refresh(24)
    def _status_cluster(self) -> dict[str, Any]:
        wanted, refused = self._cluster(24)
        if refused is not None:
            return refused
        columns: dict[str, dict[int, Any]] = {name: {} for name in wanted}
        numbers = [(n, *fields.STATUS_NUMBERS[n]) for n in wanted if n in fields.STATUS_NUMBERS]
        for name in wanted:  # a user or group name needs its id
            if name in fields.STATUS_NAMES:
                ident = fields.STATUS_NAMES[name][0]
                numbers.append((ident, *fields.STATUS_NUMBERS[ident]))
        optional = [
            (n, fields.STATUS_OPTIONAL_NUMBERS[n])
            for n in wanted
            if n in fields.STATUS_OPTIONAL_NUMBERS
        ]
        texts = [(n, fields.STATUS_TEXTS[n]) for n in wanted if n in fields.STATUS_TEXTS]
        real = "proc.memory.vmreal" in wanted
        nonlib = "proc.memory.vmnonlib" in wanted
        ids: dict[str, dict[int, int]] = {n: {} for n, _, _ in numbers}
        for pid in self._pids():
            data = self._file(pid, "status")
            if data is None:
                continue
            lines = fields.status_lines(data)
            try:
                for name, key, pos in numbers:
                    line = lines.get(key)
                    ids[name][pid] = int(line.split()[pos]) & 0xFFFFFFFF if line else 0
                for name, key in optional:
                    line = lines.get(key)
                    if line is not None:
                        columns[name][pid] = int(line.split()[0]) & 0xFFFFFFFF
                for name, key in texts:
                    line = lines.get(key)
                    if line is not None:
                        columns[name][pid] = line.decode("utf-8", "surrogateescape")
                if real or nonlib:
                    rss = fields.status_kb(lines.get(b"VmRSS")) + fields.status_kb(
                        lines.get(b"VmSwap")
                    )
                    if real:
                        columns["proc.memory.vmreal"][pid] = rss
                    if nonlib:
                        columns["proc.memory.vmnonlib"][pid] = max(
                            rss - fields.status_kb(lines.get(b"VmLib")), 0
                        )
            except (IndexError, ValueError):
                continue
        for name in wanted:
            if name in ids:
                columns[name] = ids[name]
            elif name in fields.STATUS_NAMES:
                ident, table = fields.STATUS_NAMES[name]
                lookup = fields.user_name if table == "user" else fields.group_name
                columns[name] = {pid: lookup(i) or "" for pid, i in ids[ident].items()}
        for name, _ in optional:  # a line no process has: pmdaproc's PM_ERR_APPVERSION
            if not columns[name] and self._pids():
                columns[name] = _APPVERSION  # type: ignore[assignment]
        return columns

    # -- clusters 31, 32, 33: schedstat, io, smaps_rollup -------------------------------

    def _keyed_cluster(
        self, cluster: int, file: str, table: Mapping[str, Any], parse: Callable[[bytes], Any]
    ) -> dict[str, Any]:
        wanted, refused = self._cluster(cluster)
        if refused is not None:
            return refused
        specs = [(name, table[name]) for name in wanted]
        columns: dict[str, dict[int, Any]] = {name: {} for name in wanted}
        for pid in self._pids():
            data = self._file(pid, file)
            if data is None:
                continue
            try:
                parsed = parse(data)
                for name, key in specs:
                    columns[name][pid] = parsed[key]
            except (IndexError, KeyError, ValueError):
                continue
        return columns

    @refresh(31)
    def _schedstat_cluster(self) -> dict[str, Any]:
        return self._keyed_cluster(
            31, "schedstat", fields.SCHEDSTAT_FIELDS, lambda data: [int(w) for w in data.split()]
        )

    @refresh(32)
    def _io_cluster(self) -> dict[str, Any]:
        return self._keyed_cluster(32, "io", fields.IO_FIELDS, fields.keyed_numbers)

    @refresh(33)
    def _smaps_cluster(self) -> dict[str, Any]:
        return self._keyed_cluster(33, "smaps_rollup", fields.SMAPS_FIELDS, fields.keyed_numbers)

    # -- clusters 51, 62, 69, 72, 74: fds, oom score, exe, cwd, autogroup ---------------

    @refresh(51)
    def _fd_cluster(self) -> dict[str, Any]:
        _, refused = self._cluster(51)
        if refused is not None:
            return refused
        counts = {}
        for pid in self._pids():
            try:
                counts[pid] = len(os.listdir(f"{self._where(pid)}/fd"))
            except OSError:
                continue
        return {"proc.fd.count": counts}

    @refresh(62)
    def _oom_cluster(self) -> dict[str, Any]:
        return self._one_file_cluster(62, "oom_score", "proc.psinfo.oom_score", fields.oom_score)

    def _link_cluster(self, cluster: int, link: str, name: str) -> dict[str, Any]:
        _, refused = self._cluster(cluster)
        if refused is not None:
            return refused
        targets = {}
        for pid in self._pids():
            try:
                targets[pid] = os.readlink(f"{self._where(pid)}/{link}")
            except OSError:
                targets[pid] = ""
        return {name: targets}

    @refresh(69)
    def _exe_cluster(self) -> dict[str, Any]:
        return self._link_cluster(69, "exe", "proc.psinfo.exe")

    @refresh(72)
    def _cwd_cluster(self) -> dict[str, Any]:
        return self._link_cluster(72, "cwd", "proc.psinfo.cwd")

    @refresh(74)
    def _autogroup_cluster(self) -> dict[str, Any]:
        wanted, refused = self._cluster(74)
        values: dict[str, Any] = {}
        enabled = fields.read_file("/proc/sys/kernel/sched_autogroup_enabled")
        on = enabled is not None and enabled.strip() == b"1"
        if "proc.autogroup.enabled" in wanted and enabled is not None and enabled.strip().isdigit():
            values["proc.autogroup.enabled"] = int(enabled)
        if refused is not None:  # (pmdaproc refuses even the machine-wide enabled)
            return refused
        ids, nices = {}, {}
        if on:
            for pid in self._pids():
                data = self._file(pid, "autogroup")
                if data is None:
                    continue
                ident, nice = fields.autogroup(data)
                ids[pid], nices[pid] = ident & 0xFFFFFFFF, nice
        values["proc.autogroup.id"] = ids
        values["proc.autogroup.nice"] = nices
        return values

    # -- hotproc.*: the same clusters over the hot processes (hotagent.py) ----------

    def _proc_refresh(self, cluster: int) -> dict[str, Any]:
        """proc.* CLUSTER's refresh, which its hotproc.* copy reuses over the hot processes."""
        return _PROC_REFRESH[cluster](self)


#: Each proc.* cluster's refresh method, which its hotproc.* cluster reuses.
_PROC_REFRESH: dict[int, Callable[[Proc], dict[str, Any]]] = {
    8: Proc._stat_cluster,
    9: Proc._statm_cluster,
    11: Proc._cgroup_cluster,
    12: Proc._label_cluster,
    24: Proc._status_cluster,
    31: Proc._schedstat_cluster,
    32: Proc._io_cluster,
    33: Proc._smaps_cluster,
    51: Proc._fd_cluster,
    62: Proc._oom_cluster,
    69: Proc._exe_cluster,
    72: Proc._cwd_cluster,
    74: Proc._autogroup_cluster,
}
assert set(_PROC_REFRESH) == set(HOT_CLUSTERS)

__all__ = ["CLUSTERS", "Proc"]
