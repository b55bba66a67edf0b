"""The pmcd daemon: agents started and watched, clients accepted and served, all under trio.

`Daemon` owns the agents (one channel per domain, pmcd.channels), the namespace,
and the listeners.  Each client gets a task (pmcd.session), and a request to a
slow agent waits only in that client's task.  An agent that dies, times out or
talks nonsense is closed, reported as PM_ERR_NOAGENT meanwhile, and restarted:
at once the first time, as PCP's pmcd does, then after 2 seconds, 4, 8, ... up to a
minute while it keeps failing; a SIGHUP restarts a waiting agent at once.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from purepcp.pmapi import memory
from purepcp.pmapi.errors import PM_ERR_TIMEOUT, PMError
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.pdu.codec import encode
from purepcp.pmapi.pdu.constants import CLIENT_PDU_CEILING, Attr, PMCDState
from purepcp.pmapi.pdu.records import ErrorPDU
from purepcp.pmapi.pmns import PMNS
from purepcp.pmda.agent import DATA_DIR, combined_pmns
from purepcp.pmda.inproc import AgentLoadError, agent_class, load_agent

from .access import Gatekeeper, Peer
from .agent_changes import AgentChanges, compare_agents
from .channels import (
    Channel,
    InProcessChannel,
    StreamChannel,
    connect_socket_agent,
    start_pipe_agent,
)
from .config import PMCD_AGENT, AgentLine, PmcdConfig
from .listen import RequestPort, open_request_ports
from .pmcd_agent import PmcdAgent
from .session import Session
from .stats import (
    AGENT_TYPE,
    REASON_EXIT,
    REASON_NOSTART,
    STATUS_NOTREADY,
    STATUS_READY,
    AgentRecord,
    DaemonState,
    termination_status,
)

log = logging.getLogger("pmcd")

#: Seconds without a client leaving before pmcd gives back what departed clients took.
SETTLE_AFTER = 1.0
#: Seconds before a failed agent's second restart (its first is at once), and the most
#: it waits.
FIRST_RESTART, LONGEST_RESTART = 2.0, 60.0


@dataclass
class Settings:
    """What the command line decides."""

    timeout: float = 5.0  # -t: seconds to wait for an agent's reply
    creds_timeout: float = 3.0  # -q: seconds to wait for an agent's first PDU
    port: int = 44321  # -p
    addresses: Sequence[str] = ()  # -i: addresses to listen on (default: all)
    unix_path: str | None = None  # -s
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    #: where agents pmcd starts run (and so write their logs), as PCP's pmcd log directory
    agent_dir: str | None = None
    #: the largest PDU a client may send (-L; PCP's ceiling, 64 KB, by default)
    pdu_limit: int = CLIENT_PDU_CEILING
    #: seconds before a failed agent's second restart, or its second attempt to start
    #: (doubling to LONGEST_RESTART; the first restart after a death is at once)
    first_restart: float = FIRST_RESTART
    #: -H: the host name pmcd gives (pmcd.hostname, the hostname context label); None:
    #: this host's own
    hostname: str | None = None
    #: the request ports, opened already (pmcd.listen); None: open them as said above
    ports: list[RequestPort] | None = None
    #: $PCP_SYSCONF_DIR: its labels/ files and labels.conf make the context labels
    #: (None: no label files)
    sysconf_dir: str | None = None


def host_context_labels(
    hostname: str | None = None,
    sysconf_dir: str | None = None,
    creds: tuple[int, int] | None = None,
    container: str | None = None,
) -> tuple[LabelSet, ...]:
    """The context labels of this host, as PCP's pmcd gives them: the label files of
    SYSCONF_DIR, then hostname (HOSTNAME if given), [container], domain name and machine
    id, then a client's optional groupid and userid (CREDS: its uid and gid)."""
    from purepcp.pmapi.labels import context_labels

    host = hostname or socket.gethostname()
    return (context_labels(sysconf_dir, host, creds=creds, container=container),)


def namespace_for(config: PmcdConfig, pmns_path: str | None) -> PMNS:
    """The namespace: -n FILE, else the agents' own namespace files under one root."""
    if pmns_path is not None:
        return PMNS.from_file(pmns_path)
    files = {}
    for line in config.agents:
        path = _pmns_source(line)
        if path.exists():
            files[path] = (line.name.upper(), line.domain)
    return combined_pmns(list(files), dict(files.values()))


def _pmns_source(line: AgentLine) -> Path:
    """An agent's own namespace file: a Python agent's beside its module (an agent
    package's), else the one shipped with purepcp under the agent's name."""
    shipped = DATA_DIR / "pmns" / line.name
    if line.python_spec is None or line.python_spec == PMCD_AGENT or shipped.exists():
        return shipped
    try:
        return agent_class(line.python_spec).source_file("pmns")
    except AgentLoadError:
        return shipped  # (it cannot start either: pmcd reports that when it tries)


class Daemon:
    """pmcd: its agents, its namespace and its clients."""

    def __init__(self, config: PmcdConfig, pmns: PMNS, settings: Settings) -> None:
        self.config = config
        self.pmns = pmns
        self.settings = settings
        self.channels: dict[int, Channel] = {}
        self.sessions: dict[int, Session] = {}
        self.listening: list[str] = []
        self.ports: list[RequestPort] = []
        self.gatekeeper = Gatekeeper(config.access)
        self.state = DaemonState(creds_timeout=round(settings.creds_timeout))
        self.state.timeout = settings.timeout  # type: ignore[assignment]  # -t may be fractional
        self.state.hostname = settings.hostname
        self.state.set_agents(_agent_record(a, None) for a in config.agents)
        self._supervisors: dict[int, tuple[trio.CancelScope, trio.Event]] = {}
        self._nursery: trio.Nursery | None = None
        self.ready = trio.Event()
        #: what a store into pmcd.control.sighup does (the pmcd command reloads, as SIGHUP)
        self.on_sighup: Callable[[], None] | None = None
        self._client_left = trio.Event()
        #: set (and replaced) by a reload: agents waiting to be restarted go at once
        self._restart_now = trio.Event()
        #: the label files' labels (JSON) as last read, to tell clients when they change
        self._label_files: bytes | None = self._read_label_files()

    # -- agents --------------------------------------------------------------------------

    async def start_agent(self, line: AgentLine) -> Channel:
        """Start (or connect to) the agent of LINE and shake hands with it."""
        if line.kind == "dso":
            if line.is_pmcd_agent:
                own = PmcdAgent(line.domain, state=self.state)  # reads pmcd's state: no thread
                return InProcessChannel(line.name, line.domain, own, inline=True)
            if line.load_problem is not None:
                raise PMError(-12386, line.load_problem)
            if line.is_c_dso:  # served by a host process, as a pipe agent
                return await start_pipe_agent(
                    line.name,
                    line.domain,
                    line.dso_host_argv(sys.executable),
                    self.settings.creds_timeout,
                    self.settings.env,
                    self.settings.agent_dir,
                )
            # loading runs the agent's own code: off the event loop, and within -q
            with trio.move_on_after(self.settings.creds_timeout) as scope:
                try:
                    agent = await trio.to_thread.run_sync(
                        load_agent, line.python_spec, line.domain, abandon_on_cancel=True
                    )
                except AgentLoadError as exc:
                    raise PMError(-12386, str(exc)) from exc
            if scope.cancelled_caught:  # (the thread is left to finish, and then dropped)
                limit = self.settings.creds_timeout
                raise PMError(PM_ERR_TIMEOUT, f"it did not load in {limit:g}s (-q)")
            return InProcessChannel(line.name, line.domain, agent)
        timeout = self.settings.creds_timeout
        if line.kind == "pipe":
            return await start_pipe_agent(
                line.name,
                line.domain,
                line.argv,
                timeout,
                self.settings.env,
                self.settings.agent_dir,
            )
        process = None
        if line.argv:  # pmcd starts the agent, then connects once it listens
            process = await trio.lowlevel.open_process(
                list(line.argv),
                stdin=subprocess.DEVNULL,
                stdout=2,
                env=self.settings.env,
                cwd=self.settings.agent_dir,
            )
        return await connect_socket_agent(
            line.name,
            line.domain,
            lambda: self._connect(line),
            timeout,
            line.family or "inet",
            process,
        )

    async def _connect(self, line: AgentLine) -> trio.abc.Stream:
        """Connect to a socket agent, retrying for a few seconds while it starts."""
        with trio.move_on_after(max(self.settings.creds_timeout, 5)):
            while True:
                try:
                    if line.family == "unix":
                        return await trio.open_unix_socket(line.socket_name or "")
                    host = "::1" if line.family == "ipv6" else "127.0.0.1"
                    return await trio.open_tcp_stream(host, line.port or 0)
                except OSError:
                    await trio.sleep(0.1)
        raise PMError(-12386, f"{line.name}: cannot connect to the agent's socket")

    async def supervise(self, line: AgentLine, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Keep LINE's agent running: start it, and restart it when it fails.

        Reports itself started after the first attempt, whether or not it worked.
        Nothing an agent does escapes this task: a failure to start, a death at any
        moment, is one line in the log and a later attempt.  An agent that dies is
        restarted at once, as PCP's pmcd restarts a deceased agent, and its death and
        restart are told to clients together (PCP's pmcd notices the death and restarts
        in one step); if it dies again, the wait before the next attempt is
        FIRST_RESTART seconds, doubling up to LONGEST_RESTART (PCP's pmcd waits a
        minute), back to "at once" only once an agent has served for LONGEST_RESTART.
        An agent that fails to start waits as long.  A reload restarts a waiting agent
        at once (PCP's SIGHUP restarts deceased agents).  A reload stops this task by
        cancelling its scope; its agent is closed on the way out.
        """
        scope, done = trio.CancelScope(), trio.Event()
        self._supervisors[line.domain] = (scope, done)
        reported = False

        def report() -> None:
            nonlocal reported
            if not reported:
                reported = True
                task_status.started()

        try:
            with scope:
                await self._keep_running(line, report)
        finally:
            report()  # a reload may stop it before its first attempt ends
            channel = self.channels.pop(line.domain, None)
            if channel is not None:
                with trio.CancelScope(shield=True):
                    await _close_quietly(channel)
            done.set()

    async def _keep_running(self, line: AgentLine, report: Callable[[], None]) -> None:
        """supervise's loop: start, serve, and after a failure wait as it says."""
        delay = self.settings.first_restart  # the next wait (when not at once)
        at_once = True  # whether the agent's next death is restarted without a wait
        news = 0  # state changes not yet told to clients (a death, with its restart)
        restarting = False
        while True:
            began = trio.current_time()
            try:
                channel = await self.start_agent(line)
            except (Exception, SystemExit) as exc:  # whatever it did: one line, try later
                final = line.load_problem is not None  # (a C library never loads here)
                log.error(
                    'Cannot start "%s" agent (domain %d): %s%s',
                    line.name,
                    line.domain,
                    _reason(exc),
                    "" if final else f"; next attempt in {delay:g}s",
                )
                self._set_status(line, termination_status(REASON_NOSTART), None)
                if news:
                    self.mark_changes(news)
                news = 0
                report()
                if final:
                    return
                await self._pause(delay)
                delay = min(delay * 2, LONGEST_RESTART)
                continue
            if restarting:
                news |= PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT
            if news:
                self.mark_changes(news)
            news, restarting = 0, True
            report()
            why, code = await self._watch(line, channel)
            if trio.current_time() - began >= LONGEST_RESTART:  # it served a good while
                delay, at_once = self.settings.first_restart, True
            if at_once:
                at_once = False
                log.warning(
                    '"%s" agent (domain %d) failed: %s; restarting it', line.name, line.domain, why
                )
                news = PMCDState.PMCD_DROP_AGENT
                continue
            self._set_status(line, termination_status(REASON_EXIT, code), None)
            self.mark_changes(PMCDState.PMCD_DROP_AGENT)
            log.warning(
                '"%s" agent (domain %d) failed: %s; restarting in %gs',
                line.name,
                line.domain,
                why,
                delay,
            )
            await self._pause(delay)
            delay = min(delay * 2, LONGEST_RESTART)

    async def _pause(self, seconds: float) -> None:
        """Wait SECONDS, or until a reload asks for deceased agents to be restarted."""
        with trio.move_on_after(seconds):
            await self._restart_now.wait()

    async def _watch(self, line: AgentLine, channel: Channel) -> tuple[str, int | None]:
        """Serve with CHANNEL until it fails; then close it and return why, and its
        process's exit status if it had one."""
        self.channels[line.domain] = channel
        self._set_status(line, STATUS_READY, channel.pid)
        self.state.seqnum += 1
        log.info('Started "%s" agent (domain %d, %s)', line.name, line.domain, line.kind)
        process = channel.process if isinstance(channel, StreamChannel) else None
        async with trio.open_nursery() as watching:
            if process is not None:  # an idle agent that dies is noticed at once
                watching.start_soon(_watch_exit, channel, process)
            if isinstance(channel, StreamChannel):
                if line.notready:  # it starts busy: its READY comes when it is ready
                    channel.set_not_ready()
                watching.start_soon(self._watch_readiness, line, channel)
            await channel.wait_dead()
            watching.cancel_scope.cancel()
        if self.channels.get(line.domain) is channel:
            del self.channels[line.domain]
        await _close_quietly(channel)
        code = process.returncode if process is not None else None
        return channel.failure + _ending(code), code

    async def _watch_readiness(self, line: AgentLine, channel: StreamChannel) -> None:
        """Each time the agent goes busy (PM_ERR_PMDANOTREADY), hear its READY, keeping
        pmcd.agent.status in step; until the channel fails."""
        while True:
            await channel.wait_not_ready()
            self._set_status(line, STATUS_NOTREADY, channel.pid)
            if not await channel.wait_ready():
                return
            self._set_status(line, STATUS_READY, channel.pid)

    async def reload(self, config: PmcdConfig, pmns: PMNS) -> AgentChanges:
        """SIGHUP: take CONFIG and PMNS, restarting only the agents whose lines changed."""
        changes = compare_agents(self.config, config)
        stopping = [old for old in changes.removed] + [old for old, _ in changes.changed]
        for old in stopping:
            scope, done = self._supervisors.pop(old.domain, (None, None))
            if scope is not None and done is not None:
                scope.cancel()
                await done.wait()
        previous = {record.domain: record for record in self.state.agents}
        self.config, self.pmns = config, pmns
        self.gatekeeper = Gatekeeper(config.access)
        self.state.set_agents(_agent_record(a, previous.get(a.domain)) for a in config.agents)
        self.state.sighups += 1
        self._check_label_files()  # (as PCP's SIGHUP: clients hear of changed label files)
        self._restart_now.set()  # agents waiting to be restarted go now (not those started below)
        self._restart_now = trio.Event()
        async with trio.open_nursery() as starting:  # all at once, each bounded by -q
            for new in [*changes.added, *(new for _, new in changes.changed)]:
                starting.start_soon(self._nursery.start, self.supervise, new)
        for what, lines in (("stopped", changes.removed), ("restarted", changes.changed)):
            if lines:
                log.info("reload: %s %s", what, ", ".join(_agent_name(a) for a in lines))
        if changes.added:
            log.info("reload: started %s", ", ".join(a.name for a in changes.added))
        # as PCP's pmcd: an agent started is added, one stopped dropped (a changed line's
        # agent is both)
        self.mark_changes(
            (PMCDState.PMCD_ADD_AGENT if changes.added or changes.changed else 0)
            | (PMCDState.PMCD_DROP_AGENT if changes.removed or changes.changed else 0)
        )
        _settle_memory()
        return changes

    def _set_status(self, line: AgentLine, status: int, pid: int | None) -> None:
        """Record an agent's state for pmcd.agent.status and friends."""
        record = self.state.agent(line.domain)
        if record is not None:
            record.status, record.pid = status, pid

    # -- clients -------------------------------------------------------------------------

    def context_labels(
        self, creds: tuple[int, int] | None = None, container: str | None = None
    ) -> tuple[LabelSet, ...]:
        """pmcd's context labels for a client (CREDS: its uid and gid, if known; its
        CONTAINER), the label files read afresh as PCP's pmcd reads them each time."""
        from purepcp.pmapi.labels import host_labels

        sysconf = self.settings.sysconf_dir
        files = self._check_label_files()
        host = self.settings.hostname or socket.gethostname()
        return (host_labels(files, sysconf, host, creds=creds, container=container),)

    def _read_label_files(self) -> bytes | None:
        from purepcp.pmapi.labels import label_files

        found = label_files(self.settings.sysconf_dir)
        return None if found is None else found.json

    def _check_label_files(self) -> LabelSet | None:
        """The label files' labels now; if they differ from the last read, every client
        hears of it (PMCD_LABEL_CHANGE with its next fetch), as PCP's CheckLabelChange."""
        from purepcp.pmapi.labels import label_files

        found = label_files(self.settings.sysconf_dir)
        now = None if found is None else found.json
        if now != self._label_files:
            self._label_files = now
            self.mark_changes(PMCDState.PMCD_LABEL_CHANGE)
        return found

    def mark_changes(self, changes: int) -> None:
        """Tell every client, with its next fetch's answer, of pmcd state CHANGES."""
        for session in self.sessions.values():
            session.note_changes(changes)

    async def serve_client(self, stream: trio.SocketStream) -> None:
        """Serve one client connection to its end; nothing it does can end pmcd."""
        try:
            await self._serve_client(stream)
        except Exception as exc:  # a fault of ours with one client: drop it, say so, go on
            log.error("client connection dropped after an internal error: %r", exc)
        finally:
            with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                await stream.aclose()

    async def _serve_client(self, stream: trio.SocketStream) -> None:
        """Admit the client if [access] does, serve it, and at its end tell the agents."""
        peer = _peer(stream)
        if peer is None:
            return  # gone before we could ask who it was (a port probe)
        decision = self.gatekeeper.admit(peer.who)
        if not decision.may_connect:
            log.info("client %s refused: %s", peer.who.address or "on the unix socket", decision)
            # as PCP's pmcd: the greeting itself carries the error, with no features
            with trio.move_on_after(1), contextlib.suppress(trio.BrokenResourceError, OSError):
                await stream.send_all(encode(ErrorPDU(decision.status, 0)))
            return
        slot = next(i for i in range(len(self.sessions) + 1) if i not in self.sessions)
        session = Session(
            slot,
            stream,
            lambda: self.pmns,
            self.channels,
            lambda: float(self.state.timeout),  # pmcd.control.timeout may change it
            self.context_labels,
            lambda: {agent.domain for agent in self.config.agents},
            self.mark_changes,
            count=self.state.count,
            denied=decision.deny,
            peer_creds=peer.creds,
            on_attribute=self.state.client_attribute,
            pdu_limit=self.settings.pdu_limit,
        )
        self.sessions[slot] = session
        try:
            self.state.client_connected(slot, peer.who.address)
            self.state.note_fd(stream.socket.fileno())
            # (a client that went away mid-conversation is the end of it, nothing more)
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await session.serve()
        finally:
            self.state.client_disconnected(slot)
            self.gatekeeper.del_client(peer.who.address)
            try:
                await self._end_context(slot)
            finally:
                del self.sessions[slot]  # only now may another client have the slot
                self._client_left.set()

    async def _end_context(self, slot: int) -> None:
        """Tell every agent that the client in SLOT has gone (PM_ERR_NOTCONN), all at once,
        each within the agent timeout, before the slot goes to another client: an agent
        must not take a newcomer for the client whose credentials it holds."""
        timeout = float(self.state.timeout)
        async with trio.open_nursery() as nursery:
            for channel in list(self.channels.values()):
                nursery.start_soon(channel.end_context, slot, timeout)

    def held_buffers(self) -> list[int]:
        """The sizes of the PDU buffers pmcd holds now, for clients and agents."""
        sizes = [size for session in self.sessions.values() for size in session.held_buffers()]
        for channel in self.channels.values():
            if isinstance(channel, StreamChannel) and channel.framer.buffered:
                sizes.append(channel.framer.buffered)
        return sizes

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Start every agent, listen, and serve until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            async with trio.open_nursery() as starting:  # agents first, as pmcd does
                for line in self.config.agents:
                    starting.start_soon(nursery.start, self.supervise, line)
            listeners = await self._listen()
            self.state.features.update(self._features())
            self.state.held_buffers = self.held_buffers
            for listener, where in zip(listeners, self.listening, strict=True):
                nursery.start_soon(self._accept, listener, where, nursery)
            nursery.start_soon(self._take_requests)
            nursery.start_soon(self._settle_after_clients)
            task_status.started(self.listening)
            _settle_memory()
            self.ready.set()

    def _features(self) -> dict[str, bool]:
        """pmcd.feature.*: what this pmcd does (no TLS, compression, SASL or discovery)."""
        return {
            "secure": False,
            "compress": False,
            "ipv6": socket.has_ipv6,
            "authentication": False,
            "creds_required": False,
            "unix_domain_sockets": any(w.startswith("unix:") for w in self.listening),
            "service_discovery": False,
            "containers": True,  # a client's container goes to the agents that ask
            "local": False,
            "client_cert_required": False,
        }

    async def _accept(self, listener: trio.SocketListener, where: str, nursery) -> None:
        """Accept clients on LISTENER for ever, each served in a task of its own.

        Out of file descriptors (or memory), pmcd logs one line, goes on serving the
        clients it has, and tries again every tenth of a second; the clients that
        wait meanwhile are in the listen backlog, as with PCP's pmcd."""
        short = False
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if not short:
                    log.error(
                        "pmcd: cannot accept connections on %s: %s; serving the %d clients "
                        "it has, and trying again",
                        where,
                        exc.strerror or exc,
                        len(self.sessions),
                    )
                short = True
                await trio.sleep(0.1)
                continue
            if short:
                log.info("pmcd: accepting connections on %s again", where)
                short = False
            nursery.start_soon(self.serve_client, stream)

    async def _settle_after_clients(self) -> None:
        """Once clients have left (a second after the last of a burst), give the memory
        they took back to the system (pmapi.memory)."""
        while True:
            await self._client_left.wait()
            while self._client_left.is_set():  # wait for a quiet second
                self._client_left = trio.Event()
                await trio.sleep(SETTLE_AFTER)
            memory.settle()

    async def _take_requests(self) -> None:
        """Act on the push-button stores into pmcd.control.* and pmcd.client.container."""
        wake = trio.Event()
        token = trio.lowlevel.current_trio_token()
        self.state.notify = lambda what: token.run_sync_soon(wake.set)
        try:
            while True:
                await wake.wait()
                wake = trio.Event()
                for what, detail in self.state.take_requests():
                    await self._act_on(what, detail)
        finally:
            self.state.notify = None

    async def _act_on(self, what: str, detail: object) -> None:
        if what == "sighup":
            if self.on_sighup is not None:
                self.on_sighup()
            else:
                log.info("pmcd: pmcd.control.sighup: no reload in this pmcd (not run by main)")
        elif what == "container" and isinstance(detail, int):
            session = self.sessions.get(detail)
            record = self.state.clients.get(detail)
            if session is not None and record is not None:
                session.set_attribute(Attr.PCP_ATTR_CONTAINER, (record.container or "").encode())
        elif what == "dumpconn":
            for slot, record in sorted(self.state.clients.items()):
                log.info(
                    "client %d: seq %d, %s, uid %s, container %s",
                    slot,
                    record.seq,
                    record.address or "unix socket",
                    record.uid,
                    record.container or "-",
                )
        elif what == "dumptrace":
            log.info("pmcd: no PDU trace is kept (pmcd.control.dumptrace)")

    async def close(self) -> None:
        """Stop every agent (each is told by its channel closing) and remove the unix socket."""
        for channel in list(self.channels.values()):
            await channel.close()
        if self.settings.unix_path:
            Path(self.settings.unix_path).unlink(missing_ok=True)

    async def _listen(self) -> list[trio.SocketListener]:
        """Listeners on the request ports the command opened (Settings.ports), else on
        those the settings say, opened now."""
        ports = self.settings.ports
        if ports is None:
            ports = open_request_ports(
                self.settings.port, self.settings.addresses, self.settings.unix_path
            )
        self.ports = list(ports)
        listeners = []
        for rp in self.ports:
            listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(rp.sock)))
            self.listening.append(rp.where)
        return listeners


@dataclass(frozen=True)
class PeerInfo:
    """Who is connecting: for [access], and on the unix socket its (uid, gid, pid)."""

    who: Peer
    creds: tuple[int, int, int | None] | None = None


def _peer(stream: trio.SocketStream) -> PeerInfo | None:
    """An address for TCP, the peer's uid, gid and pid on the unix socket; None if the
    client has already gone."""
    sock = stream.socket
    if sock.family == socket.AF_UNIX:
        try:
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", creds)
        except OSError:
            return PeerInfo(Peer.unix())
        return PeerInfo(Peer.unix(uid, gid), (uid, gid, pid or None))
    try:
        return PeerInfo(Peer(sock.getpeername()[0]))
    except OSError:
        return None


def _reason(exc: BaseException) -> str:
    """Why an agent could not start, in one line (PCP's message only where it says more)."""
    if isinstance(exc, PMError):
        return exc.detail or exc.message
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return repr(exc)


def _ending(returncode: int | None) -> str:
    """How an agent's process ended, for the log."""
    if returncode is None:
        return ""
    if returncode < 0:
        try:
            return f" ({signal.Signals(-returncode).name})"
        except ValueError:
            return f" (signal {-returncode})"
    return f" (exit status {returncode})"


async def _watch_exit(channel: Channel, process: trio.Process) -> None:
    """Mark CHANNEL dead when its agent's PROCESS ends."""
    await process.wait()
    channel.mark_dead("it exited")


async def _close_quietly(channel: Channel) -> None:
    """Close CHANNEL; a failure to close is the end of it all the same."""
    try:
        await channel.close()
    except Exception as exc:
        log.warning('"%s" agent (domain %d): closing: %r', channel.name, channel.domain, exc)


def _agent_record(line: AgentLine, previous: AgentRecord | None) -> AgentRecord:
    """LINE's entry in pmcd.agent.*: the running agent's state if it is kept, else not started."""
    record = AgentRecord(line.name, line.domain, AGENT_TYPE[line.kind])
    if previous is not None:
        record.status, record.pid = previous.status, previous.pid
    else:
        record.status = termination_status(REASON_NOSTART)
    return record


def _agent_name(item: AgentLine | tuple[AgentLine, AgentLine]) -> str:
    return item[0].name if isinstance(item, tuple) else item.name


def _settle_memory() -> None:
    """Exempt what pmcd holds for good (namespace, agents) from the garbage collector.

    A full collection walks every object (some 4.5 ms with PCP's whole namespace),
    a pause every client would see; frozen objects are skipped.  After a reload,
    the old namespace is collected first (its nodes form cycles).
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
