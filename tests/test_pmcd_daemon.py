"""Our pmcd, run in this process under trio, talked to by a raw PDU client.

The daemon runs the trivial and simple agents in-process plus test agents that
are slow or fail, listens on an ephemeral port, and a client written with our
codec checks the greeting, names, descriptors, instances, help, labels, fetch
and store, that a slow agent delays only its own client, that a timed-out agent
is reported and restarted, and that a malformed PDU ends only its connection.
"""

from __future__ import annotations

import time

import pytest
import trio

from pmapi.errors import (  # type: ignore[attr-defined]
    PM_ERR_IPC,
    PM_ERR_NOAGENT,
    PM_ERR_NOPROFILE,
    PM_ERR_TIMEOUT,
)
from pmapi.ids import PM_ID_NULL, pmID_build, pmInDom_build
from pmapi.pdu.codec import decode, encode
from pmapi.pdu.framer import PDUFramer
from pmapi.pdu.records import (
    Cred,
    CredsPDU,
    DescIdsPDU,
    DescPDU,
    DescReqPDU,
    DescsPDU,
    ErrorPDU,
    HighResFetchPDU,
    HighResResultPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PDUInfo,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from pmapi.values import Result, Timestamp, ValueSet
from pmcd.config import parse_config
from pmcd.daemon import Daemon, Settings, namespace_for

pytestmark = pytest.mark.trio

SIMPLE, TRIVIAL = 253, 250
NUMFETCH, COLOR = pmID_build(SIMPLE, 0, 0), pmID_build(SIMPLE, 0, 1)
TRIVIAL_TIME = pmID_build(TRIVIAL, 0, 1)
SLEEPY = """
import time
from pmda import U32, Agent, metric

class Sleepy(Agent):
    name, domain = "trivial", 250

    @metric("trivial.time", U32, units="sec")
    def now(self):
        time.sleep(float(open(__file__ + ".delay").read()))
        return 1
"""


class Client:
    """A bare PCP client connection: send a request record, get the reply record."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.framer = PDUFramer()

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
        await self.send(pdu)
        return await self.receive()


async def start(nursery, conf: str, timeout: float = 5.0) -> tuple[Daemon, int]:
    config = parse_config(conf)
    assert config.ok, config.messages
    settings = Settings(timeout=timeout, port=0, addresses=["127.0.0.1"])
    daemon = Daemon(config, namespace_for(config, None), settings)
    where = await nursery.start(daemon.run)
    port = int(where[0].rsplit(":", 1)[1])
    with trio.fail_after(20):
        while len([c for c in daemon.channels.values() if c.alive]) < len(config.agents):
            await trio.sleep(0.02)
    return daemon, port


CONF = "trivial 250 dso Trivial agents.trivial\nsimple 253 dso Simple agents.simple\n"


async def test_a_client_conversation_with_in_process_agents():
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF)
        c = await Client.connect(port)
        ids = await c.ask(PMNSNamesPDU(("simple.color", "no.such", "trivial.time")))
        assert ids == PMNSIdsPDU(2, (COLOR, PM_ID_NULL, TRIVIAL_TIME))
        names = await c.ask(PMNSTraversePDU("simple.time"))
        assert names.names == ("simple.time.user", "simple.time.sys")
        assert (await c.ask(HighResFetchPDU(0, (COLOR,)))) == ErrorPDU(PM_ERR_NOPROFILE)
        await c.send(ProfilePDU(0, 0, ()))
        result = (await c.ask(HighResFetchPDU(0, (COLOR, TRIVIAL_TIME, NUMFETCH)))).result
        assert [vs.pmid for vs in result.vsets] == [COLOR, TRIVIAL_TIME, NUMFETCH]
        assert list(result.vsets[0].atoms(0)) == [1, 101, 201]
        assert abs(result.timestamp.sec - time.time()) < 60
        desc = await c.ask(DescReqPDU(COLOR))
        assert isinstance(desc, DescPDU) and desc.desc.indom == pmInDom_build(SIMPLE, 0)
        descs = await c.ask(DescIdsPDU((COLOR, pmID_build(99, 0, 0))))
        assert isinstance(descs, DescsPDU) and descs.descs[1].pmid == PM_ID_NULL
        insts = await c.ask(InstanceReqPDU(pmInDom_build(SIMPLE, 0), 0xFFFFFFFF, None))
        assert isinstance(insts, InstancePDU) and insts.names == ("red", "green", "blue")
        text = await c.ask(TextReqPDU(TRIVIAL_TIME, 4 | 1))
        assert isinstance(text, TextPDU) and "1970" in text.text
        labels = await c.ask(LabelReqPDU(SIMPLE, 2))
        assert isinstance(labels, LabelPDU) and b'"role":"testing"' in labels.sets[0].json
        context = await c.ask(LabelReqPDU(0xFFFFFFFF, 1))
        assert b'"hostname"' in context.sets[0].json
        store = Result(Timestamp(0, 0), (ValueSet.of_atoms(COLOR, 0, [(0, 7)]),))
        assert (await c.ask(ResultPDU(store))) == ErrorPDU(0)
        again = (await c.ask(HighResFetchPDU(0, (COLOR,)))).result
        assert again.vsets[0].atoms(0)[0] == 8
        unknown = (await c.ask(HighResFetchPDU(0, (pmID_build(99, 0, 0),)))).result
        assert unknown.vsets[0].numval == PM_ERR_NOAGENT
        nursery.cancel_scope.cancel()


async def test_a_malformed_pdu_ends_only_its_own_connection():
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF)
        bad, good = await Client.connect(port), await Client.connect(port)
        await bad.stream.send_all(b"\0\0\0\x10\0\0\x70\x03\0\0\0\0\0\0\0\0")  # FETCH cut short
        assert await bad.receive() == ErrorPDU(PM_ERR_IPC)
        assert await bad.receive() is None  # and then the connection is closed
        await good.send(ProfilePDU(0, 0, ()))
        reply = await good.ask(HighResFetchPDU(0, (NUMFETCH,)))
        assert isinstance(reply, HighResResultPDU)
        nursery.cancel_scope.cancel()


@pytest.fixture
def sleepy(tmp_path):
    path = tmp_path / "sleepy.py"
    path.write_text(SLEEPY)
    (tmp_path / "sleepy.py.delay").write_text("0")
    return path


async def test_a_slow_agent_delays_only_its_own_client(sleepy):
    conf = f"trivial 250 dso Sleepy {sleepy}\nsimple 253 dso Simple agents.simple\n"
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, conf, timeout=30)
        slow, fast = await Client.connect(port), await Client.connect(port)
        for c in (slow, fast):
            await c.send(ProfilePDU(0, 0, ()))
        sleepy.with_name("sleepy.py.delay").write_text("1.5")
        done = trio.Event()

        async def slow_fetch():
            reply = await slow.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))
            assert isinstance(reply, HighResResultPDU)
            done.set()

        nursery.start_soon(slow_fetch)
        await trio.sleep(0.2)  # the slow fetch is now waiting on the agent
        for _ in range(5):
            reply = await fast.ask(HighResFetchPDU(0, (NUMFETCH,)))
            assert isinstance(reply, HighResResultPDU)
        assert not done.is_set()  # the fast client's answers did not wait for the slow one
        await done.wait()
        nursery.cancel_scope.cancel()


async def test_an_agent_that_times_out_is_reported_then_restarted(sleepy):
    conf = f"trivial 250 dso Sleepy {sleepy}\n"
    async with trio.open_nursery() as nursery:
        daemon, port = await start(nursery, conf, timeout=0.3)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        sleepy.with_name("sleepy.py.delay").write_text("1")
        first = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert first.vsets[0].numval == PM_ERR_TIMEOUT
        second = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert second.vsets[0].numval == PM_ERR_NOAGENT
        sleepy.with_name("sleepy.py.delay").write_text("0")
        with trio.fail_after(15):  # restarted within about 2 seconds
            while not (daemon.channels.get(TRIVIAL) and daemon.channels[TRIVIAL].alive):
                await trio.sleep(0.05)
        third = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert third.vsets[0].numval == 1
        nursery.cancel_scope.cancel()
