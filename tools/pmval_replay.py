"""pmval's report of an interpolated archive replay, computed as arrays, a chunk at a time.

Replaying an archive, pmval's fetches are known in advance: one per interval from
the origin.  So they are answered ahead, a bounded chunk of fetches at a time
(ArchiveContext.replays), pmval's loop is walked over which of them have values,
and the rows it prints (rates from consecutive fetches, "?" for an instance with no
value, "No values available" for an empty fetch and for the fetch that restarts a
counter after one) are formatted a column at a time and written chunk by chunk.  The
output is the per-fetch loop's (pmval.loop), line for line; the memory it takes is
the chunk's, however long the replay.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from purepcp.pmapi.archive.interp import seconds_since
from purepcp.pmapi.archive.replay import MetricReplay, Replay
from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.printvalue import pmval_reals, print_value
from purepcp.pmapi.rate import COUNTER_WRAP_SPAN, counter_wrap_enabled, time_scale
from purepcp.pmapi.timewindow import format_stamps
from purepcp.pmapi.types import PMSem, PMType
from purepcp.tools.stdio import write

PROG = "pmval"
_OK, _NONE, _ERROR, _END, _FAIL = range(5)  # what a fetch gives pmval's loop
_INTEGERS = (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64)
_REALS = (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)


@dataclass
class _Window:
    """The fetches of one chunk (and the last fetch before it, for rates): global fetch
    FIRST is row 0."""

    first: int
    times: np.ndarray
    metric: MetricReplay
    status: list[int]
    fail_code: int = 0
    problem: Any = None  # what the failing fetches fail for
    stop: int = 0  # the global index after the last fetch held

    def __post_init__(self) -> None:
        self.stop = self.first + len(self.times)


def _window(rep: Any, chunk: Replay, first: int, before: _Window | None, finish: float) -> _Window:
    """The window of CHUNK (fetches FIRST on), holding BEFORE's last fetch as well."""
    m = chunk.metrics[0]
    times, eol, failed = chunk.times, chunk.eol, chunk.failed
    if before is not None and len(before.times):
        b, last = before.metric, slice(-1, None)
        m = MetricReplay(
            m.pmid, m.desc, m.insts,
            np.concatenate([b.has[last], m.has]), np.concatenate([b.values[last], m.values]),
            m.error,
            None if m.failed is None else np.concatenate([b.failed[last], m.failed]),
        )  # fmt: skip
        times = np.concatenate([before.times[last], times])
        eol = np.concatenate([[False], eol])
        if failed is not None:
            failed = np.concatenate([[False], failed])
        first -= 1
    status = _status(m, eol, failed, seconds_since(times, 0), finish)
    if before is not None and len(before.times):
        status[0] = before.status[-1]
    return _Window(first, times, m, status, chunk.fail_code, chunk.problem)


def replay_loop(rep: Any, samples: int) -> None:
    """pmval.loop for an archive replay: the same lines, the fetches answered ahead."""
    # (each sample takes at most two fetches: more are never asked for)
    chunks: Iterator[Replay] = iter(rep.ctx.replays([rep.pmid], 2 * samples + 2))
    f: _Window | None = None
    lines: list[tuple] = []  # (what, fetch[, text]): pmval's output in order
    have_prev = no_values = reporting = False
    indom = rep.desc.indom != PM_INDOM_NULL
    k = 0

    stop = first = 0  # (f's: kept at hand, as this runs once a fetch)

    def fetch() -> int:
        """getvals on fetch k: OK, NONE (reported), or END (end of log, or past -T)."""
        nonlocal k, f, stop, first
        while k >= stop:
            if f is not None:
                _write(rep, f, lines)
                lines.clear()
            chunk = next(chunks, None)
            if chunk is None:
                return _END
            f = _window(rep, chunk, k, f, rep.finish_real)
            stop, first = f.stop, f.first
        assert f is not None
        got = f.status[k - first]
        k += 1
        if got == _FAIL:
            _write(rep, f, lines)
            lines.clear()
            # (PCP's words; ours add where the archive is damaged, as pmval.fetch does)
            why = str(f.problem) if f.problem is not None else pmErrStr(f.fail_code)
            sys.stderr.write(f"\n{PROG}: pmFetch: {why}\n")
            raise SystemExit(1)
        if got == _ERROR:
            lines.append(("error", f"\n{PROG}: pmFetch: {pmErrStr(f.metric.error)}\n"))
            return _NONE
        if got == _NONE:
            lines.append(("stamp", k - 1, "  No values available\n"))
        return got

    while samples > 0:
        samples -= 1
        if not have_prev:
            got = fetch()
            if got == _OK:
                have_prev = True
                if indom:
                    lines.append(("labels",))
                if not rep.counter:
                    lines.append(("values", k - 1))
                    reporting = True
                    continue
                if no_values or reporting:
                    lines.append(("stamp", k - 1, "  No values available\n"))
                no_values = False
            elif got == _END:
                break
            else:
                no_values = True
        if not have_prev:
            continue
        got = fetch()
        if got == _END:
            break
        if got != _OK:
            have_prev = False
            continue
        lines.append(("rates" if rep.counter else "values", k - 1))
        reporting = True
    if f is not None:
        _write(rep, f, lines)


def _status(
    m: MetricReplay, eol: np.ndarray, failed: np.ndarray | None, secs: np.ndarray, finish: float
) -> list[int]:
    """What each fetch gives pmval: _OK, _NONE (no values), _ERROR, _FAIL or _END."""
    out = np.where(m.has.any(axis=1), _OK, _NONE)
    if m.error:
        out[slice(None) if m.failed is None else m.failed] = _ERROR
    out[secs > finish] = _END
    if failed is not None:  # (pmFetch failing comes before pmval looks at the time)
        out[failed] = _FAIL
    out[eol] = _END
    return out.tolist()


def _write(rep: Any, f: _Window, lines: list[tuple]) -> None:
    """Format the rows pmval's loop chose from window F, a column at a time, and write them."""
    if not lines:
        return
    m = f.metric
    secs = seconds_since(f.times, 0)
    rows = sorted({line[1] for line in lines if len(line) > 1 and isinstance(line[1], int)})
    stamps = dict(
        zip(rows, format_stamps([int(f.times[r - f.first]) for r in rows], rep.zone), strict=True)
    )
    value_rows = [line[1] - f.first for line in lines if line[0] == "values"]
    rate_rows = [line[1] - f.first for line in lines if line[0] == "rates"]
    cells = _value_cells(rep, m, value_rows) if value_rows else {}
    if rate_rows:
        cells.update(_rate_cells(rep, m, secs, rate_rows))
    chunk: list[str] = []
    for line in lines:
        what = line[0]
        if what == "stamp":
            chunk.append(stamps[line[1]] + line[2])
        elif what == "labels":
            chunk.append(rep.labels())
        elif what == "error":
            write("".join(chunk))
            chunk.clear()
            sys.stderr.write(line[1])
            sys.stderr.flush()
        else:
            chunk.append(stamps[line[1]] + cells[line[1] - f.first])
    write("".join(chunk))


def _columns(rep: Any, m: MetricReplay) -> list[int | None]:
    """For each column pmval prints (its instances, sorted), the replay's column, if any."""
    if rep.desc.indom == PM_INDOM_NULL:
        return [0]
    where = {int(inst): j for j, inst in enumerate(m.insts.tolist())}
    return [where.get(inst & 0xFFFFFFFF) for inst, _ in rep.pairs]


def _assemble(rep: Any, m: MetricReplay, rows: list[int], texts: np.ndarray, ok: np.ndarray):
    """Each row's line: every instance's text or "?", a space after each (indoms)."""
    missing = " " * max(0, rep.cols - 1) + "?"
    cells = np.where(ok, texts, missing)
    if rep.desc.indom == PM_INDOM_NULL:
        return {r: line[0] + "\n" for r, line in zip(rows, cells.tolist(), strict=True)}
    colmap = _columns(rep, m)
    if not colmap:
        return dict.fromkeys(rows, "\n")
    absent = np.full((len(rows), 1), missing, dtype=object)
    picked = np.concatenate([cells, absent], axis=1)[:, [len(m.insts) if j is None else j
                                                        for j in colmap]]  # fmt: skip
    return {r: " ".join(line) + " \n" for r, line in zip(rows, picked.tolist(), strict=True)}


def _value_cells(rep: Any, m: MetricReplay, rows: list[int]) -> dict[int, str]:
    """Each value row's cells, in pmPrintValue's or pmval's float format."""
    has = m.has[rows]
    vals = m.values[rows]
    vtype = rep.desc.type
    cols = rep.cols
    flat = vals.reshape(-1)
    if vtype in _INTEGERS:
        fmt = f"%{cols}d"
        texts = [fmt % v for v in flat.tolist()]
    elif vtype in _REALS:
        texts = pmval_reals(flat.astype(np.float64), rep.desc.sem, cols, rep.o.fixed)
    else:
        texts = [print_value(v, vtype, cols) if v is not None else "" for v in flat.tolist()]
    grid = np.array(texts, dtype=object).reshape(vals.shape)
    return _assemble(rep, m, rows, grid, has)


def _rate_cells(rep: Any, m: MetricReplay, secs: np.ndarray, rows: list[int]) -> dict[int, str]:
    """Each rate row's cells: the change since the fetch before, over the time between."""
    now = np.asarray(rows)
    then = now - 1
    ok = m.has[now] & m.has[then]
    v1 = m.values[now].astype(np.float64)
    v0 = m.values[then].astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = v1 - v0
        vtype = rep.desc.type
        if counter_wrap_enabled() and vtype in COUNTER_WRAP_SPAN:
            diff = np.where(diff < 0.0, diff + COUNTER_WRAP_SPAN[vtype], diff)
        delta = time_scale(rep.desc.units) * (secs[now] - secs[then])
        rates = diff / delta[:, None]
    if rep.desc.indom == PM_INDOM_NULL:
        ok &= m.has[then].sum(axis=1, keepdims=True) == 1  # (pmval: one previous value)
    texts = pmval_reals(rates.reshape(-1), PMSem.PM_SEM_COUNTER, rep.cols, rep.o.fixed)
    grid = np.array(texts, dtype=object).reshape(rates.shape)
    return _assemble(rep, m, rows, grid, ok)
