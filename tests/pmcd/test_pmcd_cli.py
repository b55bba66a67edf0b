"""The pmcd command's bad inputs: each a clear one-line message and a non-zero status."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pmcd(*args: str, tmp) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=ROOT, PCP_RUN_DIR=str(tmp))
    argv = [sys.executable, "-m", "purepcp.pmcd.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)


def test_a_bad_config_says_the_line_as_pcps_pmcd_does(tmp_path):
    """PCP's words alone (QA 454): before, each line began with the file's name."""
    conf = tmp_path / "pmcd.conf"
    conf.write_text("simple x dso\nfoo 3 pipe\n")
    for flags in ((), ("-v",)):
        result = pmcd(*flags, "-c", str(conf), tmp=tmp_path)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            'pmcd config[line 1]: Error: expected domain number for "simple" agent',
            "pmcd config[line 2]: Error: pipe PDU type expected (`binary')",
        ]


def test_a_relative_dso_path_that_is_no_module_is_not_absolute(tmp_path):
    """A bare word that names no Python module is PCP's relative path (QA 454); before,
    any word that could be a module name was taken for one."""
    conf = tmp_path / "pmcd.conf"
    conf.write_text("first\t1\tdso\tfirst_init      no_leading_slash\n")
    result = pmcd("-v", "-c", str(conf), tmp=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'pmcd config[line 1]: Error: path "no_leading_slash" to PMDA is not absolute'
    ]


def test_a_good_config_checks_clean(tmp_path):
    conf = tmp_path / "pmcd.conf"
    conf.write_text("simple 253 dso Simple purepcp.agents.simple\n")
    result = pmcd("-v", "-c", str(conf), tmp=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


def test_missing_files_and_a_busy_port_are_one_line_each(tmp_path):
    missing = pmcd("-c", str(tmp_path / "nope.conf"), tmp=tmp_path)
    assert missing.returncode == 1
    assert (
        missing.stderr == f"pmcd: cannot read {tmp_path / 'nope.conf'}: No such file or directory\n"
    )
    (tmp_path / "bad.pmns").write_text("garbage {\n")
    conf = tmp_path / "pmcd.conf"
    conf.write_text("simple 253 dso Simple purepcp.agents.simple\n")
    bad_pmns = pmcd("-f", "-c", str(conf), "-n", str(tmp_path / "bad.pmns"), tmp=tmp_path)
    assert bad_pmns.returncode == 1 and len(bad_pmns.stderr.splitlines()) == 1
    assert bad_pmns.stderr.startswith("pmcd: cannot load the namespace: ")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = pmcd("-f", "-c", str(conf), "-p", str(port), "-i", "127.0.0.1", "-s", "",
                     tmp=tmp_path)  # fmt: skip
    assert taken.returncode == 1
    assert taken.stderr == f"pmcd: cannot listen: 127.0.0.1:{port}: Address already in use\n"


def test_timeouts_and_limits_out_of_range_are_refused_as_pcp_refuses_them(tmp_path):
    """Before: -t -1 was taken as 'no timeout' and -q 0 as 'give up at once'; -L 5 would
    refuse every PDU."""
    for flags, message in (
        (("-t", "-1"), "pmcd: -t requires a positive numeric argument\n"),
        (("-q", "0"), "pmcd: -q requires a positive numeric argument\n"),
        (("-L", "5"), "pmcd: -L 5: too small for a PDU\n"),
    ):
        result = pmcd(*flags, "-v", tmp=tmp_path)
        assert result.returncode == 1, flags
        assert result.stderr.startswith(message), flags
        # as PCP's pmcd: a bad -t or -q is followed by the usage, a small -L is not
        assert ("\nUsage: pmcd [options]" in result.stderr) == (flags[0] != "-L"), flags


def test_command_line_follows_pcps_layout_and_our_version_words(tmp_path):
    """Before: argparse's 'usage: pmcd [-h] ...' and 'pmcd (purepcp) 0.1.0, compatible with'."""
    from purepcp.pmapi import version_line

    usage = pmcd("-?", tmp=tmp_path)
    assert usage.stderr.startswith("Usage: pmcd [options]")
    assert "\nConfiguration options:\n  -c PATH, --config=PATH\n" in usage.stderr
    version = pmcd("-V", tmp=tmp_path)
    assert (version.returncode, version.stderr) == (0, version_line("pmcd") + "\n")
    bad = pmcd("-Z", tmp=tmp_path)
    assert bad.returncode == 1
    assert bad.stderr.startswith("pmcd: invalid option -- 'Z'\nUsage: pmcd")
    extra = pmcd("-v", "stray", tmp=tmp_path)
    assert extra.stderr.startswith("pmcd: unexpected argument: stray\n")


def test_pmda_has_pcps_usage_layout_and_our_version_line():
    """Before: argparse's 'usage: pmda [-h] COMMAND ...' and no version option at all."""
    from purepcp.pmapi import version_line

    def pmda(*args: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "purepcp.pmcd.pmda_tool", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    for flag in ("-V", "--version"):
        assert (pmda(flag).returncode, pmda(flag).stderr) == (0, version_line("pmda") + "\n")
    bare = pmda()
    assert bare.returncode == 1
    assert bare.stderr.startswith("Usage: pmda install|remove|new|list [options] ...\n")
    assert "\nUsage: pmda install [options] NAME" in bare.stderr
    assert "usage:" not in bare.stderr
    bad = pmda("install", "--bogus", "x")
    assert bad.stderr.startswith("pmda: unrecognized option '--bogus'\nUsage: pmda install")
    assert pmda("frobnicate").stderr.startswith("pmda: unknown command 'frobnicate'\nUsage:")
    number = pmda("new", "--domain", "many", "demo")
    assert number.stderr.startswith("pmda: --domain many: not a number\n")


def test_ps_and_the_log_know_pmcd_as_pcps_scripts_look_for_it(tmp_path):
    """PCP's scripts find pmcd by the first word of its command line (_get_pids_by_name,
    so pmsignal's SIGHUP after `pmda install`, QA's process lists) and its log by
    "pmcd: PID = N,": ours showed Python's path first and logged no such line (QA 000,
    110, 941)."""
    from tests.support.our_pmcd import our_pmcd

    with our_pmcd("", tmp_path) as pmcd:
        with open(f"/proc/{pmcd.pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().rstrip(b"\0").split(b"\0")
        assert os.path.basename(words[0]) == b"pmcd" and words[1] == b"-f"
        assert f"pmcd: PID = {pmcd.pid}, PDU version = 2\n" in pmcd.log()


def test_the_log_is_pcps_and_stderr_stays_quiet(tmp_path):
    """PCP's pmcd says nothing on stderr once its log is open (QA 861, 326), heads its
    log "Log for pmcd on HOST started DATE", writes "[DATE] pmcd(PID) Info: ..." lines,
    its PID line and its request ports table, and ends "Log finished DATE" (QA's
    filters read these).  Before: "pmcd: listening on ..." on stderr, and every log line
    stamped "[2026-11-29 17:55:19,741] pmcd(PID) ..."."""
    import re

    from tests.support.our_pmcd import logged_port, our_pmcd

    with our_pmcd("", tmp_path) as pmcd:
        log = pmcd.log()
        port = int(pmcd.host.rsplit(":", 1)[1])
    assert (tmp_path / "pmcd.stderr").read_text() == ""
    assert log.startswith(f"Log for pmcd on {socket.gethostname()} started ")
    stamp = r"\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\]"
    assert re.search(rf"^{stamp} pmcd\({pmcd.pid}\) Info: pmcd: file descriptor limit", log, re.M)
    assert f"\npmcd: PID = {pmcd.pid}, PDU version = 2\npmcd request port(s):\n" in log
    assert re.search(rf"^  ok +\d+ +unix   {re.escape(pmcd.unix)}$", log, re.M)
    assert logged_port(log) == port
    ended = (tmp_path / "pmcd.log").read_text()
    assert re.search(r"\nLog finished \w{3} \w{3} .*\n$", ended)
    # (SIGTERM: PCP's SignalShutdown and Shutdown notices, not "pmcd: SIGTERM, shutting down")
    caught = rf"^{stamp} pmcd\({pmcd.pid}\) Info: pmcd caught SIGTERM from unknown process\n"
    shutdown = rf"{stamp} pmcd\({pmcd.pid}\) Info: pmcd Shutdown\n"
    assert re.search(caught + r"(.*\n)*" + shutdown, ended, re.M)


def test_a_client_is_taken_while_the_agents_start(tmp_path):
    """PCP's pmcd opens its request ports before it starts its agents: a client that
    connects meanwhile waits for its greeting (QA 326: pmlogger, started just after
    pmcd, was refused).  Before: nothing listened until every agent had started."""
    import time

    agent = tmp_path / "slow.py"
    agent.write_text(
        "import os, sys, time\n"
        "from purepcp.pmapi.pdu.codec import encode\n"
        "from purepcp.pmapi.pdu.records import Cred, CredsPDU\n"
        f"while not os.path.exists({str(tmp_path / 'release')!r}):\n"
        "    time.sleep(0.02)\n"
        "sys.stdout.buffer.write(encode(CredsPDU((Cred.version(0, 2),), os.getpid())))\n"
        "sys.stdout.flush()\n"
        "sys.stdin.buffer.read()\n"
    )
    conf = tmp_path / "pmcd.conf"
    conf.write_text(f"slow 253 pipe binary {sys.executable} {agent}\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=ROOT, PCP_RUN_DIR=str(tmp_path))
    argv = [sys.executable, "-m", "purepcp.pmcd.main", "-f", "-c", str(conf), "-q", "600"]
    argv += ["-p", str(port), "-i", "127.0.0.1", "-s", "", "-l", str(tmp_path / "pmcd.log")]
    pmcd = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert pmcd.poll() is None and time.monotonic() < deadline, "pmcd never listened"
            try:
                client = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except ConnectionRefusedError:
                time.sleep(0.02)
        with client:
            log = tmp_path / "pmcd.log"
            assert not log.exists() or "pmcd: PID = " not in log.read_text()  # still starting
            (tmp_path / "release").touch()
            greeting = client.recv(12)
            assert len(greeting) == 12 and greeting[4:8] == b"\0\0\x70\0"  # an ERROR PDU
    finally:
        pmcd.terminate()
        pmcd.wait(timeout=60)
