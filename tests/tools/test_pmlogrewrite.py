"""pmlogrewrite: ours reads PCP's rules language with PCP's messages and rewrites
archives into the same bytes PCP 6.0.3's pmlogrewrite writes.

Unit tests cover the scanner, the parser's messages and the delta-indom rule; interop
tests run PCP's pmlogrewrite and ours on PCP's QA archives with the same rules and
compare stdout, stderr, exit status and every output file byte for byte, and check
every rules file PCP ships under /var/lib/pcp/config/pmlogrewrite reads the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.tools.pmlogrewrite.errors import SpecError, Where
from purepcp.tools.pmlogrewrite.lexer import Lexer
from purepcp.tools.pmlogrewrite.rewrite import delta_changes
from purepcp.tools.pmlogrewrite.words import inst_name_eq
from tests.support.qa_archives import qa

PCP_TOOL = "/usr/lib/pcp/bin/pmlogrewrite"
OURS = [sys.executable, "-c", "import sys; from purepcp.tools.pmlogrewrite import main; "
        "sys.exit(main())"]  # fmt: skip
SHIPPED = Path("/var/lib/pcp/config/pmlogrewrite")

needs_pcp = pytest.mark.skipif(
    not os.path.exists(PCP_TOOL), reason="PCP's pmlogrewrite is not installed"
)


# -- unit -------------------------------------------------------------------------------


def _kinds(text: str) -> list[str]:
    lex = Lexer(text, "t")
    out = []
    while (tok := lex.next()).kind != "EOF":
        out.append(tok.kind)
    return out


def test_lexer_states_and_longest_match() -> None:
    assert _kinds("global { hostname -> foo.bar-baz }") == [
        "GLOBAL", "LBRACE", "HOSTNAME", "ASSIGN", "HNAME", "RBRACE"]  # fmt: skip
    assert _kinds("metric 60.2.* { type -> U64 units -> 1,0,0,KBYTE,0,0 rescale }") == [
        "METRIC", "PMID_STAR", "LBRACE", "TYPE", "ASSIGN", "TYPE_NAME", "UNITS", "ASSIGN",
        "NUMBER", "COMMA", "NUMBER", "COMMA", "NUMBER", "COMMA", "SPACE_NAME", "COMMA",
        "TIME_NAME", "COMMA", "COUNT_NAME", "RESCALE", "RBRACE"]  # fmt: skip
    # outside a metric clause "type" is a name, and a quoted name with \" is text
    assert _kinds("metric type { }") == ["METRIC", "GNAME", "LBRACE", "RBRACE"]
    assert _kinds('indom 1.2 { iname "a\\"b" -> "c" }')[3] == "INAME"


def test_lexer_counts_lines_and_reports_bad_characters() -> None:
    lex = Lexer("# comment\n\nglobal @", "rules")
    assert lex.next().kind == "GLOBAL" and lex.lineno == 3
    with pytest.raises(SpecError) as err:
        lex.next()
    assert err.value.report() == (
        "Specification error in configuration file (rules)\n[line 3] Unexpected character '@'\n"
    )


def test_instance_name_matching() -> None:
    assert inst_name_eq("cpu0", "cpu0") == 2
    assert inst_name_eq("1 foo", "1 bar") == 1
    assert inst_name_eq("1", "2") == 0
    assert inst_name_eq("", "x") == -1


def test_delta_indom_rule() -> None:
    old = ([1, 2, 3], ["a", "b", "c"])
    assert delta_changes(old, ([1, 2, 3, 4], ["a", "b", "c", "d"])) == [(4, "d")]
    assert delta_changes(old, ([1, 3], ["a", "c"])) == [(2, None)]
    assert delta_changes(old, old) is None  # no change: a full record
    assert delta_changes(old, ([1, 2, 3], ["a", "x", "c"])) is None  # renamed: full
    assert delta_changes(old, ([7], ["z"])) is None  # more changes than members: full


def test_warning_format(capsys: pytest.CaptureFixture[str]) -> None:
    where = Where()
    where.path, where.line = "f", 4
    where.warn("Global time: No change")
    assert capsys.readouterr().err == "Warning [f, line 4]\nGlobal time: No change\n"


# -- interop ----------------------------------------------------------------------------


def _run(cmd: list[str], args: list[str], cwd: Path) -> tuple[str, str, int]:
    proc = subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    err = re.sub(r"dump from \S+ timestamp", "dump from ADDR timestamp", proc.stderr)
    return proc.stdout, err, proc.returncode


def _files(folder: Path, base: str) -> dict[str, bytes]:
    return {p.name[len(base) :]: p.read_bytes() for p in folder.glob(f"{base}.*")}


def _compare(tmp_path: Path, rules: str | None, archive: str, *extra: str) -> None:
    """Run both tools on ARCHIVE with RULES; outputs and archives must match."""
    results = []
    for side, cmd in (("pcp", [PCP_TOOL]), ("ours", OURS)):
        folder = tmp_path / side
        folder.mkdir()
        args = list(extra)
        if rules is not None:
            (folder / "rules").write_text(rules)
            args += ["-c", "rules"]
        args += [archive, "out"]
        out, err, rc = _run(cmd, args, folder)
        results.append((out, err, rc, _files(folder, "out")))
    assert results[1][:3] == results[0][:3]
    assert results[1][3].keys() == results[0][3].keys()
    for suffix, data in results[0][3].items():
        assert results[1][3][suffix] == data, f"out{suffix} differs"


COPY_ARCHIVES = ["541380_v2", "mirage", "kenj-pc-2", "sample_expr", "20041125", "proc",
                 "section-a", "rattle", "eventrec", "eventrec-old", "20180102"]  # fmt: skip


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("name", COPY_ARCHIVES)
def test_copy_is_byte_identical(tmp_path: Path, name: str) -> None:
    archive = qa(name)
    _compare(tmp_path, None, archive)


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("name", ["mirage", "541380_v2", "bigace_v2", "eventrec", "mirage-3"])
def test_copy_to_version_3(tmp_path: Path, name: str) -> None:
    """v2 records relaid as v3, instance domains as deltas where PCP makes them."""
    _compare(tmp_path, None, qa(name), "-V", "3")


RULES = [
    ("541380_v2", "global { hostname -> foo.bar.com }"),
    ("541380_v2", 'global { tz -> "GMT" }'),
    ("541380_v2", 'global{time->-22:33:24.637 tz->"GMT" hostname->eek}'),
    ("mirage", "metric sample.drift { units->1,0,-1,MBYTE,0,0 type->U64 }"),
    ("mirage", "metric sample.bin { indom -> NULL output inst 300 }"),
    ("mirage", "metric sample.bin { delete }"),
    # (a string metric's value kept under PM_IN_NULL: ours dropped it, QA 822)
    ("pmiostat_mark", "metric hinv.map.scsi { indom -> NULL output first }"),
    ("pmiostat_mark", "metric hinv.map.scsi { indom -> NULL output last }"),
    ("mirage", "metric 29.*.* { pmid -> 30.*.* }"),
    ("mirage", "metric sample.drift { name -> foo.bar sem -> counter }"),
    ("mirage", 'indom 29.2 { inst 100 -> 1100 iname "bin-200" -> "two hundred" }'),
    ("mirage", "indom 29.2 { inst 300 -> DELETE }"),
    ("kenj-pc-2", "metric sample.wrap.longlong { type -> U32 }"),
    ("kenj-pc-2", "metric sample.wrap.ulonglong { type -> 64 }"),
    ("sample_expr", "metric sample.scale_step.time_up_secs { type -> string }"),
    ("sample_expr", "metric pmcd.pmlogger.host { type -> U32 }"),
    ("mirage", "global { hostname -> }"),
    ("mirage", "metric sample.drift { units -> 1,0, }"),
    ("mirage", "indom 29.2 {\n inst 100\n}"),
    ("mirage", "metric sample.drift { type -> U64 type -> 32 }"),
    ("20180127.08.40", "indom 60.0 { indom -> 60.200 }"),
    ("20180127.08.40", "metric 60.0.* { pmid -> 61.*.* }"),
    ("20180127.08.40", 'text metric pmcd.agent.count oneline { text -> "a new one line" }'),
    ("20180127.08.40", "text metric 2.0.3 * { delete }"),
    ("20180127.08.40", "text indom 60.0 help { indom -> 60.99 }"),
    ("20180127.08.40", "label context { delete }"),
    ("20180127.08.40", 'label context "groupid" { label -> "new_groupid" }'),
    ("20180127.08.40", 'label context * "brolley-t530" { value -> "retired-t530" }'),
    ("20180127.08.40", 'label context { new "n" -123.456e+789 }'),
    ("20180127.08.40", 'label domain 3 { new "new_domain_label" "v" }'),
    ("20180127.08.40", 'label indom 60.1 { label -> "new_device_type" }'),
    ("20180127.08.40", "label instances 60.0 2 { instance -> 7 }"),
]


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize(("name", "rules"), RULES)
def test_rules_like_pcp(tmp_path: Path, name: str, rules: str) -> None:
    _compare(tmp_path, rules + "\n", qa(name), "-w", "-v")


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("name", ["20041125", "mysql-1", "rattle"])
def test_shipped_rules_read_like_pcp(tmp_path: Path, name: str) -> None:
    """Every rules file pmlogger_daily applies parses, with PCP's warnings and summary."""
    if not SHIPPED.is_dir():
        pytest.skip("PCP's shipped pmlogrewrite rules are not installed (Debian package pcp)")
    archive = qa(name)
    args = ["-C", "-c", str(SHIPPED), archive, "out"]
    pcp = _run([PCP_TOOL], args, tmp_path)
    ours = _run(OURS, args, tmp_path)
    assert ours == pcp
    assert ours[2] == 0


@needs_pcp
@pytest.mark.interop
def test_value_trace_and_desperate(tmp_path: Path) -> None:
    """-Dvalue traces each conversion; -d keeps what was written when one fails."""
    step = tmp_path / "step1"
    step.mkdir()
    (step / "rules").write_text("metric sample.drift { units->1,0,-1,MBYTE,0,0 type->U64 }\n")
    assert _run(OURS, ["-c", "rules", qa("mirage"), "mid"], step)[2] == 0
    rules = "metric sample.drift { units->1,0,-1,BYTE,0,1 type->32 }\n"
    _compare(tmp_path, rules, str(step / "mid"), "-Dvalue", "-dsw")


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize(
    "rules",
    ["metric sample.bin { delete }\n", "metric 29.0.6 { indom -> 29.1 }\n",
     "metric sample.colour { type -> U32 }\n",
     'indom 29.1 { inst 1 -> 11 iname "green" -> "verde" inst 2 -> DELETE }\n'],
)  # fmt: skip
def test_appl1_traces_instance_domain_counts_as_pcp(tmp_path: Path, rules: str) -> None:
    """-D appl1: each instance domain's reference count, and each descriptor deleted or
    rewritten, on stderr in PCP's words (QA 822)."""
    _compare(tmp_path, rules, qa("ok-foo"), "-Dappl1")


@needs_pcp
@pytest.mark.interop
def test_in_place(tmp_path: Path) -> None:
    src = Path(qa("mirage"))
    for side, cmd in (("pcp", [PCP_TOOL]), ("ours", OURS)):
        folder = tmp_path / side
        folder.mkdir()
        for f in src.parent.glob(src.name + ".*"):
            shutil.copy(f, folder / f.name)
        (folder / "rules").write_text("metric sample.drift { sem -> counter }\n")
        assert _run(cmd, ["-i", "-c", "rules", src.name], folder)[2] == 0
    assert _files(tmp_path / "ours", src.name) == _files(tmp_path / "pcp", src.name)


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("args", [[], ["-V", "1", "a", "b"], ["-x", "a", "b"], ["-i", "a", "b"]])
def test_usage_like_pcp(tmp_path: Path, args: list[str]) -> None:
    assert _run(OURS, args, tmp_path) == _run([PCP_TOOL], args, tmp_path)
