"""pmcd's metadata cache (pmcd/metadata.py): descriptors, help and labels asked of an agent
once and answered from memory after that, until the agent says they changed or restarts.

Our pmcd runs in this process under trio with an in-process agent that counts the
requests it is asked; raw PDU clients (tests/pmcd/test_pmcd_daemon.py's) do the asking.
"""

from __future__ import annotations

import pytest
import trio

from purepcp.pmapi.errors import PM_ERR_PMID
from purepcp.pmapi.ids import pmID_build, pmInDom_build
from purepcp.pmapi.labels import PM_LABEL_DOMAIN, PM_LABEL_INDOM, PM_LABEL_INSTANCES, PM_LABEL_ITEM
from purepcp.pmapi.pdu.constants import Attr
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    HighResFetchPDU,
    LabelPDU,
    LabelReqPDU,
    ProfilePDU,
    TextPDU,
    TextReqPDU,
)
from tests.support.pdu_client import Client, start

pytestmark = pytest.mark.trio

TIME = pmID_build(250, 0, 1)
COUNTED = """
from collections import Counter

from purepcp.pmda import U32, Agent, InDom, metric

class Counted(Agent):
    name, domain = "trivial", 250
    labels = {"role": "counted"}
    things = InDom(0, {0: "a", 1: "b"}, labels={"kind": "things"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked = Counter()
        self.news = {}

    def handle(self, pdu):
        self.asked[type(pdu).__name__] += 1
        return super().handle(pdu)

    def instance_labels(self, indom, inst, name):
        return {"thing": name}

    @metric("trivial.time", U32, units="sec", indom=things)
    def now(self):
        if self.news:
            self.changed(**self.news)
            self.news = {}
        return {0: 1, 1: 2}
"""


async def _setup(nursery, tmp_path):
    agent = tmp_path / "counted.py"
    agent.write_text(COUNTED)
    daemon, port = await start(nursery, f"trivial 250 dso Counted {agent}\n")
    return daemon.channels[250].agent, port


async def _ask_all(client: Client) -> None:
    assert isinstance(await client.ask(DescReqPDU(TIME)), DescPDU)
    assert isinstance(await client.ask(TextReqPDU(TIME, 4 | 1)), TextPDU)  # PMID one-liner
    for ident, level in ((TIME, PM_LABEL_ITEM), (250, PM_LABEL_DOMAIN)):
        assert isinstance(await client.ask(LabelReqPDU(ident, level)), LabelPDU)


async def test_a_second_client_is_answered_from_memory(tmp_path):
    async with trio.open_nursery() as nursery:
        agent, port = await _setup(nursery, tmp_path)
        first, second = await Client.connect(port), await Client.connect(port)
        await _ask_all(first)
        await _ask_all(second)
        await _ask_all(first)
        assert agent.asked["DescReqPDU"] == 1
        assert agent.asked["TextReqPDU"] == 1
        assert agent.asked["LabelReqPDU"] == 2  # the item's and the domain's, once each
        labels = await second.ask(LabelReqPDU(TIME, PM_LABEL_ITEM))
        assert labels.ident == TIME and labels.type == PM_LABEL_ITEM
        nursery.cancel_scope.cancel()


async def test_errors_and_instance_labels_are_asked_every_time(tmp_path):
    async with trio.open_nursery() as nursery:
        agent, port = await _setup(nursery, tmp_path)
        client = await Client.connect(port)
        unknown = pmID_build(250, 0, 99)
        for _ in range(2):
            assert await client.ask(DescReqPDU(unknown)) == ErrorPDU(PM_ERR_PMID)
        assert agent.asked["DescReqPDU"] == 2
        await client.send(ProfilePDU(0, 0, ()))
        indom = pmInDom_build(250, 0)
        for _ in range(2):
            reply = await client.ask(LabelReqPDU(indom, PM_LABEL_INSTANCES))
            assert [s.json for s in reply.sets] == [b'{"thing":"a"}', b'{"thing":"b"}']
        assert agent.asked["LabelReqPDU"] == 2
        for _ in range(2):
            await client.ask(LabelReqPDU(indom, PM_LABEL_INDOM))
        assert agent.asked["LabelReqPDU"] == 3  # the indom's own labels are kept
        nursery.cancel_scope.cancel()


async def test_the_agents_news_of_changes_empties_what_it_concerns(tmp_path):
    async with trio.open_nursery() as nursery:
        agent, port = await _setup(nursery, tmp_path)
        client = await Client.connect(port)
        await client.send(ProfilePDU(0, 0, ()))
        await _ask_all(client)
        agent.news = {"labels": True}
        await client.ask(HighResFetchPDU(0, (TIME,)))
        await _ask_all(client)
        assert (agent.asked["DescReqPDU"], agent.asked["LabelReqPDU"]) == (1, 4)
        agent.news = {"names": True}
        await client.ask(HighResFetchPDU(0, (TIME,)))
        await _ask_all(client)
        assert (agent.asked["DescReqPDU"], agent.asked["TextReqPDU"]) == (2, 2)
        assert agent.asked["LabelReqPDU"] == 4
        nursery.cancel_scope.cancel()


async def test_a_client_in_a_container_is_always_asked_for(tmp_path):
    """An agent may answer a container's client for that container alone."""
    async with trio.open_nursery() as nursery:
        agent, port = await _setup(nursery, tmp_path)
        plain, boxed = await Client.connect(port), await Client.connect(port)
        await _ask_all(plain)
        await boxed.send(AttrPDU(Attr.PCP_ATTR_CONTAINER, b"box"))
        await _ask_all(boxed)
        await _ask_all(boxed)
        assert agent.asked["DescReqPDU"] == 3
        nursery.cancel_scope.cancel()


async def test_after_a_store_the_agent_is_asked_again_once(tmp_path):
    """A store may change what the agent answers (PCP's sample goes busy after a store
    into sample.not_ready, and answers the next request with PM_ERR_PMDANOTREADY: QA
    155), so the next request goes to the agent; after its answer memory serves again.
    Before, the descriptor came from memory, and the busy agent was never asked."""
    from purepcp.pmapi.pdu.records import ResultPDU
    from purepcp.pmapi.types import PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet

    async with trio.open_nursery() as nursery:
        agent, port = await _setup(nursery, tmp_path)
        client = await Client.connect(port)
        await _ask_all(client)
        store = ValueSet.of_atoms(TIME, PMType.PM_TYPE_U32, [(0, 5)])
        assert isinstance(await client.ask(ResultPDU(Result(Timestamp(0, 0), (store,)))), ErrorPDU)
        for _ in range(2):
            assert isinstance(await client.ask(DescReqPDU(TIME)), DescPDU)
        assert agent.asked["DescReqPDU"] == 2  # once before the store, once after
        nursery.cancel_scope.cancel()
