"""Benchmark: start-up of our command-line tools, one-metric queries, against PCP's and bare Python.

For pminfo, pmval, pmprobe, pmstore, pmrep and pmdumplog, times the wall time of a
whole run that asks for one metric: live, against a pmcd, and from an archive for
the tools that read one (pminfo -a, pmval -a, pmprobe -a, pmrep -a, pmdumplog).  Ours
are run as a user runs them, through the console scripts next to the interpreter
running this file (.venv/bin/pminfo, ...); PCP 6.0.3's are /usr/bin/<name>.  A third
figure is a bare `python -c pass` of the same interpreter ours run under.  A last
row, `pminfo -h localhost:1` (nothing listens: the connection is refused), isolates
start-up from any work.

One reference PCP pmcd runs for the whole benchmark, with its pmcd agent and PCP's
sample agent as DSOs; both pminfos, pmvals, ... ask that same pmcd on its port.
pmstore stores into sample.write_me.  The archive is written at start by PCP's
pmlogger from that pmcd (sample.load and two other metrics, every 100 ms).  Each
command is run once first, for both tools, and must succeed (the refused row: must
fail) with output of the same shape (digits aside); a row where either does not
prints the error instead of figures.  Then the three commands take turns, run by run
(the order rotating each round), and each figure is the median of its runs (20;
5 with --quick).  The target is each of our tools within 2x a bare interpreter
start (ours / bare <= 2).  --profile adds, for each of our commands, its 15 largest
cumulative imports from `python -X importtime`.

    .venv/bin/python benchmarks/bench_startup.py [--quick] [--profile]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMCD, PMDAS, PMNS_ROOT, running_pmcd  # noqa: E402

TARGET = 2.0
PCP_PORT = 44321  # the system pmcd's port: never ours to use
OUR_BIN = Path(sys.executable).parent
PCP_BIN = Path("/usr/bin")
TOOLS = ("pminfo", "pmval", "pmprobe", "pmstore", "pmrep", "pmdumplog")
CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"sample\t29\tdso\tsample_init\t{PMDAS / 'sample' / 'pmda_sample.so'}",
]
METRIC = "sample.load"
LOGGED = ("sample.load", "sample.colour", "pmcd.numagents")


@dataclass
class Case:
    """One command, run by both tools: TOOL with ARGS; EXPECT_OK False for the refused row."""

    tool: str
    mode: str
    args: list[str]
    expect_ok: bool = True


@dataclass
class Row:
    """A case's timings (seconds) for ours, PCP's and bare Python, or the reason it has none."""

    case: Case
    ours: list[float] = field(default_factory=list)
    pcp: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    error: str | None = None
    note: str | None = None


def our_argv(case: Case) -> list[str]:
    return [str(OUR_BIN / case.tool), *case.args]


def pcp_argv(case: Case) -> list[str]:
    return [str(PCP_BIN / case.tool), *case.args]


def bare_argv() -> list[str]:
    return [sys.executable, "-c", "pass"]


def missing_prerequisites() -> list[str]:
    """What this benchmark needs and does not find."""
    needed = [PMCD, PMNS_ROOT.parent / "root_pmcd", PMDAS / "sample" / "pmda_sample.so"]
    needed += [PMDAS / "sample" / "pmns", PCP_BIN / "pmlogger"]
    needed += [PCP_BIN / tool for tool in TOOLS] + [OUR_BIN / tool for tool in TOOLS]
    missing = [str(path) for path in needed if not path.exists()]
    missing += [
        f"{OUR_BIN / tool} is not purepcp's console script"
        for tool in TOOLS
        if (OUR_BIN / tool).exists() and "purepcp" not in (OUR_BIN / tool).read_text()
    ]
    return missing


def write_namespace(path: Path) -> Path:
    """A namespace with PCP's pmcd and sample subtrees (the sample agent at domain 29)."""
    pmcd_ns = (PMNS_ROOT.parent / "root_pmcd").read_text()
    pmcd_ns = re.sub(r"root\s*\{[^}]*\}", "", pmcd_ns, count=1)
    sample_ns = (PMDAS / "sample" / "pmns").read_text()
    path.write_text(f"root {{\n    pmcd\n    sample\n}}\n{pmcd_ns}\n#define SAMPLE 29\n{sample_ns}")
    return path


@contextlib.contextmanager
def sample_pmcd(tmp: Path) -> Iterator[int]:
    """Run PCP's pmcd with the pmcd and sample agents in TMP; yield its port (never 44321)."""
    namespace = write_namespace(tmp / "namespace")
    for attempt in range(3):
        workdir = tmp / f"pmcd{attempt}"
        workdir.mkdir()
        with running_pmcd(False, CONF, str(workdir), namespace) as (port, _):
            if port != PCP_PORT:
                yield port
                return
    raise RuntimeError(f"no free port other than {PCP_PORT}")


def write_archive(host: str, tmp: Path, env: dict[str, str]) -> tuple[Path | None, str]:
    """Log LOGGED from HOST every 100 ms, five times, with PCP's pmlogger; (archive, error)."""
    config = tmp / "pmlogger.config"
    config.write_text(
        "log mandatory on 100 msec {\n" + "".join(f"    {m}\n" for m in LOGGED) + "}\n"
    )
    archive = tmp / "archive"
    argv = [str(PCP_BIN / "pmlogger"), "-h", host, "-c", str(config), "-s", "5"]
    argv += ["-l", str(tmp / "pmlogger.log"), str(archive)]
    done = subprocess.run(argv, env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or not Path(f"{archive}.0").exists():
        log = tmp / "pmlogger.log"
        text = log.read_text(errors="replace") if log.exists() else done.stderr
        return None, f"pmlogger failed ({done.returncode}): {last_line(text)}"
    return archive, ""


def cases(host: str, archive: Path | None) -> list[Case]:
    """The commands timed, live and from ARCHIVE (archive rows only when there is one)."""
    live = [
        Case("pminfo", "live", ["-h", host, "-f", METRIC]),
        Case("pmval", "live", ["-h", host, "-s", "1", METRIC]),
        Case("pmprobe", "live", ["-h", host, "-v", METRIC]),
        Case("pmstore", "live", ["-h", host, "sample.write_me", "5"]),
        Case("pmrep", "live", ["-h", host, "-s", "1", METRIC]),
    ]
    refused = [Case("pminfo", "refused", ["-h", "localhost:1", "kernel.all.load"], False)]
    if archive is None:
        return live + refused
    arch = str(archive)
    return [
        *live,
        Case("pminfo", "archive", ["-a", arch, "-f", METRIC]),
        Case("pmval", "archive", ["-a", arch, "-t", "0.1", "-s", "3", METRIC]),
        Case("pmprobe", "archive", ["-a", arch, "-v", METRIC]),
        Case("pmrep", "archive", ["-a", arch, "-t", "0.1", "-s", "3", METRIC]),
        Case("pmdumplog", "archive", [arch, METRIC]),
        *refused,
    ]


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-200:] if lines else "no output"


def shape(text: str) -> list[str]:
    """TEXT's lines with digit runs blanked: what both tools' outputs should share."""
    return [re.sub(r"\d+", "0", line.rstrip()) for line in text.strip().splitlines()]


def check(case: Case, env: dict[str, str], cwd: Path) -> tuple[str | None, str | None]:
    """Run CASE once with both tools; (error, note).  Also the runs' warm-up."""
    outputs = []
    for who, argv in (("ours", our_argv(case)), ("PCP", pcp_argv(case))):
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
        if (done.returncode == 0) != case.expect_ok:
            want = "exit 0" if case.expect_ok else "a failure"
            why = last_line(done.stderr or done.stdout)
            return f"{who}: wanted {want}, got exit {done.returncode}: {why}", None
        outputs.append(done.stdout + ("" if case.expect_ok else done.stderr))
    ours, theirs = shape(outputs[0]), shape(outputs[1])
    if ours == theirs:
        return None, None
    diff = next((f"{a!r} vs {b!r}" for a, b in zip(ours, theirs, strict=False) if a != b), None)
    return None, diff or f"{len(ours)} lines vs {len(theirs)}"


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(case: Case, rounds: int, env: dict[str, str], cwd: Path) -> Row:
    """Check CASE, then time ours, PCP's and bare Python in turn, ROUNDS times each."""
    error, note = check(case, env, cwd)
    row = Row(case, error=error, note=note)
    if error:
        return row
    runs = [(row.ours, our_argv(case)), (row.pcp, pcp_argv(case)), (row.bare, bare_argv())]
    for turn in range(rounds):
        k = turn % len(runs)
        for times, argv in runs[k:] + runs[:k]:
            times.append(timed(argv, env, cwd))
    return row


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def print_table(rows: list[Row], rounds: int) -> None:
    print(
        f"one-metric queries, whole runs; median of {rounds} runs each, ours / PCP / bare "
        f"python taking turns; target ours / bare <= {TARGET:g}"
    )
    print(f"bare python: {sys.executable} -c pass")
    head = f"{'tool':<10} {'mode':<8} {'ours ms':>8} {'PCP ms':>8} {'bare ms':>8}"
    print(f"{head} {'ours/PCP':>8} {'ours/bare':>9} {'target':>7} {'met':>4}")
    for row in rows:
        name = f"{row.case.tool:<10} {row.case.mode:<8}"
        if row.error:
            print(f"{name} error: {row.error}")
            continue
        ours, pcp, bare = ms(row.ours), ms(row.pcp), ms(row.bare)
        met = "yes" if ours / bare <= TARGET else "no"
        figures = f"{ours:8.1f} {pcp:8.1f} {bare:8.1f} {ours / pcp:8.2f} {ours / bare:9.2f}"
        print(f"{name} {figures} {'<= ' + format(TARGET, 'g'):>7} {met:>4}")
    timed_rows = [row for row in rows if not row.error]
    met = sum(ms(row.ours) / ms(row.bare) <= TARGET for row in timed_rows)
    print(f"target met by {met} of {len(timed_rows)} timed rows ({len(rows)} rows in all)")
    for row in rows:
        if row.note:
            print(f"note: {row.case.tool} {row.case.mode}: outputs differ: {row.note}")


def import_profile(case: Case, env: dict[str, str], cwd: Path, top: int = 15) -> list[str]:
    """The TOP largest cumulative imports of our CASE, from `python -X importtime`."""
    argv = [sys.executable, "-X", "importtime", *our_argv(case)]
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    entries = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|", 2)
        entries.append((int(cumulative_us), int(self_us), name.rstrip()))
    top_level = {n.strip(): c for c, _, n in entries if not n.startswith("  ")}
    total, site = sum(top_level.values()) / 1000, top_level.get("site", 0) / 1000
    entries.sort(reverse=True)
    lines = [f"all imports {total:.1f} ms, of which site (bare python's too) {site:.1f} ms"]
    lines += [f"{'cumul ms':>9} {'self ms':>8}  module (indent: nesting)"]
    lines += [f"{c / 1000:9.1f} {s / 1000:8.1f} {n}" for c, s, n in entries[:top]]
    return lines


def print_profiles(rows: list[Row], env: dict[str, str], cwd: Path) -> None:
    for row in rows:
        if row.error:
            continue
        print(f"\n-X importtime, ours: {row.case.tool} {' '.join(row.case.args)}")
        for line in import_profile(row.case, env, cwd):
            print(f"  {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 runs per figure, not 20")
    parser.add_argument("--profile", action="store_true", help="also print -X importtime tops")
    args = parser.parse_args()
    missing = missing_prerequisites()
    if missing:
        print("missing (reference PCP 6, Debian package pcp, and our venv's console scripts):")
        print("\n".join(f"  {item}" for item in missing))
        return 1
    rounds = 5 if args.quick else 20
    env = dict(os.environ, PCP_PYTHON_PROG="/usr/bin/python3")  # PCP's pmrep needs it
    # our modules' bytecode is written once, as an installed package's is, and used after
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in ("pmapi", "tools", "series", "pmda"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    with (
        tempfile.TemporaryDirectory(prefix="bench-startup-") as name,
        sample_pmcd(Path(name)) as port,
    ):
        tmp = Path(name)
        host = f"localhost:{port}"
        archive, archive_error = write_archive(host, tmp, env)
        rows = [measure(case, rounds, env, tmp) for case in cases(host, archive)]
        print_table(rows, rounds)
        if archive_error:
            print(f"no archive rows: {archive_error}")
        if args.profile:
            print_profiles(rows, env, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
