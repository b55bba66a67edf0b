"""The small C preprocessor that PCP's pmcpp(1) applies to namespace files.

Supported, as pmcpp does it: ``#define NAME [VALUE]`` (VALUE unquoted without
spaces, or in '...' or "..."), ``#undef``, non-nested ``#ifdef``/``#ifndef``/
``#else``/``#endif``, ``#include "file"`` and ``#include <file>``, whole-token
macro substitution (no rescanning) and ``/* ... */`` comment stripping.
``#shell`` is refused.  Each output line keeps the file and line it came from,
so later parse errors can name the original place.

The core, :func:`preprocess`, does no I/O of its own: included files are read
through a ``reader`` callable (the default reads the file system).

Deliberate differences from pmcpp 6.0.3:

* a predefined macro's value is used verbatim, spaces and all;
* a last line without a newline is processed (pmcpp silently drops it);
* an unknown ``#word`` line inside a false ``#ifdef`` branch is skipped (pmcpp
  prints it and stops skipping until the next directive);
* ``#else`` never creates or trips over an empty-named macro (pmcpp reports
  "Macro redefinition" for a second false-to-true ``#else``, or one after
  ``#undef``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from purepcp.pmapi.errors import PM_ERR_PMNS, SourceError

#: Files open at once, the top-level one included (pmcpp's MAXLEVEL).
MAX_INCLUDE_LEVEL = 5

_BLANK = " \t"
_SPACE = " \t\n\v\f\r"
_NAME_START = frozenset(string.ascii_letters + "_")
_DIGITS = frozenset(string.digits)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MACRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: pmcpp's control words, in the order it tries them (each is a prefix match).
_DIRECTIVES = ("define", "undef", "ifdef", "ifndef", "endif", "else")

Reader = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One line of preprocessed text and where it came from (1-based line)."""

    file: str
    line: int
    text: str


def read_source(path: str) -> str | None:
    """Text of a regular file (or character device), else None, as pmcpp's openfile()."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
                return None
            return f.read()
    except OSError:
        return None


def split_lines(text: str) -> list[str]:
    """Lines of TEXT split on newline only (not on the other separators str.splitlines knows)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class _Frame:
    __slots__ = ("file", "index", "lines")

    def __init__(self, file: str, lines: list[str]) -> None:
        self.file = file
        self.lines = lines
        self.index = 0  # lines consumed so far == line number of the last one read


class _Preprocessor:
    """pmcpp's state for one run: macros, the #if state, comment state, include stack."""

    def __init__(
        self, macros: Mapping[str, object] | None, include_dirs: Iterable[str], reader: Reader
    ) -> None:
        self.macros: dict[str, str] = {}
        self.include_dirs = tuple(include_dirs)
        self.reader = reader
        self.in_if: bool | None = None  # None: not in #if..., else the branch's truth
        self.if_where: tuple[str, int] = ("", 0)
        self.comment_where: tuple[str, int] | None = None
        self.stack: list[_Frame] = []
        self.out: list[SourceLine] = []
        for name, value in (macros or {}).items():
            if not name:
                raise SourceError(PM_ERR_PMNS, "Missing macro name", "<arg>")
            if not _MACRO_NAME.match(name):
                raise SourceError(PM_ERR_PMNS, "Illegal character in macro name", "<arg>")
            self.macros[name] = str(value)

    # -- errors ---------------------------------------------------------------

    def _error(self, what: str) -> SourceError:
        frame = self.stack[-1]
        return SourceError(PM_ERR_PMNS, what, frame.file, frame.index)

    # -- the main loop --------------------------------------------------------

    def run(self, text: str, file: str) -> list[SourceLine]:
        self.stack.append(_Frame(file, split_lines(text)))
        skipping = False
        while self.stack:
            frame = self.stack[-1]
            if frame.index >= len(frame.lines):
                self.stack.pop()
                continue
            raw = frame.lines[frame.index]
            frame.index += 1
            line = self._strip_comments(raw, frame)
            if self.comment_where is not None and line == "":
                continue  # pmcpp: a blank line inside a comment is never a directive
            if line.startswith("#"):
                handled, skipping = self._control(line, skipping)
                if handled:
                    continue
            if skipping:
                continue
            if self.macros:
                line = self._substitute(line)
            self.out.append(SourceLine(frame.file, frame.index, line))
        if self.comment_where is not None:
            cfile, cline = self.comment_where
            raise SourceError(
                PM_ERR_PMNS,
                f"Comment at line {cline} not terminated before end of file",
                cfile,
                cline,
            )
        if self.in_if is not None:
            ifile, iline = self.if_where
            raise SourceError(
                PM_ERR_PMNS,
                f"End of input and no matching #endif for #ifdef or #ifndef at line {iline}",
                ifile,
                iline,
            )
        return self.out

    def _strip_comments(self, line: str, frame: _Frame) -> str:
        """Blank out /* ... */ text (which may span lines), then trailing white space, as pmcpp."""
        if self.comment_where is None and "/*" not in line:
            return line
        pieces: list[str] = []
        pos = 0
        n = len(line)
        while pos < n:
            if self.comment_where is not None:
                end = line.find("*/", pos)
                stop = n if end < 0 else end + 2
                pieces.append(" " * (stop - pos))
                if end >= 0:
                    self.comment_where = None
                pos = stop
            else:
                start = line.find("/*", pos)
                if start < 0:
                    pieces.append(line[pos:])
                    break
                pieces.append(line[pos:start] + "  ")
                self.comment_where = (frame.file, frame.index)
                pos = start + 2
        return "".join(pieces).rstrip(_SPACE)

    def _substitute(self, line: str) -> str:
        macros = self.macros
        return _IDENT.sub(lambda m: macros.get(m.group(0), m.group(0)), line)

    # -- control lines --------------------------------------------------------

    def _control(self, line: str, skipping: bool) -> tuple[bool, bool]:
        """Handle a line starting with '#': (was it a directive, skip following lines)."""
        word = line[1:]
        if word.startswith("include"):
            if not skipping:
                self._include(line, len("#include"))
            return True, skipping
        if word.startswith("shell"):
            if not skipping:
                raise self._error("#shell is not supported (PCP's pmcpp would run a command here)")
            return True, skipping
        for op in _DIRECTIVES:
            if word.startswith(op):
                self._directive(op, line, 1 + len(op))
                return True, self.in_if is False
        # Not a control word pmcpp knows: it passes the line on as text.
        return False, skipping

    def _directive(self, op: str, line: str, pos: int) -> None:
        n = len(line)
        while pos < n and line[pos] in _BLANK:
            pos += 1
        name = ""
        value = ""
        if op not in ("endif", "else"):
            if pos >= n:
                raise self._error("Missing macro name")
            start = pos
            while pos < n and line[pos] not in _BLANK:
                c = line[pos]
                if not (c in _NAME_START or (pos > start and c in _DIGITS)):
                    break
                pos += 1
            if pos < n and line[pos] not in _SPACE:
                raise self._error("Illegal character in macro name")
            name = line[start:pos]
            if not name:
                raise self._error("Missing macro name")
            if op == "define" and pos < n:
                while pos < n and line[pos] in _BLANK:
                    pos += 1
                quote = ""
                if pos < n and line[pos] in "'\"":
                    quote = line[pos]
                    pos += 1
                start = pos
                if quote:
                    pos = line.find(quote, pos)
                    if pos < 0:
                        raise self._error("Unterminated value string in #define")
                    value = line[start:pos]
                    pos += 1
                else:
                    while pos < n and line[pos] not in _SPACE:
                        pos += 1
                    value = line[start:pos]
        while pos < n and line[pos] in _BLANK:
            pos += 1
        if pos < n and line[pos] != "\r":
            raise self._error("Unexpected extra text in a control line")

        if op == "endif":
            if self.in_if is None:
                raise self._error("No matching #ifdef or #ifndef for #endif")
            self.in_if = None
            return
        if op == "else":
            if self.in_if is None:
                raise self._error("No matching #ifdef or #ifndef for #else")
            self.in_if = not self.in_if
            return
        if op in ("ifdef", "ifndef"):
            if self.in_if is not None:
                raise self._error("Nested #ifdef or #ifndef")
            frame = self.stack[-1]
            self.if_where = (frame.file, frame.index)
            self.in_if = (name in self.macros) == (op == "ifdef")
            return
        if self.in_if is False:
            return  # #define / #undef in a false branch: checked above, otherwise ignored
        if op == "undef":
            self.macros.pop(name, None)
        elif name in self.macros:
            raise self._error("Macro redefinition")
        else:
            self.macros[name] = value

    def _include(self, line: str, pos: int) -> None:
        n = len(line)
        while pos < n and line[pos] in _BLANK:
            pos += 1
        if pos >= n or line[pos] not in '"<':
            raise self._error('Expected " or < after #include')
        close = '"' if line[pos] == '"' else ">"
        end = line.find(close, pos + 1)
        if end < 0:
            raise self._error(f"Expected {close} after file name")
        name = line[pos + 1 : end]
        if len(self.stack) >= MAX_INCLUDE_LEVEL:
            raise self._error("#include and/or #shell nesting too deep")
        if line[end + 1 :].strip(_SPACE):
            raise self._error("Unexpected extra text in #include line")
        found = self._find(name)
        if found is None:
            raise self._error("Cannot open file for #include")
        path, text = found
        self.stack.append(_Frame(path, split_lines(text)))

    def _find(self, name: str) -> tuple[str, str] | None:
        """pmcpp's do_include(): NAME as given (so relative to the working directory),
        then, unless absolute, in each include directory."""
        candidates: Iterable[str] = (name,)
        if not os.path.isabs(name):
            candidates = (name, *(os.path.join(d, name) for d in self.include_dirs))
        for path in candidates:
            text = self.reader(path)
            if text is not None:
                return path, text
        return None


def read_file(path: str, reader: Reader = read_source) -> str:
    """The text of the top-level file PATH; SourceError(-errno, ...) if unreadable, as PCP."""
    text = reader(path)
    if text is not None:
        return text
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise SourceError(
            -(e.errno or errno.ENOENT), f'Cannot open "{path}": {e.strerror}', path
        ) from None
    raise SourceError(-errno.ENOENT, f'Cannot open "{path}": not a regular file', path)


def preprocess(
    text: str,
    file: str = "<string>",
    *,
    macros: Mapping[str, object] | None = None,
    include_dirs: Iterable[str] = (),
    reader: Reader = read_source,
) -> list[SourceLine]:
    """Preprocess TEXT (named FILE in errors) as pmcpp would; lines in output order.

    MACROS are predefined like ``pmcpp -DNAME=VALUE``; an ``#include`` name is
    tried as it is (relative to the working directory), then, unless absolute,
    in INCLUDE_DIRS in order, and read with READER, which returns None for a
    file it cannot open.
    Lines that were directives, skipped, or blank inside a comment are left out.
    Raises SourceError(PM_ERR_PMNS, ...) naming the original file and line.
    """
    return _Preprocessor(macros, include_dirs, reader).run(text, file)


def preprocess_file(
    path: str,
    *,
    macros: Mapping[str, object] | None = None,
    include_dirs: Iterable[str] = (),
    reader: Reader = read_source,
) -> list[SourceLine]:
    """Preprocess the file PATH; includes are searched in its directory, then INCLUDE_DIRS."""
    text = read_file(path, reader)
    top_dir = os.path.dirname(path) or "."
    return preprocess(
        text, path, macros=macros, include_dirs=(top_dir, *include_dirs), reader=reader
    )
