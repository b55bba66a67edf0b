"""pmapi: the shared core of purepcp, PCP 6's types, namespace, help, labels and PDU codec."""

#: This project's distribution name (as pip knows it) and version.
DISTRIBUTION = "purepcp"
__version__ = "0.1.0"
#: The PCP release whose wire protocol, files and output formats we follow.
PCP_COMPAT_VERSION = "6.0.3"


def version_line(prog: str) -> str:
    """What every command's -V/--version prints: its name, our version, the PCP it follows."""
    return f"{prog} version {__version__} ({DISTRIBUTION}, for PCP {PCP_COMPAT_VERSION})"


_progname: str | None = None


def set_progname(name: str) -> None:
    """pmSetProgname: the name libpcp's own messages begin with (each tool sets it)."""
    global _progname
    _progname = name


def progname() -> str:
    """pmGetProgname: the name set, else the program's file name (as libpcp defaults it)."""
    if _progname is not None:
        return _progname
    import os
    import sys

    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
