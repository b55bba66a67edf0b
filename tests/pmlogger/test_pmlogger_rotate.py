"""pmlogger's archive names from strftime templates, the -NN rule, SIGUSR2 and -P's PID file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.pmapi.archive import Archive
from purepcp.pmapi.ids import pmID_build
from purepcp.pmlogger.archname import ArchiveNameError, archive_exists, choose, expand, make_parents
from tests.support.client_servers import ours_serving, tool_env
from tests.support.waiting import wait_until

WHEN = 1_700_000_000  # Tue Nov 14 22:13:20 2023 UTC
ARCHIVE_PMID = pmID_build(2, 3, 2)  # pmcd.pmlogger.archive


@pytest.fixture
def zone(monkeypatch):
    """Set the local zone (TZ) for a test; the process's zone is restored afterwards."""

    def set_zone(tz: str) -> None:
        monkeypatch.setenv("TZ", tz)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


# -- names -----------------------------------------------------------------------------------


def test_template_is_expanded_in_local_time(zone):
    zone("UTC0")
    assert expand("%Y%m%d.%H.%M", WHEN) == "20231114.22.13"
    zone("JST-9")  # nine hours ahead: already the next day
    assert expand("%Y%m%d.%H.%M", WHEN) == "20231115.07.13"
    assert expand("dir/%Y/%m%d", WHEN) == "dir/2023/1115"
    assert expand("plain", WHEN) == "plain"


def test_a_name_without_metacharacters_is_used_as_given(tmp_path):
    base = str(tmp_path / "plain")
    Path(base + ".index").write_bytes(b"")
    assert choose(base) == base  # (the writer refuses it, as PCP's does)


@pytest.mark.parametrize("taken", [".index", ".meta", ".0", ".0.xz", ".meta.gz", ".index.bz2"])
def test_any_file_of_an_archive_takes_its_name(tmp_path, zone, taken):
    zone("UTC0")
    template = str(tmp_path / "%Y%m%d.%H.%M")
    first = str(tmp_path / "20231114.22.13")
    assert choose(template, WHEN) == first
    Path(first + taken).write_bytes(b"")
    assert archive_exists(first)
    assert choose(template, WHEN) == first + "-00"


def test_other_files_do_not_take_a_name(tmp_path, zone):
    zone("UTC0")
    first = tmp_path / "20231114.22.13"
    for other in (".1", ".log", ".0.xz.partial", "-00.index"):
        Path(f"{first}{other}").write_bytes(b"")
    assert choose(str(tmp_path / "%Y%m%d.%H.%M"), WHEN) == str(first)


def test_suffixes_count_up_to_98_then_fail(tmp_path, zone):
    zone("UTC0")
    template = str(tmp_path / "%Y%m%d.%H.%M")
    first = str(tmp_path / "20231114.22.13")
    Path(first + ".meta").write_bytes(b"")
    for n in range(5):
        Path(f"{first}-{n:02d}.0").write_bytes(b"")
    assert choose(template, WHEN) == first + "-05"
    for n in range(5, 99):
        Path(f"{first}-{n:02d}.index").write_bytes(b"")
    with pytest.raises(ArchiveNameError, match="-98"):
        choose(template, WHEN)


def test_missing_directories_are_made(tmp_path):
    base = tmp_path / "a" / "b" / "arch"
    make_parents(str(base))
    assert base.parent.is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(ArchiveNameError, match="cannot create directory"):
        make_parents(str(tmp_path / "file" / "x" / "arch"))


# -- a running pmlogger ------------------------------------------------------------------------


def _records(base: str) -> list:
    with Archive(base) as a:
        assert a.problems == []
        return list(a.records())


def _has_samples(base: str, n: int) -> bool:
    """True once BASE holds its prologue and N samples (False while it cannot be read yet)."""
    try:
        return len(_records(base)) >= 1 + n
    except Exception:
        return False


def _bases(directory: Path) -> list[str]:
    return sorted(str(p)[: -len(".meta")] for p in directory.glob("*.meta"))


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def rotated(tmp_path_factory):
    """pmlogger -P with a template and -s 5: SIGUSR2 after its first sample, then it runs on
    to its limit, which starts again in the second archive.  (dir, logger PID, status, log)"""
    tmp = tmp_path_factory.mktemp("rotate")
    (tmp / "cfg").write_text(
        "log mandatory on once { hinv.ncpu }\n"
        "log mandatory on every 1 sec { kernel.all.load simple.numfetch }\n"
    )
    archives = tmp / "archives" / "host"  # (made by pmlogger)
    env = dict(tool_env(), PCP_RUN_DIR=str(tmp / "run"))
    with ours_serving(tmp) as pmcd:
        argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-P", "-h", pmcd.host, "-c", "cfg"]
        argv += ["-s", "5", "-l", "log", "-m", "pmlogger_check", str(archives / "%Y-rot")]
        proc = subprocess.Popen(argv, cwd=tmp, env=env, start_new_session=True)
        try:
            pidfile = tmp / "run" / "pmlogger.pid"
            wait_until("the PID file", lambda: pidfile.exists() and pidfile.read_text() != "", proc)
            assert pidfile.read_text() == str(proc.pid)  # (as PCP writes it: no newline)
            wait_until("the first archive", lambda: len(_bases(archives)) == 1, proc)
            first = _bases(archives)[0]
            wait_until("a first sample", lambda: _has_samples(first, 1), proc)
            proc.send_signal(signal.SIGUSR2)
            status = proc.wait(60)
        finally:
            _stop(proc)
    assert not pidfile.exists()  # removed at a clean exit
    return archives, proc.pid, status, (tmp / "log").read_text()


def test_sigusr2_gives_two_complete_archives(rotated):
    archives, pid, status, log = rotated
    assert status == 0, log
    first, second = _bases(archives)
    year = Path(first).name[:4]
    if Path(second).name[:4] == year:  # (the same expansion: the -00 rule)
        assert Path(first).name == f"{year}-rot" and second == first + "-00"
    stamps = []
    for base in (first, second):
        recs = _records(base)
        for logue in (recs[0], recs[-1]):  # a prologue and an epilogue naming this archive
            sets = {vs.pmid: vs for vs in logue.result.vsets}
            assert sets[ARCHIVE_PMID].values == (os.path.abspath(base),)
        with Archive(base) as a:
            assert a.label.pid == pid
            names = {n for names in a.names.values() for n in names}
            assert {"hinv.ncpu", "kernel.all.load", "simple.numfetch"} <= names
            ncpu = a.pmns.lookup("hinv.ncpu")
        once = [r for r in recs if any(vs.pmid == ncpu for vs in r.result.vsets)]
        assert len(once) == 1  # "once" is once per archive
        stamps.append((recs[0].stamp, recs[-1].stamp))
    assert stamps[0][1] <= stamps[1][0]  # the second begins after the first ends
    # -s 5 counts again in the new archive: five samples between prologue and epilogue
    assert len(_records(second)) == 5 + 2
    assert 2 <= len(_records(first)) < 5 + 2


def test_the_log_tells_of_the_new_archive(rotated):
    archives, _pid, _status, log = rotated
    first, second = _bases(archives)
    lines = log.splitlines()
    assert f"Archive basename: {first}" in lines and f"Archive basename: {second}" in lines
    assert 'Starting primary logger for host "' in log
    switch = [ln for ln in lines if "Caught signal 12" in ln]
    assert len(switch) == 1 and switch[0].endswith(
        "Info: pmlogger: Caught signal 12, starting a new archive"
    )
    assert lines.index(switch[0]) < lines.index(f"Archive basename: {second}")
    assert lines[-3].endswith("Info: pmlogger: Sample limit reached, exiting")


@pytest.mark.interop
def test_both_archives_pass_pmlogcheck(rotated):
    if shutil.which("pmlogcheck") is None:
        pytest.skip("reference PCP 6 is not installed: no pmlogcheck (Debian package pcp)")
    archives, *_ = rotated
    for base in _bases(archives):
        check = subprocess.run(["pmlogcheck", base], capture_output=True, text=True, timeout=60)
        assert (check.returncode, check.stdout, check.stderr) == (0, "", ""), base


def test_sigusr2_without_metacharacters_exits_as_pcps_does(tmp_path):
    (tmp_path / "cfg").write_text("log mandatory on every 200 msec { kernel.all.load }\n")
    env = dict(tool_env(), PCP_RUN_DIR=str(tmp_path / "run"))
    with ours_serving(tmp_path) as pmcd:
        argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-P", "-h", pmcd.host, "-c", "cfg"]
        proc = subprocess.Popen(
            [*argv, "-l", "log", "fixed"],
            cwd=tmp_path,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            wait_until("a first sample", lambda: _has_samples(str(tmp_path / "fixed"), 1), proc)
            wait_until("the PID file", (tmp_path / "run" / "pmlogger.pid").exists, proc)
            proc.send_signal(signal.SIGUSR2)
            status = proc.wait(60)
            stderr = proc.stderr.read()
        finally:
            _stop(proc)
    assert status == 1
    assert stderr == 'pmlogger: "fixed.index" already exists, not over-written\n'
    recs = _records(str(tmp_path / "fixed"))  # closed cleanly first: prologue ... epilogue
    assert ARCHIVE_PMID in {vs.pmid for vs in recs[-1].result.vsets} and len(recs) >= 3
    assert not (tmp_path / "run" / "pmlogger.pid").exists()
    assert "Caught signal 12" in (tmp_path / "log").read_text()


def _run(tmp: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "purepcp.pmlogger.main", *args],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=60,
        env=env or tool_env(),
    )


def test_primary_refuses_a_remote_pmcd(tmp_path):
    (tmp_path / "cfg").write_text("log mandatory on once { hinv.ncpu }\n")
    run = _run(tmp_path, "-P", "-h", "pcp.example.com:44322", "-c", "cfg", "arch")
    assert run.returncode == 1
    assert run.stderr.startswith("pmlogger: -P and -h are mutually exclusive")
    assert run.stderr.count("\n") == 1 and not list(tmp_path.glob("arch*"))


def test_primary_with_an_unreadable_layout_is_one_line(tmp_path):
    (tmp_path / "cfg").write_text("log mandatory on once { hinv.ncpu }\n")
    (tmp_path / "pcp.conf").write_text("PCP_RUN_DIR=/x\nthis is not a setting\n")
    env = dict(tool_env(), PUREPCP_CONF=str(tmp_path / "pcp.conf"))
    env.pop("PCP_RUN_DIR", None)
    run = _run(tmp_path, "-P", "-c", "cfg", "arch", env=env)
    assert run.returncode == 1
    assert run.stderr == (
        f"pmlogger: {tmp_path / 'pcp.conf'}:2: expected NAME=value, not 'this is not a setting'\n"
    )
    assert not list(tmp_path.glob("arch*"))
