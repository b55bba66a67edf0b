"""pmstat: its command line, its columns and their scaling, the fetchgroup conversions it
relies on; then whole runs beside PCP 6's own pmstat, on PCP's QA archives, on an
archive our pmlogger writes, and live against PCP's pmcd and ours (interop).

PCP 6.0.3 interpolates instantaneous values (the load average, memory) between two
observations, where ours follow the closest-observation rule of later PCPs (see
conformance/tests.conf): runs whose samples fall between observations are compared
with those columns masked, the rates (from counters, interpolated alike) exactly.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_SIGN, PM_ERR_TRUNC, PMError
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.tools.pmstat import fetchgroup, report
from purepcp.tools.pmstat.options import ARCHIVE, HOST, LOCAL, USAGE, read_options
from tests.support.qa_archives import qa, qa_dir
from tests.support.reference_pmcd import require_reference

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]


# -- the command line ---------------------------------------------------------------------


def test_several_archives_each_a_source_duplicates_dropped(monkeypatch):
    _no_pcp_environment(monkeypatch)
    o = read_options(["-a", "x", "-a", "y", "-a", "x", "-z"])
    assert (o.archives, o.kind, o.hostzone, o.errors) == (["x", "y"], ARCHIVE, True, 0)


def test_hosts_and_archives_do_not_mix(monkeypatch):
    _no_pcp_environment(monkeypatch)
    o = read_options(["-a", "x", "-h", "y"])
    assert o.messages == ["pmstat: only one host or archive allowed\n"]
    o = read_options(["-h", "a", "-h", "b"])
    assert (o.hosts, o.kind, o.errors) == (["a", "b"], HOST, 0)


def test_window_and_zone_options_need_a_source(monkeypatch):
    _no_pcp_environment(monkeypatch)
    o = read_options(["-S", "1", "-z"])
    assert o.messages == [
        "pmstat: time window options are supported for archives only\n",
        "pmstat: use of timezone from metric source requires a source\n",
    ]
    assert read_options(["-L"]).kind == LOCAL


def test_bad_numbers_and_getopt_complaints(monkeypatch):
    _no_pcp_environment(monkeypatch)
    o = read_options(["-s", "x", "-q", "-t", "1x"])
    assert o.getopt_errors == ["pmstat: invalid option -- 'q'\n"]
    assert o.messages[0] == "pmstat: -s requires a positive numeric argument\n"
    assert o.messages[1].startswith("pmstat: -t argument not in pmParseInterval(3) format:\n1x\n")
    assert read_options(["-t", "0.5"]).interval_us == 500_000


def test_hosts_file(tmp_path, monkeypatch):
    _no_pcp_environment(monkeypatch)
    hosts = tmp_path / "hosts"
    hosts.write_text("# comment\n  alpha  # one\n\nbeta\n")
    assert read_options(["-H", str(hosts)]).hosts == ["alpha", "beta"]
    o = read_options(["-H", str(tmp_path / "none")])
    assert o.runtime_error
    assert o.messages == [
        f"pmstat: cannot open hosts file {tmp_path}/none: No such file or directory\n"
    ]


def test_options_from_the_environment(monkeypatch):
    """pcp(1) and pcp-vmstat hand their options on as PCP_* variables."""
    _no_pcp_environment(monkeypatch)
    monkeypatch.setenv("PCP_ARCHIVE", "arch")
    monkeypatch.setenv("PCP_SAMPLES", "4")
    monkeypatch.setenv("PCP_INTERVAL", "2")
    monkeypatch.setenv("PCP_HOSTZONE", "1")
    o = read_options(["-x"])
    assert (o.archives, o.samples, o.interval_us, o.hostzone, o.xcpu) == (
        ["arch"],
        4,
        2_000_000,
        True,
        True,
    )


def _no_pcp_environment(monkeypatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("PCP_") and name not in ("PCP_CONF",):
            monkeypatch.delenv(name)


# -- the columns --------------------------------------------------------------------------


def test_headings_byte_for_byte():
    assert report.heading(False, False, "p") == (
        " loadavg                      memory      swap        io    system         cpu\n"
        "   1 min   swpd   free   buff  cache   pi   po   bi   bo   in   cs  us  sy  id\n"
    )
    assert report.heading(True, True, "s") == (
        "node    loadavg               memory      swap        io    system                 cpu\n"
        "          1 min   swpd   buff  cache   si   so   bi   bo   in   cs  us  sy  id  wa  st\n"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "    ?"), (0, "    0"), (9999, " 9999"), (10000, "  10K"), (999999, " 999K"),
     (1000000, "   1M"), (4294967295, " 4294M")],
)  # fmt: skip
def test_counts_scaled(value, text):
    assert report.scaled(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "      ?"), (999999, " 999999"), (1000000, "   976m"), (102400000, "    97g")],
)
def test_kbytes_scaled(value, text):
    assert report.scaled_k(value) == text


def test_cpu_shares_rounded_and_missing():
    times = {"cpu_user": 300, "cpu_nice": 33, "cpu_sys": 100, "cpu_intr": 0, "cpu_idle": 567}
    assert report.cpu(times, False) == "  33  10  57"
    assert report.cpu({**times, "cpu_wait": 100, "cpu_steal": 0}, True) == "  30   9  52   9   0"
    assert report.cpu({"cpu_user": 1}, False) == "   ?   ?   ?"
    assert report.cpu({"cpu_user": 1}, True) == "   ?   ?   ?   ?   ?"


def test_a_whole_row_and_node_names():
    values = dict.fromkeys(k.key for k in fetchgroup.ITEMS)
    values["load_avg"] = 0.125
    assert report.row(values, False, False) == (
        "    0.12      ?      ?      ?      ?    ?    ?    ?    ?    ?    ?   ?   ?   ?"
    )
    assert report.node_name("averylonghost", False) == "averylo"
    assert report.node_name("averylonghost", True) == "onghost"
    assert report.node_name("ac15", True) == "ac15   "


# -- the fetchgroup's conversions ---------------------------------------------------------


class _Desc:
    def __init__(self, type_, sem, units):
        self.type, self.sem, self.units, self.indom = type_, sem, units, 0xFFFFFFFF


def test_conversions_as_the_fetchgroup_prepares_them():
    kbyte_instant = _Desc(PMType.PM_TYPE_U64, PMSem.PM_SEM_INSTANT, Units(1, 0, 0, 1, 0, 0))
    assert fetchgroup._conversion(kbyte_instant, "kbyte", fetchgroup.U32)[:2] == (
        False, Units(1, 0, 0, 1, 0, 0))  # fmt: skip
    counter = _Desc(PMType.PM_TYPE_U64, PMSem.PM_SEM_COUNTER, Units(0, 0, 1, 0, 0, 0))
    assert fetchgroup._conversion(counter, None, fetchgroup.U32) == (True, None, 1.0)
    with pytest.raises(PMError) as err:
        fetchgroup._conversion(counter, "kbyte", fetchgroup.U32)
    assert err.value.code == PM_ERR_CONV


def test_values_stuffed_into_their_types():
    assert fetchgroup.stuff_double(12.99, fetchgroup.U32) == 12
    assert fetchgroup.stuff_double(0.1, fetchgroup.FLOAT) == pytest.approx(0.1)
    for value, code in ((-1.0, PM_ERR_SIGN), (2.0**32, PM_ERR_TRUNC)):
        with pytest.raises(PMError) as err:
            fetchgroup.stuff_double(value, fetchgroup.U32)
        assert err.value.code == code


# -- whole runs ---------------------------------------------------------------------------


def ours(*args: str, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run([PY, "-m", "purepcp.tools.pmstat", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)  # fmt: skip


def theirs(*args: str, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run(["pmstat", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=cwd)  # fmt: skip


def test_usage_and_exit_status():
    done = ours("extra")
    assert done.returncode == 1
    assert done.stderr == "pmstat: too many options\n" + USAGE
    done = ours("-P")
    assert done.stderr == "pmstat: -P can only be used with archives\n" + USAGE


def test_archive_run_heading_and_rates():
    done = ours("-z", "-a", qa("ac15"), "-s", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:5] == [
        'Note: timezone set to local timezone of host "ac15" from archive',
        "",
        "@ Sat Jul  9 08:48:29 2005",
        " loadavg                      memory      swap        io    system         cpu",
        "   1 min   swpd   free   buff  cache   si   so   bi   bo   in   cs  us  sy  id",
    ]
    assert lines[-1].endswith("1805 3416 3595  10K  33K 1047  96   1   3")


def _masked(text: str) -> list[str]:
    """TEXT with the instantaneous columns (load average, memory) masked, and a header
    naming the present moment (a window past the archive's end) made one."""
    out = []
    for line in text.splitlines():
        if line.startswith("@ ") and _is_now(line[2:]):
            out.append("@ <now>")
            continue
        m = re.match(r"^(\w*\s*)?(\s+[\d.?]+)(\s+[\d?]+[mg]?){4}(?=\s)", line)
        out.append("<instants>" + line[m.end() :] if m and not line.startswith("@") else line)
    return out


def _is_now(text: str) -> bool:
    """Whether TEXT is a ctime of the last ten minutes (two runs print it apart)."""
    import time

    try:
        stamp = time.mktime(time.strptime(text.strip(), "%a %b %d %H:%M:%S %Y"))
    except ValueError:
        return False
    return abs(time.time() - stamp) < 600


ARCHIVE_CASES = [
    ("-z", "-a", "{multi}"),
    ("-z", "-a", "{ac15}", "-a", "{ac15},{ac15}", "-s", "2", "-x"),
    ("-z", "-l", "-a", "{ac15}", "-a", "{ac15}", "-s", "3", "-t", "10"),
    ("-Z", "UTC", "-a", "{ac15}", "-s", "2", "-t", "1m", "-x"),
    ("-a", "{ac15}", "-S", "3000", "-s", "2"),
    ("-z", "-a", "{ac15}", "-T", "+1m"),
    ("-z", "-a", "{ac15}", "-S", "@xx"),
    ("-a", "/nonexistent/archive"),
    ("-z", "-a", "{pcp-vmstat}", "-x", "-O", "+10", "-s", "4"),
]


@pytest.mark.interop
@pytest.mark.parametrize("case", ARCHIVE_CASES, ids=lambda c: " ".join(c))
def test_archives_beside_pcps_pmstat(case):
    require_reference("pmstat")
    names = {k: qa(k) for k in ("ac15", "pcp-vmstat")}
    names["multi"] = qa_dir("multi")
    args = [a.format(**names) for a in case]
    mine, pcps = ours(*args), theirs(*args)
    assert (mine.returncode, mine.stderr) == (pcps.returncode, pcps.stderr)
    assert _masked(mine.stdout) == _masked(pcps.stdout)


PMSTAT_CONFIG = """log mandatory on default {
    kernel.all.load swap.used mem.util.free mem.util.bufmem mem.util.cached
    swap.pagesin swap.pagesout disk.all.blkread disk.all.blkwrite kernel.all.intr
    kernel.all.pswitch kernel.all.cpu.nice kernel.all.cpu.user kernel.all.cpu.intr
    kernel.all.cpu.sys kernel.all.cpu.idle kernel.all.cpu.wait.total kernel.all.cpu.steal
}
"""


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """An archive our pmlogger wrote from our pmcd with pmstat's metrics (QA 919's)."""
    from tests.support.loggers import logger_env
    from tests.support.tool_pmcds import running_pmcd

    require_reference("pmstat")
    tmp = tmp_path_factory.mktemp("pmstat-logged")
    (tmp / "pmcd").mkdir()
    with running_pmcd("ours", tmp / "pmcd") as (_, host, _env):
        (tmp / "config").write_text(PMSTAT_CONFIG)
        env = logger_env(tmp)
        done = subprocess.run([PY, "-m", "purepcp.pmlogger.main", "-h", host, "-c",
                               str(tmp / "config"), "-t", "0.55", "-s", "6", "-l",
                               str(tmp / "log"), str(tmp / "arch")], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr + (tmp / "log").read_text()
    return tmp / "arch"


@pytest.mark.interop
@pytest.mark.parametrize("args", [("-t", "1"), ("-t", "0.5", "-x"), ("-s", "1", "-t", "2")])
def test_our_pmloggers_archive_beside_pcps_pmstat(logged, args):
    mine, pcps = ours(*args, "-a", str(logged)), theirs(*args, "-a", str(logged))
    assert (mine.returncode, mine.stderr) == (pcps.returncode, pcps.stderr)
    assert _masked(mine.stdout) == _masked(pcps.stdout)
    assert "pmFetchGroup: End of PCP archive log" in mine.stdout or "-s" in args


@pytest.mark.interop
@pytest.mark.parametrize("which", ["reference", "ours"])
def test_live_heading_and_shape(which, tmp_path):
    """Live from a pmcd: the same lines, every number a number where PCP has one."""
    from tests.support.tool_pmcds import running_pmcd

    def shape(text: str) -> list[str]:
        return [
            " ".join(re.sub(r"\d[\d.]*[mgKM]?", "N", line).split()) for line in text.splitlines()
        ]

    require_reference("pmstat")
    with running_pmcd(which, tmp_path) as (_, host, env):
        for args in (("-s", "2", "-t", "0.3"), ("-s", "1", "-t", "0.3", "-x", "-h", host)):
            mine = ours("-h", host, *args, env=env)
            pcps = theirs("-h", host, *args, env=env)
            assert (mine.returncode, mine.stderr) == (pcps.returncode, pcps.stderr)
            assert [len(line) for line in mine.stdout.splitlines()] == [
                len(line) for line in pcps.stdout.splitlines()
            ]
            assert shape(mine.stdout)[1:] == shape(pcps.stdout)[1:]
            assert mine.stdout.startswith("@ ")


RUN_AND_LIST = """
import json, sys
from purepcp.tools import pmstat
status = pmstat.main(sys.argv[1:])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_a_live_run_imports_nothing_it_does_not_use(tmp_path):
    """Live, pmstat needs neither the archive reader, NumPy, trio nor construct."""
    import json

    from tests.support.client_servers import ours_serving

    heavy = ("numpy", "trio", "construct", "purepcp.pmapi.archive", "purepcp.pmapi.derived")
    with ours_serving(tmp_path) as pmcd:
        done = subprocess.run([PY, "-c", RUN_AND_LIST, "-h", pmcd.host, "-s", "1", "-t", "0.1"],
                              capture_output=True, text=True, env=pmcd.env, cwd=ROOT,
                              timeout=120)  # fmt: skip
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["status"] == 0, done.stderr
    loaded = [m for m in report["modules"] if any(m == h or m.startswith(h + ".") for h in heavy)]
    assert loaded == []
