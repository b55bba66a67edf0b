"""How pmcd talks to one agent: in-process (PCP's DSO case) or over a pipe or socket.

A channel carries one request at a time (the agent protocol is strictly
request and reply), so each has a lock; requests to different agents run at
once, which is what keeps a slow agent from stalling clients of the others.
`request` sends a PDU record and returns the agent's reply record, or raises
PMError: PM_ERR_TIMEOUT when the agent takes longer than the timeout,
PM_ERR_NOAGENT when it is not running, PM_ERR_IPC when it answers nonsense.
`notify` sends a PDU that gets no reply (PROFILE, ERROR).  A channel that
times out or fails is marked dead; the supervisor restarts it.
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

import trio

from pmapi.errors import (  # type: ignore[attr-defined]
    PM_ERR_IPC,
    PM_ERR_NOAGENT,
    PM_ERR_TIMEOUT,
    PMError,
)
from pmapi.pdu.codec import PDUError, decode, encode
from pmapi.pdu.constants import CVERSION, PDU_VERSION, PDUFlag
from pmapi.pdu.framer import PDUFramer
from pmapi.pdu.records import Cred, CredsPDU
from pmda.agent import Agent


class Channel:
    """One agent's connection, as pmcd uses it."""

    kind = "?"

    def __init__(self, name: str, domain: int) -> None:
        self.name = name
        self.domain = domain
        self.lock = trio.Lock()
        self.alive = False
        self.pid: int | None = None
        #: the instance profile the agent holds now (global state, per-indom entries)
        self.profile: tuple[int, tuple] | None = None
        self.flags = 0

    async def request(self, pdu: Any, timeout: float) -> Any:
        """Send PDU and return the agent's reply record (PMError on failure)."""
        raise NotImplementedError

    async def notify(self, pdu: Any) -> None:
        """Send a PDU that gets no reply."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop talking to the agent (and stop it, if pmcd started it)."""
        self.alive = False


class InProcessChannel(Channel):
    """An agent loaded into pmcd: requests run in a worker thread, one at a time.

    INLINE agents (pmcd's own, which only reads pmcd's state and a few local
    files) answer on the event loop itself: no thread hand-off, no timeout.
    """

    kind = "dso"

    def __init__(self, name: str, domain: int, agent: Agent, inline: bool = False) -> None:
        super().__init__(name, domain)
        self.agent = agent
        self.inline = inline
        self.alive = True
        self.pid = os.getpid()

    async def request(self, pdu: Any, timeout: float) -> Any:
        if not self.alive:
            raise PMError(PM_ERR_NOAGENT)
        if self.inline:
            reply = self.agent.handle(pdu)
            if reply is None:
                raise PMError(PM_ERR_IPC, f"{self.name} agent gave no reply")
            return reply
        async with self.lock:
            # the agent's own code may block (psutil, files): keep it off pmcd's event loop
            with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
                reply = await trio.to_thread.run_sync(
                    self.agent.handle, pdu, abandon_on_cancel=True
                )
            if scope.cancelled_caught:
                # the thread is left to finish on its own; this agent object is done with
                self.alive = False
                raise PMError(PM_ERR_TIMEOUT, f"{self.name} agent did not answer in {timeout}s")
        if reply is None:
            raise PMError(PM_ERR_IPC, f"{self.name} agent gave no reply")
        return reply

    async def notify(self, pdu: Any) -> None:
        if self.alive and self.inline:
            self.agent.handle(pdu)
        elif self.alive:
            async with self.lock:
                await trio.to_thread.run_sync(self.agent.handle, pdu)

    async def close(self) -> None:
        await super().close()
        self.agent.stop()


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
        await self._write(CredsPDU((answer,), os.getpid()))
        self.alive = True

    async def _write(self, pdu: Any) -> None:
        try:
            await self.send_stream.send_all(encode(pdu))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self.alive = False
            raise PMError(PM_ERR_NOAGENT, f"{self.name} agent has gone") from exc

    async def _read(self) -> Any:
        while True:
            try:
                frame = self.framer.next_frame()
            except PDUError as exc:
                self.alive = False
                raise PMError(PM_ERR_IPC, f"{self.name} agent: {exc}") from exc
            if frame is not None:
                try:
                    return decode(frame)
                except PDUError as exc:
                    self.alive = False
                    raise PMError(PM_ERR_IPC, f"{self.name} agent: {exc}") from exc
            try:
                data = await self.receive_stream.receive_some(1 << 16)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                data = b""
            if not data:
                self.alive = False
                raise PMError(PM_ERR_NOAGENT, f"{self.name} agent closed its channel")
            self.framer.feed(data)

    async def request(self, pdu: Any, timeout: float) -> Any:
        if not self.alive:
            raise PMError(PM_ERR_NOAGENT)
        async with self.lock:
            await self._write(pdu)
            with trio.move_on_after(timeout if timeout > 0 else math.inf) as scope:
                reply = await self._read()
            if scope.cancelled_caught:
                self.alive = False  # its answer may still come: the channel is out of step
                raise PMError(PM_ERR_TIMEOUT, f"{self.name} agent did not answer in {timeout}s")
            return reply

    async def notify(self, pdu: Any) -> None:
        if self.alive:
            async with self.lock:
                await self._write(pdu)

    async def close(self) -> None:
        await super().close()
        for stream in (self.send_stream, self.receive_stream):
            with trio.move_on_after(1):
                await stream.aclose()
        if self.process is not None:
            with trio.move_on_after(0.15) as scope:
                await self.process.wait()
            if scope.cancelled_caught:
                self.process.kill()
                await self.process.wait()


async def start_pipe_agent(
    name: str,
    domain: int,
    argv: Sequence[str],
    creds_timeout: float,
    env: dict[str, str],
    cwd: str | None = None,
) -> StreamChannel:
    """Start a pipe agent (stdin/stdout are its channel, stderr is pmcd's) and shake hands."""
    process = await trio.lowlevel.open_process(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd
    )
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
    except PMError:
        if process is not None:
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
    except PMError:
        await channel.close()
        raise
    return channel
