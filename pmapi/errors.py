"""PCP's error codes (PM_ERR_*), their messages, and the one exception type that carries them.

Codes and messages are those of PCP 6.0.3 (`pmerr -l`).  Negative errno values are
valid codes too (PCP passes ``-errno`` through); pmErrStr renders them with
strerror, exactly as libpcp does on Linux.
"""

from __future__ import annotations

import os
from enum import IntEnum

PM_ERR_BASE = 12345

#: (symbolic name, code, message) for every PM_ERR_* code PCP 6.0.3 defines.
_TABLE: tuple[tuple[str, int, str], ...] = (
    ("PM_ERR_GENERIC", -12345, "Generic error, already reported above"),
    ("PM_ERR_PMNS", -12346, "Problems parsing PMNS definitions"),
    ("PM_ERR_NOPMNS", -12347, "PMNS not accessible"),
    ("PM_ERR_DUPPMNS", -12348, "Attempt to reload the PMNS"),
    ("PM_ERR_TEXT", -12349, "One-line or help text is not available"),
    ("PM_ERR_APPVERSION", -12350, "Metric not supported by this version of monitored application"),
    ("PM_ERR_VALUE", -12351, "Missing metric value(s)"),
    ("PM_ERR_TIMEOUT", -12353, "Timeout waiting for a response from PMCD"),
    ("PM_ERR_NODATA", -12354, "Empty archive log file"),
    ("PM_ERR_RESET", -12355, "PMCD reset or configuration change"),
    ("PM_ERR_NAME", -12357, "Unknown metric name"),
    ("PM_ERR_PMID", -12358, "Unknown or illegal metric identifier"),
    ("PM_ERR_INDOM", -12359, "Unknown or illegal instance domain identifier"),
    ("PM_ERR_INST", -12360, "Unknown or illegal instance identifier"),
    ("PM_ERR_TYPE", -12397, "Unknown or illegal metric type"),
    ("PM_ERR_UNIT", -12361, "Illegal pmUnits specification"),
    ("PM_ERR_CONV", -12362, "Impossible value or scale conversion"),
    ("PM_ERR_TRUNC", -12363, "Truncation in value conversion"),
    ("PM_ERR_SIGN", -12364, "Negative value in conversion to unsigned"),
    ("PM_ERR_PROFILE", -12365, "Explicit instance identifier(s) required"),
    ("PM_ERR_IPC", -12366, "IPC protocol failure"),
    ("PM_ERR_TLS", -12414, "TLS protocol failure"),
    ("PM_ERR_EOF", -12368, "IPC channel closed"),
    ("PM_ERR_NOTHOST", -12369, "Operation requires context with host source of metrics"),
    ("PM_ERR_EOL", -12370, "End of PCP archive log"),
    ("PM_ERR_MODE", -12371, "Illegal mode specification"),
    ("PM_ERR_LABEL", -12372, "Illegal label record at start of a PCP archive log file"),
    ("PM_ERR_LOGREC", -12373, "Corrupted record in a PCP archive log"),
    ("PM_ERR_LOGFILE", -12375, "Missing PCP archive log file"),
    ("PM_ERR_NOTARCHIVE", -12374, "Operation requires context with archive source of metrics"),
    ("PM_ERR_NOCONTEXT", -12376, "Attempt to use an illegal context"),
    ("PM_ERR_PROFILESPEC", -12377, "NULL pmInDom with non-NULL instlist"),
    ("PM_ERR_PMID_LOG", -12378, "Metric not defined in the PCP archive log"),
    ("PM_ERR_INDOM_LOG", -12379, "Instance domain identifier not defined in the PCP archive log"),
    ("PM_ERR_INST_LOG", -12380, "Instance identifier not defined in the PCP archive log"),
    ("PM_ERR_NOPROFILE", -12381, "Missing profile - protocol botch"),
    ("PM_ERR_NOAGENT", -12386, "No PMCD agent for domain of request"),
    ("PM_ERR_PERMISSION", -12387, "No permission to perform requested operation"),
    ("PM_ERR_CONNLIMIT", -12388, "PMCD connection limit for this host exceeded"),
    ("PM_ERR_AGAIN", -12389, "Try again. Information not currently available"),
    ("PM_ERR_ISCONN", -12390, "Already Connected"),
    ("PM_ERR_NOTCONN", -12391, "Not Connected"),
    ("PM_ERR_NEEDPORT", -12392, "A non-null port name is required"),
    ("PM_ERR_NONLEAF", -12394, "Metric name is not a leaf in PMNS"),
    ("PM_ERR_PMDANOTREADY", -13394, "PMDA is not yet ready to respond to requests"),
    ("PM_ERR_PMDAREADY", -13393, "PMDA is now responsive to requests"),
    ("PM_ERR_BOTCH", -12442, "Internal inconsistency detected or assertion failed"),
    ("PM_ERR_TOOSMALL", -12443, "Insufficient elements in list"),
    ("PM_ERR_TOOBIG", -12444, "Result size exceeded"),
    ("PM_ERR_FAULT", -12445, "QA fault injected"),
    ("PM_ERR_THREAD", -12398, "Operation not supported for multi-threaded applications"),
    ("PM_ERR_NOCONTAINER", -12399, "Container not found"),
    ("PM_ERR_BADSTORE", -12400, "Bad input to pmstore"),
    ("PM_ERR_LOGOVERLAP", -12401, "Archives overlap in time"),
    ("PM_ERR_LOGHOST", -12402, "Archives differ by host"),
    ("PM_ERR_LOGCHANGETYPE", -12404, "The type of a metric has changed in an archive"),
    ("PM_ERR_LOGCHANGESEM", -12405, "The semantics of a metric has changed in an archive"),
    ("PM_ERR_LOGCHANGEINDOM", -12406, "The instance domain of a metric has changed in an archive"),
    ("PM_ERR_LOGCHANGEUNITS", -12407, "The units of a metric have changed in an archive"),
    ("PM_ERR_NEEDCLIENTCERT", -12408, "PMCD requires a client certificate"),
    ("PM_ERR_BADDERIVE", -12409, "Derived metric definition failed"),
    ("PM_ERR_NOLABELS", -12410, "No support for metric label metadata"),
    ("PM_ERR_PMDAFENCED", -12411, "PMDA is currently fenced and unable to respond to requests"),
    ("PM_ERR_RECTYPE", -12412, "Incorrect record type in an archive"),
    ("PM_ERR_FEATURE", -12413, "Archive feature not supported"),
    ("PM_ERR_NYI", -21344, "Functionality not yet implemented"),
)

PMErr = IntEnum("PMErr", [(name, code) for name, code, _ in _TABLE], module=__name__)
PMErr.__doc__ = "Every PM_ERR_* code, with PCP's name and number."

# Module-level constants with PCP's names: `from pmapi.errors import PM_ERR_PMID`.
globals().update(PMErr.__members__)

_MESSAGES: dict[int, str] = {code: message for _, code, message in _TABLE}

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
