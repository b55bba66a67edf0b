"""The default derived metrics: where they come from, and purepcp's own set beside PCP's.

With PCP_DERIVED_CONFIG unset, a tool reads PCP's global directory
($PCP_VAR_DIR/config/derived, PCP_VAR_DIR found as pmGetConfig finds it) when PCP
is installed, else the set purepcp ships in pmapi/derived/defaults.  The interop tests
check that the shipped set is PCP 6.0.3's in all that a client sees but the help
text: the same names; the same types, semantics, units and instance domains
(pminfo -d); the same values (pmval), over an archive of ours holding every operand
PCP's definitions use, each described as the PCP agent that exports it describes it
(src/pmdas/linux, linux_proc, bcc/modules/netproc.python, mssql/pmdamssql.python).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.derived import registry as registry_module
from purepcp.pmapi.derived.context import _names
from purepcp.pmapi.derived.registry import (
    SHIPPED_DIR,
    Registry,
    default_config_path,
    default_registry,
    load_config,
    pcp_global_dir,
)
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.forked_tools import run_ours_many
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_704_067_200  # 2024-01-01 00:00:00 UTC
NS = 8  # samples, a second apart

_IOSTAT = ("await", "r_await", "w_await", "d_await", "f_await", "avg_qlen", "avg_rqsz",
           "r_avg_rqsz", "w_avg_rqsz", "d_avg_rqsz", "util")  # fmt: skip

#: Every name PCP 6.0.3's default files (cpu-util, iostat, mssql, proc .conf) define.
PCP_NAMES = frozenset(
    [f"kernel.cpu.util.{s}" for s in ("user", "nice", "sys", "idle", "intr", "wait", "steal")]
    + [f"disk.{family}.{m}" for family in ("dev", "dm", "md", "wwid") for m in _IOSTAT]
    + [f"proc.{m}" for m in ("psinfo.age", "io.total_bytes")]
    + [f"proc.hog.{m}" for m in ("cpu", "mem", "disk", "net")]
    + [
        "mssql.buffer_manager.buffer_cache_hit_ratio",
        "mssql.databases.log_cache_hit_ratio",
        "mssql.latches.average_latch_wait_time",
        "mssql.locks.average_wait_time",
        "mssql.plan_cache.cache_hit_ratio",
    ]
)


def _shipped() -> Registry:
    reg = Registry()
    err = io.StringIO()
    assert load_config(reg, SHIPPED_DIR, err) == len(PCP_NAMES)
    assert err.getvalue() == ""
    return reg


def test_the_shipped_set_defines_pcps_names_each_with_help_text():
    reg = _shipped()
    assert {d.name for d in reg} == PCP_NAMES
    assert all(d.oneline and d.helptext for d in reg)


@pytest.fixture
def fresh(monkeypatch):
    """default_registry() made afresh under an environment without PCP's variables."""
    monkeypatch.setattr(registry_module, "_default", None)
    for name in ("PCP_DERIVED_CONFIG", "PCP_VAR_DIR", "PCP_CONF"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_without_pcp_the_shipped_set_is_the_default(fresh, tmp_path):
    fresh.setenv("PCP_CONF", str(tmp_path / "no-pcp.conf"))  # (no PCP installed)
    assert pcp_global_dir() == ""
    assert default_config_path() == SHIPPED_DIR
    assert {d.name for d in default_registry()} == PCP_NAMES | {"event.flags", "event.missed"}


def test_pcps_directory_wins_where_pcp_installed_it(fresh, tmp_path):
    """PCP_VAR_DIR from PCP's pcp.conf ($PCP_CONF) as pmGetConfig reads it, unless the
    environment sets it; a pcp.conf naming a directory that is not there means the
    shipped set; PCP_DERIVED_CONFIG set means it alone ("" nothing)."""
    var = tmp_path / "var"
    (var / "config" / "derived").mkdir(parents=True)
    (var / "config" / "derived" / "site.conf").write_text("site.x = 1\n")
    (tmp_path / "pcp.conf").write_text(f"# PCP's layout\nPCP_VAR_DIR={var}\n")
    fresh.setenv("PCP_CONF", str(tmp_path / "pcp.conf"))
    assert [d.name for d in default_registry()][2:] == ["site.x"]

    fresh.setattr(registry_module, "_default", None)
    fresh.setenv("PCP_VAR_DIR", str(tmp_path / "elsewhere"))
    assert default_config_path() == SHIPPED_DIR

    fresh.setattr(registry_module, "_default", None)
    fresh.setenv("PCP_DERIVED_CONFIG", "")
    assert [d.name for d in default_registry()] == ["event.flags", "event.missed"]


# -- against PCP 6.0.3 ----------------------------------------------------------------------

_U32, _U64, _DBL = PMType.PM_TYPE_U32, PMType.PM_TYPE_U64, PMType.PM_TYPE_DOUBLE
INST, CTR, DISC = PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_DISCRETE
NONE = Units()
KBYTE = Units(1, 0, 0, 1, 0, 0)
BYTE = Units(1, 0, 0, 0, 0, 0)
MSEC = Units(0, 1, 0, 0, 2, 0)
SEC = Units(0, 1, 0, 0, 3, 0)
COUNT = Units(0, 0, 1, 0, 0, 0)


def _indom(domain: int, serial: int) -> int:
    return domain << 22 | serial


#: Instance domains, as the agents number them, with a few instances each.
INDOMS = {
    _indom(60, 1): ["sda", "sdb"],  # disk.dev
    _indom(60, 24): ["root", "swap"],  # disk.dm
    _indom(60, 25): ["md0"],  # disk.md
    _indom(60, 42): ["3600508b1001c4d5f"],  # disk.wwid
    _indom(3, 9): ["000001 /sbin/init", "004242 worker"],  # proc
    _indom(149, 1): ["000001 /sbin/init", "004242 worker"],  # bcc's per-process
    _indom(156, 0): ["master", "tempdb"],  # mssql databases
    _indom(156, 3): ["Object", "Page"],  # mssql lock types
    _indom(156, 8): ["SQL Plans", "Object Plans"],  # mssql plan cache types
}
DISK = {"dev": _indom(60, 1), "dm": _indom(60, 24), "md": _indom(60, 25), "wwid": _indom(60, 42)}
PROC, BCC = _indom(3, 9), _indom(149, 1)


def _counter(start: int, steps: list[int]) -> list[int]:
    """NS cumulative values from START, growing by each of STEPS (cycled)."""
    out, value = [], start
    for s in range(NS):
        out.append(value)
        value += steps[s % len(steps)]
    return out


def _turn(steps: list[int], k: int) -> list[int]:
    """STEPS rotated by K."""
    k %= len(steps)
    return steps[k:] + steps[:k]


def _operands() -> list[tuple[str, int, int | None, int, Units, object]]:
    """(name, type, indom, semantics, units, values) of every operand: values are NS
    numbers, or {instance: NS numbers}.  Some intervals have no requests of a kind (the
    iostat metrics' zero branch) and some have no change at all."""
    ops: list[tuple[str, int, int | None, int, Units, object]] = [
        ("hinv.ncpu", _U32, None, DISC, NONE, [4] * NS),
        ("kernel.all.uptime", _DBL, None, INST, SEC, [86400.0 + s for s in range(NS)]),
    ]
    for k, state in enumerate(("user", "nice", "sys", "idle", "intr", "wait.total", "steal")):
        steps = [1500 + 97 * k, 0, 733 * (k + 1), 2500 - 111 * k]
        ops.append((f"kernel.all.cpu.{state}", _U64, None, CTR, MSEC, _counter(10**6, steps)))
    for family, indom in DISK.items():
        small = family in ("dm", "md")  # (their read_bytes and write_bytes are U32)
        insts = INDOMS[indom]
        for k, kind in enumerate(("read", "write", "discard", "flush")):
            # (each kind idle in another interval: one interval idle in every kind)
            counts = {i: _counter(1000 * n, _turn([3 + k + n, 0, 7, 1 + n, 0], k))
                      for n, i in enumerate(insts)}  # fmt: skip
            ops.append((f"disk.{family}.{kind}", _U64, indom, CTR, COUNT, counts))
            active = {i: _counter(50 * n, [11 + k, 0, 29 + n, 3]) for n, i in enumerate(insts)}
            ops.append((f"disk.{family}.{kind}_rawactive", _U32, indom, CTR, MSEC, active))
            if kind != "flush":
                btype = _U32 if small and kind != "discard" else _U64
                nbytes = {
                    i: _counter(4096 * n, [64 + 8 * k, 0, 512 + n, 4]) for n, i in enumerate(insts)
                }
                ops.append((f"disk.{family}.{kind}_bytes", btype, indom, CTR, KBYTE, nbytes))
        totals = {i: _counter(2000 * n, [9 + n, 0, 14, 2]) for n, i in enumerate(insts)}
        ops.append((f"disk.{family}.total", _U64, indom, CTR, COUNT, totals))
        tactive = {i: _counter(70 * n, [37, 0, 58 + n, 5]) for n, i in enumerate(insts)}
        ops.append((f"disk.{family}.total_rawactive", _U32, indom, CTR, MSEC, tactive))
        busy = {i: _counter(0, [410 + 90 * n, 0, 1000, 35]) for n, i in enumerate(insts)}
        ops.append((f"disk.{family}.avactive", _U32, indom, CTR, MSEC, busy))
    procs = INDOMS[PROC]
    ops += [
        ("proc.psinfo.start_time", _U64, PROC, DISC, MSEC,
         {procs[0]: [1250] * NS, procs[1]: [80_000_500] * NS}),
        ("proc.psinfo.utime", _U64, PROC, CTR, MSEC,
         {procs[0]: _counter(9000, [10, 0, 20]), procs[1]: _counter(5, [700, 350, 0])}),
        ("proc.psinfo.stime", _U64, PROC, CTR, MSEC,
         {procs[0]: _counter(4000, [0, 30]), procs[1]: _counter(9, [120, 80])}),
        ("proc.memory.vmrss", _U32, PROC, INST, KBYTE,
         {procs[0]: [11264] * NS, procs[1]: [204800 + 64 * s for s in range(NS)]}),
        ("proc.memory.vmswap", _U32, PROC, INST, KBYTE, {procs[0]: [128] * NS, procs[1]: [0] * NS}),
        ("proc.io.read_bytes", _U64, PROC, CTR, BYTE,
         {procs[0]: _counter(10**6, [4096, 0]), procs[1]: _counter(0, [65536, 8192, 0])}),
        ("proc.io.write_bytes", _U64, PROC, CTR, BYTE,
         {procs[0]: _counter(5 * 10**5, [0, 1024]), procs[1]: _counter(7, [32768, 0, 4096])}),
        ("proc.io.cancelled_write_bytes", _U64, PROC, CTR, BYTE,
         {procs[0]: [0] * NS, procs[1]: _counter(0, [0, 4096])}),
    ]  # fmt: skip
    for n, name in enumerate(("tcp.send", "tcp.recv", "udp.send", "udp.recv")):
        values = {
            p: _counter(1000 * n, [1500 * (n + 1) + 7 * m, 0, 333]) for m, p in enumerate(procs)
        }
        ops.append((f"bcc.proc.net.{name}.bytes", _U64, BCC, CTR, BYTE, values))
    ratios = [
        ("buffer_manager.raw_buffer_cache_hit_ratio", _U32, None, NONE),
        ("databases.raw_log_cache_hit_ratio", _U64, _indom(156, 0), NONE),
        ("latches.raw_average_latch_wait_time", _U64, None, MSEC),
        ("locks.raw_average_wait_time", _U64, _indom(156, 3), NONE),
        ("plan_cache.raw_cache_hit_ratio", _U64, _indom(156, 8), NONE),
    ]
    for n, (name, type_, indom, units) in enumerate(ratios):
        hits = [900 + 13 * s + n for s in range(NS)]
        base = [1000 + 17 * s for s in range(NS)]
        if indom is None:
            ops.append((f"mssql.{name}", type_, None, INST, units, hits))
            ops.append((f"mssql.{name}_base", type_, None, INST, NONE, base))
        else:
            names = INDOMS[indom]
            ops.append(
                (
                    f"mssql.{name}",
                    type_,
                    indom,
                    INST,
                    units,
                    {i: [h - 50 * k for h in hits] for k, i in enumerate(names)},
                )
            )
            ops.append((f"mssql.{name}_base", type_, indom, INST, NONE,
                        {i: [b + 5 * k for b in base] for k, i in enumerate(names)}))  # fmt: skip
    return ops


def write_operands(base: str) -> str:
    """The archive of every operand, NS samples a second apart from T0."""
    ops = _operands()
    with ArchiveWriter(base, hostname="defaults", timezone="UTC", start=Timestamp(T0, 0)) as w:
        pmids = {}
        for n, (name, type_, indom, sem, units, _) in enumerate(ops, start=1):
            domain = {"proc": 3, "bcc": 149, "mssql": 156}.get(name.split(".")[0], 60)
            pmids[name] = domain << 22 | n
            w.put_desc(Desc(pmids[name], type_, indom if indom else 0xFFFFFFFF, sem, units), [name])
        for indom, names in INDOMS.items():
            w.put_indom(Timestamp(T0, 0), indom, list(range(len(names))), names)
        w.put_index(Timestamp(T0, 0))
        for s in range(NS):
            vsets = []
            for name, type_, indom, _, _, values in ops:
                if isinstance(values, dict):
                    ids = {i: k for k, i in enumerate(INDOMS[indom])}  # type: ignore[index]
                    pairs = [(ids[i], v[s]) for i, v in values.items()]
                else:
                    pairs = [(0xFFFFFFFF, values[s])]  # type: ignore[index]
                vsets.append(ValueSet.of_atoms(pmids[name], type_, pairs))
            w.put_result(Result(Timestamp(T0 + s, 0), tuple(vsets)))
    return base


def _pcp_dir() -> str:
    """PCP's installed default definitions, or skip."""
    require_reference("pminfo", "pmval")
    path = pcp_global_dir()
    if not path or not os.path.isdir(path):
        pytest.skip(f"PCP's default derived metrics are not installed ({path or 'no pcp.conf'})")
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="", TZ="UTC")
    env.pop("PCP_DEBUG", None)
    return env


def _theirs(*argv: str) -> tuple[str, str, int]:
    done = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=120)
    return done.stdout, done.stderr, done.returncode


def _ours(tool: str, *argv: str) -> tuple[str, str, int]:
    return _theirs(sys.executable, "-m", f"purepcp.tools.{tool}", *argv)


@pytest.fixture(scope="module")
def operands(tmp_path_factory) -> str:
    return write_operands(str(tmp_path_factory.mktemp("defaults") / "ops"))


@pytest.mark.interop
def test_pcps_files_define_the_shipped_names():
    reg = Registry()
    err = io.StringIO()
    load_config(reg, _pcp_dir(), err)
    assert err.getvalue() == ""
    assert {d.name for d in reg} == PCP_NAMES


@pytest.mark.interop
def test_each_name_uses_the_operands_pcps_definition_uses():
    """... and the archive holds every operand of every one."""
    pcp = Registry()
    load_config(pcp, _pcp_dir(), io.StringIO())
    theirs = {d.name: set(_names(d.tree)) for d in pcp if d.tree is not None}
    ours = {d.name: set(_names(d.tree)) for d in _shipped() if d.tree is not None}
    assert ours == theirs
    assert set().union(*theirs.values()) == {op[0] for op in _operands()}


@pytest.mark.interop
def test_descriptors_are_pcps(operands):
    """pminfo -d of every name: PCP's pminfo with PCP's files, PCP's with ours, ours with
    ours (every metric binds: no errors)."""
    names = sorted(PCP_NAMES)
    pcp = _theirs("pminfo", "-c", _pcp_dir(), "-a", operands, "-d", *names)
    assert pcp[2] == 0 and "Derived metric definition failed" not in pcp[0], pcp
    assert _theirs("pminfo", "-c", SHIPPED_DIR, "-a", operands, "-d", *names) == pcp
    assert _ours("pminfo", "-c", SHIPPED_DIR, "-a", operands, "-d", *names) == pcp


@pytest.mark.interop
def test_values_are_pcps(operands):
    """pmval -t 1 -f 6 over the archive, name by name: PCP's pmval with PCP's files,
    with ours, and our pmval with ours, all alike."""
    pcp_dir = _pcp_dir()
    names = sorted(PCP_NAMES)
    argv = [["-a", operands, "-t", "1", "-f", "6", name] for name in names]
    tmp = Path(operands).parent / "pmval"
    tmp.mkdir(exist_ok=True)
    ours, _ = run_ours_many(tmp, [("pmval", [f"--derived={SHIPPED_DIR}", *a]) for a in argv])
    for name, args, mine in zip(names, argv, ours, strict=True):
        pcp = _theirs("pmval", f"--derived={pcp_dir}", *args)
        assert pcp[2] == 0 and pcp[0].count("\n") > NS, (name, pcp)
        assert _theirs("pmval", f"--derived={SHIPPED_DIR}", *args) == pcp, name
        assert mine == pcp, name
