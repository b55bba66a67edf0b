"""Derived-metric expressions printed: the canonical text PCP's grammar reads back as the
same tree, with only the parentheses it needs."""

from __future__ import annotations

import re

from .ast import (
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
from .parse import (
    DIGITS,
    EXPR_FUNCTIONS,
    KEYWORDS,
    NAME_FUNCTIONS,
    OPERATOR_NAMES,
    PRECEDENCE,
    is_u32,
)

__all__ = ["unparse"]

_PRIMARY = 7
_TOKEN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_TOKEN_NUMBER = re.compile(r"[0-9]+|[0-9]*\.[0-9]*")


def unparse(node: Node) -> str:
    """Canonical text for NODE with only the parentheses PCP's grammar needs, so that
    ``parse(unparse(t)) == t``; ValueError for trees no text can produce."""
    return _Printer().show(node)[0]


class _Printer:
    """Prints left to right, tracking PCP's lexer quirk: from ``matchinst(`` until that
    call's closing parenthesis, "/" starts a pattern, so no division can be written."""

    def __init__(self) -> None:
        self.slash_is_pattern = False

    def show(self, node: Node) -> tuple[str, int, int]:
        """(text, precedence of its top construct, lowest precedence of the
        constructs left open at its right end, which a following operator could join)."""
        match node:
            case Binary(op=op, left=left, right=right) if op in OPERATOR_NAMES:
                level = PRECEDENCE[op]
                lt, _, lopen = self.show(left)
                if op == "/" and self.slash_is_pattern:
                    raise ValueError("PCP reads '/' inside matchinst()'s expression as a pattern")
                rt, rprec, ropen = self.show(right)
                if lopen < level:
                    lt = f"({lt})"
                if rprec <= level and isinstance(right, Binary | Ternary):
                    rt, ropen = f"({rt})", _PRIMARY
                return f"{lt} {op} {rt}", level, min(level, ropen)
            case Unary(op=op, operand=operand) if op in ("-", "!"):
                level = PRECEDENCE[op] if op == "!" else 5
                text, prec, open_ = self.show(operand)
                if prec <= level and isinstance(operand, Binary | Ternary):
                    text, open_ = f"({text})", _PRIMARY
                gap = " " if op == "-" and text.startswith("-") else ""
                return f"{op}{gap}{text}", level, min(level, open_)
            case Ternary(guard=guard, yes=yes, no=no):
                gt = self.show(guard)[0]
                yt = self.show(yes)[0]
                nt, _, nopen = self.show(no)
                if isinstance(no, Ternary):
                    nt, nopen = f"({nt})", _PRIMARY
                return f"{gt} ? {yt} : {nt}", 1, min(1, nopen)
        return self.primary(node), _PRIMARY, _PRIMARY

    def primary(self, node: Node) -> str:
        match node:
            case Name(name=name):
                return _name(name)
            case Number(text=text):
                if not _TOKEN_NUMBER.fullmatch(text) or ("." not in text and not is_u32(text)):
                    raise ValueError(f"not a constant PCP can read: {text!r}")
                return text
            case Call(func=func, arg=arg) if func in NAME_FUNCTIONS:
                if not isinstance(arg, Name):
                    raise ValueError(f"PCP's {func}() takes a metric name only")
                return f"{func}({_name(arg.name)})"
            case Call(func=func, arg=arg) if func in EXPR_FUNCTIONS:
                return f"{func}({self.show(arg)[0]})"
            case Anon(type_name=type_name) if type_name in TYPE_NAMES:
                return f"anon(PM_TYPE_{type_name})"
            case MkConst(number=number, type_name=kind, semantics=sem, units=units):
                specs = [
                    f"{tag}={_spec_value(value, tag == 'units')}"
                    for tag, value in (("type", kind), ("semantics", sem), ("units", units))
                    if value is not None
                ]
                if not specs:
                    raise ValueError("PCP's mkconst() needs one of type, semantics or units")
                return f"mkconst({self.primary(number)}, {', '.join(specs)})"
            case Rescale(expr=expr, units=units):
                return f"rescale({self.show(expr)[0]}, {_quoted(units)})"
            case MatchInst(pattern=pattern, invert=invert, expr=expr):
                bang = "!" if invert else ""
                self.slash_is_pattern = True
                text = f"matchinst({bang}/{_escaped(pattern, '/')}/, {self.show(expr)[0]})"
                self.slash_is_pattern = False
                return text
            case Select(expr=Name(name=name), instance=instance):
                return f"{_name(name)}[{_escaped(instance, ']')}]"
            case Select(expr=expr, instance=instance):
                return f"({self.show(expr)[0]})[{_escaped(instance, ']')}]"
        raise ValueError(f"no derived-metric text for {node!r}")


def _name(name: str) -> str:
    if not _TOKEN_NAME.fullmatch(name) or name in KEYWORDS:
        raise ValueError(f"not a metric name PCP can read: {name!r}")
    return name


def _quoted(text: str) -> str:
    if '"' in text or "\0" in text:
        raise ValueError(f"PCP's strings cannot hold {text!r}")
    return f'"{text}"'


def _spec_value(value: str, quote: bool) -> str:
    plain = _TOKEN_NAME.fullmatch(value) and value not in KEYWORDS
    if quote or not (plain or (DIGITS.issuperset(value) and value and is_u32(value))):
        return _quoted(value)
    return value


def _escaped(text: str, close: str) -> str:
    if "\0" in text:
        raise ValueError(f"PCP's strings cannot hold {text!r}")
    return text.replace("\\", "\\\\").replace(close, "\\" + close)
