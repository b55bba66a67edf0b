"""pmGetConfig for PCP's scripts: each PCP_* name answered from where its files are.

libpcp answers from the environment, then PCP's pcp.conf.  On purepcp the daemons keep
their state in purepcp's layout (purepcp.pmapi.paths), so a script asking where the
agents, logs or temporary files are (PCP_PMDAS_DIR, PCP_LOG_DIR, PCP_TMP_DIR, ...) gets
the layout's answer and meets our pmcd's files.  PCP_SYSCONF_DIR is the exception: PCP's
scripts ask it only for their own configuration (pcp-dstat's plugins, pmrep's
metricsets, the pcp2* exporters' files), which PCP installs under its /etc/pcp, so where
PCP is installed and the layout has not chosen a directory of its own it is PCP's.  The
other names (PCP_USER, PCP_BIN_DIR, ...) are PCP's pcp.conf's; PCP_VERSION is the PCP
release this API follows.
"""

from __future__ import annotations

import os

#: names PCP's scripts read for their own tools' configuration files
_TOOLS_CONFIG = frozenset({"PCP_SYSCONF_DIR"})
#: answers where neither the layout nor PCP's pcp.conf has one (pmGetUsername's default)
_FALLBACK = {"PCP_USER": "pcp", "PCP_GROUP": "pcp"}


def get_config(name: str) -> str | None:
    """NAME's value for a PCP script (None: no such setting, as pmGetOptionalConfig)."""
    found = os.environ.get(name)
    if found is not None:
        return found
    if name == "PCP_VERSION":
        from purepcp.pmapi import PCP_COMPAT_VERSION

        return PCP_COMPAT_VERSION
    from purepcp.pmapi.paths import NAMES, LayoutError, paths, pcp_conf

    try:
        layout = paths(missing_ok=True) if name in NAMES else None
    except LayoutError as exc:  # (libpcp ends the process on a pcp.conf it cannot read)
        import sys

        from purepcp.pmapi import progname

        sys.stderr.write(f"{progname()}: {exc}\n")
        raise SystemExit(1) from None
    if layout is not None and (name not in _TOOLS_CONFIG or not layout.is_default(name)):
        return layout.values.get(name)
    found = pcp_conf().get(name)
    if found is not None:
        return found
    if layout is not None:
        return layout.values.get(name)
    return _FALLBACK.get(name)
