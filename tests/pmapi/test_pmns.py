"""pmapi.pmns: loading pmns(5) files as libpcp does, the PMAPI-style queries, edits and output."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.cpp import SourceLine
from purepcp.pmapi.errors import (
    PM_ERR_NAME,
    PM_ERR_NONLEAF,
    PM_ERR_PMID,
    PM_ERR_PMNS,
    PMError,
    SourceError,
)
from purepcp.pmapi.ids import (
    DYNAMIC_PMID,
    dynamic_root,
    is_dynamic_root,
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmIDStr,
)
from purepcp.pmapi.pmns import (
    PCP_PMNS_DIR,
    PMNS,
    PMNS_LEAF_STATUS,
    PMNS_NONLEAF_STATUS,
    DynamicRoot,
)
from tests.support.examples import examples

DATA = Path(__file__).parents[1] / "data" / "pmns"
REAL_ROOT = "/var/lib/pcp/pmns/root"
PMINFO = shutil.which("pminfo")
PMNSMERGE = "/usr/lib/pcp/bin/pmnsmerge"

needs_pcp = pytest.mark.skipif(
    not (os.path.exists(REAL_ROOT) and PMINFO),
    reason="reference PCP 6 not installed (no /var/lib/pcp/pmns/root or pminfo)",
)

SIMPLE = (
    "simple {\n"
    "    numfetch SIMPLE:0:0\n"
    "    color SIMPLE:0:1\n"
    "    time\n"
    "    now SIMPLE:2:4\n"
    "}\n"
    "simple.time {\n"
    "    user SIMPLE:1:2\n"
    "    sys SIMPLE:1:3\n"
    "}\n"
    "root { simple }\n"
)


def P(d: int, c: int, i: int) -> int:
    return pmID_build(d, c, i)


def load(text: str, **kw) -> PMNS:
    return PMNS.from_string(text, file="t.pmns", **kw)


def error(text: str, **kw) -> SourceError:
    with pytest.raises(SourceError) as info:
        load(text, **kw)
    assert info.value.code == PM_ERR_PMNS
    return info.value


@pytest.fixture
def simple() -> PMNS:
    return load(SIMPLE, macros={"SIMPLE": "253"})


# -- the seed example ------------------------------------------------------------


def test_simple_names_pmids_and_order(simple: PMNS):
    assert simple.items() == [
        ("simple.numfetch", P(253, 0, 0)),
        ("simple.color", P(253, 0, 1)),
        ("simple.time.user", P(253, 1, 2)),
        ("simple.time.sys", P(253, 1, 3)),
        ("simple.now", P(253, 2, 4)),
    ]
    assert simple.traverse() == [name for name, _ in simple.items()]
    assert simple.traverse("simple.time") == ["simple.time.user", "simple.time.sys"]
    assert simple.traverse("simple.now") == ["simple.now"]
    assert len(simple) == 5
    assert "simple.time" in simple and "simple.nope" not in simple


def test_simple_lookups(simple: PMNS):
    assert simple.lookup("simple.time.sys") == P(253, 1, 3)
    with pytest.raises(PMError) as info:
        simple.lookup("simple.time")
    assert info.value.code == PM_ERR_NONLEAF
    for bad in ("simple.nope", "simple.time.sys.x", "", "simple.", "root", "simple..time"):
        with pytest.raises(PMError) as info:
            simple.lookup(bad)
        assert info.value.code == PM_ERR_NAME
    assert simple.names(P(253, 0, 1)) == ["simple.color"]
    assert simple.name(P(253, 2, 4)) == "simple.now"
    with pytest.raises(PMError) as info:
        simple.names(P(253, 9, 9))
    assert info.value.code == PM_ERR_PMID


def test_simple_children(simple: PMNS):
    assert simple.children() == [("simple", PMNS_NONLEAF_STATUS)]
    assert simple.children("simple") == [
        ("numfetch", PMNS_LEAF_STATUS),
        ("color", PMNS_LEAF_STATUS),
        ("time", PMNS_NONLEAF_STATUS),
        ("now", PMNS_LEAF_STATUS),
    ]
    assert simple.children("simple.now") == []
    with pytest.raises(PMError) as info:
        simple.children("simple.x")
    assert info.value.code == PM_ERR_NAME


def test_simple_dumps_like_pmnsmerge(simple: PMNS):
    assert simple.dumps() == (
        "root {\n\tsimple\n}\n"
        "\nsimple {\n\tnumfetch\t253:0:0\n\tcolor\t253:0:1\n\ttime\n\tnow\t253:2:4\n}\n"
        "\nsimple.time {\n\tuser\t253:1:2\n\tsys\t253:1:3\n}\n"
    )
    again = load(simple.dumps(), cpp=False)
    assert again.items() == simple.items()


def test_simple_from_data_files_with_include_dirs():
    pmns = PMNS.from_file(str(DATA / "simple" / "root"), include_dirs=[str(DATA / "domains")])
    assert pmns.lookup("simple.now") == P(253, 2, 4)
    # A predefined macro wins over the header's #ifndef default.
    pmns = PMNS.from_file(
        str(DATA / "simple" / "root"),
        include_dirs=[str(DATA / "domains")],
        macros={"SIMPLE": "300"},
    )
    assert pmns.lookup("simple.now") == P(300, 2, 4)
    with pytest.raises(SourceError) as info:
        PMNS.from_file(str(DATA / "simple" / "root"), include_dirs=[])
    assert info.value.what == "Cannot open file for #include"
    assert (Path(info.value.file).name, info.value.line) == ("root", 7)


# -- the lexer -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "pmid"),
    [
        ("1:2:3", P(1, 2, 3)),
        ("1 : 2 :3", P(1, 2, 3)),
        ("0:0:0", P(0, 0, 0)),
        ("510:4095:1023", P(510, 4095, 1023)),
        ("1:2:3:4", P(1, 2, 3)),  # libpcp reads it with sscanf("%d:%d:%d") and ignores the rest
        ("1:2:3*", P(1, 2, 3)),
        ("12:*:*", dynamic_root(12)),
        ("12 :* : *", dynamic_root(12)),
        ("12", dynamic_root(12)),  # a bare domain also makes a dynamic root, as in libpcp
        ("510:*:*", dynamic_root(510)),
    ],
)
def test_pmid_forms(written: str, pmid: int):
    assert load(f"root {{\n  m {written}\n}}\n").lookup("m") == pmid


@pytest.mark.parametrize(
    ("written", "what"),
    [
        ("511:0:0", "Illegal domain field in PMID"),
        ("99999999999:0:0", "Illegal domain field in PMID"),
        ("5:4096:0", "Illegal cluster field in PMID"),
        ("5:0:1024", "Illegal item field in PMID"),
        ("1:2", "Illegal PMID"),
        ("*:*:*", "Illegal PMID"),
        ("1:2:*", "Illegal PMID"),
        ("1:*", "Illegal PMID"),
        (":1:2:3", "Expected NAME or }"),  # space before ':' goes, so the token is "m:1:2:3"
        ("*", "Illegal PMID"),
        ("511:*:*", "Illegal domain field in dynamic PMID"),
        ("1:2:3:4:5", "Expected NAME, PMID or }"),  # four colons: not a PMID token at all
        ("1-2", "Expected NAME, PMID or }"),
        ("a.b", "Expected NAME, PMID or }"),
        ("{", "Expected NAME, PMID or }"),
    ],
)
def test_pmid_errors(written: str, what: str):
    e = error(f"root {{\n\n  m {written}\n}}\n")
    assert (e.what, e.file, e.line) == (what, "t.pmns", 3)


def test_tokens_need_white_space_around_braces():
    e = error("root{\n}\n")
    assert (e.what, e.line) == ("Expected NAME or PATH", 1)
    e = error("root {a 1:0:0 }\n")
    assert (e.what, e.line) == ("{ expected", 1)


def test_names_are_ascii_letters_digits_underscore():
    pmns = load("root {\n a_1 1:0:0\n B2 1:0:1\n}\n")
    assert pmns.traverse() == ["a_1", "B2"]
    for bad in ("_a", "1a", "a-b", "é"):
        e = error(f"root {{\n {bad} 1:0:0\n}}\n")
        assert (e.what, e.line) == ("Expected NAME or }", 2)


# -- the parser's states and pass 2 ------------------------------------------------------

PARSE_ERRORS = [
    # (text, line or None, message)
    ("{\n", 1, "Expected NAME or PATH"),
    ("root {\n}\n1:0:0\n", 3, "Expected NAME or PATH"),
    ("root\nx\n", 2, "{ expected"),
    ("root }\n", 1, "{ expected"),
    ("root {\n  a.b\n}\n", 2, "Expected NAME or }"),
    ("root {\n  1:0:0\n}\n", 2, "Expected NAME or }"),
    ("root {\n  a 1:0:0 2:0:0\n}\n", 2, "Expected NAME or }"),
    ("root {\n  a {\n}\n", 2, "Expected NAME, PMID or }"),
    ("root {\n  a\n  b.c\n}\n", 3, "Expected NAME, PMID or }"),
    ("root {\n a 1:0:0\n b 1:0:1\n a 1:0:2\n}\n", 4, 'Duplicate name "a" in subtree for "root"'),
    ("root {\n a\n}\na {\n b 1:0:0\n b\n}\n", 6, 'Duplicate name "b" in subtree for "a"'),
    (
        "root {\n a\n b\n}\nb {\n c 1:0:0\n}\n",
        2,
        'Cannot find definition for non-terminal node "a" in name space',
    ),
    (
        "root {\n a\n}\na {\n x\n}\n",
        5,
        'Cannot find definition for non-terminal node "a.x" in name space',
    ),
    ("root {\n root\n}\n", 2, 'Cannot find definition for non-terminal node "root" in name space'),
    ("root {\n a 1:0:0\n}\nx {\n b 1:0:0\n}\n", 4, 'Disconnected subtree ("x") in name space'),
    ("root {\n a 1:0:0\n}\nroot.a {\n}\n", 4, 'Disconnected subtree ("root.a") in name space'),
    ("root {\n a 1:0:0\n}\n\nroot {\n}\n", 5, 'Multiple name space entries for "root"'),
    ("a {\n b 1:0:0\n}\n", None, 'No name space entry for "root"'),
    ("", None, 'No name space entry for "root"'),
    ("root {\n# junk\n}\n", 2, "Illegal line number control number"),
    ("root {\n#\n}\n", 2, "Illegal line number control number"),
]


@pytest.mark.parametrize(("text", "line", "what"), PARSE_ERRORS)
def test_parse_errors_name_file_and_line(text: str, line: int | None, what: str):
    e = error(text)
    assert (e.what, e.file, e.line) == (what, "t.pmns", line)


def test_a_path_defined_twice_uses_the_last_and_the_first_is_disconnected():
    e = error("root {\n a\n}\na {\n x 1:0:0\n}\na {\n y 1:0:1\n}\n")
    assert (e.what, e.line) == ('Disconnected subtree ("a") in name space', 4)


def test_blocks_may_come_in_any_order():
    pmns = load("a.b {\n c 1:0:0\n}\na {\n b\n d 1:0:1\n}\nroot {\n a\n}\n")
    assert pmns.items() == [("a.b.c", P(1, 0, 0)), ("a.d", P(1, 0, 1))]


def test_block_open_at_end_of_input_is_accepted_as_libpcp_does():
    assert load("root {\n a 1:0:0\n").items() == [("a", P(1, 0, 0))]
    assert load("root\n").items() == []
    e = error("root {\n a 1:0:0\n a 1:0:1\n")  # ...but still may not repeat a name
    assert (e.what, e.line) == ('Duplicate name "a" in subtree for "root"', 3)


def test_duplicate_pmids():
    text = "root {\n a 1:0:0\n b 1:0:0\n c\n}\nc {\n d 1:0:0\n}\n"
    pmns = load(text)
    assert pmns.names(P(1, 0, 0)) == ["c.d", "b", "a"]  # pmNameAll: last loaded first
    assert pmns.name(P(1, 0, 0)) == "c.d"
    e = error(text, dupok=False)
    assert e.what == 'Duplicate metric id (1.0.0) in name space for metrics "b" and "a"'
    assert e.line == 3
    # Several names for one dynamic root are fine even without dupok.
    pmns = load("root {\n x 7:*:*\n y 7:*:*\n}\n", dupok=False)
    assert pmns.lookup("x") == pmns.lookup("y") == dynamic_root(7)


def test_line_markers_are_honoured_without_cpp():
    text = 'root {\n# 40 "orig.pmns"\n a 1:0:0\n\n b\n}\n'
    with pytest.raises(SourceError) as info:
        load(text, cpp=False)
    assert (info.value.file, info.value.line) == ("orig.pmns", 42)
    e = error("root {\n# junk\n}\n", cpp=False)
    assert (e.what, e.line) == ("Illegal line number control number", 2)


def test_errors_in_included_files_point_there():
    files = {"/inc/sub": "x {\n  y 1:2\n}\n"}
    with pytest.raises(SourceError) as info:
        PMNS.from_string(
            'root {\n x\n}\n#include "sub"\n', file="top", include_dirs=["/inc"], reader=files.get
        )
    assert (info.value.file, info.value.line, info.value.what) == ("/inc/sub", 2, "Illegal PMID")


def test_from_lines_is_the_sans_io_core():
    lines = [SourceLine("f", 1, "root {"), SourceLine("f", 9, "  a 2:0:0"), SourceLine("g", 3, "}")]
    assert PMNS.from_lines(lines).lookup("a") == P(2, 0, 0)
    with pytest.raises(SourceError) as info:
        PMNS.from_lines([*lines[:2], SourceLine("g", 4, "  b 2:0")])
    assert (info.value.file, info.value.line) == ("g", 4)


def test_crlf_file(tmp_path: Path):
    (tmp_path / "crlf").write_bytes(b"root {\r\n  a 1 : 2 : 3\r\n}\r\n")
    assert PMNS.from_file(str(tmp_path / "crlf")).items() == [("a", P(1, 2, 3))]


def test_missing_file(tmp_path: Path):
    with pytest.raises(SourceError) as info:
        PMNS.from_file(str(tmp_path / "absent"))
    assert info.value.code < 0 and "Cannot open" in info.value.what
    with pytest.raises(SourceError):
        PMNS.from_file(str(tmp_path / "absent"), cpp=False)


# -- dynamic subtrees and odd nodes --------------------------------------------------


@pytest.fixture
def dyn() -> PMNS:
    return load("root {\n mmv 70:*:*\n proc\n}\nproc {\n nprocs 3:8:99\n psinfo 3:*:*\n}\n")


def test_dynamic_root_lookups(dyn: PMNS):
    root = dynamic_root(70)
    assert is_dynamic_root(root) and pmID_domain(root) == DYNAMIC_PMID and pmID_cluster(root) == 70
    assert dyn.lookup("mmv") == root
    assert dyn.lookup("mmv.anything.below") == root  # pmcd's cue to ask the agent
    assert dyn.lookup("proc.psinfo.pid") == dynamic_root(3)
    assert dyn.find_dynamic_root("mmv.a.b") == DynamicRoot("mmv", 70)
    assert dyn.find_dynamic_root("mmv").pmid == root
    assert dyn.find_dynamic_root("proc.psinfo.x") == DynamicRoot("proc.psinfo", 3)
    for name in ("proc.nprocs", "proc.nprocs.x", "proc", "nothing.here", "proc.other"):
        assert dyn.find_dynamic_root(name) is None
    with pytest.raises(PMError) as info:
        dyn.lookup("proc.nprocs.x")
    assert info.value.code == PM_ERR_NAME


def test_dynamic_roots_in_children_traverse_and_names(dyn: PMNS):
    assert dyn.children() == [("mmv", PMNS_NONLEAF_STATUS), ("proc", PMNS_NONLEAF_STATUS)]
    assert dyn.children("proc") == [("nprocs", PMNS_LEAF_STATUS), ("psinfo", PMNS_NONLEAF_STATUS)]
    assert dyn.children("mmv") == []
    with pytest.raises(PMError) as info:
        dyn.children("mmv.x")
    assert info.value.code == PM_ERR_NAME
    assert dyn.traverse() == ["mmv", "proc.nprocs", "proc.psinfo"]
    with pytest.raises(PMError) as info:
        dyn.traverse("mmv.x")
    assert info.value.code == PM_ERR_NAME
    with pytest.raises(PMError) as info:
        dyn.names(dynamic_root(70))
    assert info.value.code == PM_ERR_PMID


def test_a_block_with_no_children():
    # libpcp's mark bit hides a non-leaf with no leaf below it (QA 028)
    pmns = load("root {\n a 1:0:0\n x\n}\nx {\n}\n")
    assert pmns.children() == [("a", PMNS_LEAF_STATUS)]
    assert pmns.traverse() == ["a"]
    assert pmns.items() == [("a", P(1, 0, 0))]
    assert "x" not in pmns
    for query in (pmns.lookup, pmns.traverse, pmns.children):
        with pytest.raises(PMError) as info:
            query("x")
        assert info.value.code == PM_ERR_NAME
    assert load(pmns.dumps()).traverse() == ["a"]


def test_non_leaves_with_no_leaf_below_are_hidden():
    pmns = load(
        "root {\n empty\n me 1:2:0\n one\n}\none {\n us 1:3:0\n two\n}\n"
        "one.two {\n empty\n}\nempty {\n}\none.two.empty {\n}\n"
    )
    assert pmns.traverse() == ["me", "one.us"]
    assert pmns.children() == [("me", PMNS_LEAF_STATUS), ("one", PMNS_NONLEAF_STATUS)]
    assert pmns.children("one") == [("us", PMNS_LEAF_STATUS)]
    for name in ("empty", "one.two", "one.two.empty"):
        with pytest.raises(PMError) as info:
            pmns.traverse(name)
        assert info.value.code == PM_ERR_NAME


def test_empty_namespace():
    pmns = PMNS()
    assert pmns.traverse() == [] and pmns.children() == [] and len(pmns) == 0
    assert pmns.dumps() == "root {\n}\n"
    assert load(pmns.dumps()).traverse() == []


# -- edits ----------------------------------------------------------------------------


def test_add_appends_or_puts_first(simple: PMNS):
    simple.add("simple.time.idle", P(253, 1, 4))
    simple.add("other.deep.leaf", P(9, 0, 0))
    simple.add("first", P(9, 0, 1), at_front=True)
    assert simple.traverse() == [
        "first",
        "simple.numfetch",
        "simple.color",
        "simple.time.user",
        "simple.time.sys",
        "simple.time.idle",
        "simple.now",
        "other.deep.leaf",
    ]
    assert simple.children("other") == [("deep", PMNS_NONLEAF_STATUS)]
    simple.add("simple.now", P(253, 2, 4))  # already there with that PMID: nothing to do
    assert simple.lookup("other.deep.leaf") == P(9, 0, 0)
    simple.add("again", P(253, 2, 4))
    assert simple.names(P(253, 2, 4)) == ["again", "simple.now"]  # index follows edits
    assert load(simple.dumps()).traverse() == simple.traverse()


@pytest.mark.parametrize(
    ("name", "pmid", "code"),
    [
        ("simple.now", P(253, 2, 5), PM_ERR_PMID),
        ("simple.time", P(253, 9, 9), PM_ERR_PMID),
        ("simple.now.below", P(253, 9, 9), PM_ERR_PMID),
        ("simple..x", P(1, 0, 0), PM_ERR_NAME),
        ("", P(1, 0, 0), PM_ERR_NAME),
        ("a-b", P(1, 0, 0), PM_ERR_NAME),
        ("_a", P(1, 0, 0), PM_ERR_NAME),
        ("ok", pmID_build(511, 0, 5), PM_ERR_PMID),
        ("ok", dynamic_root(511), PM_ERR_PMID),
        ("ok", 1 << 31, PM_ERR_PMID),
        ("ok", -1, PM_ERR_PMID),
    ],
)
def test_add_refuses(simple: PMNS, name: str, pmid: int, code: int):
    before = simple.dumps()
    with pytest.raises(PMError) as info:
        simple.add(name, pmid)
    assert info.value.code == code
    assert simple.dumps() == before


def test_add_dynamic_root():
    pmns = PMNS()
    pmns.add("mmv", dynamic_root(70))
    assert pmns.dumps() == "root {\n\tmmv\t70:*:*\n}\n"


def test_remove_prunes_emptied_ancestors(simple: PMNS):
    simple.add("a.b.c", P(1, 0, 0))
    simple.add("a.d", P(1, 0, 1))
    simple.remove("a.b.c")
    assert simple.traverse("a") == ["a.d"]
    assert "a.b" not in simple
    simple.remove("a.d")
    assert "a" not in simple
    simple.remove("simple.time")
    assert simple.traverse() == ["simple.numfetch", "simple.color", "simple.now"]
    with pytest.raises(PMError) as info:
        simple.lookup("simple.time.user")
    assert info.value.code == PM_ERR_NAME
    with pytest.raises(PMError) as info:
        simple.names(P(253, 1, 2))
    assert info.value.code == PM_ERR_PMID
    for gone in ("simple.time", "nothing", ""):
        with pytest.raises(PMError) as info:
            simple.remove(gone)
        assert info.value.code == PM_ERR_NAME
    simple.remove("simple")
    assert simple.dumps() == "root {\n}\n"


def test_merge_follows_pmnsmerge_order():
    base = load("root {\n a\n z 1:0:9\n}\na {\n x 1:0:0\n}\n")
    other = load("root {\n b\n a\n c 2:0:0\n}\nb {\n y 2:0:1\n}\na {\n w 2:0:2\n x 2:0:3\n}\n")
    assert base.merge(other) == ["a.x"]  # already 1.0.0: kept, reported
    # Level by level: "c" (a leaf of root) is added before "b" is created for b.y.
    assert base.traverse() == ["a.x", "a.w", "z", "c", "b.y"]
    assert base.lookup("a.x") == P(1, 0, 0)


# -- hypothesis -------------------------------------------------------------------------------

_component = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: name != "root"  # a non-leaf "root" child can never be defined
)
_pmid = st.builds(pmID_build, st.integers(0, 510), st.integers(0, 4095), st.integers(0, 1023))
_leaf = _pmid | st.builds(dynamic_root, st.integers(0, 510))
_tree = st.recursive(
    st.dictionaries(_component, _leaf, min_size=1, max_size=4),
    lambda sub: st.dictionaries(_component, _leaf | sub, min_size=1, max_size=4),
    max_leaves=30,
)


def _expected(tree: dict, prefix: str = "") -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for name, value in tree.items():
        path = f"{prefix}.{name}" if prefix else name
        out.extend(_expected(value, path) if isinstance(value, dict) else [(path, value)])
    return out


def _write(tree: dict, rnd: random.Random) -> str:
    """An independent pmns writer with random layout: block order, spacing, comments."""
    blocks: list[str] = []

    def pmid_text(pmid: int) -> str:
        sep = rnd.choice([":", " : ", ":  ", "\t:"])
        if is_dynamic_root(pmid):
            return f"{pmID_cluster(pmid)}{sep}*{sep}*"
        d, c, i = pmIDStr(pmid).split(".")
        return sep.join((d, c, i))

    def block(path: str, node: dict) -> None:
        lines = []
        for name, value in node.items():
            child = f"{path}.{name}" if path != "root" else name
            if isinstance(value, dict):
                lines.append(name)
                block(child, value)
            else:
                gap = rnd.choice([" ", "\t", "  "])
                lines.append(f"{name}{gap}{pmid_text(value)}")
        body = rnd.choice(["\n", " ", "\n  "]).join(lines)
        comment = rnd.choice(["", "/* c */ ", "/*\n * multi\n */\n"])
        blocks.append(f"{comment}{path} {{\n  {body}\n}}\n")

    block("root", tree)
    rnd.shuffle(blocks)
    return "\n".join(blocks)


@settings(max_examples=examples(200), deadline=None)
@given(_tree, st.randoms(use_true_random=False))
def test_random_trees_load_and_round_trip(tree: dict, rnd: random.Random):
    pmns = load(_write(tree, rnd))
    expected = _expected(tree)
    assert pmns.items() == expected
    assert pmns.traverse() == [name for name, _ in expected]
    again = load(pmns.dumps(), cpp=False)
    assert again.items() == expected
    assert again.dumps() == pmns.dumps()
    for name, pmid in expected:
        assert pmns.lookup(name) == pmid
        if not is_dynamic_root(pmid):
            assert pmns.names(pmid) == [n for n, p in reversed(expected) if p == pmid]
    rebuilt = PMNS()
    for name, pmid in expected:
        rebuilt.add(name, pmid)
    assert rebuilt.dumps() == pmns.dumps()


_GARBAGE = st.lists(
    st.sampled_from(
        [
            "root",
            "{",
            "}",
            " ",
            "\n",
            "\t",
            "a",
            "b.c",
            "x_1",
            "1",
            ":",
            "*",
            "2:3:4",
            "511",
            "9:*:*",
            "#",
            '# 3 "f"',
            "/*",
            "*/",
            "#define A 1\n",
            "#ifdef A\n",
            "#endif\n",
            "A",
            "#include <x>\n",
            "é",
            "\x00",
            "\r",
            "-",
            "99999999999999999999",
        ]
    )
).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(_GARBAGE | st.text(), st.booleans(), st.booleans())
def test_garbage_raises_only_pcp_errors(text: str, cpp: bool, dupok: bool):
    try:
        pmns = load(text, cpp=cpp, dupok=dupok, reader={"x": "root {\n}\n"}.get)
    except PMError as e:
        assert isinstance(e, SourceError)
        return
    assert load(pmns.dumps(), cpp=False).items() == pmns.items()


# -- against the real PCP ------------------------------------------------------------------------

_PMINFO_LINE = re.compile(r"(\S+) PMID: (\S+)\Z")


def pminfo_m(path: str, *args: str) -> list[tuple[str, str]]:
    """`pminfo -n PATH -m` as (name, PMID text), built-in derived metrics left out."""
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    out = subprocess.run(
        [PMINFO, "-n", path, "-m", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        check=True,
    )
    pairs = []
    for line in out.stdout.splitlines():
        m = _PMINFO_LINE.match(line)
        assert m is not None, line
        name, pmid = m.groups()
        if pmid.startswith(f"{DYNAMIC_PMID}.") and not pmid.endswith("*.*"):
            continue  # derived metrics PCP always registers (event.flags, event.missed)
        pairs.append((name, pmid))
    return pairs


@pytest.mark.interop
@needs_pcp
def test_real_root_matches_pminfo():
    pmns = PMNS.from_file(REAL_ROOT)
    ref = pminfo_m(REAL_ROOT)
    assert len(ref) > 2000
    assert [(name, pmIDStr(pmid)) for name, pmid in pmns.items()] == ref
    assert pmns.traverse() == [name for name, _ in ref]
    assert any(text.endswith(".*.*") for _, text in ref)  # dynamic roots print as D.*.*
    # libpcp reads its default namespace without pmcpp: same result.
    assert PMNS.from_file(REAL_ROOT, cpp=False).items() == pmns.items()


@pytest.mark.interop
@needs_pcp
def test_real_root_writes_back_byte_for_byte():
    pmns = PMNS.from_file(REAL_ROOT)
    # The file is pmnsmerge output, and dumps() writes pmnsmerge's layout.
    assert pmns.dumps() == Path(REAL_ROOT).read_text()


def _real_roots() -> list[str]:
    roots = sorted(Path(PCP_PMNS_DIR).glob("root_*")) + sorted(
        Path("/var/lib/pcp/pmdas").glob("*/root")
    )
    return [str(p) for p in roots]


@pytest.mark.interop
@needs_pcp
def test_every_real_root_file_matches_pminfo():
    roots = _real_roots()
    assert len(roots) > 10
    for root in roots:
        pmns = PMNS.from_file(root)  # agents' roots include "pmns" beside them and <stdpmid>
        assert [(n, pmIDStr(p)) for n, p in pmns.items()] == pminfo_m(root), root


@pytest.mark.interop
@needs_pcp
def test_pmnsid_picks_the_name_pminfo_prints(tmp_path: Path):
    path = tmp_path / "dups"
    path.write_text("root {\n a 1:0:0\n b 1:0:0\n c\n}\nc {\n d 1:0:0\n}\n")
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    out = subprocess.run(
        [PMINFO, "-n", str(path), "1.0.0"], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.split() == [PMNS.from_file(str(path)).name(P(1, 0, 0))] == ["c.d"]


@pytest.mark.interop
@needs_pcp
@pytest.mark.skipif(
    not os.access(PMNSMERGE, os.X_OK),
    reason="reference PCP 6 pmnsmerge not installed (Debian package pcp)",
)
def test_merge_and_dumps_match_pmnsmerge(tmp_path: Path):
    names = ["root_pmcd", "root_proc", "root_linux", "root_xfs", "root_mmv", "root_kvm"]
    files = [f"{PCP_PMNS_DIR}/{n}" for n in names] + ["/var/lib/pcp/pmdas/simple/root"]
    files = [f for f in files if os.path.exists(f)]
    out = tmp_path / "merged"
    subprocess.run([PMNSMERGE, "-a", "-f", *files, str(out)], check=True, cwd=tmp_path)
    pmns = PMNS.from_file(files[0])
    for f in files[1:]:
        assert pmns.merge(PMNS.from_file(f)) == []
    assert pmns.dumps() == out.read_text()


def _pcp_error(path: Path, *flags: str) -> tuple[str, int | None]:
    """The first "Error Parsing ASCII PMNS" message pminfo gives for PATH, and its line."""
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    out = subprocess.run([PMINFO, *flags, str(path)], capture_output=True, text=True, env=env)
    m = re.search(r"(?:\[[^\]]*:(\d+)\] )?Error Parsing ASCII PMNS: (.*)", out.stderr)
    assert m is not None, out.stderr
    return m.group(2), int(m.group(1)) if m.group(1) else None


# Grammar errors: there libpcp reports the same line we do (elsewhere it has none, or
# the line of the closing brace).
_LINE_PARITY = {text for text, _, what in PARSE_ERRORS if "xpected" in what}


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(("text", "line", "what"), PARSE_ERRORS)
def test_parse_errors_match_libpcp(tmp_path: Path, text: str, line: int | None, what: str):
    path = tmp_path / "t.pmns"
    path.write_text(text)
    pcp_what, pcp_line = _pcp_error(path, "-n")
    assert pcp_what.rstrip() == what
    if text in _LINE_PARITY:
        assert pcp_line == line


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(
    "written", ["511:0:0", "5:4096:0", "5:0:1024", "1:2", "*:*:*", "511:*:*", "1-2"]
)
def test_pmid_errors_match_libpcp(tmp_path: Path, written: str):
    path = tmp_path / "t.pmns"
    path.write_text(f"root {{\n\n  m {written}\n}}\n")
    e = error(path.read_text())
    assert _pcp_error(path, "-n") == (e.what, e.line)


@pytest.mark.interop
@needs_pcp
def test_duplicate_pmid_error_matches_libpcp(tmp_path: Path):
    path = tmp_path / "t.pmns"
    path.write_text("root {\n a 1:0:0\n b 1:0:0\n}\n")
    e = error(path.read_text(), dupok=False)
    assert _pcp_error(path, "-N")[0].rstrip() == e.what
