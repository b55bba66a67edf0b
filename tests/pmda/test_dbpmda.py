"""dbpmda, the PMDA debugger: our agents in-process and as pipes, and PCP's own dbpmda.

Component tests run our dbpmda (pmda.cli.dbpmda.run, in this process) on scripts
against the simple and trivial agents, loaded in-process (`open dso`) or
started as pipe agents, and check every line it prints.  Interop tests (marker
interop) run PCP 6's real dbpmda next to ours on the same scripts: against
PCP's simple agent, against our agent, and against PCP's pmdalinux.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.framer import split_stream
from purepcp.pmapi.pdu.records import Cred, CredsPDU, ErrorPDU, ProfilePDU
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueBlock
from purepcp.pmda.cli.dbpmda import main, run
from purepcp.pmda.cli.dbpmda.fmt import format_value
from purepcp.pmda.cli.dbpmda.lex import Lexer, Output, Source, split_args
from purepcp.pmda.cli.dbpmda.state import DebugOptions, Profile, StoreValueError, parse_store_value
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]
SIMPLE_IN_PROCESS = "open dso purepcp.agents.simple\n"
SIMPLE_PIPE = f"open pipe {sys.executable} -m purepcp.agents.simple -d 253\n"


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A namespace with simple (253) and trivial (250), simple.conf, no .dbpmdarc."""
    root = tmp_path / "root"
    root.write_text(
        "#define SIMPLE 253\n#define TRIVIAL 250\nroot {\n    simple\n    trivial\n}\n"
        + (ROOT / "pmns" / "simple").read_text()
        + (ROOT / "pmns" / "trivial").read_text()
    )
    (tmp_path / "simple").mkdir()
    (tmp_path / "simple" / "simple.conf").write_text("sec,min,hour\n")
    monkeypatch.setenv("PCP_PMDAS_DIR", str(tmp_path))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))
    monkeypatch.chdir(tmp_path)
    return SimpleNamespace(root=root, tmp=tmp_path)


def normalise(text: str) -> str:
    """Output with what differs between runs replaced: addresses, pids, timings."""
    text = re.sub(r"dump from 0x[0-9a-f]+", "dump from 0xADDR", text)
    text = re.sub(r"pid: \d+\)", "pid: PID)", text)
    return re.sub(r"(?m)^Timer: [0-9.]+ seconds$", "Timer: T seconds", text)


def dbpmda(world, script: str, *args: str) -> tuple[int, Transcript, str]:
    """Run our dbpmda on SCRIPT (echoing it, -e): exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["-n", str(world.root), "-e", *args]
    rc = run(argv, stdin=io.StringIO(script), stdout=out, stderr=err)
    return rc, Transcript(normalise(out.getvalue()), script), err.getvalue()


class Transcript(str):
    """dbpmda's output, remembering the script it echoed (every script here runs with -e)."""

    script: str

    def __new__(cls, text: str, script: str) -> Transcript:
        self = super().__new__(cls, text)
        self.script = script
        return self


def block(output: Transcript, command: str) -> str:
    """The lines a command printed: from its echoed line up to the next command's.

    The script's lines are matched in order, so help text that looks like a
    command is not mistaken for one.
    """
    lines = output.splitlines(keepends=True)
    at: list[int] = []  # where each script line was echoed
    for command_line in output.script.splitlines():
        at.append(lines.index(command_line + "\n", at[-1] + 1 if at else 0))
    k = output.script.splitlines().index(command)
    start, end = at[k], at[k + 1] if k + 1 < len(at) else len(lines)
    return "".join(lines[start + 1 : end])


def no_children() -> bool:
    """Whether this process has no child processes left (agents all reaped)."""
    return not [p for p in psutil.Process().children() if p.status() != psutil.STATUS_ZOMBIE]


# -- in-process agents (open dso) ----------------------------------------------------------


def test_desc_and_fetch_in_process(world):
    """desc prints the descriptor; fetch prints the result as libpcp's __pmDumpResult."""
    rc, out, err = dbpmda(
        world,
        SIMPLE_IN_PROCESS
        + "desc simple.color\ndesc simple.time.user\ndesc 253.9.9\n"
        + "fetch simple.color simple.numfetch\nfetch 253.9.9\n",
    )
    assert rc == 0
    assert block(out, "desc simple.color") == (
        "PMID: 253.0.1\n"
        "    Data Type: 32-bit int  InDom: 253.0 0x3f400000\n"
        "    Semantics: instant  Units: none\n"
    )
    assert block(out, "desc simple.time.user") == (
        "PMID: 253.1.2\n"
        "    Data Type: double  InDom: PM_INDOM_NULL 0xffffffff\n"
        "    Semantics: counter  Units: sec\n"
    )
    assert block(out, "desc 253.9.9") == (
        "PMID: 253.9.9\nError: DSO desc() failed: Unknown or illegal metric identifier\n"
    )
    assert block(out, "fetch simple.color simple.numfetch") == (
        "PMID(s): 253.0.1 253.0.0\n"
        "pmResult dump from 0xADDR timestamp: 0.000000 00:00:00.000 numpmid: 2\n"
        "  253.0.1 (simple.color): numval: 3 valfmt: 0 vlist[]:\n"
        "    inst [0 or ???] value 1 1.4012985e-45 0x1\n"
        "    inst [1 or ???] value 101 1.4153114e-43 0x65\n"
        "    inst [2 or ???] value 201 2.8166099e-43 0xc9\n"
        "  253.0.0 (simple.numfetch): numval: 1 valfmt: 0 vlist[]:\n"
        "   value 1 1.4012985e-45 0x1\n"
    ).replace("00:00:00.000", _local_midnight_ms())
    assert "253.9.9 (<noname>): Unknown or illegal metric identifier" in out
    assert err == "Warning: PMID (253.9.9) is not defined in the PMNS\n" * 2


def _local_midnight_ms() -> str:
    """How time 0 prints in this machine's timezone (HH:MM:SS.mmm)."""
    import time

    tm = time.localtime(0)
    return f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.000"


def test_instance_all_by_number_and_by_name(world):
    """The three instance forms print PCP's [  N] lines; unknown ones print the error."""
    _, out, _ = dbpmda(
        world,
        SIMPLE_IN_PROCESS
        + 'instance 253.0\ninstance 253.0 1\ninstance 253.0 green\ninstance 253.0 "blue"\n'
        + "instance 253.0 9\ninstance 253.7\ninstance 253.1\n",
    )
    assert block(out, "instance 253.0") == (
        'pmInDom: 253.0\n[  0] inst: 0 name: "red"\n[  1] inst: 1 name: "green"\n'
        '[  2] inst: 2 name: "blue"\n'
    )
    assert block(out, "instance 253.0 1") == 'pmInDom: 253.0\n[  0] name: "green"\n'
    assert block(out, "instance 253.0 green") == "pmInDom: 253.0\n[  0] inst: 1\n"
    assert block(out, 'instance 253.0 "blue"') == "pmInDom: 253.0\n[  0] inst: 2\n"
    assert block(out, "instance 253.0 9") == (
        "pmInDom: 253.0\nError: DSO instance() failed: Unknown or illegal instance identifier\n"
    )
    assert "Unknown or illegal instance domain identifier" in block(out, "instance 253.7")
    assert block(out, "instance 253.1").count("name:") == 3


def test_text_of_metric_and_indom(world):
    """text shows the one-line help in [] and the long help; missing text is an error."""
    _, out, _ = dbpmda(
        world, SIMPLE_IN_PROCESS + "text simple.color\ntext indom 253.0\ntext 253.0.0\ntext 1.1.1\n"
    )
    color = block(out, "text simple.color").splitlines()
    assert color[:2] == ["PMID: 253.0.1", "[Metrics which increment with each fetch]"]
    assert len(color) > 2
    indom = block(out, "text indom 253.0").splitlines()
    assert indom[0] == "pmInDom: 253.0" and indom[1].startswith("[Instance domain")
    assert block(out, "text 1.1.1") == (
        "PMID: 1.1.1\n" + "Error: DSO text() failed: One-line or help text is not available\n" * 2
    )


def test_store_good_and_bad_in_process(world):
    """store prints PCP's steps and old -> new values; refused values print the error."""
    _, out, _ = dbpmda(
        world,
        SIMPLE_IN_PROCESS
        + 'store simple.color "300"\nstore simple.color "7"\nfetch simple.color\n'
        + 'store simple.numfetch "abc"\nstore simple.time.user "1.5"\n',
    )
    assert block(out, 'store simple.color "300"') == (
        "PMID: 253.0.1\n"
        "Getting description...\n"
        "Sending Profile...\n"
        "Getting Result Structure...\n"
        "253.0.1 [0]: 1 -> 300\n"
        "253.0.1 [1]: 101 -> 300\n"
        "253.0.1 [2]: 201 -> 300\n"
        "Error: DSO store() failed: Impossible value or scale conversion\n"
    )
    assert block(out, 'store simple.color "7"') == (
        "PMID: 253.0.1\n"
        "Getting description...\n"
        "Getting Result Structure...\n"
        "253.0.1 [0]: 0 -> 7\n"  # 300 was clamped to 255 before the error, then wrapped
        "253.0.1 [1]: 102 -> 7\n"
        "253.0.1 [2]: 202 -> 7\n"
    )
    assert "    inst [0 or ???] value 8 " in block(out, "fetch simple.color")
    assert block(out, 'store simple.numfetch "abc"').endswith(
        'Error: Value "abc" is incompatible with metric type (PM_TYPE_U32)\n'
    )
    assert block(out, 'store simple.time.user "1.5"').endswith(
        "Error: DSO store() failed: Permission denied\n"
    )


def test_profile_then_fetch(world):
    """A profile limits the instances fetched, and status dumps it as libpcp does."""
    _, out, _ = dbpmda(
        world,
        SIMPLE_IN_PROCESS + "profile 253.0 none\nprofile 253.0 add 2\nfetch simple.color\nstatus\n",
    )
    fetched = block(out, "fetch simple.color")
    assert "numval: 1 " in fetched and "inst [2 or ???] value 201 " in fetched
    assert (
        "Dump Instance Profile state=INCLUDE, 1 profiles\n"
        "\tProfile [0] indom=1061158912 [253.0] state=EXCLUDE 1 instances\n"
        "\t\tInstances: [2]\n"
    ) in block(out, "status")


def test_labels_of_domain_indom_and_instances(world):
    """label prints each set's labels; levels without labels say so."""
    _, out, _ = dbpmda(
        world,
        SIMPLE_IN_PROCESS
        + "label domain\nlabel indom 253.0\nlabel instances 253.1\nlabel item simple.color\n",
    )
    assert block(out, "label domain") == 'Labels:\n    role="testing"\n'
    assert block(out, "label indom 253.0") == (
        'pmInDom: 253.0\nLabels:\n    indom_name="color"\n    model="RGB"\n'
    )
    assert block(out, "label instances 253.1") == (
        "Instances of pmInDom: 253.1\n"
        '[  0] Labels inst: 0\n    units="sec"\n'
        '[  1] Labels inst: 1\n    units="min"\n'
        '[  2] Labels inst: 2\n    units="hour"\n'
    )
    assert block(out, "label item simple.color") == ("PMID: 253.0.1\nInfo: DSO label() returns 0\n")


def test_getdesc_and_getiname(world):
    """With descriptors values print by type; with getiname instances get their names."""
    _, out, _ = dbpmda(
        world,
        SIMPLE_IN_PROCESS + "getdesc on\nfetch simple.color\ngetiname on\nfetch simple.numfetch "
        "simple.color\n",
    )
    assert "    inst [0 or ???] value 1\n" in block(out, "fetch simple.color")
    both = block(out, "fetch simple.numfetch simple.color")
    assert "  253.0.0 (simple.numfetch): numval: 1 valfmt: 0 vlist[]:\n   value 2\n" in both
    assert '    inst [1 or "green"] value 102\n' in both


def test_trivial_and_reopening(world):
    """Opening another agent closes the first; status names the open one."""
    _, out, err = dbpmda(
        world,
        SIMPLE_IN_PROCESS
        + "open dso purepcp.agents.trivial Trivial 250\nfetch trivial.time\nstatus\nclose\nclose\n",
    )
    assert "  250.0.1 (trivial.time): numval: 1 valfmt: 0 vlist[]:" in out
    status = block(out, "status")
    assert "PMDA:                   purepcp.agents.trivial:Trivial\n" in status
    assert "Connection:             dso\n" in status
    assert err == "Warning: No PMDA currently opened\n"


def test_agent_exceptions_are_one_line_reports(world):
    """An agent whose method raises is reported in one line; the session goes on."""
    agent = world.tmp / "broken.py"
    agent.write_text(
        textwrap.dedent(
            """
            from purepcp.agents.simple import Simple

            class Broken(Simple):
                def on_fetch(self):
                    raise ZeroDivisionError("no fetching today")
            """
        )
    )
    rc, out, err = dbpmda(world, f"open dso {agent}:Broken\nfetch simple.color\nstatus\n")
    assert rc == 0
    assert "Error: DSO fetch() failed: Generic error, already reported above\n" in out
    assert err == "dbpmda: agent raised ZeroDivisionError: no fetching today\n"
    assert "Traceback" not in out + err
    _, _, err = dbpmda(world, "open dso purepcp.agents.nosuch\nopen dso no/such/file.py\n")
    assert err.splitlines() == [
        "opendso: purepcp.agents.nosuch: cannot import: No module named 'purepcp.agents.nosuch'",
        "opendso: no/such/file.py: no such file",
    ]


# -- pipe agents -------------------------------------------------------------------------


def test_pipe_agent(world):
    """The same commands over a pipe: PCP's daemon messages, and the child is reaped."""
    rc, out, err = dbpmda(
        world,
        SIMPLE_PIPE
        + "desc simple.color\nfetch simple.color\ninstance 253.0 green\n"
        + 'store simple.color "300"\nstore simple.color "7"\ndesc 253.9.9\nstatus\n',
    )
    assert rc == 0 and err == "Warning: PMID (253.9.9) is not defined in the PMNS\n"
    assert out.splitlines()[1] == (
        f"Start {os.path.basename(sys.executable)} PMDA: "
        f"{sys.executable} -m purepcp.agents.simple -d 253"
    )
    assert block(out, "fetch simple.color") == (
        "PMID(s): 253.0.1\n"
        "__pmResult dump from 0xADDR timestamp: 0.000000000 00:00:00.000000000 numpmid: 1\n"
        "  253.0.1 (simple.color): numval: 3 valfmt: 0 vlist[]:\n"
        "    inst [0 or ???] value 1 1.4012985e-45 0x1\n"
        "    inst [1 or ???] value 101 1.4153114e-43 0x65\n"
        "    inst [2 or ???] value 201 2.8166099e-43 0xc9\n"
    ).replace("00:00:00.000000000", _local_midnight_ms()[:-3] + "000000000")
    assert block(out, "instance 253.0 green") == "pmInDom: 253.0\n[  0] inst: 1\n"
    assert block(out, 'store simple.color "300"') == (
        "PMID: 253.0.1\n"
        "Getting description...\n"
        "Getting Result Structure...\n"
        "253.0.1 [0]: 2 -> 300\n"
        "253.0.1 [1]: 102 -> 300\n"
        "253.0.1 [2]: 202 -> 300\n"
        "Sending Result...\n"
        "Error PDU: Impossible value or scale conversion\n"
    )
    assert block(out, 'store simple.color "7"').endswith("Sending Result...\n")
    assert block(out, "desc 253.9.9") == (
        "PMID: 253.9.9\nError PDU: Unknown or illegal metric identifier\n"
    )
    status = block(out, "status")
    assert f"PMDA:                   {sys.executable}\n" in status
    assert "Connection:             daemon (pid: PID)\nPMDA PMAPI Version:     2\n" in status
    assert no_children()


FAKE_AGENT = """
import os, sys
from purepcp.pmapi.pdu.codec import encode
from purepcp.pmapi.pdu.records import Cred, CredsPDU
sys.stdout.buffer.write(encode(CredsPDU((Cred.version(0),), os.getpid())))
sys.stdout.buffer.flush()
with open(sys.argv[1], "wb") as log:
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        log.write(data)
        log.flush()
"""


def test_handshake_profile_and_notconn_on_the_wire(world):
    """dbpmda answers the agent's CREDS (version 2, no flags, from its pid), sends the
    profile before the first fetch, and ERROR PM_ERR_NOTCONN when it closes."""
    (world.tmp / "fake.py").write_text(FAKE_AGENT)
    log = world.tmp / "received.bin"
    script = (
        f"open pipe {sys.executable} {world.tmp / 'fake.py'} {log}\n"
        'profile 253.0 none\nprofile 253.0 add 2\nattr 5 "fred"\nclose\n'
    )
    rc, out, _ = dbpmda(world, script)
    assert rc == 0 and "Attribute: username=fred\nSuccess\n" in out
    pdus = [decode(frame) for frame in split_stream(log.read_bytes())]
    creds, attr, notconn = pdus
    assert isinstance(creds, CredsPDU) and creds.sender == os.getpid()
    assert [(c.c_type, c.vala, c.flags) for c in creds.creds] == [(1, 2, 0)]
    assert attr.attr == 5 and attr.value == b"fred\0"
    assert notconn == ErrorPDU(-12391)
    assert no_children()


def test_open_socket_inet_keeps_low_16_bits_of_the_port(world):
    """`open socket inet N` connects to port N & 0xffff, as libpcp's htons does (QA 779
    asks for port 543210 and its agent, pmdaInet, listens on the same truncation)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)  # no connection: accept gives up, the test fails
    port = server.getsockname()[1]

    def agent() -> None:
        with contextlib.suppress(OSError):
            conn, _ = server.accept()
            serve(conn)

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.sendall(encode(CredsPDU((Cred.version(0),), os.getpid())))
            while conn.recv(4096):
                pass

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    try:
        rc, out, err = dbpmda(world, f"open socket inet {port + 65536}\n")
    finally:
        thread.join(timeout=10)
        server.close()
    assert rc == 0 and err == ""
    assert f"Connect to PMDA on inet port {port + 65536}\n" in out


def _not_an_agent(where: Path) -> str:
    """A program that exits at once without a word: /bin/sh running an empty script."""
    path = where / "true"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def test_agent_that_never_starts(world, tmp_path):
    """No CREDS (the program is not an agent): the warnings, then errors, no hang."""
    true = _not_an_agent(tmp_path)
    rc, out, err = dbpmda(world, f"open pipe {true}\ndesc 253.0.1\n", "-q", "1")
    assert rc == 0
    assert err == (
        "pmdaversion: expecting PDU_CREDS, got EOF\n"
        f"Warning: no version exchange with PMDA {true} after 1 secs\n"
    )
    assert block(out, "desc 253.0.1") in (
        "PMID: 253.0.1\nError: __pmGetPDU() failed: PDU empty, PMDA may have died\n",
        "PMID: 253.0.1\nError: __pmSendDescReq() failed: Broken pipe\n",
    )
    assert no_children()


# -- parsing and errors ------------------------------------------------------------------


def test_bad_commands_are_one_line_errors(world):
    """Every bad line gets PCP's message and caret; the next command still runs."""
    script = (
        "bogus\n@\ndesc foo.bar\ndesc simple\nstore simple.color 7\nfetch simple.color\n"
        "attr 99\ndebug nosuch\nnamespace\nlabel foo\nstatus\n"
    )
    rc, out, err = dbpmda(world, script)
    assert rc == 0
    assert err == (
        "Error: Unrecognized command\nType 'help' for a list of commands.\n"
        "Error: Illegal character\nType 'help' for a list of commands.\n"
        "Error: Unknown metric name\nType 'help' for a list of commands.\n"
        "Error: Metric name is not a leaf in PMNS\nType 'help' for a list of commands.\n"
        "Error: syntax error\nType 'help' for a list of commands.\n"
        "Warning: No PMDA currently opened\n"
        "Error: Attribute (99) is not recognised\nType 'help' for a list of commands.\n"
        "Error: Bad debug flag (nosuch)\nType 'help' for a list of commands.\n"
        "Error: syntax error\nType 'help' for a list of commands.\n"
        "Error: syntax error\nType 'help' for a list of commands.\n"
    )
    assert block(out, "bogus") == "            ^ at or near here\n"
    assert block(out, "desc foo.bar") == " " * 19 + "^ at or near here\n"
    assert block(out, "@") == "        ^ at or near here\n"
    assert "Namespace:" in block(out, "status")


def test_error_caret_follows_the_scanner(world):
    """The caret sits one character past the token that was refused, as flex reads."""
    _, out, _ = dbpmda(world, "desc foo.bar x\nbogus stuff\ninstance 253.0 1 2 3\n")
    assert block(out, "desc foo.bar x") == " " * 20 + "^ at or near here\n"
    assert block(out, "bogus stuff") == " " * 13 + "^ at or near here\n"
    assert block(out, "instance 253.0 1 2 3") == " " * 26 + "^ at or near here\n"


def test_help_usage_and_interactive_prompts(world):
    """help texts, usage forms of bare commands, -i prompts and the final newline."""
    _, out, _ = dbpmda(world, "help desc\nfetch\n")
    assert block(out, "help desc") == (
        "\ndesc metric\n\nPrint out the meta data description for the 'metric'.  The metric "
        "may be\nspecified by name, or as a PMID of the form N, N.N or N.N.N.\n\n"
    )
    assert block(out, "fetch") == "fetch metric [ metric ... ]\n"
    out_io, err_io = io.StringIO(), io.StringIO()
    run(["-n", str(world.root), "-i"], io.StringIO("timer on\n"), out_io, err_io)
    assert out_io.getvalue() == "dbpmda> dbpmda> \n"
    rc = run(["--help"], io.StringIO(""), io.StringIO(), err_io)
    assert rc == 1 and "Usage: dbpmda [options] [script]" in err_io.getvalue()


def test_script_file_argument(world, capsys):
    """A script file argument replaces standard input (our extension)."""
    script = world.tmp / "script"
    script.write_text(SIMPLE_IN_PROCESS + "desc simple.numfetch\n")
    assert main(["-n", str(world.root), "-e", str(script)]) == 0
    out = capsys.readouterr().out
    assert "    Data Type: 32-bit unsigned int  InDom: PM_INDOM_NULL 0xffffffff\n" in out


def test_dbpmdarc_is_read_first(world):
    """.dbpmdarc in the current directory runs first, echoed with its own prompt."""
    (world.tmp / ".dbpmdarc").write_text("timer on\nbogus\n")
    out, err = io.StringIO(), io.StringIO()
    run(["-n", str(world.root)], io.StringIO("status\n"), out, err)
    assert out.getvalue().startswith(".dbpmdarc> timer on\n.dbpmdarc> bogus\n")
    assert "Timer:                  on\n" in out.getvalue()
    assert err.getvalue().startswith("Error [.dbpmdarc, line 2]: Unrecognized command\n")


# -- the pieces --------------------------------------------------------------------------


def tokens(text: str) -> list[tuple[str, str]]:
    source = Source(io.StringIO(text), Output(io.StringIO(), io.StringIO()))
    lexer = Lexer(source)
    found = []
    while (token := lexer.next_token()).kind != "END":
        found.append((token.kind, token.text))
    return found


def test_lexer_matches_flex():
    """Longest match with keywords first; numbers, strings, file names after `pipe`."""
    assert tokens("desc descx 29.0.1 29.1 7 0x10 -1 'a b' \"c\",\n") == [
        ("DESC", "desc"),
        ("NAME", "descx"),
        ("NUMBER3D", "29.0.1"),
        ("NUMBER2D", "29.1"),
        ("NUMBER", "7"),
        ("NUMBER", "0x10"),
        ("NEGNUMBER", "-1"),
        ("STRING", "'a b'"),
        ("STRING", '"c"'),
        ("COMMA", ","),
        ("EOL", "\n"),
    ]
    assert tokens("open pipe /bin/x # comment\n") == [
        ("OPEN", "open"),
        ("PIPE", "pipe"),
        ("PATHNAME", "/bin/x"),
        ("EOL", "# comment\n"),
    ]
    assert split_args(' -d 29 "-l" \'a b\'  x"y z"') == ["-d", "29", "-l", "a b", "xy z"]


def test_profile_follows_libpcp():
    """pmAddProfile/pmDelProfile's rules, including delete on a new indom excluding all."""
    profile = Profile()
    profile.delete(0x3F400000, [1])
    profile.add(0x3F400001, None)
    profile.delete(0x3F400001, [5, 5])
    pdu = profile.pdu()
    assert isinstance(pdu, ProfilePDU)
    assert [(p.indom, p.state, p.insts) for p in pdu.profiles] == [
        (0x3F400000, 1, ()),
        (0x3F400001, 0, (5,)),
    ]
    profile.delete(PM_INDOM_NULL)
    assert profile.pdu() == ProfilePDU(0, 1, ())
    with pytest.raises(Exception, match="NULL pmInDom"):
        profile.add(PM_INDOM_NULL, [1])


def test_debug_options():
    """Names, old bit numbers and all/none, as pmSetDebug reads them."""
    debug = DebugOptions()
    debug.change("3")
    assert debug.describe() == "pdu fetch"
    debug.change("fetch", enable=False)
    debug.change("PMNS,labels")
    assert debug.describe() == "pdu pmns labels"
    with pytest.raises(Exception):  # noqa: B017
        debug.change("nosuch")
    debug.change("all")
    assert debug.describe() == "(all)"


def test_store_values_parse_like_strtol_and_strtod():
    """fillValues's conversions: C's number syntax, truncation and range errors."""
    assert parse_store_value(" 42", PMType.PM_TYPE_32) == 42
    assert parse_store_value("4294967297", PMType.PM_TYPE_32) == 1
    assert parse_store_value("-1", PMType.PM_TYPE_U32) == 0xFFFFFFFF
    assert parse_store_value("0x1p3", PMType.PM_TYPE_DOUBLE) == 8.0
    # glibc's strtod and strtof: an exact subnormal is no ERANGE, "-nan" keeps its sign
    assert parse_store_value("0x1p-1074", PMType.PM_TYPE_DOUBLE) == 5e-324
    assert parse_store_value("0x1p-149", PMType.PM_TYPE_FLOAT) == 2.0**-149
    assert math.copysign(1, parse_store_value("-nan", PMType.PM_TYPE_DOUBLE)) == -1
    assert parse_store_value("hi there", PMType.PM_TYPE_STRING) == "hi there"
    for text, type_, message in (
        ("42 ", PMType.PM_TYPE_32, 'Error: Value "42 " is incompatible with metric type'),
        ("1e999", PMType.PM_TYPE_DOUBLE, "Error: Decoding value: Numerical result out of range"),
        ("1e50", PMType.PM_TYPE_FLOAT, "Error: Decoding value: Numerical result out of range"),
        ("x", PMType.PM_TYPE_AGGREGATE, "Error: dbpmda does not support storing into AGGREGATE"),
    ):
        with pytest.raises(StoreValueError) as info:
            parse_store_value(text, type_)
        assert info.value.message.startswith(message)


def test_values_print_like_pmPrintValue():
    """Known types by their format; unknown ones as number, float, string and hex."""
    assert format_value(ValFmt.PM_VAL_INSITU, PMType.PM_TYPE_UNKNOWN, 101) == (
        "101 1.4153114e-43 0x65"
    )
    assert format_value(ValFmt.PM_VAL_INSITU, PMType.PM_TYPE_32, -1) == "-1"
    block_ = ValueBlock(PMType.PM_TYPE_FLOAT, struct.pack(">f", 0.09))
    assert format_value(ValFmt.PM_VAL_DPTR, PMType.PM_TYPE_FLOAT, block_) == "0.090000004"
    text = ValueBlock(PMType.PM_TYPE_AGGREGATE, b"hullo world!")
    assert format_value(ValFmt.PM_VAL_DPTR, PMType.PM_TYPE_AGGREGATE, text) == (
        '"hullo world!" [68756c6c6f20776f726c6421]'
    )
    events = ValueBlock(PMType.PM_TYPE_EVENT, struct.pack(">i", 0))
    assert format_value(ValFmt.PM_VAL_DPTR, PMType.PM_TYPE_EVENT, events) == "[0 event records]"
    assert PM_IN_NULL == 0xFFFFFFFF


# -- interop with PCP's dbpmda ------------------------------------------------------------

DBPMDA = "/usr/bin/dbpmda"
PCP_PMDAS = Path("/var/lib/pcp/pmdas")
NEWHELP = "/usr/lib/pcp/bin/newhelp"
PCP_PYTHON = "/usr/bin/python3"


def require_pcp_dbpmda() -> None:
    """Skip unless PCP's own dbpmda is installed (ours may be on PATH under the same name)."""
    require_reference("dbpmda")
    if not os.access(DBPMDA, os.X_OK):
        pytest.skip(f"reference PCP 6 is not installed: no {DBPMDA} (Debian package pcp)")


def _dbpmda(command: list[str], script: str, args: tuple[str, ...], env: dict, cwd: Path):
    done = subprocess.run(
        [*command, "-f", "-e", *args],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,  # agents started without -l write their log file here
    )
    return Transcript(normalise(done.stdout), script), done.stderr


def real_dbpmda(script: str, *args: str, env: dict, cwd: Path) -> tuple[str, str]:
    """PCP's dbpmda on SCRIPT (echoed): normalised stdout, and stderr."""
    return _dbpmda([DBPMDA], script, args, env, cwd)


def our_dbpmda(script: str, *args: str, env: dict, cwd: Path) -> tuple[str, str]:
    """Our dbpmda, as a command, on SCRIPT (echoed): normalised stdout, and stderr."""
    return _dbpmda([sys.executable, "-m", "purepcp.pmda.cli.dbpmda"], script, args, env, cwd)


@pytest.fixture(scope="module")
def pcp_simple():
    """PCP's own simple agent (its Python version, as Debian ships it) with a namespace
    and help database built as its Install script would.

    Run as root, that agent becomes user pcp, so its files live in a directory
    anyone may read (pytest's own temporary directories are private).
    """
    require_pcp_dbpmda()
    script = PCP_PMDAS / "simple" / "pmdasimple.python"
    if not (script.exists() and os.path.exists(NEWHELP)):
        pytest.skip("PCP's simple agent or newhelp is not installed")
    probe = subprocess.run([PCP_PYTHON, "-c", "import pcp.pmda"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("PCP's Python bindings (python3-pcp) are not installed")
    tmp = Path(tempfile.mkdtemp(prefix="purepcp-dbpmda-"))
    tmp.chmod(0o755)
    try:
        yield _pcp_simple_files(tmp, script)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pcp_simple_files(tmp: Path, script: Path) -> SimpleNamespace:
    root = tmp / "root"
    root.write_text(
        "#define SIMPLE 253\nroot {\n    simple\n}\n" + (PCP_PMDAS / "simple" / "pmns").read_text()
    )
    (tmp / "simple").mkdir()
    help_src = re.sub(r"(?m)^@ SIMPLE\.", "@ 253.", (PCP_PMDAS / "simple" / "help").read_text())
    (tmp / "simple" / "help").write_text(help_src)
    subprocess.run(
        [
            NEWHELP,
            "-n",
            str(root),
            "-o",
            str(tmp / "simple" / "help"),
            str(tmp / "simple" / "help"),
        ],
        check=True,
    )
    (tmp / "simple" / "simple.conf").write_text("sec,min,hour\n")
    env = dict(os.environ, PCP_PMDAS_DIR=str(tmp), PYTHONPATH=str(ROOT))
    return SimpleNamespace(
        root=root,
        env=env,
        cwd=tmp,
        open=f"open pipe {PCP_PYTHON} {script} -d 253\n",
        ours=f"open pipe {sys.executable} -m purepcp.agents.simple -d 253\n",
    )


# Commands whose output depends only on the agent's state after the same requests.
COMMON = """\
desc simple.numfetch
desc simple.color
desc simple.time.user
desc simple.time.sys
desc simple.now
desc 253.9.9
fetch simple.color simple.numfetch
fetch simple.color
instance 253.0
instance 253.0 1
instance 253.0 green
instance 253.0 "blue"
instance 253.0 9
instance 253.1
instance 253.7
text simple.color
text indom 253.0
text indom 253.1
store simple.color "7"
store simple.numfetch "abc"
fetch simple.color
label domain
label indom 253.0
label indom 253.1
label instances 253.1
label item simple.color
label cluster 253.0
label context
getdesc on
getiname on
fetch simple.color simple.numfetch
bogus
desc nosuch.metric
"""


@pytest.mark.interop
def test_same_output_as_pcp_dbpmda_on_pcp_simple(pcp_simple):
    """(a) Our dbpmda and PCP's print the same lines for the same script, driving
    PCP's simple agent over a pipe."""
    script = (
        pcp_simple.open
        + COMMON
        + 'store simple.color "300"\nprofile 253.0 none\nprofile 253.0 add 2\n'
        + "fetch simple.color\nlabel instances 253.0\nname 253.0.1\npmid simple.color\n"
        + "children simple\ntraverse simple\nstatus\nclose\nstatus\n"
    )
    args = ("-n", str(pcp_simple.root))
    real = real_dbpmda(script, *args, env=pcp_simple.env, cwd=pcp_simple.cwd)
    ours = our_dbpmda(script, *args, env=pcp_simple.env, cwd=pcp_simple.cwd)
    assert "PMDA may have died" not in real[0] and "Data Type: 32-bit int" in real[0]
    assert ours[0] == real[0]
    assert ours[1] == real[1]


def _shape(text_block: str) -> tuple[str, bool, bool]:
    """A help text's structure: its heading, whether a one-liner came in [], and
    whether a long text followed."""
    lines = [*text_block.splitlines(), "", ""]
    oneline = lines[1].startswith("[") and lines[1].endswith("]") and "<no one" not in lines[1]
    return lines[0], oneline, bool(lines[2]) and "<no help" not in lines[2]


@pytest.mark.interop
def test_pcp_dbpmda_drives_our_simple_as_pcp_simple(pcp_simple):
    """(b) PCP's dbpmda sees our simple agent as it sees PCP's: the same descriptors,
    values, instances, labels and store results; help texts with the same shape."""
    where = dict(env=pcp_simple.env, cwd=pcp_simple.cwd)
    real, real_err = real_dbpmda(pcp_simple.open + COMMON, "-n", str(pcp_simple.root), **where)
    ours, ours_err = real_dbpmda(pcp_simple.ours + COMMON, "-n", str(pcp_simple.root), **where)
    assert "PMDA may have died" not in real + ours
    assert ours_err == real_err
    for command in COMMON.splitlines():
        expected, got = block(real, command), block(ours, command)
        if command.startswith("text"):
            assert _shape(got) == _shape(expected), command
            assert "Error" not in got
        else:
            assert got == expected, command


@pytest.mark.interop
def test_pcp_dbpmda_label_instances_obey_the_profile(pcp_simple):
    """(b) With a profile, instance labels come back only for the selected instances."""
    script = "profile 253.1 none\nprofile 253.1 add 2\nlabel instances 253.1\n"
    args = ("-n", str(pcp_simple.root))
    where = dict(env=pcp_simple.env, cwd=pcp_simple.cwd)
    real, _ = real_dbpmda(pcp_simple.open + script, *args, **where)
    ours, _ = real_dbpmda(pcp_simple.ours + script, *args, **where)
    assert "Labels inst: 2" in real
    assert block(ours, "label instances 253.1") == block(real, "label instances 253.1")


LINUX = """\
open pipe /var/lib/pcp/pmdas/linux/pmdalinux -d 60
desc kernel.all.load
desc hinv.ncpu
fetch hinv.ncpu
fetch kernel.all.load hinv.ncpu
instance 60.2
instance 60.2 5
instance 60.2 "15 minute"
text kernel.all.load
label domain
label instances 60.2
getdesc on
getiname on
fetch kernel.all.load
status
"""


@pytest.mark.interop
def test_our_dbpmda_drives_pcp_pmdalinux(tmp_path):
    """(c) Our dbpmda drives PCP's pmdalinux and prints what PCP's dbpmda prints
    (load averages may move between the two runs, so their values are masked)."""
    require_pcp_dbpmda()
    if not (PCP_PMDAS / "linux" / "pmdalinux").exists():
        pytest.skip("PCP's pmdalinux is not installed")
    args = ("-n", "/var/lib/pcp/pmns/root")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    real, real_err = real_dbpmda(LINUX, *args, env=env, cwd=tmp_path)
    ours, ours_err = our_dbpmda(LINUX, *args, env=env, cwd=tmp_path)
    assert "Data Type: float" in real

    def mask(text: str) -> str:
        return re.sub(r"(\[\S+ or [^]]+\] value )[0-9.e+-]+", r"\1LOAD", text)

    assert mask(ours) == mask(real)
    assert ours_err == real_err
    assert "  60.0.32 (hinv.ncpu): numval: 1 valfmt: 0 vlist[]:" in ours
    assert '[  2] inst: 15 name: "15 minute"' in ours


@pytest.mark.interop
def test_open_dso_of_a_c_library_as_pcp_dbpmda(tmp_path):
    """PCP's `open dso PATH INIT [DOMAIN]` names a C library: ours serves it from a host
    process (purepcp.pmda.hosted) and prints what PCP's dbpmda prints, having loaded
    it, for requests and for libraries that cannot be loaded (it tried to import the
    library as a Python module: a traceback's last line, QA 1283, 1279, 174)."""
    require_pcp_dbpmda()
    library = PCP_PMDAS / "sample" / "pmda_sample.so"
    if not library.exists():
        pytest.skip("PCP's sample agent library is not installed")
    root = tmp_path / "root"
    root.write_text(
        "#define SAMPLE 30\nroot {\n    sample\n}\n" + (PCP_PMDAS / "sample" / "pmns").read_text()
    )
    script = (
        f"open dso {library} sample_init 30\n"
        "desc sample.long.one\nfetch sample.long.one sample.bin\ngetdesc on\ngetiname on\n"
        "fetch sample.bin\ninstance 30.2\ntext sample.long.one\nstore sample.long.write_me 7\n"
        "fetch sample.long.write_me\nname 30.0.1001\npmid sample.secret.foo.one\n"
        "children sample.secret\nlabel domain\nstatus\n"
        f"open dso {library} no_such_init 30\nopen dso /etc/passwd x_init\n"
        f"open dso {tmp_path}/none.so x_init\nstatus\n"
    )
    where = dict(env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path)
    real = real_dbpmda(script, "-n", str(root), **where)
    ours = our_dbpmda(script, "-n", str(root), **where)
    assert "value 1" in real[0] and "Traceback" not in ours[1]
    assert ours[0] == real[0]
    stamp = re.compile(r"(?m)^\[[^]]*\] dbpmda\(\d+\)")  # libpcp's messages: when, who
    assert stamp.sub("[DATE] dbpmda(PID)", ours[1]) == stamp.sub("[DATE] dbpmda(PID)", real[1])


@pytest.mark.interop
def test_open_dso_library_sees_dbpmda_debug_options(tmp_path):
    """`dbpmda -D appl1` sets libpcp's debug options for a library it loads: PCP's
    sample library then writes its per-context trace (QA 382), from our host as well."""
    require_pcp_dbpmda()
    library = PCP_PMDAS / "sample" / "pmda_sample.so"
    if not library.exists():
        pytest.skip("PCP's sample agent library is not installed")
    root = tmp_path / "root"
    root.write_text(
        "#define SAMPLE 30\nroot {\n    sample\n}\n" + (PCP_PMDAS / "sample" / "pmns").read_text()
    )
    script = f"open dso {library} sample_init 30\nfetch sample.percontext.pdu\nclose\n"
    where = dict(env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path)
    real = real_dbpmda(script, "-n", str(root), "-D", "appl1", **where)
    ours = our_dbpmda(script, "-n", str(root), "-D", "appl1", **where)
    trace = "sample_inc_recv(0) [new context, num_ctx=1]\nsample_ctx_end(0) [context is active]\n"
    assert real[1].endswith(trace)
    assert ours[0] == real[0]
    assert ours[1].endswith(trace)
