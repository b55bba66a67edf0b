"""What pmGetOptions does with the options every archive tool shares (-S -T -Z -z -D -n),
as actions on a tool's own options record; each tool's option table names them.

A record here is any object with ``start``, ``finish``, ``timezone`` and ``hostzone``
fields and a ``complain(message)`` that counts an error as pmGetOptions counts it.
"""

from __future__ import annotations

from typing import Any


def start(o: Any, when: str | None) -> None:
    """-S: the window's start, read once the archive is open."""
    o.start = when


def finish(o: Any, when: str | None) -> None:
    """-T: the window's end."""
    o.finish = when


def timezone(o: Any, zone: str | None) -> None:
    """-Z: report times in ZONE; not with -z."""
    if o.hostzone:
        o.complain("at most one of -Z and -z allowed")
    else:
        o.timezone = zone


def hostzone(o: Any, _: str | None) -> None:
    """-z: report times in the metrics source's zone; not with -Z."""
    if o.timezone is not None:
        o.complain("at most one of -Z and -z allowed")
    else:
        o.hostzone = True


def debug(o: Any, spec: str | None) -> None:
    """-D: libpcp's debug options, refused as pmSetDebug refuses them."""
    from purepcp.pmapi.options import debug_spec_ok

    if not debug_spec_ok(str(spec)):
        o.complain(f"unrecognized debug options specification ({spec})")


def namespace(o: Any, path: str | None) -> None:
    """-n: load PATH now, as pmGetOptions does, into ``o.namespace``; a file that will
    not load is libpcp's two messages and a runtime error (``o.runtime_error``)."""
    import errno
    import sys

    from purepcp.pmapi.errors import PM_ERR_PMNS, PMError, SourceError, pmErrStr
    from purepcp.pmapi.pmns import PMNS

    try:
        o.namespace = PMNS.from_file(str(path))
        return
    except SourceError as exc:
        if exc.code == PM_ERR_PMNS:
            sys.stderr.write(f"Error Parsing ASCII PMNS: {exc.what}\n")
        else:
            sys.stderr.write(f'Error Parsing ASCII PMNS: Cannot open "{path}"\n')
        code = exc.code
    except (OSError, PMError) as exc:
        code = exc.code if isinstance(exc, PMError) else -(exc.errno or errno.EIO)
    o.complain(f'Cannot load namespace from "{path}": {pmErrStr(code)}')
    o.runtime_error = True
