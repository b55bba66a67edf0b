"""The agent framework driven in memory: requests in, replies out, as pmcd would see them.

Covers pmdaFetch's rules (profiles, per-instance errors, no values, unknown
PMIDs), instance lookups, help text, labels at every level, the store rules of
seed 004 examples 2-25 to 2-28, dynamic and background-refreshed instance
domains, the byte-level request loop, and the agents' line budgets.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from purepcp.agents.simple import Simple
from purepcp.agents.trivial import Trivial
from purepcp.pmapi.errors import (
    PM_ERR_AGAIN,
    PM_ERR_APPVERSION,
    PM_ERR_CONV,
    PM_ERR_GENERIC,
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_NAME,
    PM_ERR_PMID,
    PM_ERR_SIGN,
    PM_ERR_TEXT,
    PMError,
)
from purepcp.pmapi.ids import PM_IN_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.framer import split_stream
from purepcp.pmapi.pdu.records import (
    CredsPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InDomProfile,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmda import COUNTER, NOSUPPORT, U32, U64, Agent, InDom, Metric, metric, refresh
from purepcp.pmda.inproc import AgentLoadError, load_agent
from purepcp.pmda.serve import answer_requests, serve_stream
from purepcp.pmda.serve import main as pmda_main
from tests.support.waiting import DEADLINE

SIMPLE = 253
NUMFETCH, COLOR = pmID_build(SIMPLE, 0, 0), pmID_build(SIMPLE, 0, 1)
USER, SYS, NOW = pmID_build(SIMPLE, 1, 2), pmID_build(SIMPLE, 1, 3), pmID_build(SIMPLE, 2, 4)
COLORS, TIMENOW = pmInDom_build(SIMPLE, 0), pmInDom_build(SIMPLE, 1)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def simple(tmp_path, monkeypatch):
    (tmp_path / "simple").mkdir()
    (tmp_path / "simple" / "simple.conf").write_text("sec,min,hour\n")
    monkeypatch.setenv("PCP_PMDAS_DIR", str(tmp_path))
    return Simple()


def values(agent: Agent, *pmids: int) -> list:
    """Per PMID: a dict {inst: value}, or the error code the value set carries."""
    out = []
    for vs, pmid in zip(agent.fetch(pmids).vsets, pmids, strict=True):
        desc = agent._descs.get(pmid)
        if vs.numval < 0:
            out.append(int(vs.numval))
        else:
            out.append(dict(zip(vs.insts, vs.atoms(desc.type if desc else None), strict=True)))
    return out


def store(agent: Agent, pmid: int, pairs) -> ErrorPDU:
    vtype = agent._descs[pmid].type
    return agent.handle(
        ResultPDU(Result(Timestamp(0, 0), (ValueSet.of_atoms(pmid, vtype, pairs),)))
    )


def test_simple_fetch_follows_seed_004(simple):
    assert values(simple, NUMFETCH, COLOR) == [{PM_IN_NULL: 1}, {0: 1, 1: 101, 2: 201}]
    assert values(simple, COLOR, NUMFETCH) == [{0: 2, 1: 102, 2: 202}, {PM_IN_NULL: 2}]
    user, system = values(simple, USER, SYS)
    assert user[PM_IN_NULL] >= 0 and system[PM_IN_NULL] >= 0
    now = values(simple, NOW)[0]
    assert sorted(now) == [0, 1, 2] and 0 <= now[0] < 61 and 0 <= now[2] < 24
    assert values(simple, pmID_build(SIMPLE, 7, 7)) == [PM_ERR_PMID]


def test_colors_wrap_after_255(simple):
    assert store(simple, COLOR, [(0, 254)]) == ErrorPDU(0)
    assert [values(simple, COLOR)[0][0] for _ in range(3)] == [255, 0, 1]


def test_the_profile_limits_instances_as_libpcp_reads_it(simple):
    # a per-indom entry listing instances to include (state EXCLUDE: all but these)
    simple.handle(ProfilePDU(0, 0, (InDomProfile(COLORS, 1, (2, 0)),)))
    assert list(values(simple, COLOR)[0]) == [0, 2]  # indom order, not the profile's
    simple.handle(ProfilePDU(0, 1, ()))  # nothing included by default
    assert values(simple, COLOR, NUMFETCH) == [{}, {PM_IN_NULL: 2}]
    simple.handle(ProfilePDU(0, 0, ()))
    assert list(values(simple, COLOR)[0]) == [0, 1, 2]


def test_store_rules_of_seed_004_examples_2_25_to_2_28(simple):
    # 2-25/2-26: a bad colour is clamped and stored, and ends the store
    assert store(simple, COLOR, [(0, 300), (1, 7)]) == ErrorPDU(PM_ERR_CONV)
    assert simple.rgb[:2] == [255, 100]
    assert store(simple, COLOR, [(2, -4)]) == ErrorPDU(PM_ERR_SIGN)
    assert simple.rgb[2] == 0
    assert store(simple, COLOR, [(9, 5)]) == ErrorPDU(PM_ERR_INST)
    assert store(simple, COLOR, [(0, 7), (1, 8)]) == ErrorPDU(0)
    assert simple.rgb[:2] == [7, 8]
    assert store(simple, NUMFETCH, [(PM_IN_NULL, 42)]) == ErrorPDU(0)
    assert values(simple, NUMFETCH) == [{PM_IN_NULL: 43}]
    # 2-28: metrics that cannot be altered, and metrics that do not exist
    assert store(simple, USER, [(PM_IN_NULL, 1.0)]) == ErrorPDU(-errno.EACCES)
    assert store(simple, NOW, [(0, 1)]) == ErrorPDU(-errno.EACCES)
    unknown = ValueSet.of_atoms(pmID_build(SIMPLE, 0, 9), U32, [(PM_IN_NULL, 1)])
    assert simple.handle(ResultPDU(Result(Timestamp(0, 0), (unknown,)))) == ErrorPDU(PM_ERR_PMID)


def test_descriptors_instances_and_help(simple):
    desc = simple.handle(DescReqPDU(USER))
    assert isinstance(desc, DescPDU) and desc.desc.units.text() == "sec"
    assert simple.handle(DescReqPDU(pmID_build(SIMPLE, 3, 3))) == ErrorPDU(PM_ERR_PMID)
    every = simple.handle(InstanceReqPDU(COLORS, PM_IN_NULL))
    assert every == InstancePDU(COLORS, (0, 1, 2), ("red", "green", "blue"))
    assert simple.handle(InstanceReqPDU(COLORS, 1)).names == ("green",)
    assert simple.handle(InstanceReqPDU(COLORS, PM_IN_NULL, "blue")).insts == (2,)
    assert simple.handle(InstanceReqPDU(COLORS, 7)) == ErrorPDU(PM_ERR_INST)
    assert simple.handle(InstanceReqPDU(pmInDom_build(SIMPLE, 9), PM_IN_NULL)) == ErrorPDU(
        PM_ERR_INDOM
    )
    oneline = simple.handle(TextReqPDU(COLOR, 4 | 1))
    assert oneline == TextPDU(COLOR, "Metrics which increment with each fetch")
    assert "0 (red)" in simple.handle(TextReqPDU(COLOR, 4 | 2)).text
    assert simple.handle(TextReqPDU(COLORS, 8 | 1)).text.startswith('Instance domain "colour"')
    assert simple.handle(TextReqPDU(pmID_build(SIMPLE, 5, 5), 4 | 1)) == ErrorPDU(PM_ERR_TEXT)


def test_the_timenow_domain_follows_its_file(simple, tmp_path):
    conf = tmp_path / "simple" / "simple.conf"
    conf.write_text("hour,bogus,sec\n")
    os.utime(conf, ns=(1, 1))  # a new modification time whatever the clock's resolution
    names = simple.handle(InstanceReqPDU(TIMENOW, PM_IN_NULL)).names
    assert names == ("hour", "sec")
    assert set(values(simple, NOW)[0]) == set(simple.handle(InstanceReqPDU(TIMENOW, -1)).insts)
    conf.unlink()
    assert simple.handle(InstanceReqPDU(TIMENOW, PM_IN_NULL)).insts == ()
    assert values(simple, NOW) == [{}]


def test_labels_at_every_level(simple):
    def json(ident, level):
        reply = simple.handle(LabelReqPDU(ident, level))
        assert isinstance(reply, LabelPDU)
        return [(s.inst, s.json) for s in reply.sets]

    assert json(SIMPLE, 2) == [(PM_IN_NULL, b'{"role":"testing"}')]
    assert json(COLORS, 4) == [(PM_IN_NULL, b'{"indom_name":"color","model":"RGB"}')]
    assert json(COLOR, 8) == [] and json(COLOR, 16) == []
    assert json(COLORS, 32) == [(0, b""), (1, b""), (2, b"")]
    assert json(TIMENOW, 32)[0] == (0, b'{"units":"sec"}')
    simple.handle(ProfilePDU(0, 0, (InDomProfile(COLORS, 1, (2, 0)),)))
    assert json(COLORS, 32) == [(0, b""), (2, b"")]  # as pmdaLabel: the profile's instances
    trivial = Trivial()
    assert trivial.handle(LabelReqPDU(250, 2)).sets[0].json == b'{"agent":"trivial"}'


class Toy(Agent):
    """An agent exercising what trivial and simple do not."""

    name, domain = "toy", 250
    disks = InDom(3, {10: "sda", 11: "sdb", 12: "nvme0n1 slot"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cache: dict = {}
        self.refreshed = threading.Event()

    @metric("toy.reads", U64, indom=disks, units="count")
    def reads(self):  # a mapping for all instances, keyed by id or by name
        return {10: 5, "nvme0n1 slot": 7}

    @metric("toy.flaky", U32, indom=disks)
    def flaky(self, inst):
        if inst == 11:
            raise PMError(PM_ERR_AGAIN)
        return None if inst == 12 else inst

    @metric("toy.broken", U32, indom=disks)
    def broken(self, inst):
        raise PMError(PM_ERR_AGAIN)

    @metric("toy.missing", NOSUPPORT)
    def missing(self):
        return None

    @metric("toy.cached", U32)
    def cached(self):
        return self.cache.get("value")

    @refresh(1, every=0.01)
    def slow_source(self):
        self.cache = {"value": 99}
        self.refreshed.set()


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "pmns").write_text(
        "toy {\n reads TOY:0:0\n flaky TOY:0:1\n broken TOY:0:2\n"
        " missing TOY:0:3\n cached TOY:1:4\n}\n"
    )
    (tmp_path / "help").write_text("@ toy.reads disk reads\nHow many.\n")
    return Toy(pmns_path=tmp_path / "pmns", help_path=tmp_path / "help")


def test_mapping_fetches_errors_and_unsupported_metrics(toy):
    reads, flaky, broken, missing = (pmID_build(250, 0, i) for i in range(4))
    assert values(toy, reads) == [{10: 5, 12: 7}]
    assert values(toy, flaky) == [{10: 10}]  # a failing or empty instance is left out
    assert values(toy, broken) == [PM_ERR_AGAIN]  # no values at all: the error is the set's
    assert values(toy, missing) == [{}]  # PM_TYPE_NOSUPPORT: no values (seed 004, 2.4.5)
    assert toy.handle(DescReqPDU(missing)).desc.type == NOSUPPORT
    assert toy.handle(InstanceReqPDU(pmInDom_build(250, 3), PM_IN_NULL, "nvme0n1")).insts == (12,)


def test_background_refresh_feeds_fetches_without_running_in_them(toy):
    cached = pmID_build(250, 1, 4)
    toy.cache = {}
    toy.refreshed.clear()
    toy.start()  # runs the refresh once at once, then every 10 ms in a thread
    try:
        assert toy.refreshed.wait(DEADLINE)
        assert values(toy, cached) == [{PM_IN_NULL: 99}]
    finally:
        toy.stop()
    toy.cache = {}
    assert values(toy, cached) == [{}]  # a fetch never runs a background refresh itself


class Table(Agent):
    """Metrics declared as data, valued by their cluster's refresh: how the linux agent works."""

    name, domain = "table", 250
    cpus = InDom(0, {0: "cpu0", 1: "cpu1"})
    metrics = (
        Metric("table.load", U32),
        Metric("table.cpu.user", U64, COUNTER, "msec", indom=cpus),
        Metric("table.gone", U32),
        Metric("table.fails", U32),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads = 0

    @refresh(0)
    def stat(self):
        self.reads += 1
        return {"table.load": 3, "table.cpu.user": {0: 10, "cpu1": 20}}

    @refresh(1)
    def broken(self):
        raise OSError("no such file")


def test_table_metrics_take_their_cluster_refresh_values(tmp_path):
    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    agent = Table(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    load, user, gone, fails = (pmID_build(250, c, i) for c, i in ((0, 0), (0, 1), (0, 2), (1, 0)))
    assert values(agent, load, user, gone, fails) == [
        {PM_IN_NULL: 3},
        {0: 10, 1: 20},
        {},  # the refresh gave no value for it
        PM_ERR_AGAIN,  # the cluster's refresh failed (logged), so its metrics carry the error
    ]
    assert agent.reads == 1  # once per fetch, however many of its metrics were asked for
    desc = agent.handle(DescReqPDU(user)).desc
    assert (desc.sem, desc.indom) == (COUNTER, pmInDom_build(250, 0))


class _MoreOfCluster0(Table):
    """A second refresh method for cluster 0 (as a mixin family of the linux agent adds)."""

    @refresh(0)
    def stat_gone(self):
        return {"table.gone": 7}


class _BrokenPart(_MoreOfCluster0):
    @refresh(0)
    def stat_broken(self):
        raise OSError("no such file")


def test_several_refreshes_of_one_cluster_merge_their_values(tmp_path):
    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    load, user, gone = (pmID_build(250, 0, i) for i in range(3))
    agent = _MoreOfCluster0(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    # before: the second method's values replaced the first's
    assert values(agent, load, user, gone) == [{PM_IN_NULL: 3}, {0: 10, 1: 20}, {PM_IN_NULL: 7}]
    assert values(agent, gone) == [{PM_IN_NULL: 7}]  # and nothing is left from the last fetch
    broken = _BrokenPart(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    assert values(broken, load, gone) == [PM_ERR_AGAIN, PM_ERR_AGAIN]


class _OneFails(Table):
    """A refresh that answers one metric with an error (as pmdalinux's swap.in on 2.6+)."""

    @refresh(0)
    def stat_gone(self):
        return {"table.gone": PMError(PM_ERR_APPVERSION), "table.cpu.user": PMError(PM_ERR_AGAIN)}


def test_a_refresh_gives_one_metric_an_error(tmp_path):
    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    load, user, gone = (pmID_build(250, 0, i) for i in range(3))
    agent = _OneFails(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    assert values(agent, load, user, gone) == [{PM_IN_NULL: 3}, PM_ERR_AGAIN, PM_ERR_APPVERSION]


def test_an_error_a_refresh_stored_leaves_no_garbage_cycle(tmp_path):
    """A stored PMError (a failed cluster's, or one metric's) raised again in every fetch
    hung that fetch's frames, and with them every value set, on its traceback: a
    reference cycle per fetch, left for the garbage collector (2,000 objects a fetch of
    the linux agent's default pmlogger list)."""
    import gc

    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    pmids = [pmID_build(250, 0, i) for i in range(3)]  # (not cluster 1: its failure is logged)
    agent = _OneFails(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    agent.fetch(pmids)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for _ in range(3):
            result = agent.fetch(pmids)
        assert [vs.numval for vs in result.vsets] == [1, PM_ERR_AGAIN, PM_ERR_APPVERSION]
        del result
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


class _ShakyInstances(Table):
    """An instance domain whose refresh method fails on its second call."""

    disks = InDom(1)
    metrics = (*Table.metrics, Metric("table.disk", U32, indom=disks))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0

    @disks.refresh
    def disk_names(self):
        self.calls += 1
        if self.calls == 2:
            raise ValueError("no such thing as /proc/disks")
        return {0: "sda"}

    @refresh(2)
    def disk_values(self):
        return {"table.disk": {0: 5}}


def test_a_failing_instance_refresh_fails_neither_the_fetch_nor_the_agent(tmp_path, caplog):
    """Before: the exception left Agent.fetch, failing every metric of the request."""
    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n disk TABLE:2:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    agent = _ShakyInstances(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    load, disk = pmID_build(250, 0, 0), pmID_build(250, 2, 0)
    assert values(agent, load, disk) == [{PM_IN_NULL: 3}, {0: 5}]
    assert values(agent, load, disk) == [{PM_IN_NULL: 3}, {0: 5}]  # the last instances kept
    assert "no such thing as /proc/disks" in caplog.text
    assert "Traceback" not in caplog.text and len(caplog.records) == 1


def test_the_request_loop_over_bytes(simple, caplog):
    requests = b"".join(
        encode(p)
        for p in (
            CredsPDU(()),
            ProfilePDU(0, 0, ()),
            FetchPDU(0, (NUMFETCH,)),
            DescReqPDU(NUMFETCH),
            ErrorPDU(-12391),
        )
    )
    requests += b"\0\0\0\x0c\0\0\x70\x99\0\0\0\0"  # an unknown PDU type: no reply
    requests += b"\0\0\0\x10\0\0\x70\x02\0\0\0\0\0\0\0\0"  # a PROFILE cut short: no reply
    requests += b"\0\0\0\x0c\0\0\x70\x04\0\0\0\0"  # a DESC_REQ without its PMID: an ERROR
    requests += b"\0\0\0\x20\0\0"  # the start of a PDU, then end of file
    out = io.BytesIO()
    assert serve_stream(simple, io.BytesIO(requests), out) == 0
    replies = [decode(f) for f in split_stream(out.getvalue())]
    assert isinstance(replies[0], CredsPDU) and replies[0].creds[0].vala == 2
    assert isinstance(replies[1], ResultPDU) and replies[1].result.vsets[0].numval == 1
    assert isinstance(replies[2], DescPDU)
    assert isinstance(replies[3], ErrorPDU) and replies[3].code < 0
    assert len(replies) == 4
    logged = caplog.text
    assert "unrecognised PDU type 0x7099" in logged
    assert "bad PDU_PROFILE PDU" in logged and "bad PDU_DESC_REQ PDU" in logged
    assert "6 bytes of an unfinished PDU" in logged


def test_agent_code_that_fails_is_answered_not_fatal(simple):
    def explode(self):
        raise RuntimeError("boom")

    simple.on_fetch = explode.__get__(simple)
    out: list[bytes] = []
    data = iter([encode(FetchPDU(0, (NUMFETCH,))), b""])
    assert answer_requests(simple, lambda n: next(data), out.append) == 0
    assert decode(out[0]) == ErrorPDU(PM_ERR_GENERIC)


def code_lines(*paths: Path) -> int:
    """Lines that are not blank and not comments (docstrings count)."""
    return sum(
        1
        for path in paths
        for line in path.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    )


def test_agents_fit_their_line_budgets():
    # issue: half of PCP's Python versions (pmdasimple.python 217 code lines, trivial 48)
    assert code_lines(*(ROOT / "agents" / "trivial").glob("*.py")) <= 20
    assert code_lines(*(ROOT / "agents" / "simple").glob("*.py")) <= 110


def test_changed_labels_and_names_ride_once_in_the_next_result(simple):
    """pmdaExtSetFlags: the flags go in the RESULT's seconds once, then are cleared."""
    simple.changed(labels=True, names=True)
    first = simple.handle(FetchPDU(0, (NUMFETCH,))).result.timestamp
    second = simple.handle(FetchPDU(0, (NUMFETCH,))).result.timestamp
    assert (first.sec, first.nsec) == (8 | 16, 0)
    assert (second.sec, second.nsec) == (0, 0)


def test_agents_load_in_process_by_module_or_file(tmp_path):
    """pmcd's dso lines and dbpmda's 'open dso' name a module or file, and maybe the class."""
    agent = load_agent("purepcp.agents.simple")
    assert isinstance(agent, Simple) and agent.domain == SIMPLE
    agent.stop()
    agent = load_agent(f"{ROOT / 'agents' / 'trivial' / '__init__.py'}:Trivial", 251)
    assert agent.domain == 251 and type(agent).__name__ == "Trivial"
    (tmp_path / "fails.py").write_text("import no_such_module_here\n")
    problems = {
        "purepcp.agents.no_such": (
            "purepcp.agents.no_such: cannot import: No module named 'purepcp.agents.no_such'"
        ),
        "purepcp.agents.simple:Nope": (
            "purepcp.agents.simple:Nope: purepcp.agents.simple has no agent class Nope"
        ),
        "purepcp.agents": (
            "purepcp.agents: purepcp.agents defines no agent class; "
            "name one as purepcp.agents:Class"
        ),
        # a pmcd.conf line written before the agents moved under purepcp
        "purepcp_agents.simple": (
            "purepcp_agents.simple: cannot import: No module named 'purepcp_agents' "
            "(now purepcp.agents.simple: rewrite that line of pmcd.conf)"
        ),
        str(tmp_path / "nofile.py"): "no such file",
        str(tmp_path / "fails.py"): "ModuleNotFoundError: No module named 'no_such_module_here'",
    }
    for spec, message in problems.items():
        with pytest.raises(AgentLoadError) as caught:
            load_agent(spec)
        assert message in str(caught.value) and "\n" not in str(caught.value)


def test_namespace_requests_fail_as_libpcp_pmda_defaults_do(simple):
    """No dynamic namespace: a name lookup is PM_ERR_NAME, a PMID's names PM_ERR_PMID."""
    assert simple.handle(PMNSNamesPDU(("simple.nosuch",))) == ErrorPDU(PM_ERR_NAME)
    assert simple.handle(PMNSIdsPDU(0, (NUMFETCH,))) == ErrorPDU(PM_ERR_PMID)


def test_an_agent_with_a_dynamic_namespace_answers_from_its_own(tmp_path):
    """As pmdaTreePMID, pmdaTreeName and pmdaTreeChildren: what pmcd asks when its own
    namespace has a dynamic subtree root for the agent (PCP's has "proc.psinfo 3:*:*")."""
    from purepcp.pmapi.pdu.records import PMNSChildPDU, PMNSTraversePDU

    class Dynamic(Table):
        dynamic_pmns = True

    (tmp_path / "pmns").write_text(
        "table {\n load TABLE:0:0\n cpu\n gone TABLE:0:2\n fails TABLE:1:0\n}\n"
        "table.cpu {\n user TABLE:0:1\n}\n"
    )
    agent = Dynamic(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    user = pmID_build(250, 0, 1)
    assert agent.handle(PMNSNamesPDU(("table.cpu.user",))) == PMNSIdsPDU(0, (user,))
    assert agent.handle(PMNSNamesPDU(("table.cpu",))) == ErrorPDU(PM_ERR_NAME)  # not a leaf
    assert agent.handle(PMNSNamesPDU(("table.nosuch",))) == ErrorPDU(PM_ERR_NAME)
    assert agent.handle(PMNSIdsPDU(0, (user,))) == PMNSNamesPDU(("table.cpu.user",))
    assert agent.handle(PMNSIdsPDU(0, (pmID_build(250, 9, 9),))) == ErrorPDU(PM_ERR_PMID)
    assert agent.handle(PMNSChildPDU("table", 1)) == PMNSNamesPDU(
        ("load", "cpu", "gone", "fails"), (0, 1, 0, 0)
    )
    assert agent.handle(PMNSChildPDU("table.cpu", 0)) == PMNSNamesPDU(("user",))
    assert agent.handle(PMNSChildPDU("table.load", 0)) == PMNSNamesPDU(())  # a leaf
    assert agent.handle(PMNSTraversePDU("table")) == PMNSNamesPDU(
        ("table.load", "table.cpu.user", "table.gone", "table.fails")
    )
    assert agent.handle(PMNSTraversePDU("table.gone")) == PMNSNamesPDU(("table.gone",))
    assert agent.handle(PMNSTraversePDU("nosuch")) == ErrorPDU(PM_ERR_NAME)


def test_a_refresh_sees_the_instances_of_this_fetch_not_the_last(tmp_path):
    """profiled() in a refresh gave the instance list the previous fetch's value sets had
    worked out (the per-fetch cache was cleared only after the refreshes), so a process
    started since the last fetch was missing from the next one (found with pcp's tools
    against the proc agent)."""

    class Growing(Agent):
        name, domain = "growing", 250
        things = InDom(0)
        metrics = (Metric("growing.value", U32, indom=things),)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.now: dict[int, str] = {0: "a"}

        @things.refresh
        def _things(self):
            return dict(self.now)

        @refresh(0)
        def _values(self):
            return {"growing.value": {inst: inst * 10 for inst in self.profiled(self.things)}}

    (tmp_path / "pmns").write_text("growing {\n value GROWING:0:0\n}\n")
    agent = Growing(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    pmid = pmID_build(250, 0, 0)
    assert values(agent, pmid) == [{0: 0}]
    agent.now = {0: "a", 1: "b"}
    assert values(agent, pmid) == [{0: 0, 1: 10}]  # before: [{0: 0}]


def test_a_reset_connection_ends_the_loop_quietly(simple):
    """pmcd and dbpmda close agent sockets with a reset; that is the end, not a crash."""

    def read(n):
        raise ConnectionResetError(104, "Connection reset by peer")

    assert answer_requests(simple, read, lambda data: None) == 0


def test_an_agent_that_cannot_listen_says_so_in_one_line(tmp_path, capsys):
    """-u in a missing directory: one logged line and status 1, no traceback."""
    path = tmp_path / "missing" / "agent.socket"
    assert pmda_main(Trivial, ["-u", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot serve on {path}: No such file" in err


def _run_as_a_daemon(argv: list[str], pmdas_dir: Path) -> tuple[str, list[str]]:
    """Start an agent as pmcd starts a pipe agent (ARGV after the interpreter); once it
    has spoken (its CREDS), its process name (/proc/PID/stat's comm) and command line
    as ps reads them."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_PMDAS_DIR=str(pmdas_dir))
    agent = subprocess.Popen(
        [sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert agent.stdout is not None and len(agent.stdout.read(12)) == 12  # (its CREDS)
        with open(f"/proc/{agent.pid}/stat") as stat:
            comm = stat.read().split(" (", 1)[1].rsplit(") ", 1)[0]
        with open(f"/proc/{agent.pid}/cmdline", "rb") as cmdline:
            words = [os.fsdecode(w) for w in cmdline.read().split(b"\0") if w]
    finally:
        assert agent.stdin is not None and agent.stdout is not None
        agent.stdin.close()  # (end of its pipe: the agent exits)
        agent.stdout.close()
        agent.wait(timeout=DEADLINE)
    return comm, words


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux's /proc only")
def test_a_daemon_agent_runs_as_pcps_agent_of_its_name(tmp_path):
    """QA 982: PCP's agents run as pmdaNAME, and hotproc's `fname == "pmdaproc"` picks
    the proc agent by that name (psinfo.fname, /proc/PID/stat's comm): ours are named
    so, and ps shows their command lines as pmcd runs PCP's ($PCP_PMDAS_DIR/NAME/pmdaNAME
    where that program is installed, else pmdaNAME), not Python's."""
    run = ["-m", "purepcp.pmda.run", "purepcp.agents.trivial:Trivial", "-d", "250"]
    assert _run_as_a_daemon(run, tmp_path) == ("pmdatrivial", ["pmdatrivial", "-d", "250"])
    # (a short directory: the line shown must fit where Python's command line was)
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="p") as pmdas:
        program = Path(pmdas, "simple", "pmdasimple")
        program.parent.mkdir()
        program.write_text("")
        assert _run_as_a_daemon(["-m", "purepcp.agents.simple", "-d", "253"], Path(pmdas)) == (
            "pmdasimple",
            [str(program), "-d", "253"],
        )
