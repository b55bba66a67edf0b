"""An archive replay's action lines for all of a rule's firings at once, from the
columns (:mod:`vector`), for the common action: one ``print`` (or other reported
action) of strings, with no holdoff, whose %h %i %c %v come from bindings over one
host's instances.  The text is what :func:`show.format_satisfying` makes from the nodes
the per-time evaluator leaves, without putting each firing's values back in them: the
bindings' pattern is formatted once, and each distinct value once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from . import operators as ops
from . import values as v
from .show import _EXTREMA, _parts, _words_of, find_bindings, find_values, number
from .values import B_TRUE, Node

if TYPE_CHECKING:
    from .vector import Column

#: widest instance domain whose bindings are keyed as one integer's bits
_KEY_BITS = 62


def texts(rule: Node, memo: dict[int, Column], at: np.ndarray) -> list[str] | None:
    """The action's text (its strings, substituted) at each firing AT of RULE, or None
    when the action is not one done here (the per-time path then runs it)."""
    act = rule.a2
    if (
        act is None
        or act.evaluate is not ops.act_fake
        or act.a2 is not None  # (a holdoff depends on the previous firing)
        or act.a1 is None
        or act.a1.evaluate is not ops.act_arg
    ):
        return None
    strings = act.a1.extra
    split = [_parts(s) for s in strings]
    if all(len(p) == 1 for p in split):
        return ["".join(strings) if strings else "(null)"] * len(at)
    x1 = find_bindings(rule)
    x2 = find_values(x1)
    if x1.op in _EXTREMA or x1.hosts is not None or len(v.bounds(x1)) > 1:
        return None
    made = _rows(memo.get(id(x1)), x1, at)
    shown = _rows(memo.get(id(x2)), x2, at)
    if made is None or shown is None or x2.sem == v.SEM_BOOLEAN:
        return None
    ok1, rows1 = made
    ok2, rows2 = shown
    n = x1.tspan
    if x1.sem == v.SEM_BOOLEAN:
        chosen_at = rows1[:, :n] == B_TRUE
    elif x1.sem != v.SEM_UNKNOWN:
        chosen_at = np.ones((len(at), n), bool)
    else:
        chosen_at = np.zeros((len(at), n), bool)
    chosen_of = _patterns(chosen_at)
    values_at = _shown_values(x2, ok2, rows2) if any("v" in p[1::2] for p in split) else None
    pieces = [_pieces(p, x1, n) for p in split]
    out: list[str] = []
    plain: dict[int, str] = {}
    for r, (valid, key) in enumerate(zip(ok1.tolist(), chosen_of[1], strict=True)):
        if not valid:  # (no bindings known: the strings as written)
            out.append("".join(strings))
            continue
        chosen = chosen_of[0][key]
        if values_at is None and key in plain:
            out.append(plain[key])
            continue
        said = [_fill(pc, chosen, values_at, r) for pc in pieces]
        made_text = [s for s in said if s is not None]
        line = "".join(made_text) if made_text else "(null)"
        if values_at is None:
            plain[key] = line
        out.append(line)
    return out


def _rows(col: Column | None, x: Node, at: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """X's validity and the values it shows at each firing: its last written row (None:
    not so simply known, as when never written or written value by value)."""
    if col is None or col.wrote.ndim != 1 or col.val.shape[1] < x.tspan:
        return None
    steps = np.where(col.wrote, np.arange(len(col.wrote)), -1)
    last = np.maximum.accumulate(steps)[at] if len(steps) else steps
    if len(last) and int(last.min()) < 0:
        return None
    return col.ok[at], col.val[last]


def _patterns(chosen: np.ndarray) -> tuple[list[tuple[int, ...]], list[int]]:
    """The distinct sets of chosen bindings, and each firing's index among them."""
    if chosen.shape[1] <= _KEY_BITS:
        keys = chosen.astype(np.int64) @ (np.int64(1) << np.arange(chosen.shape[1], dtype=np.int64))
        uniq, inverse = np.unique(keys, return_inverse=True)
        sets = [tuple(i for i in range(chosen.shape[1]) if (k >> i) & 1) for k in uniq.tolist()]
        return sets, inverse.tolist()
    found: dict[tuple[int, ...], int] = {}
    index = [found.setdefault(tuple(np.flatnonzero(row).tolist()), len(found)) for row in chosen]
    return list(found), index


def _shown_values(x2: Node, ok: np.ndarray, rows: np.ndarray) -> list[list[str]]:
    """Each firing's values of X2 as %v shows them, each distinct number formatted once."""
    rows = rows[:, : x2.tspan]
    uniq, inverse = np.unique(rows, return_inverse=True)
    said = ["?" if d != d else number(d) for d in uniq.tolist()]
    said.append("?")  # (X2 not valid)
    inverse = inverse.reshape(rows.shape)
    inverse[~ok] = len(said) - 1
    return [[said[j] for j in row] for row in inverse.tolist()]


def _pieces(parts: tuple[str, ...], x1: Node, n: int) -> str | list[list[str]]:
    """For each binding, the string's constant runs between its %v (a string without
    substitutions is itself, whatever the bindings)."""
    if len(parts) == 1:
        return parts[0]
    words: Callable[[int], dict[str, str]] = _words_of(x1)
    out = []
    for i in range(n):
        said = words(i)
        runs = [parts[0]]
        for code, literal in zip(parts[1::2], parts[2::2], strict=True):
            if code == "v":
                runs.append(literal)
            else:
                runs[-1] += said[code] + literal
        out.append(runs)
    return out


def _fill(
    pieces: str | list[list[str]],
    chosen: tuple[int, ...],
    values_at: list[list[str]] | None,
    r: int,
) -> str | None:
    if isinstance(pieces, str):
        return pieces
    if not chosen:
        return None
    if values_at is None:
        return "".join(pieces[i][0] for i in chosen)
    row = values_at[r]
    out = []
    for i in chosen:
        runs = pieces[i]
        out.append(runs[0])
        for run in runs[1:]:
            out.append(row[i])
            out.append(run)
    return "".join(out)
