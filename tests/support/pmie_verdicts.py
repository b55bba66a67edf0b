"""Forcing pmie's rules true on a live host, and watching the verdicts pmie gives.

`Watch` runs a pmie with -v -b (each evaluation's rule values on stderr, line by line, a
blank line after each evaluation) and collects every evaluation as a `Verdicts` record
stamped with the moment it arrived, so that a test can wait on verdicts appearing and
compare what two pmies said during the same stretch of time.

`cpu_burner` keeps every processor busy; `filling_filesystem` mounts a tmpfs holding an
ext2 image, loop-mounted (PCP's linux agent puts tmpfs mounts in tmpfs.*, not filesys.*:
a block device is what the filesys.filling rule sees), and `growing_file` fills it.
Each undoes what it did, processes first, then mounts, whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.waiting import DEADLINE

RULE_LINE = re.compile(r"^(\S+): (true|false|unknown)$")


@dataclass(frozen=True)
class Verdicts:
    """One evaluation: when its last line arrived (time.monotonic) and each rule's value."""

    at: float
    values: dict[str, str]

    def true(self) -> frozenset[str]:
        return frozenset(rule for rule, value in self.values.items() if value == "true")


@dataclass
class Watch:
    """A pmie (ARGV, with -b and -v added by `start`) and the evaluations it printed."""

    name: str
    proc: subprocess.Popen
    evaluations: list[Verdicts] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, name: str, argv: list[str], env: dict[str, str]) -> Watch:
        proc = subprocess.Popen(
            [*argv, "-b", "-v"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        watch = cls(name, proc)
        watch.reader = threading.Thread(target=watch._read, daemon=True)
        watch.reader.start()
        return watch

    def _read(self) -> None:
        assert self.proc.stderr is not None
        block: dict[str, str] = {}
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            found = RULE_LINE.match(line)
            with self.changed:
                if found:
                    block[found.group(1)] = found.group(2)
                elif line == "" and block:
                    self.evaluations.append(Verdicts(time.monotonic(), block))
                    block = {}
                elif line:
                    self.messages.append(line)
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait(
        self, what: str, condition: Callable[[list[Verdicts]], bool], within: float = DEADLINE
    ) -> None:
        """Until CONDITION holds of the evaluations so far; RuntimeError naming WHAT if
        pmie ends first or WITHIN seconds pass."""
        deadline = time.monotonic() + within
        with self.changed:
            while not condition(self.evaluations):
                left = deadline - time.monotonic()
                if self.proc.poll() is not None and not self.reader_alive():
                    raise RuntimeError(f"{self.name} ended waiting for {what}: {self.tail()}")
                if left <= 0:
                    raise RuntimeError(f"{self.name}: no {what} within {within:g} s")
                self.changed.wait(min(left, 1.0))

    def reader_alive(self) -> bool:
        return self.reader is not None and self.reader.is_alive()

    def after(self, start: float, end: float = float("inf")) -> list[Verdicts]:
        """The evaluations that arrived between START and END."""
        with self.changed:
            return [e for e in self.evaluations if start <= e.at <= end]

    def tail(self) -> str:
        with self.changed:
            return "\n".join(self.messages[-10:])

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # (a shell action still running)
        if self.reader is not None:
            self.reader.join(timeout=30)


@contextlib.contextmanager
def watching(runs: dict[str, tuple[list[str], dict[str, str]]]) -> Iterator[dict[str, Watch]]:
    """Start every pmie of RUNS (name: argv, env) one right after the other, stop them all."""
    started: dict[str, Watch] = {}
    try:
        for name, (argv, env) in runs.items():
            started[name] = Watch.start(name, argv, env)
        yield started
    finally:
        for watch in started.values():
            watch.stop()


@contextlib.contextmanager
def cpu_burner(per_cpu: int = 1) -> Iterator[None]:
    """PER_CPU processes spinning for each processor, while the block runs (more than
    one each makes the run queue, and so the load average, climb faster)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while 1: pass"], start_new_session=True)
        for _ in range(per_cpu * (os.cpu_count() or 1))
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(timeout=30)


def can_mount() -> str | None:
    """Why this machine cannot mount the file system the filling test needs (None: it can)."""
    if os.geteuid() != 0:
        return "mounting a tmpfs and a loop device needs root"
    for tool in ("mount", "umount", "mkfs.ext2"):
        if shutil.which(tool) is None:
            return f"no {tool} on this machine"
    if not Path("/dev/loop-control").exists():
        return "no loop devices (/dev/loop-control) on this machine"
    return None


@dataclass(frozen=True)
class Mounted:
    """A loop-mounted ext2 file system on DEVICE at MOUNT, its image in a tmpfs at TOP."""

    top: Path
    mount: Path
    device: str

    def fullness(self) -> float:
        """Percent of its blocks in use (no blocks are reserved for root)."""
        st = os.statvfs(self.mount)
        return 100.0 * (st.f_blocks - st.f_bfree) / st.f_blocks


def fullest_filesystem() -> float:
    """The highest percent full (used over used and available, as filesys.full) of the
    host's block-device file systems, which filesys.filling watches too."""
    found = 0.0
    for line in Path("/proc/self/mounts").read_text().splitlines():
        device, path = line.split()[:2]
        if not device.startswith("/dev/") and path != "/":
            continue
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        used = st.f_blocks - st.f_bfree
        if used + st.f_bavail:
            found = max(found, 100.0 * used / (used + st.f_bavail))
    return found


def _run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")


def _device_of(mount: Path) -> str:
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[1] == str(mount):
            return fields[0]
    raise RuntimeError(f"{mount} is not in /proc/self/mounts")


@contextlib.contextmanager
def filling_filesystem(size_mb: int = 32) -> Iterator[Mounted]:
    """A tmpfs of SIZE_MB holding an ext2 image of three quarters that size, loop-mounted;
    unmounted (both) and removed at the end."""
    top = Path(tempfile.mkdtemp(prefix="purepcp-filling-"))
    image, mount = top / "fs.img", top / "mnt"
    try:
        _run("mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(top))
        try:
            with image.open("wb") as f:
                f.truncate(size_mb * 3 // 4 * 1024 * 1024)
            _run("mkfs.ext2", "-q", "-F", "-m", "0", str(image))
            mount.mkdir()
            _run("mount", "-o", "loop", str(image), str(mount))
            try:
                yield Mounted(top, mount, _device_of(mount))
            finally:
                _run("umount", str(mount))
                _wait_detached(image)
        finally:
            _run("umount", str(top))
    finally:
        top.rmdir()


def _wait_detached(image: Path) -> None:
    """Until no loop device holds IMAGE (the kernel lets a loop device go after its
    unmount, and the tmpfs holding the image stays busy until then)."""

    def attached() -> bool:
        for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
            with contextlib.suppress(OSError):
                if backing.read_text().strip() == str(image):
                    return True
        return False

    deadline = time.monotonic() + DEADLINE
    while attached():
        if time.monotonic() > deadline:
            raise RuntimeError(f"a loop device still holds {image} after {DEADLINE:g} s")
        time.sleep(0.05)


FILL = """\
import os, sys, time
path, start, chunk, period = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
block = b"x" * (1 << 20)
while start > 0:
    start -= os.write(fd, block[: min(start, len(block))])
os.fsync(fd)
while True:  # (a steady growth, so that its rate is never 0 over a second)
    os.write(fd, b"x" * chunk)
    time.sleep(period)
"""


@contextlib.contextmanager
def growing_file(fs: Mounted, percent: float, chunk: int = 16384, period: float = 0.25):
    """A process writing a file on FS: at once up to PERCENT of its blocks, then CHUNK
    bytes every PERIOD seconds; killed (and the file removed) at the end."""
    st = os.statvfs(fs.mount)
    start = int(st.f_blocks * st.f_frsize * percent / 100)
    path = fs.mount / "filling"
    argv = [sys.executable, "-c", FILL, str(path), str(start), str(chunk), str(period)]
    proc = subprocess.Popen(argv, start_new_session=True)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)
        with contextlib.suppress(OSError):
            path.unlink()


def _cpu_jiffies() -> tuple[int, int]:
    """(busy, total) clock ticks of all processors so far, from /proc/stat: busy is
    user, nice, system, irq and softirq (what pmie's cpu rules count, and a little more)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, irq, softirq = fields[0], fields[1], fields[2], fields[5], fields[6]
    return user + nice + system + irq + softirq, sum(fields[:8])


class BusyMeter:
    """How busy the processors were, sampled in a thread every PERIOD seconds while in
    use (for telling a busy machine from a wrong verdict)."""

    def __init__(self, period: float = 0.2) -> None:
        self.period = period
        self.samples: list[tuple[float, int, int]] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.samples.append((time.monotonic(), *_cpu_jiffies()))
            if self.done.wait(self.period):
                return

    def __enter__(self) -> BusyMeter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=30)

    def busiest(self, start: float, end: float, span: float = 1.0) -> float:
        """The highest percent busy over any SPAN seconds (or a little more) between
        START and END."""
        inside = [s for s in self.samples if start - span <= s[0] <= end]
        found = 0.0
        for i, (t0, busy0, total0) in enumerate(inside):
            later = [s for s in inside[i + 1 :] if s[0] - t0 >= span]
            if later and later[0][2] > total0:
                found = max(found, 100.0 * (later[0][1] - busy0) / (later[0][2] - total0))
        return found
