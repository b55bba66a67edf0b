"""pmlogger_daily: SIGUSR2 to the primary pmlogger, compression and culling by age, safely."""

from __future__ import annotations

import io
import lzma
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.pmapi.archive import Archive, ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmlogger import compress, daily
from tests.support.client_servers import ours_serving, tool_env
from tests.support.waiting import DEADLINE, wait_until

DAY = 86400
NOW = time.time()
U32 = PMType.PM_TYPE_U32


def _make_archive(base: Path, samples: int = 5, age_days: float = 0) -> None:
    """A small sound archive at BASE whose files were last modified AGE_DAYS ago."""
    start = int(NOW - age_days * DAY) - samples
    pmid = (60 << 22) | 7
    with ArchiveWriter(str(base), hostname="h", timezone="UTC", start=Timestamp(start)) as w:
        w.put_index(Timestamp(start))
        w.put_desc(Desc(pmid, U32, sem=PMSem.PM_SEM_INSTANT), ["ex.value"])
        for i in range(samples):
            stamp = Timestamp(start + i)
            w.put_result(Result(stamp, (ValueSet.of_atoms(pmid, U32, [(0xFFFFFFFF, i)]),)))
        w.put_index(Timestamp(start + samples - 1))
    _age(base, age_days)


def _age(base: Path, days: float) -> None:
    when = NOW - days * DAY
    for path in base.parent.glob(base.name + ".*"):
        os.utime(path, (when, when))


def _values(base: Path) -> list:
    with Archive(str(base)) as a:
        assert a.problems == []
        return [vs.values for r in a.records() for vs in r.result.vsets]


def _state(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """PCP_ARCHIVE_DIR and PCP_RUN_DIR in TMP_PATH; (archive dir, one host's dir, run dir)."""
    archive_dir, run_dir = tmp_path / "archive", tmp_path / "run"
    host = archive_dir / "host"
    host.mkdir(parents=True)
    run_dir.mkdir()
    monkeypatch.setenv("PCP_ARCHIVE_DIR", str(archive_dir))
    monkeypatch.setenv("PCP_RUN_DIR", str(run_dir))
    monkeypatch.delenv("PCP_CULLAFTER", raising=False)
    monkeypatch.delenv("PCP_COMPRESSAFTER", raising=False)
    return archive_dir, host, run_dir


def _daily(capsys, *args: str) -> tuple[int, str, str]:
    status = daily.main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def four(layout):
    """In one host's directory: archives 20, 3 and 2 days old and one being written, plus
    files pmlogger_daily must never touch (undated names)."""
    _, host, _ = layout
    for name, age in (("20231101.00.10", 20), ("20231118.00.10", 3), ("20231119.00.10", 2)):
        _make_archive(host / name, age_days=age)
    _make_archive(host / "20231121.00.10", age_days=0)
    _make_archive(host / "mine", age_days=30)
    (host / "notes.txt").write_text("keep\n")
    _age(host / "notes", 30)
    return host


def test_old_archives_are_compressed_older_ones_culled_the_newest_left(four, capsys):
    before = {b: _values(four / b) for b in ("20231118.00.10", "20231119.00.10")}
    mtimes = {p.name: p.stat().st_mtime_ns for p in four.iterdir()}
    volume = (four / "20231118.00.10.0").read_bytes()
    status, _, err = _daily(capsys)
    assert status == 0, err
    assert "no primary pmlogger running" in err  # (a warning: no rotation, the rest done)
    names = sorted(p.name for p in four.iterdir())
    assert names == [
        "20231118.00.10.0.xz", "20231118.00.10.index", "20231118.00.10.meta.xz",
        "20231119.00.10.0.xz", "20231119.00.10.index", "20231119.00.10.meta.xz",
        "20231121.00.10.0", "20231121.00.10.index", "20231121.00.10.meta",
        "mine.0", "mine.index", "mine.meta", "notes.txt",
    ]  # fmt: skip
    for base, values in before.items():
        assert _values(four / base) == values  # read back through the compression
        for part in (".0.xz", ".meta.xz"):  # the age is kept: an xz file is as old as its data
            assert (four / (base + part)).stat().st_mtime_ns == mtimes[base + part[:-3]]
    assert lzma.decompress((four / "20231118.00.10.0.xz").read_bytes()) == volume


def test_showme_changes_nothing_and_says_what_it_would_do(four, capsys):
    before = _state(four)
    status, out, _err = _daily(capsys, "-N")
    assert status == 0
    assert _state(four) == before
    assert out.splitlines() == [
        "+ rm -f 20231101.00.10.0 20231101.00.10.index 20231101.00.10.meta",
        "+ xz -0 --block-size=10MiB 20231118.00.10.0 20231118.00.10.meta"
        " 20231119.00.10.0 20231119.00.10.meta",
    ]


def test_version_prints_the_version_and_runs_nothing(four, capsys):
    """--version used to be refused and -V runs the job (as PCP's -V, verbose): a user
    after the version had no way but a run.  --version prints it and does nothing else,
    whatever the layout, and the usage says which is which."""
    before = _state(four)
    status, out, err = _daily(capsys, "--version")
    assert (status, out) == (0, "")
    assert err.startswith("pmlogger_daily version ") and err.count("\n") == 1
    assert _state(four) == before
    status, _, err = _daily(capsys, "--help")
    assert "  -V, --verbose         verbose output (as in PCP; the version is --version)\n" in err
    assert "  --version             print the version and exit\n" in err


def test_dash_v_alone_is_verbose_as_in_pcp(four, layout, capsys):
    """-V alone runs the job, saying what it does (PCP's -V: --verbose)."""
    status, out, _ = _daily(capsys, "-V", "-N")
    quiet_status, quiet, _ = _daily(capsys, "-N")
    assert status == quiet_status == 0
    assert quiet.splitlines() == [line for line in out.splitlines() if line.startswith("+ ")]
    assert len(out.splitlines()) > len(quiet.splitlines())


def test_the_periods_come_from_flags_then_the_layout(four, capsys, monkeypatch):
    monkeypatch.setenv("PCP_CULLAFTER", "2:12")  # 2.5 days: the 3-day-old archive goes too
    monkeypatch.setenv("PCP_COMPRESSAFTER", "never")
    status, out, _ = _daily(capsys, "-N")
    assert status == 0
    assert out.splitlines() == [
        "+ rm -f 20231101.00.10.0 20231101.00.10.index 20231101.00.10.meta"
        " 20231118.00.10.0 20231118.00.10.index 20231118.00.10.meta"
    ]
    status, out, _ = _daily(capsys, "-N", "-k", "forever", "-x", "2:12")
    assert out.splitlines() == [
        "+ xz -0 --block-size=10MiB 20231101.00.10.0 20231101.00.10.meta"
        " 20231118.00.10.0 20231118.00.10.meta"
    ]
    status, out, _ = _daily(capsys, "-N", "-K", "-x", "0")  # compress only, all but the newest
    assert "rm -f" not in out and "20231119.00.10.0 20231119.00.10.meta" in out
    assert "20231121" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "soon"], 'Error: -k value (soon) must be number, time, "forever" or "never"'),
        (["-x", "1:24"], 'Error: -x value (1:24) must be number, time, "forever" or "never"'),
        (["-X", "gzip -9"], "-X gzip -9: only xz is supported"),
        (["-Z", "-z"], "-Z and -z are mutually exclusive"),
    ],
)
def test_bad_input_is_one_line(four, capsys, args, message):
    before = _state(four)
    status, out, err = _daily(capsys, *args)
    assert (status, out, err) == (1, "", f"pmlogger_daily: {message}\n")
    assert _state(four) == before


def test_a_bad_layout_value_is_one_line(four, capsys, monkeypatch):
    monkeypatch.setenv("PCP_COMPRESSAFTER", "soon")
    status, _, err = _daily(capsys)
    assert status == 1
    assert err == (
        'pmlogger_daily: Error: $PCP_COMPRESSAFTER value (soon) must be number, time, "forever"'
        ' or "never"\n'
    )


def test_an_unwritable_directory_is_reported_and_left_alone(four, capsys, monkeypatch):
    before = _state(four)
    if os.geteuid() == 0:  # (root may write anywhere: say the directory is read-only)
        access = os.access
        monkeypatch.setattr(
            daily.os, "access", lambda p, m, **kw: Path(p) != four and access(p, m, **kw)
        )
    else:
        four.chmod(0o555)
    try:
        status, _, err = _daily(capsys)
    finally:
        four.chmod(0o755)
    assert status == 1
    assert err.splitlines()[-1] == (
        f"pmlogger_daily: {four}: directory is not writable, its archives left as they are"
    )
    assert _state(four) == before


def test_a_file_that_cannot_be_compressed_is_reported_and_kept(four, capsys):
    (four / "20231118.00.10.0.xz.partial").mkdir()  # in the way of the compressed file
    status, _, err = _daily(capsys)
    assert status == 1
    assert err.splitlines()[-1].startswith(
        f"pmlogger_daily: cannot compress {four / '20231118.00.10.0'}: "
    )
    assert (four / "20231118.00.10.0").exists() and _values(four / "20231118.00.10")
    assert (four / "20231119.00.10.0.xz").exists()  # the others carry on


def test_an_interrupted_compression_loses_nothing(four, capsys, monkeypatch):
    base = four / "20231118.00.10"
    data = (four / "20231118.00.10.0").read_bytes()

    def dies_halfway(src, dst, block_size=compress.BLOCK_SIZE):
        dst.write(b"\xfd7zXZ\x00 half")
        raise KeyboardInterrupt  # (the process is stopped mid-write)

    with monkeypatch.context() as patch:
        patch.setattr(compress, "write_xz", dies_halfway)
        with pytest.raises(KeyboardInterrupt):
            compress.compress_file(str(four / "20231118.00.10.0"))
    assert (four / "20231118.00.10.0").read_bytes() == data
    assert not list(four.glob("*.xz*"))
    # what a stop at each later step leaves: a stale partial, or both NAME.0 and NAME.0.xz
    (four / "20231118.00.10.0.xz.partial").write_bytes(b"\xfd7zXZ\x00 half")
    with (
        open(four / "20231119.00.10.meta", "rb") as src,
        open(four / "20231119.00.10.meta.xz", "wb") as dst,
    ):
        compress.write_xz(src, dst)
    _age(four / "20231119.00.10", 2)
    status, _, err = _daily(capsys)
    assert status == 0, err
    assert not list(four.glob("*.partial"))
    assert _values(base) and _values(four / "20231119.00.10")
    for name in ("20231118.00.10.0", "20231119.00.10.0", "20231119.00.10.meta"):
        assert not (four / name).exists() and (four / (name + ".xz")).exists()
    assert lzma.decompress((four / "20231118.00.10.0.xz").read_bytes()) == data


def test_xz_files_are_streams_of_blocks(tmp_path):
    data = b"".join(i.to_bytes(4, "little") for i in range(250_000))  # 1,000,000 bytes
    out = io.BytesIO()
    compress.write_xz(io.BytesIO(data), out, block_size=64 << 10)
    assert lzma.decompress(out.getvalue()) == data
    empty = io.BytesIO()
    compress.write_xz(io.BytesIO(b""), empty)
    assert lzma.decompress(empty.getvalue()) == b""
    if shutil.which("xz") is None:
        return
    (tmp_path / "f.xz").write_bytes(out.getvalue())
    listing = subprocess.run(
        ["xz", "--robot", "--list", str(tmp_path / "f.xz")], capture_output=True, text=True
    )
    assert listing.returncode == 0, listing.stderr
    totals = next(ln.split("\t") for ln in listing.stdout.splitlines() if ln.startswith("file"))
    assert (totals[1], totals[2]) == ("1", str(-(-len(data) // (64 << 10))))  # streams, blocks


# -- with a running primary pmlogger --------------------------------------------------------


def _bases(directory: Path) -> list[str]:
    return sorted(p.name[: -len(".index")] for p in directory.glob("*.index"))


def _readable(base: Path) -> bool:
    try:
        with Archive(str(base)) as a:
            return len(list(a.records())) >= 2
    except Exception:
        return False


def test_with_the_primary_pmlogger_running(layout, capsys):
    archive_dir, host, run_dir = layout
    tmp = archive_dir.parent
    (tmp / "cfg").write_text("log mandatory on every 200 msec { kernel.all.load }\n")
    _make_archive(host / "20231101.00.10", age_days=20)
    _make_archive(host / "20231119.00.10", age_days=2)
    with ours_serving(tmp) as pmcd:
        argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-P", "-h", pmcd.host, "-c", "cfg"]
        argv += ["-l", "log", str(host / "%Y%m%d.%H.%M")]
        env = dict(tool_env(), PCP_RUN_DIR=str(run_dir))
        proc = subprocess.Popen(argv, cwd=tmp, env=env, start_new_session=True)
        try:
            wait_until("the PID file", (run_dir / "pmlogger.pid").exists, proc)
            live = _bases(host)[-1]
            wait_until("a first sample", lambda: _readable(host / live), proc)
            # newer than the live one (so not protected as the newest) and as old as can be
            _make_archive(host / "29991231.23.59", age_days=-1)

            # its archive began today: no SIGUSR2 (-V says so); -k 0 -x 0 spares what it writes
            status, out, err = _daily(capsys, "-V", "-k", "0", "-x", "0")
            assert status == 0, err
            assert f"Skip sending SIGUSR2 to {proc.pid} ({host / live} began today)" in out
            assert _bases(host) == [live, "29991231.23.59"]
            assert sorted(p.name for p in host.glob(live + ".*")) == [
                f"{live}.0",
                f"{live}.index",
                f"{live}.meta",
            ]

            status, out, _ = _daily(capsys, "-N", "-Z")  # says it would signal, does not
            assert out.splitlines()[0] == f"+ kill -s USR2 {proc.pid}"
            assert _bases(host) == [live, "29991231.23.59"]

            status, out, err = _daily(capsys, "-Z", "-k", "forever", "-x", "never")
            assert status == 0, err
            wait_until("a second archive", lambda: len(_bases(host)) == 3, proc)
            second = _bases(host)[1]
            wait_until("its first sample", lambda: _readable(host / second), proc)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(DEADLINE) == 0
    assert not (run_dir / "pmlogger.pid").exists()
    assert second == live + "-00" or (second > live and "-" not in second)  # (a later minute)
    # the first archive, once old, is compressed; it reads back, as the second does
    values = _values(host / live)
    _age(host / live, 2)
    status, _, err = _daily(capsys)
    assert status == 0 and "no primary pmlogger running" in err
    assert (host / f"{live}.0.xz").exists() and (host / f"{live}.meta.xz").exists()
    assert _values(host / live) == values and _values(host / second)
    assert not (host / f"{second}.0.xz").exists()  # only two days from now


# -- judged by PCP --------------------------------------------------------------------------


@pytest.mark.interop
def test_pcp_reads_the_compressed_archives(four, capsys):
    for tool in ("pmlogcheck", "pmdumplog"):
        if shutil.which(tool) is None:
            pytest.skip(f"reference PCP 6 is not installed: no {tool} (Debian package pcp)")
    bases = [str(four / b) for b in ("20231118.00.10", "20231119.00.10")]

    def dumps() -> list[str]:
        out = []
        for base in bases:
            check = subprocess.run(["pmlogcheck", base], capture_output=True, text=True)
            assert (check.returncode, check.stdout, check.stderr) == (0, "", ""), base
            dump = subprocess.run(
                ["pmdumplog", "-a", base], capture_output=True, text=True, env=tool_env()
            )
            assert dump.returncode == 0, dump.stderr
            out.append(dump.stdout)
        return out

    before = dumps()
    status, _, err = _daily(capsys)
    assert status == 0, err
    assert all(Path(b + ".0.xz").exists() and not Path(b + ".0").exists() for b in bases)
    assert dumps() == before
