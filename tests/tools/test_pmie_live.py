"""pmie against live hosts: the schedule, host states, actions run for real, and
runs of PCP's pmie and ours against the same pmcd (our pmcd with its pmcd, trivial,
simple and linux agents), compared after the times and process ids are blanked."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.pmapi.errors import PMError
from purepcp.tools.pmie import main
from purepcp.tools.pmie import operators as ops
from purepcp.tools.pmie import values as v
from purepcp.tools.pmie.actions import act_print, act_shell
from purepcp.tools.pmie.live import clobber
from purepcp.tools.pmie.options import Usage, parse
from purepcp.tools.pmie.replay import Engine, Task
from purepcp.tools.pmie.sources import FAILINIT, LOSTCONN, RECONN, HostStates, _why
from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.reference_pmcd import require_reference

PY = sys.executable
CTIME = re.compile(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}")
NOTIFY = re.compile(r"^\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\] pmie\(\d+\)", re.M)
UNREACHABLE = "127.0.0.1:1"  # (nothing listens on port 1)

# -- the command line --------------------------------------------------------------------------


def test_h_names_the_default_host():
    assert parse(["-h", "somehost:4321", "-c", "rules"]).host == "somehost:4321"
    assert parse(["-c", "rules"]).host is None


@pytest.mark.parametrize(
    "argv", [["-h", "a", "-a", "b"], ["-a", "b", "-h", "a"], ["-h", "a", "-h", "b"]]
)
def test_one_source_only(argv):
    with pytest.raises(Usage, match=r"^pmie: at most one of -a or -h allowed\n$"):
        parse(argv)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-S", "+1"], "pmie: time window options are supported for archives only\n"),
        (["-z"], "pmie: use of timezone from metric source requires a source\n"),
    ],
)
def test_live_runs_refuse_what_needs_an_archive(argv, message):
    with pytest.raises(Usage) as caught:
        parse(argv)
    assert str(caught.value) == message
    parse([*argv, "-a", "some/archive"])  # (an archive has them)


def test_b_is_an_option_now():
    assert parse(["-b"]).buffer and not parse(["-b"]).missing


# -- host states and their messages -----------------------------------------------------------


def _states(quiet: bool = False) -> tuple[HostStates, list[tuple[str, str]]]:
    said: list[tuple[str, str]] = []
    return HostStates(lambda level, text: said.append((level, text)), quiet), said


def test_a_failed_connection_is_reported_once_then_its_return():
    states, said = _states()
    assert states.changed("h:1", FAILINIT)
    assert not states.changed("h:1", FAILINIT)
    assert states.changed("h:1", RECONN)
    assert said == [
        ("Info", "Cannot connect to pmcd h:1\n"),
        ("Info", "Re-established connection to pmcd h:1\n"),
    ]


def test_a_first_connection_says_nothing_and_a_lost_one_does():
    states, said = _states()
    states.changed("h", RECONN)
    states.changed("h", LOSTCONN)
    assert said == [("Info", "Lost connection to pmcd h\n")]


def test_quiet_says_nothing():
    states, said = _states(quiet=True)
    states.changed("h", FAILINIT)
    assert said == []


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (-errno.ECONNREFUSED, "does not respond"),
        (-errno.EHOSTUNREACH, "is unreachable"),
        (-12387, "does not permit delivery of metrics to the local host"),  # PM_ERR_PERMISSION
    ],
)
def test_why_a_pmcd_cannot_be_reached(code, words):
    assert _why(PMError(code)) == words


# -- the schedule -----------------------------------------------------------------------------


class _Feed:
    live = True
    missing = True

    def waiting(self, t: Task) -> bool:
        return self.missing


def test_retries_back_off_up_to_the_interval_then_the_schedule_restarts():
    engine = Engine.__new__(Engine)
    engine.feed = _Feed()  # type: ignore[assignment]
    t = Task(30.0)
    t.retry = 5.0
    seen = []
    now = 100.0
    for _ in range(4):
        engine._reschedule(t, now)
        seen.append(t.eval - now)
        now = t.eval
    assert seen == [5.0, 10.0, 20.0, 30.0]
    engine.feed.missing = False  # type: ignore[attr-defined]
    t.retry, t.epoch, t.tick = 0.0, now, 0
    engine._reschedule(t, now)
    assert (t.tick, t.eval) == (1, now + 30.0)


def test_clobber_makes_values_unknown():
    x = v.Node("fetch", None, None, 1, 2, 1, 1, v.PM_SEM_INSTANT)
    x.new_ring()
    x.valid = 3
    b = v.Node(">", x, None, 1, 2, 1, 1, v.SEM_BOOLEAN)
    b.new_ring()
    b.valid = 3
    clobber(b)
    assert (x.valid, b.valid) == (0, 0)
    assert b.sample() == [v.B_UNKNOWN, v.B_UNKNOWN]
    assert all(d != d for d in x.sample())  # (NaN)


# -- actions ----------------------------------------------------------------------------------


def _action(kind: str, text: str, holdoff: float | None = None) -> v.Node:
    args = v.Node("arg", None, None, -1, 1, -1, 1, v.SEM_CHAR)
    args.new_ring()
    args.text = text
    hold = None
    if holdoff is not None:
        hold = v.Node("nop", None, None, -1, -1, -1, 1, v.SEM_NUMCONST)
        hold.new_ring()
        hold.sample()[0] = holdoff
    x = v.Node(kind, args, hold, -1, -1, -1, 1, v.SEM_BOOLEAN)
    x.new_ring()
    return x


@pytest.fixture
def clock():
    written: list[str] = []
    saved = (ops.CLOCK.write, ops.CLOCK.ctime, ops.CLOCK.now)
    ops.CLOCK.write = written.append
    ops.CLOCK.ctime = lambda now: f"T{int(now)}"
    yield written
    ops.CLOCK.write, ops.CLOCK.ctime, ops.CLOCK.now = saved


def test_print_honours_its_holdoff(clock):
    x = _action("print", "hello", holdoff=10.0)
    for now in (100.0, 105.0, 110.0, 115.0):
        ops.CLOCK.now = now
        act_print(x)
    assert clock == ["T100: hello\n", "T110: hello\n"]
    assert x.ring[0][0] == v.B_TRUE


def test_shell_runs_its_command_and_is_true_when_it_succeeds(clock, tmp_path):
    out = tmp_path / "out"
    x = _action("shell", f'echo ran >> {out}; echo "$PATH" >> {out}')
    ops.CLOCK.now = 100.0
    act_shell(x)
    ran, path = out.read_text().splitlines()
    assert ran == "ran" and path.startswith("/usr/sbin:/sbin:/usr/bin:/bin:")
    assert x.ring[0][0] == v.B_TRUE
    failing = _action("shell", "exit 3")
    act_shell(failing)
    assert failing.ring[0][0] == v.B_FALSE


def test_stomp_is_refused_in_one_line(tmp_path, capsys):
    rules = tmp_path / "rules"
    rules.write_text('r = hinv.ncpu > 0 -> stomp "x";\n')
    assert main(["-q", "-h", UNREACHABLE, "-c", str(rules)]) == 1
    err = capsys.readouterr().err
    assert err.endswith("pmie: rule r: stomp actions (a JMS server): not available in purepcp\n")


# -- PCP's pmie and ours against one pmcd -----------------------------------------------------

RULES_V = """\
ncpu = hinv.ncpu;
big = hinv.ncpu > 0;
k = 3 * hinv.ncpu + 1;
tt = trivial.time > 0;
red = simple.color #red > 0;
idle = kernel.percpu.cpu.idle >= 0;
some = some_inst (kernel.percpu.cpu.idle >= 0);
cnt = count_inst (kernel.percpu.cpu.idle >= 0);
rt = rate simple.numfetch > 0.5;
ctr = kernel.all.pswitch > 0;
none = no.such.metric > 0;
gone = kernel.percpu.cpu.idle #cpu99 > 0;
bad = hinv.ncpu #cpu0 > 0;
pr = hinv.ncpu > 0 -> print 2 sec "ncpu %v on %h";
never = hinv.ncpu < 0 -> syslog "never";
"""
# (-V and -W show operands' values too: these stay the same from one run to the next)
RULES_STABLE = """\
ncpu = hinv.ncpu;
big = hinv.ncpu > 0;
map = hinv.map.cpu_num;
some = some_inst (hinv.map.cpu_num >= 0);
mx = max_inst hinv.cpu.cache;
one = hinv.map.cpu_num #cpu1 == 1;
sh = hinv.ncpu > 0 -> shell "echo %h %v %c >> {out}";
"""


def normal(text: str, host: str) -> str:
    """Times and process ids blanked, the pmcd's address named."""
    return NOTIFY.sub("[T] pmie(P)", CTIME.sub("T", text)).replace(host, "HOST")


def pcp_pmie(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(["pmie", *args], capture_output=True, text=True, timeout=60, env=env)


def our_pmie(*args: str, env=None) -> subprocess.CompletedProcess:
    cmd = [PY, "-m", "purepcp.tools.pmie", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def server() -> Iterator[OurPMCD]:
    require_reference("pmie")
    tmp = Path(tempfile.mkdtemp(prefix="purepcp-pmie-live-"))
    (tmp / "simple").mkdir()
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    conf = (
        "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        "simple 253 dso Simple purepcp.agents.simple\n"
        "linux 60 dso Linux purepcp.agents.linux\n"
    )
    with our_pmcd(conf, tmp) as running:
        yield running


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory) -> dict[str, tuple]:
    """Each of PCP's pmie and ours, one after the other, with -v, -V and -W (and -e)."""
    tmp = tmp_path_factory.mktemp("pmie-live")
    found: dict[str, tuple] = {}
    for flag in ("-v", "-V", "-W"):
        rules = tmp / f"rules{flag}"
        for who, run in (("pcp", pcp_pmie), ("ours", our_pmie)):
            out = tmp / f"shell-{who}{flag}"
            text = RULES_V if flag == "-v" else RULES_STABLE.format(out=out)
            rules.write_text(text)
            argv = ["-h", server.host, "-c", str(rules), flag, "-t", "1", "-T", "2"]
            if flag == "-W":
                argv.append("-e")
            done = run(*argv, env=server.env)
            shell = out.read_text() if out.exists() else ""
            found[f"{who}{flag}"] = (done, shell)
    return found


@pytest.mark.interop
@pytest.mark.slow
@pytest.mark.parametrize("flag", ["-v", "-V", "-W"])
def test_live_values_as_pcp_prints_them(runs, server, flag):
    (ref, ref_shell), (mine, my_shell) = runs[f"pcp{flag}"], runs[f"ours{flag}"]
    assert mine.returncode == ref.returncode == 0
    assert normal(mine.stdout, server.host) == normal(ref.stdout, server.host)
    assert normal(mine.stderr, server.host) == normal(ref.stderr, server.host)
    assert my_shell == ref_shell


@pytest.mark.interop
@pytest.mark.slow
def test_the_shell_action_ran_at_each_evaluation(runs, server):
    _, shell = runs["ours-V"]
    lines = shell.splitlines()
    assert len(lines) == 3  # (-T 2 every second: now, +1 and +2)
    host, ncpu, conn = lines[0].split()
    assert conn == server.host and int(ncpu) > 0 and host


@pytest.mark.interop
def test_an_unreachable_host_gives_pcps_messages_and_unknown_values(tmp_path):
    require_reference("pmie")
    rules = tmp_path / "rules"
    rules.write_text("a = hinv.ncpu;\nb = hinv.ncpu > 0;\nc = sum_inst kernel.percpu.cpu.idle;\n")
    argv = ["-h", UNREACHABLE, "-c", str(rules), "-v", "-t", "0.5", "-T", "1"]
    ref, mine = pcp_pmie(*argv), our_pmie(*argv)
    assert mine.returncode == ref.returncode == 0
    assert mine.stdout == ref.stdout
    assert mine.stdout.startswith("a: ?\nb: unknown\nc: ?\n\n")
    assert normal(mine.stderr, "") == normal(ref.stderr, "")
    assert "pmie: warning - pmcd via 127.0.0.1:1 does not respond\n" in mine.stderr


@pytest.mark.interop
def test_check_binds_against_the_host(tmp_path):
    require_reference("pmie")
    rules = tmp_path / "rules"
    rules.write_text("a = hinv.ncpu > 0;\n")
    ref, mine = (
        pcp_pmie("-C", "-h", UNREACHABLE, "-c", str(rules)),
        our_pmie("-C", "-h", UNREACHABLE, "-c", str(rules)),
    )
    assert (mine.returncode, mine.stdout) == (ref.returncode, ref.stdout)
    assert normal(mine.stderr, "") == normal(ref.stderr, "")


def _lose_and_regain(cmd: list[str], tmp: Path) -> str:
    """CMD (a pmie) on a pmcd that stops after two evaluations and comes back on the
    same port; what it wrote (-b: both streams on one, line by line)."""
    conf = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\nlinux 60 dso Linux purepcp.agents.linux\n"
    rules = tmp / "rules"
    rules.write_text("n = hinv.ncpu;\nb = hinv.ncpu > 0;\nc = kernel.percpu.cpu.idle >= 0;\n")
    lines: list[str] = []
    (tmp / "one").mkdir()
    (tmp / "two").mkdir()
    with our_pmcd(conf, tmp / "one") as first:
        host = first.host
        argv = [*cmd, "-b", "-h", host, "-c", str(rules), "-v", "-t", "1", "-T", "12"]
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=first.env)
        assert proc.stderr is not None
        try:
            while lines.count("\n") < 2:  # (two evaluations, then the pmcd goes)
                lines.append(proc.stderr.readline())
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    try:
        while not lines[-1].endswith("Lost connection to pmcd " + host + "\n"):
            lines.append(proc.stderr.readline())
            assert lines[-1], "pmie ended before it lost the pmcd"
        port = host.rsplit(":", 1)[1]
        with our_pmcd(conf, tmp / "two", "-p", port):
            while not lines[-1].endswith("Re-established connection to pmcd " + host + "\n"):
                lines.append(proc.stderr.readline())
                assert lines[-1], "pmie ended before the pmcd came back"
            lines.append(proc.stderr.read())
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return normal("".join(lines), host)


def _evaluations(text: str) -> list[str]:
    """The -v blocks, messages aside."""
    body = "".join(line for line in text.splitlines(True) if not line.startswith("[T]"))
    return [block for block in body.split("\n\n") if block.strip()]


@pytest.mark.interop
@pytest.mark.slow
def test_a_host_that_goes_away_and_comes_back(tmp_path):
    require_reference("pmie")
    (tmp_path / "pcp").mkdir()
    (tmp_path / "ours").mkdir()
    ref = _lose_and_regain(["pmie"], tmp_path / "pcp")
    mine = _lose_and_regain([PY, "-m", "purepcp.tools.pmie"], tmp_path / "ours")
    for text in (ref, mine):
        assert "[T] pmie(P) Error: pmFetch from " in text
        assert "[T] pmie(P) Info: Lost connection to pmcd HOST\n" in text
        assert "[T] pmie(P) Info: Re-established connection to pmcd HOST\n" in text
        blocks = _evaluations(text)
        assert blocks[0] == "n: 2\nb: true\nc: unknown unknown" or blocks[0].startswith("n: ")
        assert "n: ?\nb: unknown\nc: ?" in blocks
        assert blocks[-1].startswith("n: ") and "?" not in blocks[-1].split("\n")[0]
    messages = [line for line in mine.splitlines() if line.startswith("[T]")]
    assert messages == [line for line in ref.splitlines() if line.startswith("[T]")]


def test_no_reference_pmcd_port_is_used():
    assert "44321" not in UNREACHABLE and os.environ.get("PMCD_PORT", "") != "44321"


@pytest.mark.slow
def test_a_set_of_values_bound_late_takes_its_instances(tmp_path):
    """Rules bound while their pmcd was away take the metric's instances once it is
    there (reinitMetric's reshaping): count_inst of a comparison counts every CPU,
    where it stayed unknown before."""
    import socket

    with socket.socket() as s:  # (a free port, for the pmcd that comes later)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = f"127.0.0.1:{port}"
    rules = tmp_path / "rules"
    rules.write_text("c = count_inst (kernel.percpu.cpu.idle >= 0);\n")
    argv = [PY, "-m", "purepcp.tools.pmie", "-b", "-h", host, "-c", str(rules), "-v"]
    proc = subprocess.Popen([*argv, "-t", "0.5", "-T", "20"], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    conf = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\nlinux 60 dso Linux purepcp.agents.linux\n"
    seen: list[str] = []
    try:
        while not seen or not seen[-1].startswith("c: "):  # (one evaluation without it)
            seen.append(proc.stderr.readline())
            assert seen[-1], "pmie ended before its first evaluation"
        assert seen[-1] == "c: ?\n"
        with our_pmcd(conf, tmp_path, "-p", str(port)):
            while not seen[-1].startswith("c: ") or seen[-1] == "c: ?\n":
                seen.append(proc.stderr.readline())
                assert seen[-1], "pmie ended with the count still unknown:\n" + "".join(seen)
        proc.terminate()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert seen[-1] == f"c: {os.cpu_count()}\n"


def test_no_rules_no_evaluator(tmp_path):
    """Rules all refused leave pmie nothing to run: it ends without its 'evaluator
    exiting' note, as pmie's run() returns at once on an empty task queue."""
    rules = tmp_path / "rules"
    rules.write_text("x = $foo\n")
    done = our_pmie("-h", UNREACHABLE, "-c", str(rules), "-t", "1", "-T", "1")
    assert done.returncode == 0
    assert done.stderr == "undefined macro name $foo\npmie: syntax error - at end of file\n"


STRING_RULES = (
    # a count of string comparisons is a number: it may be ordered
    'count_sample (pmcd.version @0..1 == "no such version") >= 0;\n',
    # sum_* and avg_* refuse a string operand, where the parse was when they did
    'sum_sample pmcd.version @0..1 == "x";\n',
    "a = 1;\nb = avg_sample\n pmcd.version @0..1;\n",
    # == and != between a string and a number, known once the metrics are bound
    'x = hinv.ncpu == "2";\ny = hinv.ncpu != pmcd.version;\n',
)


@pytest.mark.interop
@pytest.mark.parametrize("text", STRING_RULES)
def test_string_metrics_under_aggregates_as_pcp(server, tmp_path, text):
    rules = tmp_path / "rules"
    rules.write_text(text)
    argv = ["-h", server.host, "-c", str(rules), "-v", "-t", "0.2", "-T", "0.3"]
    ref, mine = pcp_pmie(*argv, env=server.env), our_pmie(*argv, env=server.env)
    assert mine.returncode == ref.returncode
    assert normal(mine.stdout, server.host) == normal(ref.stdout, server.host)
    assert normal(mine.stderr, server.host) == normal(ref.stderr, server.host)


def _me() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


@pytest.mark.interop
def test_a_daemons_log_as_pcps(tmp_path):
    """-l: the log headed, 'PID = N, via HOST', the messages, and footed, as PCP's pmie
    writes it (its user given by -U, as the running one)."""
    require_reference("pmie")
    rules = tmp_path / "rules"
    rules.write_text("a = hinv.ncpu;\n")
    texts = []
    for who, run in (("pcp", pcp_pmie), ("ours", our_pmie)):
        log = tmp_path / f"{who}.log"
        argv = ["-U", _me(), "-l", str(log), "-h", UNREACHABLE, "-c", str(rules), "-v"]
        done = run(*argv, "-t", "0.2", "-T", "0.5")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        text = re.sub(r"PID = \d+", "PID = N", normal(log.read_text(), UNREACHABLE))
        texts.append(re.sub(r"(started|finished) .*", r"\1 DATE", text))
    assert texts[1] == texts[0]
    assert texts[1].startswith("Log for pmie on ") and "PID = N, via HOST\n\n" in texts[1]


def test_statistics_file_while_running_and_log_rotation(tmp_path):
    """A live daemon's statistics file (read as pmcd and pmie_check read it) names its
    rules and log, is gone at exit; SIGHUP ends its log as rotated and begins it again."""
    import signal as sig

    from purepcp.pmapi.paths import paths
    from purepcp.pmapi.pmiestats import read_pmie_stats

    rules = tmp_path / "rules"
    rules.write_text('a = hinv.ncpu > 0 -> print "yes";\n')
    log = tmp_path / "pmie.log"
    argv = [PY, "-m", "purepcp.tools.pmie", "-U", _me(), "-l", str(log), "-h", UNREACHABLE,
            "-c", str(rules), "-t", "0.2", "-T", "30"]  # fmt: skip
    proc = subprocess.Popen(argv)
    stats = Path(paths(missing_ok=True)["PCP_TMP_DIR"], "pmie", str(proc.pid))
    try:
        while "does not respond" not in (log.read_text() if log.exists() else ""):
            assert proc.poll() is None, "pmie ended early"
        found = read_pmie_stats(str(stats))
        assert found is not None
        assert (found.configfile, found.logfile) == (str(rules), str(log))
        log.rename(tmp_path / "pmie.log.0")
        proc.send_signal(sig.SIGHUP)
        while "PID = " not in (log.read_text() if log.exists() else ""):
            assert proc.poll() is None, "pmie ended at SIGHUP"
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (tmp_path / "pmie.log.0").read_text().split("\n")[-2].startswith("Log rotated ")
    assert log.read_text().startswith("Log for pmie on ") and " rotated " in log.read_text()
    assert not stats.exists()


@pytest.mark.interop
def test_debug_appl2_dumps_each_task_as_pcp(tmp_path):
    """-D appl2: each task dumped before it is evaluated (QA 1128, 1186 follow the retry
    schedule through it): the same retry deltas, hosts and rules as PCP's pmie shows."""
    require_reference("pmie")
    rules = tmp_path / "rules"
    rules.write_text('no.such.metric > 0 -> print "botch";\n')
    argv = ["-Dappl2", "-h", UNREACHABLE, "-c", str(rules), "-t", "0.4", "-T", "1.9"]
    shown = []
    for run in (pcp_pmie, our_pmie):
        keep, inside = [], False
        for line in run(*argv).stderr.splitlines():  # (the dumps after "Evaluating task:")
            if line == "Evaluating task:":
                inside = True
            elif inside and line.startswith(("  retry delta", "  via=", "  rules:")):
                keep.append(line)
            elif inside and line.startswith("  nth="):
                keep.append(line.split(" next=")[0])
            elif inside and line.startswith("    "):
                keep.append(line)
                inside = False
        shown.append(keep)
    assert shown[1] == shown[0]
    assert "  retry delta: 0.400 host:  metric/instances missing" in shown[1]


@pytest.mark.slow
def test_pmcd_publishes_a_running_pmies_statistics(server, tmp_path):
    """pmcd.pmie.*: our pmcd's pmcd agent reads our pmie's statistics file, as PCP's
    reads PCP's pmie's (its rules file, log, pmcd and evaluation counts)."""
    rules = tmp_path / "rules"
    rules.write_text('a = hinv.ncpu > 0 -> print "yes";\n')
    log = tmp_path / "log"
    argv = [PY, "-m", "purepcp.tools.pmie", "-U", _me(), "-l", str(log), "-h", server.host,
            "-c", str(rules), "-t", "0.3", "-T", "60"]  # fmt: skip
    proc = subprocess.Popen(argv, env=server.env)
    pminfo = [PY, "-m", "purepcp.tools.pminfo", "-h", server.host, "-f", "pmcd.pmie"]
    mine = f'inst [{proc.pid} or "{proc.pid}"] value '

    def value(metric: str, out: str) -> str | None:
        """The value pminfo -f shows for this pmie's instance of METRIC."""
        block = out.split(f"\n{metric}\n", 1)[-1].split("\n\n", 1)[0]
        line = next((x for x in block.splitlines() if mine in x), None)
        return None if line is None else line.split(mine, 1)[1]

    try:
        while True:  # (until the pmie has been counted evaluating its rule twice)
            assert proc.poll() is None, "pmie ended early"
            shown = subprocess.run(pminfo, env=server.env, capture_output=True, text=True)
            actual = value("pmcd.pmie.eval.actual", shown.stdout)
            if actual is not None and int(actual) >= 2:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    out = shown.stdout
    assert value("pmcd.pmie.configfile", out) == f'"{rules}"'
    assert value("pmcd.pmie.logfile", out) == f'"{log}"'
    assert value("pmcd.pmie.numrules", out) == "1"
    assert int(value("pmcd.pmie.eval.true", out) or 0) >= 1


@pytest.mark.interop
def test_a_metric_of_two_pmcds_as_pcp(server, tmp_path):
    """One expression over two connections (:'127.0.0.1:PORT' :'localhost:PORT', the
    same pmcd by two names): each host's value, and the _host aggregates over them."""
    port = server.host.rsplit(":", 1)[1]
    two = f":'127.0.0.1:{port}' :'localhost:{port}'"
    rules = tmp_path / "rules"
    rules.write_text(f"s = sum_host hinv.ncpu {two};\nd = hinv.ncpu {two};\n"
                     f"c = some_host (hinv.ncpu {two} > 0) -> print \"%h %v\";\n")  # fmt: skip
    argv = ["-V", "-c", str(rules), "-t", "0.5", "-T", "1.2"]
    ref, mine = pcp_pmie(*argv, env=server.env), our_pmie(*argv, env=server.env)
    assert mine.returncode == ref.returncode == 0
    assert normal(mine.stdout, server.host) == normal(ref.stdout, server.host)
    assert normal(mine.stderr, server.host) == normal(ref.stderr, server.host)
    assert f"s: {2 * os.cpu_count()}\n" in mine.stdout
