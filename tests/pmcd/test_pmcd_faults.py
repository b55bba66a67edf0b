"""No fault of an agent ends pmcd: real processes, real signals, seeded clients.

Our pmcd runs as a process (tests/support/our_pmcd.py) with pmcd's own agent, `trivial`
in-process, `simple` as a pipe agent, and three instances of an agent that
misbehaves on cue (tests/fixtures/faulty/agent.py), one per transport: `fpipe`
(pipe), `fsock` (unix socket, pmcd starts it) and `fdso` (in pmcd's process).
Each test takes one moment and one fault and applies it to all three at once,
while a seeded crowd of clients (PCP's pminfo, pmprobe and pmstore, and raw PDU
clients, some of which vanish mid-request) connects, fetches, stores and
disconnects.  Afterwards pmcd must still be running and answering, the other
agents must answer, each faulty agent must be back (and reported as
PM_ERR_NOAGENT while it was down), and pmcd's log and stderr must hold no
traceback.

Moments (where the fault strikes):

- creds: during the agent's CREDS handshake, as pmcd's supervisor restarts it
  (in-process: its start(), as pmcd loads it);
- after-creds: right after the handshake (in-process: at its first request);
- fetch: mid-fetch, the agent has the request and has not answered;
- reply: mid-reply, a process agent has written half of its answer (in-process:
  the answer is built but not yet returned);
- idle: nothing asked of the agent (in-process: as pmcd tells it a client has gone);
- reload: during a SIGHUP reload that restarts the agent (its pmcd.conf line
  changed) while a client's fetch waits on it: the new instance is struck in its
  handshake, which the reload waits on.

Faults (for a process agent; for an in-process one):

- kill: SIGKILL to its pid (its code raises RuntimeError);
- stop: SIGSTOP, and SIGCONT once pmcd has given up on it (its code hangs longer
  than pmcd's -t, or at creds -q, and is released after that);
- corrupt: it writes garbage, a malformed PDU, or a PDU whose length is absurd
  (beyond any limit, or a gigabyte that never comes) instead of (or after half
  of) what it should write (it returns nonsense: no PDU, a RESULT with a value set
  missing, a CREDS for a RESULT, nothing, a value its metric's type cannot hold;
  at creds, where nothing is returned, it calls sys.exit).

Synchronisation is by condition, never by sleeping: the agent appends an event
(`fetch PID TOKEN`) when it reaches the point, the test waits for it (with a
deadline), strikes, and releases a blocked agent by creating `release.TOKEN`.
Randomness (corruption variants, what the crowd does) comes from one seed,
PMCD_FAULTS_SEED in the environment, else SEED; a failure names it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from purepcp.pmapi.connection import Connection, parse_host
from purepcp.pmapi.errors import (
    PM_ERR_GENERIC,
    PM_ERR_IPC,
    PM_ERR_NOAGENT,
    PM_ERR_TIMEOUT,
    PMError,
)
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.pdu.records import ErrorPDU, HighResFetchPDU, HighResResultPDU, ProfilePDU
from tests.support.our_pmcd import ROOT, OurPMCD, our_pmcd
from tests.support.reference_pmcd import require_reference
from tests.support.waiting import DEADLINE

pytestmark = [
    pytest.mark.interop,  # PCP's own pminfo, pmprobe and pmstore are among the clients
    pytest.mark.slow,  # the whole matrix of moments and faults: 3 to 10 s a case, 2 min in all
]

#: The default seed, chosen because its draws use every corruption variant, and both
#: a RESULT short of a value set and a reply that is no PDU at all from the in-process agent.
SEED = int(os.environ.get("PMCD_FAULTS_SEED", "1"))
PY = sys.executable
AGENT = ROOT / "tests" / "fixtures" / "faulty" / "agent.py"

#: pmcd's -t (seconds to wait for an agent's answer) and -q (for its CREDS).
AGENT_TIMEOUT, CREDS_TIMEOUT = 1.5, 2.0
#: How long a client may wait for an answer while an agent misbehaves (it comes after
#: pmcd's -t at most): a hang guard, which only a pmcd that never answers trips.
ANSWER_WITHIN = DEADLINE
#: How long an agent may take to reach a point, and to be back after a fault (restarts
#: come after 2 s, then 4 s, ... while it keeps failing): hang guards too.
EVENT_WITHIN, BACK_WITHIN = DEADLINE, DEADLINE
#: Every test ends within this (each wait has a deadline of its own, all shorter).
TEST_DEADLINE = 3 * DEADLINE

#: How PCP words PM_ERR_NOAGENT (pmapi/errors.py, as libpcp).
NOAGENT_TEXT = "No PMCD agent for domain of request"
#: The codes a fetch may see for a misbehaving agent's metrics.
ALLOWED = {PM_ERR_NOAGENT, PM_ERR_TIMEOUT, PM_ERR_IPC, PM_ERR_GENERIC}
#: Not errors but the words of a failure, in pmcd's log or stderr.
TRACES = ("Traceback", "Exception Group", "ExceptionGroup")
#: How pmcd logs a fault of its own that it survived (a client dropped for it, say).
INTERNAL = "internal error"

SIMPLE_NUMFETCH = pmID_build(253, 0, 0)
TRIVIAL_TIME = pmID_build(250, 0, 1)
PMCD_NUMAGENTS = pmID_build(2, 0, 2)
PMCD_SIGHUPS = pmID_build(2, 0, 22)
HEALTHY = (SIMPLE_NUMFETCH, TRIVIAL_TIME, PMCD_NUMAGENTS)
HEALTHY_NAMES = ("simple.numfetch", "trivial.time", "pmcd.numagents")

MOMENTS = ("creds", "after-creds", "fetch", "reply", "idle", "reload")
FAULTS = ("kill", "stop", "corrupt")
#: What a corrupting process agent writes (tests/fixtures/faulty/agent.py: corruption).
CORRUPTIONS = ("garbage", "malformed", "absurd", "huge")
#: What a corrupting in-process agent answers (agent.py: nonsense, Faulty.victim).
NONSENSE = ("not-a-pdu", "wrong-count", "wrong-type", "none")
BAD_VALUES = ("string", "negative", "huge")


@dataclass(frozen=True)
class Spec:
    """One faulty agent: its pmcd.conf name, domain and transport."""

    name: str
    domain: int
    kind: str  # pipe, socket or dso

    @property
    def count(self) -> int:
        """The PMID of NAME.count (fetches so far; the crowd asks for it)."""
        return pmID_build(self.domain, 0, 0)

    @property
    def victim(self) -> int:
        """The PMID of NAME.victim (its pid; only the test's victim clients ask for it,
        and the plans for fetch and reply wait for a fetch of it)."""
        return pmID_build(self.domain, 0, 1)

    @property
    def process(self) -> bool:
        """Whether the agent is a process of its own (not in pmcd's)."""
        return self.kind != "dso"


SPECS = (Spec("fpipe", 245, "pipe"), Spec("fsock", 246, "socket"), Spec("fdso", 247, "dso"))


def pmcd_conf(tmp: Path, tag: str = "") -> str:
    """pmcd.conf: pmcd, trivial (in-process), simple (pipe) and the faulty agents.

    A TAG changes every faulty agent's line, so that a reload restarts them.
    """
    extra = f" --tag {tag}" if tag else ""
    sock = tmp / "fsock.sock"
    return (
        "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"
        "trivial 250 dso Trivial purepcp.agents.trivial\n"
        f"simple 253 pipe binary {PY} -m purepcp.agents.simple -d 253\n"
        f"fpipe 245 pipe binary {PY} {AGENT} -d 245{extra}\n"
        f"fsock 246 socket unix {sock} {PY} {AGENT} -d 246 -u {sock}{extra}\n"
        f"fdso 247 dso {'-' if tag else 'Faulty'} {AGENT}\n"
    )


HEALTHY_ROOTS = ("pmcd", "simple", "trivial")


def namespace() -> str:
    """pmcd's namespace (-n): the shipped agents' files and one subtree per faulty agent."""
    text = "#define PMCD 2\n#define SIMPLE 253\n#define TRIVIAL 250\n"
    text += "".join((ROOT / "pmns" / name).read_text() + "\n" for name in HEALTHY_ROOTS)
    for spec in SPECS:
        text += f"{spec.name} {{\n    count\t{spec.domain}:0:0\n    victim\t{spec.domain}:0:1\n}}\n"
    tops = [*HEALTHY_ROOTS, *(spec.name for spec in SPECS)]
    return text + "root {\n" + "".join(f"    {top}\n" for top in tops) + "}\n"


# -- the test's side of an agent's control files ----------------------------------------


@dataclass(frozen=True)
class Event:
    """A line of an agent's events file: what, which process, the token to release it."""

    name: str
    pid: int
    token: str
    index: int


class Remote:
    """The control directory of one faulty agent: plans in, events out, releases."""

    def __init__(self, spec: Spec, base: Path) -> None:
        self.spec = spec
        self.dir = base / str(spec.domain)
        self.dir.mkdir(parents=True, exist_ok=True)
        #: whether waiting is pointless (pmcd has died): set by Run
        self.hopeless: Callable[[], bool] = lambda: False

    def arm(self, point: str, action: str) -> None:
        """Plan ACTION for the next time an instance reaches POINT (written atomically)."""
        draft = self.dir / f"draft.{point}"
        draft.write_text(action + "\n")
        os.replace(draft, self.dir / f"plan.{point}")

    def events(self) -> list[Event]:
        """Every event so far, in order."""
        try:
            lines = (self.dir / "events").read_text().splitlines()
        except FileNotFoundError:
            return []
        found = []
        for index, line in enumerate(lines):
            name, pid, token = line.split()
            found.append(Event(name, int(pid), token, index))
        return found

    def mark(self) -> int:
        """Where the events file is now: wait_event(..., after=mark()) sees only later ones."""
        return len(self.events())

    def wait_event(self, name: str, after: int, within: float = EVENT_WITHIN) -> Event:
        """The first NAME event after AFTER; AssertionError if none comes WITHIN seconds."""
        found = wait_for(
            lambda: next((e for e in self.events()[after:] if e.name == name), None),
            within,
            self.hopeless,
        )
        if not isinstance(found, Event):
            why = "pmcd has died" if self.hopeless() else f"none within {within:g}s"
            raise AssertionError(f"no {name!r} event from {self.spec.name}: {why}")
        return found

    def current_pid(self) -> int:
        """The pid of the instance that started last."""
        starts = [e for e in self.events() if e.name == "start"]
        assert starts, f"{self.spec.name} never started"
        return starts[-1].pid

    def release(self, token: str) -> None:
        """Let the instance blocked with TOKEN go on."""
        (self.dir / f"release.{token}").touch()

    def release_all(self) -> None:
        """Let every blocked instance go on, now and from now on."""
        (self.dir / "release-all").touch()


def wait_for(
    condition: Callable[[], object],
    within: float,
    hopeless: Callable[[], bool] = lambda: False,
    every: float = 0.02,
) -> object:
    """CONDITION's first true value, polled until WITHIN seconds pass or waiting is
    HOPELESS (then None)."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline or hopeless():
            return None
        time.sleep(every)


def gone(pid: int) -> bool:
    """Whether process PID has ended (reaped, or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def send_signal(pid: int, signum: int) -> None:
    """Send SIGNUM to PID, if it is still there."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


# -- clients --------------------------------------------------------------------------


class Raw:
    """A raw PDU client of our pmcd (pmapi.connection): profile sent, fetch by PMID."""

    def __init__(self, port: int, within: float = ANSWER_WITHIN) -> None:
        self.conn = Connection(parse_host(f"127.0.0.1:{port}"))
        self.conn.sock.settimeout(within)
        self.conn.send(ProfilePDU(0, 0, ()))

    def send_fetch(self, pmids: Sequence[int]) -> None:
        """Ask for PMIDS (the answer is left to fetch, or to nobody)."""
        self.conn.send(HighResFetchPDU(0, tuple(pmids)))

    def fetch(self, pmids: Sequence[int]) -> dict[int, int]:
        """{pmid: number of values, or the error code} for one fetch of PMIDS."""
        self.send_fetch(pmids)
        reply = self.conn.receive()
        while isinstance(reply, ErrorPDU) and reply.code > 0:  # news of agents coming, going
            reply = self.conn.receive()
        if isinstance(reply, ErrorPDU):
            raise PMError(reply.code)
        assert isinstance(reply, HighResResultPDU), f"a fetch answered with {reply!r}"
        return {vs.pmid: vs.numval for vs in reply.result.vsets}

    def close(self, reset: bool = False) -> None:
        """Hang up (with RESET, by a TCP reset rather than an orderly close)."""
        if reset:  # a reset rather than an orderly close
            with contextlib.suppress(OSError):
                self.conn.sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
        self.conn.close()


class Victim:
    """A client whose one fetch (the faulty agent's victim metric, and healthy ones)
    runs in a thread of its own, so that the test can strike while it waits."""

    def __init__(self, port: int, spec: Spec) -> None:
        self.spec = spec
        self.answer: dict[int, int] | None = None
        self.error = ""
        self.client = Raw(port)  # connected here: a pmcd that is gone fails the caller
        self.thread = threading.Thread(target=self._fetch, daemon=True)
        self.thread.start()

    def _fetch(self) -> None:
        try:
            self.answer = self.client.fetch((self.spec.victim, self.spec.count, *HEALTHY))
        except (PMError, OSError, AssertionError) as exc:
            self.error = repr(exc)
        finally:
            self.client.close()

    def result(self, within: float = ANSWER_WITHIN) -> dict[int, int] | None:
        """The answer, once it has come (None if none came WITHIN seconds, or pmcd failed)."""
        self.thread.join(within)
        if self.thread.is_alive():
            self.error = f"no answer within {within:g}s"
        return self.answer


CODE_NAMES = {
    PM_ERR_NOAGENT: "NOAGENT",
    PM_ERR_TIMEOUT: "TIMEOUT",
    PM_ERR_IPC: "IPC",
    PM_ERR_GENERIC: "GENERIC",
}


def describe(codes: Sequence[object]) -> str:
    """What fetches saw, repeats run together: [NOAGENT x12, 1]."""
    parts = []
    for code, run in itertools.groupby(CODE_NAMES.get(c, c) for c in codes):
        count = len(list(run))
        parts.append(f"{code} x{count}" if count > 1 else f"{code}")
    return "[" + ", ".join(parts) + "]"


# -- one test's pmcd, agents and findings ---------------------------------------------


class Run:
    """One pmcd with the faulty agents, the remotes, and what went wrong so far."""

    def __init__(self, pmcd: OurPMCD, remotes: dict[str, Remote], moment: str, fault: str):
        self.pmcd = pmcd
        self.remotes = remotes
        self.moment, self.fault = moment, fault
        self.port = int(pmcd.host.rpartition(":")[2])
        found = re.search(r"pmcd\((\d+)\)", pmcd.log())
        assert found, "pmcd logged no line with its pid"
        self.pid = int(found.group(1))
        self.failures: list[str] = []
        self.lock = threading.Lock()
        #: faulty agents pmcd may have given up on for good (in-process, start failed)
        self.deadline = time.monotonic() + TEST_DEADLINE
        for remote in remotes.values():
            remote.hopeless = lambda: not self.alive()

    def fail(self, who: str, what: str) -> None:
        """Record a failure of WHO's case (a faulty agent's name, pmcd, or the crowd)."""
        with self.lock:
            self.failures.append(f"[{who}] {what}")

    def alive(self) -> bool:
        """Whether pmcd's process is still running."""
        return not gone(self.pid)

    def gone(self) -> bool:
        """Whether pmcd's process has ended."""
        return gone(self.pid)

    def victim(self, spec: Spec) -> Victim:
        """A client whose fetch of SPEC's victim metric (and healthy ones) is under way."""
        return Victim(self.port, spec)

    def tool(self, *argv: str) -> subprocess.CompletedProcess:
        """Run one of PCP's tools against this pmcd (a hung one raises TimeoutExpired)."""
        return self.pmcd.run(*argv, timeout=DEADLINE)

    # -- checks ----------------------------------------------------------------------

    def check_answer(
        self, spec: Spec, victim: Victim, must_fail: bool, what: str, any_error: bool = False
    ) -> dict[int, int] | None:
        """A victim's answer: the healthy agents' values there, the faulty agent's
        metrics a value or an allowed error (an error if MUST_FAIL; with ANY_ERROR,
        whatever error a corrupt agent's nonsense comes to)."""
        answer = victim.result()
        who = spec.name
        if answer is None:
            self.fail(who, f"{what}: the victim client got no answer: {victim.error}")
            return None
        for pmid, name in zip(HEALTHY, HEALTHY_NAMES, strict=True):
            if answer.get(pmid, 0) < 1:
                self.fail(who, f"{what}: {name} had no value in the victim's answer {answer}")
        code = answer.get(spec.victim, 0)
        if code < 0 and code not in ALLOWED and not any_error:
            self.fail(who, f"{what}: the victim's fetch got error {code} ({PMError(code)})")
        if must_fail and code > 0:
            self.fail(who, f"{what}: the victim's fetch got a value, not an error")
        return answer

    def probe(self, spec: Spec, within: float, whole: bool = False) -> list[object]:
        """Fetch SPEC's count every few hundredths of a second until it has a value
        (or WITHIN seconds pass; with WHOLE, for all of them): what each fetch gave
        (a code, a count, or why the client failed)."""
        seen: list[object] = []
        client: Raw | None = None
        deadline = time.monotonic() + within
        try:
            while True:
                try:
                    client = client or Raw(self.port)
                    code: object = client.fetch((spec.count,))[spec.count]
                except (PMError, OSError) as exc:
                    code = f"client failed: {exc!r}"
                    if client is not None:
                        client.close()
                    client = None
                seen.append(code)
                up = isinstance(code, int) and code > 0 and not whole
                if up or time.monotonic() >= deadline or not self.alive():
                    return seen
                time.sleep(0.05)
        finally:
            if client is not None:
                client.close()

    def recover(self, spec: Spec, went_down: bool) -> None:
        """Wait for SPEC's agent to answer again, seeing only allowed errors meanwhile;
        if it WENT_DOWN and was seen down, it must have been reported as PM_ERR_NOAGENT
        (pmcd restarts a dead agent at once, so it may be back before the first probe)."""
        who = spec.name
        within = BACK_WITHIN
        seen = self.probe(spec, within)
        back = isinstance(seen[-1], int) and seen[-1] > 0
        errors = [c for c in seen if not (isinstance(c, int) and c > 0)]
        strange = [c for c in errors if c not in ALLOWED]
        if strange:
            self.fail(who, f"fetches while it recovered saw {describe(seen)}")
        if not back:
            self.fail(who, f"not back within {within:g}s: fetches saw {describe(seen)}")
        elif went_down and errors and PM_ERR_NOAGENT not in errors:
            self.fail(who, f"never reported as PM_ERR_NOAGENT while down: {describe(seen)}")

    def final_checks(self) -> None:
        """pmcd alive and answering, every agent back (or known to be down), no traceback."""
        if not self.alive():
            self.fail("pmcd", "pmcd is no longer running")
            return
        out = self.tool("pminfo", "-f", *HEALTHY_NAMES)
        if out.returncode != 0 or out.stdout.count(" value ") != len(HEALTHY_NAMES):
            self.fail("pmcd", f"a fresh pminfo was not answered: {out.stdout}{out.stderr}")
        names = [f"{spec.name}.count" for spec in SPECS]
        probe = self.tool("pmprobe", "-v", *names)
        lines = {line.split()[0]: line for line in probe.stdout.splitlines() if line.strip()}
        status = self.agent_status()
        for spec in SPECS:
            line = lines.get(f"{spec.name}.count", "(no line)")
            numval = int(line.split()[1]) if len(line.split()) > 1 else 0
            if numval != 1:
                self.fail(spec.name, f"pmprobe -v after the fault: {line!r}")
            if status.get(spec.name) != 0:
                self.fail(spec.name, f"pmcd.agent.status is {status.get(spec.name)}, not 0")
        for remote in self.remotes.values():
            overlaps = [e for e in remote.events() if e.name == "overlap"]
            if overlaps:
                self.fail(
                    remote.spec.name,
                    f"pmcd handed the in-process agent a request while another was still "
                    f"running ({len(overlaps)} times): it promises one at a time",
                )
        for path in (self.pmcd.tmp / "pmcd.log", self.pmcd.tmp / "pmcd.stderr"):
            text = path.read_text(errors="replace")
            if any(word in text for word in TRACES):
                self.fail("pmcd", f"{path.name} holds a traceback:\n{trimmed(text)}")
            internal = [line for line in text.splitlines() if INTERNAL in line]
            if internal:
                self.fail("pmcd", f"{path.name} reports faults of pmcd's own: {internal[:3]}")

    def agent_status(self) -> dict[str, int]:
        """pmcd.agent.status by agent name (pminfo -f)."""
        out = self.tool("pminfo", "-f", "pmcd.agent.status").stdout
        return {
            name: int(value)
            for name, value in re.findall(r'inst \[\d+ or "([^"]+)"\] value (-?\d+)', out)
        }

    def report(self) -> str:
        """The failures (when pmcd died, the few first of what followed from it), and
        the ends of pmcd's log and stderr."""
        log = (self.pmcd.tmp / "pmcd.log").read_text(errors="replace")
        err = (self.pmcd.tmp / "pmcd.stderr").read_text(errors="replace")
        failures = sorted(self.failures, key=lambda f: not f.startswith("[pmcd]"))
        if not self.alive():
            ours = [f for f in failures if f.startswith("[pmcd]")]
            rest = failures[len(ours) :]
            failures = ours + rest[:4]
            if len(rest) > 4:
                failures.append(f"(and {len(rest) - 4} more, after pmcd had died)")
        return (
            f"seed {SEED}, moment {self.moment}, fault {self.fault}:\n"
            + "\n".join(failures)
            + f"\n--- pmcd.log (end) ---\n{trimmed(log)}\n--- pmcd.stderr (end) ---\n{trimmed(err)}"
        )


def trimmed(text: str, lines: int = 40) -> str:
    """The last LINES lines of TEXT, or from its first traceback on (at most LINES)."""
    all_lines = text.splitlines()
    for index, line in enumerate(all_lines):
        if any(word in line for word in TRACES):
            return "\n".join(all_lines[max(index - 3, 0) : index + lines])
    return "\n".join(all_lines[-lines:])


# -- the crowd: clients that come and go while the faults strike -----------------------


class Crowd:
    """Seeded clients in threads of their own: PCP's tools and raw PDU clients that
    connect, fetch, store and disconnect (some with a request unanswered) until
    told to stop.  Healthy agents must always answer them; a faulty agent's metrics
    may fail, but only with an allowed error, and nothing may hang."""

    WORKERS = 3

    def __init__(self, run: Run, rng: random.Random) -> None:
        self.run = run
        self.stopping = threading.Event()
        self.done: list[str] = []
        self.threads = [
            threading.Thread(target=self._work, args=(random.Random(rng.random()),), daemon=True)
            for _ in range(self.WORKERS)
        ]

    def __enter__(self) -> Crowd:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(45)
            if thread.is_alive():
                self.run.fail("crowd", "a client was still busy 45s after the crowd stopped")
        if len(self.done) < self.WORKERS and self.run.alive():
            self.run.fail("crowd", f"the crowd did next to nothing: {self.done}")

    def _work(self, rng: random.Random) -> None:
        ops = (
            self.pminfo_healthy,
            self.pmprobe_mixed,
            self.pmstore,
            self.raw_fetch,
            self.raw_abandon,
        )
        while not self.stopping.is_set() and self.run.alive():
            op = rng.choice(ops)
            try:
                op(rng)
            except subprocess.TimeoutExpired as exc:
                self.run.fail("crowd", f"{op.__name__}: {exc.cmd[0]} hung")
            except Exception as exc:
                self.run.fail("crowd", f"{op.__name__}: {exc!r}")
            self.done.append(op.__name__)
            self.stopping.wait(rng.uniform(0, 0.05))

    def _faulty_names(self, rng: random.Random) -> list[str]:
        """Some of the faulty agents' counts (never their victim metric: the plans for
        fetch and reply are the test's own victim's)."""
        return [f"{spec.name}.count" for spec in rng.sample(SPECS, rng.randint(1, len(SPECS)))]

    def pminfo_healthy(self, rng: random.Random) -> None:
        out = self.run.tool("pminfo", "-f", *rng.sample(HEALTHY_NAMES, 2))
        if out.returncode != 0 or out.stdout.count(" value ") != 2:
            self.run.fail("crowd", f"pminfo -f of healthy agents: {out.stdout}{out.stderr}")

    def pmprobe_mixed(self, rng: random.Random) -> None:
        names = [*HEALTHY_NAMES, *self._faulty_names(rng)]
        rng.shuffle(names)
        out = self.run.tool("pmprobe", "-v", *names)
        for line in out.stdout.splitlines():
            words = line.split()
            if len(words) < 2:
                continue
            numval = int(words[1])
            if (words[0] in HEALTHY_NAMES and numval != 1) or (
                numval < 0 and numval not in ALLOWED
            ):
                self.run.fail("crowd", f"pmprobe -v: {line}")
        if len(out.stdout.splitlines()) != len(names):
            self.run.fail("crowd", f"pmprobe -v {' '.join(names)}: {out.stdout}{out.stderr}")

    def pmstore(self, rng: random.Random) -> None:
        if rng.random() < 0.5:
            out = self.run.tool("pmstore", "simple.numfetch", str(rng.randrange(1000)))
            if out.returncode != 0 or "new value" not in out.stdout:
                self.run.fail("crowd", f"pmstore simple.numfetch: {out.stdout}{out.stderr}")
            return
        spec = rng.choice(SPECS)
        self.run.tool("pmstore", f"{spec.name}.count", str(rng.randrange(1000)))  # may fail

    def raw_fetch(self, rng: random.Random) -> None:
        client = Raw(self.run.port)
        try:
            pmids = [*HEALTHY, *(s.count for s in rng.sample(SPECS, rng.randint(1, 3)))]
            rng.shuffle(pmids)
            answer = client.fetch(pmids)
        finally:
            client.close(reset=rng.random() < 0.5)
        for pmid in HEALTHY:
            if answer[pmid] < 1:
                self.run.fail("crowd", f"raw fetch: no value for a healthy metric: {answer}")
        strange = {p: c for p, c in answer.items() if c < 0 and c not in ALLOWED}
        if strange:
            self.run.fail("crowd", f"raw fetch: unexpected errors {strange}")

    def raw_abandon(self, rng: random.Random) -> None:
        """Ask, then go without waiting for the answer (reset or orderly close)."""
        client = Raw(self.run.port)
        client.send_fetch([*HEALTHY, *(s.count for s in SPECS)])
        client.close(reset=rng.random() < 0.5)


# -- striking ---------------------------------------------------------------------------


def plan_for(spec: Spec, fault: str, point: str, rng: random.Random) -> str:
    """The action SPEC's agent is given for FAULT at POINT (tests/fixtures/faulty/agent.py)."""
    if spec.process:
        return "block" if fault != "corrupt" else f"corrupt {rng.choice(CORRUPTIONS)}"
    if fault == "kill":
        return "raise"
    if fault == "stop":
        return "hang"
    if point == "creds":
        return "exit"
    if point == "fetch":
        return f"garbage {rng.choice(BAD_VALUES)}"
    return f"garbage {rng.choice(NONSENSE)}"


def strike(spec: Spec, fault: str, event: Event) -> Callable[[], None]:
    """Signal the process that reported EVENT as FAULT says; what ends a stop (SIGCONT).

    Corruption, and anything in-process, the agent does itself."""
    if not spec.process or fault == "corrupt":
        return _nothing
    if fault == "kill":
        send_signal(event.pid, signal.SIGKILL)
        return _nothing
    send_signal(event.pid, signal.SIGSTOP)
    return lambda: send_signal(event.pid, signal.SIGCONT)


def given_up(remote: Remote, event: Event) -> bool:
    """Whether pmcd is done with the instance of EVENT: ended, or another started since."""
    later = [e for e in remote.events()[event.index + 1 :] if e.name == "start"]
    return gone(event.pid) or any(e.pid != event.pid for e in later)


def restart(run: Run, remote: Remote) -> None:
    """Have the agent's current instance fail on cue, so that pmcd's supervisor starts
    another: a process agent exits mid-fetch, an in-process one hangs past -t."""
    spec = remote.spec
    mark = remote.mark()
    remote.arm("fetch", "exit" if spec.process else "hang")
    victim = run.victim(spec)
    event = remote.wait_event("fetch", mark)
    run.check_answer(spec, victim, must_fail=True, what="the instance leaving on cue")
    if not spec.process:
        remote.release(event.token)


def at_creds(run: Run, remote: Remote, fault: str, action: str, event: Event) -> None:
    """Strike the instance that reported EVENT (at creds); see it recover."""
    spec = remote.spec
    went_down = True
    if spec.process:
        resume = strike(spec, fault, event)
        if fault == "stop":  # frozen in its handshake: pmcd's -q gives up on it
            if not wait_for(lambda: given_up(remote, event), DEADLINE, run.gone):
                run.fail(spec.name, "pmcd never gave up on an agent stopped in its handshake")
            resume()
    elif action == "hang":
        # its loading hangs longer than pmcd's timeouts: the domain is down meanwhile
        # (each fetch says so at once), the other agents are not
        victim = run.victim(spec)
        answer = run.check_answer(spec, victim, must_fail=True, what="while it loads")
        if answer is not None and answer.get(spec.victim) != PM_ERR_NOAGENT:
            run.fail(spec.name, f"while it loads, its fetch gave {answer.get(spec.victim)}")
        # pmcd gives up on a load after -q and tries a new instance (which loads): the
        # domain answers PM_ERR_NOAGENT until then, and values once it is back
        seen = run.probe(spec, CREDS_TIMEOUT + AGENT_TIMEOUT)
        down = seen[:-1] if seen and isinstance(seen[-1], int) and seen[-1] > 0 else seen
        if not down or set(down) != {PM_ERR_NOAGENT}:
            run.fail(spec.name, f"fetches while it loads saw {describe(seen)}")
        remote.release(event.token)
        went_down = False  # (seen: it may be back at once now)
    # every agent comes back, an in-process one whose loading failed included: pmcd tries
    # again after its backoff, as for a process agent
    run.recover(spec, went_down=went_down)


def _nothing() -> None:
    """What ends a fault that needs no ending."""


def moment_creds(run: Run, remote: Remote, fault: str, action: str) -> None:
    """The current instance leaves on cue; the supervisor's next is struck in its
    handshake (in-process: as it loads)."""
    mark = remote.mark()
    remote.arm("creds", action)
    restart(run, remote)
    event = remote.wait_event("creds", mark)
    at_creds(run, remote, fault, action, event)


def moment_after_creds(run: Run, remote: Remote, fault: str, action: str) -> None:
    """As moment_creds, but the new instance is struck once it has shaken hands
    (in-process: at its first request)."""
    spec = remote.spec
    mark = remote.mark()
    remote.arm("after-creds", action)
    restart(run, remote)
    if spec.process:
        event = remote.wait_event("after-creds", mark)
        resume = strike(spec, fault, event)
        run.check_answer(
            spec,
            run.victim(spec),
            must_fail=True,
            what="after the handshake",
            any_error=fault == "corrupt",
        )
        resume()
        run.recover(spec, went_down=True)
        return
    # in-process, the new instance acts on its first request: ask until it has
    deadline = time.monotonic() + EVENT_WITHIN
    event = None
    while event is None and time.monotonic() < deadline and run.alive():
        run.check_answer(spec, run.victim(spec), must_fail=False, what="its first request")
        event = next((e for e in remote.events()[mark:] if e.name == "after-creds"), None)
        if event is None:
            time.sleep(0.05)  # (a poll: the next fetch asks again)
    if event is None:
        run.fail(spec.name, "the new instance never got a first request")
        return
    if action == "hang":
        remote.release(event.token)
    run.recover(spec, went_down=action == "hang")


def moment_request(run: Run, remote: Remote, fault: str, action: str, point: str) -> None:
    """fetch and reply: the victim's own request is where the agent fails."""
    spec = remote.spec
    mark = remote.mark()
    remote.arm(point, action)
    victim = run.victim(spec)
    event = remote.wait_event(point, mark)
    resume = strike(spec, fault, event)
    corrupt = fault == "corrupt"
    run.check_answer(spec, victim, must_fail=not corrupt, what=f"mid-{point}", any_error=corrupt)
    resume()
    if action == "hang":
        remote.release(event.token)
    run.recover(spec, went_down=(spec.process and fault != "corrupt") or action == "hang")


def moment_idle(run: Run, remote: Remote, fault: str, action: str) -> None:
    """Struck with nothing asked of it (in-process: in pmcd's notice of a client gone);
    a client's fetch comes after."""
    spec = remote.spec
    if spec.process:
        pid = remote.current_pid()
        resume = _nothing
        if fault == "corrupt":
            mark = remote.mark()
            remote.arm("idle", action)
            send_signal(pid, signal.SIGUSR1)
            remote.wait_event("idle", mark)
        else:
            resume = strike(spec, fault, Event(fault, pid, "", -1))
        run.check_answer(
            spec, run.victim(spec), must_fail=True, what="idle", any_error=fault == "corrupt"
        )
        resume()
        run.recover(spec, went_down=True)
        return
    # in-process: it fails as pmcd tells it of a client that has gone
    mark = remote.mark()
    remote.arm("idle", action)
    Raw(run.port).close()
    event = remote.wait_event("idle", mark)
    run.check_answer(spec, run.victim(spec), must_fail=False, what="after it failed idle")
    if action == "hang":  # hung for longer than -t, fetches meanwhile answered promptly
        seen = run.probe(spec, AGENT_TIMEOUT + 0.5, whole=True)
        if any(not (isinstance(c, int) and (c > 0 or c in ALLOWED)) for c in seen):
            run.fail(spec.name, f"fetches while it hung idle saw {describe(seen)}")
        remote.release(event.token)
    run.recover(spec, went_down=False)


def moment_reload(run: Run, fault: str, actions: dict[str, str]) -> None:
    """A SIGHUP reload restarts every faulty agent while each has a client's fetch in
    hand; each new instance is struck in its handshake, which the reload waits on."""
    remotes = list(run.remotes.values())
    victims: dict[str, tuple[Victim, Event]] = {}
    marks: dict[str, int] = {}

    def hold(remote: Remote) -> None:
        spec = remote.spec
        mark = remote.mark()
        remote.arm("fetch", "block" if spec.process else "hang")
        victim = run.victim(spec)
        victims[spec.name] = (victim, remote.wait_event("fetch", mark))
        marks[spec.name] = remote.mark()
        remote.arm("creds", actions[spec.name])

    def strike_new(remote: Remote) -> None:
        spec = remote.spec
        event = remote.wait_event("creds", marks[spec.name])
        victim, held = victims[spec.name]
        # the reload closed the old instance's channel under the waiting client (an
        # in-process one's request times out), and waits on the new one's handshake
        run.check_answer(spec, victim, must_fail=True, what="reloaded mid-fetch")
        remote.release(held.token)
        at_creds(run, remote, fault, actions[spec.name], event)

    if not each(run, remotes, hold):
        return
    (run.pmcd.tmp / "pmcd.conf").write_text(pmcd_conf(run.pmcd.tmp, tag="reloaded"))
    os.kill(run.pid, signal.SIGHUP)
    each(run, remotes, strike_new)
    try:
        client = Raw(run.port)
        try:
            if client.fetch((PMCD_SIGHUPS,))[PMCD_SIGHUPS] != 1:
                run.fail("pmcd", "pmcd.sighups has no value after the reload")
        finally:
            client.close()
    except PMError as exc:
        run.fail("pmcd", f"asking pmcd.sighups after the reload: {exc}")


def each(run: Run, remotes: Sequence[Remote], work: Callable[[Remote], None]) -> bool:
    """WORK for every remote at once, each in a thread; whether all ended in time
    (an exception is a failure of that agent's case)."""

    def guarded(remote: Remote) -> None:
        try:
            work(remote)
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(exc)).strip()
            run.fail(remote.spec.name, f"{work.__name__}: {detail}")

    threads = [threading.Thread(target=guarded, args=(r,), daemon=True) for r in remotes]
    for thread in threads:
        thread.start()
    ok = True
    for thread, remote in zip(threads, remotes, strict=True):
        thread.join(max(run.deadline - time.monotonic(), 0.1))
        if thread.is_alive():
            run.fail(remote.spec.name, f"{work.__name__} did not finish by the test's deadline")
            ok = False
    return ok


def wait_ready(run: Run) -> None:
    """Every agent answers (pmcd's own, trivial, simple, and the three faulty ones)."""
    pmids = (*HEALTHY, *(spec.count for spec in SPECS))

    def ready() -> bool:
        try:
            client = Raw(run.port)
        except PMError:
            return False
        try:
            return all(n >= 1 for n in client.fetch(pmids).values())
        except (PMError, OSError):
            return False
        finally:
            client.close()

    assert wait_for(ready, 20, every=0.1), "the agents were not all answering after 20s"


@contextlib.contextmanager
def faulty_pmcd(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OurPMCD]:
    """Our pmcd with the faulty agents, their control directories under TMP/ctl."""
    control = tmp / "ctl"
    monkeypatch.setenv("FAULTY_AGENT_DIR", str(control))
    (tmp / "namespace").write_text(namespace())
    for spec in SPECS:
        (control / str(spec.domain)).mkdir(parents=True)
    extra = ("-n", str(tmp / "namespace"), "-t", f"{AGENT_TIMEOUT:g}", "-q", f"{CREDS_TIMEOUT:g}")
    try:
        with our_pmcd(pmcd_conf(tmp), tmp, *extra) as pmcd:
            yield pmcd
    finally:
        for spec in SPECS:  # whatever still hangs in pmcd's threads, let it go
            (control / str(spec.domain) / "release-all").touch()


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("moment", MOMENTS)
def test_an_agent_fault_leaves_pmcd_serving(
    moment: str, fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAULT at MOMENT in each faulty agent: pmcd, its clients and its other agents
    carry on, the faulty agent comes back, and nothing is left in a traceback."""
    require_reference("pminfo", "pmprobe", "pmstore")
    rng = random.Random(f"{SEED}:{moment}:{fault}")
    with faulty_pmcd(tmp_path, monkeypatch) as pmcd:
        remotes = {spec.name: Remote(spec, tmp_path / "ctl") for spec in SPECS}
        run = Run(pmcd, remotes, moment, fault)
        wait_ready(run)
        point = "creds" if moment == "reload" else moment
        actions = {spec.name: plan_for(spec, fault, point, rng) for spec in SPECS}
        try:
            with Crowd(run, rng):
                if moment == "reload":
                    moment_reload(run, fault, actions)
                else:
                    each(run, list(remotes.values()), _case(run, moment, fault, actions))
        finally:
            for remote in remotes.values():
                remote.release_all()
        run.final_checks()
        assert not run.failures, run.report()


def _case(run: Run, moment: str, fault: str, actions: dict[str, str]) -> Callable[[Remote], None]:
    """The work of one moment for one agent (run for the three at once)."""

    def case(remote: Remote) -> None:
        action = actions[remote.spec.name]
        if moment == "creds":
            moment_creds(run, remote, fault, action)
        elif moment == "after-creds":
            moment_after_creds(run, remote, fault, action)
        elif moment == "idle":
            moment_idle(run, remote, fault, action)
        else:
            moment_request(run, remote, fault, action, moment)

    case.__name__ = f"{moment}-{fault}"
    return case
