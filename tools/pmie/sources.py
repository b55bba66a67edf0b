"""Where a rule's metrics come from: an archive, or a pmcd reached live.

The binder asks a source the same questions either way (a metric's PMID and
descriptor, an instance domain, one instance's name) and quotes its
``where()`` in messages, as pmie's findsource() words it.  A live source is
one connection string (``-h HOST`` or a ``:host`` qualifier); it may be down,
and then it says so once through :class:`HostStates`, as pmie's
host_state_changed() does, and is tried again later.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.context import Context, Fetched

PROG = "pmie"

# host_state_changed's states
INIT, FAILINIT, RECONN, LOSTCONN = "init", "failinit", "reconn", "lostconn"
#: what each change of state says (pmNotifyErr at LOG_INFO); RECONN only after a failure
STATE_WORDS = {
    FAILINIT: "Cannot connect to pmcd {}\n",
    RECONN: "Re-established connection to pmcd {}\n",
    LOSTCONN: "Lost connection to pmcd {}\n",
}


class ArchiveSource:
    """An archive: its host is the label's, and what it lacks never turns up later."""

    live = False

    def __init__(self, ctx: ArchiveContext, path: str) -> None:
        self.ctx = ctx
        self.conn = path
        self.hname = ctx.archive.label.hostname

    def where(self) -> str:
        return f"archive {self.conn} (host {self.hname})"

    def context(self) -> ArchiveContext:
        return self.ctx

    def instances(self, indom: int) -> list[tuple[int, str]]:
        return self.ctx.instances_archive(indom)

    def instance_name(self, indom: int, inst: int) -> str:
        return self.ctx.instance_name_archive(indom, inst)


class HostStates:
    """host_state_changed: each connection string's last state, and what a change says."""

    def __init__(self, notify: Callable[[str, str], None], quiet: bool) -> None:
        self.notify = notify
        self.quiet = quiet
        self.states: dict[str, str] = {}

    def changed(self, conn: str, state: str) -> bool:
        old = self.states.get(conn, INIT)
        if old == state:
            return False
        if not self.quiet and state in STATE_WORDS and (state != RECONN or old != INIT):
            self.notify("Info", STATE_WORDS[state].format(conn))
        self.states[conn] = state
        return True


class LiveSource:
    """A pmcd at one connection string, connected on demand (newContext)."""

    live = True

    def __init__(self, conn: str, states: HostStates, warn: Callable[[str], None]) -> None:
        self.conn = conn
        self.states = states
        self.warn = warn
        self.hname = ""  # (known once connected: pmGetContextHostName)
        self.ctx: Context | None = None
        self.down = False  # a fetch failed: reconnect before the next one

    def where(self) -> str:
        return f"pmcd {self.conn} (host {self.hname})"

    def connect(self) -> bool:
        """newContext: open the connection (True), else say why once and give up for now."""
        if self.ctx is not None:
            return True
        from purepcp.pmapi.context import Context
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.hostname import context_hostname

        try:
            ctx = Context.host(self.conn)
        except (PMError, OSError) as exc:
            if self.states.changed(self.conn, FAILINIT):
                self.warn(f"{PROG}: warning - pmcd via {self.conn} {_why(exc)}\n")
            return False
        self.ctx = ctx
        self.hname = context_hostname(ctx)
        from .operators import CLOCK

        CLOCK.perf.pmcd_host = self.hname  # (the pmcd last connected to, as newContext)
        return True

    def context(self) -> Any:
        return self.ctx

    def instances(self, indom: int) -> list[tuple[int, str]]:
        assert self.ctx is not None
        return self.ctx.instances(indom)

    def instance_name(self, indom: int, inst: int) -> str:
        assert self.ctx is not None
        return self.ctx.instance_name(indom, inst)

    def fetch(self, pmids: list[int]) -> Fetched:
        assert self.ctx is not None
        return self.ctx.fetch(pmids)

    def lost(self) -> None:
        """A fetch failed: the connection is down until a reconnect works."""
        self.down = True
        self.states.changed(self.conn, LOSTCONN)

    def reconnect(self) -> bool:
        """pmReconnectContext: one try at the pmcd again."""
        from purepcp.pmapi.errors import PMError

        assert self.ctx is not None
        try:
            self.ctx.source.ensure()
        except (PMError, OSError):
            return False
        self.down = False
        self.states.changed(self.conn, RECONN)
        return True

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.close()
            self.ctx = None


def _why(exc: BaseException) -> str:
    """newContext's words for a pmcd that cannot be reached."""
    import errno

    from purepcp.pmapi.errors import PM_ERR_CONNLIMIT, PM_ERR_PERMISSION, PMError

    code = exc.code if isinstance(exc, PMError) else -(getattr(exc, "errno", 0) or 0)
    if code == -errno.ECONNREFUSED:
        return "does not respond"
    if code == PM_ERR_PERMISSION:
        return "does not permit delivery of metrics to the local host"
    if code == PM_ERR_CONNLIMIT:
        return "has exceeded its connection limit"
    return "is unreachable"
