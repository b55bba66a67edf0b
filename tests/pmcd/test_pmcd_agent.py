"""pmcd's own agent (domain 2) driven in memory with a DaemonState, and against PCP's.

The component tests fill in a `DaemonState`, hand the agent request records as
our pmcd will, and check descriptors, values, instance domains and stores.  The
interop tests run PCP's pmcd with its pmcd PMDA and check that every metric we
export has that agent's PMID, descriptor and instance names, and that stores are
refused (or taken) as PCP's agent does.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.pmapi import PCP_COMPAT_VERSION
from purepcp.pmapi.errors import (
    PM_ERR_BADSTORE,
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_PERMISSION,
    PM_ERR_PMID,
    PM_ERR_SIGN,
    pmErrStr,
)
from purepcp.pmapi.ids import PM_IN_NULL, pmIDStr, pmInDom_build
from purepcp.pmapi.pdu.constants import Attr, PDUType
from purepcp.pmapi.pdu.records import (
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InDomProfile,
    InstancePDU,
    InstanceReqPDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmcd import host_facts, pmcd_agent
from purepcp.pmcd.host_facts import host_timezone, host_zoneinfo
from purepcp.pmcd.pcp_processes import PMIE_STATS
from purepcp.pmcd.pmcd_agent import PmcdAgent
from purepcp.pmcd.stats import (
    AGENT_TYPE,
    REASON_EXIT,
    REASON_NOSTART,
    REASON_PROTOCOL,
    STATUS_NOTREADY,
    AgentRecord,
    DaemonState,
    termination_status,
)
from tests.support.reference_pmcd import reference_pmcd, require_reference

PMCD_DSO = "pmcd 2 dso pmcd_init /var/lib/pcp/pmdas/pmcd/pmda_pmcd.so"
ZONES = Path("/usr/share/zoneinfo")


@pytest.fixture
def state(tmp_path) -> DaemonState:
    (tmp_path / "run").mkdir()
    (tmp_path / "tmp").mkdir()
    s = DaemonState(run_dir=str(tmp_path / "run"), tmp_dir=str(tmp_path / "tmp"))
    s.set_agents(
        [
            AgentRecord("linux", 60, AGENT_TYPE["pipe"], pid=4321),
            AgentRecord("pmcd", 2, AGENT_TYPE["dso"]),
            AgentRecord("simple", 253, AGENT_TYPE["socket"], status=STATUS_NOTREADY),
            AgentRecord("broken", 99, AGENT_TYPE["pipe"], status=REASON_NOSTART),
        ]
    )
    return s


@pytest.fixture
def agent(state) -> PmcdAgent:
    return PmcdAgent(state=state)


def pmid(agent: PmcdAgent, name: str) -> int:
    return agent.pmns.lookup(name)


def fetch(agent: PmcdAgent, *names: str, slot: int = 0) -> list:
    """Per metric: {inst: value}, or the error code its value set carries."""
    pmids = tuple(pmid(agent, n) for n in names)
    reply = agent.handle(FetchPDU(0, pmids, slot))
    out = []
    for vs in reply.result.vsets:
        if vs.numval < 0:
            out.append(int(vs.numval))
        else:
            out.append(dict(zip(vs.insts, vs.atoms(agent._descs[vs.pmid].type), strict=True)))
    return out


def one(agent: PmcdAgent, name: str, slot: int = 0):
    """The single value of a metric without instances (None when it has none)."""
    values = fetch(agent, name, slot=slot)[0]
    assert isinstance(values, dict), values
    return values.get(PM_IN_NULL)


def store(agent: PmcdAgent, *sets: tuple[str, list], slot: int = 0) -> int:
    """Store (name, [(inst, value), ...]) sets in one request; the status pmcd gets back."""
    vsets = tuple(
        ValueSet.of_atoms(pmid(agent, n), agent._descs[pmid(agent, n)].type, pairs)
        for n, pairs in sets
    )
    reply = agent.handle(ResultPDU(Result(Timestamp(0, 0), vsets), slot))
    assert isinstance(reply, ErrorPDU)
    return reply.code


# -- descriptors, help, instance domains -------------------------------------------------


def test_every_metric_of_pcps_pmcd_agent_is_declared(agent):
    names = agent.pmns.traverse("pmcd")
    assert len(names) == len(agent._descs) == 108
    for name in names:
        assert agent.pmns.lookup(name) in agent._descs, name
        assert agent.pmns.lookup(name) in agent.help.pmids, f"{name} has no help"


@pytest.mark.parametrize(
    ("name", "ident", "type_", "indom", "text"),
    [
        ("pmcd.control.debug", "2.0.0", PMType.PM_TYPE_32, None, "discrete  Units: none"),
        ("pmcd.datasize", "2.0.1", PMType.PM_TYPE_U32, None, "instant  Units: Kbyte"),
        ("pmcd.control.register", "2.0.8", PMType.PM_TYPE_32, 2, "discrete  Units: none"),
        ("pmcd.buf.alloc", "2.0.18", PMType.PM_TYPE_32, 5, "instant  Units: count"),
        ("pmcd.pid", "2.0.23", PMType.PM_TYPE_U64, None, "discrete  Units: none"),
        ("pmcd.zoneinfo", "2.0.26", PMType.PM_TYPE_STRING, None, "discrete  Units: none"),
        ("pmcd.pdu_in.total", "2.1.16", PMType.PM_TYPE_U32, None, "counter  Units: count"),
        ("pmcd.pdu_in.pmns_traverse", "2.1.17", PMType.PM_TYPE_U32, None, "counter"),
        ("pmcd.pdu_out.descs", "2.2.24", PMType.PM_TYPE_U32, None, "counter  Units: count"),
        ("pmcd.pmlogger.port", "2.3.0", PMType.PM_TYPE_U32, 1, "discrete"),
        ("pmcd.agent.fenced", "2.4.2", PMType.PM_TYPE_U32, 3, "instant  Units: none"),
        ("pmcd.pmie.eval.expected", "2.5.8", PMType.PM_TYPE_FLOAT, 4, "Units: count / sec"),
        ("pmcd.client.container", "2.6.2", PMType.PM_TYPE_STRING, 6, "instant"),
        ("pmcd.cputime.total", "2.7.0", PMType.PM_TYPE_U64, None, "counter  Units: millisec"),
        ("pmcd.cputime.per_pdu_in", "2.7.1", PMType.PM_TYPE_DOUBLE, None, "microsec / count"),
        ("pmcd.feature.client_cert_required", "2.8.9", PMType.PM_TYPE_U32, None, "instant"),
    ],
)
def test_descriptors_are_pcps(agent, name, ident, type_, indom, text):
    reply = agent.handle(DescReqPDU(pmid(agent, name)))
    desc = reply.desc
    assert pmIDStr(desc.pmid) == ident
    assert desc.type == type_
    assert desc.indom == (0xFFFFFFFF if indom is None else pmInDom_build(2, indom))
    assert text in desc.describe()


def test_help_text_for_metrics_and_instance_domains(agent):
    reply = agent.handle(TextReqPDU(pmid(agent, "pmcd.control.timeout"), 1 | 4))
    assert isinstance(reply, TextPDU) and "seconds" in reply.text
    reply = agent.handle(TextReqPDU(pmInDom_build(2, 3), 2 | 8))
    assert isinstance(reply, TextPDU) and "pmcd.conf" in reply.text


def test_fixed_instance_domains(agent):
    registers = agent.handle(InstanceReqPDU(pmInDom_build(2, 2), PM_IN_NULL, None))
    assert registers.insts == tuple(range(16))
    assert registers.names == tuple(str(i) for i in range(16))
    pools = agent.handle(InstanceReqPDU(pmInDom_build(2, 5), PM_IN_NULL, None))
    assert pools.insts == (12, 20, 1024, 2048, 4196, 8192, 8193)
    assert pools.names[0] == "0012" and pools.names[-1] == "8192+"
    assert agent.handle(InstanceReqPDU(pmInDom_build(2, 9), PM_IN_NULL, None)) == ErrorPDU(
        PM_ERR_INDOM
    )


def test_registers_are_found_by_number_as_pcp_reads_the_name(agent):
    indom = pmInDom_build(2, 2)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "07")).insts == (7,)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "15")).insts == (15,)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "16")) == ErrorPDU(PM_ERR_INST)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "x")) == ErrorPDU(PM_ERR_INST)
    assert agent.handle(InstanceReqPDU(indom, 3, None)).names == ("3",)
    # all of the name, read by (int)strtol: blanks and a sign first, an int's wrap (PCP's
    # pmdapmcd stores to register 9 for "4294967305"), and "" is 0
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, " +8")).insts == (8,)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "4294967305")).insts == (9,)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "")).insts == (0,)
    assert agent.handle(InstanceReqPDU(indom, PM_IN_NULL, "7 ")) == ErrorPDU(PM_ERR_INST)


def test_agent_table_instances_in_table_order_values_in_domain_order(agent):
    reply = agent.handle(InstanceReqPDU(pmInDom_build(2, 3), PM_IN_NULL, None))
    assert isinstance(reply, InstancePDU)
    assert reply.insts == (60, 2, 253, 99)
    assert reply.names == ("linux", "pmcd", "simple", "broken")
    names = agent.handle(FetchPDU(0, (pmid(agent, "pmcd.agent.name"),))).result.vsets[0]
    assert list(names.insts) == [2, 60, 99, 253]
    assert agent.handle(InstanceReqPDU(pmInDom_build(2, 3), PM_IN_NULL, "simple")).insts == (253,)


# -- values follow the state ---------------------------------------------------------------


def test_agent_table_values(agent, state):
    type_, status, fenced, name = fetch(
        agent, "pmcd.agent.type", "pmcd.agent.status", "pmcd.agent.fenced", "pmcd.agent.name"
    )
    assert type_ == {2: 0, 60: 4, 99: 4, 253: 2}
    assert status == {2: 0, 60: 0, 99: REASON_NOSTART, 253: STATUS_NOTREADY}
    assert fenced == {2: 0, 60: 0, 99: 0, 253: 0}
    assert name[253] == "simple"
    assert one(agent, "pmcd.numagents") == 3  # ready or not, but connected
    state.agents[0].status = termination_status(REASON_PROTOCOL, -9)
    assert fetch(agent, "pmcd.agent.status")[0][60] == REASON_PROTOCOL | 9 << 16
    assert one(agent, "pmcd.numagents") == 2


def test_termination_status_encoding():
    assert termination_status(REASON_EXIT, 3) == 0x302
    assert termination_status(REASON_PROTOCOL, -15) == 0xF0008
    assert termination_status(REASON_NOSTART) == 4


def test_pdu_counters_use_pcps_slots(agent, state):
    state.count("in", PDUType.PDU_FETCH)
    state.count("in", PDUType.PDU_FETCH)
    state.pdu_in(PDUType.PDU_ATTR)
    state.pdu_in(PDUType.PDU_DESCS)
    state.pdu_out(PDUType.PDU_RESULT)
    state.count("out", PDUType.PDU_PMNS_TRAVERSE)
    state.pdu_in(0x700B)  # DATA_X: counted in the total only, as libpcp would
    state.pdu_in(0x6FFF)  # not a PDU type: not counted
    values = fetch(
        agent,
        "pmcd.pdu_in.fetch",
        "pmcd.pdu_in.auth",
        "pmcd.pdu_in.descs",
        "pmcd.pdu_in.total",
        "pmcd.pdu_out.result",
        "pmcd.pdu_out.pmns_traverse",
        "pmcd.pdu_out.total",
        "pmcd.pdu_out.fetch",
    )
    assert [v[PM_IN_NULL] for v in values] == [2, 1, 1, 5, 1, 1, 2, 0]
    state.pdus_in[3] = 2**32 + 7
    assert one(agent, "pmcd.pdu_in.fetch") == 7


def test_clients(agent, state):
    state.client_connected(5, "127.0.0.1", start=0)
    state.client_connected(1, start=86400 * 365)
    assert one(agent, "pmcd.numclients") == 2
    reply = agent.handle(InstanceReqPDU(pmInDom_build(2, 6), PM_IN_NULL, None))
    assert reply.insts == (1, 0) and reply.names == ("1", "0")  # in slot order
    whoami, start, container = fetch(
        agent, "pmcd.client.whoami", "pmcd.client.start_date", "pmcd.client.container"
    )
    assert whoami == {0: "", 1: ""} and container == {0: "", 1: ""}
    assert start == {0: time.ctime(0), 1: time.ctime(86400 * 365)}
    state.client_attribute(5, Attr.PCP_ATTR_CONTAINER, b"web\0")
    assert fetch(agent, "pmcd.client.container")[0] == {0: "web", 1: ""}
    state.client_disconnected(5)
    assert one(agent, "pmcd.numclients") == 1
    assert fetch(agent, "pmcd.client.whoami")[0] == {1: ""}
    assert state.client_connected(5).seq == 2  # sequence numbers are never reused


def test_singular_values_follow_state(agent, state):
    state.timeout, state.debug, state.trace_bufs, state.trace_mask = 9, 65, 30, 2 | 256
    state.sighups, state.seqnum, state.hi_openfds = 3, 4, 17
    state.hostname, state.timezone, state.labels = "box", "EST+5", '{"site":"x"}'
    expected = {
        "pmcd.control.timeout": 9,
        "pmcd.control.debug": 65,
        "pmcd.control.tracebufs": 30,
        "pmcd.control.traceconn": 0,
        "pmcd.control.tracepdu": 1,
        "pmcd.control.tracenobuf": 1,
        "pmcd.control.dumptrace": 0,
        "pmcd.control.dumpconn": 0,
        "pmcd.control.sighup": 0,
        "pmcd.sighups": 3,
        "pmcd.seqnum": 4,
        "pmcd.openfds": 17,
        "pmcd.hostname": "box",
        "pmcd.timezone": "EST+5",
        "pmcd.labels": '{"site":"x"}',
        "pmcd.version": PCP_COMPAT_VERSION,
        "pmcd.build": state.build,
        "pmcd.pid": os.getpid(),
        "pmcd.services": "pmcd",
    }
    assert {name: one(agent, name) for name in expected} == expected


def test_metrics_without_a_source_have_no_value(agent, state):
    for name in ("pmcd.openfds", "pmcd.labels", "pmcd.feature.ipv6"):
        assert one(agent, name) is None, name
    state.features.update(ipv6=True, secure=False)
    assert one(agent, "pmcd.feature.ipv6") == 1
    assert one(agent, "pmcd.feature.secure") == 0
    assert one(agent, "pmcd.feature.local") is None


def test_host_defaults(agent):
    assert one(agent, "pmcd.hostname") == socket.gethostname()
    assert one(agent, "pmcd.timezone") == host_timezone()
    assert one(agent, "pmcd.zoneinfo") == host_zoneinfo()
    assert one(agent, "pmcd.simabi")
    if os.path.exists("/proc/self/maps"):
        assert one(agent, "pmcd.datasize") >= 0
    assert one(agent, "pmcd.cputime.total") >= 0


def test_register_profile(agent, state):
    state.registers[3] = -7
    agent.handle(ProfilePDU(0, 0, (InDomProfile(pmInDom_build(2, 2), 1, (3, 5)),)))
    assert fetch(agent, "pmcd.control.register") == [{3: -7, 5: 0}]


def test_cputime_per_pdu_is_per_client(agent, state, monkeypatch):
    cpu = iter([1000.0, 1500.0, 1600.0])
    monkeypatch.setattr(pmcd_agent, "_cpu_msec", lambda: next(cpu))
    state.client_connected(1)
    state.client_connected(2)
    state.pdus_in[3] = 100
    assert one(agent, "pmcd.cputime.per_pdu_in", slot=1) == 1000 * 1000 / 100  # since start
    state.pdus_in[3] = 150
    assert one(agent, "pmcd.cputime.per_pdu_in", slot=1) == 1000 * 500 / 50  # since then
    assert one(agent, "pmcd.cputime.per_pdu_in", slot=2) == 1600 * 1000 / 150


# -- pmloggers, pmies and services, from their files ---------------------------------------


@pytest.fixture
def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_pmloggers_from_their_port_files(agent, state, dead_pid):
    ports = Path(state.tmp_dir, "pmlogger")
    ports.mkdir()
    me = os.getpid()
    (ports / str(me)).write_text("4330\nlocal:\n/var/log/pcp/pmlogger/box/20260101\n")
    os.symlink(str(me), ports / "primary")
    (ports / str(dead_pid)).write_text("4331\nx\ny\n")  # its pmlogger is gone
    (ports / "1").write_text("4332\nx\ny\n")  # pids 0 and 1 are never pmloggers
    (ports / "notes").write_text("4333\n")
    reply = agent.handle(InstanceReqPDU(pmInDom_build(2, 1), PM_IN_NULL, None))
    assert dict(zip(reply.insts, reply.names, strict=True)) == {me: str(me), 0: "primary"}
    port, pmcd_host, archive, host = fetch(
        agent,
        "pmcd.pmlogger.port",
        "pmcd.pmlogger.pmcd_host",
        "pmcd.pmlogger.archive",
        "pmcd.pmlogger.host",
    )
    assert port == {me: 4330, 0: 4330}
    assert pmcd_host[me] == "local:" and archive[0].endswith("/20260101")
    assert host == {me: socket.gethostname(), 0: socket.gethostname()}
    (ports / str(me)).write_text("4330 \nlocal:\n")  # no newline right after the port
    assert fetch(agent, "pmcd.pmlogger.port") == [{}]
    (ports / str(me)).write_text("4334\n")  # no host or archive lines
    assert fetch(agent, "pmcd.pmlogger.archive") == [{me: "", 0: ""}]
    (ports / str(me)).write_text("99999999999999999999\n")  # (int)strtol: LONG_MAX's -1
    assert fetch(agent, "pmcd.pmlogger.port") == [{me: 0xFFFFFFFF, 0: 0xFFFFFFFF}]


def test_pmies_from_their_statistics_files(agent, state, dead_pid):
    stats = Path(state.tmp_dir, "pmie")
    stats.mkdir()
    me = os.getpid()
    data = PMIE_STATS.pack(
        b"/etc/pcp/pmie/config", b"/var/log/pmie.log", b"box", 0.5, 7, 1, 2, 3, 4, 5, 1
    )
    (stats / str(me)).write_bytes(data)
    (stats / str(dead_pid)).write_bytes(data)
    old = bytearray(data)
    old[-4:] = (2).to_bytes(4, sys.byteorder)  # another layout version: skipped
    Path(state.run_dir, "pmie.pid").write_text(f"{me}\n")
    values = fetch(
        agent,
        "pmcd.pmie.configfile",
        "pmcd.pmie.logfile",
        "pmcd.pmie.pmcd_host",
        "pmcd.pmie.eval.expected",
        "pmcd.pmie.numrules",
        "pmcd.pmie.actions",
        "pmcd.pmie.eval.true",
        "pmcd.pmie.eval.false",
        "pmcd.pmie.eval.unknown",
        "pmcd.pmie.eval.actual",
    )
    assert [v[me] for v in values] == [
        "/etc/pcp/pmie/config",
        "/var/log/pmie.log",
        "box",
        0.5,
        7,
        1,
        2,
        3,
        4,
        5,
    ]
    assert all(v[0] == v[me] for v in values)  # the primary pmie, again as instance 0
    reply = agent.handle(InstanceReqPDU(pmInDom_build(2, 4), PM_IN_NULL, None))
    assert set(zip(reply.insts, reply.names, strict=True)) == {(me, str(me)), (0, "primary")}
    (stats / str(me)).write_bytes(bytes(old))
    assert fetch(agent, "pmcd.pmie.numrules") == [{}]


def test_services_lists_a_running_pmproxy(agent, state, dead_pid):
    Path(state.run_dir, "pmproxy.pid").write_text(f"{dead_pid}\n")
    assert one(agent, "pmcd.services") == "pmcd"
    Path(state.run_dir, "pmproxy.pid").write_text(f"{os.getpid()}\n")
    assert one(agent, "pmcd.services") == "pmcd pmproxy"
    Path(state.run_dir, "pmproxy.pid").write_text(f"{os.getpid() + (1 << 32)}\n")
    assert one(agent, "pmcd.services") == "pmcd pmproxy"  # atoi keeps an int's 32 bits


@pytest.mark.skipif(
    not (ZONES / "Australia" / "Melbourne").exists(),
    reason="the system time zone database (tzdata package) is not installed",
)
def test_timezone_as_pcp_squashes_it(monkeypatch, tmp_path):
    monkeypatch.setattr(host_facts, "LOCALTIME", str(ZONES / "Australia" / "Melbourne"))
    assert host_timezone(time.mktime((2026, 1, 15, 12, 0, 0, 0, 0, 0))) == "AEDT-11"
    assert host_timezone(time.mktime((2026, 7, 15, 12, 0, 0, 0, 0, 0))) == "AEST-10"
    monkeypatch.setattr(host_facts, "LOCALTIME", str(ZONES / "Asia" / "Kolkata"))
    assert host_timezone() == "IST-5:30"
    monkeypatch.setattr(host_facts, "LOCALTIME", str(ZONES / "America" / "St_Johns"))
    assert host_timezone(time.mktime((2026, 1, 15, 12, 0, 0, 0, 0, 0))) == "NST+3:30"
    monkeypatch.setattr(host_facts, "LOCALTIME", str(tmp_path / "missing"))
    assert host_timezone() == "UTC"


@pytest.mark.skipif(
    not (ZONES / "Europe" / "Paris").exists(),
    reason="the system time zone database (tzdata package) is not installed",
)
def test_zoneinfo_from_the_link_or_the_contents(monkeypatch, tmp_path):
    link = tmp_path / "localtime"
    os.symlink(ZONES / "Europe" / "Paris", link)
    monkeypatch.setattr(host_facts, "LOCALTIME", str(link))
    assert host_zoneinfo() == ":Europe/Paris"
    copy = tmp_path / "copy"
    shutil.copyfile(ZONES / "Europe" / "Paris", copy)
    monkeypatch.setattr(host_facts, "LOCALTIME", str(copy))
    found = host_zoneinfo()
    assert found.startswith(":") and (ZONES / found[1:]).read_bytes() == copy.read_bytes()
    monkeypatch.setattr(host_facts, "LOCALTIME", str(tmp_path / "missing"))
    assert host_zoneinfo() == ""


# -- stores ----------------------------------------------------------------------------------


def test_control_stores_change_the_state(agent, state):
    assert store(agent, ("pmcd.control.timeout", [(PM_IN_NULL, 0)])) == 0
    assert state.timeout == 0
    assert store(agent, ("pmcd.control.debug", [(PM_IN_NULL, 4096)])) == 0
    assert state.debug == 4096
    assert store(agent, ("pmcd.control.tracebufs", [(PM_IN_NULL, 5)])) == 0
    assert state.trace_bufs == 5
    for name, bit in (("traceconn", 1), ("tracepdu", 2), ("tracenobuf", 256)):
        assert store(agent, (f"pmcd.control.{name}", [(PM_IN_NULL, 1)])) == 0
        assert state.trace_mask & bit
        assert one(agent, f"pmcd.control.{name}") == 1
        assert store(agent, (f"pmcd.control.{name}", [(PM_IN_NULL, 0)])) == 0
        assert not state.trace_mask & bit
    assert store(agent, ("pmcd.control.register", [(0, 5), (15, -1)])) == 0
    assert fetch(agent, "pmcd.control.register")[0][15] == -1
    assert store(agent, ("pmcd.seqnum", [(PM_IN_NULL, 100)])) == 0
    assert state.seqnum == 2  # a bump, whatever the value


def test_bad_control_values_are_refused_as_pcp_refuses_them(agent, state):
    assert store(agent, ("pmcd.control.timeout", [(PM_IN_NULL, 0xFFFFFFFF)])) == PM_ERR_SIGN
    assert state.timeout == 5
    assert store(agent, ("pmcd.control.tracebufs", [(PM_IN_NULL, -1)])) == PM_ERR_SIGN
    assert store(agent, ("pmcd.control.traceconn", [(PM_IN_NULL, 2)])) == PM_ERR_BADSTORE
    assert state.trace_mask == 0
    # a bad register is remembered and the store goes on; other errors end it
    sets = (("pmcd.control.register", [(16, 1)]), ("pmcd.control.register", [(2, 9)]))
    assert store(agent, *sets) == PM_ERR_INST
    assert state.registers[2] == 9
    sets = (("pmcd.control.traceconn", [(PM_IN_NULL, 7)]), ("pmcd.control.timeout", [(0, 1)]))
    assert store(agent, *sets) == PM_ERR_BADSTORE
    assert state.timeout == 5
    block = ValueSet.of_atoms(pmid(agent, "pmcd.control.timeout"), PMType.PM_TYPE_64, [(0, 1)])
    reply = agent.handle(ResultPDU(Result(Timestamp(0, 0), (block,))))
    assert reply == ErrorPDU(PM_ERR_BADSTORE)


def test_buffers_are_counted_in_libpcps_size_classes(agent, state):
    """pmcd.buf.alloc counts the PDU buffers pmcd holds as pmdapmcd counts libpcp's: those
    of at least the instance's size less those of at least 1 KB more; nothing is pooled."""
    zero = dict.fromkeys((12, 20, 1024, 2048, 4196, 8192, 8193), 0)
    assert fetch(agent, "pmcd.buf.alloc", "pmcd.buf.free") == [zero, zero]
    state.held_buffers = lambda: [28, 1500, 9000]  # a request, a partial PDU, a reply
    alloc = {12: 1, 20: 1, 1024: 1, 2048: 0, 4196: 0, 8192: 1, 8193: 1}
    assert fetch(agent, "pmcd.buf.alloc", "pmcd.buf.free") == [alloc, zero]


@pytest.mark.parametrize(
    "name",
    [
        "pmcd.numagents",
        "pmcd.version",
        "pmcd.datasize",
        "pmcd.pdu_in.total",
        "pmcd.pdu_out.fetch",
        "pmcd.pmlogger.port",
        "pmcd.client.start_date",
        "pmcd.cputime.total",
        "pmcd.feature.ipv6",
        "pmcd.pmie.numrules",
    ],
)
def test_read_only_metrics_refuse_stores_with_pm_err_pmid(agent, name):
    desc = agent._descs[pmid(agent, name)]
    value = "x" if desc.type == PMType.PM_TYPE_STRING else 1
    inst = PM_IN_NULL if desc.indom == 0xFFFFFFFF else 0
    assert store(agent, (name, [(inst, value)])) == PM_ERR_PMID


def test_other_agent_metrics_take_stores_and_ignore_them(agent, state):
    assert store(agent, ("pmcd.agent.type", [(60, 1)])) == 0
    assert store(agent, ("pmcd.agent.name", [(60, "x")])) == 0
    assert fetch(agent, "pmcd.agent.type")[0][60] == 4


def test_push_buttons_queue_requests_for_the_daemon(agent, state):
    woken = []
    state.notify = woken.append
    for name in ("sighup", "dumptrace", "dumpconn"):
        assert store(agent, (f"pmcd.control.{name}", [(PM_IN_NULL, 1)])) == 0
    assert woken == ["sighup", "dumptrace", "dumpconn"]
    assert state.take_requests() == [("sighup", None), ("dumptrace", None), ("dumpconn", None)]
    assert state.take_requests() == []
    assert one(agent, "pmcd.control.sighup") == 0


def test_fencing_is_for_root_and_never_fences_pmcd(agent, state):
    state.client_connected(1)
    assert store(agent, ("pmcd.agent.fenced", [(60, 1)]), slot=1) == PM_ERR_PERMISSION
    state.client_attribute(1, Attr.PCP_ATTR_USERID, b"1000")
    assert store(agent, ("pmcd.agent.fenced", [(60, 1)]), slot=1) == PM_ERR_PERMISSION
    state.client_attribute(1, Attr.PCP_ATTR_USERID, b"0")
    assert store(agent, ("pmcd.agent.fenced", [(60, 1), (2, 1)]), slot=1) == 0
    assert fetch(agent, "pmcd.agent.fenced")[0] == {2: 0, 60: 1, 99: 0, 253: 0}
    assert store(agent, ("pmcd.agent.fenced", [(PM_IN_NULL, 1)]), slot=1) == 0
    assert [a.fenced for a in state.agents] == [True, False, True, True]
    assert store(agent, ("pmcd.agent.fenced", [(60, 2)]), slot=1) == PM_ERR_BADSTORE
    assert store(agent, ("pmcd.agent.fenced", [(7, 0)]), slot=1) == PM_ERR_INST
    assert state.agent(60).fenced


def test_clients_store_their_own_whoami_and_container(agent, state):
    state.client_connected(4)
    state.client_connected(6)
    assert store(agent, ("pmcd.client.whoami", [(1, "pmie on box")]), slot=6) == 0
    assert fetch(agent, "pmcd.client.whoami")[0] == {0: "", 1: "pmie on box"}
    assert store(agent, ("pmcd.client.container", [(0, "db")]), slot=4) == 0
    assert state.clients[4].container == "db"
    assert state.take_requests() == [("container", 4)]
    two = [(0, "a"), (1, "b")]
    assert store(agent, ("pmcd.client.whoami", two), slot=4) == PM_ERR_INST
    assert store(agent, ("pmcd.client.whoami", [(0, "a")]), slot=9) == PM_ERR_INST


# -- against PCP's own pmcd agent --------------------------------------------------------


def pminfo_blocks(text: str) -> dict[str, str]:
    """{metric name: its PMID and descriptor lines} from pminfo -dm output."""
    blocks = {}
    for block in text.strip().split("\n\n"):
        head, _, rest = block.strip("\n").partition("\n")
        name, _, ident = head.partition(" PMID: ")
        blocks[name] = f"PMID: {ident}\n{rest}"
    return blocks


#: Metrics PCP's pmcd agent has that ours does not export, with the reason.
KNOWN_OMISSIONS: dict[str, str] = {}


@pytest.fixture(scope="module")
def reference():
    require_reference("pminfo", "pmstore")
    with reference_pmcd([PMCD_DSO]) as running:
        yield running


@pytest.mark.interop
def test_every_metric_has_pcps_pmid_and_descriptor(reference):
    result = reference.run("pminfo", "-d", "-m", "pmcd")
    assert result.returncode == 0, result.stderr
    theirs = pminfo_blocks(result.stdout)
    ours_agent = PmcdAgent(state=DaemonState())
    ours = {
        name: f"PMID: {pmIDStr(p)}\n{ours_agent._descs[p].describe()}"
        for name in ours_agent.pmns.traverse("pmcd")
        for p in [ours_agent.pmns.lookup(name)]
    }
    assert set(theirs) - set(ours) == set(KNOWN_OMISSIONS)
    assert set(ours) <= set(theirs)
    for name, text in ours.items():
        assert text == theirs[name], name


@pytest.mark.interop
def test_instance_names_and_host_facts_match_pcps(reference):
    result = reference.run(
        "pminfo",
        "-f",
        "pmcd.control.register",
        "pmcd.buf.alloc",
        "pmcd.agent.name",
        "pmcd.version",
        "pmcd.timezone",
        "pmcd.zoneinfo",
        "pmcd.simabi",
        "pmcd.hostname",
        "pmcd.services",
    )
    assert result.returncode == 0, result.stderr
    theirs = result.stdout
    for inst in range(16):
        assert f'inst [{inst} or "{inst}"] value 0' in theirs
    for inst, name in ((12, "0012"), (4196, "4196"), (8193, "8192+")):
        assert f'inst [{inst} or "{name}"]' in theirs
    assert 'inst [2 or "pmcd"] value "pmcd"' in theirs
    agent = PmcdAgent(state=DaemonState(run_dir=reference.env["PCP_RUN_DIR"]))
    for name in ("version", "timezone", "zoneinfo", "simabi", "hostname", "services"):
        value = fetch(agent, f"pmcd.{name}")[0][PM_IN_NULL]
        assert f'pmcd.{name}\n    value "{value}"' in theirs, name


#: (metric, pmstore arguments): stores both agents must answer alike.
STORES = [
    ("pmcd.control.traceconn", ["2"]),
    ("pmcd.control.tracepdu", ["0"]),
    ("pmcd.control.tracebufs", ["-2"]),
    ("pmcd.control.tracebufs", ["20"]),
    ("pmcd.control.timeout", ["7"]),
    ("pmcd.control.debug", ["0"]),
    ("pmcd.control.register", ["-i", "3", "42"]),
    ("pmcd.seqnum", ["5"]),
    ("pmcd.numagents", ["1"]),
    ("pmcd.version", ["x"]),
    ("pmcd.pdu_in.total", ["1"]),
    ("pmcd.client.start_date", ["x"]),
    ("pmcd.cputime.total", ["1"]),
    ("pmcd.feature.ipv6", ["1"]),
    ("pmcd.agent.type", ["1"]),
    ("pmcd.client.whoami", ["me"]),
]


@pytest.mark.interop
@pytest.mark.parametrize(("name", "args"), STORES, ids=[f"{n} {a[-1]}" for n, a in STORES])
def test_stores_are_answered_as_pcp_answers_them(reference, name, args):
    result = reference.run("pmstore", *args[:-1], name, args[-1])
    theirs = "ok" if result.returncode == 0 else result.stdout.rsplit("pmStore: ", 1)[-1].strip()
    state = DaemonState()
    state.set_agents([AgentRecord("pmcd", 2, AGENT_TYPE["dso"])])
    state.client_connected(0)
    agent = PmcdAgent(state=state)
    desc = agent._descs[pmid(agent, name)]
    text = args[-1]
    value = text if desc.type == PMType.PM_TYPE_STRING else int(text)
    if desc.indom == 0xFFFFFFFF:
        insts = [PM_IN_NULL]
    else:
        indom = agent.handle(InstanceReqPDU(desc.indom, PM_IN_NULL, None))
        insts = [int(args[1])] if args[0] == "-i" else list(indom.insts)
    code = store(agent, (name, [(inst, value) for inst in insts]))
    assert ("ok" if code == 0 else pmErrStr(code)) == theirs, result.stdout + result.stderr
