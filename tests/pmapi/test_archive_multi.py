"""Multi-archive contexts (-a DIR, -a A,B,C): opening, checks, one timeline, replays.

The facts come from libpcp 6.0.3 (context.c's expandArchiveList and initarchive,
logutil.c's __pmLogChangeArchive and the crossings between archives); the interop
tests run PCP's own pminfo, pmval and pmprobe on the same directories and lists.
"""

from __future__ import annotations

import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.context import PM_MODE_BACK, PM_MODE_FORW, PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.archive.multi import ArchiveSet, expand_names, find_end, open_one, open_source
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_EOL,
    PM_ERR_LOGCHANGETYPE,
    PM_ERR_LOGHOST,
    PM_ERR_LOGOVERLAP,
    PM_ERR_LOGREC,
    PMError,
)
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.reference_pmcd import require_reference
from tests.support.replay_archives import carried

S = 1_000_000_000
T0 = 1_700_000_000
U32, U64, I32 = PMType.PM_TYPE_U32, PMType.PM_TYPE_U64, PMType.PM_TYPE_32
NULL = 0xFFFFFFFF
CTR, CONST, COL, LEVEL = 0x0F000001, 0x0F000002, 0x0F000003, 0x0F000004
INDOM = 0x0F000001


def at(sec: float) -> Timestamp:
    return Timestamp(*divmod(T0 * S + round(sec * S), S))


def write(
    base: str | Path,
    start: float,
    end: float,
    *,
    host: str = "h",
    step: float = 1.0,
    insts: tuple[int, ...] = (0, 1, 2),
    ctr_type: int = U32,
) -> str:
    """An archive of records every STEP s from START to END (s after T0): a singular
    counter (100 a second), a constant (discrete), a counter in INSTS and a level."""
    base = str(base)
    with ArchiveWriter(base, hostname=host, timezone="UTC", start=at(start)) as w:
        w.put_index(at(start))
        w.put_desc(Desc(CTR, ctr_type, sem=PMSem.PM_SEM_COUNTER), ["ex.counter"])
        w.put_desc(Desc(CONST, U32, sem=PMSem.PM_SEM_DISCRETE), ["ex.const"])
        w.put_desc(Desc(COL, U64, INDOM, PMSem.PM_SEM_COUNTER), ["ex.col"])
        w.put_desc(Desc(LEVEL, U32, sem=PMSem.PM_SEM_INSTANT), ["ex.level"])
        w.put_indom(at(start), INDOM, list(insts), [f"i{i}" for i in insts])
        n = round((end - start) / step)
        for k in range(n + 1):
            t = start + k * step
            w.put_result(Result(at(t), (
                ValueSet.of_atoms(CTR, ctr_type, [(NULL, round(t * 100))]),
                ValueSet.of_atoms(CONST, U32, [(NULL, 42)]),
                ValueSet.of_atoms(COL, U64, [(i, round(t * 10 * (i + 1))) for i in insts]),
                ValueSet.of_atoms(LEVEL, U32, [(NULL, k % 7)]),
            )))  # fmt: skip
    return base


def xz(base: str, *suffixes: str) -> None:
    """Compress BASE's files of SUFFIXES as pmlogger_daily does (NAME.0 -> NAME.0.xz)."""
    for suffix in suffixes:
        path = Path(base + suffix)
        path.with_name(path.name + ".xz").write_bytes(lzma.compress(path.read_bytes()))
        path.unlink()


def gap_dir(tmp: Path) -> Path:
    """Three archives (10 s each, 10 s apart) of one host, listed out of time order,
    one of them compressed, beside files that are no archive's."""
    d = tmp / "gap"
    d.mkdir()
    write(d / "b", 20, 30)
    write(d / "a", 0, 10)
    write(d / "c", 40, 50)
    xz(str(d / "c"), ".0", ".meta")
    (d / "GNUmakefile").write_text("all:\n")
    (d / "notes.txt").write_text("not an archive\n")
    (d / "stray.0").write_bytes(b"no meta, no archive")
    return d


def replay_of(ctx: ArchiveContext, pmid: int, origin: float, step: float, count: int):
    ctx.set_mode(PM_MODE_INTERP, at(origin), round(step * S))
    run = ctx.replay([pmid], count)
    m = run.metrics[0]
    return [
        None if run.eol[k] else (m.values[k].tolist() if m.has[k].any() else [])
        for k in range(count)
    ]


# -- naming and opening ---------------------------------------------------------------------


def test_a_directory_names_the_archives_in_it(tmp_path):
    d = gap_dir(tmp_path)
    names = expand_names(str(d))
    assert sorted(names) == [f"{d}/a", f"{d}/b", f"{d}/c"]  # (in the directory's order)
    assert expand_names(f"{d}/b,{d}/a,") == [f"{d}/b", f"{d}/a"]
    assert sorted(expand_names(f"{d},{d}/a")) == sorted([*names, f"{d}/a"])
    with open_source(str(d)) as s:
        assert isinstance(s, ArchiveSet)
        assert [m.name for m in s.members] == [f"{d}/a", f"{d}/b", f"{d}/c"]  # by start
        assert s.label.start == at(0) and s.end() == at(50)
        assert s.pmns.lookup("ex.col") == COL and set(s.descs) == {CTR, CONST, COL, LEVEL}


def test_one_archive_named_by_a_directory_is_a_plain_archive(tmp_path):
    write(tmp_path / "only", 0, 5)
    with open_source(str(tmp_path)) as one:
        assert not isinstance(one, ArchiveSet) and one.label.start == at(0)


def test_the_same_archive_twice_is_once(tmp_path):
    a = write(tmp_path / "a", 0, 5)
    b = write(tmp_path / "b", 10, 15)
    with open_source(f"{a},{b},{a}") as s:
        assert [m.name for m in s.members] == [a, b]


@pytest.mark.parametrize(
    ("second", "code"),
    [
        ({"start": 0, "end": 3}, PM_ERR_LOGOVERLAP),  # another archive starting then
        ({"start": 20, "end": 30, "host": "other"}, PM_ERR_LOGHOST),
        ({"start": 20, "end": 30, "ctr_type": U64}, PM_ERR_LOGCHANGETYPE),
    ],
)
def test_archives_that_cannot_be_one(tmp_path, second, code):
    write(tmp_path / "a", 0, 10)
    write(tmp_path / "b", **second)
    with pytest.raises(PMError) as info:
        ArchiveContext(str(tmp_path))
    assert info.value.code == code


def test_an_empty_directory_and_a_missing_name(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(PMError):
        open_source(str(tmp_path / "empty"))
    write(tmp_path / "a", 0, 5)
    with pytest.raises(PMError, match="No such file"):
        open_source(f"{tmp_path}/a,{tmp_path}/none")


# -- one timeline ---------------------------------------------------------------------------


def test_records_run_on_across_archives_with_a_mark_between(tmp_path):
    d = gap_dir(tmp_path)
    with ArchiveContext(str(d)) as ctx:
        ctx.set_mode(PM_MODE_FORW, at(8.5))
        stamps = [ctx.fetch_archive().timestamp for _ in range(5)]
        assert stamps == [at(9), at(10), at(10.001), at(20), at(21)]
        ctx.set_mode(PM_MODE_BACK, at(21.5))
        stamps = [ctx.fetch_archive().timestamp for _ in range(4)]
        assert stamps == [at(21), at(20), at(19.999), at(10)]
        ctx.set_mode(PM_MODE_FORW, at(12))  # (a fetch skips the mark)
        assert ctx.fetch([CTR]).timestamp == at(20)
        ctx.set_mode(PM_MODE_FORW, at(50.5))
        with pytest.raises(PMError) as info:
            ctx.fetch([CTR])
        assert info.value.code == PM_ERR_EOL


def test_an_archive_overlapping_the_one_before_cannot_be_read_into(tmp_path):
    write(tmp_path / "a", 0, 10)
    write(tmp_path / "b", 5, 15)  # starts before a ends
    write(tmp_path / "c", 20, 25)
    with ArchiveContext(str(tmp_path)) as ctx:
        ctx.set_mode(PM_MODE_FORW, at(4))  # (in a: the last archive to start before it)
        for _ in range(5):
            ctx.fetch_archive()
        got = []
        for _ in range(4):
            try:
                got.append(ctx.fetch_archive().timestamp)
            except PMError as exc:
                got.append(exc.code)
        assert got == [at(9), at(10), at(10.001), PM_ERR_LOGOVERLAP]
        assert ctx.fetch_archive().timestamp == at(5)  # (reading on: b, from its start)
        # a replay from a reads a alone: nothing after its end, though b and c go on
        values = replay_of(ctx, CONST, 3, 1, 25)
        assert values[:8] == [[42]] * 8 and values[8:23] == [[]] * 15
        assert values[23:] == [None, None]  # (past c's end)
        # one from within b reads b and c
        assert replay_of(ctx, CONST, 12, 1, 4) == [[42]] * 4


def test_a_replay_across_archives_is_one_across_a_mark(tmp_path):
    """A set replays as one archive holding the same records with a <mark> a millisecond
    after each archive's end (what pmlogextract writes when it joins them)."""
    d = gap_dir(tmp_path)
    joined = str(tmp_path / "joined")
    with ArchiveWriter(joined, hostname="h", timezone="UTC", start=at(0)) as w:
        w.put_index(at(0))
        with ArchiveContext(str(d)) as ctx:
            for pmid, desc in sorted(ctx.archive.descs.items()):
                w.put_desc(desc, list(ctx.archive.names[pmid]))
            w.put_indom(at(0), INDOM, [0, 1, 2], ["i0", "i1", "i2"])
            ctx.set_mode(PM_MODE_FORW, at(0))
            while True:
                try:
                    result = ctx.fetch_archive()
                except PMError:
                    break
                if result.vsets:
                    w.put_result(result)
                else:
                    w.put_mark(result.timestamp)
    with ArchiveContext(str(d)) as ctx, ArchiveContext(joined) as one:
        for pmid in (CTR, CONST, COL, LEVEL):
            for origin, step in ((0, 0.7), (9.5, 0.25), (-3, 2.3), (49, 0.5)):
                assert replay_of(ctx, pmid, origin, step, 40) == replay_of(
                    one, pmid, origin, step, 40
                ), (pmid, origin, step)


def test_a_damaged_archive_fails_fetches_that_read_past_it(tmp_path):
    write(tmp_path / "a", 0, 10)
    b = write(tmp_path / "b", 20, 30)
    write(tmp_path / "c", 40, 50)
    data = Path(b + ".0").read_bytes()
    Path(b + ".0").write_bytes(data[:-7])  # its last record cut short
    with ArchiveContext(str(tmp_path)) as ctx:
        assert find_end(ctx.archive.members[1].archive) == at(29)
        ctx.set_mode(PM_MODE_INTERP, at(27), S)
        run = ctx.replay([CONST], 6)
        assert run.failed is not None and run.failed.tolist() == [False] * 3 + [True] * 3
        assert run.fail_code == PM_ERR_LOGREC and "b.0" in str(run.problem)
        ctx.set_mode(PM_MODE_INTERP, at(29), S)
        assert ctx.fetch([CONST]).result.vsets[0].numval == 1
        with pytest.raises(PMError) as info:
            ctx.fetch([CONST])
        assert info.value.code == PM_ERR_LOGREC
        # seeking beyond the damage, c is read as ever
        assert replay_of(ctx, CONST, 41, 1, 3) == [[42]] * 3


def test_the_end_of_a_truncated_archive_is_its_last_good_record(tmp_path):
    base = write(tmp_path / "a", 0, 10)
    data = Path(base + ".0").read_bytes()
    Path(base + ".0").write_bytes(data[:-5])
    with open_one(base) as a:
        assert find_end(a) == at(9)
    Path(base + ".0").write_bytes(data[: 132 + 4])  # nothing but a scrap after the label
    with open_one(base) as a:
        assert find_end(a) is None


# -- pmval -a DIR -------------------------------------------------------------------------------


def _ours(tool: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TZ="UTC", PCP_DERIVED_CONFIG="")
    return subprocess.run(
        [sys.executable, "-m", f"purepcp.tools.{tool}", *argv],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_pmval_replays_a_directory(tmp_path):
    d = gap_dir(tmp_path)
    out = _ours("pmval", "-z", "-a", str(d), "-t", "5", "ex.counter")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert f"archive:   {d}" in lines and "end:       Tue Nov 14 22:14:10 2023" in lines
    body = [line for line in lines if line.startswith("22:")]
    assert body == [  # (as PCP's pmval prints it)
        "22:13:25.000   100.0   ",  # (the first fetch, at 20 s, starts the rates)
        "22:13:30.000   100.0   ",
        "22:13:35.000  No values available",  # (the gap: no bound across the mark)
        "22:13:40.000  No values available",  # (b's first record starts the rates again)
        "22:13:45.000   100.0   ",
        "22:13:50.000   100.0   ",
        "22:13:55.000  No values available",
        "22:14:00.000  No values available",
        "22:14:05.000   100.0   ",
        "22:14:10.000   100.0   ",
    ]


def test_pmval_says_when_archives_cannot_be_one(tmp_path):
    write(tmp_path / "a", 0, 10)
    write(tmp_path / "b", 20, 30, host="other")
    out = _ours("pmval", "-a", str(tmp_path), "ex.counter")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f'pmval: Cannot open archive "{tmp_path}": Archives differ by')
    assert out.stderr.count("\n") == 1


# -- beside PCP's tools (interop) ---------------------------------------------------------------


def _both(tool: str, *argv: str) -> tuple[tuple, tuple]:
    env = dict(os.environ, TZ="UTC", PCP_DERIVED_CONFIG="")
    theirs = subprocess.run([tool, *argv], capture_output=True, text=True, env=env, timeout=120)
    ours = _ours(tool, *argv)
    return (
        (theirs.returncode, carried(theirs.stdout), theirs.stderr),
        (ours.returncode, ours.stdout, ours.stderr),
    )


def _pcp_words(stderr: str) -> str:
    """STDERR without the detail ours adds to PCP's message (": FILE: offset ...")."""
    return re.sub(r"^(pm\w+: .*?: [A-Z][^:\n]*?)(: .*)$", r"\1", stderr, flags=re.M)


@pytest.fixture(scope="module")
def gap(tmp_path_factory) -> Path:
    require_reference("pmval", "pminfo", "pmprobe")
    return gap_dir(tmp_path_factory.mktemp("multi"))


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["pmval", "-z", "-t", "0.7", "ex.counter"],
        ["pmval", "-z", "-t", "2.5", "ex.col"],
        ["pmval", "-z", "-t", "1.5", "-r", "ex.col"],
        ["pmval", "-z", "-t", "3", "ex.const"],
        ["pmval", "-z", "-t", "1", "-S", "+9.5", "-T", "+41", "-i", "i2,i0", "ex.col"],
        ["pmval", "-z", "-U", "ex.counter"],
        ["pminfo", "-dfmT", "ex"],
        ["pminfo", "-f", "-O", "+15", "ex.col", "ex.counter"],
        ["pmprobe", "-I", "ex"],
        ["pmprobe", "-v", "-O", "+45", "ex"],
    ],
)
@pytest.mark.parametrize("named", ["dir", "list"])
def test_a_directory_and_a_list_beside_pcps_tools(gap, argv, named):
    name = str(gap) if named == "dir" else f"{gap}/c,{gap}/a,{gap}/b"
    tool, *rest = argv
    theirs, ours = _both(
        tool, "-a" if "-U" not in rest else "-U", name, *[a for a in rest if a != "-U"]
    )
    assert ours == theirs
    assert theirs[0] == 0 and len(theirs[1].splitlines()) > 3


@pytest.mark.interop
@pytest.mark.parametrize(
    ("layout", "argv"),
    [
        ("overlap", ["pmval", "-z", "-t", "1", "ex.const"]),
        ("overlap", ["pmval", "-z", "-t", "1", "-S", "+8", "ex.counter"]),
        ("overlap", ["pmval", "-z", "-U", "ex.const"]),
        ("overlap", ["pminfo", "-f", "-O", "+12", "ex.col"]),
        ("damaged", ["pmval", "-z", "-t", "2", "ex.counter"]),
        ("damaged", ["pmval", "-z", "-t", "0.5", "-S", "+25", "ex.col"]),
        ("damaged", ["pmval", "-z", "-U", "ex.const"]),
        ("same-start", ["pminfo", "ex"]),
        ("other-host", ["pmprobe", "ex.counter"]),
    ],
)
def test_sets_libpcp_refuses_or_cannot_read_through(tmp_path, layout, argv):
    require_reference(argv[0])
    write(tmp_path / "a", 0, 10)
    if layout == "overlap":
        write(tmp_path / "b", 5, 15)
        write(tmp_path / "c", 20, 25)
    elif layout == "damaged":
        b = write(tmp_path / "b", 20, 30)
        write(tmp_path / "c", 40, 50)
        Path(b + ".0").write_bytes(Path(b + ".0").read_bytes()[:-7])
    elif layout == "same-start":
        write(tmp_path / "b", 0, 4)
    else:
        write(tmp_path / "b", 20, 30, host="elsewhere")
    tool, *rest = argv
    flag = "-U" if "-U" in rest else "-a"
    theirs, ours = _both(tool, flag, str(tmp_path), *[a for a in rest if a != "-U"])
    assert ours[:2] == theirs[:2]
    assert _pcp_words(ours[2]) == theirs[2]


@pytest.mark.interop
def test_archives_of_our_pmlogger_and_pcps_in_one_directory(tmp_path):
    """Both loggers on one pmcd, one after the other, into one directory (a volume of the
    first compressed): our tools and PCP's read the directory alike."""
    from tests.support.client_servers import reference_serving, tool_env

    require_reference("pmlogger", "pmval", "pminfo", "pmprobe")
    config = tmp_path / "cfg"
    config.write_text(
        "log mandatory on every 200 msec {\n"
        "  hinv.ncpu kernel.all.cpu.user network.interface.in.bytes mem.util.free\n}\n"
    )
    d = tmp_path / "host"
    d.mkdir()
    with reference_serving(tmp_path) as pmcd:
        loggers = (
            (["pmlogger"], "theirs"),
            ([sys.executable, "-m", "purepcp.pmlogger.main"], "ours"),
        )
        for argv0, base in loggers:
            log = str(tmp_path / f"{base}.log")
            run = subprocess.run(
                [*argv0, "-h", pmcd.host, "-c", str(config), "-s", "8", "-l", log, base],
                cwd=d, env=tool_env(), capture_output=True, timeout=120,
            )  # fmt: skip
            assert run.returncode == 0, run.stderr
    xz(str(d / "theirs"), ".0")
    (d / "Latest").write_text("# not an archive\n")
    for argv in (
        ["pmval", "-a", str(d), "-t", "0.3", "kernel.all.cpu.user"],
        ["pmval", "-a", str(d), "-t", "0.5", "network.interface.in.bytes"],
        ["pmval", "-a", f"{d}/ours,{d}/theirs", "-t", "0.25", "hinv.ncpu"],
        ["pmval", "-U", str(d), "mem.util.free"],
        ["pminfo", "-a", str(d), "-dfm", "hinv", "kernel.all.cpu.user", "mem"],
        ["pmprobe", "-a", str(d), "-v", "network", "hinv", "mem"],
        ["pmprobe", "-a", str(d), "-I", "network", "hinv", "mem"],
    ):
        theirs, ours = _both(*argv)
        assert ours == theirs, argv
        assert theirs[0] == 0
