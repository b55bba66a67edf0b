"""The Performance Metrics Name Space: PCP's ASCII format (pmns(5)) and the queries on it.

A namespace file is a list of blocks ``path { child [PMID] ... }``; a child
with a PMID is a leaf, one without is defined by its own block, and the
``root`` block is the top.  PMIDs are written DOMAIN:CLUSTER:ITEM, or DOMAIN:*:*
for the root of a dynamic subtree whose names the agent for DOMAIN enumerates.
Loading follows libpcp's pmns.c (its lexer, two passes and error messages);
the queries follow pmLookupName, pmNameAll, pmGetChildrenStatus and
pmTraversePMNS on a local namespace.

Differences from libpcp, all on input it mishandles: a block left open at end
of input is still checked for duplicate names; lines may exceed 255 bytes;
numbers too big for a C int are refused instead of wrapping; a block with no
children gives PM_ERR_NAME on lookup (libpcp answers PM_ID_NULL) and is
written back as an empty block (pmnsmerge writes an unloadable PMID).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from purepcp.pmapi.cpp import (
    Reader,
    SourceLine,
    preprocess,
    preprocess_file,
    read_file,
    read_source,
    split_lines,
)
from purepcp.pmapi.errors import (
    PM_ERR_NAME,
    PM_ERR_NONLEAF,
    PM_ERR_PMID,
    PM_ERR_PMNS,
    PMError,
    SourceError,
)
from purepcp.pmapi.ids import (
    dynamic_root,
    is_dynamic_root,
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmID_item,
    pmIDStr,
)

#: Where PCP keeps its namespace files; the default include directory for them.
PCP_PMNS_DIR = "/var/lib/pcp/pmns"

#: pmGetChildrenStatus codes.
PMNS_LEAF_STATUS = 0
PMNS_NONLEAF_STATUS = 1

_DOMAIN_MAX = 510  # 511 (DYNAMIC_PMID) is reserved
_CLUSTER_MAX = 4095
_ITEM_MAX = 1023

_WS = " \t\n\v\f\r"
_COLON_SPACE = re.compile(r"[ \t\n\v\f\r]*:[ \t\n\v\f\r]*")
_SPLIT = re.compile(r"[ \t\n\v\f\r]+")
_NAME_OR_PATH = re.compile(r"[A-Za-z][A-Za-z0-9_.]*\Z")
_PMID_CHARS = re.compile(r"[0-9*:]+\Z")
_PMID3 = re.compile(r"([0-9]+):([0-9]+):([0-9]+)")
_LEADING_INT = re.compile(r"[0-9]+")
_LINEMARKER = re.compile(r'#[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t\n\v\f\r]*"([^ \t\n\v\f\r]+)')
_COMPONENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

# Token kinds, as pmns.c's lexer names them.
_NAME, _PATH, _PMID, _LBRACE, _RBRACE, _BOGUS = range(6)


@dataclass(frozen=True, slots=True)
class DynamicRoot:
    """The root of a dynamic subtree: its PMNS name and the domain of the agent that owns it."""

    name: str
    domain: int

    @property
    def pmid(self) -> int:
        """The special PMID PCP gives the root (domain DYNAMIC_PMID, cluster = DOMAIN)."""
        return dynamic_root(self.domain)


class _Node:
    """A PMNS node: a leaf has a pmid and no children; a non-leaf has children (maybe none)."""

    __slots__ = ("children", "name", "parent", "path", "pmid")

    def __init__(self, name: str, path: str, parent: _Node | None, pmid: int | None) -> None:
        self.name = name
        self.path = path
        self.parent = parent
        self.pmid = pmid
        self.children: dict[str, _Node] | None = None if pmid is not None else {}


# -- lexing ------------------------------------------------------------------


def _int(digits: str) -> int:
    """A field's value; anything too long for a C int is simply too big (PCP would wrap)."""
    return int(digits) if len(digits) <= 10 else 1 << 40


def _classify(tok: str) -> tuple[int, int, str | None]:
    """(kind, pmid, error) for one token, as pmns.c's lex(); error is the lexer's message."""
    if tok == "{":
        return _LBRACE, 0, None
    if tok == "}":
        return _RBRACE, 0, None
    if _NAME_OR_PATH.match(tok):
        return (_PATH if "." in tok else _NAME), 0, None
    if not _PMID_CHARS.match(tok) or tok.count(":") > 3:
        return _BOGUS, 0, None
    m = _PMID3.match(tok)  # like sscanf("%d:%d:%d"): trailing text is ignored
    if m:
        d, c, i = (_int(g) for g in m.groups())
        if d > _DOMAIN_MAX:
            return _BOGUS, 0, "Illegal domain field in PMID"
        if c > _CLUSTER_MAX:
            return _BOGUS, 0, "Illegal cluster field in PMID"
        if i > _ITEM_MAX:
            return _BOGUS, 0, "Illegal item field in PMID"
        return _PMID, pmID_build(d, c, i), None
    colon = tok.find(":")
    if colon >= 0 and tok[colon + 1 :] != "*:*":
        return _BOGUS, 0, "Illegal PMID"
    m = _LEADING_INT.match(tok)  # so "N:*:*", and also a bare "N", is a dynamic root
    if m is None:
        return _BOGUS, 0, "Illegal PMID"
    d = _int(m.group())
    if d > _DOMAIN_MAX:
        return _BOGUS, 0, "Illegal domain field in dynamic PMID"
    return _PMID, dynamic_root(d), None


def _tokens(lines: Iterable[SourceLine]) -> Iterator[tuple[str, str, int]]:
    """(token, file, line) for every token; honours `# N "file"` line markers like pmns.c."""
    marker: tuple[str, int, str, int] | None = None  # (in file, at line, new file, new line)
    for src in lines:
        text = src.text
        if ":" in text:
            text = _COLON_SPACE.sub(":", text)
        text = text.strip(_WS)
        if not text:
            continue
        file, line = src.file, src.line
        if text[0] == "#":
            m = _LINEMARKER.match(text)
            if m is None or len(m.group(1)) > 10:
                raise SourceError(PM_ERR_PMNS, "Illegal line number control number", file, line)
            marker = (file, line, m.group(2)[:-1], int(m.group(1)))
            continue
        if marker is not None and marker[0] == file and line > marker[1]:
            line, file = marker[3] + line - marker[1] - 1, marker[2]
        for tok in _SPLIT.split(text):
            yield tok, file, line


# -- parsing (pmns.c's loadascii, pass2 and attach) -----------------------------------


@dataclass(slots=True)
class _Child:
    name: str
    pmid: int | None
    file: str
    line: int


@dataclass(slots=True)
class _Block:
    path: str
    file: str
    line: int
    children: list[_Child]


_STATE_ERRORS = ("Expected NAME or PATH", "{ expected", "Expected NAME or }")


def _check_unique(block: _Block) -> None:
    seen: set[str] = set()
    for child in block.children:
        if child.name in seen:
            raise SourceError(
                PM_ERR_PMNS,
                f'Duplicate name "{child.name}" in subtree for "{block.path}"',
                child.file,
                child.line,
            )
        seen.add(child.name)


def _read_blocks(lines: Iterable[SourceLine]) -> list[_Block]:
    """Pass 1: the blocks in input order, checked token by token."""
    blocks: list[_Block] = []
    block: _Block | None = None
    state = 0
    for tok, file, line in _tokens(lines):
        kind, pmid, lex_error = _classify(tok)
        if lex_error is not None:
            raise SourceError(PM_ERR_PMNS, lex_error, file, line)
        if state == 0:
            if kind not in (_NAME, _PATH):
                raise SourceError(PM_ERR_PMNS, _STATE_ERRORS[0], file, line)
            block = _Block(tok, file, line, [])
            blocks.append(block)
            state = 1
        elif state == 1:
            if kind != _LBRACE:
                raise SourceError(PM_ERR_PMNS, _STATE_ERRORS[1], file, line)
            state = 2
        else:
            assert block is not None
            if kind == _NAME:
                block.children.append(_Child(tok, None, file, line))
                state = 3
            elif kind == _RBRACE:
                _check_unique(block)
                state = 0
            elif state == 3 and kind == _PMID:
                block.children[-1].pmid = pmid
                state = 2
            else:
                what = _STATE_ERRORS[2] if state == 2 else "Expected NAME, PMID or }"
                raise SourceError(PM_ERR_PMNS, what, file, line)
    if state != 0 and block is not None:
        _check_unique(block)  # libpcp silently accepts a block left open at EOF
    return blocks


def _build(pmns: PMNS, blocks: list[_Block], file: str | None, dupok: bool) -> None:
    """Pass 2: attach the blocks below "root"; check for strays and duplicate PMIDs."""
    roots = [b for b in blocks if b.path == "root"]
    if not roots:
        raise SourceError(PM_ERR_PMNS, 'No name space entry for "root"', file)
    if len(roots) > 1:
        raise SourceError(
            PM_ERR_PMNS, 'Multiple name space entries for "root"', roots[1].file, roots[1].line
        )
    # Like libpcp, a path defined twice uses its last definition; the others are strays.
    by_path = {b.path: b for b in blocks}
    used: set[int] = {id(roots[0])}
    first_name: dict[int, str] = {}
    stack: list[tuple[_Node, Iterator[_Child]]] = [(pmns._root, iter(roots[0].children))]
    while stack:
        parent, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        path = f"{parent.path}.{child.name}" if parent.path else child.name
        node = _Node(child.name, path, parent, child.pmid)
        assert parent.children is not None
        parent.children[child.name] = node
        pmns._names[path] = node
        if child.pmid is not None:
            if not dupok and not is_dynamic_root(child.pmid):
                other = first_name.setdefault(child.pmid, path)
                if other != path:
                    raise SourceError(
                        PM_ERR_PMNS,
                        f"Duplicate metric id ({pmIDStr(child.pmid)}) in name space "
                        f'for metrics "{path}" and "{other}"',
                        child.file,
                        child.line,
                    )
            continue
        sub = by_path.get(path)
        if sub is None or id(sub) in used:  # a block attaches once (a child "root" can't)
            raise SourceError(
                PM_ERR_PMNS,
                f'Cannot find definition for non-terminal node "{path}" in name space',
                child.file,
                child.line,
            )
        used.add(id(sub))
        stack.append((node, iter(sub.children)))
    for b in blocks:
        if id(b) not in used:
            raise SourceError(
                PM_ERR_PMNS, f'Disconnected subtree ("{b.path}") in name space', b.file, b.line
            )


def _writable(pmid: int) -> bool:
    """Whether PMID can be written in a namespace file (D:C:I or D:*:*)."""
    if not 0 <= pmid < 1 << 31:
        return False
    if is_dynamic_root(pmid):
        return pmID_cluster(pmid) <= _DOMAIN_MAX
    return pmID_domain(pmid) <= _DOMAIN_MAX


def _status(node: _Node) -> int:
    """pmGetChildrenStatus's status: dynamic roots are non-leaves, childless blocks leaves."""
    if node.pmid is None:
        return PMNS_NONLEAF_STATUS if node.children else PMNS_LEAF_STATUS
    return PMNS_NONLEAF_STATUS if is_dynamic_root(node.pmid) else PMNS_LEAF_STATUS


# -- the namespace -------------------------------------------------------------


class PMNS:
    """A loaded namespace: name <-> PMID lookups, children, traversal, edits, and output.

    Names keep their input order, which is the order pmTraversePMNS (and so
    pminfo) reports them in.  A dynamic subtree root is a leaf whose PMID
    satisfies ids.is_dynamic_root(); its subtree is known only to its agent.
    """

    def __init__(self) -> None:
        """An empty namespace: just the root, as __pmNewPMNS makes."""
        self._root = _Node("root", "", None, None)
        self._names: dict[str, _Node] = {}
        self._by_pmid: dict[int, list[str]] | None = None

    # -- loading --------------------------------------------------------------

    @classmethod
    def from_lines(
        cls, lines: Iterable[SourceLine], *, dupok: bool = True, file: str | None = None
    ) -> PMNS:
        """Parse already-preprocessed lines (FILE names the input for errors with no line).

        DUPOK allows several names for one PMID (PCP's default, `-n`); False is `-N`.
        """
        pmns = cls()
        _build(pmns, _read_blocks(lines), file, dupok)
        return pmns

    @classmethod
    def from_string(
        cls,
        text: str,
        *,
        file: str = "<string>",
        dupok: bool = True,
        cpp: bool = True,
        macros: Mapping[str, object] | None = None,
        include_dirs: Iterable[str] = (),
        reader: Reader = read_source,
    ) -> PMNS:
        """Parse namespace TEXT, preprocessed as pmcpp would unless CPP is false.

        FILE names the text in errors; includes are searched in INCLUDE_DIRS only.
        """
        if cpp:
            lines = preprocess(text, file, macros=macros, include_dirs=include_dirs, reader=reader)
        else:
            lines = [SourceLine(file, n, t) for n, t in enumerate(split_lines(text), 1)]
        return cls.from_lines(lines, dupok=dupok, file=file)

    @classmethod
    def from_file(
        cls,
        path: str,
        *,
        dupok: bool = True,
        cpp: bool = True,
        macros: Mapping[str, object] | None = None,
        include_dirs: Iterable[str] = (PCP_PMNS_DIR,),
        reader: Reader = read_source,
    ) -> PMNS:
        """Load the namespace file PATH, like pmLoadASCIINameSpace(PATH, DUPOK).

        With CPP (the default) the file goes through pmcpp's preprocessing, with
        MACROS predefined and includes searched in PATH's directory and then
        INCLUDE_DIRS (PCP's pmns directory by default); without it the file is
        read as it is, as libpcp does for its default namespace.
        """
        if cpp:
            lines = preprocess_file(path, macros=macros, include_dirs=include_dirs, reader=reader)
            return cls.from_lines(lines, dupok=dupok, file=path)
        return cls.from_string(read_file(path, reader), file=path, dupok=dupok, cpp=False)

    # -- queries --------------------------------------------------------------

    def _locate(self, name: str) -> _Node:
        node = self._root if name == "" else self._names.get(name)
        if node is None:
            raise PMError(PM_ERR_NAME, name)
        return node

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __len__(self) -> int:
        """The number of names with a PMID (leaves, dynamic roots included)."""
        return sum(1 for n in self._names.values() if n.pmid is not None)

    def lookup(self, name: str) -> int:
        """The PMID for NAME, as pmLookupName on a local namespace.

        A leaf gives its PMID.  A dynamic subtree root, or any name below one,
        gives the root's special PMID (is_dynamic_root() is true and
        pmID_cluster() is the owning domain): pmcd's cue to ask that agent.
        PMError(PM_ERR_NONLEAF) for a non-leaf, PMError(PM_ERR_NAME) otherwise
        (also for a block with no children, which libpcp maps to PM_ID_NULL).
        """
        node = self._names.get(name)
        if node is not None:
            if node.pmid is not None:
                return node.pmid
            if node.children:
                raise PMError(PM_ERR_NONLEAF, name)
            raise PMError(PM_ERR_NAME, name)
        root = self.find_dynamic_root(name)
        if root is None:
            raise PMError(PM_ERR_NAME, name)
        return root.pmid

    def find_dynamic_root(self, name: str) -> DynamicRoot | None:
        """The dynamic subtree root NAME is, or lies below, if any."""
        prefix = name
        while True:
            node = self._names.get(prefix)
            if node is not None:  # the first existing prefix decides: above it are non-leaves
                if node.pmid is not None and is_dynamic_root(node.pmid):
                    return DynamicRoot(node.path, pmID_cluster(node.pmid))
                return None
            cut = prefix.rfind(".")
            if cut < 0:
                return None
            prefix = prefix[:cut]

    def children(self, name: str = "") -> list[tuple[str, int]]:
        """(child, status) pairs for NAME ("" is the root), as pmGetChildrenStatus.

        Status is PMNS_LEAF_STATUS or PMNS_NONLEAF_STATUS; a dynamic subtree
        root counts as non-leaf.  A leaf (a dynamic root too) has no children:
        []. PMError(PM_ERR_NAME) for an unknown name, or one below a dynamic root.
        """
        node = self._locate(name)
        if not node.children:
            return []
        return [(child.name, _status(child)) for child in node.children.values()]

    def traverse(self, name: str = "") -> list[str]:
        """Every leaf name at or below NAME, depth first in namespace order, as pmTraversePMNS.

        Dynamic subtree roots are listed as they are (their agent knows the
        rest).  PMError(PM_ERR_NAME) for an unknown name.
        """
        return [node.path for node in self._walk(self._locate(name))]

    def items(self, name: str = "") -> list[tuple[str, int]]:
        """(name, PMID) for every name with a PMID at or below NAME, in traverse() order."""
        nodes = self._walk(self._locate(name))
        return [(node.path, node.pmid) for node in nodes if node.pmid is not None]

    def _walk(self, top: _Node) -> Iterator[_Node]:
        """The leaves at or below TOP (a block with no children counts), depth first."""
        if not top.children:
            if top is not self._root:
                yield top
            return
        stack = [iter(top.children.values())]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
            elif node.children:
                stack.append(iter(node.children.values()))
            else:
                yield node

    def names(self, pmid: int) -> list[str]:
        """Every name for PMID, as pmNameAll: the last in traverse() order comes first.

        PMError(PM_ERR_PMID) for an unknown PMID or a dynamic-root PMID.
        """
        if self._by_pmid is None:
            index: dict[int, list[str]] = {}
            for node in self._walk(self._root):
                if node.pmid is not None and not is_dynamic_root(node.pmid):
                    index.setdefault(node.pmid, []).append(node.path)
            for found in index.values():
                found.reverse()
            self._by_pmid = index
        found = self._by_pmid.get(pmid)
        if not found:
            raise PMError(PM_ERR_PMID, pmIDStr(pmid))
        return list(found)

    def name(self, pmid: int) -> str:
        """One name for PMID, as pmNameID (the first of names())."""
        return self.names(pmid)[0]

    # -- edits ------------------------------------------------------------------

    def add(self, name: str, pmid: int, *, at_front: bool = False, checked: bool = True) -> None:
        """Add leaf NAME with PMID, creating non-leaf nodes as needed.

        New nodes go after their siblings, as pmnsmerge adds them; AT_FRONT puts
        them first, as __pmAddPMNSNode does.  Adding an existing leaf with the
        same PMID does nothing.  PMError(PM_ERR_PMID) if NAME exists with another
        PMID, is a non-leaf, or runs below a leaf, or if PMID cannot be written
        in a namespace; PMError(PM_ERR_NAME) if NAME is not a valid PMNS name.
        CHECKED=False takes any name and PMID, as an archive's namespace does
        (libpcp adds whatever names an archive's metadata holds: a derived
        metric's PMID, components that are numbers).
        """
        parts = name.split(".")
        if checked and not all(_COMPONENT.match(p) for p in parts):
            raise PMError(PM_ERR_NAME, f"not a valid PMNS name: {name!r}")
        if checked and not _writable(pmid):
            raise PMError(PM_ERR_PMID, f"{pmid:#x} cannot be written in a namespace")
        node = self._root
        for depth, part in enumerate(parts):
            if node.children is None:
                raise PMError(PM_ERR_PMID, f"{node.path} is a leaf, cannot add {name} below it")
            child = node.children.get(part)
            if child is None:
                leaf = depth == len(parts) - 1
                path = ".".join(parts[: depth + 1])
                child = _Node(part, path, node, pmid if leaf else None)
                if at_front:
                    node.children = {part: child, **node.children}
                else:
                    node.children[part] = child
                self._names[path] = child
                self._by_pmid = None
            node = child
        if node.pmid != pmid:
            held = "non-leaf" if node.pmid is None else pmIDStr(node.pmid)
            raise PMError(PM_ERR_PMID, f"{name} is already {held}, cannot make it {pmIDStr(pmid)}")

    def remove(self, name: str) -> None:
        """Remove NAME and everything below it, then any ancestors left empty, as pmnsdel.

        PMError(PM_ERR_NAME) if NAME is not in the namespace.
        """
        node = self._names.get(name)
        if node is None:
            raise PMError(PM_ERR_NAME, name)
        while True:
            parent = node.parent
            assert parent is not None and parent.children is not None
            del parent.children[node.name]
            self._forget(node)
            if parent.children or parent is self._root:
                break
            node = parent
        self._by_pmid = None

    def _forget(self, top: _Node) -> None:
        stack = [top]
        while stack:
            node = stack.pop()
            self._names.pop(node.path, None)
            if node.children:
                stack.extend(node.children.values())

    def merge(self, other: PMNS) -> list[str]:
        """Add OTHER's names to this namespace, as pmnsmerge adds a later input file.

        Leaves are taken level by level (pmnsmerge's order, which decides where
        new non-leaf nodes land); a name already here keeps its PMID.  Returns
        the names whose PMID (or leaf/non-leaf kind) disagreed and were skipped.
        """
        conflicts: list[str] = []
        for node in other._levels():
            if node.pmid is None:
                continue
            try:
                self.add(node.path, node.pmid)
            except PMError:
                conflicts.append(node.path)
        return conflicts

    def _levels(self) -> Iterator[_Node]:
        """Nodes in pmnsmerge's order: a node's children, then each non-leaf child's subtree."""
        stack = [iter([self._root])]
        while stack:
            parent = next(stack[-1], None)
            if parent is None:
                stack.pop()
                continue
            if parent.children:
                yield from parent.children.values()
                stack.append(iter([c for c in parent.children.values() if c.children]))

    # -- output -------------------------------------------------------------------

    def dumps(self) -> str:
        """The namespace in pmns(5) format, laid out as pmnsmerge writes it."""
        out: list[str] = []
        for node in self._blocks():
            out.append("root {\n" if node is self._root else f"\n{node.path} {{\n")
            assert node.children is not None
            for child in node.children.values():
                pmid = child.pmid
                if pmid is None:
                    out.append(f"\t{child.name}\n")
                elif is_dynamic_root(pmid):
                    out.append(f"\t{child.name}\t{pmID_cluster(pmid)}:*:*\n")
                else:
                    d, c, i = pmID_domain(pmid), pmID_cluster(pmid), pmID_item(pmid)
                    out.append(f"\t{child.name}\t{d}:{c}:{i}\n")
            out.append("}\n")
        return "".join(out)

    def _blocks(self) -> Iterator[_Node]:
        """Non-leaf nodes in block order: a node, then each non-leaf child's blocks in turn."""
        stack = [iter([self._root])]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            yield node
            assert node.children is not None
            stack.append(iter([c for c in node.children.values() if c.pmid is None]))
