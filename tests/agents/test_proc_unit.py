"""The proc agent in memory (no PCP needed): its parsers on real and damaged files, instance
names, access without and with credentials, the controls, and processes that end mid-fetch."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from purepcp.agents.proc import Proc, fields
from purepcp.agents.proc.catalog import METRICS, PROCS
from purepcp.agents.proc.creds import ThreadCredentials
from purepcp.pmapi.errors import (
    PM_ERR_BADSTORE,
    PM_ERR_NOCONTEXT,
    PM_ERR_NOTCONN,
    PM_ERR_PERMISSION,
)
from purepcp.pmapi.ids import PM_IN_NULL
from purepcp.pmapi.pdu.constants import Attr
from purepcp.pmapi.pdu.records import AttrPDU, ErrorPDU, FetchPDU, InstanceReqPDU, ResultPDU
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.waiting import DEADLINE, wait_until

ROOT_CTX, NOBODY_CTX, TCP_CTX = 5, 6, 7
NOBODY = 65534


@pytest.fixture
def proc() -> Proc:
    agent = Proc()
    for ctx, ident in ((ROOT_CTX, b"0"), (NOBODY_CTX, str(NOBODY).encode())):
        agent.handle(AttrPDU(Attr.PCP_ATTR_USERID, ident, ctx))
        agent.handle(AttrPDU(Attr.PCP_ATTR_GROUPID, ident, ctx))
    return agent


def fetch(agent: Proc, ctx: int, *names: str) -> dict[str, dict[int, object] | int]:
    """{name: {inst: value}} or the set's error code, fetched as context CTX."""
    pmids = tuple(agent.pmns.lookup(n) for n in names)
    reply = agent.handle(FetchPDU(0, pmids, ctx))
    out: dict[str, dict[int, object] | int] = {}
    for name, vs in zip(names, reply.result.vsets, strict=True):
        desc = agent._descs[vs.pmid]
        out[name] = (
            int(vs.numval)
            if vs.numval < 0
            else dict(zip(vs.insts, vs.atoms(desc.type), strict=True))
        )
    return out


def test_the_catalogue_is_pmdaprocs_153_proc_metrics() -> None:
    names = [m[0] for m in METRICS]
    assert len(names) == len(set(names)) == 153
    assert {m[4] for m in METRICS} == {None, PROCS}


def test_stat_fields_are_read_from_their_own_places() -> None:
    """A stat line with a command holding spaces and parens; each field by position."""
    line = (
        b"4242 (my (odd) cmd) S 1 4242 4242 34816 4242 4194560 100 200 3 4 "
        b"250 150 20 10 20 -5 3 0 123456 8192000 300 18446744073709551615 "
        b"94000000000000 94000000100000 140720000000000 0 0 0 0 4096 16386 0 0 0 17 1 "
        b"7 2 11 12 13 94700689546512 0\n"
    )
    comm, rest = fields.split_stat(line)
    assert comm == b"my (odd) cmd"
    convert = fields.stat_converters(100, 4096)
    value = {name: convert[kind](rest[pos]) for name, (pos, kind) in fields.STAT_FIELDS.items()}
    assert value["proc.psinfo.utime"] == 2500 and value["proc.psinfo.stime"] == 1500
    assert value["proc.psinfo.priority"] == 20 and value["proc.psinfo.nice"] == -5
    assert value["proc.psinfo.start_time"] == 1234560  # ms since boot
    assert value["proc.psinfo.vsize"] == 8000 and value["proc.psinfo.rss"] == 1200  # Kbytes
    assert value["proc.psinfo.rss_rlim"] == 18014398509481983
    assert value["proc.psinfo.start_code"] == 94000000000000 & 0xFFFFFFFF  # C's low bits
    assert value["proc.psinfo.processor"] == 1
    # the fields after processor, each from its own place (pmdaproc reads one late)
    assert value["proc.psinfo.rt_priority"] == 7 and value["proc.psinfo.policy"] == 2
    assert value["proc.psinfo.delayacct_blkio_time"] == 110
    assert value["proc.psinfo.guest_time"] == 120 and value["proc.psinfo.cguest_time"] == 130
    assert value["proc.psinfo.tty_pgrp"] == 4242
    assert convert["tpgid"](b"-1") is None  # no controlling terminal: no value


def test_cgroup_lines_as_ps_prints_them_and_the_container_guess() -> None:
    cid = "0123456789abcdef" * 4
    data = (
        f"4:memory:/user.slice\n2:cpuset:/docker/x{cid}\n0::/system.slice/docker-{cid}.scope\n"
        "9:pids:/no-newline"
    ).encode()
    text, container = fields.cgroup_text(data)
    assert text == f"memory:/user.slice;cpuset:/docker/x{cid};:/system.slice/docker-{cid}.scope"
    assert container == f"x{cid}"[:64]  # pmdaproc's arithmetic: 65 characters after "/"
    text, container = fields.cgroup_text(f"1:cpuset:/system.slice/docker-{cid}.scope\n".encode())
    assert container == cid
    text, container = fields.cgroup_text(f"1:cpuset:/docker-{cid}.scope\n".encode())
    assert container == ""  # pmdaproc looks only past a "/" that is not the first
    assert fields.cgroup_text(b"") == ("", "")


def test_keyed_files_and_nul_joined_text() -> None:
    io = b"rchar: 10\nwchar: 20\nsyscr: 3\nread_bytes: 4096\nbroken line\nx: y\n"
    assert fields.keyed_numbers(io) == {
        b"rchar": 10,
        b"wchar": 20,
        b"syscr": 3,
        b"read_bytes": 4096,
    }
    assert fields.joined_nul_text(b"sleep\x003600\x00\x00") == "sleep 3600"


def test_instances_are_named_as_pmdaproc_names_them(proc: Proc) -> None:
    reply = proc.handle(InstanceReqPDU(proc.indom_id(proc.processes), PM_IN_NULL, None, ROOT_CTX))
    names = dict(zip(reply.insts, reply.names, strict=True))
    assert names[os.getpid()].startswith(f"{os.getpid():06d} ")
    assert " " not in names[os.getpid()].split(" ", 1)[1]  # only the first word
    kthreadd = [n for n in names.values() if n.endswith(" (kthreadd)")]
    assert kthreadd == ["000002 (kthreadd)"] or not os.path.exists("/proc/2/status")
    one = proc.handle(InstanceReqPDU(proc.indom_id(proc.processes), PM_IN_NULL, "1", ROOT_CTX))
    assert one.insts == (1,)  # "1" is "000001"


def test_a_long_command_line_is_cut_where_pmdaprocs_buffer_ends(proc: Proc) -> None:
    """pmdaproc keeps 4088 bytes of a command line after a 6-digit pid (its buffer is
    4096 bytes with "%06d " and a NUL): psargs, hotproc's psargs and the instance name
    come from that cut text (we used to give the whole of it)."""
    script = "#" + "x" * 5000 + "\n\n\nsleep 60; :"
    child = subprocess.Popen(["sh", "-c", script])
    try:
        # the exec is done when Popen returns, but the kernel sets the new command line
        # a moment later: wait for it
        wait_until(
            "the shell to show its command line",
            lambda: fields.read_file(f"/proc/{child.pid}/cmdline") not in (None, b""),
            child,
        )
        want = ("sh -c " + script)[: 4096 - len(f"{child.pid:06d} ") - 1]
        assert len(want.encode()) == 4096 - len(f"{child.pid:06d} ") - 1
        assert fields.command_line(f"/proc/{child.pid}", child.pid) == want
        got = fetch(proc, ROOT_CTX, "proc.psinfo.psargs")["proc.psinfo.psargs"]
        assert isinstance(got, dict) and got[child.pid] == want
    finally:
        child.kill()
        child.wait()


def test_without_credentials_per_process_metrics_are_refused(proc: Proc) -> None:
    got = fetch(
        proc, TCP_CTX, "proc.nprocs", "proc.psinfo.pid", "proc.io.rchar", "proc.runq.sleeping"
    )
    assert got["proc.psinfo.pid"] == got["proc.io.rchar"] == PM_ERR_PERMISSION
    assert got["proc.nprocs"][PM_IN_NULL] > 0 and PM_IN_NULL in got["proc.runq.sleeping"]
    reply = proc.handle(InstanceReqPDU(proc.indom_id(proc.processes), PM_IN_NULL, None, TCP_CTX))
    assert reply == ErrorPDU(PM_ERR_PERMISSION)


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as another user needs root")
def test_a_user_reads_what_the_kernel_lets_that_user_read(proc: Proc) -> None:
    if not ThreadCredentials().available:
        pytest.skip("this machine's setresuid system call number is not known to the agent")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        names = ("proc.psinfo.cmd", "proc.io.rchar", "proc.psinfo.environ", "proc.fd.count")
        root = fetch(proc, ROOT_CTX, *names)
        nobody = fetch(proc, NOBODY_CTX, *names)
        pid = sleeper.pid
        assert root["proc.psinfo.cmd"][pid] == nobody["proc.psinfo.cmd"][pid] == "sleep"
        assert pid in root["proc.io.rchar"] and pid not in nobody["proc.io.rchar"]
        assert pid in root["proc.fd.count"] and pid not in nobody["proc.fd.count"]
        assert nobody["proc.psinfo.environ"][pid] == ""  # refused: empty, as pmdaproc
        assert os.geteuid() == 0 and os.getegid() == 0  # this thread is root again
    finally:
        sleeper.kill()
        sleeper.wait()


def test_acting_as_a_client_changes_only_the_calling_thread() -> None:
    creds = ThreadCredentials()
    if os.geteuid() != 0 or not creds.available:
        pytest.skip("needs root and a known setresuid system call number")
    seen: dict[str, int] = {}
    inside = threading.Event()
    done = threading.Event()

    def act() -> None:
        with creds.acting_as(NOBODY, NOBODY):
            seen["thread"] = os.geteuid()
            inside.set()
            done.wait(DEADLINE)
        seen["after"] = os.geteuid()

    thread = threading.Thread(target=act)
    thread.start()
    assert inside.wait(DEADLINE)
    seen["main"] = os.geteuid()
    done.set()
    thread.join()
    assert seen == {"thread": NOBODY, "main": 0, "after": 0}


def test_a_process_that_ends_mid_fetch_is_absent_not_an_error(proc: Proc, monkeypatch) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        fetch(proc, ROOT_CTX, "proc.psinfo.pid")  # it is an instance now
        real = proc._file

        def gone(pid, name, whole=False):
            if pid == sleeper.pid:
                return None  # as if it exited after the instance refresh
            return real(pid, name, whole)

        monkeypatch.setattr(proc, "_file", gone)
        got = fetch(proc, ROOT_CTX, "proc.psinfo.utime", "proc.psinfo.pid", "proc.io.rchar")
        assert sleeper.pid in got["proc.psinfo.pid"]  # (the pid is the instance's own)
        assert sleeper.pid not in got["proc.psinfo.utime"]
        assert sleeper.pid not in got["proc.io.rchar"]
        assert os.getpid() in got["proc.psinfo.utime"]
    finally:
        sleeper.kill()
        sleeper.wait()


def test_damaged_files_give_no_values_and_no_exception(proc: Proc, monkeypatch) -> None:
    junk = {"stat": b"1 (x", "status": b"\xff\xfe:\n:", "statm": b"a b", "io": b"rchar: -",
            "schedstat": b"x", "autogroup": b"/autogroup-", "oom_score": b"lots"}  # fmt: skip
    monkeypatch.setattr(proc, "_file", lambda pid, name, whole=False: junk.get(name, b""))
    everything = [m[0] for m in METRICS]
    got = fetch(proc, ROOT_CTX, *everything)
    assert got["proc.psinfo.utime"] == {} and got["proc.io.rchar"] == {}
    assert got["proc.autogroup.id"] != PM_ERR_PERMISSION


def test_the_controls_store_as_pmdaprocs_do(proc: Proc) -> None:
    def store(ctx: int, name: str, value) -> int:
        pmid = proc.pmns.lookup(name)
        type_ = proc._descs[pmid].type
        vs = ValueSet.of_atoms(pmid, type_, [(PM_IN_NULL, value)])
        return proc.handle(ResultPDU(Result(Timestamp(0, 0), (vs,)), ctx)).code

    assert store(TCP_CTX, "proc.control.all.threads", 1) == PM_ERR_PERMISSION
    assert store(TCP_CTX, "proc.control.perclient.threads", 1) == PM_ERR_NOCONTEXT
    assert store(ROOT_CTX, "proc.control.perclient.threads", 2) == PM_ERR_BADSTORE
    assert store(ROOT_CTX, "proc.control.perclient.cgroups", "") == PM_ERR_BADSTORE
    assert store(ROOT_CTX, "proc.control.perclient.threads", 1) == 0
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(30,))
    thread.start()
    try:
        mine = fetch(proc, ROOT_CTX, "proc.control.perclient.threads", "proc.psinfo.pid")
        theirs = fetch(proc, NOBODY_CTX, "proc.control.perclient.threads", "proc.psinfo.pid")
    finally:
        release.set()
        thread.join()
    assert mine["proc.control.perclient.threads"] == {PM_IN_NULL: 1}
    assert thread.native_id in mine["proc.psinfo.pid"]  # this client sees threads
    assert theirs["proc.control.perclient.threads"] == {PM_IN_NULL: 0}
    assert thread.native_id not in theirs["proc.psinfo.pid"]  # that one does not
    proc.handle(ErrorPDU(PM_ERR_NOTCONN, None, ROOT_CTX))  # that client has gone
    assert proc._client_threads == {}


def test_the_namespace_file_and_help_cover_the_catalogue() -> None:
    """pmns/proc is what make_pmns writes; help/proc has an entry for every metric."""
    from pathlib import Path

    from purepcp.agents.proc import make_pmns
    from purepcp.agents.proc.catalog import (
        ACCT_METRICS,
        CGROUP_INDOMS,
        CGROUP_METRICS,
        HOT_METRICS,
    )
    from purepcp.pmapi.helptext import parse_help

    root = Path(__file__).resolve().parents[2]
    assert (root / "pmns" / "proc").read_text() == make_pmns.render()
    helped = {entry.key for entry in parse_help((root / "help" / "proc").read_text())}
    names = {m[0] for m in (*METRICS, *HOT_METRICS, *CGROUP_METRICS, *ACCT_METRICS)}
    indoms = {f"PROC.{serial}" for serial in (9, 39, 40, *CGROUP_INDOMS)}
    assert names <= helped and helped - names == indoms
