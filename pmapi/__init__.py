"""pmapi: the shared core of pypcp, PCP 6's types, namespace, help, labels and PDU codec."""

#: This project's version.
__version__ = "0.1.0"
#: The PCP release whose wire protocol, files and output formats we follow.
PCP_COMPAT_VERSION = "6.0.3"
