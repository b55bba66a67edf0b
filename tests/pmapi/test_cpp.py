"""pmapi.cpp: pmcpp's preprocessing of namespace files, its errors, and its line tracking."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.cpp import MAX_INCLUDE_LEVEL, SourceLine, preprocess, preprocess_file
from purepcp.pmapi.errors import PM_ERR_PMNS, PMError, SourceError
from tests.support.examples import examples

DATA = Path(__file__).parents[1] / "data" / "pmns"
PMCPP = "/usr/lib/pcp/bin/pmcpp"
PCP_PMNS = "/var/lib/pcp/pmns"

needs_pmcpp = pytest.mark.skipif(
    not (os.access(PMCPP, os.X_OK) and os.path.exists(f"{PCP_PMNS}/root")),
    reason="reference PCP 6 not installed (no /usr/lib/pcp/bin/pmcpp or /var/lib/pcp/pmns/root)",
)


def texts(lines: list[SourceLine]) -> list[str]:
    return [sl.text for sl in lines]


def run(text: str, **kw) -> list[str]:
    return texts(preprocess(text, "in", **kw))


def error(text: str, **kw) -> SourceError:
    with pytest.raises(SourceError) as info:
        preprocess(text, "in", **kw)
    assert info.value.code == PM_ERR_PMNS
    return info.value


def dict_reader(files: dict[str, str]):
    return files.get


# -- macros --------------------------------------------------------------------


def test_define_forms_and_substitution():
    src = "#define A 1\n#define B 'two words'\n#define C \"x y\"\n#define E\nA B C [E]\n"
    assert run(src) == ["1 two words x y []"]


def test_substitution_is_whole_identifier_tokens_without_rescanning():
    src = "#define X 9\n#define P Q\n#define Q never\nX X1 X_ aX _X 12X X.X P\n"
    # pmcpp starts a token at any letter or '_', so "12X" becomes "129"; P -> Q, not rescanned.
    assert run(src) == ["9 X1 X_ aX _X 129 9.9 Q"]


def test_predefined_macros_like_dash_D():
    assert run("SIMPLE:0:1\n", macros={"SIMPLE": "253"}) == ["253:0:1"]
    assert run("N\n", macros={"N": 7}) == ["7"]
    e = error("#define SIMPLE 1\n", macros={"SIMPLE": "253"})
    assert (e.what, e.file, e.line) == ("Macro redefinition", "in", 1)


@pytest.mark.parametrize(
    ("name", "what"), [("", "Missing macro name"), ("1X", "Illegal character in macro name")]
)
def test_bad_predefined_macro_name(name, what):
    with pytest.raises(SourceError) as info:
        preprocess("x\n", macros={name: "1"})
    assert (info.value.what, info.value.file) == (what, "<arg>")


def test_undef_and_undef_of_unknown():
    assert run("#define A 1\nA\n#undef A\nA\n#undef NEVER\n") == ["1", "A"]
    assert run("X\n#undef X\nX\n", macros={"X": "y"}) == ["y", "X"]


def test_directives_match_by_prefix_as_pmcpp():
    # pmcpp compares only the directive's leading letters: "#definefoo 1" defines foo.
    assert run("#definefoo 1\nfoo\n") == ["1"]


def test_unknown_directive_passes_through_with_substitution():
    assert run("#define X 1\n#pragma X\n") == ["#pragma 1"]
    assert run("  #define X 2\n") == ["  #define X 2"]  # only column 0 is a control line


def test_value_may_end_with_carriage_return():
    assert run("#define X 5\r\nX\r\n") == ["5\r"]


# -- conditionals --------------------------------------------------------------


def test_ifdef_ifndef_else_endif():
    src = "#define A\n#ifdef A\nyes\n#else\nno\n#endif\n#ifndef A\nno2\n#else\nyes2\n#endif\n"
    assert run(src) == ["yes", "yes2"]
    assert run("#ifdef Q\nno\n#else\nyes\n#endif\n#ifndef Q\nyes2\n#endif\n") == ["yes", "yes2"]


def test_false_branch_ignores_define_include_and_shell():
    src = '#ifdef Q\n#define A 1\n#include "missing"\n#shell "rm -rf /"\n#undef B\n#endif\nA B\n'
    assert run(src, macros={"B": "b"}) == ["A b"]


def test_false_branch_still_checks_define_syntax():
    e = error("#ifdef Q\n#define\n#endif\n")
    assert (e.what, e.line) == ("Missing macro name", 2)


def test_second_else_after_undef_is_fine():
    # pmcpp 6.0.3 says "Macro redefinition" here (its #else trips over an empty macro name).
    src = "#define A 1\n#undef A\n#ifdef B\n#else\ny\n#endif\n#ifdef C\n#else\nz\n#endif\n"
    assert run(src) == ["y", "z"]


def test_conditionals_span_include_files():
    files = {"d/inc": "#endif\n"}
    assert run(
        '#ifdef Q\nhidden\n#else\n#include "inc"\nshown\n',
        include_dirs=["d"],
        reader=dict_reader(files),
    ) == ["shown"]


# -- comments ------------------------------------------------------------------


def test_comment_stripping_keeps_lines_and_places():
    src = "a /* b */ c /* d\n e */ f\n/* whole */\nx /*/ still comment */ y\n"
    out = preprocess(src, "in")
    # Comment text turns into blanks (so columns stay put); "/*/" does not close a comment.
    expected = [(1, "a" + " " * 9 + "c"), (2, " " * 6 + "f"), (3, ""), (4, "x" + " " * 22 + "y")]
    assert [(sl.line, sl.text) for sl in out] == expected


def test_directive_before_a_comment_and_blank_lines_inside_one():
    src = "#define X 1 /* starts\n\n  still */ X\n"
    out = preprocess(src, "in")
    assert [(sl.line, sl.text) for sl in out] == [(3, "           1")]


def test_comment_hides_directives():
    assert run("/*\n#define X 1\n*/\nX\n") == ["", "X"]


# -- includes ------------------------------------------------------------------


def test_include_quote_and_angle_forms_and_line_tags(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "top").write_text('one\n#include "a"\ntwo\n#include <b>\nthree\n')
    (tmp_path / "a").write_text("in a\n")
    (tmp_path / "sub" / "b").write_text("\nin b\n")
    out = preprocess_file(str(tmp_path / "top"), include_dirs=[str(tmp_path / "sub")])
    top, a, b = str(tmp_path / "top"), str(tmp_path / "a"), str(tmp_path / "sub" / "b")
    assert out == [
        SourceLine(top, 1, "one"),
        SourceLine(a, 1, "in a"),
        SourceLine(top, 3, "two"),
        SourceLine(b, 1, ""),
        SourceLine(b, 2, "in b"),
        SourceLine(top, 5, "three"),
    ]


def test_include_search_is_top_file_dir_then_include_dirs(tmp_path: Path):
    # As pmcpp: a nested include is looked up beside the top-level file, not the includer.
    (tmp_path / "sub").mkdir()
    (tmp_path / "top").write_text('#include "sub/a"\n')
    (tmp_path / "sub" / "a").write_text('#include "b"\n')
    (tmp_path / "sub" / "b").write_text("b beside a\n")
    with pytest.raises(SourceError) as info:
        preprocess_file(str(tmp_path / "top"))
    assert info.value.what == "Cannot open file for #include"
    assert (info.value.file, info.value.line) == (str(tmp_path / "sub" / "a"), 1)
    (tmp_path / "b").write_text("b beside top\n")
    assert texts(preprocess_file(str(tmp_path / "top"))) == ["b beside top"]
    (tmp_path / "b").unlink()
    out = preprocess_file(str(tmp_path / "top"), include_dirs=[str(tmp_path / "sub")])
    assert texts(out) == ["b beside a"]


def test_include_tries_the_name_from_the_working_directory_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # pmdaproc.sh writes root { #include "pmns" } in $tmp and runs pminfo -n it in the
    # agent's directory: pmcpp opens "pmns" from the working directory before the others.
    (tmp_path / "agent").mkdir()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "agent" / "pmns").write_text("from cwd\n")
    (tmp_path / "tmp" / "root").write_text('root {\n#include "pmns"\n}\n')
    monkeypatch.chdir(tmp_path / "agent")
    out = preprocess_file(str(tmp_path / "tmp" / "root"))
    assert out[1] == SourceLine("pmns", 1, "from cwd")
    (tmp_path / "tmp" / "pmns").write_text("beside top\n")
    assert texts(preprocess_file(str(tmp_path / "tmp" / "root")))[1] == "from cwd"


def test_include_absolute_path_and_directories_are_not_files(tmp_path: Path):
    (tmp_path / "x").write_text("abs\n")
    assert run(f'#include "{tmp_path / "x"}"\n') == ["abs"]
    e = error('#include "d"\n', include_dirs=[str(tmp_path.parent)], reader=lambda p: None)
    assert e.what == "Cannot open file for #include"
    (tmp_path / "dir").mkdir()
    e = error('#include "dir"\n', include_dirs=[str(tmp_path)])
    assert e.what == "Cannot open file for #include"


def test_include_with_injected_reader_is_sans_io():
    files = {"/pmns/stdpmid": "#define D 9\n", "/here/pmns": "n D:0:0\n"}
    out = preprocess(
        '#include <stdpmid>\n#include "pmns"\n',
        "root",
        include_dirs=["/here", "/pmns"],
        reader=dict_reader(files),
    )
    assert out == [SourceLine("/here/pmns", 1, "n 9:0:0")]


def test_include_depth_limit_is_pmcpp_s():
    assert MAX_INCLUDE_LEVEL == 5
    files = {f"d/f{i}": f'#include "f{i + 1}"\nline{i}\n' for i in range(1, 9)}
    # top, f1, f2, f3 and f4 make five open files: f4 may not include again.
    chain = {k: v for k, v in files.items() if k != "d/f4"} | {"d/f4": "deepest\n"}
    out = preprocess('#include "f1"\n', "top", include_dirs=["d"], reader=dict_reader(chain))
    assert texts(out) == ["deepest", "line3", "line2", "line1"]
    with pytest.raises(SourceError) as info:
        preprocess('#include "f1"\n', "top", include_dirs=["d"], reader=dict_reader(files))
    e = info.value
    assert (e.what, e.file, e.line) == ("#include and/or #shell nesting too deep", "d/f4", 1)


def test_error_inside_included_file_names_that_file():
    files = {"d/inc": "ok\n\n#define\n"}
    with pytest.raises(SourceError) as info:
        preprocess('x\n#include "inc"\n', "top", include_dirs=["d"], reader=dict_reader(files))
    assert (info.value.file, info.value.line, info.value.what) == ("d/inc", 3, "Missing macro name")
    assert str(info.value) == "d/inc:3: Missing macro name"


# -- errors ----------------------------------------------------------------------

ERRORS = [
    ("#define\n", 1, "Missing macro name"),
    ("x\n#undef   \n", 2, "Missing macro name"),
    ("#define 1X 2\n", 1, "Illegal character in macro name"),
    ("#ifdef A-B\n", 1, "Illegal character in macro name"),
    ("#define X 1 2\n", 1, "Unexpected extra text in a control line"),
    ("#ifdef A\n#endif junk\n", 2, "Unexpected extra text in a control line"),
    ("#define X 'abc\n", 1, "Unterminated value string in #define"),
    ('#define X "abc\n', 1, "Unterminated value string in #define"),
    ("#define X 1\n\n#define X 2\n", 3, "Macro redefinition"),
    ("#ifdef A\n#ifndef B\n", 2, "Nested #ifdef or #ifndef"),
    ("#ifndef A\n#else\n#ifdef B\n", 3, "Nested #ifdef or #ifndef"),
    ("x\n#endif\n", 2, "No matching #ifdef or #ifndef for #endif"),
    ("#else\n", 1, "No matching #ifdef or #ifndef for #else"),
    ("a\n#ifdef A\nb\n", 2, "End of input and no matching #endif for #ifdef or #ifndef at line 2"),
    ("#ifndef A\n", 1, "End of input and no matching #endif for #ifdef or #ifndef at line 1"),
    ("a\nb /* c\nd\n", 2, "Comment at line 2 not terminated before end of file"),
    ("#include\n", 1, 'Expected " or < after #include'),
    ("#include foo\n", 1, 'Expected " or < after #include'),
    ('#include "foo\n', 1, 'Expected " after file name'),
    ('#include "foo>\n', 1, 'Expected " after file name'),
    ("#include <foo\n", 1, "Expected > after file name"),
    ('#include "foo" bar\n', 1, "Unexpected extra text in #include line"),
    ('\n#include "no-such-file"\n', 2, "Cannot open file for #include"),
]


@pytest.mark.parametrize(("src", "line", "what"), ERRORS)
def test_errors_name_file_and_line(src, line, what):
    e = error(src, reader=lambda p: None)
    assert (e.what, e.file, e.line) == (what, "in", line)
    assert str(e) == f"in:{line}: {what}"


def test_shell_is_refused():
    e = error('ok\n#shell "echo root { }"\n')
    assert (e.file, e.line) == ("in", 2)
    assert "#shell is not supported" in e.what


def test_comment_error_names_the_file_where_the_comment_starts():
    files = {"d/inc": "x /* open\n"}
    with pytest.raises(SourceError) as info:
        preprocess('#include "inc"\nmore\n', "top", include_dirs=["d"], reader=dict_reader(files))
    assert (info.value.file, info.value.line) == ("d/inc", 1)


def test_last_line_without_newline_is_kept():
    # pmcpp drops such a line; keeping it is the friendlier reading of the same text.
    assert run("a\nb") == ["a", "b"]
    assert run("") == []


def test_files_keep_carriage_returns(tmp_path: Path):
    (tmp_path / "crlf").write_bytes(b"#define X 1\r\nX\r\n")
    assert texts(preprocess_file(str(tmp_path / "crlf"))) == ["1\r"]


def test_missing_top_file(tmp_path: Path):
    with pytest.raises(SourceError) as info:
        preprocess_file(str(tmp_path / "absent"))
    assert info.value.code == -errno.ENOENT
    assert info.value.file == str(tmp_path / "absent")
    with pytest.raises(SourceError) as info:
        preprocess_file(str(tmp_path))  # a directory is not a namespace file
    assert info.value.code < 0
    assert info.value.what.startswith(f'Cannot open "{tmp_path}"')


def test_test_data_root_with_header_dir():
    out = preprocess_file(str(DATA / "simple" / "root"), include_dirs=[str(DATA / "domains")])
    body = [(Path(sl.file).name, sl.line, sl.text.strip()) for sl in out if sl.text.strip()]
    assert body[0] == ("root", 9, "root { simple }")
    assert ("pmns", 6, "numfetch\t253:0:0") in body
    assert body[-1] == ("pmns", 15, "}")


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "#define ",
                "#undef ",
                "#ifdef ",
                "#ifndef ",
                "#else",
                "#endif",
                "#include ",
                "#shell ",
                "#",
                "/*",
                "*/",
                "\n",
                " ",
                "'",
                '"',
                "<",
                ">",
                "X",
                "Y1",
                "_z",
                "12",
                "root",
                "{",
                "}",
                ":",
                "*",
                "\t",
                "\r",
                "é",
                "\x00",
            ]
        )
    ).map("".join)
    | st.text()
)
def test_garbage_only_raises_source_errors(text):
    files = {"inc/X": "X\n", "inc/root": "#include <root>\n"}
    try:
        preprocess(text, "g", macros={"X": "x"}, include_dirs=["inc"], reader=dict_reader(files))
    except PMError as e:
        assert isinstance(e, SourceError)
        assert e.file in ("g", "inc/X", "inc/root", "<arg>")


def pmcpp_drops(sl: SourceLine) -> bool:
    """Whether pmcpp loses this line: the last one of a file that does not end in a newline."""
    text = Path(sl.file).read_text()
    return not text.endswith("\n") and sl.line == text.count("\n") + 1


# -- against the real pmcpp ----------------------------------------------------------

PARITY_OK = [
    "#define A 1\n#define B 'x y'\nA B A1 1A\n",
    "/* a */ b /* c\nd */ e\n#define Q\n#ifdef Q\nq\n#else\nnq\n#endif\n",
    "#ifndef Z\n#define Z 3\n#endif\nZ:Z:Z\n#pragma Z\n#definefoo bar\nfoo\n",
    "#include <stdpmid>\nroot { x SAMPLE:0:0 }\n",
]


@pytest.mark.interop
@needs_pmcpp
@pytest.mark.parametrize("src", PARITY_OK)
def test_output_matches_pmcpp(tmp_path: Path, src: str):
    path = tmp_path / "in"
    path.write_text(src)
    ref = subprocess.run([PMCPP, "-P", str(path)], capture_output=True, text=True, check=True)
    ours = texts(preprocess_file(str(path), include_dirs=[PCP_PMNS]))
    assert [t for t in ours if t.strip()] == [t for t in ref.stdout.splitlines() if t.strip()]


@pytest.mark.interop
@needs_pmcpp
@pytest.mark.parametrize(("src", "line", "what"), ERRORS)
def test_errors_match_pmcpp(tmp_path: Path, src: str, line: int, what: str):
    path = tmp_path / "in"
    path.write_text(src)
    ref = subprocess.run([PMCPP, "-P", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert ref.returncode == 1
    assert f"pmcpp: Error: {what}\n" in ref.stderr
    if "End of input" not in what and "Comment at line" not in what:
        assert f"{path}[{line}]:" in ref.stderr  # at EOF pmcpp names no line; we name the opener


@pytest.mark.interop
@needs_pmcpp
def test_real_agent_roots_preprocess_like_pmcpp():
    roots = sorted(Path("/var/lib/pcp/pmdas").glob("*/root")) + sorted(
        Path(PCP_PMNS).glob("root_*")
    )
    assert roots
    for root in roots:
        ref = subprocess.run(
            [PMCPP, "-P", str(root)], capture_output=True, text=True, check=True, cwd="/"
        )
        ours = [
            sl.text
            for sl in preprocess_file(str(root), include_dirs=[PCP_PMNS])
            if not pmcpp_drops(sl)
        ]
        assert [t for t in ours if t.strip()] == [t for t in ref.stdout.splitlines() if t.strip()]


@pytest.mark.interop
@needs_pmcpp
def test_include_from_working_directory_matches_pmcpp(tmp_path: Path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "pmns").write_text("x 1:0:0\n")
    (tmp_path / "root").write_text('root {\n#include "pmns"\n}\n')
    ref = subprocess.run(
        [PMCPP, "-P", str(tmp_path / "root")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path / "agent",
    )
    assert "x 1:0:0" in ref.stdout.splitlines()


@pytest.mark.interop
@needs_pmcpp
def test_include_depth_matches_pmcpp(tmp_path: Path):
    for i in range(1, 8):
        (tmp_path / f"f{i}").write_text(f'#include "f{i + 1}"\n')
    ref = subprocess.run([PMCPP, str(tmp_path / "f1")], capture_output=True, text=True, cwd="/")
    assert "nesting too deep" in ref.stderr
    assert f"{tmp_path / 'f5'}[1]" in ref.stderr
    with pytest.raises(SourceError) as info:
        preprocess_file(str(tmp_path / "f1"))
    assert (info.value.file, info.value.line) == (str(tmp_path / "f5"), 1)
