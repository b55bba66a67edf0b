"""PCP pmlogger's name cache (pass0.c), for its -D appl6 trace.

Before it parses its configuration PCP's pmlogger scans the text (after pmcpp) for the
names inside braces, keeps them in a hash table keyed by a fold of each name, asks
pmcd for all their PMIDs and descriptors in one exchange, traverses the names that are
not leaves (adding what is below them) and asks again.  Parsing then looks names up in
the cache first.  We resolve names our own way; this replays the cache so that -D appl6
prints what PCP's prints: each name the scan finds, the cache in its hash table's
order, and each lookup's outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_NAME, PMError
from purepcp.pmapi.ids import PM_ID_NULL, pmIDStr, pmInDomStr

if TYPE_CHECKING:
    from purepcp.pmapi.context import Context

#: an entry's state: not (yet) known as a leaf, being traversed (pass1), a leaf
UNKNOWN, TRAVERSE, LEAF = 0, 1, 2
_STATE_NAMES = ("U", "T", "L")


def fold_string(name: str) -> int:
    """pass0.c's fold_string: the name's bytes XORed into 4 bytes, as a little-endian key."""
    work = bytearray(4)
    for i, byte in enumerate(name.encode(errors="surrogateescape")):
        work[i % 4] ^= byte
    return int.from_bytes(work, "little")


@dataclass(eq=False)
class _Entry:
    name: str
    state: int = UNKNOWN
    pmid: int = PM_ID_NULL
    desc_pmid: int = PM_ID_NULL  # (PM_ID_NULL: no descriptor)
    indom: int = 0


@dataclass(eq=False)
class _Node:
    """A hash node: its key and its chain of entries (synonyms, the newest first)."""

    key: int
    entries: list[_Entry] = field(default_factory=list)


class _Hash:
    """libpcp's __pmHashCtl: chains in buckets, new nodes at a chain's head, the table
    grown (and its chains relinked, last bucket first) when it holds 4 nodes a bucket."""

    def __init__(self) -> None:
        self.buckets: list[list[_Node]] = []
        self.nodes = 0

    def search(self, key: int) -> _Node | None:
        if not self.buckets:
            return None
        return next((n for n in self.buckets[key % len(self.buckets)] if n.key == key), None)

    def add(self, node: _Node) -> None:
        self.nodes += 1
        if not self.buckets:
            self.buckets = [[]]
        elif self.nodes // 4 > len(self.buckets):
            size = len(self.buckets) * 2
            size += 1 if size % 2 else 0
            size += 2 if size % 3 else 0
            size += 2 if size % 5 else 0
            old, self.buckets = self.buckets, [[] for _ in range(size)]
            for chain in reversed(old):
                for moved in chain:
                    self.buckets[moved.key % size].insert(0, moved)
        self.buckets[node.key % len(self.buckets)].insert(0, node)

    def walk(self) -> list[_Entry]:
        return [e for chain in self.buckets for node in chain for e in node.entries]

    def chains(self) -> list[list[_Entry]]:
        return [node.entries for chain in self.buckets for node in chain]


class NameCache:
    """The cache PCP's pmlogger builds from its configuration, and its trace lines."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.table = _Hash()
        self.added = self.duplicates = self.synonyms = 0
        self.trace: list[str] = []

    def build(self, text: str) -> None:
        """pass0 over TEXT (the configuration after pmcpp), then the metadata and pass1."""
        for line, name in scan_names(text):
            self.trace.append(f'pass0:{line} name="{name}"\n')
            self.add(name)
        self._bind()
        self._pass1()

    def add(self, name: str) -> None:
        """cache_add."""
        key = fold_string(name)
        node = self.table.search(key)
        if node is not None:
            if any(e.name == name for e in node.entries):
                self.duplicates += 1
                return
            self.synonyms += 1
            node.entries.insert(0, _Entry(name))
        else:
            self.table.add(_Node(key, [_Entry(name)]))
        self.added += 1

    def _bind(self) -> None:
        """cache_bind: PMIDs and descriptors for the entries still unknown, in one go."""
        todo = [e for e in self.table.walk() if e.state == UNKNOWN]
        if not todo:
            return
        try:
            pmids = self.ctx.lookup_names([e.name for e in todo])
        except PMError:
            return  # (as PCP's: no metadata, so everything is looked up the long way)
        known = [p for p in pmids if p != PM_ID_NULL]
        try:
            descs = dict(zip(known, self.ctx.lookup_descs(known), strict=True)) if known else {}
        except PMError:
            descs = {}
        for entry, pmid in zip(todo, pmids, strict=True):
            entry.pmid = pmid
            desc = descs.get(pmid)
            if desc is not None:
                entry.desc_pmid, entry.indom = desc.pmid, desc.indom
            if pmid != PM_ID_NULL:
                entry.state = LEAF

    def _pass1(self) -> None:
        """pass1: the names that are not leaves traversed, what is below them added."""
        for entry in self.table.walk():
            if entry.state == UNKNOWN:
                entry.state = TRAVERSE
        for entry in self.table.walk():
            if entry.state != TRAVERSE:
                continue
            try:
                found = self.ctx.traverse(entry.name)
            except PMError as exc:
                if exc.code != PM_ERR_NAME:
                    self.trace.append(f"pass1: traverse({entry.name}, ...): {exc.message}\n")
                continue
            for name in found:
                self.add(name)
        self._bind()
        for entry in self.table.walk():
            if entry.state == TRAVERSE:
                entry.state = UNKNOWN

    def dump(self) -> str:
        """cache_dump: the table's chains in order, then the counts."""
        out = []
        for i, chain in enumerate(self.table.chains()):
            out.append(f"cache list[{i}]: " + " -> ".join(map(_entry_text, chain)) + "\n")
        out.append(
            f"{self.added} unique names + {self.duplicates} duplicates"
            f" ({self.synonyms} hash key synonyms)\n"
        )
        return "".join(out)

    def lookup(self, name: str) -> tuple[bool, str]:
        """cache_lookup: whether NAME is a leaf with a descriptor here, and the trace line."""
        node = self.table.search(fold_string(name))
        entry = None if node is None else next((e for e in node.entries if e.name == name), None)
        if entry is None:
            return False, f"cache_lookup({name}): not in cache\n"
        if entry.state != LEAF:
            return False, f"cache_lookup({name}): in cache, but not a valid leaf node\n"
        if entry.desc_pmid == PM_ID_NULL:
            return False, f"cache_lookup({name}): in cache, but no pmDesc\n"
        return True, f"cache_lookup({name}): success\n"


def _entry_text(entry: _Entry) -> str:
    text = f'"{entry.name}"[{_STATE_NAMES[entry.state]}] {_pmid_text(entry.pmid)}'
    if entry.state == LEAF:
        no_desc = entry.desc_pmid == PM_ID_NULL
        text += " [no pmDesc]" if no_desc else f" InDom:{pmInDomStr(entry.indom)}"
    return text


def _pmid_text(pmid: int) -> str:
    return "PM_ID_NULL" if pmid == PM_ID_NULL else pmIDStr(pmid)


def scan_names(text: str) -> list[tuple[int, str]]:
    """pass0's scanner: the names inside braces (comments, instance lists and quoted
    strings skipped), each with the line count when its end was seen."""
    state, line, name, found = "init", 1, "", []
    for c in text:
        if c == "\n":
            line += 1
        if state == "init":
            state = "init_eol" if c == "#" else "list" if c == "{" else "init"
        elif state == "init_eol":
            state = "init" if c == "\n" else state
        elif state == "list":
            if c == "#":
                state = "list_eol"
            elif c == "}":
                state = "init"
            elif c.isascii() and c.isalpha():
                state, name = "name", c
            elif c == "[":
                state = "inst"
        elif state == "list_eol":
            state = "list" if c == "\n" else state
        elif state == "name":
            if c.isascii() and (c.isalnum() or c in "_."):
                name += c
            else:
                found.append((line, name))
                state = "inst" if c == "[" else "list"
        elif state == "inst":
            state = "list" if c == "]" else "dquote" if c == '"' else state
        elif state == "dquote":
            state = "inst" if c == '"' else state
    return found
