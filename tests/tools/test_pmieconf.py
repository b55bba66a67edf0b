"""pmieconf: the template language's words, values and $name$ expansion, rule lookup and
changes, template errors and the saved settings read back; then whole runs beside PCP 6's
own pmieconf (interop) on PCP's templates, QA's and ours: the same output, messages,
exit status and generated file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.tools.pmieconf import cli, pmiefile, scanner, values
from purepcp.tools.pmieconf.model import ConfError, Rule, Var, VarType
from purepcp.tools.pmieconf.store import Store
from purepcp.tools.pmieconf.templates import read_path

PCP_PMIECONF = "/usr/bin/pmieconf"
PCP_RULES = "/var/lib/pcp/config/pmieconf"
QA_PCONF = "/opt/pcp-testsuite/var/lib/pcp/testsuite/pconf"
HEADER = "#pmieconf-rules 1\n"


# -- words --------------------------------------------------------------------------------


def _words(text: str, end: str = "") -> list[str | int]:
    f = scanner.Stream(text)
    where = scanner.Position("f", 1)
    found: list[str | int] = []
    while True:
        word = scanner.read_token(f, end, where)
        found.append(word)
        if isinstance(word, int):
            return found


def test_words_strings_comments_and_single_characters():
    text = 'rule a.b # note\n  help="two\nlines \\"q\\"" enabled=yes;'
    assert _words(text) == ["rule", "a.b", "help", "=", 'two\nlines "q"', "enabled", "=",
                            "yes", ";", scanner.TOKEN_END]  # fmt: skip


def test_command_words_end_at_the_line_and_report_the_end_of_input():
    assert _words("list all\nquit\n", "\n") == ["list", "all", scanner.TOKEN_END]
    assert _words("list", "\n") == ["list", scanner.TOKEN_EOF]


def test_an_unclosed_string_names_the_line():
    where = scanner.Position("f", 3)
    with pytest.raises(scanner.TokenError) as info:
        scanner.read_token(scanner.Stream('"abc'), "", where)
    assert info.value.message == (
        'file parsing error.\n    line number: 3 ("f")\n    expected: end-of-string\n    found: abc'
    )


def test_c_number_prefixes():
    assert scanner.strtod("1.5e3x") == (1500.0, "x")
    assert scanner.strtol(" -42z") == (-42, "z")
    assert scanner.strtoul("-1") == (2**64 - 1, "")
    assert scanner.atoi("7x") == 7 and scanner.atoi("x") == 0


# -- values -------------------------------------------------------------------------------


def _var(vtype: VarType, data: str) -> Var:
    return Var("v", vtype, data=data)


def test_host_lists_become_pmie_host_qualifiers():
    hosts = _var(VarType.HOSTLIST, "a 'b c' d")
    assert values.shown(hosts, False) == ":'a' :'b c' :'d'"
    assert values.shown(hosts, True) == "\"a 'b c' d\""
    assert values.shown(_var(VarType.INSTLIST, "eth0"), False) == "#'eth0'"
    assert values.shown(_var(VarType.HOSTLIST, ""), False) == ""


def test_numbers_print_as_c_does():
    assert values.shown(_var(VarType.PERCENT, "81.500"), True) == "81.5%"
    assert values.shown(_var(VarType.PERCENT, "81.500"), False) == "81.5"
    assert values.shown(_var(VarType.UNSIGNED, "-1"), False) == str(2**64 - 1)
    assert values.shown(_var(VarType.DOUBLE, "1e3"), False) == "1000"


def test_checks_by_type():
    where = scanner.Position()
    assert values.checked(VarType.PERCENT, "t", "81.5%", where) == "81.5"
    with pytest.raises(
        ConfError, match=re.escape("t's value is invalid.\n    It should be a percentage")
    ):
        values.checked(VarType.PERCENT, "t", "101", where)
    with pytest.raises(ConfError, match="closing single quote"):
        values.checked(VarType.HOSTLIST, "h", "a 'b", where)
    with pytest.raises(ConfError, match='expected yes or no, got "maybe"'):
        values.checked(VarType.SHELL, "s", "maybe", where)


def test_expansion_nests_and_reports_unknown_names():
    g = Rule(Var("global", VarType.STRING, is_global=True))
    g.vars.append(Var("global.x", VarType.STRING, data="[$y$]"))
    rule = Rule(Var("a.b", VarType.RULE, data="sum"))
    rule.vars.append(Var("y", VarType.STRING, data="why"))
    assert values.expand(rule, g, "$x$ \\$ $enabled$ $default$") == "[why] $ yes sum"
    assert values.expand(rule, g, "tail $open") == "tail open"
    with pytest.raises(ConfError, match=r'variable "\$nope\$" in a.b is undefined'):
        values.expand(rule, g, "$nope$")


def test_enumerated_lists_split_as_pcp_splits_them():
    assert pmiefile._list_items("a 'b c' d") == ["a", "'b c'", "d"]
    assert pmiefile._list_items(" a") == ["", "a"]
    assert pmiefile._enumerate_words("hosts disks") == ["hosts", "disks"]
    assert pmiefile._enumerate_words("hosts ") == ["hosts", ""]
    assert pmiefile._split_caret("a^b/^cd") == 'a" "b/^d'


# -- templates and the store --------------------------------------------------------------


RULES = (
    HEADER
    + 'string global.delta default = "1 min";\n'
    + 'rule g.one summary = "one" predicate = "x $delta$ > $t$" enabled = no;\n'
    + "percent t default = 50;\n"
    + 'rule g.two summary = "two" predicate = "y";\n'
)


def _store(tmp_path: Path, text: str = RULES) -> Store:
    (tmp_path / "rules").write_text(text)
    store = Store()
    read_path(store, str(tmp_path / "rules"))
    store.sort()
    return store


def test_rules_and_groups_match(tmp_path):
    store = _store(tmp_path)
    assert [r.name for r in store.rules] == ["global", "g.one", "g.two"]
    assert [r.name for r in store.matching("g", False)] == ["g.one", "g.two"]
    assert [r.name for r in store.matching("x", True)] == ["g.one", "g.two"]
    with pytest.raises(ConfError, match='no group or rule names match "h"'):
        store.matching("h", False)


def test_a_global_changed_for_one_rule_is_copied_into_it(tmp_path):
    store = _store(tmp_path)
    one = store.find_or_fail("g.one")
    store.change(one, "delta", "5 min")
    assert [v.name for v in one.vars] == ["t", "delta"]
    assert store.globals.vars[0].data == "1 min"
    store.undo(one, "delta")
    assert [v.name for v in one.vars] == ["t"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("foo x.y;\n", "expected: type keyword\n    found: foo"),
        ("rule x.y default moo;\n", "expected: =\n    found: moo"),
        ("rule x.y bogus = 1;\n", "expected: attribute keyword\n    found: bogus"),
        ("rule x.y enabled = yes\n", "expected: attribute or ';'\n    found: end-of-file"),
        ("string bloo;\n", 'no rule defined, cannot make sense of string "bloo" without one'),
        ("rule global.x;\n", 'rule name may not be "global" - this is reserved'),
    ],
)
def test_template_errors(tmp_path, body, message):
    with pytest.raises(ConfError) as info:
        _store(tmp_path, HEADER + body)
    assert message in info.value.message


def test_a_file_without_the_header_is_passed_over(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "Makefile").write_text("all:\n\ttrue\n")
    store = Store()
    read_path(store, str(tmp_path / "rules"))
    assert len(store.rules) == 1


def test_saved_settings_read_back(tmp_path):
    store = _store(tmp_path)
    saved = tmp_path / "saved.pmie"
    rules = str(tmp_path / "rules")
    saved.write_text(
        f"// pmieconf-pmie 1 {rules}\n// 1 g.one enabled = yes\n// 1 g.one t = 75%\n"
        "// 2 g.two enabled = no\n// end\n\n// 1 gone.rule\nkept;\n"
    )
    pmie = pmiefile.PmieFile(str(saved))
    assert pmie.read(store, rules) == ""
    one = store.find_or_fail("g.one")
    assert one.me.enabled and one.vars[0].data == "75"
    assert pmie.kept == ["// // 1 gone.rule (deprecated, rule definition no longer exists)\n",
                         "// kept;\n"]  # fmt: skip
    pmie.write(store, rules, "pmieconf", False)
    text = saved.read_text()
    assert "// 1 g.one t = 75%\n" in text
    assert "g.one = \nx 1 min > 75 -> " not in text  # no actions declared: no arrow
    assert "delta = 1 min;\ng.one = \nx 1 min > 75;\n" in text


def test_usage_errors_exit_1(capsys):
    assert cli.main(["-F", "-f", "/dev/null", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pmieconf: cannot use -F option with a command\nUsage: pmieconf")
    assert "\nCommands:\n  1. help" in err


# -- beside PCP's pmieconf ----------------------------------------------------------------

needs_pcp = pytest.mark.skipif(
    not os.path.exists(PCP_PMIECONF), reason="PCP's pmieconf is not installed (Debian: pcp)"
)
_STAMP = re.compile(r"(generated by pmieconf on:  ).*")


def _run_side(cmd: list[str], where: Path, args: list[str], setup: str | None, stdin: str):
    if where.exists():
        shutil.rmtree(where)
    where.mkdir()
    if setup is not None:
        (where / "F").write_text(setup)
    env = {k: v for k, v in os.environ.items() if k != "PMIECONF_PATH"}
    done = subprocess.run(
        [*cmd, *args], cwd=where, input=stdin.encode(), capture_output=True, env=env,
        timeout=60, check=False,
    )  # fmt: skip
    made = where / "F"
    text = _STAMP.sub(r"\1DATE", made.read_text(encoding="latin-1")) if made.exists() else None
    return done.stdout, done.stderr, done.returncode, text


def _both(tmp_path: Path, args: list[str], setup: str | None = None, stdin: str = ""):
    """PCP's and our results of one run (in the same directory, one after the other)."""
    run = tmp_path / "run"
    pcp = _run_side([PCP_PMIECONF], run, args, setup, stdin)
    ours = _run_side([sys.executable, "-m", "purepcp.tools.pmieconf"], run, args, setup, stdin)
    return pcp, ours


COMMANDS = [
    ["-F"],
    ["list", "all"],
    ["-v", "list", "all"],
    ["help", "all"],
    ["rules", "enabled"],
    ["groups"],
    ["status"],
    ["list", "all", "predicate"],
    ["modify", "cpu", "delta", "3 min"],
    ["modify", "global", "hosts", "a 'b c' d"],
    ["enable", "all"],
    ["disable", "global"],
    ["modify", "cpu.util", "threshold", "200"],
    ["modify", "cpu.util", "help", "x"],
    ["list", "nosuch"],
    ["bogus"],
    ["-c", "status"],
    ["-c", "enable", "all"],
    ["-c"],
    ["-?"],
    ["-x", "--rules"],
    ["-F", "list"],
    ["a", "b", "c", "d", "e", "f"],
    ["modify", "a", "b", "c", "d"],
    ["7", "cpu"],
    ["undo", "cpu.util", "threshold"],
]


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_commands_on_pcps_templates(tmp_path, args):
    pcp, ours = _both(tmp_path, ["-f", "F", *args])
    assert ours == pcp


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("rules", ["ours", "qa"])
@pytest.mark.parametrize("args", [["-F"], ["list", "all"], ["help", "all"], ["enable", "all"]])
def test_commands_on_other_templates(tmp_path, rules, args):
    path = cli.OUR_RULES if rules == "ours" else QA_PCONF
    if not os.path.isdir(path):
        pytest.skip("PCP's QA templates are not installed (Debian: pcp-testsuite)")
    pcp, ours = _both(tmp_path, ["-r", path, "-f", "F", *args])
    assert ours == pcp


@needs_pcp
@pytest.mark.interop
def test_an_interactive_session_and_its_file_read_back(tmp_path):
    session = (
        'modify cpu.util threshold 80\nm cpu delta "3 min"\nm global hosts "h1 h2"\n'
        "enable all\ndisable cpu.util\nlist cpu.util\nundo cpu.util\nlist .\n"
        "m memory syslog_action no\nm memory user_action yes\nverbose on\nl memory\n"
        'bogus\nlist\nmodify cpu.util threshold abc\n"open\na b c d e f\nhelp\nq\n'
    )
    pcp, ours = _both(tmp_path, ["-f", "F"], stdin=session)
    assert ours == pcp
    assert pcp[3] is not None
    saved = pcp[3]
    for args in (["list", "all"], ["-F"], ["rules", "disabled"]):
        pcp, ours = _both(tmp_path, ["-f", "F", *args], setup=saved)
        assert ours == pcp


BAD_TEMPLATES = [
    "string global.foo default = 100;\n",
    "foo global.bloo default = moo;\n",
    "string global.bloo\n\tdefault moo;\n",
    "percent global.bloo sometext = blat;\n",
    "percent global.joe enabled = yes\n",
    'string bloo default "x";\n',
    'rule x.y summary = "s" predicate = "a" help = "";\n',
    'rule x.y summary = "s" predicate = "a";\npercent t default = 200;\n',
    'rule x.y summary = "s" predicate = "a" version = 1x;\n',
    'rule x.y summary = "s" predicate = "abc\n',
    'rule x.y summary = "s" predicate = "a" enumerate = "delta";\n',
    'rule x.y summary = "s" predicate = "$nope$";\n',
]


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("body", BAD_TEMPLATES)
def test_bad_templates(tmp_path, body):
    bad = tmp_path / "bad"
    bad.write_text(HEADER + "\n" + body)
    rules = f"{PCP_RULES}/global:{bad}"
    pcp, ours = _both(tmp_path, ["-r", rules, "-f", "F", "-F"])
    assert ours == pcp


BAD_FILES = [
    "// pmieconf-pmie 0 RULES\n// end\n",
    "// pmieconf-pmie 1 /no/such\n// end\n",
    "// pmieconf-pmie 1 RULES\n// 1 cpu.util threshold 20\n// end\n",
    "// pmieconf-pmie 1 RULES\n// x cpu.util threshold = 20\n// end\n",
    '// pmieconf-pmie 1 RULES\n// 1 cpu.util threshold = "20\n// end\n',
    "// pmieconf-pmie 1 RULES\n// 1 cpu.util nosuch = 20\n// end\n",
    "// pmieconf-pmie 1 RULES\n// 1 cpu.util threshold = 20\n",
    "hello\n",
    "// pmieconf-pmie 1 RULES\n// 1 cpu.util enabled = maybe\n// end\n",
    "// pmieconf-pmie 1 /tmp\n// 1 cpu.util enabled = no\n// end\n",
]


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("text", BAD_FILES)
def test_bad_or_foreign_pmie_files(tmp_path, text):
    pcp, ours = _both(
        tmp_path, ["-f", "F", "list", "cpu.util"], setup=text.replace("RULES", PCP_RULES)
    )
    assert ours == pcp


@needs_pcp
@pytest.mark.interop
@pytest.mark.parametrize("pmie", ["/usr/bin/pmie", "ours"])
def test_our_templates_give_rules_pmie_accepts(tmp_path, pmie):
    out = tmp_path / "ours.pmie"
    subprocess.run([PCP_PMIECONF, "-r", cli.OUR_RULES, "-f", str(out), "enable", "all"], check=True)
    cmd = [pmie] if pmie != "ours" else [sys.executable, "-m", "purepcp.tools.pmie"]
    if pmie != "ours" and not os.path.exists(pmie):
        pytest.skip("PCP's pmie is not installed (Debian: pcp)")
    done = subprocess.run([*cmd, "-C", str(out)], capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
