"""The proc agent's cgroup.* and acct.* metrics: control groups read from trees of files made
here (PROC_STATSPATH, as pmdaproc reads QA's recorded trees), process accounting from
records made here; and, with PCP installed, the same trees read by pmdaproc 6.0.3's
library and by our agent compared value for value.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.agents.proc import Proc, acct
from purepcp.agents.proc.catalog import ACCT_METRICS, CGROUP_METRICS
from purepcp.pmapi.errors import PM_ERR_PERMISSION
from purepcp.pmapi.ids import PM_IN_NULL
from purepcp.pmapi.pdu.constants import Attr
from purepcp.pmapi.pdu.records import AttrPDU, FetchPDU, InstanceReqPDU, ResultPDU
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.reference_pmcd import reference_pmcd, require_reference

ROOT_CTX, NOBODY_CTX, TCP_CTX = 5, 6, 7
DOCKER = "d" * 64
PMDA_PROC_SO = "/var/lib/pcp/pmdas/proc/pmda_proc.so"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


CGROUPS = """#subsys_name\thierarchy\tnum_cgroups\tenabled
cpuset\t2\t3\t1
cpu\t3\t3\t1
cpuacct\t3\t3\t1
memory\t4\t3\t1
net_cls\t5\t1\t1
blkio\t6\t3\t1
"""
DISKSTATS = """   8       0 sda 1 2 3 4 5 6 7 8 9 10 11
   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0
"""


def _v1_group(name: str, n: int) -> dict[str, str]:
    """A version 1 group NAME's files in each controller, its values made from N."""
    files = {
        f"/cg/cpuset{name}/cpuset.cpus": f"0-{n}\n",
        f"/cg/cpuset{name}/cpuset.mems": "0\n",
        f"/cg/cpu,cpuacct{name}/cpu.shares": f"{1024 * n}\n",
        f"/cg/cpu,cpuacct{name}/cpu.stat": f"nr_periods {n}\nnr_throttled {n + 1}\n"
        f"throttled_time {n + 2}\n",
        f"/cg/cpu,cpuacct{name}/cpu.cfs_period_us": "100000\n",
        f"/cg/cpu,cpuacct{name}/cpu.cfs_quota_us": "-1\n" if n == 1 else f"{50000 * n}\n",
        f"/cg/cpu,cpuacct{name}/cpuacct.stat": f"user {10 * n}\nsystem {20 * n}\n",
        f"/cg/cpu,cpuacct{name}/cpuacct.usage": f"{1000 * n}\n",
        f"/cg/cpu,cpuacct{name}/cpuacct.usage_percpu": f"{400 * n} {600 * n} \n",
        f"/cg/memory{name}/memory.stat": f"cache {4096 * n}\nrss {8192 * n}\n"
        f"total_cache {4096 * n}\nrecent_rotated_anon {n}\nworkingset_refault {n}\n"
        "hierarchical_memory_limit 9223372036854771712\n",
        f"/cg/memory{name}/memory.usage_in_bytes": f"{12288 * n}\n",
        f"/cg/memory{name}/memory.limit_in_bytes": "18446744073709551615\n",
        f"/cg/memory{name}/memory.failcnt": "0\n",
        f"/cg/blkio{name}/blkio.time": f"8:0 {50 * n}\n8:16 {100 * n}\n",
        f"/cg/blkio{name}/blkio.sectors": f"8:0 {10 * n}\n8:16 {20 * n}\n",
        f"/cg/blkio{name}/blkio.io_serviced": f"8:0 Read {n}\n8:0 Write {2 * n}\n"
        f"8:0 Sync {3 * n}\n8:0 Async 0\n8:0 Total {3 * n}\n7:0 Read 9\n7:0 Total 9\n"
        f"Total {3 * n}\n",
        f"/cg/blkio{name}/blkio.throttle.io_service_bytes": f"8:16 Read {512 * n}\n"
        f"8:16 Write 0\n8:16 Sync 0\n8:16 Async {512 * n}\n8:16 Total {512 * n}\n",
    }
    return files


def v1_tree(root: Path) -> Path:
    """A machine with version 1 controllers only (cpu and cpuacct mounted together)."""
    files = {
        "/proc/cgroups": CGROUPS,
        "/proc/diskstats": DISKSTATS,
        "/proc/mounts": "sysfs /sys sysfs rw 0 0\n"
        "cgroup /cg/cpuset cgroup rw,relatime,cpuset 0 0\n"
        "cgroup /cg/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n"
        "cgroup /cg/memory cgroup rw,relatime,memory 0 0\n"
        "cgroup /cg/net_cls cgroup rw,relatime,net_cls 0 0\n"
        "cgroup /cg/blkio cgroup rw,relatime,blkio 0 0\n"
        "cgroup /cg/systemd cgroup rw,relatime,xattr,name=systemd 0 0\n",
        "/cg/net_cls/net_cls.classid": "1048577\n",
        "/cg/systemd/tasks": "1\n",
    }
    for n, name in enumerate(("", "/system.slice", f"/system.slice/docker-{DOCKER}.scope"), 1):
        files.update(_v1_group(name, n))
    return _write(root, files)


def v2_tree(root: Path) -> Path:
    """A machine with only cgroup2 mounted."""
    pressure = "some avg10=1.50 avg60=0.25 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"  # noqa: E501
    files = {
        "/proc/cgroups": CGROUPS.replace("\t2\t", "\t0\t").replace("\t3\t", "\t0\t"),
        "/proc/diskstats": DISKSTATS,
        "/proc/mounts": "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
    }
    for n, name in enumerate(("", "/user.slice", "/system.slice/foo\\x2dbar.service"), 1):
        top = f"/sys/fs/cgroup{name}"
        files[f"{top}/cpu.stat"] = (
            f"usage_usec {30 * n}\nuser_usec {10 * n}\nsystem_usec {20 * n}\n"
        )
        files[f"{top}/cpu.pressure"] = pressure.format(n)
        files[f"{top}/io.pressure"] = pressure.format(2 * n)
        files[f"{top}/memory.pressure"] = pressure.format(3 * n)
        files[f"{top}/io.stat"] = (
            f"8:0 rbytes={n} wbytes=2 rios=3 wios=4 dbytes=5 dios=6\n7:0 rbytes=1 wbytes=1 "
            "rios=1 wios=1 dbytes=1 dios=1\n"
        )
        if n > 1:  # (the top group has neither)
            files[f"{top}/memory.stat"] = f"anon {4096 * n}\nfile {8192 * n}\npgfault {n}\n"
            files[f"{top}/memory.current"] = f"{65536 * n}\n"
    files["/sys/fs/cgroup/irq.pressure"] = "full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
    return _write(root, files)


@pytest.fixture
def agent_of(monkeypatch):
    """Our agent reading the cgroup files of a tree: agent_of(root)."""

    def make(root: Path) -> Proc:
        monkeypatch.setenv("PROC_STATSPATH", str(root))
        monkeypatch.setenv("PROC_HERTZ", "100")
        agent = Proc()
        for ctx, ident in ((ROOT_CTX, b"0"), (NOBODY_CTX, b"65534")):
            agent.handle(AttrPDU(Attr.PCP_ATTR_USERID, ident, ctx))
            agent.handle(AttrPDU(Attr.PCP_ATTR_GROUPID, ident, ctx))
        return agent

    return make


def fetch(agent: Proc, *names: str, ctx: int = ROOT_CTX) -> dict[str, dict[str, object] | int]:
    """{name: {instance name (or "" without instances): value}}, or the set's error."""
    pmids = tuple(agent.pmns.lookup(n) for n in names)
    reply = agent.handle(FetchPDU(0, pmids, ctx))
    out: dict[str, dict[str, object] | int] = {}
    for name, vs in zip(names, reply.result.vsets, strict=True):
        desc = agent._descs[vs.pmid]
        if vs.numval < 0:
            out[name] = int(vs.numval)
            continue
        indom = agent._indom_of.get(desc.indom)
        insts = agent.instances(indom) if indom is not None else {PM_IN_NULL: ""}
        out[name] = {insts[i]: v for i, v in zip(vs.insts, vs.atoms(desc.type), strict=True)}
    return out


def test_the_catalogues_are_pmdaprocs_204_cgroup_and_29_acct_metrics() -> None:
    names = [m[0] for m in (*CGROUP_METRICS, *ACCT_METRICS)]
    assert len(names) == len(set(names)) == 204 + 29
    pmids = [(m[1], m[2]) for m in (*CGROUP_METRICS, *ACCT_METRICS)]
    assert len(set(pmids)) == len(pmids)


def test_version_1_controllers_each_from_their_own_mounts(tmp_path, agent_of) -> None:
    proc = agent_of(v1_tree(tmp_path))
    docker = f"/system.slice/docker-{DOCKER}.scope"
    got = fetch(
        proc,
        "cgroup.subsys.hierarchy",
        "cgroup.subsys.count",
        "cgroup.mounts.subsys",
        "cgroup.mounts.count",
        "cgroup.cpuset.cpus",
        "cgroup.cpuset.id.container",
        "cgroup.cpuacct.stat.user",
        "cgroup.cpuacct.usage",
        "cgroup.cpuacct.usage_percpu",
        "cgroup.cpusched.shares",
        "cgroup.cpusched.throttled_time",
        "cgroup.cpusched.cfs_quota",
        "cgroup.memory.stat.cache",
        "cgroup.memory.stat.total.cache",
        "cgroup.memory.stat.recent.rotated_anon",
        "cgroup.memory.stat.workingset.refault",
        "cgroup.memory.usage",
        "cgroup.memory.limit",
        "cgroup.memory.current",
        "cgroup.netclass.classid",
        "cgroup.cpu.stat.usage",
        "cgroup.pressure.cpu.some.avg10sec",
    )
    assert got["cgroup.subsys.hierarchy"] == {
        "cpuset": 2, "cpu": 3, "cpuacct": 3, "memory": 4, "net_cls": 5, "blkio": 6,
    }  # fmt: skip
    assert got["cgroup.subsys.count"] == {"": 6}
    assert got["cgroup.mounts.subsys"] == {
        "/cg/cpuset": "cpuset",
        "/cg/cpu,cpuacct": "cpu,cpuacct",
        "/cg/memory": "memory",
        "/cg/net_cls": "net_cls",
        "/cg/blkio": "blkio",
        "/cg/systemd": "?",
    }
    assert got["cgroup.mounts.count"] == {"": 6}
    assert got["cgroup.cpuset.cpus"] == {"/": "0-1", "/system.slice": "0-2", docker: "0-3"}
    assert got["cgroup.cpuset.id.container"] == {"/": "", "/system.slice": "", docker: DOCKER}
    assert got["cgroup.cpuacct.stat.user"] == {"/": 10, "/system.slice": 20, docker: 30}
    assert got["cgroup.cpuacct.usage"] == {"/": 1000, "/system.slice": 2000, docker: 3000}
    assert got["cgroup.cpuacct.usage_percpu"]["/system.slice::cpu1"] == 1200
    assert len(got["cgroup.cpuacct.usage_percpu"]) == 6
    assert got["cgroup.cpusched.shares"] == {"/": 1024, "/system.slice": 2048, docker: 3072}
    assert got["cgroup.cpusched.throttled_time"] == {"/": 3, "/system.slice": 4, docker: 5}
    # -1 (no quota) is no value, as in pmdaproc
    assert got["cgroup.cpusched.cfs_quota"] == {"/system.slice": 100000, docker: 150000}
    assert got["cgroup.memory.stat.cache"] == {"/": 4096, "/system.slice": 8192, docker: 12288}
    assert got["cgroup.memory.stat.total.cache"] == got["cgroup.memory.stat.cache"]
    assert got["cgroup.memory.stat.recent.rotated_anon"]["/system.slice"] == 2
    assert got["cgroup.memory.stat.workingset.refault"][docker] == 3
    assert got["cgroup.memory.usage"]["/"] == 12288
    assert got["cgroup.memory.limit"] == {}  # 2**64-1 is pmdaproc's "no value"
    assert got["cgroup.memory.current"] == {}
    assert got["cgroup.netclass.classid"] == {"/": 1048577}
    # version 2's metrics have no groups on a version 1 machine
    assert got["cgroup.cpu.stat.usage"] == got["cgroup.pressure.cpu.some.avg10sec"] == {}


def test_version_1_blkio_per_disk_and_summed(tmp_path, agent_of) -> None:
    proc = agent_of(v1_tree(tmp_path))
    got = fetch(
        proc,
        "cgroup.blkio.dev.io_serviced.write",
        "cgroup.blkio.dev.throttle.io_service_bytes.async",
        "cgroup.blkio.dev.sectors",
        "cgroup.blkio.dev.time",
        "cgroup.blkio.all.io_serviced.total",
        "cgroup.blkio.all.io_merged.read",
        "cgroup.blkio.all.sectors",
        "cgroup.blkio.all.time",
    )
    # each disk of /proc/diskstats the files name (loop devices left out); a disk's
    # values that a file leaves out are 0
    assert got["cgroup.blkio.dev.io_serviced.write"] == {
        "/::sda": 2, "/::sdb": 0,
        "/system.slice::sda": 4, "/system.slice::sdb": 0,
        f"/system.slice/docker-{DOCKER}.scope::sda": 6,
        f"/system.slice/docker-{DOCKER}.scope::sdb": 0,
    }  # fmt: skip
    assert got["cgroup.blkio.dev.throttle.io_service_bytes.async"]["/::sdb"] == 512
    assert got["cgroup.blkio.dev.sectors"]["/system.slice::sdb"] == 20  # 40 sectors, in KB
    assert got["cgroup.blkio.dev.time"]["/::sdb"] == 1000  # 100 ticks of 100 Hz, in ms
    assert got["cgroup.blkio.all.io_serviced.total"]["/system.slice"] == 6
    assert got["cgroup.blkio.all.io_merged.read"]["/"] == 0  # no such file: 0, as pmdaproc
    assert got["cgroup.blkio.all.sectors"]["/"] == 15
    assert got["cgroup.blkio.all.time"]["/"] == 1500


def test_version_2_groups_pressure_and_io(tmp_path, agent_of) -> None:
    proc = agent_of(v2_tree(tmp_path))
    escaped = "/system.slice/foo-bar.service"  # systemd's \x2d undone
    got = fetch(
        proc,
        "cgroup.cpu.stat.usage",
        "cgroup.cpu.stat.user",
        "cgroup.pressure.cpu.some.avg10sec",
        "cgroup.pressure.cpu.some.avg1min",
        "cgroup.pressure.cpu.some.total",
        "cgroup.pressure.memory.full.total",
        "cgroup.pressure.io.some.total",
        "cgroup.pressure.irq.full.total",
        "cgroup.io.stat.rbytes",
        "cgroup.io.stat.dios",
        "cgroup.memory.stat.anon",
        "cgroup.memory.stat.pgfault",
        "cgroup.memory.current",
        "cgroup.cpuset.cpus",
        "cgroup.cpuacct.stat.user",
        "cgroup.cpusched.shares",
        "cgroup.blkio.all.time",
        "cgroup.mounts.subsys",
    )
    assert got["cgroup.cpu.stat.usage"] == {"/": 30, "/user.slice": 60, escaped: 90}
    assert got["cgroup.cpu.stat.user"] == {"/": 10, "/user.slice": 20, escaped: 30}
    assert got["cgroup.pressure.cpu.some.avg10sec"] == {"/": 1.5, "/user.slice": 1.5, escaped: 1.5}
    assert got["cgroup.pressure.cpu.some.avg1min"]["/"] == 0.25
    assert got["cgroup.pressure.cpu.some.total"] == {"/": 1, "/user.slice": 2, escaped: 3}
    assert got["cgroup.pressure.memory.full.total"]["/user.slice"] == 7
    assert got["cgroup.pressure.io.some.total"][escaped] == 6
    assert got["cgroup.pressure.irq.full.total"] == {"/": 99}
    assert got["cgroup.io.stat.rbytes"] == {
        "/::sda": 1,
        "/user.slice::sda": 2,
        f"{escaped}::sda": 3,
    }
    assert got["cgroup.io.stat.dios"]["/::sda"] == 6
    # memory: the groups with memory.stat
    assert got["cgroup.memory.stat.anon"] == {"/user.slice": 8192, escaped: 12288}
    assert got["cgroup.memory.stat.pgfault"] == {"/user.slice": 2, escaped: 3}
    assert got["cgroup.memory.current"] == {"/user.slice": 131072, escaped: 196608}
    # cpuset: every group (the intermediate /system.slice too), "" without the file
    assert got["cgroup.cpuset.cpus"] == dict.fromkeys(
        ("/", "/user.slice", "/system.slice", escaped), ""
    )
    assert got["cgroup.cpuacct.stat.user"] == got["cgroup.cpusched.shares"] == {}
    assert got["cgroup.blkio.all.time"] == {}
    assert got["cgroup.mounts.subsys"] == {"/sys/fs/cgroup": "?"}


def test_instance_ids_are_kept_for_groups_that_come_back(tmp_path, agent_of) -> None:
    """Ids are given in the order groups are first seen and kept, as pmdaCache keeps
    them: a group that goes and comes back has its old id, a new one the next."""
    root = v2_tree(tmp_path)
    proc = agent_of(root)
    pmid = proc.pmns.lookup("cgroup.cpu.stat.usage")
    indom = proc._descs[pmid].indom

    def ids() -> dict[str, int]:
        reply = proc.handle(InstanceReqPDU(indom, PM_IN_NULL, None, ROOT_CTX))
        return dict(zip(reply.names, reply.insts, strict=True))

    first = ids()
    assert sorted(first.values()) == [0, 1, 2, 3] and first["/"] == 0
    user = root / "sys/fs/cgroup/user.slice"
    user.rename(root / "sys/fs/cgroup/gone")
    later = ids()
    assert later["/gone"] == 4 and "/user.slice" not in later
    (root / "sys/fs/cgroup/gone").rename(user)
    assert ids()["/user.slice"] == first["/user.slice"]


def test_cgroups_are_served_without_credentials(tmp_path, agent_of) -> None:
    """As pmdaproc: the control groups are no process's, so a TCP client reads them."""
    proc = agent_of(v2_tree(tmp_path))
    got = fetch(proc, "cgroup.cpu.stat.usage", "proc.psinfo.pid", ctx=TCP_CTX)
    assert got["cgroup.cpu.stat.usage"]["/"] == 30
    assert got["proc.psinfo.pid"] == PM_ERR_PERMISSION


def test_a_missing_or_damaged_tree_gives_no_values(tmp_path, agent_of) -> None:
    proc = agent_of(_write(tmp_path, {"/proc/mounts": "cgroup2 /nowhere cgroup2 rw 0 0\n"}))
    got = fetch(proc, "cgroup.subsys.count", "cgroup.cpu.stat.usage", "cgroup.mounts.subsys")
    assert got == {
        "cgroup.subsys.count": {"": 0},
        "cgroup.cpu.stat.usage": {},
        "cgroup.mounts.subsys": {"/nowhere": "?"},
    }
    _write(tmp_path, {"/nowhere/cpu.stat": "usage_usec x\n\0\n", "/proc/cgroups": "cpu x\n"})
    assert fetch(proc, "cgroup.cpu.stat.usage") == {"cgroup.cpu.stat.usage": {}}


# -- acct.* ---------------------------------------------------------------------------


def _record(pid: int, comm: bytes, btime: int, **fields: int) -> bytes:
    counts = [fields.get(k, 0) for k in ("utime", "stime", "mem", "io", "rw", "minflt")]
    counts += [fields.get("majflt", 0), 0]
    return acct.RECORD.pack(
        fields.get("flag", 0), 3, fields.get("tty", 0), fields.get("exitcode", 0),
        fields.get("uid", 0), fields.get("gid", 0), pid, fields.get("ppid", 1), btime,
        float(fields.get("etime", 0)), *counts, comm,
    )  # fmt: skip


def test_comp_t_and_a_version_3_record() -> None:
    assert acct.comp_t(5) == 5 and acct.comp_t((2 << 13) | 3) == 3 * 64
    record = acct.parse(_record(42, b"sleep", 1000, etime=250, utime=(1 << 13) | 5, flag=0x11))
    assert record is not None and (record.pid, record.comm) == (42, "sleep")
    values = acct.values(record, 100, lambda d: "?", lambda u: "root", lambda g: None)
    assert values["acct.psinfo.utime"] == 0.4 and values["acct.psinfo.etime"] == 2.5
    assert values["acct.flag.fork"] == values["acct.flag.xsig"] == 1
    assert values["acct.flag.core"] == 0 and values["acct.id.gid_nm"] == ""
    assert acct.parse(acct.RECORD.pack(*([0, 2] + [0] * 16), b"")) is None  # version 2


def test_accounting_reads_new_records_and_forgets_old_ones(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(acct, "accounts", lambda fd: True)  # (no process started)
    pacct = tmp_path / "pacct"
    now = int(time.time())
    pacct.write_bytes(_record(10, b"before", now))  # read from the end: not this one
    reader = acct.Accounting(str(pacct), "", 100)
    reader.open()
    assert reader.fd >= 0 and not reader.private
    with pacct.open("ab") as f:
        f.write(_record(11, b"true", now - 30, etime=100))
        f.write(_record(12, b"old", now - 600))
        f.write(_record(0, b"kernel", now))
    reader.refresh(now)
    assert {p: r.comm for p, r in reader.current(now).items()} == {11: "true"}
    assert reader.current(now + 60) == {}  # past its lifetime
    reader.close()
    assert reader.fd == -1 and pacct.exists()  # the system's file stays


def _kernel_accounts(fd: int) -> bool:
    """acct.accounts as if the kernel accounted into FD's file: its check process's record."""
    with open(os.readlink(f"/proc/self/fd/{fd}"), "ab") as f:
        f.write(_record(os.getpid() + 1, b"python", int(time.time()), ppid=os.getpid()))
    return True


def test_acct_controls_and_records_through_the_agent(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(acct, "accounts", _kernel_accounts)
    switched: list[str | None] = []
    monkeypatch.setattr(acct, "_acct", lambda path: switched.append(path) or True)
    monkeypatch.setenv("PCP_PACCT_SYSTEM_PATH", str(tmp_path / "none"))
    monkeypatch.setenv("PCP_VAR_DIR", str(tmp_path))
    (tmp_path / "pmcd").mkdir()
    proc = Proc()
    for ctx, ident in ((ROOT_CTX, b"0"), (NOBODY_CTX, b"65534")):
        proc.handle(AttrPDU(Attr.PCP_ATTR_USERID, ident, ctx))
        proc.handle(AttrPDU(Attr.PCP_ATTR_GROUPID, ident, ctx))

    def store(ctx: int, name: str, value: int) -> int:
        pmid = proc.pmns.lookup(name)
        vs = ValueSet.of_atoms(pmid, proc._descs[pmid].type, [(PM_IN_NULL, value)])
        return proc.handle(ResultPDU(Result(Timestamp(0, 0), (vs,)), ctx)).code

    assert fetch(proc, "acct.control.lifetime", "acct.control.enable_acct") == {
        "acct.control.lifetime": {"": 60},
        "acct.control.enable_acct": {"": 0},
    }
    assert store(NOBODY_CTX, "acct.control.enable_acct", 1) == PM_ERR_PERMISSION
    assert store(ROOT_CTX, "acct.control.refresh", 0) == PM_ERR_PERMISSION
    assert store(ROOT_CTX, "acct.control.enable_acct", 1) == 0
    private = tmp_path / "pmcd" / "pacct"
    assert switched == [str(private)] and private.exists()  # accounting on into ours
    with private.open("ab") as f:
        f.write(_record(4242, b"make", int(time.time()), uid=0, exitcode=256))
    got = fetch(proc, "acct.psinfo.exitcode", "acct.id.uid_nm", "acct.psinfo.pid")
    assert got["acct.psinfo.exitcode"] == {"python": 0, "make": 256}
    assert got["acct.id.uid_nm"]["make"] == "root"
    assert fetch(proc, "acct.psinfo.pid", ctx=TCP_CTX)["acct.psinfo.pid"]["make"] == 4242
    assert store(ROOT_CTX, "acct.control.enable_acct", 0) == 0
    assert switched == [str(private), None] and not private.exists()  # off, and removed
    assert fetch(proc, "acct.psinfo.pid") == {"acct.psinfo.pid": {}}
    proc.stop()


# -- against pmdaproc 6.0.3's library ---------------------------------------------------

#: What we deliberately give differently from pmdaproc 6.0.3 on these trees (each a slip
#: in its code; docs/proc-agent-notes.md has more).
DIFFERENT = {
    # version 1: pmdaproc looks for a "netcls" mount option (the kernel's is net_cls)
    "cgroup.netclass.classid": "pmdaproc finds no net_cls groups",
    "cgroup.netclass.id.container": "pmdaproc finds no net_cls groups",
    # version 2: pmdaproc reads cpuacct files from a path with "cpuacct.cpus" appended,
    # so gives every group 0 user and system time; there is no cpuacct in version 2
    "cgroup.cpuacct.stat.user": "pmdaproc gives 0 for every cgroup2 group",
    "cgroup.cpuacct.stat.system": "pmdaproc gives 0 for every cgroup2 group",
    "cgroup.cpuacct.id.container": "pmdaproc lists every cgroup2 group",
    # pmdaproc stores the averages as integers into a float's place
    **{
        f"cgroup.pressure.{r}.{k}.{avg}": "pmdaproc truncates the averages"
        for r, k in (("cpu", "some"), ("memory", "some"), ("memory", "full"),
                     ("io", "some"), ("io", "full"), ("irq", "full"))
        for avg in ("avg10sec", "avg1min", "avg5min")
    },
}  # fmt: skip


def _by_metric(text: str) -> dict[str, str]:
    """`pminfo -f` output as {metric: its lines}."""
    out: dict[str, str] = {}
    for block in text.strip().split("\n\n"):
        name, _, rest = block.partition("\n")
        out[name] = rest
    return out


@pytest.mark.interop
@pytest.mark.parametrize("tree", [v1_tree, v2_tree])
def test_the_same_groups_and_values_as_pmdaproc(tmp_path, tree) -> None:
    require_reference("pminfo")
    if not os.path.exists(PMDA_PROC_SO):
        pytest.skip(f"reference PCP 6 is not installed: no {PMDA_PROC_SO}")
    root = tree(tmp_path / "tree")
    env = {**os.environ, "PROC_STATSPATH": str(root), "PROC_HERTZ": "100"}
    theirs = subprocess.run(
        ["pminfo", "-L", "-K", "clear", "-K", f"add,3,{PMDA_PROC_SO},proc_init", "-f", "cgroup"],
        env=env, capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    agent = f"/usr/bin/env PROC_STATSPATH={root} PROC_HERTZ=100 {sys.executable}"
    with reference_pmcd([f"proc\t3\tpipe\tbinary\t{agent} -m purepcp.agents.proc -d 3"]) as pmcd:
        ours = pmcd.run("pminfo", "-f", "cgroup", timeout=120).stdout
    got, want = _by_metric(ours), _by_metric(theirs)
    assert len(want) == 204 and set(got) == set(want)
    same = [name for name in want if name not in DIFFERENT]
    assert [(n, got[n]) for n in same] == [(n, want[n]) for n in same]
    assert sum("inst [" in want[n] for n in same) > 25  # (values were compared)
