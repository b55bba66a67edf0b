"""Benchmark: pmlogextract merging a day's 24 archives, ours against PCP's.

The 4-million-value archive (benchmarks/big_archive.py: 20 metrics x 10 instances x
20,000 samples, 85 MB) is cut by PCP's pmlogextract -S/-T into 24 consecutive pieces,
as pmlogger writes a day in hourly archives; then both commands merge the 24 pieces
into one archive, in turns, round after round, and the figure is the median wall time (the
CPU time is shown too: on a loaded machine it is the steadier figure).
The two merged archives are compared once, byte for byte (all but the labels' logger
PID), before timing.  Target: ours / PCP's <= 1.

    .venv/bin/python benchmarks/bench_pmlogextract.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import BASE, SAMPLES, ensure  # noqa: E402

TARGET = 1.0
PIECES = 24
T0 = 1_700_000_000  # big_archive's first sample (one a second)
PIECES_DIR = BASE.parent / f"pieces{PIECES}"


def _stamp(seconds: int, frac: str = "") -> str:
    """An absolute time for -S/-T (read in UTC: -Z UTC)."""
    import time

    return (
        "@"
        + time.strftime("%a %b %d %H:%M:%S", time.gmtime(seconds))
        + frac
        + " "
        + (time.strftime("%Y", time.gmtime(seconds)))
    )


def pieces() -> list[str]:
    """The 24 pieces' base names, cut once (PCP's -T takes a second more than asked: the
    end asked for is the second before the next piece's first sample)."""
    base = ensure()
    step = -(-SAMPLES // PIECES)
    names = [str(PIECES_DIR / f"p{k:02d}") for k in range(PIECES)]
    if all(Path(f"{n}.0").exists() for n in names):
        return names
    shutil.rmtree(PIECES_DIR, ignore_errors=True)
    PIECES_DIR.mkdir(parents=True)
    for k, name in enumerate(names):
        first = T0 + k * step
        last = first + step - 2
        subprocess.run(
            ["pmlogextract", "-Z", "UTC", "-S", _stamp(first), "-T", _stamp(last, ".999"),
             base, name],
            check=True, capture_output=True,
        )  # fmt: skip
    return names


def _timed_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """ARGV's wall time and CPU time (user and system), in seconds."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = timed(argv, env)[0]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _same(a: str, b: str) -> bool:
    """Whether archives A and B are byte for byte the same but for their labels' PID
    (the 4 bytes at offset 8 of each file's label)."""
    for suffix in (".0", ".meta", ".index"):
        x, y = Path(a + suffix).read_bytes(), Path(b + suffix).read_bytes()
        if len(x) != len(y) or x[:8] != y[:8] or x[12:] != y[12:]:
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("pmlogextract") is None:
        print("reference PCP 6 is not installed: no pmlogextract (Debian package pcp)")
        return 1
    inputs = pieces()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (as installed: modules' bytecode cached)
    ours_cmd = [sys.executable, "-m", "purepcp.tools.pmlogextract"]
    theirs_cmd = ["pmlogextract"]
    with tempfile.TemporaryDirectory(prefix="bench-logextract-") as tmp:
        out = {}
        for name, cmd in (("ours", ours_cmd), ("theirs", theirs_cmd)):
            out[name] = f"{tmp}/{name}"
            timed([*cmd, *inputs, out[name]], env)
        if not _same(out["ours"], out["theirs"]):
            print("the two merged archives differ: nothing to compare")
            return 1
        times: dict[str, list[tuple[float, float]]] = {"o": [], "t": []}
        sides = [("o", ours_cmd), ("t", theirs_cmd)]
        for r in range(args.rounds):
            for name, cmd in sides if r % 2 == 0 else sides[::-1]:  # (each goes first in turn)
                target = f"{tmp}/{name}{r}"
                times[name].append(_timed_cpu([*cmd, *inputs, target], env))
                for suffix in (".0", ".meta", ".index"):
                    Path(target + suffix).unlink()
    ours = statistics.median(t for t, _ in times["o"])
    theirs = statistics.median(t for t, _ in times["t"])
    ours_cpu = statistics.median(c for _, c in times["o"])
    theirs_cpu = statistics.median(c for _, c in times["t"])
    size = sum(Path(f"{n}.0").stat().st_size for n in inputs) / 1e6
    print(f"merging {PIECES} archives ({size:.0f} MB of records), median of {args.rounds} rounds")
    print(f"ours pmlogextract: {ours:.3f} s ({ours_cpu:.3f} s of CPU)")
    print(f"PCP's pmlogextract: {theirs:.3f} s ({theirs_cpu:.3f} s of CPU)")
    ratio = ours / theirs
    print(f"ratio ours/PCP: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
