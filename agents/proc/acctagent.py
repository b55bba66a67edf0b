"""The proc agent's acct.* side: the controls, and the processes that ended lately
(instance domain 3.40), read by acct.py from the kernel's process accounting.

`Accounted` is a part of the Proc agent (agents/proc/__init__.py), which gives it the
request's access (`_access`: whether the client is one pmcd vouches for) and tty names
(`ttys`).  The records are read only for such clients, as pmdaproc reads them.
"""

from __future__ import annotations

import os
import time
from typing import Any

from purepcp.pmapi.errors import PM_ERR_PERMISSION, PMError
from purepcp.pmda import DISCRETE, U32, U64, Agent, InDom, metric, refresh

from . import fields
from .acct import Accounting, values
from .catalog import ACCT, BYTE, SEC

#: The processes that ended lately (pmdaproc's ACCT_INDOM).
ENDED = InDom(ACCT)


def _paths() -> tuple[str, str]:
    """(the system's accounting file, ours), where pmdaproc has them."""
    system = os.environ.get("PCP_PACCT_SYSTEM_PATH", "/var/account/pacct")
    var_dir = os.environ.get("PCP_VAR_DIR")
    if not var_dir:
        try:
            from purepcp.pmapi.paths import paths

            var_dir = str(paths().var_dir)
        except (OSError, ValueError, KeyError):
            var_dir = ""
    return system, os.path.join(var_dir, "pmcd", "pacct") if var_dir else ""


class Accounted(Agent):
    """acct.*: see the module docstring."""

    ended = ENDED

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hertz = os.environ.get("PROC_HERTZ", "")
        hz = int(hertz) if hertz.isdigit() else os.sysconf("SC_CLK_TCK")
        self.acct = Accounting(*_paths(), hz)
        self._acct_refreshed = False

    def start(self) -> None:
        """Start, opening the system's accounting file if the system accounts."""
        super().start()
        self.acct.open()

    def stop(self) -> None:
        """Stop, switching off accounting of our own."""
        self.acct.close()
        super().stop()

    def handle(self, pdu: Any) -> Any:
        self._acct_refreshed = False
        return super().handle(pdu)

    def _acct_now(self) -> float:
        """Now, after reading the new records once per request (for a client with
        credentials, as pmdaproc reads them)."""
        now = time.time()
        if not self._acct_refreshed and getattr(self, "_access", True):
            self._acct_refreshed = True
            self.acct.refresh(now)
        return now

    @ended.refresh
    def _ended_instances(self) -> dict[int, str]:
        ended = self.acct.current(self._acct_now())
        return {pid: record.comm for pid, record in ended.items()}

    @refresh(70)
    def _acct_values(self) -> dict[str, Any]:
        ended = self.acct.current(self._acct_now())
        hz, ttys = self.acct.hz, getattr(self, "ttys", None)
        tty_name = ttys.name if ttys is not None else str
        out: dict[str, Any] = {}
        for pid in self.profiled(self.ended):
            record = ended.get(pid)
            if record is None:
                continue
            for name, value in values(
                record, hz, tty_name, fields.user_name, fields.group_name
            ).items():
                out.setdefault(name, {})[pid] = value
        return out

    # -- the controls: root may store them --------------------------------------------

    def _root_or_refuse(self) -> None:
        if self.client.uid != 0:
            raise PMError(PM_ERR_PERMISSION)

    @metric("acct.control.open_retry_interval", U32, DISCRETE, SEC)
    def acct_open_retry(self) -> int:
        return self.acct.open_retry_interval

    @acct_open_retry.store
    def _store_acct_open_retry(self, value: int) -> None:
        self._root_or_refuse()
        self.acct.open_retry_interval = value

    @metric("acct.control.check_acct_interval", U32, DISCRETE, SEC)
    def acct_check_interval(self) -> int:
        return self.acct.check_interval

    @acct_check_interval.store
    def _store_acct_check_interval(self, value: int) -> None:
        self._root_or_refuse()
        self.acct.check_interval = value

    @metric("acct.control.file_size_threshold", U64, DISCRETE, BYTE)
    def acct_size_threshold(self) -> int:
        return self.acct.size_threshold

    @acct_size_threshold.store
    def _store_acct_size_threshold(self, value: int) -> None:
        self._root_or_refuse()
        self.acct.size_threshold = value

    @metric("acct.control.lifetime", U32, DISCRETE, SEC)
    def acct_lifetime(self) -> int:
        return self.acct.lifetime

    @acct_lifetime.store
    def _store_acct_lifetime(self, value: int) -> None:
        self._root_or_refuse()
        self.acct.lifetime = value

    @metric("acct.control.refresh", U32, DISCRETE, SEC)
    def acct_refresh(self) -> int:
        return self.acct.refresh_interval

    @acct_refresh.store
    def _store_acct_refresh(self, value: int) -> None:
        """A new interval restarts pmdaproc's timer, which reopens the file; 0 is refused."""
        self._root_or_refuse()
        if value <= 0:
            raise PMError(PM_ERR_PERMISSION)
        self.acct.refresh_interval = value
        self.acct.timer_at = time.time()
        self.acct.reopen()

    @metric("acct.control.enable_acct", U32, DISCRETE)
    def acct_enable(self) -> int:
        return self.acct.enabled

    @acct_enable.store
    def _store_acct_enable(self, value: int) -> None:
        self._root_or_refuse()
        changed = bool(self.acct.enabled) != bool(value)
        self.acct.enabled = value
        if changed:
            self.acct.reopen()
