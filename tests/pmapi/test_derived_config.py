"""purepcp.pmapi.derived.registry: global derived metrics, their PMIDs and configuration files.

The interop tests load the same configurations into the reference pminfo (with
PCP_DERIVED_CONFIG empty, over a small archive of ours) and into ours, and compare
the diagnostics word for word and the PMIDs the metrics get.  PCP 6.0.3 predates
continuation lines (6.2.2), so those are checked against our own expectations.
"""

from __future__ import annotations

import ctypes
import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from purepcp.pmapi.derived import registry as registry_module
from purepcp.pmapi.derived.ast import Anon, Binary, Name, Number
from purepcp.pmapi.derived.parse import DerivedSyntaxError
from purepcp.pmapi.derived.registry import (
    EVENT_METRICS,
    Definition,
    DerivedError,
    Registry,
    default_registry,
    load_config,
    load_config_message,
    register_metric_message,
    valid_name,
)
from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.ids import pmID_build, pmIDStr
from purepcp.pmapi.types import PMType
from tests.support.derived_archive import write_archive
from tests.support.derived_errors import ERRORS
from tests.support.reference import libpcp

PMINFO = "/usr/bin/pminfo"


def pmid(cluster: int, item: int) -> int:
    return pmID_build(511, cluster, item)


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("a", True),
        ("a.b_c.d9", True),
        ("Disk.dev.read_pct", True),
        ("a.", True),  # PCP's checkname() lets a trailing dot through
        ("", False),
        ("a..b", False),
        (".a", False),
        ("1a", False),
        ("_a", False),
        ("a.1b", False),
        ("a-b", False),
        ("a b", False),
        ("é", False),
    ],
)
def test_valid_name(name, ok):
    assert valid_name(name) is ok


# ------------------------------------------------------------------ registry


def test_definitions_are_numbered_in_registration_order():
    reg = Registry()
    x = reg.register("x", "a + 1")
    y = reg.register_anon("y", PMType.PM_TYPE_DOUBLE)
    z = reg.register("my.z", "sum(a)")
    assert x == Definition("x", "a + 1", Binary("+", Name("a"), Number("1", 1)), pmid(0, 1))
    assert (y.text, y.tree, y.anon_type, y.pmid) == ("anon(PM_TYPE_DOUBLE)", None, 5, pmid(0, 2))
    assert z.pmid == pmid(0, 3) and pmIDStr(z.pmid) == "511.0.3"
    assert list(reg) == [x, y, z] and len(reg) == 3 and "my.z" in reg
    assert reg.lookup("my.z") is z and reg.lookup("nope") is None
    assert reg.by_pmid(pmid(0, 2)) is y and reg.by_pmid(pmid(0, 4)) is None


def test_items_run_to_1023_then_the_next_cluster_starts_at_1():
    reg = Registry()
    pmids = [reg.register(f"m{i}", "1").pmid for i in range(1025)]
    assert pmids[0] == pmid(0, 1) and pmids[1022] == pmid(0, 1023)
    assert pmids[1023] == pmid(1, 1) and pmids[1024] == pmid(1, 2)


def test_the_pmid_space_runs_out_after_cluster_2047():
    reg = Registry()
    reg.register("first", "1")
    reg._last = (2047, 1022)  # skip two million registrations
    assert reg.register("last", "1").pmid == pmid(2047, 1023)
    with pytest.raises(DerivedError, match=r"^global PMID space exhausted$"):
        reg.register("one.more", "1")
    assert "one.more" not in reg


def test_registration_failures():
    reg = Registry()
    reg.register("x", "1")
    with pytest.raises(DerivedError) as caught:
        reg.register("x", "2")
    assert (caught.value.message, caught.value.offset) == (
        "Duplicate global derived metric name",
        0,
    )
    with pytest.raises(DerivedError, match=r"^illegal derived metric name \(1x\)$"):
        reg.register("1x", "2")
    with pytest.raises(DerivedSyntaxError) as syntax:
        reg.register("y", "2 +")
    assert (syntax.value.offset, syntax.value.message) == (
        2,
        "Arithmetic expression expected to follow PLUS",
    )
    with pytest.raises(DerivedError, match=r"^Unknown or illegal metric type$"):
        reg.register_anon("z", PMType.PM_TYPE_STRING)
    with pytest.raises(DerivedError, match=r"^Duplicate global derived metric name$"):
        reg.register_anon("x", PMType.PM_TYPE_U32)
    assert [d.pmid for d in reg] == [pmid(0, 1)]  # failures take no PMID


def test_attributes_are_set_once():
    reg = Registry()
    reg.register("x", "1")
    assert reg.set_attribute("x", "oneline", "one").oneline == "one"
    assert reg.set_attribute("x", "helptext", "more\ntext").helptext == "more\ntext"
    assert reg.lookup("x") == Definition("x", "1", Number("1", 1), pmid(0, 1), "one", "more\ntext")
    failures = [
        (("y", "oneline", "v"), "cannot set attribute, derived metric (y) not defined"),
        (("y", "colour", "v"), "cannot set attribute, derived metric (y) not defined"),
        (("x", "colour", "v"), "attribute (colour) is unknown for metric (x)"),
        (("x", "oneline", "v"), "duplicate value for attribute (oneline) of metric (x)"),
    ]
    for args, message in failures:
        with pytest.raises(DerivedError) as caught:
            reg.set_attribute(*args)
        assert caught.value.message == message


# ------------------------------------------------------------------ messages


def _error(reg: Registry, name: str, expr: str) -> DerivedSyntaxError | DerivedError:
    try:
        reg.register(name, expr)
    except (DerivedSyntaxError, DerivedError) as e:
        return e
    raise AssertionError(f"{expr!r} registered")


def test_register_metric_message():
    reg = Registry()
    expr = "4rat(disk.dev.read)"
    assert register_metric_message("my.disk.rates", expr, _error(reg, "m", expr)) == (
        'Error: pmRegisterDerivedMetric("my.disk.rates", ...)\n4rat(disk.dev.read)\n ^\n'
    )
    expr = "a + + b"
    assert register_metric_message("m", expr, _error(reg, "m", expr)) == (
        'Error: pmRegisterDerivedMetric("m", ...)\na + + b\n    ^\n'
        "Arithmetic expression expected to follow PLUS\n"
    )
    reg.register("dup", "1")
    assert register_metric_message("dup", "2", _error(reg, "dup", "2")) == (
        'Error: pmRegisterDerivedMetric("dup", ...)\n2\n^\nDuplicate global derived metric name\n'
    )


@pytest.mark.interop
def test_register_metric_message_is_libpcps():
    lib = libpcp()
    register = lib.pmRegisterDerivedMetric
    register.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    reg = Registry()
    for n, expr in enumerate(["4rat(disk.dev.read)", "a + + b", "1 +", "sum(1)", "1", "2"]):
        name = "purepcp.config_test.same" if expr in ("1", "2") else f"purepcp.config_test.m{n}"
        errmsg = ctypes.c_char_p()
        failed = register(name.encode(), expr.encode(), ctypes.byref(errmsg))
        try:
            reg.register(name, expr)
            ours = None
        except (DerivedSyntaxError, DerivedError) as e:
            ours = register_metric_message(name, expr, e)
        assert (failed, ours) == ((-1, errmsg.value.decode()) if failed else (0, None))


def test_load_config_message():
    err = _error(Registry(), "my.e", "1 +")
    assert load_config_message("/tmp/d1.conf", 7, "my.e", " 1 +", err) == (
        "[/tmp/d1.conf:7] Error: pmRegisterDerived(my.e, ...) syntax error\n"
        " 1 +\n   ^\nArithmetic expression expected to follow PLUS\n"
    )
    err = _error(Registry(), "x", "1e3\t")
    assert load_config_message("f", 1, "x", "\t 1e3\t", err) == (
        "[f:1] Error: pmRegisterDerived(x, ...) syntax error\n\t 1e3\t\n\t  ^ \t\n"
    )


# ------------------------------------------------------------------ files


def _load(reg: Registry, path: str | Path) -> tuple[int, str]:
    err = io.StringIO()
    count = load_config(reg, str(path), err)
    return count, err.getvalue()


def test_a_configuration_file(tmp_path):
    conf = tmp_path / "d.conf"
    conf.write_text(
        "# comment\n"
        "\n"
        "t.a = 1 + 2\n"
        "  t.b   =  delta(x) / 3 \n"
        "t.a(oneline) = the one line  \n"
        "t.a(helptext) = 'what \\'a\\' means,\\\n"
        "  over two lines'\n"
        't.b( oneline ) = "quoted" trailing words\n'
        "   \n"
        "  # indented\n"
        "t.c\n"
        "t.d = 1 #\n"
        "t.a = 3\n"
        "t..e = 1\n"
        "(oneline) = x\n"
        "t.a(oneline = x\n"
        "t.a() = x\n"
        "t.a(colour) = red\n"
        "t.z(oneline) = x\n"
        "t.b(oneline) = again\n"
        "t.b(helptext) =  \n"
        "t.f = \n"
        "t.g = 7\n"
        "t.h = 8"
    )
    reg = Registry()
    count, text = _load(reg, conf)
    assert count == 3
    path = str(conf)
    assert text == (
        f"[{path}:8] Warning: pmLoadDerivedConfig: extra text (trailing words) after attribute"
        " value will be ignored\n"
        f"[{path}:9] Error: pmLoadDerivedConfig: missing ``='' after derived metric name\n   \n"
        f"[{path}:10] Error: pmLoadDerivedConfig: missing ``='' after derived metric name\n"
        "  # indented\n"
        f"[{path}:11] Error: pmLoadDerivedConfig: missing ``='' after derived metric name\nt.c\n"
        f"[{path}:12] Error: pmRegisterDerived(t.d, ...) syntax error\n 1 #\n   ^\n"
        "Illegal character\n"
        f"[{path}:13] Error: pmRegisterDerived(t.a, ...) syntax error\n 3\n ^\n"
        "Duplicate global derived metric name\n"
        f"[{path}:14] Error: pmLoadDerivedConfig: illegal derived metric name (t..e)\n"
        f"[{path}:15] Error: pmLoadDerivedConfig: derived metric name missing\n(oneline) = x\n"
        f"[{path}:16] Error: pmLoadDerivedConfig: missing ')' after attribute\n"
        "t.a(oneline = x\n"
        f"[{path}:17] Error: pmLoadDerivedConfig: attribute name missing\nt.a() = x\n"
        f"[{path}:18] Error: pmLoadDerivedConfig: attribute (colour) is unknown for metric"
        " (t.a)\nt.a(colour) = red\n"
        f"[{path}:19] Error: pmLoadDerivedConfig: cannot set attribute, derived metric (t.z)"
        " not defined\nt.z(oneline) = x\n"
        f"[{path}:20] Error: pmLoadDerivedConfig: duplicate value for attribute (oneline) of"
        " metric (t.b)\nt.b(oneline) = again\n"
        f"[{path}:21] Error: pmLoadDerivedConfig: attribute value missing\nt.b(helptext) =  \n"
        f"[{path}:22] Error: pmLoadDerivedConfig: expression missing\nt.f = \n"
    )
    a, b, g = reg.lookup("t.a"), reg.lookup("t.b"), reg.lookup("t.g")
    assert (a.text, a.oneline, a.helptext) == (
        "1 + 2",
        "the one line  ",
        "what 'a' means,  over two lines",
    )
    assert (b.text, b.oneline) == ("delta(x) / 3 ", "quoted")
    assert g.pmid == pmid(0, 3) and "t.h" not in reg  # the unterminated last line is ignored


def test_multi_line_values_and_continuations(tmp_path):
    """PCP 6.2.2 and later: a backslash-newline joins lines, and messages name the first
    line of what they report (6.0.3 named the last line of a multi-line value, and
    numbered every line after it one too low)."""
    conf = tmp_path / "d.conf"
    conf.write_text(
        "t.a = 1 + \\\n"
        "      2\n"
        't.a(helptext) = "first\n'
        'second \\"quoted\\" \\\n'
        'third" xy\n'
        "t.b = 1 +\n"
        "# a comment \\\n"
        "t.c = 1 continues the comment\n"
        "t.d = \\\n"
        "  3 \\\n"
        "  +\n"
        "t.e(oneline) = 'never closed\n"
        "t.f = 1\n"
    )
    reg = Registry()
    count, text = _load(reg, conf)
    path = str(conf)
    assert count == 1
    assert text == (
        f"[{path}:3] Warning: pmLoadDerivedConfig: extra text (xy) after attribute value will be"
        " ignored\n"
        f"[{path}:6] Error: pmRegisterDerived(t.b, ...) syntax error\n 1 +\n   ^\n"
        "Arithmetic expression expected to follow PLUS\n"
        f"[{path}:9] Error: pmRegisterDerived(t.d, ...) syntax error\n   3   +\n       ^\n"
        "Arithmetic expression expected to follow PLUS\n"
        f"[{path}:12] Error: pmLoadDerivedConfig: missing termination (') for value\n"
    )
    a = reg.lookup("t.a")
    assert (a.text, a.helptext) == ("1 +       2", 'first\nsecond "quoted" third')
    assert "t.c" not in reg and "t.f" not in reg  # the open quote ate the rest


def test_missing_and_odd_components(tmp_path):
    reg = Registry()
    assert _load(reg, tmp_path / "nope") == (-2, "")
    assert pmErrStr(-2) == "No such file or directory"
    (tmp_path / "a").write_text("t.a = 1\n")
    (tmp_path / "b").write_text("t.b = 2\nt.b(oneline) = b\n")
    assert _load(reg, f"{tmp_path}/a:{tmp_path}/b:") == (2, "")
    assert _load(reg, "") == (0, "")
    assert _load(Registry(), f"{tmp_path}/a::{tmp_path}/b") == (-2, "")  # "" is a file too
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _load(Registry(), fifo) == (0, "")  # neither a file nor a directory: skipped


def test_directories_are_walked_in_directory_order(tmp_path):
    top = tmp_path / "d"
    (top / "sub" / "deeper").mkdir(parents=True)
    (top / "one").write_text("w.one = 1\n")
    (top / "sub" / "two").write_text("w.two = 2\nw.bad = 2 +\n")
    (top / "sub" / "deeper" / "three").write_text("w.three = 3\n")
    (top / "four").write_text("w.four = 4\n")
    expected = []

    def walk(path):
        for entry in os.scandir(path):  # readdir's order, which PCP follows
            if entry.is_dir():
                walk(entry.path)
            else:
                expected.extend(re.findall(r"^(w\.\w+) = \d+$", Path(entry).read_text(), re.M))

    walk(top)
    reg = Registry()
    count, text = _load(reg, top)
    assert count == 4 and [d.name for d in reg] == expected
    assert f"[{top}/sub/two:2] Error: pmRegisterDerived(w.bad, ...) syntax error\n" in text
    (top / "sub" / "broken").symlink_to(tmp_path / "nowhere")
    reg = Registry()
    assert _load(reg, top)[0] == -2  # the walk stops there


def test_non_utf8_and_nul_bytes_do_not_break_the_reader(tmp_path):
    conf = tmp_path / "d.conf"
    conf.write_bytes(b"t.a = 1 \xff\nt.b = 1\nt.b(oneline) = caf\xc3\xa9 \xfe\nt.c = 2\0junk\n")
    reg = Registry()
    count, text = _load(reg, conf)
    assert count == 2 and "Illegal character" in text
    assert reg.lookup("t.b").oneline == "café \udcfe"
    assert reg.lookup("t.c").text == "2"


# ------------------------------------------------------------ default registry


@pytest.fixture
def fresh(monkeypatch):
    """default_registry() made afresh under the environment the test sets."""
    monkeypatch.setattr(registry_module, "_default", None)
    monkeypatch.delenv("PCP_DERIVED_CONFIG", raising=False)
    return monkeypatch


def test_the_default_registry_starts_with_the_event_metrics(fresh):
    fresh.setenv("PCP_DERIVED_CONFIG", "")
    reg = default_registry()
    assert default_registry() is reg
    flags, missed = list(reg)
    assert (flags.name, flags.pmid, flags.anon_type, flags.text) == (
        "event.flags",
        pmid(0, 1),
        PMType.PM_TYPE_U32,
        "anon(PM_TYPE_U32)",
    )
    assert (missed.name, missed.pmid) == ("event.missed", pmid(0, 2))
    assert flags.oneline == "Flags for event records"
    assert missed.helptext == EVENT_METRICS[1][2]
    assert missed.helptext.endswith("or the PMAPI client did not collect the event records fast\n"
                                    "enough.  See pmUnpackEventRecords(3).")  # fmt: skip


def test_pcp_derived_config_is_loaded_quietly_skipping_what_is_missing(fresh, tmp_path, capsys):
    (tmp_path / "a.conf").write_text("t.a = 1\nt.bad = +\n")
    fresh.setenv("PCP_DERIVED_CONFIG", f"{tmp_path}/none:{tmp_path}/a.conf")
    reg = default_registry()
    assert [d.name for d in reg] == ["event.flags", "event.missed", "t.a"]
    assert capsys.readouterr().err == (
        f"[{tmp_path}/a.conf:2] Error: pmRegisterDerived(t.bad, ...) syntax error\n"
        " +\n ^\nUnexpected initial '+'\n"
    )


def test_unset_pcp_derived_config_means_the_global_directory(fresh, tmp_path):
    """PCP's $PCP_VAR_DIR/config/derived when it exists; where it does not (no PCP
    installed), the set purepcp ships instead of nothing."""
    (tmp_path / "config" / "derived").mkdir(parents=True)
    (tmp_path / "config" / "derived" / "x.conf").write_text("t.x = 1\n")
    fresh.setenv("PCP_VAR_DIR", str(tmp_path))
    assert [d.name for d in default_registry()][2:] == ["t.x"]
    fresh.setattr(registry_module, "_default", None)
    fresh.setenv("PCP_VAR_DIR", str(tmp_path / "elsewhere"))
    names = [d.name for d in default_registry()]
    assert "kernel.cpu.util.user" in names and "t.x" not in names


# ------------------------------------------------------------ against PCP 6.0.3


@pytest.fixture(scope="module")
def reference_archive(tmp_path_factory) -> str:
    if not os.path.exists(PMINFO):
        pytest.skip(f"reference PCP 6 is not installed: no {PMINFO} (Debian package pcp)")
    return write_archive(str(tmp_path_factory.mktemp("derived") / "a"))


def _theirs(archive: str, config: str, *names: str) -> tuple[str, str]:
    """The reference pminfo -m over ARCHIVE with CONFIG: (stdout, stderr)."""
    env = dict(os.environ, PCP_DERIVED_CONFIG="", LC_ALL="C")
    run = subprocess.run(
        [PMINFO, "-m", "-c", config, "-a", archive, *names],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return run.stdout, run.stderr


def _ours(fresh, config: str) -> tuple[Registry, int, str]:
    fresh.setenv("PCP_DERIVED_CONFIG", "")
    reg = default_registry()
    count, text = _load(reg, config)
    return reg, count, text


def _pmids(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"^(\S+) PMID: (\S+)$", stdout, re.M))


def _our_pmids(reg: Registry, prefix: str) -> dict[str, str]:
    return {d.name: pmIDStr(d.pmid) for d in reg if d.name.startswith(prefix)}


@pytest.mark.interop
def test_syntax_errors_beside_pcp(reference_archive, fresh, tmp_path):
    lines = ["t.ok.first = 1 + 2", "t.ok.second = mkconst(1, type=u32) * -3"]
    for n, (text, _, _) in enumerate(ERRORS):
        if text.endswith("\\"):
            continue  # a continuation since PCP 6.2.2, unknown to 6.0.3
        lines.append(f"t.e{n} = {text}")
        if "matchinst" in text:  # PCP's lexer stays in its pattern mode after these
            lines.append(f"t.reset{n} = matchinst(/x/, a)")
    lines += ["t.ok.first = 3", "t.ok.last = a.b[x]"]
    config = tmp_path / "errors.conf"
    config.write_text("\n".join(lines) + "\n")
    stdout, stderr = _theirs(reference_archive, str(config), "t")
    reg, count, text = _ours(fresh, str(config))
    assert text == stderr
    assert _our_pmids(reg, "t.") == _pmids(stdout)
    assert count == len(_pmids(stdout)) == 2 + 1 + sum("matchinst" in e[0] for e in ERRORS)


@pytest.mark.interop
def test_configuration_files_beside_pcp(reference_archive, fresh, tmp_path):
    config = tmp_path / "format.conf"
    config.write_text(
        "# comment\n"
        "\n"
        "t.a = 1 + 2\n"
        "   \n"
        "  # indented\n"
        "  t.b   =  3 * 4 \n"
        "t.a(oneline) = the one line  \n"
        't.b( oneline ) = "quoted" trailing words\n'
        "t.c\n"
        "t.d = 1 #\n"
        "t.a = 3\n"
        "t..e = 1\n"
        "t.e. = 5\n"
        "(oneline) = x\n"
        "t.a(oneline = x\n"
        "t.a() = x\n"
        "t.a(colour) = red\n"
        "t.z(oneline) = x\n"
        "t.b(oneline) = again\n"
        "t.b(helptext) =  \n"
        "t.f = \n"
        "t.a(helptext) = 'what \\'a\\' means,\\\n"
        "  over two lines'\n"
        "t.g = 7"
    )
    stdout, stderr = _theirs(reference_archive, str(config), "t")
    reg, _, text = _ours(fresh, str(config))
    assert text == stderr
    assert _our_pmids(reg, "t.") == _pmids(stdout)


@pytest.mark.interop
def test_directories_and_paths_beside_pcp(reference_archive, fresh, tmp_path):
    top = tmp_path / "d"
    (top / "sub").mkdir(parents=True)
    for i, where in enumerate(["a", "sub/b", "c", "sub/d", "e"]):
        (top / where).write_text(f"w.m{i} = {i}\nw.bad{i} = {i} +\n")
    stdout, stderr = _theirs(reference_archive, f"{top}/c:{top}:", "w")
    reg, count, text = _ours(fresh, f"{top}/c:{top}:")
    assert text == stderr
    assert _our_pmids(reg, "w.") == _pmids(stdout) and count == 5  # c twice: a duplicate


@pytest.mark.interop
def test_an_unreadable_path_beside_pcp(reference_archive, fresh, tmp_path):
    _, stderr = _theirs(reference_archive, str(tmp_path / "none"), "event")
    _, count, text = _ours(fresh, str(tmp_path / "none"))
    assert text == "" and count == -2
    assert stderr.startswith(f"pminfo: derived configuration(s) error: {pmErrStr(count)}\n")


def test_anon_tree_is_none_and_text_parses_to_the_same_anon():
    reg = Registry()
    d = reg.register_anon("e.f", PMType.PM_TYPE_U32)
    assert d.tree is None and reg.register("e.g", d.text).tree == Anon("U32")


def test_contexts_share_the_global_definitions_until_one_changes():
    """A context starts with the global derived metrics as they stand; thousands of
    contexts (a web server's) share one copy of them, each copying only when it adds its
    own, and a later global registration reaches only contexts made after it."""
    from purepcp.pmapi.derived.registry import ContextRegistry, Registry

    base = Registry()
    base.register("g.one", "1")
    a, b = ContextRegistry(base), ContextRegistry(base)
    assert a._defs is b._defs  # one copy for both
    a.add("mine", "2")
    assert "mine" in a and "mine" not in b and "mine" not in base
    base.register("g.two", "3")
    assert "g.two" not in a and "g.two" not in b
    c = ContextRegistry(base)
    assert [d.name for d in c] == ["g.one", "g.two"]
    twin = c.copy()
    twin.add("other", "4")
    assert "other" not in c and [d.name for d in twin][-1] == "other"
    twin.discard("g.one")
    assert "g.one" in c and "g.one" in base and "g.one" not in twin


def test_a_registered_name_may_hold_a_dash():
    """pmRegisterDerived takes dstat.cpu-adv.usr (pcp-dstat registers it), though a
    component may not start with one.  Before: refused as illegal."""
    reg = Registry()
    reg.register("dstat.cpu-adv.usr", "1")
    for bad in ("-x", "a.-b", "1x"):
        with pytest.raises(DerivedError, match="illegal derived metric name"):
            reg.register(bad, "1")
