"""pmie rule files made by hypothesis, over the metrics of a fixed archive.

A `Source` names an archive, the metrics a rule may fetch from it (read from the
archive's own metadata by `catalogue`) and the replay options that put every
evaluation just after one of its records.  `rule_files(source)` draws rule files in
the language of pmie(1): arithmetic, relational and boolean operators, aggregates and
quantifiers over instances, samples and hosts, sample ranges, instance qualifiers,
rate and instant, rising and falling, numbers with units, rule sets, actions with
holdoff and %-substitutions, delta statements and macros.

The rules are typed and shaped as pmie wants them: within one statement every value
with instances has the same instances (one instance domain, one set of #qualifiers),
sample ranges live only under the _sample aggregates and quantifiers (one range per
statement), and every aggregate, rate and instant has a metric below it (PCP's pmie
dereferences a null pointer on an aggregate of constants).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from hypothesis import strategies as st

# PCP's semantics (PM_SEM_*) and the numeric types pmie evaluates (32, U32, 64, U64,
# FLOAT, DOUBLE): strings, aggregates and events are left out
SEM_COUNTER, SEM_INSTANT, SEM_DISCRETE = 1, 3, 4
NUMERIC_TYPES = frozenset(range(6))

UNITS = ["byte", "Kbyte", "Mbyte", "Kbytes", "sec", "msec", "min", "hour", "count",
         "Kcount", "usec", "millisecond", "seconds"]  # fmt: skip
PER = ["sec", "min", "hour", "second"]


@dataclass(frozen=True)
class Metric:
    """One numeric metric of an archive, as a rule sees it."""

    name: str
    sem: int
    indom: int | None  # None: no instance domain
    instances: tuple[str, ...] = ()  # names present throughout the archive


@dataclass(frozen=True)
class Source:
    """An archive and how to replay it: -t is its own sampling interval and -S falls
    just after a record, so that an instantaneous value is the same under PCP 6's
    rule (the prior observation) and PCP 7's (the closest one)."""

    archive: str  # QA archive name
    interval: int  # seconds: the archive's sampling interval
    start: str  # -S
    end: str  # -T
    prefixes: tuple[str, ...] = ()  # metric names to draw from ("" for all)
    constants: tuple[str, ...] = ("0", "1", "2", "10", "100", "0.5")
    metrics: tuple[Metric, ...] = field(default=(), compare=False)
    host: str = field(default="", compare=False)  # the archive's host, for :HOST


def catalogue(path: str, prefixes: tuple[str, ...] = ("",)) -> tuple[Metric, ...]:
    """The numeric metrics of archive PATH whose names start with one of PREFIXES,
    with the names of the instances every record of their domain holds."""
    return _read(path, prefixes)[0]


def _read(path: str, prefixes: tuple[str, ...]) -> tuple[tuple[Metric, ...], str]:
    """Archive PATH's numeric metrics (as `catalogue`) and the host its label names."""
    from purepcp.pmapi.archive.reader import Archive

    archive = Archive(path)
    try:
        return _numeric_metrics(archive, prefixes), archive.label.hostname
    finally:
        archive.close()


def _numeric_metrics(archive, prefixes: tuple[str, ...]) -> tuple[Metric, ...]:
    found = []
    for pmid, desc in sorted(archive.descs.items()):
        name = archive.names[pmid][0]
        if desc.type not in NUMERIC_TYPES or not name.startswith(prefixes):
            continue
        indom = None if desc.indom == 0xFFFFFFFF else desc.indom
        names: tuple[str, ...] = ()
        if indom is not None:
            names = _lasting_instances(archive.indoms.get(indom, []))
            if not names:
                continue
        found.append(Metric(name, desc.sem, indom, names))
    return tuple(found)


def _lasting_instances(history: list) -> tuple[str, ...]:
    """Names in every record of an instance domain's history (deltas aside), that a
    #'name' qualifier can spell (no quote or backslash in them)."""
    full = [set(r.names) for r in history if not r.delta]
    if not full:
        return ()
    kept = set.intersection(*full)
    first = [n for n in history[0].names if n in kept]
    return tuple(n for n in first if n and "'" not in n and "\\" not in n)


@cache
def loaded(source: Source, path: str) -> Source:
    """SOURCE with its metrics read from the archive at PATH."""
    from dataclasses import replace

    metrics, host = _read(path, source.prefixes or ("",))
    return replace(source, metrics=metrics, host=host)


# ---- the shape of one statement ---------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """What one statement's values may be: its instances (a metric family with one
    instance domain and the #qualifiers every fetch of it carries) and its sample range
    (used under _sample operators only)."""

    singular: tuple[Metric, ...]
    plural: tuple[Metric, ...]  # all of one instance domain
    qualifiers: str  # "" or " #'a' #'b'"
    window: int  # N of @0..N under _sample
    constants: tuple[str, ...]
    host: str = ""  # the archive's host: fetches may name it (:HOST)
    macros: tuple[str, ...] = ()  # numeric macros defined so far ($NAME)
    delta_macro: bool = False  # whether $delta may be used (no delta = ... follows)


def _quote(name: str) -> str:
    plain = re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name)
    return f"#{name}" if plain else f"#'{name}'"


@st.composite
def shapes(draw, source: Source, macros: tuple[str, ...] = (), delta_macro: bool = False) -> Shape:
    """One statement's Shape over SOURCE: an instance domain (and maybe #qualifiers) and
    the sample range its _sample operators use."""
    singular = tuple(m for m in source.metrics if m.indom is None)
    domains = sorted({m.indom for m in source.metrics if m.indom is not None})
    plural: tuple[Metric, ...] = ()
    qualifiers = ""
    if domains:
        indom = draw(st.sampled_from(domains))
        plural = tuple(m for m in source.metrics if m.indom == indom)
        names = plural[0].instances
        if draw(st.integers(0, 3)) == 0:
            picked = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
            qualifiers = "".join(" " + _quote(n) for n in picked)
    window = draw(st.integers(1, 3))
    return Shape(
        singular, plural, qualifiers, window, source.constants, source.host, macros,
        delta_macro,
    )  # fmt: skip


# ---- expressions ------------------------------------------------------------------
# Each draws (text, plural): plural when the value has instances.  `timed` is a sample
# range every fetch carries (inside a _sample operator); `metric` asks for a fetch
# somewhere below.


def _fetch(draw, shape: Shape, plural: bool, timed: int) -> tuple[str, bool]:
    if plural and shape.plural and draw(st.booleans()):
        m = draw(st.sampled_from(shape.plural))
        text, many = m.name + shape.qualifiers, True
    elif shape.singular:
        m = draw(st.sampled_from(shape.singular))
        text, many = m.name, False
    else:
        m = draw(st.sampled_from(shape.plural))
        text, many = m.name + shape.qualifiers, True
    if shape.host and draw(st.integers(0, 9)) == 0:
        name, _, rest = text.partition(" ")
        text = f"{name} :{shape.host} {rest}".rstrip()
    if timed:
        lo, hi = (0, timed) if draw(st.integers(0, 4)) else (timed, 0)
        return f"{text} @{lo}..{hi}", many
    if draw(st.integers(0, 9)) == 0:
        return f"{text} @{draw(st.integers(1, 2))}", many
    return text, many


#: pmie's reserved macros: the time of the evaluation (in the reporting zone); and
#: $delta, the rule's sample interval, only where no delta = ... follows (PCP's pmie
#: frees the value a use of $delta shares when delta is set again: a statement using it
#: then reads 0 or crashes pmie)
RESERVED = ["$minute", "$hour", "$day", "$month", "$year", "$day_of_week"]


def _number(draw, shape: Shape) -> str:
    kind = draw(st.integers(0, 11))
    if kind == 10:
        return draw(st.sampled_from(RESERVED + ["$delta"] * shape.delta_macro))
    if kind == 11 and shape.macros:
        return "$" + draw(st.sampled_from(shape.macros))
    text = draw(st.sampled_from(shape.constants))
    if kind == 0:
        return f"{text} {draw(st.sampled_from(UNITS))}"
    if kind == 1:
        return f"{text} {draw(st.sampled_from(UNITS))} / {draw(st.sampled_from(PER))}"
    return text


def arith(draw, shape: Shape, depth: int, plural: bool, timed: int = 0,
          metric: bool = False) -> tuple[str, bool]:  # fmt: skip
    """A numeric expression (pmie's aexp)."""
    c = draw(st.integers(0, 99)) if depth > 0 else 0
    if c < 30:
        if metric or timed or draw(st.integers(0, 2)):
            return _fetch(draw, shape, plural, timed)
        return _number(draw, shape), False
    if c < 55:
        op = draw(st.sampled_from("+-*/"))
        left, many = arith(draw, shape, depth - 1, plural, timed, metric)
        right, more = arith(draw, shape, depth - 1, plural, timed)
        return f"({left} {op} {right})", many or more
    if c < 65 and not timed and shape.plural:
        word = draw(st.sampled_from(["sum", "avg", "min", "max"]))
        inner, _ = arith(draw, shape, depth - 1, True, 0, True)
        return f"{word}_inst ({inner})", False
    if c < 70 and not timed and shape.plural:
        inner, _ = truth(draw, shape, depth - 1, True, 0, True)
        return f"count_inst ({inner})", False
    if c < 80 and not timed:
        word = draw(st.sampled_from(["sum", "avg", "min", "max"]))
        inner, many = arith(draw, shape, depth - 1, plural, shape.window, True)
        return f"{word}_sample ({inner})", many
    if c < 83 and not timed:
        word = draw(st.sampled_from(["sum", "avg", "min", "max"]))
        inner, many = arith(draw, shape, depth - 1, plural, 0, True)
        return f"{word}_host ({inner})", many
    if c < 90 and not timed:
        word = draw(st.sampled_from(["rate", "instant"]))
        inner, many = arith(draw, shape, depth - 1, plural, 0, True)
        return f"{word} ({inner})", many
    inner, many = arith(draw, shape, depth - 1, plural, timed, metric)
    return f"- {inner}", many


def truth(draw, shape: Shape, depth: int, plural: bool, timed: int = 0,
          metric: bool = False) -> tuple[str, bool]:  # fmt: skip
    """A truth-valued expression (pmie's bexp)."""
    c = draw(st.integers(0, 99)) if depth > 0 else 0
    if c < 35:
        rel = draw(st.sampled_from([">", "<", ">=", "<=", "==", "!="]))
        left, many = arith(draw, shape, depth - 1, plural, timed, metric or depth <= 0)
        right, more = arith(draw, shape, depth - 1, plural, timed)
        return f"{left} {rel} {right}", many or more
    if c < 50:
        op = draw(st.sampled_from(["&&", "||"]))
        left, many = truth(draw, shape, depth - 1, plural, timed, metric)
        right, more = truth(draw, shape, depth - 1, plural, timed)
        return f"({left}) {op} ({right})", many or more
    if c < 55:
        inner, many = truth(draw, shape, depth - 1, plural, timed, metric)
        return f"! ({inner})", many
    if c < 57 and not metric:
        return draw(st.sampled_from(["true", "false"])), False
    if c < 70 and not timed and shape.plural:
        word = draw(st.sampled_from(["some_inst", "all_inst", "50%_inst", "25%_inst"]))
        inner, _ = truth(draw, shape, depth - 1, True, 0, True)
        return f"{word} ({inner})", False
    if c < 78 and not timed:
        word = draw(st.sampled_from(["some_sample", "all_sample", "66%_sample"]))
        inner, many = truth(draw, shape, depth - 1, plural, shape.window, True)
        return f"{word} ({inner})", many
    if c < 82 and not timed:
        word = draw(st.sampled_from(["some_host", "all_host"]))
        inner, many = truth(draw, shape, depth - 1, plural, 0, True)
        return f"{word} ({inner})", many
    if c < 90 and not timed:
        word = draw(st.sampled_from(["rising", "falling"]))
        inner, many = truth(draw, shape, depth - 1, plural, 0, True)
        return f"{word} ({inner})", many
    if c < 95 and not timed and shape.plural:
        word = draw(st.sampled_from(["match_inst", "nomatch_inst"]))
        names = shape.plural[0].instances
        first = re.escape(draw(st.sampled_from(names))[:2]).replace("\\", "\\\\")
        inner, _ = truth(draw, shape, depth - 1, True, 0, True)
        regex = draw(st.sampled_from([f"^{first}", "[0-9]", "e"]))
        return f'some_inst ({word} "{regex}" ({inner}))', False
    return truth(draw, shape, depth - 1, plural, timed, metric)


# ---- statements -------------------------------------------------------------------

_SUBSTITUTIONS = ["%h", "%i", "%v", "%c", "%%"]


@st.composite
def actions(draw) -> str:
    """An action: print (mostly), shell, syslog or alarm, with an optional holdoff,
    joined by & and |, its text with %-substitutions.  Replaying an archive pmie runs
    none of them: it reports each."""

    def one() -> str:
        word = draw(st.sampled_from(["print"] * 5 + ["shell", "syslog", "alarm"]))
        subs = draw(st.lists(st.sampled_from(_SUBSTITUTIONS), max_size=3))
        text = " ".join(["at", *subs])
        holdoff = ""
        if draw(st.integers(0, 4)) == 0:
            holdoff = f"{draw(st.sampled_from(['2', '3 sec', '1 min']))} "
        extra = ' "more"' if draw(st.integers(0, 5)) == 0 else ""
        return f'{word} {holdoff}"{text}"{extra}'

    acts = [one()]
    for _ in range(draw(st.integers(0, 2))):
        acts.append(draw(st.sampled_from(["&", "|"])))
        acts.append(one())
    return " ".join(acts)


@st.composite
def statements(
    draw, source: Source, index: int, macros: tuple[str, ...], delta_macro: bool = False
) -> str:
    """One statement NAME = ...; over SOURCE's metrics, maybe using MACROS (and $delta
    if DELTA_MACRO)."""
    shape = draw(shapes(source, macros, delta_macro))
    kind = draw(st.integers(0, 99))
    name = f"r{index}"
    if kind < 35:
        text, _ = arith(draw, shape, draw(st.integers(0, 3)), draw(st.booleans()))
        if macros and draw(st.integers(0, 3)) == 0:
            text = f"({text}) * ${draw(st.sampled_from(macros))}"
        return f"{name} = {text};"
    if kind < 65:
        text, _ = truth(draw, shape, draw(st.integers(0, 3)), draw(st.booleans()))
        return f"{name} = {text};"
    if kind < 85:
        # a rule: its condition a single truth value
        cond = _single_truth(draw, shape)
        return f"{name} = {cond} -> {draw(actions())};"
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        cond = _single_truth(draw, shape)
        clauses.append(f"{cond} -> {draw(actions())}")
    tail = draw(st.sampled_from(["", "unknown", "otherwise", "both"]))
    text = f"{name} = ruleset " + "\n    else ".join(clauses)
    if tail in ("unknown", "both"):
        text += f"\n    unknown -> {draw(actions())}"
    if tail in ("otherwise", "both"):
        text += f"\n    otherwise -> {draw(actions())}"
    return text + ";"


def _single_truth(draw, shape: Shape) -> str:
    """A truth value with no instances (what a rule's condition must be)."""
    text, many = truth(draw, shape, draw(st.integers(0, 2)), False)
    if not many:
        return text
    word = draw(st.sampled_from(["some_inst", "all_inst"]))
    return f"{word} ({text})"


@st.composite
def rule_files(draw, source: Source, max_statements: int = 6) -> str:
    """A pmie rule file over SOURCE's metrics: macros, then statements, with a delta
    (a multiple of the archive's interval) now and then between them."""
    lines = []
    macros: list[str] = []
    if draw(st.integers(0, 2)) == 0:
        lines.append(f"lim = {draw(st.sampled_from(source.constants))};")
        macros.append("lim")
    if draw(st.integers(0, 3)) == 0:
        m = draw(st.sampled_from(source.metrics))
        lines.append(f'fam = "{m.name}";')
        lines.append("r_fam = $fam * 2;")
        if m.indom is None:
            lines.append("r_fam2 = rate $fam > $fam @1;")
        else:
            lines.append(
                f"r_fam2 = some_inst ($fam > {draw(st.sampled_from(source.constants))})"
                ' -> print "fam %i %v";'
            )
    if draw(st.integers(0, 3)) == 0:
        lines.append(f"big = {draw(st.sampled_from(source.constants))} Kbyte;")
        macros.append("big")
    count = draw(st.integers(1, max_statements))
    deltas = draw(st.lists(st.integers(0, count - 1), max_size=2, unique=True))
    for i in range(count):
        if i in deltas:
            lines.append(f"delta = {source.interval * draw(st.integers(1, 3))} sec;")
        after_last = all(i >= at for at in deltas)
        lines.append(draw(statements(source, i, tuple(macros), after_last)))
    return "\n".join(lines) + "\n"


@st.composite
def pmie_options(draw, source: Source) -> list[str]:
    """pmie's command line (the archive and rules aside): a mode (-v, -V or -W, maybe
    -e), a time zone, and SOURCE's replay window, at its interval or twice it."""
    mode = draw(st.sampled_from([["-v"], ["-V"], ["-W"], ["-v", "-e"]]))
    zone = draw(st.sampled_from([[], ["-z"], ["-Z", "UTC"]]))
    step = source.interval * draw(st.sampled_from([1, 1, 2]))
    return [*mode, *zone, "-t", str(step), "-S", source.start, "-T", source.end]


# ---- broken rule files ------------------------------------------------------------

#: what a mutation inserts: operators, keywords and punctuation of pmie's language
TOKENS = ["(", ")", "->", "&&", "||", "!", "@", "@1..", "#", "#'x'", ":", "%_inst",
          "50%_inst", "sum_inst", "some_inst", "ruleset", "else", "unknown", "otherwise",
          "rate", "=", ";", "$", "$nosuch", "3", "Kbyte", "/", "*", "print", '"x"', "true",
          "no.such.metric", "..", ",", "^2", "shell", "&", "|"]  # fmt: skip


@st.composite
def broken_rule_files(draw, source: Source) -> str:
    """A rule file of `rule_files` with one to three of its words deleted, doubled or
    replaced, or a word of pmie's language inserted: for pmie's syntax and binding
    errors (the messages, the line they name, and what still runs)."""
    words = draw(rule_files(source, max_statements=3)).split(" ")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(words) - 1))
        how = draw(st.integers(0, 3))
        if how == 0 and len(words) > 1:
            del words[at]
        elif how == 1:
            words.insert(at, words[at])
        elif how == 2:
            words[at] = draw(st.sampled_from(TOKENS))
        else:
            words.insert(at, draw(st.sampled_from(TOKENS)))
    return " ".join(words)
