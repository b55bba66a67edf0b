"""pmseries --load: an archive (and its metric and time window qualifiers) into the key
server, with PCP's closing line."""

from __future__ import annotations

import sys

from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.loadspec import LoadSpec, LoadSpecError, load_spec
from purepcp.series.store import Store, StoreConfig, StoreDown

from .config import connect
from .options import PROG, TOOL
from .request import Request

#: how long a load waits for a restarted key server before it reports where it stopped
RESUME_SECONDS = 30.0


def load(request: Request, config: StoreConfig) -> int:
    """Load what the arguments name; the exit status (a failure ends the run)."""
    try:
        spec: LoadSpec = load_spec(request.text)
    except LoadSpecError as exc:
        TOOL.fail(f"[Error] {exc}")
    store = connect(config)
    loader = None
    try:
        loader = ArchiveLoader(
            store,
            spec.path,
            wanted=spec.metrics,
            start_ns=spec.start_ns,
            finish_ns=spec.finish_ns,
            metadata_only=request.fast,
            reconnect=lambda: Store(config),
            resume_for=RESUME_SECONDS,
        )
        report = loader.run()
    except LoadError as exc:
        TOOL.fail(f"[Error] {exc}")
    except StoreDown as exc:
        TOOL.fail(f"[Error] {spec.path}: {exc}")
    finally:
        (loader.store if loader is not None else store).close()
    for error in report.errors[:10]:
        sys.stderr.write(f"{PROG}: [Warning] {error}\n")
    if report.resumed:
        sys.stderr.write(
            f"{PROG}: [Info] the key server went away and came back {report.resumed} "
            f"time(s); the load resumed\n"
        )
    sys.stdout.write(
        f"{PROG}: [Info] processed {report.records} archive records from {spec.path}\n"
    )
    return 0
