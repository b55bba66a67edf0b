"""Benchmark: resident memory of our pmcd running its default agents in-process.

Starts our pmcd with the packaged pmcd.conf (pmcd, trivial, simple, linux and proc,
all in-process) and its default namespace, fetches every metric once with the
reference pminfo (so every agent has built what it keeps), and prints the
daemon's resident set size.  Target: at most 25 MB (issue 25; it was 60 MB).  For
comparison, the same figure for the reference pmcd with the two C agents it can load
in-process (pmcd and linux, as DSOs) is printed with the ratio.

    .venv/bin/python benchmarks/bench_pmcd_memory.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMCD, PMDAS, running_pmcd  # noqa: E402

TARGET_MB = 25
REFERENCE_CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"linux\t60\tdso\tlinux_init\t{PMDAS / 'linux' / 'pmda_linux.so'}",
]


def packaged_conf() -> list[str]:
    """The agent lines of our packaged pmcd.conf."""
    text = (ROOT / "pmcd" / "pmcd.conf").read_text()
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def rss_mb(pid: int) -> float:
    """VmRSS of process PID, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def settled_rss(ours: bool, conf: list[str], pmns_default: bool) -> tuple[float, str]:
    """RSS (MB) of a daemon after a fetch of everything; and what that fetch did."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-mem-") as tmp,
        running_pmcd(ours, conf, tmp, None if pmns_default else PMDAS.parent / "pmns" / "root")
        as (port, proc),
    ):  # fmt: skip
        pminfo = shutil.which("pminfo")
        if pminfo is None:
            return rss_mb(proc.pid), "no pminfo (Debian package pcp) to fetch with: idle figure"
        done = subprocess.run(
            [pminfo, "-h", f"localhost:{port}", "-f"], capture_output=True, text=True
        )
        values = done.stdout.count("value ")
        return rss_mb(proc.pid), f"after pminfo -f ({values} values)"


def main() -> int:
    ours, how = settled_rss(True, packaged_conf(), pmns_default=True)
    agents = ", ".join(line.split()[0] for line in packaged_conf() if "\t" in line)
    print(f"ours: pmcd + {agents} in-process: {ours:6.1f} MB RSS, {how}")
    verdict = "meets" if ours <= TARGET_MB else "misses"
    print(f"ours: {verdict} the <= {TARGET_MB} MB target")
    if not (PMCD.exists() and (PMDAS / "linux" / "pmda_linux.so").exists()):
        print("reference: PCP 6 (Debian package pcp) is not installed; no comparison")
        return 0
    reference, how = settled_rss(False, REFERENCE_CONF, pmns_default=False)
    print(f"reference: pmcd + pmcd, linux as DSOs:                {reference:6.1f} MB RSS, {how}")
    print(f"ratio ours / reference: {ours / reference:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
