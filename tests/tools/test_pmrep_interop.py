"""Our pmrep against PCP 6.0.3's on the same archives and the same live pmcd.

Archives: one PCP's pmlogger wrote from PCP's pmcd and pmdalinux, one our pmlogger wrote
from our pmcd and agents, and one PCP's pmi wrote (values a whole second apart).  Where
both replay at a record's time, or report the records themselves (-u), or report rates
of counters (interpolated linearly by both), the output must be the same, byte for byte.
Instantaneous values between two records are where the interpolation rules differ (ours
takes the closest observation, seed 001; libpcp's often the earlier one): docs/pmrep.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.client_servers import ours_serving, reference_serving
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]
PCP_PMREP = "/usr/bin/pmrep"
LOGGED = """log mandatory on 1 sec {
    kernel.all mem.util mem.vmstat swap hinv.ncpu kernel.percpu.cpu disk.all disk.dev
    network.interface proc.runq
}
"""
PMI_SCRIPT = r"""
import sys
from pcp import pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetHostname("pmi.example")
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(245, 1)
for i, name in enumerate(("alpha", "beta", "gamma delta")):
    log.pmiAddInstance(indom, name, i)
units = log.pmiUnits(0, 0, 1, 0, 0, c.PM_COUNT_ONE)
kb = log.pmiUnits(1, 0, 0, c.PM_SPACE_KBYTE, 0, 0)
ms = log.pmiUnits(0, 1, 0, 0, c.PM_TIME_MSEC, 0)
log.pmiAddMetric("t.ctr", log.pmiID(245, 0, 0), c.PM_TYPE_U64, indom, c.PM_SEM_COUNTER, units)
log.pmiAddMetric("t.busy", log.pmiID(245, 0, 1), c.PM_TYPE_U32, indom, c.PM_SEM_COUNTER, ms)
log.pmiAddMetric("t.mem", log.pmiID(245, 0, 2), c.PM_TYPE_U64, c.PM_INDOM_NULL,
                 c.PM_SEM_INSTANT, kb)
log.pmiAddMetric("t.load", log.pmiID(245, 0, 3), c.PM_TYPE_DOUBLE, indom, c.PM_SEM_INSTANT,
                 log.pmiUnits(0, 0, 0, 0, 0, 0))
log.pmiAddMetric("t.name", log.pmiID(245, 0, 4), c.PM_TYPE_STRING, c.PM_INDOM_NULL,
                 c.PM_SEM_DISCRETE, log.pmiUnits(0, 0, 0, 0, 0, 0))
for s in range(40):
    for i, name in enumerate(("alpha", "beta", "gamma delta")):
        log.pmiPutValue("t.ctr", name, str(s * s * (i + 1) * 7 + i))
        log.pmiPutValue("t.busy", name, str((s * 733 * (i + 1)) % (2**32)))
        log.pmiPutValue("t.load", name, str((s % 7) * 1.37 + i * 12345.678 - 3))
    log.pmiPutValue("t.mem", "", str(1_000_000 + s * 3_333))
    log.pmiPutValue("t.name", "", "run %d" % (s // 10))
    log.pmiWrite(1_700_000_000 + s, 0)
del log
"""


def env() -> dict[str, str]:
    """Both tools with PCP's default derived metrics (:sar's kernel.cpu.util.* are some)."""
    values = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT), PCP_PYTHON_PROG="/usr/bin/python3")
    values.pop("PCP_DERIVED_CONFIG", None)
    return values


def both(*args: str, cwd: Path, timeout: float = 120) -> tuple[str, str]:
    """PCP's pmrep and ours with ARGS: each one's status, stdout and stderr must agree."""
    theirs = subprocess.run([PCP_PMREP, *args], env=env(), capture_output=True, text=True,
                            cwd=cwd, timeout=timeout)  # fmt: skip
    ours = subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", "--no-progress", *args],
                          env=env(), capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)  # fmt: skip
    assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
    return ours.stdout, theirs.stdout


def same(*args: str, cwd: Path) -> str:
    ours, theirs = both(*args, cwd=cwd)
    assert ours == theirs
    assert ours.strip()
    return ours


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> Path:
    """logged-pcp, logged-ours and pmi, in one folder."""
    require_reference("pmlogger", "pmrep")
    tmp = tmp_path_factory.mktemp("pmrep-interop")
    (tmp / "cfg").write_text(LOGGED)
    with reference_serving(tmp) as pcp:
        argv = ["pmlogger", "-h", pcp.host, "-c", "cfg", "-s", "6", "logged-pcp"]
        subprocess.run(argv, cwd=tmp, env=pcp.env, check=True, capture_output=True, timeout=120)
    with ours_serving(tmp) as ours:
        subprocess.run([sys.executable, "-m", "purepcp.pmlogger.main", "-h", ours.host, "-c", "cfg",
                        "-s", "6", "logged-ours"], cwd=tmp, env=env(), check=True,
                       capture_output=True, timeout=120)  # fmt: skip
    made = subprocess.run(["/usr/bin/python3", "-c", PMI_SCRIPT, "pmi"], cwd=tmp,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"PCP's python pmi module does not work here: {made.stderr.strip()}")
    (tmp / "pmi.folio").write_text("PCPFolio\nVersion: 1\n# by hand\nArchive: pmi.example pmi\n")
    (tmp / "bad.folio").write_text("PCPFolio\nVersion: 2\n")
    return tmp


LOGGERS = ["logged-pcp", "logged-ours"]


@pytest.mark.interop
@pytest.mark.parametrize("archive", LOGGERS)
def test_vmstat_records(archives, archive):
    """:vmstat over each record (-u): every column, instantaneous ones included."""
    same("-u", "-a", archive, ":vmstat", "-p", cwd=archives)


@pytest.mark.interop
@pytest.mark.parametrize("archive", LOGGERS)
def test_vmstat_interpolated_rates(archives, archive):
    """:vmstat each second: the same header and the same rates (si so bi bo in cs us sy id
    wa st); the memory columns may differ where the interpolation rules do."""
    ours, theirs = both("-a", archive, ":vmstat", cwd=archives)
    ours_lines, their_lines = ours.splitlines(), theirs.splitlines()
    assert len(ours_lines) == len(their_lines) > 3
    for mine, pcp in zip(ours_lines, their_lines, strict=True):
        if not mine.strip() or mine.split()[0] == "r":  # (blank before a repeated header)
            assert mine == pcp
        else:
            assert mine.split()[6:] == pcp.split()[6:]


@pytest.mark.interop
@pytest.mark.parametrize("archive", LOGGERS)
@pytest.mark.parametrize(
    ("metricset", "flags"), [(":sar", ["-u"]), (":sar-b", []), (":vmstat-d", ["-u"])]
)
def test_rate_metricsets(archives, archive, metricset, flags):
    """Metricsets of counters (per CPU and per disk ones with -X): identical.  :sar's and
    :vmstat-d's derived rate() metrics are compared over the records (-u): between
    records our derived engine's rate() and libpcp's take the changes at different
    times (docs/pmrep.md), which an archive logged live may or may not show."""
    same(*flags, "-a", archive, metricset, cwd=archives)


@pytest.mark.interop
@pytest.mark.parametrize("archive", LOGGERS)
def test_per_instance_and_csv(archives, archive):
    same("-a", archive, "kernel.percpu.cpu.user", "kernel.percpu.cpu.sys", "-i", "cpu0",
         cwd=archives)  # fmt: skip
    same("-a", archive, "-o", "csv", "kernel.all.cpu", "kernel.all.intr", "-P", "4",
         cwd=archives)  # fmt: skip
    same("-u", "-a", archive, "-o", "csv", "mem.util", "-k", cwd=archives)


PMI_CASES = [
    ["t"],
    ["-p", "t.ctr", "t.busy", "t.mem", "t.load"],
    ["-o", "csv", "t"],
    ["-o", "csv", "-k", "-P", "1", "t.ctr", "t.load"],
    ["-i", "beta,gamma delta", "t.ctr", "t.busy"],
    ["-i", "alpha", "-r", "t"],
    ["-X", "INST", "t.ctr", "t.load", "t.name"],
    ["t.mem,mem,,MB,,6,1", "t.busy,busy,,s,,4", "t.ctr,,,count x 10^3"],
    ["-x", "-t", "3", "-s", "5", "t.ctr"],
    ["-w", "4", "-P", "2", "t.load"],
    ["-W", "12", "-0", "5", "t.load", "t.ctr"],
    ["-S", "@Tue Nov 14 22:13:30 2023", "-T", "@Tue Nov 14 22:13:45 2023", "t.mem"],
    ["-t", "7", "-E", "2", "t.mem"],
    ["-H", "-U", "t.ctr"],
    ["-G", "-l", ";", "-o", "csv", "t.load"],
    ["-q", "count x 10^3", "-b", "MB", "t.ctr", "t.mem"],
    ["-f", "%s", "-p", "t.mem"],
    ["-8", "20000", "t.load"],
    ["-J", "2", "t.load"],
    ["-J", "-1", "-X", "I", "t.ctr", "t.load"],
    ["-J", "2", "-o", "csv", "t"],
    ["-j", "-i", "gam.*", "t.ctr", "t.load"],
    ["-j", "-J", "1", "-i", "alpha|beta", "t.load"],
    ["-n", "-j", "-J", "1", "-i", "alpha|beta", "t.load"],
    ["-X", "I", "-6", "t.ctr,-t.load", "t.ctr", "t.load"],
    ["-X", "I", "-6", "t.busy", "-J", "1", "t.busy", "t.load"],
    ["-g", "-E", "2", "-s", "5", "t.mem", "t.load"],
    ["-g", "-X", "I", "-s", "2", "t.ctr", "t.load", "t.mem"],
    ["-2", "-J", "2", "t.load", "t.ctr", "t.mem"],
    ["-3", "-J", "-1", "t"],
    ["-N", "t.load", "-J", "1", "t.ctr", "t.busy"],
    ["-N", "t.load,t.ctr", "-J", "1", "-X", "I", "t.busy"],
    ["-N", "t.load", "-8", "5", "-J", "2", "t.ctr", "t.load"],
    ["-m", "-s", "3", "t.ctr", "t.mem"],
    ["-m", "-o", "csv", "-s", "3", "t"],
    ["-m", "-g", "-X", "I", "-s", "2", "t.ctr", "t.load"],
]


@pytest.mark.interop
def test_archive_folio(archives):
    """--archive-folio: the archives a PCPFolio lists (and its complaint about a bad one)."""
    same("--archive-folio", "pmi.folio", "-x", "-s", "3", "t.mem", "t.ctr", cwd=archives)
    ours, theirs = both("--archive-folio", "bad.folio", "t.mem", cwd=archives)
    assert ours == theirs == ""


@pytest.mark.interop
@pytest.mark.parametrize("args", PMI_CASES, ids=[" ".join(a) for a in PMI_CASES])
def test_pmi_archive(archives, args):
    """At whole seconds, where every sample meets a record: every flag, every value."""
    same("-a", "pmi", *args, cwd=archives)


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        [":nosuch"],
        ["no.such.metric"],
        ["t.ctr", "-i", "nine"],
        ["-o", "paper", "t.ctr"],
        ["-e", "my.y=t.mem+1", "my.y"],
    ],
)
def test_bad_input_as_pcp(archives, args):
    """The same message (a PM_ERR_ code's name before its text, as PCP's pmErr prints
    it) and output, and exit 1, for an unknown metricset, metric or instance, or a
    derived metric that cannot bind."""
    theirs = subprocess.run([PCP_PMREP, "-a", "pmi", *args], env=env(), capture_output=True,
                            text=True, cwd=archives, timeout=60)  # fmt: skip
    ours = subprocess.run([sys.executable, "-m", "purepcp.tools.pmrep", "-a", "pmi", *args],
                          env=env(), capture_output=True, text=True, cwd=archives,
                          timeout=60)  # fmt: skip
    assert ours.returncode == theirs.returncode == 1
    assert (ours.stderr, ours.stdout) == (theirs.stderr, theirs.stdout)


@pytest.mark.interop
def test_live_columns_against_our_pmcd(tmp_path):
    """Live from our pmcd: the same header lines for the everyday metricsets."""
    require_reference("pmrep")
    with ours_serving(tmp_path) as ours:
        for metricset in (":vmstat", ":sar", ":sar-r", ":iostat-dktx", ":vmstat-w"):
            args = ("-h", ours.host, metricset, "-s", "1", "-t", "0.1")
            mine, theirs = both(*args, cwd=tmp_path)
            assert mine.splitlines()[0] == theirs.splitlines()[0]
            assert len(mine.splitlines()) == len(theirs.splitlines())
        # -m: the labels the pmcd gives, in the header (stdout, -X, -g) and the CSV's
        cases = [
            (["kernel.all.load", "mem.util.free"], 4),
            (["-X", "I", "kernel.all.load", "hinv.ncpu"], 3),
            (["-g", "kernel.all.load"], 7),
            (["-o", "csv", "kernel.all.load", "kernel.uname.release"], 1),
        ]
        for args, header in cases:
            mine, theirs = both("-h", ours.host, "-m", "-s", "1", *args, cwd=tmp_path)
            assert mine.splitlines()[:header] == theirs.splitlines()[:header]
            assert "{'" in mine


@pytest.mark.interop
def test_archive_output_passes_pmlogcheck_and_holds_what_pcps_does(archives, tmp_path):
    """-o archive: PCP's pmlogcheck finds nothing wrong, and both pmreps read back from
    ours what they read from the archive PCP's pmrep -o archive writes."""
    require_reference("pmlogcheck")
    copies = {}
    for who, argv in (
        ("ours", [sys.executable, "-m", "purepcp.tools.pmrep"]),
        ("pcp", [PCP_PMREP]),
    ):
        copies[who] = str(tmp_path / who)
        made = subprocess.run([*argv, "-a", "pmi", "-o", "archive", "-F", copies[who], "t"],
                              env=env(), capture_output=True, text=True, cwd=archives,
                              timeout=120)  # fmt: skip
        assert made.returncode == 0, made.stderr
    check = subprocess.run(["pmlogcheck", copies["ours"]], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert (check.returncode, check.stdout, check.stderr) == (0, "", "")
    ours = same("-a", copies["ours"], "-r", "-o", "csv", "t", cwd=archives)
    assert ours == same("-a", copies["pcp"], "-r", "-o", "csv", "t", cwd=archives)


@pytest.mark.interop
@pytest.mark.parametrize("archive", LOGGERS)
def test_archive_output_with_help_texts(archives, archive, tmp_path):
    """--include-texts: PCP's pminfo finds the same help, one-line and full, in the archive
    either pmrep writes."""
    texts = {}
    for who, argv in (
        ("ours", [sys.executable, "-m", "purepcp.tools.pmrep"]),
        ("pcp", [PCP_PMREP]),
    ):
        base = str(tmp_path / who)
        made = subprocess.run([*argv, "-a", archive, "-o", "archive", "-F", base,
                               "--include-texts", "kernel.all.load", "disk.dev.read"],
                              env=env(), capture_output=True, text=True, cwd=archives,
                              timeout=120)  # fmt: skip
        assert made.returncode == 0, made.stderr
        shown = subprocess.run(["pminfo", "-a", base, "-tTd", "kernel.all.load", "disk.dev.read"],
                               env=env(), capture_output=True, text=True, timeout=60)  # fmt: skip
        texts[who] = shown.stdout
    assert texts["ours"] == texts["pcp"]
    assert "Help:" in texts["ours"]
