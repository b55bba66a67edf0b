"""The linux agent's NFS/RPC (cluster 7) and fibre channel (cluster 91) families.

Parsers on samples written here in the kernel's formats (net/sunrpc/stats.c,
fs/nfsd/stats.c, the fc_host statistics attributes), the whole agent on a fake
tree under $LINUX_STATSPATH, pmdalinux's quirks kept, and missing sources giving
no values and no error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, nfs
from purepcp.agents.linux.catalog import BY_NAME
from purepcp.pmapi.ids import PM_IN_NULL
from tests.support.linux_fetch import fetch, instances
from tests.support.reference_pmcd import reference_pmcd, require_reference

ROOT = Path(__file__).resolve().parents[2]
PMDALINUX = "/var/lib/pcp/pmdas/linux/pmdalinux"

U32 = (1 << 32) - 1

# --- samples, in the kernel's formats ---------------------------------------------------------

#: 69 NFSv4 client counts, as a 6.x kernel writes them (more than pmdalinux's 56).
CLIENT_V4 = [3 * i + 1 for i in range(69)]
#: The client's /proc/net/rpc/nfs: no proc2 line, as on kernels without NFSv2.
CLIENT = (
    b"net 0 0 0 0\n"
    b"rpc 5180 3 7\n"
    b"proc3 22 0 1422 8 217 301 4 1031 522 12 2 1 0 9 1 3 0 14 88 6 2 0 11\n"
    b"proc4 69 " + b" ".join(b"%d" % v for v in CLIENT_V4) + b"\n"
)
#: 76 NFSv4 server operation counts (opcodes 0..75; pmdalinux takes 71).
SERVER_V4 = [0, 0, 0, *range(10, 83)]
#: The server's /proc/net/rpc/nfsd as a 6.x kernel writes it.
SERVER = (
    b"rc 12 3456 789\n"
    b"fh 4 0 0 0 0\n"
    b"io 1048576 2097152\n"
    b"th 8 0 0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000\n"
    b"net 4000 10 3990 25\n"
    b"rpc 3995 5 2 2 1\n"
    b"proc3 22 2 30 4 50 60 0 70 80 1 1 1 0 1 1 1 0 9 90 3 2 1 5\n"
    b"proc4 2 1 500\n"
    b"proc4ops 76 " + b" ".join(b"%d" % v for v in SERVER_V4) + b"\n"
    b"wdeleg_getattr 0\n"
)
#: An old kernel's nfsd file: 9 "rc" numbers, a read-ahead line, NFSv2.
OLD_SERVER = (
    b"rc 1 2 3 4 5 6 7 8 9\n"
    b"fh 10 11 12 13 14\n"
    b"io 4294967297 5\n"
    b"th 16 3 1.000 0.500 0.000 0.000 0.000 0.000 0.000 0.000 0.000 0.000\n"
    b"ra 32 1 2 3 4 5 6 7 8 9 10 77\n"
    b"net 40 10 30 5\n"
    b"rpc 40 0 0 0 0\n"
    b"proc2 18 " + b" ".join(b"%d" % i for i in range(18)) + b"\n"
)
POOL_STATS = (
    b"# pool packets-arrived sockets-enqueued threads-woken threads-timedout\n"
    b"0 100 5 95 2\n"
    b"1 50 1 49 0\n"
)


class FakeTree:
    """A fake /proc and /sys under a directory, for $LINUX_STATSPATH."""

    def __init__(self, root: Path) -> None:
        """An empty tree at ROOT."""
        self.root = root

    def write(self, path: str, data: bytes) -> None:
        """Write DATA at PATH (such as "/proc/net/rpc/nfs") under the tree."""
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def remove(self, path: str) -> None:
        """Remove the file at PATH under the tree."""
        (self.root / path.lstrip("/")).unlink()

    def fchost(self, host: str, **files: bytes) -> None:
        """A fibre channel host with these statistics files."""
        stats = self.root / "sys/class/fc_host" / host / "statistics"
        stats.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (stats / name).write_bytes(data)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, FakeTree]]:
    """A linux agent reading the fake tree under a temporary directory."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    linux = Linux()
    yield linux, FakeTree(tmp_path)
    linux.stop()


CLUSTER7 = [m.name for m in nfs.METRICS if m.cluster == nfs.CLUSTER]
FCHOST = [m.name for m in nfs.METRICS if m.cluster == nfs.FCHOST_CLUSTER]

# --- the parsers ------------------------------------------------------------------------------


def test_parse_client() -> None:
    """The client file: net and rpc counters, proc lines by strtok, proc4 cut at 56."""
    rpc = nfs.parse_rpc(CLIENT, nfs.CLIENT_LINES)
    assert rpc.counters == {
        "netcnt": 0,
        "netudpcnt": 0,
        "nettcpcnt": 0,
        "nettcpconn": 0,
        "rpccnt": 5180,
        "rpcretrans": 3,
        "rpcauthrefresh": 7,
    }
    assert rpc.ops["proc2"] == [0] * 18
    assert rpc.ops["proc3"][:4] == [0, 1422, 8, 217] and rpc.ops["proc3"][21] == 11
    assert rpc.ops["proc4"] == CLIENT_V4[:56]


def test_parse_server_current_kernel() -> None:
    """A 6.x nfsd file: 3 "rc" numbers, fh_stale from "fh", proc4ops by opcode."""
    rpc = nfs.parse_rpc(SERVER, nfs.SERVER_LINES)
    c = rpc.counter
    assert (c("rchits"), c("rcmisses"), c("rcnocache")) == (12, 3456, 789)
    assert (c("fh_cached"), c("fh_stale"), c("fh_lookup")) == (0, 4, 0)
    assert (c("io_read"), c("io_write"), c("th_cnt"), c("th_fullcnt")) == (1048576, 2097152, 8, 0)
    assert (c("rpccnt"), c("rpcerr"), c("rpcbadfmt"), c("rpcbadauth")) == (3995, 5, 2, 2)
    assert (c("ra_size"), c("ra_hits"), c("ra_misses")) == (0, 0, 0)
    assert rpc.ops["proc4"] == SERVER_V4[:71]


def test_parse_server_old_kernel() -> None:
    """An old nfsd file: 9 "rc" numbers overwritten in part by "fh", and the ra line."""
    rpc = nfs.parse_rpc(OLD_SERVER, nfs.SERVER_LINES)
    c = rpc.counter
    assert [c(f) for f in ("fh_cached", "fh_valid", "fh_fixup", "fh_concurrent")] == [4, 5, 6, 9]
    assert (c("fh_stale"), c("fh_lookup"), c("fh_anon")) == (10, 11, 12)
    assert c("io_read") == 1  # 2**32 + 1 kept as 32 bits
    assert (c("ra_size"), c("ra_hits"), c("ra_misses")) == (32, 55, 77)
    assert rpc.ops["proc2"] == list(range(18))


def test_parse_pools() -> None:
    """pool_threads' first number; pool_stats summed over pool lines after the header."""
    assert nfs.parse_pool_threads(b"4 4\n") == 4
    assert nfs.parse_pool_threads(b"") is None
    assert nfs.parse_pool_stats(8, POOL_STATS) == nfs.Threads(8, 2, 150, 6, 144, 2)
    assert nfs.parse_pool_stats(8, b"# pool packets\n") is None
    assert nfs.parse_pool_stats(8, b"0 1 2 3\n") is None  # an incomplete pool line


def test_fchost_counts_keep_pmdalinux_slots() -> None:
    """Each file lands in its row's slot (so rx_words*4 is item 1, tx_frames item 2); an
    all-ones value is 0; base 0 parsing."""
    counts = nfs.fchost_counts(
        {
            "rx_frames": b"0x10\n",
            "rx_words": b"0x100\n",
            "tx_frames": b"0x20\n",
            "tx_words": b"0x200\n",
            "error_frames": b"0xffffffffffffffff\n",
            "fcp_input_requests": b"0x5\n",
        }
    )
    assert counts == (16, 1024, 32, 2048, 0, 0, 0, 0)


# --- the agent on a fake tree -----------------------------------------------------------------


def test_nothing_loaded_gives_no_values(fake) -> None:
    """No NFS, no nfsd filesystem, no fc_host: descriptors only, but rpc.server.ra_* are 0
    and hinv.nfchost 0, as pmdalinux gives them."""
    agent, _ = fake
    values = fetch(agent, *CLUSTER7, *FCHOST)
    valued = {name for name, vs in values.items() if vs}
    assert valued == {"rpc.server.ra_size", "rpc.server.ra_hits", "rpc.server.ra_misses"} | {
        "hinv.nfchost"
    }
    assert values["rpc.server.ra_hits"] == {PM_IN_NULL: 0}
    assert values["hinv.nfchost"] == {PM_IN_NULL: 0}
    assert instances(agent, nfs.FCHOST_INDOM) == {}


def test_operation_instances(fake) -> None:
    """The four fixed operation indoms: pmdalinux's counts, ids and a few names."""
    agent, _ = fake
    v2, v3 = instances(agent, nfs.NFS_INDOM), instances(agent, nfs.NFS3_INDOM)
    v4c, v4s = instances(agent, nfs.NFS4_CLI_INDOM), instances(agent, nfs.NFS4_SVR_INDOM)
    assert list(v2) == list(range(18)) and v2[7] == "wrcache"
    assert list(v3) == list(range(22)) and v3[17] == "readdir+"
    assert list(v4c) == list(range(56)) and v4c[55] == "deallocate"
    assert list(v4s) == list(range(1, 72)) and v4s[4] == "access" and v4s[71] == "write_same"


def test_client_and_server_values(fake) -> None:
    """Both RPC files: counters, sums, per-operation counts and the nettcpconn quirk."""
    agent, tree = fake
    tree.write("/proc/net/rpc/nfs", CLIENT)
    tree.write("/proc/net/rpc/nfsd", SERVER)
    values = fetch(agent, *CLUSTER7)
    one = {name: vs.get(PM_IN_NULL) for name, vs in values.items()}
    assert one["rpc.client.rpccnt"] == 5180
    assert one["rpc.client.rpcauthrefresh"] == 7
    assert one["nfs.client.calls"] == 0
    assert values["nfs.client.reqs"] == dict.fromkeys(range(18), 0)
    assert one["nfs3.client.calls"] == sum(nfs.parse_rpc(CLIENT, nfs.CLIENT_LINES).ops["proc3"])
    assert one["nfs4.client.calls"] == sum(CLIENT_V4[:56])
    assert values["nfs4.client.reqs"] == dict(enumerate(CLIENT_V4[:56]))
    assert one["rpc.server.nettcpcnt"] == 3990
    assert one["rpc.server.nettcpconn"] == 3990  # pmdalinux shows nettcpcnt, not 25
    assert one["rpc.server.rcmisses"] == 3456
    assert one["rpc.server.io_write"] == 2097152
    assert one["nfs4.server.calls"] == sum(SERVER_V4[:71])
    assert values["nfs4.server.reqs"] == {i + 1: v for i, v in enumerate(SERVER_V4[:71])}
    assert values["nfs.server.reqs"] == dict.fromkeys(range(18), 0)
    # no nfsd filesystem: the thread metrics alone have no value
    assert not any(values[f"nfs.server.threads.{s}"] for s, *_ in nfs.THREAD_FIELDS)


def test_only_the_client_loaded(fake) -> None:
    """Client file only: client metrics valued, server ones not (ra_* still 0)."""
    agent, tree = fake
    tree.write("/proc/net/rpc/nfs", CLIENT)
    values = fetch(agent, "rpc.client.rpcretrans", "rpc.server.rpccnt", "nfs3.server.reqs")
    assert values["rpc.client.rpcretrans"] == {PM_IN_NULL: 3}
    assert values["rpc.server.rpccnt"] == {}
    assert values["nfs3.server.reqs"] == {}


def test_sums_wrap_at_32_bits(fake) -> None:
    """calls is a 32-bit sum, as pmdalinux adds into a u32."""
    agent, tree = fake
    tree.write("/proc/net/rpc/nfsd", b"proc3 22 4294967295 2\n")
    values = fetch(agent, "nfs3.server.calls", "nfs3.server.reqs")
    assert values["nfs3.server.calls"] == {PM_IN_NULL: 1}
    assert values["nfs3.server.reqs"][0] == U32


def test_nfsd_threads(fake) -> None:
    """Thread metrics: 0 while no thread runs, pool sums with threads, none if pool_stats
    is missing while threads run."""
    agent, tree = fake
    names = [f"nfs.server.threads.{s}" for s, *_ in nfs.THREAD_FIELDS]
    tree.write("/proc/fs/nfsd/pool_threads", b"0\n")
    assert {n: v[PM_IN_NULL] for n, v in fetch(agent, *names).items()} == dict.fromkeys(names, 0)
    tree.write("/proc/fs/nfsd/pool_threads", b"4\n")
    assert not any(fetch(agent, *names).values())
    tree.write("/proc/fs/nfsd/pool_stats", POOL_STATS)
    got = {n.rsplit(".", 1)[1]: v[PM_IN_NULL] for n, v in fetch(agent, *names).items()}
    assert got == {
        "total": 4,
        "pools": 2,
        "requests": 150,
        "enqueued": 6,
        "processed": 144,
        "timedout": 2,
    }


def test_fchost_hosts_and_ids(fake) -> None:
    """fc_host: hosts with a statistics directory are instances, ids kept as hosts come
    and go; values with pmdalinux's slots."""
    agent, tree = fake
    tree.fchost(
        "host3",
        rx_frames=b"0x10\n",
        rx_words=b"0x100\n",
        tx_frames=b"0x20\n",
        tx_words=b"0x200\n",
        lip_count=b"0x1\n",
        dumped_frames=b"0x2\n",
    )
    (tree.root / "sys/class/fc_host/host5").mkdir()  # no statistics: not a host
    values = fetch(agent, *FCHOST)
    assert instances(agent, nfs.FCHOST_INDOM) == {0: "host3"}
    assert values["hinv.nfchost"] == {PM_IN_NULL: 1}
    assert values["fchost.in.frames"] == {0: 16}
    assert values["fchost.out.frames"] == {0: 1024}  # rx_words * 4, as pmdalinux
    assert values["fchost.in.bytes"] == {0: 32}  # tx_frames, as pmdalinux
    assert values["fchost.out.bytes"] == {0: 2048}
    assert values["fchost.lip_count"] == {0: 1}
    assert values["fchost.nos_count"] == {0: 0}  # no file: 0
    assert values["fchost.dumped_frames"] == {0: 2}
    tree.fchost("host7", rx_frames=b"7\n")
    fetch(agent, "hinv.nfchost")
    assert instances(agent, nfs.FCHOST_INDOM) == {0: "host3", 1: "host7"}
    for name in ("rx_frames", "rx_words", "tx_frames", "tx_words", "lip_count", "dumped_frames"):
        tree.remove(f"/sys/class/fc_host/host3/statistics/{name}")
    (tree.root / "sys/class/fc_host/host3/statistics").rmdir()
    values = fetch(agent, "hinv.nfchost", "fchost.in.frames")
    assert values == {"hinv.nfchost": {PM_IN_NULL: 1}, "fchost.in.frames": {1: 7}}
    assert instances(agent, nfs.FCHOST_INDOM) == {1: "host7"}
    tree.fchost("host3", rx_frames=b"3\n")
    assert fetch(agent, "fchost.in.frames")["fchost.in.frames"] == {0: 3, 1: 7}


def test_no_labels_on_these_indoms() -> None:
    """pmdalinux gives the operation and fc_host indoms no labels."""
    for indom in (
        Linux.nfs_ops2_indom,
        Linux.nfs_ops3_indom,
        Linux.nfs_ops4_client_indom,
        Linux.nfs_ops4_server_indom,
        Linux.nfs_fchost_indom,
    ):
        assert indom.labels == {}


# --- against PCP's own pmdalinux on the same fake trees ---------------------------------------


def _current_tree(tree: FakeTree) -> None:
    """A host running a 6.x client and server, nfsd threads and two fibre channel hosts."""
    tree.write("/proc/net/rpc/nfs", CLIENT)
    tree.write("/proc/net/rpc/nfsd", SERVER)
    tree.write("/proc/fs/nfsd/pool_threads", b"4 4\n")
    tree.write("/proc/fs/nfsd/pool_stats", POOL_STATS)
    tree.fchost(
        "host3",
        rx_frames=b"0x10\n",
        rx_words=b"0x100\n",
        tx_frames=b"0x20\n",
        tx_words=b"0x200\n",
        error_frames=b"0xffffffffffffffff\n",
        nos_count=b"017\n",
        fcp_input_requests=b"5",
    )
    tree.fchost("host9", rx_frames=b"12345678901\n", tx_words=b"-1\n")
    (tree.root / "sys/class/fc_host/host5").mkdir()


def _odd_tree(tree: FakeTree) -> None:
    """Old-kernel lines, short and repeated lines, odd spacing, overflow and signs."""
    tree.write(
        "/proc/net/rpc/nfs",
        b"net  1 2\nrpc -1 99999999999 x\nproc2 18  1  2 3 \nproc3 22 1\tz 5\n"
        b"proc4 3 1 2 3 4 5 6\n",
    )
    tree.write(
        "/proc/net/rpc/nfsd",
        OLD_SERVER + b"rc 5 6\nproc4ops 3 1 2 3 4 5\nproc4 2 7 8\nnet 1 2 3 4 5\n",
    )
    tree.write("/proc/fs/nfsd/pool_threads", b"0\n")


@pytest.mark.interop
@pytest.mark.parametrize("build", [_current_tree, _odd_tree], ids=["current", "odd"])
def test_values_match_pmdalinux(tmp_path: Path, build) -> None:
    """pminfo -f prints the same instances and values from both agents on one fake tree."""
    require_reference("pminfo")
    if not os.path.exists(PMDALINUX):
        pytest.skip(f"reference PCP 6 is not installed: no {PMDALINUX}")
    tree = FakeTree(tmp_path / "tree")
    (tree.root / "proc").mkdir(parents=True)
    build(tree)
    tops = dict.fromkeys(name.split(".")[0] for name in BY_NAME)
    root = tmp_path / "root"
    root.write_text(
        "#define LINUX 60\nroot {\n"
        + "".join(f"    {top}\n" for top in tops)
        + "}\n"
        + (ROOT / "pmns" / "linux").read_text()
    )
    env = {"LINUX_STATSPATH": str(tree.root)}
    ours = [f"linux\t60\tpipe\tbinary\t{sys.executable} -m purepcp.agents.linux -d 60"]
    theirs = [f"linux\t60\tpipe\tbinary\t{PMDALINUX} -d 60"]
    names = [m.name for m in nfs.METRICS]
    with ExitStack() as stack:
        mine = stack.enter_context(
            reference_pmcd(ours, str(root), extra_env={"PYTHONPATH": str(ROOT), **env})
        )
        real = stack.enter_context(reference_pmcd(theirs, extra_env=env))
        got, want = (p.run("pminfo", "-f", *names) for p in (mine, real))
    assert want.returncode == 0, want.stderr
    assert "value" in want.stdout
    assert got.stdout == want.stdout
