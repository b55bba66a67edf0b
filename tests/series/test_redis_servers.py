"""The pmseries tests' Redis servers and PCP series tools: they start, work, and go away.

tests/support/redis_servers.py starts private redis-servers (standalone, cluster) and
tests/support/series_reference.py runs PCP 6.0.3's pmseries and pmproxy against them; these tests
check both do what the series tests rely on, and leave no process of theirs running.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import pytest
import redis

from tests.support.redis_servers import RESERVED_PORTS, redis_cluster, redis_server, require_redis
from tests.support.series_reference import (
    fetch,
    load_archive,
    pcp_pmproxy_series,
    pcp_pmseries,
    pmi_archive,
    qa_archive,
    require_pcp_series,
    small_archive,
)

SID = re.compile(r"^[0-9a-f]{40}$")

#: the metric series of the pmi archive's metrics: hostname "testhost" is its only
#: label; docs/series-notes.md section 2 computes these from the SHA-1 formula
PMI_SIDS = {
    "test.inst": "303ddd20e37240b388629deed816e8a327ac1e9a",
    "test.dbl": "9e6d667a8cb82ac0e369c8570150a16b7cc3d843",
    "test.ctr": "641a94f76c68b908a442481ab8c6b535a2c53e79",
}

#: sample.rapid of PCP's QA archive sample-labels (qa/1211 and the notes)
SAMPLE_RAPID = "538f06a548cae2d8a47107eea9a8c105ccf602d8"


def running(tmp: Path) -> str:
    """The processes whose command line names TMP (redis-server's title names its
    directory, pmproxy's and pmseries' arguments their configuration file)."""
    found = subprocess.run(["pgrep", "-af", str(tmp)], capture_output=True, text=True)
    return found.stdout


def refuses(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:PORT."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def metric_of(archive: Path) -> tuple[str, str | None]:
    """A metric of ARCHIVE (small_archive's) and its series id when known."""
    if archive.name == "sample-labels":
        return "sample.rapid", SAMPLE_RAPID
    return "test.inst", PMI_SIDS["test.inst"]


def series_ids(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.split() if SID.match(line)]


# -- standalone ------------------------------------------------------------------------


def test_standalone_answers_and_restarts_on_its_port(tmp_path):
    require_redis()
    with redis_server(tmp_path) as server:
        assert server.host == "127.0.0.1"
        assert server.port not in RESERVED_PORTS
        assert server.url == f"redis://127.0.0.1:{server.port}"
        client = server.client()
        assert client.ping()
        assert client.config_get("save") == {"save": ""}
        assert client.config_get("appendonly") == {"appendonly": "no"}
        assert client.config_get("dir")["dir"] == str(tmp_path / "redis")
        client.set("k", "v")
        assert str(tmp_path) in running(tmp_path)
        port, pid = server.port, server.proc.pid

        server.stop()
        assert not server.running
        assert refuses(port)
        with pytest.raises(redis.ConnectionError):
            client.ping()

        server.start()
        assert server.port == port
        assert server.proc.pid != pid
        assert client.ping()  # (redis-py reconnects)
        assert client.get("k") is None  # nothing was saved
    assert running(tmp_path) == ""
    assert refuses(port)


def test_persistent_restart_keeps_data(tmp_path):
    require_redis()
    with redis_server(tmp_path, persistent=True) as server:
        client = server.client()
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        client.set("k", "kept")
        server.stop()  # a clean shutdown
        server.start()
        assert client.get("k") == b"kept"
        client.set("k2", "also")
        server.stop(hard=True)  # SIGKILL: as a crash (appendfsync always)
        server.start()
        assert client.get("k2") == b"also"
        port = server.port
    assert running(tmp_path) == ""
    assert refuses(port)


def test_two_servers_in_one_directory_tree(tmp_path):
    require_redis()
    with redis_server(tmp_path, name="a") as a, redis_server(tmp_path, name="b") as b:
        assert a.port != b.port
        a.client().set("k", "a")
        assert b.client().get("k") is None
    assert running(tmp_path) == ""


# -- cluster ---------------------------------------------------------------------------


def test_cluster_is_ok_and_routes_keys(tmp_path):
    require_redis()
    with redis_cluster(tmp_path) as cluster:
        ports = cluster.ports
        assert len(set(ports)) == 3
        assert not set(ports) & RESERVED_PORTS
        assert cluster.nodes == [f"127.0.0.1:{p}" for p in ports]
        buses = [s.bus_port for s in cluster.servers]
        assert len(set(buses) | set(ports)) == 6
        for server in cluster.servers:
            info = cluster.cluster_info(server)
            assert info["cluster_state"] == "ok"
            assert info["cluster_known_nodes"] == "3"
            assert info["cluster_slots_assigned"] == "16384"

        client = cluster.client()
        client.set("foo", "bar")
        assert client.get("foo") == b"bar"
        owner = client.get_node_from_key("foo")
        slot = client.keyslot("foo")
        with cluster.servers[0].client() as plain:
            assert plain.execute_command("CLUSTER KEYSLOT", "foo") == slot
        # the key is on the node owning its slot, and the others redirect there
        for server in cluster.servers:
            with server.client() as plain:
                if server.port == owner.port:
                    assert plain.get("foo") == b"bar"
                    assert plain.dbsize() == 1
                else:
                    moved = f"^{slot} 127.0.0.1:{owner.port}$"
                    with pytest.raises(redis.exceptions.MovedError, match=moved):
                        plain.get("foo")
                    assert plain.dbsize() == 0
        assert len(running(tmp_path).splitlines()) == 3
    assert running(tmp_path) == ""
    for port in ports:
        assert refuses(port)


def test_cluster_node_restarts_into_the_cluster(tmp_path):
    require_redis()
    with redis_cluster(tmp_path, persistent=True) as cluster:
        client = cluster.client()
        client.set("foo", "bar")
        owner = next(s for s in cluster.servers if s.port == client.get_node_from_key("foo").port)
        owner.stop()
        owner.start()  # same port, same nodes.conf: same slots
        cluster.wait_ok()
        with owner.client() as plain:
            assert plain.get("foo") == b"bar"
    assert running(tmp_path) == ""


# -- PCP's pmseries and pmproxy ------------------------------------------------------


@pytest.mark.interop
def test_pcp_pmseries_loads_into_a_server(tmp_path):
    require_redis()
    require_pcp_series()
    archive = small_archive(tmp_path / "archive")
    metric, sid = metric_of(archive)
    with redis_server(tmp_path) as server:
        said = load_archive(archive, server.port, tmp_path)
        assert re.search(r"processed \d+ archive records", said)
        assert server.client().get("pcp:version:schema") == b"2"
        ids = series_ids(pcp_pmseries([metric], server.port, tmp_path))
        assert ids == [sid]
    assert running(tmp_path) == ""


@pytest.mark.interop
def test_pcp_pmseries_loads_a_pmi_archive(tmp_path):
    """The fallback archive (written with pcp.pmi) gets the ids the notes compute."""
    require_redis()
    require_pcp_series()
    archive = pmi_archive(tmp_path / "archive")
    with redis_server(tmp_path) as server:
        assert "processed 3 archive records" in load_archive(archive, server.port, tmp_path)
        for metric, sid in PMI_SIDS.items():
            assert series_ids(pcp_pmseries([metric], server.port, tmp_path)) == [sid]
        values = pcp_pmseries(["-t", "test.dbl[samples:3]"], server.port, tmp_path)
        assert re.findall(r"\[(\S+)\] (\S+)", values.stdout) == [
            ("1700000020250.0", "3.500000e+00"),
            ("1700000010250.0", "2.500000e+00"),
            ("1700000000250.0", "1.500000e+00"),
        ]


@pytest.mark.interop
def test_private_config_loads_proc_metrics(tmp_path):
    """`-c /absolute/file`: Debian's pmseries.conf (exclude.metrics = proc.*,acct.*)
    does not apply, so the proc archive's proc.* metrics are loaded."""
    require_redis()
    require_pcp_series()
    archive = qa_archive("proc")
    if archive is None:
        pytest.skip("PCP's QA archive proc is not here (Debian package pcp-testsuite)")
    with redis_server(tmp_path) as server:
        load_archive(archive, server.port, tmp_path)
        names = pcp_pmseries(["-m", "-g", "proc.*"], server.port, tmp_path)
        assert names.returncode == 0, names.stderr
        assert "proc.psinfo.utime" in names.stdout.split()
        assert "proc.psinfo.pid" in names.stdout.split()
        conf = (tmp_path / "pcp-pmseries.conf").read_text()
        assert "exclude.metrics =\n" in conf


@pytest.mark.interop
def test_pcp_pmseries_loads_into_a_cluster(tmp_path):
    require_redis()
    require_pcp_series()
    archive = small_archive(tmp_path / "archive")
    metric, sid = metric_of(archive)
    with redis_cluster(tmp_path / "cluster") as cluster:
        said = load_archive(archive, 0, tmp_path, cluster_nodes=cluster.nodes)
        assert re.search(r"processed \d+ archive records", said)
        # every node holds some of PCP's keys (none has a hash tag)
        sizes = []
        for server in cluster.servers:
            with server.client() as plain:
                sizes.append(plain.dbsize())
        assert all(sizes), sizes
        assert cluster.client().get("pcp:version:schema") == b"2"
        ids = series_ids(pcp_pmseries([metric], 0, tmp_path, cluster_nodes=cluster.nodes))
        assert ids == [sid]
        # any one node will do: hiredis-cluster asks it for the others
        for node in cluster.nodes:
            one = series_ids(pcp_pmseries([metric], 0, tmp_path, cluster_nodes=[node]))
            assert one == [sid]
        port = cluster.ports[2]
        assert series_ids(pcp_pmseries([metric], port, tmp_path)) == [sid]  # -h/-p one node
    assert running(tmp_path) == ""


@pytest.mark.interop
def test_pcp_pmproxy_answers_series_requests(tmp_path):
    require_redis()
    require_pcp_series()
    archive = small_archive(tmp_path / "archive")
    metric, sid = metric_of(archive)
    with redis_server(tmp_path / "redis") as server:
        load_archive(archive, server.port, tmp_path)
        with pcp_pmproxy_series(tmp_path / "pmproxy", server.port) as proxy:
            assert proxy.port not in RESERVED_PORTS
            assert proxy.url == f"http://127.0.0.1:{proxy.port}"
            status, _, body = fetch(proxy.url + "/series/ping")
            assert (status, json.loads(body)) == (200, {"success": True})
            status, kind, body = fetch(proxy.url + f"/series/query?expr={metric}")
            assert (status, kind, json.loads(body)) == (200, "application/json", [sid])
            status, _, body = fetch(proxy.url + "/series/query?expr=bad{")
            assert status == 400
            assert json.loads(body)["success"] is False
            assert "pmproxy" in running(tmp_path)
    assert running(tmp_path) == ""


@pytest.mark.interop
def test_pcp_pmproxy_on_a_cluster(tmp_path):
    require_redis()
    require_pcp_series()
    archive = small_archive(tmp_path / "archive")
    metric, sid = metric_of(archive)
    with redis_cluster(tmp_path / "cluster") as cluster:
        load_archive(archive, 0, tmp_path, cluster_nodes=cluster.nodes)
        with pcp_pmproxy_series(tmp_path / "pmproxy", 0, cluster_nodes=cluster.nodes[:1]) as proxy:
            status, _, body = fetch(proxy.url + f"/series/query?expr={metric}")
            assert (status, json.loads(body)) == (200, [sid])
            status, _, body = fetch(proxy.url + f"/series/descs?series={sid}")
            assert status == 200
            assert json.loads(body)[0]["series"] == sid
    assert running(tmp_path) == ""
