"""Benchmark: replaying derived metrics over the 4-million-value archive, against their operands.

The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000
samples a second apart; bench.m00, bench.m02, ... are U64 counters, bench.m01, ...
instantaneous doubles).  For each
derived metric below, our Python API replays (ArchiveContext.replay, PM_MODE_INTERP,
one fetch a second over the whole archive) the derived metric alone, and its operands
alone, in turns, round after round, in this process; figures are medians:

* "fresh": a new context each time: open the archive, read it, replay.
* "again": a second replay in the same context (the archive's columns already read):
  what the derived metric's evaluation itself adds.

Target: replaying a derived metric costs at most 1.2x the replay of its operands
alone (fresh contexts).  For reference, PCP's pmval -a ARCHIVE -t 1 is timed the same
way on the derived metric (--derived=CONF) and on its first operand (pmval takes one
metric).  The derived metrics' values are checked against ones computed with NumPy
from the operands' replay.

    .venv/bin/python benchmarks/bench_derived.py [--rounds N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

# (derived name, expression, operands)
DERIVED = [
    ("bd.sum", "bench.m00 + bench.m02", ["bench.m00", "bench.m02"]),
    ("bd.delta", "delta(bench.m00) + delta(bench.m02)", ["bench.m00", "bench.m02"]),
    ("bd.rate", "rate(bench.m00)", ["bench.m00"]),
    (
        "bd.mix",
        "(bench.m01 + bench.m03) * 2 - bench.m05 / 4",
        ["bench.m01", "bench.m03", "bench.m05"],
    ),
]
TARGET = 1.2
SEC = 1_000_000_000


def replay(base: str, names: list[str]):
    """(fresh seconds, again seconds, the replay) of NAMES over the whole archive."""
    from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext

    started = time.perf_counter()
    with ArchiveContext(base) as ctx:
        pmids = ctx.lookup_names(names)
        start = ctx.archive.label.start
        count = ctx.archive.end().sec - start.sec + 1
        ctx.set_mode(PM_MODE_INTERP, start, SEC)
        run = ctx.replay(pmids, count)
        fresh = time.perf_counter() - started
        started = time.perf_counter()
        ctx.set_mode(PM_MODE_INTERP, start, SEC)
        ctx.replay(pmids, count)
        again = time.perf_counter() - started
    return fresh, again, run


def expected(name: str, operands) -> tuple:
    """NAME's values and where it has them, computed from its operands' replay, and
    the fetches at the start that have none (delta() and rate() need a fetch before)."""
    import numpy as np

    ms = operands.metrics
    secs = (operands.times[1:] - operands.times[:-1]) / SEC
    if name == "bd.sum":
        return ms[0].values + ms[1].values, ms[0].has & ms[1].has, 0
    if name == "bd.delta":
        d = [m.values[1:].astype(np.float64) - m.values[:-1].astype(np.float64) for m in ms]
        has = ms[0].has[1:] & ms[0].has[:-1] & ms[1].has[1:] & ms[1].has[:-1]
        return d[0] + d[1], has, 1
    if name == "bd.mix":
        a, b, c = (m.values for m in ms)
        return (a + b) * 2 - c / 4, ms[0].has & ms[1].has & ms[2].has, 0
    m = ms[0]
    rate = (m.values[1:] - m.values[:-1]).astype(np.float64) / secs[:, None]
    return rate, m.has[1:] & m.has[:-1], 1


def check(name: str, derived, operands) -> bool:
    import numpy as np

    values, has, skip = expected(name, operands)
    got = derived.metrics[0]
    if not np.array_equal(got.has[skip:], has) or got.has[:skip].any():
        return False
    return bool(np.array_equal(got.values[skip:][has], values[has]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "pmapi"), quiet=1)
    base = ensure()
    with tempfile.TemporaryDirectory(prefix="bench-derived-") as tmp:
        conf = Path(tmp) / "derived.conf"
        conf.write_text("".join(f"{name} = {expr}\n" for name, expr, _ in DERIVED))
        # (read when the process's derived metrics are first needed: set before then)
        os.environ["PCP_DERIVED_CONFIG"] = str(conf)
        os.environ["TZ"] = "UTC"
        print(f"archive: {base} (20 metrics x 10 instances x 20,000 samples)")
        ok = True
        for name, expr, operands in DERIVED:
            replay(base, [name]), replay(base, operands)  # (imports, page cache: untimed)
            ours: dict[str, list[float]] = {"derived": [], "operands": [], "d2": [], "o2": []}
            for _ in range(args.rounds):
                fresh, again, derived_run = replay(base, [name])
                ours["derived"].append(fresh)
                ours["d2"].append(again)
                fresh, again, operand_run = replay(base, operands)
                ours["operands"].append(fresh)
                ours["o2"].append(again)
            right = check(name, derived_run, operand_run)
            d, o = statistics.median(ours["derived"]), statistics.median(ours["operands"])
            d2, o2 = statistics.median(ours["d2"]), statistics.median(ours["o2"])
            met = d / o <= TARGET
            ok = ok and met and right
            print(f"\n{name} = {expr}")
            print(
                f"  values agree with NumPy over the operands' replay: {'yes' if right else 'NO'}"
            )
            verdict = "met" if met else "NOT met"
            print(f"  fresh context: derived {d:.3f} s, operands {', '.join(operands)} {o:.3f} s: "
                  f"ratio {d / o:.2f} (target <= {TARGET}: {verdict})")  # fmt: skip
            print(f"  again, archive already read: derived {d2:.3f} s, operands {o2:.3f} s: "
                  f"ratio {d2 / o2:.2f}")  # fmt: skip
            if shutil.which("pmval") is not None:
                env = dict(os.environ, PCP_DERIVED_CONFIG="")
                ref_d, ref_o = [], []
                for _ in range(args.rounds):
                    pmval_d = ["pmval", f"--derived={conf}", "-a", base, "-t", "1", name]
                    ref_d.append(timed(pmval_d, env)[0])
                    ref_o.append(timed(["pmval", "-a", base, "-t", "1", operands[0]], env)[0])
                rd, ro = statistics.median(ref_d), statistics.median(ref_o)
                print(f"  reference pmval -t 1: derived {rd:.3f} s, {operands[0]} {ro:.3f} s: "
                      f"ratio {rd / ro:.2f}")  # fmt: skip
    print(f"\ntarget (derived <= {TARGET}x its operands, fresh contexts): "
          f"{'met' if ok else 'NOT met'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
