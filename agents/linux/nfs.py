"""rpc.*, nfs.*, nfs3.*, nfs4.* (cluster 7) and fchost.*, hinv.nfchost (cluster 91).

Cluster 7 reads the Sun RPC statistics of the NFS client (/proc/net/rpc/nfs),
of the NFS server (/proc/net/rpc/nfsd) and the nfsd thread pools
(/proc/fs/nfsd/pool_threads and pool_stats); cluster 91 reads the statistics
directory of each fibre channel host in /sys/class/fc_host.  Rows, items and
instance names come from the metric and instance tables of pmdalinux's pmda.c
at PCP 6.0.3; parsing follows proc_net_rpc.c, proc_fs_nfsd.c and
sysfs_fchost.c, with their quirks (see `SERVER_FIELDS`, `FCHOST_FILES` and
docs/linux-agent-notes.md):

- a metric of a file that cannot be read has no value, but rpc.server.ra_* are
  0 even without /proc/net/rpc/nfsd (pmdalinux checks no file for them);
- rpc.server.nettcpconn shows the server's TCP request count (nettcpcnt);
- fchost.out.frames shows the received words * 4 and fchost.in.bytes the
  transmitted frames (pmdalinux stores each sysfs file by its row in its file
  table, not by the metric the row names).

The parsers are sans-IO (bytes in, numbers out); `Nfs` does the reading.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.cnumbers import scan_int, scan_ints, strtoul, strtoul_value
from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .instids import InstanceIds
from .records import (
    BYTE,
    COUNT,
    COUNTER,
    DISCRETE,
    INSTANT,
    NONE,
    U32,
    U64,
    MetricInfo,
)

#: pmdalinux's clusters: CLUSTER_NET_NFS and CLUSTER_FCHOST.
CLUSTER = 7
FCHOST_CLUSTER = 91
#: pmdalinux's instance domain serials (linux.h).
NFS_INDOM, NFS3_INDOM, NFS4_CLI_INDOM, NFS4_SVR_INDOM, FCHOST_INDOM = 7, 8, 14, 15, 39

_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1

CLIENT_FILE = "/proc/net/rpc/nfs"
SERVER_FILE = "/proc/net/rpc/nfsd"
POOL_THREADS_FILE = "/proc/fs/nfsd/pool_threads"
POOL_STATS_FILE = "/proc/fs/nfsd/pool_stats"
FCHOST_DIR = "/sys/class/fc_host"


def _words(text: str) -> tuple[str, ...]:
    """The words of TEXT: a table of names written as one string."""
    return tuple(text.split())


# --- the operation instance domains (pmdalinux's names, ids from the first one on) ----------

#: NFS_INDOM: NFSv2 procedures, ids 0..17.
NFS2_OPS = _words(
    "null getattr setattr root lookup readlink read wrcache write create remove rename link "
    "symlink mkdir rmdir readdir statfs"
)
#: NFS3_INDOM: NFSv3 procedures, ids 0..21.
NFS3_OPS = _words(
    "null getattr setattr lookup access readlink read write create mkdir symlink mknod remove "
    "rmdir rename link readdir readdir+ statfs fsinfo pathconf commit"
)
#: NFS4_CLI_INDOM: NFSv4, 4.1 and 4.2 client operations, ids 0..55.
NFS4_CLIENT_OPS = _words(
    "null read write commit open open_conf open_noat open_dgrd close setattr fsinfo renew "
    "setclntid confirm lock lockt locku access getattr lookup lookup_root remove rename link "
    "symlink create pathconf statfs readlink readdir server_caps delegreturn getacl setacl "
    "fs_locations rel_lkowner secinfo fsid_present exchange_id create_ses destroy_ses sequence "
    "get_lease_t reclaim_comp layoutget getdevinfo layoutcommit secinfononam test_stateid "
    "free_stateid getdevlist bind_ses destroy_clntid seek allocate deallocate"
)
#: NFS4_SVR_INDOM: NFSv4 server operations by opcode + 1, ids 1..71 (no id 0).
NFS4_SERVER_OPS = _words(
    "op0-unused op1-unused op2-future access close commit create delegpurge delegreturn getattr "
    "getfh link lock lockt locku lookup lookup_root nverify open openattr open_conf open_dgrd "
    "putfh putpubfh putrootfh read readdir readlink remove rename renew restorefh savefh "
    "secinfo setattr setcltid setcltidconf verify write rellockowner bc_ctl bind_conn "
    "exchange_id create_ses destroy_ses free_stateid getdirdeleg getdevinfo getdevlist "
    "layoutcommit layoutget layoutreturn secinfononam sequence set_ssv test_stateid want_deleg "
    "destroy_clid reclaim_comp allocate copy copy_notify deallocate io_advise layouterror "
    "layoutstats offload_cancel offload_status read_plus seek write_same"
)
NFS4_SERVER_FIRST = 1

# --- what each /proc/net/rpc line gives ------------------------------------------------------

#: A line read like sscanf("KEY %u %u ..."): its key and the counters it fills, in order.
ScanLine = tuple[bytes, tuple[str, ...]]
#: A line read with strtok: its key, the operation table it fills, and how many it takes.
OpsLine = tuple[bytes, str, int]

_NET = ("netcnt", "netudpcnt", "nettcpcnt", "nettcpconn")

#: /proc/net/rpc/nfs, tried in this order against the start of each line (first match wins).
CLIENT_LINES: tuple[ScanLine | OpsLine, ...] = (
    (b"net", _NET),
    (b"rpc", ("rpccnt", "rpcretrans", "rpcauthrefresh")),
    (b"proc2", "proc2", len(NFS2_OPS)),
    (b"proc3", "proc3", len(NFS3_OPS)),
    (b"proc4", "proc4", len(NFS4_CLIENT_OPS)),
)

_RA_DEPTHS = tuple(f"ra_depth{i}" for i in range(10))

#: /proc/net/rpc/nfsd, in pmdalinux's order.  An "rc" line of 9 numbers (old kernels)
#: also fills fh_*; current kernels write 3 and a later "fh" line sets fh_stale and
#: fh_lookup.  The "proc4" line's NULL count is not kept: no metric shows it.
SERVER_LINES: tuple[ScanLine | OpsLine, ...] = (
    (
        b"rc",
        (
            *("rchits", "rcmisses", "rcnocache", "fh_cached", "fh_valid", "fh_fixup"),
            *("fh_lookup", "fh_stale", "fh_concurrent"),
        ),
    ),
    (b"fh", ("fh_stale", "fh_lookup", "fh_anon", "fh_nocache_dir", "fh_nocache_nondir")),
    (b"io", ("io_read", "io_write")),
    (b"th", ("th_cnt", "th_fullcnt")),
    (b"ra", ("ra_size", *_RA_DEPTHS, "ra_misses")),
    (b"net", _NET),
    (b"rpc", ("rpccnt", "rpcerr", "rpcbadfmt", "rpcbadauth", "rpcbadclnt")),
    (b"proc2", "proc2", len(NFS2_OPS)),
    (b"proc3", "proc3", len(NFS3_OPS)),
    (b"proc4ops", "proc4", len(NFS4_SERVER_OPS)),
    (b"proc4", "", 0),
)

# --- the metric tables ---------------------------------------------------------------------

#: rpc.client.SUFFIX: (suffix, item, counter it shows).  Counters with count units.
CLIENT_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("rpccnt", 20, "rpccnt"),
    ("rpcretrans", 21, "rpcretrans"),
    ("rpcauthrefresh", 22, "rpcauthrefresh"),
    ("netcnt", 24, "netcnt"),
    ("netudpcnt", 25, "netudpcnt"),
    ("nettcpcnt", 26, "nettcpcnt"),
    ("nettcpconn", 27, "nettcpconn"),
)

#: rpc.server.SUFFIX: (suffix, item, counter it shows, semantics, units).  nettcpconn
#: shows nettcpcnt as in pmdalinux's metric table; ra_hits is the sum of the ten depths.
SERVER_FIELDS: tuple[tuple[str, int, str, Any, Any], ...] = (
    ("rpccnt", 30, "rpccnt", COUNTER, COUNT),
    ("rpcerr", 31, "rpcerr", COUNTER, COUNT),
    ("rpcbadfmt", 32, "rpcbadfmt", COUNTER, COUNT),
    ("rpcbadauth", 33, "rpcbadauth", COUNTER, COUNT),
    ("rpcbadclnt", 34, "rpcbadclnt", COUNTER, COUNT),
    ("rchits", 35, "rchits", COUNTER, COUNT),
    ("rcmisses", 36, "rcmisses", COUNTER, COUNT),
    ("rcnocache", 37, "rcnocache", COUNTER, COUNT),
    ("fh_cached", 38, "fh_cached", COUNTER, COUNT),
    ("fh_valid", 39, "fh_valid", COUNTER, COUNT),
    ("fh_fixup", 40, "fh_fixup", COUNTER, COUNT),
    ("fh_lookup", 41, "fh_lookup", COUNTER, COUNT),
    ("fh_stale", 42, "fh_stale", COUNTER, COUNT),
    ("fh_concurrent", 43, "fh_concurrent", COUNTER, COUNT),
    ("netcnt", 44, "netcnt", COUNTER, COUNT),
    ("netudpcnt", 45, "netudpcnt", COUNTER, COUNT),
    ("nettcpcnt", 46, "nettcpcnt", COUNTER, COUNT),
    ("nettcpconn", 47, "nettcpcnt", COUNTER, COUNT),
    ("fh_anon", 51, "fh_anon", COUNTER, COUNT),
    ("fh_nocache_dir", 52, "fh_nocache_dir", COUNTER, COUNT),
    ("fh_nocache_nondir", 53, "fh_nocache_nondir", COUNTER, COUNT),
    ("io_read", 54, "io_read", COUNTER, BYTE),
    ("io_write", 55, "io_write", COUNTER, BYTE),
    ("th_cnt", 56, "th_cnt", INSTANT, COUNT),
    ("th_fullcnt", 57, "th_fullcnt", COUNTER, COUNT),
    ("ra_size", 68, "ra_size", COUNTER, COUNT),
    ("ra_hits", 69, "ra_hits", COUNTER, COUNT),
    ("ra_misses", 70, "ra_misses", COUNTER, COUNT),
)
#: rpc.server.* metrics with a value (0) even when /proc/net/rpc/nfsd cannot be read.
ALWAYS_SERVER = frozenset({"ra_size", "ra_hits", "ra_misses"})

#: PREFIX.calls and PREFIX.reqs: (prefix, side, operation table, indom, ops, calls item,
#: reqs item).  calls is the sum of the table, reqs one value per operation.
OPS_ROWS: tuple[tuple[str, str, str, int, tuple[str, ...], int, int], ...] = (
    ("nfs.client", "client", "proc2", NFS_INDOM, NFS2_OPS, 1, 4),
    ("nfs.server", "server", "proc2", NFS_INDOM, NFS2_OPS, 50, 12),
    ("nfs3.client", "client", "proc3", NFS3_INDOM, NFS3_OPS, 60, 61),
    ("nfs3.server", "server", "proc3", NFS3_INDOM, NFS3_OPS, 62, 63),
    ("nfs4.client", "client", "proc4", NFS4_CLI_INDOM, NFS4_CLIENT_OPS, 64, 65),
    ("nfs4.server", "server", "proc4", NFS4_SVR_INDOM, NFS4_SERVER_OPS, 66, 67),
)
#: The first instance id of each operation indom.
FIRST_ID = {NFS_INDOM: 0, NFS3_INDOM: 0, NFS4_CLI_INDOM: 0, NFS4_SVR_INDOM: NFS4_SERVER_FIRST}

#: nfs.server.threads.SUFFIX: (suffix, item, type, semantics, field of `Threads`).
THREAD_FIELDS: tuple[tuple[str, int, Any, Any, str], ...] = (
    ("total", 71, U32, INSTANT, "threads"),
    ("pools", 72, U32, INSTANT, "pools"),
    ("requests", 73, U64, COUNTER, "arrived"),
    ("enqueued", 74, U64, COUNTER, "enqueued"),
    ("processed", 75, U64, COUNTER, "woken"),
    ("timedout", 76, U64, COUNTER, "timedout"),
)

#: The files of /sys/class/fc_host/HOST/statistics pmdalinux reads, as (file, left shift):
#: row N fills fchost item N (the quirk: rows 1 and 2 are words and frames, items 1 and 2
#: are out.frames and in.bytes).  A word is 4 bytes.
FCHOST_FILES: tuple[tuple[str, int], ...] = (
    ("rx_frames", 0),
    ("rx_words", 2),
    ("tx_frames", 0),
    ("tx_words", 2),
    ("lip_count", 0),
    ("nos_count", 0),
    ("error_frames", 0),
    ("dumped_frames", 0),
)
#: fchost.SUFFIX: (suffix, item, units); the value is row ITEM of FCHOST_FILES.
FCHOST_FIELDS: tuple[tuple[str, int, Any], ...] = (
    ("in.frames", 0, COUNT),
    ("out.frames", 1, COUNT),
    ("in.bytes", 2, BYTE),
    ("out.bytes", 3, BYTE),
    ("lip_count", 4, COUNT),
    ("nos_count", 5, COUNT),
    ("error_frames", 6, COUNT),
    ("dumped_frames", 7, COUNT),
)
NFCHOST_ITEM = 16


def _source_ops(side: str, table: str, calls: bool) -> str:
    """How a calls/reqs metric is computed, for the catalog."""
    path = CLIENT_FILE if side == "client" else SERVER_FILE
    line = "proc4ops" if side == "server" and table == "proc4" else table
    what = "sum of the counts" if calls else "one count per operation"
    return f'{path} "{line}" line: {what} (u32)'


#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = (
    *(
        MetricInfo(
            f"{prefix}.{kind}",
            CLUSTER,
            item,
            U32,
            None if kind == "calls" else indom,
            COUNTER,
            COUNT,
            source=_source_ops(side, table, kind == "calls"),
        )
        for prefix, side, table, indom, _, calls, reqs in OPS_ROWS
        for kind, item in (("calls", calls), ("reqs", reqs))
    ),
    *(
        MetricInfo(
            f"rpc.client.{suffix}",
            CLUSTER,
            item,
            U32,
            None,
            COUNTER,
            COUNT,
            source=f"{CLIENT_FILE}: {src}",
        )
        for suffix, item, src in CLIENT_FIELDS
    ),
    *(
        MetricInfo(
            f"rpc.server.{suffix}",
            CLUSTER,
            item,
            U32,
            None,
            sem,
            units,
            source=f"{SERVER_FILE}: {src}",
        )
        for suffix, item, src, sem, units in SERVER_FIELDS
    ),
    *(
        MetricInfo(
            f"nfs.server.threads.{suffix}",
            CLUSTER,
            item,
            type_,
            None,
            sem,
            COUNT,
            source=f"{POOL_THREADS_FILE} and {POOL_STATS_FILE}: {src}",
        )
        for suffix, item, type_, sem, src in THREAD_FIELDS
    ),
    *(
        MetricInfo(
            f"fchost.{suffix}",
            FCHOST_CLUSTER,
            item,
            U64,
            FCHOST_INDOM,
            COUNTER,
            units,
            source=f"{FCHOST_DIR}/HOST/statistics/{FCHOST_FILES[item][0]}"
            + (" * 4" if FCHOST_FILES[item][1] else ""),
        )
        for suffix, item, units in FCHOST_FIELDS
    ),
    MetricInfo(
        "hinv.nfchost",
        FCHOST_CLUSTER,
        NFCHOST_ITEM,
        U32,
        None,
        DISCRETE,
        NONE,
        source=f"number of hosts in {FCHOST_DIR} with a statistics directory",
    ),
)

# --- parsing ---------------------------------------------------------------------------------

_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def _lines(data: bytes) -> Iterator[bytes]:
    """DATA's lines with their newlines, as fgets returns them."""
    return (m.group(0) for m in _LINE.finditer(data))


@dataclass
class Rpc:
    """One side of /proc/net/rpc: counters by pmdalinux's field name and per-operation counts
    ("proc2", "proc3", "proc4"), all 32-bit, 0 where the file gave nothing."""

    counters: dict[str, int] = field(default_factory=dict)
    ops: dict[str, list[int]] = field(default_factory=dict)

    def counter(self, name: str) -> int:
        """A counter's value (0 if its line was missing)."""
        return self.counters.get(name, 0)


def parse_rpc(data: bytes, table: tuple[ScanLine | OpsLine, ...]) -> Rpc:
    """/proc/net/rpc/nfs or nfsd (per TABLE) as pmdalinux reads it: each line matched by its
    start against TABLE in order; later lines overwrite earlier ones' counters."""
    rpc = Rpc()
    for _, name, size in (row for row in table if len(row) == 3):
        if name:
            rpc.ops[name] = [0] * size
    for line in _lines(data):
        for row in table:
            if not line.startswith(row[0]):
                continue
            if len(row) == 2:
                key, names = row
                for counter, value in zip(
                    names, scan_ints(line[len(key) :], len(names)), strict=False
                ):
                    rpc.counters[counter] = value & _U32
            else:
                _, name, size = row
                if name:
                    tokens = [t for t in line.split(b" ") if t]  # strtok(" ")
                    for i, token in enumerate(tokens[2 : 2 + size]):
                        rpc.ops[name][i] = strtoul_value(token) & _U32
            break
    if any(row[0] == b"ra" for row in table):  # the server's sum of the ten depths
        rpc.counters["ra_hits"] = sum(rpc.counter(d) for d in _RA_DEPTHS) & _U32
    return rpc


@dataclass(frozen=True)
class Threads:
    """/proc/fs/nfsd: the thread count and the pool statistics summed over pools."""

    threads: int
    pools: int = 0
    arrived: int = 0
    enqueued: int = 0
    woken: int = 0
    timedout: int = 0


def parse_pool_threads(data: bytes) -> int | None:
    """The first number of pool_threads (fscanf's %d, kept as a 32-bit unsigned), or None."""
    value = scan_int(data, 32, True)
    return None if value is None else value & _U32


def parse_pool_stats(threads: int, data: bytes) -> Threads | None:
    """pool_stats summed over its pool lines (after a "#" header line), or None if no line
    of 5 numbers is found (pmdalinux then gives the thread metrics no value)."""
    if data.startswith(b"#"):
        end = data.find(b"\n")
        data = b"" if end < 0 else data[end:]
    numbers = scan_ints(data, len(data))
    pools = len(numbers) // 5
    if pools < 1:
        return None
    rows = [numbers[5 * i : 5 * i + 5] for i in range(pools)]
    return Threads(
        threads,
        pools & _U32,
        *(sum(row[col] for row in rows) & _U64 for col in (1, 2, 3, 4)),
    )


def fchost_counts(files: Mapping[str, bytes]) -> tuple[int, ...]:
    """A host's counts by fchost item from its statistics files (name: first 63 bytes),
    as pmdalinux stores them: by row of FCHOST_FILES, 0 for a missing file."""
    counts = [0] * len(FCHOST_FILES)
    for name, text in files.items():
        for row, (wanted, shift) in enumerate(FCHOST_FILES):
            if wanted.startswith(name):  # strncmp(field, file, strlen(file))
                value = int(strtoul(text, 0).value)
                counts[row] = 0 if value == _U64 else (value << shift) & _U64
                break
    return tuple(counts)


# --- the values of each metric ---------------------------------------------------------------

_CLIENT_NAMES = frozenset(
    {f"rpc.client.{s}" for s, _, _ in CLIENT_FIELDS}
    | {f"{p}.{k}" for p, side, *_ in OPS_ROWS if side == "client" for k in ("calls", "reqs")}
)
_SERVER_NAMES = frozenset(
    {f"rpc.server.{s}" for s, *_ in SERVER_FIELDS}
    | {f"{p}.{k}" for p, side, *_ in OPS_ROWS if side == "server" for k in ("calls", "reqs")}
)
_THREAD_NAMES = frozenset(f"nfs.server.threads.{s}" for s, *_ in THREAD_FIELDS)


def rpc_values(side: str, rpc: Rpc | None, wanted: frozenset[str]) -> dict[str, Any]:
    """The values of SIDE's ("client" or "server") metrics in WANTED from its parsed file
    (None: unreadable, so no values but rpc.server.ra_* as 0)."""
    values: dict[str, Any] = {}
    fields = (
        ((s, src) for s, _, src in CLIENT_FIELDS)
        if side == "client"
        else ((s, src) for s, _, src, _, _ in SERVER_FIELDS)
    )
    for suffix, src in fields:
        name = f"rpc.{side}.{suffix}"
        if name not in wanted:
            continue
        if rpc is not None:
            values[name] = rpc.counter(src)
        elif side == "server" and suffix in ALWAYS_SERVER:
            values[name] = 0
    if rpc is None:
        return values
    for prefix, row_side, table, indom, _, _, _ in OPS_ROWS:
        if row_side != side:
            continue
        counts = rpc.ops[table]
        if f"{prefix}.calls" in wanted:
            values[f"{prefix}.calls"] = sum(counts) & _U32
        if f"{prefix}.reqs" in wanted:
            first = FIRST_ID[indom]
            values[f"{prefix}.reqs"] = {first + i: c for i, c in enumerate(counts)}
    return values


class Nfs(LinuxBase):
    """The NFS and RPC statistics (cluster 7) and fibre channel hosts (cluster 91)."""

    nfs_ops2_indom = InDom(NFS_INDOM, dict(enumerate(NFS2_OPS)))
    nfs_ops3_indom = InDom(NFS3_INDOM, dict(enumerate(NFS3_OPS)))
    nfs_ops4_client_indom = InDom(NFS4_CLI_INDOM, dict(enumerate(NFS4_CLIENT_OPS)))
    nfs_ops4_server_indom = InDom(
        NFS4_SVR_INDOM, dict(enumerate(NFS4_SERVER_OPS, NFS4_SERVER_FIRST))
    )
    nfs_fchost_indom = InDom(FCHOST_INDOM)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; fibre channel hosts get ids in the order first seen (not saved,
        as pmdalinux does not save them)."""
        super().__init__(*args, **kwargs)
        self._nfs_fchost_ids = InstanceIds()

    # -- cluster 7 ---------------------------------------------------------------------------

    def _nfs_rpc(self, path: str, table: tuple[ScanLine | OpsLine, ...]) -> Rpc | None:
        """PATH parsed with TABLE, read at most once per fetch (None if unreadable)."""
        return self._once(f"nfs {path}", lambda: self._read(path, lambda d: parse_rpc(d, table)))

    def _nfs_threads(self) -> Threads | None:
        """The nfsd thread statistics, or None where pmdalinux has none (no nfsd filesystem,
        or running threads but no pool lines)."""
        threads = self._read(POOL_THREADS_FILE, parse_pool_threads)
        if threads is None or threads == 0:
            return None if threads is None else Threads(0)
        return self._read(POOL_STATS_FILE, lambda data: parse_pool_stats(threads, data))

    @refresh(CLUSTER)
    def _nfs_refresh(self) -> dict[str, Any]:
        """Cluster 7: the client and server RPC files and the nfsd pools, each read only if
        one of its metrics was asked for."""
        wanted = self._wanted
        values: dict[str, Any] = {}
        if not wanted.isdisjoint(_CLIENT_NAMES):
            client = self._nfs_rpc(CLIENT_FILE, CLIENT_LINES)
            values.update(rpc_values("client", client, wanted))
        if not wanted.isdisjoint(_SERVER_NAMES):
            server = self._nfs_rpc(SERVER_FILE, SERVER_LINES)
            values.update(rpc_values("server", server, wanted))
        if not wanted.isdisjoint(_THREAD_NAMES):
            threads = self._nfs_threads()
            if threads is not None:
                for suffix, _, _, _, src in THREAD_FIELDS:
                    values[f"nfs.server.threads.{suffix}"] = getattr(threads, src)
        return values

    # -- cluster 91 --------------------------------------------------------------------------

    def _nfs_fchosts(self) -> dict[int, tuple[str, str]]:
        """{inst: (host, statistics directory)} of the fibre channel hosts, found at most once
        per fetch."""
        return self._once("nfs fchost", self._nfs_find_fchosts)

    def _nfs_find_fchosts(self) -> dict[int, tuple[str, str]]:
        """Each entry of /sys/class/fc_host (directory order) with a statistics directory,
        giving new hosts their ids."""
        base = self.proc.root + FCHOST_DIR
        try:
            hosts = os.listdir(base)
        except OSError:
            return {}
        found: dict[int, tuple[str, str]] = {}
        for host in hosts:
            stats = f"{base}/{host}/statistics"
            if not host.startswith(".") and os.path.isdir(stats):
                found[self._nfs_fchost_ids(host)] = (host, stats)
        return found

    @staticmethod
    def _nfs_fchost_counts(stats: str) -> tuple[int, ...]:
        """A host's counts by item from its statistics directory STATS: each file pmdalinux
        would use read once, up to 63 bytes, as it reads them."""
        try:
            names = os.listdir(stats)
        except OSError:
            return fchost_counts({})
        files: dict[str, bytes] = {}
        for name in names:
            if not name.startswith(".") and any(f.startswith(name) for f, _ in FCHOST_FILES):
                text = _read_start(f"{stats}/{name}")
                if text:
                    files[name] = text
        return fchost_counts(files)

    @nfs_fchost_indom.refresh
    def _nfs_fchost_instances(self) -> dict[int, str] | None:
        """The fibre channel hosts with statistics."""
        hosts = {inst: host for inst, (host, _) in self._nfs_fchosts().items()}
        return self._current(self.nfs_fchost_indom, hosts)

    @refresh(FCHOST_CLUSTER)
    def _nfs_fchost_refresh(self) -> dict[str, Any]:
        """Cluster 91: hinv.nfchost always (0 without hosts), and each host's counters, its
        files read only if one of them was asked for."""
        hosts = self._nfs_fchosts()
        values: dict[str, Any] = {"hinv.nfchost": len(hosts)}
        asked = [(f"fchost.{s}", item) for s, item, _ in FCHOST_FIELDS]
        asked = [(name, item) for name, item in asked if name in self._wanted]
        if not asked:
            return values
        counts = {inst: self._nfs_fchost_counts(stats) for inst, (_, stats) in hosts.items()}
        for name, item in asked:
            values[name] = {inst: c[item] for inst, c in counts.items()}
        return values


def _read_start(path: str) -> bytes:
    """The first 63 bytes of PATH in one read (b"" if it cannot be opened or read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(fd, 63)
    except OSError:
        return b""
    finally:
        os.close(fd)
