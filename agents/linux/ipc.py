"""ipc.{sem,msg,shm}.*: System V IPC limits, usage and the table of each kind of object.

pmdalinux (ipc.c) gets the limits from the IPC_INFO command of semctl, msgctl
and shmctl, the usage from SEM_INFO, MSG_INFO and SHM_INFO, and each object from
/proc/sysvipc/{shm,msg,sem}.  Python has no *ctl calls, so:

- the limits (clusters 21, 22, 23) and the shared memory usage (cluster 56) come
  from those calls through ctypes, because no file gives all their numbers: many
  limits are the kernel's compiled-in constants (SEMMAP, SEMVMX, MSGSSZ, MSGSEG,
  SHMMIN, ...) and the swap counters of SHM_INFO exist nowhere else;
- the semaphore and message usage (clusters 61, 62) are what SEM_INFO and
  MSG_INFO count, summed from /proc/sysvipc/sem and msg: the number of objects,
  and the total semaphores, messages and bytes;
- the tables (clusters 64, 65, 66) are read from /proc/sysvipc, one instance per
  object named by its id, numbered 0, 1, 2, ... in the order first seen.

Every value is a 32-bit unsigned number or a string, as pmdalinux stores them
(so a 64-bit limit or segment size keeps its low 32 bits).  When a call fails or
a file is missing, its metrics have no value.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import pwd
from collections.abc import Callable
from typing import Any

from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .instids import InstanceIds
from .records import BYTE, DISCRETE, INSTANT, KBYTE, NONE, STRING, U32, MetricInfo, records_of

#: pmdalinux's instance domain serials: shared memory segments, message queues, semaphore sets.
SHM_INDOM, MSG_INDOM, SEM_INDOM = 28, 29, 30

# Rows: (name, cluster, item, type, indom, semantics, units, source).
_ROWS: tuple[tuple[str, int, int, Any, int | None, Any, Any, str], ...] = (
    ("ipc.sem.max_semmap", 21, 0, U32, None, DISCRETE, NONE, "semctl IPC_INFO semmap"),
    ("ipc.sem.max_semid", 21, 1, U32, None, DISCRETE, NONE, "semctl IPC_INFO semmni"),
    ("ipc.sem.max_sem", 21, 2, U32, None, DISCRETE, NONE, "semctl IPC_INFO semmns"),
    ("ipc.sem.num_undo", 21, 3, U32, None, DISCRETE, NONE, "semctl IPC_INFO semmnu"),
    ("ipc.sem.max_perid", 21, 4, U32, None, DISCRETE, NONE, "semctl IPC_INFO semmsl"),
    ("ipc.sem.max_ops", 21, 5, U32, None, DISCRETE, NONE, "semctl IPC_INFO semopm"),
    ("ipc.sem.max_undoent", 21, 6, U32, None, DISCRETE, NONE, "semctl IPC_INFO semume"),
    ("ipc.sem.sz_semundo", 21, 7, U32, None, DISCRETE, NONE, "semctl IPC_INFO semusz"),
    ("ipc.sem.max_semval", 21, 8, U32, None, DISCRETE, NONE, "semctl IPC_INFO semvmx"),
    ("ipc.sem.max_exit", 21, 9, U32, None, DISCRETE, NONE, "semctl IPC_INFO semaem"),
    ("ipc.sem.used_sem", 61, 0, U32, None, INSTANT, NONE, "/proc/sysvipc/sem: sets"),
    ("ipc.sem.tot_sem", 61, 1, U32, None, INSTANT, NONE, "/proc/sysvipc/sem: sum of nsems"),
    ("ipc.sem.key", 66, 0, STRING, SEM_INDOM, DISCRETE, NONE, "/proc/sysvipc/sem key, 0x%08x"),
    ("ipc.sem.owner", 66, 1, STRING, SEM_INDOM, DISCRETE, NONE, "/proc/sysvipc/sem uid's name"),
    ("ipc.sem.perms", 66, 2, U32, SEM_INDOM, INSTANT, NONE, "/proc/sysvipc/sem perms"),
    ("ipc.sem.nsems", 66, 3, U32, SEM_INDOM, INSTANT, NONE, "/proc/sysvipc/sem nsems"),
    ("ipc.msg.sz_pool", 22, 0, U32, None, DISCRETE, KBYTE, "msgctl IPC_INFO msgpool"),
    ("ipc.msg.mapent", 22, 1, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgmap"),
    ("ipc.msg.max_msgsz", 22, 2, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgmax"),
    ("ipc.msg.max_defmsgq", 22, 3, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgmnb"),
    ("ipc.msg.max_msgqid", 22, 4, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgmni"),
    ("ipc.msg.max_msgseg", 22, 5, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgssz (sic)"),
    ("ipc.msg.num_smsghdr", 22, 6, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgtql"),
    ("ipc.msg.max_seg", 22, 7, U32, None, DISCRETE, NONE, "msgctl IPC_INFO msgseg"),
    ("ipc.msg.used_queues", 62, 0, U32, None, INSTANT, NONE, "/proc/sysvipc/msg: queues"),
    ("ipc.msg.tot_msg", 62, 1, U32, None, INSTANT, NONE, "/proc/sysvipc/msg: sum of qnum"),
    ("ipc.msg.tot_bytes", 62, 2, U32, None, INSTANT, BYTE, "/proc/sysvipc/msg: sum of cbytes"),
    ("ipc.msg.key", 65, 0, STRING, MSG_INDOM, DISCRETE, NONE, "/proc/sysvipc/msg key, 0x%08x"),
    ("ipc.msg.owner", 65, 1, STRING, MSG_INDOM, DISCRETE, NONE, "/proc/sysvipc/msg uid's name"),
    ("ipc.msg.perms", 65, 2, U32, MSG_INDOM, INSTANT, NONE, "/proc/sysvipc/msg perms"),
    ("ipc.msg.msgsz", 65, 3, U32, MSG_INDOM, DISCRETE, BYTE, "/proc/sysvipc/msg cbytes"),
    ("ipc.msg.messages", 65, 4, U32, MSG_INDOM, INSTANT, NONE, "/proc/sysvipc/msg qnum"),
    ("ipc.msg.last_send_pid", 65, 5, U32, MSG_INDOM, INSTANT, BYTE, "/proc/sysvipc/msg lspid"),
    ("ipc.msg.last_recv_pid", 65, 6, U32, MSG_INDOM, INSTANT, NONE, "/proc/sysvipc/msg lrpid"),
    ("ipc.shm.max_segsz", 23, 0, U32, None, DISCRETE, BYTE, "shmctl IPC_INFO shmmax"),
    ("ipc.shm.min_segsz", 23, 1, U32, None, DISCRETE, BYTE, "shmctl IPC_INFO shmmin"),
    ("ipc.shm.max_seg", 23, 2, U32, None, DISCRETE, NONE, "shmctl IPC_INFO shmmni"),
    ("ipc.shm.max_segproc", 23, 3, U32, None, DISCRETE, NONE, "shmctl IPC_INFO shmseg"),
    ("ipc.shm.max_shmsys", 23, 4, U32, None, DISCRETE, NONE, "shmctl IPC_INFO shmall"),
    ("ipc.shm.tot", 56, 0, U32, None, INSTANT, BYTE, "shmctl SHM_INFO shm_tot pages"),
    ("ipc.shm.rss", 56, 1, U32, None, INSTANT, BYTE, "shmctl SHM_INFO shm_rss pages"),
    ("ipc.shm.swp", 56, 2, U32, None, INSTANT, BYTE, "shmctl SHM_INFO shm_swp pages"),
    ("ipc.shm.used_ids", 56, 3, U32, None, INSTANT, NONE, "shmctl SHM_INFO used_ids"),
    ("ipc.shm.swap_attempts", 56, 4, U32, None, INSTANT, NONE, "shmctl SHM_INFO"),
    ("ipc.shm.swap_successes", 56, 5, U32, None, INSTANT, NONE, "shmctl SHM_INFO"),
    ("ipc.shm.key", 64, 0, STRING, SHM_INDOM, DISCRETE, NONE, "/proc/sysvipc/shm key, 0x%08x"),
    ("ipc.shm.owner", 64, 1, STRING, SHM_INDOM, DISCRETE, NONE, "/proc/sysvipc/shm uid's name"),
    ("ipc.shm.perms", 64, 2, U32, SHM_INDOM, INSTANT, NONE, "/proc/sysvipc/shm perms"),
    ("ipc.shm.segsz", 64, 3, U32, SHM_INDOM, DISCRETE, BYTE, "/proc/sysvipc/shm size"),
    ("ipc.shm.nattch", 64, 4, U32, SHM_INDOM, INSTANT, NONE, "/proc/sysvipc/shm nattch"),
    ("ipc.shm.status", 64, 5, STRING, SHM_INDOM, INSTANT, NONE, "/proc/sysvipc/shm perms flags"),
    ("ipc.shm.creator_pid", 64, 6, U32, SHM_INDOM, DISCRETE, NONE, "/proc/sysvipc/shm cpid"),
    ("ipc.shm.last_access_pid", 64, 7, U32, SHM_INDOM, INSTANT, NONE, "/proc/sysvipc/shm lpid"),
)

METRICS: tuple[MetricInfo, ...] = records_of(_ROWS)

_U32 = 0xFFFFFFFF

# --- the *ctl calls -------------------------------------------------------------------------

IPC_INFO, MSG_INFO, SHM_INFO, SEM_INFO = 3, 12, 14, 19


class SemInfo(ctypes.Structure):
    """struct seminfo, the reply of semctl IPC_INFO and SEM_INFO."""

    _fields_ = [
        (name, ctypes.c_int)
        for name in (
            "semmap",
            "semmni",
            "semmns",
            "semmnu",
            "semmsl",
            "semopm",
            "semume",
            "semusz",
            "semvmx",
            "semaem",
        )
    ]


class MsgInfo(ctypes.Structure):
    """struct msginfo, the reply of msgctl IPC_INFO and MSG_INFO."""

    _fields_ = [
        *(
            (name, ctypes.c_int)
            for name in ("msgpool", "msgmap", "msgmax", "msgmnb", "msgmni", "msgssz", "msgtql")
        ),
        ("msgseg", ctypes.c_ushort),
    ]


class ShmLimits(ctypes.Structure):
    """struct shminfo, the reply of shmctl IPC_INFO."""

    _fields_ = [
        (name, ctypes.c_ulong) for name in ("shmmax", "shmmin", "shmmni", "shmseg", "shmall")
    ]


class ShmInfo(ctypes.Structure):
    """struct shm_info, the reply of shmctl SHM_INFO (sizes in pages)."""

    _fields_ = [
        ("used_ids", ctypes.c_int),
        *(
            (name, ctypes.c_ulong)
            for name in ("shm_tot", "shm_rss", "shm_swp", "swap_attempts", "swap_successes")
        ),
    ]


_libc: Any = None
#: The shared reply buffer (larger than any reply, as pmdalinux's union of them).
_buffer: Any = None
#: (libc function, its ctypes arguments ending with the buffer), by (call, arguments).
_calls: dict[tuple[str, tuple[int, ...]], tuple[Any, tuple[Any, ...]]] = {}


def _ctl(call: str, *args: int, reply: type[ctypes.Structure]) -> Any:
    """The REPLY structure libc's CALL(*ARGS, buffer) fills, or None if the call fails.

    The buffer is larger than any reply (as pmdalinux's union of them), since
    the kernel's idea of a structure can outgrow the one declared here; it is
    zeroed before each call, and the call's function and arguments are made once.
    """
    global _libc, _buffer
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _buffer = ctypes.create_string_buffer(512)
    prepared = _calls.get((call, args))
    if prepared is None:
        pointer = ctypes.c_void_p(ctypes.addressof(_buffer))
        prepared = getattr(_libc, call), (*(ctypes.c_int(a) for a in args), pointer)
        _calls[call, args] = prepared
    function, arguments = prepared
    ctypes.memset(_buffer, 0, ctypes.sizeof(_buffer))
    if function(*arguments) < 0:
        return None
    return reply.from_buffer_copy(_buffer)


def sem_limits() -> dict[str, int] | None:
    """Cluster 21 from semctl(0, 0, IPC_INFO), or None if the call fails."""
    info = _ctl("semctl", 0, 0, IPC_INFO, reply=SemInfo)
    if info is None:
        return None
    fields = ("semmap", "semmni", "semmns", "semmnu", "semmsl")
    fields += ("semopm", "semume", "semusz", "semvmx", "semaem")
    return {name: getattr(info, f) & _U32 for name, f in zip(_names(21), fields, strict=True)}


def msg_limits() -> dict[str, int] | None:
    """Cluster 22 from msgctl(0, IPC_INFO), or None if the call fails."""
    info = _ctl("msgctl", 0, IPC_INFO, reply=MsgInfo)
    if info is None:
        return None
    fields = ("msgpool", "msgmap", "msgmax", "msgmnb", "msgmni", "msgssz", "msgtql", "msgseg")
    return {name: getattr(info, f) & _U32 for name, f in zip(_names(22), fields, strict=True)}


def shm_limits() -> dict[str, int] | None:
    """Cluster 23 from shmctl(0, IPC_INFO), or None if the call fails."""
    info = _ctl("shmctl", 0, IPC_INFO, reply=ShmLimits)
    if info is None:
        return None
    fields = ("shmmax", "shmmin", "shmmni", "shmseg", "shmall")
    return {name: getattr(info, f) & _U32 for name, f in zip(_names(23), fields, strict=True)}


def shm_usage(pageshift: int) -> dict[str, int] | None:
    """Cluster 56 from shmctl(0, SHM_INFO), pages turned to bytes; None if the call fails."""
    info = _ctl("shmctl", 0, SHM_INFO, reply=ShmInfo)
    if info is None:
        return None
    return {
        "ipc.shm.tot": (info.shm_tot << pageshift) & _U32,
        "ipc.shm.rss": (info.shm_rss << pageshift) & _U32,
        "ipc.shm.swp": (info.shm_swp << pageshift) & _U32,
        "ipc.shm.used_ids": info.used_ids & _U32,
        "ipc.shm.swap_attempts": info.swap_attempts & _U32,
        "ipc.shm.swap_successes": info.swap_successes & _U32,
    }


@functools.cache
def _names(cluster: int) -> tuple[str, ...]:
    """The metric names of CLUSTER, in item order."""
    return tuple(row[0] for row in sorted(_ROWS, key=lambda r: r[2]) if row[1] == cluster)


# --- /proc/sysvipc (sans-IO) -----------------------------------------------------------------

#: One object of a /proc/sysvipc file: {column name: number}.
Row = dict[str, int]

#: The columns of each file that pmdalinux reads, and how many it needs on a line.
COLUMNS: dict[str, tuple[tuple[str, ...], int]] = {
    "shm": (("key", "id", "perms", "size", "cpid", "lpid", "nattch", "uid"), 8),
    "msg": (("key", "id", "perms", "cbytes", "qnum", "lspid", "lrpid", "uid"), 8),
    "sem": (("key", "id", "perms", "nsems", "uid"), 5),
}


def parse_sysvipc(data: bytes, kind: str) -> list[Row]:
    """The objects of /proc/sysvipc/KIND after its header line, in the file's order.

    The key is signed decimal, the permissions octal, the rest unsigned decimal
    (kept to 32 bits); a line with too few numbers is skipped.
    """
    columns, needed = COLUMNS[kind]
    rows = []
    for line in data.splitlines()[1:]:
        words = line.split(None, len(columns))[: len(columns)]
        if len(words) < needed:
            continue
        try:
            row = {
                name: int(word, 8 if name == "perms" else 10) & _U32
                for name, word in zip(columns, words, strict=False)
            }
        except ValueError:
            continue
        rows.append(row)
    return rows


def key_text(key: int) -> str:
    """A key as pmdalinux shows it: 0x and eight hex digits of its 32 bits."""
    return f"0x{key & _U32:08x}"


def perms_number(mode: int) -> int:
    """The access bits written in octal and read back as decimal (0640 -> 640), as pmdalinux."""
    return int(f"{mode & 0o777:o}")


SHM_DEST, SHM_LOCKED = 0o1000, 0o2000


def shm_status(mode: int) -> str:
    """ "dest", "locked", both or "" from a segment's mode flags."""
    return " ".join(
        word for flag, word in ((SHM_DEST, "dest"), (SHM_LOCKED, "locked")) if mode & flag
    )


def owner_name(uid: int) -> str:
    """The user name of UID, or UID in decimal when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return str(uid)


#: The table metrics of each kind: (name, value from a row).
TABLE_VALUES: dict[str, tuple[tuple[str, Callable[[Row], Any]], ...]] = {
    "shm": (
        ("ipc.shm.key", lambda r: key_text(r["key"])),
        ("ipc.shm.owner", lambda r: owner_name(r["uid"])),
        ("ipc.shm.perms", lambda r: perms_number(r["perms"])),
        ("ipc.shm.segsz", lambda r: r["size"]),
        ("ipc.shm.nattch", lambda r: r["nattch"]),
        ("ipc.shm.status", lambda r: shm_status(r["perms"])),
        ("ipc.shm.creator_pid", lambda r: r["cpid"]),
        ("ipc.shm.last_access_pid", lambda r: r["lpid"]),
    ),
    "msg": (
        ("ipc.msg.key", lambda r: key_text(r["key"])),
        ("ipc.msg.owner", lambda r: owner_name(r["uid"])),
        ("ipc.msg.perms", lambda r: perms_number(r["perms"])),
        ("ipc.msg.msgsz", lambda r: r["cbytes"]),
        ("ipc.msg.messages", lambda r: r["qnum"]),
        ("ipc.msg.last_send_pid", lambda r: r["lspid"]),
        ("ipc.msg.last_recv_pid", lambda r: r["lrpid"]),
    ),
    "sem": (
        ("ipc.sem.key", lambda r: key_text(r["key"])),
        ("ipc.sem.owner", lambda r: owner_name(r["uid"])),
        ("ipc.sem.perms", lambda r: perms_number(r["perms"])),
        ("ipc.sem.nsems", lambda r: r["nsems"]),
    ),
}


class Ipc(LinuxBase):
    """System V IPC: limits and usage by the *ctl calls, objects from /proc/sysvipc."""

    ipc_shm_indom = InDom(SHM_INDOM)
    ipc_msg_indom = InDom(MSG_INDOM)
    ipc_sem_indom = InDom(SEM_INDOM)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Object instances numbered as first seen (pmdalinux never reloads its saved ids)."""
        super().__init__(*args, **kwargs)
        self._ipc_ids = {kind: InstanceIds() for kind in COLUMNS}
        self._ipc_pageshift = self.pagesize.bit_length() - 1

    def _ipc_objects(self, kind: str) -> dict[int, Row] | None:
        """{inst: row} of /proc/sysvipc/KIND, read once per fetch; None if unreadable."""
        return self._once(f"ipc_{kind}", lambda: self._ipc_read(kind))

    def _ipc_read(self, kind: str) -> dict[int, Row] | None:
        """Read /proc/sysvipc/KIND, giving new objects (by id) their instance ids."""
        data = self.proc.read(f"/proc/sysvipc/{kind}")
        if data is None:
            return None
        ids = self._ipc_ids[kind]
        objects: dict[int, Row] = {}
        for row in parse_sysvipc(data, kind):
            objects.setdefault(ids(str(row["id"])), row)  # a repeated id keeps its first line
        return objects

    def _ipc_instances(self, indom: InDom, kind: str) -> dict[int, str] | None:
        """The objects of /proc/sysvipc/KIND, named by id."""
        objects = self._ipc_objects(kind) or {}
        return self._current(indom, {inst: str(row["id"]) for inst, row in objects.items()})

    @ipc_shm_indom.refresh
    def _ipc_shm_instances(self) -> dict[int, str] | None:
        """Shared memory segments by id."""
        return self._ipc_instances(self.ipc_shm_indom, "shm")

    @ipc_msg_indom.refresh
    def _ipc_msg_instances(self) -> dict[int, str] | None:
        """Message queues by id."""
        return self._ipc_instances(self.ipc_msg_indom, "msg")

    @ipc_sem_indom.refresh
    def _ipc_sem_instances(self) -> dict[int, str] | None:
        """Semaphore sets by id."""
        return self._ipc_instances(self.ipc_sem_indom, "sem")

    def _ipc_table(self, kind: str) -> dict[str, Any]:
        """The table metrics of KIND asked for, {name: {inst: value}}."""
        objects = self._ipc_objects(kind)
        if objects is None:
            return {}
        wanted = self._wanted
        return {
            name: {inst: value(row) for inst, row in objects.items()}
            for name, value in TABLE_VALUES[kind]
            if name in wanted
        }

    @refresh(64)
    def _ipc_refresh_shm_table(self) -> dict[str, Any]:
        """Cluster 64: each shared memory segment."""
        return self._ipc_table("shm")

    @refresh(65)
    def _ipc_refresh_msg_table(self) -> dict[str, Any]:
        """Cluster 65: each message queue."""
        return self._ipc_table("msg")

    @refresh(66)
    def _ipc_refresh_sem_table(self) -> dict[str, Any]:
        """Cluster 66: each semaphore set."""
        return self._ipc_table("sem")

    @refresh(61)
    def _ipc_refresh_sem_usage(self) -> dict[str, Any]:
        """Cluster 61: the semaphore sets and their semaphores, as SEM_INFO counts them."""
        objects = self._ipc_objects("sem")
        if objects is None:
            return {}
        return {
            "ipc.sem.used_sem": len(objects) & _U32,
            "ipc.sem.tot_sem": sum(row["nsems"] for row in objects.values()) & _U32,
        }

    @refresh(62)
    def _ipc_refresh_msg_usage(self) -> dict[str, Any]:
        """Cluster 62: the queues, their messages and bytes, as MSG_INFO counts them."""
        objects = self._ipc_objects("msg")
        if objects is None:
            return {}
        return {
            "ipc.msg.used_queues": len(objects) & _U32,
            "ipc.msg.tot_msg": sum(row["qnum"] for row in objects.values()) & _U32,
            "ipc.msg.tot_bytes": sum(row["cbytes"] for row in objects.values()) & _U32,
        }

    @refresh(21)
    def _ipc_refresh_sem_limits(self) -> dict[str, Any]:
        """Cluster 21: semaphore limits."""
        return sem_limits() or {}

    @refresh(22)
    def _ipc_refresh_msg_limits(self) -> dict[str, Any]:
        """Cluster 22: message queue limits."""
        return msg_limits() or {}

    @refresh(23)
    def _ipc_refresh_shm_limits(self) -> dict[str, Any]:
        """Cluster 23: shared memory limits."""
        return shm_limits() or {}

    @refresh(56)
    def _ipc_refresh_shm_usage(self) -> dict[str, Any]:
        """Cluster 56: shared memory in use, in bytes, and the segment count."""
        return shm_usage(self._ipc_pageshift) or {}
