"""What pmcd knows about itself, for its own agent (domain 2) to report.

`DaemonState` is plain data: the daemon updates it as clients come and go, PDUs
pass and agents start or stop, and `purepcp.pmcd.pmcd_agent.PmcdAgent` reads it to
answer fetches of the pmcd.* metrics.  Stores into pmcd.control.* land here too:
settings (timeout, debug, trace) are fields the daemon reads when it needs them,
and push-button stores (sighup, dumptrace, dumpconn, a client's new container)
are queued as requests the daemon takes.  Nothing here does I/O.

The encodings are PCP 6.0.3's (src/pmcd/src/pmcd.h, src/pmdas/pmcd/src/pmcd.c):
an agent's type is its IPC kind shifted left by one, its status is 0 (ready),
1 (connected, not ready) or a termination reason with the exit status in bits
15..8 and the signal in bits 23..16; PDU counters are kept per PDU type slot
(type - PDU_ERROR), as libpcp's __pmPDUCntIn/Out are.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi import DISTRIBUTION, PCP_COMPAT_VERSION, __version__
from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.paths import paths
from purepcp.pmapi.pdu.constants import Attr, PDUType

#: pmcd.agent.type: the IPC kind (pmcd.h's AGENT_DSO, AGENT_SOCKET, AGENT_PIPE) << 1.
AGENT_TYPE = {"dso": 0 << 1, "socket": 1 << 1, "pipe": 2 << 1}

#: pmcd.agent.status values and reason bits (pmcd.h's REASON_*).
STATUS_READY = 0
STATUS_NOTREADY = 1
REASON_EXIT = 2
REASON_NOSTART = 4
REASON_PROTOCOL = 8

#: PDU type slots counted (PDU_ERROR .. PDU_DESCS), as libpcp's counter arrays.
PDU_SLOTS = 24
#: pmcd.control.register has this many registers.
NUM_REGISTERS = 16

#: pmcd's -t default (seconds to wait for an agent) and -q default (agents' CREDS).
DEFAULT_TIMEOUT = 5
DEFAULT_CREDS_TIMEOUT = 3
#: Trace buffers pmcd keeps by default (pmcd.control.tracebufs).
DEFAULT_TRACE_BUFS = 20
#: pmcd.control.trace* bits of the trace mask (pmcd.h's TR_MASK_*, pmcd -T).
TR_MASK_CONN = 1
TR_MASK_PDU = 2
TR_MASK_NOBUF = 256

#: The leaf names of pmcd.feature.*, in __pmServerFeature order (their item numbers).
FEATURES = (
    "secure",
    "compress",
    "ipv6",
    "authentication",
    "creds_required",
    "unix_domain_sockets",
    "service_discovery",
    "containers",
    "local",
    "client_cert_required",
)


def termination_status(reason: int, returncode: int | None = None) -> int:
    """pmcd.agent.status for an agent gone for REASON, with how its process ended.

    RETURNCODE is subprocess's: an exit status (bits 15..8), or minus the signal
    that killed it (bits 23..16); None when unknown.  (PCP's own pmcd garbles the
    bits for a child it reaps before noticing the closed pipe; we do not.)
    """
    if returncode is None:
        return reason
    if returncode >= 0:
        return reason | (returncode & 0xFF) << 8
    return reason | (-returncode & 0xFF) << 16


def simabi() -> str:
    """pmcd.simabi: the object format pmcd was built for, as PCP's objstyle names it."""
    machine = platform.machine()
    if machine in ("i386", "i486", "i586", "i686"):
        return "ia32"
    if machine == "aarch64":
        return "ARMaarch64"
    return machine


@dataclass
class AgentRecord:
    """One agent in pmcd's table (an instance of pmcd.agent.*)."""

    name: str
    domain: int
    type: int  # as pmcd.agent.type encodes it: AGENT_TYPE[kind]
    status: int = STATUS_READY  # as pmcd.agent.status encodes it
    pid: int | None = None  # its process, when pmcd started one
    fenced: bool = False

    @property
    def connected(self) -> bool:
        """Whether pmcd is talking to it (ready or not): what pmcd.numagents counts."""
        return self.status in (STATUS_READY, STATUS_NOTREADY)


@dataclass
class ClientRecord:
    """One connected client (an instance of pmcd.client.*), keyed by its slot."""

    slot: int  # the context number pmcd puts in the PDUs it forwards to agents
    seq: int  # pmcd.client instance: connection sequence number, from 0
    start: float  # when it connected (epoch seconds)
    address: str | None = None
    uid: int | None = None  # from its credentials (PCP_ATTR_USERID), if it sent any
    whoami: str | None = None  # what it stored into pmcd.client.whoami
    container: str | None = None  # PCP_ATTR_CONTAINER, or stored into pmcd.client.container


@dataclass
class DaemonState:
    """pmcd's counters, tables and control settings; the daemon writes, its agent reads."""

    start_time: float = field(default_factory=time.time)
    pid: int = field(default_factory=os.getpid)
    version: str = PCP_COMPAT_VERSION  # pmcd.version: the PCP release we answer as
    build: str = f"{DISTRIBUTION}-{__version__}"  # pmcd.build: which build of ours that is
    simabi: str = field(default_factory=simabi)
    hostname: str | None = None  # pmcd -H; None: the host's own name
    timezone: str | None = None  # None: worked out from the host at each fetch
    labels: str | None = None  # pmcd.labels: the context labels' JSON; None: not known
    run_dir: str = field(default_factory=lambda: str(paths().run_dir))
    tmp_dir: str = field(default_factory=lambda: str(paths().tmp_dir))
    # settings: pmcd's options, changed by stores into pmcd.control.*
    timeout: int = DEFAULT_TIMEOUT  # -t, pmcd.control.timeout (0: no timeout)
    creds_timeout: int = DEFAULT_CREDS_TIMEOUT  # -q
    debug: int = 0  # pmcd.control.debug: the debug bits
    trace_mask: int = 0  # -T: TR_MASK_* bits
    trace_bufs: int = DEFAULT_TRACE_BUFS
    registers: list[int] = field(default_factory=lambda: [0] * NUM_REGISTERS)
    # counters and tables
    seqnum: int = 1  # pmcd.seqnum: add one whenever an agent starts or restarts
    sighups: int = 0  # SIGHUPs handled
    hi_openfds: int | None = None  # highest client or agent file descriptor
    features: dict[str, bool] = field(default_factory=dict)  # pmcd.feature.*, by leaf name
    #: the sizes of the PDU buffers pmcd holds now (partial PDUs, requests being answered)
    held_buffers: Callable[[], Iterable[int]] = field(default=lambda: ())
    agents: list[AgentRecord] = field(default_factory=list)
    clients: dict[int, ClientRecord] = field(default_factory=dict)
    pdus_in: list[int] = field(default_factory=lambda: [0] * PDU_SLOTS)
    pdus_out: list[int] = field(default_factory=lambda: [0] * PDU_SLOTS)
    #: called (from the agent's thread) after a request is queued, to wake the daemon
    notify: Callable[[str], None] | None = None
    _requests: deque[tuple[str, Any]] = field(default_factory=deque, init=False, repr=False)
    _next_seq: int = field(default=0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    # -- clients ----------------------------------------------------------------------

    def client_connected(
        self, slot: int, address: str | None = None, start: float | None = None
    ) -> ClientRecord:
        """Record a new client in SLOT; it gets the next sequence number."""
        with self._lock:
            seq, self._next_seq = self._next_seq, uint32(self._next_seq + 1)
        record = ClientRecord(slot, seq, time.time() if start is None else start, address)
        self.clients[slot] = record
        return record

    def client_disconnected(self, slot: int) -> None:
        """Forget the client in SLOT."""
        self.clients.pop(slot, None)

    def client_attribute(self, slot: int, attr: int, value: bytes) -> None:
        """Note a connection attribute a client sent (ATTR PDU): its uid or container."""
        record = self.clients.get(slot)
        if record is None:
            return
        text = value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        if attr == Attr.PCP_ATTR_USERID:
            try:
                record.uid = int(text)
            except ValueError:
                record.uid = None
        elif attr == Attr.PCP_ATTR_CONTAINER:
            record.container = text or None

    @property
    def numclients(self) -> int:
        """pmcd.numclients."""
        return len(self.clients)

    # -- PDU counters -----------------------------------------------------------------

    def pdu_in(self, pdu_type: int) -> None:
        """Count a PDU received from a client or an agent."""
        slot = pdu_type - PDUType.PDU_ERROR
        if 0 <= slot < PDU_SLOTS:
            self.pdus_in[slot] += 1

    def pdu_out(self, pdu_type: int) -> None:
        """Count a PDU sent to a client or an agent."""
        slot = pdu_type - PDUType.PDU_ERROR
        if 0 <= slot < PDU_SLOTS:
            self.pdus_out[slot] += 1

    def count(self, direction: str, pdu_type: int) -> None:
        """Count a PDU going "in" or "out" (the daemon's per-PDU callback)."""
        (self.pdu_in if direction == "in" else self.pdu_out)(pdu_type)

    def note_fd(self, fd: int) -> None:
        """Note a file descriptor used for a client or an agent (pmcd.openfds is the highest)."""
        if self.hi_openfds is None or fd > self.hi_openfds:
            self.hi_openfds = fd

    # -- agents -----------------------------------------------------------------------

    def set_agents(self, agents: Iterable[AgentRecord]) -> None:
        """Replace the agent table (in pmcd.conf order)."""
        self.agents = list(agents)

    def agent(self, domain: int) -> AgentRecord | None:
        """The agent serving DOMAIN, if any."""
        return next((a for a in self.agents if a.domain == domain), None)

    @property
    def numagents(self) -> int:
        """pmcd.numagents: agents pmcd is talking to."""
        return sum(a.connected for a in self.agents)

    # -- requests from stores -----------------------------------------------------------

    def request(self, what: str, detail: Any = None) -> None:
        """Queue a request for the daemon ("sighup", "dumptrace", "dumpconn", "container")."""
        self._requests.append((what, detail))
        if self.notify is not None:
            self.notify(what)

    def take_requests(self) -> list[tuple[str, Any]]:
        """The queued requests, oldest first, and an empty queue."""
        taken = []
        while self._requests:
            taken.append(self._requests.popleft())
        return taken


__all__ = [
    "AGENT_TYPE",
    "FEATURES",
    "NUM_REGISTERS",
    "PDU_SLOTS",
    "REASON_EXIT",
    "REASON_NOSTART",
    "REASON_PROTOCOL",
    "STATUS_NOTREADY",
    "STATUS_READY",
    "TR_MASK_CONN",
    "TR_MASK_NOBUF",
    "TR_MASK_PDU",
    "AgentRecord",
    "ClientRecord",
    "DaemonState",
    "simabi",
    "termination_status",
]
