"""pmproxy against careless and hostile requests: /series/load only under
[pmseries] load.paths, stores only from allowed addresses, bounded work per query
(limit.terms, limit.series, limit.seconds), and /series/values windows read as PCP 6.0.3
reads them - a 400 with PCP's message, never a 500."""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.parse

import pytest

from purepcp.pmproxy.access import WriteAccess
from purepcp.pmproxy.groups import MAX_POLLTIMEOUT, WebGroups, poll_timeout
from purepcp.pmproxy.series import window_of
from purepcp.pmproxy.webapi import Request, WebAPI
from purepcp.pmproxy.webrecords import WebError
from purepcp.series.limits import Budget, QueryLimitError, QueryLimits, count_terms
from purepcp.series.load import ArchiveLoader
from purepcp.series.parse import parse
from purepcp.series.query import run_query
from purepcp.series.read import SeriesError, SeriesReader
from purepcp.series.store import Store, StoreConfig
from tests.support.pmproxy_servers import get, our_pmproxy
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_archives import write_mixed

NOW = 1_800_000_000 * 10**9  # (a fixed clock for the window tests)


def q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A key server with our mixed archive loaded, and our pmproxy over it allowing loads
    from one directory, 64 terms and 12 series a query."""
    require_redis()
    tmp = tmp_path_factory.mktemp("guards")
    allowed = tmp / "archives"
    allowed.mkdir()
    base = str(allowed / "mixed")
    write_mixed(base)
    with redis_server(tmp / "redis") as server:
        config = StoreConfig(servers=(("127.0.0.1", server.port),))
        with Store(config) as store:
            ArchiveLoader(store, base).run()
        conf = tmp / "pmproxy.conf"
        conf.write_text(
            f"[redis]\nservers = 127.0.0.1:{server.port}\n"
            f"[pmseries]\nload.paths = {allowed}\nlimit.terms = 64\nlimit.series = 12\n"
        )
        with our_pmproxy("localhost", tmp / "ours", "-c", str(conf)) as proxy:
            yield proxy, config, allowed


def _message(proxy, path: str, data: bytes | None = None) -> tuple[int, str]:
    status, _, body = proxy.get(path, data)
    return status, json.loads(body).get("message", "") if body.startswith(b"{") else body.decode()


# -- /series/values windows, as pmSeriesValues reads them ---------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"start": "-2000s"},
            "Cannot parse time start with __pmParseHighResTime:\n-2000s\n^ -- unexpected value\n",
        ),
        (
            {"finish": "xyz"},
            "Cannot parse time end with __pmParseHighResTime:\nxyz\n^ -- unexpected value\n",
        ),
        (
            {"interval": ""},
            "Cannot parse time delta with pmParseHighResInterval:\n\n"
            "^ -- Null or empty specification\n",
        ),
        (
            {"range": "x"},
            "Cannot parse time range with pmParseHighResInterval:\nx\n^ -- unexpected value\n",
        ),
        ({"samples": "2 "}, "Invalid sample count requested - 2 "),
        ({"count": "x"}, "Invalid sample count requested - x"),
        ({"offset": "x"}, "Invalid sample offset requested - x"),
        (
            {"start": "1e400"},
            "Cannot parse time start with __pmParseHighResTime:\n1e400\n^ -- unexpected value\n",
        ),
    ],
)
def test_a_window_pcp_refuses_is_its_message(params, message):
    with pytest.raises(SeriesError) as caught:
        window_of(params, now=NOW)
    assert str(caught.value) == message


def test_windows_pcp_reads():
    """-2000second is read against the clock; a bare number is seconds since the epoch;
    strtoul's counts; a range before the epoch selects nothing; no window is the newest."""
    assert window_of({"start": "-2000second"}, now=NOW).start == NOW - 2000 * 10**9
    assert window_of({"start": "1317633024.5"}, now=NOW).start == 1317633024_500_000_000
    assert window_of({"samples": "-1"}, now=NOW).count == 2**32 - 1
    assert window_of({"samples": " +2"}, now=NOW).count == 2
    assert window_of({"samples": ""}, now=NOW).count == 0
    empty = window_of({"range": "100000000000"}, now=NOW)
    assert (empty.start, empty.end) == (1, 1)
    newest = window_of({}, now=NOW)
    assert (newest.count, newest.count_only) == (1, True)
    assert window_of({"zone": "Nowhere/X"}, now=NOW).count == 1


def test_bad_windows_are_400_over_http(served):
    proxy, _, _ = served
    sid = _sid(proxy, "test.ctr")
    for params in ("start=-2000s", "start=abc", "interval=xyz", "samples=abc", "start=1e400"):
        status, message = _message(proxy, f"/series/values?series={sid}&{params}")
        assert status == 400 and message.startswith(("Cannot parse", "Invalid sample")), params
    status, _, body = proxy.get(f"/series/values?series={sid}&start=-2000second")
    assert (status, body) == (200, b"[]\r\n")


def _sid(proxy, name: str) -> str:
    status, _, body = proxy.get(f"/series/query?expr={q(name)}")
    assert status == 200, body
    return json.loads(body)[0]


# -- bounded work -------------------------------------------------------------------------


def test_deep_rates_and_wide_products_are_answers_not_500s(served):
    """rate() twelve deep took pmUnits' time dimension past -8; a product of nine
    space-dimensioned metrics its space dimension past 7: PCP's 4-bit fields wrap."""
    proxy, _, _ = served
    deep = "rate(" * 12 + "test.ctr[samples:3]" + ")" * 12
    status, message = _message(proxy, f"/series/query?expr={q(deep)}")
    assert status == 400 and message.startswith("Can't rate convert"), message
    wide = "*".join(["test.dbl[samples:2]"] * 9)
    status, _, body = proxy.get(f"/series/query?expr={q(wide)}")
    assert status == 200, body


def test_too_many_terms_is_400_before_any_work(served):
    proxy, _, _ = served
    for n in (40, 2000):  # (2000: a chain that once ran out of Python's stack)
        body = ("expr=" + q("+".join(["test.dbl[samples:2]"] * n))).encode()
        status, message = _message(proxy, "/series/query", body)
        assert status == 400, message
        assert message == (
            f"query has {2 * n - 1} terms, more than this pmproxy allows (64, "
            "[pmseries] limit.terms)"
        )
    status, _, _ = proxy.get(f"/series/query?expr={q('+'.join(['test.dbl[samples:2]'] * 4))}")
    assert status == 200
    assert "limit.terms" in (proxy.tmp / "pmproxy.log").read_text()


def test_too_many_series_is_400(served):
    proxy, _, _ = served
    status, _, _ = proxy.get(f"/series/query?expr={q('test.*')}")
    assert status == 200  # (5 series)
    status, message = _message(proxy, f"/series/query?expr={q('test.*+test.*+test.*')}")
    assert status == 400 and message == (
        "query selects more than 12 series, more than this pmproxy allows ([pmseries] limit.series)"
    )
    sids = ",".join(["0" * 40] * 13)
    status, message = _message(proxy, f"/series/values?series={sids}")
    assert status == 400 and "limit.series" in message


def test_a_query_out_of_time_is_503(served):
    """limit.seconds, on a clock that moves a minute each time it is read."""
    _, config, _ = served
    ticks = iter(range(0, 10**6, 60))
    budget = Budget(QueryLimits(seconds=10), clock=lambda: next(ticks))
    with Store(config) as store, pytest.raises(QueryLimitError) as caught:
        run_query(SeriesReader(store.client), "rate(test.ctr[samples:3])", budget=budget)
    assert caught.value.status == 503 and "limit.seconds" in str(caught.value)


def test_terms_are_counted_without_recursion():
    chain = parse("+".join(["a.b"] * 5000))
    assert count_terms(chain.expr) == 9999
    assert count_terms(parse('rate(a.b{x=="y"}[samples:2])').expr) == 3


def test_pmseries_itself_runs_unbounded(served):
    """The command's user is on the host already: no limits, and a long chain works."""
    _, config, _ = served
    with Store(config) as store:
        answer = run_query(SeriesReader(store.client), "+".join(["test.dbl[samples:2]"] * 600))
    assert answer.values


# -- /series/load only under load.paths -----------------------------------------------------


def test_load_is_refused_outside_load_paths(served, tmp_path):
    proxy, _, allowed = served
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_mixed(str(elsewhere / "mixed"))
    os.symlink(elsewhere, allowed / "link")
    for path in (elsewhere / "mixed", allowed / "link" / "mixed", allowed / ".." / "x"):
        expr = q('{source.path: "' + str(path) + '"}')
        status, message = _message(proxy, f"/series/load?expr={expr}")
        assert status == 403, path
        assert message == f"{path} is not under a directory in [pmseries] load.paths"
    expr = q('{source.path: "' + str(allowed / "mixed") + '"}')
    assert proxy.get(f"/series/load?expr={expr}")[:1] == (200,)
    log = (proxy.tmp / "pmproxy.log").read_text()
    assert f"{elsewhere / 'mixed'} is not under a directory" in log


def test_load_is_off_without_load_paths(tmp_path):
    require_redis()
    write_mixed(str(tmp_path / "mixed"))
    with redis_server(tmp_path / "redis") as server:
        conf = tmp_path / "ours.conf"
        conf.write_text(f"[redis]\nservers = 127.0.0.1:{server.port}\n")
        with our_pmproxy("localhost", tmp_path / "ours", "-c", str(conf)) as proxy:
            expr = q('{source.path: "' + str(tmp_path / "mixed") + '"}')
            status, message = _message(proxy, f"/series/load?expr={expr}")
    assert status == 403
    assert message == "loading archives is off in this pmproxy ([pmseries] load.paths)"


# -- stores only from allowed addresses -------------------------------------------------------


def test_write_access_by_address():
    default = WriteAccess()
    assert default.allows("127.0.0.1") and default.allows("::1") and default.allows("")
    assert default.allows("::ffff:127.0.0.5")
    assert not default.allows("192.0.2.7") and not default.allows("?")
    lan = WriteAccess.from_text("localhost, 10.0.0.0/8 fd00::/8")
    assert lan.allows("10.1.2.3") and lan.allows("fd00::2") and lan.allows("127.0.0.1")
    assert not lan.allows("192.0.2.7")
    assert WriteAccess.from_text("*").allows("192.0.2.7")
    with pytest.raises(ValueError, match=re.escape("'10.0.0.300' is not an address or network")):
        WriteAccess.from_text("10.0.0.300")


def _unreachable(hostspec: str):
    raise AssertionError(f"a refused store must not reach pmcd ({hostspec})")


@pytest.mark.trio
async def test_a_store_from_another_host_is_refused_before_pmcd():
    api = WebAPI(WebGroups("localhost", connect=_unreachable))
    params = {"name": "simple.numfetch", "value": "7"}
    reply = await api.handle(Request("GET", "/pmapi/store", params, peer="192.0.2.7"))
    assert reply.status == 403
    assert json.loads(reply.body) == {
        "message": "failed to store value to metric simple.numfetch: "
        "No permission to perform requested operation",
        "success": False,
    }


def _host_address() -> str | None:
    """This host's first address that is not a loopback one, if it has one."""
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("192.0.2.1", 9))  # (no packet is sent: this picks the route's address)
        address = probe.getsockname()[0]
        probe.close()
    except OSError:
        return None
    return None if address.startswith("127.") else address


def test_a_store_over_the_network_is_refused_and_over_loopback_is_not(tmp_path):
    """Our pmproxy on loopback and on this host's network address: the same store request
    is refused (403, one log line) from the network address and reaches pmcd (which
    answers for itself) over loopback."""
    address = _host_address()
    if address is None:
        pytest.skip("this host has no network address but loopback to connect from")
    with our_pmproxy("localhost:1", tmp_path / "ours", "-i", address) as proxy:
        log = (proxy.tmp / "pmproxy.log").read_text()  # (its stderr is its log)
        found = re.search(rf"^  ok +\d+ +(\d+) inet +{re.escape(address)}$", log, re.M)
        assert found is not None
        target = "/pmapi/store?name=simple.numfetch&value=7"
        status, _, body = get(f"http://{address}:{found.group(1)}{target}")
        assert status == 403 and b"No permission" in body
        status, _, body = proxy.get(target)
        assert status != 403 and b"No permission" not in body  # (pmcd at :1 is not there)
        assert (
            "refused a store to simple.numfetch from " + address
            in (proxy.tmp / "pmproxy.log").read_text()
        )


def test_a_load_path_with_a_nul_is_read_as_c_reads_it(served):
    """Found by the fuzz: a NUL in /series/load's expression was a 500 (Python's file calls
    refuse it); PCP reads the expression as a C string, up to the NUL."""
    proxy, _, allowed = served
    expr = q('{source.path: "' + str(allowed / "mixed") + '"}\x00junk')
    assert proxy.get(f"/series/load?expr={expr}")[:1] == (200,)
    expr = q("/etc/passwd\x00" + str(allowed / "mixed"))
    assert _message(proxy, f"/series/load?expr={expr}") == (
        403,
        "/etc/passwd is not under a directory in [pmseries] load.paths",
    )


@pytest.mark.trio
async def test_a_hostspec_that_cannot_be_a_host_name_is_an_error_not_a_500():
    """Found by the fuzz: a DNS label over 63 characters made Python's resolver raise
    UnicodeError, which reached pmproxy as a 500; it is a host that does not resolve."""
    api = WebAPI(WebGroups("localhost"))
    reply = await api.handle(Request("GET", "/pmapi/context", {"hostspec": "a" * 70 + ".x"}))
    assert reply.status == 400
    assert json.loads(reply.body)["message"].startswith("cannot connect to PMCD")


def test_polltimeout_is_read_as_pcp_reads_it_and_kept_finite():
    """A context asked to live for ever (inf) lived for ever; PCP keeps milliseconds in an
    unsigned int.  "1_0" was ten seconds to Python's float(); to strtod it is an error."""
    assert poll_timeout({}, 5.0) == 5.0
    assert poll_timeout({"polltimeout": "2.5"}, 5.0) == 2.5
    assert poll_timeout({"polltimeout": "inf"}, 5.0) == MAX_POLLTIMEOUT
    assert poll_timeout({"polltimeout": "1e300"}, 5.0) == MAX_POLLTIMEOUT
    assert poll_timeout({"polltimeout": "nan"}, 5.0) == 0.0
    assert poll_timeout({"polltimeout": "-3"}, 5.0) == 0.0
    assert poll_timeout({"polltimeout": ""}, 5.0) == 0.0
    for bad in ("1_0", "5x", " 5 ", "soon"):
        with pytest.raises(WebError, match="invalid timeout requested in polltime"):
            poll_timeout({"polltimeout": bad}, 5.0)
