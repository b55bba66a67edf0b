"""The pmseries query language (purepcp.series.parse, purepcp.series.window): the trees read
from queries, PCP 6.0.3's messages for queries it refuses (observed with its pmseries and
in its QA outputs), the canonical texts whose SHA-1 is an expression's series id (ids
from PCP's QA outputs), and the values of time windows."""

from __future__ import annotations

import hashlib
import random
import re

import pytest

from purepcp.pmapi.timewindow import NSEC, PM_MAX_TIME_T
from purepcp.pmapi.units import Units
from purepcp.series.parse import (
    And,
    Arith,
    Binary,
    Call,
    Func,
    NameKind,
    Number,
    Op,
    Or,
    Qualifier,
    Query,
    QuerySyntaxError,
    ValueKind,
    Vector,
    canonical,
    expr_sid,
    name_kind,
    parse,
    parse_units,
    parse_window,
)
from purepcp.series.window import TIME_KEYWORDS, Timing, Window, WindowError, resolve_window
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_reference import (
    load_archive,
    pcp_pmseries,
    require_pcp_series,
    small_archive,
)


def error(text: str) -> str:
    """The message parse(TEXT) raises (the test fails if it parses)."""
    with pytest.raises(QuerySyntaxError) as caught:
        parse(text)
    return caught.value.message


def at(text: str, column: int, reason: str = "syntax error") -> str:
    """PCP's message for TEXT (no tabs or newlines in it) with the caret at COLUMN."""
    return f"cannot parse given string\n\n{text}\n{' ' * column}^ -- {reason}\n"


def shape(node) -> str:
    """An expression with every binary operation in parentheses, to show the tree."""
    match node:
        case Binary(op=op, left=left, right=right):
            return f"({shape(left)}{op.value}{shape(right)})"
        case Number(text=text):
            return text
        case Vector(name=name):
            return name
        case Call(func=func, arg=arg):
            return f"{func.value}({shape(arg)})"
        case And(left=left, right=right):
            return f"({shape(left)} AND {shape(right)})"
        case Or(left=left, right=right):
            return f"({shape(left)} OR {shape(right)})"
        case Qualifier(name=name):
            return name
    raise AssertionError(node)


# ------------------------------------------------------------------ metric names, globs


@pytest.mark.parametrize(
    ("text", "glob"),
    [
        ("kernel.all.load", False),
        ("kernel.all.l*d", True),
        ("kernel*pswitch", True),
        ("disk.partitions.blk*", True),
        ("a\\*b", False),  # \* is a star, not a pattern
        ("a%*b", False),  # so is %*
        ("a\\*b*", False),  # only the first star counts, as in query_parser.y
        ("a*b\\*", True),
        ("A_1.b%c\\d", False),
    ],
)
def test_metric_names_and_globs(text, glob):
    query = parse(text)
    assert query == Query(Vector(text))
    assert query.expr.glob is glob
    assert not query.has_function and not query.wants_values


@pytest.mark.parametrize(
    ("text", "column"),
    [("*.load", 0), ("_a", 0), ("1a", 0), ("kernel.all.!bang", 11), ("a$b", 1), ("a b", 2)],
)
def test_bad_metric_names(text, column):
    assert error(text) == at(text, column)


def test_qa_1212_messages():
    """PCP's QA 1212: its parse error messages for a bad name and a bad window."""
    assert error("kernel.all.!bang") == (
        "cannot parse given string\n\nkernel.all.!bang\n           ^ -- syntax error\n"
    )
    assert error("kernel.all.load[badness]") == (
        "cannot parse given string\n\nkernel.all.load[badness]\n                ^ -- syntax error\n"
    )


def test_qa_1601_message():
    """PCP's QA 1601: /series/query?expr=(disk.all.re answers this message."""
    assert error("(disk.all.re") == "cannot parse given string\n\n(disk.all.re\n^ -- syntax error\n"


def test_bad_brace_from_the_notes():
    assert error("bad{") == "cannot parse given string\n\nbad{\n   ^ -- syntax error\n"


# ------------------------------------------------------------------ qualifiers


@pytest.mark.parametrize(
    ("name", "kind", "label"),
    [
        ("instance.name", NameKind.INSTANCE, None),
        ("inst.name", NameKind.INSTANCE, None),
        ("i.name", NameKind.INSTANCE, None),
        ("i.anything", NameKind.INSTANCE, None),  # only the prefix counts
        ("metric.name", NameKind.METRIC, None),
        ("m.name", NameKind.METRIC, None),
        ("context.name", NameKind.CONTEXT, None),
        ("source.name", NameKind.CONTEXT, None),
        ("source.path", NameKind.CONTEXT, None),
        ("c.name", NameKind.CONTEXT, None),
        ("s.name", NameKind.CONTEXT, None),
        ("label.hostname", NameKind.LABEL, "hostname"),
        ("l.hostname", NameKind.LABEL, "hostname"),
        ("hostname", NameKind.LABEL, "hostname"),
        ("label.l.x", NameKind.LABEL, "l.x"),
        ("instance.", NameKind.LABEL, "instance."),  # a prefix needs a name after it
        ("i.", NameKind.LABEL, "i."),
        ("l.", NameKind.LABEL, "l."),
        ("metrics.x", NameKind.LABEL, "metrics.x"),
    ],
)
def test_qualifier_name_kinds(name, kind, label):
    assert name_kind(name) == (kind, label)
    test = parse(f'a{{{name} == "x"}}').expr.quals
    assert (test.kind, test.label, test.name) == (kind, label, name)


def test_quoted_qualifier_name_has_no_kind():
    """PCP 6.0.3 parses a quoted name and then crashes evaluating it."""
    test = parse('{"hostname" == "a"}').expr.quals
    assert test == Qualifier("hostname", Op.EQ, "a", ValueKind.STRING, name_quoted=True)
    assert test.kind is None and test.label is None


@pytest.mark.parametrize(
    ("op_text", "op"),
    [
        ("==", Op.EQ),
        ("!=", Op.NEQ),
        (":", Op.GLOB),
        ("~~", Op.GLOB),
        ("=~", Op.REQ),
        ("!~", Op.RNE),
        ("<", Op.LT),
        ("<=", Op.LEQ),
        (">", Op.GT),
        (">=", Op.GEQ),
    ],
)
def test_qualifier_operators(op_text, op):
    value = "1" if op in (Op.LT, Op.LEQ, Op.GT, Op.GEQ) else '"x.*"'
    test = parse(f"a{{b{op_text}{value}}}").expr.quals
    assert test.op is op
    assert test.value == value.strip('"')


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [('"a b"', ValueKind.STRING, "a b"), ("bozo", ValueKind.NAME, "bozo"),
     ("true", ValueKind.NAME, "true"), ("42", ValueKind.INTEGER, "42"),
     ("2.5", ValueKind.DOUBLE, "2.5"), ('""', ValueKind.STRING, "")],
)  # fmt: skip
def test_qualifier_values(value, kind, text):
    test = parse(f"a{{b == {value}}}").expr.quals
    assert (test.value_kind, test.value) == (kind, text)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ('a{b < "x"}', 6),  # orderings take numbers only
        ("a{b >= c}", 7),
        ("a{b =~ 1}", 7),  # regexes take strings and names only
        ("a{b !~ 2.5}", 7),
        ("a{b = 1}", 4),  # = alone is an assignment
        ("a{b ~ 1}", 4),  # ~ alone is an illegal character
        ("a{b ! 1}", 4),
        ("a{b}", 3),
        ("a{1 == b}", 2),
        ("a{b == }", 7),
        ("a{b == c d}", 9),
        ("a{}", 2),
        ("a{b:1", 4),  # the end: the caret is on the last character
        ("a{b:1}{c:2}", 6),
        ("a{b:1 & c:2}", 6),
        ("a{b:1 | c:2}", 6),
        ("a{b == 5m}", 7),  # a range is not a value
        ('a{units == "x"}', 2),  # type, semantics and units are words of their own
        ('a{count == "x"}', 2),  # and so are the window's keywords
        ("a{b == rate(}", 7),
    ],
)
def test_bad_qualifiers(text, column):
    assert error(text) == at(text, column)


@pytest.mark.parametrize(
    ("quals", "tree"),
    [
        ("a:1, b:2 || c:3", "(a AND (b OR c))"),  # "," is the lowest
        ("a:1 || b:2, c:3", "((a OR b) AND c)"),
        ("a:1 || b:2 && c:3", "((a OR b) AND c)"),  # && and || are equal, left first
        ("a:1 && b:2 || c:3", "((a AND b) OR c)"),
        ("a:1, b:2, c:3", "((a AND b) AND c)"),
        ("a:1 && b:2 && c:3 || d:4", "(((a AND b) AND c) OR d)"),
    ],
)
def test_boolean_precedence(quals, tree):
    assert shape(parse(f"m{{{quals}}}").expr.quals) == tree


def test_or_between_braces_is_an_error():
    assert error('{a:"x"} || {b:"y"}') == at('{a:"x"} || {b:"y"}', 8)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{hostname == "bozo"}', '"bozo"'),  # a label's string value: its JSON text
        ('{l.hostname == "bozo"}', '"bozo"'),
        ("{hostname == bozo}", "bozo"),  # a bare word is looked up as written
        ("{l.x == 1000}", "1000"),
        ("{l.x == false}", "false"),
        ('{instance.name == "1 minute"}', "1 minute"),
        ('{source.name == "/tmp/a"}', "/tmp/a"),
        ('{metric.name == "kernel.all.load"}', "kernel.all.load"),
    ],
)
def test_match_text(text, match):
    assert parse(text).expr.quals.match_text == match


def test_strings_have_no_escapes():
    """A backslash is just a character; the next quote ends the string."""
    test = parse('a{b=="x\\"}').expr.quals
    assert test.value == "x\\"
    assert error('a{b=="x\\"y"}') == at('a{b=="x\\"y"}', 9)


# ------------------------------------------------------------------ query shapes


S = ValueKind.STRING


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('kernel.all.load{hostname: "bozo-laptop"}',
         Vector("kernel.all.load", Qualifier("hostname", Op.GLOB, "bozo-laptop", S))),
        ('kernel.all.load{instance.name:"1\\*"}',  # no escapes: the pattern is 1\*
         Vector("kernel.all.load", Qualifier("instance.name", Op.GLOB, "1\\*", S))),
        ('kernel.all.load{instance.name=~"1.*"}',
         Vector("kernel.all.load", Qualifier("instance.name", Op.REQ, "1.*", S))),
        ('kernel.all.load{instance.name == "5 mi*"}',
         Vector("kernel.all.load", Qualifier("instance.name", Op.EQ, "5 mi*", S))),
        ('kernel.all.pswitch{hostname:"node80" || hostname:"node81"}[count:2]',
         Vector("kernel.all.pswitch", Or(Qualifier("hostname", Op.GLOB, "node80", S),
                                         Qualifier("hostname", Op.GLOB, "node81", S)),
                Window((("count", "2"),)))),
        ('kernel.all.pswitch{hostname~~"node*"}[count:2]',
         Vector("kernel.all.pswitch", Qualifier("hostname", Op.GLOB, "node*", S),
                Window((("count", "2"),)))),
        ('kernel.all.pswitch[delta: "1sec"]',
         Vector("kernel.all.pswitch", window=Window((("delta", "1sec"),)))),
        ('{source.path: "/tmp/archives/proc"}',
         Vector(None, Qualifier("source.path", Op.GLOB, "/tmp/archives/proc", S))),
    ],
)  # fmt: skip
def test_qa_query_texts(text, expected):
    """Queries of PCP's QA 1211, 1850 and pmseries --load's own."""
    assert parse(text).expr == expected


def test_pmseries_window_option():
    """pmseries -w 'count: 2' puts the text in brackets and reads it as pmSeriesWindow."""
    assert parse_window("[count: 2]") == Window((("count", "2"),))


def test_quals_only_query_keeps_its_window_on_the_query():
    query = parse('{hostname:"a"}[samples:1]')
    assert query.expr == Vector(None, Qualifier("hostname", Op.GLOB, "a", ValueKind.STRING))
    assert query.window == Window((("count", "1"),))
    assert query.wants_values


def test_named_queries():
    """NAME = query: PCP 6.0.3 parses the name and then drops it."""
    assert parse("x = kernel.all.load") == Query(Vector("kernel.all.load"), name="x")
    assert parse("x = rate(a[1s])").name == "x"
    assert parse("x={a:1}").expr.name is None
    assert error("x = [samples:1]") == "Invalid series query specification"
    assert error("a = b = c") == at("a = b = c", 6)
    assert error("a + b = c") == at("a + b = c", 6)


def test_a_bare_window_is_no_query():
    assert error("[samples:1]") == "Invalid series query specification"
    assert parse_window("[samples:1]") == Window((("count", "1"),))
    assert parse_window("x = [count:2, 5m]") == Window((("count", "2"), ("range", "5m")))
    with pytest.raises(QuerySyntaxError) as caught:
        parse_window("kernel.all.load[samples:1]")
    assert caught.value.message == "Invalid time window specification"
    with pytest.raises(QuerySyntaxError) as caught:
        parse_window("[samples:1")
    assert caught.value.message == at("[samples:1", 9)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("{a:1} + b", 6),  # a query by qualifiers alone takes no operators
        ("{a:1}[1s] + b", 10),
        ("a[1s])", 5),
        ("a[1s] b", 6),
        ("[1s] + a", 5),
        ("(a)", 0),
        ("-a", 0),
        ("a[1s][2s]", 5),
        ("a[1s]{b:1}", 5),
    ],
)
def test_bad_query_shapes(text, column):
    assert error(text) == at(text, column)


# ------------------------------------------------------------------ lexer corners


def test_caret_keeps_tabs_and_newlines():
    """Observed: the caret line copies each blank and control character of the query."""
    assert (
        error("a +\tb\n)") == "cannot parse given string\n\na +\tb\n)\n   \t \n^ -- syntax error\n"
    )


def test_caret_after_non_ascii():
    assert error("aé") == "cannot parse given string\n\naé\n ^ -- syntax error\n"
    assert error("é") == "cannot parse given string\n\né\n^ -- syntax error\n"


def test_the_end_is_the_last_character():
    assert error("a +   ") == at("a +   ", 5)
    assert error("   ") == at("   ", 2)
    assert error("") == at("", 0)  # (PCP 6.0.3's pmseries crashes here)


def test_text_ends_at_a_nul():
    assert parse("kernel.all.load\0{garbage") == Query(Vector("kernel.all.load"))


def test_unclosed_string():
    """PCP's lexer loops until its buffer cannot grow, then reports the opening quote."""
    assert error('a{b=="x}') == at('a{b=="x}', 5)
    assert error('"abc') == at('"abc', 0)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("a[samples:4294967296]", 10),  # "Constant value too large"
        ("1.2.3 * a", 3),  # 1.2 then .3
        ("2 * 5m", 4),
        ("a # b", 2),  # an illegal character
        ("a[samples:3]#", 12),
        ("count", 0),  # a window keyword, not a name
        ("type", 0),
        ("samples{a:1}", 0),
    ],
)
def test_lexer_errors(text, column):
    assert error(text) == at(text, column)


def test_lone_dot_is_a_number():
    query = parse(". * a")
    assert query.expr == Binary(Arith.STAR, Number("."), Vector("a"))
    assert query.expr.left.value == 0.0
    assert parse("a * 1.").expr.right.value == 1.0
    assert parse("3 * a").expr.left.value == 3


def test_deep_nesting():
    """Bison's stack allows some thousands of levels; this parser stops at 200."""
    deep = "rate(" * 200 + "a" + ")" * 200
    assert canonical(parse(deep)) == deep
    deeper = "rate(" * 201 + "a" + ")" * 201
    assert error(deeper).endswith("^ -- memory exhausted\n")


def test_long_chains_are_no_deep_recursion():
    chain = "+".join(["a"] * 3000)
    assert canonical(parse(chain)) == chain
    quals = ",".join(["b:1"] * 3000)
    assert canonical(parse(f"a{{{quals}}}")) == "a{" + "&&".join(['b~~"1"'] * 3000) + "}"


# ------------------------------------------------------------------ functions


SECOND = {
    Func.TOPK_INST: ", 3",
    Func.TOPK_SAMPLE: ", 3",
    Func.NTH_PERCENTILE_INST: ", 95",
    Func.NTH_PERCENTILE_SAMPLE: ", 95",
    Func.RESCALE: ', "Kbyte/s"',
}


@pytest.mark.parametrize("func", list(Func))
def test_every_function(func):
    for arg in ("a", "a{b:1}[samples:2]"):
        call = parse(f"{func.value}({arg}{SECOND.get(func, '')})").expr
        assert isinstance(call, Call) and call.func is func
        assert call.arg.name == "a"
    assert parse(func.value) == Query(Vector(func.value))  # without "(" a name


def test_function_arguments():
    assert parse("topk_inst(a, 3)").expr.param == Number("3")
    assert parse("nth_percentile_sample(a, 100)").expr.param == Number("100")
    assert parse("log(a)").expr.param is None
    assert parse("log(a, 2.5)").expr.param == Number("2.5")
    assert parse("log(a,2)").expr.param.value == 2
    call = parse('rescale(a, "Kbyte / sec")').expr
    assert call.units == "Kbyte / sec"
    assert call.scale == Units(dimSpace=1, dimTime=-1, scaleSpace=1, scaleTime=3)
    nested = parse('rescale(rescale(a[1s], "min"), "hour")').expr
    assert (nested.units, nested.arg.units, nested.arg.arg.window) == (
        "hour",
        "min",
        Window((("range", "1s"),)),
    )


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("count(a)", 0),  # count( is a function of no rule
        ("rate (a)", 5),  # a function's name must touch its "("
        ("foo(a)", 3),
        ("rate(a, 2)", 6),
        ("rate()", 5),
        ("rate(a", 5),
        ("topk_inst(a)", 11),
        ("topk_inst(a, 2.5)", 13),
        ("topk_inst(a, 3, 4)", 14),
        ('log(a, "x")', 7),
        ("rescale(a, sec)", 11),
        ("rescale(a)", 9),
        # checked at the closing parenthesis, as PCP does (and QA 1886 shows)
        ("nth_percentile_inst(a, 101)", 26),
        ("nth_percentile_inst(a , 101 ) ", 28),
        ('rescale(a, "bogus")', 18),
        ('rescale(a[1s], "bogus")', 22),
        ("rate(a[1s] b)", 11),
        ("rate{a}", 6),
    ],
)
def test_bad_calls(text, column):
    assert error(text) == at(text, column)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("nth_percentile_inst(kernel.all.load[count:5])", 44),
        ("nth_percentile_inst(kernel.all.load[count:5], 500)", 49),
        ("nth_percentile_sample(kernel.all.load[count:5])", 46),
        ("nth_percentile_sample(kernel.all.load[count:5], 500)", 51),
        ('nth_percentile_inst(kernel.all.load{instance.name == "5 minute"}[count:5])', 73),
        ('nth_percentile_sample(kernel.all.load{instance.name == "5 minute"}[count:5], 500)', 80),
        ("nth_percentile_inst(kernel.all.uptime[count:10], 500)", 52),
    ],
)
def test_qa_1886_messages(text, column):
    """PCP's QA 1886 prints these (its carets at these columns)."""
    assert error(text) == at(text, column)


# ------------------------------------------------------------------ arithmetic


def test_star_after_a_name_is_part_of_it():
    """A name takes in a *: a*2 is the pattern "a*2", not a product."""
    assert parse("a*2").expr == Vector("a*2")
    assert parse("a*2").expr.glob
    assert shape(parse("a * 2").expr) == "(a*2)"


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a+b * c", "(a+(b*c))"),
        ("a * b+c", "((a*b)+c)"),
        ("a-b-c", "((a-b)-c)"),
        ("a/b/c", "((a/b)/c)"),
        ("a-b+c", "((a-b)+c)"),
        ("a * b/c", "((a*b)/c)"),
        ("a+b * c-d/e", "((a+(b*c))-(d/e))"),
        ("2*a", "(2*a)"),
        ("a * 2", "(a*2)"),
        ("2*3*a", "(2*(3*a))"),  # no number times a number: numbers group to the right
        ("2*3*a * 4", "((2*(3*a))*4)"),
        ("2*a * 3", "((2*a)*3)"),
        ("a * 2*3", "((a*2)*3)"),
        ("a/2*b", "(a/(2*b))"),  # nothing divides by a number: 2*b comes first
        ("a/2*b * c", "((a/(2*b))*c)"),
        ("a+2*b", "(a+(2*b))"),
        ("a * 2+b", "((a*2)+b)"),
        ("1.5*rate(a)+b * .5", "((1.5*rate(a))+(b*.5))"),
        ("rate(a+b * c)", "rate((a+(b*c)))"),
        ("sum(2*a)", "sum((2*a))"),
    ],
)
def test_arithmetic_trees(text, tree):
    query = parse(text)
    assert shape(query.expr) == tree
    assert query.has_function


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("a+2", 2),  # a number only stands beside a *
        ("2+a", 1),
        ("a/2", 2),
        ("2", 0),
        ("2*3", 2),
        ("a*2+3", 4),
        ("a+", 1),
        ("a++b", 2),
        ("a *-2", 3),
        # every vector of an expression has a window, or none has
        ("rate(a) + b[1s]", 11),
        ("a[1s] + b", 8),
        ("a[1s] + b{c:1}", 13),
        ("a{b:1} + c[1s]", 10),
        ("a + rate(b[1s])", 10),
        ("rate(a[1s]) * rate(b)", 20),
        ("2*a[1s]+b", 8),
    ],
)
def test_bad_arithmetic(text, column):
    assert error(text) == at(text, column)


# ------------------------------------------------------------------ windows


@pytest.mark.parametrize(("keyword", "field"), sorted(TIME_KEYWORDS.items()))
def test_window_keywords(keyword, field):
    value = {"count": "3", "offset": "2", "zone": '"UTC"'}.get(field, '"2"')
    query = parse(f"a[{keyword}:{value}]")
    assert query.window.items == ((field, value.strip('"')),)
    assert query.expr.window == query.window


def test_window_values():
    window = parse('a[samples:3, interval:"2 sec", start:1.5, end:7, align:"1m", tz:"UTC", 5m]')
    assert window.window == Window(
        (("count", "3"), ("delta", "2 sec"), ("start", "1.5"), ("end", "7"),
         ("align", "1m"), ("zone", "UTC"), ("range", "5m"))
    )  # fmt: skip
    w = window.window
    assert (w.count, w.delta, w.start, w.end, w.align, w.zone, w.range, w.offset) == (
        "3", "2 sec", "1.5", "7", "1m", "UTC", "5m", None
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ('a[samples:"3"]', 10),  # samples and offset take integers
        ("a[offset:1.5]", 9),
        ("a[tz:UTC]", 5),  # timezone takes a string
        ("a[tz:1]", 5),
        ("a[5]", 2),  # a bare number is no range
        ("a[foo:1]", 2),
        ("a[samples 3]", 10),
        ("a[samples:3,]", 12),
        ("a[samples:3 count:3]", 12),
        ("a[]", 2),
        ("a[start:-1h]", 8),  # unquoted: a minus
        ("a[interval:1h]", 11),  # unquoted 1h is a range, not a value
    ],
)
def test_bad_window_syntax(text, column):
    assert error(text) == at(text, column)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'a[interval:"1x"]',
            "Cannot parse time delta with pmParseHighResInterval:\n1x\n ^ -- unexpected value\n",
        ),
        (
            'a[interval:""]',
            "Cannot parse time delta with pmParseHighResInterval:\n"
            "\n^ -- Null or empty specification\n",
        ),
        ("a[5q]", "Cannot parse range with pmParseHighResInterval:\n5q\n ^ -- unexpected value\n"),
        (
            'a[start:"bogus"]',
            "Cannot parse time with __pmParseHighResTime:\nbogus\n^ -- unexpected value\n",
        ),
        (  # counting back from the end: no end, so an error
            'a[start:"-1h"]',
            "Cannot parse time with __pmParseHighResTime:\n-1h\n^ -- unexpected value\n",
        ),
        ("a[samples:4294967295]", 'Invalid sample count requested - "4294967295"'),
        ("a[samples:2147483648]", 'Invalid sample count requested - "2147483648"'),
        ("a[samples:3,samples:03]", 'Invalid second sample count requested - "03" vs "3"'),
        ("a[offset:3,from:4]", 'Invalid second time offset requested - "4" vs "3"'),
        ('a[tz:"UTC",tz:"GMT"]', 'Invalid second timezone requested - "UTC" vs "GMT"'),
        ("a[5m,6m]", 'Invalid second time range requested - "5m" vs "6m"'),
        ('a[end:"1",end:"2"]', 'Invalid second end time requested - "1" vs "2"'),
        ('a[start:"1",begin:"2"]', 'Invalid second start time requested - "1" vs "2"'),
        ('a[align:"1",align:"2"]', 'Invalid second alignment requested - "1" vs "2"'),
        ("a[delta:1,interval:2]", 'Invalid second time delta requested - "1" vs "2"'),
        # every window of a query adds to one: a second vector may not disagree
        ("a[samples:3] + b[samples:4]", 'Invalid second sample count requested - "4" vs "3"'),
        ("rate(a[5m]) + b[6m]", 'Invalid second time range requested - "5m" vs "6m"'),
        # checked as soon as read, before a later syntax error
        ("a[samples:3,samples:4", 'Invalid second sample count requested - "4" vs "3"'),
        ('a[interval:"x"] ) (',
         "Cannot parse time delta with pmParseHighResInterval:\nx\n^ -- unexpected value\n"),
    ],
)  # fmt: skip
def test_window_messages(text, message):
    assert error(text) == message


def test_windows_accepted():
    """Same text twice is fine; so are free-form dates; a negative offset is complained
    about by PCP and then accepted (its pmseries then aborts on a bad free)."""
    for text in ("a[5m,5m]", "a[samples:3,count:3]", 'a[align:"x"]', 'a[start:"yesterday"]',
                 'a[start:""]', 'a[end:"@10:00"]', "a[start:1.5]", 'a[start:"1 hour ago"]',
                 "a[count:1, from:2147483648]"):  # fmt: skip
        parse(text)


def test_windows_accumulate_across_vectors():
    """PCP attaches to each vector every window read so far; the query has them all."""
    query = parse('rate(a[samples:2]) + b[interval:"1s"]')
    left, right = query.expr.left.arg, query.expr.right
    assert left.window == Window((("count", "2"),))
    assert right.window == Window((("count", "2"), ("delta", "1s")))
    assert query.window == right.window
    assert parse("rate(a) + b").window is None
    assert parse("rate(a) + b").expr.right.window is None


def test_time_window_or_not():
    """Only samples, range, start, finish and interval make values wanted."""
    for text, wanted, count_only in [
        ("a[samples:2]", True, True),
        ("a[samples:2, offset:1]", True, True),
        ('a[samples:2, interval:"1s"]', True, False),
        ("a[5m]", True, False),
        ('a[start:"1h"]', True, False),
        ('a[end:"1h"]', True, False),
        ('a[tz:"UTC"]', False, False),
        ('a[align:"1m"]', False, False),
        ("a[offset:3]", False, False),
        ("a", False, False),
    ]:
        query = parse(text)
        assert query.wants_values is wanted, text
        assert (query.window is not None and query.window.count_only) is count_only, text


def test_window_add_checks():
    window = Window().add("count", "3")
    assert window.add("count", "3").items == (("count", "3"), ("count", "3"))
    with pytest.raises(WindowError) as caught:
        window.add("count", "4")
    assert caught.value.message == 'Invalid second sample count requested - "4" vs "3"'
    with pytest.raises(WindowError):
        Window().add("delta", "soon")


# ------------------------------------------------------------------ window values

NOW = 1_795_744_184 * NSEC + 123_456_789


def values(window: str, tz: str = "UTC") -> Timing:
    return resolve_window(parse(f"a[{window}]").window, now=NOW, tz=tz)


def test_window_times():
    """Start, finish and align count from the epoch, not now (observed with -Dseries)."""
    assert values('start:"1h"').start == 3600 * NSEC
    assert values('start:"+1h"').start == 3600 * NSEC
    assert values("start:0").start == 0
    assert values('start:1.5, end:"2h"') == Timing(start=1_500_000_000, end=7200 * NSEC)
    assert values('start:"2019-01-01 00:00:00"').start == 1546300800 * NSEC
    assert values('start:"2019-01-01 00:00:00"', tz="Australia/Sydney").start == (1546261200 * NSEC)
    assert values('start:"@10:00"').start == 36000 * NSEC  # 1970-01-01 10:00
    assert values('align:"1m"').align == 60 * NSEC


def test_window_times_from_now():
    assert values('start:"-30sec"').start == (NOW // NSEC - 30) * NSEC  # whole seconds
    assert values('start:"yesterday"').start == (NOW // NSEC // 86400 - 1) * 86400 * NSEC
    assert values('start:""').start == NOW // NSEC // 86400 * 86400 * NSEC  # midnight
    assert values("5m") == Timing(start=NOW - 300 * NSEC, end=PM_MAX_TIME_T * NSEC)
    assert values("5m").open_ended


def test_end_at_zero_is_no_end():
    timing = values('end:"0"')
    assert timing.end == 0 and timing.open_ended
    assert not values('end:"1h"').open_ended


def test_window_settings_apply_in_order():
    """A range sets start and finish; a later start or finish wins, an earlier loses; a
    timezone applies to the times after it (observed with -Dseries)."""
    assert values('5m, start:"1h"') == Timing(start=3600 * NSEC, end=PM_MAX_TIME_T * NSEC)
    assert values('start:"1h", 5m') == Timing(start=NOW - 300 * NSEC, end=PM_MAX_TIME_T * NSEC)
    assert values('5m, end:"2h"').end == 7200 * NSEC
    day = '"2019-01-01 00:00:00"'
    sydney = "Australia/Sydney"
    assert values(f'tz:"UTC", start:{day}', tz=sydney).start == 1546300800 * NSEC
    assert values(f'start:{day}, tz:"UTC"', tz=sydney) == Timing(
        start=1546261200 * NSEC, zone="UTC"
    )


def test_window_counts():
    assert values('samples:3, offset:2, interval:"1.5s"') == Timing(
        count=3, offset=2, delta=1_500_000_000
    )
    assert values("interval:2").delta == 2 * NSEC
    assert values("offset:4294967295").offset == 4294967295  # an unsigned int


# ------------------------------------------------------------------ canonical texts, ids

#: Queries of PCP's QA 1773, 1886, 1906 and 1574, with the series id PCP printed for each
#: (the expression's id: SHA-1 of {"series":"expr","expr":"<canonical>"}).
LOAD = "kernel.all.load[count:5]"
FIVE = 'kernel.all.load{instance.name == "5 minute"}[count:5]'
QA_IDS = [
    ("kernel.all.load+kernel.all.load", "16aa36d93e5cd0733499eee7dafc07dbb2ad7067"),
    (
        "kernel.all.load[samples:1] + kernel.all.load[samples:1]",
        "16aa36d93e5cd0733499eee7dafc07dbb2ad7067",
    ),
    ("kernel.all.load - kernel.all.load", "f29c38f54d5a3cb928496439760634617688036b"),
    ("floor(kernel.all.load)", "f2dbf7a113932b3371c8871df932603856d1d7b6"),
    ("floor(kernel.all.load[samples:2])", "f2dbf7a113932b3371c8871df932603856d1d7b6"),
    (
        'rescale(rate(kernel.percpu.cpu.idle), "millisec/s")',
        "7c31a987c26c610b4e26876c6ea7c78c8f0be3b4",
    ),
    (
        'rescale(rate(kernel.percpu.cpu.idle[samples:2]),"millisec/s")',
        "7c31a987c26c610b4e26876c6ea7c78c8f0be3b4",
    ),
    ("rate(kernel.all.pswitch[count:5])", "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"),
    (f"max({LOAD})", "b74fbecb3ffba6bbfd4b29f2c66fe7995f99958b"),
    (f"max_inst({LOAD})", "a9d70abdd37180508d8f2f56450fa9cbf531847c"),
    (f"max_sample({LOAD})", "2384c7851ee5e1625dc109d70b1c39f189b50806"),
    (f"min({LOAD})", "11b965bc5f9598034ed9139fb3a78c6c0b7065ba"),
    (f"min_inst({LOAD})", "3b8318cee1112b3494ca6028a41e159f938f070a"),
    (f"min_sample({LOAD})", "dc4d3bd8c07fb952e89e9765392447b26eea6f8f"),
    (f"max({FIVE})", "fb36cc9c16bc6af5d73a166ac370e4bbb0849d69"),
    (f"min_sample({FIVE})", "2ca39f571e795749cc95213b22cf69530f4dfa27"),
    ('rescale(kernel.all.uptime[count:2], "sec")', "3b5a07403ea78f119d855b4cab4e01bd51668687"),
    ('rescale(kernel.all.uptime[count:2], "min")', "9b46d5ff3471fd9efd55d939bf217e5826e28387"),
    (
        'rescale(rescale(kernel.all.uptime[count:2], "min"), "hour")',
        "86f41f18d689b1d6bf33b0009a6b1d533ac1a179",
    ),
    (f"abs({LOAD})", "3a5ed7889d22efb5f56a29314fe32a0ecd55442e"),
    (f"abs({FIVE})", "7015ab1e33f0f25efdfbe7604e3471add34fee05"),
    ("log(kernel.all.pswitch[count:2],3)", "4afa03b76f79736ee80d5fcd57c6d58dc9c3bee8"),
    ("log(log(kernel.all.pswitch[count:2],3),2)", "4e4736380d8f408a8787ac500fcdb323f8d0a17a"),
    (f"round({LOAD})", "72cb61a9eb8b21814deb6959f5ed21ce1c3c00f5"),
    (
        "kernel.all.uptime[count:5] / kernel.all.uptime[count:5]",
        "13368cc6c81525191477ea4e42e396a256c2c395",
    ),
    (f"{FIVE} - {FIVE}", "0733247e0cebbdf678023ba8174e2655c340158a"),
    (f"sum({LOAD})", "dff2a204d9169e1c9f7d6e2e8b26f42e0dcb3745"),
    (f"sum_inst({LOAD})", "8e492bbdf9d4a6a34bed61d9d4a7e56be143063d"),
    (f"sum_sample({LOAD})", "45710cbbadf0dda9db9bc2b0efdc6d35efcd2485"),
    (f"avg({LOAD})", "25d50fd9d9eb35171ce900948b37f2e485bf0cee"),
    (f"avg_inst({LOAD})", "d5f1f053bb6b11dcc8245a7a792d0537c9f7de6a"),
    (f"avg_sample({LOAD})", "63e4592a8415eecfc61955f64615cfa3fb985dfb"),
    ("sum(rate(kernel.all.pswitch[count:10]))", "116cde57d849d6bf6a35fdaa37f3abde87144e81"),
    ("avg_sample(rate(kernel.all.pswitch[count:10]))", "c739b08d6f1c295f1beb50b65bbd31a1bb4de912"),
    (f"stdev_inst({LOAD})", "bdb503f3d93a8af54adf9e33131152ab61358d5e"),
    (f"stdev_sample({LOAD})", "ef9785c6b5cae109a5ed4fd8a0cbe868a1c576e1"),
    (f"nth_percentile_inst({LOAD}, 50)", "57232c981e86045137a6e460cf8358d7bfa9c910"),
    # query.c writes nth_percentile_sample as nth_percentile_inst: the same id
    (f"nth_percentile_sample({LOAD}, 50)", "57232c981e86045137a6e460cf8358d7bfa9c910"),
    (f"nth_percentile_sample({FIVE}, 50)", "f8b75c6ebbfd3b3bb88455868b57304a7be67719"),
    (f"topk_inst({LOAD},3)", "3b6842c7b08aa02e931e67660cd2acf98c732ba3"),
    (f"topk_sample({LOAD},3)", "4fcc2043a1234a0a935d0861b59c4bcf8e379f7b"),
    ("topk_sample(kernel.all.uptime[count:10], 3)", "3e0482ed400e28f1310069fbe4272b06ecbcc397"),
    (f"max({LOAD}) * max({LOAD})", "d34e2a131f36ceb9accd53119da6ad25d955a5a1"),
    (f"{LOAD} * log({LOAD})", "7ca6a4efb0df5beff91afd829d4d7a4bd39414c7"),
    (f"{LOAD} * 2", "311d2a0b5c688bd3d1854e251b654ff95acd03de"),
    (f"2 * {LOAD}", "271645f0998174055aea91c911da1586966e1308"),
    (f"2 * abs({LOAD})", "4a9fa9e04863800d5111528a6922557de5bec6ea"),
    (f"0 * {LOAD}", "00e94e50a7e94e5297d70dc206f297018047f985"),
    (f"1.1 * {LOAD}", "e669835f3a5ce1b8d0dc41078fc44036b541494a"),
    (f"{LOAD} * 1.5", "454854339f2ff8359b5f8c63007d36e58b8f7d23"),
    (f"{FIVE} * 1.5", "3a1f7c8ae6c3f39d6e38c41c6da8358d524455fb"),
    ("kernel.all.uptime[count:2] * 2", "9360e5a95a3629121425bc3de5048711b75f47d5"),
    (
        "max(kernel.all.uptime[count:2]) * max(kernel.all.uptime[count:2])",
        "feb9ff0f4ca9c6fff384a5ef545afc0781840ff3",
    ),
]


@pytest.mark.parametrize(("text", "sid"), QA_IDS)
def test_expression_ids_from_pcp_qa(text, sid):
    assert expr_sid(parse(text)) == sid


def test_expression_id_is_sha1_of_the_canonical_text():
    query = parse("rate(kernel.all.pswitch[samples:3])")
    assert canonical(query) == "rate(kernel.all.pswitch)"
    digest = hashlib.sha1(b'{"series":"expr","expr":"rate(kernel.all.pswitch)"}').hexdigest()
    assert digest == "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71" == expr_sid(query)
    assert canonical(parse("rate(sample.rapid[samples:3])")) == "rate(sample.rapid)"


@pytest.mark.parametrize(
    ("text", "text_back"),
    [
        ('max(a{instance.name == "5 minute"}[1s])', 'max(a{instance.name=="5 minute"})'),
        ("rate(a{b:1}[1s])", 'rate(a{b~~"1"})'),  # ":" is written ~~
        ("rate(a{b!=1}[1s])", 'rate(a{b!="1"})'),
        ("rate(a{b<1, c>=2.5}[1s])", "rate(a{b<1&&c>=2.5})"),  # orderings: no quotes
        ('rate(a{b=~"x.*" || c!~y}[1s])', "rate(a{b=~x.*||c!~y})"),  # regexes: no quotes
        ('rate(a{l.b=="x", i.name:"y"}[1s])', 'rate(a{l.b=="x"&&i.name~~"y"})'),
        # an exact test on metric.name is just its value ...
        ('rate(a{metric.name=="b"}[1s])', "rate(a{b})"),
        # ... and on any prefix of "metric.name" loses its name (query.c compares lengths)
        ('rate(a{m=="b"}[1s])', 'rate(a{=="b"})'),
        ('rate(a{metric=="b"}[1s])', 'rate(a{=="b"})'),
        ('rate(a{"metric.name"=="b"}[1s])', 'rate(a{metric.name=="b"})'),
        ('rate(a{metric.name:"b"}[1s])', 'rate(a{metric.name~~"b"})'),
        ('rescale(a, "Kbyte / sec")', 'rescale(a,"Kbyte / sec")'),
        ("topk_inst(a, 3)+log(b,2)", "topk_inst(a, 3)+log(b,2)"),
        ("2*3*a - b/c", "2*3*a-b/c"),
        ('{a:"x", b == 1}', 'a~~"x"&&b=="1"'),
        ("x = sum( a )", "sum(a)"),
    ],
)
def test_canonical_texts(text, text_back):
    assert canonical(parse(text)) == text_back


def test_canonical_metric_names_from_the_series():
    """A glob, or a vector with qualifiers, is written with its first series' metric name
    (METRIC_NAME gives it); an exact name alone is written as given."""
    names = {"kernel.all.l*d": "kernel.all.load", "a": "a.resolved"}.__getitem__
    glob = parse("rate(kernel.all.l*d[1s])")
    assert canonical(glob, lambda v: names(v.name)) == "rate(kernel.all.load)"
    assert canonical(glob) == "rate(kernel.all.l*d)"  # nothing given: the pattern
    quals = parse("rate(a{b:1}[1s])")
    assert canonical(quals, lambda v: names(v.name)) == 'rate(a.resolved{b~~"1"})'
    exact = parse("rate(a[1s])")
    assert canonical(exact, lambda v: names(v.name)) == "rate(a)"
    assert expr_sid(glob, lambda v: names(v.name)) == expr_sid(parse("rate(kernel.all.load)"))


def test_canonical_refuses_other_things():
    with pytest.raises(TypeError):
        canonical("a")  # type: ignore[arg-type]


# ------------------------------------------------------------------ units


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("sec", True), ("min", True), ("hour", True), ("millisec/s", True), ("bogus", False),
        ("", True), (" ", True), ("none", False), ("Kbyte / sec", True), ("count x 10^3", True),
        ("byte^2", True), ("/s", True), ("s/", True), ("sec sec", False), ("Kbyte Mbyte", False),
        ("count x 10^-2", True), ("ms", True), ("hr", True), ("h", True), ("1", True),
        ("2 sec", True), ("millisec / count", True), ("sec^2", True), ("x", False),
        ("count^-1", True), ("kbytes", True), ("Kb", True), ("s / s / s", False),
        ("byte/", True), ("/", True), ("eb", True), ("Ebyte", True), ("Pbyte", True),
        ("nanosecond", True), ("usec", False), ("microsec", True), ("1/s", True),
        ("none/s", False), ("count/none", False), ("sec*2", False), ("10^3 count", False),
        ("1e999", False), ("1e-400", False), ("-inf sec", True), ("-", False),
        ("0x10 sec", True), ("sec^8", False), ("byte^7 / byte^-2", False), ("time-7", True),
    ],
)  # fmt: skip
def test_units_accepted_as_pcp_accepts_them(text, ok):
    """pmParseUnitsStr's verdicts, each observed as rescale(a, TEXT) with PCP's pmseries."""
    if ok:
        parse_units(text)
        parse(f'rescale(a, "{text}")')
    else:
        with pytest.raises(ValueError):
            parse_units(text)
        query = f'rescale(a, "{text}")'
        assert error(query) == at(query, len(query) - 1)


def test_units_values():
    assert parse_units("Kbyte / sec") == (Units(1, -1, 0, 1, 3, 0), 1.0)
    assert parse_units("count x 10^3") == (Units(dimCount=1, scaleCount=3), 1.0)
    assert parse_units("millisec/s") == (Units(), 1000.0)
    assert parse_units("2 sec") == (Units(dimTime=1, scaleTime=3), 0.5)
    assert parse_units("Kb") == (Units(dimSpace=1, scaleSpace=1), 1.0)
    assert parse_units("sec^-2") == (Units(dimTime=-2, scaleTime=3), 1.0)
    assert parse_units("Mbyte / Kbyte") == (Units(), 1 / 1024)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("bogus", "unrecognized or duplicate base unit"),
        ("sec sec", "unrecognized or duplicate base unit"),
        ("-", "invalid floating point literal"),
        ("1e999", "invalid floating point literal"),
        ("sec^8", "time dimension out of bounds"),
        ("byte^7 / byte^-2", "space dimension out of bounds"),
        ("time-7 / sec", "time scale out of range"),  # libpcp aborts on an assertion
    ],
)
def test_units_reasons(text, reason):
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_units(text)


# ------------------------------------------------------------------ against PCP's pmseries


@pytest.fixture(scope="module")
def pcp_redis(tmp_path_factory):
    """A private redis-server for PCP's pmseries to read (its parse errors come first)."""
    require_redis()
    require_pcp_series()
    tmp = tmp_path_factory.mktemp("series-parse")
    with redis_server(tmp) as server:
        yield server.port, tmp


def pcp_says(query: str, port: int, tmp) -> tuple[bool, str | None]:
    """Whether PCP's pmseries lived through QUERY, and its message (None: it had none);
    the test fails if it said anything else."""
    done = pcp_pmseries(["--", query], port, tmp)
    if done.returncode < 0:  # killed by a signal
        return False, None
    prefix = "pmseries: [Error] "
    if done.stderr.startswith(prefix):
        assert done.stderr.endswith("\n")
        return True, done.stderr[len(prefix) : -1]
    assert done.returncode == 0 and not done.stderr, (query, done.returncode, done.stderr)
    return True, None


def our_message(query: str) -> str | None:
    try:
        parse(query)
    except QuerySyntaxError as e:
        return e.message
    return None


#: Queries PCP's pmseries refuses or takes without crashing on an empty Redis.
INTEROP_QUERIES = [
    "bad{", "kernel.all.!bang", "kernel.all.load[badness]", "(disk.all.re", "   ", "a +\tb\n)",
    "aé", "a{b:1}{c:2}", "1.2.3 * a", "count(a)", "rate (a)", "foo(a)", "a = b = c", "a + b = c",
    '{a:"x"} || {b:"y"}', "a{b:1 & c:2}", "a{b ! 1}", 'a{b < "x"}', "a{b =~ 1}", 'a{units == "x"}',
    "a[samples:4294967296]", "a[samples:4294967295]", "a[samples:3,samples:03]",
    'a[interval:"1x"]', 'a[interval:""]', "a[5q]", 'a[start:"-1h"]', 'a[start:"bogus"]',
    "a[offset:3,from:4]", 'a[tz:"UTC",tz:"GMT"]', "a[5m,6m]", "a[delta:1,interval:2]",
    "a[samples:3] + b[samples:4]", "a[samples:3,samples:4", "[samples:1]", "x = [samples:1]",
    "nth_percentile_inst(a, 101)", "nth_percentile_inst(a , 101 ) ", 'rescale(a, "bogus")',
    'rescale(a, "none")', 'rescale(a, "sec sec")', 'rescale(a, "1e-400")', "topk_inst(a, 2.5)",
    "a+2", "2+a", "a/2", "2*3", "rate(a) + b[1s]", "a[1s] + b", "a{b:1} + c[1s]", "{a:1} + b",
    "a[1s])", "a[interval:1h]", "a[tz:UTC]",
    # and some it takes
    "a{b:1}[samples:2]", "rate(a)", "rate(a[samples:2])", 'a{i.name=="x" || l.x=~"y"}',
    "max(a[1s]) + min(b[1s])", "x = kernel.all.load", '{hostname:"a"}[samples:1]',
    'kernel.all.l*d{hostname!="x"}', 'rescale(a[samples:2], "Kbyte/s")', "topk_inst(a[1s], 3)",
    "log(a[samples:1], 2.5)", "a[1s]*2", "a[5m,5m]", 'a[align:"x"]', 'a{b=="x\\"}',
]  # fmt: skip


@pytest.mark.interop
@pytest.mark.parametrize("query", INTEROP_QUERIES)
def test_messages_are_pcps(query, pcp_redis):
    port, tmp = pcp_redis
    assert pcp_says(query, port, tmp) == (True, our_message(query))


def mutants(seed: int, count: int) -> list[str]:
    """COUNT queries made by cutting, swapping in and inserting tokens of valid ones."""
    corpus = [
        'kernel.all.load{hostname:"a", i.name=="1 minute" || l.x=~y}[samples:3]',
        'rescale(rate(a{b:1}[5m]), "millisec/s") * 2 + topk_inst(c[5m], 3)',
        '2 * 3 * sum_inst(a) / log(b{c<1.5}, 2)', 'x = {a:1 && b!="c"}[interval:"1s", tz:"UTC"]',
        'nth_percentile_sample(a[start:"1h", end:"2h"], 50) - abs(b[start:"1h",end:"2h"])',
    ]  # fmt: skip
    words = [
        "a", "k*", "rate(", "count(", "log(", "rescale(", "topk_inst(", "(", ")", "{", "}", "[",
        "]", ",", ":", "+", "-", "*", "/", "1", "2.5", "101", ".", '"x"', '"sec"', "samples",
        "interval", "tz", "5m", "=", "==", "!=", "~~", "=~", "<", ">=", "&&", "||", "!", "&",
        "|", "~", "units", " ", "\t", "#",
    ]  # fmt: skip
    token = re.compile(r'"[^"]*"|[A-Za-z][\w.*%\\]*\(?|\d+\.?\d*[A-Za-z]*|\.\d*|[=!~<>&|]{2}|\s+|.')
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        tokens = token.findall(rnd.choice(corpus))
        for _ in range(rnd.randint(1, 3)):
            i = rnd.randrange(len(tokens))
            change = rnd.randrange(3)
            if change == 0:
                del tokens[i]
            elif change == 1:
                tokens[i] = rnd.choice(words)
            else:
                tokens.insert(i, rnd.choice(words))
        text = "".join(tokens)
        if text.strip() and not text.lstrip().startswith("-") and text.count('"') % 2 == 0:
            out.append(text)
    return out


@pytest.mark.interop
def test_mutated_queries_as_pcp(pcp_redis):
    """Queries a token or three away from valid ones: the same message as PCP's, or none.
    (PCP's pmseries crashes evaluating some queries it parsed; those must parse here.)"""
    port, tmp = pcp_redis
    wrong = []
    for query in mutants(1, 300):
        _, theirs = pcp_says(query, port, tmp)  # (when it died, after parsing: None)
        if our_message(query) != theirs:
            wrong.append((query, our_message(query), theirs))
    assert wrong == []


#: Windows and whether PCP's start is now's (then compared within a few seconds).
WINDOW_TIMES = [
    ('start:"1h"', False), ("start:0", False), ('start:"2019-01-01 00:00:00"', False),
    ('end:"0"', False), ('start:1.5,end:"2h"', False), ('5m,start:"1h"', False),
    ('tz:"UTC",start:"2019-01-01 00:00:00"', False),
    ('start:"2019-01-01 00:00:00",tz:"UTC"', False),
    ('start:"yesterday"', False), ('start:"-30sec"', True), ("5m", True), ('start:"1h",5m', True),
]  # fmt: skip


@pytest.mark.interop
def test_window_times_are_pcps(tmp_path, monkeypatch):
    """The start and finish PCP reads values between (its -Dseries START: and END: lines,
    stream ids ms-usec) are resolve_window's, in PCP's local zone."""
    require_redis()
    require_pcp_series()
    monkeypatch.setenv("TZ", "Australia/Sydney")
    with redis_server(tmp_path) as server:
        load_archive(small_archive(tmp_path), server.port, tmp_path)
        names = pcp_pmseries(["-m"], server.port, tmp_path).stdout.split()
        assert names
        for window, from_now in WINDOW_TIMES:
            query = f"{names[0]}[{window}]"
            done = pcp_pmseries(["-Dseries", "--", query], server.port, tmp_path)
            start = re.search(r"^START: (\d+)-(\d+)$", done.stderr, re.M)
            end = re.search(r"^END: (\S+)$", done.stderr, re.M)
            assert start and end, (query, done.stderr)
            timing = resolve_window(parse(query).window, tz="Australia/Sydney")
            ms, usec = timing.start // 1_000_000, timing.start // 1000 % 1000
            if from_now:
                assert abs(ms - int(start.group(1))) < 5000, query
            else:
                assert (ms, usec) == (int(start.group(1)), int(start.group(2))), query
            if timing.end == 0:
                expected = "+"
            elif timing.end == PM_MAX_TIME_T * NSEC:
                expected = "18446744073709550616-0"  # PCP's ms product wraps at 64 bits
            else:
                expected = f"{timing.end // 1_000_000}-{timing.end // 1000 % 1000}"
            assert end.group(1) == expected, query
