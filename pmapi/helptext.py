"""Help text sources in newhelp(1)'s format, parsed and resolved to PMIDs and instance domains.

A line starting with '#' is a comment, wherever it is.  A line starting with
'@' opens an entry: ``@ KEY oneline``, with the long text on the lines that
follow, up to the next '@' line, trailing newlines trimmed.  KEY is a metric
name, a PMID written D.C.I, or an instance domain D.S; agents' sources write
the domain symbolically (``@ SIMPLE.1 ...``), which pmdaproc.sh rewrites before
newhelp sees it; here a mapping of such names to domain numbers does that.

Unlike newhelp, lines longer than 127 bytes are not split and entries longer
than 1024 bytes are not truncated, and every duplicate key is an error (newhelp
only notices one that repeats the entry just before it).  Like newhelp, the
one-line text keeps any trailing blanks, and lines before the first '@' (or
after an '@' with no key) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from purepcp.pmapi.cpp import Reader, read_file, read_source, split_lines
from purepcp.pmapi.errors import PM_ERR_GENERIC, PM_ERR_NAME, PM_ERR_NONLEAF, PMError, SourceError
from purepcp.pmapi.ids import is_dynamic_root, pmID_build, pmIDStr, pmInDom_build, pmInDomStr
from purepcp.pmapi.pmns import PMNS

_WS = " \t\n\v\f\r"
_KEY_END = re.compile(r"[ \t\n\v\f\r]")
_NUMERIC = re.compile(r"(?:([0-9]+)|([A-Za-z_][A-Za-z0-9_]*))\.([0-9]+)(?:\.([0-9]+))?\Z")
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*\Z")


@dataclass(frozen=True, slots=True)
class HelpEntry:
    """One ``@ KEY oneline`` entry and its long text, with the line it starts on."""

    key: str
    oneline: str
    text: str
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class HelpText:
    """Resolved help: PMID -> (oneline, text) and pmInDom -> (oneline, text), in source order."""

    pmids: dict[int, tuple[str, str]]
    indoms: dict[int, tuple[str, str]]


def parse_help(text: str, file: str = "<string>") -> list[HelpEntry]:
    """The entries of a newhelp source TEXT (named FILE in errors), in order."""
    entries: list[HelpEntry] = []
    head: tuple[str, str, int] | None = None  # (key, oneline, line) of the open entry
    body: list[str] = []

    def close() -> None:
        if head is not None:
            key, oneline, line = head
            entries.append(HelpEntry(key, oneline, "\n".join(body).rstrip("\n"), file, line))

    for number, line in enumerate(split_lines(text), 1):
        if line.startswith("#"):
            continue
        if line.startswith("@"):
            close()
            body = []
            rest = line[1:].lstrip(_WS)
            if not rest:
                head = None  # newhelp: "null entry?", skipped up to the next '@'
                continue
            m = _KEY_END.search(rest)
            key, oneline = (rest, "") if m is None else (rest[: m.start()], rest[m.start() :])
            head = (key, oneline.lstrip(_WS), number)
        elif head is not None:
            body.append(line)
    close()
    return entries


def read_help(path: str, reader: Reader = read_source) -> list[HelpEntry]:
    """The entries of the newhelp source file PATH."""
    return parse_help(read_file(path, reader), path)


def parse_key(key: str, domains: Mapping[str, int | str] | None = None) -> tuple[str, int] | None:
    """("pmid", id) for D.C.I, ("indom", id) for D.S, None if KEY is not numeric.

    D may be a name from DOMAINS (e.g. {"SIMPLE": 253}).  ValueError for a
    numeric key with an unknown domain name or a field out of range.
    """
    m = _NUMERIC.match(key)
    if m is None:
        return None
    number, symbol, second, third = m.groups()
    if number is not None:
        domain = int(number)
    elif domains is not None and symbol in domains:
        domain = int(domains[symbol])
    else:
        raise ValueError(f"unknown domain name {symbol!r}")
    if third is None:
        return "indom", pmInDom_build(domain, int(second))
    return "pmid", pmID_build(domain, int(second), int(third))


def resolve_help(
    entries: Iterable[HelpEntry],
    pmns: PMNS,
    domains: Mapping[str, int | str] | None = None,
    *,
    allow_duplicates: bool = False,
) -> HelpText:
    """Resolve each entry's key (against PMNS for names, DOMAINS for symbolic domains).

    SourceError naming the entry's file and line for a malformed key, a name
    that is unknown, not a leaf, or inside a dynamic subtree, and for a key seen
    before unless ALLOW_DUPLICATES, when the first entry wins, as an agent
    serving newhelp's output answers (PCP's own linux help has such a repeat).
    """
    pmids: dict[int, tuple[str, str]] = {}
    indoms: dict[int, tuple[str, str]] = {}
    seen: dict[tuple[str, int], HelpEntry] = {}
    for entry in entries:
        kind, ident = _resolve_key(entry, pmns, domains)
        first = seen.setdefault((kind, ident), entry)
        if first is not entry:
            if allow_duplicates:
                continue
            shown = pmIDStr(ident) if kind == "pmid" else pmInDomStr(ident)
            raise SourceError(
                PM_ERR_GENERIC,
                f"duplicate key ({shown}), first at {first.file}:{first.line}",
                entry.file,
                entry.line,
            )
        (pmids if kind == "pmid" else indoms)[ident] = (entry.oneline, entry.text)
    return HelpText(pmids, indoms)


def _resolve_key(
    entry: HelpEntry, pmns: PMNS, domains: Mapping[str, int | str] | None
) -> tuple[str, int]:
    key = entry.key
    try:
        numeric = parse_key(key, domains)
    except ValueError as e:
        what = f"{key}: malformed key: {e}"
        raise SourceError(PM_ERR_GENERIC, what, entry.file, entry.line) from None
    if numeric is not None:
        return numeric
    if not _METRIC_NAME.match(key):
        raise SourceError(
            PM_ERR_GENERIC,
            f"{key}: malformed key (expected a metric name, D.C.I or D.S)",
            entry.file,
            entry.line,
        )
    try:
        pmid = pmns.lookup(key)
    except PMError as e:
        code = PM_ERR_NONLEAF if e.code == PM_ERR_NONLEAF else PM_ERR_NAME
        raise SourceError(code, f"{key}: {e.message}", entry.file, entry.line) from None
    if is_dynamic_root(pmid):
        root = pmns.find_dynamic_root(key)
        where = root.name if root is not None else key
        raise SourceError(
            PM_ERR_NAME,
            f"{key}: in the dynamic subtree at {where}, no PMID is known for it here",
            entry.file,
            entry.line,
        )
    return "pmid", pmid


def load_help(
    path: str,
    pmns: PMNS,
    domains: Mapping[str, int | str] | None = None,
    reader: Reader = read_source,
    *,
    allow_duplicates: bool = False,
) -> HelpText:
    """Read and resolve the newhelp source file PATH (see resolve_help)."""
    entries = read_help(path, reader)
    return resolve_help(entries, pmns, domains, allow_duplicates=allow_duplicates)
