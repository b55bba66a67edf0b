"""A bound rule printed back as pmie prints it (showSyntax, showSubsyntax): what the
interactive debugger's ``l`` and ``v`` commands show.  Metrics appear with their host
and every instance they were bound to, units and constants folded, each operator in
pmie's words, operands in parentheses unless they are a leaf or a function."""

from __future__ import annotations

from . import values as v
from .show import concat_value, find_bindings, find_values
from .values import Node

#: our operator names in pmie's words, where they differ
_WORDS = {
    "rule": "->",
    "neg": "-",
    "not": "!",
    "==str": "==<str>",
    "!=str": "!=<str>",
    "match": "match_inst",
    "nomatch": "nomatch_inst",
    "else": "||",  # (a rule set's rules are chained as pmie chains them: by ||)
}
#: operands shown without parentheses
_BARE = frozenset(
    {"nop", "delay", "fetch", "rate", "instant"}
    | {f"{op}_{axis}" for op in ("sum", "avg", "max", "min", "count")
       for axis in ("host", "inst", "sample")}
)  # fmt: skip
#: actions whose holdoff is shown before their strings
_HELD = frozenset({"shell", "alarm", "print", "stomp"})
_ACTIONS = _HELD | {"syslog"}


def show_syntax(name: str, x: Node) -> str:
    """showSyntax: NAME and its expression."""
    return f"{name} =\n{syntax(x)};\n\n"


def show_subsyntax(name: str, x: Node) -> str:
    """showSubsyntax: the subexpression an action's %h, %i and %v come from."""
    head = f"{name} (subexpression for %h, %i and %v bindings) =\n"
    return f"{head}{syntax(find_values(find_bindings(x)))}\n\n"


def syntax(x: Node) -> str:
    """showSyn: X as text."""
    if x.op == "nop":
        return _constant(x)
    if x.op in ("fetch", "delay"):
        return _fetch(x)
    if x.op == "var":
        return f"${x.extra}"
    if x.op == "arg":
        return _arguments(x)
    word = _WORDS.get(x.op, x.op)
    if x.a1 is not None and x.a2 is not None:
        if x.op in _HELD:
            return f"{word} {syntax(x.a2)} {syntax(x.a1)}"
        if x.op.startswith("pcnt_"):
            pcnt = int(float(x.a2.sample()[0]) * 100 + 0.5)
            inner = syntax(x.a1)
            shown = inner if x.a1.op in ("nop", "delay", "fetch") else f"({inner})"
            return f"{word} {pcnt}% {shown}"
        if x.op in ("match", "nomatch"):
            return f"{word} /<regex>/ ({syntax(x.a1)})"
        return f"{_operand(x, x.a1)} {word} {_operand(x, x.a2)}"
    assert x.a1 is not None
    inner = syntax(x.a1)
    if x.a1.op in ("&", "|") or x.op in _ACTIONS:
        return f"{word} {inner}"
    return f"{word} ({inner})"


def _operand(x: Node, arg: Node) -> str:
    text = syntax(arg)
    return text if arg.op in _BARE or x.op == "rule" else f"({text})"


def _constant(x: Node) -> str:
    """showConst: a constant's values, one after another."""
    if x.nvals <= 0:
        return ""
    if x.sem == v.SEM_REGEX:
        return "/<regex>/"
    if x.sem == v.SEM_CHAR:
        return concat_value(x, 0)
    return " ".join(concat_value(x, i) for i in range(x.tspan)).lstrip()


def _fetch(x: Node) -> str:
    """A metric: its name, each host, the instances bound, and any sample range."""
    m = x.metrics
    assert m is not None
    parts = [m.name]
    parts += [f":{b.hname}" for b in (x.hosts or [m])]
    parts += [f"#{name}" for name in (m.inames or [])[: max(m.m_idom, 0)]]
    if x.op == "fetch":
        if x.tdom > 1:
            parts.append(f"@0..{x.tdom - 1}")
    else:
        assert x.a1 is not None
        last = x.tdom + x.a1.tdom - 1
        parts.append(f"@{x.tdom}" if x.tdom == x.a1.tdom - 1 else f"@{x.tdom}..{last}")
    return " ".join(parts)


def _arguments(x: Node) -> str:
    """An action's strings; syslog's after its level and tag, and only the first (as
    pmie shows them)."""
    strings = [f'"{s}"' for s in x.extra]
    options = x.options
    if x.parent is not None and x.parent.op == "syslog" and options is not None:
        first = strings[0] if strings else ""
        return f'[level={options.priority} tag="{options.tag}"] {first}'
    return " ".join(strings)
