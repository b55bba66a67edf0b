"""pmlogger when the disk fails it: one line saying why, status 1, and a readable archive.

A full disk is made without root by a file size limit (RLIMIT_FSIZE, set in the
child with SIGXFSZ ignored): writes past it fail with EFBIG, as a full disk's fail
with ENOSPC.  The limit is 2 more than a multiple of 4 and every volume record is
a multiple of 4 bytes long, so the write that fails always fails part way: the
torn record is really there to be cut back.  The archive writer's own handling of
any errno is tested in-process with a stand-in for `os` that fails on cue.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from purepcp.pmapi.archive import Archive, ArchiveWriter
from purepcp.pmapi.archive import writer as writer_module
from purepcp.pmapi.archive.format import PM_TEXT_ONELINE, PM_TEXT_PMID
from purepcp.pmapi.archive.writer import ArchiveWriteError
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, pmID_build
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.client_servers import ours_serving, tool_env
from tests.support.our_pmcd import OurPMCD
from tests.support.reference_pmcd import require_reference
from tests.support.waiting import complete_records, wait_until

FAST = "log mandatory on every 10 msec { kernel.all.load hinv.ncpu }\n"
WRITE_FAILED = re.compile(
    r'pmlogger: write failed on "(?P<file>[^"]+)": returns (?P<got>\d+) expecting '
    r"(?P<want>\d+): (?P<why>[^\n]+)\n"
)


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OurPMCD]:
    """One of our pmcds (ephemeral port) for every pmlogger in this module."""
    with ours_serving(tmp_path_factory.mktemp("pmcd")) as running:
        yield running


def _limited(limit: int | None) -> Callable[[], None] | None:
    """A preexec_fn capping the size of any file the child writes at LIMIT bytes."""
    if limit is None:
        return None

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (EFBIG, not death by signal)
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    return cap


def _pmlogger(
    cwd: Path,
    *args: str,
    limit: int | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run our pmlogger in CWD (its config "cfg", its log "log") to the end, capturing stderr."""
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "cfg").write_text(FAST)
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-c", "cfg", "-l", "log", *args]
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env or tool_env(),
        preexec_fn=_limited(limit),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _no_traceback(run: subprocess.CompletedProcess[str], log: Path) -> None:
    """No Python traceback reached stderr or the log."""
    for text in (run.stderr, log.read_text(errors="replace") if log.exists() else ""):
        assert "Traceback" not in text, text


def _whole(base: Path) -> list[Any]:
    """Every record of archive BASE, which our reader must find whole (no problems)."""
    with Archive(str(base)) as a:
        assert a.problems == []
        return list(a.records())


def _one_write_failure(run: subprocess.CompletedProcess[str], log: Path) -> re.Match[str]:
    """The run ended with status 1 and one line, the same on stderr and in the log."""
    assert run.returncode == 1, run.stderr
    _no_traceback(run, log)
    found = WRITE_FAILED.fullmatch(run.stderr)
    assert found, run.stderr
    assert run.stderr in log.read_text()
    return found


# -- a full disk part way through ------------------------------------------------------------


def test_a_full_disk_is_one_line_and_the_archive_stays_whole(tmp_path, pmcd):
    """The volume fills part way through a record: one line, status 1, and the archive
    reads back whole (our reader, our pmdumplog) up to the record before."""
    limit = 6002  # (never a record boundary: the failing write tears its record)
    run = _pmlogger(tmp_path, "-h", pmcd.host, "-s", "100000", "arch", limit=limit)
    found = _one_write_failure(run, tmp_path / "log")
    assert found["file"] == "arch.0" and found["why"] == os.strerror(errno.EFBIG)
    assert 0 < int(found["got"]) < int(found["want"])  # a torn write ...
    size = (tmp_path / "arch.0").stat().st_size
    assert limit - int(found["want"]) < size < limit  # ... cut back to the record before it
    records = _whole(tmp_path / "arch")
    assert len(records) > 20  # (the prologue and many samples)
    assert sum(r.size for r in records) + 132 == size  # (132: the volume's label)
    # nothing after the failure: no epilogue (5 pmcd.pmlogger metrics), and the log ends
    # as PCP's does
    assert len(records[-1].result.vsets) == 2
    log = (tmp_path / "log").read_text().splitlines()
    assert log[-3] == run.stderr.rstrip("\n") and log[-1].startswith("Log finished ")
    dump = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmdumplog", "-a", "arch"],
        cwd=tmp_path,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dump.returncode == 0 and dump.stderr == "", dump.stderr


@pytest.mark.parametrize("log", ["log", "/dev/stderr"])
def test_a_full_disk_is_told_once_in_a_log_that_is_stderr_too(tmp_path, pmcd, log):
    """With stderr sent to the log file (``-l log 2>>log``, as a service manager or a
    script may start it) or -l /dev/stderr, the line was written to both: twice in the
    one log.  It is there once."""
    (tmp_path / "cfg").write_text(FAST)
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-c", "cfg", "-l", log]
    with open(tmp_path / "log", "ab") as stderr:
        run = subprocess.run(
            [*argv, "-h", pmcd.host, "-s", "100000", "arch"],
            cwd=tmp_path, env=tool_env(), preexec_fn=_limited(6002), stdin=subprocess.DEVNULL,
            stderr=stderr, timeout=120,
        )  # fmt: skip
    assert run.returncode == 1
    text = (tmp_path / "log").read_text()
    failed = [line for line in text.splitlines(keepends=True) if "write failed" in line]
    assert len(failed) == 1 and WRITE_FAILED.fullmatch(failed[0]), text
    assert "Traceback" not in text


@pytest.mark.interop
def test_pcp_reads_what_a_full_disk_left(tmp_path, pmcd):
    """PCP's pmlogcheck and pmdumplog -a read it all (PCP's own pmlogger leaves a torn
    record there, which both of them report as corrupt)."""
    require_reference("pmlogcheck", "pmdumplog")
    run = _pmlogger(tmp_path, "-h", pmcd.host, "-s", "100000", "arch", limit=4002)
    _one_write_failure(run, tmp_path / "log")
    base = str(tmp_path / "arch")
    check = subprocess.run(["pmlogcheck", base], capture_output=True, text=True, timeout=60)
    assert (check.returncode, check.stdout, check.stderr) == (0, "", "")
    dump = subprocess.run(
        ["pmdumplog", "-a", base], capture_output=True, text=True, timeout=60, env=tool_env()
    )
    assert dump.returncode == 0 and dump.stderr == "", dump.stderr
    stamps = [ln for ln in dump.stdout.splitlines() if ln[:2].isdigit() and " metric" in ln]
    assert len(stamps) == len(_whole(tmp_path / "arch"))


def test_a_full_disk_at_the_epilogue_is_one_line_too(tmp_path, pmcd):
    """-s 40 ends logging; the epilogue is what the disk has no room for.  (The size comes
    from a run without the limit: both archives' paths are as long, so their records are;
    40 samples make the volume the largest file, so the limit is the volume's.)"""
    free = _pmlogger(tmp_path / "a1", "-h", pmcd.host, "-s", "40", "arch")
    assert free.returncode == 0, free.stderr
    whole = _whole(tmp_path / "a1" / "arch")
    assert len(whole) == 42  # prologue, 40 samples, epilogue
    size = (tmp_path / "a1" / "arch.0").stat().st_size
    limit = size - whole[-1].size + 2  # (room for all but the epilogue, and 2 bytes of it)
    assert all(size > os.path.getsize(tmp_path / "a1" / f"arch.{s}") for s in ("meta", "index"))
    run = _pmlogger(tmp_path / "a2", "-h", pmcd.host, "-s", "40", "arch", limit=limit)
    found = _one_write_failure(run, tmp_path / "a2" / "log")
    assert found["file"] == "arch.0" and int(found["got"]) == 2
    assert [len(r.result.vsets) for r in _whole(tmp_path / "a2" / "arch")] == [
        len(r.result.vsets) for r in whole[:-1]
    ]


def test_no_room_for_a_label_leaves_no_archive(tmp_path, pmcd):
    """The very first write (the .index's label) fails: one line, and no empty or torn
    files are left to pass for an archive.  (The log is stderr: a log file would meet
    the limit first.)"""
    run = _pmlogger(tmp_path, "-h", pmcd.host, "-s", "3", "-l", "-", "arch", limit=70)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith("Log for pmlogger on ")  # (the log, on stderr)
    failed = [ln for ln in run.stderr.splitlines(keepends=True) if "failed" in ln]
    assert len(failed) == 1
    found = WRITE_FAILED.fullmatch(failed[0])
    assert found, failed
    assert found["file"] == "arch.index" and found["got"] == "70"
    assert not list(tmp_path.glob("arch.*"))


# -- other files pmlogger writes ---------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_log_file_that_cannot_be_written_does_not_stop_logging(tmp_path, pmcd):
    """As PCP's pmlogger, which ignores its log's write errors; stderr is told once."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "log").symlink_to("/dev/full")
    run = _pmlogger(tmp_path, "-h", pmcd.host, "-s", "3", "arch")
    assert run.returncode == 0, run.stderr
    assert run.stderr == 'pmlogger: Warning: cannot write log "log": No space left on device\n'
    assert len(_whole(tmp_path / "arch")) == 5


def test_an_unwritable_pid_file_is_a_warning(tmp_path, pmcd):
    """-P with a run directory that cannot be made: logged, and logging goes on (PCP's
    pmlogger ignores it silently)."""
    (tmp_path / "notadir").write_text("")
    env = dict(tool_env(), PCP_RUN_DIR=str(tmp_path / "notadir" / "run"))
    run = _pmlogger(tmp_path, "-P", "-h", pmcd.host, "-s", "3", "arch", env=env)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    _no_traceback(run, tmp_path / "log")
    log = (tmp_path / "log").read_text()
    assert f"Warning: cannot create PID file {tmp_path}/notadir/run/pmlogger.pid: " in log
    assert len(_whole(tmp_path / "arch")) == 5


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("afile/sub/arch", 'pmlogger: cannot create directory "afile/sub": Not a directory\n'),
        ("x" * 250, f'pmlogger: cannot create "{"x" * 250}.index": File name too long\n'),
    ],
    ids=["parent-is-a-file", "name-too-long"],
)
def test_an_archive_that_cannot_be_created_is_one_line(tmp_path, pmcd, name, message):
    """Errors making the archive's directory or files, as root gets them too (a read-only
    directory would not stop root): one line in the log and on stderr."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "afile").write_text("")
    run = _pmlogger(tmp_path, "-h", pmcd.host, "-s", "3", name)
    assert (run.returncode, run.stderr) == (1, message)
    _no_traceback(run, tmp_path / "log")
    assert message in (tmp_path / "log").read_text()


def test_a_vanished_directory_at_a_volume_switch_is_one_line(tmp_path, pmcd):
    """The archive's directory goes while logging; SIGHUP's new volume cannot be made."""
    (tmp_path / "cfg").write_text(FAST)
    argv = [
        sys.executable,
        "-m",
        "purepcp.pmlogger.main",
        "-c",
        "cfg",
        "-l",
        "log",
        "-h",
        pmcd.host,
    ]
    proc = subprocess.Popen(
        [*argv, "-s", "100000", "gone/arch"],
        cwd=tmp_path,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        volume = tmp_path / "gone" / "arch.0"  # (the prologue and a sample, whole)
        wait_until("a sample logged", lambda: complete_records(volume) >= 2, proc)
        shutil.rmtree(tmp_path / "gone")
        proc.send_signal(signal.SIGHUP)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1
    assert err == 'pmlogger: cannot create "gone/arch.1": No such file or directory\n'
    assert "Traceback" not in (tmp_path / "log").read_text()


# -- the archive writer alone --------------------------------------------------------------


class _FailingOS(ModuleType):
    """`os` for the writer, but writes to the file whose name ends with FAIL fail with
    errno ERROR once BUDGET bytes of it have been written (a short write first, as the
    kernel's)."""

    def __init__(self, fail: str, budget: int, error: int) -> None:
        super().__init__("os")
        self.fail, self.budget, self.error = fail, budget, error
        self.paths: dict[int, str] = {}
        self.attempts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: str, flags: int, mode: int = 0o777) -> int:
        fd = os.open(path, flags, mode)
        self.paths[fd] = path
        return fd

    def write(self, fd: int, data: bytes) -> int:
        if not self.paths.get(fd, "").endswith(self.fail):
            return os.write(fd, data)
        self.attempts += 1
        if self.budget <= 0:
            raise OSError(self.error, os.strerror(self.error))
        done = os.write(fd, bytes(data[: self.budget]))
        self.budget -= done
        return done


T0 = Timestamp(1_700_000_000, 0)
DESC = Desc(pmID_build(29, 0, 1))  # (the one metric these archives hold, a U32)


def _sample(i: int) -> Result:
    """Sample I: value I, I seconds after T0."""
    vs = ValueSet.of_atoms(DESC.pmid, DESC.type, [(PM_IN_NULL, i)])
    return Result(Timestamp(T0.sec + i, 0), (vs,))


def _new_writer(base: str) -> ArchiveWriter:
    """A new archive BASE, its one metric described."""
    w = ArchiveWriter(base, hostname="h", timezone="UTC", start=T0)
    w.put_desc(DESC, ["sample.n"])
    return w


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG, errno.EIO, errno.EDQUOT])
@pytest.mark.parametrize("fail", [".0", ".meta", ".index"])
def test_the_writer_cuts_a_torn_record_back_and_takes_no_more(tmp_path, monkeypatch, code, fail):
    """Any errno, any of the three files: the file ends at its last whole record again, the
    error names it, and the writer writes nothing more (the archive stays consistent)."""
    base = str(tmp_path / "arch")
    w = _new_writer(base)
    for i in range(5):
        w.put_result(_sample(i))
        w.put_index(_sample(i).timestamp)
    sizes = {s: os.path.getsize(base + s) for s in (".0", ".meta", ".index")}
    fake = _FailingOS(fail, 3, code)
    fake.paths = {w._vol_fd: base + ".0", w._meta_fd: base + ".meta", w._index_fd: base + ".index"}
    monkeypatch.setattr(writer_module, "os", fake)
    with pytest.raises(ArchiveWriteError) as caught:
        w.put_text(PM_TEXT_PMID | PM_TEXT_ONELINE, DESC.pmid, "a text to tear")  # (.meta)
        w.put_result(_sample(5))  # (.0)
        w.put_index(_sample(5).timestamp)  # (.index)
    assert os.path.getsize(base + fail) == sizes[fail]  # the 3 bytes are gone again
    error = caught.value
    assert error.code == -code and error.path == base + fail
    assert error.detail.startswith(f'write failed on "{base}{fail}": returns 3 expecting ')
    assert error.detail.endswith(": " + os.strerror(code))
    attempts = fake.attempts
    with pytest.raises(ArchiveWriteError):
        w.put_result(_sample(6))
    assert fake.attempts == attempts  # nothing more was tried
    monkeypatch.undo()
    w.close()  # (no second report: the failure was told once)
    records = _whole(Path(base))
    assert len(records) == 5 + (fail == ".index")


def test_the_writer_leaves_no_archive_without_its_labels(tmp_path, monkeypatch):
    """A label that cannot be written: the files already made go, rather than stay as an
    archive no reader can open."""
    monkeypatch.setattr(writer_module, "os", _FailingOS(".meta", 10, errno.ENOSPC))
    with pytest.raises(ArchiveWriteError) as caught:
        ArchiveWriter(str(tmp_path / "arch"), hostname="h", timezone="UTC", start=T0)
    assert os.listdir(tmp_path) == []
    assert caught.value.code == -errno.ENOSPC
