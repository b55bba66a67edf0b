"""pmlogger_check and pmlogger_merge, and the control file they read, as PCP 6.0.3's.

Unit tests read control files (versions, assignments, quoting, warnings and errors in
PCP's words).  Interop tests run PCP's scripts and ours on the same inputs: -N dry runs
of pmlogger_check over one control file, and pmlogger_merge over archives of our
writer's (with PCP's pmlogextract doing the merge for both).  A live test starts a
pmlogger with our pmlogger_check against our pmcd, finds it running on a second run,
and stops it with -s; every directory is the test's own.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmlogger.check import parse, pmlogger_config, pmlogger_logfile
from purepcp.pmlogger.controlfile import ControlLine, ControlParser, Message, control_files

BIN = Path(sys.executable).parent
PCP_CHECK = "/usr/lib/pcp/bin/pmlogger_check"
PCP_MERGE = "/usr/lib/pcp/bin/pmlogger_merge"
PMID = pmID_build(245, 0, 1)


def parse_text(text: str, **kw) -> list[ControlLine | Message]:
    env = {"PCP_ARCHIVE_DIR": "/arch", "PCP_LOG_DIR": "/log"}
    parser = ControlParser("pmlogger_check", env, hostname="box", **kw)
    return list(parser.parse_text("ctl", text))


# -- the control file -------------------------------------------------------------------------


def test_version_1_1_line() -> None:
    (line,) = parse_text(
        "$version=1.1\nLOCALHOSTNAME y n PCP_ARCHIVE_DIR/LOCALHOSTNAME -r -c cfg\n"
    )
    assert isinstance(line, ControlLine)
    assert (line.primary, line.socks, line.directory, line.args) == (
        True,
        False,
        "/arch/box",
        "-r -c cfg",
    )
    assert line.target == "local:" and line.line == 2
    assert ("version", "1.1") in line.env


def test_version_1_0_has_no_socks_field() -> None:
    warn, line = parse_text("host n /d -c cfg\n")
    assert warn == Message(
        "warning",
        "pmlogger_check [ctl:1]\nWarning: processing default version 1.0 control format",
    )
    assert isinstance(line, ControlLine) and (line.directory, line.args) == ("/d", "-c cfg")


def test_assignments_and_refusals() -> None:
    items = parse_text('$version=1.1\n$FOO="a b"\n$PATH=/x\n$junk\nh n n /d $FOO\n', showme=True)
    texts = [i.text for i in items if isinstance(i, Message)]
    assert '+ export FOO; FOO="a b"' in texts
    assert "pmlogger_check [ctl:3]\nWarning: cannot change $PATH, line ignored" in texts
    not_assignment = "in-line command is not a variable assignment, line ignored"
    assert f"pmlogger_check [ctl:4]\nWarning: {not_assignment}" in texts
    line = items[-1]
    assert isinstance(line, ControlLine) and ("FOO", "a b") in line.env


def test_quoted_and_computed_directories() -> None:
    items = parse_text(
        '$version=1.1\n$D=/tmp\nh n n "/a b" -c x\nh n n $D/sub -c y\nh n n "/open -c z\n'
    )
    lines = [i for i in items if isinstance(i, ControlLine)]
    # (PCP's script says the quote is not terminated, then goes on with the line as it is)
    assert [ln.directory for ln in lines] == ["/a b", "/tmp/sub", '"/open']
    error = [i for i in items if isinstance(i, Message)][-1]
    assert error.kind == "error" and "quote not terminated" in error.text


def test_insufficient_fields() -> None:
    (error,) = parse_text("$version=1.1\nbad n n\n")
    assert error.text == (
        "pmlogger_check: [ctl:2]\nError: insufficient fields in control file record\n"
        '... logging for host "bad" unchanged'
    )


def test_control_d_order_and_backups(tmp_path: Path) -> None:
    (tmp_path / "control").write_text("$version=1.1\n")
    (tmp_path / "control.d").mkdir()
    for name in ("b", "a", "Z", "x.rpmsave"):
        (tmp_path / "control.d" / name).write_text("")
    files = control_files(str(tmp_path / "control"))
    assert [os.path.basename(f) for f in files] == ["control", "Z", "a", "b", "x.rpmsave"]
    parser = ControlParser("pmlogger_check", {})
    (msg,) = list(parser.parse_file(files[-1]))
    assert "ignored backup control file" in msg.text


def test_options_and_pmlogger_arguments() -> None:
    opts = parse(["-VV", "-s", "--control=/c", "-N"])
    assert opts is not None and (opts.verbose, opts.stop, opts.control, opts.showme) == (
        2,
        True,
        "/c",
        True,
    )
    assert parse(["extra"]) is None and parse(["-x"]) is None
    assert pmlogger_logfile("-r -l my.log -c x") == "my.log"
    assert pmlogger_logfile("-lfoo.log") == "foo.log"
    assert pmlogger_logfile("-c x") == "pmlogger.log"
    assert pmlogger_config("-r -c config.default") == "config.default"


# -- interop: dry runs ----------------------------------------------------------------------


def _dry_run_env(tmp: Path) -> dict[str, str]:
    for sub in ("tmp/pmlogger", "arch", "log", "run"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    return dict(
        os.environ,
        PCP_TMP_DIR=str(tmp / "tmp"),
        PCP_ARCHIVE_DIR=str(tmp / "arch"),
        PCP_LOG_DIR=str(tmp / "log"),
        PCP_RUN_DIR=str(tmp / "run"),
        PCP_BINADM_DIR="/usr/lib/pcp/bin",
        PCP_VAR_DIR="/var/lib/pcp",
    )


CONTROL = """# a control file
$version=1.1
$FOO="bar baz"
$PATH=/bin
{somehost} n n PCP_ARCHIVE_DIR/somehost -r -T24h10m -c config.somehost
otherhost n n "{tmp}/arch/quoted" -c {tmp}/cfg -l other.log
LOCALHOSTNAME n n PCP_ARCHIVE_DIR/LOCALHOSTNAME -c {tmp}/cfg
dup n n PCP_ARCHIVE_DIR/somehost -c {tmp}/cfg
autohost n n PCP_ARCHIVE_DIR/autohost -c {tmp}/auto
badhost n n
"""


def _normal(text: str) -> list[str]:
    """pmlogger_check's output without the lines that name times or processes (ls -l's
    lines of the lock file keep only the name: the minute may turn between the runs)."""
    skip = ("Start: ", "End: ", "Called from:", "--- end of pstree", " ", "process_api")
    lines = [line for line in text.splitlines() if not line.startswith(skip) and "`-" not in line]
    return [re.sub(r"^[-dl][-rwxsStT]{9}\.? .* ", "ls -l: ", line) for line in lines]


@pytest.mark.interop
@pytest.mark.skipif(
    not os.path.exists(PCP_CHECK),
    reason="PCP's pmlogger_check is not installed (Debian package pcp)",
)
@pytest.mark.parametrize(
    "flags", [["-N"], ["-N", "-V"], ["-N", "-V", "-V"], ["-N", "-s", "-V", "-V"]]
)
def test_dry_run_as_pcp(tmp_path: Path, flags: list[str]) -> None:
    results = []
    for side, command in (("pcp", PCP_CHECK), ("ours", str(BIN / "pmlogger_check"))):
        top = tmp_path / side
        env = _dry_run_env(top)
        (top / "cfg").write_text("log mandatory on once { pmcd.version }\n")
        (top / "auto").write_text("#pmlogconf 2.0\n# Auto-generated by pmlogconf on: now\n")
        (top / "control").write_text(CONTROL.format(tmp=top, somehost="somehost"))
        done = subprocess.run(
            [command, *flags, "-c", str(top / "control")],
            env=env, cwd=top, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        out = (done.stdout + done.stderr).replace(str(top), "TOP")
        results.append((_normal(out), done.returncode, sorted(os.listdir(top / "arch"))))
    assert results[1] == results[0]


# -- interop: pmlogger_merge ----------------------------------------------------------------


def write_archive(base: Path, start: int, volumes: int = 1) -> None:
    with ArchiveWriter(
        str(base), hostname="box", timezone="UTC", start=Timestamp(start, 0), pid=7
    ) as w:
        w.put_desc(Desc(PMID, PMType.PM_TYPE_U32), ["demo.u32"])
        w.put_index(Timestamp(start, 0))
        for i in range(volumes * 2):
            stamp = Timestamp(start + i, 0)
            if i and i % 2 == 0:
                w.new_volume(stamp)
            w.put_result(Result(stamp, (ValueSet.of_single(PMID, PMType.PM_TYPE_U32, i),)))


def _merge_case(folder: Path, kind: str) -> None:
    write_archive(folder / "20231114.00.10", 1_699_920_600, volumes=2)
    write_archive(folder / "20231114.06.10", 1_699_942_200)
    write_archive(folder / "20231114.06.10-01", 1_699_943_200)
    if kind == "no-meta":
        (folder / "20231114.06.10.meta").rename(folder / "20231114.06.10.meta.gone")
    elif kind == "empty":
        for part in ("0", "index", "meta"):
            (folder / f"20231114.06.10.{part}").write_bytes(b"")
    elif kind == "exists":
        (folder / "out.0").write_bytes(b"")


MERGES = [
    ("plain", ["-V", "20231114.00.10", "20231114.06.10", "out"]),
    ("plain", ["-f", "-V", "20231114.00.10", "20231114.06.10", "out"]),
    ("plain", ["-N", "-f", "-V", "20231114.00.10", "20231114.06.10", "out"]),
    ("plain", ["-f", "2023", "out"]),
    ("no-meta", ["-V", "20231114.00.10", "20231114.06.10", "out"]),
    ("empty", ["-f", "20231114.00.10", "20231114.06.10", "out"]),
    ("exists", ["20231114.00.10", "out"]),
    ("plain", ["20231114.00.10"]),
    ("plain", ["-x", "a", "b"]),
]


@pytest.mark.interop
@pytest.mark.skipif(
    not os.path.exists(PCP_MERGE),
    reason="PCP's pmlogger_merge is not installed (Debian package pcp)",
)
@pytest.mark.parametrize(("kind", "args"), MERGES, ids=[" ".join(a) for _, a in MERGES])
def test_merge_as_pcp(tmp_path: Path, kind: str, args: list[str]) -> None:
    results = []
    for side, command in (("pcp", PCP_MERGE), ("ours", str(BIN / "pmlogger_merge"))):
        folder = tmp_path / side
        folder.mkdir()
        _merge_case(folder, kind)
        env = dict(os.environ, PATH=f"/usr/bin:{os.environ['PATH']}", PCP_TMPFILE_DIR=str(tmp_path))
        done = subprocess.run(
            [command, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120
        )
        out = done.stdout.replace(str(folder), "DIR")
        out = "\n".join(ln for ln in out.splitlines() if not ln.startswith("-rw"))
        dumped = ""
        if (folder / "out.meta").exists():
            dumped = subprocess.run(
                ["/usr/bin/pmdumplog", "-a", "out"], cwd=folder, capture_output=True, text=True
            ).stdout
        dumped = "\n".join(ln for ln in dumped.splitlines() if "PID for pmlogger" not in ln)
        results.append((out, done.stderr, done.returncode, sorted(os.listdir(folder)), dumped))
    assert results[1] == results[0]


# -- live: start, find, stop ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    from tests.support.client_servers import ours_serving

    with ours_serving(tmp_path_factory.mktemp("pmcd")) as running:
        yield running


def _pids(port_dir: Path) -> list[int]:
    return sorted(int(p.name) for p in port_dir.iterdir() if p.name.isdigit())


def test_start_find_and_stop(pmcd, tmp_path: Path) -> None:
    from tests.support.reference_pmcd import free_port
    from tests.support.waiting import wait_until

    env = _dry_run_env(tmp_path)
    binadm = tmp_path / "binadm"
    binadm.mkdir()
    (binadm / "pmlogger").symlink_to(BIN / "pmlogger")
    env.update(PCP_BINADM_DIR=str(binadm), PMLOGGER_PORT=str(free_port()), PCP_DERIVED_CONFIG="")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    (tmp_path / "cfg").write_text("log mandatory on 1 hour { pmcd.numagents }\n")
    control = tmp_path / "control"
    control.write_text(f"$version=1.1\n{pmcd.host} n n {tmp_path}/arch/one -c {tmp_path}/cfg\n")
    check = [str(BIN / "pmlogger_check"), "-c", str(control)]
    port_dir = tmp_path / "tmp" / "pmlogger"
    started: list[int] = []
    try:
        done = subprocess.run(check, env=env, capture_output=True, text=True, timeout=120)
        started = _pids(port_dir)
        log = tmp_path / "log" / "pmlogger" / "pmlogger_check.log"
        assert done.returncode == 0, log.read_text() if log.exists() else done.stderr
        assert len(started) == 1
        lines = (port_dir / str(started[0])).read_text().splitlines()
        assert lines[2].startswith(f"{tmp_path}/arch/one/") and lines[3] == "pmlogger_check"
        assert not (tmp_path / "arch" / "one" / "lock").exists()
        # a second run finds it and starts no other
        again = subprocess.run([*check, "-V"], env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0 and _pids(port_dir) == started
        stop = subprocess.run([*check, "-s"], env=env, capture_output=True, text=True, timeout=120)
        assert stop.returncode == 0

        def gone() -> bool:
            try:
                os.kill(started[0], 0)
            except ProcessLookupError:
                return True
            return not Path(f"/proc/{started[0]}").exists() or _zombie(started[0])

        wait_until("the stopped pmlogger to exit", gone)
    finally:
        for pid in started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def test_usage_is_pcp_s(capsys) -> None:
    from purepcp.pmlogger.check import main

    assert main(["-x"]) == 1
    assert capsys.readouterr().err.startswith("Usage: pmlogger_check [options]\n\nOptions:\n")
    assert shutil.which("sh") is not None


def test_primary_start_and_stop(pmcd, tmp_path: Path) -> None:
    from tests.support.reference_pmcd import free_port
    from tests.support.waiting import wait_until

    env = _dry_run_env(tmp_path)
    binadm = tmp_path / "binadm"
    binadm.mkdir()
    (binadm / "pmlogger").symlink_to(BIN / "pmlogger")
    port = pmcd.host.rsplit(":", 1)[1]
    env.update(PCP_BINADM_DIR=str(binadm), PMLOGGER_PORT=str(free_port()), PMCD_PORT=port)
    env.update(PCP_DERIVED_CONFIG="", PMCD_SOCKET=pmcd.unix)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    (tmp_path / "cfg").write_text("log mandatory on 1 hour { pmcd.numagents }\n")
    control = tmp_path / "control"
    control.write_text(f"$version=1.1\nLOCALHOSTNAME y n {tmp_path}/arch/prim -c {tmp_path}/cfg\n")
    check = [str(BIN / "pmlogger_check"), "-c", str(control)]
    port_dir = tmp_path / "tmp" / "pmlogger"
    started: list[int] = []
    try:
        done = subprocess.run([*check, "-V"], env=env, capture_output=True, text=True, timeout=120)
        started = _pids(port_dir)
        log = tmp_path / "log" / "pmlogger" / "pmlogger_check.log"
        text = log.read_text() if log.exists() else done.stderr
        assert done.returncode == 0 and len(started) == 1, text
        # (a dot for each second pmlogger_check waits on the new pmlogger, as PCP's prints
        # them: a busy machine may take some)
        starting = re.compile(
            rf'Restarting primary pmlogger for host "local:" \.\.\. \[process {started[0]}\] '
            r"(\. ?)* done$"
        )
        assert any(starting.match(line) for line in text.splitlines()), text
        assert os.path.realpath(port_dir / "primary") == str(port_dir / str(started[0]))
        stop = subprocess.run([*check, "-s"], env=env, capture_output=True, text=True, timeout=120)
        assert stop.returncode == 0
        wait_until("the primary pmlogger to exit", lambda: _gone(started[0]))
    finally:
        for pid in started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return _zombie(pid)
