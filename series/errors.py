"""SeriesError: a series request that cannot be answered, with PCP's text.

Its own module so that pmproxy's configuration (the query limits) names it without
loading the reader and the time-window parser at start.
"""

from __future__ import annotations


class SeriesError(ValueError):
    """A request that cannot be answered: MESSAGE is PCP's text."""
