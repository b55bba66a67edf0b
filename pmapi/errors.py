"""PCP's error codes (PM_ERR_*), their messages, and the one exception type that carries them.

Codes and messages are those of PCP 6.0.3 (`pmerr -l`).  Negative errno values are
valid codes too (PCP passes ``-errno`` through); pmErrStr renders them with
strerror, exactly as libpcp does on Linux.
"""

from __future__ import annotations

import os
from enum import IntEnum

PM_ERR_BASE = 12345


class PMErr(IntEnum):
    """Every PM_ERR_* code PCP 6.0.3 defines, with its name and number."""

    PM_ERR_GENERIC = -12345
    PM_ERR_PMNS = -12346
    PM_ERR_NOPMNS = -12347
    PM_ERR_DUPPMNS = -12348
    PM_ERR_TEXT = -12349
    PM_ERR_APPVERSION = -12350
    PM_ERR_VALUE = -12351
    PM_ERR_TIMEOUT = -12353
    PM_ERR_NODATA = -12354
    PM_ERR_RESET = -12355
    PM_ERR_NAME = -12357
    PM_ERR_PMID = -12358
    PM_ERR_INDOM = -12359
    PM_ERR_INST = -12360
    PM_ERR_TYPE = -12397
    PM_ERR_UNIT = -12361
    PM_ERR_CONV = -12362
    PM_ERR_TRUNC = -12363
    PM_ERR_SIGN = -12364
    PM_ERR_PROFILE = -12365
    PM_ERR_IPC = -12366
    PM_ERR_TLS = -12414
    PM_ERR_EOF = -12368
    PM_ERR_NOTHOST = -12369
    PM_ERR_EOL = -12370
    PM_ERR_MODE = -12371
    PM_ERR_LABEL = -12372
    PM_ERR_LOGREC = -12373
    PM_ERR_LOGFILE = -12375
    PM_ERR_NOTARCHIVE = -12374
    PM_ERR_NOCONTEXT = -12376
    PM_ERR_PROFILESPEC = -12377
    PM_ERR_PMID_LOG = -12378
    PM_ERR_INDOM_LOG = -12379
    PM_ERR_INST_LOG = -12380
    PM_ERR_NOPROFILE = -12381
    PM_ERR_NOAGENT = -12386
    PM_ERR_PERMISSION = -12387
    PM_ERR_CONNLIMIT = -12388
    PM_ERR_AGAIN = -12389
    PM_ERR_ISCONN = -12390
    PM_ERR_NOTCONN = -12391
    PM_ERR_NEEDPORT = -12392
    PM_ERR_NONLEAF = -12394
    PM_ERR_PMDANOTREADY = -13394
    PM_ERR_PMDAREADY = -13393
    PM_ERR_BOTCH = -12442
    PM_ERR_TOOSMALL = -12443
    PM_ERR_TOOBIG = -12444
    PM_ERR_FAULT = -12445
    PM_ERR_THREAD = -12398
    PM_ERR_NOCONTAINER = -12399
    PM_ERR_BADSTORE = -12400
    PM_ERR_LOGOVERLAP = -12401
    PM_ERR_LOGHOST = -12402
    PM_ERR_LOGCHANGETYPE = -12404
    PM_ERR_LOGCHANGESEM = -12405
    PM_ERR_LOGCHANGEINDOM = -12406
    PM_ERR_LOGCHANGEUNITS = -12407
    PM_ERR_NEEDCLIENTCERT = -12408
    PM_ERR_BADDERIVE = -12409
    PM_ERR_NOLABELS = -12410
    PM_ERR_PMDAFENCED = -12411
    PM_ERR_RECTYPE = -12412
    PM_ERR_FEATURE = -12413
    PM_ERR_NYI = -21344


# the codes under their PCP names, as module constants (`from ... import PM_ERR_PMID`)
PM_ERR_GENERIC = PMErr.PM_ERR_GENERIC
PM_ERR_PMNS = PMErr.PM_ERR_PMNS
PM_ERR_NOPMNS = PMErr.PM_ERR_NOPMNS
PM_ERR_DUPPMNS = PMErr.PM_ERR_DUPPMNS
PM_ERR_TEXT = PMErr.PM_ERR_TEXT
PM_ERR_APPVERSION = PMErr.PM_ERR_APPVERSION
PM_ERR_VALUE = PMErr.PM_ERR_VALUE
PM_ERR_TIMEOUT = PMErr.PM_ERR_TIMEOUT
PM_ERR_NODATA = PMErr.PM_ERR_NODATA
PM_ERR_RESET = PMErr.PM_ERR_RESET
PM_ERR_NAME = PMErr.PM_ERR_NAME
PM_ERR_PMID = PMErr.PM_ERR_PMID
PM_ERR_INDOM = PMErr.PM_ERR_INDOM
PM_ERR_INST = PMErr.PM_ERR_INST
PM_ERR_TYPE = PMErr.PM_ERR_TYPE
PM_ERR_UNIT = PMErr.PM_ERR_UNIT
PM_ERR_CONV = PMErr.PM_ERR_CONV
PM_ERR_TRUNC = PMErr.PM_ERR_TRUNC
PM_ERR_SIGN = PMErr.PM_ERR_SIGN
PM_ERR_PROFILE = PMErr.PM_ERR_PROFILE
PM_ERR_IPC = PMErr.PM_ERR_IPC
PM_ERR_TLS = PMErr.PM_ERR_TLS
PM_ERR_EOF = PMErr.PM_ERR_EOF
PM_ERR_NOTHOST = PMErr.PM_ERR_NOTHOST
PM_ERR_EOL = PMErr.PM_ERR_EOL
PM_ERR_MODE = PMErr.PM_ERR_MODE
PM_ERR_LABEL = PMErr.PM_ERR_LABEL
PM_ERR_LOGREC = PMErr.PM_ERR_LOGREC
PM_ERR_LOGFILE = PMErr.PM_ERR_LOGFILE
PM_ERR_NOTARCHIVE = PMErr.PM_ERR_NOTARCHIVE
PM_ERR_NOCONTEXT = PMErr.PM_ERR_NOCONTEXT
PM_ERR_PROFILESPEC = PMErr.PM_ERR_PROFILESPEC
PM_ERR_PMID_LOG = PMErr.PM_ERR_PMID_LOG
PM_ERR_INDOM_LOG = PMErr.PM_ERR_INDOM_LOG
PM_ERR_INST_LOG = PMErr.PM_ERR_INST_LOG
PM_ERR_NOPROFILE = PMErr.PM_ERR_NOPROFILE
PM_ERR_NOAGENT = PMErr.PM_ERR_NOAGENT
PM_ERR_PERMISSION = PMErr.PM_ERR_PERMISSION
PM_ERR_CONNLIMIT = PMErr.PM_ERR_CONNLIMIT
PM_ERR_AGAIN = PMErr.PM_ERR_AGAIN
PM_ERR_ISCONN = PMErr.PM_ERR_ISCONN
PM_ERR_NOTCONN = PMErr.PM_ERR_NOTCONN
PM_ERR_NEEDPORT = PMErr.PM_ERR_NEEDPORT
PM_ERR_NONLEAF = PMErr.PM_ERR_NONLEAF
PM_ERR_PMDANOTREADY = PMErr.PM_ERR_PMDANOTREADY
PM_ERR_PMDAREADY = PMErr.PM_ERR_PMDAREADY
PM_ERR_BOTCH = PMErr.PM_ERR_BOTCH
PM_ERR_TOOSMALL = PMErr.PM_ERR_TOOSMALL
PM_ERR_TOOBIG = PMErr.PM_ERR_TOOBIG
PM_ERR_FAULT = PMErr.PM_ERR_FAULT
PM_ERR_THREAD = PMErr.PM_ERR_THREAD
PM_ERR_NOCONTAINER = PMErr.PM_ERR_NOCONTAINER
PM_ERR_BADSTORE = PMErr.PM_ERR_BADSTORE
PM_ERR_LOGOVERLAP = PMErr.PM_ERR_LOGOVERLAP
PM_ERR_LOGHOST = PMErr.PM_ERR_LOGHOST
PM_ERR_LOGCHANGETYPE = PMErr.PM_ERR_LOGCHANGETYPE
PM_ERR_LOGCHANGESEM = PMErr.PM_ERR_LOGCHANGESEM
PM_ERR_LOGCHANGEINDOM = PMErr.PM_ERR_LOGCHANGEINDOM
PM_ERR_LOGCHANGEUNITS = PMErr.PM_ERR_LOGCHANGEUNITS
PM_ERR_NEEDCLIENTCERT = PMErr.PM_ERR_NEEDCLIENTCERT
PM_ERR_BADDERIVE = PMErr.PM_ERR_BADDERIVE
PM_ERR_NOLABELS = PMErr.PM_ERR_NOLABELS
PM_ERR_PMDAFENCED = PMErr.PM_ERR_PMDAFENCED
PM_ERR_RECTYPE = PMErr.PM_ERR_RECTYPE
PM_ERR_FEATURE = PMErr.PM_ERR_FEATURE
PM_ERR_NYI = PMErr.PM_ERR_NYI

#: each code's message, as `pmerr -l` prints it
_MESSAGES: dict[int, str] = {
    PM_ERR_GENERIC: "Generic error, already reported above",
    PM_ERR_PMNS: "Problems parsing PMNS definitions",
    PM_ERR_NOPMNS: "PMNS not accessible",
    PM_ERR_DUPPMNS: "Attempt to reload the PMNS",
    PM_ERR_TEXT: "One-line or help text is not available",
    PM_ERR_APPVERSION: "Metric not supported by this version of monitored application",
    PM_ERR_VALUE: "Missing metric value(s)",
    PM_ERR_TIMEOUT: "Timeout waiting for a response from PMCD",
    PM_ERR_NODATA: "Empty archive log file",
    PM_ERR_RESET: "PMCD reset or configuration change",
    PM_ERR_NAME: "Unknown metric name",
    PM_ERR_PMID: "Unknown or illegal metric identifier",
    PM_ERR_INDOM: "Unknown or illegal instance domain identifier",
    PM_ERR_INST: "Unknown or illegal instance identifier",
    PM_ERR_TYPE: "Unknown or illegal metric type",
    PM_ERR_UNIT: "Illegal pmUnits specification",
    PM_ERR_CONV: "Impossible value or scale conversion",
    PM_ERR_TRUNC: "Truncation in value conversion",
    PM_ERR_SIGN: "Negative value in conversion to unsigned",
    PM_ERR_PROFILE: "Explicit instance identifier(s) required",
    PM_ERR_IPC: "IPC protocol failure",
    PM_ERR_TLS: "TLS protocol failure",
    PM_ERR_EOF: "IPC channel closed",
    PM_ERR_NOTHOST: "Operation requires context with host source of metrics",
    PM_ERR_EOL: "End of PCP archive log",
    PM_ERR_MODE: "Illegal mode specification",
    PM_ERR_LABEL: "Illegal label record at start of a PCP archive log file",
    PM_ERR_LOGREC: "Corrupted record in a PCP archive log",
    PM_ERR_LOGFILE: "Missing PCP archive log file",
    PM_ERR_NOTARCHIVE: "Operation requires context with archive source of metrics",
    PM_ERR_NOCONTEXT: "Attempt to use an illegal context",
    PM_ERR_PROFILESPEC: "NULL pmInDom with non-NULL instlist",
    PM_ERR_PMID_LOG: "Metric not defined in the PCP archive log",
    PM_ERR_INDOM_LOG: "Instance domain identifier not defined in the PCP archive log",
    PM_ERR_INST_LOG: "Instance identifier not defined in the PCP archive log",
    PM_ERR_NOPROFILE: "Missing profile - protocol botch",
    PM_ERR_NOAGENT: "No PMCD agent for domain of request",
    PM_ERR_PERMISSION: "No permission to perform requested operation",
    PM_ERR_CONNLIMIT: "PMCD connection limit for this host exceeded",
    PM_ERR_AGAIN: "Try again. Information not currently available",
    PM_ERR_ISCONN: "Already Connected",
    PM_ERR_NOTCONN: "Not Connected",
    PM_ERR_NEEDPORT: "A non-null port name is required",
    PM_ERR_NONLEAF: "Metric name is not a leaf in PMNS",
    PM_ERR_PMDANOTREADY: "PMDA is not yet ready to respond to requests",
    PM_ERR_PMDAREADY: "PMDA is now responsive to requests",
    PM_ERR_BOTCH: "Internal inconsistency detected or assertion failed",
    PM_ERR_TOOSMALL: "Insufficient elements in list",
    PM_ERR_TOOBIG: "Result size exceeded",
    PM_ERR_FAULT: "QA fault injected",
    PM_ERR_THREAD: "Operation not supported for multi-threaded applications",
    PM_ERR_NOCONTAINER: "Container not found",
    PM_ERR_BADSTORE: "Bad input to pmstore",
    PM_ERR_LOGOVERLAP: "Archives overlap in time",
    PM_ERR_LOGHOST: "Archives differ by host",
    PM_ERR_LOGCHANGETYPE: "The type of a metric has changed in an archive",
    PM_ERR_LOGCHANGESEM: "The semantics of a metric has changed in an archive",
    PM_ERR_LOGCHANGEINDOM: "The instance domain of a metric has changed in an archive",
    PM_ERR_LOGCHANGEUNITS: "The units of a metric have changed in an archive",
    PM_ERR_NEEDCLIENTCERT: "PMCD requires a client certificate",
    PM_ERR_BADDERIVE: "Derived metric definition failed",
    PM_ERR_NOLABELS: "No support for metric label metadata",
    PM_ERR_PMDAFENCED: "PMDA is currently fenced and unable to respond to requests",
    PM_ERR_RECTYPE: "Incorrect record type in an archive",
    PM_ERR_FEATURE: "Archive feature not supported",
    PM_ERR_NYI: "Functionality not yet implemented",
}

# Errors from the SASL library, which libpcp maps below PM_ERR_NYI.
_SASL_MESSAGES: tuple[str, ...] = (
    "generic failure",
    "no memory available",
    "overflowed buffer",
    "no mechanism available",
    "bad protocol / cancel",
    "can't request information until later in exchange",
    "invalid parameter supplied",
    "transient failure (e.g., weak key)",
    "integrity check failed",
    "server failed mutual authentication step",
    "mechanism doesn't support requested feature",
    "SASL library is not initialized",
    "authentication failure",
    "authorization failure",
    "mechanism too weak for this user",
    "encryption needed to use mechanism",
    "One time use of a plaintext password will enable requested mechanism for user",
    "passphrase expired, has to be reset",
    "account disabled",
    "user not found",
    "passphrase locked",
    "requested change was not needed",
    "version mismatch with plug-in",
    "remote authentication server unavailable",
    "undefined error!",
    "user exists, but no verifier for user",
    "passphrase is too weak for security policy",
    "user supplied passwords are not permitted",
    "sasl_setpass needs old password in order to perform password change",
    "sasl_setpass can't store a property because of a constraint violation",
)

_UNKNOWN_ERRNO = os.strerror(100000).rsplit(" ", 1)[0]  # "Unknown error" on glibc


def pmErrStr(code: int) -> str:
    """The message libpcp's pmErrStr gives for CODE (a PM_ERR_* code or -errno)."""
    if code == 0:
        return "No error"
    nyi = int(PMErr.PM_ERR_NYI)
    if code < nyi:
        error = code - nyi
        if error >= -1000:
            index = -error - 1
            text = _SASL_MESSAGES[index] if index < len(_SASL_MESSAGES) else "undefined error!"
            return f"Authentication - {text}"
        return f"Unknown secure sockets error {code} ({error})"
    if -PM_ERR_BASE < code < 0:
        text = os.strerror(-code)
        if not text.startswith(_UNKNOWN_ERRNO):
            return text
    message = _MESSAGES.get(code)
    if message is not None:
        return message
    if -PM_ERR_BASE < code < 0:
        return os.strerror(-code)
    return f"No such PMAPI error code ({code})"


def pmErrName(code: int) -> str:
    """`PM_ERR_PMID` for a PCP code, the errno name (`EACCES`) for -errno, else the number."""
    try:
        return PMErr(code).name
    except ValueError:
        pass
    import errno

    name = errno.errorcode.get(-code) if code < 0 else None
    return name if name is not None else str(code)


class PMError(Exception):
    """A PCP error: carries the code (PM_ERR_* or -errno); str() is PCP's message.

    An optional detail says where or why (a field, an offset); it follows the
    message after a colon so one line tells the whole story.
    """

    def __init__(self, code: int, detail: str | None = None) -> None:
        self.code = int(code)
        self.detail = detail
        super().__init__(self.code, detail)

    @property
    def message(self) -> str:
        return pmErrStr(self.code)

    def __str__(self) -> str:
        return f"{self.message}: {self.detail}" if self.detail else self.message

    def __repr__(self) -> str:
        return f"PMError({pmErrName(self.code)}, {self.detail!r})"


class SourceError(PMError):
    """Bad input in a text source (a namespace file, help text, config): names file and line.

    str() is one line: ``FILE:LINE: WHAT`` (or ``FILE: WHAT`` when no line applies),
    so a user sees exactly where to look.  The PCP code says which family failed
    (PM_ERR_PMNS for namespace files, PM_ERR_GENERIC elsewhere).
    """

    def __init__(
        self, code: int, what: str, file: str | None = None, line: int | None = None
    ) -> None:
        self.what = what
        self.file = file
        self.line = line
        super().__init__(code, what)

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.what}"

    def __reduce__(self):
        return (type(self), (self.code, self.what, self.file, self.line))
