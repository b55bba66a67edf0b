"""Our pmproxy against PCP 6.0.3's, both in front of the same (our) pmcd.

Each side gets its own context and the same calls: those grafana-pcp's PCP Vector data
source makes, and the errors it matches on.  The answers must agree in HTTP status,
content type, JSON keys and types, and values, except what changes with time (context
numbers, timestamps, the values of metrics that move).  /metrics from both must parse,
with prometheus-client's parser, into the same families, types and label sets.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.client_servers import ours_serving
from tests.support.pmproxy_servers import our_pmproxy, reference_pmproxy, require_reference_pmproxy

pytestmark = pytest.mark.interop

#: metrics whose values stay put while the test runs
STEADY = {"hinv.ncpu", "kernel.uname.release", "hinv.pagesize", "web.ncpu"}


@pytest.fixture(scope="module")
def proxies(tmp_path_factory):
    require_reference_pmproxy()
    tmp = tmp_path_factory.mktemp("pmproxy")
    (tmp / "pmcd").mkdir()
    with ours_serving(tmp / "pmcd") as pmcd:
        port = int(pmcd.host.rsplit(":", 1)[1])
        with (
            reference_pmproxy(port, tmp / "theirs") as theirs,
            our_pmproxy(pmcd.host, tmp / "ours") as ours,
        ):
            yield theirs, ours, pmcd.host


def normal(value: Any, key: str = "", metric: str = "") -> Any:
    """VALUE with what changes with time replaced by its type, instance lists in order."""
    if key in ("context", "timestamp"):
        return type(value).__name__
    if isinstance(value, dict):
        name = value.get("name", metric) if isinstance(value.get("name"), str) else metric
        return {k: normal(v, k, name) for k, v in value.items()}
    if isinstance(value, list):
        items = [normal(v, key, metric) for v in value]
        if key == "instances":
            items.sort(key=lambda v: v.get("instance") if isinstance(v, dict) else 0)
        return items
    if key == "value" and metric not in STEADY:
        return "number" if isinstance(value, int | float) else type(value).__name__
    return value


def html(body: bytes) -> str:
    return re.sub(r"pmproxy/[0-9.]+", "pmproxy/VERSION", body.decode())


def answer(proxy, path: str, data: bytes | None = None) -> tuple[int, str, Any]:
    status, ctype, body = proxy.get(path, data)
    ctype = ctype.split(";")[0]
    if ctype == "application/json":
        return status, ctype, normal(json.loads(body))
    return status, ctype, html(body)


def context(proxy, host: str) -> int:
    status, body = proxy.json(f"/pmapi/context?hostspec={host}&polltimeout=60")
    assert status == 200, body
    return body["context"]  # type: ignore[index]


# the calls, in the order grafana-pcp (and a curious user) makes them; {c} is the context
CALLS = [
    "/pmapi/{c}/metric?names=kernel.all.load,hinv.ncpu,simple.color,kernel.uname.release",
    "/pmapi/{c}/metric?names=no.such.metric",
    "/pmapi/{c}/metric?names=kernel.all.load,no.such.metric",
    "/pmapi/{c}/metric?prefix=kernel.all.cpu",
    "/pmapi/{c}/metric?names=simple",
    "/pmapi/{c}/indom?name=kernel.all.load",
    "/pmapi/{c}/indom?name=simple.color&iname=r*,b*&match=glob",
    "/pmapi/{c}/indom?name=simple.color&instance=1,2",
    "/pmapi/{c}/indom?indom=60.2",
    "/pmapi/{c}/indom?name=hinv.ncpu",
    "/pmapi/{c}/indom?name=no.such.metric",
    "/pmapi/{c}/indom?name=kernel.all.load&match=fuzzy",
    "/pmapi/{c}/fetch?names=kernel.all.load,hinv.ncpu,kernel.uname.release,no.such.metric",
    "/pmapi/{c}/fetch?names=simple.color,kernel.percpu.cpu.user",
    "/pmapi/{c}/fetch?pmids=60.0.32,60.2.0",
    "/pmapi/{c}/fetch?pmid=60.0.32",
    "/pmapi/{c}/fetch?name=no.such.metric",
    "/pmapi/{c}/fetch?names=kernel.all.load&client=grafana-7",
    "/pmapi/{c}/children?prefix=kernel.all",
    "/pmapi/{c}/children?prefix=no.such",
    "/pmapi/{c}/children",
    "/pmapi/{c}/store?name=simple.numfetch&value=0",
    "/pmapi/{c}/store?name=simple.color&value=42&iname=green",
    "/pmapi/{c}/store?name=hinv.ncpu&value=3",
    "/pmapi/{c}/store?name=no.such.metric&value=3",
    "/pmapi/{c}/store?name=simple.numfetch&value=abc",
    "/pmapi/{c}/store?name=simple.numfetch&value=99999999999",
    "/pmapi/{c}/derive?name=web.ncpu&expr=hinv.ncpu*2",
    "/pmapi/{c}/derive?name=web.ncpu&expr=hinv.ncpu*2",
    "/pmapi/{c}/derive?name=web.bad&expr=hinv.ncpu%20hinv.ncpu",
    "/pmapi/{c}/derive?name=web.sem&expr=hinv.ncpu%2Bkernel.uname.release",
    "/pmapi/{c}/derive?name=web.x",
    "/pmapi/{c}/fetch?names=web.ncpu",
    "/pmapi/{c}/metric?names=web.ncpu",
    "/pmapi/{c}/profile?expr=del&name=simple.color",
    "/pmapi/{c}/profile?expr=add&name=simple.color&iname=red",
    "/pmapi/{c}/fetch?names=simple.color",
    "/pmapi/{c}/profile?expr=add&name=hinv.ncpu",
    "/pmapi/{c}/profile?expr=maybe&name=simple.color",
    "/pmapi/{c}/_fetch?names=hinv.ncpu",
    "/pmapi/{c}/_metric?names=hinv.ncpu",
    "/pmapi/{c}/_indom?name=kernel.all.load",
    "/pmapi/{c}/fetch?names=hinv.ncpu&context={c}",
    "/pmapi/4242/fetch?names=hinv.ncpu",
    "/pmapi/{c}/fetch",
    "/pmapi/{c}/indom",
    "/pmapi/nosuch",
    "/nosuch",
    "/pmapi/context?hostspec=127.0.0.1:1",
    "/pmapi/fetch?names=hinv.ncpu&polltimeout=soon",
    "/pmapi/fetch?names=hinv.ncpu,kernel.uname.release&hostspec={h}",
    "/metrics?names=no.such.metric",
    # (answered 200 by ours until a comparison of 1,500 generated requests found them)
    "/pmapi/{c}/fetch?names=",
    "/pmapi/{c}/fetch?pmids=",
    "/pmapi/{c}/fetch?pmid=",
    "/pmapi/{c}/fetch?pmids=%00",
    "/pmapi/{c}/_fetch?pmids=",
    "/pmapi/{c}/fetch?names=,,",
    "/metrics?polltimeout=x",
    "/pmapi/context?polltimeout=1_0",
]


def test_every_call_answers_as_pcps_pmproxy_does(proxies):
    theirs, ours, host = proxies
    ctx = {theirs: context(theirs, host), ours: context(ours, host)}
    for call in CALLS:
        got = {side: answer(side, call.format(c=ctx[side], h=host)) for side in (theirs, ours)}
        assert got[ours] == got[theirs], call


def test_a_derived_metric_configuration_posted_answers_alike(proxies):
    theirs, ours, host = proxies
    config = b"# two metrics\nweb.twice = hinv.ncpu*2\nweb.plus = hinv.ncpu+1\n"
    for side in (theirs, ours):
        c = context(side, host)
        assert answer(side, f"/pmapi/{c}/derive", config) == (
            200,
            "application/json",
            {"context": "int", "success": True},
        )
        _status, body = side.json(f"/pmapi/{c}/fetch?names=web.twice,web.plus")
        ncpu = side.json(f"/pmapi/{c}/fetch?names=hinv.ncpu")[1]["values"][0]["instances"][0]
        values = [v["instances"][0]["value"] for v in body["values"]]  # type: ignore[index]
        assert values == [ncpu["value"] * 2, ncpu["value"] + 1]
    incomplete = b"web.half = "
    assert answer(ours, "/pmapi/derive", incomplete) == answer(theirs, "/pmapi/derive", incomplete)


def families(text: str, steady_labels: bool) -> dict[str, tuple[str, frozenset]]:
    """{family: (type, label sets)}; label names only where instances come and go."""
    out = {}
    for family in text_string_to_metric_families(text):
        sets = frozenset(
            frozenset(s.labels.items() if steady_labels else s.labels) for s in family.samples
        )
        out[family.name] = (family.type, sets)
    return out


def test_metrics_parse_into_the_same_families_types_and_labels(proxies):
    theirs, ours, _host = proxies
    names = "kernel.all,hinv,mem,simple,disk.dev,network.interface.in,pmcd.agent"
    texts = {}
    for side in (theirs, ours):
        status, ctype, body = side.get(f"/metrics?names={names}")
        assert (status, ctype.split(";")[0]) == (200, "text/plain")
        texts[side] = body.decode()
    assert families(texts[ours], True) == families(texts[theirs], True)
    # every metric of the namespace: the same families and types, the same label names
    # (instances of processes come and go between the two scrapes)
    whole = {side: side.get("/metrics")[2].decode() for side in (theirs, ours)}
    assert families(whole[ours], False) == families(whole[theirs], False)
    assert "# PCP5 kernel.all.load 60.2.0 float 60.2 instant none" in whole[ours]
