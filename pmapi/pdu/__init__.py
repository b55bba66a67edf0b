"""The PDU codec: every PDU PCP 6 exchanges, as records, bytes and streams."""

from .codec import PDUError, decode, encode
from .framer import PDUFramer, split_stream

__all__ = ["PDUError", "PDUFramer", "decode", "encode", "split_stream"]
