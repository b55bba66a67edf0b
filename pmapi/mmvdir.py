"""Where MMV files are published: $PCP_TMP_DIR/mmv, made as PCP's packaging makes it.

PCP's packages create $PCP_TMP_DIR/mmv world-writable and sticky (1777), so that any
user's program can publish its file there and only remove its own; purepcp's layout
is made by its commands, so the mmv agent and pcp.mmv's writer make it when missing.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def stats_dir(prefix: str = "mmv") -> Path:
    """$PCP_TMP_DIR/PREFIX, in this layout."""
    from purepcp.pmapi.paths import paths

    return paths().tmp_dir / prefix


def make_stats_dir(path: Path) -> None:
    """PATH (and its parents) made if missing, PATH itself 1777; a failure is left for
    the file's own open (or the agent's scan) to report."""
    if path.is_dir():
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir()
        os.chmod(path, 0o1777)
