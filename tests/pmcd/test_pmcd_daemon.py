"""Our pmcd, run in this process under trio, talked to by a raw PDU client.

The daemon runs the trivial and simple agents in-process plus test agents that
are slow or fail, listens on an ephemeral port, and a client written with our
codec checks the greeting, names, descriptors, instances, help, labels, fetch
and store, that a slow agent delays only its own client, that a timed-out agent
is reported and restarted, and that a malformed PDU ends only its connection.
"""

from __future__ import annotations

import os
import random
import signal
import struct
import sys
import time

import pytest
import trio
import trio.testing

from purepcp.pmapi.errors import (
    PM_ERR_IPC,
    PM_ERR_NOAGENT,
    PM_ERR_NOPROFILE,
    PM_ERR_PERMISSION,
)
from purepcp.pmapi.ids import PM_ID_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.pdu.codec import encode
from purepcp.pmapi.pdu.constants import PMCDState
from purepcp.pmapi.pdu.records import (
    Cred,
    CredsPDU,
    DescIdsPDU,
    DescPDU,
    DescReqPDU,
    DescsPDU,
    ErrorPDU,
    HighResFetchPDU,
    HighResResultPDU,
    InDomProfile,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.daemon import namespace_for
from tests.support.pdu_client import COLOR, NUMFETCH, SIMPLE, TRIVIAL, TRIVIAL_TIME, Client, start
from tests.support.waiting import DEADLINE

pytestmark = pytest.mark.trio

SLEEPY = """
import os, time
from purepcp.pmda import U32, Agent, metric

class Sleepy(Agent):
    name, domain = "trivial", 250

    @metric("trivial.time", U32, units="sec")
    def now(self):
        delay = float(open(__file__ + ".delay").read())
        if delay:
            open(__file__ + ".entered", "w").close()  # (what the tests wait for)
        end = time.monotonic() + delay  # or until the test releases it
        while time.monotonic() < end and not os.path.exists(__file__ + ".release"):
            time.sleep(0.01)
        return 1
"""


async def inside_its_fetch(sleepy) -> None:
    """Wait until the SLEEPY agent at SLEEPY has begun a slow fetch (it says so in a file)."""
    entered = sleepy.with_name(sleepy.name + ".entered")
    with trio.move_on_after(DEADLINE) as waited:
        while not entered.exists():
            await trio.sleep(0.01)
    assert not waited.cancelled_caught, "the agent never began its slow fetch"


CONF = (
    "trivial 250 dso Trivial purepcp.agents.trivial\nsimple 253 dso Simple purepcp.agents.simple\n"
)


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


async def test_a_client_that_resets_with_answers_pending_ends_only_its_connection():
    async with trio.open_nursery() as nursery:
        daemon, port = await start(nursery, CONF)
        for _ in range(20):  # each leaves pmcd replies it cannot deliver
            sock = trio.socket.socket()
            await sock.connect(("127.0.0.1", port))
            await sock.recv(64)
            await sock.send(encode(CredsPDU((Cred(1, 2, 0, 0),), 1)))
            await sock.send(encode(PMNSTraversePDU("")) * 50)
            sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # with linger 0: a reset, so pmcd's next send fails
        with trio.move_on_after(DEADLINE) as waited:  # pmcd has ended every one of them
            while daemon.sessions:
                await trio.sleep(0.01)
        assert not waited.cancelled_caught, f"{len(daemon.sessions)} sessions left"
        good = await Client.connect(port)
        await good.send(ProfilePDU(0, 0, ()))
        assert isinstance(await good.ask(HighResFetchPDU(0, (NUMFETCH,))), HighResResultPDU)
        nursery.cancel_scope.cancel()


async def test_a_client_with_requests_always_waiting_does_not_keep_others_waiting():
    """3,000 name lookups (answered by pmcd itself, no agent to wait for) in one write:
    pmcd answers them one at a time, letting another client's fetch in between, not
    after the whole batch it has read."""
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF)
        flood, other = await Client.connect(port), await Client.connect(port)
        for c in (flood, other):
            await c.send(ProfilePDU(0, 0, ()))
        total, got = 3000, []

        async def read_flood() -> None:
            while len(got) < total:
                got.append(await flood.receive())

        nursery.start_soon(read_flood)
        await flood.stream.send_all(encode(PMNSNamesPDU(("simple.color",))) * total)
        while not got:
            await trio.sleep(0.001)
        reply = await other.ask(HighResFetchPDU(0, (COLOR,)))
        assert isinstance(reply, HighResResultPDU)
        assert len(got) < total / 2, f"answered after {len(got)} of the other's {total}"
        with trio.fail_after(DEADLINE):
            while len(got) < total:
                await trio.sleep(0.01)
        assert all(r == PMNSIdsPDU(1, (COLOR,)) for r in got)
        nursery.cancel_scope.cancel()


@pytest.fixture
def sleepy(tmp_path):
    path = tmp_path / "sleepy.py"
    path.write_text(SLEEPY)
    (tmp_path / "sleepy.py.delay").write_text("0")
    return path


async def test_a_slow_agent_delays_only_its_own_client(sleepy):
    conf = f"trivial 250 dso Sleepy {sleepy}\nsimple 253 dso Simple purepcp.agents.simple\n"
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, conf)
        slow, fast = await Client.connect(port), await Client.connect(port)
        for c in (slow, fast):
            await c.send(ProfilePDU(0, 0, ()))
        sleepy.with_name("sleepy.py.delay").write_text(str(DEADLINE))  # until released
        done = trio.Event()

        async def slow_fetch():
            reply = await slow.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))
            assert isinstance(reply, HighResResultPDU)
            done.set()

        nursery.start_soon(slow_fetch)
        await inside_its_fetch(sleepy)  # the slow fetch is now waiting on the agent
        for _ in range(5):
            reply = await fast.ask(HighResFetchPDU(0, (NUMFETCH,)))
            assert isinstance(reply, HighResResultPDU)
        assert not done.is_set()  # the fast client's answers did not wait for the slow one
        sleepy.with_name("sleepy.py.release").touch()
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
        assert first.vsets[0].numval == PM_ERR_NOAGENT  # as PCP's DoFetch says of a timeout
        second = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert second.vsets[0].numval == PM_ERR_NOAGENT
        sleepy.with_name("sleepy.py.delay").write_text("0")
        with trio.fail_after(DEADLINE):  # (restarted within about 2 seconds)
            while not (daemon.channels.get(TRIVIAL) and daemon.channels[TRIVIAL].alive):
                await trio.sleep(0.05)
        third = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert third.vsets[0].numval == 1
        # (as PCP's pmcd tells an agent's death and restart: dropped, added, restarted)
        assert c.changes == (
            PMCDState.PMCD_DROP_AGENT | PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT
        )
        nursery.cancel_scope.cancel()


CHANGER = """
from purepcp.pmda import U32, Agent, metric

class Changer(Agent):
    name, domain = "trivial", 250

    @metric("trivial.time", U32, units="sec")
    def now(self):
        self.changed(names=True)
        return 1
"""


async def test_an_agents_news_of_changed_names_reaches_every_client_once(tmp_path):
    agent = tmp_path / "changer.py"
    agent.write_text(CHANGER)
    conf = f"trivial 250 dso Changer {agent}\nsimple 253 dso Simple purepcp.agents.simple\n"
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, conf)
        a, b = await Client.connect(port), await Client.connect(port)
        for client in (a, b):
            await client.send(ProfilePDU(0, 0, ()))
        await a.stream.send_all(encode(HighResFetchPDU(0, (TRIVIAL_TIME,))))
        news = await a.receive()  # before the answer: an ERROR PDU carrying the change bits
        assert news == ErrorPDU(int(PMCDState.PMCD_NAMES_CHANGE))
        assert isinstance(await a.receive(), HighResResultPDU)
        assert isinstance(await b.ask(HighResFetchPDU(0, (NUMFETCH,))), HighResResultPDU)
        assert b.changes == PMCDState.PMCD_NAMES_CHANGE  # told too, with its next answer
        assert isinstance(await a.ask(HighResFetchPDU(0, (NUMFETCH,))), HighResResultPDU)
        assert a.changes == 0  # no news twice (ask collects only what comes after the first)
        nursery.cancel_scope.cancel()


async def test_access_rules_refuse_stores_or_whole_clients():
    """[access]: a denied operation answers PM_ERR_PERMISSION; a denied host is turned away."""
    conf = CONF + "[access]\nallow * : fetch;\ndisallow * : store;\n"
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, conf)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        assert isinstance(await c.ask(HighResFetchPDU(0, (NUMFETCH,))), HighResResultPDU)
        store = Result(Timestamp(0, 0), (ValueSet.of_atoms(COLOR, 0, [(0, 7)]),))
        assert await c.ask(ResultPDU(store)) == ErrorPDU(PM_ERR_PERMISSION)
        nursery.cancel_scope.cancel()
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF + "[access]\ndisallow * : all;\n")
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        refused = Client(stream)
        # as PCP 6.0.3 sends it: the greeting, carrying the error and no features
        assert await refused.receive() == ErrorPDU(PM_ERR_PERMISSION, 0)
        assert await refused.receive() is None
        nursery.cancel_scope.cancel()


@pytest.mark.slow  # a load test: 400 connections at once
async def test_ten_thousand_malformed_pdus_leave_the_daemon_serving():
    """Garbage on 400 connections (25 PDUs each): each ends its connection, nothing else."""
    rng = random.Random(4)
    types = [0x7000 + t for t in range(0x18)] + [0x6FFF, 0x7099]

    def garbage() -> bytes:
        body = rng.randbytes(rng.choice([0, 1, 3, 4, 8, 13, 40]))
        length = 12 + len(body) if rng.random() < 0.9 else rng.choice([0, 5, 11, 1 << 30])
        return struct.pack(">iii", length, rng.choice(types), rng.randrange(100)) + body

    async with trio.open_nursery() as nursery:
        daemon, port = await start(nursery, CONF)

        async def spray() -> None:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                async with stream:
                    await stream.send_all(b"".join(garbage() for _ in range(25)))
                    with trio.move_on_after(5):
                        while await stream.receive_some(65536):
                            pass
            except trio.BrokenResourceError:
                pass  # pmcd hung up first: what it should do

        async with trio.open_nursery() as sprayers:
            for _ in range(400):
                sprayers.start_soon(spray)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        result = (await c.ask(HighResFetchPDU(0, (COLOR, NUMFETCH)))).result
        assert [vs.numval for vs in result.vsets] == [3, 1]
        assert all(channel.alive for channel in daemon.channels.values())
        nursery.cancel_scope.cancel()


@pytest.mark.slow  # a load test: 500 clients at once
async def test_five_hundred_clients_fetching_at_once_are_all_answered():
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF)
        answered = []

        async def one_client() -> None:
            c = await Client.connect(port)
            await c.send(ProfilePDU(0, 0, ()))
            reply = await c.ask(HighResFetchPDU(0, (COLOR, TRIVIAL_TIME)))
            answered.append(isinstance(reply, HighResResultPDU) and reply.result.vsets[0].numval)
            await c.stream.aclose()

        with trio.fail_after(DEADLINE):
            async with trio.open_nursery() as clients:
                for _ in range(500):
                    clients.start_soon(one_client)
        assert answered == [3] * 500
        nursery.cancel_scope.cancel()


async def test_a_pipe_agent_killed_mid_fetch_is_reported_and_restarted(sleepy):
    """SIGKILL while pmcd waits on the agent: the waiting client gets an error, not a hang."""
    sleepy.write_text(
        SLEEPY + "\nif __name__ == '__main__':\n    import sys\n    from purepcp import pmda\n"
        "    sys.exit(pmda.main(Sleepy))\n"
    )
    conf = f"trivial 250 pipe binary {sys.executable} {sleepy}\n"
    async with trio.open_nursery() as nursery:
        daemon, port = await start(nursery, conf)
        first_pid = daemon.channels[TRIVIAL].pid
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        sleepy.with_name("sleepy.py.delay").write_text("30")
        await c.send(HighResFetchPDU(0, (TRIVIAL_TIME,)))
        await inside_its_fetch(sleepy)
        os.kill(first_pid, signal.SIGKILL)
        with trio.fail_after(DEADLINE):
            reply = await c.receive()
        assert reply.result.vsets[0].numval == PM_ERR_NOAGENT
        sleepy.with_name("sleepy.py.delay").write_text("0")
        with trio.fail_after(DEADLINE):
            while not (
                (channel := daemon.channels.get(TRIVIAL))
                and channel.alive
                and channel.pid != first_pid
            ):
                await trio.sleep(0.05)
        again = (await c.ask(HighResFetchPDU(0, (TRIVIAL_TIME,)))).result
        assert again.vsets[0].numval == 1
        nursery.cancel_scope.cancel()


async def test_a_reload_restarts_only_the_agents_whose_lines_changed():
    """SIGHUP's work: simple kept (same agent object), trivial removed, linux added."""
    async with trio.open_nursery() as nursery:
        daemon, port = await start(nursery, CONF)
        simple_before = daemon.channels[SIMPLE]
        new = parse_config(
            "simple 253 dso Simple purepcp.agents.simple\nlinux 60 dso Linux purepcp.agents.linux\n"
        )
        changes = await daemon.reload(new, namespace_for(new, None))
        assert [a.name for a in changes.added] == ["linux"]
        assert [a.name for a in changes.removed] == ["trivial"]
        assert daemon.channels[SIMPLE] is simple_before and TRIVIAL not in daemon.channels
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        load = (await c.ask(PMNSNamesPDU(("kernel.all.load",)))).pmids[0]
        result = (await c.ask(HighResFetchPDU(0, (load, TRIVIAL_TIME, NUMFETCH)))).result
        assert [vs.numval for vs in result.vsets] == [3, PM_ERR_NOAGENT, 1]
        assert [a.name for a in daemon.state.agents] == ["simple", "linux"]
        nursery.cancel_scope.cancel()


async def test_each_client_gets_its_own_profile_applied():
    """The agent holds one profile; pmcd sends a client's whenever it differs from that."""
    colors = pmInDom_build(SIMPLE, 0)
    async with trio.open_nursery() as nursery:
        _, port = await start(nursery, CONF)
        everything, only_red = await Client.connect(port), await Client.connect(port)
        await everything.send(ProfilePDU(0, 0, ()))
        await only_red.send(ProfilePDU(0, 0, (InDomProfile(colors, 1, (0,)),)))
        for client, insts in ((only_red, [0]), (everything, [0, 1, 2]), (only_red, [0])):
            result = (await client.ask(HighResFetchPDU(0, (COLOR,)))).result
            assert list(result.vsets[0].insts) == insts
        nursery.cancel_scope.cancel()


# -- an agent that says it is busy (PM_ERR_PMDANOTREADY), then ready again ------------------


class _BusyAgent:
    """The far end of a channel, as PCP's sample agent after `pmstore sample.not_ready`:
    each request is read and answered with what the test hands it."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        from purepcp.pmapi.pdu.framer import PDUFramer

        self.stream = stream
        self.framer = PDUFramer()

    async def next_request(self) -> object:
        from purepcp.pmapi.pdu.codec import decode

        while (frame := self.framer.next_frame()) is None:
            self.framer.feed(await self.stream.receive_some(1 << 16))
        return decode(frame)

    async def send(self, pdu: object) -> None:
        await self.stream.send_all(encode(pdu))


async def test_a_busy_agent_gets_try_again_until_it_says_it_is_ready():
    """As PCP's pmcd: a NOT READY reply is PM_ERR_AGAIN for that request and every one
    after it, unasked and unanswered from the metadata cache, until the agent's own
    READY; a READY nobody waited for is a protocol failure."""
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.errors import PM_ERR_AGAIN, PM_ERR_PMDANOTREADY, PM_ERR_PMDAREADY
    from purepcp.pmcd.channels import StreamChannel
    from purepcp.pmcd.session import Session

    near, far = trio.testing.memory_stream_pair()
    channel = StreamChannel("busy", 99, near, near)
    channel.alive = True
    agent = _BusyAgent(far)
    session = Session(0, None, lambda: None, {99: channel}, lambda: 5.0, lambda: ())
    pmid = pmID_build(99, 0, 1)
    desc = DescPDU(Desc(pmid))

    async def ask(pdu, reply=None):
        async with trio.open_nursery() as nursery:
            if reply is not None:

                async def answer():
                    await agent.next_request()
                    await agent.send(reply)

                nursery.start_soon(answer)
            return await session.answer(pdu)

    assert await ask(DescReqPDU(pmid), desc) == desc  # (and now in the metadata cache)
    got = await ask(TextReqPDU(pmid, 1), ErrorPDU(PM_ERR_PMDANOTREADY))
    assert got == ErrorPDU(PM_ERR_AGAIN) and channel.not_ready
    assert await ask(DescReqPDU(pmid)) == ErrorPDU(PM_ERR_AGAIN)  # the agent is not asked
    async with trio.open_nursery() as nursery:
        done = []
        nursery.start_soon(lambda: _append(done, channel.wait_ready()))
        await agent.send(ErrorPDU(PM_ERR_PMDAREADY))
    assert done == [True] and not channel.not_ready
    assert await ask(DescReqPDU(pmid)) == desc  # (from the cache again)
    assert await ask(TextReqPDU(pmid, 1), ErrorPDU(PM_ERR_PMDAREADY)) == ErrorPDU(PM_ERR_IPC)
    assert not channel.alive


async def _append(into: list, awaitable) -> None:
    into.append(await awaitable)


async def test_the_names_of_a_pmid_below_a_dynamic_root_come_from_its_agent(tmp_path):
    """pmNameAll of a PMID pmcd's namespace does not hold (one below a dynamic subtree's
    root, PCP's sample.secret.*) is asked of the PMID's agent, as PCP's DoPMNSIDs does;
    it was PM_ERR_PMID, so pmlogger could not log such a metric."""
    from purepcp.pmapi.errors import PM_ERR_PMID
    from purepcp.pmapi.pmns import PMNS
    from purepcp.pmcd.channels import InProcessChannel
    from purepcp.pmcd.session import Session
    from purepcp.pmda import U32, Agent, Metric

    class Secret(Agent):
        name, domain = "dyn", 99
        dynamic_pmns = True
        metrics = (Metric("dyn.secret.one", U32),)

    (tmp_path / "pmns").write_text("dyn {\n secret\n}\ndyn.secret {\n one DYN:0:0\n}\n")
    agent = Secret(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    channel = InProcessChannel("dyn", 99, agent, inline=True)
    pmns = PMNS.from_string("root {\n dyn\n}\ndyn {\n secret 99:*:*\n}\n")
    session = Session(0, None, lambda: pmns, {99: channel}, lambda: 5.0, lambda: ())
    one = pmID_build(99, 0, 0)
    assert await session.answer(PMNSIdsPDU(0, (one,))) == PMNSNamesPDU(("dyn.secret.one",))
    missing = await session.answer(PMNSIdsPDU(0, (pmID_build(99, 0, 7),)))
    assert missing == ErrorPDU(PM_ERR_PMID)
