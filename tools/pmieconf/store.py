"""The rules read from the templates: finding them by rule or group name, and changing
their variables (a rule's own, or a global copied into the rule to be customised)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .model import ATTRIBUTES, Attr, ConfError, Rule, Var, global_rule, short_name
from .scanner import Position, parse_error
from .values import checked, yes_no


@dataclass
class Store:
    """Every rule, the global variables' rule first; `last_error` is the message of the
    latest failure, which PCP repeats where it reports a problem it gave no words to."""

    rules: list[Rule] = field(default_factory=lambda: [global_rule()])
    where: Position = field(default_factory=Position)
    last_error: str = ""

    @property
    def globals(self) -> Rule:
        return self.rules[0]

    def fail(self, message: str) -> ConfError:
        """A ConfError carrying MESSAGE, remembered as the latest."""
        error = ConfError(message)
        self.last_error = error.message
        return error

    def stale(self) -> ConfError:
        """The error PCP reports where it set no message of its own: the latest one."""
        return ConfError(self.last_error)

    # -- finding -------------------------------------------------------------------------

    def find(self, name: str) -> Rule | None:
        for rule in self.rules:
            if rule.name == name:
                return rule
        self.last_error = f'rule named "{name}" does not exist'
        return None

    def find_or_fail(self, name: str) -> Rule:
        rule = self.find(name)
        if rule is None:
            raise self.stale()
        return rule

    def matching(self, name: str, everything: bool) -> list[Rule]:
        """The rules NAME selects: a rule, or a group (the rules named GROUP.x); with
        EVERYTHING, every rule but the globals."""
        found = [
            rule
            for i, rule in enumerate(self.rules)
            if (everything and i > 0) or _in_group(name, rule.name)
        ]
        if not found:
            raise self.fail(f'no group or rule names match "{name}"')
        return found

    def sort(self) -> None:
        """Rules in name order (bytes), the globals staying first."""
        self.rules[1:] = sorted(self.rules[1:], key=lambda r: r.name)

    # -- building ------------------------------------------------------------------------

    def add_rule(self, rule: Rule) -> None:
        if self.find(rule.name) is not None:
            raise self.fail(
                f'rule name "{rule.name}" has already been used, duplicate name found in:\n'
                f'\t"{self.where.filename[:60]}", line {self.where.line}.'
            )
        self.rules.append(rule)

    def add_var(self, rule: Rule | None, var: Var) -> None:
        """VAR joins RULE's variables (a global's join the globals)."""
        if var.is_global or rule is None:
            var.is_global = True
            rule = self.globals
        rule.vars.append(var)

    # -- setting -------------------------------------------------------------------------

    def set_attribute(self, rule: Rule, var: Var, attr: Attr, value: str, changed: bool) -> None:
        """One attribute of VAR from VALUE: from a template (CHANGED false, defaults set
        too) or from a command or saved setting (CHANGED true)."""
        try:
            self._set_attribute(rule, var, attr, value, changed)
        except ConfError as exc:
            self.last_error = exc.message
            raise
        if changed:
            var.changed = True

    def _set_attribute(self, rule: Rule, var: Var, attr: Attr, value: str, changed: bool) -> None:
        if attr == Attr.HELP:
            if not any("!" <= c <= "~" for c in value):
                raise ConfError(parse_error(self.where, "non-empty string for help", value))
            var.help = value
        elif attr == Attr.MODIFY:
            var.modify = yes_no(value, self.where)
        elif attr == Attr.DISPLAY:
            var.display = yes_no(value, self.where)
        elif attr == Attr.ENABLED:
            var.enabled = yes_no(value, self.where)
            if not changed:
                var.default_enabled = var.enabled
        elif attr == Attr.DEFAULT:
            if var.type.is_action and changed:
                var.enabled = yes_no(value, self.where)
                return
            if not var.type.is_action:
                value = checked(var.type, short_name(rule, var), value, self.where)
            var.data = value
            if not changed:
                var.default = value

    def change(self, rule: Rule, param: str, value: str) -> None:
        """Set RULE's variable PARAM (or its `enabled`) to VALUE, copying a global of that
        name into the rule when the rule has no such variable of its own."""
        attr = ATTRIBUTES.get(param)
        if attr is not None:
            self.set_attribute(rule, rule.me, attr, value, True)
            return
        for var in rule.vars:
            if short_name(rule, var) == param:
                self.set_attribute(rule, var, Attr.DEFAULT, value, True)
                return
        for var in self.globals.vars:
            if short_name(self.globals, var) == param:
                mine = copy.copy(var)
                mine.name = param
                rule.vars.append(mine)
                self.set_attribute(self.globals, mine, Attr.DEFAULT, value, True)
                return
        raise self.fail(f'variable "{param}" is undefined for rule {rule.name}')

    def merge_saved(self, version: int, name: str, param: str, value: str) -> None:
        """A setting saved in the generated file, applied if its rule (at that version)
        still exists."""
        rule = self.find(name)
        if rule is None or rule.version != version:
            return  # deprecated when the file is written again
        self.change(rule, param, value)

    def undo(self, rule: Rule, param: str | None) -> None:
        """Back to the templates' values: all of RULE's (PARAM None) or one variable's."""
        if param is None:
            self._undo_all(rule)
            return
        if param in ATTRIBUTES:
            rule.me.enabled = rule.me.default_enabled
            rule.me.changed = False
            return
        prev: Var | None = None
        for var in (rule.me, *rule.vars):
            if short_name(rule, var) == param:
                self._undo_var(rule, var, prev is not None, param)
                return
            prev = var

    def _undo_all(self, rule: Rule) -> None:
        """Every variable of RULE reset (PCP ignores a failure here).  PCP unlinks a
        customised global only when the variable before it is still linked; of two such
        globals in a row it frees the second without unlinking it, and crashes later.
        Here that second one stays, customised."""
        prev_linked = False
        for var in [rule.me, *rule.vars]:
            try:
                prev_linked = self._undo_var(rule, var, prev_linked, var.name)
            except ConfError:
                prev_linked = True

    def _undo_var(self, rule: Rule, var: Var, can_unlink: bool, param: str) -> bool:
        """Reset VAR; a copied global goes instead (when CAN_UNLINK).  Whether VAR is
        still linked in the rule afterwards, as PCP sees it."""
        attr = ATTRIBUTES.get(param)
        if attr is not None and attr != Attr.ENABLED:
            raise self.fail(f'variable "{param}" is inappropriate for this operation')
        if var.is_global and var is not rule.me:
            if can_unlink:
                rule.vars.remove(var)
            return False
        if attr is None:
            var.data = var.default
        var.enabled = var.default_enabled
        var.changed = False
        return True


def _in_group(name: str, rule_name: str) -> bool:
    """Whether NAME is the rule itself or its group (the name up to its last dot)."""
    if name == rule_name:
        return True
    group, dot, _ = rule_name.rpartition(".")
    return bool(dot) and group == name
