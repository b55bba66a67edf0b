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
children is written back as an empty block (pmnsmerge writes an unloadable PMID).
As in libpcp, a non-leaf with no leaf below it is invisible to the queries.
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


# -- libpcp's diagnostics (pmns.c's err()) -------------------------------------------


class PMNSError(SourceError):
    """A namespace that would not load.  REPORT is what libpcp's loader prints
    (pmprintf) on the way: one or more "Error Parsing ASCII PMNS" messages, each
    with the offending line and a caret under the token for pass-one errors."""

    def __init__(
        self,
        code: int,
        what: str,
        file: str | None = None,
        line: int | None = None,
        report: str = "",
    ) -> None:
        super().__init__(code, what, file, line)
        self.report = report or f"Error Parsing ASCII PMNS: {what}\n"

    def __reduce__(self):
        return (type(self), (self.code, self.what, self.file, self.line, self.report))


def load_complaint(exc: PMError, path: str) -> str:
    """What libpcp prints when the namespace file PATH will not load with EXC.

    The caller follows it with its own line naming pmErrStr(exc.code).
    """
    if isinstance(exc, PMNSError):
        return exc.report
    if exc.code != PM_ERR_PMNS:  # the file would not open
        return f'Error Parsing ASCII PMNS: Cannot open "{path}"\n'
    if isinstance(exc, SourceError) and exc.file is not None:  # pmcpp's complaint, then libpcp's
        return (
            _pmcpp_complaint(exc)
            + "Error Parsing ASCII PMNS: pmcpp returned non-zero exit status\n"
        )
    return f"Error Parsing ASCII PMNS: {exc.detail or exc.message}\n"


def _pmcpp_complaint(exc: SourceError) -> str:
    """pmcpp's err(): the input line it stopped at (none at end of input), then the error."""
    where = f"pmcpp: {exc.file}:\n"
    if exc.line and not exc.what.startswith(("Comment at line", "End of input")):
        try:
            with open(str(exc.file), encoding="utf-8", errors="surrogateescape") as f:
                for number, text in enumerate(f, 1):
                    if number == exc.line:
                        where = f"pmcpp: {exc.file}[{exc.line}]: {text}"
                        break
        except OSError:
            pass
    return f"{where}pmcpp: Error: {exc.what}\n"


def _c_line(text: str) -> str:
    """TEXT as pmns.c's lexer keeps it in linebuf: leading space gone, runs of space
    cut to their first character, no space around a colon, the newline kept."""
    out: list[str] = []
    inspace = False
    for ch in text + "\n":
        if ch in _WS:
            if not inspace:
                if out and out[-1] != ":":
                    out.append(ch)
                inspace = True
        elif ch == ":":
            if inspace and out:
                out.pop()
            inspace = False
            out.append(ch)
        else:
            out.append(ch)
            inspace = False
    return "".join(out)


def _token_offset(linebuf: str, index: int) -> int:
    """Where token INDEX (0-based) of LINEBUF starts, as lex() leaves linep."""
    starts = [m.start() for m in re.finditer(r"[^ \t\n\v\f\r]+", linebuf)]
    return starts[min(index, len(starts) - 1)] if starts else 0


@dataclass(slots=True)
class _Where:
    """A token's place: its (marker-adjusted) file and line, its source line and index."""

    file: str
    line: int
    src: SourceLine
    index: int


class _Err:
    """pmns.c's err() for pass one: it prints the line and then overwrites linebuf
    with a caret under the current token, which a second message shows again."""

    def __init__(
        self, where: _Where, linebuf: str | None = None, shown: _Where | None = None
    ) -> None:
        """WHERE is the error's place; SHOWN (default WHERE) the token libpcp's lexer
        last gave, whose line number and column it reports."""
        self.where = where
        self.shown = shown or where
        self.linebuf = _c_line(where.src.text) if linebuf is None else linebuf
        self.linep = _token_offset(_c_line(self.shown.src.text), self.shown.index)
        self.text = ""
        self.whats: list[str] = []

    def __call__(self, what: str) -> _Err:
        w = self.shown
        buf = self.linebuf
        self.whats.append(what)
        self.text += f"[{w.file}:{w.line}] Error Parsing ASCII PMNS: {what}\n    {buf}"
        if not buf.endswith("\n"):
            self.text += "\n"
        head = buf[: self.linep].ljust(self.linep)
        self.linebuf = "".join(c if c in _WS else " " for c in head) + "^\n"
        self.text += "    " + self.linebuf
        return self

    def error(self) -> PMNSError:
        """The error to raise: named by the first message, reporting them all."""
        w = self.where
        return PMNSError(PM_ERR_PMNS, self.whats[0], w.file, w.line, self.text)


def _tokens(lines: Iterable[SourceLine]) -> Iterator[tuple[str, str, int, SourceLine, int]]:
    """(token, file, line, source line, index in it) for every token; honours
    `# N "file"` line markers like pmns.c."""
    marker: tuple[str, int, str, int] | None = None  # (in file, at line, new file, new line)
    last: _Where | None = None  # the last token's place (libpcp's lineno and linep)
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
                what = "Illegal line number control number"
                where = _Where(file, line, src, 0)
                if last is None:  # (no caret then: libpcp has no token yet)
                    raise PMNSError(PM_ERR_PMNS, what, file, line)
                raise _Err(where, None, last)(what).error()
            marker = (file, line, m.group(2)[:-1], int(m.group(1)))
            continue
        if marker is not None and marker[0] == file and line > marker[1]:
            line, file = marker[3] + line - marker[1] - 1, marker[2]
        index = -1
        for index, tok in enumerate(_SPLIT.split(text)):
            yield tok, file, line, src, index
        last = _Where(file, line, src, index)


# -- parsing (pmns.c's loadascii, pass2 and attach) -----------------------------------


@dataclass(slots=True)
class _Child:
    name: str
    pmid: int | None
    where: _Where


@dataclass(slots=True)
class _Block:
    path: str
    file: str
    line: int
    children: list[_Child]


_STATE_ERRORS = ("Expected NAME or PATH", "{ expected", "Expected NAME or }")


def _check_unique(block: _Block, end: _Where | None) -> None:
    """No name twice in BLOCK, checked at its closing brace END (None: at end of input)."""
    seen: set[str] = set()
    for child in block.children:
        if child.name in seen:
            what = f'Duplicate name "{child.name}" in subtree for "{block.path}"'
            if end is None:
                raise PMNSError(PM_ERR_PMNS, what, child.where.file, child.where.line)
            # (libpcp formats the message into linebuf, so err() shows it as "the line")
            report = _Err(end, what + "\n")(what + "\n").text
            raise PMNSError(PM_ERR_PMNS, what, child.where.file, child.where.line, report)
        seen.add(child.name)


def _read_blocks(lines: Iterable[SourceLine]) -> list[_Block]:
    """Pass 1: the blocks in input order, checked token by token."""
    blocks: list[_Block] = []
    block: _Block | None = None
    state = 0
    for tok, *place in _tokens(lines):
        kind, pmid, lex_error = _classify(tok)
        err = None
        if lex_error is not None:  # (the token is BOGUS: the parser complains as well)
            err = _Err(_Where(*place))(lex_error)
        if state == 0:
            if kind not in (_NAME, _PATH):
                raise _fail(place, err, _STATE_ERRORS[0])
            block = _Block(tok, place[0], place[1], [])
            blocks.append(block)
            state = 1
        elif state == 1:
            if kind != _LBRACE:
                raise _fail(place, err, _STATE_ERRORS[1])
            state = 2
        else:
            assert block is not None
            if kind == _NAME:
                block.children.append(_Child(tok, None, _Where(*place)))
                state = 3
            elif kind == _RBRACE:
                _check_unique(block, _Where(*place))
                state = 0
            elif state == 3 and kind == _PMID:
                block.children[-1].pmid = pmid
                state = 2
            else:
                what = _STATE_ERRORS[2] if state == 2 else "Expected NAME, PMID or }"
                raise _fail(place, err, what)
    if state != 0 and block is not None:
        _check_unique(block, None)  # libpcp silently accepts a block left open at EOF
    return blocks


def _fail(place: list, err: _Err | None, what: str) -> PMNSError:
    """The parser's complaint about the token at PLACE (after the lexer's, if any)."""
    return (err or _Err(_Where(*place)))(what).error()


def _build(pmns: PMNS, blocks: list[_Block], file: str | None, dupok: bool) -> None:
    """Pass 2: attach the blocks below "root"; check for strays, then for duplicate PMIDs.

    The checks and messages follow pmns.c's pass2(), attach() and backlink().
    """
    roots = [b for b in blocks if b.path == "root"]
    if not roots:
        raise PMNSError(PM_ERR_PMNS, 'No name space entry for "root"', file)
    if len(roots) > 1:
        raise PMNSError(
            PM_ERR_PMNS, 'Multiple name space entries for "root"', roots[1].file, roots[1].line
        )
    # Like libpcp, a path defined twice uses its last definition; the others are strays.
    by_path = {b.path: b for b in blocks}
    used: set[int] = {id(roots[0])}
    first_name: dict[int, str] = {}
    duplicate: tuple[str, _Child] | None = None
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
            if not dupok and duplicate is None and not is_dynamic_root(child.pmid):
                other = first_name.setdefault(child.pmid, path)
                if other != path:
                    what = (
                        f"Duplicate metric id ({pmIDStr(child.pmid)}) in name space "
                        f'for metrics "{path}" and "{other}"'
                    )
                    duplicate = (what, child)
            continue
        sub = by_path.get(path)
        if sub is None or id(sub) in used:  # a block attaches once (a child "root" can't)
            what = f'Cannot find definition for non-terminal node "{path}" in name space'
            raise PMNSError(PM_ERR_PMNS, what, child.where.file, child.where.line)
        used.add(id(sub))
        stack.append((node, iter(sub.children)))
    _check_connected(blocks, used)
    if duplicate is not None:  # (the message ends in a newline, so err() adds a blank line)
        what, child = duplicate
        report = f"Error Parsing ASCII PMNS: {what}\n\n"
        raise PMNSError(PM_ERR_PMNS, what, child.where.file, child.where.line, report)


def _check_connected(blocks: list[_Block], used: set[int]) -> None:
    """Every block attached; libpcp reports each stray, latest first, and then fails."""
    strays = [b for b in reversed(blocks) if id(b) not in used]
    if strays:
        whats = [f'Disconnected subtree ("{b.path}") in name space' for b in strays]
        report = "".join(f"Error Parsing ASCII PMNS: {w}\n" for w in whats)
        raise PMNSError(PM_ERR_PMNS, whats[0], strays[0].file, strays[0].line, report)


def _writable(pmid: int) -> bool:
    """Whether PMID can be written in a namespace file (D:C:I or D:*:*)."""
    if not 0 <= pmid < 1 << 31:
        return False
    if is_dynamic_root(pmid):
        return pmID_cluster(pmid) <= _DOMAIN_MAX
    return pmID_domain(pmid) <= _DOMAIN_MAX


def _has_leaf(node: _Node) -> bool:
    """Whether NODE is a leaf or has one below it: libpcp hides other non-leaves.

    pmns.c marks every node (MARK_BIT, set in a non-leaf's PM_ID_NULL) and
    unmarks each leaf's path to the root; pmGetChildren skips marked nodes.
    """
    stack = [node]
    while stack:
        node = stack.pop()
        if node.pmid is not None:
            return True
        if node.children:
            stack.extend(node.children.values())
    return False


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

    def _find(self, name: str) -> _Node | None:
        """NAME's node, as libpcp's locate(): a non-leaf with no leaf below it is not found."""
        node = self._names.get(name)
        return node if node is not None and _has_leaf(node) else None

    def _locate(self, name: str) -> _Node:
        node = self._root if name == "" else self._find(name)
        if node is None:
            raise PMError(PM_ERR_NAME, name)
        return node

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __len__(self) -> int:
        """The number of names with a PMID (leaves, dynamic roots included)."""
        return sum(1 for n in self._names.values() if n.pmid is not None)

    def lookup(self, name: str) -> int:
        """The PMID for NAME, as pmLookupName on a local namespace.

        A leaf gives its PMID.  A dynamic subtree root, or any name below one,
        gives the root's special PMID (is_dynamic_root() is true and
        pmID_cluster() is the owning domain): pmcd's cue to ask that agent.
        PMError(PM_ERR_NONLEAF) for a non-leaf, PMError(PM_ERR_NAME) otherwise
        (also for a non-leaf with no leaf below it, which libpcp does not find).
        """
        node = self._find(name)
        if node is not None:
            if node.pmid is not None:
                return node.pmid
            raise PMError(PM_ERR_NONLEAF, name)
        root = self.find_dynamic_root(name)
        if root is None:
            raise PMError(PM_ERR_NAME, name)
        return root.pmid

    def find_dynamic_root(self, name: str) -> DynamicRoot | None:
        """The dynamic subtree root NAME is, or lies below, if any."""
        prefix = name
        while True:
            node = self._find(prefix)
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
        return [(c.name, _status(c)) for c in node.children.values() if _has_leaf(c)]

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
        """The leaves at or below TOP, depth first, as TraversePMNS_local.

        Non-leaves with no leaf below them are hidden, as libpcp's mark bit
        hides them from pmGetChildren; TOP itself is listed when nothing
        visible lies below it (a block with no children, say).
        """
        if not any(_has_leaf(c) for c in (top.children or {}).values()):
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
            elif node.pmid is not None:
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
