"""pmie's statistics file, $PCP_TMP_DIR/pmie/PID: what a live pmie says of itself to
pmcd's pmcd.pmie metrics, pmie_check and pmieconf (its rules file, log, pmcd, and the
evaluation counters), kept up to date in place (a shared mapping) and removed at exit.

Replaying an archive there is no file: the counters are only kept in memory.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass


@dataclass
class Perf:
    """pmiestats_t's counters."""

    eval_expected: float = 0.0
    numrules: int = 0
    actions: int = 0
    eval_true: int = 0
    eval_false: int = 0
    eval_unknown: int = 0
    eval_actual: int = 0
    config: str = ""
    logfile: str = "<none>"
    pmcd_host: str = ""
    _map: object = None  # the file's mapping, once made

    def counters(self) -> tuple[float, ...]:
        return (self.eval_expected, self.numrules, self.actions, self.eval_true,
                self.eval_false, self.eval_unknown, self.eval_actual)  # fmt: skip

    def flush(self) -> None:
        """The file brought up to date (nothing without one)."""
        if self._map is None:
            return
        from purepcp.pmapi.pmiestats import pmie_stats_bytes

        data = pmie_stats_bytes(self.config, self.logfile, self.pmcd_host, self.counters())
        self._map[: len(data)] = data  # type: ignore[index]


def start(perf: Perf, prog: str, tmp_dir: str) -> None:
    """startmonitor: the file made (its directory too), mapped, and removed at exit; a
    file that cannot be made leaves the counters in memory, as pmie carries on."""
    import atexit
    import mmap

    from purepcp.pmapi.pmiestats import PMIE_STATS, PMIE_SUBDIR

    folder = os.path.join(tmp_dir, PMIE_SUBDIR)
    try:
        os.mkdir(folder, 0o777)
    except FileExistsError:
        pass
    except OSError as exc:
        sys.stderr.write(f"{prog}: warning cannot create stats file dir {folder}: "
                         f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
    path = os.path.join(folder, str(os.getpid()))
    atexit.register(_remove, path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_TRUNC, 0o644)
    except OSError:
        return
    try:
        os.ftruncate(fd, PMIE_STATS.size)
        perf._map = mmap.mmap(fd, PMIE_STATS.size)
    except OSError as exc:
        sys.stderr.write(f"{prog}: memory map failed for stats file {path}: "
                         f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
    finally:
        os.close(fd)
    perf.flush()


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
