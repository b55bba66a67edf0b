"""The connections a host context talks to pmcd through: a blocking one (Context) and a
trio one (AsyncContext), each reconnecting on the next call after a failure.

Kept apart from pmapi.context so that an archive context never imports the PDU codec.
"""

from __future__ import annotations

import os
from typing import Any

from .connection import (
    PROXY_CLIENT_HELLO,
    REQUEST_TIMEOUT,
    Connection,
    connect_error,
    default_port,
    handshake_reply,
    os_code,
    parse_host,
    proxy_answer,
    proxy_target,
)
from .errors import PM_ERR_IPC, PM_ERR_TIMEOUT, PMError
from .pdu.codec import decode, encode
from .pdu.framer import PDUFramer
from .pdu.records import PDU, ErrorPDU, FetchPDU, HighResFetchPDU, ProfilePDU


class HostSource:
    """A blocking connection to pmcd that reconnects on the next call after a failure."""

    kind = "host"

    def __init__(self, spec: str) -> None:
        self.spec = parse_host(spec)
        self._connect = Connection
        self.connection = Connection(self.spec)
        self.generation = 0
        self.changes = 0

    @property
    def hostname(self) -> str:
        return self.spec.hostname

    @property
    def features(self) -> int:
        return self.connection.features if self.connection is not None else 0

    def ensure(self) -> None:
        """Reconnect if the last call failed (before a call decides what to send)."""
        if self.connection is None:
            self.connection = self._connect(self.spec)
            self.generation += 1

    def exchange(self, pdu: PDU) -> PDU | None:
        """Send PDU; pmcd's reply (None for a PDU that gets none)."""
        self.ensure()
        connection = self.connection
        try:
            connection.send(pdu)
            if isinstance(pdu, ProfilePDU):
                return None
            reply = connection.receive()
            news = 0
            while isinstance(reply, ErrorPDU) and reply.code > 0:
                news |= reply.code  # news of pmcd's state rides before an answer
                reply = connection.receive()
            self.changes |= news
            _told(self, pdu, news)
            return reply
        except PMError:
            connection.close()
            self.connection = None
            raise

    async def exchange_async(self, pdu: PDU) -> PDU | None:
        """exchange() for trio code, on the same connection (which must be open): the
        socket is read when readable and written when writable, so a slow pmcd holds up
        only this call.  Cancelled midway, the connection is closed (reopened next call).

        The socket has a timeout, so its descriptor is non-blocking already: it is read
        and written with os.read and os.write, which never wait."""
        import trio

        connection = self.connection
        if connection is None:
            raise PMError(PM_ERR_IPC, "not connected")
        sock = connection.sock
        fd = sock.fileno()
        done = False
        try:
            with trio.fail_after(connection.request_timeout):
                data = memoryview(encode(pdu))
                while data:
                    try:
                        data = data[os.write(fd, data) :]
                    except BlockingIOError:
                        await trio.lowlevel.wait_writable(sock)
                if isinstance(pdu, ProfilePDU):
                    done = True
                    return None
                reply = await self._receive_async(connection, fd)
                news = 0
                while isinstance(reply, ErrorPDU) and reply.code > 0:
                    news |= reply.code
                    reply = await self._receive_async(connection, fd)
                self.changes |= news
                _told(self, pdu, news)
                done = True
                return reply
        except trio.TooSlowError:
            raise PMError(PM_ERR_TIMEOUT) from None
        except OSError as exc:
            raise PMError(os_code(exc)) from None
        finally:
            if not done:  # (failed or cancelled midway: the stream's state is unknown)
                connection.close()
                self.connection = None

    @staticmethod
    async def _receive_async(connection: Connection, fd: int) -> PDU:
        import trio

        framer = connection.framer
        while True:
            frame = framer.next_frame()
            if frame is not None:
                return decode(frame)
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(connection.sock)
                continue
            if not data:
                raise PMError(PM_ERR_IPC, "pmcd closed the connection")
            framer.feed(data)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class AsyncHostSource:
    """A trio connection to pmcd, reconnecting on the next call after a failure."""

    kind = "host"

    def __init__(self, spec: str) -> None:
        self.spec = parse_host(spec)
        self.stream: Any = None
        self.framer: Any = None
        self.features = 0
        self.generation = -1
        self.changes = 0

    @property
    def hostname(self) -> str:
        return self.spec.hostname

    async def connect(self) -> None:
        """Open the connection and shake hands, as connection.Connection does."""
        import trio

        spec = self.spec
        try:
            if spec.path is not None:
                try:
                    stream = await trio.open_unix_socket(spec.path)
                except OSError:
                    if not spec.local:
                        raise
                    stream = await trio.open_tcp_stream("localhost", default_port())
            else:
                where = spec.proxy or (spec.host, spec.port)
                stream = await trio.open_tcp_stream(*where)
        except (OSError, UnicodeError) as exc:
            raise connect_error(spec, os_code(exc)) from None
        self.stream, self.framer = stream, PDUFramer()
        try:
            if spec.proxy is not None and spec.path is None:
                await self._through_proxy()
            greeting = await self._receive()
        except PMError as exc:
            await self.aclose()
            raise connect_error(spec, exc.code) from None
        try:
            reply, self.features = handshake_reply(spec, greeting)
        except PMError:
            await self.aclose()
            raise
        await self._send(reply)
        self.generation += 1

    async def _through_proxy(self) -> None:
        """Ask pmproxy for our pmcd (connection.Connection._through_proxy's exchange)."""
        import trio

        try:
            await self.stream.send_all(PROXY_CLIENT_HELLO)
            buffer = b""
            while (answer := proxy_answer(buffer)) is None:
                with trio.move_on_after(REQUEST_TIMEOUT) as scope:
                    data = await self.stream.receive_some(256)
                if scope.cancelled_caught:
                    raise PMError(PM_ERR_TIMEOUT)
                if not data:
                    raise PMError(PM_ERR_IPC)
                buffer += data
            if not answer[0]:
                raise PMError(PM_ERR_IPC)
            await self.stream.send_all(proxy_target(self.spec))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise PMError(PM_ERR_IPC, f"talking to pmproxy: {exc}") from None
        self.framer.feed(answer[1])

    async def _send(self, pdu: PDU) -> None:
        import trio

        try:
            await self.stream.send_all(encode(pdu))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise PMError(-32, f"sending to pmcd: {exc}") from None  # -EPIPE

    async def _receive(self) -> PDU:
        import trio

        while True:
            frame = self.framer.next_frame()
            if frame is not None:
                return decode(frame)
            with trio.move_on_after(REQUEST_TIMEOUT) as scope:
                try:
                    data = await self.stream.receive_some(1 << 16)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                    raise PMError(PM_ERR_IPC, f"receiving from pmcd: {exc}") from None
            if scope.cancelled_caught:
                raise PMError(PM_ERR_TIMEOUT)
            if not data:
                raise PMError(PM_ERR_IPC, "pmcd closed the connection")
            self.framer.feed(data)

    async def ensure(self) -> None:
        """Reconnect if the last call failed (before a call decides what to send)."""
        if self.stream is None:
            await self.connect()

    async def exchange(self, pdu: PDU) -> PDU | None:
        await self.ensure()
        try:
            await self._send(pdu)
            if isinstance(pdu, ProfilePDU):
                return None
            reply = await self._receive()
            news = 0
            while isinstance(reply, ErrorPDU) and reply.code > 0:
                news |= reply.code
                reply = await self._receive()
            self.changes |= news
            _told(self, pdu, news)
            return reply
        except PMError:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self.stream is not None:
            stream, self.stream = self.stream, None
            await stream.aclose()


def _told(source: Any, pdu: PDU, news: int) -> None:
    """Keep the NEWS of pmcd's state a fetch brought (the context's -D fetch trace tells
    of it, as libpcp's pmFetch does)."""
    if isinstance(pdu, (FetchPDU, HighResFetchPDU)):
        source.fetch_news = news
