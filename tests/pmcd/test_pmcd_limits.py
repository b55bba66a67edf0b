"""The limits that protect pmcd from what its clients ask of it (docs/pmcd.md, "Limits").

Each test failed on the code before its fix: a partial PDU held for ever, a client
that never reads its answers held for ever, profiles kept without bound, the memory
of departed clients kept, a traceback per accept at the file descriptor limit, the
soft limit never raised, a second pmcd taking over the first's socket and pid file.
"""

from __future__ import annotations

import os
import re
import resource
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from purepcp.pmapi.errors import (
    PM_ERR_NOPROFILE,
    PM_ERR_NOTCONN,
    PM_ERR_PERMISSION,
    PM_ERR_TOOBIG,
)
from purepcp.pmapi.ids import PM_IN_NULL, pmInDom_build
from purepcp.pmapi.pdu.codec import encode
from purepcp.pmapi.pdu.records import (
    Cred,
    CredsPDU,
    ErrorPDU,
    FetchPDU,
    HighResFetchPDU,
    InDomProfile,
    PMNSNamesPDU,
    ProfilePDU,
    ResultPDU,
)
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.daemon import Daemon, Settings, namespace_for
from purepcp.pmcd.session import MAX_PROFILES, PROFILE_BYTES
from tests.support.our_pmcd import ROOT, our_pmcd
from tests.support.pdu_client import NUMFETCH, SIMPLE, TRIVIAL_TIME, Client
from tests.support.waiting import DEADLINE, wait_until

CONF = (
    "trivial 250 dso Trivial purepcp.agents.trivial\nsimple 253 dso Simple purepcp.agents.simple\n"
)
PMCD_CONF = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n" + CONF


async def _start(nursery, timeout: float = DEADLINE, **more) -> tuple[Daemon, int]:
    """Our pmcd in NURSERY: (daemon, port); TIMEOUT, its agent timeout, as in pdu_client.start."""
    config = parse_config(CONF)
    settings = Settings(timeout=timeout, port=0, addresses=["127.0.0.1"], **more)
    daemon = Daemon(config, namespace_for(config, None), settings)
    where = await nursery.start(daemon.run)
    return daemon, int(where[0].rsplit(":", 1)[1])


@pytest.mark.trio
async def test_a_client_holding_half_a_pdu_is_closed_after_pmcds_timeout():
    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, timeout=0.5)
        c = await Client.connect(port)
        frame = encode(PMNSNamesPDU(("simple.numfetch",)))
        await c.stream.send_all(frame[: len(frame) // 2])
        with trio.fail_after(DEADLINE):
            assert await c.receive() is None  # closed by pmcd
        # a client that sends its PDUs whole, however slowly between them, stays
        slow = await Client.connect(port)
        await trio.sleep(1)
        reply = await slow.ask(PMNSNamesPDU(("simple.numfetch",)))
        assert reply.pmids == (NUMFETCH,)
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_client_pdu_over_the_l_limit_is_refused():
    """pmcd -L was accepted and ignored; the limit is now the framer's ceiling."""
    async with trio.open_nursery() as nursery:
        _, port = await _start(nursery, pdu_limit=1024)
        c = await Client.connect(port)
        small = await c.ask(PMNSNamesPDU(("simple.numfetch",)))
        assert small.pmids == (NUMFETCH,)
        await c.send(PMNSNamesPDU(tuple(f"simple.{n:04d}" for n in range(100))))  # 2 KB
        assert await c.receive() == ErrorPDU(PM_ERR_TOOBIG)
        assert await c.receive() is None
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_client_that_never_reads_its_answers_is_closed():
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery, timeout=0.5)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await stream.send_all(encode(CredsPDU((Cred.version(0, 2),), 1)))
        request = encode(PMNSNamesPDU(tuple(f"simple.{n}" for n in range(500))))
        with trio.fail_after(DEADLINE):
            while daemon.sessions:  # answers pile up unread until pmcd gives up on it
                try:
                    await stream.send_all(request)
                except trio.BrokenResourceError:
                    break
                await trio.sleep(0.01)
            await _until(lambda: not daemon.sessions)
        await stream.aclose()
        nursery.cancel_scope.cancel()


async def _until(condition, seconds: float = DEADLINE) -> None:
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.02)


@pytest.mark.trio
async def test_profiles_cost_a_bounded_amount_per_client():
    """Before: every context's profile was kept, so a flood of PROFILE PDUs with new
    context numbers grew pmcd without end (641 MB for 81 MB sent)."""
    indom = pmInDom_build(SIMPLE, 1)
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery)
        c = await Client.connect(port)
        big = (InDomProfile(indom, 1, tuple(range(4000))),)  # 16 KB each
        for ctx in range(2 * MAX_PROFILES):
            await c.send(ProfilePDU(ctx, 0, big if ctx % 2 else ()))
        reply = await c.ask(HighResFetchPDU(2 * MAX_PROFILES - 1, (NUMFETCH,)))
        assert reply.result.vsets[0].numval == 1  # the newest context is kept
        (session,) = daemon.sessions.values()
        assert len(session.profiles) <= MAX_PROFILES
        assert sum(len(wire) for wire, _ in session.profiles.values()) <= PROFILE_BYTES
        old = await c.ask(HighResFetchPDU(1, (NUMFETCH,)))
        assert old.code == PM_ERR_NOPROFILE  # the oldest went first
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_profile_bigger_than_the_budget_is_kept_alone():
    """With -L raised, one profile may exceed the per-client budget: it is kept (the older
    ones go); the eviction loop once emptied the table and then failed on it."""
    indom = pmInDom_build(SIMPLE, 1)
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery, pdu_limit=1 << 20)
        c = await Client.connect(port)
        await c.send(ProfilePDU(0, 0, ()))
        huge = (InDomProfile(indom, 1, tuple(range(PROFILE_BYTES // 4 + 1000))),)
        await c.send(ProfilePDU(1, 0, huge))
        reply = await c.ask(HighResFetchPDU(1, (NUMFETCH,)))
        assert reply.result.vsets[0].numval == 1
        (session,) = daemon.sessions.values()
        assert list(session.profiles) == [1]
        nursery.cancel_scope.cancel()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _numclients(pmcd) -> int:
    run = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pminfo", "-h", pmcd.host, "-f", "pmcd.numclients"],
        env=pmcd.env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    found = re.search(r"value (\d+)", run.stdout)
    assert found, run.stdout + run.stderr
    return int(found.group(1)) - 1  # not counting the asking pminfo


@pytest.mark.slow  # a load test: 400 connections held
def test_the_memory_of_400_held_connections_comes_back(tmp_path: Path):
    """400 connections each holding 30 KB of a PDU: before, pmcd ended 21 MB bigger after
    they had all gone; now what they took is given back (a few MB of Python's own stay)."""
    with our_pmcd(PMCD_CONF, tmp_path, "-t", "60") as pmcd:
        port = int(pmcd.host.rsplit(":", 1)[1])
        wait_until("a quiet pmcd", lambda: _numclients(pmcd) == 0)
        before = _rss_mb(pmcd.pid)
        held = []
        for _ in range(400):
            s = socket.create_connection(("127.0.0.1", port))
            s.recv(64)  # the greeting
            s.sendall(struct.pack(">iii", 60000, 0x7003, 0) + bytes(30000))
            held.append(s)
        wait_until("400 clients", lambda: _numclients(pmcd) == 400)
        during = _rss_mb(pmcd.pid)
        for s in held:
            s.close()
        wait_until("the clients to be gone", lambda: _numclients(pmcd) == 0)
        # pmcd gives memory back a second after the last of a burst of clients left
        wait_until("RSS to come back", lambda: _rss_mb(pmcd.pid) - before < 10)
        after = _rss_mb(pmcd.pid)
        assert during - before > 10  # (the connections did cost something)
        assert after - before < 10, (before, during, after)
        assert "Traceback" not in pmcd.log()


def _limit(soft: int, hard: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_pmcd_raises_its_file_descriptor_limit(tmp_path: Path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    target = 4096 if hard == resource.RLIM_INFINITY or hard >= 4096 else hard
    with our_pmcd(CONF, tmp_path, preexec_fn=_limit(256, target)) as pmcd:
        limits = Path(f"/proc/{pmcd.pid}/limits").read_text()
        soft = int(re.search(r"Max open files\s+(\d+)", limits).group(1))
        assert soft == target
        assert f"file descriptor limit {target} (raised from 256)" in pmcd.log()


def test_at_the_descriptor_limit_pmcd_logs_once_and_serves_the_clients_it_has(tmp_path: Path):
    """Before: trio's accept loop wrote a full traceback into the log every 0.1 s."""
    with our_pmcd(PMCD_CONF, tmp_path, preexec_fn=_limit(64, 64)) as pmcd:
        port = int(pmcd.host.rsplit(":", 1)[1])
        first = SyncClient(port)
        crowd = []
        for _ in range(100):  # more than pmcd has descriptors for
            s = socket.create_connection(("127.0.0.1", port))
            crowd.append(s)
        wait_until("the log line", lambda: "cannot accept connections" in pmcd.log())
        assert first.fetch_ok()  # a client it already had is still served
        for s in crowd:
            s.close()
        wait_until("pmcd to accept again", lambda: "accepting connections on" in pmcd.log())
        second = SyncClient(port)
        assert second.fetch_ok()
        log = pmcd.log()
        assert log.count("cannot accept connections") == 1, log
        assert "Traceback" not in log and "Traceback" not in pmcd_stderr(tmp_path)


def pmcd_stderr(tmp: Path) -> str:
    return (tmp / "pmcd.stderr").read_text(errors="replace")


class SyncClient:
    """A blocking PDU client: greeting, CREDS, PROFILE, and fetches of trivial.time."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        self.sock.recv(64)
        self.sock.sendall(encode(CredsPDU((Cred.version(0, 2),), 1)) + encode(ProfilePDU(0, 0)))

    def fetch_ok(self) -> bool:
        self.sock.sendall(encode(FetchPDU(0, (TRIVIAL_TIME,))))
        data = self.sock.recv(4096)
        return len(data) >= 12 and struct.unpack_from(">i", data, 4)[0] == 0x7001  # RESULT


def test_a_second_pmcd_on_the_same_layout_refuses_and_touches_nothing(tmp_path: Path):
    """Before: the second took the first's unix socket and pid file, and deleted both at
    its exit; the first ran on, unreachable through local: and unseen by pmda install."""
    with our_pmcd(CONF, tmp_path) as pmcd:
        pid_file = tmp_path / "pmcd.pid"
        wait_until("the pid file", pid_file.exists)
        sock_inode = os.stat(pmcd.unix).st_ino
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "purepcp.pmcd.main",
                "-f",
                "-p",
                "0",
                "-i",
                "127.0.0.1",
                "-s",
                pmcd.unix,
                "-c",
                str(tmp_path / "pmcd.conf"),
                "-l",
                str(tmp_path / "2.log"),
            ],
            env=pmcd.env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "pmcd may already be running" in lines[0], second.stderr
        assert f"process {pmcd.pid} in {pid_file}" in lines[0] and pmcd.unix in lines[0]
        assert os.stat(pmcd.unix).st_ino == sock_inode
        assert pid_file.read_text() == str(pmcd.pid)
        assert not (tmp_path / "2.log").exists()
        local = subprocess.run(
            [sys.executable, "-m", "purepcp.tools.pminfo", "-h", f"unix:{pmcd.unix}", "trivial"],
            env=pmcd.env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert local.stdout.strip() == "trivial.time"


def test_a_second_pmcd_on_its_own_socket_starts_and_keeps_out_of_the_pid_file(
    tmp_path: Path,
):
    """As PCP's pmcd -f beside the running one (QA 861: its own pmcd.conf, port and
    socket): it serves, and the first's pid file is neither taken nor removed.  Before,
    the first's pid file alone made it refuse to start."""
    with our_pmcd(CONF, tmp_path) as first:
        pid_file = tmp_path / "pmcd.pid"
        wait_until("the pid file", pid_file.exists)
        second_dir = tmp_path / "second"
        second_dir.mkdir()
        with our_pmcd(CONF, second_dir, run_dir=tmp_path) as second:  # one pid file
            assert pid_file.read_text() == str(first.pid)
            got = _trivial(second.host, second.env)
            assert got.stdout == "trivial.time\n", got.stderr
        assert pid_file.read_text() == str(first.pid)
        assert _trivial(first.host, first.env).stdout == "trivial.time\n"


def _trivial(host: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Our pminfo trivial, of the pmcd at HOST."""
    pminfo = [sys.executable, "-m", "purepcp.tools.pminfo", "-h", host, "trivial"]
    return subprocess.run(pminfo, env=env, capture_output=True, text=True, timeout=60)


def test_a_stale_pid_file_and_socket_do_not_stop_pmcd(tmp_path: Path):
    (tmp_path / "pmcd.pid").write_text("999999")  # no such process
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(tmp_path / "pmcd.socket"))  # bound, never listening: a crashed pmcd's
    stale.close()
    with our_pmcd(CONF, tmp_path) as pmcd:
        assert (tmp_path / "pmcd.pid").read_text() == str(pmcd.pid)


def _packaged_access() -> str:
    """The [access] section of the packaged pmcd.conf."""
    from purepcp.pmcd.files import PACKAGED_CONF

    text = PACKAGED_CONF.read_text()
    return text[text.index("[access]") :]


def test_the_packaged_configuration_lets_only_local_clients_store():
    """Before: the packaged pmcd.conf had no [access] section, so any host could store.
    As PCP 6.0.3 with its own rules: the unix socket and the loopback addresses may
    store (both checked against PCP's pmcd by hand), any other address may only fetch."""
    from purepcp.pmcd.access import Peer

    config = parse_config(CONF + _packaged_access())
    assert config.ok
    for peer, may_store in (
        (Peer("127.0.0.2"), False),  # not the loopback address: another host, to PCP
        (Peer("192.0.2.7"), False),
        (Peer("fd00::7"), False),
        (Peer.unix(1000, 1000), True),
    ):
        decision = config.access.decide(peer)
        assert decision.may_fetch and decision.may_store == may_store, peer


@pytest.mark.trio
async def test_a_store_from_another_address_is_refused_by_the_packaged_rules():
    config = parse_config(CONF + _packaged_access())
    settings = Settings(port=0, addresses=["127.0.0.1"])
    daemon = Daemon(config, namespace_for(config, None), settings)
    async with trio.open_nursery() as nursery:
        port = int((await nursery.start(daemon.run))[0].rsplit(":", 1)[1])
        sock = trio.socket.socket()
        await sock.bind(("127.0.0.2", 0))  # a client whose address is not this host's
        await sock.connect(("127.0.0.1", port))
        other = Client(trio.SocketStream(sock))
        greeting = await other.receive()
        assert greeting.code == 0
        await other.send(CredsPDU((Cred.version(0, 2),), 1))
        store = ResultPDU(
            Result(Timestamp(0, 0), (ValueSet.of_atoms(NUMFETCH, 3, [(PM_IN_NULL, 7)]),))
        )
        assert await other.ask(store) == ErrorPDU(PM_ERR_PERMISSION)
        here = await Client.connect(port)  # from 127.0.0.1: this host
        assert await here.ask(store) == ErrorPDU(0)
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_clients_leaving_together_reach_an_in_process_agent_in_few_hand_offs():
    """200 clients gone at once: each in-process agent is told of every one (PM_ERR_NOTCONN
    from its slot) before the slot is free again, in a few thread hand-offs, not 200.
    Before, each departure was a thread hop of its own, and a burst of 2,000 left pmcd
    16 MB bigger afterwards (Python's allocator kept the arenas those hops dirtied)."""
    async with trio.open_nursery() as nursery:
        daemon, port = await _start(nursery)
        channel = daemon.channels[SIMPLE]
        hand_offs: list[list[int]] = []
        handle = channel._handle

        def recording(pdus):
            gone = [p.sender for p in pdus if isinstance(p, ErrorPDU) and p.code == PM_ERR_NOTCONN]
            if gone:
                hand_offs.append(gone)
            return handle(pdus)

        channel._handle = recording
        clients = [await Client.connect(port) for _ in range(200)]
        with trio.fail_after(DEADLINE):
            while len(daemon.sessions) < 200:
                await trio.sleep(0.01)
        slots = sorted(daemon.sessions)
        for c in clients:  # all at once (no checkpoint between)
            c.stream.socket.close()
        with trio.fail_after(DEADLINE):
            while daemon.sessions:
                await trio.sleep(0.01)
        assert sorted(s for gone in hand_offs for s in gone) == slots
        assert len(hand_offs) <= 10, [len(gone) for gone in hand_offs]
        nursery.cancel_scope.cancel()
