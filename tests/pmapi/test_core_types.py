"""Identifiers, units, type/semantics names, descriptors and error codes."""

from __future__ import annotations

import ctypes
import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi import errors
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_NAME, PM_ERR_PMID, PMErr, PMError, SourceError, pmErrStr
from purepcp.pmapi.ids import (
    PM_ID_NULL,
    PM_INDOM_NULL,
    dynamic_root,
    parse_indom,
    parse_pmid,
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmID_item,
    pmIDStr,
    pmInDom_build,
    pmInDom_domain,
    pmInDom_serial,
    pmInDomStr,
)
from purepcp.pmapi.types import PMSem, PMType, pmSemStr, pmTypeStr, type_description
from purepcp.pmapi.units import Space, Time, Units, pmUnitsStr
from tests.support.examples import examples
from tests.support.reference import c_text, libpcp
from tests.support.strategies import units

# -- identifiers ----------------------------------------------------------------------


def test_pmid_layout_matches_pcp6():
    # flag:1 domain:9 cluster:12 item:10, most significant first
    assert pmID_build(60, 0, 1) == (60 << 22) | 1
    assert pmID_build(511, 4095, 1023) == 0x7FFFFFFF
    assert pmIDStr(pmID_build(60, 0, 1)) == "60.0.1"
    assert pmIDStr(pmID_build(29, 3, 2)) == "29.3.2"
    assert pmIDStr(PM_ID_NULL) == "PM_ID_NULL"
    assert pmIDStr(dynamic_root(70)) == "70.*.*"


def test_indom_layout_matches_pcp6():
    assert pmInDom_build(60, 2) == (60 << 22) | 2
    assert pmInDomStr(pmInDom_build(60, 2)) == "60.2"
    assert pmInDomStr(PM_INDOM_NULL) == "PM_INDOM_NULL"
    assert pmInDom_serial(pmInDom_build(1, (1 << 22) - 1)) == (1 << 22) - 1


@given(st.integers(0, 511), st.integers(0, 4095), st.integers(0, 1023))
def test_pmid_round_trip(domain, cluster, item):
    pmid = pmID_build(domain, cluster, item)
    assert (pmID_domain(pmid), pmID_cluster(pmid), pmID_item(pmid)) == (domain, cluster, item)
    if domain != 511 or item != 0:
        assert parse_pmid(pmIDStr(pmid)) == pmid


@given(st.integers(0, 511), st.integers(0, (1 << 22) - 1))
def test_indom_round_trip(domain, serial):
    indom = pmInDom_build(domain, serial)
    assert (pmInDom_domain(indom), pmInDom_serial(indom)) == (domain, serial)
    assert parse_indom(pmInDomStr(indom)) == indom


@pytest.mark.parametrize("bad", [(512, 0, 0), (0, 4096, 0), (0, 0, 1024), (-1, 0, 0)])
def test_pmid_fields_out_of_range(bad):
    with pytest.raises(ValueError, match="out of range"):
        pmID_build(*bad)


@pytest.mark.parametrize("text", ["60.0", "a.b.c", "60.0.1.2", "", "60..1"])
def test_parse_pmid_rejects(text):
    with pytest.raises(ValueError, match="not a PMID"):
        parse_pmid(text)


# -- units ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("units", "text"),
    [
        (Units(), ""),
        (
            Units(
                dimSpace=1, dimTime=-1, scaleSpace=Space.PM_SPACE_KBYTE, scaleTime=Time.PM_TIME_SEC
            ),
            "Kbyte / sec",
        ),
        (Units(dimCount=1, scaleCount=6), "count x 10^6"),
        (Units(dimCount=1, scaleCount=1), "count x 10"),
        (Units(dimCount=1), "count"),
        (Units(dimTime=1, scaleTime=Time.PM_TIME_MSEC), "millisec"),
        (Units(dimTime=-1, scaleTime=Time.PM_TIME_SEC), "/ sec"),
        (Units(dimSpace=2, scaleSpace=Space.PM_SPACE_MBYTE), "Mbyte^2"),
        (
            Units(dimTime=1, dimCount=-1, scaleTime=Time.PM_TIME_HOUR, scaleCount=6),
            "hour / count x 10^6",
        ),
        (Units(scaleCount=3), "x 10^3"),
        (Units(dimSpace=1, scaleSpace=12), "space-12"),
    ],
)
def test_units_text(units, text):
    assert pmUnitsStr(units) == text == str(units)
    assert units.text() == (text or "none")


def test_units_pack_is_pcp_word():
    # dimSpace:4 dimTime:4 dimCount:4 scaleSpace:4 scaleTime:4 scaleCount:4 pad:8
    u = Units(dimSpace=1, dimTime=-1, scaleSpace=Space.PM_SPACE_MBYTE, scaleTime=Time.PM_TIME_SEC)
    assert u.pack() == 0x1F023000
    assert Units.unpack(0x1F023000) == u


@given(units)
def test_units_round_trip(units):
    assert Units.unpack(units.pack()) == units
    assert 0 <= units.pack() <= 0xFFFFFFFF


def test_units_reject_out_of_range():
    with pytest.raises(ValueError, match="dimSpace"):
        Units(dimSpace=8)
    with pytest.raises(ValueError, match="scaleTime"):
        Units(scaleTime=16)


@pytest.mark.interop
@settings(max_examples=examples(2000))
@given(st.integers(0, 0xFFFFFFFF))
def test_units_text_matches_libpcp(word):
    lib = libpcp()
    raw = ctypes.c_uint32(word)  # pmUnits is this word in host order
    assert pmUnitsStr(Units.unpack(word)) == c_text(lib.pmUnitsStr_r, ctypes.byref(raw))


@pytest.mark.interop
def test_id_text_matches_libpcp():
    lib = libpcp()
    for pmid in (0, pmID_build(60, 0, 1), pmID_build(511, 60, 0), PM_ID_NULL, 0x7FFFFFFF):
        assert pmIDStr(pmid) == c_text(lib.pmIDStr_r, ctypes.c_uint32(pmid))
    for indom in (0, pmInDom_build(60, 2), PM_INDOM_NULL):
        assert pmInDomStr(indom) == c_text(lib.pmInDomStr_r, ctypes.c_uint32(indom))


# -- types, semantics, descriptors -----------------------------------------------------


def test_type_and_semantics_numbers():
    assert PMType.PM_TYPE_NOSUPPORT == -1
    assert PMType.PM_TYPE_U64 == 3
    assert PMType.PM_TYPE_HIGHRES_EVENT == 10
    assert PMType.PM_TYPE_UNKNOWN == 255
    assert (PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE) == (1, 3, 4)


@pytest.mark.interop
def test_type_and_semantics_names_match_libpcp():
    lib = libpcp()
    for t in range(-2, 12):
        assert pmTypeStr(t) == c_text(lib.pmTypeStr_r, t)
    assert pmTypeStr(255) == c_text(lib.pmTypeStr_r, 255)
    for s in range(0, 6):
        assert pmSemStr(s) == c_text(lib.pmSemStr_r, s)


def test_desc_describe_like_pminfo():
    desc = Desc(
        pmID_build(2, 0, 4), PMType.PM_TYPE_U32, pmInDom_build(2, 1), PMSem.PM_SEM_INSTANT, Units()
    )
    assert desc.describe() == (
        "    Data Type: 32-bit unsigned int  InDom: 2.1 0x800001\n"
        "    Semantics: instant  Units: none"
    )
    assert Desc(1, PMType.PM_TYPE_NOSUPPORT).describe() == "    Data Type: Not Supported"
    assert type_description(42) == "???"


# -- error codes ----------------------------------------------------------------------


def test_error_numbers_and_messages():
    assert PMErr.PM_ERR_PMID == PM_ERR_PMID == -12358
    assert PM_ERR_NAME == -12357
    assert pmErrStr(PM_ERR_NAME) == "Unknown metric name"
    assert pmErrStr(0) == "No error"
    assert pmErrStr(-errno.EACCES) == "Permission denied"
    assert pmErrStr(-12352) == "No such PMAPI error code (-12352)"


def test_error_exception_carries_code():
    exc = PMError(PM_ERR_PMID, "60.0.99")
    assert exc.code == PM_ERR_PMID
    assert str(exc) == "Unknown or illegal metric identifier: 60.0.99"
    assert "PM_ERR_PMID" in repr(exc)
    src = SourceError(errors.PM_ERR_PMNS, "{ expected", "root", 12)
    assert str(src) == "root:12: { expected"


@pytest.mark.interop
def test_error_messages_match_libpcp():
    lib = libpcp()
    codes = [code for code in PMErr] + [
        0,
        -1,
        -2,
        -13,
        -22,
        -110,
        -300,
        -12352,
        -20000,
        -21345,
        -21360,
        -21400,
        -22345,
        -99999,
    ]
    for code in codes:
        assert pmErrStr(code) == c_text(lib.pmErrStr_r, int(code)), code


@pytest.mark.parametrize(
    ("type_", "atom"),
    [
        (PMType.PM_TYPE_U32, 7),
        (PMType.PM_TYPE_U32, 2**32 - 1),
        (PMType.PM_TYPE_U32, 2**32),
        (PMType.PM_TYPE_U32, -1),
        (PMType.PM_TYPE_32, -5),
        (PMType.PM_TYPE_U64, 2**64 - 1),
        (PMType.PM_TYPE_U64, 2**64),
        (PMType.PM_TYPE_64, -(2**63)),
        (PMType.PM_TYPE_FLOAT, 0.1),
        (PMType.PM_TYPE_DOUBLE, 0.1),
        (PMType.PM_TYPE_STRING, "abc"),
        (PMType.PM_TYPE_U64, 1.5),
    ],
)
def test_of_single_is_of_atoms_of_one_value(type_, atom) -> None:
    """ValueSet.of_single (the agents' quick path) gives exactly what of_atoms gives."""
    from purepcp.pmapi.ids import PM_IN_NULL
    from purepcp.pmapi.values import ValueSet

    def build(make):
        try:
            return make()
        except PMError as exc:
            return exc.code

    one = build(lambda: ValueSet.of_single(1, type_, atom))
    general = build(lambda: ValueSet.of_atoms(1, type_, [(PM_IN_NULL, atom)]))
    assert one == general


def test_empty_is_of_atoms_of_nothing() -> None:
    from purepcp.pmapi.values import ValueSet

    for type_ in (PMType.PM_TYPE_U64, PMType.PM_TYPE_STRING, PMType.PM_TYPE_FLOAT):
        assert ValueSet.empty(7) == ValueSet.of_atoms(7, type_, ())
