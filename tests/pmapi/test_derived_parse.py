"""purepcp.pmapi.derived.parse: PCP 6.0.3's derived-metric language, its errors and our printer.

The error table holds what the reference pmRegisterDerived returns (offset of the
pointer into the expression) and what pmDerivedErrStr says ("" for nothing); the
interop tests check the table, and random expressions, against libpcp itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.derived.ast import (
    SEMANTICS_NAMES,
    TYPE_NAMES,
    Anon,
    Binary,
    Call,
    MatchInst,
    MkConst,
    Name,
    Node,
    Number,
    Rescale,
    Select,
    Ternary,
    Unary,
)
from purepcp.pmapi.derived.parse import (
    EXPR_FUNCTIONS,
    MAX_DEPTH,
    NAME_FUNCTIONS,
    DerivedSyntaxError,
    ere_error,
    parse,
)
from purepcp.pmapi.derived.unparse import unparse
from tests.support.derived_errors import AE, ERRORS
from tests.support.examples import examples
from tests.support.reference import libpcp

a, b, c, d, e, f, g = (Name(x) for x in "abcdefg")

# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(("text", "offset", "message"), ERRORS)
def test_errors_point_where_pcp_points(text, offset, message):
    with pytest.raises(DerivedSyntaxError) as caught:
        parse(text)
    assert (caught.value.offset, caught.value.message) == (offset, message)
    assert str(caught.value) == (message or "syntax error")


def test_the_end_of_the_text_is_its_last_character():
    """PCP's pointer at the end of the input is the last character, blank or not."""
    assert parse_error("a + ") == (3, f"{AE} PLUS")
    assert parse_error("") == (0, "")  # PCP points one before the text here
    assert parse_error("   ") == (2, "")


def parse_error(text: str) -> tuple[int, str]:
    try:
        parse(text)
    except DerivedSyntaxError as e:
        return e.offset, e.message
    raise AssertionError(f"{text!r} parsed")


def test_nesting_hits_the_parser_stack_limit_not_recursion():
    """bison's stack holds 10000 states: PCP fails on the 9997th '(' around a name."""
    deep = "(" * 9996 + "a" + ")" * 9996
    assert parse(deep) == a
    assert parse_error("(" * 9997 + "a" + ")" * 9997) == (9998, "")
    assert parse_error("(" * 100_000)[1] == ""
    assert parse_error("!" * 9999 + "a") == (9998, "")


def test_deep_trees_are_refused_before_python_recursion_runs_out():
    message = f"Expression nested too deeply (more than {MAX_DEPTH} levels)"
    assert parse_error("-" * 5000 + "a")[1] == message
    assert parse_error("a" + "+a" * 1000)[1] == message
    chain = parse("a" + "+a" * (MAX_DEPTH - 1))
    assert parse(unparse(chain)) == chain


# ------------------------------------------------------------------ trees


def test_every_construct_and_where_it_starts():
    t = parse("x.y[a b] + sum(m.n) * mkconst(1.5, units=Kbyte)")
    assert t == Binary(
        "+",
        Select(Name("x.y"), "a b"),
        Binary("*", Call("sum", Name("m.n")), MkConst(Number("1.5", 1.5), units="Kbyte")),
    )
    assert (t.at, t.left.at, t.right.at, t.right.left.at, t.right.right.at) == (0, 0, 11, 11, 22)
    assert t.right.left.arg.at == 15 and t.right.right.number.at == 30
    t = parse("(a + b)[i] ? -c : !d")
    assert t == Ternary(Select(Binary("+", a, b), "i"), Unary("-", c), Unary("!", d))
    assert (t.at, t.guard.at, t.guard.expr.at, t.yes.at, t.no.at) == (0, 0, 1, 13, 18)
    t = parse(' matchinst(!/^x\\/y\\\\./, rescale(scalar(a), " Mbyte / hour ")) ')
    assert t == MatchInst("^x/y\\.", True, Rescale(Call("scalar", a), "Mbyte / hour"))
    assert (t.at, t.expr.at, t.expr.expr.at) == (1, 24, 32)
    assert parse("anon(PM_TYPE_U64)") == Anon("U64")
    assert parse("(a) * 2").at == 0  # a parenthesised operand starts at its "("
    assert parse("defined(a.b) && count(c)") == Binary(
        "&&", Call("defined", Name("a.b")), Call("count", c)
    )


def test_mkconst_keeps_what_was_written():
    t = parse('mkconst(7, type="u32", semantics=Counter, units=" byte / sec ", type=64)')
    assert t == MkConst(Number("7", 7), "64", "Counter", "byte / sec")
    assert parse("mkconst(1, type=32)") == MkConst(Number("1", 1), type_name="32")
    assert parse("mkconst(2.5, type=float)") == MkConst(Number("2.5", 2.5), type_name="float")


def test_our_functions_take_any_expression():
    for func in EXPR_FUNCTIONS:
        assert parse(f"{func}(a + 1)") == Call(func, Binary("+", a, Number("1", 1)))
    assert parse_error("abs()") == (4, "<expr> expected to follow abs(")
    assert parse("abs") == Name("abs")


def test_the_lexer():
    assert parse("4294967295") == Number("4294967295", 4294967295)
    assert parse("007") == Number("007", 7)
    assert parse("0" * 5000 + "1").value == 1  # no trouble with Python's int limits
    assert parse_error("9" * 5000) == (0, "Constant value too large")
    assert parse(".5") == Number(".5", 0.5)
    assert parse("5.") == Number("5.", 5.0)
    assert parse(".") == Number(".", 0.0)  # a lone point: strtod reads it as 0
    assert parse("a.b_c.1.") == Name("a.b_c.1.")  # the lexer is laxer than the namespace
    assert parse("sum") == Name("sum") and parse("mkconst") == Name("mkconst")
    assert parse("units.x + typed") == Binary("+", Name("units.x"), Name("typed"))
    assert parse("a[ x\\]\\\\y ]") == Select(a, " x]\\y ")
    assert parse("a\0+ junk") == a  # C strings end at NUL
    assert parse("a<=-b") == Binary("<=", a, Unary("-", b))
    assert parse("a!=!b") == Binary("!=", a, Unary("!", b))


#: The man page's examples, and what PCP 6.0.3 really does where the page is wrong.
PRECEDENCE = [
    ("a+b*c", "a+(b*c)"),
    ("a-b>c+d", "(a-b)>(c+d)"),
    ("a>b!=c", "(a>b)!=c"),
    ("a>b*c&&d<=e+f", "(a>(b*c))&&(d<=(e+f))"),
    ("a>=b||b>c&&d!=e||f>g", "(((a>=b)||(b>c))&&(d!=e))||(f>g)"),
    ("!a<b+c", "!(a<(b+c))"),
    # the man page says !((a>b)||(c<d)), but "!" binds tighter than || in the grammar
    ("!a>b||c<d", "(!(a>b))||(c<d)"),
    ("a-b-c", "(a-b)-c"),
    ("a/b*c", "(a/b)*c"),
    ("-a*b", "-(a*b)"),
    ("-a+b", "(-a)+b"),
    ("a*-b*c", "a*(-(b*c))"),
    ("a*!b>c", "a*(!(b>c))"),
    ("a*!b&&c", "(a*(!b))&&c"),
    ("a?b:c?d:e", "(a?b:c)?d:e"),  # left associative, unlike C
    ("a?b?c:d:e", "a?(b?c:d):e"),
    ("a||b?c:d&&e", "(a||b)?c:(d&&e)"),
    ("!a?b:c", "(!a)?b:c"),
]


@pytest.mark.parametrize(("text", "explicit"), PRECEDENCE)
def test_precedence(text, explicit):
    assert parse(text) == parse(explicit)


def test_not_binds_between_relational_and_boolean():
    assert parse("!a>b||c<d") == Binary("||", Unary("!", Binary(">", a, b)), Binary("<", c, d))


# ------------------------------------------------------------------ printing

PRETTY = [
    ("a+b*c", "a + b * c"),
    ("delta(x)/3", "delta(x) / 3"),
    ("x>0?y:z", "x > 0 ? y : z"),
    (
        'mkconst(1.0,semantics=instant,units="kbyte / count")',
        'mkconst(1.0, semantics=instant, units="kbyte / count")',
    ),
    ("mkconst(1,type=U32,units=Kbyte)", 'mkconst(1, type=U32, units="Kbyte")'),
    ('mkconst(1,type="32")', "mkconst(1, type=32)"),
    ("((a+b))*c", "(a + b) * c"),
    ("a-(b-c)", "a - (b - c)"),
    ("(a-b)-c", "a - b - c"),
    ("-(a+b)", "-(a + b)"),
    ("(-a)*b", "(-a) * b"),
    ("-(a*b)", "-a * b"),
    ("-(-a)", "- -a"),
    ("-(-1)", "- -1"),
    ("!(!a)", "!!a"),
    ("!(a&&b)", "!(a && b)"),
    ("(!a)>b", "(!a) > b"),
    ("a?b:(c?d:e)", "a ? b : (c ? d : e)"),
    ("(a?b:c)?d:e", "a ? b : c ? d : e"),
    ("a+(b?c:d)", "a + (b ? c : d)"),
    ("(a[x])[y]", "(a[x])[y]"),
    ("(a)[x]", "a[x]"),
    ("(a+b)[x\\]y]", "(a + b)[x\\]y]"),
    ("matchinst(!/a\\/b\\\\./,c)", "matchinst(!/a\\/b\\\\./, c)"),
    ('rescale(a,"Mbyte/hour")', 'rescale(a, "Mbyte/hour")'),
    ("anon(PM_TYPE_FLOAT)", "anon(PM_TYPE_FLOAT)"),
    ("matchinst(/x/,matchinst(/y/,a)/b)", "matchinst(/x/, matchinst(/y/, a) / b)"),
]


@pytest.mark.parametrize(("text", "pretty"), PRETTY)
def test_unparse_is_canonical_and_pretty(text, pretty):
    assert unparse(parse(text)) == pretty
    assert parse(pretty) == parse(text)


@pytest.mark.parametrize(
    "tree",
    [
        Call("avg", Binary("+", a, b)),  # PCP's aggregates take a metric name only
        MkConst(Number("1", 1)),  # mkconst() needs at least one attribute
        Name("type"),
        Name("1a"),
        Number("1e3", 1000.0),
        Number("4294967296", 4294967296),
        Binary("%", a, b),
        Rescale(a, 'say "hi"'),
        MatchInst("x", False, Binary("/", a, b)),  # PCP's lexer reads a pattern there
        Select(a, "nul\0"),
        Anon("STRING"),
    ],
)
def test_trees_no_text_can_produce(tree):
    with pytest.raises(ValueError):
        unparse(tree)


# ------------------------------------------------------------------ properties

_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.]{0,5}", fullmatch=True).filter(
    lambda s: s not in ("type", "semantics", "units")
)
_integers = st.integers(0, 0xFFFFFFFF).map(lambda n: Number(str(n), n))
_doubles = st.from_regex(r"[0-9]{0,3}\.[0-9]{0,3}", fullmatch=True).map(
    lambda t: Number(t, float(t) if t != "." else 0.0)
)
_numbers = _integers | _doubles
_free_text = st.text(st.characters(blacklist_characters="\0"), max_size=8)
_patterns = st.text("ab.*+/\\[]^$()|x", max_size=6).filter(lambda p: ere_error(p) is None)
_units = st.sampled_from(["byte", "Kbyte / sec", "count x 10^3", "millisec", " sec "]).map(
    str.strip
)


def _case(words):
    return st.sampled_from(words).flatmap(lambda w: st.sampled_from([w, w.lower(), w.capitalize()]))


@st.composite
def _mkconsts(draw) -> MkConst:
    number = draw(_numbers)
    types = TYPE_NAMES if isinstance(number.value, int) else ("FLOAT", "DOUBLE")
    kind = draw(st.none() | _case(types))
    sem = draw(st.none() | _case(SEMANTICS_NAMES))
    units = draw(st.none() | _units)
    assume(kind or sem or units)
    return MkConst(number, kind, sem, units)


_leaves = (
    _names.map(Name)
    | _numbers
    | _mkconsts()
    | st.sampled_from(TYPE_NAMES).map(Anon)
    | st.builds(Call, st.sampled_from(NAME_FUNCTIONS), _names.map(Name))
    | st.builds(Select, _names.map(Name), _free_text)
)


_OPERATORS = ["+", "-", "*", "/", "<", "<=", "==", ">=", ">", "!=", "&&", "||"]


def _extend(children):
    return (
        st.builds(Binary, st.sampled_from(_OPERATORS), children, children)
        | st.builds(Unary, st.sampled_from(["-", "!"]), children)
        | st.builds(Ternary, children, children, children)
        | st.builds(Call, st.sampled_from(EXPR_FUNCTIONS), children)
        | st.builds(Rescale, children, _units)
        | st.builds(MatchInst, _patterns, st.booleans(), children)
        | st.builds(Select, children, _free_text)
    )


trees = st.recursive(_leaves, _extend, max_leaves=25)


def _walk(node: Node):
    yield node
    for value in vars(node).values():
        if isinstance(value, Node):
            yield from _walk(value)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_printed_trees_parse_back_to_themselves(tree):
    try:
        text = unparse(tree)
    except ValueError:
        assume(False)  # only a division inside matchinst()'s expression
    again = parse(text)
    assert again == tree
    for node in _walk(again):
        if isinstance(node, Name):
            assert text[node.at : node.at + len(node.name)] == node.name
        if isinstance(node, Number):
            assert text[node.at : node.at + len(node.text)] == node.text


_grammar_text = st.lists(
    st.sampled_from(list("ab1.5 ()[]+-*/<>=!&|?:,\"'\\_#\t\n@é"))
    | st.sampled_from(["sum(", "mkconst(", "matchinst(", "rescale(", "anon(", "abs("])
    | st.sampled_from(["type=", "units=", "PM_TYPE_U32", "/x/", "[i]", '"Kbyte"']),
    max_size=30,
).map("".join)


@settings(max_examples=examples(500), deadline=None)
@given(_grammar_text | st.text(max_size=40))
def test_any_text_parses_or_fails_cleanly(text):
    try:
        tree = parse(text)
    except DerivedSyntaxError as e:
        assert 0 <= e.offset <= max(len(text) - 1, 0)
        return
    try:
        printed = unparse(tree)
    except ValueError:
        return  # a division after a nested matchinst(): PCP's lexer allows it, we don't
    assert parse(printed) == tree


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=40), st.sampled_from(["latin-1", "utf-8"]))
def test_any_bytes_parse_or_fail_cleanly(data, encoding):
    with contextlib.suppress(DerivedSyntaxError):
        parse(data.decode(encoding, "replace"))


# ------------------------------------------------------------ regular expressions

#: glibc's regcomp(REG_EXTENDED) messages, as pmRegisterDerived quotes them.
REGEX = [
    ("(", "Unmatched ( or \\("),
    ("(a", "Unmatched ( or \\("),
    (")", None),
    ("[", "Invalid regular expression"),
    ("[^", "Invalid regular expression"),
    ("[a", "Unmatched [, [^, [:, [., or [="),
    ("[]", "Unmatched [, [^, [:, [., or [="),
    ("[]a]", None),
    ("[[:alpha:]]", None),
    ("[[:foo:]]", "Invalid character class name"),
    ("[[.ab.]]", "Invalid collation character"),
    ("[b-a]", "Invalid range end"),
    ("[a-b-c]", "Invalid range end"),
    ("[%--]", None),
    ("a{", "Unmatched \\{"),
    ("a{1,2", "Unmatched \\{"),
    ("a{2,1}", "Invalid content of \\{\\}"),
    ("a{x}", "Invalid content of \\{\\}"),
    ("a{,2}", None),
    ("x{32768}", "Regular expression too big"),
    ("{1}", "Invalid preceding regular expression"),
    ("*a", "Invalid preceding regular expression"),
    ("a|*b", "Invalid preceding regular expression"),
    ("^*", "Invalid preceding regular expression"),
    ("\\b+", "Invalid preceding regular expression"),
    ("a**", None),
    ("\\", "Trailing backslash"),
    ("\\1", "Invalid back reference"),
    ("(a)\\1", None),
    ("(a)|(b)\\1", "Invalid back reference"),
    ("^(lo)|(vbir)", None),
]


@pytest.mark.parametrize(("pattern", "message"), REGEX)
def test_regular_expression_errors_are_glibcs(pattern, message):
    assert ere_error(pattern) == message


def test_checks_can_be_replaced():
    assert parse("matchinst(/(/, a)", regex_check=None) == MatchInst("(", False, a)
    bad = parse_units_error("mkconst(1, units=foo)")
    assert bad == (17, "Illegal units: 'no such unit'")
    assert parse_units_error('rescale(a, "foo")') == (16, "Illegal units: 'no such unit'")


def parse_units_error(text: str) -> tuple[int, str]:
    try:
        parse(text, units_check=lambda u: None if u.strip() == "byte" else "no such unit")
    except DerivedSyntaxError as e:
        return e.offset, e.message
    raise AssertionError(f"{text!r} parsed")


# ------------------------------------------------------------------ libpcp itself


class _LibPCP:
    """pmRegisterDerived through ctypes, under fresh names: (offset, message) or None."""

    def __init__(self) -> None:
        lib = libpcp()
        self.register = lib.pmRegisterDerived
        self.register.restype = ctypes.c_void_p
        self.register.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.errstr = lib.pmDerivedErrStr
        self.errstr.restype = ctypes.c_char_p
        self.names = itertools.count()

    def __call__(self, text: str) -> tuple[int, str] | None:
        expr = ctypes.create_string_buffer(text.encode())
        name = f"purepcp.parse_test.m{next(self.names)}".encode()
        where = self.register(name, expr)
        result = None
        if where is not None:
            result = (where - ctypes.addressof(expr), (self.errstr() or b"").decode())
        if "matchinst" in text:  # PCP's lexer keeps its "/ is a pattern" state on failure
            self.register(f"purepcp.parse_test.m{next(self.names)}".encode(), b"matchinst(/x/,a)")
        return result


@pytest.fixture(scope="module")
def pcp() -> _LibPCP:
    return _LibPCP()


def ours(text: str) -> tuple[int, str] | None:
    try:
        parse(text)
    except DerivedSyntaxError as e:
        return e.offset, e.message
    return None


@pytest.mark.interop
def test_the_error_table_is_libpcps(pcp):
    for text, offset, message in ERRORS:
        assert pcp(text) == (offset, message), text


@pytest.mark.interop
def test_the_regular_expression_table_is_glibcs(pcp):
    for pattern, message in REGEX:
        escaped = pattern.replace("\\", "\\\\").replace("/", "\\/")
        expected = None if message is None else (10, f"bad regular expression: '{message}'")
        assert pcp(f"matchinst(/{escaped}/, a)") == expected, pattern


_TOKENS = [
    "a", "b.c", "sum", "type", "units", "1", "2.5", ".", "007", "4294967296", "+", "-", "*",
    "/", "<", "<=", "==", ">=", ">", "!=", "&&", "||", "!", "?", ":", "(", ")", "[x]",
    "[a\\]b]", ",", "=", "avg(", "count(", "delta(", "defined(", "scalar(", "rescale(",
    "matchinst(", "mkconst(", "anon(PM_TYPE_U32)", "anon(", '"Kbyte"', "/x/", "!/y/", "&",
    "@", '"unterm', "[unterm", "/(/", "type=u32", "semantics=counter", "units=Kbyte",
]  # fmt: skip
_ANON = re.compile(r"anon\(\s*[A-Za-z]")


@pytest.mark.interop
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=10),
    st.sampled_from([" ", ""]),
)
def test_random_expressions_fail_as_libpcps_do(pcp, tokens, gap):
    text = gap.join(tokens)
    # PCP frees twice after anon(BADTYPE) and aborts
    assume(not _ANON.search(text.replace("anon(PM_TYPE_U32)", "")))
    assert ours(text) == pcp(text)
