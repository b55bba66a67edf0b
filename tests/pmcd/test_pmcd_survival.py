"""Regression tests for the ways a client or an agent could end pmcd, or stall it.

Each test here failed on the code before the fix it names: pmcd ran in this
process under trio, so an exception escaping into its nursery ends the test too.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
from pathlib import Path

import pytest
import trio

from purepcp.pmapi.errors import PM_ERR_GENERIC, PM_ERR_NOAGENT
from purepcp.pmapi.ids import pmID_build, pmInDom_build
from purepcp.pmapi.pdu.records import HighResFetchPDU, InDomProfile, ProfilePDU
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.daemon import Daemon, Settings, namespace_for
from tests.support.pdu_client import NUMFETCH, SIMPLE, TRIVIAL_TIME, Client
from tests.support.waiting import DEADLINE

TRIVIAL = 250


async def _start(nursery, conf: str, **settings) -> tuple[Daemon, int]:
    config = parse_config(conf)
    assert config.ok, config.messages
    # pmcd's agent timeout (-t) a hang guard, as in pdu_client.start, but where a test sets it
    defaults = dict(timeout=DEADLINE, port=0, addresses=["127.0.0.1"])
    daemon = Daemon(config, namespace_for(config, None), Settings(**{**defaults, **settings}))
    where = await nursery.start(daemon.run)
    return daemon, int(where[0].rsplit(":", 1)[1])


async def _until(condition, seconds: float = DEADLINE) -> None:
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.02)


async def _value(client: Client, pmid: int) -> int:
    """The first value's numval (a count, or an error code) of a fetch of PMID."""
    return (await client.ask(HighResFetchPDU(0, (pmid,)))).result.vsets[0].numval


@pytest.mark.trio
async def test_an_idle_pipe_agent_that_dies_takes_nothing_else_down():
    """Before: the next client to leave made pmcd notify the dead pipe, and the error
    ended pmcd (an exception group out of the listener's nursery)."""
    conf = (
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        f"simple 253 pipe binary {sys.executable} -m purepcp.agents.simple -d 253\n"
    )
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery, conf, first_restart=0.2)
        await _until(lambda: SIMPLE in daemon.channels)
        first = daemon.channels[SIMPLE].pid
        os.kill(first, signal.SIGKILL)
        for _ in range(3):  # bare connections that come and go, as a port probe does
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.aclose()
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        assert await _value(c, TRIVIAL_TIME) == 1  # the others answer meanwhile
        await _until(lambda: SIMPLE not in daemon.channels or daemon.channels[SIMPLE].pid != first)
        await _until(lambda: (ch := daemon.channels.get(SIMPLE)) is not None and ch.alive)
        assert await _value(c, NUMFETCH) == 1  # back, by its supervisor
        await c.stream.aclose()
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_an_agent_that_dies_right_after_its_handshake_is_restarted_with_backoff(
    tmp_path: Path, caplog
):
    """Before: pmcd died at the next client's disconnect; and the agent was restarted
    at the first delay for ever, since each start 'worked'."""
    agent = tmp_path / "shortlived.py"
    agent.write_text(
        "import os, sys\n"
        "from purepcp.pmapi.pdu.codec import encode\n"
        "from purepcp.pmapi.pdu.records import Cred, CredsPDU\n"
        "sys.stdout.buffer.write(encode(CredsPDU((Cred.version(0, 2),), os.getpid())))\n"
        "sys.stdout.flush()\n"
        "sys.stdin.buffer.read(12)\n"  # pmcd's answer, then gone
    )
    conf = (
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        f"simple 253 pipe binary {sys.executable} {agent}\n"
    )
    caplog.set_level(logging.INFO, logger="pmcd")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))

    def delays() -> list[float]:
        found = re.findall(
            r'"simple" agent \(domain 253\) failed: .*; restarting in ([\d.]+)s', caplog.text
        )
        return [float(d) for d in found]

    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, conf, first_restart=0.05, env=env)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        await _until(lambda: len(delays()) >= 4)
        assert delays()[:4] == [0.05, 0.1, 0.2, 0.4]
        assert await _value(c, NUMFETCH) == PM_ERR_NOAGENT
        assert await _value(c, TRIVIAL_TIME) == 1
        await c.stream.aclose()
        await (await Client.connect(port)).stream.aclose()
        nursery.cancel_scope.cancel()
    assert "it exited" in caplog.text or "closed its channel" in caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.trio
async def test_a_missing_agent_program_is_one_line_not_the_end_of_pmcd(caplog):
    """Before: the OSError from starting the process escaped the supervisor."""
    conf = (
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        "simple 253 pipe binary /no/such/pmdasimple\n"
    )
    caplog.set_level(logging.INFO, logger="pmcd")
    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, conf)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        assert await _value(c, TRIVIAL_TIME) == 1
        assert await _value(c, NUMFETCH) == PM_ERR_NOAGENT
        nursery.cancel_scope.cancel()
    lines = [r.getMessage() for r in caplog.records if "simple" in r.getMessage()]
    assert lines and lines[0].startswith('Cannot start "simple" agent (domain 253): ')
    assert "No such file or directory" in lines[0] and "\n" not in lines[0]


BROKEN = """
from purepcp.pmda import U32, Agent, metric

class Broken(Agent):
    name, domain = "trivial", 250

    @metric("trivial.time", U32, units="sec")
    def now(self):
        return {}["no such key"]  # a bug in the agent's own code
"""


@pytest.mark.trio
async def test_an_in_process_agents_exception_answers_its_client_and_keeps_it(
    tmp_path: Path, caplog
):
    """Before: the exception came out of the session and the client was dropped."""
    agent = tmp_path / "broken.py"
    agent.write_text(BROKEN)
    caplog.set_level(logging.INFO, logger="pmcd")
    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, f"trivial 250 dso Broken {agent}\n")
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        for _ in range(2):
            assert await _value(c, TRIVIAL_TIME) in (PM_ERR_GENERIC, -12354)  # PM_ERR_AGAIN
        nursery.cancel_scope.cancel()
    assert "Traceback" not in caplog.text


@pytest.mark.trio
async def test_an_agent_that_stops_reading_cannot_hold_a_client_for_ever(tmp_path: Path):
    """Before: a request to an agent whose pipe was full waited in send_all for ever,
    holding the channel's lock, so every later client of that agent waited too."""
    agent = tmp_path / "deaf.py"
    agent.write_text(
        "import os, sys, time\n"
        "from purepcp.pmapi.pdu.codec import encode\n"
        "from purepcp.pmapi.pdu.records import Cred, CredsPDU\n"
        "sys.stdout.buffer.write(encode(CredsPDU((Cred.version(0, 2),), os.getpid())))\n"
        "sys.stdout.flush()\n"
        "time.sleep(3600)\n"  # never reads another byte
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    conf = f"simple 253 pipe binary {sys.executable} {agent}\n"
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery, conf, timeout=0.5, env=env, first_restart=60)
        await _until(lambda: SIMPLE in daemon.channels)
        c = await Client.connect(port)
        # a profile of 15,000 instances (60 KB) and a fetch of 10,000 PMIDs (40 KB):
        # more than the agent's pipe holds
        insts = tuple(range(15000))
        await c.send(ProfilePDU(0, 0, (InDomProfile(pmInDom_build(SIMPLE, 0), 1, insts),)))
        big = tuple(pmID_build(SIMPLE, 0, i % 3) for i in range(10000))
        with trio.fail_after(DEADLINE):
            reply = await c.ask(HighResFetchPDU(0, big))
        assert reply.result.vsets[0].numval == PM_ERR_NOAGENT
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_pmcd_feature_and_buf_metrics_have_values():
    """Before: all ten pmcd.feature.* and pmcd.buf.alloc/free said 'No value(s) available'."""
    conf = (
        "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
        + "trivial 250 dso Trivial purepcp.agents.trivial\n"
    )
    features = tuple(pmID_build(2, 8, item) for item in range(10))
    alloc, free = pmID_build(2, 0, 18), pmID_build(2, 0, 19)
    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, conf)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        reply = await c.ask(HighResFetchPDU(0, (*features, alloc, free)))
        vsets = reply.result.vsets
        values = [vs.atoms(3)[0] for vs in vsets[:10]]  # PM_TYPE_U32
        # secure compress ipv6 auth creds_reqd unix_sockets discovery containers local cert
        assert values[:2] == [0, 0] and values[3:5] == [0, 0] and values[6:] == [0, 1, 0, 0]
        assert values[5] == 0  # no unix socket in this test's pmcd
        assert [vs.numval for vs in vsets[10:]] == [7, 7]  # every size class has a count
        assert vsets[10].atoms(0)[0] == 1  # (this client's fetch, being answered: 12 bytes up)
        assert set(vsets[11].atoms(0)) == {0}
        nursery.cancel_scope.cancel()


def test_a_store_into_pmcd_control_sighup_reloads(tmp_path: Path):
    """Before: the store was accepted and queued, and nothing ever took it."""
    import subprocess

    from tests.support.our_pmcd import ROOT, our_pmcd

    conf = (
        "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
    )
    with our_pmcd(conf, tmp_path) as pmcd:

        def store() -> None:
            argv = ["-m", "purepcp.tools.pmstore", "-h", pmcd.host, "pmcd.control.sighup", "1"]
            run = subprocess.run(
                [sys.executable, *argv],
                env=pmcd.env,
                capture_output=True,
                text=True,
                timeout=60,
                cwd=ROOT,
            )
            assert run.returncode == 0, run.stderr

        pmcd.reload(send=store)  # (pmcd says RELOADING=1, then READY=1)
        assert "SIGHUP: reloading" in pmcd.log()


@pytest.mark.trio
async def test_a_dead_agent_is_restarted_at_once_then_waits_until_a_sighup():
    """As PCP's pmcd (QA 326): an agent that dies is restarted at once, clients told of
    the death and the restart together ("added restarted dropped"); dying again soon
    after, it waits (PCP's: a minute; ours: first_restart), and a SIGHUP restarts it at
    once ("added restarted").  Before: the first restart waited first_restart seconds,
    and a SIGHUP with pmcd.conf unchanged restarted nothing."""
    from purepcp.pmapi.pdu.constants import PMCDState

    conf = (
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        f"simple 253 pipe binary {sys.executable} -m purepcp.agents.simple -d 253\n"
    )
    every = PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT | PMCDState.PMCD_DROP_AGENT
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery, conf, first_restart=3600)
        await _until(lambda: SIMPLE in daemon.channels)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        assert await _value(c, NUMFETCH) == 1
        first = daemon.channels[SIMPLE].pid
        os.kill(first, signal.SIGKILL)
        await _until(lambda: (ch := daemon.channels.get(SIMPLE)) is not None and ch.pid != first)
        assert await _value(c, NUMFETCH) == 1
        assert c.changes == every  # told together, with one fetch's answer
        c.changes = 0
        os.kill(daemon.channels[SIMPLE].pid, signal.SIGKILL)
        await _until(lambda: SIMPLE not in daemon.channels)
        assert await _value(c, NUMFETCH) == PM_ERR_NOAGENT
        assert c.changes == PMCDState.PMCD_DROP_AGENT  # (and not back by itself)
        c.changes = 0
        await daemon.reload(daemon.config, daemon.pmns)  # SIGHUP, pmcd.conf unchanged
        await _until(lambda: (ch := daemon.channels.get(SIMPLE)) is not None and ch.alive)
        assert await _value(c, NUMFETCH) == 1
        assert c.changes == PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT
        await c.stream.aclose()
        nursery.cancel_scope.cancel()
