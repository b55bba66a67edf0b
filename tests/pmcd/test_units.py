"""The systemd units `pmcd --install-units` writes: verified, and their commands run by hand.

There is no systemd to start them here, so the tests do what systemd would: read
each unit's Environment= and Exec*= lines, expand the specifiers (%% and %H), give
the command a NOTIFY_SOCKET to report readiness on, and run it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive.context import ArchiveContext
from purepcp.pmapi.paths import paths
from purepcp.pmcd.units import DOCS, UNITS, install_units, render_units
from tests.support.our_pmcd import _stop, start_daemon
from tests.support.waiting import DEADLINE, Notifications, complete_records, wait_until

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def layout_in(tmp_path: Path, system: bool = True):
    conf = tmp_path / "pcp.conf"
    conf.write_text(
        f"PCP_SYSCONF_DIR={tmp_path}/etc\nPCP_VAR_DIR={tmp_path}/var\n"
        f"PCP_LOG_DIR={tmp_path}/log\nPCP_RUN_DIR={tmp_path}/run\nPMCD_PORT=0\n"
    )
    return paths({"PUREPCP_CONF": str(conf), "HOME": str(tmp_path)}, system=system)


def unit_settings(text: str) -> dict[str, list[str]]:
    """KEY -> values of a unit file's lines (comments and sections skipped)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line or line.startswith(("#", "[")):
            continue
        key, _, value = line.partition("=")
        found.setdefault(key, []).append(value)
    return found


def command_of(value: str, **variables: str) -> list[str]:
    """An Exec*= line as systemd runs it: specifiers %% and %H, then $VARIABLES."""
    value = value.replace("%%", "\0").replace("%H", socket.gethostname()).replace("\0", "%")
    for name, replacement in variables.items():
        value = value.replace(f"${name}", replacement)
    return shlex.split(value)


def unit_environment(settings: dict[str, list[str]], notify: str) -> dict[str, str]:
    """What systemd gives a service: a plain PATH, the unit's Environment=, NOTIFY_SOCKET."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "NOTIFY_SOCKET": notify}
    for assignment in settings.get("Environment", []):
        name, _, value = assignment.partition("=")
        env[name] = value
    return env


def test_units_name_installed_commands_and_the_layout(tmp_path):
    layout = layout_in(tmp_path)
    units = render_units(layout)
    assert sorted(units) == sorted(UNITS)
    pmcd = unit_settings(units["pmcd.service"])
    assert pmcd["Type"] == ["notify"]
    assert pmcd["Environment"] == [f"PUREPCP_CONF={layout.file}"]
    assert pmcd["ExecStart"] == [f"{Path(sys.executable).parent / 'pmcd'} -f"]
    assert pmcd["ExecReload"][0].endswith("kill -HUP $MAINPID")
    assert pmcd["User"] == ["pcp"] and pmcd["NoNewPrivileges"] == ["yes"]
    assert pmcd["ProtectSystem"] == ["strict"] and pmcd["PrivateTmp"] == ["yes"]
    assert pmcd["ProtectHome"][0] in ("yes", "read-only")
    assert "ProtectProc" not in pmcd and "ProcSubset" not in pmcd  # agents read all of /proc
    for name in ("RuntimeDirectory", "StateDirectory", "LogsDirectory"):
        assert name not in pmcd  # this layout is not under /run, /var/lib, /var/log
    assert pmcd["ReadWritePaths"] == [
        f"-{tmp_path}/var -{tmp_path}/log -{tmp_path}/run -{tmp_path}/log/pmlogger"
    ]
    logger = unit_settings(units["pmlogger.service"])
    assert logger["ExecStart"][0].endswith(f"{tmp_path}/log/pmlogger/%H/%%Y%%m%%d.%%H.%%M")
    timer = unit_settings(units["pmlogger_daily.timer"])
    assert timer["OnCalendar"] == ["*-*-* 00:10:00"]
    proxy = unit_settings(units["pmproxy.service"])
    assert proxy["ExecStart"] == [
        f"{Path(sys.executable).parent / 'pmproxy'} -F -l {tmp_path}/log/pmproxy/pmproxy.log"
    ]
    assert proxy["Type"] == ["notify"] and proxy["After"] == ["pmcd.service network-online.target"]


#: Documentation= URIs systemd.unit(5) takes that name no file of this machine to check.
_DOC_SCHEMES = ("http://", "https://", "man:", "info:")


def documentation_targets(units: dict[str, str]) -> dict[str, list[str]]:
    """Each unit's Documentation= URIs (space-separated, possibly on several lines)."""
    return {
        name: [
            uri for value in unit_settings(text).get("Documentation", []) for uri in value.split()
        ]
        for name, text in units.items()
    }


def unresolvable(uris: list[str]) -> list[str]:
    """Those of URIS that are neither a URL systemd resolves itself nor an existing file."""
    return [
        uri
        for uri in uris
        if not (
            uri.startswith(_DOC_SCHEMES) or (uri.startswith("file://") and Path(uri[7:]).is_file())
        )
    ]


def test_every_documentation_target_resolves(tmp_path):
    """Every service names its documentation, and every target is there: a URL, or a file
    that is installed (the units used to name the repository's docs/, which pip does not
    install; tests/test_packaging.py checks the installed copy's units the same way)."""
    targets = documentation_targets(render_units(layout_in(tmp_path)))
    for name, uris in targets.items():
        assert uris or name.endswith(".timer"), name
        assert unresolvable(uris) == [], name
    assert {uri for uris in targets.values() for uri in uris} == {
        f"file://{DOCS / 'operations.md'}",
        f"file://{DOCS / 'pmproxy.md'}",
    }


def test_system_layout_units_use_systemds_directories():
    layout = paths({"PUREPCP_CONF": "/nonexistent/pcp.conf"}, system=True, missing_ok=True)
    units = render_units(layout)
    pmcd = unit_settings(units["pmcd.service"])
    assert pmcd["RuntimeDirectory"] == ["purepcp"] and pmcd["StateDirectory"] == ["purepcp"]
    assert pmcd["LogsDirectory"] == ["purepcp purepcp/pmcd purepcp/pmlogger purepcp/pmproxy"]


def test_user_units_have_no_account_and_want_default_target(tmp_path):
    pmcd = unit_settings(render_units(layout_in(tmp_path, system=False))["pmcd.service"])
    assert "User" not in pmcd and "ProtectSystem" not in pmcd
    assert pmcd["WantedBy"] == ["default.target"]


@pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed (Debian package systemd)"
)
def test_systemd_analyze_verify_passes_on_every_unit(tmp_path):
    layout = layout_in(tmp_path)
    directory = tmp_path / "units"
    assert install_units(layout, str(directory)) == 0
    for name in UNITS:
        done = subprocess.run(
            [SYSTEMD_ANALYZE, "verify", str(directory / name)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stderr) == (0, ""), name


def test_install_units_writes_layout_file_and_pmlogger_config_once(tmp_path, capsys):
    layout = layout_in(tmp_path)
    Path(layout.file).unlink()
    assert install_units(layout, str(tmp_path / "units")) == 0
    out = capsys.readouterr().out
    assert f"Wrote {layout.file}\n" in out and f"Wrote {layout.pmloggerconf_path}\n" in out
    assert "Next: systemctl daemon-reload && systemctl enable --now pmcd" in out
    again = paths({"PUREPCP_CONF": layout.file}, system=True)
    assert again.values == layout.values
    assert again.is_default("PCP_PMCDCONF_PATH")  # so pmcd still runs the packaged pmcd.conf
    layout.pmloggerconf_path.write_text("# edited by the administrator\n")
    assert install_units(layout, str(tmp_path / "units")) == 0
    assert layout.pmloggerconf_path.read_text() == "# edited by the administrator\n"


def test_pmcd_unit_command_by_hand_notifies_and_reloads(tmp_path):
    layout = layout_in(tmp_path)
    assert install_units(layout, str(tmp_path / "units")) == 0
    settings = unit_settings((tmp_path / "units" / "pmcd.service").read_text())
    notify = Notifications()
    env = unit_environment(settings, notify.name)
    pmcd = start_daemon(command_of(settings["ExecStart"][0]), env, tmp_path / "pmcd.stderr")
    try:
        ready = notify.wait(pmcd, "READY", "pmcd", describe=_stderr(tmp_path / "pmcd.stderr"))
        assert ready["READY"] == "1" and int(ready["MAINPID"]) == pmcd.pid
        assert (layout.run_dir / "pmcd.pid").read_text() == str(pmcd.pid)
        assert (layout.log_dir / "pmcd" / "pmcd.log").exists()
        reload = command_of(settings["ExecReload"][0], MAINPID=str(pmcd.pid))
        subprocess.run(reload, env=env, check=True, timeout=DEADLINE)
        notify.wait(pmcd, "RELOADING", "pmcd's reload")
        notify.wait(pmcd, "READY", "pmcd's reload")
        probe = subprocess.run(
            [sys.executable, "-m", "purepcp.tools.pminfo", "-h", "local:", "-f", "simple.numfetch"],
            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "value" in probe.stdout, probe.stderr
    finally:
        notify.close()
        _stop(pmcd)
    assert not (layout.run_dir / "pmcd.pid").exists()


def test_pmlogger_units_by_hand_log_and_rotate(tmp_path):
    layout = layout_in(tmp_path)
    assert install_units(layout, str(tmp_path / "units")) == 0
    units = {n: unit_settings((tmp_path / "units" / n).read_text()) for n in UNITS}
    notify = Notifications()
    started: list[subprocess.Popen] = []

    def start(unit: str) -> subprocess.Popen:
        settings = units[unit]
        env = unit_environment(settings, notify.name)
        proc = start_daemon(command_of(settings["ExecStart"][0]), env, tmp_path / f"{unit}.stderr")
        started.append(proc)
        notify.wait(proc, "READY", unit, describe=_stderr(tmp_path / f"{unit}.stderr"))
        return proc

    try:
        start("pmcd.service")
        logger = start("pmlogger.service")
        host_dir = layout.archive_dir / socket.gethostname()
        first = _wait_for_archive(host_dir, 1)
        assert (layout.run_dir / "pmlogger.pid").read_text().split()[0] == str(logger.pid)
        daily = units["pmlogger_daily.service"]

        def run_daily(*extra: str) -> None:
            done = subprocess.run(
                [*command_of(daily["ExecStart"][0]), *extra],
                env=unit_environment(daily, notify.name),
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stdout + done.stderr

        # the timer's own command: today's archive began today, so (as PCP's) it is kept
        run_daily()
        assert _wait_for_archive(host_dir, 1) == first
        # -Z: start the new archive anyway, as if the day had turned
        run_daily("-Z")
        archives = _wait_for_archive(host_dir, 2)
        assert first[0] in archives and logger.poll() is None
        with ArchiveContext(str(host_dir / first[0])) as archive:
            assert archive.hostname == socket.gethostname()
    finally:
        notify.close()
        for proc in reversed(started):
            _stop(proc)


def _wait_for_archive(directory: Path, count: int) -> list[str]:
    """The archives (base names) in DIRECTORY once COUNT of them hold a whole record
    (the prologue) in their first volume."""

    def bases() -> list[str]:
        return sorted(p.name[: -len(".meta")] for p in directory.glob("*.meta"))

    def ready() -> bool:
        return sum(complete_records(directory / f"{b}.0") >= 1 for b in bases()) >= count

    def found() -> str:
        return str(os.listdir(directory) if directory.exists() else [])

    wait_until(f"{count} archive(s) in {directory}", ready, describe=found)
    return [b for b in bases() if complete_records(directory / f"{b}.0") >= 1]


def _stderr(path: Path):
    return lambda: path.read_text(errors="replace")


def test_install_units_as_root_with_the_user_layout_leaves_the_system_file_alone(
    tmp_path, monkeypatch, capsys
):
    """Root running `pmcd --install-units` under PUREPCP_LAYOUT=user gets the per-user
    layout's file (with PUREPCP_LAYOUT=user), not the system one: that used to be written,
    switching every later root command to root's per-user directories."""
    from purepcp import pmapi
    from purepcp.pmcd.main import main

    system_file = tmp_path / "etc" / "purepcp" / "pcp.conf"
    monkeypatch.setattr(pmapi.paths, "SYSTEM_LAYOUT_FILE", str(system_file))
    monkeypatch.setattr(pmapi.paths.os, "geteuid", lambda: 0)
    for name in ("PUREPCP_CONF", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "root"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("PUREPCP_LAYOUT", "user")
    assert main(["--install-units", str(tmp_path / "units")]) == 0
    user_file = tmp_path / "root" / ".config" / "purepcp" / "pcp.conf"
    assert f"Wrote {user_file}\n" in capsys.readouterr().out
    assert "\nPUREPCP_LAYOUT=user\n" in user_file.read_text()
    assert not system_file.exists()

    monkeypatch.delenv("PUREPCP_LAYOUT")  # root's next command: the system layout, as ever
    later = paths()
    assert later.system and later.file == str(system_file)
    assert later.var_dir == Path("/var/lib/purepcp")

    monkeypatch.setenv("PUREPCP_LAYOUT", "system")  # and the other way round (in tmp_path)
    monkeypatch.setenv("PCP_SYSCONF_DIR", str(tmp_path / "etc" / "purepcp"))
    monkeypatch.setenv("PCP_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setattr("purepcp.pmcd.units._create_account", lambda sysusers: None)
    assert main(["--install-units", str(tmp_path / "units")]) == 0
    assert "\nPUREPCP_LAYOUT=system\n" in system_file.read_text()
    assert "\nPUREPCP_LAYOUT=user\n" in user_file.read_text()
    assert sorted(p.name for p in (tmp_path / "etc" / "purepcp").iterdir()) == [
        "pcp.conf", "pmlogger", "sysusers.conf"
    ]  # fmt: skip


def test_a_manager_that_reads_no_notifications_does_not_stop_the_daemon():
    """sd_notify messages are sent without waiting: once the manager's queue was full
    (ten datagrams on Linux), pmcd's next reload blocked its event loop for good."""
    notify = Notifications()
    try:
        sent = subprocess.run(
            [sys.executable, "-c",
             "from purepcp.pmapi.service import notify_reloaded\n"
             "print(sum(notify_reloaded() for _ in range(100)))"],
            env=notify.env({**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        assert 0 < int(sent.stdout) < 100  # (the rest dropped: nobody read them)
    finally:
        notify.close()


def test_pmproxy_unit_command_by_hand_serves_the_local_pmcd(tmp_path):
    """The pmproxy unit's command, run as systemd would (PMPROXY_PORT added, so that the
    test never takes port 44322), says READY and answers from pmcd's unix socket."""
    from tests.support.pmproxy_servers import get
    from tests.support.reference_pmcd import free_port

    layout = layout_in(tmp_path)
    assert install_units(layout, str(tmp_path / "units")) == 0
    units = tmp_path / "units"
    pmcd_settings = unit_settings((units / "pmcd.service").read_text())
    proxy_settings = unit_settings((units / "pmproxy.service").read_text())
    notify = Notifications()
    port = free_port()
    env = unit_environment(proxy_settings, notify.name)
    pmcd = start_daemon(
        command_of(pmcd_settings["ExecStart"][0]),
        unit_environment(pmcd_settings, notify.name),
        tmp_path / "pmcd.stderr",
    )
    proxy = None
    try:
        notify.wait(pmcd, "READY", "pmcd", describe=_stderr(tmp_path / "pmcd.stderr"))
        argv = command_of(proxy_settings["ExecStart"][0])
        proxy = start_daemon(argv, {**env, "PMPROXY_PORT": str(port)}, tmp_path / "proxy.stderr")
        ready = notify.wait(proxy, "READY", "pmproxy", describe=_stderr(tmp_path / "proxy.stderr"))
        assert int(ready["MAINPID"]) == proxy.pid
        status, _, body = get(
            f"http://127.0.0.1:{port}/pmapi/fetch?names=hinv.ncpu&hostspec=local:"
        )
        assert status == 200, body
        assert (layout.log_dir / "pmproxy" / "pmproxy.log").exists()
    finally:
        notify.close()
        if proxy is not None:
            _stop(proxy)
        _stop(pmcd)
