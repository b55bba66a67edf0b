"""pmseries' command line (everything but --load) against PCP 6.0.3's pmseries.

The interop tests run PCP's /usr/bin/pmseries and ours (in this process) with the same
arguments against one private Redis where PCP loaded its QA archives `proc` and
`sample-labels`, and want the same stdout, stderr and exit status: the metadata reports
(-a -d -i -l -m -n -s -I -M -S), the listings (-S -l -m -i, -g), label values (-v), values
in time windows (-w, -t, -Z), and the option and window errors.  The others need no PCP:
usage and option errors, a refused connection, ids nobody stored, windows refused.

Queries are evaluated by purepcp.series.query (written separately): the tests of the query
mode's printing replace `purepcp.tools.pmseries.modes.run_query` with a fake that answers
from a table (`fake_queries`), so they test what pmseries prints for an answer, not the
answer.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from purepcp.pmapi import version_line
from purepcp.series import schema
from purepcp.series.read import SeriesError, SeriesReader, SeriesValue, Window
from purepcp.tools import pmseries
from purepcp.tools.pmseries import globs, modes, windows
from tests.support.redis_servers import HOST, free_port, redis_server, require_redis
from tests.support.series_reference import (
    PMSERIES,
    load_archive,
    pcp_pmseries,
    qa_archive,
    series_conf,
)

#: kernel.all.load, kernel.all.pswitch, hinv.ncpu and their source, in PCP's load of `proc`
LOAD = "fecd5a4b4c6e1273eaa001287a6dd57b7bbd19f7"
PSWITCH = "d51624d12da45900bfee2fd73f1e23f3ccabb784"
SOURCE = "2cd6a38f9339f2dd1f0b4775bda89a9e7244def6"
#: pmcd.pmlogger.host of `sample-labels` (a string), its instance, and sample.rapid
LOGGER_HOST = "78fbcbef769fdf2bf36b0889fb77ba89f316fb4d"
LOGGER_INST = "be170e08f55eab632b1a024e6fc8252ef749d52d"
#: pmcd.pmlogger.host of `proc`
PROC_LOGGER_HOST = "c88036a0c1b7117a856de3df3b915cd15569304c"
RAPID = "538f06a548cae2d8a47107eea9a8c105ccf602d8"
#: rate(kernel.all.pswitch): an expression's series id, made by a query with a function
RATE = "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"
#: a zone with summer time, for both tools' ctime
ZONE = "Australia/Melbourne"

#: PCP 6.0.3's pmseries --help (stderr, exit status 1)
PCP_USAGE = """\
Usage: pmseries [options] [query ... | labels ... | series ... | source ...]

Connection Options:
  -c FILE, --config=FILE
                        configuration file path
  -h HOST, --host=HOST  connect to Redis using given host name
  -p PORT, --port=PORT  connect to Redis using given TCP/IP port

General Options:
  -L, --load            load time series values and metadata
  -q, --query           perform a time series query (default)
  -v, --values          extract values for given series or label(s)

Reporting Options:
  -a, --all             report all metadata (-dilms) for time series
  -d, --desc            metric descriptor for time series
  -I, --fullindom       print InDom in verbose format
  -i, --instances       report names for time series instances
  -F, --fast            query or load series metadata, not values
  -g PATTERN, --glob=PATTERN
                        glob pattern to restrict matches
  -l, --labels          list all labels for time series
  -M, --fullpmid        print PMID in verbose format
  -m, --metrics         report names and expressions for time series
  -n, --names           print label names only, not values
  -S, --sources         report names for time series sources
  -s, --series          print series ID for metrics, instances and sources
  -t, --times           print numeric time stamps (in milliseconds)
  -w TIMESPEC, --window=TIMESPEC
                        restrict --values report to a time window
  -Z TZ, --timezone=TZ  set reporting timezone
  -V, --version         display version number and exit
  -?, --help            show this usage message and exit
"""


@dataclass(frozen=True)
class Run:
    """What a pmseries run printed and its exit status."""

    status: int
    out: str
    err: str


@pytest.fixture
def ours(capsys, monkeypatch) -> Callable[..., Run]:
    """Run our pmseries in this process: ours(args...) -> Run.  $TZ is put back after
    the test (-Z sets it, as PCP's setenv does)."""
    if "TZ" in os.environ:
        monkeypatch.setenv("TZ", os.environ["TZ"])
    else:
        monkeypatch.delenv("TZ", raising=False)

    def run(*args: str) -> Run:
        capsys.readouterr()
        status = pmseries.main(list(args))
        out, err = capsys.readouterr()
        return Run(status, out, err)

    return run


# ------------------------------------------------------------------ a private Redis


@dataclass
class Server:
    """A private Redis and the configuration file pmseries is given for it."""

    port: int
    conf: Path
    tmp: Path
    sids: list[str] = field(default_factory=list)  # every metric series (not expressions)
    isids: list[str] = field(default_factory=list)  # every instance series
    sources: list[str] = field(default_factory=list)

    def args(self) -> list[str]:
        return ["-c", str(self.conf), "-h", HOST, "-p", str(self.port)]


def _server(tmp: Path, port: int) -> Server:
    conf = tmp / "pmseries.conf"
    conf.write_text(series_conf([f"{HOST}:{port}"]))
    return Server(port, conf, tmp)


@pytest.fixture(scope="module")
def empty(tmp_path_factory) -> Iterator[Server]:
    """A private Redis holding nothing."""
    require_redis()
    tmp = tmp_path_factory.mktemp("pmseries-empty")
    with redis_server(tmp) as server:
        yield _server(tmp, server.port)


def _keys(client, prefix: str) -> list[str]:
    return sorted(k.decode()[len(prefix) :] for k in client.scan_iter(f"{prefix}*", count=1000))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> Iterator[Server]:
    """A private Redis where PCP's pmseries loaded `proc` and `sample-labels`, and made
    the expression rate(kernel.all.pswitch) with a query."""
    if not os.path.exists(PMSERIES):
        pytest.skip(f"PCP 6.0.3's pmseries is not installed (no {PMSERIES}, Debian package pcp)")
    require_redis()
    archives = [qa_archive(name) for name in ("proc", "sample-labels")]
    if None in archives:
        pytest.skip("PCP's QA archives proc and sample-labels are not here (pcp-testsuite)")
    tmp = tmp_path_factory.mktemp("pmseries-loaded")
    with redis_server(tmp) as redis:
        for archive in archives:
            load_archive(archive, redis.port, tmp / "pcp")
        made = pcp_pmseries(["rate(kernel.all.pswitch[samples:3])"], redis.port, tmp / "pcp")
        assert made.returncode == 0, made.stderr
        server = _server(tmp, redis.port)
        with redis.client() as client:
            exprs = set(_keys(client, "pcp:expr:series:"))
            server.sids = [s for s in _keys(client, "pcp:desc:series:") if s not in exprs]
            server.isids = _keys(client, "pcp:inst:series:")
            server.sources = _keys(client, "pcp:context.name:source:")
        assert LOAD in server.sids and RATE in exprs
        yield server


def theirs(server: Server, *args: str) -> Run:
    """PCP's pmseries with ARGS against SERVER."""
    done = pcp_pmseries(list(args), server.port, server.tmp / "pcp")
    return Run(done.returncode, done.stdout, done.stderr)


def same(server: Server, ours: Callable[..., Run], *args: str) -> Run:
    """Ours and PCP's with ARGS print the same and exit alike; PCP's run."""
    pcp = theirs(server, *args)
    mine = ours(*server.args(), *args)
    assert mine == pcp, f"pmseries {shlex.join(args)}"
    return pcp


# ------------------------------------------------------------ interop: metadata


REPORTS = [
    LOAD,
    f"{LOAD} {PSWITCH}",
    f"-a {PSWITCH} {LOAD}",
    f"-d {LOAD}",
    f"--desc {LOAD}",
    f"-I {LOAD}",
    f"--fullpmid {LOAD}",
    f"-dIM {LOAD}",
    f"-s {LOAD}",
    f"-i {LOAD}",
    f"-l {LOAD}",
    f"-l {PSWITCH} {LOAD}",
    f"-n {LOAD}",
    f"-ln {LOAD} {PSWITCH}",
    f"-s -n {LOAD}",
    f"-m {LOAD}",
    f"-m {LOAD},{PSWITCH}",
    f"-a {RAPID} {LOGGER_HOST}",
    f"-S {SOURCE}",
    f"-S {SOURCE} {SOURCE}",
    f"-S -d {LOAD}",
    f"-dS {SOURCE}",
    f"-a {LOGGER_INST}",
    f"-m {RATE}",
    f"-dsm {RATE}",
    "-d no.such.identifier",
    "-m no.such.identifier",
    "-i no.such.identifier",
    "-l no.such.identifier",
    "-a no.such.identifier",
    "-d kernel.all.load",
    "-s kernel.all.load",
    f"-d {LOAD.upper()}",
    "-d",
    "-d -i -g 1*",
]
LISTINGS = [
    "-S",
    "-S -g bozo*",
    "-S -g *sample*",
    "-m",
    "-m -g hinv*",
    "-m -g kernel.all.l*",
    "-m -g [a-h]*.n?pu",
    "-m -g [!a-j]*",
    "-l",
    "-l -g h*",
    "-n",
    "-i",
    "-i -g sda*",
    "-i -g 1*",
    "-i -g *[[:digit:]]",
    "-m -l",
    "-S -m",
    "-v hostname agent",
    "-v hostname,agent hostname",
    "-v nosuch",
    "--values role units",
]


@pytest.mark.interop
@pytest.mark.parametrize("args", REPORTS)
def test_metadata_report_is_pcps(loaded, ours, args):
    same(loaded, ours, *shlex.split(args))


@pytest.mark.interop
@pytest.mark.parametrize("args", LISTINGS)
def test_listing_is_pcps(loaded, ours, args):
    same(loaded, ours, *shlex.split(args))


@pytest.mark.interop
@pytest.mark.parametrize("flags", ["", "-a", "-n", "-dIMs", "-lims", "-l"])
def test_report_of_every_series_is_pcps(loaded, ours, flags):
    """Every metric series of both archives in one command (singular metrics, instances,
    strings, labels at every level)."""
    same(loaded, ours, *shlex.split(flags), *loaded.sids)


@pytest.mark.interop
@pytest.mark.parametrize("flags", ["-a", "-d", "-S", "-S -l"])
def test_report_of_instances_and_sources_is_pcps(loaded, ours, flags):
    """Instance and source ids given as series: PCP's unknown-descriptor block, or
    their names (-S)."""
    ids = loaded.sources if flags.startswith("-S") else loaded.isids
    same(loaded, ours, *shlex.split(flags), *ids)


# --------------------------------------------------------------- interop: values

WINDOWS = [
    "samples:2",
    "[samples:2]",
    "count: 3",
    "samples:0",
    "start:0",
    "start:0,samples:2",
    "start:1317633023,finish:1317633024",
    "end:1317633023",
    'start:"@ Mon Oct  3 09:10:23 2011"',
    'start:"2011-10-03 09:10:23"',
    "count:2,delta:1",
    'delta:"0.5s"',
    'delta:"0.3s",start:1317633022',
    "delta:2,start:1317633022,samples:2",
    "delta:0",
    'tz:"UTC",samples:1',
    "samples:1,offset:1",
    'tz:"UTC"',
    "1h",
    'finish:"yesterday"',
    'align:"x"',
    "samples:1 , delta : 1 ",
]


@pytest.mark.interop
@pytest.mark.parametrize("window", WINDOWS)
def test_values_in_a_window_are_pcps(loaded, ours, monkeypatch, window):
    monkeypatch.setenv("TZ", ZONE)
    same(loaded, ours, "-w", window, PSWITCH, LOAD, LOGGER_HOST, RAPID)


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        f"-t -w samples:2 {PSWITCH}",
        f"-Z UTC -w samples:1 {LOAD}",
        f"-t -Z UTC -w samples:1 {LOAD}",
        f"-Z Asia/Kolkata -w samples:3 {PSWITCH}",
        f"-v -w samples:2 {LOAD},{PSWITCH}",
        f"-v -w samples:2 {LOAD}0",
        f"-v -w samples:2 {LOAD.upper()}",
    ],
)
def test_values_options_are_pcps(loaded, ours, monkeypatch, args):
    monkeypatch.setenv("TZ", ZONE)
    same(loaded, ours, *shlex.split(args))


@pytest.mark.interop
@pytest.mark.parametrize("flags", ["-w samples:3", "-t -w start:0", '-w delta:"0.4s"'])
def test_values_of_every_series_are_pcps(loaded, ours, monkeypatch, flags):
    monkeypatch.setenv("TZ", ZONE)
    same(loaded, ours, *shlex.split(flags), *loaded.sids)


BAD_WINDOWS = [
    "bogus",
    "[samples:x]",
    "samples:2,start:abc",
    "samples:2,kernel.all.load",
    "[]",
    "[samples:2]junk",
    "[samples:2",
    "samples:2,samples:3",
    "offset:1,offset:2",
    'tz:"UTC",tz:"EST"',
    "1h,2h",
    "delta:1,delta:2",
    'start:"garbage"',
    'delta:"garbage"',
    "1x",
    "samples:99999999999",
    "samples:3000000000",
    "samples:1.5",
    "count:1.",
    'samples:"1"',
    "samples:1 {",
    "samples:1 @",
    "start:-1",
]


@pytest.mark.interop
@pytest.mark.parametrize("window", BAD_WINDOWS)
def test_window_errors_are_pcps(loaded, ours, window):
    run = same(loaded, ours, "-w", window, LOAD)
    assert run.status == 1


# ------------------------------------------------------------ interop: the options


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        "--help",
        "-?",
        "-x",
        "--bogus",
        "--s x",
        "--ti",
        "--full x",
        "--load=x",
        "--window",
        "-p",
        "-g",
        "-e x",
        "-D bogus -S",
        "-L -d x",
        "-q -d x",
        "-q -w 1 x",
        "-L -q x",
        "-L -S",
        "",
        "-v",
        "-a",
        "-S -a",
        "-s",
        "-I",
        "-L",
        "-F",
        "-t",
        "-Z UTC",
        "-w [samples:1]",
    ],
)
def test_option_errors_are_pcps(loaded, ours, args):
    same(loaded, ours, *shlex.split(args))


# ------------------------------------------------------- queries (a fake engine)


@dataclass
class Answer:
    """A QueryAnswer as purepcp.series.query gives it."""

    sids: list[str]
    values: list[SeriesValue] | None = None
    expression: bool = False


def fake_queries(monkeypatch, table: dict[str, Callable[[SeriesReader], Answer]]) -> list[str]:
    """Replace the query engine with TABLE (query text -> answer maker; a text not in it
    matches nothing); returns the list of texts asked, in order."""
    asked: list[str] = []

    def run_query(reader: SeriesReader, text: str) -> Answer:
        asked.append(text)
        make = table.get(text)
        return make(reader) if make is not None else Answer([])

    monkeypatch.setattr(modes, "run_query", run_query)
    return asked


def matches(*sids: str) -> Callable[[SeriesReader], Answer]:
    return lambda reader: Answer(list(sids))


def newest(count: int, *sids: str) -> Callable[[SeriesReader], Answer]:
    """The answer to `name[samples:COUNT]`: each series' newest values, newest first."""
    return lambda reader: Answer(
        list(sids), reader.values(list(sids), Window(count=count), nudge=False)
    )


def syntax_error(text: str, at: int) -> Callable[[SeriesReader], Answer]:
    def fail(reader: SeriesReader) -> Answer:
        raise SeriesError(f"cannot parse given string\n\n{text}\n{' ' * at}^ -- syntax error\n")

    return fail


QUERIES = {
    "kernel.all.load": matches(LOAD),
    "kernel.all.load[samples:2]": newest(2, LOAD),
    "kernel.all.pswitch[count: 3]": newest(3, PSWITCH),
    "pmcd.pmlogger.host[samples:1]": newest(1, LOGGER_HOST, PROC_LOGGER_HOST),
    "sample.rapid[samples:2]": newest(2, RAPID),
    "bad{": syntax_error("bad{", 3),
    "kernel.all.load,kernel.all.pswitch": syntax_error("kernel.all.load,kernel.all.pswitch", 15),
    "kernel.all.load kernel.all.pswitch": syntax_error("kernel.all.load kernel.all.pswitch", 16),
}


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        "kernel.all.load",
        "kernel.all.load[samples:2]",
        "-Z UTC 'kernel.all.pswitch[count: 3]'",
        "-t pmcd.pmlogger.host[samples:1]",
        "sample.rapid[samples:2]",
        "-F kernel.all.load[samples:2]",
        "-t -F kernel.all.load",
        "kernel.all.nosuch",
        "bad{",
        "kernel.all.load kernel.all.pswitch",
        "-q kernel.all.load kernel.all.pswitch",
        "-w samples:2 kernel.all.load",
        "-g x kernel.all.load",
    ],
)
def test_query_answers_print_as_pcps(loaded, ours, monkeypatch, args):
    """(fake engine) PCP's output for the query, ours for the answer PCP's engine gives."""
    monkeypatch.setenv("TZ", ZONE)
    fake_queries(monkeypatch, QUERIES)
    same(loaded, ours, *shlex.split(args))


# ------------------------------------------------------------------- without PCP


def test_usage_is_pcps(ours):
    for flag in ("--help", "-?"):
        assert ours(flag) == Run(1, "", PCP_USAGE)


def test_version_is_our_line(ours):
    assert ours("-V") == Run(0, "", version_line("pmseries") + "\n")
    assert ours("-V", "-x") == Run(
        0, "", version_line("pmseries") + "\npmseries: invalid option -- 'x'\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ("-x", "pmseries: invalid option -- 'x'\n"),
        ("--bogus", "pmseries: unrecognized option '--bogus'\n"),
        ("--s x", "pmseries: option '--s' is ambiguous; possibilities: '--sources' '--series'\n"),
        ("--load=x", "pmseries: option '--load' doesn't allow an argument\n"),
        ("--window", "pmseries: option '--window' requires an argument\n"),
        ("-p", "pmseries: option requires an argument -- 'p'\n"),
        ("-e x", ""),
        ("-D bogus -S", "pmseries: unrecognized debug options specification (bogus)\n"),
        ("-L -d x", "pmseries: error - cannot use load and reporting options together\n"),
        ("-L -q x", "pmseries: error - cannot use load and querying options together\n"),
        ("-q -d x", "pmseries: error - cannot use query and metadata options together\n"),
        ("-q -w 1 x", "pmseries: error - cannot use query and time window options together\n"),
        ("", "pmseries: error - no query string provided\n"),
        ("-F -t", "pmseries: error - no query string provided\n"),
        ("-v", "pmseries: error - no label name(s) provided\n"),
        ("-a", "pmseries: error - no series string(s) provided\n"),
        ("-s", "pmseries: error - no series string(s) provided\n"),
        ("-L", "pmseries: error - no series string(s) provided\n"),
    ],
)
def test_option_errors(ours, args, message):
    """Complaints and the usage, status 1, before any connection (none is listening)."""
    run = ours("-p", str(free_port()), *shlex.split(args))
    assert run == Run(1, "", message + PCP_USAGE)


def test_connection_refused_is_pcps_one_info_line(ours):
    """As PCP's pmseries: "Cannot connect to Redis" once, on stderr, status 0, at once
    (the first contact is not retried: Redis's client would retry it for seconds)."""
    import time

    port = free_port()
    for args in (["-S"], ["-a", LOAD], ["kernel.all.load"], ["-v", "hostname"]):
        began = time.monotonic()
        run = ours("-h", "localhost", "-p", str(port), *args)
        assert time.monotonic() - began < 3
        assert run.status == 0 and run.out == ""
        assert re.fullmatch(
            r"\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\] pmseries\(\d+\) Info: "
            r"Cannot connect to Redis: Connection refused\n",
            run.err,
        ), run.err


def test_bad_port_and_config_are_one_line(ours, tmp_path):
    assert ours("-p", "abc", "-S") == Run(1, "", "pmseries: invalid port 'abc'\n")
    missing = tmp_path / "nonexistent.conf"
    assert ours("-c", str(missing), "-S") == Run(
        1, "", f"pmseries: cannot read {missing}: No such file or directory\n"
    )


UNKNOWN_BLOCK = """
{sid}
    PMID: PM_ID_NULL
    Data Type: ???  InDom: unknown 0xffffffff
    Semantics: unknown  Units: unknown
"""


def test_unknown_ids_get_pcps_block(empty, ours):
    """Ids nobody stored (a metric name, 40 hex digits): PCP's "unknown" descriptor."""
    nosuch = "0123456789abcdef0123456789abcdef01234567"
    run = ours(*empty.args(), "-d", "no.such.identifier", nosuch)
    assert run == Run(
        0, UNKNOWN_BLOCK.format(sid="no.such.identifier") + UNKNOWN_BLOCK.format(sid=nosuch), ""
    )
    run = ours(*empty.args(), nosuch)
    assert run == Run(0, UNKNOWN_BLOCK.format(sid=nosuch) + "    Source: unknown\n", "")
    assert (
        ours(*empty.args(), "-M", nosuch).out
        == f"\n{nosuch}\n    PMID: PM_ID_NULL = 4294967295 = 0xffffffff\n"
    )
    for flag in ("-i", "-l", "-m", "-n"):
        assert ours(*empty.args(), flag, "no.such") == Run(0, "\nno.such\n", "")
    assert ours(*empty.args(), "-S", nosuch) == Run(0, "", "")
    assert ours(*empty.args(), "-w", "samples:1", nosuch) == Run(0, "", "")


def test_listings_of_an_empty_server(empty, ours):
    for flag in ("-S", "-m", "-l", "-i", "-n"):
        assert ours(*empty.args(), flag) == Run(0, "", "")
    assert ours(*empty.args(), "-v", "hostname") == Run(0, "", "")
    assert ours(*empty.args(), "-d") == Run(1, "", "pmseries: Invalid argument\n")


def test_bad_series_ids_and_names_are_one_line(empty, ours):
    """PCP repeats "Invalid SID" for each pair it reads past the end; we say it once."""
    assert ours(*empty.args(), "-v", "-w", "samples:1", "zz") == Run(
        1, "", "pmseries: [Error] Invalid SID zz near offset 0\n"
    )
    assert ours(*empty.args(), "-v", "") == Run(
        1, "", "pmseries: no label names in string '': No error\n"
    )


@pytest.mark.parametrize(
    "window, message, why",
    [
        (
            "bogus",
            "cannot parse given string\n\n[bogus]\n ^ -- syntax error\n",
            "Invalid argument",
        ),
        (
            "samples:2,start:abc",
            "cannot parse given string\n\n[samples:2,start:abc]\n"
            "                 ^ -- syntax error\n",
            "Invalid argument",
        ),
        (
            "samples:2,samples:3",
            'Invalid second sample count requested - "3" vs "2"',
            "Invalid argument",
        ),
        (
            'start:"garbage"',
            "Cannot parse time with __pmParseHighResTime:\ngarbage\n^ -- unexpected value\n",
            "Operation not permitted",
        ),
        (
            'delta:"garbage"',
            "Cannot parse time delta with pmParseHighResInterval:\n"
            "garbage\n^ -- unexpected value\n",
            "Operation not permitted",
        ),
    ],
)
def test_windows_refused_as_pcp_words_it(empty, ours, window, message, why):
    text = window if window.startswith("[") else f"[{window}]"
    assert ours(*empty.args(), "-w", window, LOAD) == Run(
        1,
        "",
        f"pmseries: [Error] {message}\npmseries: invalid time specification '{text}': {why}\n",
    )


def test_window_fields():
    """The window as the reader is given it: no key is the newest value; a zero start,
    end or interval still reads forwards from the oldest."""
    assert windows.parse_window('[tz:"UTC"]') == Window(count=1)
    assert windows.parse_window("[samples:3]") == Window(count=3)
    assert windows.parse_window("[samples:0]") == Window(count=0)
    assert windows.parse_window("[start:0,samples:2]") == Window(start=1, count=2)
    assert windows.parse_window('[start:10,finish:"20",delta:"1.5s"]') == Window(
        start=10 * 10**9, end=20 * 10**9, delta=1_500_000_000
    )
    assert windows.parse_window("[5m]", now_ns=10**12) == Window(
        start=10**12 - 300 * 10**9, range=300 * 10**9, count=0
    )


def _libc_fnmatch() -> Callable[[str, str], bool] | None:
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is None or not hasattr(libc, "fnmatch"):
        return None
    return lambda pattern, text: libc.fnmatch(pattern.encode(), text.encode(), 0) == 0


@pytest.mark.parametrize(
    "pattern",
    ["kernel.*", "*load", "k?rnel*", "[a-k]*", "[!a-k]*", "[^a-k]*", "*[[:digit:]]",
     "1\\*", "*\\[*", "[]a]*", "[", "a[b", "*.*.*", "sda[0-9]", "[[:alpha:]]*[[:space:]]*"],
)  # fmt: skip
def test_glob_is_fnmatch(pattern):
    """-g is fnmatch(3) without flags: compared with the C library's."""
    fnmatch = _libc_fnmatch()
    if fnmatch is None:
        pytest.skip("no fnmatch(3) in this C library")
    names = ["kernel.all.load", "1 minute", "1*", "15 minute", "sda1", "sda", "[x]", "]a",
             "a[b", "[", "hinv.ncpu", "a b", "x.y", "cpu0", "k.e.r"]  # fmt: skip
    regex = globs.glob_regex(pattern)
    for name in names:
        assert bool(regex.fullmatch(name)) == fnmatch(pattern, name), (pattern, name)


# -------------------------------------------------- queries without PCP (fake engine)


def _value(sid: str, inst: str, ms: int, usec: int, text: str) -> SeriesValue:
    entry = f"{ms}-{usec}"
    return SeriesValue(sid, inst, schema.timestamp_json(entry), schema.stream_ns(entry), text)


def test_query_printing(empty, ours, monkeypatch):
    """(fake engine) ids one per line; values under a blank line and their series,
    the instance id after an instance's value; -t the stored stamp; -F only ids."""
    monkeypatch.setenv("TZ", "UTC")
    a, b, i1, i2 = ("a" * 40, "b" * 40, "1" * 40, "2" * 40)
    values = [
        _value(a, i1, 1317633024305, 845, "1.000000e+00"),
        _value(a, i2, 1317633024305, 845, "2.000000e+00"),
        _value(b, b, 1580167911564, 18, '"shard"'),
    ]
    asked = fake_queries(
        monkeypatch,
        {"q": lambda r: Answer([a, a, b]), "v[samples:1]": lambda r: Answer([a, b], values)},
    )
    assert ours(*empty.args(), "q") == Run(0, f"{a}\n{b}\n", "")
    assert ours(*empty.args(), "v[samples:1]") == Run(
        0,
        f"\n{a}\n"
        f"    [Mon Oct  3 09:10:24.305845000 2011] 1.000000e+00 {i1}\n"
        f"    [Mon Oct  3 09:10:24.305845000 2011] 2.000000e+00 {i2}\n"
        f"\n{b}\n"
        '    [Mon Jan 27 23:31:51.564018000 2020] "shard"\n',
        "",
    )
    assert ours(*empty.args(), "-t", "v[samples:1]").out.splitlines()[2:] == [
        f"    [1317633024305.845] 1.000000e+00 {i1}",
        f"    [1317633024305.845] 2.000000e+00 {i2}",
        "",
        b,
        '    [1580167911564.18] "shard"',
    ]
    assert ours(*empty.args(), "-Z", "Australia/Melbourne", "v[samples:1]").out.splitlines()[2] == (
        f"    [Mon Oct  3 20:10:24.305845000 2011] 1.000000e+00 {i1}"
    )
    assert ours(*empty.args(), "-F", "v[samples:1]") == Run(0, f"{a}\n{b}\n", "")
    assert asked == ["q", "v[samples:1]", "v[samples:1]", "v[samples:1]", "v[samples:1]"]


def test_query_text_and_errors(empty, ours, monkeypatch):
    """(fake engine) several arguments make one query, joined by commas (by spaces with
    -q); -w with arguments that are not all series ids is a query too; an error is PCP's
    "[Error]" text and status 1."""
    asked = fake_queries(monkeypatch, {"bad{": syntax_error("bad{", 3)})
    assert ours(*empty.args(), "a", "b{c:1}") == Run(0, "", "")
    assert ours(*empty.args(), "-q", "a", "b") == Run(0, "", "")
    assert ours(*empty.args(), "-w", "samples:2", "zz") == Run(0, "", "")
    assert asked == ["a,b{c:1}", "a b", "zz"]
    assert ours(*empty.args(), "bad{") == Run(
        1, "", "pmseries: [Error] cannot parse given string\n\nbad{\n   ^ -- syntax error\n\n"
    )


def test_query_engine_failures_are_one_line(empty, ours, monkeypatch):
    """(fake engine) whatever the engine raises ends as one line, status 1."""

    def broken(reader, text):
        raise RuntimeError("boom")

    monkeypatch.setattr(modes, "run_query", broken)
    assert ours(*empty.args(), "x") == Run(1, "", "pmseries: [Error] RuntimeError: boom\n")


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        "kernel.all.load",
        "kernel.all.load[samples:2]",
        "-Z UTC 'kernel.all.pswitch[delta: \"1sec\"]'",
        "'kernel.all.load{instance.name:\"1*\"}'",
        "-t pmcd.pmlogger.host[samples:1]",
        "-F kernel.all.load[samples:2]",
        "bad{",
        "'rate(kernel.all.pswitch[samples:3])'",
        "-F 'rate(kernel.all.pswitch[samples:3])'",
        "'sum(kernel.all.load[samples:2])'",
    ],
)
def test_queries_with_the_real_engine_are_pcps(loaded, ours, monkeypatch, args):
    """Queries through the real engine (purepcp.series.query), end to end."""
    monkeypatch.setenv("TZ", ZONE)
    same(loaded, ours, *shlex.split(args))
