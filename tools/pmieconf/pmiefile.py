"""The generated pmie rules file: reading back the settings it saved, and writing it.

Its layout: a header `// pmieconf-pmie 1 RULESPATH`, one `// VERSION RULE VARIABLE =
VALUE` comment per customised value, `// end`; then the generated section (each enabled
rule as pmie syntax between START and END markers); then whatever the user added after
the END marker, kept as it is.  Text saved for a rule that no longer exists (or whose
version changed) is moved after the END marker, commented out, with the reason.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field

from .model import ATTRIBUTES, ConfError, Rule, Var, VarType, short_name
from .scanner import Position, Stream, isgraph, isspace, parse_error, strtoul
from .store import Store
from .values import expand, shown

FILE_WORD = "pmieconf-pmie"
FILE_VERSION = "1"
START = "// --- START GENERATED SECTION (do not change this section) ---\n"
END = "// --- END GENERATED SECTION (changes below will be preserved) ---\n"
NO_RULE = "rule definition no longer exists"
NO_VERSION = "rule version no longer supported"
TOKEN_LENGTH = 2048


@dataclass(frozen=True)
class Deprecated:
    """A rule of the file's saved text that the templates no longer provide."""

    name: str
    version: int
    reason: str


@dataclass
class PmieFile:
    """The pmie file being configured: its name (made absolute once it is resolved),
    the user's text kept after the END marker, the rules deprecated on reading."""

    path: str
    resolved: bool = False
    kept: list[str] = field(default_factory=list)
    deprecated: list[Deprecated] = field(default_factory=list)

    # -- reading -------------------------------------------------------------------------

    def read(self, store: Store, rulepath: str) -> str:
        """The saved settings merged into STORE and the user's text kept; a warning when
        the file was generated from another rules path (else "")."""
        try:
            with open(self.path, "rb") as f:
                text = f.read().decode("latin-1")
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise ConfError(f"cannot open {self.path}: {exc.strerror}") from None
        if not text:
            return ""
        store.where = Position(self.path, 1)
        reader = _Reader(Stream(text), store)
        saved_path = self._header(reader)
        for part in (p for p in saved_path.split(":") if p):
            if not os.access(part, os.F_OK):
                raise ConfError(f'cannot access rules path component: "{part}"')
        warning = ""
        if rulepath != saved_path:
            warning = (
                f'warning - pmie configuration file "{self.path}"\n'
                f' may not have been built using rules path:\n\t"{rulepath}"\n'
                f' (originally built using "{saved_path}")'
            )[:1024]
        _read_settings(reader, store)
        self._keep(reader.f, store)
        return warning

    def _header(self, r: _Reader) -> str:
        words = []
        for _ in range(3):
            try:
                word = r.token_or_none()
            except ConfError:
                word = None
            if word is None:
                break
            words.append(word)
        if words[:2] != ["//", FILE_WORD] or len(words) < 3:
            raise ConfError(f"{self.path} is not a rule customization file (bad header)")
        if words[2] != FILE_VERSION:
            raise ConfError(
                f'unknown version number in {self.path}: "{words[2]}" (expected {FILE_VERSION})'
            )
        try:
            path = r.token_or_none()
        except ConfError:
            path = None
        if path is None:
            raise ConfError(f"no rules path specified in {self.path} after version number")
        return path

    def _keep(self, f: Stream, store: Store) -> None:
        """The text after the settings: what follows the END marker is kept whole; before
        it, a `// VERSION RULE` heading of a rule gone starts text kept commented out."""
        keeping = after_end = False
        for line in f.rest_lines():
            if after_end:
                self.kept.append(line)
                continue
            if line == END:
                after_end = True
                continue
            m = _HEADING.match(line)
            if m is not None:
                version = strtoul(m.group(1))[0] & 0xFFFFFFFF
                name = m.group(2)
                rule = store.find(name)
                keeping = rule is None or rule.version != version
                if keeping:
                    reason = NO_RULE if rule is None else NO_VERSION
                    line = f"// {version} {name} (deprecated, {reason})\n"
                    self._deprecate(Deprecated(name, version, reason))
            if keeping:
                self.kept.append("// " + line)

    def _deprecate(self, item: Deprecated) -> None:
        if not any(d.name == item.name and d.version == item.version for d in self.deprecated):
            self.deprecated.append(item)

    def take_deprecated(self) -> list[Deprecated]:
        """The rules deprecated, reported once."""
        found, self.deprecated = self.deprecated, []
        return found

    # -- writing -------------------------------------------------------------------------

    def write(self, store: Store, rulepath: str, program: str, autocreate: bool) -> None:
        """The whole file from STORE's rules and settings (ConfError if it cannot be)."""
        self._make_directory()
        try:
            f = open(self.path, "wb")  # noqa: SIM115 (PCP's message if it cannot open)
        except OSError as exc:
            raise ConfError(f"cannot write file {self.path}: {exc.strerror}") from None
        with f:
            if not self.resolved:
                resolved, problem = c_realpath(self.path)
                if problem:
                    raise ConfError(
                        f"failed to resolve {self.path} realpath: {os.strerror(problem)}"
                    )
                self.path, self.resolved = resolved, True
            out: list[str] = [f"// {FILE_WORD} {FILE_VERSION} {rulepath}\n"]
            for rule in store.rules:
                out += _settings(rule)
            out.append("// end\n//\n")
            stamp = time.ctime()
            out.append(
                f"{START}// {'Auto-' if autocreate else '    '}generated by {program} "
                f"on:  {stamp}\n//\n\n"
            )
            try:
                for rule in store.rules[1:]:
                    if rule.me.enabled:
                        out += _Generator(store, rule).rules()
            except ConfError:
                f.write("".join(out).encode("latin-1", "replace"))
                raise
            out.append(END)
            out += self.kept
            f.write("".join(out).encode("latin-1", "replace"))

    def _make_directory(self) -> None:
        directory, slash, _ = self.path.rpartition("/")
        if not slash:
            return
        try:
            info = os.stat(directory)
        except OSError:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as exc:
                sys.stderr.write(
                    f"/bin/mkdir: cannot create directory '{directory}': {exc.strerror}\n"
                )
            return
        if not stat.S_ISDIR(info.st_mode):
            raise ConfError('"" exists and is not a directory')


#: a heading of a rule in the generated text: `// VERSION NAME`
_HEADING = re.compile(r"//[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t\n\v\f\r]*([^ \t\n\v\f\r]+)")


def _settings(rule: Rule) -> list[str]:
    """The `// VERSION RULE VARIABLE = VALUE` lines of RULE's customised values."""
    lines = []
    for var in (rule.me, *rule.vars):
        if not var.changed:
            continue
        if var.type == VarType.RULE:
            lines.append(
                f"// {rule.version} {rule.name} enabled = {'yes' if rule.me.enabled else 'no'}\n"
            )
        else:
            lines.append(
                f"// {rule.version} {rule.name} {short_name(rule, var)} = {shown(var, True)}\n"
            )
    return lines


class _Reader:
    """The words of the saved-settings comments (each line after the first begins
    `//`; a line that does not ends them)."""

    def __init__(self, f: Stream, store: Store) -> None:
        self.f = f
        self.store = store
        self.token = ""  # the latest word, as PCP's shared buffer holds it

    def _first(self) -> str | None:
        while True:
            c = self.f.getc()
            if c == "":
                return None
            if c == "\n":
                self.store.where.line += 1
                if self.f.getc() != "/" or self.f.getc() != "/":
                    return None
            if isgraph(c):
                return c

    def token_or_none(self) -> str | None:
        """The next word, or None at the end; a bad string raises ConfError."""
        c = self._first()
        if c is None:
            return None
        word: list[str] = []
        where = self.store.where
        if c == '"':
            c = self.f.getc()
            while c != '"':
                if c == "\\":
                    c = self.f.getc()
                if c == "" or len(word) == TOKEN_LENGTH:
                    self.token = "".join(word)
                    raise self.store.fail(parse_error(where, "end-of-string", self.token))
                if c == "\n":
                    self.token = "".join(word)
                    raise self.store.fail(parse_error(where, "end-of-string", "end-of-line"))
                word.append(c)
                c = self.f.getc()
            self.token = "".join(word)
            return self.token
        if c == "=":
            self.token = c
            return c
        while isgraph(c):
            if c == "=":
                self.f.ungetc(c)
                break
            if len(word) == TOKEN_LENGTH:
                self.token = "".join(word)
                raise self.store.fail(parse_error(where, "end-of-token", self.token))
            word.append(c)
            c = self.f.getc()
        self.token = "".join(word)
        if c == "\n":
            where.line += 1
            if self.token.startswith("end"):
                return self.token
            if self.f.getc() != "/" or self.f.getc() != "/":
                return None
        return self.token


def _read_settings(r: _Reader, store: Store) -> None:
    """`VERSION RULE VARIABLE = VALUE` settings up to `end`, merged into STORE."""
    where = store.where
    while True:
        word = r.token_or_none()
        if word is None:
            raise store.fail(parse_error(where, 'rule identifier or "end" symbol', "end-of-file"))
        if word == "end":
            return
        number, rest = strtoul(word)
        if rest:
            raise store.fail(parse_error(where, "version number", word))
        name = r.token_or_none()
        if name is None:
            raise store.fail(parse_error(where, "rule name", r.token))
        param = r.token_or_none()
        if param is None:
            raise store.fail(parse_error(where, "rule attribute", r.token))
        equals = r.token_or_none()
        if equals is None:
            raise store.fail(parse_error(where, "'=' symbol", "end-of-file"))
        if equals != "=":
            raise store.stale()
        value = r.token_or_none()
        if value is None:
            raise store.fail(parse_error(where, "rule attribute value", "end-of-file"))
        store.merge_saved(number & 0xFFFFFFFF, name, param, value)


# -- the generated section ------------------------------------------------------------------


class _Generator:
    """One enabled rule as pmie syntax: once, or once per combination of the values of
    the host and instance lists its `enumerate` names."""

    def __init__(self, store: Store, rule: Rule) -> None:
        self.store = store
        self.rule = rule
        self.count = 0  # rules written so far (the second is NAME1, ...)
        self.out: list[str] = []

    def expand(self, text: str) -> str:
        return expand(self.rule, self.store.globals, text)

    def rules(self) -> list[str]:
        if self.rule.enumerate is None:
            self.write_one()
            return self.out
        lists = self.enumerated()
        values = [_list_items(self.expand(var.data or "")) for var in lists]
        self.combine(lists, values, [])
        return self.out

    def enumerated(self) -> list[Var]:
        """The variables named by `enumerate` (each a host or instance list)."""
        found = []
        rule, globals_rule = self.rule, self.store.globals
        for word in _enumerate_words(self.rule.enumerate or ""):
            if word in ATTRIBUTES:
                raise self.store.fail(f'cannot enumerate rule {rule.name} using attribute "{word}"')
            var = next((v for v in rule.vars if short_name(rule, v) == word), None)
            if var is None:
                var = next(
                    (v for v in globals_rule.vars if short_name(globals_rule, v) == word), None
                )
            if var is None:
                raise self.store.fail(
                    f'variable "{word}" undefined for enumerated rule {rule.name}'
                )
            if var.type not in (VarType.HOSTLIST, VarType.INSTLIST):
                raise self.store.fail(
                    f'rules file error - "${word}$" in "enumerate" clause of rule '
                    f"{rule.name} is not of type hostlist or instlist"
                )
            found.append(var)
        return found

    def combine(self, lists: list[Var], values: list[list[str]], chosen: list[str]) -> None:
        if len(chosen) < len(lists):
            for value in values[len(chosen)]:
                self.combine(lists, values, [*chosen, value])
            return
        saved = [var.data for var in lists]
        for var, value in zip(lists, chosen, strict=True):
            var.data = value
        try:
            self.write_one()
        finally:
            for var, value in zip(lists, saved, strict=True):
                var.data = value

    def write_one(self) -> None:
        rule = self.rule
        try:
            delta = self.expand("$delta$") if self.count == 0 else ""
            predicate = self.expand(rule.predicate or "")
        except ConfError:
            return  # PCP writes nothing for this rule, and says nothing
        if self.count == 0:
            self.out.append(f"// {rule.version} {rule.name}\ndelta = {delta};\n{rule.name} = \n")
        else:
            self.out.append(f"{rule.name}{self.count} = \n")
        self.out.append(predicate)
        actions = 0
        for var in (*rule.vars, *self.store.globals.vars):
            actions = self.action(var, actions)
        self.out.append(";\n\n")
        self.count += 1

    def action(self, var: Var, actions: int) -> int:
        if not (var.type.is_action and var.enabled):
            return actions
        try:
            holdoff = self.expand(" $holdoff$ ")
        except ConfError:
            return actions
        self.out.append(" -> " if actions == 0 else "\n  & ")
        self.out.append(var.type.keyword + holdoff)
        try:
            text = self.expand(var.data or "")
        except ConfError:
            sys.stderr.write(
                f"Warning - failed to expand action for rule {self.rule.name}\n"
                f'  string: "{var.data}"\n'
            )
            sys.stderr.flush()
            text = ""
        self.out.append('"' + _split_caret(text) + '"')
        return actions + 1


def _split_caret(text: str) -> str:
    """An action's text with each `^` ending one string and starting the next (`/^` is
    kept, and PCP drops the character after it)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "/" and text[i + 1 : i + 2] == "^":
            out.append("/^")
            i += 3
            continue
        out.append('" "' if c == "^" else c)
        i += 1
    return "".join(out)


def _enumerate_words(text: str) -> list[str]:
    """The names in an `enumerate` value, split at white space as PCP splits them (a
    trailing space makes an empty last name)."""
    words: list[str] = []
    current: list[str] = []
    pending = False
    for i, c in enumerate(text):
        if not isspace(c):
            pending = True
            current.append(c)
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if (isspace(nxt) and pending) or nxt == "":
            words.append("".join(current))
            current, pending = [], False
    return words


def _list_items(text: str) -> list[str]:
    """A host or instance list's items: words split at white space outside single
    quotes (the first item starts at the first character, even a space)."""
    chars = list(text)
    starts = [0]
    keep_white = restart = False
    i = 0
    while i < len(chars):
        c = chars[i]
        if not isspace(c) or keep_white:
            if restart:
                starts.append(i)
                restart = False
            if c == "\\":
                i += 1
            elif c == "'":
                keep_white = not keep_white
        else:
            chars[i] = "\0"
            restart = True
        i += 1
    joined = "".join(chars)
    return [joined[s:].split("\0", 1)[0] for s in starts]


def c_realpath(path: str) -> tuple[str, int]:
    """glibc's realpath: the resolved name and 0, or an errno with the name resolved up
    to and including the first missing component (what glibc leaves in its buffer)."""
    parts = [p for p in path.split("/") if p]
    current = "/" if path.startswith("/") else os.getcwd()
    for k, part in enumerate(parts):
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        if not os.path.lexists(candidate):
            return candidate, errno.ENOENT
        candidate = os.path.realpath(candidate)
        if k < len(parts) - 1 and not os.path.isdir(candidate):
            return candidate, errno.ENOTDIR
        current = candidate
    return current, 0
