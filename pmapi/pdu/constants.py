"""PDU type codes, feature flags and protocol limits, with PCP's names and numbers."""

from __future__ import annotations

from enum import IntEnum, IntFlag


class PDUType(IntEnum):
    """The type word of a PDU header."""

    PDU_ERROR = 0x7000
    PDU_RESULT = 0x7001
    PDU_PROFILE = 0x7002
    PDU_FETCH = 0x7003
    PDU_DESC_REQ = 0x7004
    PDU_DESC = 0x7005
    PDU_INSTANCE_REQ = 0x7006
    PDU_INSTANCE = 0x7007
    PDU_TEXT_REQ = 0x7008
    PDU_TEXT = 0x7009
    PDU_CONTROL_REQ = 0x700A
    PDU_CREDS = 0x700C
    PDU_PMNS_IDS = 0x700D
    PDU_PMNS_NAMES = 0x700E
    PDU_PMNS_CHILD = 0x700F
    PDU_PMNS_TRAVERSE = 0x7010
    PDU_ATTR = 0x7011
    PDU_LABEL_REQ = 0x7012
    PDU_LABEL = 0x7013
    PDU_HIGHRES_FETCH = 0x7014
    PDU_HIGHRES_RESULT = 0x7015
    PDU_DESC_IDS = 0x7016
    PDU_DESCS = 0x7017

    @property
    def label(self) -> str:
        """The short name libpcp's __pmPDUTypeStr prints (`HIGHRES_FETCH`)."""
        return self.name.removeprefix("PDU_")


class PDUFlag(IntFlag):
    """Connection features advertised by pmcd and requested by clients."""

    PDU_FLAG_SECURE = 1 << 0
    PDU_FLAG_COMPRESS = 1 << 1
    PDU_FLAG_AUTH = 1 << 2
    PDU_FLAG_CREDS_REQD = 1 << 3
    PDU_FLAG_SECURE_ACK = 1 << 4
    PDU_FLAG_NO_NSS_INIT = 1 << 5
    PDU_FLAG_CONTAINER = 1 << 6
    PDU_FLAG_CERT_REQD = 1 << 7
    PDU_FLAG_BAD_LABEL = 1 << 8
    PDU_FLAG_LABELS = 1 << 9
    PDU_FLAG_HIGHRES = 1 << 10
    PDU_FLAG_DESCS = 1 << 11


class PMCDState(IntFlag):
    """State changes pmcd reports to clients; an agent sets LABEL/NAMES in a RESULT's seconds."""

    PMCD_NO_CHANGE = 0
    PMCD_ADD_AGENT = 1 << 0
    PMCD_RESTART_AGENT = 1 << 1
    PMCD_DROP_AGENT = 1 << 2
    PMCD_LABEL_CHANGE = 1 << 3
    PMCD_NAMES_CHANGE = 1 << 4


class Attr(IntEnum):
    """Connection attribute codes carried by PDU_ATTR (PCP_ATTR_*)."""

    PCP_ATTR_NONE = 0
    PCP_ATTR_PROTOCOL = 1
    PCP_ATTR_SECURE = 2
    PCP_ATTR_COMPRESS = 3
    PCP_ATTR_USERAUTH = 4
    PCP_ATTR_USERNAME = 5
    PCP_ATTR_AUTHNAME = 6
    PCP_ATTR_PASSWORD = 7
    PCP_ATTR_METHOD = 8
    PCP_ATTR_REALM = 9
    PCP_ATTR_UNIXSOCK = 10
    PCP_ATTR_USERID = 11
    PCP_ATTR_GROUPID = 12
    PCP_ATTR_LOCAL = 13
    PCP_ATTR_PROCESSID = 14
    PCP_ATTR_CONTAINER = 15
    PCP_ATTR_EXCLUSIVE = 16


globals().update(PDUType.__members__)
globals().update(PDUFlag.__members__)
globals().update(Attr.__members__)
globals().update(PMCDState.__members__)

#: Bytes in every PDU header: length, type, from (big-endian int32 each).
HEADER_SIZE = 12
#: The protocol version PCP 2 and later speak.
PDU_VERSION2 = 2
PDU_VERSION = PDU_VERSION2
#: __pmCred.c_type of the credential that negotiates version and features.
CVERSION = 0x1
#: Sender id for PDUs from an agent to pmcd.
FROM_ANON = 0

#: pmcd refuses client PDUs larger than this (libpcp's default ceiling).
CLIENT_PDU_CEILING = 64 * 1024
#: No PDU may claim more than this (libpcp refuses INT_MAX - PDU_CHUNK and up).
MAX_PDU_SIZE = 0x7FFFFFFF - 1024
#: Largest ATTR value (bytes) and most credentials in one CREDS PDU.
LIMIT_ATTR_PDU = 4096
LIMIT_CREDS = 1024
#: Error-code bases of the V1 protocol, still used in pmcd's connection reply.
PM_ERR_BASE1 = 1000
PM_ERR_BASE2 = 12345

#: pmLookupText type bits.
PM_TEXT_ONELINE = 1
PM_TEXT_HELP = 2
PM_TEXT_PMID = 4
PM_TEXT_INDOM = 8
PM_TEXT_DIRECT = 16

#: pmProfile states.
PM_PROFILE_INCLUDE = 0
PM_PROFILE_EXCLUDE = 1
