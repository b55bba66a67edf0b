"""Unit and property tests for pmapi.labels: JSONB parsing, the pmLabel index, merging."""

from __future__ import annotations

import contextlib
import errno
import json
from functools import reduce

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_IN_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.labels import (
    MAX_LABEL_DEPTH,
    MAXLABELJSONTEXT,
    MAXLABELNAMELEN,
    MAXLABELSET,
    MAXMERGEDJSONTEXT,
    PM_LABEL_CLUSTER,
    PM_LABEL_COMPOUND,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL,
    PM_MAXLABELJSONLEN,
    PM_MAXLABELS,
    Label,
    LabelFlag,
    LabelSet,
    add_labels,
    domain_labels,
    pmdaAddLabelFlags,
    pmdaAddLabels,
    pmdaAddNotes,
    pmLabelFlagString,
    pmLabelIdentString,
    pmLabelTypeString,
    pmMergeLabels,
    pmMergeLabelSets,
    pmPrintLabelSets,
)
from tests.support.examples import examples

EINVAL = -errno.EINVAL
E2BIG = -errno.E2BIG


def parse(text: str | bytes, flags: int = 0, **kw: int) -> LabelSet:
    return LabelSet.from_json(text, flags, **kw)


def records(lset: LabelSet) -> list[tuple[int, int, int, int, int]]:
    return [(lp.name, lp.namelen, lp.flags, lp.value, lp.valuelen) for lp in lset.labels]


def assert_consistent(lset: LabelSet) -> None:
    """Every index record points at its name and value bytes; the index is sorted and unique."""
    assert lset.nlabels == len(lset.labels)
    if lset.json:
        json.loads(lset.json)  # the JSONB text is itself valid JSON
    for lp in lset.labels:
        name = lset.json[lp.name : lp.name + lp.namelen]
        assert lset.json[lp.name - 1 : lp.name] == b'"'
        assert lset.json[lp.name + lp.namelen : lp.name + lp.namelen + 2] == b'":'
        full = lset.label_name_bytes(lp)
        assert full == name or full.endswith(b"." + name)
        value = lset.json[lp.value : lp.value + lp.valuelen]
        json.loads(value)
        assert lset.label_value(lp) == value.decode()
    fulls = [lset.label_name_bytes(lp) for lp in lset.labels]
    assert fulls == sorted(fulls)
    assert len(set(fulls)) == len(fulls)


def error_code(fn, *args, **kw) -> int:
    with pytest.raises(PMError) as info:
        fn(*args, **kw)
    assert info.value.detail
    return info.value.code


# -- constants ------------------------------------------------------------------------


def test_flag_values_and_names() -> None:
    expected = {
        "PM_LABEL_CONTEXT": 1,
        "PM_LABEL_DOMAIN": 2,
        "PM_LABEL_INDOM": 4,
        "PM_LABEL_CLUSTER": 8,
        "PM_LABEL_ITEM": 16,
        "PM_LABEL_INSTANCES": 32,
        "PM_LABEL_COMPOUND": 64,
        "PM_LABEL_OPTIONAL": 128,
    }
    assert {m.name: int(m) for m in LabelFlag} == expected
    assert PM_LABEL_CONTEXT == 1 and PM_LABEL_OPTIONAL == 128
    assert (PM_MAXLABELS, PM_MAXLABELJSONLEN, MAXLABELNAMELEN) == (255, 65535, 255)
    assert MAXLABELSET == 255 * 6


def test_label_fields_are_range_checked() -> None:
    Label(0xFFFF, 0xFF, 0xFF, 0xFFFF, 0xFFFF)
    for bad in (
        dict(name=-1),
        dict(name=0x10000),
        dict(namelen=256),
        dict(flags=256),
        dict(value=0x10000),
        dict(valuelen=0x10000),
    ):
        fields = dict(name=0, namelen=0, flags=0, value=0, valuelen=0) | bad
        with pytest.raises(ValueError):
            Label(**fields)


# -- parsing --------------------------------------------------------------------------


def test_simple_set() -> None:
    lset = parse('{"hostname":"acme","cpus":4}')
    assert lset.inst == PM_IN_NULL
    assert lset.json == b'{"hostname":"acme","cpus":4}'
    assert lset.names == ("cpus", "hostname")
    assert lset.values == ("4", '"acme"')
    assert records(lset) == [(20, 4, 0, 26, 1), (2, 8, 0, 12, 6)]
    assert lset.to_dict() == {"cpus": 4, "hostname": "acme"}
    assert not lset.compound
    assert_consistent(lset)


def test_whitespace_stripped_value_text_kept() -> None:
    text = ' {\n\t"b" : 1.50 ,\r\n "a":"x \\n\\u00e9 y" , "c" : [ 1 , 2.0 , "s p" ] }\n'
    lset = parse(text)
    assert lset.json == b'{"b":1.50,"a":"x \\n\\u00e9 y","c":[1,2.0,"s p"]}'
    assert lset.values == ('"x \\n\\u00e9 y"', "1.50", '[1,2.0,"s p"]')
    assert_consistent(lset)


def test_number_and_literal_text_verbatim() -> None:
    for value in ("-0", "1E+5", "1.0e+00", "-1.5e-3", "1.50", "true", "false", "null", '""'):
        lset = parse(f'{{"v": {value} }}')
        assert lset.values == (value,)
        assert lset.json == f'{{"v":{value}}}'.encode()


def test_unicode_values_kept_as_utf8_bytes() -> None:
    lset = parse('{"city":"Zürich","jp":"日本"}')
    assert lset.json == '{"city":"Zürich","jp":"日本"}'.encode()
    assert lset.to_dict() == {"city": "Zürich", "jp": "日本"}
    lp = lset.lookup("jp")
    assert lp is not None and lp.valuelen == len('"日本"'.encode()) == 8
    assert_consistent(lset)
    assert parse(lset.json) == lset  # bytes input gives the same set


def test_index_sorted_bytewise_json_keeps_input_order() -> None:
    lset = parse('{"z0":1,"a_":2,"aB":3,"a1":4,"a":5,"Z":6,"A":7}')
    assert lset.json == b'{"z0":1,"a_":2,"aB":3,"a1":4,"a":5,"Z":6,"A":7}'
    assert lset.names == ("A", "Z", "a", "a1", "aB", "a_", "z0")
    assert_consistent(lset)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2}',
        '{"a":1,"b":2,"a":"x"}',
        '{"a":{"b":1},"a":{"b":2}}',
        '{"a.b":1,"a":{"b":2}}',
    ],
)
def test_duplicate_names_rejected(text: str) -> None:
    with pytest.raises(PMError) as info:
        parse(text, PM_LABEL_COMPOUND)
    assert info.value.code == EINVAL
    assert "duplicate" in info.value.detail


def test_same_parent_twice_with_distinct_leaves_is_fine() -> None:
    lset = parse('{"a":{"b":1},"a":{"c":2}}')  # libpcp accepts this too
    assert lset.names == ("a.b", "a.c")


@pytest.mark.parametrize("name", ["1a", "_a", "a-b", "a b", "é", "a.b", "a\\u0062", "a$"])
def test_bad_names_rejected(name: str) -> None:
    with pytest.raises(PMError) as info:
        parse(f'{{"ok":1,"{name}":2}}')
    assert info.value.code == EINVAL
    assert "at byte 8" in info.value.detail  # the opening quote


def test_empty_name_rejected() -> None:
    assert error_code(parse, '{"":1}') == EINVAL
    assert error_code(parse, '{"a":{"":1}}') == EINVAL


def test_dotted_names_need_the_compound_flag() -> None:
    assert error_code(parse, '{"a.b":1}') == EINVAL
    lset = parse('{"a.b":1}', PM_LABEL_COMPOUND)
    assert records(lset) == [(2, 3, PM_LABEL_COMPOUND, 7, 1)]
    assert lset.names == ("a.b",)
    assert lset.compound  # libpcp hashes dotted names too


def test_name_length_limit() -> None:
    ok = "n" * (MAXLABELNAMELEN - 1)
    assert parse(f'{{"{ok}":1}}').names == (ok,)
    assert error_code(parse, f'{{"{ok}n":1}}') == E2BIG


def test_compound_full_name_length_limit() -> None:
    part = "p" * 200
    assert error_code(parse, f'{{"{part}":{{"{part}":1}}}}') == E2BIG


def test_nested_map_gives_compound_labels() -> None:
    lset = parse('{"a":{"b":1,"c":"x"},"d":2}')
    assert lset.json == b'{"a":{"b":1,"c":"x"},"d":2}'
    c = int(PM_LABEL_COMPOUND)
    assert records(lset) == [(7, 1, c, 10, 1), (13, 1, c, 16, 3), (22, 1, 0, 25, 1)]
    assert lset.names == ("a.b", "a.c", "d")
    assert lset.compound_names == ((7, "a.b"), (13, "a.c"))
    assert lset.to_dict() == {"a.b": 1, "a.c": "x", "d": 2}
    assert lset.lookup("a.b") == lset.labels[0]
    assert lset.lookup("b") is None and lset.lookup("a") is None
    assert_consistent(lset)


def test_deeper_nesting_keeps_every_component() -> None:
    lset = parse('{"a":{"b":{"c":1},"d":2},"e":3}')
    assert lset.names == ("a.b.c", "a.d", "e")
    assert [lp.flags for lp in lset.labels] == [PM_LABEL_COMPOUND, PM_LABEL_COMPOUND, 0]
    assert_consistent(lset)


def test_empty_map_value_is_a_compound_flagged_label() -> None:
    lset = parse('{"a":{},"b":1}')
    assert records(lset) == [(2, 1, PM_LABEL_COMPOUND, 5, 2), (9, 1, 0, 12, 1)]
    assert lset.compound_names == ()  # as libpcp: the name is just "a"
    assert lset.to_dict() == {"a": {}, "b": 1}
    nested = parse('{"x":{"a":{}}}')
    assert nested.names == ("x.a",)
    assert nested.values == ("{}",)


@pytest.mark.parametrize("text", ["{}", "", "   ", " \n{ \t}\r\n"])
def test_empty_sets(text: str) -> None:
    lset = parse(text, PM_LABEL_ITEM)
    assert (lset.nlabels, lset.json, lset.labels) == (0, b"", ())
    assert lset.to_dict() == {}


@pytest.mark.parametrize(
    "text",
    ["[1]", "1", '"a"', "null", "[]", '{"a":1', '{"a":"x"', '{"a":1}x', '{"a":1}{}', '{"a":1,}'],
)
def test_non_object_and_malformed_rejected(text: str) -> None:
    with pytest.raises(PMError) as info:
        parse(text)
    assert info.value.code == EINVAL
    assert "label JSON" in str(info.value) and "at byte" in info.value.detail


@pytest.mark.parametrize(
    "value",
    [".5", "1.", "+1", "01", "-01", "0x1", "1e", "-", "Infinity", "NaN", "True", "nul", "'s'",
     '"\\x"', '"\\u12"', '"a\tb"', '"a\nb"', "[1,]", "[,1]", "[1 2]", '{"k" 1}', "{1:2}"],
)  # fmt: skip
def test_invalid_json_values_rejected(value: str) -> None:
    assert error_code(parse, f'{{"a":{value}}}') == EINVAL


def test_error_detail_says_where() -> None:
    with pytest.raises(PMError) as info:
        parse('{"a":1, "b" 2}')
    expected = "label JSON: expected ':' after a label name at byte 12 (found b'2}')"
    assert info.value.detail == expected
    assert str(info.value).startswith("Invalid argument: label JSON")


def test_invalid_utf8_and_surrogates_rejected() -> None:
    assert error_code(parse, b'{"a":"\xff"}') == EINVAL
    assert error_code(parse, '{"a":"\udc80"}') == EINVAL
    with pytest.raises(TypeError):
        parse(42)  # type: ignore[arg-type]


def test_json_only_whitespace_is_insignificant() -> None:
    assert error_code(parse, '{"a":\f1}') == EINVAL
    assert error_code(parse, '{"a":1}\v') == EINVAL
    assert parse('{"a":\t\r\n 1}').json == b'{"a":1}'


def test_too_many_labels() -> None:
    def text(n: int) -> str:
        return json.dumps({f"l{i}": i for i in range(n)})

    assert parse(text(PM_MAXLABELS)).nlabels == PM_MAXLABELS
    assert error_code(parse, text(PM_MAXLABELS + 1)) == E2BIG
    assert parse(text(PM_MAXLABELS + 1), maxlabels=MAXLABELSET).nlabels == PM_MAXLABELS + 1
    assert error_code(parse, text(3), maxlabels=2) == E2BIG


def test_too_long() -> None:
    def text(n: int) -> str:
        return '{"a":"' + "x" * (n - 8) + '"}'

    assert len(parse(text(MAXLABELJSONTEXT)).json) == MAXLABELJSONTEXT == 65533
    assert error_code(parse, text(MAXLABELJSONTEXT + 1)) == E2BIG


def test_nesting_depth_limit() -> None:
    def arrays(n: int, inner: str = "") -> str:
        return '{"a":' + "[" * n + inner + "]" * n + "}"

    # the top-level object is level 1; every value, scalars too, one level deeper
    assert parse(arrays(MAX_LABEL_DEPTH - 1)).nlabels == 1
    assert error_code(parse, arrays(MAX_LABEL_DEPTH)) == EINVAL
    assert parse(arrays(MAX_LABEL_DEPTH - 2, "1")).nlabels == 1
    assert error_code(parse, arrays(MAX_LABEL_DEPTH - 1, "1")) == EINVAL


def test_arrays_are_opaque_values() -> None:
    lset = parse('{"a":[ [1, 2], {"k" : "v", "_": null} ]}')
    assert lset.json == b'{"a":[[1,2],{"k":"v","_":null}]}'
    assert lset.names == ("a",)
    assert lset.to_dict() == {"a": [[1, 2], {"k": "v", "_": None}]}
    assert_consistent(lset)


def test_flags_ored_into_every_label() -> None:
    lset = parse('{"a":1,"b":{"c":2}}', PM_LABEL_DOMAIN | PM_LABEL_OPTIONAL)
    assert [lp.flags for lp in lset.labels] == [
        PM_LABEL_DOMAIN | PM_LABEL_OPTIONAL,
        PM_LABEL_DOMAIN | PM_LABEL_OPTIONAL | PM_LABEL_COMPOUND,
    ]
    assert all(type(lp.flags) is int for lp in lset.labels)
    with pytest.raises(ValueError):
        parse('{"a":1}', 0x100)


def test_inst_is_carried() -> None:
    assert parse('{"a":1}', PM_LABEL_INSTANCES, inst=7).inst == 7
    assert LabelSet.from_dict({"a": 1}, inst=3).inst == 3


# -- the model ------------------------------------------------------------------------


def test_labelset_validation() -> None:
    json_ = b'{"a":1}'
    good = (Label(2, 1, 0, 5, 1),)
    assert LabelSet(0, 1, json_, good).names == ("a",)
    assert LabelSet(0, 1, json_, list(good)).labels == good  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LabelSet(0, 2, json_, good)
    with pytest.raises(ValueError):
        LabelSet(0, 1, json_, (Label(2, 1, 0, 5, 3),))
    with pytest.raises(ValueError):
        LabelSet(0, -12345, json_, ())
    with pytest.raises(TypeError):
        LabelSet(0, 1, json_.decode(), good)  # type: ignore[arg-type]
    failed = LabelSet(nlabels=-12357)
    assert failed.labels == () and failed.json == b""


def test_wire_set_without_compound_names_uses_leaf_names() -> None:
    parsed = parse('{"a":{"b":1}}')
    wire = LabelSet(parsed.inst, parsed.nlabels, parsed.json, parsed.labels)
    assert parsed.names == ("a.b",)
    assert wire.names == ("b",)  # what a libpcp client sees for an unmerged nested set
    assert pmMergeLabelSets([wire]).json == b'{"b":1}'


def test_to_dict_null_for_empty_value_and_error_for_garbage() -> None:
    lset = LabelSet(0, 2, b'{"a":x,"b":1}', (Label(2, 1, 0, 5, 1), Label(8, 1, 0, 0, 0)))
    with pytest.raises(PMError):
        lset.to_dict()
    ok = LabelSet(0, 1, b'{"b":1}', (Label(2, 1, 0, 0, 0),))
    assert ok.to_dict() == {"b": None}


def test_from_dict() -> None:
    lset = LabelSet.from_dict({"b": [1, "x"], "a": "é", "n": None, "m": {"k": 1.5}})
    assert lset.json == '{"b":[1,"x"],"a":"é","n":null,"m":{"k":1.5}}'.encode()
    assert lset.to_dict() == {"a": "é", "b": [1, "x"], "m.k": 1.5, "n": None}
    assert error_code(LabelSet.from_dict, {1: 2}) == EINVAL
    assert error_code(LabelSet.from_dict, {"a": float("nan")}) == EINVAL
    assert error_code(LabelSet.from_dict, {"a": object()}) == EINVAL
    assert error_code(LabelSet.from_dict, {"a b": 1}) == EINVAL
    assert LabelSet.from_dict({}).nlabels == 0


def test_add_flags() -> None:
    lset = parse('{"a":1,"b":{"c":2}}', PM_LABEL_OPTIONAL)
    flagged = lset.add_flags(PM_LABEL_ITEM)
    assert [lp.flags for lp in flagged.labels] == [
        PM_LABEL_OPTIONAL | PM_LABEL_ITEM,
        PM_LABEL_OPTIONAL | PM_LABEL_ITEM | PM_LABEL_COMPOUND,
    ]
    assert flagged.names == lset.names and flagged.json == lset.json
    assert pmdaAddLabelFlags(lset, PM_LABEL_ITEM) == flagged
    assert pmdaAddLabelFlags(None, PM_LABEL_ITEM) is None


# -- merging --------------------------------------------------------------------------


def test_merge_precedence_and_flags() -> None:
    context = parse('{"hostname":"h","tier":"dev","x":1}', PM_LABEL_CONTEXT)
    domain = parse('{"agent":"sample","tier":"prod"}', PM_LABEL_DOMAIN)
    item = parse('{"x":{"y":true},"tier":"qa"}', PM_LABEL_ITEM)
    merged = pmMergeLabelSets([context, domain, None, item])
    assert merged.json == b'{"agent":"sample","hostname":"h","tier":"qa","x":1,"x.y":true}'
    assert merged.names == ("agent", "hostname", "tier", "x", "x.y")
    assert [lp.flags for lp in merged.labels] == [
        PM_LABEL_DOMAIN,
        PM_LABEL_CONTEXT,
        PM_LABEL_ITEM,
        PM_LABEL_CONTEXT,
        PM_LABEL_ITEM | PM_LABEL_COMPOUND,
    ]
    assert merged.compound_names == ()  # flattened: names are in the text
    assert merged.inst == PM_IN_NULL
    assert_consistent(merged)
    assert records(merged)[4] == (52, 3, PM_LABEL_ITEM | PM_LABEL_COMPOUND, 57, 4)


def test_merge_order_matters() -> None:
    a, b = parse('{"k":"a"}'), parse('{"k":"b"}')
    assert pmMergeLabelSets([a, b]).to_dict() == {"k": "b"}
    assert pmMergeLabelSets([b, a]).to_dict() == {"k": "a"}


def test_merge_skips_none_and_error_sets() -> None:
    a = parse('{"a":1}')
    failed = LabelSet(nlabels=-12357)
    assert pmMergeLabelSets([None, a, failed]).json == b'{"a":1}'
    assert pmMergeLabelSets([None, failed]) == LabelSet()  # libpcp writes nothing
    assert pmMergeLabelSets([parse("{}")]).json == b"{}"
    assert pmMergeLabelSets([parse("{}"), parse("{}")]).json == b"{}"
    assert error_code(pmMergeLabelSets, []) == EINVAL


def test_merge_filter() -> None:
    a = parse('{"a":1,"b":2}', PM_LABEL_CONTEXT)
    b = parse('{"b":3,"c":4}', PM_LABEL_OPTIONAL | PM_LABEL_ITEM)
    seen: list[tuple[bytes, bytes]] = []

    def no_optional(label: Label, json_: bytes) -> bool:
        seen.append((json_[label.name : label.name + label.namelen], json_))
        return not label.flags & PM_LABEL_OPTIONAL

    merged = pmMergeLabelSets([a, b], no_optional)
    # the optional "b" wins the clash and is then filtered: no "b" at all, as libpcp
    assert merged.json == b'{"a":1}'
    assert seen == [
        (b"a", a.json),
        (b"b", a.json),
        (b"a", b'{"a":1,"b":2}'),
        (b"b", b.json),
        (b"c", b.json),
    ]
    assert pmMergeLabelSets([a, b], lambda lp, js: False).json == b"{}"


def test_merge_wire_label_with_empty_value_writes_null() -> None:
    wire = LabelSet(0, 1, b'{"a":}', (Label(2, 1, 0, 0, 0),))
    merged = pmMergeLabelSets([wire])
    assert merged.json == b'{"a":null}'
    assert records(merged) == [(2, 1, 0, 5, 4)]


def test_merge_too_big() -> None:
    half = "x" * (MAXLABELJSONTEXT // 2)
    a, b = parse(f'{{"a":"{half}"}}'), parse(f'{{"b":"{half}"}}')
    assert error_code(pmMergeLabelSets, [a, b]) == E2BIG
    # a lone set that parses may still be too big to merge (libpcp agrees)
    fits = parse('{"a":"' + "x" * (MAXMERGEDJSONTEXT - 8) + '"}')
    assert pmMergeLabelSets([fits]).jsonlen == MAXMERGEDJSONTEXT == 65531
    over = parse('{"a":"' + "x" * (MAXMERGEDJSONTEXT - 7) + '"}')
    assert error_code(pmMergeLabelSets, [over]) == E2BIG
    assert error_code(add_labels, over, "{}") == E2BIG


def test_merge_labels_strings() -> None:
    merged = pmMergeLabels(['{"a":1,"b":{"c":2}}', '{ "b.c" : 3 , "d":[1, 2]}', b'{"a":"z"}'])
    assert merged == '{"a":"z","b.c":3,"d":[1,2]}'
    assert pmMergeLabels(['{"a":{"b":{"c":1}}}']) == '{"a.b.c":1}'
    assert pmMergeLabels(["{}", ""]) == ""
    assert pmMergeLabels(["", '{"a":1}', "{}"]) == '{"a":1}'
    # results that shrink along the way (libpcp 6.0.3 fails these with EINVAL)
    assert pmMergeLabels(['{"a":"long value"}', '{"a":1}', '{"b":2}']) == '{"a":1,"b":2}'
    assert error_code(pmMergeLabels, ['{"a":1}', '{"a":']) == EINVAL
    assert error_code(pmMergeLabels, []) == EINVAL


def test_add_labels_like_pmda_callbacks() -> None:
    first = pmdaAddLabels(None, '{"a":{"b":1}, "z": 0}')
    assert first.json == b'{"a":{"b":1},"z":0}'  # a single add is just a parse
    assert first.names == ("a.b", "z")
    second = pmdaAddNotes(first, '{"c":2,"a":{"b":3}}')
    assert second.json == b'{"a.b":3,"c":2,"z":0}'
    assert [lp.flags for lp in second.labels] == [
        PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL,
        PM_LABEL_OPTIONAL,
        0,
    ]
    assert_consistent(second)
    inst = LabelSet.from_dict({"i": 1}, PM_LABEL_INSTANCES, inst=5)
    assert add_labels(inst, '{"j":2}').inst == 5
    assert add_labels(parse("{}"), "{}").json == b"{}"
    too_many = json.dumps({f"l{i}": i for i in range(PM_MAXLABELS + 1)})
    assert error_code(add_labels, None, too_many) == E2BIG


def test_domain_labels() -> None:
    for agent, name in [("pmdalinux", "linux"), ("sample DSO", "sample"), ("pmda", "pmda"),
                        ("pmdasample DSO", "sample"), (" DSO", " DSO")]:  # fmt: skip
        lset = domain_labels(agent)
        assert lset.to_dict() == {"agent": name}
        assert [lp.flags for lp in lset.labels] == [PM_LABEL_DOMAIN]


# -- text helpers ---------------------------------------------------------------------


def test_type_and_flag_strings() -> None:
    assert [pmLabelTypeString(1 << i) for i in range(6)] == [
        "context", "domain", "indom", "cluster", "pmid", "instances",
    ]  # fmt: skip
    assert pmLabelTypeString(PM_LABEL_ITEM | PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL) == "pmid"
    assert pmLabelTypeString(0) == "?"
    assert pmLabelTypeString(PM_LABEL_ITEM | PM_LABEL_CLUSTER) == "?"
    assert pmLabelFlagString(PM_LABEL_CONTEXT | PM_LABEL_COMPOUND) == "context,compound"
    assert pmLabelFlagString(PM_LABEL_INDOM | PM_LABEL_OPTIONAL) == "indom,optional"
    assert pmLabelFlagString(0xC2) == "domain,compound,optional"
    assert pmLabelFlagString(PM_LABEL_COMPOUND) == "?,compound"


def test_ident_strings() -> None:
    pmid, indom = pmID_build(60, 2, 1), pmInDom_build(60, 3)
    assert pmLabelIdentString(0, PM_LABEL_CONTEXT) == "Context"
    assert pmLabelIdentString(60, PM_LABEL_DOMAIN) == "Domain 60"
    assert pmLabelIdentString(indom, PM_LABEL_INDOM) == "InDom 60.3"
    assert pmLabelIdentString(indom, PM_LABEL_INSTANCES) == "InDom 60.3"
    assert pmLabelIdentString(pmid, PM_LABEL_CLUSTER) == "Cluster 60.2"
    assert pmLabelIdentString(pmid, PM_LABEL_ITEM | PM_LABEL_OPTIONAL) == "PMID 60.2.1"
    assert pmLabelIdentString(0, 0) == ""


def test_print_label_sets() -> None:
    lset = parse('{"b":{"c":1},"a":"x"}', PM_LABEL_INSTANCES | PM_LABEL_OPTIONAL, inst=4)
    text = pmPrintLabelSets(pmInDom_build(29, 2), PM_LABEL_INSTANCES, [lset, LabelSet(inst=5)])
    assert text == (
        '    InDom 29.2[4] labels (21 bytes): {"b":{"c":1},"a":"x"}\n'
        "        [0] name(14,1) : value(17,3) [instances,optional]\n"
        "        [1] name(7,1) : value(10,1) [instances,compound,optional]\n"
        "    InDom 29.2[5] labels (0 bytes): (null)\n"
    )
    item = pmPrintLabelSets(pmID_build(29, 0, 6), PM_LABEL_ITEM, [parse("{}")])
    assert item == "    PMID 29.0.6 labels (0 bytes): (null)\n"


# -- properties -----------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,12}", fullmatch=True)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = scalars | st.lists(scalars, max_size=4)
flat_dicts = st.dictionaries(names, values, max_size=12)
nested_dicts = st.recursive(
    st.dictionaries(names, values, max_size=4),
    lambda children: st.dictionaries(names, values | children, max_size=4),
    max_leaves=12,
)
levels = st.sampled_from([int(f) for f in LabelFlag if f <= PM_LABEL_INSTANCES])


def flatten(d: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out |= flatten(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


@given(flat_dicts, levels)
def test_roundtrip_flat_dicts(d: dict, level: int) -> None:
    lset = LabelSet.from_dict(d, level)
    assert lset.to_dict() == d
    assert list(lset.to_dict()) == sorted(d, key=str.encode)
    assert all(lp.flags == level for lp in lset.labels)
    assert_consistent(lset)
    # the JSONB is the compact JSON serialization, input order kept
    if d:
        assert lset.json == json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()
    assert parse(json.dumps(d, indent=2, ensure_ascii=False), level) == lset


@given(nested_dicts, st.sampled_from([None, 0, 1, 3]))
def test_whitespace_never_changes_meaning(d: dict, indent: int | None) -> None:
    text = json.dumps(d, indent=indent, ensure_ascii=indent == 1)
    lset = parse(text, maxlabels=MAXLABELSET)
    assert_consistent(lset)
    if lset.json:
        assert json.loads(lset.json) == d
    assert lset.to_dict() == flatten(d)
    merged = pmMergeLabels([text])
    assert (json.loads(merged) if merged else {}) == flatten(d)
    assert list(json.loads(merged) if merged else {}) == sorted(flatten(d), key=str.encode)


@given(st.lists(st.tuples(flat_dicts, levels), min_size=1, max_size=5))
def test_merge_is_dict_update(sets: list[tuple[dict, int]]) -> None:
    lsets = [LabelSet.from_dict(d, level) for d, level in sets]
    merged = pmMergeLabelSets(lsets)
    expect = reduce(lambda acc, d: acc | d, (d for d, _ in sets), {})
    assert merged.to_dict() == expect
    assert merged.names == tuple(sorted(expect, key=str.encode))
    winner = {name: level for d, level in sets for name in d}  # the last set wins
    assert [lp.flags for lp in merged.labels] == [winner[n] for n in merged.names]
    assert_consistent(merged)
    texts = [json.dumps(d, ensure_ascii=False) for d, _ in sets]
    assert pmMergeLabels(texts) == (merged.json.decode() if expect else "")


json_alphabet = st.sampled_from(list('{}[]":,.\\ \t\nabcAZ_019-+eEtrufalsn\x00é'))


@settings(max_examples=examples(300))
@given(st.one_of(st.text(max_size=40), st.text(json_alphabet, max_size=40), st.binary(max_size=40)))
def test_fuzz_only_pmerror(text: str | bytes) -> None:
    for flags in (0, PM_LABEL_COMPOUND):
        try:
            lset = parse(text, flags)
        except PMError as exc:
            assert exc.code in (EINVAL, E2BIG)
        else:
            assert_consistent(lset)
    with contextlib.suppress(PMError):
        pmMergeLabels([text, '{"a":1}'])


@given(nested_dicts)
def test_fuzz_mutated_json(d: dict) -> None:
    text = json.dumps(d)
    for cut in range(0, len(text), max(1, len(text) // 8)):
        for mutated in (text[:cut], text[:cut] + text[cut + 1 :], text[:cut] + "}" + text[cut:]):
            with contextlib.suppress(PMError):
                assert_consistent(parse(mutated))


def test_context_labels_read_the_labels_directory(tmp_path):
    from purepcp.pmapi.labels import context_labels

    (tmp_path / "labels" / "optional").mkdir(parents=True)
    (tmp_path / "labels" / "b").write_text('{"hostname":"lost","x":1}')
    (tmp_path / "labels" / "a").write_text('{"x":0,"y":2}')
    (tmp_path / "labels" / ".hidden").write_text('{"z":3}')
    (tmp_path / "labels" / "optional" / "n").write_text('{"note":true}')
    (tmp_path / "labels.conf").write_text("[global]\nmachineid_hash: sha256\n")
    mid = tmp_path / "machine-id"
    mid.write_text("abc\n")
    lset = context_labels(str(tmp_path), "h", creds=(5, 7), machine_id_file=str(mid))
    got = json.loads(lset.json)
    assert got == {
        "domainname": got["domainname"],
        "groupid": 7,
        "hostname": "h",
        "machineid_sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "note": True,
        "userid": 5,
        "x": 1,
        "y": 2,
    }
    optional = {lset.label_name(x) for x in lset.labels if x.flags & PM_LABEL_OPTIONAL}
    assert optional == {"groupid", "note", "userid"}
