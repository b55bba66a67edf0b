"""The global derived metrics: registration, PMIDs, help text and configuration files.

This is libpcp's pmRegisterDerived / pmLoadDerivedConfig side of derived metrics:
definitions are checked for syntax only (binding to a context's metadata comes later),
numbered in the reserved domain as PCP numbers them, and read from configuration
files with PCP's diagnostics, word for word.  Configuration files are read as PCP
6.2.2 and later read them (a line ending in a backslash continues on the next), which
for every file 6.0.3 accepts gives 6.0.3's results.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TextIO

from purepcp.pmapi.cnumbers import cstring
from purepcp.pmapi.derived.ast import Node
from purepcp.pmapi.derived.parse import DerivedSyntaxError, parse
from purepcp.pmapi.errors import PMErr, pmErrStr
from purepcp.pmapi.ids import DYNAMIC_PMID, pmID_build
from purepcp.pmapi.types import PMType

__all__ = [
    "SHIPPED_DIR", "ContextRegistry", "Definition", "DerivedError", "Registry",
    "add_metric_message", "default_config_path", "default_registry", "load_config",
    "load_config_message", "pcp_global_dir", "register_metric_message", "valid_name",
]  # fmt: skip

_ITEMS = 1024  # items 1..1023 in each cluster: item 0 is never used
_CLUSTERS = 2048  # clusters 0..2047, as libpcp counts them
_ANON_TYPES = ("32", "U32", "64", "U64", "FLOAT", "DOUBLE")  # PM_TYPE_32 .. PM_TYPE_DOUBLE
_WHITE = " \t\n\v\f\r"  # C's isspace()
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TAIL = _LETTERS | frozenset("0123456789_")

#: The anonymous metrics libpcp registers before anything else (for event records).
EVENT_METRICS = (
    (
        "event.flags",
        "Flags for event records",
        "An anonymous derived metric that is used to encode the event flags\n"
        "associated with event records.   See pmUnpackEventRecords(3).",
    ),
    (
        "event.missed",
        "Count of missed event records",
        "An anonymous derived metric that is used to encode the number of\n"
        "event records missed because either the PMDA could not keep up\n"
        "or the PMAPI client did not collect the event records fast\n"
        "enough.  See pmUnpackEventRecords(3).",
    ),
)


class DerivedError(Exception):
    """A registration PCP refuses for a reason other than syntax; ``message`` is PCP's
    text and ``offset`` where pmRegisterDerived's pointer points (the start)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.offset = 0


@dataclass(frozen=True)
class Definition:
    """One global derived metric: ``tree`` is None for an anonymous one (whose
    ``anon_type`` is its PM_TYPE), ``text`` the expression as registered."""

    name: str
    text: str
    tree: Node | None
    pmid: int
    oneline: str | None = None
    helptext: str | None = None
    anon_type: int | None = None


def valid_name(name: str) -> bool:
    """Whether NAME is a derived metric name pmLoadDerivedConfig accepts: dot-separated
    components, each a letter then letters, digits or "_" (a trailing dot passes, as in
    PCP; an empty name does not)."""
    first = True
    for c in name:
        if first:
            if c not in _LETTERS:
                return False
            first = False
        elif c == ".":
            first = True
        elif c not in _TAIL:
            return False
    return bool(name)


class Registry:
    """The global derived metrics in registration order, with libpcp's PMIDs."""

    def __init__(self) -> None:
        self._defs: dict[str, Definition] = {}
        self._names: dict[int, str] = {}
        self._last: tuple[int, int] | None = None  # (cluster, item) of the latest
        self._lock = threading.RLock()
        #: (definitions, names) as they stand, shared read-only with the contexts made
        #: from this registry until either side changes (a web server makes thousands)
        self._frozen: tuple[dict[str, Definition], dict[int, str]] | None = None
        self._borrowed = False  # _defs and _names are another registry's frozen pair

    def _shared(self) -> tuple[dict[str, Definition], dict[int, str]]:
        """This registry's definitions and names, to be shared and never changed."""
        with self._lock:
            if self._frozen is None:  # (borrowed dicts are frozen already)
                pair = (self._defs, self._names)
                self._frozen = pair if self._borrowed else (dict(pair[0]), dict(pair[1]))
            return self._frozen

    def _writable(self) -> None:
        """Before a change: stop sharing (callers hold the lock)."""
        self._frozen = None
        if self._borrowed:
            self._defs, self._names = dict(self._defs), dict(self._names)
            self._borrowed = False

    def __iter__(self) -> Iterator[Definition]:
        with self._lock:
            return iter(list(self._defs.values()))

    def __len__(self) -> int:
        return len(self._defs)

    def __contains__(self, name: object) -> bool:
        return name in self._defs

    def lookup(self, name: str) -> Definition | None:
        return self._defs.get(name)

    def by_pmid(self, pmid: int) -> Definition | None:
        name = self._names.get(pmid)
        return None if name is None else self._defs[name]

    def register(self, name: str, expr: str) -> Definition:
        """pmRegisterDerived: DerivedSyntaxError for the expression, DerivedError for a
        duplicate (or, unlike PCP's function, an illegal) name or no PMIDs left.  A name
        may have "-" inside its components here, as PCP's function takes (pcp-dstat
        registers dstat.cpu-adv.usr), though a configuration file's may not."""
        if not valid_name(name.replace("-", "_")) or ".-" in name or name.startswith("-"):
            raise DerivedError(f"illegal derived metric name ({name})")
        with self._lock:
            if name in self._defs:
                raise DerivedError("Duplicate global derived metric name")
            return self._add(name, expr, parse(expr, units_check=_units_problem), None)

    def register_anon(self, name: str, type_: int) -> Definition:
        """An anonymous metric of TYPE_ (a numeric PM_TYPE): known to the namespace, never
        with values (libpcp's __pmRegisterAnon)."""
        if not 0 <= type_ < len(_ANON_TYPES):
            raise DerivedError(pmErrStr(PMErr.PM_ERR_TYPE))
        if not valid_name(name):
            raise DerivedError(f"illegal derived metric name ({name})")
        with self._lock:
            if name in self._defs:
                raise DerivedError("Duplicate global derived metric name")
            return self._add(name, f"anon(PM_TYPE_{_ANON_TYPES[type_]})", None, type_)

    def set_attribute(self, name: str, attr: str, value: str) -> Definition:
        """Give NAME its "oneline" or "helptext" once, with PCP's complaints otherwise."""
        with self._lock:
            old = self._defs.get(name)
            if old is None:
                raise DerivedError(f"cannot set attribute, derived metric ({name}) not defined")
            if attr not in ("oneline", "helptext"):
                raise DerivedError(f"attribute ({attr}) is unknown for metric ({name})")
            if getattr(old, attr) is not None:
                raise DerivedError(f"duplicate value for attribute ({attr}) of metric ({name})")
            new = dataclasses.replace(old, **{attr: value})
            self._writable()
            self._defs[name] = new
            return new

    def _add(self, name: str, text: str, tree: Node | None, anon: int | None) -> Definition:
        if self._last is None:
            cluster, item = 0, 1
        elif self._last[1] < _ITEMS - 1:
            cluster, item = self._last[0], self._last[1] + 1
        elif self._last[0] < _CLUSTERS - 1:
            cluster, item = self._last[0] + 1, 1
        else:
            raise DerivedError("global PMID space exhausted")
        self._last = (cluster, item)
        pmid = pmID_build(DYNAMIC_PMID, cluster, item)
        definition = Definition(name, text, tree, pmid, anon_type=anon)
        self._writable()
        self._defs[name] = definition
        self._names[pmid] = name
        return definition


class ContextRegistry(Registry):
    """One context's derived metrics (libpcp's pmAddDerivedMetric): the global ones it
    started with, then its own, numbered down from 511.2047.1023 as libpcp numbers them."""

    def __init__(self, base: Registry | None = None) -> None:
        super().__init__()
        if base is not None:  # base's definitions as they stand now, copied on a change
            self._defs, self._names = base._shared()
            self._borrowed = True
        self._own: tuple[int, int] | None = None  # (cluster, item) of the latest own PMID

    def copy(self) -> ContextRegistry:
        """A registry with the same definitions and numbering (a context binds its
        derived metrics once per registry, so an addition makes a new one)."""
        twin = ContextRegistry(self)
        twin._own = self._own
        return twin

    def add(self, name: str, expr: str) -> Definition:
        """pmAddDerivedMetric: DerivedSyntaxError for the expression, DerivedError for a
        name already defined here or an illegal one."""
        if not valid_name(name):
            raise DerivedError(f"illegal derived metric name ({name})")
        with self._lock:
            if name in self._defs:
                raise DerivedError("Duplicate per-context derived metric name")
            tree = parse(expr, units_check=_units_problem)
            if self._own is None:
                cluster, item = _CLUSTERS - 1, _ITEMS - 1
            elif self._own[1] > 1:
                cluster, item = self._own[0], self._own[1] - 1
            elif self._own[0] > 0:
                cluster, item = self._own[0] - 1, _ITEMS - 1
            else:
                raise DerivedError("per-context PMID space exhausted")
            self._own = (cluster, item)
            pmid = pmID_build(DYNAMIC_PMID, cluster, item)
            definition = Definition(name, expr, tree, pmid)
            self._writable()
            self._defs[name] = definition
            self._names[pmid] = name
            return definition

    def discard(self, name: str) -> None:
        """Forget NAME (one that failed to bind when added); its PMID stays used."""
        with self._lock:
            if name not in self._defs:
                return
            self._writable()
            d = self._defs.pop(name)
            self._names.pop(d.pmid, None)


# ------------------------------------------------------------------- messages


def register_metric_message(name: str, expr: str, err: DerivedSyntaxError | DerivedError) -> str:
    """The message pmRegisterDerivedMetric returns for a failed registration."""
    caret = " " * err.offset + "^"
    text = f'Error: pmRegisterDerivedMetric("{name}", ...)\n{expr}\n{caret}\n'
    return text + (f"{err.message}\n" if err.message else "")


def add_metric_message(name: str, expr: str, err: Exception) -> str:
    """The message pmAddDerivedMetric returns: for a syntax error (DerivedSyntaxError),
    a semantic one (bind's SemanticError, whose ``reason`` it prints) or another refusal."""
    head = f'pmAddDerivedMetric("{name}", ...)'
    if isinstance(err, DerivedSyntaxError):
        caret = " " * err.offset + "^"
        return f"Syntax Error: {head}\n{expr}\n{caret}\n{err.message}\n"
    reason = getattr(err, "reason", None)
    if reason is not None:
        return f"Semantic Error: {head}\n{expr}\n^\n{reason}\n"
    code = int(PMErr.PM_ERR_BADDERIVE)
    return f"Error: {head}: returns {code}\n{err}\n"


def load_config_message(
    path: str, lineno: int, name: str, after: str, err: DerivedSyntaxError | DerivedError
) -> str:
    """pmLoadDerivedConfig's report of a failed `name = expr` line: AFTER is the line
    after its "=", ERR's offset counts from the expression's first non-blank."""
    at = len(after) - len(after.lstrip(_WHITE)) + err.offset
    marks = "".join("^" if i == at else c if c in _WHITE else " " for i, c in enumerate(after))
    text = f"[{path}:{lineno}] Error: pmRegisterDerived({name}, ...) syntax error\n"
    text += f"{after}\n{marks}\n"
    return text + (f"{err.message}\n" if err.message else "")


# ------------------------------------------------------------ configuration files


def load_config(registry: Registry, path: str, err: TextIO) -> int:
    """pmLoadDerivedConfig: load the files and directories (walked recursively, in
    directory order as PCP's readdir walk) of the colon-separated PATH.  Returns how
    many metrics were registered, or -errno for a component that cannot be read (the
    walk stops there); diagnostics for bad lines go to ERR."""
    return _load_path(registry, path, err, recover=False)


def _load_path(registry: Registry, path: str, err: TextIO, recover: bool) -> int:
    parts = path.split(":")
    if parts[-1] == "":
        parts.pop()
    total = 0
    for part in parts:
        count = _load_component(registry, part, err, recover)
        if count < 0:
            return count
        total += count
    return total


def _load_component(registry: Registry, top: str, err: TextIO, recover: bool) -> int:
    """One component: a file, or a directory walked depth first without recursion."""
    total = 0
    pending: list[Iterator[str]] = [iter([top])]
    while pending:
        path = next(pending[-1], None)
        if path is None:
            pending.pop()
            continue
        try:
            mode = os.stat(path).st_mode
            if stat.S_ISREG(mode):
                total += _ConfigFile(registry, path, err).load()
            elif stat.S_ISDIR(mode):
                with os.scandir(path) as entries:
                    names = [e.name for e in entries]
                pending.append(iter([f"{path}/{n}" for n in names]))
        except OSError as e:
            if not recover:
                return -(e.errno or 1)
    return 0 if recover else total


class _ConfigFile:
    """One configuration file read as libpcp reads it, a character at a time."""

    def __init__(self, registry: Registry, path: str, err: TextIO) -> None:
        with open(path, "rb") as f:
            self.text = f.read().decode("utf-8", "surrogateescape")
        self.pos = 0
        self.registry = registry
        self.path = path
        self.err = err
        self.lineno = 1
        self.extra_lines = 0  # lines beyond the current one that it consumed
        self.loaded = 0

    def getc(self) -> str:
        """The next character, or "" at the end of the file."""
        if self.pos >= len(self.text):
            return ""
        self.pos += 1
        return self.text[self.pos - 1]

    def say(self, message: str) -> None:
        self.err.write(f"[{self.path}:{self.lineno}] {message}\n")

    def load(self) -> int:
        line: list[str] = []
        last = ""
        while c := self.getc():
            if c == "\n" and last == "\\":
                line.pop()  # a continuation: the next line joins this one
                self.extra_lines += 1
                last = c
                continue
            if c != "\n":
                line.append(c)
                last = c
                continue
            text = cstring("".join(line))
            if text and text[0] != "#":  # comments (#control too) and empty lines
                self.line(text)
            self.lineno += 1 + self.extra_lines
            self.extra_lines = 0
            line = []
        return self.loaded  # an unterminated last line is ignored, as in PCP

    def line(self, text: str) -> None:
        eq = text.find("=")
        if eq < 0:
            self.say(f"Error: pmLoadDerivedConfig: missing ``='' after derived metric name\n{text}")
            return
        lp, rp = text.find("(", 0, eq), text.find(")", 0, eq)
        name = text[: lp if lp >= 0 else eq].strip(_WHITE)
        problem = None
        if not name:
            problem = f"derived metric name missing\n{text}"
        elif not valid_name(name):
            problem = f"illegal derived metric name ({name})"
        elif lp >= 0 and rp < 0:
            problem = f"missing ')' after attribute\n{text}"
        elif rp >= 0 and lp < 0:
            problem = f"missing '(' before attribute\n{text}"
        if problem is not None:
            self.say(f"Error: pmLoadDerivedConfig: {problem}")
        elif lp < 0:
            self.definition(name, text, text[eq + 1 :])
        else:
            self.attribute(name, text, text[lp + 1 : rp].strip(_WHITE), text[eq + 1 :])

    def definition(self, name: str, text: str, after: str) -> None:
        expr = after.lstrip(_WHITE)
        if not expr:
            self.say(f"Error: pmLoadDerivedConfig: expression missing\n{text}")
            return
        try:
            self.registry.register(name, expr)
        except (DerivedSyntaxError, DerivedError) as e:
            self.err.write(load_config_message(self.path, self.lineno, name, after, e))
        else:
            self.loaded += 1

    def attribute(self, name: str, text: str, attr: str, after: str) -> None:
        if not attr:
            self.say(f"Error: pmLoadDerivedConfig: attribute name missing\n{text}")
            return
        value = after.lstrip(_WHITE)
        delim = value[:1] if value[:1] in ("'", '"') else ""
        value = value[len(delim) :]
        if not value:
            self.say(f"Error: pmLoadDerivedConfig: attribute value missing\n{text}")
            return
        if delim:
            quoted = self.quoted(value, delim)
            if quoted is None:
                return
            value = quoted
        try:
            self.registry.set_attribute(name, attr, value)
        except DerivedError as e:
            self.say(f"Error: pmLoadDerivedConfig: {e.message}\n{text}")

    def quoted(self, rest: str, delim: str) -> str | None:
        """A quoted value from REST of the line and, until DELIM, the lines after it:
        a backslash keeps the next character, or drops the next newline."""
        out: list[str] = []
        escaped = False
        newlines = 0  # the first is the end of the value's own line
        i = 0
        while True:
            if i < len(rest):
                c, i = rest[i], i + 1
            elif newlines == 0:
                c = "\n"
            elif not (c := self.getc()):
                self.say(f"Error: pmLoadDerivedConfig: missing termination ({delim}) for value")
                return None
            newlines += c == "\n"
            if escaped:
                escaped = False
                if c != "\n":
                    out.append(c)
            elif c == "\\":
                escaped = True
            elif c == delim:
                break
            else:
                out.append(c)
        tail = rest[i:]
        if tail:
            if tail.strip(_WHITE):
                extra = tail.lstrip(_WHITE)
                self.say(
                    f"Warning: pmLoadDerivedConfig: extra text ({extra}) "
                    "after attribute value will be ignored"
                )
        elif newlines:
            newlines += self.rest_of_line()
        self.extra_lines += max(newlines - 1, 0)
        return "".join(out)

    def rest_of_line(self) -> int:
        """Skip what follows a value ending on a later line, warning of any text as PCP
        does (which never looks at the first character after the quote); returns 1
        when that line's newline was read."""
        c = self.getc()
        while c not in ("", "\n"):
            c = self.getc()
            if c == "" or c not in _WHITE:
                break
        if c not in ("", "\n"):
            extra = [c]
            while (c := self.getc()) not in ("", "\n"):
                extra.append(c)
            self.say(
                f"Warning: pmLoadDerivedConfig: extra text ({''.join(extra)}) "
                "after attribute value will be ignored"
            )
        return int(c == "\n")


# ------------------------------------------------------------- default registry

_default: Registry | None = None
_default_lock = threading.Lock()

#: The definitions purepcp ships (package data), read when PCP's own are not installed:
#: PCP's default names, written for purepcp.
SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "defaults")


def pcp_global_dir() -> str:
    """PCP's global definitions directory, $PCP_VAR_DIR/config/derived, with PCP_VAR_DIR
    found as libpcp's pmGetConfig finds it: the environment, else PCP's pcp.conf
    ($PCP_CONF, else /etc/pcp.conf).  "" when neither names it (no PCP installed)."""
    var_dir = os.environ.get("PCP_VAR_DIR")
    if var_dir is None:
        from purepcp.pmapi.paths import LayoutError, read_layout

        try:
            var_dir = read_layout(os.environ.get("PCP_CONF") or "/etc/pcp.conf").get("PCP_VAR_DIR")
        except LayoutError:
            var_dir = None
    return f"{var_dir}/config/derived" if var_dir else ""


def default_config_path() -> str:
    """What the process's registry loads: $PCP_DERIVED_CONFIG when set ("" loads
    nothing), else PCP's global directory when it exists (libpcp's __dminit rule), else
    the set purepcp ships."""
    path = os.environ.get("PCP_DERIVED_CONFIG")
    if path is not None:
        return path
    global_dir = pcp_global_dir()
    if global_dir and os.path.exists(global_dir):
        return global_dir
    return SHIPPED_DIR


def default_registry() -> Registry:
    """The process's registry, made on first use as libpcp's __dminit does: the two
    event record metrics, then default_config_path()'s definitions, missing files
    silently skipped."""
    global _default
    with _default_lock:
        if _default is None:
            registry = Registry()
            for name, oneline, helptext in EVENT_METRICS:
                registry.register_anon(name, PMType.PM_TYPE_U32)
                registry.set_attribute(name, "oneline", oneline)
                registry.set_attribute(name, "helptext", helptext)
            path = default_config_path()
            if path:
                _load_path(registry, path, sys.stderr, recover=True)
            _default = registry
        return _default


def _units_problem(text: str) -> str | None:
    """What pmParseUnitsStr cannot read in TEXT (None when it reads it)."""
    from purepcp.pmapi.units import parse_units_str

    if text.strip().lower() in ("", "none"):  # (pmParseUnitsStr has no word for no units)
        return "unrecognized or duplicate base unit"
    try:
        parse_units_str(text)
    except ValueError:
        return "unrecognized or duplicate base unit"
    return None
