"""Variable values: checking a proposed value against its type, the two printed forms
(for people, and for the pmie rules written), and $name$ expansion."""

from __future__ import annotations

from .model import ATTRIBUTES, Attr, ConfError, Rule, Var, VarType, short_name
from .scanner import Position, c_g, isgraph, isspace, parse_error, strtod, strtol, strtoul

YES, NO = "yes", "no"


def yes_no(word: str, where: Position) -> bool:
    """A yes/no attribute value: only its first letter counts."""
    if word[:1] == "y":
        return True
    if word[:1] == "n":
        return False
    raise ConfError(parse_error(where, "yes or no", word))


def _type_error(name: str, should: str) -> ConfError:
    return ConfError(f"{name}'s value is invalid.\n    It should {should}.")


def checked(vtype: VarType, name: str, value: str, where: Position) -> str:
    """VALUE if it suits VTYPE (a percentage loses its last `%` and what follows it),
    else ConfError with PCP's message naming NAME."""
    if vtype.is_action:
        yes_no(value, where)
    elif vtype == VarType.DOUBLE:
        if strtod(value)[1]:
            raise _type_error(name, "be a real number")
    elif vtype == VarType.INTEGER:
        if strtol(value)[1]:
            raise _type_error(name, "be an integer number")
    elif vtype == VarType.UNSIGNED:
        if strtoul(value)[1]:
            raise _type_error(name, "be a positive integer number")
    elif vtype == VarType.PERCENT:
        cut = value.rfind("%")
        if cut >= 0:
            value = value[:cut]
        number, rest = strtod(value)
        if rest or number < 0.0 or number > 100.0:
            raise _type_error(name, "be a percentage between 0.0 and 100.0")
    elif vtype in (VarType.HOSTLIST, VarType.INSTLIST) and not _quotes_closed(value):
        raise _type_error(name, "include a closing single quote")
    return value


def _quotes_closed(value: str) -> bool:
    """Whether every single-quoted word of a host or instance list is closed."""
    i, n = 0, len(value)
    while True:
        while i < n and (not isgraph(value[i]) or value[i] == ","):
            i += 1
        if i >= n:
            return True
        if value[i] == "'":
            i += 1
            while i >= n or value[i] != "'":
                if i < n and value[i] == "\\":
                    i += 1
                if i >= n:
                    return False
                i += 1
            i += 1
        else:
            while i < n and isgraph(value[i]) and value[i] != ",":
                i += 1


def shown(var: Var, pretty: bool) -> str:
    """The value as commands print it (PRETTY) or as the pmie rules use it."""
    data = var.data or ""
    t = var.type
    if t in (VarType.RULE, VarType.STRING):
        return f'"{data}"' if pretty else data
    if t.is_action:
        return YES if var.enabled else NO
    if t in (VarType.HOSTLIST, VarType.INSTLIST):
        return _listed(data, ":" if t == VarType.HOSTLIST else "#", pretty)
    if t == VarType.DOUBLE:
        return c_g(strtod(data)[0])
    if t == VarType.INTEGER:
        return str(strtol(data)[0])
    if t == VarType.UNSIGNED:
        return str(strtoul(data)[0])
    return c_g(strtod(data)[0]) + ("%" if pretty else "")  # PERCENT


def _listed(data: str, key: str, pretty: bool) -> str:
    """A host or instance list: each word becomes :'word' (or #'word') for pmie, where
    a word already in single quotes keeps its spaces; people see the list as it is."""
    out: list[str] = ['"'] if pretty else []
    start, quoted = True, False
    for c in data:
        if not isspace(c):
            if start and not pretty:
                out += [key, "'"]
                if c != "'":
                    quoted = False
                elif not quoted:
                    quoted, start = True, False
                    continue
            elif c == "'" and not start and not pretty:
                quoted = False
            start = False
        elif not pretty and not quoted:
            if out and out[-1] != "'":
                out.append("'")
            start = True
        out.append(c)
    if not pretty and out and out[-1] != "'":
        out.append("'")
    elif pretty:
        out.append('"')
    return "".join(out)


def attribute_value(word: str, var: Var) -> str | None:
    """The value of attribute WORD of VAR as text (None where it has none)."""
    attr = ATTRIBUTES.get(word)
    if attr == Attr.HELP:
        return var.help
    if attr in (Attr.MODIFY, Attr.ENABLED, Attr.DISPLAY):
        flag = {Attr.MODIFY: var.modify, Attr.ENABLED: var.enabled, Attr.DISPLAY: var.display}
        return YES if flag[attr] else NO
    if attr == Attr.DEFAULT:
        if var.type.is_action:
            return YES if var.enabled else NO
        return var.data
    return None


def lookup(rule: Rule, globals_rule: Rule, name: str, pretty: bool) -> str | None:
    """$NAME$'s value in RULE: one of its attributes, else its variable or a global."""
    value = attribute_value(name, rule.me)
    if value is not None:
        return value
    for var in (rule.me, *rule.vars):
        if short_name(rule, var) == name:
            return shown(var, pretty)
    for var in globals_rule.vars:
        if short_name(globals_rule, var) == name:
            return shown(var, pretty)
    return None


def expand(rule: Rule, globals_rule: Rule, text: str, pretty: bool = False) -> str:
    """TEXT with each $name$ replaced by its value (expanded in turn); \\$ is a dollar.
    An unknown name raises ConfError; an unclosed $ keeps the text after it."""
    out: list[str] = []
    mark: int | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "$":
            out.append("$")
            i += 2
            continue
        if c == "$":
            if mark is None:
                mark = i + 1
            else:
                name = text[mark:i]
                mark = None
                value = lookup(rule, globals_rule, name, pretty)
                if value is None:
                    raise ConfError(f'variable "${name}$" in {rule.name} is undefined')
                out.append(expand(rule, globals_rule, value, pretty))
        elif mark is None:
            out.append(c)
        i += 1
    if mark is not None:
        out.append(text[mark:])
    return "".join(out)
