"""agents/proc/hotproc.py: pmdaproc's hotproc predicate language, its echo text, the
per-process rates and the totals; the interop tests check the parser and the echo
against PCP 6.0.3's pmdaproc itself (stores through a reference pmcd)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from purepcp.agents.proc import hotproc as h
from purepcp.pmapi.cnumbers import float32
from tests.support.waiting import wait_until

PMDAPROC = "/var/lib/pcp/pmdas/proc/pmdaproc"
SAMPLE = '#pmdahotproc\nVersion 1.0\n\nuname != "root" || cpuburn > 0.05'

#: config -> hotproc.control.config after storing it, as pmdaproc 6.0.3 answers
#: ("" where the config is empty and disables hotproc).
ACCEPTED = {
    '  ( ( uname  !=   "root" ) ||cpuburn>0.05)&&!(fname~/ba.h/) ': (
        '(((uname != "root") || (cpuburn > 0.050000)) && (! (fname ~ "ba.h")))'
    ),
    SAMPLE: '((uname != "root") || (cpuburn > 0.050000))',
    "uid < 3000000000 || gid >= 2.25 || 5. == .5": (
        "(((uid < 3000000000.000000) || (gid >= 2.250000)) || (5 == 0.500000))"
    ),
    "uid == 0 xyz": "(uid == 0)",  # an unknown word is skipped
    "uid > -1": "(uid > 1)",  # so is an unknown character
    "Version 1.0\nuid == 1": "(uid == 1)",
    "Version 1 uid == 3": "(uid == 3)",
    "uid == 4 # comment": "(uid == 4)",
    "#c\nuid == 5 #x\n": "(uid == 5)",
    "fname ~ /[/": '(fname ~ "[")',  # a bad pattern is only logged
    'fname == "abc\n': '(fname == "abc")',  # a newline ends a string
    "TRUE": "",  # skipped, leaving nothing
    "true && false || ! true": "(((true) && (false)) || (! (true)))",
    '"a" == "b"': '("a" == "b")',
    '"a" ~ /a/': '("a" ~ "a")',
    "syscalls > 7": "(syscalls > 7)",
    "007 == 0.1234567": "(7 == 0.123457)",
    "uid == 0 && uid == 14": "((uid == 0) && (uid == 14))",
    "": "",
    "   \n # only comment\n": "",
    "\t": "",
}

#: Configs pmdaproc 6.0.3 refuses (PM_ERR_BADSTORE).
REFUSED = [
    'uid == "x"',
    "fname == 1.5",
    "uid = 0",
    "Version 2 uid == 2",
    "Version 1.0",
    "# uid",  # a comment needs its newline; "#" alone is skipped
    "fname ~ /abc",
    "(uid) == 6",
    'fname ~ "a"',
    "\n\nuid ==\n\n== 8",
    "1e5 > uid",
    "uid == 9 ; gid == 9",
    "uidx == 10",
    "uid2 == 11",
    "version 1 uid == 12",
    "uid == 1 == 1",
    '"a" < "b"',
    "uid ~ /0/",
    "uid == 0 Version 1",
]

#: pattern -> whether it matches "hpzz9", as pmdaproc 6.0.3 decided (fname ~ /.../).
PATTERNS = {
    "^hpzz9$": True,
    "hpzz[0-9]": True,
    "hpz+9": True,
    "hpzx?z9": True,
    "^(hpzz9)$": False,
    r"^\(hpzz9\)$": True,
    "hpzz9|nomatch": False,
    r"nomatch\|hpzz9": True,
    r"hpz\{2\}9": False,
    "hpz{2}9": False,
    "hpzz[[:digit:]]": False,
    "HPZZ9": False,
    r"hpzz\w": True,
    "hp.z9": True,
    r"\bhpzz9\b": True,
    r"hpzz9\>": True,
    "hpzz9\\'": True,
    r"hpzz9\d*": True,
    r"hp\zz9": True,
    "hpzz9$|": False,
}


# -- the parser and the echo text ----------------------------------------------------


@pytest.mark.parametrize("config", list(ACCEPTED))
def test_accepted_configs_echo_pmdaprocs_text(config: str) -> None:
    assert h.config_text(h.parse(config)) == ACCEPTED[config]


@pytest.mark.parametrize("config", REFUSED)
def test_refused_configs(config: str) -> None:
    with pytest.raises(h.PredicateError) as caught:
        h.parse(config)
    assert "\n" not in str(caught.value)


def test_empty_configs_parse_to_none() -> None:
    for config in ("", "  \n", "# a comment\n", "TRUE"):
        assert h.parse(config) is None


def test_error_messages_carry_the_line() -> None:
    with pytest.raises(h.PredicateError) as caught:
        h.parse('\n\nuid ==\n\n"x"')
    assert caught.value.line == 5
    assert str(caught.value).startswith("line 5: syntax error")
    with pytest.raises(h.PredicateError, match="wrong version number"):
        h.parse("Version 2.0\nuid == 0")
    assert isinstance(caught.value, ValueError)


def test_version_is_compared_as_a_c_float() -> None:
    assert h.parse("Version 1.00000001 uid == 0") is not None
    with pytest.raises(h.PredicateError):
        h.parse("Version 1.01 uid == 0")


def test_skipped_words_and_bad_patterns_are_warnings() -> None:
    predicate = h.parse("uid == 0 xyz && fname ~ /a\\(/")
    assert predicate is not None
    assert len(predicate.warnings) == 2
    assert "xyz" in predicate.warnings[0]
    assert "a\\(" in predicate.warnings[1]
    assert h.parse(SAMPLE).warnings == ()  # type: ignore[union-attr]


def test_variables_and_types() -> None:
    assert set(h.VARIABLES) == {
        "uid", "gid", "uname", "gname", "fname", "psargs", "cpuburn", "iodemand",
        "ctxswitch", "syscalls", "virtualsize", "residentsize", "iowait", "schedwait",
    }  # fmt: skip
    for name, kind in h.VARIABLES.items():
        literal = "1" if kind == "number" else '"x"'
        wrong = '"x"' if kind == "number" else "1"
        assert h.parse(f"{name} == {literal}") is not None
        with pytest.raises(h.PredicateError):
            h.parse(f"{name} == {wrong}")
    assert h.parse(SAMPLE).variables() == {"uname", "cpuburn"}  # type: ignore[union-attr]


def test_number_dump() -> None:
    assert h.Number(2147483647.0).dump() == "2147483647"
    assert h.Number(2147483648.0).dump() == "2147483648.000000"
    assert h.Number(0.0).dump() == "0"
    assert h.Number(1e-7).dump() == "0.000000"


# -- evaluation -------------------------------------------------------------------------

PROCESS = {
    "uid": 1000,
    "gid": 100,
    "uname": "alice",
    "gname": "users",
    "fname": "bash",
    "psargs": "/bin/bash -l",
    "cpuburn": 0.25,
    "ctxswitch": 12.5,
    "virtualsize": 20000,
    "residentsize": 4000,
    "iodemand": 1024.0,
    "iowait": 0.0,
    "schedwait": 0.01,
}


def _eval(config: str, values: dict[str, object] = PROCESS) -> bool:
    predicate = h.parse(config)
    assert predicate is not None
    return predicate.evaluate(values)


def test_evaluation() -> None:
    assert _eval(SAMPLE)
    assert not _eval(SAMPLE, {**PROCESS, "uname": "root", "cpuburn": 0.05})
    assert _eval(SAMPLE, {**PROCESS, "uname": "root", "cpuburn": 0.06})
    assert _eval("uid == 1000 && gid != 0 && residentsize <= 4000 && virtualsize > 19999.5")
    assert _eval('fname ~ /^ba/ && psargs !~ /zsh/ && gname == "users"')
    assert not _eval("iowait > 0 || schedwait >= 0.5")
    assert _eval("1 < 2") and _eval('"a" != "b"') and _eval('"abc" ~ /b/')


def test_precedence_not_binds_tightest_and_before_or() -> None:
    assert _eval("true || false && false")  # true || (false && false)
    assert not _eval("! true && false")  # (! true) && false
    assert _eval("! (true && false)")
    assert h.parse("! true && false").text() == "((! (true)) && (false))"  # type: ignore[union-attr]


def test_short_circuit_and_fatal_evaluations() -> None:
    assert not _eval("false && syscalls > 7")
    assert _eval("true || fname ~ /[/")
    with pytest.raises(h.PredicateRuntimeError, match="syscalls"):
        _eval("syscalls > 7")
    with pytest.raises(h.PredicateRuntimeError):
        _eval("fname ~ /[/")


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_patterns_match_as_glibc_re_comp(pattern: str) -> None:
    assert _eval(f"fname ~ /{pattern}/", {**PROCESS, "fname": "hpzz9"}) == PATTERNS[pattern]


def test_pattern_translation_rules() -> None:
    match = {src: bool(h.compile_pattern(src).search(text)) for src, text in [
        ("*a", "*a"), ("^*", "*x"), ("a**", "aaa"), (r"\(ab\)\1", "abab"), ("[]a]", "]"),
        ("[^]a]", "b"), ("[a-]", "-"), ("a\\+", "a+"), ("x$y", "x$y"), ("[z-a]", "z"),
        ("[\\]", "\\"), (r"\<b", "a b"), ("^b", "a\nb"), (r"\`b", "a\nb"),
    ]}  # fmt: skip
    assert match == {
        "*a": True, "^*": True, "a**": True, r"\(ab\)\1": True, "[]a]": True, "[^]a]": True,
        "[a-]": True, "a\\+": True, "x$y": True, "[z-a]": False, "[\\]": True, r"\<b": True,
        "^b": True, r"\`b": False,
    }  # fmt: skip
    for bad in ("[a", r"\(a", r"a\)", "a\\", r"\1", "[a-c-e]", "[[.ab.]]"):
        with pytest.raises(h.PatternError):
            h.compile_pattern(bad)


# -- readings, rates, totals ----------------------------------------------------------------


def _stat(comm: str, utime: int, stime: int, start: int, vsize: int, rss: int, blkio: int) -> bytes:
    fields = ["S"] + ["0"] * 41
    fields[11], fields[12], fields[19], fields[20], fields[21] = (
        str(utime), str(stime), str(start), str(vsize), str(rss),
    )  # fmt: skip
    fields[39] = str(blkio)
    return f"42 ({comm}) {' '.join(fields)}\n".encode()


def _status(uid: int, gid: int, vol: int, invol: int) -> bytes:
    return (
        f"Name:\tx\nUid:\t{uid}\t{uid + 1}\t{uid}\t{uid}\nGid:\t{gid}\t0\t0\t0\n"
        f"voluntary_ctxt_switches:\t{vol}\nnonvoluntary_ctxt_switches:\t{invol}\n"
    ).encode()


def _io(read: int, write: int) -> bytes:
    return f"rchar: 99\nwchar: 99\nread_bytes: {read}\nwrite_bytes: {write}\n".encode()


def _reading(cpu: int, vol: int, read: int, blkio: int, delay: int, start: int = 500) -> h.Reading:
    reading = h.parse_reading(
        _stat("my (odd) cmd", cpu, 0, start, 8192 * 1024 + 5, 10, blkio),
        _status(1000, 100, vol, 3),
        _io(read, 0),
        f"123 {delay} 7\n".encode(),
        pagesize=4096,
    )
    assert reading is not None
    return reading


def test_parse_reading() -> None:
    reading = _reading(cpu=150, vol=20, read=4096, blkio=7, delay=10**9)
    assert reading == h.Reading(
        comm="my (odd) cmd", start_time=500, cpu_ticks=150, blkio_ticks=7, vsize_kb=8192,
        rss_kb=40, uid=1000, gid=100, vctxsw=20, nvctxsw=3, read_bytes=4096, write_bytes=0,
        run_delay_ns=10**9,
    )  # fmt: skip
    bare = h.parse_reading(_stat("x", 1, 2, 3, 4, 5, 6), _status(0, 0, 1, 1), None, None, 4096)
    assert bare is not None and (bare.read_bytes, bare.run_delay_ns, bare.cpu_ticks) == (0, 0, 3)
    assert h.parse_reading(None, _status(0, 0, 1, 1), None, None, 4096) is None
    assert h.parse_reading(b"42 (x) S 1 2", _status(0, 0, 1, 1), None, None, 4096) is None
    assert h.parse_reading(_stat("x", 1, 2, 3, 4, 5, 6), b"", None, None, 4096) is None


def test_derive_rates() -> None:
    before = _reading(cpu=100, vol=10, read=0, blkio=0, delay=0)
    after = _reading(cpu=150, vol=30, read=20480, blkio=50, delay=2 * 10**9)
    derived = h.derive(before, after, elapsed=10.0, hz=100)
    assert derived == h.Derived(
        cpuburn=float32(0.05), ctxswitch=2.0, iodemand=2048.0, iowait=0.05, schedwait=0.2,
        virtualsize=8192, residentsize=40, cpu_seconds=0.5,
    )  # fmt: skip
    assert derived.cpuburn > 0.05  # a C float: (cpuburn > 0.05) holds, as in pmdaproc


def test_derive_first_seen_reused_pid_and_wrap() -> None:
    after = _reading(cpu=150, vol=30, read=20480, blkio=50, delay=2 * 10**9)
    zero = h.Derived(0.0, 0.0, 0.0, 0.0, 0.0, virtualsize=8192, residentsize=40, cpu_seconds=0.0)
    assert h.derive(None, after, 10.0, 100) == zero
    other = _reading(cpu=100, vol=10, read=0, blkio=0, delay=0, start=499)
    assert h.derive(other, after, 10.0, 100) == zero
    assert h.derive(after, after, 0.0, 100) == zero
    later = _reading(cpu=150, vol=29, read=20480, blkio=50, delay=2 * 10**9)
    assert h.derive(after, later, 1.0, 100).ctxswitch == 2.0**64 - 1  # pmdaproc's wrap rule


def test_string_variables() -> None:
    assert h.fname_variable("bash") == "bash"
    assert h.fname_variable("(sd-pam)") == "sd-pam"
    assert h.fname_variable("(x") == "x"
    assert h.fname_variable("a" * 300) == "a" * 255
    assert h.psargs_variable(123, "/bin/sh -c x") == "/bin/sh -c x"
    assert h.psargs_variable(1234567, "/bin/sh") == " /bin/sh"
    assert h.psargs_variable(1, "y" * 300) == "y" * 255
    assert h.name_variable(None) == "UNKNOWN"
    assert h.name_variable("n" * 70) == "n" * 63


def test_select_and_totals() -> None:
    predicate = h.parse("cpuburn > 0.1")
    assert predicate is not None
    previous = {
        1: _reading(cpu=0, vol=0, read=0, blkio=0, delay=0),
        2: _reading(cpu=0, vol=0, read=0, blkio=0, delay=0),
    }
    now = {
        1: _reading(cpu=400, vol=0, read=0, blkio=0, delay=0),  # 4 s of CPU in 10 s
        2: _reading(cpu=50, vol=0, read=0, blkio=0, delay=0),  # 0.5 s
        3: _reading(cpu=900, vol=0, read=0, blkio=0, delay=0),  # new: rates 0
    }
    candidates = [h.Candidate(pid, r, "root", "root", "cmd") for pid, r in now.items()]
    chosen = h.select(predicate, candidates, previous, elapsed=10.0, hz=100)
    assert list(chosen.hot) == [1]
    assert chosen.hot[1].cpuburn == float32(0.4)
    assert set(chosen.readings) == {1, 2, 3}
    assert (chosen.hot_cpu_seconds, chosen.cold_cpu_seconds) == (4.0, 0.5)

    # 2 CPUs for 10 s = 20 CPU seconds: 12 idle, 4.5 in processes, 3.5 unaccounted
    totals = h.totals(10.0, 2, 1200, 100, chosen.hot_cpu_seconds, chosen.cold_cpu_seconds)
    assert totals.cpuidle == pytest.approx(1.2)
    assert totals.cpuburn == pytest.approx(0.4)
    assert totals.not_cpuburn == pytest.approx(0.05)
    assert totals.transient == pytest.approx(0.35)
    assert totals.other_total == pytest.approx(0.4)
    assert totals.other_percent == pytest.approx(50.0)
    busy = h.totals(10.0, 1, 0, 100, 8.0, 4.0)  # more than the CPUs: transient clamps to 0
    assert (busy.transient, busy.other_percent) == (0.0, pytest.approx(100 / 3))
    assert h.totals(10.0, 1, 1000, 100, 0.0, 0.0).other_percent == 0.0
    assert h.totals(0.0, 1, 1000, 100, 1.0, 1.0) == h.NO_TOTALS


def test_select_raises_where_pmdaproc_exits() -> None:
    predicate = h.parse("syscalls > 0")
    assert predicate is not None
    reading = _reading(cpu=0, vol=0, read=0, blkio=0, delay=0)
    with pytest.raises(h.PredicateRuntimeError):
        h.select(predicate, [h.Candidate(1, reading, "a", "b", "c")], {}, 1.0, 100)


def test_idle_ticks() -> None:
    stat = b"cpu  100 5 50 7000 30 0 2 0 0 0\ncpu0 50 2 25 3500 15 0 1 0 0 0\n"
    assert h.idle_ticks(stat) == 7000
    assert h.idle_ticks(b"intr 1\n") == 0
    assert h.idle_ticks(b"cpu 1 2\n") == 0


# -- against PCP 6.0.3's pmdaproc -----------------------------------------------------------


@pytest.fixture(scope="module")
def pmdaproc():
    """A reference pmcd running pmdaproc, and a runner of PCP tools as root over its
    unix socket (root: hotproc stores need it)."""
    if not os.path.exists(PMDAPROC):
        pytest.skip(f"reference PCP 6 pmdaproc is not installed: no {PMDAPROC}")
    if os.geteuid() != 0:
        pytest.skip("hotproc stores into pmdaproc need a root client")
    from tests.support.reference_pmcd import reference_pmcd, require_reference

    require_reference("pmstore", "pminfo")
    with reference_pmcd([f"proc\t3\tpipe\tbinary\t{PMDAPROC} -d 3"]) as pmcd:
        sock = "unix:" + os.path.join(pmcd.tmp, "run", "pmcd.socket")

        def run(*argv: str) -> str:
            done = subprocess.run(
                [argv[0], "-h", sock, *argv[1:]],
                env=pmcd.env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            return done.stdout + done.stderr

        yield run


def _stored(run, config: str) -> tuple[bool, str]:
    """Store CONFIG into pmdaproc: (accepted, hotproc.control.config afterwards)."""
    out = run("pmstore", "hotproc.control.config", config)
    accepted = "Bad input" not in out
    assert accepted or "pmStore" in out, out
    shown = run("pminfo", "-f", "hotproc.control.config")
    value = shown.split('value "', 1)[1].rsplit('"', 1)[0]
    return accepted, value


@pytest.mark.interop
def test_pmdaproc_accepts_refuses_and_echoes_as_we_do(pmdaproc) -> None:
    configs = [SAMPLE, *ACCEPTED, *REFUSED, 'psargs ~ /\\(a\\|b\\)*c/ || !(gname == "x")']
    _stored(pmdaproc, "uid == 424242")  # a known text before each refused store
    for config in configs:
        try:
            ours: str | None = h.config_text(h.parse(config))
        except h.PredicateError:
            ours = None
        before = _stored(pmdaproc, "uid == 424242")[1]
        accepted, theirs = _stored(pmdaproc, config)
        assert accepted == (ours is not None), config
        assert theirs == (ours if accepted else before), config


@pytest.mark.interop
def test_pmdaproc_matches_patterns_as_we_do(pmdaproc) -> None:
    """A few PATTERNS through pmdaproc's timer (refresh 1 s) on a process named hpzz9."""
    where = tempfile.mkdtemp(prefix="purepcp-hotproc-")
    binary = shutil.copy("/bin/sleep", os.path.join(where, "hpzz9"))
    child = subprocess.Popen([binary, "1000"])

    def hot() -> bool:
        return f"value {child.pid}\n" in pmdaproc("pminfo", "-f", "hotproc.psinfo.pid")

    try:
        pmdaproc("pmstore", "hotproc.control.refresh", "1")
        for pattern in ("^(hpzz9)$", r"^\(hpzz9\)$", r"nomatch\|hpzz9", "hpz{2}9", "hpz+9"):
            want = PATTERNS[pattern]
            # first the other answer, so that the pattern's shows as a change, made by a
            # pass of pmdaproc's timer over the pattern (however long the timer takes)
            _stored(pmdaproc, 'fname == "nosuchname"' if want else 'fname == "hpzz9"')
            wait_until(f"hpzz9 hot: {not want}, before /{pattern}/", lambda w=want: hot() != w)
            _stored(pmdaproc, f"fname ~ /{pattern}/")
            wait_until(f"hpzz9 hot: {want}, by /{pattern}/", lambda w=want: hot() == w)
    finally:
        child.kill()
        child.wait()
        shutil.rmtree(where, ignore_errors=True)
        pmdaproc("pmstore", "hotproc.control.refresh", "10")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
