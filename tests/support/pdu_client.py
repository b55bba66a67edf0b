"""Our pmcd run in the test's own process under trio, and a bare PDU client of it written
with our codec: the pmcd tests' way of asking exactly the requests they mean."""

from __future__ import annotations

import trio

from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import Cred, CredsPDU, ErrorPDU, PDUInfo
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.daemon import Daemon, Settings, namespace_for
from tests.support.waiting import DEADLINE

SIMPLE, TRIVIAL = 253, 250
NUMFETCH, COLOR = pmID_build(SIMPLE, 0, 0), pmID_build(SIMPLE, 0, 1)
TRIVIAL_TIME = pmID_build(TRIVIAL, 0, 1)


class Client:
    """A bare PCP client connection: send a request record, get the reply record."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.framer = PDUFramer()
        self.changes = 0  # pmcd state changes told so far (positive ERROR PDUs)

    @classmethod
    async def connect(cls, port: int) -> Client:
        client = cls(await trio.open_tcp_stream("127.0.0.1", port))
        greeting = await client.receive()
        assert isinstance(greeting, ErrorPDU) and greeting.code == 0
        assert PDUInfo.unpack(greeting.datum).version == 2
        await client.send(CredsPDU((Cred(1, 2, 0, 0),), 1234))
        return client

    async def send(self, pdu) -> None:
        await self.stream.send_all(encode(pdu))

    async def receive(self):
        while (frame := self.framer.next_frame()) is None:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.framer.feed(data)
        return decode(frame)

    async def ask(self, pdu):
        """The reply to PDU; news of state changes before it is added to self.changes."""
        await self.send(pdu)
        reply = await self.receive()
        while isinstance(reply, ErrorPDU) and reply.code > 0:
            self.changes |= reply.code
            reply = await self.receive()
        return reply


async def start(nursery, conf: str, timeout: float = DEADLINE) -> tuple[Daemon, int]:
    """Our pmcd serving CONF's agents in NURSERY, once every agent is up: (daemon, port).
    TIMEOUT is pmcd's agent timeout (-t): only a hang guard unless a test is about it (and
    then it gives its own), since a queue of clients, or a busy machine, can hold an agent's
    answer past PCP's 5 seconds without anything being wrong."""
    config = parse_config(conf)
    assert config.ok, config.messages
    settings = Settings(timeout=timeout, port=0, addresses=["127.0.0.1"])
    daemon = Daemon(config, namespace_for(config, None), settings)
    where = await nursery.start(daemon.run)
    port = int(where[0].rsplit(":", 1)[1])
    with trio.fail_after(DEADLINE):
        while len([c for c in daemon.channels.values() if c.alive]) < len(config.agents):
            await trio.sleep(0.02)
    return daemon, port
