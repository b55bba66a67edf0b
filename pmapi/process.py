"""Other processes on this host, as PCP's tools see them: whether one exists (libpcp's
__pmProcessExists), whether it still runs (a zombie does not), and signals sent
without caring whether it is still there."""

from __future__ import annotations

import contextlib
import os

__all__ = ["is_running", "process_exists", "signal_quietly"]


def process_exists(pid: int) -> bool:
    """Whether process PID exists (libpcp's __pmProcessExists)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, OSError):
        return False
    return True


def is_running(pid: int) -> bool:
    """Whether PID exists and is not a zombie (a child of ours not yet waited for, or
    one whose parent does not wait, is gone for the purpose of waiting for it to end)."""
    if not process_exists(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def signal_quietly(pid: int, sig: int) -> None:
    """Send SIG to PID, if it is still there to receive it."""
    with contextlib.suppress(OSError):
        os.kill(pid, sig)
