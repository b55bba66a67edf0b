"""Frames: an expression's values over one or many fetches, as NumPy arrays.

A frame holds, for R fetches (rows) and n instances (columns): which instance
has a value in which fetch, the values, and a per-fetch PCP error code (a fetch
whose code is negative failed as a whole, like a pmValueSet with numval < 0).
A live fetch is a frame of one row; an archive replay gives many rows at once, so
the same evaluation serves both, and a replay of a derived metric costs a few
array operations per node whatever its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..archive.interp import NUMERIC_DTYPES
from ..ids import PM_IN_NULL
from ..values import ValueSet

#: The NumPy dtype holding each PCP numeric type (anything else is held as objects):
#: the archive columns' (interp.py).
DTYPES: dict[int, Any] = NUMERIC_DTYPES

SINGULAR = np.array([PM_IN_NULL], dtype=np.uint32)


def dtype_of(type_: int) -> Any:
    """The NumPy dtype for values of PCP TYPE_."""
    return DTYPES.get(type_, object)


@dataclass
class Frame:
    """Values of one expression: has[r, j] says fetch r has instance insts[j]."""

    insts: np.ndarray  # uint32 (n,), in fetch order; [PM_IN_NULL] when singular
    has: np.ndarray  # bool (R, n)
    values: np.ndarray  # (R, n), the expression's NumPy dtype
    err: np.ndarray  # int32 (R,): 0, or the PCP error that fetch failed with

    @property
    def rows(self) -> int:
        return self.has.shape[0]

    def counts(self) -> np.ndarray:
        """numval per fetch, as pmFetch would report it (the error where it failed)."""
        return np.where(self.err < 0, self.err, self.has.sum(axis=1))

    def value_set(self, pmid: int, type_: int, row: int = 0) -> ValueSet:
        """Fetch ROW's values as the pmValueSet of PMID."""
        code = int(self.err[row])
        if code < 0:
            return ValueSet.of_error(pmid, code)
        mask = self.has[row]
        insts = self.insts[mask].tolist()
        atoms = self.values[row][mask].tolist()
        return ValueSet.of_atoms(pmid, type_, list(zip(insts, atoms, strict=True)))


def constant(value: Any, type_: int, rows: int) -> Frame:
    """A singular constant in every one of ROWS fetches."""
    values = np.full((rows, 1), value, dtype=dtype_of(type_))
    return Frame(SINGULAR, np.ones((rows, 1), bool), values, np.zeros(rows, np.int32))


def empty(type_: int, rows: int, err: int = 0) -> Frame:
    """A singular expression with no values (or failing with ERR) in every fetch."""
    values = np.zeros((rows, 1), dtype=dtype_of(type_))
    return Frame(SINGULAR, np.zeros((rows, 1), bool), values, np.full(rows, err, np.int32))


def from_value_set(vs: ValueSet, type_: int) -> Frame:
    """A one-fetch frame from a fetched pmValueSet (typed by TYPE_)."""
    if vs.numval < 0:
        return empty(type_, 1, vs.numval)
    insts = np.asarray(vs.insts, dtype=np.uint32)
    atoms = vs.atoms(type_) if vs.numval else []
    dtype = dtype_of(type_)
    values = np.empty((1, len(insts)), dtype=dtype)
    if len(insts):
        values[0] = np.asarray(atoms, dtype=dtype) if dtype is not object else _objects(atoms)
    return Frame(insts, np.ones((1, len(insts)), bool), values, np.zeros(1, np.int32))


def _objects(atoms: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(atoms), dtype=object)
    out[:] = list(atoms)
    return out


def row(frame: Frame, r: int) -> Frame:
    """Fetch R of FRAME as a frame of its own (what delta() remembers)."""
    return Frame(frame.insts, frame.has[r : r + 1].copy(), frame.values[r : r + 1].copy(),
                 frame.err[r : r + 1].copy())  # fmt: skip


def align(insts: np.ndarray, other: Frame) -> tuple[np.ndarray, np.ndarray]:
    """OTHER's has and values rearranged to the columns INSTS (missing ones: no value)."""
    where = {int(i): j for j, i in enumerate(other.insts.tolist())}
    cols = np.array([where.get(int(i), -1) for i in insts.tolist()], dtype=np.int64)
    present = cols >= 0
    has = np.zeros((other.rows, len(insts)), bool)
    values = np.zeros((other.rows, len(insts)), dtype=other.values.dtype)
    has[:, present] = other.has[:, cols[present]]
    values[:, present] = other.values[:, cols[present]]
    return has, values


def columns(left: Frame, right: Frame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The instances two indom operands share, in LEFT's order, and where each has them."""
    where = {int(i): j for j, i in enumerate(right.insts.tolist())}
    li, ri = [], []
    for j, inst in enumerate(left.insts.tolist()):
        k = where.get(int(inst))
        if k is not None:
            li.append(j)
            ri.append(k)
    lcols = np.array(li, dtype=np.int64)
    return left.insts[lcols], lcols, np.array(ri, dtype=np.int64)
