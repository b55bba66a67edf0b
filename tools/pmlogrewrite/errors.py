"""How a rules file's problems are reported: PCP's three message shapes.

A specification error names the file and line and ends the run (status 1); a
semantic error, found once every file is read, names the file only; a warning
names both and the run goes on.
"""

from __future__ import annotations

import sys


class SpecError(Exception):
    """A rules file is wrong at a line: the run ends with PCP's two-line message."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.message = message

    def report(self) -> str:
        return (
            f"Specification error in configuration file ({self.path})\n"
            f"[line {self.line}] {self.message}\n"
        )


class SemanticError(Exception):
    """The rules, taken together, cannot be applied to this archive."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message

    def report(self) -> str:
        return f"Semantic error in configuration file ({self.path})\n{self.message}\n"


class Where:
    """The file and line the parser is at (warnings after parsing name the last)."""

    def __init__(self) -> None:
        self.path = ""
        self.line = 0

    def warn(self, message: str) -> None:
        sys.stdout.flush()
        sys.stderr.write(f"Warning [{self.path}, line {self.line}]\n{message}\n")

    def error(self, message: str) -> SpecError:
        return SpecError(self.path, self.line, message)

    def semantic(self, message: str) -> SemanticError:
        return SemanticError(self.path, message)
