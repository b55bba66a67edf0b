"""hotproc's timer: every `refresh` seconds one pass over every process decides which are
"hot" (hotproc.py holds the predicate language and the arithmetic; this module the
state, the files and the thread).

The pass runs in a thread of its own, as the agent itself (pmdaproc's timer runs as
pmdaproc), and publishes its outcome in one assignment; fetches read whatever the
last pass published.  Deliberate differences from pmdaproc 6.0.3: the time between
passes is measured exactly (pmdaproc counts whole seconds), a refresh below one
second waits one second (a zero interval would spin), and a predicate whose
evaluation fails (pmdaproc exits) is logged and switches hotproc off.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from dataclasses import dataclass, field

import psutil

from . import fields, hotproc

#: pmdaproc's default interval between passes, in seconds.
DEFAULT_REFRESH = 10


@dataclass(frozen=True)
class Outcome:
    """What one pass published: the hot processes' predicate values, and the totals."""

    hot: dict[int, hotproc.Derived] = field(default_factory=dict)
    totals: hotproc.Totals = hotproc.NO_TOTALS


class HotSampler:
    """hotproc's configuration and timer, and the last pass's outcome."""

    def __init__(self, log: logging.Logger, hz: int, pagesize: int) -> None:
        self.log = log
        self.hz, self.pagesize = hz, pagesize
        self.predicate: hotproc.Predicate | None = None
        self.config_gen = 0
        self.refresh = DEFAULT_REFRESH
        self.outcome = Outcome()
        self._lock = threading.Lock()  # configuration changes and the pass's use of them
        self._wake = threading.Event()  # a restart or stop
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._readings: dict[int, hotproc.Reading] = {}
        self._last: tuple[float, int] | None = None  # (monotonic time, idle ticks)
        self._psargs: dict[tuple[int, int], str] = {}  # (pid, start) -> psargs

    # -- configuration ------------------------------------------------------------------

    @property
    def config_text(self) -> str:
        return hotproc.config_text(self.predicate)

    def store_config(self, text: str) -> None:
        """hotproc.control.config stored: PredicateError (PM_ERR_BADSTORE) for a bad one."""
        predicate = hotproc.parse(text)
        for warning in predicate.warnings if predicate is not None else ():
            self.log.warning("proc: hotproc config: %s", warning)
        with self._lock:
            if predicate is None:  # an empty config switches hotproc off
                self.predicate, self.config_gen = None, 0
                self.outcome = Outcome(totals=self.outcome.totals)
                self._halt()
                return
            self.predicate = predicate
            self.config_gen += 1
            if self.config_gen == 1:
                self._start()

    def store_refresh(self, seconds: int) -> None:
        with self._lock:
            self.refresh = seconds
            if self._thread is not None:
                self._halt()
                self._start()

    def load_file(self, path: str) -> None:
        """Read hotproc.conf (at start-up, and on hotproc.control.reload_config)."""
        try:
            info = os.stat(path)
        except OSError:
            return
        if info.st_mode & stat.S_IWOTH:
            self.log.error("proc: %s is writable by anyone: ignored", path)
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                predicate = hotproc.parse(f.read())
        except (OSError, hotproc.PredicateError) as exc:
            self.log.error("proc: %s: %s", path, exc)
            return
        with self._lock:
            if predicate is not None:
                self.predicate, self.config_gen = predicate, 1
            if self.config_gen:
                self._halt()
                self._start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._halt()

    def _start(self) -> None:
        if self._stopped:
            return
        self._wake = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(self._wake,), name="proc-hotproc", daemon=True
        )
        self._thread.start()

    def _halt(self) -> None:
        self._wake.set()
        self._thread = None

    # -- the passes -------------------------------------------------------------------

    def _run(self, wake: threading.Event) -> None:
        while not wake.wait(max(self.refresh, 1)):
            try:
                self.sample()
            except hotproc.PredicateRuntimeError as exc:
                self.log.error("proc: hotproc predicate failed, hotproc switched off: %s", exc)
                with self._lock:
                    self.predicate, self.config_gen = None, 0
                    self.outcome = Outcome()
                    self._halt()
                return
            except Exception as exc:  # a pass that fails must not end the agent
                self.log.error("proc: hotproc pass failed: %s", exc)

    def sample(self, now: float | None = None) -> None:
        """One pass: read every process, evaluate the predicate, publish the outcome."""
        with self._lock:
            predicate = self.predicate
        if predicate is None:
            return
        now = time.monotonic() if now is None else now
        candidates = []
        for pid in psutil.pids():
            where = f"/proc/{pid}"
            reading = hotproc.parse_reading(
                fields.read_file(f"{where}/stat"),
                fields.read_file(f"{where}/status"),
                fields.read_file(f"{where}/io"),
                fields.read_file(f"{where}/schedstat"),
                self.pagesize,
            )
            if reading is None:
                continue
            candidates.append(
                hotproc.Candidate(
                    pid,
                    reading,
                    hotproc.name_variable(fields.user_name(reading.uid)),
                    hotproc.name_variable(fields.group_name(reading.gid)),
                    hotproc.psargs_variable(pid, self._psargs_of(pid, reading)),
                )
            )
        idle = hotproc.idle_ticks(fields.read_file("/proc/stat") or b"")
        elapsed = now - self._last[0] if self._last else 0.0
        selection = hotproc.select(predicate, candidates, self._readings, elapsed, self.hz)
        totals = hotproc.NO_TOTALS
        if self._last is not None:
            totals = hotproc.totals(
                elapsed,
                os.sysconf("SC_NPROCESSORS_ONLN"),
                idle - self._last[1],
                self.hz,
                selection.hot_cpu_seconds,
                selection.cold_cpu_seconds,
            )
        self._readings = selection.readings
        self._last = (now, idle)
        alive = {(c.pid, c.reading.start_time) for c in candidates}
        self._psargs = {key: text for key, text in self._psargs.items() if key in alive}
        with self._lock:
            if self.predicate is predicate:  # (not replaced or switched off meanwhile)
                self.outcome = Outcome(selection.hot, totals)

    def _psargs_of(self, pid: int, reading: hotproc.Reading) -> str:
        key = (pid, reading.start_time)
        text = self._psargs.get(key)
        if text is None:
            text = fields.command_line(f"/proc/{pid}", pid)
            self._psargs[key] = text = text or f"({reading.comm})"
        return text
