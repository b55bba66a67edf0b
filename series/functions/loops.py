"""The two loops query.c writes out in every function, written once here: per instance
over the samples (max, sum_inst, stdev_inst, ...) and per sample over the instances
(max_sample, sum_sample, ...).  Both run over the first sample's instances and pass
over any sample that holds another number of them: its values are never read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .valuesets import Node, Series, Value

__all__ = ["Grid", "by_instance", "by_sample", "results"]


@dataclass(frozen=True)
class Grid:
    """A series' counted samples as those loops read them: N_SAMPLES samples, N_INST
    instances (the first sample's count)."""

    series: Series
    n_samples: int
    n_inst: int

    @staticmethod
    def of(s: Series) -> Grid | None:
        """S's grid; None when it has no samples (or a function failed on it)."""
        if s.num_samples <= 0:
            return None
        return Grid(s, s.num_samples, len(s.slot(0)))

    def sample(self, j: int) -> list[Value]:
        return self.series.slot(j)

    def complete(self, j: int) -> bool:
        """Sample J holds the first sample's number of instances (the loops read no other)."""
        return len(self.series.slot(j)) == self.n_inst

    def column(self, k: int, start: int = 0) -> Iterator[tuple[int, Value]]:
        """Instance K of every complete sample from START on, with the sample's index."""
        for j in range(start, self.n_samples):
            if self.complete(j):
                yield j, self.series.slot(j)[k]

    def row(self, j: int, start: int = 0) -> Iterator[tuple[int, Value]]:
        """Sample J's instances from START on, with their indexes; none unless it is
        complete."""
        if self.complete(j):
            yield from enumerate(self.series.slot(j)[start:], start)


def results(node: Node) -> Iterator[tuple[Grid | None, Series]]:
    """Each series of a function's argument as a grid (None: no samples), with a new
    series for its result, listed in NODE's values (no samples until given some)."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        yield Grid.of(s), out


def by_instance(node: Node, pick: Callable[[Grid, int], Value | None]) -> list[Series]:
    """A per-instance function's results: for each series with samples one sample of
    PICK(grid, k) for each instance k (None leaves the instance out)."""
    for grid, out in results(node):
        if grid is not None:
            picks = (pick(grid, k) for k in range(grid.n_inst))
            out.num_samples, out.samples = 1, [[v for v in picks if v is not None]]
    return node.values


def by_sample(node: Node, pick: Callable[[Grid, int], list[Value]]) -> list[Series]:
    """A per-sample function's results: for each series with samples as many samples,
    sample j holding PICK(grid, j); an empty slot stays empty (PCP reads a missing
    instance there, and crashes)."""
    for grid, out in results(node):
        if grid is not None:
            out.num_samples = grid.n_samples
            out.samples = [pick(grid, j) if grid.sample(j) else [] for j in range(grid.n_samples)]
    return node.values
