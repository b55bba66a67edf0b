"""How pmcd talks to one agent: in-process (PCP's DSO case) or over a pipe or socket.

A channel carries one request at a time (the agent protocol is strictly
request and reply), so each has a lock; requests to different agents run at
once, which is what keeps a slow agent from stalling clients of the others.
`request` sends a PDU record and returns the agent's reply record, or raises
PMError: PM_ERR_TIMEOUT when the agent takes longer than the timeout (writing
the request included), PM_ERR_NOAGENT when it is not running, PM_ERR_IPC when it
answers nonsense.  `notify` sends a PDU that gets no reply (PROFILE, ERROR) and
never raises: an agent that cannot take it is marked dead.  A channel that times
out or fails is marked dead; the supervisor restarts it.

A daemon agent may say it is busy: an ERROR PDU with PM_ERR_PMDANOTREADY as its
reply (or a `notready` pmcd.conf line, from the start).  As PCP's pmcd does, the
request gets PM_ERR_AGAIN, and so does every request to the agent until it sends
the ERROR PDU PM_ERR_PMDAREADY of its own accord (`wait_ready`, the supervisor's);
a READY it was not asked for, or anything else while it is not ready, is a
protocol failure that ends the channel.

A client's connection attributes (its uid, gid, pid and container, `Credentials`)
go to an agent that asked for them in its CREDS (PDU_FLAG_AUTH or
PDU_FLAG_CONTAINER), as ATTR PDUs from the client's slot, just before that
client's first request to it and again whenever they change, as PCP's pmcd sends
them (DoAttributes): the agent then knows who is asking before it answers.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import trio

from purepcp.pmapi.errors import (
    PM_ERR_AGAIN,
    PM_ERR_GENERIC,
    PM_ERR_IPC,
    PM_ERR_NOAGENT,
    PM_ERR_NOTCONN,
    PM_ERR_PMDANOTREADY,
    PM_ERR_PMDAREADY,
    PM_ERR_TIMEOUT,
    PMError,
)
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import CVERSION, PDU_VERSION, PDUFlag
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import AttrPDU, Cred, CredsPDU, ErrorPDU
from purepcp.pmda.agent import Agent
from purepcp.pmda.clients import CREDENTIAL_FLAGS

from .metadata import MetadataCache

log = logging.getLogger("pmcd")


#: A context's instance profile as a channel takes it: the PROFILE PDU as it goes to
#: the agent (from the client's slot), and what it says (its body after the context).
Profile = tuple[bytes, bytes]


class Credentials(Protocol):
    """What a channel needs of a client to forward its attributes: see Session."""

    slot: int
    attr_version: int

    def attr_pdus(self) -> Sequence[AttrPDU]:
        """The client's attributes as ATTR PDUs from its slot (empty: none to send)."""
        ...


class Channel:
    """One agent's connection, as pmcd uses it."""

    kind = "?"

    def __init__(self, name: str, domain: int) -> None:
        self.name = name
        self.domain = domain
        self.lock = trio.Lock()
        self.alive = False
        #: the agent said it is busy (PM_ERR_PMDANOTREADY): requests get PM_ERR_AGAIN
        self.not_ready = False
        self.pid: int | None = None
        #: what the instance profile the agent holds now says (a PROFILE PDU's body after
        #: its context number), whichever client's it was
        self.profile: bytes | None = None
        self.flags = 0
        #: which version of each client's attributes (by slot) the agent has been sent
        self.attrs_sent: dict[int, int] = {}
        #: why the channel failed, for the log ("" while it has not)
        self.failure = ""
        #: the agent's descriptors, help and labels as it gave them (pmcd.metadata)
        self.metadata = MetadataCache()
        self._died = trio.Event()

    def mark_dead(self, why: str = "pmcd closed its channel") -> None:
        """The agent can no longer be talked to (WHY, for the log): requests fail until
        it is replaced."""
        if not self.failure:
            self.failure = why
        self.alive = False
        self._died.set()

    async def wait_dead(self) -> None:
        """Return once the channel has failed (or been closed)."""
        await self._died.wait()

    def _prelude(self, client: Credentials | None, profile: Profile | None) -> list[Any]:
        """What must go before a request: CLIENT's attributes if due, and PROFILE unless
        the agent holds an equal one already (PCP's pmcd resends it whenever another
        client's request comes; an equal profile is no news to the agent)."""
        prelude: list[Any] = []
        if (
            client is not None
            and self.flags & CREDENTIAL_FLAGS
            and self.attrs_sent.get(client.slot) != client.attr_version
        ):
            prelude.extend(client.attr_pdus())
            self.attrs_sent[client.slot] = client.attr_version
        if profile is not None and profile[1] != self.profile:
            prelude.append(profile[0])
            self.profile = profile[1]
        return prelude

    async def request(
        self,
        pdu: Any,
        timeout: float,
        client: Credentials | None = None,
        profile: Profile | None = None,
    ) -> Any:
        """Send PDU, after CLIENT's attributes and the PROFILE for it if the agent needs
        them, and return the agent's reply record; all of it within TIMEOUT."""
        raise NotImplementedError

    async def notify(self, pdu: Any, timeout: float) -> None:
        """Send a PDU that gets no reply (a record, or one already encoded) within
        TIMEOUT; never raises (a failure marks the channel dead)."""
        raise NotImplementedError

    async def end_context(self, slot: int, timeout: float) -> None:
        """Tell the agent the client in SLOT has gone (PM_ERR_NOTCONN from that slot)."""
        self.attrs_sent.pop(slot, None)
        if self.alive:
            await self.notify(ErrorPDU(PM_ERR_NOTCONN, None, slot), timeout)

    async def close(self) -> None:
        """Stop talking to the agent (and stop it, if pmcd started it)."""
        self.mark_dead()


class _Departures:
    """Clients' slots gathered for one PM_ERR_NOTCONN hand-off to an in-process agent:
    open to more until the agent is free to take them (sealed), then delivered."""

    def __init__(self, slots: list[int]) -> None:
        self.slots = slots
        self.sealed = False
        self.delivered = trio.Event()

    def seal(self) -> list[ErrorPDU]:
        """The NOTCONN PDUs for every slot gathered; no more join."""
        self.sealed = True
        return [ErrorPDU(PM_ERR_NOTCONN, None, slot) for slot in self.slots]


class InProcessChannel(Channel):
    """An agent loaded into pmcd: requests run in a worker thread, one at a time.

    INLINE agents (pmcd's own, which only reads pmcd's state and a few local
    files) answer on the event loop itself: no thread hand-off, no timeout.  An
    exception from the agent's code answers PM_ERR_GENERIC and is logged, as a
    daemon agent's framework does; it ends neither the agent nor pmcd.
    """

    kind = "dso"

    def __init__(self, name: str, domain: int, agent: Agent, inline: bool = False) -> None:
        super().__init__(name, domain)
        self.agent = agent
        self.inline = inline
        self.alive = True
        self.pid = os.getpid()
        self.flags = CREDENTIAL_FLAGS if getattr(agent, "wants_credentials", False) else 0
        self._ending: _Departures | None = None  # the departures not yet handed over

    def _handle(self, pdus: Sequence[Any]) -> Any:
        """Hand PDUS to the agent in order; the last one's reply (exceptions logged)."""
        reply = None
        for pdu in pdus:
            try:
                reply = self.agent.handle(pdu)
            except (Exception, SystemExit) as exc:  # its own code failed: answer, log, go on
                log.error(
                    '"%s" agent (domain %d): %s failed: %r',
                    self.name,
                    self.domain,
                    type(pdu).__name__,
                    exc,
                )
                reply = ErrorPDU(PM_ERR_GENERIC)
        return reply

    async def request(
        self,
        pdu: Any,
        timeout: float,
        client: Credentials | None = None,
        profile: Profile | None = None,
    ) -> Any:
        if not self.alive:
            raise PMError(PM_ERR_NOAGENT)
        if self.inline:
            prelude = self._prelude(client, profile)
            reply = self._handle([*self._decoded(prelude), pdu] if prelude else [pdu])
        else:
            async with self.lock:
                if not self.alive:
                    raise PMError(PM_ERR_NOAGENT)
                pdus = [*self._decoded(self._prelude(client, profile)), pdu]
                # the agent's own code may block (psutil, files): keep it off pmcd's event loop
                with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
                    reply = await trio.to_thread.run_sync(
                        self._handle, pdus, abandon_on_cancel=True
                    )
                if scope.cancelled_caught:
                    # the thread is left to finish on its own; this agent object is done with
                    self.mark_dead(f"it did not answer a {_what(pdu)} in {timeout:g}s")
                    raise PMError(PM_ERR_TIMEOUT, f"{self.name} agent did not answer in {timeout}s")
        if reply is None:
            raise PMError(PM_ERR_IPC, f"{self.name} agent gave no reply")
        return reply

    @staticmethod
    def _decoded(pdus: Sequence[Any]) -> list[Any]:
        return [decode(pdu) if isinstance(pdu, bytes) else pdu for pdu in pdus]

    async def notify(self, pdu: Any, timeout: float) -> None:
        await self._notify_all(self._decoded([pdu]), timeout)

    async def end_context(self, slot: int, timeout: float) -> None:
        """As Channel's, but the slots of clients that leave together go to the agent
        in one hand-off: a burst of 2,000 departures is then a few thread hops, not 2,000
        (each of which left Python's allocator a megabyte it could not give back)."""
        self.attrs_sent.pop(slot, None)
        if not self.alive:
            return
        batch = self._ending
        if batch is not None and not batch.sealed:
            batch.slots.append(slot)  # another task delivers it, with this slot
            await batch.delivered.wait()
            return
        batch = self._ending = _Departures([slot])
        try:
            await self._notify_all(batch.seal, timeout)
        finally:
            batch.sealed = True  # (a timeout may have come before the agent was free)
            if self._ending is batch:
                self._ending = None
            batch.delivered.set()  # delivered, or the agent is dead: either way, done

    async def _notify_all(
        self, pdus: Sequence[Any] | Callable[[], Sequence[Any]], timeout: float
    ) -> None:
        """Hand PDUS (or what the callable gives, once the agent is free) to the agent
        within TIMEOUT, waiting for the lock included; no reply; never raises."""
        if not self.alive:
            return
        if self.inline:
            self._handle(pdus() if callable(pdus) else pdus)
            return
        handing = False  # (waiting for the lock, nothing is under way yet)
        first: Any = None
        with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
            async with self.lock:
                if self.alive:
                    handing = True
                    some = pdus() if callable(pdus) else pdus
                    first = some[0]
                    await trio.to_thread.run_sync(self._handle, some, abandon_on_cancel=True)
                    handing = False
        if scope.cancelled_caught and handing:
            # its thread may still be in the agent's code: no second request may join it
            self.mark_dead(f"it did not take a {_what(first)} in {timeout:g}s")

    async def close(self) -> None:
        await super().close()
        # stop() joins the agent's refresh threads: not on the event loop
        await trio.to_thread.run_sync(self._stop, abandon_on_cancel=True)

    def _stop(self) -> None:
        try:
            self.agent.stop()
        except (Exception, SystemExit) as exc:
            log.error('"%s" agent (domain %d): stop failed: %r', self.name, self.domain, exc)


class StreamChannel(Channel):
    """A daemon agent on a pipe pair or a socket, speaking PDUs."""

    def __init__(
        self,
        name: str,
        domain: int,
        send: trio.abc.SendStream,
        receive: trio.abc.ReceiveStream,
        process: trio.Process | None = None,
        kind: str = "pipe",
    ) -> None:
        super().__init__(name, domain)
        self.send_stream = send
        self.receive_stream = receive
        self.process = process
        self.pid = process.pid if process else None
        self.kind = kind
        self.framer = PDUFramer()
        self._busy = trio.Event()  # set while not ready: wait_ready's cue

    async def handshake(self, creds_timeout: float) -> None:
        """Read the agent's CREDS and answer it, as pmcd's AgentNegotiate does."""
        with trio.move_on_after(creds_timeout) as scope:
            pdu = await self._read()
        if scope.cancelled_caught:
            raise PMError(PM_ERR_TIMEOUT, f"no version exchange with {self.name} agent")
        if not isinstance(pdu, CredsPDU):
            raise PMError(PM_ERR_IPC, f"{self.name} agent sent {type(pdu).__name__} first")
        version = [c for c in pdu.creds if c.c_type == CVERSION]
        if not version:
            raise PMError(PM_ERR_IPC, f"{self.name} agent sent no version credential")
        self.flags = version[0].flags
        auth = self.flags & PDUFlag.PDU_FLAG_AUTH  # pmcd echoes only this feature
        answer = Cred(CVERSION, PDU_VERSION, auth >> 8, auth & 0xFF)
        with trio.move_on_after(creds_timeout) as scope:
            await self._write(encode(CredsPDU((answer,), os.getpid())))
        if scope.cancelled_caught:
            raise PMError(PM_ERR_TIMEOUT, f"{self.name} agent did not take pmcd's answer")
        self.alive = True

    async def _write(self, data: bytes) -> None:
        try:
            await self.send_stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self.mark_dead("it stopped reading its channel")
            raise PMError(PM_ERR_NOAGENT, f"{self.name} agent has gone") from exc

    async def _read(self) -> Any:
        while True:
            try:
                frame = self.framer.next_frame()
            except PDUError as exc:
                self.mark_dead(f"it sent a malformed PDU ({exc.detail or exc})")
                raise PMError(PM_ERR_IPC, f"{self.name} agent: {exc}") from exc
            if frame is not None:
                try:
                    return decode(frame)
                except PDUError as exc:
                    self.mark_dead(f"it sent a malformed PDU ({exc.detail or exc})")
                    raise PMError(PM_ERR_IPC, f"{self.name} agent: {exc}") from exc
            try:
                data = await self.receive_stream.receive_some(1 << 16)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                data = b""
            if not data:
                self.mark_dead("it closed its channel")
                raise PMError(PM_ERR_NOAGENT, f"{self.name} agent closed its channel")
            self.framer.feed(data)

    async def request(
        self,
        pdu: Any,
        timeout: float,
        client: Credentials | None = None,
        profile: Profile | None = None,
    ) -> Any:
        self._check_ready()
        async with self.lock:
            self._check_ready()  # it failed, or went busy, while this request waited its turn
            prelude = self._prelude(client, profile)
            data = b"".join(p if isinstance(p, bytes) else encode(p) for p in (*prelude, pdu))
            # the whole exchange is timed: an agent that stops reading fills its pipe
            with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
                await self._write(data)
                reply = await self._read()
            if scope.cancelled_caught:
                # its answer may still come: the channel is out of step
                self.mark_dead(f"it did not answer a {_what(pdu)} in {timeout:g}s")
                raise PMError(PM_ERR_TIMEOUT, f"{self.name} agent did not answer in {timeout}s")
            if isinstance(reply, ErrorPDU) and reply.code in (
                PM_ERR_PMDANOTREADY,
                PM_ERR_PMDAREADY,
            ):
                self._readiness_reply(reply.code)
            return reply

    def _check_ready(self) -> None:
        """PMError unless a request may go to the agent now (NOAGENT, or AGAIN if busy)."""
        if not self.alive:
            raise PMError(PM_ERR_NOAGENT)
        if self.not_ready:
            raise PMError(PM_ERR_AGAIN)

    def _readiness_reply(self, code: int) -> None:
        """A request answered NOT READY or READY (PCP's CheckError): PMError AGAIN as the
        agent goes busy; a READY it was not asked for is a protocol failure."""
        if code == PM_ERR_PMDANOTREADY:
            self.set_not_ready()
            raise PMError(PM_ERR_AGAIN)
        self.mark_dead("it sent an unexpected READY")
        raise PMError(PM_ERR_IPC)

    def set_not_ready(self) -> None:
        """The agent is busy until it says otherwise (wait_ready hears it)."""
        self.not_ready = True
        self._busy.set()

    async def wait_not_ready(self) -> None:
        """Return once the agent is busy (at once if it is)."""
        await self._busy.wait()

    async def wait_ready(self) -> bool:
        """Wait for a busy agent's PM_ERR_PMDAREADY: True once it is ready again; False
        (the channel marked dead) if it sent anything else or went away."""
        async with self.lock:
            try:
                pdu = await self._read()
            except PMError:
                return False  # (marked dead already)
            if isinstance(pdu, ErrorPDU) and pdu.code == PM_ERR_PMDAREADY:
                self.not_ready = False
                self._busy = trio.Event()
                return True
            self.mark_dead(f"it sent {type(pdu).__name__} while not ready, not READY")
            return False

    async def notify(self, pdu: Any, timeout: float) -> None:
        if not self.alive or self.not_ready:  # (a busy agent is told nothing, as in PCP)
            return
        data = pdu if isinstance(pdu, bytes) else encode(pdu)
        writing = False  # (waiting for the lock, nothing has gone yet)
        with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
            async with self.lock:
                if not self.alive or self.not_ready:
                    return
                writing = True
                try:
                    await self._write(data)
                except PMError:
                    return  # marked dead: the supervisor has it from here
                writing = False
        if scope.cancelled_caught and writing:  # a part of the PDU may have gone: out of step
            self.mark_dead(f"it took no notice in {timeout:g}s")

    async def close(self) -> None:
        await super().close()
        for stream in (self.send_stream, self.receive_stream):
            with trio.move_on_after(1):
                with contextlib.suppress(
                    trio.BrokenResourceError, trio.ClosedResourceError, OSError
                ):
                    await stream.aclose()
        if self.process is not None:
            with trio.move_on_after(0.15) as scope:
                await self.process.wait()
            if scope.cancelled_caught:
                self.process.kill()  # (SIGKILL ends a stopped process too)
                await self.process.wait()


def _what(pdu: Any) -> str:
    """A request's PDU type as PCP names it (FETCH, DESC_REQ, ...), for the log."""
    return type(pdu).__name__.removesuffix("PDU").upper()


async def start_pipe_agent(
    name: str,
    domain: int,
    argv: Sequence[str],
    creds_timeout: float,
    env: dict[str, str],
    cwd: str | None = None,
) -> StreamChannel:
    """Start a pipe agent (stdin/stdout are its channel, stderr is pmcd's) and shake hands."""
    try:
        process = await trio.lowlevel.open_process(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd
        )
    except OSError as exc:
        code = -exc.errno if exc.errno else PM_ERR_GENERIC
        raise PMError(code, f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    assert process.stdin is not None and process.stdout is not None
    channel = StreamChannel(name, domain, process.stdin, process.stdout, process, "pipe")
    return await _shake_hands(channel, creds_timeout)


async def connect_socket_agent(
    name: str,
    domain: int,
    connect: Callable[[], Any],
    creds_timeout: float,
    kind: str,
    process: trio.Process | None = None,
) -> StreamChannel:
    """Connect to a socket agent (CONNECT opens the stream) and shake hands.

    PROCESS is the agent pmcd started for the socket, if it did: closing the
    channel stops it.
    """
    try:
        stream = await connect()
    except BaseException:
        if process is not None:
            with trio.CancelScope(shield=True):
                process.kill()
                await process.wait()
        raise
    return await _shake_hands(
        StreamChannel(name, domain, stream, stream, process, kind), creds_timeout
    )


async def _shake_hands(channel: StreamChannel, creds_timeout: float) -> StreamChannel:
    """CHANNEL once its agent has exchanged CREDS; closed (and the error raised) if not."""
    try:
        await channel.handshake(creds_timeout)
    except BaseException:
        with trio.CancelScope(shield=True):
            await channel.close()
        raise
    return channel
