"""Whether this environment can build wheels without the network (the tests that pip
install a package do it offline)."""

from __future__ import annotations

import importlib.metadata
import importlib.util


def can_build_wheels_offline() -> bool:
    """Whether pip can build a wheel with this environment's setuptools, without fetching:
    setuptools 70.1 and later have bdist_wheel; before that it comes from the wheel package."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    major, minor = (int(part) for part in [*version.split("."), "0"][:2])
    return (major, minor) >= (70, 1)
