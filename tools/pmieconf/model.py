"""Rules and their variables, with PCP's names for the types and attributes.

A rule template declares a rule (its predicate, summary, help, version...) followed by
variables of a type (string, percent, hostlist..., or an action: print, shell, alarm,
syslog); `global.NAME` variables apply to every rule that does not declare NAME itself.
The variables are mutable records on purpose: pmieconf's commands change them in place
(a value, a switch, a global copied into a rule to be customised), and the generated
file records each change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class VarType(IntEnum):
    """The types of template variables (PCP's TYPE_* numbers)."""

    STRING = 0
    DOUBLE = 1
    INTEGER = 2
    UNSIGNED = 3
    PERCENT = 4
    HOSTLIST = 5
    INSTLIST = 6
    PRINT = 7
    SHELL = 8
    ALARM = 9
    SYSLOG = 10
    RULE = 11

    @property
    def keyword(self) -> str:
        """The word a template uses for the type."""
        return self.name.lower()

    @property
    def is_action(self) -> bool:
        return VarType.PRINT <= self <= VarType.SYSLOG


#: type keywords, in PCP's table order
TYPES: dict[str, VarType] = {t.keyword: t for t in VarType}


class Attr(IntEnum):
    """The attributes a clause may set (PCP's ATTRIB_* numbers)."""

    HELP = 0
    MODIFY = 1
    ENABLED = 2
    DISPLAY = 3
    DEFAULT = 4
    VERSION = 5
    PREDICATE = 6
    ENUMERATE = 7


#: attribute keywords ("summary" is another name for "default")
ATTRIBUTES: dict[str, Attr] = {
    "help": Attr.HELP,
    "modify": Attr.MODIFY,
    "enabled": Attr.ENABLED,
    "display": Attr.DISPLAY,
    "default": Attr.DEFAULT,
    "summary": Attr.DEFAULT,
    "version": Attr.VERSION,
    "predicate": Attr.PREDICATE,
    "enumerate": Attr.ENUMERATE,
}

GLOBAL_PREFIX = "global."
GLOBAL_NAME = "global"
GLOBAL_SUMMARY = "generic variables applied to all rules"
GLOBAL_HELP = (
    "The global variables are used by all rules, but their values can be\n"
    "overridden at the level of an individual rule or group of rules."
)


@dataclass(eq=False)
class Var:
    """A rule's own description (type RULE) or one of its variables.  `data` is the
    current value, `default` the template's; for actions, `enabled` is the switch."""

    name: str
    type: VarType
    data: str | None = None
    default: str | None = None
    help: str | None = None
    modify: bool = True
    display: bool = True
    enabled: bool = True
    default_enabled: bool = False
    changed: bool = False
    is_global: bool = False  # declared as global.NAME (a copy in a rule keeps this)


@dataclass(eq=False)
class Rule:
    """A rule: its description, its variables in order, what pmie evaluates."""

    me: Var
    vars: list[Var] = field(default_factory=list)
    version: int = 1
    predicate: str | None = None
    enumerate: str | None = None

    @property
    def name(self) -> str:
        return self.me.name


def global_rule() -> Rule:
    """The rule that holds the global variables (first of every rule list)."""
    me = Var(GLOBAL_NAME, VarType.STRING, data=GLOBAL_SUMMARY, help=GLOBAL_HELP, is_global=True)
    me.modify = me.display = me.enabled = False
    return Rule(me, version=0)


def short_name(rule: Rule, var: Var) -> str:
    """A variable's name as commands and the generated file show it: a global's without
    its `global.` prefix."""
    if rule.me.name == GLOBAL_NAME and rule.me.is_global:
        return var.name[len(GLOBAL_PREFIX) :]
    return var.name


class ConfError(Exception):
    """A failure with PCP's message (printed as `pmieconf: error - MESSAGE`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message[:511]
