"""purepcp.pmlogger.config: pmlogger's configuration language, its pmcpp -rs pass, and its errors.

The interop tests at the end run the reference pmlogger over the same configurations
and check that it accepts exactly those we accept, refusing the others at the same
file and line with the same message.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmlogger.config import (
    DEFAULT_INTERVAL_MS,
    MAX_INTERVAL_MS,
    ConfigError,
    LoggerConfig,
    LogGroup,
    MetricSpec,
    parse_config,
    parse_config_file,
    preprocess_config,
)
from tests.support.examples import examples
from tests.support.reference_pmcd import require_reference
from tests.support.waiting import DEADLINE


def groups(text: str, **kw) -> tuple[LogGroup, ...]:
    config = parse_config(text, "cfg", **kw)
    assert not config.access_ignored and not config.warnings
    return config.groups


def one(text: str, **kw) -> LogGroup:
    (group,) = groups(text, **kw)
    return group


def error(text: str, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg", **kw)
    return info.value


# -- statements ------------------------------------------------------------------


def test_mandatory_on_with_interval():
    assert one("log mandatory on 10 sec kernel.all.load\n") == LogGroup(
        mandatory=True,
        state="on",
        interval_ms=10_000,
        once=False,
        default_interval=False,
        metrics=(MetricSpec("kernel.all.load"),),
        line=1,
        file="cfg",
    )


@pytest.mark.parametrize(
    ("words", "mandatory", "state"),
    [
        ("log mandatory off", True, "off"),
        ("log mandatory maybe", True, "maybe"),
        ("log advisory off", False, "off"),
        ("mandatory off", True, "off"),
        ("mandatory maybe", True, "maybe"),
        ("advisory off", False, "off"),
        ("log off", False, "off"),
        ("off", False, "off"),
    ],
)
def test_states_without_an_interval(words, mandatory, state):
    group = one(f"{words} disk.dev\n")
    assert (group.mandatory, group.state, group.interval_ms) == (mandatory, state, None)
    assert not group.once and not group.default_interval


@pytest.mark.parametrize("words", ["log advisory on", "advisory on", "log on", "on"])
def test_log_and_the_control_are_optional_and_advisory_is_the_default(words):
    group = one(f"{words} 2 min disk.dev\n")
    assert (group.mandatory, group.state, group.interval_ms) == (False, "on", 120_000)


def test_once_and_default():
    once, default = groups("log mandatory on once hinv.ncpu\nlog advisory on default hinv\n")
    assert (once.interval_ms, once.once, once.default_interval) == (None, True, False)
    assert (default.interval_ms, default.once, default.default_interval) == (
        DEFAULT_INTERVAL_MS,
        False,
        True,
    )
    assert DEFAULT_INTERVAL_MS == 60_000


def test_default_is_the_interval_given_like_dash_t():
    group = one("log on default hinv\n", default_interval_ms=250)
    assert (group.interval_ms, group.default_interval) == (250, True)
    assert "Logging delta" in str(error("on default x\n", default_interval_ms=MAX_INTERVAL_MS + 1))


@pytest.mark.parametrize(
    ("unit", "msec"),
    [
        *((u, 1) for u in ("msec", "msecs", "millisecond", "milliseconds")),
        *((u, 1000) for u in ("sec", "secs", "second", "seconds")),
        *((u, 60_000) for u in ("min", "mins", "minute", "minutes")),
        *((u, 3_600_000) for u in ("hour", "hours")),
    ],
)
def test_every_unit_spelling(unit, msec):
    assert one(f"log on 3 {unit} x\n").interval_ms == 3 * msec
    assert one(f"log on every 3 {unit} x\n").interval_ms == 3 * msec
    assert one(f"log on 3{unit} x\n").interval_ms == 3 * msec  # "3sec" scans as 3 then sec


def test_zero_interval_is_kept_as_written():
    group = one("on 0 sec x\n")
    assert (group.interval_ms, group.once) == (0, False)  # pmlogger treats it as once


@pytest.mark.parametrize(
    "text",
    [
        "on 1 day x\n",  # no such unit
        "on 1 x\n",  # a number needs a unit
        "on every once x\n",
        "on x\n",
        "off every 10 sec x\n",  # off and maybe take no interval
        "mandatory maybe 10 sec x\n",
        "advisory maybe x\n",  # maybe is mandatory only
        "log maybe x\n",
        "log x\n",
        "log mandatory x\n",
        "x\n",
        "on -1 sec x\n",
    ],
)
def test_refused_statements(text):
    assert error(text).line == 1


def test_decimal_intervals_are_refused_as_pmlogger_does():
    e = error("log on 0.5 sec x\n")
    assert (e.line, e.message) == (1, "Unexpected character '.'")


def test_interval_limits_and_c_overflow():
    assert one(f"on {MAX_INTERVAL_MS} msec x\n").interval_ms == MAX_INTERVAL_MS
    assert error(f"on {MAX_INTERVAL_MS + 1} msec x\n").message == (
        "Logging delta (268435456 msec) cannot be bigger than 268435455 msec"
    )
    assert error("on 75 hours x\n").message.startswith("Logging delta (270000000 msec) cannot")
    # as pmlogger: atol() saturates and the multiplication wraps
    assert error("on 9223372036854775807 sec x\n").message == (
        "Logging delta (-1000 msec) must be positive"
    )
    assert error("on 99999999999999999999 msec x\n").message.startswith(
        "Logging delta (9223372036854775807 msec) cannot"
    )


# -- metrics and instances ---------------------------------------------------------


def test_metric_lists_separated_by_white_space_or_commas():
    text = "log on once {\n  a.b c,d\n, e\tf.g.h }\n"
    assert [m.name for m in one(text).metrics] == ["a.b", "c", "d", "e", "f.g.h"]


def test_instances_names_numbers_strings_mixed_with_commas():
    group = one('log on once kernel.all.load [ "1 minute" 5, fifteen,"a#b [x]" 0 ]\n')
    assert group.metrics == (
        MetricSpec("kernel.all.load", ("1 minute", 5, "fifteen", "a#b [x]", 0)),
    )


def test_instances_in_a_list_and_glued_punctuation():
    group = one('on once {a[1]b["x"],c [ 2 ] }\n')
    assert group.metrics == (MetricSpec("a", (1,)), MetricSpec("b", ("x",)), MetricSpec("c", (2,)))


def test_instance_numbers_are_c_ints_as_in_pmlogger():
    assert one("on once x [ 99999999999 ]\n").metrics[0].instances == (1215752191,)


def test_keywords_are_names_inside_braces_only():
    group = one("log on once { log once [ on, all ] every }\n")
    assert group.metrics == (
        MetricSpec("log"),
        MetricSpec("once", ("on", "all")),
        MetricSpec("every"),
    )
    assert error("log on once x [ on ]\n").message == "syntax error"
    assert error("log on once once\n").message == "syntax error"


def test_words_that_merely_start_like_keywords_are_names():
    assert [m.name for m in one("on once {onx log.a secs2 alls}\n").metrics] == [
        "onx",
        "log.a",
        "secs2",
        "alls",
    ]
    assert one("on once online\n").metrics == (MetricSpec("online"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("on once { }\n", "syntax error"),
        ("on once { a, }\n", "syntax error"),
        ("on once { , a }\n", "syntax error"),
        ("on once { a,, b }\n", "syntax error"),
        ("on once a [ ]\n", "syntax error"),
        ("on once a [ 1, ]\n", "syntax error"),
        ("on once a [ a-b ]\n", "syntax error"),  # a hyphen makes a host name, not a name
        ("on once kernel-all\n", "syntax error"),
        ("on once a [ 1a ]\n", "syntax error"),  # hex digits: an IPv6 address to the scanner
        ("on once a [ 1.5 ]\n", "Unexpected character '.'"),
        ('on once a [ "" ]\n', "Unexpected character '\"'"),
        ('on once a [ "open ]\n', "Unexpected character '\"'"),
        ("on once _a\n", "Unexpected character '_'"),
        ("on once a/b\n", "Unexpected character '/'"),
        ("on once a ;\n", "syntax error"),
        ("on once a /* c */\n", "Unexpected character '/'"),
        ("on once {a} {b}\n", "syntax error"),
        ("on once a[1]b\n", "syntax error"),
    ],
)
def test_refused_metric_specs(text, message):
    assert (error(text).line, error(text).message) == (1, message)


def test_comments_anywhere_and_blank_lines():
    text = "# head\n\n  log on once { # open\n a # one\n\t, b[ # inst\n 1 ] } # end\n#\n"
    (group,) = groups(text)
    assert group.metrics == (MetricSpec("a"), MetricSpec("b", (1,)))
    assert group.line == 3


def test_groups_keep_file_order_and_lines():
    text = "on once a\n\n# x\nmandatory off b\r\nlog advisory\non\n5 sec c\n"
    assert [(g.state, g.line) for g in groups(text)] == [("on", 1), ("off", 4), ("on", 5)]


def test_empty_configs():
    assert parse_config("") == LoggerConfig(groups=(), access_ignored=False, warnings=())
    assert parse_config("# nothing\n\n   \n").groups == ()


# -- the [access] section ----------------------------------------------------------


ACCESS = (
    "[access]\n"
    "allow localhost, 127.0.0.1, *, local:*, unix:/tmp/x, 192.168.*, ::1, fe80::*, "
    "a-b.example.com : advisory, mandatory;\n"
    "disallow .* : all except enquire ;\n"
    "allow 10.1.2.* : all;\n"
)


def test_access_section_becomes_rules_for_the_control_port():
    config = parse_config("log on once { a }\n" + ACCESS, "cfg")
    assert config.groups == (
        LogGroup(False, "on", None, True, False, (MetricSpec("a"),), 1, "cfg"),
    )
    assert config.access_ignored and config.warnings == ()
    hosts = ["localhost", "127.0.0.1", "*", "local:*", "unix:/tmp/x", "192.168.*", "::1"]
    hosts += ["fe80::*", "a-b.example.com"]
    # (host, ops spoken of, ops denied): allow ops; disallow all except; allow all
    assert config.access_rules == (
        *((h, 0x3, 0) for h in hosts),
        (".*", 0x7, 0x3),
        ("10.1.2.*", 0x7, 0),
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("log on once a\n[access]\nallow * : all;\n", 2),  # "[" opens a's instance list
        ("[access]\n", 2),  # at least one rule
        ("[access]\nallow * : all\n", 3),
        ("[access]\nallow * all;\n", 2),
        ("[access]\nallow : all;\n", 2),
        ("[access]\nallow 10 : all;\n", 2),
        ("[access]\nallow * : all, enquire;\n", 2),
        ("[access]\nallow * : except enquire;\n", 2),
        ("[access]\nallow * : log;\n", 2),
        ("[access]\nallow * : all;\nlog on once a\n", 3),
        ("[ access ]\nallow *, : all;\n", 2),
    ],
)
def test_refused_access_sections(text, line):
    e = error(text)
    assert (e.line, e.message) == (line, "syntax error")


# -- errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("log mandatory sometimes foo\n", 1),
        ("log mandatory on 1\n\nfoo\n", 3),  # at the token that does not fit
        ("log on once { a\n", 2),  # end of input: after the last newline
        ("log on once { a", 1),
        ("log on once { a\n}\n[access]\n", 4),
        ("on once a\n\n\n  b\n", 4),
    ],
)
def test_syntax_error_lines(text, line):
    e = error(text)
    assert (e.file, e.line, e.message) == ("cfg", line, "syntax error")


def test_error_text_is_pmlogger_report_on_one_line():
    e = error("log mandatory sometimes foo\n")
    assert str(e) == "Specification error in configuration file (cfg) [line 1] syntax error"
    assert isinstance(e, Exception) and e.args == (str(e),)


def test_interval_errors_name_the_line_of_the_unit():
    e = error("log on\n268435456\nmsec\nx\n")
    assert (e.line, e.message) == (
        3,
        "Logging delta (268435456 msec) cannot be bigger than 268435455 msec",
    )


def test_unexpected_character_is_found_when_scanned():
    e = error("on once a\non once b c\n%\n")
    assert (e.line, e.message) == (2, "syntax error")  # c is refused before % is read


# -- pmcpp -rs -----------------------------------------------------------------------


def test_macros_restricted_to_percent_forms():
    text = "%define FREQ '15 sec'\n%define PFX kernel.all.\nlog on %FREQ { %{PFX}load FREQ PFX }\n"
    (group,) = groups(text)
    assert group.interval_ms == 15_000
    assert [m.name for m in group.metrics] == ["kernel.all.load", "FREQ", "PFX"]
    assert error("%define A 1\non once x%A_y\n").message == "Unexpected character '%'"


def test_predefined_macros_and_ifdef():
    text = "%ifdef WANT\non once a\n%else\non once b\n%endif\non %N sec c\n"
    assert [g.metrics[0].name for g in groups(text, macros={"N": 1})] == ["b", "c"]
    assert [g.metrics[0].name for g in groups(text, macros={"N": 1, "WANT": ""})] == ["a", "c"]
    assert [g.line for g in groups(text, macros={"N": 1})] == [4, 6]


def test_include_searches_the_directories_given():
    files = {"/inc/freq": "%define F 2 \n", "/inc/more": "on once more\n", "/abs": "off abs\n"}
    text = '%include "freq"\non %F min a\n%include <more>\n%include "/abs"\n'
    config = parse_config(text, "top", include_dirs=["/none", "/inc"], reader=files.get)
    assert [(g.metrics[0].name, g.file, g.line) for g in config.groups] == [
        ("a", "top", 2),
        ("more", "/inc/more", 1),
        ("abs", "/abs", 1),
    ]
    assert config.groups[0].interval_ms == 120_000


def test_errors_in_included_files_name_them():
    files = {"/d/bad": "on once\n{ a,\n}\n"}
    e = error('on once x\n%include "bad"\n', include_dirs=["/d"], reader=files.get)
    assert (e.file, e.line, e.message) == ("/d/bad", 3, "syntax error")
    e = error('%include "bad"\n', include_dirs=["/d"], reader={"/d/bad": "on once { a\n"}.get)
    assert (e.file, e.line) == ("cfg", 2)  # end of input is in the top file


def test_without_a_reader_nothing_is_included():
    e = error('%include "anything"\n')
    assert e.preprocessor and (e.file, e.line) == ("cfg", 1)
    assert str(e) == "pmcpp: cfg[1]: Cannot open file for %include"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("%define\n", "Missing macro name"),
        ("%define 1x\n", "Illegal character in macro name"),
        ("%define F 1 sec\n", "Unexpected extra text in a control line"),
        ("%define F '1 sec\n", "Unterminated value string in %define"),
        ("%define F\n%define F\n", "Macro redefinition"),
        ("%endif\n", "No matching %ifdef or %ifndef for %endif"),
        ("%else\n", "No matching %ifdef or %ifndef for %else"),
        ("%ifdef A\n%ifdef B\n", "Nested %ifdef or %ifndef"),
        ("%include foo\n", 'Expected " or < after %include'),
        ('%include "foo\n', 'Expected " after file name'),
        ('%include "foo" x\n', "Unexpected extra text in %include line"),
        ('%shell "date"\n', "%shell is not supported (PCP's pmcpp would run a command here)"),
    ],
)
def test_preprocessor_errors(text, message):
    e = error(text)
    assert e.preprocessor and e.message == message
    assert str(e) == f"pmcpp: cfg[{text.count(chr(10))}]: {message}"


def test_unterminated_ifdef_is_reported_for_the_whole_file():
    e = error("on once a\n%ifndef X\non once b\n")
    assert (e.line, str(e)) == (
        0,
        "pmcpp: cfg: End of input and no matching %endif for %ifdef or %ifndef at line 2",
    )


def test_preprocess_config_keeps_origins():
    lines = preprocess_config("%define A x\n# %A\n%{A} %A\n", "f")
    assert [(sl.file, sl.line, sl.text) for sl in lines] == [("f", 2, "# x"), ("f", 3, "x x")]


def test_parse_config_file(tmp_path):
    (tmp_path / "common").write_text("log mandatory on 1 sec kernel.all.load\n")
    cfg = tmp_path / "cfg"
    cfg.write_text('%include "common"\nlog on once hinv.ncpu\n')
    config = parse_config_file(str(cfg))
    assert [(g.file, g.line) for g in config.groups] == [
        (str(tmp_path / "common"), 1),
        (str(cfg), 2),
    ]
    with pytest.raises(FileNotFoundError):
        parse_config_file(str(tmp_path / "missing"))


# -- property: configurations generated from the grammar ------------------------------

UNITS = {
    1: ("msec", "msecs", "millisecond", "milliseconds"),
    1000: ("sec", "secs", "second", "seconds"),
    60_000: ("min", "mins", "minute", "minutes"),
    3_600_000: ("hour", "hours"),
}
KEYWORDS = (
    *("log", "mandatory", "advisory", "on", "off", "maybe", "every", "once", "default"),
    *("access", "allow", "disallow", "all", "except", "enquire"),
    *(spelling for spellings in UNITS.values() for spelling in spellings),
)

plain_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.]{0,10}", fullmatch=True).filter(
    lambda s: s not in KEYWORDS
)
any_names = st.one_of(plain_names, st.sampled_from(KEYWORDS))  # inside { }
comments = st.text(st.characters(exclude_characters="\n", exclude_categories=("Cs",)), max_size=8)
spaces = st.one_of(
    st.sampled_from([" ", "\t", "\n", " \r\n", "  \n\t "]), comments.map(" #{}\n".format)
)
strings = st.text(st.characters(exclude_characters='"\n', exclude_categories=("Cs",)), min_size=1)
hosts = st.sampled_from(["localhost", "127.0.0.1", "*", "local:*", "unix:/tmp/s", "10.2.*", "::1"])
operations = st.sampled_from(["all", "all except enquire", "advisory , mandatory", "enquire"])


@st.composite
def configs(draw) -> tuple[str, LoggerConfig, int]:
    """A configuration text, the LoggerConfig it means, and the -t interval it assumes."""
    default_ms = draw(st.integers(0, MAX_INTERVAL_MS))
    access = draw(st.booleans())
    out: list[str] = []
    result: list[LogGroup] = []

    def sep(comma: bool = False) -> None:
        out.append(draw(spaces))
        if comma and draw(st.booleans()):
            out.append("," + draw(spaces))

    def metric(in_list: bool) -> MetricSpec:
        name = draw(any_names if in_list else plain_names)
        out.append(name)
        instances: list[str | int] = []
        if draw(st.booleans()):
            sep()
            out.append("[")
            for i in range(draw(st.integers(1, 3))):
                sep(comma=i > 0)
                kind = draw(st.sampled_from(["name", "number", "string"]))
                if kind == "name":
                    inst: str | int = draw(any_names if in_list else plain_names)
                    out.append(inst)
                elif kind == "number":
                    inst = draw(st.integers(0, 2**31 - 1))
                    out.append(str(inst))
                else:
                    inst = draw(strings)
                    out.append(f'"{inst}"')
                instances.append(inst)
            sep()
            out.append("]")
        return MetricSpec(name, tuple(instances))

    count = draw(st.integers(0, 4))
    for n in range(count):
        sep()
        line = "".join(out).count("\n") + 1
        words = ["log"] if draw(st.booleans()) else []
        control = draw(st.sampled_from(["mandatory", "advisory", ""]))
        state = draw(
            st.sampled_from(["on", "off", "maybe"] if control == "mandatory" else ["on", "off"])
        )
        words += [w for w in (control, state) if w]
        out.append(" ".join(words))
        interval, once, default = None, False, False
        if state == "on":
            sep()
            how = draw(st.sampled_from(["once", "default", "every", "interval"]))
            if how == "once":
                out.append("once")
                once = True
            elif how == "default":
                out.append("default")
                interval, default = default_ms, True
            else:
                unit = draw(st.sampled_from(sorted(UNITS)))
                number = draw(st.integers(0, MAX_INTERVAL_MS // unit))
                glue = "" if draw(st.booleans()) else " "
                out.append(f"{'every ' if how == 'every' else ''}{number}{glue}")
                out.append(draw(st.sampled_from(UNITS[unit])))
                interval = number * unit
        sep()
        braces = draw(st.booleans()) or (access and n == count - 1)
        if braces:
            out.append("{")
            specs = []
            for i in range(draw(st.integers(1, 4))):
                sep(comma=i > 0)
                specs.append(metric(in_list=True))
            sep()
            out.append("}")
        else:
            specs = [metric(in_list=False)]
        result.append(
            LogGroup(
                control == "mandatory", state, interval, once, default, tuple(specs), line, "gen"
            )
        )
    if access:
        sep()
        out.append("[access]" if draw(st.booleans()) else "[ access ]")
        for _ in range(draw(st.integers(1, 3))):
            sep()
            out.append(draw(st.sampled_from(["allow", "disallow"])))
            for i in range(draw(st.integers(1, 3))):
                out.append(("," if i else " ") + draw(hosts))
            out.append(f" : {draw(operations)};")
    sep()
    return "".join(out), LoggerConfig(tuple(result), access, ()), default_ms


@settings(max_examples=examples(300), deadline=None)
@given(configs())
def test_generated_configs_parse_to_what_they_say(case):
    text, expected, default_ms = case
    config = parse_config(text, "gen", default_interval_ms=default_ms)
    assert config.groups == expected.groups
    assert config.access_ignored == expected.access_ignored
    assert config.warnings == ()
    assert bool(config.access_rules) == expected.access_ignored


@settings(max_examples=examples(200), deadline=None)
@given(st.text(st.sampled_from(list('logn {}[],#"%:;.-_*01 \nae')), max_size=60))
def test_arbitrary_text_parses_or_raises_config_error(text):
    try:
        parse_config(text)
    except ConfigError as e:
        assert e.line >= 0 and "\n" not in str(e)


# -- interop with the reference pmlogger -------------------------------------------------

PMLOGGER_ERROR = re.compile(
    r"Specification error in configuration file \((.*)\)\n\[line (\d+)\] (.*)"
)

# (config text, other files beside it); metrics are ones a local context has
INTEROP_CASES = [
    ("log mandatory on 1 sec kernel.all.load\n", {}),
    ('mandatory on every 100 msecs { kernel.all.load [ 1 "5 minute", 15 ] , hinv.ncpu }\n', {}),
    ("# comment\nlog advisory on once hinv.ncpu # trailing\n", {}),
    ("on 10sec kernel.all.load\noff hinv.ncpu\nlog mandatory maybe kernel.all\n", {}),
    ("log mandatory on default {\n  log\n  once,\n  kernel.all.load [ on ]\n}\n", {}),
    ("log on 2 minutes kernel.all.load\nlog on 1 hour hinv\nlog on 1 millisecond hinv.ncpu\n", {}),
    (
        "log on once { hinv.ncpu }\n[access]\nallow localhost, 127.0.0.1 : all;\n"
        "disallow * : all except enquire;\nallow local:* : advisory, mandatory;\n",
        {},
    ),
    (
        "%define FREQ '2 sec'\n%define M kernel.all\nlog mandatory on %FREQ %{M}.load\n"
        "%ifdef NOPE\nrubbish\n%else\nlog on once hinv.ncpu\n%endif\n",
        {},
    ),
    ('%include "common"\nlog on once hinv.ncpu\n', {"common": "on 1 sec kernel.all.load\n"}),
    ("# nothing to log\n", {}),
    ("log mandatory sometimes kernel.all.load\n", {}),
    ("log mandatory on 1\n\nkernel.all.load\n", {}),
    ("log advisory maybe kernel.all.load\n", {}),
    ("log mandatory off every 10 sec kernel.all.load\n", {}),
    ("log on 0.5 sec kernel.all.load\n", {}),
    ("log on once { kernel.all.load, }\n", {}),
    ("log on once { }\n", {}),
    ("log on once kernel.all.load [ on ]\n", {}),
    ("log on once kernel-all.load\n", {}),
    ('log on once kernel.all.load [ "" ]\n', {}),
    ("log on once {\nkernel.all.load\n", {}),
    ("log on once kernel.all.load\n[access]\nallow localhost : all;\n", {}),
    ("log on once { hinv.ncpu }\n[access]\n", {}),
    ("log on once { hinv.ncpu }\n[access]\nallow * : all;\nlog on once hinv.ncpu\n", {}),
    ("log on\n268435456 msec\nkernel.all.load\n", {}),
    ("log on 9223372036854775807 sec kernel.all.load\n", {}),
    ("log on once hinv.ncpu ;\n", {}),
    ('%include "missing"\nlog on once hinv.ncpu\n', {}),
    ('log on once hinv.ncpu\n%include "bad"\n', {"bad": "log on once\n{ kernel.all.load,\n}\n"}),
]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _run_reference(cfg: Path, work: Path) -> str:
    """The reference pmlogger's log for CFG, once it has parsed CFG or given up on it."""
    log = work / "pmlogger.log"
    cwd = work / "cwd"  # not the config's directory: pmcpp would look for includes there first
    cwd.mkdir()
    argv = ["pmlogger", "-o", "-c", str(cfg), "-s", "1", "-t", "0.1", "-l", str(log)]
    proc = subprocess.Popen(
        [*argv, str(work / "arch")], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while proc.poll() is None and time.monotonic() < deadline:
            if "Config parsed" in _read(log):
                break  # it may go on logging (or waiting, for off/maybe): enough seen
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return _read(log)


def _compare_with_reference(cfg: Path, work: Path) -> None:
    """Check that ours and the reference pmlogger both accept CFG, or refuse it alike."""
    log = _run_reference(cfg, work)
    assert "preprocessor cmd" in log, log  # it got as far as reading the configuration
    try:
        parse_config_file(str(cfg))
        ours: ConfigError | None = None
    except ConfigError as e:
        ours = e
    reference_accepts = "Config parsed" in log and "pmcpp: Error" not in log
    assert (ours is None) == reference_accepts, (ours, log)
    if ours is None:
        return
    if ours.preprocessor:
        # pmlogger goes on to parse what pmcpp wrote before it stopped; we stop here
        assert f"pmcpp: {ours.file}[{ours.line}]:" in log, log
        assert f"pmcpp: Error: {ours.message}" in log, log
    else:
        theirs = PMLOGGER_ERROR.search(log)
        assert theirs is not None, log
        assert (ours.file, str(ours.line), ours.message) == theirs.groups(), log


@pytest.mark.interop
@pytest.mark.parametrize(("text", "files"), INTEROP_CASES)
def test_reference_pmlogger_accepts_what_we_accept(tmp_path, text, files):
    require_reference("pmlogger")
    conf = tmp_path / "conf"
    conf.mkdir()
    for name, content in files.items():
        (conf / name).write_text(content)
    cfg = conf / "cfg"
    cfg.write_text(text)
    _compare_with_reference(cfg, tmp_path)


SOUP = [
    *("log", "mandatory", "advisory", "on", "off", "maybe", "every", "once", "default"),
    *("1", "10", "5sec", "0", "msec", "secs", "minutes", "hour", "0.5", "1a", "a-b"),
    *("kernel.all.load", "hinv.ncpu", "hinv", "{", "}", "[", "]", ",", '"1 minute"', "one"),
    *("[access]", "allow", "disallow", "localhost", "*", "127.0.0.1", ":", ";", "all"),
    *("except", "enquire", "access", "# c\n", "\n", "%define X 1\n", "%X", "%{X}", "_"),
]
STATEMENTS = st.lists(
    st.tuples(
        st.sampled_from(["log ", ""]),
        st.sampled_from(["mandatory ", "advisory ", ""]),
        st.sampled_from(["on once", "on every 2 sec", "on 100 msec", "on default", "off"]),
        st.sampled_from([" hinv.ncpu", ' { kernel.all.load [ 1 "5 minute" ], hinv }']),
    ).map("".join),
    min_size=1,
    max_size=3,
).map("\n".join)
SOUPS = st.lists(
    st.tuples(st.sampled_from(SOUP), st.sampled_from([" ", "\n", ""])).map("".join), max_size=12
).map("".join)


@pytest.mark.interop
@settings(max_examples=examples(40), deadline=None)
@given(st.one_of(STATEMENTS, SOUPS))
def test_reference_pmlogger_agrees_on_random_configs(text):
    require_reference("pmlogger")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "conf").mkdir()
        cfg = work / "conf" / "cfg"
        cfg.write_text(text + "\n")
        _compare_with_reference(cfg, work)


def test_a_metric_is_located_where_pmloggers_warnings_say():
    """QA 1353: pmlogger warns at the line yacc's lookahead is on, the token after the
    name (or the name's "]"), not the name's own line."""
    text = "log mandatory on once {\nfoo\n}\nlog on 1 sec { bar # x\n\n  baz [\n 1 ]\n qux }\n"
    specs = [m for g in groups(text) for m in g.metrics]
    assert [(m.name, m.where[1]) for m in specs] == [("foo", 3), ("bar", 6), ("baz", 7), ("qux", 8)]
    assert one("log mandatory on once foo\n").metrics[0].where[1] == 2  # (the end of the file)


# -- pmlogger's name cache (pass0.c), for -D appl6 ---------------------------------------

#: QA 1353's configuration
CACHE_CONFIG = """\
# not_a_name_0 in comment
#
log advisory on once { sample.bin ["bin-100", "bin-200", "]"] }
log
mandatory
on
once
{
is_a_name_0
}
log advisory on 1 minute { is_a_name_1 [ "]", "not_a_name_1",  "not_a_name_2" ] }
log advisory on 10 minutes { is_a_name_2 [ "]", "not_a_name_3", "not_a_name_4" ] }
log mandatory on 15 seconds { is_a_name_3 is_a_name_4 # is_not_a_name_5
# is_not_a_name_6
\t\tis_a_name_5
\t\tdup_key_ key_dup_\t# these will be hash key synonyms
\t\tsample.bin\t\t# duplicate name
\t\tsample.bad.unknown\t# no pmDesc
}
"""


def test_the_preprocessed_text_is_pmcpps():
    """pmcpp -rs's output: a line marker first, an empty line for each directive."""
    config = parse_config("%define x\nlog mandatory on once { a }\n", "f")
    assert config.preprocessed() == '# 1 "f"\n\nlog mandatory on once { a }\n'


def test_pass0_finds_the_names_pcps_does_at_its_lines():
    """QA 1353: names inside braces only, comments and quoted instances skipped, each at
    the line count when its end was read (after pmcpp's marker line)."""
    from purepcp.pmlogger.namecache import scan_names

    text = parse_config(CACHE_CONFIG, "TMP.config").preprocessed()
    assert scan_names(text) == [
        (4, "sample.bin"), (11, "is_a_name_0"), (12, "is_a_name_1"), (13, "is_a_name_2"),
        (14, "is_a_name_3"), (14, "is_a_name_4"), (17, "is_a_name_5"), (17, "dup_key_"),
        (17, "key_dup_"), (18, "sample.bin"), (19, "sample.bad.unknown"),
    ]  # fmt: skip


class _Names:
    """A context knowing two of QA 1353's names (one without a descriptor)."""

    def lookup_names(self, names):
        known = {"sample.bin": 0x07400006, "sample.bad.unknown": 0x07400036}
        return [known.get(n, 0xFFFFFFFF) for n in names]

    def lookup_descs(self, pmids):
        from purepcp.pmapi.desc import Desc
        from purepcp.pmapi.types import PMSem, PMType

        return [
            Desc(p, PMType.PM_TYPE_32, 0x07400002, PMSem.PM_SEM_INSTANT) if p == 0x07400006
            else None
            for p in pmids
        ]  # fmt: skip

    def traverse(self, name):
        from purepcp.pmapi.errors import PM_ERR_NAME, PMError

        raise PMError(PM_ERR_NAME)


def test_the_name_cache_is_dumped_in_pcps_hash_order():
    """QA 1353: the cache's entries in libpcp's hash table order (fold_string's keys, the
    table grown and relinked as __pmHashAdd does), synonyms newest first."""
    from purepcp.pmlogger.namecache import NameCache, fold_string

    assert fold_string("dup_key_") == fold_string("key_dup_")
    cache = NameCache(_Names())
    cache.build(parse_config(CACHE_CONFIG, "TMP.config").preprocessed())
    assert cache.dump() == (
        'cache list[0]: "sample.bin"[L] 29.0.6 InDom:29.2\n'
        'cache list[1]: "key_dup_"[U] PM_ID_NULL -> "dup_key_"[U] PM_ID_NULL\n'
        'cache list[2]: "is_a_name_0"[U] PM_ID_NULL\n'
        'cache list[3]: "is_a_name_5"[U] PM_ID_NULL\n'
        'cache list[4]: "is_a_name_3"[U] PM_ID_NULL\n'
        'cache list[5]: "is_a_name_4"[U] PM_ID_NULL\n'
        'cache list[6]: "sample.bad.unknown"[L] 29.0.54 [no pmDesc]\n'
        'cache list[7]: "is_a_name_1"[U] PM_ID_NULL\n'
        'cache list[8]: "is_a_name_2"[U] PM_ID_NULL\n'
        "10 unique names + 1 duplicates (1 hash key synonyms)\n"
    )
    assert cache.lookup("sample.bin") == (True, "cache_lookup(sample.bin): success\n")
    assert cache.lookup("sample.bad.unknown")[1].endswith("in cache, but no pmDesc\n")
    assert cache.lookup("nope") == (False, "cache_lookup(nope): not in cache\n")
