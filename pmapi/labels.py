"""Metric labels: PCP's pmLabel / pmLabelSet model, JSONB parsing and merging.

A label set is a JSON object of name:value pairs kept in PCP's "JSONB" form
(insignificant whitespace removed, value text otherwise verbatim) plus an index
of `Label` records holding *byte* offsets into that text, sorted by name.  The
records are exactly what travels in a PDU_LABEL, so their fields are the wire
fields.  Parsing, merging and the flag helpers follow libpcp 6.0.3's labels.c,
p_label.c and libpcp_pmda's callback.c, and match its output byte for byte
(tests/pmapi/test_labels_interop.py).  Where libpcp 6.0.3 is buggy this module does
the evident intended thing instead: array values written with whitespace
(offsets one byte early), maps nested two or more deep (middle names lost),
maps inside arrays (made into labels), name comparison mixing a nested label's
leaf length with its full name (false and missed duplicates), pmMergeLabels
results that shrink part-way (EINVAL), a filter dropping every label ("}"), and
lenient parsing (non-objects, truncated text, "-01", bad escapes accepted).
"""

from __future__ import annotations

import errno
import itertools
import json as _json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntFlag
from typing import Any

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_IN_NULL, pmIDStr, pmInDomStr


class LabelFlag(IntFlag):
    """pmLabel flag bits: where in the hierarchy a label came from, and its nature."""

    PM_LABEL_CONTEXT = 1 << 0
    PM_LABEL_DOMAIN = 1 << 1
    PM_LABEL_INDOM = 1 << 2
    PM_LABEL_CLUSTER = 1 << 3
    PM_LABEL_ITEM = 1 << 4
    PM_LABEL_INSTANCES = 1 << 5
    PM_LABEL_COMPOUND = 1 << 6  # name has several dot-separated components
    PM_LABEL_OPTIONAL = 1 << 7  # extrinsic label (a "note"), not part of identity


PM_LABEL_CONTEXT = LabelFlag.PM_LABEL_CONTEXT
PM_LABEL_DOMAIN = LabelFlag.PM_LABEL_DOMAIN
PM_LABEL_INDOM = LabelFlag.PM_LABEL_INDOM
PM_LABEL_CLUSTER = LabelFlag.PM_LABEL_CLUSTER
PM_LABEL_ITEM = LabelFlag.PM_LABEL_ITEM
PM_LABEL_INSTANCES = LabelFlag.PM_LABEL_INSTANCES
PM_LABEL_COMPOUND = LabelFlag.PM_LABEL_COMPOUND
PM_LABEL_OPTIONAL = LabelFlag.PM_LABEL_OPTIONAL

#: Most labels one parse may yield (pmapi.h); a PDU_LABEL set must hold fewer.
PM_MAXLABELS = (1 << 8) - 1
#: Size of libpcp's label JSON buffers, terminating NUL included (pmapi.h).
PM_MAXLABELJSONLEN = (1 << 16) - 1
#: A label name component must be shorter than this (libpcp internal.h).
MAXLABELNAMELEN = (1 << 8) - 1
#: Label capacity of __pmParseLabelSet / the merge routines: six hierarchy levels.
MAXLABELSET = PM_MAXLABELS * 6
#: Longest label JSON text libpcp parses: __pmAddLabels rejects strlen+1 >= PM_MAXLABELJSONLEN.
MAXLABELJSONTEXT = PM_MAXLABELJSONLEN - 2
#: Longest (non-empty) merge result libpcp produces in its PM_MAXLABELJSONLEN buffer:
#: the space check for the closing brace in __pmMergeLabelSets costs two more bytes.
MAXMERGEDJSONTEXT = PM_MAXLABELJSONLEN - 4
#: Deepest nesting libpcp's JSON parser (jsonsl) accepts: the top-level object is
#: level 1 and every value, scalars included, is one level below its container.
MAX_LABEL_DEPTH = 255

_HIERARCHY = (
    PM_LABEL_CONTEXT
    | PM_LABEL_DOMAIN
    | PM_LABEL_INDOM
    | PM_LABEL_CLUSTER
    | PM_LABEL_ITEM
    | PM_LABEL_INSTANCES
)

#: pmGetInstancesLabels-style type string for each hierarchy level (__pmLabelTypeString).
_TYPE_STRINGS: dict[int, str] = {
    PM_LABEL_CONTEXT: "context",
    PM_LABEL_DOMAIN: "domain",
    PM_LABEL_INDOM: "indom",
    PM_LABEL_CLUSTER: "cluster",
    PM_LABEL_ITEM: "pmid",
    PM_LABEL_INSTANCES: "instances",
}


def _einval(detail: str) -> PMError:
    return PMError(-errno.EINVAL, detail)


def _e2big(detail: str) -> PMError:
    return PMError(-errno.E2BIG, detail)


@dataclass(frozen=True, slots=True)
class Label:
    """One pmLabel index record: byte offsets/lengths of a name and value in the set's JSONB."""

    name: int  # u16: offset of the first name byte (after the opening quote)
    namelen: int  # u8: name length in bytes
    flags: int  # u8: LabelFlag bits
    value: int  # u16: offset of the first value byte
    valuelen: int  # u16: value length in bytes

    def __post_init__(self) -> None:
        for attr, top in (
            ("name", 0xFFFF),
            ("namelen", 0xFF),
            ("flags", 0xFF),
            ("value", 0xFFFF),
            ("valuelen", 0xFFFF),
        ):
            v = getattr(self, attr)
            if not isinstance(v, int) or not 0 <= v <= top:
                raise ValueError(f"pmLabel {attr} {v!r} out of range 0..{top}")


#: A pmMergeLabelSets filter: called with each label about to be written and the
#: JSONB its offsets refer to; a false result leaves the label out.
LabelFilter = Callable[[Label, bytes], object]


@dataclass(frozen=True)
class LabelSet:
    """A pmLabelSet: instance, label count (or a negative error code), JSONB text and index.

    `compound_names` is libpcp's per-set hash (not on the wire): for a label read
    from a nested map it maps the label's name offset to its full dotted name.
    """

    inst: int = PM_IN_NULL
    nlabels: int = 0
    json: bytes = b""
    labels: tuple[Label, ...] = ()
    compound_names: tuple[tuple[int, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.json, bytes):
            raise TypeError(f"LabelSet json must be bytes, not {type(self.json).__name__}")
        if not isinstance(self.labels, tuple):
            object.__setattr__(self, "labels", tuple(self.labels))
        if not isinstance(self.compound_names, tuple):
            object.__setattr__(self, "compound_names", tuple(self.compound_names))
        if not 0 <= self.inst <= 0xFFFFFFFF:
            raise ValueError(f"LabelSet inst {self.inst} out of range")
        if len(self.json) > 0xFFFF:
            raise ValueError(f"LabelSet json is {len(self.json)} bytes, jsonlen is 16 bits")
        if self.nlabels < 0:
            if self.json or self.labels or self.compound_names:
                raise ValueError("a LabelSet carrying an error code has no json or labels")
            object.__setattr__(self, "_compound", {})
            return
        if len(self.labels) != self.nlabels:
            raise ValueError(f"LabelSet nlabels {self.nlabels} but {len(self.labels)} labels")
        object.__setattr__(self, "_compound", dict(self.compound_names))
        end = len(self.json)
        for lp in self.labels:
            if lp.name + lp.namelen > end or lp.value + lp.valuelen > end:
                raise ValueError(f"{lp} points outside the {end}-byte json")

    # -- constructors -----------------------------------------------------------------

    @classmethod
    def from_json(
        cls,
        text: str | bytes,
        flags: int = 0,
        *,
        inst: int = PM_IN_NULL,
        maxlabels: int = PM_MAXLABELS,
    ) -> LabelSet:
        """Parse label JSON into JSONB and a sorted index, as __pmParseLabelSet does.

        FLAGS is ORed into every label (a hierarchy level, PM_LABEL_OPTIONAL); with
        PM_LABEL_COMPOUND set, names may also contain dots.  Raises PMError
        (-EINVAL for bad JSON/names/duplicates, -E2BIG for size limits).
        """
        data = _as_bytes(text)
        parser = _Parser(data, int(flags), maxlabels)
        entries = parser.parse()
        if not entries:
            return cls(inst=inst)
        entries.sort(key=lambda e: e[0])
        for (a, _, _), (b, _, _) in itertools.pairwise(entries):
            if a == b:
                raise _einval(f"duplicate label name {a.decode()!r}")
        labels = tuple(lp for _, lp, _ in entries)
        compound = tuple(
            sorted((lp.name, full.decode()) for full, lp, registered in entries if registered)
        )
        return cls(inst, len(labels), bytes(parser.out), labels, compound)

    @classmethod
    def from_dict(
        cls, labels: Mapping[str, Any], flags: int = 0, *, inst: int = PM_IN_NULL
    ) -> LabelSet:
        """Build a set from a mapping, each value serialized as compact JSON (nested maps nest)."""
        parts = []
        for name, value in labels.items():
            if not isinstance(name, str):
                raise _einval(f"label name {name!r} is not a string")
            try:
                text = _json.dumps(
                    value, separators=(",", ":"), ensure_ascii=False, allow_nan=False
                )
            except (TypeError, ValueError) as exc:
                raise _einval(f"label {name!r}: value is not JSON: {exc}") from None
            parts.append(f"{_json.dumps(name)}:{text}")
        return cls.from_json("{" + ",".join(parts) + "}", flags, inst=inst)

    # -- accessors ------------------------------------------------------------------

    @property
    def jsonlen(self) -> int:
        """The pmLabelSet jsonlen field."""
        return len(self.json)

    @property
    def compound(self) -> bool:
        """The pmLabelSet compound bit: some label here has a dotted full name."""
        return bool(self.compound_names)

    def label_name_bytes(self, label: Label) -> bytes:
        """LABEL's full name: its compound name if it has one (label_name in labels.c)."""
        if label.flags & PM_LABEL_COMPOUND:
            full = self._compound.get(label.name)
            if full is not None:
                return full.encode()
        return self.json[label.name : label.name + label.namelen]

    def label_name(self, label: Label) -> str:
        """LABEL's full name as text."""
        return self.label_name_bytes(label).decode("utf-8", "replace")

    def label_value(self, label: Label) -> str:
        """LABEL's value exactly as its JSON text."""
        return self.json[label.value : label.value + label.valuelen].decode("utf-8", "replace")

    @property
    def names(self) -> tuple[str, ...]:
        """Full label names in index (sorted) order."""
        return tuple(self.label_name(lp) for lp in self.labels)

    @property
    def values(self) -> tuple[str, ...]:
        """Value texts in index (sorted) order."""
        return tuple(self.label_value(lp) for lp in self.labels)

    def lookup(self, name: str) -> Label | None:
        """The label whose full (dotted, for nested maps) name is NAME, else None."""
        want = name.encode()
        for lp in self.labels:
            if self.label_name_bytes(lp) == want:
                return lp
        return None

    def to_dict(self) -> dict[str, Any]:
        """{full name: decoded value} in index order; PMError if a value is not JSON."""
        out: dict[str, Any] = {}
        for lp in self.labels:
            text = self.json[lp.value : lp.value + lp.valuelen]
            try:
                out[self.label_name(lp)] = _json.loads(text) if text else None
            except ValueError:
                raise _einval(f"label {self.label_name(lp)!r} value {text!r} is not JSON") from None
        return out

    def add_flags(self, flags: int) -> LabelSet:
        """A copy with FLAGS ORed into every label (pmdaAddLabelFlags)."""
        labels = tuple(
            Label(lp.name, lp.namelen, int(lp.flags | flags), lp.value, lp.valuelen)
            for lp in self.labels
        )
        return LabelSet(self.inst, self.nlabels, self.json, labels, self.compound_names)


def _as_bytes(text: str | bytes) -> bytes:
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _einval(
                f"label JSON is not encodable as UTF-8 at character {exc.start}"
            ) from None
    if isinstance(text, bytes | bytearray | memoryview):
        data = bytes(text)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _einval(f"label JSON is not valid UTF-8 at byte {exc.start}") from None
        return data
    raise TypeError(f"label JSON must be str or bytes, not {type(text).__name__}")


# -- parsing ------------------------------------------------------------------------

_WS = frozenset(b" \t\n\r")
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = (b"true", b"false", b"null")
_NAME = re.compile(rb"[A-Za-z][A-Za-z0-9_]*")
_DOTTED_NAME = re.compile(rb"[A-Za-z][A-Za-z0-9_.]*")

#: (full name, index record, whether the full name goes into compound_names)
_Entry = tuple[bytes, Label, bool]


class _Parser:
    """Strict JSON reader that emits JSONB and label records (__pmParseLabels's job)."""

    def __init__(self, data: bytes, flags: int, maxlabels: int) -> None:
        if not 0 <= flags <= 0xFF:
            raise ValueError(f"label flags {flags:#x} do not fit pmLabel's 8 bits")
        self.s = data
        self.pos = 0
        self.out = bytearray()
        self.flags = flags
        self.maxlabels = maxlabels
        self.entries: list[_Entry] = []

    def fail(self, what: str) -> PMError:
        where = self.s[self.pos : self.pos + 16]
        found = f"{where!r}" if where else "end of text"
        return _einval(f"label JSON: {what} at byte {self.pos} (found {found})")

    def ws(self) -> None:
        s, n, i = self.s, len(self.s), self.pos
        while i < n and s[i] in _WS:
            i += 1
        self.pos = i

    def peek(self) -> int:
        return self.s[self.pos] if self.pos < len(self.s) else -1

    def parse(self) -> list[_Entry]:
        if len(self.s) + 1 >= PM_MAXLABELJSONLEN:
            raise _e2big(
                f"label JSON is {len(self.s)} bytes, longest allowed is {MAXLABELJSONTEXT}"
            )
        self.ws()
        if self.pos == len(self.s):  # empty or blank text: an empty set, as in libpcp
            return []
        if self.peek() != ord("{"):
            raise self.fail("labels must be a JSON object")
        self.labels_object((), 1)
        self.ws()
        if self.pos != len(self.s):
            raise self.fail("unexpected text after the labels object")
        if not self.entries:
            self.out.clear()  # "{}" yields no JSONB at all, like libpcp
        return self.entries

    def add(self, path: tuple[bytes, ...], name: int, value: int, compound: bool) -> None:
        if len(self.entries) >= self.maxlabels:
            raise _e2big(f"more than {self.maxlabels} labels")
        full = b".".join(path)
        if len(full) >= MAXLABELNAMELEN:
            raise _e2big(f"label name {full[:32].decode()}... is {len(full)} bytes")
        flags = self.flags | (int(PM_LABEL_COMPOUND) if compound else 0)
        leaf = path[-1]
        record = Label(name, len(leaf), flags, value, len(self.out) - value)
        self.entries.append((full, record, b"." in full))

    def name(self) -> bytes:
        start = self.pos
        m = _STRING.match(self.s, start)
        if m is None:
            raise self.fail("expected a quoted label name")
        raw = self.s[start + 1 : m.end() - 1]
        if not raw:
            raise self.fail("empty label name")
        if len(raw) >= MAXLABELNAMELEN:
            raise _e2big(
                f"label name at byte {start} is {len(raw)} bytes, limit {MAXLABELNAMELEN - 1}"
            )
        pattern = _DOTTED_NAME if self.flags & PM_LABEL_COMPOUND else _NAME
        if pattern.fullmatch(raw) is None:
            raise self.fail(
                f"invalid label name {raw.decode('utf-8', 'replace')!r}"
                " (a letter, then letters, digits or '_')"
            )
        self.pos = m.end()
        return raw

    def deeper(self, level: int) -> None:
        if level > MAX_LABEL_DEPTH:
            raise self.fail(f"JSON nested deeper than {MAX_LABEL_DEPTH} levels")

    def labels_object(self, path: tuple[bytes, ...], level: int) -> bool:
        """Read a map whose keys are label names; True when it had members."""
        self.deeper(level)
        self.pos += 1
        self.out += b"{"
        self.ws()
        if self.peek() == ord("}"):
            self.pos += 1
            self.out += b"}"
            return False
        while True:
            self.ws()
            key = self.name()
            name = len(self.out) + 1
            self.out += b'"' + key + b'":'
            self.ws()
            if self.peek() != ord(":"):
                raise self.fail("expected ':' after a label name")
            self.pos += 1
            self.ws()
            child = (*path, key)
            value = len(self.out)
            if self.peek() == ord("{"):
                if not self.labels_object(child, level + 1):
                    self.add(child, name, value, compound=True)  # "{}" is itself a value
            else:
                self.value(level + 1)
                self.add(child, name, value, compound=bool(path))
            self.ws()
            c = self.peek()
            self.pos += 1
            if c == ord(","):
                self.out += b","
            elif c == ord("}"):
                self.out += b"}"
                return True
            else:
                self.pos -= 1
                raise self.fail("expected ',' or '}'")

    def value(self, level: int) -> None:
        """Copy one JSON value into the output, dropping insignificant whitespace."""
        self.deeper(level)
        c = self.peek()
        s = self.s
        if c == ord('"'):
            m = _STRING.match(s, self.pos)
            if m is None:
                raise self.fail("invalid string (bad escape, control character or no end)")
        elif c == ord("-") or ord("0") <= c <= ord("9"):
            m = _NUMBER.match(s, self.pos)
            if m is None:
                raise self.fail("invalid number")
        elif c == ord("["):
            self.container(level, ord("]"), keyed=False)
            return
        elif c == ord("{"):
            self.container(level, ord("}"), keyed=True)
            return
        else:
            for word in _LITERALS:
                if s.startswith(word, self.pos):
                    self.pos += len(word)
                    self.out += word
                    return
            raise self.fail("expected a JSON value")
        self.out += m.group()
        self.pos = m.end()

    def container(self, level: int, close: int, keyed: bool) -> None:
        """An array, or a map inside an array: an opaque value, not labels."""
        self.out.append(self.s[self.pos])
        self.pos += 1
        self.ws()
        if self.peek() == close:
            self.pos += 1
            self.out.append(close)
            return
        while True:
            self.ws()
            if keyed:
                m = _STRING.match(self.s, self.pos)
                if m is None:
                    raise self.fail("expected a quoted key")
                self.out += m.group() + b":"
                self.pos = m.end()
                self.ws()
                if self.peek() != ord(":"):
                    raise self.fail("expected ':' after a key")
                self.pos += 1
                self.ws()
            self.value(level + 1)
            self.ws()
            c = self.peek()
            self.pos += 1
            if c == ord(","):
                self.out += b","
            elif c == close:
                self.out.append(close)
                return
            else:
                self.pos -= 1
                raise self.fail(f"expected ',' or {chr(close)!r}")


# -- merging ------------------------------------------------------------------------


def _names_of(lset: LabelSet) -> list[bytes]:
    return [lset.label_name_bytes(lp) for lp in lset.labels]


def _merge_pair(
    a: LabelSet, b: LabelSet, filt: LabelFilter | None
) -> tuple[bytearray, list[Label]]:
    """Merge two sets, B winning name clashes: the walk of labels.c's __pmMergeLabelSets.

    Both indexes are assumed sorted by name (as libpcp assumes); the walk, the
    calls to FILT and the output layout follow libpcp step for step.
    """
    out = bytearray(b"{")
    records: list[Label] = []
    anames, bnames = _names_of(a), _names_of(b)
    na, nb = len(anames), len(bnames)

    def stash(lset: LabelSet, lp: Label, name: bytes) -> None:
        if filt is not None and not filt(lp, lset.json):
            return
        value = lset.json[lp.value : lp.value + lp.valuelen] if lp.valuelen else b"null"
        pos = len(out)
        out.extend(b'"%s":%s,' % (name, value))
        records.append(Label(pos + 1, len(name), lp.flags, pos + 3 + len(name), len(value)))

    i = j = 0
    while i < na or j < nb:
        if i < na and (j >= nb or anames[i] < bnames[j]):
            if j and anames[i] == bnames[j - 1]:
                i += 1  # same name as the B label just taken: B wins
            else:
                stash(a, a.labels[i], anames[i])
                i += 1
        if j < nb and (i >= na or anames[i] >= bnames[j]):
            stash(b, b.labels[j], bnames[j])
            j += 1
    if records:
        out[-1:] = b"}"
    else:
        out += b"}"  # (libpcp overwrites the "{" here and returns "}" alone)
    if len(out) > MAXMERGEDJSONTEXT:
        raise _e2big(f"merged labels need {len(out)} bytes, limit {MAXMERGEDJSONTEXT}")
    return out, records


def pmMergeLabelSets(
    sets: Sequence[LabelSet | None], filter: LabelFilter | None = None
) -> LabelSet:
    """Merge SETS (lowest precedence first) into one flattened, name-sorted set.

    Later sets win name clashes and keep their flags; nested names become "a.b";
    FILTER(label, json) may veto labels (it is asked again for carried-over labels
    at every step, as in libpcp).  Sets that are None or carry an error are
    skipped; if all are, the result has empty json (libpcp writes nothing).
    """
    if not sets:
        raise _einval("pmMergeLabelSets needs at least one label set")
    acc: LabelSet | None = None
    for lset in sets:
        if lset is None or lset.nlabels < 0:
            continue
        out, records = _merge_pair(acc or LabelSet(), lset, filter)
        acc = LabelSet(PM_IN_NULL, len(records), bytes(out), tuple(records))
    return acc if acc is not None else LabelSet()


def pmMergeLabels(sets: Sequence[str | bytes]) -> str:
    """Merge label JSON strings (lowest precedence first) into one JSONB string.

    Dotted names are accepted in the input; nested maps are flattened to dotted
    names.  Returns "" when every input is empty ("", "{}"), as libpcp does.
    """
    if not sets:
        raise _einval("pmMergeLabels needs at least one label string")
    parsed = [LabelSet.from_json(text, PM_LABEL_COMPOUND, maxlabels=MAXLABELSET) for text in sets]
    if all(p.nlabels == 0 for p in parsed):
        return ""
    return pmMergeLabelSets(parsed).json.decode("utf-8")


def add_labels(lset: LabelSet | None, text: str | bytes, flags: int = 0) -> LabelSet:
    """Parse TEXT and merge it over LSET, the new labels winning (__pmAddLabels).

    With no LSET the parsed set is returned as is (nested maps stay nested);
    otherwise the result is flattened like pmMergeLabelSets and keeps LSET's inst.
    """
    parsed = LabelSet.from_json(text, flags, maxlabels=PM_MAXLABELS)
    if lset is None:
        return parsed
    out, records = _merge_pair(lset, parsed, None)
    return LabelSet(lset.inst, len(records), bytes(out), tuple(records))


def pmdaAddLabels(lset: LabelSet | None, text: str | bytes) -> LabelSet:
    """Add intrinsic labels from TEXT to LSET, as a PMDA's label callback does."""
    return add_labels(lset, text, 0)


def pmdaAddNotes(lset: LabelSet | None, text: str | bytes) -> LabelSet:
    """Add optional labels (notes) from TEXT to LSET."""
    return add_labels(lset, text, PM_LABEL_OPTIONAL)


def pmdaAddLabelFlags(lset: LabelSet | None, flags: int) -> LabelSet | None:
    """OR FLAGS (the hierarchy level of the request) into every label of LSET."""
    return None if lset is None else lset.add_flags(flags)


def domain_labels(agent: str, domain: int | None = None) -> LabelSet:
    """The default domain set {"agent":NAME}, flagged PM_LABEL_DOMAIN (__pmGetDomainLabels).

    A leading "pmda" and trailing " DSO" are stripped from AGENT, as pmcd does.
    """
    del domain  # libpcp ignores it too
    name = agent
    if name.startswith("pmda") and len(name) > 4:
        name = name[4:]
    if len(name) > 4 and name.endswith(" DSO"):
        name = name[:-4]
    text = '{"agent":"' + name + '"}'  # unescaped, as libpcp formats it
    return LabelSet.from_json(text, PM_LABEL_DOMAIN, maxlabels=MAXLABELSET)


# -- text helpers -------------------------------------------------------------------


def pmLabelTypeString(flags: int) -> str:
    """The hierarchy level's name: "context", "domain", "indom", "cluster", "pmid", "instances".

    "?" for anything else; the compound/optional bits are ignored (__pmLabelTypeString).
    """
    return _TYPE_STRINGS.get(flags & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL), "?")


def pmLabelFlagString(flags: int) -> str:
    """Type string plus ",compound" / ",optional" as flagged (__pmLabelFlagString)."""
    text = pmLabelTypeString(flags)
    if flags & PM_LABEL_COMPOUND:
        text += ",compound"
    if flags & PM_LABEL_OPTIONAL:
        text += ",optional"
    return text


def pmLabelIdentString(ident: int, type: int) -> str:
    """ "Domain 60", "InDom 60.1", "Cluster 60.0", "PMID 60.0.1" or "Context" for a request.

    The text pmPrintLabelSets starts each line with (__pmLabelIdentString).
    """
    kind = type & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
    if kind == PM_LABEL_DOMAIN:
        return f"Domain {ident & 0xFFFFFFFF}"
    if kind in (PM_LABEL_INDOM, PM_LABEL_INSTANCES):
        return f"InDom {pmInDomStr(ident)}"
    if kind == PM_LABEL_CLUSTER:
        return f"Cluster {pmIDStr(ident).rsplit('.', 1)[0]}"
    if kind == PM_LABEL_ITEM:
        return f"PMID {pmIDStr(ident)}"
    if kind == PM_LABEL_CONTEXT:
        return "Context"
    return ""


def pmPrintLabelSets(ident: int, type: int, sets: Iterable[LabelSet]) -> str:
    """The text pmPrintLabelSets writes for SETS (one line per set, one per label)."""
    idstr = pmLabelIdentString(ident, type)
    lines = []
    for lset in sets:
        text = lset.json.decode("utf-8", "replace") if lset.json else "(null)"
        if type & PM_LABEL_INSTANCES:
            head = f"    {idstr}[{lset.inst}] labels ({lset.jsonlen} bytes): {text}"
        else:
            head = f"    {idstr} labels ({lset.jsonlen} bytes): {text}"
        lines.append(head)
        for i, lp in enumerate(lset.labels):
            lines.append(
                f"        [{i}] name({lp.name},{lp.namelen}) : "
                f"value({lp.value},{lp.valuelen}) [{pmLabelFlagString(lp.flags)}]"
            )
    return "".join(line + "\n" for line in lines)


__all__ = [
    "MAXLABELJSONTEXT",
    "MAXLABELNAMELEN",
    "MAXLABELSET",
    "MAXMERGEDJSONTEXT",
    "MAX_LABEL_DEPTH",
    "PM_LABEL_CLUSTER",
    "PM_LABEL_COMPOUND",
    "PM_LABEL_CONTEXT",
    "PM_LABEL_DOMAIN",
    "PM_LABEL_INDOM",
    "PM_LABEL_INSTANCES",
    "PM_LABEL_ITEM",
    "PM_LABEL_OPTIONAL",
    "PM_MAXLABELJSONLEN",
    "PM_MAXLABELS",
    "Label",
    "LabelFilter",
    "LabelFlag",
    "LabelSet",
    "add_labels",
    "domain_labels",
    "pmLabelFlagString",
    "pmLabelIdentString",
    "pmLabelTypeString",
    "pmMergeLabelSets",
    "pmMergeLabels",
    "pmPrintLabelSets",
    "pmdaAddLabelFlags",
    "pmdaAddLabels",
    "pmdaAddNotes",
]


# -- a host's context labels (pmcd's GetContextLabels, libpcp's local_context_labels) --------


def context_labels(
    sysconf_dir: str | None,
    hostname: str,
    *,
    creds: tuple[int, int] | None = None,
    container: str | None = None,
    machine_id_file: str = "/etc/machine-id",
) -> LabelSet:
    """The context label set pmcd answers with, read afresh as pmcd does for each request.

    The files of SYSCONF_DIR/labels (name order; unparsable ones ignored), then those
    of labels/optional as notes, then hostname, [container], domainname and machineid
    (hashed as labels.conf's machineid_hash says) over them, then, for a client whose
    credentials CREDS (uid, gid) are known, optional groupid and userid.  No
    SYSCONF_DIR: no files, and the machine id unhashed.
    """
    return host_labels(
        label_files(sysconf_dir),
        sysconf_dir,
        hostname,
        creds=creds,
        container=container,
        machine_id_file=machine_id_file,
    )


def label_files(sysconf_dir: str | None) -> LabelSet | None:
    """The labels of the files of SYSCONF_DIR/labels, then labels/optional's as notes,
    merged in name order (__pmGetContextLabels); None when there are none."""
    import os

    lset: LabelSet | None = None
    if sysconf_dir is None:
        return None
    flags = PM_LABEL_CONTEXT | PM_LABEL_COMPOUND
    for folder, extra in (("labels", 0), (os.path.join("labels", "optional"), PM_LABEL_OPTIONAL)):
        for text in _label_files(os.path.join(sysconf_dir, folder)):
            try:
                lset = add_labels(lset, text, flags | extra)
            except PMError:
                continue  # (pmcd ignores a file it cannot parse)
    return lset


def host_labels(
    lset: LabelSet | None,
    sysconf_dir: str | None,
    hostname: str,
    *,
    creds: tuple[int, int] | None = None,
    container: str | None = None,
    machine_id_file: str = "/etc/machine-id",
) -> LabelSet:
    """LSET (label_files') with the host's labels over it, and the client's (CREDS,
    CONTAINER) as pmcd's GetContextLabels adds them."""
    host = {"hostname": hostname}
    if container is not None:
        host["container"] = container
    host["domainname"] = _domain_name()
    name, value = machine_id_label(sysconf_dir, machine_id_file)
    host[name] = value
    lset = add_labels(lset, _json.dumps(host, separators=(",", ":")), PM_LABEL_CONTEXT)
    if creds is not None:
        user = f'{{"groupid":{creds[1]},"userid":{creds[0]}}}'
        lset = add_labels(lset, user, PM_LABEL_CONTEXT | PM_LABEL_OPTIONAL)
    return lset


def _label_files(folder: str) -> Iterator[bytes]:
    """The text of each file in FOLDER but dot files, in name order, as scandir(alphasort)."""
    import os

    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if name.startswith("."):
            continue
        try:
            with open(os.path.join(folder, name), "rb") as f:
                yield f.read(PM_MAXLABELJSONLEN - 1)
        except OSError:
            yield b""


def _domain_name() -> str:
    """getdomainname(), or "localdomain" when there is none."""
    try:
        with open("/proc/sys/kernel/domainname", encoding="utf-8") as f:
            name = f.read().strip()
    except OSError:
        name = ""
    return name if name and name != "(none)" else "localdomain"


def machine_id_label(
    sysconf_dir: str | None, machine_id_file: str = "/etc/machine-id"
) -> tuple[str, str]:
    """("machineid", ID), or ("machineid_sha256", its SHA-256 in hex) when labels.conf's
    [global] machineid_hash is sha256 (__pmGetLabelConfigMachineID)."""
    import hashlib
    import os

    try:
        with open(machine_id_file, encoding="utf-8", errors="replace") as f:
            machine_id = f.readline().strip() or "localmachine"
    except OSError:
        machine_id = "localmachine"
    if sysconf_dir and _machineid_hash(os.path.join(sysconf_dir, "labels.conf")) == "sha256":
        return "machineid_sha256", hashlib.sha256(machine_id.encode()).hexdigest()
    return "machineid", machine_id


def _machineid_hash(path: str) -> str:
    """The machineid_hash setting of labels.conf's global section ("" if none)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return ""
    for line in lines:
        text = line.lstrip()
        if not text or text.startswith(("#", "[global]")):
            continue
        if text.startswith("["):
            break
        if text.startswith("machineid_hash"):
            value = text[15:].lstrip(" \t\n:=")
            return "sha256" if value.startswith("sha256") else ""
    return ""
