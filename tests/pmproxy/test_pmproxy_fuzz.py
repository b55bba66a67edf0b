"""No request reaches a 500: tens of thousands of generated /pmapi/* and /series/*
requests (known parameters with hostile values, unknown ones, odd paths and methods)
answered by pmproxy's request handlers over our pmcd and a key server holding our
mixed archive.  A handler that raises is what pmproxy answers with 500."""

from __future__ import annotations

import json
import random
import string
import time

import pytest
import trio

from purepcp.pmproxy.groups import WebGroups
from purepcp.pmproxy.series import SeriesAPI
from purepcp.pmproxy.webapi import Reply, Request, WebAPI
from purepcp.series.limits import QueryLimits
from purepcp.series.load import ArchiveLoader
from purepcp.series.store import Store, StoreConfig
from tests.support.client_servers import ours_serving
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_archives import write_mixed

#: how many requests the sweep sends (tens of thousands, as the issue asks)
CASES = 20_000
SEED = 38

PATHS = [
    "/pmapi/context", "/pmapi/metric", "/pmapi/fetch", "/pmapi/indom", "/pmapi/profile",
    "/pmapi/store", "/pmapi/derive", "/pmapi/children", "/pmapi/_fetch", "/pmapi/_metric",
    "/metrics", "/series/query", "/series/values", "/series/descs", "/series/instances",
    "/series/labels", "/series/metrics", "/series/sources", "/series/load", "/series/ping",
    "/pmapi/", "/series/", "/pmapi/1/fetch", "/pmapi/x/metric", "/nowhere",
]  # fmt: skip
PARAMS = [
    "names", "name", "pmid", "pmids", "indom", "instance", "iname", "expr", "value", "match",
    "context", "hostspec", "hostname", "polltimeout", "client", "series", "source", "start",
    "begin", "finish", "end", "interval", "delta", "samples", "count", "range", "offset",
    "align", "zone", "times", "filter", "prefix", "type", "children", "mode",
]  # fmt: skip
WORDS = [
    "", "0", "-1", "1", "4294967295", "18446744073709551616", "1e400", "nan", "-inf", "0x10",
    "simple.numfetch", "kernel.all.load", "hinv.ncpu", "sample.*", "test.ctr", "test.*",
    "60.2.0", "253.0.0", "60.2", "PM_INDOM_NULL", "1.2.3.4.5", "abc", "-2000second", "-2000s",
    "@10:00", "now", "yesterday", "2011-10-03", "1 hour ago", "10s", "1m", "-5min",
    "rate(test.ctr)", "rate(" * 30 + "test.ctr" + ")" * 30, "+".join(["test.dbl"] * 40),
    "test.ctr[samples:2]", 'test.inst{instance.name=="a"}', "{", "}", "[", "]", "(", ")",
    '{source.path: "/etc/passwd"}', '{source.path: "../../../etc"}', "\x00", "\u00e9\u4e2d",
    "%", "%%", "%00", "a" * 5000, ",,,", "a,b,,c", "0" * 40, "f" * 40, "g" * 40,
    "localhost", "localhost:1", "local:", "unix:/nonexistent", "pcp://x",
    "sum(test.inst)", "rescale(test.ctr,\"kbyte\")", "abs(test.dbl)", "topk(test.inst, 2)",
    "test.dbl * test.dbl / 0", "nth_percentile(test.inst, 200)", "1 + 1", "-", "/",
]  # fmt: skip


def value(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(WORDS)
    if roll < 0.8:  # two words run together, as a careless client glues them
        return rng.choice(WORDS) + rng.choice(["", ",", " ", ":", "[", "{"]) + rng.choice(WORDS)
    alphabet = string.printable + "\u00e9\u2603\x00\x7f"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))


def request(rng: random.Random, contexts: list[str]) -> Request:
    path = rng.choice(PATHS)
    if rng.random() < 0.05:
        path += rng.choice(["/", "x", "/fetch", "//", "%2e%2e"])
    params = {rng.choice(PARAMS): value(rng) for _ in range(rng.randrange(0, 6))}
    if path.startswith("/pmapi") and rng.random() < 0.97:
        # (mostly on contexts that exist: a new context per request would be a flood)
        params["context"] = rng.choice(contexts) if rng.random() < 0.9 else value(rng)
    if "metric" in path and rng.random() < 0.97:
        # (a /pmapi/metric naming nothing describes every metric pmcd has: seconds each)
        params.setdefault(rng.choice(["names", "name", "prefix"]), value(rng))
    method = rng.choice(["GET"] * 8 + ["POST", "HEAD", "OPTIONS", "PUT"])
    body = value(rng).encode("utf-8", "surrogatepass") if method == "POST" else b""
    return Request(method, path, params, body, {})


@pytest.mark.slow  # 20,000 requests, about a minute
def test_no_generated_request_is_a_500(tmp_path):
    require_redis()
    write_mixed(str(tmp_path / "mixed"))
    (tmp_path / "pmcd").mkdir()
    with redis_server(tmp_path / "redis") as server, ours_serving(tmp_path / "pmcd") as pmcd:
        config = StoreConfig(servers=(("127.0.0.1", server.port),))
        with Store(config) as store:
            ArchiveLoader(store, str(tmp_path / "mixed")).run()
        failures, statuses = trio.run(_sweep, pmcd.host, config, tmp_path)
    assert not failures, f"{len(failures)} of {CASES} raised, e.g. {failures[:3]}"
    assert statuses.get(500, 0) == 0
    assert sum(statuses.values()) == CASES


async def _sweep(host: str, config: StoreConfig, tmp) -> tuple[list[str], dict[int, int]]:
    groups = WebGroups(host, timeout=600)
    api = WebAPI(groups)
    series = SeriesAPI(config, QueryLimits(seconds=30), load_paths=(str(tmp),))
    contexts = []
    for _ in range(3):
        reply = await api.handle(Request("GET", "/pmapi/context", {}, b"", {}))
        contexts.append(str(json.loads(reply.body)["context"]))
    rng = random.Random(SEED)
    failures: list[str] = []
    statuses: dict[int, int] = {}
    started = time.monotonic()
    try:
        for n in range(CASES):
            req = request(rng, contexts)
            handler = series.handle if req.path.startswith("/series/") else api.handle
            try:
                reply: Reply = await handler(req)
            except Exception as exc:  # (pmproxy would answer this one with 500)
                failures.append(f"#{n} {req.method} {req.path} {dict(req.params)!r}: {exc!r}")
                continue
            statuses[reply.status] = statuses.get(reply.status, 0) + 1
            if req.path.startswith("/pmapi") and reply.content_type == "application/json":
                # (a /pmapi JSON answer is JSON; /series ones quote text as PCP's
                # sdscatrepr does, \xNN escapes included, which JSON does not have)
                try:
                    json.loads(reply.body or b"null")
                except ValueError as exc:
                    failures.append(f"#{n} {req.path} {dict(req.params)!r}: not JSON: {exc}")
            if n % 1000 == 999:
                groups.sweep()
    finally:
        groups.close()
        series.close()
    print(f"{CASES} requests in {time.monotonic() - started:.1f}s: {sorted(statuses.items())}")
    return failures, statuses
