"""What a dso line's PATH or an agent spec names: a Python agent, or a C library.

Small and import-light, for pmcd's configuration and dbpmda alike.
"""

from __future__ import annotations

import re

_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
_LIBRARY = re.compile(r"\.(so|dylib|dll)\Z")


def is_module_path(path: str) -> bool:
    """Whether a dso PATH names a Python module (our extension) rather than a library."""
    return bool(_MODULE.match(path)) and not _LIBRARY.search(path)


def is_python_spec(spec: str) -> bool:
    """Whether SPEC (`module[:Class]` or `file.py[:Class]`) names a Python agent."""
    where = spec.partition(":")[0]
    return is_module_path(where) or where.endswith(".py")
