"""pmlogger's configuration language: `pmcpp -rs` preprocessing, then pmlogger(1)'s grammar.

`parse_config(text)` turns a configuration into a `LoggerConfig`: its ``log ...``
statements as `LogGroup`s, in file order.  Like pmlogger 6.0.3 it first applies
pmcpp's shell style with restricted macros (``%include``, ``%define``/``%undef``,
``%ifdef``/``%ifndef``/``%else``/``%endif``, ``%name`` and ``%{name}``), then
tokenizes the way pmlogger's flex scanner does (longest match, ties to the earlier
rule; keywords are plain names inside ``{ ... }``) and parses its yacc grammar::

    config   := stmt* ( "[" "access" "]" ctl+ )?
    stmt     := "log"? action ( "{" metric ( ","? metric )* "}" | metric )
    action   := ("mandatory" | "advisory")? "on" freq | ("mandatory" | "advisory")? "off"
              | "mandatory" "maybe"
    freq     := "every"? NUMBER unit | "once" | "default"
    metric   := NAME ( "[" inst ( ","? inst )* "]" )?        inst := NAME | NUMBER | STRING
    ctl      := ("allow" | "disallow") host ( "," host )* ":" ops ";"
    ops      := "all" ( "except" op ( "," op )* )? | op ( "," op )*

Errors are `ConfigError`s naming the file and line pmlogger would name.  The
``[access]`` section's statements become `LoggerConfig.access_rules`, for pmlc's port.

Deliberate differences from pmlogger 6.0.3:

* names in ``[access]`` are not resolved, so an unknown host is not an error here
  (pmlogger stops with "error was on line N");
* a line of the form ``# N "file"`` is an ordinary comment (pmlogger's scanner takes
  it as a pmcpp line marker and renumbers the lines after it);
* as in `purepcp.pmapi.cpp`: ``%include`` names are searched for only in the directories
  given, a last line without a newline is kept (pmcpp drops it), an unknown
  ``%word`` line in a false ``%ifdef`` branch is skipped, and ``%shell`` is refused.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from purepcp.pmapi.cnumbers import atol, int32, int64
from purepcp.pmapi.cpp import MAX_INCLUDE_LEVEL, Reader, SourceLine, read_source, split_lines

#: The interval ``default`` stands for when pmlogger is given no -t (60 seconds).
DEFAULT_INTERVAL_MS = 60_000
#: The largest logging interval pmlogger accepts, in milliseconds (PMLC_MAX_DELTA).
MAX_INTERVAL_MS = 0x0FFFFFFF


# -- the result -------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSpec:
    """A metric or PMNS subtree name, and the instances to log (empty: all of them).

    Instances are external names (str) or internal identifiers (int), as written.
    """

    name: str
    instances: tuple[str | int, ...] = ()
    #: (file, line) pmlogger's warnings give: its "]", else the token after its name
    where: tuple[str, int] = field(default=("", 0), compare=False)


@dataclass(frozen=True)
class LogGroup:
    """One ``log`` statement: its control, state, interval and metrics.

    ``state`` is "on", "off" or "maybe" (``mandatory maybe`` only).  ``interval_ms``
    is set for "on" except with ``once`` (None); ``default`` gives the interval the
    parser was told (see `parse_config`).  An interval of 0 means once to pmlogger.
    ``line`` and ``file`` locate the statement's first word.
    """

    mandatory: bool
    state: str
    interval_ms: int | None
    once: bool
    default_interval: bool
    metrics: tuple[MetricSpec, ...]
    line: int
    file: str = "<config>"


@dataclass(frozen=True)
class LoggerConfig:
    """A parsed configuration: its log groups in file order, and what was ignored."""

    groups: tuple[LogGroup, ...]
    access_ignored: bool = False
    warnings: tuple[str, ...] = ()
    #: the text after pmcpp, each line with where it came from
    source: tuple[SourceLine, ...] = ()
    #: the [access] section: (host, ops it speaks of, ops denied), in order
    access_rules: tuple[tuple[str, int, int], ...] = ()

    def preprocessed(self) -> str:
        """The text as `pmcpp -rs` writes it: a line marker first and after a change of
        file, an empty line for each one it drops (a directive, a false branch)."""
        out: list[str] = []
        file, line = None, 1
        for src in self.source:
            if file is None:
                out.append(f'# 1 "{src.file}"')
                file = src.file
            if src.file != file or src.line < line:
                out.append(f'# {src.line} "{src.file}"')
            else:
                out.extend("" for _ in range(src.line - line))
            out.append(src.text)
            file, line = src.file, src.line + 1
        return "".join(f"{text}\n" for text in out)


class ConfigError(Exception):
    """A configuration pmlogger would refuse, located as pmlogger (or pmcpp) locates it.

    ``line`` is 0 for a pmcpp error about the whole file.  The text is pmlogger's
    two-line report joined into one line, or pmcpp's for a preprocessing error;
    `report` is the report as pmlogger writes it in its log.
    """

    def __init__(self, file: str, line: int, message: str, *, preprocessor: bool = False) -> None:
        self.file = file
        self.line = line
        self.message = message
        self.preprocessor = preprocessor
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.preprocessor:
            where = f"{self.file}[{self.line}]" if self.line > 0 else self.file
            return f"pmcpp: {where}: {self.message}"
        return (
            f"Specification error in configuration file ({self.file}) "
            f"[line {self.line}] {self.message}"
        )

    def report(self) -> str:
        """The lines pmlogger's yyerror writes (two; pmcpp's one for a preprocessing error)."""
        if self.preprocessor:
            return f"{self}\n"
        return (
            f"Specification error in configuration file ({self.file})\n"
            f"[line {self.line}] {self.message}\n"
        )


# -- pmcpp -rs ----------------------------------------------------------------------

_DIRECTIVES = ("define", "undef", "ifdef", "ifndef", "endif", "else")
_BLANK = " \t"
_SPACE = " \t\n\v\f\r"
_MACRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# pmcpp -r expands only %name (a letter or digit first) and %{name}.
_MACRO_USE = re.compile(r"%(?:\{([A-Za-z0-9][^}]*)\}|([A-Za-z0-9][A-Za-z0-9_]*))")


class _Frame:
    __slots__ = ("file", "index", "lines")

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = split_lines(text)
        self.index = 0  # lines read so far, so the line number of the last one


class _Pmcpp:
    """What `pmcpp -rs` keeps for one run: macros, the (unnested) %ifdef, the include stack."""

    def __init__(
        self, macros: Mapping[str, object], include_dirs: Iterable[str], reader: Reader
    ) -> None:
        self.include_dirs = tuple(include_dirs)
        self.reader = reader
        self.macros: dict[str, str] = {}
        self.in_if: bool | None = None  # None outside %ifdef/%ifndef, else the branch's truth
        self.if_line = 0
        self.stack: list[_Frame] = []
        for name, value in macros.items():
            if not _MACRO_NAME.fullmatch(name):
                raise ConfigError("<arg>", 0, "Illegal character in macro name", preprocessor=True)
            self.macros[name] = str(value)

    def error(self, message: str) -> ConfigError:
        frame = self.stack[-1]
        return ConfigError(frame.file, frame.index, message, preprocessor=True)

    def run(self, text: str, file: str) -> list[SourceLine]:
        self.stack.append(_Frame(file, text))
        out: list[SourceLine] = []
        while self.stack:
            frame = self.stack[-1]
            if frame.index >= len(frame.lines):
                self.stack.pop()
                continue
            line = frame.lines[frame.index]
            frame.index += 1
            if line.startswith("%") and self.control(line):
                continue
            if self.in_if is False:
                continue
            if self.macros:
                line = _MACRO_USE.sub(self.expand, line)
            out.append(SourceLine(frame.file, frame.index, line))
        if self.in_if is not None:
            raise ConfigError(
                file,
                0,
                f"End of input and no matching %endif for %ifdef or %ifndef at line {self.if_line}",
                preprocessor=True,
            )
        return out

    def expand(self, match: re.Match[str]) -> str:
        return self.macros.get(match.group(1) or match.group(2), match.group(0))

    def control(self, line: str) -> bool:
        """Act on a %-line; False if it is no directive pmcpp knows (then it is text)."""
        word = line[1:]
        if word.startswith("include"):
            if self.in_if is not False:
                self.include(line, len("%include"))
            return True
        if word.startswith("shell"):
            if self.in_if is not False:
                raise self.error("%shell is not supported (PCP's pmcpp would run a command here)")
            return True
        for op in _DIRECTIVES:
            if word.startswith(op):
                self.directive(op, line, 1 + len(op))
                return True
        return False

    def directive(self, op: str, line: str, pos: int) -> None:
        n = len(line)
        while pos < n and line[pos] in _BLANK:
            pos += 1
        name = value = ""
        if op not in ("endif", "else"):
            if pos >= n:
                raise self.error("Missing macro name")
            match = _MACRO_NAME.match(line, pos)
            end = match.end() if match else pos
            if end < n and line[end] not in _SPACE:
                raise self.error("Illegal character in macro name")
            if end == pos:
                raise self.error("Missing macro name")
            name, pos = line[pos:end], end
            if op == "define":
                while pos < n and line[pos] in _BLANK:
                    pos += 1
                quote = line[pos] if pos < n and line[pos] in "'\"" else ""
                if quote:
                    end = line.find(quote, pos + 1)
                    if end < 0:
                        raise self.error("Unterminated value string in %define")
                    value, pos = line[pos + 1 : end], end + 1
                else:
                    end = pos
                    while end < n and line[end] not in _SPACE:
                        end += 1
                    value, pos = line[pos:end], end
        while pos < n and line[pos] in _BLANK:
            pos += 1
        if pos < n and line[pos] != "\r":
            raise self.error("Unexpected extra text in a control line")

        if op in ("endif", "else"):
            if self.in_if is None:
                raise self.error(f"No matching %ifdef or %ifndef for %{op}")
            self.in_if = None if op == "endif" else not self.in_if
        elif op in ("ifdef", "ifndef"):
            if self.in_if is not None:
                raise self.error("Nested %ifdef or %ifndef")
            self.in_if = (name in self.macros) == (op == "ifdef")
            self.if_line = self.stack[-1].index
        elif self.in_if is False:
            pass  # %define or %undef in a false branch: checked, not done
        elif op == "undef":
            self.macros.pop(name, None)
        elif name in self.macros:
            raise self.error("Macro redefinition")
        else:
            self.macros[name] = value

    def include(self, line: str, pos: int) -> None:
        n = len(line)
        while pos < n and line[pos] in _BLANK:
            pos += 1
        if pos >= n or line[pos] not in '"<':
            raise self.error('Expected " or < after %include')
        close = '"' if line[pos] == '"' else ">"
        end = line.find(close, pos + 1)
        if end < 0:
            raise self.error(f"Expected {close} after file name")
        if len(self.stack) >= MAX_INCLUDE_LEVEL:
            raise self.error("%include and/or %shell nesting too deep")
        if line[end + 1 :].strip(_SPACE):
            raise self.error("Unexpected extra text in %include line")
        name = line[pos + 1 : end]
        dirs = (
            (name,) if os.path.isabs(name) else (os.path.join(d, name) for d in self.include_dirs)
        )
        for path in dirs:
            text = self.reader(path)
            if text is not None:
                self.stack.append(_Frame(path, text))
                return
        raise self.error("Cannot open file for %include")


def preprocess_config(
    text: str,
    filename: str = "<config>",
    *,
    macros: Mapping[str, object] | None = None,
    include_dirs: Iterable[str] = (),
    reader: Reader | None = None,
) -> list[SourceLine]:
    """TEXT after `pmcpp -rs`, each line with the file and line it came from.

    ``%include`` files are looked for in INCLUDE_DIRS (absolute names as given) and
    read with READER (None: no file can be read, so ``%include`` fails).
    """
    return _Pmcpp(macros or {}, include_dirs, reader or _no_files).run(text, filename)


def _no_files(path: str) -> None:
    return None


# -- the scanner --------------------------------------------------------------------

_KEYWORDS = {
    **dict.fromkeys(("msec", "msecs", "millisecond", "milliseconds"), "msec"),
    **dict.fromkeys(("sec", "secs", "second", "seconds"), "sec"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "min"),
    **dict.fromkeys(("hour", "hours"), "hour"),
    **{
        word: word
        for word in (
            *("log", "mandatory", "advisory", "on", "off", "maybe", "every", "once", "default"),
            *("access", "allow", "disallow", "all", "except", "enquire"),
        )
    },
}
_UNIT_MS = {"msec": 1, "sec": 1000, "min": 60_000, "hour": 3_600_000}

# pmlogger's scanner rules in its order; the longest match wins, ties go to the earlier.
_IPSPEC = (
    r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+",
    r"[0-9]+\.[0-9]+\.[0-9]+\.\*",
    r"[0-9]+\.[0-9]+\.\*",
    r"[0-9]+\.\*",
    r"\.\*",
    r"(?:[A-Fa-f0-9]+:)*[A-Fa-f0-9]+",
    r"::",
    r"::(?:[A-Fa-f0-9]+:)*[A-Fa-f0-9]+",
    r"(?:[A-Fa-f0-9]+:)+:(?:[A-Fa-f0-9]+:)*[A-Fa-f0-9]+",
    r"(?:[A-Fa-f0-9]+:)+:",
    r"(?:[A-Fa-f0-9]+:)+\*",
    r"::(?:[A-Fa-f0-9]+:)*\*",
    r"(?:[A-Fa-f0-9]+:)+:(?:[A-Fa-f0-9]+:)*\*",
    r":\*",
    r"\*",
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("PUNCT", re.compile(r"[\[\],{}:;]")),
    ("KEYWORD", re.compile(r"[a-z]+")),  # a keyword only if the whole word is one
    ("NAME", re.compile(r"[A-Za-z][A-Za-z0-9_.]*")),
    ("HOSTNAME", re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")),
    ("STRING", re.compile(r'"[^"\n]+"')),
    ("NUMBER", re.compile(r"[0-9]+")),
    *(("IPSPEC", re.compile(p)) for p in _IPSPEC),
    ("URL", re.compile(r"(?:unix|local):[A-Za-z0-9_./]*\*?")),
    ("SKIP", re.compile(r"#.*|[ \t\r]+")),
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # the punctuation itself, a keyword's canonical spelling, NAME, ..., EOF
    text: str
    file: str
    line: int


def _longest(text: str, pos: int) -> tuple[str | None, int]:
    kind: str | None = None
    length = 0
    for rule, pattern in _RULES:
        m = pattern.match(text, pos)
        if m is None or (rule == "KEYWORD" and m.group() not in _KEYWORDS):
            continue
        if m.end() - pos > length:
            kind, length = rule, m.end() - pos
    return kind, length


class _Scanner:
    """Tokens on demand; inside ``{ ... }`` (``in_list``) keywords are names, as in pmlogger."""

    def __init__(self, lines: list[SourceLine], eof: tuple[str, int]) -> None:
        self.lines = lines
        self.eof = eof
        self.index = 0
        self.pos = 0
        self.in_list = False

    def next(self) -> _Token:
        while self.index < len(self.lines):
            src = self.lines[self.index]
            text = src.text
            while self.pos < len(text):
                start = self.pos
                kind, length = _longest(text, start)
                if kind is None:
                    raise ConfigError(src.file, src.line, f"Unexpected character '{text[start]}'")
                self.pos += length
                word = text[start : self.pos]
                if kind == "SKIP":
                    continue
                if kind == "PUNCT":
                    kind = word
                elif kind == "KEYWORD":
                    kind = "NAME" if self.in_list else _KEYWORDS[word]
                return _Token(kind, word, src.file, src.line)
            self.index += 1
            self.pos = 0
        return _Token("EOF", "", *self.eof)


# -- the parser ----------------------------------------------------------------------


class _Parser:
    """Recursive descent over pmlogger's grammar, one token of lookahead read only when needed."""

    def __init__(self, scanner: _Scanner, default_interval_ms: int) -> None:
        self.scanner = scanner
        self.default_interval_ms = default_interval_ms
        self.lookahead: _Token | None = None
        self.warnings: list[str] = []

    def peek(self) -> _Token:
        if self.lookahead is None:
            self.lookahead = self.scanner.next()
        return self.lookahead

    def take(self, *kinds: str) -> _Token:
        token = self.peek()
        if token.kind not in kinds:
            raise ConfigError(token.file, token.line, "syntax error")
        self.lookahead = None
        return token

    def skip(self, kind: str) -> bool:
        if self.peek().kind != kind:
            return False
        self.lookahead = None
        return True

    def config(self) -> LoggerConfig:
        groups: list[LogGroup] = []
        while self.peek().kind in ("log", "mandatory", "advisory", "on", "off"):
            groups.append(self.statement())
        access = self.peek().kind == "["
        rules: list[tuple[str, int, int]] = []
        if access:
            self.take("[")
            self.take("access")
            self.take("]")
            rules += self.control()
            while self.peek().kind in ("allow", "disallow"):
                rules += self.control()
        self.take("EOF")
        return LoggerConfig(tuple(groups), access, tuple(self.warnings), access_rules=tuple(rules))

    def statement(self) -> LogGroup:
        first = self.peek()
        self.skip("log")
        word = self.take("mandatory", "advisory", "on", "off")
        mandatory = word.kind == "mandatory"
        if mandatory:
            word = self.take("on", "off", "maybe")
        elif word.kind == "advisory":
            word = self.take("on", "off")
        interval, once, default = None, False, False
        if word.kind == "on":
            interval, once, default = self.frequency()
        metrics = self.metrics()
        return LogGroup(
            mandatory, word.kind, interval, once, default, metrics, first.line, first.file
        )

    def frequency(self) -> tuple[int | None, bool, bool]:
        word = self.take("every", "NUMBER", "once", "default")
        if word.kind == "once":
            return None, True, False
        if word.kind == "default":
            return self.check_interval(self.default_interval_ms, word), False, True
        if word.kind == "every":
            word = self.take("NUMBER")
        unit = self.take(*_UNIT_MS)
        msec = int64(atol(word.text) * _UNIT_MS[unit.kind])
        return self.check_interval(msec, unit), False, False

    @staticmethod
    def check_interval(msec: int, where: _Token) -> int:
        if msec < 0:
            message = f"Logging delta ({msec} msec) must be positive"
        elif msec > MAX_INTERVAL_MS:
            message = f"Logging delta ({msec} msec) cannot be bigger than {MAX_INTERVAL_MS} msec"
        else:
            return msec
        raise ConfigError(where.file, where.line, message)

    def metrics(self) -> tuple[MetricSpec, ...]:
        if self.peek().kind != "{":
            return (self.metric(),)
        self.take("{")
        self.scanner.in_list = True
        specs = [self.metric()]
        while self.peek().kind != "}":
            self.skip(",")
            specs.append(self.metric())
        self.take("}")
        self.scanner.in_list = False
        return tuple(specs)

    def metric(self) -> MetricSpec:
        """A metric and its instances, located where pmlogger's warnings about it say: its
        "]", else the token after its name (the lookahead yacc had read by then)."""
        name = self.take("NAME").text
        instances: list[str | int] = []
        end = self.peek()
        if self.skip("["):
            instances.append(self.instance())
            while self.peek().kind != "]":
                self.skip(",")
                instances.append(self.instance())
            end = self.take("]")
        return MetricSpec(name, tuple(instances), (end.file, end.line))

    def instance(self) -> str | int:
        token = self.take("NAME", "NUMBER", "STRING")
        if token.kind == "NUMBER":
            return int32(atol(token.text))  # pmlogger keeps it in a C int
        return token.text[1:-1] if token.kind == "STRING" else token.text

    def control(self) -> list[tuple[str, int, int]]:
        """One allow/disallow statement: (host, ops it speaks of, ops denied) per host."""
        allow = self.take("allow", "disallow").kind == "allow"
        hosts = [self.take("IPSPEC", "URL", "HOSTNAME", "NAME").text]
        while self.skip(","):
            hosts.append(self.take("IPSPEC", "URL", "HOSTNAME", "NAME").text)
        self.take(":")
        if not self.skip("all"):  # ops
            ops = self.operations()
            specified, denied = ops, 0 if allow else ops
        elif self.skip("except"):  # all except ops
            ops = self.operations()
            specified, denied = _OP_ALL, ops if allow else _OP_ALL & ~ops
        else:  # all
            specified, denied = _OP_ALL, 0 if allow else _OP_ALL
        self.take(";")
        return [(host, specified, denied) for host in hosts]

    def operations(self) -> int:
        ops = _OPS[self.take("advisory", "mandatory", "enquire").kind]
        while self.skip(","):
            ops |= _OPS[self.take("advisory", "mandatory", "enquire").kind]
        return ops


#: the ops of [access] statements (PM_OP_LOG_ADV, _MAND, _ENQ)
_OPS = {"advisory": 0x1, "mandatory": 0x2, "enquire": 0x4}
_OP_ALL = 0x7


# -- entry points --------------------------------------------------------------------


def parse_config(
    text: str,
    filename: str = "<config>",
    *,
    default_interval_ms: int = DEFAULT_INTERVAL_MS,
    macros: Mapping[str, object] | None = None,
    include_dirs: Iterable[str] = (),
    reader: Reader | None = None,
) -> LoggerConfig:
    """Parse pmlogger configuration TEXT (named FILENAME in errors); raises ConfigError.

    DEFAULT_INTERVAL_MS is what ``default`` means (pmlogger's -t).  MACROS are
    predefined like ``pmcpp -D``; INCLUDE_DIRS and READER serve ``%include``
    (see `preprocess_config`; by default nothing is read, so this does no I/O).
    """
    lines = preprocess_config(
        text, filename, macros=macros, include_dirs=include_dirs, reader=reader
    )
    scanner = _Scanner(lines, (filename, text.count("\n") + 1))
    config = _Parser(scanner, default_interval_ms).config()
    return replace(config, source=tuple(lines))


def parse_config_file(
    path: str,
    *,
    default_interval_ms: int = DEFAULT_INTERVAL_MS,
    macros: Mapping[str, object] | None = None,
    include_dirs: Iterable[str] = (),
    reader: Reader = read_source,
) -> LoggerConfig:
    """Parse the file PATH; ``%include`` looks in its directory, then INCLUDE_DIRS.

    pmlogger itself adds $PCP_VAR_DIR/config/pmlogger as an include directory.
    Raises FileNotFoundError if PATH cannot be read, ConfigError if it is refused.
    """
    text = reader(path)
    if text is None:
        raise FileNotFoundError(errno.ENOENT, "Cannot open config file", path)
    return parse_config(
        text,
        path,
        default_interval_ms=default_interval_ms,
        macros=macros,
        include_dirs=(os.path.dirname(path) or ".", *include_dirs),
        reader=reader,
    )
