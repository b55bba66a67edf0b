"""One frozen record per PDU type, with the fields libpcp puts on the wire.

Every record ends with ``sender``: the header's third word (the client's context
number, the sending process id, or 0 from an agent).  Names and texts are str
(decoded as UTF-8 with surrogate escapes, so any bytes survive a round trip);
identifiers are plain ints; value-carrying PDUs hold pmapi.values.Result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from ..desc import Desc
from ..labels import LabelSet
from ..values import Result
from .constants import CVERSION, PDU_VERSION, PDUType


class Cred(NamedTuple):
    """__pmCred: one credential word (type, then three value bytes)."""

    c_type: int
    vala: int = 0
    valb: int = 0
    valc: int = 0

    def pack(self) -> int:
        return self.c_type << 24 | self.vala << 16 | self.valb << 8 | self.valc

    @classmethod
    def unpack(cls, word: int) -> Cred:
        return cls(word >> 24 & 0xFF, word >> 16 & 0xFF, word >> 8 & 0xFF, word & 0xFF)

    @classmethod
    def version(cls, flags: int, version: int = PDU_VERSION) -> Cred:
        """The CVERSION credential that negotiates protocol version and features."""
        return cls(CVERSION, version, flags >> 8 & 0xFF, flags & 0xFF)

    @property
    def flags(self) -> int:
        """The 16-bit feature flags of a CVERSION credential."""
        return self.valb << 8 | self.valc


class PDUInfo(NamedTuple):
    """__pmPDUInfo: the datum of pmcd's connection reply (version, licensed, features)."""

    version: int
    licensed: int
    features: int

    def pack(self) -> int:
        return (self.version & 0x7F) << 24 | (self.licensed & 0xFF) << 16 | self.features & 0xFFFF

    @classmethod
    def unpack(cls, word: int) -> PDUInfo:
        return cls(word >> 24 & 0x7F, word >> 16 & 0xFF, word & 0xFFFF)


class InDomProfile(NamedTuple):
    """One instance domain's entry in a profile: include/exclude state and instances."""

    indom: int
    state: int
    insts: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ErrorPDU:
    """A status code; pmcd's connection reply also carries a datum (the PDUInfo word)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_ERROR
    code: int
    datum: int | None = None
    sender: int = 0


@dataclass(frozen=True, slots=True)
class ResultPDU:
    """Values: a fetch answer from an agent, or a store request (pmTimeval timestamp)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_RESULT
    result: Result
    sender: int = 0


@dataclass(frozen=True, slots=True)
class HighResResultPDU:
    """Values with a nanosecond timestamp: pmcd's answer to HIGHRES_FETCH."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_HIGHRES_RESULT
    result: Result
    sender: int = 0


@dataclass(frozen=True, slots=True)
class ProfilePDU:
    """The instances wanted by later fetches: a global state plus per-indom lists."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_PROFILE
    ctxid: int
    state: int
    profiles: tuple[InDomProfile, ...] = ()
    sender: int = 0


@dataclass(frozen=True, slots=True)
class FetchPDU:
    """Fetch these PMIDs (answered by RESULT)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_FETCH
    ctxid: int
    pmids: tuple[int, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class HighResFetchPDU:
    """Fetch these PMIDs (answered by HIGHRES_RESULT)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_HIGHRES_FETCH
    ctxid: int
    pmids: tuple[int, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class DescReqPDU:
    TYPE: ClassVar[PDUType] = PDUType.PDU_DESC_REQ
    pmid: int
    sender: int = 0


@dataclass(frozen=True, slots=True)
class DescPDU:
    TYPE: ClassVar[PDUType] = PDUType.PDU_DESC
    desc: Desc
    sender: int = 0


@dataclass(frozen=True, slots=True)
class DescIdsPDU:
    """Descriptors for several PMIDs at once (answered by DESCS)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_DESC_IDS
    pmids: tuple[int, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class DescsPDU:
    """Descriptors in request order; an unknown PMID comes back as pmid PM_ID_NULL."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_DESCS
    descs: tuple[Desc, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class InstanceReqPDU:
    """Instances of INDOM: all of them, one by id (inst), or one by name."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_INSTANCE_REQ
    indom: int
    inst: int
    name: str | None = None
    sender: int = 0


@dataclass(frozen=True, slots=True)
class InstancePDU:
    """Instance ids and names of an instance domain (names may be empty strings)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_INSTANCE
    indom: int
    insts: tuple[int, ...]
    names: tuple[str, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class TextReqPDU:
    """Help text for a PMID or InDom: type is PM_TEXT_ONELINE/HELP | PM_TEXT_PMID/INDOM."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_TEXT_REQ
    ident: int
    type: int
    sender: int = 0


@dataclass(frozen=True, slots=True)
class TextPDU:
    """Help text.  ident is the word as it appears on the wire, read big-endian.

    libpcp's senders write it in their host byte order (so from an x86 agent it
    reads byte-swapped) and libpcp's receivers ignore it.
    """

    TYPE: ClassVar[PDUType] = PDUType.PDU_TEXT
    ident: int
    text: str
    sender: int = 0


@dataclass(frozen=True, slots=True)
class CredsPDU:
    """Credentials: a client's or agent's CVERSION handshake, and pmcd's answer to agents."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_CREDS
    creds: tuple[Cred, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class PMNSIdsPDU:
    """PMIDs: the answer to a name lookup, or a PMID -> names request."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_PMNS_IDS
    status: int
    pmids: tuple[int, ...]
    sender: int = 0


@dataclass(frozen=True, slots=True)
class PMNSNamesPDU:
    """Metric names, optionally each with a status (leaf/non-leaf, or an error)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_PMNS_NAMES
    names: tuple[str, ...]
    statuses: tuple[int, ...] | None = None
    sender: int = 0


@dataclass(frozen=True, slots=True)
class PMNSChildPDU:
    """Children of NAME; subtype 1 asks for each child's leaf status."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_PMNS_CHILD
    name: str
    subtype: int = 0
    sender: int = 0


@dataclass(frozen=True, slots=True)
class PMNSTraversePDU:
    """All leaf names below NAME."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_PMNS_TRAVERSE
    name: str
    subtype: int = 0
    sender: int = 0


@dataclass(frozen=True, slots=True)
class AttrPDU:
    """A connection attribute (PCP_ATTR_*) and its raw value (unpadded on the wire)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_ATTR
    attr: int
    value: bytes = b""
    sender: int = 0


@dataclass(frozen=True, slots=True)
class LabelReqPDU:
    """Labels at one level: type is a PM_LABEL_* flag, ident the domain/indom/PMID."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_LABEL_REQ
    ident: int
    type: int
    sender: int = 0


@dataclass(frozen=True, slots=True)
class LabelPDU:
    """Label sets answering a LABEL_REQ (one per instance for PM_LABEL_INSTANCES)."""

    TYPE: ClassVar[PDUType] = PDUType.PDU_LABEL
    ident: int
    type: int
    sets: tuple[LabelSet, ...]
    sender: int = 0


PDU = (
    ErrorPDU
    | ResultPDU
    | HighResResultPDU
    | ProfilePDU
    | FetchPDU
    | HighResFetchPDU
    | DescReqPDU
    | DescPDU
    | DescIdsPDU
    | DescsPDU
    | InstanceReqPDU
    | InstancePDU
    | TextReqPDU
    | TextPDU
    | CredsPDU
    | PMNSIdsPDU
    | PMNSNamesPDU
    | PMNSChildPDU
    | PMNSTraversePDU
    | AttrPDU
    | LabelReqPDU
    | LabelPDU
)
