"""Two pmcds serving the same kinds of agents, for comparing our client tools with PCP's.

`ours_serving(tmp)` runs our pmcd with its own pmcd, linux, simple and trivial
agents in-process.  `reference_serving(tmp)` runs the reference pmcd with PCP's
pmda_pmcd.so, pmdalinux and PCP's Python simple agent, and a namespace that
adds simple to PCP's root.  `run_ours(tool, host, *args)` runs one of our tools
as a user would.  Every process is stopped when the context ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.reference_pmcd import PMNS_ROOT, RunningPMCD, reference_pmcd

ROOT = Path(__file__).resolve().parents[2]
PMDAS = Path("/var/lib/pcp/pmdas")

OUR_CONF = (
    "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
    "linux 60 dso Linux purepcp.agents.linux\n"
    "simple 253 dso Simple purepcp.agents.simple\n"
    "trivial 250 dso Trivial purepcp.agents.trivial\n"
)


@contextlib.contextmanager
def ours_serving(tmp: Path) -> Iterator[OurPMCD]:
    (tmp / "simple").mkdir(exist_ok=True)
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    with our_pmcd(OUR_CONF, tmp) as running:
        yield running


@contextlib.contextmanager
def reference_serving(tmp: Path) -> Iterator[RunningPMCD]:
    """The reference pmcd; the caller has checked require_reference().

    The reference pmcd runs its agents as user pcp, which cannot read pytest's
    private temporary directories: the agents' directory is a world-readable one
    of its own, removed afterwards.
    """
    pmdas = Path(tempfile.mkdtemp(prefix="purepcp-pmdas-"))
    try:
        pmdas.chmod(0o755)
        for agent in ("pmcd", "linux"):  # their help files, where $PCP_PMDAS_DIR says
            (pmdas / agent).symlink_to(PMDAS / agent)
        (pmdas / "simple").mkdir()
        (pmdas / "simple" / "simple.conf").write_text("sec,min,hour\n")
        (pmdas / "simple").chmod(0o755)
        root = Path(PMNS_ROOT).read_text().replace("root {", "root {\n\tsimple", 1)
        pmns = pmdas / "root"
        simple = (ROOT / "pmns" / "simple").read_text()
        pmns.write_text("#define SIMPLE 253\n" + root + "\n" + simple)
        pmns.chmod(0o644)
        conf = [
            f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
            f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60",
            f"simple\t253\tpipe\tbinary\t/usr/bin/python3 {PMDAS / 'simple' / 'pmdasimple.python'}",
        ]
        env = {"PCP_PMDAS_DIR": str(pmdas)}
        with reference_pmcd(conf, str(pmns), extra_env=env) as running:
            yield running
    finally:
        shutil.rmtree(pmdas, ignore_errors=True)


def tool_env() -> dict[str, str]:
    """The environment our tools and PCP's run in: no default derived metrics."""
    return dict(os.environ, PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="")


def run_ours(tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run our TOOL (pminfo, pmval, ...) with ARGS, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", f"purepcp.tools.{tool}", *args],
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def run_theirs(tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the reference TOOL with ARGS, capturing text output."""
    return subprocess.run(
        [tool, *args], env=tool_env(), capture_output=True, text=True, timeout=timeout
    )
