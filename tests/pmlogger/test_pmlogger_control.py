"""pmlogger's control port: the LOG PDUs, the port map files, the rules of logging
states, and PCP's pmlc talking to our pmlogger as it talks to its own."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from purepcp.pmapi.pdu import logcontrol as lc
from purepcp.pmapi.values import Timestamp
from purepcp.pmlogger.control import AccessList, AccessRule
from tests.support.client_servers import ours_serving
from tests.support.loggers import pmlc, pmlc_in_parts, running_logger, stop
from tests.support.reference_pmcd import require_reference
from tests.support.waiting import complete_records, wait_until

CONFIG = """log mandatory on 1 hour { pmcd.numagents pmcd.agent.status }
log advisory on 2 hour { pmcd.pmlogger }
log mandatory off { pmcd.control.debug }
log mandatory on once { pmcd.version }
"""

# -- the PDUs --------------------------------------------------------------------------------


def test_log_control_round_trip_and_layout():
    req = lc.LogControl(lc.PM_LOG_MANDATORY, lc.PM_LOG_ON, 5000, ((7, ()), (9, (1, -1))), 3)
    data = lc.encode_control(req)
    # header, control, state, delta, numpmid; then per metric pmid, numval, (inst, value)*
    assert data[:28] == bytes.fromhex("0000003c00008000000000030000000b000000020000138800000002")
    assert len(data) == 0x3C
    assert lc.decode_control(data) == req


def test_log_request_layout():
    assert lc.encode_request(lc.LOG_REQUEST_STATUS) == bytes.fromhex(
        "00000010000080020000000000000002"
    )
    assert lc.decode_request(lc.encode_request(3)) == 3


def test_log_status_v3_and_v2_round_trip():
    status = lc.LogStatus(
        lc.PM_LOG_STATE_INIT,
        Timestamp(1_700_000_000, 123_456_789),
        Timestamp(1_700_000_010, 5),
        Timestamp(1_700_000_020, 999_000_000),
        2,
        12345,
        "vm",
        "local:",
        "UTC",
        None,
        "AEST-10",
        None,
    )
    v3 = lc.encode_status(status)
    assert len(v3) % 4 == 0 and lc.pdu_type(v3) == lc.PDU_LOG_STATUS
    # (the seconds as a little-endian libpcp sends them: low word, then high word)
    assert v3[12:24] == (1_700_000_000).to_bytes(4, "big") + bytes(4) + (123_456_789).to_bytes(
        4, "big"
    )
    assert lc.decode_status(v3) == status
    v2 = lc.encode_status(status, lc.LOG_PDU_VERSION2)
    assert len(v2) == 264 and lc.pdu_type(v2) == lc.PDU_LOG_STATUS_V2
    back = lc.decode_status(v2)
    assert back.start == Timestamp(1_700_000_000, 123_456_000)
    assert (back.hostname, back.fqdn, back.pmcd_timezone, back.pmlogger_timezone) == (
        "vm",
        "local:",
        "UTC",
        "AEST-10",
    )


def test_state_words():
    word = lc.state_value(True, True, 10_000, True, False)
    assert word == 10_000 << 4 | lc.PMLC_ON | lc.PMLC_MAND | lc.PMLC_INLOG
    assert lc.state_delta(word) == 10_000


def test_truncated_control_is_refused():
    data = lc.encode_control(lc.LogControl(lc.PM_LOG_ENQUIRE, 0, 0, ((1, (1, 2)),)))
    with pytest.raises(lc.PDUError):
        lc.decode_control(data[:-4])


# -- [access] -------------------------------------------------------------------------------


def _access(*rules: tuple[str, int, int]) -> AccessList:
    return AccessList(tuple(AccessRule(*rule) for rule in rules))


def test_access_as_pmloggers_default_config_has_it():
    # disallow .* : all; disallow :* : all; allow local:* : enquire;
    acl = _access((".*", 7, 7), (":*", 7, 7), ("local:*", 4, 0))
    assert acl.check(socket.AF_INET, "127.0.0.1") == 3  # (enquire only)
    assert acl.check(socket.AF_INET6, "::1") == 3
    assert acl.check(socket.AF_INET, "192.0.2.7") is None  # (refused)
    assert acl.check(socket.AF_UNIX, "") == 0  # (no rule for unix: but local:*'s)


def test_access_more_specific_rules_win_and_unnamed_clients_may_do_all():
    acl = _access(("192.0.2.*", 7, 0), ("*", 7, 7), ("192.0.2.9", 2, 2))
    assert acl.check(socket.AF_INET, "192.0.2.1") == 0
    assert acl.check(socket.AF_INET, "192.0.2.9") == 2  # (no mandatory)
    assert acl.check(socket.AF_INET, "198.51.100.1") is None
    assert _access(("192.0.2.*", 1, 1)).check(socket.AF_INET, "10.0.0.1") == 0
    assert _access().check(socket.AF_INET, "10.0.0.1") == 0


# -- our logger, live -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    with ours_serving(tmp_path_factory.mktemp("pmcd")) as running:
        yield running


def test_port_map_file_links_and_cleanup(pmcd, tmp_path):
    with running_logger("ours", tmp_path, pmcd.host, CONFIG, "-P", "-m", "a note") as logger:
        lines = logger.portfile.read_text().split("\n")
        assert lines == [str(logger.port), lines[1], str(logger.archive), "a note", ""]
        primary = Path(logger.env["PCP_TMP_DIR"]) / "pmlogger" / "primary"
        assert os.readlink(primary) == str(logger.portfile)
        run = Path(logger.env["PCP_RUN_DIR"])
        sock = run / f"pmlogger.{logger.pid}.socket"
        assert sock.exists()
        assert os.readlink(run / "pmlogger.primary.socket") == str(sock)
        with socket.create_connection(("127.0.0.1", logger.port)) as conn:
            ack = conn.recv(16)
        assert ack[4:8] == (0x7000).to_bytes(4, "big")
        assert int.from_bytes(ack[8:12], "big") == logger.pid  # (from: the logger's PID)
        assert int.from_bytes(ack[12:16], "big") == lc.LOG_PDU_VERSION
        assert stop(logger.proc) == 0
        assert not logger.portfile.exists() and not primary.is_symlink()
        assert not sock.exists() and not (run / "pmlogger.primary.socket").is_symlink()


def test_a_second_client_is_told_the_port_is_busy(pmcd, tmp_path):
    with running_logger("ours", tmp_path, pmcd.host, CONFIG) as logger:
        with socket.create_connection(("127.0.0.1", logger.port)) as first:
            assert int.from_bytes(first.recv(16)[12:16], "big") == lc.LOG_PDU_VERSION
            with socket.create_connection(("127.0.0.1", logger.port)) as second:
                code = int.from_bytes(second.recv(16)[12:16], "big", signed=True)
        assert code == -98  # -EADDRINUSE


def test_access_section_refuses_a_host_it_does_not_allow(pmcd, tmp_path):
    config = CONFIG + "[access]\ndisallow 127.0.0.1 : all;\nallow 10.9.9.9 : all;\n"
    with (
        running_logger("ours", tmp_path, pmcd.host, config) as logger,
        socket.create_connection(("127.0.0.1", logger.port)) as conn,
    ):
        code = int.from_bytes(conn.recv(16)[12:16], "big", signed=True)
    assert code == -12387  # PM_ERR_PERMISSION


def test_enquire_and_advisory_denied_by_access(pmcd, tmp_path):
    config = CONFIG + "[access]\nallow * : all except advisory;\n"
    with running_logger("ours", tmp_path, pmcd.host, config) as logger:
        args = ("-p", str(logger.port), "-h", "localhost")
        run = pmlc("ours", logger.env, "log advisory on 1 sec pmcd.numclients\n", *args)
    assert "No permission to perform requested operation" in run.stdout


# -- PCP's pmlc against our logger and PCP's ----------------------------------------------------

# The script in parts, each with the count of records its requests make both loggers
# write at once.  A request that starts a new task (no task yet with its state and
# interval: PCP's do_control_req then arms it with __pmAFsetup(NULL, ...)) has it fetched
# at once, a record of its own; a metric put in a task that exists waits for that task's
# next turn (an hour away here), and a request refused, or one that only stops logging,
# makes none.  The next part's query shows "in log" and "available" from those fetches, so each
# part waits for them (after pmlc has answered all of it), never for a span of time.
PARTS = (
    (
        """status
query { pmcd.agent.status pmcd.numagents pmcd.control.debug pmcd.version }
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
""",
        0,  # (maybe drops numagents; the advisory requests are refused)
    ),
    (
        """query { pmcd.numagents pmcd.agent.status pmcd.control.debug }
log advisory on once pmcd.hostname
""",
        1,  # hostname's task (in volume 0, before the new volume, for both loggers)
    ),
    (
        """new volume
flush
query no.such.metric
""",
        0,
    ),
)


def scrub(text: str) -> str:
    """Times, PIDs, sizes and the pmcd's address (those differ from run to run)."""
    text = re.sub(r"pmlogger \[\d+\]", "pmlogger [PID]", text)
    text = re.sub(r"on port \d+", "on port PORT", text)
    text = re.sub(r"\d\d:\d\d:\d\d\.\d+", "TIME", text)
    text = re.sub(r"log size +\d+", "log size SIZE", text)
    return text


@pytest.fixture(scope="module")
def both_loggers(pmcd, tmp_path_factory):
    """PCP's pmlc on PARTS against PCP's pmlogger and against ours."""
    require_reference("pmlc", "pmlogger")
    out = {}
    for kind in ("pcp", "ours"):
        tmp = tmp_path_factory.mktemp(f"logger-{kind}")
        with running_logger(kind, tmp, pmcd.host, CONFIG) as logger:
            logger.wait_for_records(4)  # (the prologue, then each configured task's first)
            args = ("-p", str(logger.port), "-h", "localhost")
            out[kind] = pmlc_in_parts("pcp", logger, PARTS, *args)
            assert stop(logger.proc) == 0
    return out


@pytest.mark.interop
def test_pcps_pmlc_sees_our_logger_as_its_own(both_loggers):
    pcp, ours = both_loggers["pcp"], both_loggers["ours"]
    assert scrub(ours.stdout) == scrub(pcp.stdout)
    assert ours.returncode == pcp.returncode == 0


@pytest.mark.interop
def test_logging_pmlc_starts_makes_an_archive_pcp_accepts(pmcd, tmp_path):
    require_reference("pmlogcheck", "pmdumplog")
    config = "log mandatory off pmcd.numagents\n"
    with running_logger("ours", tmp_path, pmcd.host, config, "-L") as logger:
        args = ("-p", str(logger.port), "-h", "localhost")
        script = "log mandatory on 100 msec pmcd.numagents\nnew volume\n"
        run = pmlc("ours", logger.env, script, *args)
        assert run.stdout.endswith("New log volume 1\n"), run.stdout
        volume = logger.archive.with_suffix(".1")
        wait_until("records in the new volume", lambda: complete_records(volume) >= 3, logger.proc)
        assert stop(logger.proc) == 0
    check = subprocess.run(
        ["pmlogcheck", str(logger.archive)], capture_output=True, text=True, timeout=120
    )
    assert (check.returncode, check.stderr) == (0, "")
    dump = subprocess.run(
        ["pmdumplog", str(logger.archive), "pmcd.numagents"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dump.stdout.count("(pmcd.numagents): value") >= 3
    log = logger.log.read_text()
    assert "pmlc request from localhost: mandatory on 0.1 sec\n  metric: pmcd.numagents\n" in log
    assert "New log volume 1, via pmlc request at " in log
