"""pmie's rule language front end: the scanner, the parser's trees, and its messages.

The interop tests run PCP's ``pmie -C`` (check only) on the same rule files as our
``check`` and compare what both print: a corpus of bad rules written here, and good
rule files from PCP itself (pmieconf's generated rules, the rules in PCP's QA scripts).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from purepcp.tools.pmie import check
from purepcp.tools.pmie import tree as t
from purepcp.tools.pmie.lexicon import Lexer, strtod
from tests.support.qa_archives import QA_DIRS, qa

PMIE = "/usr/bin/pmie"
PMIECONF = "/usr/bin/pmieconf"

needs_pmie = pytest.mark.skipif(
    not os.path.exists(PMIE), reason="PCP's pmie is not installed (Debian package pcp)"
)


# ---- scanner ---------------------------------------------------------------


def kinds(
    text: str, macros: dict[str, tuple[str, object]] | None = None
) -> list[tuple[str, object]]:
    """Every token of text, statement ends included, until input runs out."""
    out: list[str] = []
    lexer = Lexer(text, "f", (macros or {}).get, out.append)
    tokens = []
    while lexer.more():
        tok = lexer.token()
        tokens.append((tok.kind, tok.value))
    return tokens


def test_words_metrics_and_reserved_words():
    assert kinds("kernel.all.load #'1 minute' :host rate true;") == [
        ("IDENT", "kernel.all.load"),
        ("#", None),
        ("IDENT", "1 minute"),
        (":", None),
        ("IDENT", "host"),
        ("RATE", "rate"),
        ("TRU", "true"),
        ("EOF", None),
    ]


def test_aggregates_and_quantifiers_split_into_operator_and_axis():
    assert [k for k, _ in kinds("sum_inst some_host 50%_sample count_inst max_sample;")] == [
        "SUM_AGGR",
        "INST_DOM",
        "SOME_QUANT",
        "HOST_DOM",
        "NUMBER",
        "PCNT_QUANT",
        "TIME_DOM",
        "COUNT_AGGR",
        "INST_DOM",
        "MAX_AGGR",
        "TIME_DOM",
        "EOF",
    ]
    # not a known axis: an ordinary identifier
    assert kinds("sum_disk;")[0] == ("IDENT", "sum_disk")


def test_unit_words_and_the_units_slash():
    tokens = kinds("3 Kbytes / sec a / b 4 msecs;")
    assert [k for k, _ in tokens] == [
        "NUMBER",
        "SPACE_UNIT",
        "UNIT_SLASH",
        "TIME_UNIT",
        "IDENT",
        "/",
        "IDENT",
        "NUMBER",
        "TIME_UNIT",
        "EOF",
    ]
    assert tokens[1][1] == t.Units(dim_space=1, scale_space=1)
    assert tokens[8][1] == t.Units(dim_time=1, scale_time=2)


def test_numbers_as_pmie_scans_them():
    assert [v for k, v in kinds(".5 1e3 2.5E2 7;") if k == "NUMBER"] == [0.5, 1000.0, 250.0, 7.0]
    # a '-' right after digits is part of the number, which strtod then stops before
    assert kinds("3-2;")[:2] == [("NUMBER", 3.0), ("EOF", None)]
    assert [k for k, _ in kinds("@1..3;")] == ["@", "NUMBER", "INTERVAL", "NUMBER", "EOF"]
    assert strtod("1e-") == 1.0 and strtod("4.") == 4.0


def test_strings_escapes_and_operators():
    assert kinds(r'"a\tb\"c" -> & && | || == != <= >= < > ! ;') == [
        ("STRING", 'a\tb"c'),
        ("ARROW", None),
        ("SEQ", None),
        ("AND", None),
        ("ALT", None),
        ("OR", None),
        ("EQ_REL", None),
        ("NEQ_REL", None),
        ("LEQ_REL", None),
        ("GEQ_REL", None),
        ("<", None),
        (">", None),
        ("NOT", None),
        ("EOF", None),
    ]


def test_comments_and_statement_ends():
    assert kinds("a /* b */ // c\n} d ; . e") == [
        ("IDENT", "a"),
        ("EOF", None),
        ("IDENT", "d"),
        ("EOF", None),
    ]


def test_string_macros_expand_as_text_and_values_become_var():
    macros = {"m": ("string", "sample"), "n": ("value", t.Num(2.0))}
    assert kinds('$m.drift "x $m y" $n;', macros) == [
        ("IDENT", "sample.drift"),
        ("STRING", "x sample y"),
        ("VAR", ("n", t.Num(2.0))),
        ("EOF", None),
    ]


# ---- parser ------------------------------------------------------------------


def only(text: str) -> t.Statement:
    result = check(text, "f")
    assert result.messages == ()
    (stmt,) = result.statements
    return stmt


def test_arithmetic_precedence_and_associativity():
    expr = only("a + b * c - d > 1;").expr
    assert expr == t.Binary(
        ">",
        t.Binary(
            "-",
            t.Binary("+", t.Fetch("a"), t.Binary("*", t.Fetch("b"), t.Fetch("c"))),
            t.Fetch("d"),
        ),
        t.Num(1.0),
    )


def test_boolean_and_prefix_operators():
    expr = only("! a > 1 && some_inst b > 2 || rising c == 3;").expr
    assert expr == t.Binary(
        "||",
        t.Binary(
            "&&",
            t.Unary("!", t.Binary(">", t.Fetch("a"), t.Num(1.0))),
            t.Quantifier("some", "inst", t.Binary(">", t.Fetch("b"), t.Num(2.0))),
        ),
        t.Unary("rising", t.Binary("==", t.Fetch("c"), t.Num(3.0))),
    )


def test_aggregates_bind_tightly_and_count_takes_a_condition():
    assert only("sum_inst a * 2;").expr == t.Binary(
        "*", t.Aggregate("sum", "inst", t.Fetch("a")), t.Num(2.0)
    )
    assert only("count_host a > 2;").expr == t.Aggregate(
        "count", "host", t.Binary(">", t.Fetch("a"), t.Num(2.0))
    )
    assert only("rate a + 1;").expr == t.Binary("+", t.Unary("rate", t.Fetch("a")), t.Num(1.0))
    assert only("25 %_sample a @0..3 > 1;").expr == t.Quantifier(
        "pcnt", "sample", t.Binary(">", t.Fetch("a", samples=(0, 3)), t.Num(1.0)), 25.0
    )


def test_metric_qualifiers():
    assert only("m :h1 :h2 #i1 #'i 2' @3..1;").expr == t.Fetch(
        "m", ("h1", "h2"), ("i1", "i 2"), (1, 3)
    )


def test_units_are_scaled_to_canonical():
    num = only("x = 10 Kbyte / sec;").expr
    assert num == t.Num(10240.0, t.Units(dim_space=1, dim_time=-1, scale_time=3))
    assert only("x = 2 min;").expr == t.Num(120.0, t.Units(dim_time=1, scale_time=3))
    assert only("x = 1 Mcount;").expr == t.Num(1e6, t.Units(dim_count=1, scale_time=3))
    assert only("x = 5 msec ^ 2;").expr.value == pytest.approx(5e-6)


def test_rules_actions_and_holdoff():
    stmt = only('r = a > 1 -> print 5 min "x" "%v" & shell "s" | alarm "y";')
    assert stmt.name == "r" and not stmt.variable
    assert stmt.expr == t.Rule(
        t.Binary(">", t.Fetch("a"), t.Num(1.0)),
        t.ActionPair(
            "|",
            t.ActionPair(
                "&",
                t.Action("print", ("x", "%v"), t.Num(300.0, t.Units(dim_time=1, scale_time=3))),
                t.Action("shell", ("s",)),
            ),
            t.Action("alarm", ("y",)),
        ),
    )


def test_syslog_options_are_taken_from_the_strings():
    action = only('a > 1 -> syslog "-p" "daemon.err" "-tme" "msg";').expr.action
    assert action == t.Action("syslog", ("msg",), None, t.SyslogOptions(3 | 3 << 3, "me"))
    # the warning comes once the statement's end is read, with the next line's start
    result = check('a > 1 -> syslog "-ttag extra" "m";\nb > 1;', "f")
    assert result.messages == (
        "pmie: warning - near line 2 of file f",
        "Ignoring extra text ( extra) after -t tag in syslog action",
    )


def test_rulesets():
    expr = only('ruleset a > 1 -> print "a" else b > 2 -> print "b" unknown -> print "u";').expr
    assert expr == t.RuleSet(
        (
            t.Rule(t.Binary(">", t.Fetch("a"), t.Num(1.0)), t.Action("print", ("a",))),
            t.Rule(t.Binary(">", t.Fetch("b"), t.Num(2.0)), t.Action("print", ("b",))),
        ),
        unknown=t.Action("print", ("u",)),
    )


def test_constants_define_variables_and_fold():
    result = check('x = 2 + 3; s = "disk"; b = $x > 4; y = $x * 2; $s.dev > $y;', "f")
    assert result.messages == ()
    assert result.variables == {
        "x": t.Num(5.0),
        "s": t.Str("disk"),
        "b": t.Bool(True),
        "y": t.Num(10.0),
    }
    (rule,) = result.rules
    assert rule.name == "expr_1"
    assert rule.expr == t.Binary(">", t.Fetch("disk.dev"), t.Macro("y", t.Num(10.0)))


def test_unnamed_statements_take_pmies_generated_names():
    # as pmie -v names them: constants use up a number too
    result = check('x = 5;\n7;\na + 0;\nr = a > 1 -> print "hi";\nb;\n', "f")
    assert [(s.name, s.variable) for s in result.statements] == [
        ("x", True),
        ("expr_1", True),
        ("expr_2", False),
        ("r", False),
        ("expr_3", False),
    ]


def test_clock_macros_make_rules_and_delta_becomes_a_constant():
    result = check("m = $minute; delta = 30 sec; d = $delta;", "f")
    assert [(s.name, s.variable) for s in result.statements] == [
        ("m", False),
        ("delta", True),
        ("d", True),
    ]
    assert result.statements[0].expr == t.Macro("minute", t.Clock("minute"))


def test_error_positions_and_recovery():
    result = check("a >\n;\n\nb > 1;\nc + ;\n", "rules")
    assert result.messages == (
        "pmie: syntax error - near line 4 of file rules",
        "arithmetic expression expected to follow >",
        "pmie: syntax error - at end of file",
        "arithmetic expression expected to follow +",
    )
    # the first error's recovery skipped to the end of the next statement
    assert result.statements == () and result.status == 1
    assert check("x = 1; $y;", None).messages == ("undefined macro name $y",)
    assert check("a > 1 -> & print 'x';", None).messages[1] == "action expected to precede &"
    dup = check('r = a > 1 -> print "x"; r = b > 1 -> print "y";', "f")
    assert dup.messages == ("pmie: syntax error - at end of file", 'rule "r" multiply defined')


def test_a_dot_before_a_non_digit_hands_that_character_on():
    # pmie's scanner goes on with the character after '.', so "true .;" is a clean statement
    assert check("true .;", "f").messages == ()
    assert [k for k, _ in kinds("a .x;")] == ["IDENT", "x", "IDENT", "EOF"]


def test_axes_checked_as_the_tree_is_built():
    assert check("avg_sample 3 > 1;", "f").messages == (
        "pmie: syntax error - near line 1 of file f",
        "no time domain",
    )
    assert check("some_host some_host a > 1;", "f").messages[1] == "no host domain"
    assert check("some_sample a > 1;", "f").messages == ()
    assert check('"a" == 3;', "f").messages[1] == "operands have mixed string and arithmetic types"
    assert check("v = 1 > 0; rate $v;", "f").messages[1] == (
        'operator "rate" requires numeric valued argument'
    )


def test_reductions_that_need_no_lookahead_report_the_earlier_line():
    # nothing can follow "true" inside count_host, so yacc reduces before reading ';'
    assert check("count_host true;\nb;", "f").messages[0] == (
        "pmie: syntax error - near line 1 of file f"
    )
    # after a metric the scanner must look for ':', '#' or '@' first
    assert check("some_host some_host a > 1;\nb;", "f").messages[0] == (
        "pmie: syntax error - near line 2 of file f"
    )


def test_illegal_regular_expression():
    result = check('match_inst "(" a > 1;', "f")
    assert result.messages == ('illegal regular expression "("',)
    assert result.statements == () and result.status == 0


# ---- against PCP's pmie -C -----------------------------------------------------

BAD_RULES = r"""
a > ;
a > 3 -> ;
a > 3 -> print ;
> 3;
a + ;
(a > 3;
a > 3) ;
a 3;
a 3 + 4;
sum_inst c > ;
some_inst ;
a > 3 -> print "a" & ;
a #;
a :;
a @;
a @ 1..;
a > 3 && ;
a > 3 4;
a > 3 && 4;
a > 3 && + 4;
a > 3 && -> print "x";
a + * 2 > 1;
a > 3 -> print "x" & -> ;
( a 3 + 1 > 2 ;
a > 3 -> print "x" print "y";
x = 3; y = "$x";
$1abc;
a > $y;
a > 3 -> & print "x";
v = 3 > 2; $v -> print "x";
a > 3 -> print "x" | ;
ruleset a > 3 -> print "a" else ;
ruleset a > 3 -> print "a" unknown -> ;
match_inst ;
match_inst "a" ;
count_inst c > 2 %_inst ;
a > 3 -> shell 3 ;
r1 = a > 1 -> print "a"; r1 = a > 2 -> print "b";
x = 3; a.$x > 1;
x = 3; "abc $x";
a > 3 sec ^ ;
a @ x > 3;
c # 3 > 3;
c #red :gonzo > 3;
a > 1 /* unterminated
a > 1 -> print "unterminated
ruleset a > 1 -> print "a" otherwise -> print "d" unknown -> print "c";
ruleset a > 1 -> print "a" unknown print "c";
ruleset a > 1 else a > 2 -> print "b";
ruleset ;
ruleset + 3;
(a > 1 -> print "a");
("abc");
"abc" + 1;
rate ;
instant ;
- ;
! ;
rising ;
max_inst ;
min_inst + ;
count_inst ;
50 %_inst ;
a > 1 -> syslog "-p" "bogus.err" "b";
a > 1 -> syslog "-pfoo";
a > 1 -> syslog "-p";
a > 1 -> syslog "-x" "hello";
a > 1 -> print 5 ;
a > 1 -> print 5 sec;
a == ;
a <= >= 3;
a < 3 < 4;
x = 3 > 2; $x;
x = 1 +; y = 2;
x = 1;§y = $x + ;§z = $y;
a > 1 } a > 2;
a > 1; . a +;
a > 1 -> print "a";§.§a + ;
$'quoted name' > 1;
a > 1 -> print "a" "b" -> print "c";
nomatch_inst "(" c > 1;
match_inst 3 c > 1;
a [ 3;
a , 3;
a > 1 -> print "%v" & ;;;
12abc > 1;
a > 1 -> print `x`;
some_inst some_inst c > 1;
a >§3 +§;
a > 3 && && 2;
- + 3;
- * 3;
rate + 3;
a + - * 3;
a > 1 && || 2;
! && 2;
! > 2;
some_inst && 2;
some_inst > 2;
count_inst %_inst 3;
count_inst && 2;
a > 1 -> print "a" & | print "b";
a > ( + 3;
match_inst "a" && 2;
match_inst "a" > 2;
a * * 2;
a * + 2;
a == == 2;
a == + 2;
a > 1 -> syslog "-t" "-p" "x";
x = "a"; y = "$x.$x"; $y > 1;
x = "1 +"; $x 2 > 1;
true .;
true .x;
a @ 1 . . 2;
true ."a";
count_host true;§a > 1;
avg_sample 3 > 1;
some_host some_host a > 1;
"a" == 3;
v = 1 > 0; rate $v;
falling "a" == 3 Kbyte / sec "s" rate
"""

# a, b, c, s are metrics of QA's ok-foo archive, so PCP binds them without complaint
_METRICS = {"a": "sample.drift", "b": "sample.bin", "c": "sample.colour", "s": "sample.seconds"}


def bad_rules() -> list[str]:
    """The bad corpus, one rule file per line ('§' for a newline)."""
    swap = re.compile(r"(?<![\w.$'\"])([abcs])(?![\w'])")
    files = []
    for line in BAD_RULES.strip().splitlines():
        text = swap.sub(lambda m: _METRICS[m.group(1)], line)
        files.append(text.replace("§", "\n") + "\n")
    return files


_BINDING = re.compile(
    r"^(pmie: metric .* not in namespace|pmLookupName failed"
    r"|pmNewContext|pmie: cannot open archive|.* does not \(currently\) have instance"
    r"|pmie: metric .* has no instances)"
)


def pcp_check(path: Path, archive: str, cwd: Path) -> tuple[str, int | None]:
    """PCP's pmie -C on one rule file: stderr less metric binding lines, and status
    (None when a metric failed to bind: that counts as an error we do not see yet)."""
    done = subprocess.run(
        [PMIE, "-C", "-c", path.name, "-a", archive],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    all_lines = done.stderr.splitlines()
    lines = [line for line in all_lines if not _BINDING.match(line)]
    return "\n".join(lines), done.returncode if len(lines) == len(all_lines) else None


def our_check(path: Path) -> tuple[str, int | None]:
    result = check(path.read_text(encoding="latin-1"), path.name)
    return "\n".join(result.messages), result.status


@pytest.fixture(scope="module")
def bad_corpus(
    tmp_path_factory,
) -> list[tuple[str, tuple[str, int | None], tuple[str, int | None]]]:
    """Each bad rule file with PCP's and our check of it."""
    if not os.path.exists(PMIE):
        pytest.skip("PCP's pmie is not installed (Debian package pcp)")
    archive = qa("ok-foo")
    top = tmp_path_factory.mktemp("pmie_bad")
    out = []
    for n, text in enumerate(bad_rules()):
        path = top / f"bad{n}.rules"
        path.write_text(text, encoding="latin-1")
        pcp, ours = pcp_check(path, archive, top), our_check(path)
        out.append((text, pcp, ours if pcp[1] is not None else (ours[0], None)))
    return out


# semantic checks that need the metrics' descriptors: the evaluation stage's work
NEEDS_DESCRIPTORS = {
    'sample.drift != "a";\n',
    'match_inst "^r" sample.colour > 1 -> print "x";\n',
}


@pytest.mark.interop
@needs_pmie
def test_bad_rules_get_pmies_messages(bad_corpus):
    differ = [(text, pcp, ours) for text, pcp, ours in bad_corpus if pcp != ours]
    assert differ == []
    assert len(bad_corpus) > 100


@pytest.mark.interop
@needs_pmie
@pytest.mark.parametrize("text", sorted(NEEDS_DESCRIPTORS))
def test_semantic_checks_left_to_evaluation(text, tmp_path):
    path = tmp_path / "s.rules"
    path.write_text(text)
    assert pcp_check(path, qa("ok-foo"), tmp_path)[0] != ""
    assert our_check(path) == ("", 0)


# the random corpus: words and fragments of the language, strung together
_SIMPLE_WORDS = (
    'a c b 3 2.5 sec Kbyte / + - * > < == != >= <= && || ! -> & | ( ) "s" print'
    " syslog some_inst all_sample sum_inst count_host %_inst rate instant rising falling"
    ' match_inst "^a" ruleset else unknown otherwise :gonzo #red @0..2 @ true false $v $x'
    " $s ^ 2 .. .5 avg_sample $minute $delta } . @1 = unknown"
)
WORDS = [
    *_SIMPLE_WORDS.split(),
    'shell 5 sec "x"',
    "x =",
    "50 %_inst",
    "/* c */",
    "//c\n",
    "\n",
    ";",
    "3 Kbyte / sec",
    "msec ^ 2",
    "'a b'",
    "#'red'",
    '"$s"',
    'nomatch_inst "("',
    'x = "sample"',
    "y = 3 >",
]
# messages that need the metrics' descriptors (the evaluation stage's checks)
_DESCRIPTOR_CHECKS = re.compile(
    r"domains have different size|single boolean value|arithmetic \(not|does not \(currently\)"
)


def random_rules(seed: int, count: int) -> list[str]:
    import random

    rng = random.Random(seed)
    files = []
    for _ in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 20)))
        body = re.sub(r"(?<![\w.$'\"])([abc])(?![\w'])", lambda m: _METRICS[m.group(1)], body)
        tail = rng.choice(["", ";", "\n", ';\nsample.drift > 1 -> print "ok";\n'])
        files.append('v = 2; s = "sample.drift";\n' + body + tail)
    return files


@pytest.fixture(scope="module")
def random_corpus(
    tmp_path_factory,
) -> list[tuple[str, tuple[str, int | None], tuple[str, int | None]]]:
    """Random rule files with PCP's and our check (PCP's crashes and descriptor checks left out)."""
    if not os.path.exists(PMIE):
        pytest.skip("PCP's pmie is not installed (Debian package pcp)")
    archive = qa("ok-foo")
    top = tmp_path_factory.mktemp("pmie_random")
    out = []
    for n, text in enumerate(random_rules(20261130, 400)):
        path = top / f"r{n}.rules"
        path.write_text(text, encoding="latin-1")
        pcp = pcp_check(path, archive, top)
        if (pcp[1] is not None and pcp[1] < 0) or _DESCRIPTOR_CHECKS.search(pcp[0]):
            continue
        ours = our_check(path)
        out.append((text, pcp, ours if pcp[1] is not None else (ours[0], None)))
    return out


@pytest.mark.interop
@needs_pmie
def test_random_rules_get_pmies_messages(random_corpus):
    differ = [(text, pcp, ours) for text, pcp, ours in random_corpus if pcp != ours]
    assert differ == []
    assert len(random_corpus) > 300


def pmieconf_rules(top: Path) -> list[Path]:
    """pmieconf's generated rule files: the default set and every rule enabled."""
    default, every = top / "default.rules", top / "all.rules"
    subprocess.run(
        [PMIECONF, "-F", "-f", str(default)], capture_output=True, check=True, timeout=120
    )
    subprocess.run([PMIECONF, "-F", "-f", str(every)], capture_output=True, check=True, timeout=120)
    subprocess.run(
        [PMIECONF, "-f", str(every), "modify", "all", "enabled", "yes"],
        capture_output=True,
        check=True,
        timeout=120,
    )
    return [default, every]


_HEREDOC = re.compile(r"<<\s*['\"]?([A-Za-z][\w-]*)['\"]?[^\n]*\n(.*?)\n\1\n", re.S)


def qa_rule_files(top: Path) -> list[Path]:
    """Rules in PCP's QA scripts that run pmie: their here-documents that look like rules."""
    scripts = next((d for d in QA_DIRS if (d / "521").exists()), None)
    if scripts is None:
        return []
    found = []
    for script in sorted(scripts.glob("[0-9]*")):
        if script.suffix or not script.is_file():
            continue
        text = script.read_text(encoding="latin-1")
        if not re.search(r"pmie\b.*-c", text):
            continue
        for n, doc in enumerate(_HEREDOC.finditer(text)):
            body = doc.group(2)
            if "->" in body or re.search(r"^\s*\w[\w.]*\s*=", body, re.M):
                path = top / f"qa{script.name}_{n}.rules"
                path.write_text(body + "\n", encoding="latin-1")
                found.append(path)
    return found


@pytest.fixture(scope="module")
def good_corpus(
    tmp_path_factory,
) -> list[tuple[Path, tuple[str, int | None], tuple[str, int | None], int]]:
    if not os.path.exists(PMIE) or not os.path.exists(PMIECONF):
        pytest.skip("PCP's pmie and pmieconf are not installed (Debian package pcp)")
    archive = qa("ok-foo")
    top = tmp_path_factory.mktemp("pmie_good")
    out = []
    for path in pmieconf_rules(top) + qa_rule_files(top):
        rules = len(check(path.read_text(encoding="latin-1"), path.name).rules)
        pcp, ours = pcp_check(path, archive, top), our_check(path)
        out.append((path, pcp, ours if pcp[1] is not None else (ours[0], None), rules))
    return out


@pytest.mark.interop
@needs_pmie
def test_pcps_own_rule_files_parse_alike(good_corpus):
    differ = [(path.name, pcp, ours) for path, pcp, ours, _ in good_corpus if pcp != ours]
    assert differ == []


@pytest.mark.interop
@needs_pmie
def test_pmieconf_rules_parse_clean(good_corpus):
    for path, pcp, ours, rules in good_corpus[:2]:
        assert ours[0] == "" and pcp[0] == ""
        assert rules > 10, path.name
