"""The PDU codec: every PDU PCP 6 exchanges, as records, bytes and streams.

The codec (construct) loads on first use, so a module that needs only the PDU
constants, an archive reader for one, does not pay for it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PDUError", "PDUFramer", "decode", "encode", "split_stream"]

_HOMES = {"PDUError": "codec", "decode": "codec", "encode": "codec", "PDUFramer": "framer",
          "split_stream": "framer"}  # fmt: skip


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
