"""The pmcds PCP's tools and ours are run against one after the other (PCP's pmcd with
its pmcd and linux agents, its C sample agent and our simple agent; our pmcd with its
packaged agents and PCP's sample agent), and the runs themselves: shared by the pmprobe
and pmstore interop tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.our_pmcd import our_pmcd
from tests.support.reference_pmcd import PMNS_ROOT, reference_pmcd, require_reference

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PMDAS = Path("/var/lib/pcp/pmdas")
PMCD_DSO = PMDAS / "pmcd" / "pmda_pmcd.so"
LINUX_DSO = PMDAS / "linux" / "pmda_linux.so"
SAMPLE = PMDAS / "sample" / "pmdasample"
SAMPLE_PMNS = PMDAS / "sample" / "pmns"


def reference_namespace(path: Path, with_sample: bool) -> None:
    """PCP's installed namespace plus simple (and sample), for PCP's pmcd -n."""
    text = Path(PMNS_ROOT).read_text()
    head, _, rest = text.partition("root {")
    roots = rest.split("}", 1)[0].split()
    wanted = ("simple", "sample") if with_sample else ("simple",)
    extra = [name for name in wanted if name not in roots]
    body = head + "root {\n" + "".join(f"\t{name}\n" for name in extra) + rest
    parts = ["#define SIMPLE 253\n#define SAMPLE 29\n", body]
    if "simple" in extra:
        parts.append((ROOT / "pmns" / "simple").read_text())
    if "sample" in extra:
        lines = SAMPLE_PMNS.read_text().splitlines(keepends=True)
        parts.append("".join(line for line in lines if not line.startswith("#include")))
    path.write_text("".join(parts))


@contextmanager
def running_pmcd(which: str, tmp: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(WHICH, host, environment) of a pmcd running in TMP: PCP's ("reference") or ours."""
    require_reference("pmprobe", "pmstore")
    (tmp / "simple").mkdir()
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    if which == "reference":
        if not (PMCD_DSO.exists() and LINUX_DSO.exists()):
            pytest.skip("reference PCP 6 agents are not installed (pmda_pmcd.so, pmda_linux.so)")
        with_sample = SAMPLE.exists() and SAMPLE_PMNS.exists()
        reference_namespace(tmp / "root", with_sample)
        conf = [
            f"pmcd\t2\tdso\tpmcd_init\t{PMCD_DSO}",
            f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}",
            f"simple\t253\tpipe\tbinary\t{PY} -m purepcp.agents.simple -d 253",
        ]
        if with_sample:
            conf.append(f"sample\t29\tpipe\tbinary\t{SAMPLE} -d 29")
        env = {"PYTHONPATH": str(ROOT), "PCP_PMDAS_DIR": str(tmp)}
        with reference_pmcd(conf, str(tmp / "root"), extra_env=env) as running:
            yield which, running.host, running.env
    else:
        conf_text = (ROOT / "pmcd" / "pmcd.conf").read_text()  # the packaged agents
        extra: tuple[str, ...] = ()
        if SAMPLE.exists() and SAMPLE_PMNS.exists():  # and PCP's C sample agent, as a pipe
            agents, access = conf_text.split("[access]")  # agent lines go before it
            sample = f"sample 29 pipe binary {SAMPLE} -d 29 -l {tmp}/sample.log\n"
            conf_text = f"{agents}{sample}[access]{access}"
            reference_namespace(tmp / "root", True)
            extra = ("-n", str(tmp / "root"))
        with our_pmcd(conf_text, tmp, *extra) as ours:
            yield which, ours.host, dict(ours.env, PCP_DERIVED_CONFIG="")


def run(tool: str, impl: str, host: str, env: dict[str, str], *args: str):
    """Run PCP's (impl "pcp") or our ("ours") TOOL with -h HOST and ARGS."""
    cmd = [tool] if impl == "pcp" else [PY, "-m", f"purepcp.tools.{tool}"]
    return subprocess.run(
        [*cmd, "-h", host, *args], env=env, capture_output=True, text=True, timeout=120
    )


def option_column(usage: str) -> list[str]:
    """The option text of each usage line (the help words are our own, not PCP's)."""
    column = []
    for line in usage.splitlines():
        if line.startswith(" " * 24):
            continue
        # text shorter than 24 columns is padded to 24, then the help; longer text
        # has the line to itself (its help goes on the next line)
        short = line.startswith("  -") and len(line) > 24 and line[23] == " "
        column.append(line[:24].rstrip() if short else line)
    return column
