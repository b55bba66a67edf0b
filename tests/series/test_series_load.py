"""pmseries --load: the identifiers, encodings and keys PCP 6.0.3 writes, checked against
PCP's own loads of the same archives on private Redis servers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import pmID_build, pmInDom_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.units import Units
from purepcp.series import schema
from purepcp.series.ids import expr_id, instance_id, metric_id, source_id, string_id
from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.store import Store, StoreConfig
from tests.support.qa_archives import qa
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_archives import T0, write_mixed
from tests.support.series_dump import differences, dump
from tests.support.series_reference import pcp_pmseries, require_pcp_series

# ------------------------------------------------------------------ identifiers, text


def test_identifiers_are_pcps():
    """The worked examples of docs/series-notes.md, each an id PCP stored."""
    assert source_id('{"hostname":"testhost"}').hex() == "0c0495914fd79d975ca9f9ae58b7e6298b486dd0"
    assert string_id("test.inst").hex() == "862bc08e637008c1b13f8b7e97e4c6f69124d396"
    assert instance_id("a", '{"hostname":"testhost"}').hex() == (
        "5cba3777e8b9a2d665234203fe3f3efd42086760"
    )
    assert expr_id("rate(kernel.all.pswitch)").hex() == ("79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71")
    load = Desc(pmID_build(60, 2, 0), PMType.PM_TYPE_FLOAT, pmInDom_build(60, 2), 3, Units())
    assert metric_id("kernel.all.load", '{"hostname":"bozo-laptop"}', load).hex() == (
        "fecd5a4b4c6e1273eaa001287a6dd57b7bbd19f7"
    )


def test_stream_ids_and_value_text():
    assert schema.stream_id(1_317_633_024_305_845_000) == "1317633024305-845"
    assert schema.stream_id(1_580_167_911_564_018_999) == "1580167911564-18"
    assert schema.stream_ids([1_700_000_000_250_000_000, 5]) == ["1700000000250-0", "0-0"]
    assert schema.timestamp_json("1580167911564-18") == "1580167911564.18"
    assert schema.value_texts(PMType.PM_TYPE_DOUBLE, [0.02, 1e20, 0.0]) == [
        "2.000000e-02",
        "1.000000e+20",
        "0.000000e+00",
    ]
    assert schema.value_texts(PMType.PM_TYPE_U64, [2**64 - 1]) == ["18446744073709551615"]
    said = 'he said "hi"\\ \u00e9'
    assert schema.value_texts(PMType.PM_TYPE_STRING, [said]) == [
        '"he said \\u0022hi\\u0022\\u005C \\uFFFD\\uFFFD"'
    ]
    # a raw payload (bytes after its NUL) loses its last byte, as in PCP
    assert schema.value_texts(PMType.PM_TYPE_STRING, [b"a\0b\0"]) == ['"a\\u0000b"']
    assert schema.value_texts(PMType.PM_TYPE_EVENT, [b"x"]) == ["-21344"]


# --------------------------------------------------------------------------- archives


@pytest.fixture
def servers(tmp_path):
    """Two private key servers: PCP loads into the first, we load into the second."""
    require_redis()
    with redis_server(tmp_path / "a") as a, redis_server(tmp_path / "b") as b:
        yield a, b


def our_load(port: int, path: str, **kw) -> object:
    with Store(StoreConfig(servers=(("127.0.0.1", port),))) as store:
        return ArchiveLoader(store, path, **kw).run()


def clients(servers):
    import redis

    return [redis.Redis(host="127.0.0.1", port=s.port) for s in servers]


def archives(tmp_path: Path) -> dict[str, str]:
    base = str(tmp_path / "mixed")
    write_mixed(base)
    return {"mixed": base}


@pytest.mark.interop
@pytest.mark.parametrize("name", ["mixed", "sample-labels", "proc", "20180127.08.40"])
def test_same_keys_as_pcps_load(name, servers, tmp_path):
    """Every key, field, member and stream entry our load writes is what PCP's
    pmseries --load writes for the same archive (streams trimmed alike here)."""
    require_pcp_series()
    path = archives(tmp_path)[name] if name == "mixed" else qa(name)
    a, b = servers
    done = pcp_pmseries(["--load", path], a.port, tmp_path)
    assert done.returncode == 0, done.stderr
    report = our_load(b.port, path)
    assert f"processed {report.records} archive records from {path}" in done.stdout
    ca, cb = clients(servers)
    assert differences(dump(ca), dump(cb)) == []


@pytest.mark.interop
def test_pcps_pmseries_reads_our_load(servers, tmp_path):
    """PCP's pmseries answers the same from our load as from its own."""
    require_pcp_series()
    path = archives(tmp_path)["mixed"]
    a, b = servers
    pcp_pmseries(["--load", path], a.port, tmp_path)
    our_load(b.port, path)
    for args in (["test.inst"], ["-a", "test.inst"], ["test.inst[samples:3]"], ["-S"],
                 ["test.str[samples:5]"], ["-l"], ["-v", "hostname", "site.rack"],
                 ["test.dbl{hostname:\"testhost\"}[samples:2]"]):  # fmt: skip
        theirs = pcp_pmseries(args, a.port, tmp_path)
        ours = pcp_pmseries(args, b.port, tmp_path)
        mine, pcps = ours.stdout, theirs.stdout
        if args == ["-S"]:  # (PCP maps a source's two names in either order, run to run)
            mine, pcps = sorted(mine.splitlines()), sorted(pcps.splitlines())
        assert (ours.returncode, mine) == (theirs.returncode, pcps), args
        assert theirs.stdout.strip(), args


def test_values_past_the_stream_cap_are_not_sent(servers, tmp_path):
    """Of more records than stream.maxlen, the newest maxlen are stored, as XADD's MAXLEN
    leaves them; an EXPIRE per stream gives it a day."""
    path = archives(tmp_path)["mixed"]
    _, b = servers
    with Store(StoreConfig(servers=(("127.0.0.1", b.port),), maxlen=2)) as store:
        ArchiveLoader(store, path).run()
    client = clients(servers)[1]
    sid = next(iter(client.smembers(schema.series_key("metric.name", string_id("test.ctr")))))
    key = schema.values_key(sid)
    assert [i for i, _ in client.xrange(key)] == [b"1700000020250-0", b"1700000030250-0"]
    assert 86000 < client.ttl(key) <= 86400


def test_reloading_doubles_nothing(servers, tmp_path):
    """A second load of the same archive finds every entry there already: the store is
    unchanged (PCP ignores XADD's refusal of an entry not newer than the last)."""
    path = archives(tmp_path)["mixed"]
    _, b = servers
    first = our_load(b.port, path)
    before = dump(clients(servers)[1])
    second = our_load(b.port, path)
    assert second.errors == [] and first.errors == []
    assert dump(clients(servers)[1]) == before


def test_metric_restriction_and_metadata_only(servers, tmp_path):
    path = archives(tmp_path)["mixed"]
    _, b = servers
    our_load(b.port, path, wanted=("test.dbl",), metadata_only=True)
    client = clients(servers)[1]
    names = sorted(client.hvals(schema.map_key("metric.name")))
    assert names == [b"test.dbl"]
    assert not list(client.scan_iter(match=b"pcp:values:*"))


def test_missing_archive_is_one_line(servers, tmp_path):
    _, b = servers
    with pytest.raises(LoadError) as info:
        our_load(b.port, str(tmp_path / "nosuch"))
    assert (
        str(info.value) == f'cannot open archive "{tmp_path / "nosuch"}": No such file or directory'
    )


# ---------------------------------------------------------------------- the command


def pmseries(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmseries", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_command_loads_and_says_so(servers, tmp_path):
    path = archives(tmp_path)["mixed"]
    _, b = servers
    conf = tmp_path / "pmseries.conf"
    conf.write_text("[discover]\nexclude.metrics = test.str\n")
    done = pmseries("-c", str(conf), "-h", "127.0.0.1", "-p", str(b.port), "--load", path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"pmseries: [Info] processed 5 archive records from {path}\n"
    names = clients(servers)[1].hvals(schema.map_key("metric.name"))
    assert b"test.str" not in names and b"test.ctr" in names  # (exclude.metrics applies)
    spec = f'{{source.path: "{path}", metric.name: "test.ctr"}}'
    done = pmseries("-c", str(conf), "-p", str(b.port), "--load", spec)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--load", "/no/such/archive"],
            'cannot open archive "/no/such/archive": No such file or directory',
        ),
        (["--load", '{metric.name: "x"}'], "found no context to load"),
        (["--load", "{source.path: /x"], "cannot parse load request"),
        (["-c", "/no/such.conf", "--load", "X"], "cannot read /no/such.conf"),
    ],
)
def test_command_bad_input_is_one_line(args, message, servers, tmp_path):
    _, b = servers
    if "-p" not in args:
        args = ["-p", str(b.port), *args]
    done = pmseries(*args)
    assert done.returncode == 1
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_an_unreachable_server_is_pcps_info_line_at_once(tmp_path):
    """As PCP's pmseries --load: "Cannot connect to Redis", status 0, without the
    seconds of retries Redis's client would spend on a refused connection."""
    import time

    from tests.support.redis_servers import free_port

    began = time.monotonic()
    done = pmseries("-p", str(free_port()), "--load", str(tmp_path / "x"))
    assert time.monotonic() - began < 3
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.endswith(" Info: Cannot connect to Redis: Connection refused\n")
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_bad_config_names_its_line(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("[pmseries]\nstream.maxlen = lots\n")
    done = pmseries("-c", str(conf), "--load", "X")
    assert done.returncode == 1
    assert done.stderr == "pmseries: [pmseries] stream.maxlen = lots: not a number\n"
    conf.write_text("garbage\n")
    done = pmseries("-c", str(conf), "--load", "X")
    assert done.stderr == f"pmseries: {conf}:1: no [section] before 'garbage'\n"


@pytest.mark.interop
def test_load_window_takes_the_records_pcp_takes(servers, tmp_path):
    """A [start, finish] window on a load: the same records, and the same keys, as PCP's."""
    require_pcp_series()
    path = archives(tmp_path)["mixed"]
    a, b = servers
    spec = f'{{source.path: "{path}"}}[start: {T0 + 5}, finish: {T0 + 40}]'
    theirs = pcp_pmseries(["--load", spec], a.port, tmp_path)
    ours = pmseries("-c", str(tmp_path / "pcp-pmseries.conf"), "-h", "127.0.0.1", "-p",
                    str(b.port), "--load", spec)  # fmt: skip
    assert theirs.returncode == 0 and ours.returncode == 0, ours.stderr
    done = f"pmseries: [Info] processed 4 archive records from {path}\n"
    assert ours.stdout == theirs.stdout == done
    ca, cb = clients(servers)
    assert differences(dump(ca), dump(cb)) == []
