"""pmseries on a three-node Redis cluster on loopback: the same keys as on a single
server, and PCP's pmseries reads our cluster load as it reads its own."""

from __future__ import annotations

import pytest

from purepcp.series.load import ArchiveLoader
from purepcp.series.read import SeriesReader
from purepcp.series.store import Store, StoreConfig
from tests.support.redis_servers import redis_cluster, redis_server, require_redis
from tests.support.series_archives import write_mixed
from tests.support.series_dump import differences, dump
from tests.support.series_reference import pcp_pmseries, require_pcp_series


def cluster_dump(cluster) -> dict:
    import redis

    found: dict = {}
    for port in cluster.ports:
        found.update(dump(redis.Redis(host="127.0.0.1", port=port)))
    return found


@pytest.fixture
def archive(tmp_path):
    base = str(tmp_path / "mixed")
    write_mixed(base)
    return base


def test_cluster_holds_what_one_server_holds(archive, tmp_path):
    require_redis()
    import redis

    with redis_server(tmp_path / "one") as one:
        with Store(StoreConfig(servers=(("127.0.0.1", one.port),))) as store:
            ArchiveLoader(store, archive).run()
        single = dump(redis.Redis(host="127.0.0.1", port=one.port))
    with redis_cluster(tmp_path / "three") as cluster:
        servers = tuple(("127.0.0.1", p) for p in cluster.ports)
        with Store(StoreConfig(servers=servers[:1])) as store:
            assert store.cluster
            report = ArchiveLoader(store, archive).run()
            assert report.errors == []
            reader = SeriesReader(store.client)
            assert sorted(reader.names("metric.name")) == sorted(
                ["test.ctr", "test.inst", "alias.inst", "test.str", "test.dbl", "test.err"]
            )
        spread = cluster_dump(cluster)
        assert differences(single, spread) == []
        assert sum(1 for p in cluster.ports if dump(redis.Redis(port=p))) == 3  # (all used)


@pytest.mark.interop
def test_pcp_reads_our_cluster_load_and_we_read_its(archive, tmp_path):
    require_redis()
    require_pcp_series()
    with redis_cluster(tmp_path / "ours") as ours, redis_cluster(tmp_path / "theirs") as theirs:
        with Store(StoreConfig(servers=(("127.0.0.1", ours.ports[0]),))) as store:
            ArchiveLoader(store, archive).run()
        done = pcp_pmseries(["--load", archive], theirs.ports[0], tmp_path)
        assert done.returncode == 0, done.stderr
        assert differences(cluster_dump(theirs), cluster_dump(ours)) == []
        for args in (["-a", "test.inst"], ["test.dbl[samples:3]"], ["-S"]):
            mine = pcp_pmseries(args, ours.ports[0], tmp_path).stdout
            pcps = pcp_pmseries(args, theirs.ports[0], tmp_path).stdout
            if args == ["-S"]:  # (PCP maps the two source names in either order on a cluster)
                mine, pcps = sorted(mine.splitlines()), sorted(pcps.splitlines())
            assert mine == pcps and mine, args


def test_our_pmproxy_answers_the_same_from_a_cluster(archive, tmp_path):
    """The /series/ calls answer alike from one server and from a three-node cluster
    holding the same load (set algebra is done in pmproxy, one key per command)."""
    require_redis()
    import json
    import urllib.parse

    from tests.support.pmproxy_servers import our_pmproxy

    def q(expr: str) -> str:
        return urllib.parse.quote(expr, safe="")

    paths = [
        "/series/query?expr=" + q("test.*"),
        "/series/query?expr=" + q('{hostname=="testhost"}'),
        "/series/query?expr=" + q('test.inst{instance.name~~"[ab]"}[samples:3]'),
        "/series/metrics",
        "/series/labels?names=hostname,agent",
        "/series/instances",
        "/series/sources?match=*",
    ]
    answers = []
    with redis_server(tmp_path / "one") as one, redis_cluster(tmp_path / "three") as cluster:
        for name, port in (("one", one.port), ("three", cluster.ports[1])):
            with Store(StoreConfig(servers=(("127.0.0.1", port),))) as store:
                ArchiveLoader(store, archive).run()
            conf = tmp_path / f"{name}.conf"
            conf.write_text(f"[redis]\nservers = 127.0.0.1:{port}\n")
            with our_pmproxy("localhost", tmp_path / f"proxy-{name}", "-c", str(conf)) as p:
                got = [p.get(path) for path in paths]
                sids = [s for s in p.json(paths[0])[1]]
                got += [p.get(f"/series/{c}?series={','.join(sids)}") for c in
                        ("descs", "labels", "instances", "metrics")]  # fmt: skip
                got.append(p.get(f"/series/values?series={','.join(sids)}&samples=4"))
                answers.append(got)
    assert all(status == 200 for status, _, _ in answers[0])
    one_answers, cluster_answers = answers
    for path, a, b in zip([*paths, "descs", "labels", "instances", "metrics", "values"],
                          one_answers, cluster_answers, strict=True):  # fmt: skip
        if path.startswith(("/series/metrics", "/series/instances", "/series/sources",
                            "/series/labels?names", "instances")):  # fmt: skip
            # (names and set members come in a hash table's order, which is each server's
            # own: Redis seeds its hashing at random when it starts; PCP's answers too)
            assert a[:2] == b[:2], path
            key = json.dumps
            assert sorted(json.loads(a[2]), key=key) == sorted(json.loads(b[2]), key=key), path
        else:
            assert a == b, path


def test_discovery_on_a_cluster_stores_what_it_stores_on_one_server(tmp_path):
    """Discovery's small sends go to every node before any replies are read; what it
    stores is what it stores on one server."""
    require_redis()
    import redis

    from purepcp.series.discover import Discovery
    from tests.support.growing_archive import RECORDS, Logger

    def follow(servers, logs) -> None:
        logs.mkdir()
        log = Logger(str(logs / "web1"))
        try:
            log.record()
            with Store(StoreConfig(servers=servers)) as store:
                found = Discovery(str(logs), store)
                found.scan()
                for _ in range(len(RECORDS) - 1):
                    log.record()
                    found.scan()
        finally:
            log.close()

    with redis_server(tmp_path / "one") as one:
        follow((("127.0.0.1", one.port),), tmp_path / "a")
        single = dump(redis.Redis(host="127.0.0.1", port=one.port))
    with redis_cluster(tmp_path / "three") as cluster:
        follow((("127.0.0.1", cluster.ports[0]),), tmp_path / "b")
        spread = cluster_dump(cluster)
    for found in (single, spread):
        found.pop(b"pcp:version:schema", None)
        for key in [k for k in found if b"context.name" in k or b":source:" in k]:
            del found[key]  # (the archives' paths differ: a/web1, b/web1)
    assert len(spread) > 40
    assert differences(single, spread) == []
