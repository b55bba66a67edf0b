"""The linux agent's System V IPC family (ipc.sem.*, ipc.msg.*, ipc.shm.*): its table, the
/proc/sysvipc parsers on samples of our own, pmdalinux's value rules (keys in 0x%08x,
permissions as octal digits, owners by name or uid, 32-bit sizes, segment status), the
limits by the *ctl calls on this host, and the agent on a fake tree and on real objects.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, catalog, ipc
from purepcp.agents.linux.records import BYTE, KBYTE, STRING, U32
from purepcp.pmapi.ids import PM_IN_NULL
from tests.support.linux_fetch import fetch, instances
from tests.support.sysv import SHM_SIZE, sysv_objects

# Samples written for these tests (made-up objects; the kernel's layout).
SHM = (
    b"       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid"
    b"  cgid      atime      dtime      ctime                   rss                  swap\n"
    b"    305419896          7  1640                 65536   811   912      2     0     0     0"
    b"     0 1700000000 1700000001 1700000002                  8192                     0\n"
    b"         0          9  2600            4294971392   811     0      0 54321     0     0"
    b"     0          0          0 1700000003                     0                  4096\n"
    b"        -1         12  3644                  4096   811   811      1  1000  1000  1000"
    b"  1000 1700000004          0 1700000005                  4096                     0\n"
)
MSG = (
    b"       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid"
    b"      stime      rtime      ctime\n"
    b"        85          0   666          16          2  4242     0     0     0     0     0"
    b" 1700000000          0 1700000000\n"
    b"         0          3   600         100          5  4243  4244     0     0     0     0"
    b" 1700000001 1700000002 1700000000\n"
)
SEM = (
    b"       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n"
    b"       102          0   600          5     0     0     0     0          0 1700000000\n"
    b"        -2          1   644          1 54321     0     0     0          0 1700000000\n"
)


# --- the table --------------------------------------------------------------------------


def test_metrics_table() -> None:
    """53 metrics with pmdalinux's clusters, items and descriptors (its slips kept)."""
    by_name = {m.name: m for m in ipc.METRICS}
    assert len(by_name) == len(ipc.METRICS) == 53
    assert set(by_name) <= set(catalog.BY_NAME)
    clusters = {m.cluster for m in ipc.METRICS}
    assert clusters == {21, 22, 23, 56, 61, 62, 64, 65, 66}
    assert len({(m.cluster, m.item) for m in ipc.METRICS}) == 53
    assert by_name["ipc.msg.sz_pool"].units == KBYTE
    assert by_name["ipc.msg.last_send_pid"].units == BYTE  # pmdalinux's slip
    assert by_name["ipc.shm.status"].type == STRING
    assert (by_name["ipc.shm.key"].indom, by_name["ipc.msg.key"].indom) == (28, 29)
    assert by_name["ipc.sem.nsems"].indom == 30
    assert all(m.type in (U32, STRING) for m in ipc.METRICS)


# --- the parsers and value rules ------------------------------------------------------------


def test_parse_sysvipc() -> None:
    """Columns by name: signed key, octal perms, 32-bit numbers; the header skipped."""
    shm = ipc.parse_sysvipc(SHM, "shm")
    assert [r["id"] for r in shm] == [7, 9, 12]
    assert shm[0]["perms"] == 0o1640
    assert shm[1]["size"] == 4096  # 4294971392 kept to 32 bits
    assert shm[2]["key"] == 0xFFFFFFFF
    assert ipc.parse_sysvipc(MSG, "msg")[1] == {
        "key": 0,
        "id": 3,
        "perms": 0o600,
        "cbytes": 100,
        "qnum": 5,
        "lspid": 4243,
        "lrpid": 4244,
        "uid": 0,
    }
    assert [r["nsems"] for r in ipc.parse_sysvipc(SEM, "sem")] == [5, 1]
    assert ipc.parse_sysvipc(SEM.split(b"\n")[0] + b"\n", "sem") == []
    assert ipc.parse_sysvipc(SEM + b"  1 2 3\n", "sem")[2:] == []  # too few numbers


def test_value_rules() -> None:
    """Keys, permissions, status words and owners as pmdalinux shows them."""
    assert ipc.key_text(305419896) == "0x12345678"
    assert ipc.key_text(0xFFFFFFFE) == "0xfffffffe"
    assert ipc.perms_number(0o1640) == 640
    assert ipc.perms_number(0) == 0
    assert ipc.shm_status(0o1640) == "dest"
    assert ipc.shm_status(0o2600) == "locked"
    assert ipc.shm_status(0o3644) == "dest locked"
    assert ipc.shm_status(0o644) == ""
    assert ipc.owner_name(0) == "root"
    assert ipc.owner_name(2**31 - 7) == str(2**31 - 7)  # no such user


# --- the *ctl calls on this host ------------------------------------------------------------


def _proc_sys(name: str) -> list[int]:
    """The numbers of /proc/sys/kernel/NAME."""
    return [int(word) for word in Path("/proc/sys/kernel", name).read_text().split()]


def test_limits_agree_with_proc_sys() -> None:
    """The IPC_INFO numbers that /proc/sys/kernel also shows, and the compiled-in constants."""
    sem, msg, shm = ipc.sem_limits(), ipc.msg_limits(), ipc.shm_limits()
    if sem is None or msg is None or shm is None:
        pytest.skip("no System V IPC in this kernel")
    semmsl, semmns, semopm, semmni = _proc_sys("sem")
    assert sem["ipc.sem.max_perid"] == semmsl
    assert sem["ipc.sem.max_sem"] == semmns & 0xFFFFFFFF
    assert sem["ipc.sem.max_ops"] == semopm
    assert sem["ipc.sem.max_semid"] == semmni
    assert sem["ipc.sem.max_semval"] == 32767
    assert msg["ipc.msg.max_msgsz"] == _proc_sys("msgmax")[0]
    assert msg["ipc.msg.max_defmsgq"] == _proc_sys("msgmnb")[0]
    assert msg["ipc.msg.max_msgqid"] == _proc_sys("msgmni")[0]
    assert msg["ipc.msg.max_msgseg"] == 16  # MSGSSZ, under pmdalinux's name
    assert shm["ipc.shm.max_segsz"] == _proc_sys("shmmax")[0] & 0xFFFFFFFF
    assert shm["ipc.shm.max_shmsys"] == _proc_sys("shmall")[0] & 0xFFFFFFFF
    assert shm["ipc.shm.max_seg"] == shm["ipc.shm.max_segproc"] == _proc_sys("shmmni")[0]
    assert shm["ipc.shm.min_segsz"] == 1


def test_calls_repeat_with_one_shared_buffer() -> None:
    """The prepared calls and their shared buffer give the same answers every time, each
    call's reply unspoilt by the call before (the buffer is cleared in between)."""
    first = (ipc.sem_limits(), ipc.msg_limits(), ipc.shm_limits())
    if None in first:
        pytest.skip("no System V IPC in this kernel")
    for _ in range(3):
        assert (ipc.shm_limits(), ipc.msg_limits(), ipc.sem_limits()) == first[::-1]


# --- the agent ------------------------------------------------------------------------------


@pytest.fixture
def fake(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Path]]:
    """An agent reading /proc/sysvipc under a temporary directory."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    sysvipc = tmp_path / "proc" / "sysvipc"
    sysvipc.mkdir(parents=True)
    for name, data in (("shm", SHM), ("msg", MSG), ("sem", SEM)):
        (sysvipc / name).write_bytes(data)
    agent = Linux()
    yield agent, sysvipc
    agent.stop()


TABLE_NAMES = [m.name for m in ipc.METRICS if m.cluster in (61, 62, 64, 65, 66)]


def test_tables_from_the_tree(fake) -> None:
    """Instances named by id, numbered as first seen; each object's values; usage sums."""
    agent, _ = fake
    assert instances(agent, 28) == {0: "7", 1: "9", 2: "12"}
    assert instances(agent, 29) == {0: "0", 1: "3"}
    assert instances(agent, 30) == {0: "0", 1: "1"}
    values = fetch(agent, *TABLE_NAMES)
    assert values["ipc.shm.key"] == {0: "0x12345678", 1: "0x00000000", 2: "0xffffffff"}
    assert values["ipc.shm.owner"][1] == "54321"
    assert values["ipc.shm.perms"] == {0: 640, 1: 600, 2: 644}
    assert values["ipc.shm.segsz"][1] == 4096
    assert values["ipc.shm.status"] == {0: "dest", 1: "locked", 2: "dest locked"}
    assert values["ipc.shm.nattch"] == {0: 2, 1: 0, 2: 1}
    assert values["ipc.shm.creator_pid"][0] == 811
    assert values["ipc.shm.last_access_pid"] == {0: 912, 1: 0, 2: 811}
    assert values["ipc.msg.msgsz"] == {0: 16, 1: 100}
    assert values["ipc.msg.messages"] == {0: 2, 1: 5}
    assert values["ipc.msg.last_send_pid"] == {0: 4242, 1: 4243}
    assert values["ipc.msg.last_recv_pid"] == {0: 0, 1: 4244}
    assert values["ipc.sem.key"] == {0: "0x00000066", 1: "0xfffffffe"}
    assert values["ipc.sem.nsems"] == {0: 5, 1: 1}
    assert values["ipc.sem.used_sem"] == {PM_IN_NULL: 2}
    assert values["ipc.sem.tot_sem"] == {PM_IN_NULL: 6}
    assert values["ipc.msg.used_queues"] == {PM_IN_NULL: 2}
    assert values["ipc.msg.tot_msg"] == {PM_IN_NULL: 7}
    assert values["ipc.msg.tot_bytes"] == {PM_IN_NULL: 116}


def test_objects_come_and_go(fake) -> None:
    """A removed object leaves the domain; a new one gets the next id, kept ids stay."""
    agent, sysvipc = fake
    fetch(agent, "ipc.sem.nsems")
    lines = SEM.split(b"\n")
    (sysvipc / "sem").write_bytes(
        b"\n".join([lines[0], lines[2], b"  77  5  600  9  0  0  0  0  0  0"]) + b"\n"
    )
    values = fetch(agent, "ipc.sem.nsems", "ipc.sem.key")
    assert instances(agent, 30) == {1: "1", 2: "5"}
    assert values["ipc.sem.nsems"] == {1: 1, 2: 9}
    assert values["ipc.sem.key"][2] == "0x0000004d"


def test_missing_files_give_no_values(fake) -> None:
    """Without /proc/sysvipc, no instances and no table or usage values, and no error."""
    agent, sysvipc = fake
    for name in ("shm", "msg", "sem"):
        (sysvipc / name).unlink()
    values = fetch(agent, *TABLE_NAMES)
    assert all(v == {} for v in values.values())
    assert instances(agent, 28) == {}


# --- real objects on this host ----------------------------------------------------------------


@pytest.fixture
def objects(monkeypatch) -> Iterator[dict[str, int]]:
    """A shared memory segment, a queue holding a message and a semaphore set, removed after."""
    with sysv_objects() as made:
        if made is None:
            pytest.skip("cannot create System V IPC objects here")
        monkeypatch.delenv("LINUX_STATSPATH", raising=False)
        yield made


def test_real_objects(objects) -> None:
    """The agent sees the objects this test made, and SHM_INFO counts the segment's pages."""
    agent = Linux()
    try:
        names = {v: k for k, v in instances(agent, 28).items()}
        shm = names[str(objects["shm"])]
        values = fetch(agent, "ipc.shm.segsz", "ipc.shm.perms", "ipc.shm.key", "ipc.shm.tot")
        assert values["ipc.shm.segsz"][shm] == SHM_SIZE
        assert values["ipc.shm.perms"][shm] == 640
        assert values["ipc.shm.key"][shm] == "0x00000000"
        assert values["ipc.shm.tot"][PM_IN_NULL] >= 4 * os.sysconf("SC_PAGE_SIZE")
        queue = {v: k for k, v in instances(agent, 29).items()}[str(objects["msg"])]
        values = fetch(agent, "ipc.msg.messages", "ipc.msg.msgsz", "ipc.msg.last_send_pid")
        assert values["ipc.msg.messages"][queue] == 1
        assert values["ipc.msg.msgsz"][queue] == 7
        assert values["ipc.msg.last_send_pid"][queue] == os.getpid()
        sets = {v: k for k, v in instances(agent, 30).items()}
        assert fetch(agent, "ipc.sem.nsems")["ipc.sem.nsems"][sets[str(objects["sem"])]] == 4
        assert fetch(agent, "ipc.sem.perms")["ipc.sem.perms"][sets[str(objects["sem"])]] == 604
    finally:
        agent.stop()
