"""pmlogger's less common options, as PCP 6's pmlogger takes them: -D, -f, -I, -L, -p,
-U and -x.  The runs log from local agents (-o), so no pmcd is needed."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.client_servers import tool_env
from tests.support.reference_pmcd import require_reference

CONFIG = "log mandatory on every 100 msec { hinv.ncpu }\n"
#: the option letters PCP's bash completion lists for pmlogger (QA 1100 checks them)
COMPLETION = set("CcHIhKLlmNnoPprsTtUuVvxy")


def _pmlogger(tmp: Path, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", *args]
    return subprocess.run(
        argv, cwd=tmp, capture_output=True, text=True, timeout=60, env=tool_env(), **kwargs
    )


def _log_end(tmp: Path) -> str:
    """The reason the log gives for the end of the run."""
    found = re.findall(r"Info: pmlogger: (.*), exiting", (tmp / "log").read_text())
    assert found, (tmp / "log").read_text()
    return found[-1]


def test_usage_lists_the_letters_pcps_completion_lists():
    run = subprocess.run(
        [sys.executable, "-m", "purepcp.pmlogger.main", "--help"],
        capture_output=True,
        text=True,
        env=tool_env(),
    )
    letters = set(re.findall(r"^  -(\w)", run.stderr, re.MULTILINE))
    assert letters == COMPLETION


OPTION_ERRORS = [
    (["-I", "5"], "pmlogger: unsupported pmlc IPC version (5)"),
    (["-I", "x"], "pmlogger: non-numeric pmlc IPC version (x)"),
    (["-p", "abc"], "pmlogger: invalid process identifier (abc)"),
    (["-x", "-1"], "pmlogger: -x requires a non-negative numeric argument"),
    (["-x", "1z"], "pmlogger: -x requires a non-negative numeric argument"),
    (["-D", "nosuch"], "pmlogger: unrecognized debug flag specification (nosuch)"),
    (["-f"], "Usage: pmlogger [options] archive"),
    (["-s", "0.5sec"], "pmlogger: illegal size argument '0.5sec' for exit size"),
    (["-s", "10 kb"], "pmlogger: illegal size argument '10 kb' for exit size"),
    (["-v", "junk"], "pmlogger: illegal size argument 'junk' for volume size"),
]


@pytest.mark.parametrize(("args", "first"), OPTION_ERRORS)
def test_bad_option_arguments_are_refused_with_the_usage(tmp_path, args, first):
    run = _pmlogger(tmp_path, *args, "-o", "a")
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert lines[0] == first
    assert "Usage: pmlogger [options] archive" in lines and "Traceback" not in run.stderr
    assert not list(tmp_path.glob("a.*"))


@pytest.mark.interop
@pytest.mark.parametrize(("args", "first"), OPTION_ERRORS)
def test_bad_option_arguments_as_pcps_pmlogger_says(tmp_path, args, first):
    require_reference("pmlogger")
    theirs = subprocess.run(
        ["pmlogger", *args, "-o", "a"], cwd=tmp_path, capture_output=True, text=True,
        env=tool_env(), timeout=60,
    )  # fmt: skip
    assert (theirs.returncode, theirs.stderr.splitlines()[0]) == (1, first)


def test_debug_options_and_the_ipc_version_are_accepted(tmp_path):
    (tmp_path / "cfg").write_text(CONFIG)
    args = ["-D", "appl0,log", "-I", "2", "-o", "-c", "cfg", "-s", "2", "-l", "log", "a"]
    run = _pmlogger(tmp_path, *args)
    assert run.returncode == 0, run.stderr
    assert _log_end(tmp_path) == "Sample limit reached"


def test_linger_runs_on_with_nothing_to_log(tmp_path):
    """-L: an empty configuration is no reason to stop; without it, pmlogger stops."""
    (tmp_path / "empty").write_text("")
    run = _pmlogger(tmp_path, "-o", "-c", "empty", "-l", "log", "a")
    assert run.returncode == 1 and not list(tmp_path.glob("a.*"))
    run = _pmlogger(tmp_path, "-L", "-o", "-c", "empty", "-T", "1sec", "-l", "log", "b")
    assert run.returncode == 0, run.stderr
    assert _log_end(tmp_path) == "End of run time"
    assert (tmp_path / "b.0").exists() and (tmp_path / "b.meta").exists()


def test_pid_ends_logging_when_its_process_does(tmp_path):
    (tmp_path / "cfg").write_text(CONFIG)
    sleeper = subprocess.Popen(["sleep", "1"])  # (reaped here, so it vanishes: no zombie)
    args = ["-p", str(sleeper.pid), "-o", "-c", "cfg", "-T", "30sec", "-l", "log", "a"]
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", *args]
    logger = subprocess.Popen(argv, cwd=tmp_path, env=tool_env(), stderr=subprocess.PIPE)
    sleeper.wait()
    _, err = logger.communicate(timeout=20)
    assert logger.returncode == 0, err
    assert _log_end(tmp_path) == "process from -p has vanished"
    sleeper = subprocess.Popen(["true"])
    sleeper.wait()
    run = _pmlogger(tmp_path, "-p", str(sleeper.pid), "-o", "a")
    assert run.stderr.splitlines()[0] == f"pmlogger: PID error - no such process ({sleeper.pid})"


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        (b"V0\nPlauncher\nQ\n", "Recording session terminated"),
        (b"V0\n", "Recording session terminated"),  # end of file: the launcher has gone
        (b"V0\nD\n", "End of run time"),  # detached: on to the end of run time
        (b"Zap\n", "Recording session terminated"),
    ],
)
def test_a_recording_session_controls_the_run(tmp_path, messages, reason):
    """-x FD: pmRecordControl's channel (here a pipe, written before the run)."""
    (tmp_path / "cfg").write_text(CONFIG)
    read, write = os.pipe()
    os.write(write, messages)
    if b"D" not in messages:
        os.close(write)
    try:
        run = _pmlogger(
            tmp_path, "-x", str(read), "-o", "-c", "cfg", "-T", "2sec", "-l", "log", "a",
            pass_fds=(read,),
        )  # fmt: skip
    finally:
        os.close(read)
        if b"D" in messages:
            os.close(write)
    assert run.returncode == 0, run.stderr
    assert _log_end(tmp_path) == reason
    if messages == b"Zap\n":
        assert (
            'Error: illegal recording session control message: "Zap"'
            in (tmp_path / "log").read_text()
        )


def _session(tmp: Path, messages: bytes, answer: str, *args: str) -> str:
    """A run with -x fed MESSAGES, $PCP_XCONFIRM_PROG answering ANSWER: the log."""
    (tmp / "cfg").write_text(CONFIG)
    confirm = tmp / "confirm"
    confirm.write_text(f"#!/bin/sh\nprintf '{answer}'\n")
    confirm.chmod(0o755)
    read, write = os.pipe()
    os.write(write, messages)
    os.close(write)
    env = dict(tool_env(), PCP_XCONFIRM_PROG=str(confirm))
    try:
        argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-x", str(read), *args]
        argv += ["-o", "-c", "cfg", "-T", "2sec", "-l", "log", "a"]
        run = subprocess.run(
            argv, cwd=tmp, capture_output=True, text=True, timeout=60, env=env, pass_fds=(read,)
        )
    finally:
        os.close(read)
    assert run.returncode == 0, run.stderr
    return (tmp / "log").read_text()


def test_a_recording_session_dialog_is_logged_when_pmconfirm_says_nothing(tmp_path):
    """QA 304: with -D appl2 each control message is traced; the launcher gone (end of
    file) brings up PCP's dialog, and pmconfirm answering nothing puts it in the log,
    taken as "Yes" (terminate)."""
    log = _session(tmp_path, b"V0\nFmyfolio\nR\n", "", "-D", "appl2")
    pid = re.search(r"pmlogger\((\d+)\)", log).group(1)
    assert (
        'recording session control: "V0"\nrecording session control: "Fmyfolio"\n'
        'recording session control: "R"\nrecording session control: eof\n\n'
        "Error: pmconfirm(1) failed for recording session dialog\nDialog:\n"
        'PCP recording for the archive folio "myfolio" and the host "'
    ) in log
    assert (
        "\n\nThis archive may be replayed with the following command:\n"
        "  $ pmafm myfolio replay\n\nThe application that launched pmlogger has exited"
    ) in log
    assert re.search(
        r"grow at the rate of [\d.]+ [KM]?bytes per hour or [\d.]+ [KM]?bytes per day\.\n\n"
        rf"At any time this pmlogger process may be terminated with the following command:\n"
        rf"  \$ pmsignal -s TERM {pid}\n\n\nTerminate this PCP recording session now\?\[",
        log,
    )
    assert _log_end(tmp_path) == "Recording session terminated"


def test_a_recording_session_goes_on_when_pmconfirm_says_no(tmp_path):
    """Answered "No", the launcher's end detaches: logging goes on to the end of run time,
    and without -D appl2 the messages are not traced."""
    log = _session(tmp_path, b"V0\n?\n", "No\\nmore\\n")
    assert "recording session control" not in log and "Dialog:" not in log
    assert _log_end(tmp_path) == "End of run time"


def test_username_switches_user_or_says_why_not(tmp_path):
    (tmp_path / "cfg").write_text(CONFIG)
    me = pwd.getpwuid(os.getuid()).pw_name
    run = _pmlogger(tmp_path, "-U", me, "-o", "-c", "cfg", "-s", "1", "-l", "log", "a")
    assert run.returncode == 0, run.stderr
    run = _pmlogger(tmp_path, "-U", "no-such-user-here", "-o", "-c", "cfg", "b")
    assert run.returncode == 1
    assert run.stderr.rstrip().endswith(
        "pmlogger(" + run.stderr.split("pmlogger(")[1].split(")")[0]
        + ") Critical: cannot find the no-such-user-here user to switch to"
    )  # fmt: skip
    assert not list(tmp_path.glob("b.*"))


@pytest.mark.parametrize(
    ("arg", "size"),
    [("4000bytes", (None, 4000, None)), ("2KiB", (None, 2048, None)), ("3", (3, None, None)),
     ("1gigabytes", (None, 1 << 30, None)), ("2min", (None, None, 120.0))],
)  # fmt: skip
def test_sizes_as_pcps_parsesize_reads_them(arg, size):
    """QA 252: "-s 4000bytes" (any case, a plural "s" dropped, PCP's unit words) was refused."""
    from purepcp.pmlogger.main import _size

    assert _size(arg) == size


def test_volumes_switch_after_the_record_that_reaches_the_size(tmp_path):
    """QA 440: -v SIZE starts a new volume once one has reached SIZE (after the record, as
    PCP's callback does: it switched before a record would pass it), -v TIME by the clock;
    the log says so in PCP's words."""
    (tmp_path / "cfg").write_text(CONFIG)
    run = _pmlogger(tmp_path, "-o", "-c", "cfg", "-v", "300bytes", "-s", "6", "-l", "log", "a")
    assert run.returncode == 0, run.stderr
    sizes = [p.stat().st_size for p in sorted(tmp_path.glob("a.[0-9]*"))]
    assert len(sizes) > 1 and all(size >= 300 for size in sizes[:-1])
    log = (tmp_path / "log").read_text()
    assert re.search(r"^New log volume 1, via sample byte size at \w{3} \w{3} ", log, re.M)
    run = _pmlogger(tmp_path, "-o", "-c", "cfg", "-v", "250msec", "-s", "6", "-l", "log", "b")
    assert run.returncode == 0, run.stderr
    assert "via sample time at " in (tmp_path / "log").read_text()
    assert len(list(tmp_path.glob("b.[0-9]*"))) > 1


def test_debug_appl6_traces_pcps_name_cache(tmp_path):
    """QA 1353: -D appl6 prints the names pass0 finds, the name cache, and each lookup in
    it where PCP's pmlogger makes them (before the warnings about that metric)."""
    (tmp_path / "cfg").write_text(
        "# a comment\n"
        'log advisory on once { hinv.ncpu ["no-such"] }\n'
        "log mandatory on 15 seconds { no.such.name kernel.all.load\n"
        "\thinv.ncpu }\n"
    )
    run = _pmlogger(tmp_path, "-o", "-C", "-c", "cfg", "-D", "appl6")
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    start = lines.index('pass0:3 name="hinv.ncpu"')
    assert lines[start : start + 4] == [
        'pass0:3 name="hinv.ncpu"', 'pass0:4 name="no.such.name"',
        'pass0:5 name="kernel.all.load"', 'pass0:5 name="hinv.ncpu"',
    ]  # fmt: skip
    assert "3 unique names + 1 duplicates (0 hash key synonyms)" in lines
    assert '"no.such.name"[U] PM_ID_NULL' in run.stderr
    after = lines[lines.index("3 unique names + 1 duplicates (0 hash key synonyms)") + 1 :]
    assert after[:3] == ["cache_lookup(hinv.ncpu): success"] * 2 + ["Warning [cfg, line 2]"]
    assert after[4:6] == [
        "cache_lookup(no.such.name): in cache, but not a valid leaf node",
        "Warning [cfg, line 3]",
    ]
    load, ncpu = "cache_lookup(kernel.all.load): success", "cache_lookup(hinv.ncpu): success"
    assert after[8:12] == [load, load, ncpu, ncpu]


def test_archive_version_defaults_to_pcp_archive_version(monkeypatch):
    """pmlogger without -V writes $PCP_ARCHIVE_VERSION's version, as PCP's (QA 1854)."""
    from purepcp.pmlogger import main as pmlogger_main

    monkeypatch.setenv("PCP_ARCHIVE_VERSION", "3")
    assert pmlogger_main._default_version() == "3"
    monkeypatch.setenv("PCP_ARCHIVE_VERSION", "7")  # (not one we write: the fallback)
    assert pmlogger_main._default_version() == "2"
