"""pmlogconf's groups: read from the group files (a "#pmlogconf-setup 2.0" header, then
ident, probe, force and delta lines, and the metrics to log), their probe or force rule
understood, and the state each ends in: included (logged), available (listed, not
logged) or excluded (not even listed), from the probe's answer and what an existing
pmlogger configuration already says of the group.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Protocol

from purepcp.pmapi.ids import PM_ID_NULL

from .text import append, chop, is_token, line_of, token_of, trim

AVAILABLE, INCLUDE, EXCLUDE = 1, 2, 3
STATES = {"available": AVAILABLE, "include": INCLUDE, "exclude": EXCLUDE}
#: a probe's condition words, in the order they are tried (">" is not ">=": a token
#: ends at a blank)
CONDITIONS = ("exists", "values", "==", "!=", ">", ">=", "<", "<=", "~", "!~")
ADVISORY, MANDATORY = 0, 1
PROG = "pmlogconf"


@dataclass
class Group:
    """A group: from its group file (pmlogconf) and/or an existing configuration (pmlogger)."""

    tag: str
    ident: str | None = None
    delta: str | None = None
    metric: str | None = None  # the probed metric's name
    probe: str | None = None
    force: str | None = None
    metrics: list[str] = field(default_factory=list)
    valid: bool = False
    success: bool = False
    logging: int = ADVISORY
    pmlogger: bool = False
    pmlogconf: bool = False
    condition: str = "exists"
    value: str | None = None
    true_state: int = 0
    false_state: int = 0
    saved_delta: str | None = None
    saved_state: int = 0
    probe_state: int = 0
    pmid: int = 0  # the probed metric's PMID, once looked up

    @property
    def delta_text(self) -> str:
        return self.delta or "default"


class Probed(Protocol):
    """What the probes need from the pmcd, by PMID: a metric's values (None: no value
    set; a value None: one that does not convert) and its type (None: no descriptor)."""

    def values(self, pmid: int) -> list | None: ...
    def type_of(self, pmid: int) -> int | None: ...


# -- the group files ----------------------------------------------------------------------

_HEADER = re.compile(r"#pmlogconf-setup\s*([+-]?\d+)\.\s*([+-]?\d+)\s*")


def parse_group_file(text: str, tag: str) -> Group | None:
    """The group in TEXT, a group file's contents (None: not a version 2 group file)."""
    found = _HEADER.match(text)
    if found is None:
        return None
    major, minor = int(found.group(1)), int(found.group(2))
    if major != 2 and minor != 0:
        return None
    group = Group(tag, pmlogconf=True)
    for raw in text[found.end() :].splitlines(keepends=True):
        if raw.startswith("#"):
            continue
        p = trim(raw)
        if p.startswith("\n"):
            continue
        if is_token(p, "ident"):
            group.ident = append(group.ident, chop(trim(p[6:])), " ")
        elif is_token(p, "probe"):
            p = trim(p[6:])
            group.probe, group.metric = line_of(p), token_of(p)
        elif is_token(p, "force"):
            group.force = line_of(trim(p[6:]))
        elif is_token(p, "delta"):
            group.delta = line_of(trim(p[6:]))
        else:
            group.metrics.append(line_of(p))
    group.valid = bool(group.force or group.probe)
    return group


def read_groups(top: str) -> list[Group]:
    """Every version 2 group file below TOP, tagged by its path there, sorted by tag."""
    groups: list[Group] = []
    _walk(top, None, groups)
    groups.sort(key=lambda g: g.tag.encode("utf-8", "surrogateescape"))
    return groups


def _walk(top: str, sub: str | None, groups: list[Group]) -> None:
    where = os.path.join(top, sub) if sub else top
    try:
        names = sorted(os.listdir(where), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return
    for name in names:
        if name.startswith(".") or name == "v1.0":
            continue
        tag = f"{sub}/{name}" if sub else name
        path = os.path.join(top, tag)
        if os.path.isdir(path):
            _walk(top, tag, groups)
            continue
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        group = parse_group_file(text, tag)
        if group is not None:
            groups.append(group)


def read_setup_file(path: str) -> Group | None:
    """-s: one group file, tagged by its path (less a leading "/")."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    return parse_group_file(text, path[1:] if path.startswith("/") else path)


# -- a group's rule -----------------------------------------------------------------------


def _error(groupdir: str, group: Group, message: str) -> bool:
    sys.stderr.write(f"{PROG}: Error: {groupdir}/{group.tag} {message}\n")
    group.valid = False
    return False


def prepare(group: Group, groupdir: str) -> bool:
    """parse_group: the force or probe rule read into GROUP's states (False, with the
    complaint on stderr, when it cannot be; the group is then invalid)."""
    where = f"{groupdir}/{group.tag}"
    if group.force and group.metric is not None:
        sys.stderr.write(f'{PROG}: Warning: {where} "probe" and "force" control lines ... '
                         'ignoring "force\\n\n')  # fmt: skip
    if not group.force and group.metric is None:
        sys.stderr.write(f'{PROG}: Warning: {where} neither "probe" nor "force" control '
                         'lines ... use "force available"\n')  # fmt: skip
        group.force = "available"
    if group.force is not None:
        state = next((s for w, s in STATES.items() if is_token(group.force, w)), None)
        if state is None:
            return _error(groupdir, group, f'force state "{group.force}" not recognized')
        group.true_state = state
    if group.probe is None:
        return True
    p = group.probe
    if group.metric is not None:
        p = trim(p[len(group.metric) :])
    word = next((w for w in CONDITIONS if is_token(p, w)), None)
    if word is not None:
        p = trim(p[len(word) :])
    elif p and p[0] not in "\n?":
        return _error(groupdir, group, f'condition operator "{p}" not recognized')
    group.condition = word or "exists"
    if group.condition not in ("exists", "values"):
        group.value = token_of(p)
        if not group.value:
            return _error(groupdir, group, f"missing condition operand after {word} operator")
        p = trim(p[len(group.value) :])
    if not p or p[0] == "\n":
        group.success = True
        group.probe_state = group.true_state = AVAILABLE
        group.false_state = EXCLUDE
        return True
    if p[0] != "?":
        return _error(groupdir, group, f'expected "?" after condition, found "{p}"')
    p = trim(p[1:])
    state = next((s for w, s in STATES.items() if is_token(p, w)), None)
    if state is None:
        return _error(groupdir, group, f'condition true state "{p}" not recognized')
    group.true_state = state
    p = trim(p[len(_word(state)) :])
    if not p.startswith(":"):
        return _error(groupdir, group, f'missing ":" in state rule at "{p}"')
    p = trim(p[1:])
    state = next((s for w, s in STATES.items() if is_token(p, w)), None)
    if state is None:
        if p:
            return _error(groupdir, group, f'condition false state "{p}" not recognized')
        return _error(groupdir, group, "missing false state")
    group.false_state = state
    p = trim(p[len(_word(state)) :])
    if p and p[0] != "\n":
        return _error(groupdir, group, f'extra state rule components: "{p}"')
    return True


def _word(state: int) -> str:
    return next(w for w, s in STATES.items() if s == state)


# -- probing ------------------------------------------------------------------------------


def probe(group: Group, probed: Probed, groupdir: str) -> bool | int:
    """evaluate_group: whether the probe's condition holds (an int where PCP's does)."""
    condition = group.condition
    if condition == "values":
        return bool(probed.values(group.pmid))
    if condition == "exists":
        return group.pmid != PM_ID_NULL
    if condition in ("~", "!~"):
        return _regexp(group, probed)
    type_ = probed.type_of(group.pmid)
    values = probed.values(group.pmid)
    if type_ is None or values is None:
        return 0
    if type_ == 6:  # a string
        return _strings(group, values)
    return _numbers(group, values, groupdir)


_NUMBER_TESTS = {
    "==": lambda v, g: v == g, "!=": lambda v, g: -1 if v != g else 0,
    ">": lambda v, g: v > g, ">=": lambda v, g: v >= g,
    "<": lambda v, g: v < g, "<=": lambda v, g: v <= g,
}  # fmt: skip


def _numbers(group: Group, values: list, groupdir: str) -> int:
    from purepcp.pmapi.cnumbers import strtod

    given_text = group.value or ""
    scan = strtod(given_text)
    if scan.end != len(given_text):
        sys.stderr.write(f'{PROG}: Error: {groupdir}/{group.tag} operand "{given_text}" '
                         "is not a number\n")  # fmt: skip
        return -22
    test = _NUMBER_TESTS[group.condition]
    for value in values:
        if value is None:
            continue
        found = int(test(float(value), float(scan.value)))
        if found:
            return found
    return 0


def _cmp(a: str, b: str) -> int:
    x, y = a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape")
    return (x > y) - (x < y)


_STRING_TESTS = {
    "==": lambda c: int(c == 0), "!=": lambda c: -1 if c != 0 else 0,
    ">": lambda c: int(c > 0), ">=": lambda c: int(c >= 0),
    "<": lambda c: int(c < 0), "<=": lambda c: int(c <= 0),
}  # fmt: skip


def _strings(group: Group, values: list) -> int:
    given = group.value or ""
    test = _STRING_TESTS[group.condition]
    for value in values:
        if value is None:
            continue
        text = str(value)
        if len(given) > 1 and given[0] == given[-1] == '"' and len(given) == len(text) + 2:
            found = test(_cmp(text, given[1:-1]))
        else:
            found = test(_cmp(text, given))
        if found:
            return found
    return 0


def _regexp(group: Group, probed: Probed) -> int:
    type_ = probed.type_of(group.pmid)
    values = probed.values(group.pmid)
    if values is None or type_ is None:
        return 0
    if type_ < 0 or type_ > 6:
        sys.stderr.write(f"{PROG}: {group.tag} uses regular expression on non-scalar metric\n")
        return 0
    try:
        pattern = re.compile(group.value or "")
    except re.error:
        sys.stderr.write(f'{PROG}: expression "{group.value}" in group {group.tag} is invalid\n')
        return -22
    for value in values:
        if value is None:
            continue
        text = value if isinstance(value, str) else _number_text(value, type_)
        if len(text) > 1 and text[0] == text[-1] == '"':
            text = text[1:-1]
        matched = pattern.search(text) is not None
        if group.condition == "~" and matched:
            return 1
        if group.condition == "!~" and not matched:
            return -1
    return 0


def _number_text(value: float | int, type_: int) -> str:
    """A number as pmlogconf prints one before matching it: integers whole, reals "%f"."""
    return f"{value:f}" if type_ in (4, 5) else str(int(value))


def settle(group: Group, probed: Probed, groupdir: str) -> int:
    """evaluate_state: the state GROUP ends in (also kept as its probe_state)."""
    if group.force:
        state = group.saved_state or group.true_state
        group.probe_state = state
        if state == EXCLUDE:
            return EXCLUDE
        if state == AVAILABLE and (group.metric is None or not probe(group, probed, groupdir)):
            return AVAILABLE
        group.probe_state = INCLUDE
        group.success = True
        return INCLUDE
    if group.pmlogger and not group.pmlogconf:
        state = group.saved_state
    elif probe(group, probed, groupdir):
        state = group.saved_state if group.saved_state == INCLUDE else group.true_state
        group.success = True
    else:
        state = group.saved_state if group.saved_state == EXCLUDE else group.false_state
        group.success = False
    group.probe_state = state
    return state
