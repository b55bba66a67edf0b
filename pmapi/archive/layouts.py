"""Record layouts as templates: which 32-bit words of a record are its layout (the same
in every record of that layout: compared in one masked pass) and which are values (read
as columns).  A template is made from one record the reader decoded, and trusted only
where reading its words as columns gives what the reader gives."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cnumbers import int32
from ..desc import Desc
from ..types import PMType, ValFmt
from .interp import NUMERIC_DTYPES
from .reader import LogRecord

_LITTLE = sys.byteorder == "little"
_INSITU = int(ValFmt.PM_VAL_INSITU)
#: How insitu words read for a metric's type (other types keep their words as they are).
_INSITU_KINDS = {
    PMType.PM_TYPE_32: ">i4",
    PMType.PM_TYPE_U32: ">u4",
    PMType.PM_TYPE_FLOAT: ">f4",
}
#: Value blocks read as columns: the payload words of each type and how one word reads.
_BLOCK_KINDS = {
    PMType.PM_TYPE_32: (1, ">i4"),
    PMType.PM_TYPE_U32: (1, ">u4"),
    PMType.PM_TYPE_FLOAT: (1, ">f4"),
    PMType.PM_TYPE_64: (2, ""),
    PMType.PM_TYPE_U64: (2, ""),
    PMType.PM_TYPE_DOUBLE: (2, ""),
}


@dataclass
class Group:
    """One value set of a template: its metric, instances, and where its values lie.

    A column group reads value i from word WORDS[i] of each record (two words when
    WIDE); a fixed group's words are all layout, so its ATOMS are the same in every
    record the template matches.
    """

    pmid: int
    insts: list[int]
    dtype: Any
    words: np.ndarray | None = None
    kind: str = ""  # how one value word reads: ">i4", ">u4" or ">f4"
    wide: bool = False
    via_double: bool = False  # a float block, which the reader takes through a Python float
    atoms: Sequence[Any] = ()
    valfmt: int = _INSITU  # how the values are encoded (part of the layout)


@dataclass
class Template:
    """A layout: its record length, its value sets, and the records having it."""

    length: int
    groups: list[Group]
    rows: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    stamps: np.ndarray | None = None  # the rows' times, once asked for
    ascending: bool = False  # ... and whether they are in order
    errors: list[tuple[int, int]] = field(default_factory=list)  # (pmid, code) value sets


def template_of(
    rec: LogRecord, raw: bytes, v3: bool, descs: Mapping[int, Desc]
) -> tuple[Template, np.ndarray, np.ndarray] | None:
    """The template of REC's layout (RAW its bytes, from a v3 archive if V3; DESCS the
    metrics' descriptors), with the mask of its layout words and its words under the mask
    (native uint32); None if it is not one to trust."""
    native = np.frombuffer(raw, np.uint32)
    words = native.byteswap().tolist() if _LITTLE else native.tolist()
    nw = len(words)
    layout = np.ones(nw, dtype=bool)
    o = 5 if v3 else 4  # the first value set, after len, timestamp, numpmid
    layout[1 : o - 1] = False
    claims = np.zeros(nw, dtype=np.int64)  # how many value blocks hold each word
    groups: list[Group] = []
    errors: list[tuple[int, int]] = []
    for vs in rec.result.vsets:
        if o + 2 > nw or words[o] != vs.pmid:
            return None
        n = words[o + 1]
        if n == 0 or n & 0x80000000:
            if n:
                errors.append((vs.pmid, int32(n)))
            o += 2
            continue
        stop = o + 3 + 2 * n
        insts = words[o + 3 : stop : 2]
        if stop > nw or n != vs.numval or words[o + 2] != vs.valfmt or insts != list(vs.insts):
            return None
        desc = descs.get(vs.pmid)
        vtype = desc.type if desc is not None else None
        slots = list(range(o + 4, stop, 2))
        group = Group(vs.pmid, insts, NUMERIC_DTYPES.get(vtype, object), valfmt=vs.valfmt)
        if vs.valfmt == _INSITU:
            if vtype in _INSITU_KINDS:
                group.words, group.kind = np.array(slots), _INSITU_KINDS[vtype]
        elif not _blocks(words, slots, stop, claims, group, vtype):
            return None
        if group.words is None:
            group.atoms = vs.atoms(vtype)
        else:
            if not _reads_as(native, group, vs.atoms(vtype)):
                return None
            layout[group.words] = False
            if group.wide:
                layout[group.words + 1] = False
        groups.append(group)
        o = stop
    if claims.max(initial=0) > 1:  # blocks sharing words: leave it to the reader
        return None
    mask = np.where(layout, np.uint32(0xFFFFFFFF), np.uint32(0))
    return Template(len(raw), groups, errors=errors), mask, native & mask


def _blocks(
    words: list[int], slots: list[int], stop: int, claims: np.ndarray, g: Group, vtype: Any
) -> bool:
    """Check the value blocks SLOTS point at and claim their words; make G a column group
    if they are all blocks of VTYPE's own fixed size.  False if one is out of place."""
    nw = len(words)
    kinds = _BLOCK_KINDS.get(vtype)
    header = -1 if kinds is None else (vtype << 24) | (4 + 4 * kinds[0])
    starts = []
    same = True
    for slot in slots:
        at = words[slot] - 2  # a word offset in the PDU the reader rebuilds (header 3 words)
        if not stop <= at < nw - 1:
            return False
        size = ((words[at] & 0xFFFFFF) + 3) >> 2
        if size < 1 or at + size > nw - 1:
            return False
        claims[at : at + size] += 1
        starts.append(at + 1)
        same = same and words[at] == header
    if same and kinds is not None:
        g.words, g.kind = np.array(starts), kinds[1]
        g.wide = kinds[0] == 2
        g.via_double = vtype == PMType.PM_TYPE_FLOAT
    return True


def read_values(span: np.ndarray, cols: np.ndarray, g: Group) -> np.ndarray:
    """Column group G's values: SPAN holds a record's raw words per row, G's value i starts
    at column COLS[i]; one row per value, one column per record."""
    first = span[:, cols].view(">u4").T
    if g.wide:
        values = first.astype(np.uint64, order="C") << np.uint64(32)
        values |= span[:, cols + 1].view(">u4").T
        return values.view(g.dtype)
    values = first.view(g.kind).astype(g.dtype, order="C")
    if g.via_double:
        with np.errstate(invalid="ignore"):
            values = values.astype(np.float64).astype(np.float32)
    return values


def _reads_as(native: np.ndarray, g: Group, atoms: Sequence[Any]) -> bool:
    """True if column group G, read from record words NATIVE, gives what the reader gives."""
    try:
        want = column([atoms], g.dtype)
    except (ValueError, OverflowError, TypeError):
        return False
    got = read_values(native[None, :], g.words, g)[:, 0]  # type: ignore[arg-type]
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


def column(chunks: Sequence[Sequence[Any]], dtype: Any) -> np.ndarray:
    """CHUNKS of atoms as one array of DTYPE (np.asarray's conversion of each atom)."""
    if dtype is object:
        values = np.empty(sum(len(c) for c in chunks), dtype=object)
        values[:] = [v for atoms in chunks for v in atoms]
        return values
    return np.concatenate([np.asarray(atoms, dtype=dtype) for atoms in chunks])
