"""Finding the data folders the project ships, installed or in the repository.

The repository keeps them at its top level (pmns/, help/, systemd/); installed, each is
package data inside the package that reads it (setup.py maps them there).
"""

from __future__ import annotations

from pathlib import Path


def shipped_dir(package_file: str, name: str) -> Path:
    """The folder NAME shipped with the package whose __file__ is PACKAGE_FILE: inside
    that package when installed, else the repository's top-level folder of that name."""
    here = Path(package_file).resolve().parent
    inside = here / name
    return inside if inside.is_dir() else here.parent / name
