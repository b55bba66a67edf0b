"""pmlogger_daily: SIGUSR2 to the primary pmlogger, compression and culling by age, safely."""

from __future__ import annotations

import io
import lzma
import os
import shutil
import signal
import socket
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
#: an archive of today's (never merged nor renamed), and one later today (with the suffix
#: PCP's pmlogger adds to a name taken, so that a pmlogger a test starts at 23:59 cannot
#: have made it first)
TODAY, LATER = time.strftime("%Y%m%d.00.00"), time.strftime("%Y%m%d.23.59-99")
_ENABLED = daily._pmlogger_enabled  # (the layout fixture replaces it)


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


def _actions(out: str) -> list[str]:
    """What -N says it would do to the archives (not the stamp, cd or lock lines)."""
    skip = ("+ date-and-timestamp", "+ cd ", "+ get mutex lock", "+ export ")
    return [ln for ln in out.splitlines() if ln.startswith("+ ") and not ln.startswith(skip)]


def _state(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """PCP's directories in TMP_PATH, and a control file naming one directory, that of
    the primary pmlogger; (archive dir, that directory, run dir)."""
    archive_dir, run_dir = tmp_path / "archive", tmp_path / "run"
    host = archive_dir / "host"
    host.mkdir(parents=True)
    run_dir.mkdir()
    for name in ("log/pmlogger", "tmp/pmlogger", "var/config/pmlogrewrite"):
        (tmp_path / name).mkdir(parents=True)
    control = tmp_path / "control"
    control.write_text(f"$version=1.1\nLOCALHOSTNAME y n {host} -c config.default\n")
    monkeypatch.setenv("PCP_ARCHIVE_DIR", str(archive_dir))
    monkeypatch.setenv("PCP_RUN_DIR", str(run_dir))
    monkeypatch.setenv("PCP_LOG_DIR", str(tmp_path / "log"))
    monkeypatch.setenv("PCP_TMP_DIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("PCP_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("PCP_PMLOGGERCONTROL_PATH", str(control))
    monkeypatch.setattr(daily, "_pmlogger_enabled", lambda: False)  # (see test_enabled...)
    monkeypatch.delenv("PCP_CULLAFTER", raising=False)
    monkeypatch.delenv("PCP_COMPRESSAFTER", raising=False)
    return archive_dir, host, run_dir


def _daily(capsys, *args: str) -> tuple[int, str, str]:
    """Run pmlogger_daily: its status, stdout and stderr -- both its log's text, as PCP's
    (stdout and stderr go to $PCP_LOG_DIR/pmlogger/pmlogger_daily[-K].log), unless -N."""
    log = Path(os.environ["PCP_LOG_DIR"], "pmlogger")
    log = log / ("pmlogger_daily-K.log" if "-K" in args else "pmlogger_daily.log")
    log.unlink(missing_ok=True)
    status = daily.main(list(args))
    out = capsys.readouterr()
    if "-N" in args or "--version" in args or "--help" in args or (status and not log.exists()):
        return status, out.out, out.err
    assert (out.out, out.err) == ("", "")
    text = log.read_text() if log.exists() else ""
    return status, text, text


@pytest.fixture
def four(layout):
    """In one host's directory: archives 20, 3 and 2 days old and one being written, plus
    files pmlogger_daily must never touch (undated names)."""
    _, host, _ = layout
    for name, age in (("20231101", 20), ("20231118", 3), ("20231119", 2)):
        _make_archive(host / name, age_days=age)
    _make_archive(host / TODAY, age_days=0)
    _make_archive(host / "mine", age_days=30)
    (host / "notes.txt").write_text("keep\n")
    _age(host / "notes", 30)
    return host


def test_old_archives_are_compressed_older_ones_culled_the_newest_left(four, capsys):
    """(-f: PCP's compresses only where it can ask the pmlogger which volume it writes,
    or with -f; the test before shows that without it nothing is compressed.)"""
    before = {b: _values(four / b) for b in ("20231118", "20231119")}
    mtimes = {p.name: p.stat().st_mtime_ns for p in four.iterdir()}
    volume = (four / "20231118.0").read_bytes()
    status, _, err = _daily(capsys, "-f")
    assert status == 0, err
    assert (
        'Warning: no pmlogger instance running for host "local:"' in err
    )  # (a warning: no rotation, the rest done)
    names = sorted(p.name for p in four.iterdir())
    assert names == [
        "20231118.0.xz", "20231118.index", "20231118.meta.xz",
        "20231119.0.xz", "20231119.index", "20231119.meta.xz",
        f"{TODAY}.0", f"{TODAY}.index", f"{TODAY}.meta",
        "mine.0", "mine.index", "mine.meta", "notes.txt",
    ]  # fmt: skip
    for base, values in before.items():
        assert _values(four / base) == values  # read back through the compression
        for part in (".0.xz", ".meta.xz"):  # the age is kept: an xz file is as old as its data
            assert (four / (base + part)).stat().st_mtime_ns == mtimes[base + part[:-3]]
    assert lzma.decompress((four / "20231118.0.xz").read_bytes()) == volume


def test_showme_changes_nothing_and_says_what_it_would_do(four, capsys):
    before = _state(four)
    status, out, _err = _daily(capsys, "-N", "-f")
    assert status == 0
    assert _state(four) == before
    assert _actions(out) == [
        "+ rm -f 20231101.0 20231101.index 20231101.meta",
        "+ xz -0 --block-size=10MiB 20231118.0 20231118.meta 20231119.0 20231119.meta",
    ]


def test_no_pmlogger_no_compression_unless_forced_and_another_program(four, capsys):
    """As PCP's: with no pmlogger to ask, compression is skipped with a warning (the
    culling is done); -X names the program, which -N shows."""
    status, out, _ = _daily(capsys, "-N")
    assert status == 0
    assert _actions(out) == ["+ rm -f 20231101.0 20231101.index 20231101.meta"]
    assert out.endswith(
        "pmlogger_daily: [control:2]\n"
        "Warning: current volume of current pmlogger not known, compression skipped\n"
    )
    status, out, _ = _daily(capsys, "-N", "-f", "-k", "never", "-X", "gzip -9")
    assert _actions(out) == ["+ gzip -9 20231101.0 20231101.meta 20231118.0 20231118.meta"
                             " 20231119.0 20231119.meta"]  # fmt: skip


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
    status, out, _ = _daily(capsys, "-V", "-N", "-f")
    quiet_status, quiet, _ = _daily(capsys, "-N", "-f")
    assert status == quiet_status == 0
    assert _actions(quiet) == _actions(out)
    assert len(out.splitlines()) > len(quiet.splitlines())


def test_the_periods_come_from_flags_the_environment_then_the_layout(four, capsys, monkeypatch):
    monkeypatch.setenv("PCP_CULLAFTER", "2:12")  # 2.5 days: the 3-day-old archive goes too
    monkeypatch.setenv("PCP_COMPRESSAFTER", "never")
    status, out, _ = _daily(capsys, "-N", "-f")
    assert status == 0
    assert _actions(out) == [
        "+ rm -f 20231101.0 20231101.index 20231101.meta 20231118.0 20231118.index 20231118.meta"
    ]
    # as PCP's: $PCP_COMPRESSAFTER in the environment overrides -x, with a warning
    status, out, _ = _daily(capsys, "-N", "-f", "-k", "forever", "-x", "2:12")
    assert out.startswith(
        "Warning: -x value (2:12) ignored because $PCP_COMPRESSAFTER (never) set in environment\n"
    )
    assert _actions(out) == []
    monkeypatch.delenv("PCP_COMPRESSAFTER")
    status, out, _ = _daily(capsys, "-N", "-f", "-k", "forever", "-x", "2:12")
    assert _actions(out) == [
        "+ xz -0 --block-size=10MiB 20231101.0 20231101.meta 20231118.0 20231118.meta"
    ]
    status, out, _ = _daily(capsys, "-N", "-f", "-K", "-x", "0")  # compress only
    assert "rm -f" not in out and "20231119.0 20231119.meta" in out
    assert f"{TODAY}.0 {TODAY}.meta" in out  # (-f: even the newest, as PCP's -f)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "soon"], 'Error: -k value (soon) must be number, time, "forever" or "never"'),
        (["-x", "1:24"], 'Error: -x value (1:24) must be number, time, "forever" or "never"'),
        (["-Z", "-z"], "pmlogger_daily: -Z and -z are mutually exclusive"),
    ],
)
def test_bad_input_is_one_line(four, capsys, args, message):
    before = _state(four)
    status, out, err = _daily(capsys, *args)
    assert (status, out + err) == (1, f"{message}\n")
    assert _state(four) == before


def test_a_bad_layout_value_is_one_line(four, capsys, monkeypatch):
    monkeypatch.setenv("PCP_COMPRESSAFTER", "soon")
    status, out, err = _daily(capsys, "-f")
    assert status == 1
    assert out + err == (  # (PCP's words, on stdout, before any log)
        'Error: $PCP_COMPRESSAFTER value (soon) must be number, time, "forever" or "never"\n'
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
        status, _, err = _daily(capsys, "-f")
    finally:
        four.chmod(0o755)
    assert status == 1
    assert err.splitlines()[-1] == (
        f"pmlogger_daily: {four}: directory is not writable, its archives left as they are"
    )
    assert _state(four) == before


def test_a_file_that_cannot_be_compressed_is_reported_and_kept(four, capsys):
    (four / "20231118.0.xz.partial").mkdir()  # in the way of the compressed file
    status, _, err = _daily(capsys, "-f")
    assert status == 1
    assert err.splitlines()[-1].startswith(
        f"pmlogger_daily: cannot compress {four / '20231118.0'}: "
    )
    assert (four / "20231118.0").exists() and _values(four / "20231118")
    assert (four / "20231119.0.xz").exists()  # the others carry on


def test_an_interrupted_compression_loses_nothing(four, capsys, monkeypatch):
    base = four / "20231118"
    data = (four / "20231118.0").read_bytes()

    def dies_halfway(src, dst, block_size=compress.BLOCK_SIZE):
        dst.write(b"\xfd7zXZ\x00 half")
        raise KeyboardInterrupt  # (the process is stopped mid-write)

    with monkeypatch.context() as patch:
        patch.setattr(compress, "write_xz", dies_halfway)
        with pytest.raises(KeyboardInterrupt):
            compress.compress_file(str(four / "20231118.0"))
    assert (four / "20231118.0").read_bytes() == data
    assert not list(four.glob("*.xz*"))
    # what a stop at each later step leaves: a stale partial, or both NAME.0 and NAME.0.xz
    (four / "20231118.0.xz.partial").write_bytes(b"\xfd7zXZ\x00 half")
    with (
        open(four / "20231119.meta", "rb") as src,
        open(four / "20231119.meta.xz", "wb") as dst,
    ):
        compress.write_xz(src, dst)
    _age(four / "20231119", 2)
    status, _, err = _daily(capsys, "-f")
    assert status == 0, err
    assert not list(four.glob("*.partial"))
    assert _values(base) and _values(four / "20231119")
    for name in ("20231118.0", "20231119.0", "20231119.meta"):
        assert not (four / name).exists() and (four / (name + ".xz")).exists()
    assert lzma.decompress((four / "20231118.0.xz").read_bytes()) == data


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
    _make_archive(host / "20231101", age_days=20)
    _make_archive(host / "20231119", age_days=2)
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
            _make_archive(host / LATER, age_days=-1)

            # its archive began today: no SIGUSR2 (-V says so); -k 0 -x 0 spares what it writes
            status, out, err = _daily(capsys, "-V", "-k", "0", "-x", "0")
            assert status == 0, err
            assert f"Skip sending SIGUSR2 to {proc.pid} (reexec already done)" in out
            assert _bases(host) == [live, LATER]
            assert sorted(p.name for p in host.glob(live + ".*")) == [
                f"{live}.0",
                f"{live}.index",
                f"{live}.meta",
            ]

            status, out, _ = _daily(capsys, "-N", "-Z")  # says it would signal, does not
            assert f"+ pmsignal -s USR2 {proc.pid}" in out.splitlines()
            assert _bases(host) == [live, LATER]

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
    status, _, err = _daily(capsys, "-f")
    assert status == 0 and "no pmlogger instance running" in err
    assert (host / f"{live}.0.xz").exists() and (host / f"{live}.meta.xz").exists()
    assert _values(host / live) == values and _values(host / second)
    assert not (host / f"{second}.0.xz").exists()  # only two days from now


# -- judged by PCP --------------------------------------------------------------------------


@pytest.mark.interop
def test_pcp_reads_the_compressed_archives(four, capsys):
    for tool in ("pmlogcheck", "pmdumplog"):
        if shutil.which(tool) is None:
            pytest.skip(f"reference PCP 6 is not installed: no {tool} (Debian package pcp)")
    bases = [str(four / b) for b in ("20231118", "20231119")]

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
    status, _, err = _daily(capsys, "-f")
    assert status == 0, err
    assert all(Path(b + ".0.xz").exists() and not Path(b + ".0").exists() for b in bases)
    assert dumps() == before


# -- the control file, the log, the stamp, merging and renaming ----------------------------


def _control(layout, *lines: str) -> Path:
    path = layout[0].parent / "elsewhere" / "control"  # (not $PCP_PMLOGGERCONTROL_PATH's dir)
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_each_control_line_directory_is_processed(layout, capsys, tmp_path):
    """Only the directories the control file names are touched (PCP's -c), each with
    PCP's per-line messages; the one without a pmlogger is no error."""
    archive_dir = layout[0]
    other, ignored = archive_dir / "other", archive_dir / "ignored"
    for directory in (other, ignored):
        directory.mkdir()
        _make_archive(directory / "20231101", age_days=20)
        _make_archive(directory / TODAY, age_days=0)
    control = _control(layout, "$version=1.1", f"remote n n {other} -c cfg")
    status, out, _ = _daily(capsys, "-V", "-c", str(control))
    assert status == 0, out
    assert not list(other.glob("20231101.*")) and list(ignored.glob("20231101.*"))
    assert "=== daily maintenance of PCP archives for host remote ===" in out
    # (the name as PCP's shows it: less the directory of $PCP_PMLOGGERCONTROL_PATH)
    assert (
        "pmlogger_daily: [elsewhere/control:2]\n"
        'Warning: no pmlogger instance running for host "remote"\n'
        "pmlogger_daily: [elsewhere/control:2]\n"
        "Warning: skipping log rotation because we don't know which pmlogger to signal\n"
    ) in out
    assert "Archive files older than 14 days being removed ...\n" in out
    assert "    20231101.0 20231101.index 20231101.meta\n" in out


def test_control_file_errors_are_pcps(layout, capsys, tmp_path):
    control = _control(layout, "$version=1.1", "LOCALHOSTNAME y n", "foo n")
    status, out, _ = _daily(capsys, "-c", str(control))
    assert status == 1
    assert out == "".join(
        f"pmlogger_daily: [elsewhere/control:{n}]\n"
        "Error: insufficient fields in control file record\n"
        f'... logging for host "{host}" unchanged\n'
        for n, host in ((2, "LOCALHOSTNAME"), (3, "foo"))
    )
    status, out, _ = _daily(capsys, "-c", str(tmp_path / "none"))
    assert (status, out) == (1, f"pmlogger_daily: Error: cannot find control file "
                                f"({tmp_path / 'none'})\n")  # fmt: skip


def test_the_log_and_the_stamp(four, layout, capsys, tmp_path):
    """-l names the log (the previous one kept as .prev); a full run writes the stamp
    pmlogger_check looks for, -K and -N do not; -p does nothing when it is recent."""
    log = tmp_path / "mylog"
    stamp = tmp_path / "log" / "pmlogger" / "pmlogger_daily.stamp"
    log.write_text("before\n")
    assert daily.main(["-K", "-l", str(log)]) == 0
    assert (tmp_path / "mylog.prev").read_text() == "before\n"
    assert "no pmlogger instance running" in log.read_text()
    assert not stamp.exists()  # (-K: compression only)
    assert not list(tmp_path.glob("mylog.*[0-9]"))  # (the PID-named log is renamed)
    status, out, _ = _daily(capsys, "-N", "-f")
    assert out.startswith("+ date-and-timestamp ") and not stamp.exists()
    status, out, _ = _daily(capsys, "-k", "forever", "-x", "never")
    comment, seconds = stamp.read_text().splitlines()
    assert comment.startswith("# ") and abs(int(seconds) - time.time()) < 60
    status, out, _ = _daily(capsys, "-N", "-p")
    assert status == 0 and out.startswith(f"-p stamp {seconds} now ")
    assert out.splitlines()[0].endswith(" do nothing") and len(out.splitlines()) == 1


def _yesterday(hour: int, minute: int = 0) -> str:
    when = time.localtime(time.time() - DAY)
    return time.strftime("%Y%m%d", when) + f".{hour:02d}.{minute:02d}"


def test_a_days_archives_are_merged_and_a_single_one_renamed(layout, capsys):
    """As PCP's: pmlogmv renames a day's only archive YYYYMMDD, pmlogger_merge merges
    several; today's are left alone, and -o merges yesterday's only."""
    _, host, _ = layout
    _make_archive(host / "20231118.00.10", age_days=0)
    yesterday = [_yesterday(0, 10), _yesterday(6)]
    for base, age in zip(yesterday, (0.02, 0.01), strict=True):
        _make_archive(host / base, age_days=age)
    today = time.strftime("%Y%m%d.%H.%M")
    _make_archive(host / today, age_days=0)
    values = {b: _values(host / b) for b in ["20231118.00.10", *yesterday]}
    status, out, _ = _daily(capsys, "-N", "-o", "-x", "never")
    day = yesterday[0][:8]
    assert _actions(out) == [
        f"+ pmlogrewrite -iq -c $PCP_VAR_DIR/config/pmlogrewrite {yesterday[0]}",
        f"+ pmlogrewrite -iq -c $PCP_VAR_DIR/config/pmlogrewrite {yesterday[1]}",
        f"+ pmlogger_merge -N  -f {yesterday[0]} {yesterday[1]} {day}",
    ]
    status, out, _ = _daily(capsys, "-x", "never")
    assert status == 0, out
    assert _bases(host) == ["20231118", day, today]
    assert _values(host / "20231118") == values["20231118.00.10"]
    assert _values(host / day) == values[yesterday[0]] + values[yesterday[1]]
    status, out, _ = _daily(capsys, "-V", "-x", "never")
    assert "Warning: no archives found to merge\n" in out


def test_enabled_service_makes_a_missing_pmlogger_an_error(layout, capsys, monkeypatch):
    """PCP's is_chkconfig_on: a private tree ($PCP_DIR) has every service on; then a
    line whose pmlogger is not running is an error (status 1), as in PCP's QA 929."""
    monkeypatch.setenv("PCP_DIR", "/somewhere")
    assert _ENABLED()
    monkeypatch.setattr(daily, "_pmlogger_enabled", lambda: True)
    control = _control(layout, "$version=1.1", f"one n n {layout[1]} -c cfg")
    status, out, _ = _daily(capsys, "-N", "-V", "-c", str(control))
    assert status == 1
    assert (
        "pmlogger_daily: [elsewhere/control:2]\n"
        'Error: no pmlogger instance running for host "one"\n'
        '... logging for host "one" unchanged\n'
    ) in out


def test_no_control_file_is_the_packaged_line(layout, capsys, monkeypatch):
    """With no control file at all (our pmlogger.service needs none), the line PCP's
    packaged file has: the primary pmlogger's $PCP_ARCHIVE_DIR/HOSTNAME; with -c, a
    missing file is PCP's error."""
    archive_dir = layout[0]
    monkeypatch.setenv("PCP_PMLOGGERCONTROL_PATH", str(archive_dir.parent / "none"))
    mine = archive_dir / socket.gethostname()
    mine.mkdir()
    _make_archive(mine / "20231101", age_days=20)
    _make_archive(mine / TODAY, age_days=0)
    status, out, _ = _daily(capsys, "-N")
    assert status == 0
    assert f"+ cd {mine}" in out.splitlines()
    assert _actions(out) == ["+ rm -f 20231101.0 20231101.index 20231101.meta"]


def test_environment_and_control_file_compression_settings(four, layout, capsys, monkeypatch):
    """As PCP's QA 623: $PCP_COMPRESS... override -X -x -Y (warnings in option order),
    a control file's assignments override both, and -Y's files are not compressed."""
    monkeypatch.setenv("PCP_COMPRESS", "xz")
    monkeypatch.setenv("PCP_COMPRESSAFTER", "1")
    monkeypatch.setenv("PCP_COMPRESSREGEX", r"\.index$")
    _, out, _ = _daily(capsys, "-N", "-f", "-X", "nope", "-x", "7", "-Y", "xyz")
    assert out.splitlines()[:3] == [
        "Warning: -X value (nope) ignored because $PCP_COMPRESS (xz) set in environment",
        "Warning: -x value (7) ignored because $PCP_COMPRESSAFTER (1) set in environment",
        r"Warning: -Y value (xyz) ignored because $PCP_COMPRESSREGEX (\.index$) set in environment",
    ]
    assert _actions(out)[-1] == "+ xz 20231118.0 20231118.meta 20231119.0 20231119.meta"
    control = _control(
        layout,
        "$version=1.1",
        "$PCP_COMPRESS=gzip",
        "$PCP_COMPRESSREGEX='\\.(index|meta)$'",
        f"LOCALHOSTNAME y n {four} -c cfg",
    )
    _, out, _ = _daily(capsys, "-N", "-f", "-c", str(control))
    assert (
        "pmlogger_daily: [elsewhere/control:4]\n"
        "Warning: $PCP_COMPRESS (gzip) reset from control file, previous value (xz) ignored\n"
    ) in out
    assert r"$PCP_COMPRESSREGEX (.(index|meta)$) reset from control file" in out
    assert _actions(out)[-1] == "+ gzip 20231118.0 20231119.0"
