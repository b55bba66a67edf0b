"""Our tools' layout (pmapi.paths) for tests: a pcp.conf-style file putting every
directory of ours under one directory of the test's own, so that no test reads or writes
the machine's or the user's purepcp configuration, logs or run files."""

from __future__ import annotations

from pathlib import Path


def layout_text(top: Path, unchosen: tuple[str, ...] = ()) -> str:
    """A pcp.conf-style layout putting every directory of ours under TOP, but those named
    in UNCHOSEN, left to their defaults (a setting nobody chose)."""
    return "".join(
        f"{name}={top / sub}\n"
        for name, sub in (
            ("PCP_SYSCONF_DIR", "etc"),
            ("PCP_VAR_DIR", "var"),
            ("PCP_LOG_DIR", "log"),
            ("PCP_RUN_DIR", "run"),
            ("PCP_SYSTEMDUNIT_DIR", "units"),
        )
        if name not in unchosen
    )
