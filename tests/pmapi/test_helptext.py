"""pmapi.helptext: newhelp's source format, and resolving entries to PMIDs and instance domains."""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.errors import PM_ERR_GENERIC, PM_ERR_NAME, PM_ERR_NONLEAF, PMError, SourceError
from purepcp.pmapi.helptext import (
    HelpEntry,
    HelpText,
    load_help,
    parse_help,
    parse_key,
    read_help,
    resolve_help,
)
from purepcp.pmapi.ids import pmID_build, pmInDom_build
from purepcp.pmapi.pmns import PMNS
from tests.support.examples import examples

DATA = Path(__file__).parents[1] / "data"
SIMPLE_HELP = DATA / "help" / "simple.help"
REAL_ROOT = "/var/lib/pcp/pmns/root"
LINUX_HELP = "/var/lib/pcp/pmdas/linux/help"
NEWHELP = "/usr/lib/pcp/bin/newhelp"

needs_pcp = pytest.mark.skipif(
    not (os.path.exists(REAL_ROOT) and os.path.exists(LINUX_HELP)),
    reason="reference PCP 6 not installed (no /var/lib/pcp/pmns/root or linux PMDA help)",
)


@pytest.fixture
def simple() -> PMNS:
    return PMNS.from_file(
        str(DATA / "pmns" / "simple" / "root"), include_dirs=[str(DATA / "pmns" / "domains")]
    )


# -- parsing ----------------------------------------------------------------------------


def test_seed_help_entries():
    entries = read_help(str(SIMPLE_HELP))
    assert [(e.key, e.line) for e in entries] == [
        ("SIMPLE.0", 6),
        ("SIMPLE.1", 9),
        ("simple.numfetch", 13),
        ("simple.color", 19),
        ("simple.time.user", 20),
        ("simple.time.sys", 21),
        ("simple.now", 23),
    ]
    numfetch = entries[2]
    assert numfetch == HelpEntry(
        "simple.numfetch",
        "Number of fetches answered",
        "Counts every fetch request the agent has answered.\n\nIt can be reset with a store.",
        str(SIMPLE_HELP),
        13,
    )
    assert entries[1].text == 'Two instances, "user" and "sys", computed when asked.'
    assert entries[3].text == "" and entries[4].text == ""
    assert entries[5].text == "Taken from the agent's own resource usage."


def test_seed_help_resolves(simple: PMNS):
    help_ = load_help(str(SIMPLE_HELP), simple, {"SIMPLE": 253})
    assert list(help_.indoms) == [pmInDom_build(253, 0), pmInDom_build(253, 1)]
    assert help_.indoms[pmInDom_build(253, 1)][0] == 'Instance domain "time" for the simple example'
    assert list(help_.pmids) == [
        pmID_build(253, 0, 0),
        pmID_build(253, 0, 1),
        pmID_build(253, 1, 2),
        pmID_build(253, 1, 3),
        pmID_build(253, 2, 4),
    ]
    assert help_.pmids[pmID_build(253, 1, 3)] == (
        "Seconds of system time the agent has used",
        "Taken from the agent's own resource usage.",
    )


def test_layout_rules_as_newhelp():
    text = (
        "text before the first entry is ignored\n"
        "@ a  oneline keeps trailing blanks   \n"
        "\n"
        "  indented first line\n"
        "# a comment, even here\n"
        "\n"
        "last\n"
        "   \n"
        "\n"
        "\n"
        "@\n"
        "an entry with no key is skipped with its text\n"
        "@\tc.d\ttabbed\r\n"
        "crlf\r\n"
        "@b\n"
        "@ 1.2.3\n"
        "#only a comment\n"
    )
    entries = parse_help(text, "h")
    assert [(e.key, e.oneline, e.text, e.line) for e in entries] == [
        ("a", "oneline keeps trailing blanks   ", "\n  indented first line\n\nlast\n   ", 2),
        ("c.d", "tabbed\r", "crlf\r", 13),
        ("b", "", "", 15),
        ("1.2.3", "", "", 16),
    ]
    assert parse_help("") == [] and parse_help("no entries\n# at all") == []
    assert parse_help("@ x one\ntext without newline")[0].text == "text without newline"


def test_no_truncation_of_long_lines_or_entries():
    long_line = "x" * 500
    text = f"@ a {long_line}\n" + f"{long_line}\n" * 10
    entry = parse_help(text)[0]
    assert entry.oneline == long_line
    assert entry.text == "\n".join([long_line] * 10)


# -- keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("60.0.1", ("pmid", pmID_build(60, 0, 1))),
        ("60.3", ("indom", pmInDom_build(60, 3))),
        ("SIMPLE.1", ("indom", pmInDom_build(253, 1))),
        ("SIMPLE.1.2", ("pmid", pmID_build(253, 1, 2))),
        ("simple.numfetch", None),
        ("kernel.all.load", None),
    ],
)
def test_parse_key(key, expected):
    assert parse_key(key, {"SIMPLE": 253}) == expected


@pytest.mark.parametrize("key", ["OTHER.1", "600.1", "1.4096.0", "1.0.1024", "1.4194304"])
def test_parse_key_refuses(key):
    with pytest.raises(ValueError):
        parse_key(key, {"SIMPLE": "253"})


ERRORS = [
    ("@ simple.nope oneline\n", PM_ERR_NAME, "simple.nope: Unknown metric name"),
    ("@ simple.time oneline\n", PM_ERR_NONLEAF, "simple.time: Metric name is not a leaf in PMNS"),
    ("@ simple.now.x oneline\n", PM_ERR_NAME, "simple.now.x: Unknown metric name"),
    ("@ OTHER.1 x\n", PM_ERR_GENERIC, "OTHER.1: malformed key: unknown domain name 'OTHER'"),
    (
        "@ 1.2.3.4 x\n",
        PM_ERR_GENERIC,
        "1.2.3.4: malformed key (expected a metric name, D.C.I or D.S)",
    ),
    (
        "@ simple..now x\n",
        PM_ERR_GENERIC,
        "simple..now: malformed key (expected a metric name, D.C.I or D.S)",
    ),
    ("@ a-b x\n", PM_ERR_GENERIC, "a-b: malformed key (expected a metric name, D.C.I or D.S)"),
    ("@ 700.1 x\n", PM_ERR_GENERIC, "700.1: malformed key: domain 700 out of range 0..511"),
]


@pytest.mark.parametrize(("body", "code", "what"), ERRORS)
def test_resolve_errors_name_file_and_line(simple: PMNS, body: str, code: int, what: str):
    text = "# header\n@ simple.now fine\n\n" + body
    with pytest.raises(SourceError) as info:
        resolve_help(parse_help(text, "h.txt"), simple, {"SIMPLE": 253})
    e = info.value
    assert (e.code, e.what, e.file, e.line) == (code, what, "h.txt", 4)


def test_names_inside_a_dynamic_subtree_have_no_pmid_here():
    pmns = PMNS.from_string("root {\n mmv 70:*:*\n}\n")
    for key in ("mmv", "mmv.x.y"):
        with pytest.raises(SourceError) as info:
            resolve_help(parse_help(f"@ {key} one\n", "h"), pmns)
        assert info.value.code == PM_ERR_NAME
        assert "dynamic subtree at mmv" in info.value.what


def test_duplicates(simple: PMNS):
    text = "@ simple.now one\n@ SIMPLE.1 i\n@ 253.2.4 again\n@ 253.1 i2\n"
    with pytest.raises(SourceError) as info:
        resolve_help(parse_help(text, "h"), simple, {"SIMPLE": 253})
    e = info.value
    assert (e.code, e.what, e.line) == (PM_ERR_GENERIC, "duplicate key (253.2.4), first at h:1", 3)
    lenient = resolve_help(parse_help(text, "h"), simple, {"SIMPLE": 253}, allow_duplicates=True)
    assert lenient == HelpText(
        {pmID_build(253, 2, 4): ("one", "")}, {pmInDom_build(253, 1): ("i", "")}
    )
    # A PMID and an instance domain with the same numbers are different keys.
    both = resolve_help(parse_help("@ 1.2 indom\n@ 1.0.2 pmid\n"), simple)
    assert both.indoms == {pmInDom_build(1, 2): ("indom", "")}
    assert both.pmids == {pmID_build(1, 0, 2): ("pmid", "")}


def test_missing_help_file(tmp_path: Path, simple: PMNS):
    with pytest.raises(SourceError) as info:
        load_help(str(tmp_path / "absent"), simple)
    assert info.value.code < 0


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "@",
                "#",
                " ",
                "\n",
                "\t",
                "simple",
                ".",
                "now",
                "time",
                "SIMPLE",
                "1",
                "253",
                "x",
                "é",
                "\r",
                "-",
            ]
        )
    ).map("".join)
    | st.text()
)
def test_garbage_raises_only_source_errors(text: str):
    pmns = PMNS.from_string(
        "root {\n simple\n}\nsimple {\n now 253:0:0\n time\n}\nsimple.time {\n}\n"
    )
    try:
        resolve_help(parse_help(text, "g"), pmns, {"SIMPLE": 253})
    except PMError as e:
        assert isinstance(e, SourceError) and e.file == "g" and e.line is not None


# -- against the real PCP ------------------------------------------------------------------


def read_newhelp_output(base: str) -> tuple[dict, dict]:
    """PMID and InDom entries of newhelp's BASE.dir/BASE.pag, first one winning, as agents read."""
    index = Path(f"{base}.dir").read_bytes()
    pag = Path(f"{base}.pag").read_bytes()
    records = [struct.unpack_from("=III", index, off) for off in range(0, len(index), 12)]
    pmids: dict[int, tuple[str, str]] = {}
    indoms: dict[int, tuple[str, str]] = {}

    def cstr(off: int) -> str:
        return pag[off : pag.index(b"\0", off)].decode("utf-8", "surrogateescape")

    for ident, one, text in records[1 : 1 + records[0][2]]:
        table = indoms if ident & 0x80000000 else pmids
        table.setdefault(ident & 0x7FFFFFFF, (cstr(one), cstr(text)))
    return pmids, indoms


@pytest.mark.interop
@needs_pcp
def test_linux_help_matches_the_installed_newhelp_output():
    pmns = PMNS.from_file(REAL_ROOT)
    # PCP's linux help repeats a few metrics; newhelp keeps both and agents answer the first.
    with pytest.raises(SourceError) as info:
        load_help(LINUX_HELP, pmns)
    assert info.value.file == LINUX_HELP and info.value.what.startswith("duplicate key (60.")
    ours = load_help(LINUX_HELP, pmns, allow_duplicates=True)
    assert len(ours.pmids) > 1000 and len(ours.indoms) > 20
    if os.path.exists(f"{LINUX_HELP}.dir"):
        pmids, indoms = read_newhelp_output(LINUX_HELP)
        assert ours.pmids == pmids
        assert ours.indoms == indoms


@pytest.mark.interop
@needs_pcp
def test_linux_help_spot_checks_against_the_source_text():
    ours = load_help(LINUX_HELP, PMNS.from_file(REAL_ROOT), allow_duplicates=True)
    load = PMNS.from_file(REAL_ROOT).lookup("kernel.all.load")
    assert ours.pmids[load][0] == "1, 5 and 15 minute load average"
    lines = Path(LINUX_HELP).read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("@ disk.dev.read ")))
    pmid = PMNS.from_file(REAL_ROOT).lookup("disk.dev.read")
    oneline, text = ours.pmids[pmid]
    assert lines[start] == f"@ disk.dev.read {oneline}"
    assert text.splitlines() == lines[start + 1 : start + 1 + len(text.splitlines())]
    assert ours.indoms[pmInDom_build(60, 0)][0] == "set of all processors"


@pytest.mark.interop
@pytest.mark.skipif(
    not os.access(NEWHELP, os.X_OK),
    reason="reference PCP 6 newhelp not installed (Debian package pcp)",
)
def test_crafted_help_matches_newhelp(tmp_path: Path):
    (tmp_path / "ns").write_text("root {\n a 250:0:0\n b 250:0:1\n c\n}\nc {\n d 250:1:0\n}\n")
    source = (
        "junk before\n# comment\n@ a  one line with trailing   \n\n  first text\n"
        "# comment inside\n\nlast\n  \n\n\n@\nignored text\n@ 250.0.1\n@\tc.d\ttabbed\r\n"
        "text\r\n   \n\n@ 250.3 indom\nindom text\n"
    )
    (tmp_path / "help").write_text(source)
    done = subprocess.run(
        [NEWHELP, "-n", "ns", "-o", "out", "help"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode in (0, 1), done.stderr  # 1: warnings only (the "@" with no key)
    pmids, indoms = read_newhelp_output(str(tmp_path / "out"))
    ours = load_help(str(tmp_path / "help"), PMNS.from_file(str(tmp_path / "ns")))
    assert (ours.pmids, ours.indoms) == (pmids, indoms)
    assert len(pmids) == 3 and len(indoms) == 1
