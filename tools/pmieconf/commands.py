"""pmieconf's commands (help, rules, groups, status, enable, disable, list, modify, undo,
verbose, quit, abort), given on the command line or read one a line from the input."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from .model import ATTRIBUTES, Attr, ConfError, Rule, short_name
from .output import Output
from .pmiefile import PmieFile
from .scanner import (
    COMMAND_WORD,
    END_OF_LINE,
    TOKEN_END,
    TOKEN_EOF,
    Position,
    Stream,
    TokenError,
    atoi,
    read_token,
)
from .store import Store
from .values import attribute_value, expand, shown

#: the command summary (interface text: help prints it, and so does the usage)
HELP = """\
  1. help  [ { . | all | global | <rule> | <group> } [<variable>] ]
               descriptive text on one or more variables or rules
  2. rules  [ enabled | disabled ]
               list of available, enabled, or disabled rules
  3. groups    list of available groups of rules
  4. status    print status information
  5. enable  { . | all | <rule> | <group> }
               switch evaluation on for given rule(s)
  6. disable  { . | all | <rule> | <group> }
               switch evaluation off for given rule(s)
  7. list  { . | all | global | <rule> | <group> } [<variable>]
               print values of variables for given rule(s)
  8. modify  { . | all | global | <rule> | <group> } <variable> <value>
               change the value of a rule variable
  9. undo  { . | all | global | <rule> | <group> } [<variable>]
               revert to default value of rule variable
 10. verbose  [ { on | off } ]
               change amount of info displayed ('*' denotes global variables)
 11. quit      save changes then exit
 12. abort     discard changes then exit"""

MAX_ARGS = 4  # a command and at most three arguments (five words read are too many)

#: command names and abbreviations, by number (a command may be given by its number)
NAMES: dict[str, int] = {
    "help": 1, "h": 1, "?": 1, "rules": 2, "r": 2, "groups": 3, "g": 3,
    "status": 4, "s": 4, "enable": 5, "e": 5, "disable": 6, "d": 6,
    "list": 7, "l": 7, "modify": 8, "m": 8, "undo": 9, "u": 9,
    "verbose": 10, "v": 10, "quit": 11, "q": 11, "abort": 12, "a": 12,
}  # fmt: skip
QUIT = 11
ABORT = 12

#: size of pmie's statistics file (pmiestats_t), which names its rules file
STATS_SIZE = 8288


class Quit(Exception):
    """The session ends (quit saves first; abort does not)."""


@dataclass
class Session:
    """The rules, the pmie file, and the state commands share."""

    store: Store
    pmie: PmieFile
    rulepath: str
    out: Output
    prog: str = "pmieconf"
    verbose: bool = False
    interactive: bool = True
    autocreate: bool = False
    modified: bool = False
    previous: str = ""  # the rule or group the last command named ('.')
    quitted: bool = False
    tmp_dir: str = field(default="")
    etc_dirs: tuple[str, str] = ("", "")  # PCP_SYSCONF_DIR, PCP_BINADM_DIR

    # -- running commands ----------------------------------------------------------------

    def run(self, words: list[str]) -> int:
        """One command: 1 after quit, 0 done, -1 failed (the error printed)."""
        number = atoi(words[0])
        if number <= 0 or number > ABORT:
            number = NAMES.get(words[0], -1)
        args = words[1:]
        if number == QUIT:
            self.quit()
            return 1
        if number == ABORT:
            raise Quit
        action = COMMANDS.get(number)
        if action is None:
            return self.fail(f'unrecognised command "{words[0]}" - try "help"')
        try:
            return action(self, args)
        except ConfError as exc:
            return self.fail(exc.message)

    def fail(self, message: str) -> int:
        self.out.error(message)
        return -1

    def interact(self, stdin: Stream) -> None:
        """Commands read a line at a time until quit, abort or the end of the input."""
        if self.interactive:
            self.out.write(f"Updates will be made to {self.pmie.path}\n")
        where = Position()
        while True:
            words: list[str] = []
            if self.interactive:
                self.out.reset()
                self.out.write(f"\n{self.prog}> ")
                self.out.flush()
            status: str | int = TOKEN_END
            while len(words) <= MAX_ARGS:
                try:
                    status = read_token(stdin, END_OF_LINE, where, COMMAND_WORD)
                except TokenError:
                    self.out.error(f"failed to parse argument {len(words) + 1} correctly")
                    status = -1
                    break
                if isinstance(status, int):
                    break
                words.append(status)
            if isinstance(status, int) and status < 0:
                if status == TOKEN_EOF:
                    self.quit()
                    return
                continue
            if len(words) > MAX_ARGS:
                self.out.error('too many arguments - try "help"')
                if self._drain(stdin, where):
                    self.quit()
                    return
            elif words and self.run(words) == 1:
                return

    @staticmethod
    def _drain(stdin: Stream, where: Position) -> bool:
        """The rest of a line read and dropped: whether the input ended."""
        while True:
            try:
                status = read_token(stdin, END_OF_LINE, where, COMMAND_WORD)
            except TokenError:
                return False
            if status == TOKEN_EOF:
                return True
            if isinstance(status, int):
                return False

    # -- printing rules ------------------------------------------------------------------

    def summary(self, rule: Rule, prefix: str) -> None:
        try:
            text = expand(rule, self.store.globals, rule.me.data or "")
        except ConfError as exc:
            self.store.last_error = exc.message
            return
        self.out.page(f"{prefix}{rule.name}  [{text}]\n")

    def help_text(self, text: str | None) -> None:
        if text is None:
            self.out.page("  help: No help available.\n")
            return
        for i, line in enumerate(s for s in text.split("\n") if s):
            self.out.page(f"{'  help: ' if i == 0 else chr(9)}{line}\n")

    def predicate(self, text: str | None) -> None:
        self.out.page("\tpredicate = \n")
        for line in (s for s in (text or "").split("\n") if s):
            self.out.page(f"\t  {line}\n")

    def show_rule(self, rule: Rule) -> None:
        globals_rule = self.store.globals
        self.summary(rule, "  rule: ")
        if rule.me.help is not None:
            self.help_text(rule.me.help)
        if rule is not globals_rule:
            self.predicate(rule.predicate)
            self.out.page(f"  vars: enabled = {'yes' if rule.me.enabled else 'no'}\n")
        first = True
        for var in rule.vars:
            if not var.display:
                continue
            lead = "  vars: " if rule is globals_rule and first else "\t"
            self.out.page(f"{lead}{short_name(rule, var)} = {shown(var, True)}\n")
            first = False
        if self.verbose and rule is not globals_rule:
            for var in globals_rule.vars:
                name = short_name(globals_rule, var)
                if any(short_name(rule, mine) == name for mine in rule.vars):
                    continue
                self.out.page(f"\t{name} = {shown(var, True)} (*)\n")

    def show_variable(self, rule: Rule, name: str, with_help: bool) -> int:
        """One variable (or attribute) of RULE: its value, or its help."""
        globals_rule = self.store.globals
        attr = ATTRIBUTES.get(name)
        if attr == Attr.PREDICATE and rule is not globals_rule:
            self.predicate(rule.predicate)
            return 0
        if attr == Attr.HELP:
            self.help_text(rule.me.help)
            return 0
        if attr is not None and rule is not globals_rule:
            if with_help:
                self.out.page(f"   var: {name}\n  help: No help available.\n")
            else:
                value = attribute_value(name, rule.me)
                self.out.page(f"\t{name} = {'(null)' if value is None else value}\n")
            return 0
        for owner in (rule, globals_rule):
            for var in owner.vars:
                if short_name(owner, var) == name:
                    if with_help:
                        self.out.page(f"   var: {name}\n")
                        self.help_text(var.help)
                    else:
                        self.out.page(f"\t{name} = {shown(var, True)}\n")
                    return 0
        self.out.error(f'variable "{name}" is undefined for rule {rule.name}')
        return -1

    # -- saving --------------------------------------------------------------------------

    def save(self) -> bool:
        """The pmie file written: False (after the error) if it could not be."""
        try:
            self.pmie.write(self.store, self.rulepath, self.prog, self.autocreate)
        except ConfError as exc:
            self.out.error(exc.message)
            return False
        gone = self.pmie.take_deprecated()
        if gone:
            if self.interactive:
                self.out.page("  Warning - some rules have been deprecated:\n")
            else:
                self.out.page(f"{self.prog}: some rules have been deprecated:\n")
            for item in gone:
                self.out.page(f"    {item.name} (deprecated, {item.reason})\n")
            self.out.page(f"\n  See {self.pmie.path} for details\n")
        return True

    def quit(self) -> None:
        """Save what changed (once), and say which running pmies use the file."""
        if self.quitted:
            return
        self.quitted = True
        if self.modified and not self.save():
            raise SystemExit(1)
        if not (self.interactive and self.modified):
            return
        pids = self.processes()
        if pids is None:
            self.out.error(self.store.last_error)
            return
        if not pids:
            return
        page = self.out.page
        path = self.pmie.path
        many = len(pids) != 1
        page(f"  {path} is in use by {len(pids)} running pmie process{'es' if many else ''}:\n\t")
        page("".join(f"{pid} " for pid in pids))
        page(f"\n  Restart {'these processes' if many else 'this process'} for the "
             "configuration change to take effect.")  # fmt: skip
        page("\n  o  Use kill(1) to stop; e.g.\tkill -INT ")
        page("".join(f"{pid} " for pid in pids))
        sysconf, binadm = self.etc_dirs
        page(
            "\n  o  Refer to pmie_check(1) for a convenient mechanism for restarting pmie\n"
            f"     daemons launched under the control of {sysconf}/pmie/control;\n"
            f"     e.g.\t{binadm}/pmie_check -V\n"
        )

    def processes(self) -> list[str] | None:
        """The running pmies whose statistics file names this pmie file (None if the
        statistics directory cannot be read)."""
        directory = os.path.join(self.tmp_dir, "pmie")
        try:
            names = os.listdir(directory)
        except OSError as exc:
            self.store.last_error = f"cannot opendir {directory}: {exc.strerror}"
            return None
        found = []
        for name in names:
            if not os.path.exists(os.path.join("/proc", name)):
                continue
            try:
                with open(os.path.join(directory, name), "rb") as f:
                    data = f.read(STATS_SIZE + 1)
            except OSError:
                continue
            if len(data) != STATS_SIZE:
                continue
            config = data[:4097].split(b"\0", 1)[0].decode("latin-1")
            if config == self.pmie.path:
                found.append(name)
        return found


# -- the commands -------------------------------------------------------------------------


def _too_many(name: str) -> ConfError:
    return ConfError(f'too many arguments for "{name}" command')


def _target(s: Session, word: str) -> tuple[str, list[Rule]]:
    """The rules a command's first argument names ('.' the previous one, 'all')."""
    name = s.previous if word == "." else word
    return name, s.store.matching(name, name == "all")


def command_help(s: Session, args: list[str]) -> int:
    if not args:
        s.out.write(HELP + "\n")
        return 0
    if len(args) > 2:
        raise _too_many("help")
    name, rules = _target(s, args[0])
    status = 0
    for rule in rules:
        s.summary(rule, "  rule: ")
        if len(args) == 1:
            s.help_text(rule.me.help)
        elif s.show_variable(rule, args[1], True) < 0:
            status = -1
    s.previous = name
    return status


def command_rules(s: Session, args: list[str]) -> int:
    if len(args) > 1:
        raise _too_many("rules")
    choose: Callable[[Rule], bool] = lambda rule: True  # noqa: E731
    if args:
        if args[0] == "enabled":
            choose = lambda rule: rule.me.enabled  # noqa: E731
        elif args[0] == "disabled":
            choose = lambda rule: not rule.me.enabled  # noqa: E731
        else:
            raise ConfError('invalid argument for "rules" command')
    for rule in s.store.rules[1:]:
        if choose(rule):
            s.summary(rule, "  ")
    return 0


def command_groups(s: Session, args: list[str]) -> int:
    if args:
        raise _too_many("groups")
    last = ""
    for rule in s.store.rules[1:]:
        group, dot, _ = rule.name.partition(".")
        if dot and group != last:
            last = group
            s.out.page(f"  {group}\n")
    return 0


def command_status(s: Session, args: list[str]) -> int:
    if args:
        raise _too_many("status")
    enabled = sum(1 for rule in s.store.rules[1:] if rule.me.enabled)
    pids = s.processes() or []
    s.out.write(
        f"  verbose:  {'on' if s.verbose else 'off'}\n"
        f"  enabled rules:  {enabled} of {len(s.store.rules) - 1}\n"
        f"  pmie configuration file:  {s.pmie.path}\n"
        f"  pmie {'process (PID)' if len(pids) == 1 else 'processes (PIDs)'} using this file: "
        + ("".join(f" {pid}" for pid in pids) if pids else " (none found)")
        + "\n"
    )
    return 0


def command_verbose(s: Session, args: list[str]) -> int:
    if not args:
        s.out.write(f"  verbose:  {'on' if s.verbose else 'off'}\n")
        return 0
    if len(args) > 1:
        raise _too_many("verbose")
    if args[0] not in ("on", "off"):
        raise ConfError('invalid argument, expected "on" or "off"')
    s.verbose = args[0] == "on"
    return 0


def command_list(s: Session, args: list[str]) -> int:
    if not args:
        raise ConfError('too few arguments for "list" command')
    if len(args) > 2:
        raise _too_many("list")
    name, rules = _target(s, args[0])
    status = 0
    for i, rule in enumerate(rules):
        if len(args) == 1:
            if i > 0:
                s.out.page("\n")
            s.show_rule(rule)
        else:
            s.summary(rule, "  rule: ")
            if s.show_variable(rule, args[1], False) < 0:
                status = -1
    s.previous = name
    return status


def command_undo(s: Session, args: list[str]) -> int:
    if not args:
        raise ConfError('too few arguments for "undo" command')
    if len(args) > 2:
        raise _too_many("undo")
    name, rules = _target(s, args[0])
    for rule in rules:
        s.store.undo(rule, args[1] if len(args) == 2 else None)
    s.previous = name
    s.modified = True
    return 0


def _modify(s: Session, args: list[str]) -> int:
    """modify RULES VARIABLE VALUE (enable and disable are its short forms)."""
    if len(args) != 3:
        raise ConfError(f'too {"few" if len(args) < 3 else "many"} arguments for "modify" command')
    return _change(s, *args)


def _switch(command: str, value: str) -> Callable[[Session, list[str]], int]:
    def switch(s: Session, args: list[str]) -> int:
        if args[:1] == ["global"]:
            raise ConfError('invalid argument - "global"')
        if len(args) != 1:
            raise ConfError(
                f'too {"few" if not args else "many"} arguments for "{command}" command'
            )
        return _change(s, args[0], "enabled", value)

    return switch


def _change(s: Session, target: str, param: str, value: str) -> int:
    name = s.previous if target == "." else target
    attr = ATTRIBUTES.get(param)
    if attr is not None and attr != Attr.ENABLED:
        raise ConfError(f'no change - variable "{param}" is always readonly')
    rules = s.store.matching(name, name == "all")
    for rule in rules:
        try:
            s.store.change(rule, param, value)
        except ConfError as exc:
            raise ConfError(f"change aborted - {exc.message}") from None
    s.modified = True
    s.previous = name
    return 0


COMMANDS: dict[int, Callable[[Session, list[str]], int]] = {
    1: command_help,
    2: command_rules,
    3: command_groups,
    4: command_status,
    5: _switch("enable", "yes"),
    6: _switch("disable", "no"),
    7: command_list,
    8: _modify,
    9: command_undo,
    10: command_verbose,
}
