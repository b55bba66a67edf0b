"""Our pmlogger: archives from our pmcd and PCP's, judged by our reader and PCP's tools."""

from __future__ import annotations

import io
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from purepcp.pmapi.archive import Archive
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import pmID_build
from tests.support.client_servers import ours_serving, reference_serving, tool_env
from tests.support.our_pmcd import our_pmcd
from tests.support.reference_pmcd import require_reference
from tests.support.waiting import complete_records, wait_until

CONFIG = """# two groups at different intervals share one archive
log mandatory on every 100 msec { simple kernel.all.load }
log mandatory on every 300 msec { hinv.ncpu kernel.all.cpu.user no.such.metric }
log mandatory on once { hinv.physmem }
log mandatory off { kernel.all.nprocs }
"""


def _pmlogger(tmp: Path, host: str, *args: str) -> subprocess.Popen:
    (tmp / "cfg").write_text(CONFIG)
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", "-h", host, "-c", str(tmp / "cfg")]
    argv += ["-l", str(tmp / "log"), *args]
    return subprocess.Popen(argv, cwd=tmp, env=tool_env(), start_new_session=True)


def _finish(proc: subprocess.Popen, timeout: float = 60) -> int:
    try:
        return proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _records(base: str) -> list:
    with Archive(base) as a:
        assert a.problems == []
        return list(a.records())


def _check_logged(base: str, samples: int) -> None:
    """What any of our archives must be: whole, every group present, the failing metric absent,
    and the samples between a prologue and an epilogue naming the logger and the archive."""
    recs = _records(base)
    assert len(recs) == samples + 2
    for logue in (recs[0], recs[-1]):
        sets = {vs.pmid: vs for vs in logue.result.vsets}
        assert sets[ARCHIVE_PMID].values == (os.path.abspath(base),)
        assert tuple(sets[ARCHIVE_PMID].insts) == (logue_pid(base),)
    with Archive(base) as a:
        names = {n for names in a.names.values() for n in names}
        assert {"simple.numfetch", "kernel.all.load", "hinv.ncpu", "hinv.physmem"} <= names
        assert "kernel.all.nprocs" not in names and "no.such.metric" not in names
        physmem = a.pmns.lookup("hinv.physmem")
        once = [r for r in recs if any(vs.pmid == physmem for vs in r.result.vsets)]
        assert len(once) == 1  # "once" means once
        load = a.pmns.lookup("kernel.all.load")
        assert a.indom_at(a.descs[load].indom).names == ("1 minute", "5 minute", "15 minute")


def logue_pid(base: str) -> int:
    with Archive(base) as a:
        return a.label.pid


ARCHIVE_PMID = pmID_build(2, 3, 2)  # pmcd.pmlogger.archive


def test_logging_from_our_pmcd(tmp_path):
    with ours_serving(tmp_path) as pmcd:
        status = _finish(_pmlogger(tmp_path, pmcd.host, "-s", "12", "arch"))
    assert status == 0
    _check_logged(str(tmp_path / "arch"), 12)
    assert "no.such.metric" in (tmp_path / "log").read_text()  # warned, not fatal


def test_an_instance_list_restricts_what_is_logged(tmp_path):
    (tmp_path / "few").write_text(
        'log mandatory on every 100 msec { kernel.all.load [ "1 minute" 15 ] simple.color }\n'
    )
    with ours_serving(tmp_path) as pmcd:
        proc = _pmlogger(tmp_path, pmcd.host, "-c", str(tmp_path / "few"), "-s", "3", "arch")
        assert _finish(proc) == 0
    with Archive(str(tmp_path / "arch")) as a:
        load, color = a.pmns.lookup("kernel.all.load"), a.pmns.lookup("simple.color")
        for rec in list(a.records())[1:-1]:  # (between the prologue and the epilogue)
            sets = {vs.pmid: tuple(vs.insts) for vs in rec.result.vsets}
            assert sets == {load: (1, 15), color: (0, 1, 2)}


#: A configuration naming instances that are not there, one way and another, and one that is.
UNKNOWN_INSTANCES = """log mandatory on every 100 msec {
  kernel.all.load ["nosuch"]
  simple.color [ 99 ]
  hinv.ncpu ["x"]
  kernel.all.nprocs
  simple.now ["bogus" 1]
}
"""
#: What PCP's pmlogger writes to its log for it (gram.y's yywarn), and so ours.
UNKNOWN_INSTANCE_WARNINGS = [
    "Warning [{cfg}, line 2]",
    'Instance "nosuch" is not defined for the metric "kernel.all.load"',
    "Warning [{cfg}, line 3]",
    'Instance "99" is not defined for the metric "simple.color"',
    "Warning [{cfg}, line 4]",
    'Instance "x" is not defined for the metric "hinv.ncpu"',
    "Warning [{cfg}, line 6]",
    'Instance "bogus" is not defined for the metric "simple.now"',
]


def _warnings(log: str) -> list[str]:
    """The lines of a pmlogger log from the first warning up to "Config parsed"."""
    lines = log.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Warning"))
    return lines[start : lines.index("Config parsed")]


def test_unknown_instances_are_warned_of_and_not_logged(tmp_path):
    """A misspelled instance was logged as a metric with no values and said nothing (an
    unknown number or an instance of a singular metric not even that): each is PCP's
    warning in the log, and a metric left with no instance is not logged at all."""
    (tmp_path / "cfg").write_text(UNKNOWN_INSTANCES)
    with ours_serving(tmp_path) as pmcd:
        run = _run_pmlogger(tmp_path, "-h", pmcd.host, "-c", "cfg", "-s", "2", "-l", "log", "a")
    assert (run.returncode, run.stderr) == (0, "")
    assert _warnings((tmp_path / "log").read_text()) == [
        line.format(cfg="cfg") for line in UNKNOWN_INSTANCE_WARNINGS
    ]
    with Archive(str(tmp_path / "a")) as a:
        names = {n for names in a.names.values() for n in names}
        samples = list(a.records())[1:-1]
    assert names >= {"kernel.all.nprocs", "simple.now"}
    assert not names & {"kernel.all.load", "simple.color", "hinv.ncpu"}
    now = pmID_build(253, 2, 4)
    assert [tuple(vs.insts) for r in samples for vs in r.result.vsets if vs.pmid == now] == [
        (1,),
        (1,),
    ]


def test_a_configuration_left_with_nothing_to_log_runs_on_as_pcps(tmp_path):
    """The one metric's one instance misspelled: PCP's warning in the log, and then, as
    PCP's pmlogger does, an archive with its prologue and epilogue, logging nothing until
    the end of the run (it used to say "no metrics to log" and exit)."""
    (tmp_path / "cfg").write_text('log mandatory on 1 sec { kernel.all.load ["nosuch"] }\n')
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-c", "cfg", "-s", "1sec", "-l", "log", "a"]
        run = _run_pmlogger(tmp_path, *args)
    assert (run.returncode, run.stderr) == (0, "")
    log = (tmp_path / "log").read_text().splitlines()
    assert log[log.index("Warning [cfg, line 1]") :][:5] == [
        "Warning [cfg, line 1]",
        'Instance "nosuch" is not defined for the metric "kernel.all.load"',
        "Config parsed",
        f'Starting logger for host "{socket.gethostname()}" via "{pmcd.host}"',
        "Archive basename: a",
    ]
    assert log[-3].endswith("Info: pmlogger: End of run time, exiting")
    assert len(_records(str(tmp_path / "a"))) == 2  # the prologue and the epilogue


def test_a_configuration_with_no_statement_says_good_bye(tmp_path):
    """No logging statement at all: PCP's good-bye after "Starting logger", status 1."""
    (tmp_path / "cfg").write_text("# nothing\n")
    with ours_serving(tmp_path) as pmcd:
        run = _run_pmlogger(tmp_path, "-h", pmcd.host, "-c", "cfg", "-l", "log", "a")
    assert (run.returncode, run.stderr) == (1, "")
    log = (tmp_path / "log").read_text().splitlines()
    assert log[-4:-2] == [
        f'Starting logger for host "{socket.gethostname()}" via "{pmcd.host}"',
        "Nothing to log, and not the primary logger instance ... good-bye",
    ]
    assert log[-1].startswith("Log finished ") and not list(tmp_path.glob("a.*"))


def test_once_only_ends_at_the_sample_limit_in_a_new_log(tmp_path):
    """QA 161: "log mandatory on once" with -s 1 ends at the sample limit (it said "End of
    run time"), and -l starts the log afresh each run, as libpcp's pmOpenLog (it appended)."""
    (tmp_path / "cfg").write_text("log mandatory on once hinv.ncpu\n")
    with ours_serving(tmp_path) as pmcd:
        for base in ("a", "b"):
            args = ["-h", pmcd.host, "-s", "1", "-c", "cfg", "-l", "log", base]
            assert _run_pmlogger(tmp_path, *args).returncode == 0
    log = (tmp_path / "log").read_text().splitlines()
    assert [line for line in log if line.startswith("Archive basename")] == ["Archive basename: b"]
    assert log[-3].endswith("Info: pmlogger: Sample limit reached, exiting")
    assert len(_records(str(tmp_path / "b"))) == 3


@pytest.mark.interop
def test_unknown_instances_warned_of_as_pcps_pmlogger_does(tmp_path):
    """The same configuration to PCP's pmlogger: the same warnings, word for word."""
    require_reference("pmlogger")
    config = tmp_path / "cfg"
    config.write_text(UNKNOWN_INSTANCES)
    (tmp_path / "ours").mkdir()
    (tmp_path / "pcps").mkdir()
    with ours_serving(tmp_path) as pmcd:
        common = ["-h", pmcd.host, "-c", str(config), "-s", "2", "-l", "log", "arch"]
        ours = _run_pmlogger(tmp_path / "ours", *common)
        pcps = subprocess.run(
            ["pmlogger", *common], cwd=tmp_path / "pcps", env=tool_env(), timeout=60
        )
    assert (ours.returncode, pcps.returncode) == (0, 0)
    mine, theirs = (_warnings((tmp_path / d / "log").read_text()) for d in ("ours", "pcps"))
    assert mine == theirs == [line.format(cfg=config) for line in UNKNOWN_INSTANCE_WARNINGS]


def test_signals_switch_volumes_and_end_cleanly(tmp_path):
    with ours_serving(tmp_path) as pmcd:
        proc = _pmlogger(tmp_path, pmcd.host, "arch")
        try:  # (a sample after the prologue: the signal handlers are set before it)
            wait_until(
                "a sample in volume 0", lambda: complete_records(tmp_path / "arch.0") >= 2, proc
            )
            proc.send_signal(signal.SIGHUP)
            wait_until(
                "a sample in volume 1", lambda: complete_records(tmp_path / "arch.1") >= 1, proc
            )
        finally:
            proc.send_signal(signal.SIGTERM)
        assert _finish(proc) == 0
    with Archive(str(tmp_path / "arch")) as a:
        assert set(a.volume_paths) == {0, 1}
        assert {e.vol for e in a.index} == {0, 1}
        recs = list(a.records())
    assert {r.vol for r in recs} == {0, 1} and not any(r.is_mark for r in recs)


def test_a_mark_when_pmcd_goes_away_and_logging_resumes(tmp_path):
    (tmp_path / "one").write_text("log mandatory on every 100 msec { simple.numfetch }\n")
    conf = "simple 253 dso Simple agents.simple\n"
    for d in (tmp_path / "p1", tmp_path / "p2"):
        (d / "simple").mkdir(parents=True)
        (d / "simple" / "simple.conf").write_text("sec\n")
    base = str(tmp_path / "arch")
    proc = None
    try:
        with our_pmcd(conf, tmp_path / "p1") as pmcd:
            port = pmcd.host.rsplit(":", 1)[1]
            proc = _pmlogger(tmp_path, pmcd.host, "-c", str(tmp_path / "one"), "arch")
            wait_until("two samples", lambda: complete_records(Path(base + ".0")) >= 3, proc)
        with our_pmcd(conf, tmp_path / "p2", "-p", port):  # (pmlogger retries every second)
            try:
                wait_until("a <mark>, then a sample", lambda: _resumed(base), proc)
            finally:
                proc.send_signal(signal.SIGTERM)  # (while pmcd is there: no second gap)
            assert _finish(proc) == 0
    finally:
        if proc is not None and proc.poll() is None:  # (a failure above: no stray logger)
            proc.kill()
            proc.wait()
    recs = _records(base)
    marks = [i for i, r in enumerate(recs) if r.is_mark]
    assert len(marks) == 1 and 2 < marks[0] < len(recs) - 2, "one <mark>, across the gap"
    assert recs[marks[0] + 1].stamp > recs[marks[0]].stamp > recs[marks[0] - 1].stamp


def test_samples_while_pmcd_is_gone_count_toward_s(tmp_path):
    """QA 326: -s counts the samples pmlogger tried while pmcd was away, as PCP's
    pmlogger counts its callbacks, so it ends on time rather than waiting for pmcd; and
    as pmcd never came back, the archive ends without a <mark>."""
    (tmp_path / "one").write_text("log mandatory on every 100 msec { simple.numfetch }\n")
    conf = "simple 253 dso Simple agents.simple\n"
    (tmp_path / "p1" / "simple").mkdir(parents=True)
    (tmp_path / "p1" / "simple" / "simple.conf").write_text("sec\n")
    base = str(tmp_path / "arch")
    proc = None
    try:
        with our_pmcd(conf, tmp_path / "p1") as pmcd:
            args = ("-c", str(tmp_path / "one"), "-s", "20", "arch")
            proc = _pmlogger(tmp_path, pmcd.host, *args)
            wait_until("two samples", lambda: complete_records(Path(base + ".0")) >= 3, proc)
        assert _finish(proc) == 0  # (pmcd never comes back: the limit ends it all the same)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Sample limit reached" in (tmp_path / "log").read_text()
    records = _records(base)
    assert len(records) < 20
    assert not any(r.is_mark for r in records)  # (PCP marks only a gap it saw end: QA 326)


def test_a_mark_when_pmcd_adds_an_agent(tmp_path):
    """QA 326: a fetch that brings PMCD_ADD_AGENT (an agent started again, or added by a
    reload) is a possible gap, maybe counters reset: PCP's pmlogger writes a <mark>."""
    (tmp_path / "one").write_text("log mandatory on every 100 msec { simple.numfetch }\n")
    conf = "simple 253 dso Simple agents.simple\n"
    (tmp_path / "p1" / "simple").mkdir(parents=True)
    (tmp_path / "p1" / "simple" / "simple.conf").write_text("sec\n")
    base = str(tmp_path / "arch")
    with our_pmcd(conf, tmp_path / "p1") as pmcd:
        proc = _pmlogger(tmp_path, pmcd.host, "-c", str(tmp_path / "one"), "arch")
        try:
            wait_until("two samples", lambda: complete_records(Path(base + ".0")) >= 3, proc)
            (tmp_path / "p1" / "pmcd.conf").write_text(
                conf + "trivial 250 dso Trivial agents.trivial\n"
            )
            pmcd.reload()
            wait_until("a <mark>, then a sample", lambda: _resumed(base), proc)
        finally:
            proc.send_signal(signal.SIGTERM)
        assert _finish(proc) == 0
    recs = _records(base)
    marks = [i for i, r in enumerate(recs) if r.is_mark]
    assert len(marks) == 1 and marks[0] > 2


def _resumed(base: str) -> bool:
    """Whether the archive BASE, being written, holds a <mark> with a sample after it."""
    try:
        with Archive(base) as a:
            kinds = [r.is_mark for r in a.records()]
    except Exception:  # (not readable yet: a record is being written)
        return False
    return True in kinds and False in kinds[kinds.index(True) + 1 :]


def test_an_existing_archive_is_never_overwritten(tmp_path):
    with ours_serving(tmp_path) as pmcd:
        assert _finish(_pmlogger(tmp_path, pmcd.host, "-s", "2", "arch")) == 0
        before = Path(tmp_path / "arch.0").read_bytes()
        again = subprocess.run(
            [sys.executable, "-m", "purepcp.pmlogger.main", "-h", pmcd.host, "-c", "cfg", "-s", "2",
             "-l", "log2", "arch"],
            cwd=tmp_path, capture_output=True, text=True, timeout=60, env=tool_env(),
        )  # fmt: skip
    assert again.returncode == 1
    assert again.stderr == 'pmlogger: "arch.index" already exists, not over-written\n'
    assert Path(tmp_path / "arch.0").read_bytes() == before


def test_bad_configuration_is_one_line(tmp_path):
    (tmp_path / "cfg").write_text("log mandatory sometimes foo\n")
    run = subprocess.run(
        [sys.executable, "-m", "purepcp.pmlogger.main", "-c", "cfg", "arch"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Specification error" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "arch.0").exists()
    log = (tmp_path / "pmlogger.log").read_text().splitlines()  # (PCP's two lines in the log)
    assert log[3:5] == ["Specification error in configuration file (cfg)", "[line 1] syntax error"]


def test_check_flag_reports_a_bad_configuration_as_pcps_pmlogger(tmp_path):
    """QA 687: -C's report is PCP's, after the Start notice: two lines, no "pmlogger:"."""
    (tmp_path / "cfg").write_text("log fobar on once {\n    hinv.ncpu\n}\n")
    run = _run_pmlogger(tmp_path, "-C", "-c", "cfg")
    assert run.returncode == 1
    assert run.stderr.splitlines()[1:] == [
        "Specification error in configuration file (cfg)",
        "[line 1] syntax error",
    ]


# -- judged by PCP ------------------------------------------------------------------------------


def _pcp_accepts(base: str, samples: int | None = None) -> None:
    check = subprocess.run(["pmlogcheck", base], capture_output=True, text=True, timeout=60)
    assert (check.returncode, check.stdout, check.stderr) == (0, "", "")
    dump = subprocess.run(
        ["pmdumplog", "-a", base], capture_output=True, text=True, timeout=60, env=tool_env()
    )
    assert dump.returncode == 0, dump.stderr
    stamps = [ln for ln in dump.stdout.splitlines() if ln[:2].isdigit() and " metric" in ln]
    assert len(stamps) == len(_records(base))
    replay = subprocess.run(
        ["pmval", "-a", base, "-t", "0.1", "kernel.all.load"],
        capture_output=True,
        text=True,
        timeout=60,
        env=tool_env(),
    )
    assert replay.returncode == 0 and "1 minute" in replay.stdout, replay.stderr
    assert any(ln[:2].isdigit() and "." in ln.split()[-1] for ln in replay.stdout.splitlines())


@pytest.mark.interop
def test_our_archive_from_our_pmcd_passes_pcp(tmp_path):
    require_reference("pmlogcheck", "pmdumplog", "pmval")
    with ours_serving(tmp_path) as pmcd:
        assert _finish(_pmlogger(tmp_path, pmcd.host, "-s", "10", "arch")) == 0
    _pcp_accepts(str(tmp_path / "arch"))


@pytest.mark.interop
def test_our_archive_from_pcps_pmcd_passes_pcp(tmp_path):
    require_reference("pmlogcheck", "pmdumplog", "pmval")
    with reference_serving(tmp_path) as pmcd:
        assert _finish(_pmlogger(tmp_path, pmcd.host, "-s", "10", "arch")) == 0
    _check_logged(str(tmp_path / "arch"), 10)
    _pcp_accepts(str(tmp_path / "arch"))


@pytest.mark.interop
@pytest.mark.slow  # a soak: twenty loggers killed at random, 30 s
def test_sigkill_at_random_moments_leaves_valid_archives(tmp_path):
    require_reference("pmlogcheck")
    rng = random.Random(6)
    with ours_serving(tmp_path) as pmcd:
        for i in range(20):
            d = tmp_path / f"k{i}"
            d.mkdir()
            proc = _pmlogger(d, pmcd.host, "arch")
            time.sleep(0.6 + rng.random() * 1.2)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            base = str(d / "arch")
            volume = Path(base + ".0")
            head = volume.read_bytes()[:4] if volume.exists() else b""
            if len(head) < 4 or volume.stat().st_size <= int.from_bytes(head, "big"):
                # killed before its first sample, or between the label and the first record
                # (PCP's pmlogger has that moment too): nothing to judge
                continue
            check = subprocess.run(["pmlogcheck", base], capture_output=True, text=True)
            assert check.returncode == 0, (i, check.stdout, check.stderr)
            assert _records(base), i


_TIME = re.compile(r"\d\d:\d\d:\d\d\.\d{6}")


def _structure(base: Path, flag: str, pid: int) -> str:
    """PCP's pmdumplog FLAG report of BASE with times, the logger's PID and the path masked."""
    out = subprocess.run(
        ["pmdumplog", flag, str(base)], capture_output=True, text=True, timeout=60, env=tool_env()
    )
    assert out.returncode == 0, out.stderr
    text = _TIME.sub("HH:MM:SS", out.stdout).replace(str(base.parent), "DIR")
    text = re.sub(rf"\b{pid}\b", "PID", text)
    return re.sub(r"(commencing|ending) .*", r"\1 WHEN", text)


@pytest.mark.interop
def test_same_archive_layout_as_pcps_pmlogger(tmp_path):
    """Both loggers on one pmcd, one config: the same metadata, in the same places, the same
    index, prologue and epilogue: PCP's pmdumplog tells the two apart only by times and PIDs."""
    require_reference("pmlogger", "pmdumplog")
    config = tmp_path / "cfg"
    config.write_text(
        "log mandatory on every 1 sec {\n"
        "  kernel.all.load hinv.ncpu mem.util.free kernel.all.cpu.user\n"
        "  network.interface.in.bytes\n}\n"
    )
    (tmp_path / "ours").mkdir()
    (tmp_path / "pcps").mkdir()
    with reference_serving(tmp_path) as pmcd:
        common = ["-h", pmcd.host, "-c", str(config), "-s", "3", "-l", "log", "arch"]
        ours = subprocess.Popen(
            [sys.executable, "-m", "purepcp.pmlogger.main", *common],
            cwd=tmp_path / "ours",
            env=tool_env(),
        )
        pcps = subprocess.Popen(["pmlogger", *common], cwd=tmp_path / "pcps", env=tool_env())
        assert (_finish(ours), _finish(pcps)) == (0, 0)
    bases = [tmp_path / "ours" / "arch", tmp_path / "pcps" / "arch"]
    pids = [logue_pid(str(b)) for b in bases]
    for flag in ("-l", "-d", "-e", "-h", "-i", "-t"):
        mine, theirs = (_structure(b, flag, pid) for b, pid in zip(bases, pids, strict=True))
        assert mine == theirs, flag
    # the records: the same metrics in the same order, the values aside
    # (pmcd.pmlogger.port among them: each logger's own pmlc port)
    values = re.compile(r"value .*")
    mine, theirs = (
        values.sub("value V", _structure(b, "-m", pid)) for b, pid in zip(bases, pids, strict=True)
    )
    assert mine == theirs


# -- flags ----------------------------------------------------------------------------------


def _run_pmlogger(tmp: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "purepcp.pmlogger.main", *args]
    return subprocess.run(
        argv, cwd=tmp, capture_output=True, text=True, timeout=60, env=env or tool_env()
    )


def test_check_flag_parses_resolves_and_writes_nothing(tmp_path):
    (tmp_path / "cfg").write_text(CONFIG)
    with ours_serving(tmp_path) as pmcd:
        run = _run_pmlogger(tmp_path, "-C", "-h", pmcd.host, "-c", "cfg", "arch")
    assert run.returncode == 0, run.stderr
    assert "no.such.metric" in run.stderr  # the warning, on stderr as there is no log
    assert not list(tmp_path.glob("arch*")) and not (tmp_path / "pmlogger.log").exists()


def test_labelhost_size_limit_report_and_the_log(tmp_path):
    (tmp_path / "cfg").write_text(
        "log mandatory on every 100 msec { kernel.all.load hinv.ncpu }\n"
        "log mandatory on once { hinv.physmem }\n"
    )
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-c", "cfg", "-H", "elsewhere", "-r", "-s", "2k", "-l", "log"]
        run = _run_pmlogger(tmp_path, *args, "arch")
    assert run.returncode == 0, run.stderr
    with Archive(str(tmp_path / "arch")) as a:
        assert a.label.hostname == "elsewhere"
        data = sum(Path(p).stat().st_size for p in a.volume_paths.values())
        recs = list(a.records())
    # stopped at the first record that took the volume past 2 KB (the epilogue follows)
    assert 2048 <= data - recs[-1].size < 2048 + recs[-2].size
    log = (tmp_path / "log").read_text().splitlines()
    assert log[0].startswith("Log for pmlogger on ") and log[1] == ""
    stamp = r"\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\]"
    assert re.fullmatch(stamp + r" pmlogger\(\d+\) Info: Start", log[2])
    assert 'Starting logger for host "elsewhere" via "' in "\n".join(log)
    assert "Metric hinv.physmem logged once: " in "\n".join(log)
    group = re.compile(
        r"Group \[2 metrics\] \{\n\tkernel\.all\.load\n\thinv\.ncpu\n\} logged every 0\.100 sec: "
        r"(\d+) bytes or [\d.]+ Mbytes/day"
    )
    assert group.search("\n".join(log))
    assert log[-3].endswith("Info: pmlogger: Byte limit reached, exiting")
    assert log[-2] == "" and log[-1].startswith("Log finished ")


def test_notify_tells_the_service_manager(tmp_path):
    import socket

    (tmp_path / "cfg").write_text("log mandatory on every 100 msec { hinv.ncpu }\n")
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(30)
        with ours_serving(tmp_path) as pmcd:
            env = dict(tool_env(), NOTIFY_SOCKET=path)
            args = ["-N", "-h", pmcd.host, "-c", "cfg", "-s", "2", "a"]
            run = _run_pmlogger(tmp_path, *args, env=env)
        assert run.returncode == 0, run.stderr
        message = sock.recv(1024).decode()
    assert message.startswith("READY=1\n") and "MAINPID=" in message


# -- the order of the metadata: PCP's tasks and fetch groups ---------------------------

#: Clauses at two intervals and "once" (PCP makes a task of each interval and starts the
#: "once" task first), and one task whose metrics PCP's optfetch splits into two fetch
#: groups (instance lists on kernel.percpu's InDom beside a metric wanting all of it).
TASKS_CONFIG = """\
log mandatory on every 400 msec { hinv.ncpu }
log mandatory on every 200 msec {
    kernel.all.load simple.color
    kernel.percpu.cpu.idle ["cpu0"] kernel.percpu.cpu.sys ["cpu0"]
    kernel.percpu.cpu.nice ["cpu0"] kernel.percpu.cpu.user
}
log mandatory on once { hinv.physmem }
log mandatory on every 400 msec { simple.numfetch }
"""

_META_LINE = re.compile(r"__pmLogLoadMeta: (?:record len=\d+, type=(\S+)|PMID: (\S+))")


def _metadata_order(base: Path) -> list[str]:
    """The metadata records of BASE in file order, as PCP's pmdumplog reads them."""
    out = subprocess.run(
        ["pmdumplog", "-Dlogmeta", "-d", str(base)],
        capture_output=True, text=True, timeout=60, env=tool_env(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    found = []
    for line in out.stderr.splitlines() + out.stdout.splitlines():
        m = _META_LINE.match(line)
        if m and m.group(1):
            found.append(m.group(1))
        elif m:
            found[-1] += f" {m.group(2)}"
        elif line.startswith(("addindom(", "addlabel(", "addtext(")):
            found[-1] += " " + re.sub(r"\d\d:\d\d:\d\d\.\d+", "T", line.split(", ", 1)[1])
    return found


def _pid_masked(lines: list[str], pid: int) -> list[str]:
    return [re.sub(rf"\b{pid}\b", "PID", line) for line in lines]


@pytest.mark.interop
def test_metadata_in_pcps_order_across_tasks_and_fetch_groups(tmp_path):
    """Both loggers on one pmcd, one configuration of several tasks: descriptors, instance
    domains, labels and help texts come in the same order (ours used to describe all the
    metrics of a start-up fetch highest PMID first, and the prologue's InDom after all
    five of its metrics), so `pmdumplog -d` and the metadata's layout agree."""
    require_reference("pmlogger", "pmdumplog")
    config = tmp_path / "cfg"
    config.write_text(TASKS_CONFIG)
    (tmp_path / "ours").mkdir()
    (tmp_path / "pcps").mkdir()
    with reference_serving(tmp_path) as pmcd:
        common = ["-h", pmcd.host, "-c", str(config), "-s", "8", "-l", "log", "arch"]
        # one after the other: fetching together, PCP's pmlogger was seen to leave
        # simple.numfetch out of its record (and its metadata) now and then
        ours = subprocess.Popen(
            [sys.executable, "-m", "purepcp.pmlogger.main", *common],
            cwd=tmp_path / "ours",
            env=tool_env(),
        )
        assert _finish(ours) == 0
        pcps = subprocess.Popen(["pmlogger", *common], cwd=tmp_path / "pcps", env=tool_env())
        assert _finish(pcps) == 0
    bases = [tmp_path / "ours" / "arch", tmp_path / "pcps" / "arch"]
    pids = [logue_pid(str(b)) for b in bases]
    mine, theirs = (_pid_masked(_metadata_order(b), p) for b, p in zip(bases, pids, strict=True))
    # the facts this test stands on, PCP's order: the prologue's metrics, the InDom after
    # the first of them; the once task; the 400 msec task (one group); the 200 msec task's
    # two groups, the newer (kernel.percpu.cpu.user alone) first
    assert [m.split(" ")[1].rstrip(",") for m in theirs if m.startswith(("DESC", "INDOM"))] == [
        "2.3.3", "2.1", "2.3.0", "2.3.2", "2.0.23", "2.0.24",
        "60.1.9",
        "253.0.0", "60.0.32",
        "60.0.0", "60.0", "253.0.1", "253.0", "60.2.0", "60.2", "60.0.3", "60.0.2", "60.0.1",
    ]  # fmt: skip
    assert mine == theirs
    mine, theirs = (_structure(b, "-d", pid) for b, pid in zip(bases, pids, strict=True))
    assert mine == theirs


def test_clauses_of_one_interval_are_one_task_and_each_task_its_own_record(tmp_path):
    """QA 1413: PCP makes one task of the clauses with the same interval (one -r report,
    one record per fetch), and each task is fetched alone (it logged each clause apart
    and put the groups due together in one record)."""
    (tmp_path / "cfg").write_text(
        "log mandatory on 10 sec { kernel.all.load }\n"
        "log mandatory on once { hinv.ncpu }\n"
        "log mandatory on once { hinv.physmem hinv.ncpu }\n"
    )
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-c", "cfg", "-r", "-s", "2", "-l", "log", "a"]
        assert _run_pmlogger(tmp_path, *args).returncode == 0
    log = (tmp_path / "log").read_text()
    assert "Group [2 metrics] {\n\thinv.physmem\n\thinv.ncpu\n} logged once: " in log
    assert log.index("logged once") < log.index("Metric kernel.all.load logged every 10 sec")
    assert log.count("logged once") == 1
    recs = _records(str(tmp_path / "a"))[1:-1]  # (between the prologue and the epilogue)
    assert [len(r.result.vsets) for r in recs] == [2, 1]


#: QA 1353's configuration, less its names only PCP's QA namespace has: advisory and
#: mandatory statements, names split over lines and comments, a duplicate, no pmDesc.
STATEMENTS = """# a comment
log advisory on once { hinv.ncpu ["bin-100", "]"] }
log
mandatory
on
once
{
is_a_name_0
}
log advisory on 1 minute { is_a_name_1 [ "]" ] }
log mandatory on 15 seconds { is_a_name_3 kernel.all.load # is_not_a_name_5
# is_not_a_name_6
\t\tis_a_name_5
\t\thinv.ncpu
}
"""


@pytest.mark.interop
def test_check_flag_warns_as_pcps_pmlogger_does(tmp_path):
    """pmlogger -C with advisory statements (looked up and logged too, as PCP's: they were
    skipped), warnings at yacc's lookahead line (it gave the name's), the Start notice and
    "Config parsed" on stderr (it gave neither)."""
    require_reference("pmlogger")
    (tmp_path / "cfg").write_text(STATEMENTS)
    with ours_serving(tmp_path) as pmcd:
        ours = _run_pmlogger(tmp_path, "-C", "-h", pmcd.host, "-c", "cfg")
        pcps = subprocess.run(
            ["pmlogger", "-C", "-h", pmcd.host, "-c", "cfg"],
            cwd=tmp_path, env=tool_env(), timeout=60, capture_output=True, text=True,
        )  # fmt: skip
    assert (ours.returncode, pcps.returncode) == (0, 0)
    stamp = re.compile(r"^\[.*\] pmlogger\(\d+\) ")
    mine, theirs = ([stamp.sub("", line) for line in p.stderr.splitlines()] for p in (ours, pcps))
    theirs = [line for line in theirs if not line.startswith("preprocessor cmd:")]
    assert mine == theirs
    assert "Warning [cfg, line 9]" in mine and mine[-1] == "Config parsed"


def test_advisory_on_is_logged_as_pcps_pmlogger_does(tmp_path):
    """PCP logs "advisory on" metrics (pmlc may turn them off; there is no pmlc here):
    they were left out, so a pmlogconf configuration logged nothing."""
    (tmp_path / "cfg").write_text("log advisory on once { hinv.ncpu }\n")
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-s", "1", "-c", "cfg", "-l", "log", "a"]
        assert _run_pmlogger(tmp_path, *args).returncode == 0
    with Archive(str(tmp_path / "a")) as a:
        assert "hinv.ncpu" in {n for names in a.names.values() for n in names}


class _ChangingDomain:
    """A context whose one instance domain answers differently each time it is asked, as
    the proc agent's does while processes come and go."""

    def __init__(self, answers: list[list[int]]) -> None:
        self.answers = answers

    def instances(self, indom: int) -> list[tuple[int, str]]:
        insts = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return [(i, f"p{i}") for i in insts]

    def name_all(self, pmid: int) -> list[str]:
        return [f"m.{pmid & 0x3FF}"]

    def labels(self, ident: int, kind: int) -> list:
        return []

    def text(self, *args, **kwargs) -> str:
        raise PMError(-12357)  # PM_ERR_TEXT


def test_instance_domains_logged_as_pcps_callback_decides(tmp_path):
    """QA 611: two metrics of one instance domain in a record gave two records of it at
    one time (pmcd answering differently for the second); and an instance gone from the
    values (none new) now brings a new record of the domain, as PCP's check_inst does."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.types import PMSem, PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet
    from purepcp.pmlogger.logger import Logger

    indom, one, two = 0x0C00_0009, 0x0C00_0001, 0x0C00_0002
    descs = {p: Desc(p, PMType.PM_TYPE_32, indom, PMSem.PM_SEM_INSTANT) for p in (one, two)}
    ctx = _ChangingDomain([[1, 2, 3], [1, 2, 3, 4]])

    def make_writer(stamp, facts):
        return ArchiveWriter(str(tmp_path / "a"), hostname="h", timezone="UTC", start=stamp)

    logger = Logger(ctx, [], 1000, make_writer, log=io.StringIO())

    def record(sec: int, first: list[int], second: list[int]) -> Result:
        sets = tuple(
            ValueSet.of_atoms(p, PMType.PM_TYPE_32, [(i, i) for i in insts])
            for p, insts in ((one, first), (two, second))
        )
        return Result(Timestamp(1_700_000_000 + sec, 0), sets)

    logger.write(record(0, [1, 2, 3], [1, 2, 3, 4]), descs)  # (4 came between the two)
    ctx.answers = [[1, 3]]
    logger.write(record(1, [1, 3], [1, 3]), descs)  # (2 is gone: nothing new, yet a record)
    logger.close()
    with Archive(str(tmp_path / "a")) as a:
        assert [(r.stamp.sec - 1_700_000_000, r.insts) for r in a.indoms[indom]] == [
            (0, (1, 2, 3)),
            (1, (1, 3)),
        ]


def test_each_fetch_group_is_fetched_and_logged_on_its_own(tmp_path):
    """QA 1273: a task whose metrics optfetch bundles into two fetch groups is two fetches,
    two records (the newest group first), each with its own instance profile, and -s
    counts the task's samples; -D optfetch,desperate shows the groups as they are made,
    and -r lists the metrics group by group."""
    (tmp_path / "cfg").write_text(
        "log mandatory on every 100 msec {\n"
        '    kernel.percpu.cpu.idle ["cpu0"] kernel.percpu.cpu.sys ["cpu0"]\n'
        '    kernel.percpu.cpu.nice ["cpu0"] kernel.percpu.cpu.user\n'
        "}\n"
    )
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-c", "cfg", "-D", "optfetch,desperate", "-r", "-s", "2"]
        run = _run_pmlogger(tmp_path, *args, "-l", "log", "arch")
    assert run.returncode == 0, run.stderr
    user, nice, sys_, idle = (pmID_build(60, 0, i) for i in range(4))
    recs = _records(str(tmp_path / "arch"))[1:-1]
    assert [sorted(vs.pmid for vs in r.result.vsets) for r in recs] == [
        [user],
        [nice, sys_, idle],
        [user],
        [nice, sys_, idle],
    ]
    for r in recs[1::2]:  # (the group of instance lists: cpu0 alone)
        assert all(tuple(vs.insts) == (0,) for vs in r.result.vsets)
    log = (tmp_path / "log").read_text()
    assert log.count(" -> t_fetch ...\n") == 4
    last = log[log.rindex(" -> t_fetch ...\n") :]
    assert [line.split()[1] for line in last.splitlines() if line.startswith("    PMID ")] == [
        "60.0.0", "60.0.1", "60.0.2", "60.0.3"
    ]  # fmt: skip
    assert "\nGroup [4 metrics] {\n\tkernel.percpu.cpu.user\n\tkernel.percpu.cpu.idle\n" in log


# -- derived metrics ----------------------------------------------------------------------------

_REAL, _DERIVED = pmID_build(29, 0, 10), pmID_build(511, 0, 3)
_MARKED = pmID_build(511, 2048, 3)  # (what PCP's pmlogger writes for _DERIVED)


class _DerivedSource:
    """A context serving a real metric and a derived one, as a host context does: its
    pmcd has no agent for the derived metric's domain (511), nor any PMID of it."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def name_all(self, pmid: int) -> list[str]:
        return {_REAL: ["sample.long.one"], _DERIVED: ["my.nine"]}[pmid]

    def labels(self, ident: int, kind: int) -> list:
        from purepcp.pmapi.errors import PM_ERR_NOAGENT
        from purepcp.pmapi.labels import PM_LABEL_CONTEXT, PM_LABEL_DOMAIN

        self.asked.append((kind, ident))
        domain = ident if kind == PM_LABEL_DOMAIN else ident >> 22
        if kind != PM_LABEL_CONTEXT and domain == 511:
            raise PMError(PM_ERR_NOAGENT)
        return []

    def text(self, ident: int, help: bool = False, indom: bool = False, direct: bool = False):
        if ident == _DERIVED and not help:
            return "This should be 9!"
        raise PMError(-12357)  # PM_ERR_TEXT


def _meta_descs(base: str) -> list[int]:
    """The PMID of each descriptor record in BASE.meta, in order, repeats and all."""
    import struct

    data = Path(base + ".meta").read_bytes()
    at = struct.unpack_from(">I", data)[0]  # (past the label)
    pmids = []
    while at < len(data):
        size, kind = struct.unpack_from(">II", data, at)
        if kind == 1:  # TYPE_DESC
            pmids.append(struct.unpack_from(">I", data, at + 8)[0])
        at += size
    return pmids


def test_derived_metrics_are_logged_marked_as_pcps_pmlogger_does(tmp_path):
    """QA 352: a derived metric goes into the archive with bit 2048 of its cluster set
    (511.2048.3 for 511.0.3) in its descriptor, help text, item-label request and values,
    so that on replay it does not clash with derived metrics defined again; and, as PCP's
    pmlogger (whose check looks for the unmarked PMID), its descriptor and text go with
    each record that holds it."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.archive.format import PM_TEXT_ONELINE, PM_TEXT_PMID
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.labels import PM_LABEL_ITEM
    from purepcp.pmapi.types import PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet
    from purepcp.pmlogger.logger import Logger

    descs = {p: Desc(p, PMType.PM_TYPE_32) for p in (_REAL, _DERIVED)}
    ctx = _DerivedSource()

    def make_writer(stamp, facts):
        return ArchiveWriter(str(tmp_path / "a"), hostname="h", timezone="UTC", start=stamp)

    logger = Logger(ctx, [], 1000, make_writer, log=io.StringIO())
    for sec in (0, 1):
        sets = tuple(ValueSet.of_atoms(p, PMType.PM_TYPE_32, [(0xFFFFFFFF, v)]) for p, v in
                     ((_DERIVED, 9), (_REAL, 1)))  # fmt: skip
        logger.write(Result(Timestamp(1_700_000_000 + sec, 0), sets), descs)
    logger.close()
    base = str(tmp_path / "a")
    assert _meta_descs(base) == [_MARKED, _REAL, _MARKED]
    with Archive(base) as a:
        assert set(a.descs) == {_MARKED, _REAL}
        assert a.names[_MARKED] == ("my.nine",)
        assert a.text(_MARKED, PM_TEXT_PMID | PM_TEXT_ONELINE) == "This should be 9!"
        for record in a.records():
            assert [vs.pmid for vs in record.result.vsets] == [_MARKED, _REAL]
    assert (PM_LABEL_ITEM, _MARKED) in ctx.asked and (PM_LABEL_ITEM, _DERIVED) not in ctx.asked


def test_the_size_report_counts_a_groups_derived_metrics():
    """-r: "Group [N metrics, D derived]" when the task has derived metrics, as PCP's."""
    from purepcp.pmapi.ids import PM_INDOM_NULL
    from purepcp.pmlogger.logger import Group
    from purepcp.pmlogger.optfetch import Request

    group = Group(100_000_000, [])
    for pmid, name in ((_DERIVED, "my.nine"), (_REAL, "sample.long.one")):
        group.add(pmid, name, PM_INDOM_NULL)
        group.plan.request(Request(pmid, PM_INDOM_NULL, None))
    assert group.report(48).startswith("\nGroup [2 metrics, 1 derived] {\n")


DERIVED_CONFIG = "simple.nine = simple.numfetch - simple.numfetch + 9\n"


@pytest.mark.interop
def test_a_logged_derived_metric_replays_beside_its_definition(tmp_path):
    """QA 352: PCP's pmdumplog shows the derived metric under 511.2048.N; and on replay
    with the same derived metric defined again, PCP's pminfo and ours both give the
    archive's values (the marked PMID does not clash with the definition's)."""
    require_reference("pmdumplog", "pminfo")
    (tmp_path / "derived").write_text(DERIVED_CONFIG)
    (tmp_path / "cfg").write_text("log mandatory on 100 msec { simple.nine simple.numfetch }\n")
    env = dict(tool_env(), PCP_DERIVED_CONFIG=str(tmp_path / "derived"))
    with ours_serving(tmp_path) as pmcd:
        args = ["-h", pmcd.host, "-c", "cfg", "-s", "2", "-l", "log", "arch"]
        run = _run_pmlogger(tmp_path, *args, env=env)
    assert run.returncode == 0, run.stderr
    base = str(tmp_path / "arch")
    dump = subprocess.run(
        ["pmdumplog", base, "simple.nine"], capture_output=True, text=True, timeout=60, env=env
    )
    assert re.search(r"^    511\.2048\.[1-9]\d* \(simple\.nine\): value 9$", dump.stdout, re.M)
    argv = ["-f", "-a", base, "simple.nine"]
    ours = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pminfo", *argv],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    theirs = subprocess.run(["pminfo", *argv], capture_output=True, text=True, timeout=60, env=env)
    assert (ours.stdout, ours.stderr) == (theirs.stdout, theirs.stderr)
    assert ours.stdout == "\nsimple.nine\n    value 9\n"


def test_labels_and_instance_domains_of_derived_metrics_as_pcps_callback(tmp_path):
    """A label level that had no sets is asked again with the next metric (PCP's pmlogger
    looks for it in the archive), and after a new instance-domain record; and a derived
    metric's instance gone (none new) brings no new record of its domain: PCP's
    check_inst looks for the unmarked PMID in the last (marked) record, in vain."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.labels import PM_LABEL_CLUSTER, LabelSet
    from purepcp.pmapi.types import PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet
    from purepcp.pmlogger.logger import Logger

    indom, other = 0x0740_0002, pmID_build(29, 0, 11)
    descs = {
        _DERIVED: Desc(_DERIVED, PMType.PM_TYPE_32, indom),
        _REAL: Desc(_REAL, PMType.PM_TYPE_32),
        other: Desc(other, PMType.PM_TYPE_32),
    }
    cluster = LabelSet.from_dict({"cluster": "zero"}, PM_LABEL_CLUSTER)

    class Source(_DerivedSource, _ChangingDomain):
        def __init__(self) -> None:
            _DerivedSource.__init__(self)
            _ChangingDomain.__init__(self, [[1, 2, 3]])
            self.cluster: list = []

        def name_all(self, pmid: int) -> list[str]:
            return [f"m.{pmid & 0x3FF}"]

        def labels(self, ident: int, kind: int) -> list:
            sets = _DerivedSource.labels(self, ident, kind)
            return self.cluster if kind == PM_LABEL_CLUSTER else sets

    ctx = Source()

    def make_writer(stamp, facts):
        return ArchiveWriter(str(tmp_path / "a"), hostname="h", timezone="UTC", start=stamp)

    def record(sec: int, pmid: int, insts: list[int]) -> Result:
        vs = ValueSet.of_atoms(pmid, PMType.PM_TYPE_32, [(i, 1) for i in insts])
        return Result(Timestamp(1_700_000_000 + sec, 0), (vs,))

    logger = Logger(ctx, [], 1000, make_writer, log=io.StringIO())
    logger.write(record(0, _DERIVED, [1, 2, 3]), descs)
    ctx.answers = [[1, 3]]
    logger.write(record(1, _DERIVED, [1, 3]), descs)  # (2 gone: no new record of the domain)
    logger.write(record(2, _REAL, [0xFFFFFFFF]), descs)
    ctx.cluster = [cluster]
    logger.write(record(3, other, [0xFFFFFFFF]), descs)  # (the cluster's labels, at last)
    logger.close()
    with Archive(str(tmp_path / "a")) as a:
        assert [r.insts for r in a.indoms[indom]] == [(1, 2, 3)]
        found = [
            (r.stamp.sec - 1_700_000_000, r.ident) for r in a.labels if r.type == PM_LABEL_CLUSTER
        ]
    assert found == [(3, pmID_build(29, 0, 0))]
    assert ctx.asked.count((PM_LABEL_CLUSTER, pmID_build(29, 0, 0))) == 2


def test_thousands_of_names_are_looked_up_in_requests_pmcd_takes(tmp_path):
    """QA 799: a statement naming 2393 metrics was one 67 KB name lookup, which pmcd
    refuses (its requests are limited to 64 KB); the names now go in parts."""
    from purepcp.pmlogger.logger import LOOKUP_BYTES, _parts

    names = [f"some.rather.long.metric.name.number_{n:05d}" for n in range(2393)]
    parts = list(_parts(names))
    assert [n for part in parts for n in part] == names
    assert all(sum(len(n) + 8 for n in part) <= LOOKUP_BYTES for part in parts)
    assert len(parts) > 1 and list(_parts([])) == []


def test_index_entries_as_pcps_pmlogger_spaces_them(tmp_path):
    """An index entry when the volume has grown 100,000 bytes past the last one's record
    (callback.c's flushsize), besides the first and last: QA 442 counts them."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.types import PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet
    from purepcp.pmlogger.logger import Logger

    descs = {_REAL: Desc(_REAL, PMType.PM_TYPE_STRING)}

    def make_writer(stamp, facts):
        return ArchiveWriter(str(tmp_path / "a"), hostname="h", timezone="UTC", start=stamp)

    logger = Logger(_DerivedSource(), [], 1000, make_writer, log=io.StringIO())
    for sec in range(20):
        sets = (ValueSet.of_atoms(_REAL, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, "x" * 30_000)]),)
        logger.write(Result(Timestamp(1_700_000_000 + sec, 0), sets), descs)
    logger.close()
    with Archive(str(tmp_path / "a")) as a:
        offsets = [entry.log_offset for entry in a.index]
    # records of 30,048 bytes: an entry at the start; at record 3, the first to end past
    # byte 100,000; at 7, 11, ... (each the first to end 100,000 bytes past the end of
    # the last entry's record); and at the end
    size = (offsets[-1] - offsets[0]) // 20
    assert size == 30_048
    assert offsets == [offsets[0] + k * size for k in (0, 3, 7, 11, 15, 19, 20)], offsets


def test_ps_shows_pmlogger_as_pcps(tmp_path):
    """ps shows "pmlogger ARGS" and the process is named pmlogger, as libpcp's
    pmRecordControl starts PCP's (QA 354 finds it so).  Before: "python3 .../pmlogger"."""
    with ours_serving(tmp_path) as pmcd:
        proc = _pmlogger(tmp_path, pmcd.host, "arch")
        try:
            wait_until("a first record", lambda: complete_records(tmp_path / "arch.0") > 0, proc)
            with open(f"/proc/{proc.pid}/cmdline", "rb") as cmdline:
                words = cmdline.read().rstrip(b"\0").split(b"\0")
            with open(f"/proc/{proc.pid}/comm", "rb") as comm:
                name = comm.read().strip()
        finally:
            proc.terminate()
            _finish(proc)
    assert words == [b"pmlogger", b"-h", pmcd.host.encode(), *words[3:]]
    assert words[-1] == b"arch" and name == b"pmlogger"
