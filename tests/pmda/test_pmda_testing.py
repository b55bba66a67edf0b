"""purepcp.pmda.testing.AgentHarness: an agent driven by metric name, with Python values back.

Each answer is checked against what the agent itself says through `Agent.handle`
(tests/pmda/test_pmda_agent.py covers the agents' rules); here the point is that the
harness asks the right requests and turns the replies and errors into values
and PMError faithfully.
"""

from __future__ import annotations

import errno
import threading

import pytest

from purepcp.agents.simple import Simple
from purepcp.pmapi.errors import (
    PM_ERR_AGAIN,
    PM_ERR_CONV,
    PM_ERR_INST,
    PM_ERR_NAME,
    PM_ERR_TEXT,
    PMError,
)
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmID_domain, pmInDom_build
from purepcp.pmda import COUNTER, DOUBLE, I32, U32, Agent, InDom, metric, refresh
from purepcp.pmda.testing import AgentHarness
from tests.support.waiting import DEADLINE


@pytest.fixture
def simple():
    with AgentHarness.load("purepcp.agents.simple") as harness:
        yield harness


def test_fetch_gives_values_and_instance_mappings(simple):
    assert simple.fetch("simple.numfetch") == 1
    assert simple.fetch("simple.color") == {"red": 1, "green": 101, "blue": 201}
    assert simple.fetch("simple.numfetch") == 3


def test_fetch_many_is_one_request(simple):
    assert simple.fetch_many("simple.numfetch", "simple.color", "simple.numfetch") == [
        1,
        {"red": 1, "green": 101, "blue": 201},
        1,
    ]
    user, system = simple.fetch_many("simple.time.user", "simple.time.sys")
    assert isinstance(user, float) and isinstance(system, float)


def test_store_by_value_instance_name_or_id(simple):
    simple.store("simple.numfetch", 41)
    assert simple.fetch("simple.numfetch") == 42
    simple.store("simple.color", {"green": 9, 2: 19})
    assert simple.fetch("simple.color") == {"red": 1, "green": 10, "blue": 20}


def test_refused_stores_raise_the_agents_code(simple):
    with pytest.raises(PMError) as refused:
        simple.store("simple.color", {"red": 300})
    assert refused.value.code == PM_ERR_CONV
    with pytest.raises(PMError) as refused:
        simple.store("simple.time.user", 1.0)
    assert refused.value.code == -errno.EACCES
    with pytest.raises(PMError) as refused:
        simple.store("simple.color", {"purple": 1})
    assert refused.value.code == PM_ERR_INST
    with pytest.raises(TypeError, match="mapping"):
        simple.store("simple.color", 7)


def test_descriptors_help_names_and_instances(simple):
    desc = simple.desc("simple.time.user")
    assert (desc.type, desc.sem, desc.units.text(), desc.indom) == (
        DOUBLE,
        COUNTER,
        "sec",
        PM_INDOM_NULL,
    )
    assert simple.desc("simple.color").indom == pmInDom_build(253, 0)
    assert simple.oneline("simple.color") == "Metrics which increment with each fetch"
    assert "0 (red)" in simple.help("simple.color")
    assert simple.names() == [
        "simple.numfetch",
        "simple.color",
        "simple.time.user",
        "simple.time.sys",
        "simple.now",
    ]
    assert simple.pmid("simple.color") == pmID_build(253, 0, 1)
    assert simple.instances("simple.color") == {0: "red", 1: "green", 2: "blue"}
    assert simple.instances("simple.numfetch") == {}
    with pytest.raises(PMError) as unknown:
        simple.fetch("simple.nosuch")
    assert unknown.value.code == PM_ERR_NAME


def test_load_takes_a_domain():
    with AgentHarness.load("purepcp.agents.trivial", 251) as trivial:
        assert pmID_domain(trivial.desc("trivial.time").pmid) == 251
        assert trivial.fetch("trivial.time") > 0


class Odd(Agent):
    """Metrics that fail, have no value or no help; a refresh running in the background."""

    name, domain = "odd", 300
    things = InDom(0, ["a", "b"])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refreshed = threading.Event()

    @metric("odd.failing", U32)
    def failing(self):
        raise PMError(PM_ERR_AGAIN)

    @metric("odd.empty", I32)
    def empty(self):
        return None

    @metric("odd.partial", I32, indom=things)
    def partial(self, inst):
        return -5 if inst == 1 else None

    @refresh(1, every=0.01)
    def background(self):
        self.refreshed.set()


@pytest.fixture
def odd(tmp_path):
    (tmp_path / "pmns").write_text("odd {\n failing ODD:0:0\n empty ODD:0:1\n partial ODD:0:2\n}\n")
    (tmp_path / "help").write_text("@ odd.failing always fails\nIt does.\n")
    agent = Odd(pmns_path=tmp_path / "pmns", help_path=tmp_path / "help")
    agent.start()
    with AgentHarness(agent) as harness:
        yield harness


def test_errors_missing_values_and_missing_help(odd):
    with pytest.raises(PMError) as failed:
        odd.fetch("odd.failing")
    assert failed.value.code == PM_ERR_AGAIN and "odd.failing" in str(failed.value)
    assert odd.fetch("odd.empty") is None
    assert odd.fetch("odd.partial") == {"b": -5}
    assert odd.oneline("odd.failing") == "always fails"
    with pytest.raises(PMError) as no_text:
        odd.help("odd.empty")
    assert no_text.value.code == PM_ERR_TEXT


def test_closing_stops_background_refreshes(odd):
    def running():
        return [t.name for t in threading.enumerate() if t.name == "odd-background"]

    assert odd.agent.refreshed.wait(DEADLINE) and running() == ["odd-background"]
    odd.close()
    assert running() == []


def test_a_plain_agent_instance_works_too():
    harness = AgentHarness(Simple())
    assert harness.fetch("simple.numfetch") == 1
    assert harness.agent.fetches == 1
