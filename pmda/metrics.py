"""Declaring an agent's metrics, instance domains and refresh hooks.

An agent class declares each metric once, with the decorator `metric`, on the
method that supplies its values; the metric's name ties it to its PMID in the
agent's namespace file and to its help text.  Instance domains are `InDom`
objects: a fixed mapping, or a dynamic one whose refresh method returns the
current instances.  `refresh` marks a method that runs once per fetch before any
metric of its cluster is read, or, with `every=`, in the background so that a slow
source never delays a fetch (seed 004's caching PMDA).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units

# Short names for the types and semantics an agent declares with.
I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLOAT, DOUBLE, STRING = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
AGGREGATE, NOSUPPORT = PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_NOSUPPORT
COUNTER, INSTANT, DISCRETE = PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE

Instances = Mapping[int, str]


def instance_map(instances: Iterable[str] | Instances) -> dict[int, str]:
    """{inst: name} from a mapping, or from names numbered 0, 1, 2, ... in order."""
    if isinstance(instances, Mapping):
        return {int(inst): str(name) for inst, name in instances.items()}
    return dict(enumerate(map(str, instances)))


class InDom:
    """An instance domain: SERIAL within the agent's domain, and its instances.

    INSTANCES fixes them ({inst: name}, or names numbered from 0); without them the
    domain is dynamic, and the method decorated with `@indom.refresh` returns the
    current {inst: name} (or None for "unchanged") before each fetch or instance
    request that needs them.  LABELS are the domain's labels (PM_LABEL_INDOM).
    SORTED_VALUES gives fetched values in instance-id order (pmSortInstances), whatever
    order the instances are listed in.
    """

    def __init__(
        self,
        serial: int,
        instances: Iterable[str] | Instances | None = None,
        *,
        labels: Mapping[str, Any] | None = None,
        sorted_values: bool = False,
    ) -> None:
        self.serial = serial
        self.instances = None if instances is None else instance_map(instances)
        self.labels = dict(labels or {})
        self.sorted_values = sorted_values
        self.refresher: Callable[[Any], Instances | None] | None = None

    def refresh(self, method: Callable[[Any], Instances | None]) -> Callable:
        """Decorator: METHOD(agent) returns the current instances, or None if unchanged."""
        self.refresher = method
        return method

    def __repr__(self) -> str:
        return f"InDom({self.serial})"


class Metric:
    """One metric: its name and metadata, and the methods that fetch and store it.

    The fetch method takes (self) for a singular metric.  For a metric with an
    instance domain it takes (self, inst) and is called per instance, or takes
    (self) and returns a mapping {inst or instance name: value} for all of them.
    It returns a plain Python value, None for "no value now", or raises PMError
    with the PCP error it means (PM_ERR_INST, PM_ERR_AGAIN, ...).  A metric built
    without FETCH gets its values from its cluster's `refresh` method instead.
    """

    def __init__(
        self,
        name: str,
        type: int,
        sem: int = INSTANT,
        units: str | Units = "",
        indom: InDom | None = None,
        labels: Mapping[str, Any] | None = None,
        fetch: Callable | None = None,
    ) -> None:
        self.name = name
        self.type = PMType(type)
        self.sem = PMSem(sem)
        self.units = units if isinstance(units, Units) else Units.parse(units)
        self.indom = indom
        self.labels = dict(labels or {})
        self.fetcher = fetch
        self.per_instance = fetch is not None and len(inspect.signature(fetch).parameters) > 1
        self.storer: Callable | None = None

    def store(self, method: Callable) -> Metric:
        """Decorator: METHOD(agent, value) or, with an instance domain, (agent, inst, value)
        stores a value; it raises PMError to refuse one.  Returns the metric itself."""
        self.storer = method
        return self

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"


def metric(
    name: str,
    type: int,
    sem: int = INSTANT,
    units: str | Units = "",
    indom: InDom | None = None,
    labels: Mapping[str, Any] | None = None,
) -> Callable[[Callable], Metric]:
    """Decorator declaring metric NAME, whose values the decorated method supplies.

    UNITS are written as pminfo prints them ("Kbyte / sec", "msec", "count").
    """

    def declare(method: Callable) -> Metric:
        return Metric(name, type, sem, units, indom, labels, method)

    return declare


def refresh(cluster: int, *, every: float | None = None) -> Callable[[Callable], Callable]:
    """Decorator: run the method before the metrics of CLUSTER are fetched.

    Without EVERY it runs once per fetch that asks for any metric of the cluster.
    With EVERY (seconds) it runs in a background thread at that interval instead,
    and fetches answer from what it last left behind; it should build its new
    values and then assign them in one statement.

    It may return the values of the cluster's metrics that have no fetch method
    of their own (metrics declared as data, `Agent.metrics`): a mapping {metric
    name: value}, where a metric with an instance domain has a mapping {inst or
    instance name: value}; a PMError in place of one metric's value (or mapping)
    is that metric's error in this fetch.  Raising PMError gives the cluster's metrics that
    error for this fetch.  Several methods may refresh one cluster (each for
    some of its metrics): their values are merged, and an error from any of
    them is the cluster's.
    """

    def mark(method: Callable) -> Callable:
        method._pmda_refresh = (cluster, every)  # type: ignore[attr-defined]
        return method

    return mark


def refresh_of(method: object) -> tuple[int, float | None] | None:
    """The (cluster, every) that @refresh marked METHOD with; None if it is not a refresh."""
    return getattr(method, "_pmda_refresh", None)
