"""pmie_check and pmie_daily: pmie's control file, the options, the daily file filters,
and, beside PCP's scripts, dry runs on the same control files, a pmie started, found,
rotated and stopped on a private pmcd."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.pmapi.controlfile import Message
from purepcp.pmapi.pmiestats import PMIE_STATS, PmieStats, pmie_stats_bytes, read_pmie_stats
from purepcp.pmapi.process import is_running
from purepcp.tools.pmie_control import check, daily
from purepcp.tools.pmie_control.control import CHECK, DAILY, PmieControl, PmieLine, pmie_config
from purepcp.tools.pmie_control.running import is_pmie
from tests.support.our_pmcd import our_pmcd
from tests.support.waiting import wait_until

BIN = Path(sys.executable).parent
PCP_CHECK = "/usr/lib/pcp/bin/pmie_check"
PCP_DAILY = "/usr/lib/pcp/bin/pmie_daily"
PCP_PMIE = "/usr/bin/pmie"
PCP_RULES = "/var/lib/pcp/config/pmieconf"
PMCD_CONF = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
needs_pcp = pytest.mark.skipif(
    not (os.path.exists(PCP_CHECK) and os.path.exists(PCP_DAILY)),
    reason="PCP's pmie_check and pmie_daily are not installed (Debian package pcp)",
)


def parse_file(tmp_path: Path, text: str, dialect=CHECK, **kw) -> list[PmieLine | Message]:
    control = tmp_path / "ctl"
    control.write_text(text)
    reader = PmieControl(
        "pmie_check" if dialect is CHECK else "pmie_daily",
        {"PCP_LOG_DIR": "/log"},
        dialect=dialect,
        hostname="box",
        **kw,
    )
    return list(reader.parse_file(str(control)))


YN = 'field in control file record must be y or n, not "x"'


# -- the control file -------------------------------------------------------------------------


def test_version_1_1_lines(tmp_path: Path) -> None:
    items = parse_file(
        tmp_path,
        "$version=1.1\n"
        "LOCALHOSTNAME y n PCP_LOG_DIR/pmie/LOCALHOSTNAME/pmie.log -c config.default\n"
        "remote n n /log/remote.log -c x -v\n",
    )
    primary, remote = items
    assert isinstance(primary, PmieLine) and isinstance(remote, PmieLine)
    assert (primary.host, primary.primary, primary.logfile) == (
        "local:",
        True,
        "/log/pmie/box/pmie.log",
    )
    assert (remote.host, remote.primary, remote.args, remote.line) == (
        "remote",
        False,
        "-c x -v",
        3,
    )
    assert ("version", "1.1") in remote.env


def test_version_1_0_has_no_primary_field(tmp_path: Path) -> None:
    (line,) = parse_file(tmp_path, "$version=1.0\nhost n /l/pmie.log -c cfg\n")
    assert isinstance(line, PmieLine)
    assert (line.primary, line.socks, line.logfile, line.args) == (
        False,
        False,
        "/l/pmie.log",
        "-c cfg",
    )


def test_missing_version_is_1_0_and_arguments_need_a_hyphen(tmp_path: Path) -> None:
    where = f"{tmp_path}/ctl:1"
    warn, error = parse_file(tmp_path, "LOCALHOSTNAME n n /l/ok -c cfg\n")
    assert warn == Message(
        "warning",
        f"pmie_check [{where}]\nWarning: missing $version, assuming version 1.0 control format",
    )
    assert error.text == (
        f"pmie_check: [{where}]\n"
        'Error: args field in control file must begin with a hyphen not "/l/ok -c cfg"\n'
        '... automated performance reasoning for host "LOCALHOSTNAME" unchanged'
    )


def test_bad_version_ends_the_file(tmp_path: Path) -> None:
    items = parse_file(tmp_path, "$version=0.0\nh n /l -c x\nh n /m -c y\n")
    assert len(items) == 1 and "Error: bad version (0.0) in control file" in items[0].text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("$version=1.1\nh x n /l -c c\n", f"primary {YN}"),
        ("$version=1.1\nh n x /l -c c\n", f"socks {YN}"),
        ("$version=1.0\nh x /l -c c\n", f"socks {YN}"),
        ("$version=1.1\nh n n /l\n", "insufficient fields in control file record"),
        ("$version=1.0\nh n /l\n", "insufficient fields in control file record"),
    ],
)  # fmt: skip
def test_pmie_check_refusals(tmp_path: Path, text: str, problem: str) -> None:
    (error,) = parse_file(tmp_path, text)
    assert error.kind == "error" and f"Error: {problem}\n" in error.text


def test_assignments_and_refusals(tmp_path: Path) -> None:
    items = parse_file(
        tmp_path, '$version=1.1\n$FOO="a b"\n$PATH=/x\n$date\nh n n /l -c $FOO\n', showme=True
    )
    texts = [i.text for i in items if isinstance(i, Message)]
    assert texts[:2] == ["# $version=1.1    ", "+ export version; version=1.1    "]
    assert '+ export FOO; FOO="a b"' in texts
    assert f"pmie_check [{tmp_path}/ctl:3]\nWarning: cannot change $PATH, line ignored" in texts
    line = items[-1]
    assert isinstance(line, PmieLine) and ("FOO", "a b") in line.env


def test_pmie_daily_dialect(tmp_path: Path) -> None:
    items = parse_file(tmp_path, "$version=1.1\n$date\nh n n /l\nh x y /l -c c\n", dialect=DAILY)
    warn, error, line = items
    where = f"{tmp_path}/ctl"
    assert warn.text == (
        "pmie_daily: Warning: in-line command is not a variable assignment, line ignored\n"
        f'[{where}:2] ... inference engine for host "$date" unchanged'
    )
    assert error.text == (
        "pmie_daily: Error: insufficient fields in control file record\n"
        f'[{where}:3] ... inference engine for host "h" unchanged'
    )
    assert isinstance(line, PmieLine) and line.logfile == "/l"  # (no y/n checks)


def test_backup_control_files(tmp_path: Path) -> None:
    for dialect, name, expected in (
        (CHECK, "ctl.rpmsave", "Warning: ignored backup control file"),
        (DAILY, "ctl.dpkg-old", "Warning: ignored backup control file"),
    ):
        reader = PmieControl("p", {}, dialect=dialect)
        (msg,) = list(reader.parse_file(str(tmp_path / name)))
        assert expected in msg.text


def test_pmie_config_argument() -> None:
    assert pmie_config("-v -c config.default") == "config.default"
    assert pmie_config("-cfoo -v") == "foo"
    assert pmie_config("-v") == ""


def test_statistics_file(tmp_path: Path) -> None:
    path = tmp_path / "123"
    path.write_bytes(PMIE_STATS.pack(b"cfg", b"/log/pmie.log", b"host", 1.0, 1, 2, 3, 4, 5, 6, 1))
    stats = read_pmie_stats(str(path))
    assert stats is not None and (stats.logfile, stats.pmcd_host) == ("/log/pmie.log", "host")
    path.write_bytes(pmie_stats_bytes("c", "/l", "h", (0.5, 3)))
    assert read_pmie_stats(str(path)) == PmieStats("c", "/l", "h")
    assert PMIE_STATS.unpack(path.read_bytes())[3:] == (0.5, 3, 0, 0, 0, 0, 0, 1)
    path.write_bytes(b"short")
    assert read_pmie_stats(str(path)) is None
    assert struct.calcsize("@4097s4097s65sf7I") == PMIE_STATS.size


# -- options and the daily filters ------------------------------------------------------------


def test_check_options() -> None:
    opts = check.parse(["-VV", "--stop", "--control=/c", "-N", "-p"])
    assert opts is not None
    assert (opts.verbose, opts.stop, opts.control, opts.showme, opts.skip_primary) == (
        2,
        True,
        "/c",
        True,
        True,
    )
    assert check.parse(["extra"]) is None and check.parse(["-x"]) is None
    assert check.parse(["-?"]) is None


def test_daily_options() -> None:
    opts = daily.parse(["-k", "forever", "-x", "3", "-X", "gzip -9", "-V"])
    assert isinstance(opts, daily.Options)
    assert (opts.cull, opts.compress_after, opts.compressor, opts.verbose) == (
        "forever",
        "3",
        "gzip -9",
        1,
    )
    assert daily.parse(["-k", "abc"]) == "Error: -k option (abc) must be numeric"
    assert daily.parse(["-x", "forever"]) == "Error: -x option (forever) must be numeric"


def test_dated_files() -> None:
    today = time.mktime((2024, 3, 10, 12, 0, 0, 0, 0, -1))
    names = [
        "pmie.log",
        "pmie.log.20240310",
        "pmie.log.20240307",
        "pmie.log.20240306",
        "pmie.log.20231001",
        "pmie.log.20240301.xz",
        "lock",
    ]
    old = daily.dated_files(names, 3, today)
    assert old == ["pmie.log.20240306", "pmie.log.20231001", "pmie.log.20240301.xz"]
    assert daily.dated_files(names, 0, today)[:1] == ["pmie.log.20240307"]
    assert "pmie.log.20240310" not in daily.dated_files(names, 0, today)


# -- interop: the same control files, PCP's scripts and ours -----------------------------------


def _tree(top: Path) -> dict[str, str]:
    """A private PCP tree's environment (PCP's scripts honour these over pcp.conf)."""
    for sub in ("tmp/pmie", "log/pmie", "var/config/pmie", "run", "units"):
        (top / sub).mkdir(parents=True, exist_ok=True)
    return dict(
        os.environ,
        PCP_TMP_DIR=str(top / "tmp"),
        PCP_LOG_DIR=str(top / "log"),
        PCP_RUN_DIR=str(top / "run"),
        PCP_VAR_DIR=str(top / "var"),
        PCP_BIN_DIR="/usr/bin",
        PCP_BINADM_DIR="/usr/lib/pcp/bin",
        PCP_SYSTEMDUNIT_DIR=str(top / "units"),
        PCP_PMIECONTROL_PATH=str(top / "control"),
    )


CONTROL = """# a control file
$version=1.1
$FOO="bar baz"
$PATH=/bin
$date
somehost n n {top}/remote/pmie.log -c {top}/rules -v
LOCALHOSTNAME n n {top}/local/pmie.log -c {top}/rules
LOCALHOSTNAME y n {top}/primary/pmie.log -c {top}/rules
bad x n {top}/bad.log -c x
generated n n {top}/gen/pmie.log -c config.missing
badargs n n {top}/bad.log x
short n n
"""


def _normal(text: str, top: Path) -> list[str]:
    """A script's output without what names times and processes."""
    skip = ("Start: ", "End: ", "Called from:", "--- end of pstree", "process_api")
    lines = text.replace(str(top), "TOP").splitlines()
    return [ln for ln in lines if not ln.startswith(skip) and "`-" not in ln]


def _both(tmp_path: Path, pcp: str, ours: str, argv: list[str], control: str = CONTROL):
    """(output lines, status, files made) of PCP's command and ours, each in a tree."""
    results = []
    for side, command in (("pcp", pcp), ("ours", str(BIN / ours))):
        top = tmp_path / side
        env = _tree(top)
        (top / "rules").write_text("x = hinv.ncpu;\n")
        (top / "control").write_text(control.format(top=top))
        done = subprocess.run(
            [command, *[a.format(top=top) for a in argv]],
            env=env, cwd=top, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        made = sorted(str(p.relative_to(top)) for p in top.rglob("*"))
        results.append((_normal(done.stdout + done.stderr, top), done.returncode, made))
    return results


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("flags", [["-N"], ["-N", "-V"], ["-N", "-V", "-V"], ["-N", "-s", "-V"]])
def test_pmie_check_dry_run_as_pcp(tmp_path: Path, flags: list[str]) -> None:
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", [*flags, "-c", "{top}/control"])
    assert ours == pcp


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(
    "argv",
    [["-x"], ["extra"], ["--help"], ["-N", "-c", "{top}/missing"], ["-N", "-p", "-VV"]],
)
def test_pmie_check_usage_and_errors_as_pcp(tmp_path: Path, argv: list[str]) -> None:
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", argv)
    assert ours == pcp


def _daily_control(top: Path) -> str:
    return "$version=1.1\n#Host P? S? logfile args\n" + "".join(
        f"{h}.engr n n {{top}}/{h}/pmie.log -c config.default\n" for h in ("dist", "relay")
    )


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize(
    "argv",
    [
        ["-V", "-N", "-x", "3", "-X", "compress", "-c", "{top}/control"],
        ["-VV", "-N", "-k", "4", "-c", "{top}/control"],
        ["-N", "-k", "forever", "-x", "0", "-c", "{top}/control"],
        ["-k", "abc"],
        ["-x", "3z"],
        ["-N", "-c", "{top}/missing"],
        ["--bad"],
    ],
)
def test_pmie_daily_dry_run_as_pcp(tmp_path: Path, argv: list[str]) -> None:
    """QA 315's run and its neighbours: which dated logs are culled and compressed."""
    for side in ("pcp", "ours"):
        for host in ("dist", "relay"):
            directory = tmp_path / side / host
            directory.mkdir(parents=True)
            for days in (0, 2, 5, 20, 150):
                stamp = time.strftime("%Y%m%d", time.localtime(time.time() - days * 86400))
                (directory / f"pmie.log.{stamp}").write_text("x\n")
            (directory / "pmie.log.20200101.xz").write_text("x\n")
    pcp, ours = _both(tmp_path, PCP_DAILY, "pmie_daily", argv, _daily_control(tmp_path))
    assert ours == pcp


# -- interop: a pmie started, found, rotated and stopped ---------------------------------------


def _pmies(tmp: Path) -> list[int]:
    return [int(p.name) for p in (tmp / "pmie").glob("[0-9]*")]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A private tree, our pmcd, and a control file naming one pmie (PCP's, until ours
    has its daemon options) that watches it; every pmie started is stopped at the end."""
    if not os.path.exists(PCP_PMIE) or not os.path.exists(PCP_CHECK):
        pytest.skip("PCP's pmie is not installed (Debian package pcp)")
    top = tmp_path_factory.mktemp("pmie_control")
    env = _tree(top)
    (top / "pmcd").mkdir()
    with our_pmcd(PMCD_CONF, top / "pmcd") as pmcd:
        (top / "rules").write_text("delta = 0.2 sec;\nagents = pmcd.numagents;\n")
        user = "-U root " if os.geteuid() == 0 else ""
        (top / "control").write_text(
            f"$version=1.1\n{pmcd.host} n n {top}/watch/pmie.log {user}-c {top}/rules\n"
        )
        env = dict(env, PATH=f"{BIN}:{env['PATH']}")
        try:
            yield top, env
        finally:
            for pid in _pmies(top / "tmp"):
                if is_pmie(pid):  # (not a pid reused since)
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGTERM)


def _run(command: str, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [command, *argv], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.interop
def test_start_find_rotate_stop(live) -> None:
    top, env = live
    log = top / "watch" / "pmie.log"
    done = _run(str(BIN / "pmie_check"), env, "-V", "-l", str(top / "check.log"))
    report = (top / "check.log").read_text() if (top / "check.log").exists() else ""
    assert done.returncode == 0, report
    assert " done" in report
    (pid,) = _pmies(top / "tmp")
    assert log.exists()

    # found again: the dry runs of PCP's script and ours agree that it runs
    shown = []
    for command in (PCP_CHECK, str(BIN / "pmie_check")):
        dry = _run(command, env, "-N", "-V", "-V")
        shown.append((_normal(dry.stdout + dry.stderr, top), dry.returncode))
    assert shown[1] == shown[0]
    assert f"Found pmie process {pid} monitoring:" in shown[1][0]

    # rotated: yesterday's name for the old log, a new log begun on SIGHUP
    done = _run(str(BIN / "pmie_daily"), env, "-l", str(top / "daily.log"))
    assert done.returncode == 0, (top / "daily.log").read_text()
    yesterday = time.strftime("%Y%m%d", time.localtime(time.time() - 86400))
    assert (top / "watch" / f"pmie.log.{yesterday}").exists()
    wait_until("pmie's new log", log.exists)
    wait_until("the rotation noted", lambda: "rotated" in log.read_text())

    # stopped
    done = _run(str(BIN / "pmie_check"), env, "-s", "-l", str(top / "stop.log"))
    assert done.returncode == 0
    wait_until("pmie to go", lambda: not is_running(pid))


def test_no_traceback_for_an_unwritable_log_file(tmp_path: Path) -> None:
    env = _tree(tmp_path)
    (tmp_path / "control").write_text("$version=1.1\n")
    (tmp_path / "file").write_text("")
    done = _run(str(BIN / "pmie_check"), env, "-l", str(tmp_path / "file" / "check.log"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("pmie_check: ") and done.stderr.count("\n") == 1


def _ls_free(lines: list[str]) -> list[str]:
    """ls -l's lines with only the name kept (the times differ between the runs)."""
    return [re.sub(r"^[-dl][-rwxsStT]{9}\.? .* ", "ls -l: ", ln) for ln in lines]


@pytest.mark.interop
@needs_pcp
def test_stale_lock_file_is_removed_as_pcp(tmp_path: Path) -> None:
    """QA 115's stale lock: older than 30 minutes, removed with PCP's warning."""
    control = "$version=1.1\nLOCALHOSTNAME n n {top}/locker/ok.1 -c {top}/rules\n"
    for side in ("pcp", "ours"):
        (tmp_path / side / "locker").mkdir(parents=True)
        lock = tmp_path / side / "locker" / "ok.1.lock"
        lock.write_text("")
        old = time.time() - 35 * 60
        os.utime(lock, (old, old))
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", ["-N", "-VV"], control)
    assert (_ls_free(ours[0]), ours[1:]) == (_ls_free(pcp[0]), pcp[1:])
    assert "Warning: removing lock file older than 30 minutes" in ours[0]


def test_output_goes_to_the_log_file(tmp_path: Path) -> None:
    env = _tree(tmp_path)
    log = tmp_path / "log" / "pmie" / "pmie_check.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("earlier\n")
    done = _run(str(BIN / "pmie_check"), env, "-c", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    assert log.read_text() == f"pmie_check: Error: cannot find control file ({tmp_path}/missing)\n"
    assert (log.parent / "pmie_check.log.prev").read_text() == "earlier\n"


def test_stop_with_no_pmie_ever_started(tmp_path: Path) -> None:
    env = _tree(tmp_path)
    (tmp_path / "tmp" / "pmie").rmdir()
    done = _run(str(BIN / "pmie_check"), env, "-s", "-N", "-c", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.interop
@needs_pcp
def test_runlevel_off_starts_nothing_as_pcp(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PCP_DIR", raising=False)
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", ["-C", "-N", "-V"])
    assert ours == pcp


@pytest.mark.interop
@needs_pcp
@pytest.mark.skipif(
    not os.path.isdir(PCP_RULES),
    reason="PCP's pmieconf rules are not installed (Debian package pcp)",
)
@pytest.mark.parametrize("rules", [True, False])
def test_pmieconf_file_brought_up_to_date_as_pcp(tmp_path: Path, rules: bool) -> None:
    """A configuration pmieconf made, edited by hand since: regenerated, then copied over
    (shown by -N), as PCP's _configure_pmie does; or, without pmieconf's rules in
    $PCP_VAR_DIR, PCP's warning and the file."""
    control = "$version=1.1\nLOCALHOSTNAME n n {top}/log/x/pmie.log -c {top}/made\n"
    for side in ("pcp", "ours"):
        (tmp_path / side / "var" / "config").mkdir(parents=True)
        if rules:
            (tmp_path / side / "var" / "config" / "pmieconf").symlink_to(PCP_RULES)
        made = tmp_path / side / "made"
        subprocess.run(["/usr/bin/pmieconf", "-f", str(made), "-cF"], check=True, timeout=60)
        made.write_text(made.read_text().replace("delta = 2 min;", "delta = 7 min;", 1))
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", ["-N", "-V"], control)
    assert ours == pcp
    expected = 'Reconfigured: "TOP/made" (pmieconf)' if rules else "Warning: pmieconf failed"
    assert any(ln.startswith(expected) for ln in ours[0])


@pytest.mark.interop
@needs_pcp
def test_pmie_daily_culls_and_compresses_as_pcp(tmp_path: Path) -> None:
    """Not a dry run: the same files are removed and compressed, the same log written."""
    for side in ("pcp", "ours"):
        for host in ("dist", "relay"):
            directory = tmp_path / side / host
            directory.mkdir(parents=True)
            for days in (0, 2, 5, 20, 150):
                stamp = time.strftime("%Y%m%d", time.localtime(time.time() - days * 86400))
                (directory / f"pmie.log.{stamp}").write_text(f"{days}\n")
    argv = ["-V", "-x", "3", "-X", "gzip -n", "-l", "{top}/daily.log", "-c", "{top}/control"]
    pcp, ours = _both(tmp_path, PCP_DAILY, "pmie_daily", argv, _daily_control(tmp_path))
    assert ours == pcp
    logs = [(tmp_path / side / "daily.log").read_text().replace(str(tmp_path / side), "TOP")
            for side in ("pcp", "ours")]  # fmt: skip
    assert logs[1] == logs[0]
    assert any(p.endswith(".gz") for p in ours[2])


def test_mail_summary_printed_without_a_mailer(tmp_path: Path, capsys, monkeypatch) -> None:
    log = tmp_path / "pmie.log.20240101"
    log.write_text("Log for pmie on box started\n\nall OK\nsomething bad\n")
    monkeypatch.setattr(daily.shutil, "which", lambda name: None)
    monkeypatch.setenv("LOCALHOSTNAME", "box")
    run = daily.Daily(opts=daily.Options(mail="me@example.com"), mailed=[str(log)])
    run.send_mail()
    assert capsys.readouterr().out == (
        "pmie_daily: PMIE summary for box ...\nLog for pmie on box started\nsomething bad\n"
    )
    log.write_text("Log for pmie on box started\nall OK\n")  # (nothing beyond the OKs)
    run.send_mail()
    assert capsys.readouterr().out == ""


@pytest.mark.slow
@pytest.mark.interop
@needs_pcp
def test_lock_file_held_as_pcp(tmp_path: Path) -> None:
    """QA 115's existing lock file: twenty seconds of trying, then PCP's warnings."""
    control = "$version=1.1\nLOCALHOSTNAME n n {top}/locker/ok.2 -c {top}/rules\n"
    for side in ("pcp", "ours"):
        (tmp_path / side / "locker").mkdir(parents=True)
        (tmp_path / side / "locker" / "ok.2.lock").write_text("")
    pcp, ours = _both(tmp_path, PCP_CHECK, "pmie_check", ["-N", "-VV"], control)
    assert (_ls_free(ours[0]), ours[1:]) == (_ls_free(pcp[0]), pcp[1:])
    assert "Warning: is another PCP cron job running concurrently?" in ours[0]
