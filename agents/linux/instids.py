"""Instance ids as pmdalinux's pmdaCache gives them: 0, 1, 2, ... in order first seen, kept."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path


class InstanceIds:
    """Instance ids for names: 0, 1, 2, ... in the order first seen, kept for the agent's life.

    With a PATH, the ids are also loaded from and saved to that file in
    pmdaCache's format ($PCP_VAR_DIR/config/pmda/DOMAIN.SERIAL), so they survive
    restarts and agree with the ids PCP's own pmdalinux saved there.
    """

    def __init__(self, path: Path | None = None) -> None:
        """No names yet, or those saved in PATH (a file that cannot be read is ignored)."""
        self.path = path
        self._ids: dict[str, int] = {}
        self._stamps: dict[int, int] = {}
        if path is not None:
            self._load(path)
        self._next = max(self._ids.values(), default=-1) + 1
        self._unsaved = False

    def __call__(self, name: str) -> int:
        """The id of NAME, giving it the next one if it is new (`save` then writes it)."""
        inst = self._ids.get(name)
        if inst is None:
            inst = self._ids[name] = self._next
            self._next += 1
            self._stamps[inst] = int(time.time())
            self._unsaved = True
        return inst

    def _load(self, path: Path) -> None:
        """Read a pmdaCache file: a "version mode maxinst" line, then "inst stamp [key] name"."""
        try:
            header, *lines = path.read_text(errors="replace").splitlines()
            if header.split()[0] not in ("1", "2"):
                return
        except (OSError, ValueError, IndexError):
            return
        for line in lines:
            m = _CACHE_LINE.fullmatch(line)
            if m and m["name"] not in self._ids and int(m["inst"]) not in self._stamps:
                self._ids[m["name"]] = int(m["inst"])
                self._stamps[int(m["inst"])] = int(m["stamp"])

    def save(self) -> None:
        """Write the ids to PATH if new ones were given, as pmdaCache saves them (best effort)."""
        if self.path is None or not self._unsaved:
            return
        self._unsaved = False
        lines = [f"2 0 {0x7FFFFFFF}\n"]
        for name, inst in sorted(self._ids.items(), key=lambda item: item[1]):
            lines.append(f"{inst} {self._stamps[inst]} {name}\n")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            part = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            part.write_text("".join(lines))
            part.replace(self.path)
        except OSError:
            pass


#: One entry of a pmdaCache file.
_CACHE_LINE = re.compile(r"\s*(?P<inst>\d+)\s+(?P<stamp>\d+)\s+(?:\[[0-9a-f]*\]\s*)?(?P<name>.+)")
