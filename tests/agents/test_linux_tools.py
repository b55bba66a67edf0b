"""PCP's own tools against our pmcd with only our agents: the same header and columns as
against PCP's pmcd with its C pmdalinux (issue 23's acceptance).

Two pmcds run side by side: ours with its default agents (pmcd.conf as shipped), and
PCP 6.0.3's with the pmcd and linux agents.  Each command (PCP's `pcp free`, `pcp
mpstat`, ..., `pcp dstat` with each plugin, `pmrep` with each metricset installed in
/etc/pcp/pmrep) runs against both.  The two outputs are compared by their shape: every
number becomes `N`, so what must agree is every header, column and row, and which
values are present ("N/A", a blank or a "-" where the other side has a number is a
difference).  A command that fails against PCP's own pmcd (a metricset of an agent
that is not running there, a dstat plugin for MySQL) is skipped, saying so.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.pcp_tools import (
    DSTAT_CONF,
    LINUX_DSO,
    PMNS_DIR,
    PMREP_CONF,
    ROOT,
    root_block,
    run_tool,
    shape,
    tool_env,
)
from tests.support.reference_pmcd import RunningPMCD, reference_pmcd, require_reference
from tests.support.sysv import sysv_objects

#: Two samples half a second apart: rates need the second.
SAMPLES = ("-t", "0.5", "-s", "2")
PARTS = ("root_pmcd", "root_linux")


#: dstat plugins that PCP 6.0.3's dstat itself crashes on, whatever the agent: with no disk
#: I/O in the interval, disk-svctm divides by zero ("OverflowError: cannot convert float
#: infinity to integer"), so whether it prints depends on the disk traffic of that second.
DSTAT_CRASHES = {"disk-svctm"}


def _metricsets() -> list[str]:
    """The metricsets PCP's pmrep configuration defines (none when PCP is not installed)."""
    names: list[str] = []
    for conf in sorted(PMREP_CONF.glob("*.conf")):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read(conf)
        except configparser.Error:
            continue
        names += [s for s in parser.sections() if s not in ("options", "global")]
    return names


def _dstat_plugins() -> list[str]:
    """The dstat plugins PCP installs (their file names and the [sections] within)."""
    plugins: list[str] = []
    for conf in sorted(DSTAT_CONF.glob("*")):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read(conf)
        except configparser.Error:
            continue
        plugins += [s for s in parser.sections() if s not in plugins]
    return plugins


COMMANDS: dict[str, tuple[str, ...]] = {
    "pcp free": ("pcp", "free"),
    "pcp uptime": ("pcp", "uptime"),
    "pcp mpstat": ("pcp", "mpstat", *SAMPLES),
    "pcp mpstat -P ALL": ("pcp", "mpstat", "-P", "ALL", *SAMPLES),
    "pcp mpstat -A": ("pcp", "mpstat", "-A", *SAMPLES),
    "pcp mpstat -I CPU": ("pcp", "mpstat", "-I", "CPU", *SAMPLES),
    "pcp numastat": ("pcp", "numastat"),
    "pcp ipcs": ("pcp", "ipcs"),
    "pcp ipcs -l": ("pcp", "ipcs", "-l"),
    "pcp ipcs -u": ("pcp", "ipcs", "-u"),
    "pcp iostat": ("pcp", "iostat", *SAMPLES),
    "pcp iostat -x t": ("pcp", "iostat", "-x", "t", *SAMPLES),
    **{f"pmrep :{name}": ("pmrep", *SAMPLES, f":{name}") for name in _metricsets()},
    **{
        f"pcp dstat --{name}": ("pcp", "dstat", "--nocolor", f"--{name}", "1", "1")
        for name in _dstat_plugins()
        if name not in DSTAT_CRASHES
    },
}


def test_shape_masks_numbers_not_words() -> None:
    assert shape("Mem:  24684084  173124 1.5k  N/A -\n\n cpu0  12.50 1e+03 inf info") == [
        "Mem: N N N N/A -",
        "cpu0 N N N info",
    ]


def _pmcd_and_linux_pmns(tmp: Path) -> str:
    """A namespace of only PCP's pmcd and linux agents (PCP's root file also names every
    other agent PCP ships, which a pmcd running only these two does not serve)."""
    blocks = [re.sub(r"(?ms)^root \{.*?^\}", "", Path(PMNS_DIR, f).read_text()) for f in PARTS]
    tops = ["pmcd", *re.findall(r"(?m)^\t?\s*(\w+)\s*$", root_block("root_linux"))]
    path = tmp / "root"
    path.write_text("root {\n" + "".join(f"    {t}\n" for t in tops) + "}\n" + "".join(blocks))
    return str(path)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Iterator[dict[str, tuple[subprocess.CompletedProcess, ...]]]:
    """{command: (against ours, against PCP's)}, every command run once against each."""
    require_reference("pminfo", "pmrep", "pcp")
    if not os.path.exists(LINUX_DSO):
        pytest.skip(f"reference PCP 6 is not installed: no {LINUX_DSO}")
    tmp = tmp_path_factory.mktemp("tools")
    conf = (ROOT / "pmcd" / "pmcd.conf").read_text()
    with ExitStack() as stack:
        stack.enter_context(sysv_objects())  # so that pcp ipcs has something to list
        mine = stack.enter_context(our_pmcd(conf, tmp))
        theirs: RunningPMCD = stack.enter_context(
            reference_pmcd([f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}"], _pmcd_and_linux_pmns(tmp))
        )
        jobs = [
            (name, side, host, env)
            for name in COMMANDS
            for side, host, env in (
                (0, mine.host, tool_env(mine.env)),
                (1, theirs.host, tool_env(theirs.env)),
            )
        ]
        results: dict[str, list] = {name: [None, None] for name in COMMANDS}
        with ThreadPoolExecutor(max_workers=8) as pool:
            for (name, side, _, _), done in zip(
                jobs, pool.map(lambda j: run_tool(j[2], j[3], COMMANDS[j[0]]), jobs), strict=True
            ):
                results[name][side] = done
        yield {name: tuple(pair) for name, pair in results.items()}


def _works(result: subprocess.CompletedProcess) -> bool:
    """Whether a command ran to its end (exit status 0)."""
    return result.returncode == 0


@pytest.mark.interop
@pytest.mark.slow  # every pmrep metricset and dstat plugin against both pmcds: a minute or more
@pytest.mark.skipif(shutil.which("pcp") is None, reason="reference PCP 6 is not installed")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_same_header_and_columns_as_with_pmdalinux(outputs, command: str) -> None:
    ours, theirs = outputs[command]
    if not _works(theirs):
        why = theirs.stderr.strip().splitlines()[-1:] or [f"exit status {theirs.returncode}"]
        pytest.skip(f"{command} fails against PCP's pmcd with pmdalinux too: {why[0]}")
    assert _works(ours), f"{command} against ours: {ours.returncode}\n{ours.stderr}{ours.stdout}"
    assert shape(ours.stdout) == shape(theirs.stdout), (
        f"ours:\n{ours.stdout}\nPCP's:\n{theirs.stdout}"
    )


@contextmanager
def _both_pmcds(tmp: Path) -> Iterator[tuple[OurPMCD, RunningPMCD]]:
    """Our pmcd with its default agents, and PCP's with pmdalinux, side by side."""
    if not os.path.exists(LINUX_DSO):
        pytest.skip(f"reference PCP 6 is not installed: no {LINUX_DSO}")
    conf = (ROOT / "pmcd" / "pmcd.conf").read_text()
    (tmp / "ours").mkdir()
    with (
        our_pmcd(conf, tmp / "ours") as mine,
        reference_pmcd(
            [f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}"], _pmcd_and_linux_pmns(tmp)
        ) as theirs,
    ):
        yield mine, theirs


def _pmlogconf_groups(host: str, env: dict[str, str], path: Path) -> list[str]:
    """The group lines ("#+ group:state:...") pmlogconf writes for a new config from HOST."""
    done = subprocess.run(
        ["pmlogconf", "-d", "/var/lib/pcp/config/pmlogconf", "-h", host, str(path)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return [line for line in path.read_text().splitlines() if line.startswith("#+ ")]


@pytest.mark.interop
def test_pmlogconf_enables_the_same_groups(tmp_path) -> None:
    """pmlogconf, probing our pmcd, enables (y), offers (n) and excludes (x) the same groups
    as against PCP's pmcd with pmdalinux, so the default pmlogger logs the same."""
    require_reference("pmlogconf")
    with _both_pmcds(tmp_path) as (mine, theirs):
        ours = _pmlogconf_groups(mine.host, tool_env(mine.env), tmp_path / "ours.conf")
        pcps = _pmlogconf_groups(theirs.host, tool_env(theirs.env), tmp_path / "pcp.conf")
    assert [g for g in ours if g not in pcps] == []
    assert ours == pcps


#: The metrics grafana-pcp's "PCP Vector: Host Overview" dashboard plots (its panels' targets).
HOST_OVERVIEW = (
    *(f"kernel.cpu.util.{f}" for f in ("user", "sys", "intr", "wait")),
    "kernel.all.load",
    *(f"kernel.percpu.cpu.{f}" for f in ("user", "sys")),
    "kernel.all.pswitch",
    "kernel.all.runnable",
    *(f"mem.util.{f}" for f in ("free", "cached", "used")),
    "mem.physmem",
    "mem.vmstat.pgfault",
    "mem.vmstat.pgmajfault",
    *(f"network.interface.{d}.{f}" for d in ("in", "out") for f in ("bytes", "drops", "packets")),
    *(f"network.tcpconn.{f}" for f in ("time_wait", "established", "close_wait")),
    *(
        f"network.tcp.{f}"
        for f in (
            "timeouts",
            "listendrops",
            "listenoverflows",
            "retranssegs",
            "fastretrans",
            "slowstartretrans",
            "synretrans",
        )
    ),
    "disk.dev.util",
    *(f"disk.dev.{f}" for f in ("read_rawactive", "write_rawactive", "read", "write")),
    *(f"disk.dev.{f}" for f in ("read_bytes", "write_bytes", "avactive")),
)


def _probe_counts(host: str, env: dict[str, str]) -> dict[str, str]:
    """pmprobe -v's value count (or error) for each dashboard metric, from pmcd HOST."""
    done = subprocess.run(
        ["pmprobe", "-h", host, "-v", *HOST_OVERVIEW],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()}


@pytest.mark.interop
def test_grafana_host_overview_finds_every_metric(tmp_path) -> None:
    """Every metric of grafana-pcp's Vector host overview exists against our pmcd, with as
    many values as against PCP's pmcd with pmdalinux (derived ones through PCP's own
    derived-metric configuration, as grafana-pcp's pmproxy would use)."""
    require_reference("pmprobe")
    with _both_pmcds(tmp_path) as (mine, theirs):
        ours = _probe_counts(mine.host, tool_env(mine.env))
        pcps = _probe_counts(theirs.host, tool_env(theirs.env))
    assert all(not count.startswith("-") for count in pcps.values()), pcps
    assert ours == pcps
