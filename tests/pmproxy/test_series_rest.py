"""pmproxy's /series/* calls: ours and PCP 6.0.3's pmproxy on the same key server,
request by request (grafana-pcp's "PCP Valkey" data source's calls first), and a query
while a load is going on."""

from __future__ import annotations

import re
import threading
import urllib.parse

import pytest

from purepcp.series.load import ArchiveLoader
from purepcp.series.read import SeriesReader
from purepcp.series.store import Store, StoreConfig
from tests.support.pmproxy_servers import our_pmproxy
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_archives import write_mixed
from tests.support.series_reference import (
    load_archive,
    pcp_pmproxy_series,
    qa_archive,
    require_pcp_series,
)

LOAD = "7d3d0a6b2f4b1a8c2cbcb2a4e1f36d7e0b3c5a11"  # (an id no archive has)
SAMPLE_RAPID = "538f06a548cae2d8a47107eea9a8c105ccf602d8"  # sample-labels' sample.rapid
LOAD_AVG = "fecd5a4b4c6e1273eaa001287a6dd57b7bbd19f7"  # proc's kernel.all.load
PROC_SOURCE = "2cd6a38f9339f2dd1f0b4775bda89a9e7244def6"


def q(expr: str) -> str:
    return urllib.parse.quote(expr, safe="")


def query(expr: str) -> str:
    return "/series/query?expr=" + q(expr)


#: grafana-pcp's Valkey data source calls, then the rest of pmwebapi(3)'s /series/
GRAFANA = [
    "/series/ping",
    query("kernel.all.load"),
    query('kernel.all.load{hostname == "bozo-laptop"}'),
    f"/series/metrics?series={LOAD_AVG},{SAMPLE_RAPID}",
    f"/series/metrics?match={q('kernel.all.*')}",
    f"/series/descs?series={LOAD_AVG},{SAMPLE_RAPID}",
    f"/series/instances?series={LOAD_AVG}",
    f"/series/labels?series={SAMPLE_RAPID}",
    f"/series/labels?match={q('h*')}",
    "/series/labels?names=hostname,agent",
    f"/series/values?series={LOAD_AVG}&start=1317633023&finish=1317633025&interval=1",
]
OTHERS = [
    "/series/labels",
    "/series/labels?name=role",
    "/series/metrics",
    "/series/instances",
    "/series/instances?match=1*",
    f"/series/sources?source={PROC_SOURCE}",
    "/series/sources?match=*",
    f"/series/values?series={LOAD_AVG}",
    f"/series/values?series={LOAD_AVG}&samples=3",
    f"/series/values?series={LOAD_AVG},{SAMPLE_RAPID}&samples=2&client=grafana",
    f"/series/values?series={LOAD}",
    "/series/values?series=zz",
    "/series/values",
    "/series/descs",
    "/series/nosuch",
    f"/series/descs?series={LOAD}",
    query("kernel.all.load[samples:2]"),
    query('sample.*{role:"test*"}'),
    query('{hostname=="shard" || hostname=="bozo-laptop"}'),
    query('kernel.all.load{instance.name=="1 minute"}[samples:1]'),
    query("bad{"),
    query("nosuch.metric"),
    query("kernel.all.load") + "&client=me",
    query("kernel.all.load[start:0, samples:2]"),
    query("rate(kernel.all.pswitch[samples:3])"),
    query("rate(kernel.all.pswitch)"),
    query("sum(kernel.all.load[samples:2])"),
    query('rescale(kernel.all.pswitch[samples:2], "count x 10^3")'),
    query("kernel.all.load[samples:1] + kernel.all.load[samples:1]"),
    # (queries that crash PCP 6.0.3's pmproxy, such as rate() of an instant metric over
    # a window, are in test_series_functions.py, with the answer PCP means to give)
    # (rate(kernel.all.pswitch)'s id: values of an expression are worked out again)
    "/series/values?series=79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71&samples=3",
    # (a parameter given empty: PCP's series servlet refuses the URL, QA 1601)
    "/series/query?expr=",
    "/series/query?expr=&client=me",
    "/series/descs?series=",
    "/series/instances?series=",
    "/series/metrics?series=",
    "/series/labels?series=",
    "/series/labels?names=",
    "/series/values?series=",
    "/series/sources?source=",
]


def _same_page(body: bytes) -> bytes:
    """An HTML error page without the server's version line, which says whose it is."""
    return re.sub(rb"pmproxy/[0-9.]+", b"pmproxy/V", body)


@pytest.fixture(scope="module")
def proxies(tmp_path_factory):
    """A key server PCP's pmseries loaded proc and sample-labels into, and both pmproxies
    answering from it."""
    require_redis()
    require_pcp_series()
    tmp = tmp_path_factory.mktemp("rest")
    archives = [qa_archive("proc"), qa_archive("sample-labels")]
    with redis_server(tmp / "redis") as server:
        for archive in archives:
            load_archive(archive, server.port, tmp)
        conf = tmp / "ours.conf"
        conf.write_text(f"[redis]\nservers = 127.0.0.1:{server.port}\n")
        with (
            pcp_pmproxy_series(tmp / "pcp", server.port) as theirs,
            our_pmproxy("localhost", tmp / "ours", "-c", str(conf)) as ours,
        ):
            yield theirs, ours


@pytest.mark.interop
@pytest.mark.parametrize("path", GRAFANA + OTHERS)
def test_answers_are_pcps(path, proxies):
    theirs, ours = proxies
    want = theirs.get(path)
    got = ours.get(path)
    assert (got[0], got[1], _same_page(got[2])) == (want[0], want[1], _same_page(want[2]))


#: /series/values windows in PCP's time forms, good and bad (ours answered some with 500)
WINDOWS = [
    "start=-2000second", "start=-2000s", "start=abc", "finish=-5min", "interval=xyz",
    "samples=-1", "start=1e400", "samples=abc", "start=@10:00", "zone=Nowhere/X", "offset=x",
    "finish=xyz", "end=xyz", "begin=xyz", "delta=xyz", "samples=99999999999", "samples=",
    "samples=+2", "samples=%202", "samples=2%20", "count=x", "align=x", "range=x",
    "start=1317633024", "start=1317633024.5&samples=1", "start=@", "start=-", "start=",
    "finish=", "interval=", "range=", "offset=", "range=100000000000",
    "start=1960-01-01%2000:00:00", "finish=1%20hour%20ago", "start=2011-10-03&finish=2011-10-04",
    "start=1317633023&finish=1317633024&interval=0.5s", "interval=-1", "samples=3&interval=1",
    "offset=1&samples=2", "start=now", "finish=now",
]  # fmt: skip


@pytest.mark.interop
@pytest.mark.parametrize("window", WINDOWS)
def test_values_windows_are_pcps(window, proxies):
    theirs, ours = proxies
    path = f"/series/values?series={LOAD_AVG}&{window}"
    assert ours.get(path) == theirs.get(path)


@pytest.mark.interop
def test_post_form_is_a_get(proxies):
    """grafana-pcp POSTs a form when the URL would be too long."""
    theirs, ours = proxies
    form = f"series={LOAD_AVG}&samples=2".encode()
    assert ours.get("/series/values", form) == theirs.get("/series/values", form)


@pytest.mark.interop
@pytest.mark.parametrize("expr", ["kernel.all.load + kernel.all.load", "floor(kernel.all.load)"])
def test_instances_of_an_expression_are_pcps(expr, proxies):
    """An expression's id has no instances stored: PCP evaluates it again and reports the
    instances of its values as the expression's (ours answered [], QA 1773 and 1874).
    (PCP 6.0.3's pmproxy dies answering this for rate(): not compared.)"""
    theirs, ours = proxies
    status, sids = ours.json(query(expr))
    assert status == 200 and len(sids) == 1
    path = f"/series/instances?series={sids[0]}"
    want_status, want = theirs.json(path)
    got_status, got = ours.json(path)
    key = lambda i: (i["source"], i["id"])  # noqa: E731  (PCP's replies come as Redis's do)
    assert (got_status, sorted(got, key=key)) == (want_status, sorted(want, key=key))
    assert {i["name"] for i in got} == {"1 minute", "5 minute", "15 minute"}
    assert {i["series"] for i in got} == {sids[0]}


def test_query_during_a_load_is_consistent(tmp_path):
    """Queries while a load runs find only series they can describe, and values that are
    the stored ones (a load writes a series' description before the sets that find it)."""
    require_redis()
    base = str(tmp_path / "mixed")
    write_mixed(base)
    with redis_server(tmp_path / "redis") as server:
        config = StoreConfig(servers=(("127.0.0.1", server.port),))
        done = threading.Event()

        def load() -> None:
            try:
                for _ in range(20):  # (again and again: later loads find everything stored)
                    with Store(config) as store:
                        ArchiveLoader(store, base).run()
            finally:
                done.set()

        worker = threading.Thread(target=load)
        worker.start()
        checked = 0
        try:
            with Store(config) as store:
                reader = SeriesReader(store.client)
                while not done.is_set() or checked == 0:
                    for sid in [s.hex() for s in reader.by_name("metric.name", "test.inst")]:
                        desc = reader.descs([sid])[0]
                        assert desc.pmid == "245.0.1" and desc.source
                        for inst in reader.instances([sid]):
                            assert inst.name in "abcd"
                        checked += 1
        finally:
            worker.join()
        assert checked


def test_load_call_loads_an_archive(tmp_path):
    """/series/load?expr={source.path:"..."} loads as pmseries --load does (PCP 6.0.3's
    fails with an illegal context); a bad request is one JSON message."""
    require_redis()
    base = str(tmp_path / "mixed")
    write_mixed(base)
    with redis_server(tmp_path / "redis") as server:
        conf = tmp_path / "ours.conf"
        conf.write_text(
            f"[redis]\nservers = 127.0.0.1:{server.port}\n[pmseries]\nload.paths = {tmp_path}\n"
        )
        with our_pmproxy("localhost", tmp_path / "ours", "-c", str(conf)) as ours:
            expr = q('{source.path: "' + base + '"}')
            assert ours.get(f"/series/load?expr={expr}")[2] == b'{"success":true}\r\n'
            status, body = ours.json(f"/series/query?expr={q('test.ctr[samples:1]')}")
            assert status == 200 and body[0]["value"] == "4000"
            no_path = q('{metric.name: "x"}')
            status, _, text = ours.get(f"/series/load?expr={no_path}")
            assert status == 400
            assert text == b'{"message":"found no context to load","success":false}\r\n'
            status, _, text = ours.get(f"/series/load?expr={q(str(tmp_path / 'nosuch'))}")
            assert status == 400 and b"No such file or directory" in text
