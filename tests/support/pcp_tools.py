"""Running PCP's own tools (pcp, pmrep, dstat, ...) against a pmcd in tests, and comparing
their outputs by shape: where PCP's files are, the environment the tools run in, one
command run against one pmcd, and an output with its numbers masked."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINUX_DSO = "/var/lib/pcp/pmdas/linux/pmda_linux.so"
PMREP_CONF = Path("/etc/pcp/pmrep")
DSTAT_CONF = Path("/etc/pcp/dstat")
DERIVED = "/var/lib/pcp/config/derived"
PMNS_DIR = "/var/lib/pcp/pmns"

#: A number as PCP's tools print one: signed, with decimals, an exponent or a unit suffix,
#: or infinite (a rate over an interval the disks were idle in: whether one was depends on
#: what the machine did in that half second, not on the agent)
_NUMBER = re.compile(
    r"(?<![A-Za-z_0-9.])[-+]?"
    r"(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[kKMGTPB]?|inf|nan)"
    r"(?![A-Za-z_0-9])"
)


def shape(text: str) -> list[str]:
    """TEXT's lines with each number replaced by N and runs of blanks by one space."""
    lines = (re.sub(r"\s+", " ", _NUMBER.sub("N", line)).strip() for line in text.splitlines())
    return [line for line in lines if line]


def tool_env(pmcd_env: dict[str, str]) -> dict[str, str]:
    """The environment PCP's tools run in, the same for both pmcds: PCP's own derived
    metrics (as a PCP user has them) and PCP's own Python modules."""
    env = dict(pmcd_env, PCP_PYTHON_PROG="/usr/bin/python3", TERM="dumb", COLUMNS="250")
    env.pop("PYTHONPATH", None)
    env.pop("PCP_VAR_DIR", None)
    env["PCP_DERIVED_CONFIG"] = DERIVED if os.path.exists(DERIVED) else ""
    return env


def root_block(name: str) -> str:
    """The body of the root { } block of PCP's namespace file NAME."""
    found = re.search(r"(?ms)^root \{(.*?)^\}", Path(PMNS_DIR, name).read_text())
    return found.group(1) if found else ""


def run_tool(host: str, env: dict[str, str], argv: tuple[str, ...]) -> subprocess.CompletedProcess:
    """ARGV against pmcd HOST (-h inserted after the tool's name(s)); a run still going
    after a minute is taken as hung (exit status -9, "timed out")."""
    at = 2 if argv[0] == "pcp" else 1
    full = (
        [*argv[:at], "-h", host, *argv[at:]] if argv[0] != "pcp" else ["pcp", "-h", host, *argv[1:]]
    )
    try:
        return subprocess.run(full, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(full, -9, str(exc.stdout or ""), "timed out")
