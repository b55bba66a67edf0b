"""A fetch answered as PDU bytes: the values a fetch gathers go straight into a result
laid out as the last one was, with no value-set object per metric.

Clients such as pmlogger ask an agent for the same metrics at every sample, and
between two samples almost nothing about the answer changes but the values: the same
metrics have values for the same instances.  So once a list of metrics has been
answered twice with the same layout, the agent keeps a ResultWriter for it
(pmapi/pdu/result_layout.py) and later fetches gather the values column-wise and pack
the whole PDU at once.  The answer is a ColumnValueSets over those bytes, which the
pipe loop and pmcd relay as they are, and which builds a ValueSet for anyone who asks.

The writer is adopted only after it has written, from the same values, exactly the
bytes the careful path (ValueSet by ValueSet, result.py) writes; whenever a fetch's
layout differs (an instance came or went, a string changed length, a value would not
fit its type) that fetch takes the careful path, so the answer is always what the
careful path would give.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_IN_NULL, pmID_cluster
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.result import RESULT_PREAMBLE, encode_result
from purepcp.pmapi.pdu.result_layout import ColumnValueSets, ResultLayout, ResultWriter, shape_of
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import ARRAY_CODES, Result, Timestamp, ValueSet

from .metrics import NOSUPPORT, Metric

if TYPE_CHECKING:  # (pmda.agent imports this module)
    from .agent import Agent, FetchPlan

#: How each metric's values go in a result.
UNSIGNED, SIGNED, BLOCK, STRING = range(4)
_KINDS = {
    int(PMType.PM_TYPE_U32): UNSIGNED,
    int(PMType.PM_TYPE_32): SIGNED,
    int(PMType.PM_TYPE_STRING): STRING,
    int(NOSUPPORT): UNSIGNED,  # never has values
    **{int(t): BLOCK for t, code in ARRAY_CODES.items() if code in "qQfd"},
}
_NULL = [PM_IN_NULL]  # the instances of a value of a metric without instances
_NONE: list[int] = []
_I32 = int(PMType.PM_TYPE_32)
_NOT_PACKED = (struct.error, OverflowError, TypeError, ValueError)


class Columns:
    """One list of metrics' column state: each metric's kind, the layout seen last,
    and the writer of the layout adopted."""

    __slots__ = ("kinds", "last", "signed", "writer")

    def __init__(self, kinds: tuple[int, ...]) -> None:
        self.kinds = kinds
        self.signed = frozenset(i for i, kind in enumerate(kinds) if kind == SIGNED)
        self.last: tuple[list, list, list] | None = None  # the last fetch's layout key
        self.writer: Any = None  # a ResultWriter, or _UNFIT


def columns_for(wanted: tuple[Metric | None, ...]) -> Columns | None:
    """The column state for a list of metrics (None for unknown ones), or None if one of
    them has a type whose values do not go by columns (aggregates, events)."""
    kinds = []
    for m in wanted:
        kind = UNSIGNED if m is None else _KINDS.get(int(m.type))
        if kind is None:
            return None
        kinds.append(kind)
    return Columns(tuple(kinds))


def column_value_sets(agent: Agent, plan: FetchPlan, columns: Columns) -> Any:
    """The fetch's value sets, after its refreshes: a ColumnValueSets over the packed
    PDU when the layout is the adopted one, else the careful path's tuple."""
    cluster_values = agent.cluster_values
    profiled, fetch_one = agent.profiled, agent.fetch_one
    numvals: list[int] = []
    insts_of: list[list[int]] = []
    sizes: list[int] = []
    head: list[Any] = []  # insitu values, in set order
    blocks: list[Any] = []  # block payloads, in set order
    made: dict[int, Any] = {}  # sets the careful way built (fetch methods), by index
    kinds = columns.kinds
    index = -1
    for pmid, cluster, name, _, m in plan.quick:
        index += 1
        kind = kinds[index]
        single = False  # a metric without instances whose one value is VALUE
        if cluster < 0 and m is not None and m.indom is None and m.fetcher is not None:
            # one value from the metric's own method (called once: the careful path, if
            # this fetch ends up taking it, builds its set from the value got here)
            if not isinstance(cluster_values.get(pmID_cluster(pmid)), PMError):
                try:
                    value = m.fetcher(agent)
                except PMError as exc:
                    made[index] = ValueSet.of_error(pmid, exc.code)
                    numvals.append(exc.code)
                    insts_of.append(_NONE)
                    continue
                made[index] = _Got(value)
                single = True
        elif cluster >= 0:
            supplied = cluster_values.get(cluster)
            if type(supplied) is dict:
                value = supplied.get(name)
                single = m.indom is None
                if not single and type(value) is dict:
                    insts = profiled(m.indom)
                    got = list(map(value.get, insts))
                    if None in got:  # instances without a value, or keyed by name
                        pairs = agent.instance_values(m, value, insts)
                        insts = [inst for inst, _ in pairs]
                        got = [v for _, v in pairs]
                    numvals.append(len(got))
                    insts_of.append(insts if got else _NONE)
                    if kind == STRING:
                        if not all(type(v) is str for v in got):
                            return _careful(agent, plan, made)
                        got = [v.encode("utf-8", "surrogateescape") for v in got]
                        sizes += map(len, got)
                        blocks += got
                    elif kind == BLOCK:
                        blocks += got
                    else:
                        head += got
                    continue
        if single:
            if value is None:
                numvals.append(0)
                insts_of.append(_NONE)
                continue
            vtype = type(value)
            if (vtype is int or vtype is float) and kind != STRING:
                numvals.append(1)
                insts_of.append(_NULL)
                (head if kind < BLOCK else blocks).append(value)
                continue
            if vtype is str and kind == STRING:
                text = value.encode("utf-8", "surrogateescape")
                numvals.append(1)
                insts_of.append(_NULL)
                sizes.append(len(text))
                blocks.append(text)
                continue
        vs = made.get(index)
        if type(vs) is not ValueSet:  # (a value got above of no type it could be)
            vs = (
                fetch_one(pmid, m)
                if vs is None
                else agent.value_set(pmid, m, [(PM_IN_NULL, value)])
            )
        made[index] = vs
        n = vs.numval
        numvals.append(n)
        if n <= 0:
            insts_of.append(_NONE)
            continue
        insts_of.append(vs.insts.tolist())
        if kind == STRING:
            if not all(type(v) is str for v in vs.values):
                return _careful(agent, plan, made)
            got = [v.encode("utf-8", "surrogateescape") for v in vs.values]
            sizes += map(len, got)
            blocks += got
        elif kind == BLOCK:
            blocks += vs.values
        elif kind == SIGNED:
            head += vs.atoms(_I32)
        else:
            head += vs.values
    key = (numvals, insts_of, sizes)
    head += blocks
    if key != columns.last:  # a new layout: learnt if the next fetch has it too
        columns.last, columns.writer = key, None
        return _careful(agent, plan, made)
    writer = columns.writer
    if writer is not None:
        try:
            return ColumnValueSets(writer.layout, writer.pack(head))
        except _NOT_PACKED:  # a value that does not fit its type: the careful path says which
            return _careful(agent, plan, made)
    vsets = _careful(agent, plan, made)
    columns.writer = _learn(vsets, head, columns.signed)
    return vsets


class _Got:
    """A value a metric's fetch method gave, its set not built (yet)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _careful(agent: Agent, plan: FetchPlan, made: dict[int, Any]) -> tuple[ValueSet, ...]:
    for index, got in made.items():
        if type(got) is _Got:
            pmid, _, _, _, m = plan.quick[index]
            pairs = [] if got.value is None else [(PM_IN_NULL, got.value)]
            made[index] = agent.value_set(pmid, m, pairs)
    return agent.value_sets(plan, made)


class _Unfit:
    """The writer of a layout that cannot be written by columns: every fetch of it takes
    the careful path, without learning it again."""

    layout = None

    def pack(self, values: list[Any]) -> bytes:
        raise ValueError("this layout is not written by columns")


_UNFIT = _Unfit()


def _learn(vsets: tuple[ValueSet, ...], values: list[Any], signed: frozenset[int]) -> Any:
    """A writer for the layout of VSETS, if packing VALUES with it gives exactly the bytes
    the careful encoder gives for VSETS; else _UNFIT."""
    shape = shape_of(vsets)
    if shape is None:
        return _UNFIT
    layout = ResultLayout(shape, RESULT_PREAMBLE, PDUType.PDU_RESULT)
    writer = ResultWriter(layout, signed)
    try:
        packed = writer.pack(values)
    except _NOT_PACKED:
        return _UNFIT
    careful = encode_result(Result(Timestamp(0, 0), vsets), False, 0, PDUType.PDU_RESULT)
    return writer if packed == careful else _UNFIT
