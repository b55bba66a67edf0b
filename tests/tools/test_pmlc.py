"""pmlc: its scanner and grammar, its options, and its output against PCP's pmlc,
both talking to PCP's pmlogger and to ours."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from purepcp.tools.pmlc.lexer import GLOBAL, INSPEC, Lexer, Output, Reader
from purepcp.tools.pmlc.session import _state
from tests.support.client_servers import ours_serving, tool_env
from tests.support.loggers import logger_env, pmlc, pmlc_in_parts, running_logger, stop
from tests.support.reference_pmcd import require_reference

# -- the scanner -------------------------------------------------------------------------------


def _tokens(text: str, state: int = GLOBAL) -> list[tuple[str, str]]:
    out = io.StringIO()
    errors: list[str] = []
    reader = Reader(io.StringIO(text), Output(out, out), echo=False, prompt=False)
    reader.state = state
    lexer = Lexer(reader, errors.append)
    found = []
    while (tok := lexer.token()).kind != "END":
        found.append((tok.kind, tok.text))
    return found + [("ERR", e) for e in errors]


def test_keywords_and_names():
    assert _tokens('log mandatory on every 10 secs { a.b c[1,"x y"] }\n') == [
        ("LOG", "log"),
        ("MANDATORY", "mandatory"),
        ("ON", "on"),
        ("EVERY", "every"),
        ("NUMBER", "10"),
        ("SECOND", "secs"),
        ("LBRACE", "{"),
        ("NAME", "a.b"),
        ("NAME", "c"),
        ("LSQB", "["),
        ("NUMBER", "1"),
        ("COMMA", ","),
        ("STRING", "x y"),
        ("RSQB", "]"),
        ("RBRACE", "}"),
        ("EOL", "\n"),
    ]


def test_keywords_are_names_inside_a_statement():
    assert _tokens("on status\n", INSPEC) == [("NAME", "on"), ("NAME", "status"), ("EOL", "\n")]


def test_urls_hostnames_and_odd_characters():
    assert _tokens("connect 1 @local:/tmp/s\n")[3] == ("URL", "local:/tmp/s")
    assert _tokens("show @my-host\n")[2] == ("HOSTNAME", "my-host")
    assert ("ERR", "Unexpected character '%'") in _tokens("status %\n")


def test_state_words_print_as_pcps():
    assert _state(0) == "adv  off nl             "
    assert _state(0x3 | 10_000 << 4) == "mand on  nl      10 sec "
    assert _state(0x1 | 0x8 | 0x4 | 90_000 << 4) == "adv  on        1.5 min "
    assert _state(0x3 | 0x8 | 500 << 4) == "mand on  na     500 msec"
    assert _state(0x3 | 0x8 | 0x4) == "mand on             once"
    assert _state(0x1 | 7_200_000 << 4) == "adv  on  nl       2 hour"


# -- against PCP's pmlc, with no logger ---------------------------------------------------


def _both(args: list[str], script: str = "") -> tuple[subprocess.CompletedProcess, ...]:
    env = tool_env()
    ours = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmlc", *args],
        input=script,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    theirs = subprocess.run(
        ["pmlc", *args], input=script, env=env, capture_output=True, text=True, timeout=60
    )
    return ours, theirs


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["-x"],
        ["-p", "abc"],
        ["-p", "0"],
        ["-h", "foo"],
        ["1", "2"],
        ["-P", "-p", "3"],
        ["0"],
        ["-p", "2", "7"],
        ["-?"],
    ],
)
def test_usage_errors_as_pcps(args):
    require_reference("pmlc")
    ours, theirs = _both(args)
    assert (ours.stdout, ours.stderr, ours.returncode) == (
        theirs.stdout,
        theirs.stderr,
        theirs.returncode,
    )


NOT_CONNECTED = """status
query foo
log mandatory on 10 sec { a b
c }
bogus words here
help
flush
new volume
timezone "UTC"
show loggers @local:
connect 999999
disconnect
sleep 10
"""


@pytest.mark.interop
@pytest.mark.parametrize("flags", [[], ["-e"], ["-i"], ["-i", "-e"]])
def test_commands_without_a_logger_as_pcps(flags, tmp_path):
    require_reference("pmlc")
    env = logger_env(tmp_path)
    ours = pmlc("ours", env, NOT_CONNECTED, *flags)
    theirs = pmlc("pcp", env, NOT_CONNECTED, *flags)
    assert ours.stdout == theirs.stdout
    assert ours.returncode == theirs.returncode


# -- against a logger: ours and PCP's -------------------------------------------------------

CONFIG = """log mandatory on 1 hour { pmcd.numagents pmcd.agent.status }
log advisory on 2 hour { pmcd.pmlogger }
log mandatory off { pmcd.control.debug }
log mandatory on once { pmcd.version }
"""

# The script in parts, each with the count of records its requests make the logger write
# at once: a request that starts a new task (no task yet with its state and interval)
# has it fetched at once (PCP's __pmAFsetup(NULL, ...)), one record; a metric put in a
# task that exists waits for its next turn, and a refused request, or one that stops
# logging, makes none.  The next part's query shows "in log" and "available" from those
# fetches: each part waits for them (after pmlc has answered all of it), never for a
# span of time.  (Two requests that each start a task for one metric go in parts of
# their own: the first task's fetch may come before the second takes the metric from
# it, or not.)
PARTS = (
    (
        """status
query { pmcd.agent.status pmcd.numagents pmcd.control.debug pmcd.version }
query pmcd.agent.status [ "pmcd" 253 ]
query pmcd.agent.status [ bogus ]
query { pmcd.agent.status [ 2 ] pmcd.agent.status }
query { pmcd.numagents pmcd.numagents }
query { pmcd.agent.type pmcd.numagents } [ 2 ]
log advisory on 30 min pmcd.numclients
log advisory on 30 min pmcd.numagents
log mandatory on 500 sec pmcd.agent.type [ "pmcd" 60 ]
log mandatory off pmcd.agent.status [ "linux" ]
""",
        2,  # numclients' task and agent.type's (numagents is mandatory: refused)
    ),
    (
        """query { pmcd.numagents pmcd.numclients pmcd.agent.type pmcd.agent.status }
log mandatory maybe pmcd.numagents
log advisory on 2 hour pmcd.agent.status
log advisory off pmcd.control.debug
log mandatory on 0 sec pmcd.hostname
""",
        1,  # hostname's task (0 sec is once)
    ),
    (
        """log mandatory on 99999999 hours pmcd.hostname
""",
        1,  # (pmlc's int overflows to 132616576 msec) hostname moves to a task of its own
    ),
    (
        """query { pmcd.numagents pmcd.agent.status pmcd.control.debug }
query no.such.metric
flush
new volume
timezone logger
status
timezone "UTC"
status
disconnect
status
quit
""",
        0,
    ),
)


def scrub(text: str) -> str:
    """What differs from run to run: times, PIDs, ports, sizes, the pmcd's address."""
    text = re.sub(r"pmlogger \[\d+\]", "pmlogger [PID]", text)
    text = re.sub(r"on port \d+", "on port PORT", text)
    text = re.sub(r"\d\d:\d\d:\d\d\.\d+", "TIME", text)
    text = re.sub(r"log size +\d+", "log size SIZE", text)
    return text


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    with ours_serving(tmp_path_factory.mktemp("pmcd")) as running:
        yield running


@pytest.fixture(scope="module")
def sessions(pmcd, tmp_path_factory):
    """PARTS through each pmlc against each pmlogger (a fresh logger for each run)."""
    require_reference("pmlc", "pmlogger")
    out = {}
    for logger_kind in ("pcp", "ours"):
        for pmlc_kind in ("pcp", "ours"):
            tmp = tmp_path_factory.mktemp(f"{logger_kind}-{pmlc_kind}")
            with running_logger(logger_kind, tmp, pmcd.host, CONFIG) as logger:
                logger.wait_for_records(4)  # (the prologue, then each configured task's)
                args = ("-p", str(logger.port), "-h", "localhost")
                out[logger_kind, pmlc_kind] = pmlc_in_parts(pmlc_kind, logger, PARTS, *args)
                assert stop(logger.proc) == 0
    return out


@pytest.mark.interop
@pytest.mark.parametrize("logger", ["pcp", "ours"])
def test_our_pmlc_says_what_pcps_says(sessions, logger):
    ours, theirs = sessions[logger, "ours"], sessions[logger, "pcp"]
    assert scrub(ours.stdout) == scrub(theirs.stdout)
    assert ours.returncode == theirs.returncode


@pytest.mark.interop
def test_primary_logger_by_its_link_and_socket(pmcd, tmp_path):
    require_reference("pmlc")
    with running_logger("ours", tmp_path, pmcd.host, CONFIG, "-P") as logger:
        for kind in ("ours", "pcp"):
            for args in (["-P"], ["-h", "localhost", "-P"], [str(logger.pid)]):
                run = pmlc(kind, logger.env, "show loggers\nstatus\n", *args)
                first = run.stdout.split("\n")[0]
                assert first.startswith("Connected to "), (kind, args, run.stdout)
                assert "The following pmloggers are running on " in run.stdout
                assert f"primary ({logger.pid})" in run.stdout


@pytest.mark.interop
def test_connect_command_and_show(pmcd, tmp_path):
    require_reference("pmlc")
    with running_logger("ours", tmp_path, pmcd.host, CONFIG) as logger:
        script = f"show loggers\nconnect {logger.pid}\nstatus\nconnect port {logger.port}\n"
        script += "connect primary\nconnect 1 @unix:\nconnect port 1\n"
        runs = [pmlc(kind, logger.env, script) for kind in ("ours", "pcp")]
    assert scrub(runs[0].stdout) == scrub(runs[1].stdout)
