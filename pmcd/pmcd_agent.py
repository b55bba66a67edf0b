"""pmcd's own agent (domain 2): the pmcd.* metrics, as PCP 6.0.3's pmcd PMDA exports them.

The daemon loads `PmcdAgent` in-process with its `DaemonState` (pmcd.stats) and
the agent answers from it: every metric of PCP's pmdapmcd, with its name, PMID,
descriptor and instance domain (1 pmloggers, 2 control registers, 3 agents, 4
pmie processes, 5 buffer pools, 6 clients; ids and names as PCP gives them).
The current client is the `sender` of each request (the context number pmcd
puts in the PDUs it forwards), which the client metrics and stores need.

Stores follow pmdapmcd: pmcd.control.debug, timeout (negative: PM_ERR_SIGN),
register[0..15], traceconn/tracepdu/tracenobuf (0 or 1, else PM_ERR_BADSTORE),
tracebufs (PM_ERR_SIGN below 0), the push-buttons dumptrace, dumpconn and sighup
(queued for the daemon), pmcd.seqnum (adds one, whatever the value),
pmcd.agent.fenced (a client with uid 0 only, else PM_ERR_PERMISSION; 0 or 1;
pmcd's own domain is never fenced), pmcd.client.whoami and container (the
storing client's own).  Anything else in clusters 0, 1, 2, 3, 5, 7 and 8 is
PM_ERR_PMID, and other pmcd.agent.* stores are accepted and change nothing, as in
PCP.  Where pmdapmcd reads a value with no check we refuse it instead: an
integer control given a value that is not an in-PDU 32-bit word is
PM_ERR_BADSTORE, a client string given a non-string too.

Metrics that get no value here (never a made-up one):

- pmcd.labels: until the daemon sets `DaemonState.labels`.
- pmcd.openfds: until the daemon notes a file descriptor.
- pmcd.feature.*: those the daemon has not put in `DaemonState.features` (it puts
  all ten once it listens: what this pmcd does, no TLS, compression, SASL or discovery).
- pmcd.datasize: where /proc/self/maps cannot be read (not Linux).
- pmcd.cputime.per_pdu_in: before any PDU has come in.
- pmcd.pmlogger.*, pmcd.pmie.*: when no pmlogger or pmie runs (as in PCP);
  they are read from $PCP_TMP_DIR/pmlogger and $PCP_TMP_DIR/pmie as PCP does.

pmcd.buf.alloc counts the PDU buffers the daemon holds (a client's partial PDU, the
request being answered, an agent's partial reply) by libpcp's size classes, and
pmcd.buf.free is 0, as in PCP 6, which keeps no freed buffers either.

As in pmdapmcd, the agent table's instance list is in table order and its
values in domain order (clients and pmie processes likewise), and a register is
found by a name read as a number ("07" is 7).  Differences from pmdapmcd: a
client's uid comes from its credentials (PCP_ATTR_USERID) only, where PCP lets a
later client in the same context slot inherit uid 0; pmloggers and pmie
processes are looked up afresh at each request; pmcd.hostname is this host's
name even for a client looking into a container (PCP asks pmdaroot for the
container's) (PCP rereads the pmie directory
only when its time changes); the pmie statistics layout is Linux's; and
PCP's per-PDU CPU time divides by zero before any PDU came in.

What the metrics read of the host is `host_facts`; of PCP's other processes
(pmloggers, pmies, pmproxy), `pcp_processes`.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from purepcp.pmapi.cnumbers import int32, strtol, uint32
from purepcp.pmapi.errors import (
    PM_ERR_BADSTORE,
    PM_ERR_INST,
    PM_ERR_PERMISSION,
    PM_ERR_PMID,
    PM_ERR_SIGN,
    PMError,
)
from purepcp.pmapi.ids import PM_IN_NULL, pmID_cluster, pmID_item
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.records import ErrorPDU, InstancePDU, InstanceReqPDU
from purepcp.pmapi.values import Result, ValueSet, string_value
from purepcp.pmda import (
    COUNTER,
    DISCRETE,
    DOUBLE,
    FLOAT,
    I32,
    STRING,
    U32,
    U64,
    Agent,
    InDom,
    Metric,
    metric,
    refresh,
)

from .host_facts import heap_bounds, host_timezone, host_zoneinfo
from .pcp_processes import LoggerPort, find_pmies, find_pmloggers, running_services
from .stats import (
    FEATURES,
    NUM_REGISTERS,
    TR_MASK_CONN,
    TR_MASK_NOBUF,
    TR_MASK_PDU,
    DaemonState,
)

# -- the agent -----------------------------------------------------------------------------

#: The PDU type slots with a pmcd.pdu_in/pdu_out metric (slot 11, DATA_X, has none).
PDU_NAMES = {t - PDUType.PDU_ERROR: t.label.lower() for t in PDUType if t != PDUType.PDU_ATTR} | {
    PDUType.PDU_ATTR - PDUType.PDU_ERROR: "auth"
}


def _pdu_metrics(direction: str) -> tuple[Metric, ...]:
    return tuple(
        Metric(f"pmcd.pdu_{direction}.{name}", U32, COUNTER, "count")
        for name in ("total", *PDU_NAMES.values())
    )


_PDU_VALUE_NAMES = {
    direction: [(f"pmcd.pdu_{direction}.{name}", s) for s, name in PDU_NAMES.items()]
    for direction in ("in", "out")
}


def _pdu_values(direction: str, counts: list[int]) -> dict[str, int]:
    values = {name: uint32(counts[s]) for name, s in _PDU_VALUE_NAMES[direction]}
    values[f"pmcd.pdu_{direction}.total"] = uint32(sum(counts))
    return values


#: pmdapmcd's buffer pool instances (pmcd.buf.*): ids and names.
POOL_IDS = (12, 20, 1024, 2048, 4196, 8192, 8193)
POOL_NAMES = ("0012", "0020", "1024", "2048", "4196", "8192", "8192+")


class PmcdAgent(Agent):
    """pmcd's own agent: the daemon's state as PCP's pmcd.* metrics."""

    name, domain = "pmcd", 2

    loggers = InDom(1)
    registers = InDom(2, {i: str(i) for i in range(NUM_REGISTERS)})
    table = InDom(3, sorted_values=True)  # (values in domain order, as pmdapmcd sorts them)
    pmies = InDom(4, sorted_values=True)
    pools = InDom(5, dict(zip(POOL_IDS, POOL_NAMES, strict=True)))
    clients = InDom(6, sorted_values=True)

    metrics = (
        *_pdu_metrics("in"),
        *_pdu_metrics("out"),
        *(Metric(f"pmcd.feature.{leaf}", U32) for leaf in FEATURES),
    )

    def __init__(self, domain: int | None = None, *, state: DaemonState | None = None, **kw: Any):
        super().__init__(domain, **kw)
        self.state = state if state is not None else DaemonState()
        self._slot = 0  # the context (client slot) of the request being answered
        self._logger_ports: list[LoggerPort] = []
        self._logger_error: PMError | None = None
        self._pmie_stats: dict[int, tuple[str, dict[str, Any]]] = {}
        self._zoneinfo: str | None = None
        heap = heap_bounds()
        self._brk_base = heap[1] if heap and heap[1] else None
        self._cpu_marks: dict[int, tuple[int, int, float]] = {}  # slot: (seq, pdus, cpu)

    # -- requests ----------------------------------------------------------------------

    def handle(self, pdu: Any) -> Any:
        """Answer PDU for the client whose context it comes from (its sender)."""
        self._slot = getattr(pdu, "sender", 0)
        registers = self.indom_id(self.registers)
        if isinstance(pdu, InstanceReqPDU) and pdu.name is not None and pdu.indom == registers:
            return self._register_by_name(pdu)
        return super().handle(pdu)

    def _register_by_name(self, pdu: InstanceReqPDU) -> Any:
        """A register's id from its name, read as a number ("07" is 7), as pmdapmcd does:
        (int)strtol of all of the name."""
        name = pdu.name or ""
        number = strtol(name)
        inst = int32(int(number.value))
        if number.end != len(name) or not 0 <= inst < NUM_REGISTERS:
            return ErrorPDU(PM_ERR_INST)
        return InstancePDU(pdu.indom, (inst,), ("",))

    # -- instance domains ---------------------------------------------------------------

    @loggers.refresh
    def _read_loggers(self) -> dict[int, str]:
        try:
            self._logger_ports, self._logger_error = find_pmloggers(self.state.tmp_dir), None
        except PMError as exc:
            self._logger_ports, self._logger_error = [], exc
        return {p.pid: p.name for p in self._logger_ports}

    @table.refresh
    def _read_table(self) -> dict[int, str]:
        return {a.domain: a.name for a in self.state.agents}

    @pmies.refresh
    def _read_pmies(self) -> dict[int, str]:
        self._pmie_stats = find_pmies(self.state.tmp_dir, self.state.run_dir)
        return {inst: name for inst, (name, _) in self._pmie_stats.items()}

    @clients.refresh
    def _read_clients(self) -> dict[int, str]:
        records = sorted(self.state.clients.values(), key=lambda c: c.slot)
        return {c.seq: str(c.seq) for c in records}

    # -- cluster 0: pmcd itself ---------------------------------------------------------

    @metric("pmcd.control.debug", I32, DISCRETE)
    def debug(self) -> int:
        return self.state.debug

    @metric("pmcd.datasize", U32, units="Kbyte")
    def datasize(self) -> int | None:
        heap = heap_bounds()
        if heap is None:
            return None
        base = self._brk_base if self._brk_base is not None else heap[0]
        return max(heap[1] - base, 0) // 1024

    @metric("pmcd.numagents", U32)
    def numagents(self) -> int:
        return self.state.numagents

    @metric("pmcd.numclients", U32)
    def numclients(self) -> int:
        return self.state.numclients

    @metric("pmcd.control.timeout", U32, DISCRETE)
    def timeout(self) -> int:
        return uint32(round(self.state.timeout))  # the daemon's -t may be fractional

    @metric("pmcd.timezone", STRING, DISCRETE)
    def timezone(self) -> str:
        return self.state.timezone or host_timezone()

    @metric("pmcd.zoneinfo", STRING, DISCRETE)
    def zoneinfo(self) -> str:
        if self._zoneinfo is None:  # as pmdapmcd, worked out once
            self._zoneinfo = host_zoneinfo()
        return self._zoneinfo

    @metric("pmcd.simabi", STRING, DISCRETE)
    def simabi(self) -> str:
        return self.state.simabi

    @metric("pmcd.version", STRING, DISCRETE)
    def version(self) -> str:
        return self.state.version

    @metric("pmcd.control.register", I32, DISCRETE, indom=registers)
    def register(self, inst: int) -> int:
        return self.state.registers[inst]

    @metric("pmcd.control.traceconn", I32, DISCRETE)
    def traceconn(self) -> int:
        return int(bool(self.state.trace_mask & TR_MASK_CONN))

    @metric("pmcd.control.tracepdu", I32, DISCRETE)
    def tracepdu(self) -> int:
        return int(bool(self.state.trace_mask & TR_MASK_PDU))

    @metric("pmcd.control.tracebufs", I32, DISCRETE)
    def tracebufs(self) -> int:
        return self.state.trace_bufs

    @metric("pmcd.control.dumptrace", I32, DISCRETE)
    def dumptrace(self) -> int:
        return 0  # a push-button: reads as 0

    @metric("pmcd.control.dumpconn", I32, DISCRETE)
    def dumpconn(self) -> int:
        return 0

    @metric("pmcd.control.tracenobuf", I32, DISCRETE)
    def tracenobuf(self) -> int:
        return int(bool(self.state.trace_mask & TR_MASK_NOBUF))

    @metric("pmcd.control.sighup", I32, DISCRETE)
    def sighup(self) -> int:
        return 0

    @metric("pmcd.services", STRING)
    def services(self) -> str:
        return running_services(self.state.run_dir)

    @metric("pmcd.openfds", U32)
    def openfds(self) -> int | None:
        return self.state.hi_openfds

    @metric("pmcd.buf.alloc", I32, units="count", indom=pools)
    def buf_alloc(self) -> Mapping[int, int]:
        """PDU buffers held now, counted as pmdapmcd counts libpcp's: for each instance,
        those of at least its size less those of at least 1 KB more."""
        sizes = list(self.state.held_buffers())

        def at_least(n: int) -> int:
            return sum(size >= n for size in sizes)

        return {inst: at_least(inst) - at_least(inst + 1024) for inst in POOL_IDS}

    @metric("pmcd.buf.free", I32, units="count", indom=pools)
    def buf_free(self) -> Mapping[int, int]:
        return dict.fromkeys(POOL_IDS, 0)  # a buffer let go is freed, not pooled (as libpcp 6)

    @metric("pmcd.build", STRING, DISCRETE)
    def build(self) -> str:
        return self.state.build

    @metric("pmcd.hostname", STRING, DISCRETE)
    def hostname(self) -> str:
        return self.state.hostname or socket.gethostname()

    @metric("pmcd.sighups", U32, COUNTER, "count")
    def sighups(self) -> int:
        return uint32(self.state.sighups)

    @metric("pmcd.pid", U64, DISCRETE)
    def pid(self) -> int:
        return self.state.pid

    @metric("pmcd.seqnum", U32, DISCRETE)
    def seqnum(self) -> int:
        return uint32(self.state.seqnum)

    @metric("pmcd.labels", STRING)
    def context_labels(self) -> str | None:
        return self.state.labels

    # -- clusters 1 and 2: PDUs in and out; 8: features ----------------------------------

    @refresh(1)
    def _pdus_in(self) -> dict[str, int]:
        return _pdu_values("in", self.state.pdus_in)

    @refresh(2)
    def _pdus_out(self) -> dict[str, int]:
        return _pdu_values("out", self.state.pdus_out)

    @refresh(8)
    def _features(self) -> dict[str, int]:
        features = self.state.features
        return {f"pmcd.feature.{leaf}": int(features[leaf]) for leaf in features}

    # -- cluster 3: pmloggers -------------------------------------------------------------

    def _loggers_by(self, value: Callable[[LoggerPort], Any]) -> dict[int, Any]:
        if self._logger_error is not None:  # a fresh one: a stored one would keep its traceback
            raise PMError(self._logger_error.code, self._logger_error.detail)
        return {p.pid: value(p) for p in self._logger_ports}

    @metric("pmcd.pmlogger.port", U32, DISCRETE, indom=loggers)
    def logger_port(self) -> dict[int, int]:
        return self._loggers_by(lambda p: p.port)

    @metric("pmcd.pmlogger.pmcd_host", STRING, DISCRETE, indom=loggers)
    def logger_pmcd_host(self) -> dict[int, str]:
        return self._loggers_by(lambda p: p.pmcd_host or "")

    @metric("pmcd.pmlogger.archive", STRING, DISCRETE, indom=loggers)
    def logger_archive(self) -> dict[int, str]:
        return self._loggers_by(lambda p: p.archive or "")

    @metric("pmcd.pmlogger.host", STRING, DISCRETE, indom=loggers)
    def logger_host(self) -> dict[int, str]:
        host = socket.gethostname()
        return self._loggers_by(lambda p: host)

    # -- cluster 4: agents ----------------------------------------------------------------

    @metric("pmcd.agent.type", U32, DISCRETE, indom=table)
    def agent_type(self) -> dict[int, int]:
        return {a.domain: a.type for a in self.state.agents}

    @metric("pmcd.agent.status", I32, DISCRETE, indom=table)
    def agent_status(self) -> dict[int, int]:
        return {a.domain: a.status for a in self.state.agents}

    @metric("pmcd.agent.fenced", U32, indom=table)
    def agent_fenced(self) -> dict[int, int]:
        return {a.domain: int(a.fenced) for a in self.state.agents}

    @metric("pmcd.agent.name", STRING, DISCRETE, indom=table)
    def agent_name(self) -> dict[int, str]:
        return {a.domain: a.name for a in self.state.agents}

    # -- cluster 5: pmie processes --------------------------------------------------------

    def _pmie(self, leaf: str) -> dict[int, Any]:
        return {inst: stats[leaf] for inst, (_, stats) in self._pmie_stats.items()}

    @metric("pmcd.pmie.configfile", STRING, DISCRETE, indom=pmies)
    def pmie_configfile(self) -> dict[int, str]:
        return self._pmie("configfile")

    @metric("pmcd.pmie.logfile", STRING, DISCRETE, indom=pmies)
    def pmie_logfile(self) -> dict[int, str]:
        return self._pmie("logfile")

    @metric("pmcd.pmie.pmcd_host", STRING, DISCRETE, indom=pmies)
    def pmie_pmcd_host(self) -> dict[int, str]:
        return self._pmie("pmcd_host")

    @metric("pmcd.pmie.numrules", U32, DISCRETE, indom=pmies)
    def pmie_numrules(self) -> dict[int, int]:
        return self._pmie("numrules")

    @metric("pmcd.pmie.actions", U32, COUNTER, "count", indom=pmies)
    def pmie_actions(self) -> dict[int, int]:
        return self._pmie("actions")

    @metric("pmcd.pmie.eval.true", U32, COUNTER, "count", indom=pmies)
    def pmie_true(self) -> dict[int, int]:
        return self._pmie("eval.true")

    @metric("pmcd.pmie.eval.false", U32, COUNTER, "count", indom=pmies)
    def pmie_false(self) -> dict[int, int]:
        return self._pmie("eval.false")

    @metric("pmcd.pmie.eval.unknown", U32, COUNTER, "count", indom=pmies)
    def pmie_unknown(self) -> dict[int, int]:
        return self._pmie("eval.unknown")

    @metric("pmcd.pmie.eval.expected", FLOAT, DISCRETE, "count / sec", indom=pmies)
    def pmie_expected(self) -> dict[int, float]:
        return self._pmie("eval.expected")

    @metric("pmcd.pmie.eval.actual", U32, COUNTER, "count", indom=pmies)
    def pmie_actual(self) -> dict[int, int]:
        return self._pmie("eval.actual")

    # -- cluster 6: clients ---------------------------------------------------------------

    @metric("pmcd.client.whoami", STRING, DISCRETE, indom=clients)
    def client_whoami(self) -> dict[int, str]:
        return {c.seq: c.whoami or "" for c in self.state.clients.values()}

    @metric("pmcd.client.start_date", STRING, DISCRETE, indom=clients)
    def client_start_date(self) -> dict[int, str]:
        return {c.seq: time.ctime(c.start) for c in self.state.clients.values()}

    @metric("pmcd.client.container", STRING, indom=clients)
    def client_container(self) -> dict[int, str]:
        return {c.seq: c.container or "" for c in self.state.clients.values()}

    # -- cluster 7: CPU time --------------------------------------------------------------

    @metric("pmcd.cputime.total", U64, COUNTER, "msec")
    def cputime_total(self) -> int:
        return int(_cpu_msec())

    @metric("pmcd.cputime.per_pdu_in", DOUBLE, units="microsec / count")
    def cputime_per_pdu_in(self) -> float | None:
        """Since this client last asked (or, the first time, since pmcd started)."""
        cpu, pdus = _cpu_msec(), sum(self.state.pdus_in)
        client = self.state.clients.get(self._slot)
        seq = client.seq if client is not None else -1
        self._cpu_marks = {
            slot: mark
            for slot, mark in self._cpu_marks.items()
            if slot in self.state.clients and self.state.clients[slot].seq == mark[0]
        }
        mark = self._cpu_marks.get(self._slot)
        self._cpu_marks[self._slot] = (seq, pdus, cpu)
        if mark is None or mark[0] != seq:
            return cpu * 1000 / pdus if pdus else None
        return 1000 * (cpu - mark[2]) / (pdus - mark[1]) if pdus > mark[1] else 0.0

    # -- stores -------------------------------------------------------------------------

    def store(self, result: Result) -> None:
        """Store RESULT's values as pmdapmcd does, each metric in turn.

        A bad register or agent instance, or a fence value other than 0 or 1, is
        remembered and the store goes on with the next metric; any other error ends
        it.  The last error remembered is the answer.
        """
        status = 0
        for vs in result.vsets:
            cluster, item = pmID_cluster(vs.pmid), pmID_item(vs.pmid)
            store = _STORES.get((cluster, item))
            if store is None:
                if cluster == 4:
                    continue  # pmdapmcd accepts, and ignores, other agent metrics
                raise PMError(PM_ERR_PMID)
            try:
                store(self, vs)
            except _GoOn as exc:
                status = exc.code
        if status < 0:
            raise PMError(status)

    def _store_debug(self, vs: ValueSet) -> None:
        for value in _lvals(vs)[:1]:
            self.state.debug = value

    def _store_timeout(self, vs: ValueSet) -> None:
        for value in _lvals(vs)[:1]:
            if value < 0:
                raise PMError(PM_ERR_SIGN)
            self.state.timeout = value

    def _store_register(self, vs: ValueSet) -> None:
        for inst, value in zip(map(int32, vs.insts), _lvals(vs), strict=True):
            if not 0 <= inst < NUM_REGISTERS:
                raise _GoOn(PM_ERR_INST)
            self.state.registers[inst] = value

    def _store_trace(self, vs: ValueSet, bit: int) -> None:
        for value in _lvals(vs)[:1]:
            if value not in (0, 1):
                raise PMError(PM_ERR_BADSTORE)
            self.state.trace_mask = (self.state.trace_mask & ~bit) | (bit if value else 0)

    def _store_tracebufs(self, vs: ValueSet) -> None:
        for value in _lvals(vs)[:1]:
            if value < 0:
                raise PMError(PM_ERR_SIGN)
            self.state.trace_bufs = value

    def _store_button(self, vs: ValueSet, what: str) -> None:
        self.state.request(what)  # the value does not matter

    def _store_seqnum(self, vs: ValueSet) -> None:
        self.state.seqnum += 1

    def _store_fenced(self, vs: ValueSet) -> None:
        client = self.state.clients.get(self._slot)
        if client is None or client.uid != 0:
            raise PMError(PM_ERR_PERMISSION)
        for inst, value in zip(vs.insts, _lvals(vs), strict=True):
            if value not in (0, 1):
                raise _GoOn(PM_ERR_BADSTORE)
            if inst == PM_IN_NULL:
                targets = [a for a in self.state.agents if a.domain != self.domain]
            else:
                agent = self.state.agent(inst)
                if agent is None:
                    raise _GoOn(PM_ERR_INST)
                targets = [agent] if agent.domain != self.domain else []
            for agent in targets:
                agent.fenced = bool(value)

    def _client_string(self, vs: ValueSet) -> tuple[Any, str]:
        """The storing client's record and the one string value it stores."""
        client = self.state.clients.get(self._slot)
        if vs.numval != 1 or client is None:
            raise PMError(PM_ERR_INST)
        value = vs.atoms(STRING)[0]
        if not isinstance(value, str | bytes):
            raise PMError(PM_ERR_BADSTORE)
        return client, string_value(value)

    def _store_whoami(self, vs: ValueSet) -> None:
        client, text = self._client_string(vs)
        client.whoami = text

    def _store_container(self, vs: ValueSet) -> None:
        client, text = self._client_string(vs)
        client.container = text or None
        self.state.request("container", client.slot)


class _GoOn(PMError):
    """A store error pmdapmcd remembers while it goes on with the next metric."""


def _lvals(vs: ValueSet) -> list[int]:
    """The values as pmdapmcd reads them (value.lval); in-PDU 32-bit words only."""
    if vs.numval <= 0:
        return []
    if vs.valfmt != 0:  # not PM_VAL_INSITU: pmdapmcd would read a pointer
        raise PMError(PM_ERR_BADSTORE)
    return list(vs.atoms(I32))


def _cpu_msec() -> float:
    """User and system CPU time of this process (pmcd, with its in-process agents), in ms."""
    times = os.times()
    return (times.user + times.system) * 1000


_STORES: dict[tuple[int, int], Callable[[PmcdAgent, ValueSet], None]] = {
    (0, 0): PmcdAgent._store_debug,
    (0, 4): PmcdAgent._store_timeout,
    (0, 8): PmcdAgent._store_register,
    (0, 9): partial(PmcdAgent._store_trace, bit=TR_MASK_CONN),
    (0, 10): partial(PmcdAgent._store_trace, bit=TR_MASK_PDU),
    (0, 11): PmcdAgent._store_tracebufs,
    (0, 12): partial(PmcdAgent._store_button, what="dumptrace"),
    (0, 13): partial(PmcdAgent._store_button, what="dumpconn"),
    (0, 14): partial(PmcdAgent._store_trace, bit=TR_MASK_NOBUF),
    (0, 15): partial(PmcdAgent._store_button, what="sighup"),
    (0, 24): PmcdAgent._store_seqnum,
    (4, 2): PmcdAgent._store_fenced,
    (6, 0): PmcdAgent._store_whoami,
    (6, 2): PmcdAgent._store_container,
}

__all__ = ["PmcdAgent"]
