"""Rule template files and the rules path.

A template file starts `#pmieconf-rules 1`; a file without that header is not a
template and is passed over.  A path component that is a directory is searched through,
subdirectories included, in the order the directory lists its entries.
"""

from __future__ import annotations

import os
import stat

from .model import (
    ATTRIBUTES,
    GLOBAL_NAME,
    GLOBAL_PREFIX,
    TYPES,
    Attr,
    ConfError,
    Rule,
    Var,
    VarType,
)
from .scanner import (
    TOKEN_END,
    Position,
    Stream,
    TokenError,
    parse_error,
    read_token,
    strtoul,
)
from .store import Store

HEADER_WORD = "pmieconf-rules"
HEADER_VERSION = "1"


def read_path(store: Store, rulepath: str) -> None:
    """Every template named by RULEPATH (components separated by colons) into STORE."""
    for part in (p for p in rulepath.split(":") if p):
        _read_tree(store, part)


def _read_tree(store: Store, path: str) -> None:
    try:
        info = os.stat(path)
    except OSError as exc:
        raise store.fail(f"cannot stat {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        _read_file(store, path)
        return
    try:
        names = os.listdir(path)
    except OSError as exc:
        raise store.fail(f"cannot opendir {path}: {exc.strerror}") from None
    for name in names:
        _read_tree(store, f"{path}/{name}")


def _read_file(store: Store, path: str) -> None:
    try:
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    except OSError as exc:
        raise store.fail(f"cannot open {path}: {exc.strerror}") from None
    store.where = Position(path, 1)
    stream = Stream(text)
    if _header_ok(store, stream):
        _Parser(store, stream).read_all()


def _header_ok(store: Store, f: Stream) -> bool:
    """Whether the file starts with the template header (else the reason is noted)."""
    word: str | int = ""
    try:
        ok = f.getc() == "#"
        ok = ok and (word := read_token(f, "", store.where)) == HEADER_WORD
        ok = ok and isinstance(word := read_token(f, "", store.where), str)
    except TokenError as exc:
        word, ok = exc.partial, False
    if not ok:
        found = word if isinstance(word, str) else ""
        store.last_error = (
            f"{store.where.filename} is not a rule description file (bad header)\n"
            f'found "{found}", expected "{HEADER_WORD}"'
        )[:511]
        return False
    if word != HEADER_VERSION:
        store.last_error = (
            f'unknown version number in {store.where.filename}: "{word}" '
            f"(expected {HEADER_VERSION})"
        )[:511]
        return False
    return True


class _Parser:
    """One template file's clauses: `TYPE name [attribute = value]* ;`."""

    def __init__(self, store: Store, f: Stream) -> None:
        self.store = store
        self.f = f
        self.rule: Rule | None = None  # the file's latest rule

    def word(self) -> str | int:
        try:
            return read_token(self.f, "", self.store.where)
        except TokenError as exc:
            raise self.store.fail(exc.message) from None

    def partial(self) -> str | int | TokenError:
        """The next word, or the failure reading it (PCP then names what it read)."""
        try:
            return read_token(self.f, "", self.store.where)
        except TokenError as exc:
            return exc

    def error(self, expected: str, found: str) -> ConfError:
        return self.store.fail(parse_error(self.store.where, expected, found))

    def read_all(self) -> None:
        while True:
            clause = self.read_type()
            if clause is None or self.f.eof:
                return
            vtype, name = clause
            if vtype == VarType.RULE:
                self.read_rule(name)
            else:
                self.read_var(name, vtype)

    def read_type(self) -> tuple[VarType, str] | None:
        word = self.word()
        if word == TOKEN_END:
            return None
        assert isinstance(word, str)
        vtype = TYPES.get(word)
        if vtype is None:
            raise self.error("type keyword", word)
        name = self.word()
        if not isinstance(name, str):
            raise self.store.stale()
        is_global = name.startswith(GLOBAL_PREFIX)
        if vtype == VarType.RULE and name.startswith(GLOBAL_NAME):
            raise self.store.fail(f'rule name may not be "{GLOBAL_NAME}" - this is reserved')
        if self.rule is None:
            if is_global and vtype == VarType.RULE:
                raise self.store.fail(f'rules not allowed in global group: "{name}"')
            if not is_global and vtype != VarType.RULE:
                where = self.store.where
                raise self.store.fail(
                    f'no rule defined, cannot make sense of {vtype.keyword} "{name}" without '
                    f'one\n    line number: {where.line} ("{where.filename}")\n'
                )
        return vtype, name

    def attributes(self, rule_clause: bool):
        """The clause's (attribute, value) pairs up to its `;`."""
        while True:
            word = self.word()
            if not isinstance(word, str):
                raise self.error("attribute or ';'", "end-of-file")
            if word[:1] == ";":
                return
            if word not in ATTRIBUTES:
                raise self.error("attribute keyword", word)
            attr = ATTRIBUTES[word]
            equals = self.partial()
            if not isinstance(equals, str) or equals[:1] != "=":
                found = equals.partial if isinstance(equals, TokenError) else equals
                raise self.error("=", found if isinstance(found, str) else "end-of-file")
            value = self.partial()
            if isinstance(value, TokenError):
                raise self.error("attribute value", value.partial)
            if not isinstance(value, str):
                raise self.error("attribute value", "end-of-file")
            yield attr, value

    def read_var(self, name: str, vtype: VarType) -> None:
        var = Var(name, vtype, is_global=name.startswith(GLOBAL_PREFIX))
        owner = self.rule
        for attr, value in self.attributes(False):
            self.store.set_attribute(owner or _NO_RULE, var, attr, value, False)
        self.store.add_var(owner, var)

    def read_rule(self, name: str) -> None:
        rule = Rule(Var(name, VarType.RULE, modify=False))
        for attr, value in self.attributes(True):
            if attr == Attr.PREDICATE:
                rule.predicate = value
            elif attr == Attr.ENUMERATE:
                rule.enumerate = value
            elif attr == Attr.VERSION:
                number, rest = strtoul(value)
                if rest:
                    raise self.error("version number", "be a positive integer number")
                rule.version = number & 0xFFFFFFFF
            else:
                self.store.set_attribute(rule, rule.me, attr, value, False)
        self.store.add_rule(rule)
        self.rule = rule


#: the rule a global variable is checked against while its template is read (a bad
#: value is named by the variable's full name)
_NO_RULE = Rule(Var("", VarType.RULE))
