"""Where a host's pmloggers are: PCP's directories, the primary logger's PID, and the
port map files each pmlogger writes in $PCP_TMP_DIR/pmlogger (what pmlogger_check and
pmlogger_daily both look at, as PCP's scripts do)."""

from __future__ import annotations

import os

from .controlfile import default_control_path


def pcp_dirs() -> dict[str, str]:
    """PCP's directories as the environment (PCP's pcp.env) or our layout gives them."""
    from purepcp.pmapi.paths import paths

    layout = dict(paths().values)
    names = (
        "PCP_SYSCONF_DIR",
        "PCP_VAR_DIR",
        "PCP_LOG_DIR",
        "PCP_RUN_DIR",
        "PCP_TMP_DIR",
        "PCP_ARCHIVE_DIR",
        "PCP_BINADM_DIR",
        "PCP_TMPFILE_DIR",
        "PCP_PMLOGGERCONTROL_PATH",
    )
    found = {n: os.environ.get(n) or layout.get(n, "") for n in names}
    found["PCP_PMLOGGERCONTROL_PATH"] = default_control_path(found)
    return found


def running_pmlogger(pid: int) -> bool:
    """Whether PID is a live pmlogger (PCP's _get_pids_by_name pmlogger)."""
    from .pidfile import is_pmlogger

    return pid > 0 and is_pmlogger(pid)


def primary_pid(dirs: dict[str, str]) -> int | None:
    """The primary pmlogger's PID: $PCP_RUN_DIR/pmlogger.pid, else the primary link."""
    try:
        with open(os.path.join(dirs["PCP_RUN_DIR"], "pmlogger.pid")) as f:
            text = f.read().strip()
    except OSError:
        text = ""
    if not text:
        try:
            text = os.path.basename(
                os.readlink(os.path.join(dirs["PCP_TMP_DIR"], "pmlogger", "primary"))
            )
        except OSError:
            text = ""
    return int(text) if text.isdigit() else None


def port_file_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []
