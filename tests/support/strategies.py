"""Hypothesis strategies for PCP's records: values, results and every PDU."""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.pdu import records as R
from purepcp.pmapi.types import PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

u32 = st.integers(0, 0xFFFFFFFF)
i32 = st.integers(-(1 << 31), (1 << 31) - 1)
names = st.text(max_size=40)
small_tuple = lambda s: st.lists(s, max_size=8).map(tuple)  # noqa: E731


def _float32(x: float) -> float:
    return struct.unpack(">f", struct.pack(">f", x))[0]


_atoms = {
    PMType.PM_TYPE_32: i32,
    PMType.PM_TYPE_U32: u32,
    PMType.PM_TYPE_64: st.integers(-(1 << 63), (1 << 63) - 1),
    PMType.PM_TYPE_U64: st.integers(0, (1 << 64) - 1),
    PMType.PM_TYPE_FLOAT: st.floats(allow_nan=False, width=32).map(_float32),
    PMType.PM_TYPE_DOUBLE: st.floats(allow_nan=False),
    PMType.PM_TYPE_STRING: st.text(max_size=60).filter(lambda s: "\0" not in s),
    PMType.PM_TYPE_AGGREGATE: st.binary(max_size=40),
    PMType.PM_TYPE_EVENT: st.binary(max_size=40),
}


@st.composite
def value_sets(draw, pmid=u32):
    kind = draw(st.sampled_from([*_atoms, "error"]))
    if kind == "error":
        return ValueSet.of_error(draw(pmid), draw(st.integers(-30000, -1)))
    insts = draw(st.lists(u32, max_size=12, unique=True))
    atoms = [draw(_atoms[kind]) for _ in insts]
    return ValueSet.of_atoms(draw(pmid), kind, list(zip(insts, atoms, strict=True)))


@st.composite
def results(draw, highres: bool = True):
    sec = draw(st.integers(-(1 << 31), (1 << 31) - 1))
    nsec = draw(st.integers(0, 999_999_999)) if highres else draw(st.integers(0, 999_999)) * 1000
    return Result(Timestamp(sec, nsec), tuple(draw(st.lists(value_sets(), max_size=8))))


units = st.builds(
    Units,
    st.integers(-8, 7),
    st.integers(-8, 7),
    st.integers(-8, 7),
    st.integers(0, 15),
    st.integers(0, 15),
    st.integers(-8, 7),
    st.integers(0, 255),
)
descs = st.builds(Desc, u32, i32, u32, i32, units)
label_sets = st.builds(
    lambda d, inst: LabelSet.from_dict(d, inst=inst),
    st.dictionaries(
        st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True),
        st.one_of(st.integers(), st.text(max_size=10), st.booleans()),
        max_size=5,
    ),
    u32,
)

pdus = st.one_of(
    st.builds(R.ErrorPDU, st.integers(-30000, 0), st.none(), i32),
    st.builds(R.ErrorPDU, st.integers(-999, 0) | st.integers(-30000, -12345), u32, i32),
    st.builds(R.ResultPDU, results(highres=False), i32),
    st.builds(R.HighResResultPDU, results(), i32),
    st.builds(
        R.ProfilePDU,
        st.integers(0, (1 << 31) - 1),
        i32,
        small_tuple(st.builds(R.InDomProfile, u32, i32, small_tuple(u32))),
        i32,
    ),
    st.builds(R.FetchPDU, i32, st.lists(u32, min_size=1, max_size=20).map(tuple), i32),
    st.builds(R.HighResFetchPDU, i32, st.lists(u32, min_size=1, max_size=20).map(tuple), i32),
    st.builds(R.DescReqPDU, u32, i32),
    st.builds(R.DescPDU, descs, i32),
    st.builds(R.DescIdsPDU, st.lists(u32, min_size=1, max_size=20).map(tuple), i32),
    st.builds(R.DescsPDU, st.lists(descs, min_size=1, max_size=5).map(tuple), i32),
    st.builds(R.InstanceReqPDU, u32, u32, st.none() | names.filter(bool), i32),
    st.lists(st.tuples(u32, names), max_size=8).flatmap(
        lambda pairs: st.builds(
            R.InstancePDU,
            u32,
            st.just(tuple(p[0] for p in pairs)),
            st.just(tuple(p[1] for p in pairs)),
            i32,
        )
    ),
    st.builds(R.TextReqPDU, u32, i32, i32),
    st.builds(R.TextPDU, u32, st.text(max_size=200), i32),
    st.builds(
        R.CredsPDU,
        small_tuple(
            st.builds(
                R.Cred,
                st.integers(0, 255),
                st.integers(0, 255),
                st.integers(0, 255),
                st.integers(0, 255),
            )
        ),
        i32,
    ),
    st.builds(R.PMNSIdsPDU, i32, st.lists(u32, min_size=1, max_size=20).map(tuple), i32),
    st.lists(names, max_size=8).flatmap(
        lambda ns: st.builds(
            R.PMNSNamesPDU,
            st.just(tuple(ns)),
            st.none()
            if not ns
            else st.none() | st.lists(i32, min_size=len(ns), max_size=len(ns)).map(tuple),
            i32,
        )
    ),
    st.builds(R.PMNSChildPDU, names, i32, i32),
    st.builds(R.PMNSTraversePDU, names, i32, i32),
    st.builds(R.AttrPDU, i32, st.binary(max_size=100), i32),
    st.builds(R.LabelReqPDU, u32, i32, i32),
    st.builds(R.LabelPDU, u32, i32, small_tuple(label_sets), i32),
)
