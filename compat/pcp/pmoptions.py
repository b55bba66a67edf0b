"""pmOptions: PCP's command-line options for Python scripts (``pmapi.pmOptions``), a thin
face over the process's one set of options in ``cpmapi.options`` (pmGetOptions).

A script describes its options (pmSetShortOptions, pmSetLongOption*, callbacks), then
``pmContext.fromOptions(options, sys.argv)`` parses them and opens the source they name;
the pmGetOption* methods read back what was given, in PCP's types (timeval, timespec,
lists of names, None for what was not given).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cpmapi import options as _c

_PM_MODE_INTERP = 1


def _timeval(sec: int | None, usec: int | None) -> Any:
    from .structures import timeval

    return None if sec is None else timeval(sec, usec or 0)


def _timespec(sec: int | None, nsec: int | None) -> Any:
    from .structures import timespec

    return None if sec is None else timespec(sec, nsec or 0)


class pmOptions:
    """Command-line options, short and long, for pmGetOptions, pmContext.fromOptions and
    pmUsageMessage; a new one starts the process's options afresh."""

    def __init__(
        self, short_options: str | None = None, short_usage: str | None = None, flags: int = 0
    ) -> None:
        _c.pmResetAllOptions()
        if short_options is not None:
            _c.pmSetShortOptions(short_options)
        if short_usage is not None:
            _c.pmSetShortUsage(short_usage)
        # a script's archive bounds are always worked out, unless it says otherwise
        _c.pmSetOptionFlags(flags if flags else _c.BOUNDARIES)
        self._delta = 1  # pmSetMode's delta for an archive (seconds) without -t
        self._mode = _PM_MODE_INTERP
        self._need_reset = False

    def __del__(self) -> None:
        if getattr(self, "_need_reset", False):
            _c.pmResetAllOptions()

    @property
    def mode(self) -> int:
        return self._mode

    @property
    def delta(self) -> int:
        return self._delta

    @property
    def need_reset(self) -> bool:
        return self._need_reset

    @need_reset.setter
    def need_reset(self, value: bool) -> None:
        self._need_reset = value

    @staticmethod
    def daemonize() -> None:
        """--daemonize: carry on in the background, re-parented to init."""
        return _c.pmServerStart()

    # --- the options asked for ----------------------------------------------------------

    def pmGetOptionFlags(self) -> int:
        return _c.pmGetOptionFlags()

    def pmSetOptionFlags(self, flags: int) -> None:
        return _c.pmSetOptionFlags(flags)

    def pmSetOptionContext(self, context: int) -> None:
        return _c.pmSetOptionContext(context)

    def pmGetOptionErrors(self) -> int:
        return _c.pmGetOptionErrors()

    def pmSetOptionErrors(self) -> None:
        """Count one more error (a script's own option was bad)."""
        return _c.pmSetOptionErrors(_c.pmGetOptionErrors() + 1)

    def pmSetShortUsage(self, short_usage: str) -> None:
        return _c.pmSetShortUsage(short_usage)

    def pmSetShortOptions(self, short_options: str) -> None:
        return _c.pmSetShortOptions(short_options)

    def pmSetOptionSamples(self, count: str) -> None:
        """The sample count, from a script's own option (text, checked as -s checks it)."""
        return _c.pmSetOptionSamples(count)

    def pmSetOptionInterval(self, interval: str) -> None:
        """The sampling interval, from a script's own option (pmParseInterval's text)."""
        return _c.pmSetOptionInterval(interval)

    def pmGetOperands(self) -> list[str] | None:
        """The arguments left after the options (None if none), once they are parsed."""
        return _c.pmGetOperands()

    def pmGetNonOptionsFromList(self, argv: list[str]) -> list[str] | None:
        """Deprecated: pmGetOperands."""
        return _c.pmGetNonOptionsFromList(argv)

    def pmNonOptionsFromList(self, argv: list[str]) -> list[str] | None:
        """Deprecated: pmGetOperands."""
        return _c.pmGetNonOptionsFromList(argv)

    def pmSetOptionCallback(self, func: Callable[[str, str | None, int], Any]) -> None:
        """FUNC(opt, optarg, index) for each option outside the standard set (or taken
        over): opt the letter, or the long name of an option without one."""
        return _c.pmSetOptionCallback(func)

    def pmSetOverrideCallback(self, func: Callable[[str], int]) -> None:
        """FUNC(opt) for each option: non-zero takes a standard letter for the script."""
        return _c.pmSetOverrideCallback(func)

    def pmSetLongOption(
        self, long_opt: str, has_arg: int, short_opt: str | None, argname: str, message: str
    ) -> int:
        """A long option of the script's own; its short letter, if any; the usage line's
        argument name and text."""
        return _c.pmSetLongOption(long_opt, has_arg, short_opt or "", argname, message)

    def pmSetLongOptionHeader(self, heading: str) -> None:
        """A section heading in the usage message."""
        return _c.pmSetLongOptionHeader(heading)

    def pmSetLongOptionText(self, text: str) -> None:
        """A line of text in the usage message."""
        return _c.pmSetLongOptionText(text)

    def pmSetLongOptionAlign(self) -> int:
        return _c.pmSetLongOptionAlign()

    def pmSetLongOptionArchive(self) -> int:
        return _c.pmSetLongOptionArchive()

    def pmSetLongOptionDebug(self) -> int:
        return _c.pmSetLongOptionDebug()

    def pmSetLongOptionGuiMode(self) -> None:
        """Not offered by PCP's Python API either."""
        return None

    def pmSetLongOptionHost(self) -> int:
        return _c.pmSetLongOptionHost()

    def pmSetLongOptionHostsFile(self) -> int:
        return _c.pmSetLongOptionHostsFile()

    def pmSetLongOptionSpecLocal(self) -> int:
        return _c.pmSetLongOptionSpecLocal()

    def pmSetLongOptionLocalPMDA(self) -> int:
        return _c.pmSetLongOptionLocalPMDA()

    def pmSetLongOptionOrigin(self) -> int:
        return _c.pmSetLongOptionOrigin()

    def pmSetLongOptionGuiPort(self) -> None:
        """Not offered by PCP's Python API either."""
        return None

    def pmSetLongOptionStart(self) -> int:
        return _c.pmSetLongOptionStart()

    def pmSetLongOptionSamples(self) -> int:
        return _c.pmSetLongOptionSamples()

    def pmSetLongOptionFinish(self) -> int:
        return _c.pmSetLongOptionFinish()

    def pmSetLongOptionInterval(self) -> int:
        return _c.pmSetLongOptionInterval()

    def pmSetLongOptionVersion(self) -> int:
        return _c.pmSetLongOptionVersion()

    def pmSetLongOptionTimeZone(self) -> int:
        return _c.pmSetLongOptionTimeZone()

    def pmSetLongOptionHostZone(self) -> int:
        return _c.pmSetLongOptionHostZone()

    def pmSetLongOptionHelp(self) -> int:
        return _c.pmSetLongOptionHelp()

    def pmSetLongOptionArchiveList(self) -> int:
        return _c.pmSetLongOptionArchiveList()

    def pmSetLongOptionArchiveFolio(self) -> int:
        return _c.pmSetLongOptionArchiveFolio()

    def pmSetLongOptionContainer(self) -> int:
        return _c.pmSetLongOptionContainer()

    def pmSetLongOptionHostList(self) -> int:
        return _c.pmSetLongOptionHostList()

    # --- what was given -----------------------------------------------------------------

    def pmGetOptionContext(self) -> int | None:
        return _c.pmGetOptionContext()

    def pmGetOptionHosts(self) -> list[str] | None:
        return _c.pmGetOptionHosts()

    def pmGetOptionArchives(self) -> list[str] | None:
        return _c.pmGetOptionArchives()

    def pmGetOptionAlignment(self) -> Any:
        """-A's interval as a timeval (None without -A)."""
        from .structures import timeval

        align = _c.pmGetOptionAlign_optarg()
        return None if align is None else timeval.fromInterval(align)

    def pmGetOptionHighResAlignment(self) -> Any:
        """-A's interval as a timespec (None without -A)."""
        from .structures import timespec

        align = _c.pmGetOptionAlign_optarg()
        return None if align is None else timespec.fromInterval(align)

    def pmGetOptionAlignOptarg(self) -> str | None:
        return _c.pmGetOptionAlign_optarg()

    def pmGetOptionFinishOptarg(self) -> str | None:
        return _c.pmGetOptionFinish_optarg()

    def pmGetOptionStart(self) -> Any:
        return _timeval(_c.pmGetOptionStart_sec(), _c.pmGetOptionStart_usec())

    def pmGetOptionHighResStart(self) -> Any:
        return _timespec(_c.pmGetOptionStart_sec(), _c.pmGetOptionStart_nsec())

    def pmGetOptionFinish(self) -> Any:
        return _timeval(_c.pmGetOptionFinish_sec(), _c.pmGetOptionFinish_usec())

    def pmGetOptionHighResFinish(self) -> Any:
        return _timespec(_c.pmGetOptionFinish_sec(), _c.pmGetOptionFinish_nsec())

    def pmGetOptionOrigin(self) -> Any:
        return _timeval(_c.pmGetOptionOrigin_sec(), _c.pmGetOptionOrigin_usec())

    def pmGetOptionHighResOrigin(self) -> Any:
        return _timespec(_c.pmGetOptionOrigin_sec(), _c.pmGetOptionOrigin_nsec())

    def pmGetOptionInterval(self) -> Any:
        return _timeval(_c.pmGetOptionInterval_sec(), _c.pmGetOptionInterval_usec())

    def pmGetOptionHighResInterval(self) -> Any:
        return _timespec(_c.pmGetOptionInterval_sec(), _c.pmGetOptionInterval_nsec())

    def pmGetOptionSamples(self) -> int | None:
        return _c.pmGetOptionSamples()

    def pmGetOptionHostZone(self) -> bool:
        return _c.pmGetOptionHostZone() != 0

    def pmGetOptionTimezone(self) -> str | None:
        return _c.pmGetOptionTimezone()

    def pmGetOptionContainer(self) -> str | None:
        return _c.pmGetOptionContainer()

    def pmGetOptionLocalPMDA(self) -> bool:
        return _c.pmGetOptionLocalPMDA() != 0

    # --- a source given by the script ---------------------------------------------------

    def pmSetOptionArchive(self, archive: str) -> None:
        return _c.pmSetOptionArchive(archive)

    def pmSetOptionArchiveList(self, archives: str) -> None:
        return _c.pmSetOptionArchiveList(archives)

    def pmSetOptionArchiveFolio(self, folio: str) -> None:
        return _c.pmSetOptionArchiveFolio(folio)

    def pmSetOptionContainer(self, container: str) -> None:
        return _c.pmSetOptionContainer(container)

    def pmSetOptionHost(self, host: str) -> None:
        return _c.pmSetOptionHost(host)

    def pmSetOptionHostList(self, hosts: str) -> None:
        return _c.pmSetOptionHostList(hosts)

    def pmSetOptionSpecLocal(self, spec: str) -> None:
        return _c.pmSetOptionSpecLocal(spec)

    def pmSetOptionLocalPMDA(self) -> None:
        return _c.pmSetOptionLocalPMDA()
