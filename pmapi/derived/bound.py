"""A derived metric once bound in a context: what binding (bind.py) gives the layer
that answers for derived metrics (context.py).  Apart so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..desc import Desc

if TYPE_CHECKING:
    from .evaluate import Plan


@dataclass(frozen=True)
class Bound:
    """A derived metric bound in one context: its descriptor and its plan (None: it
    never has values, as anon())."""

    desc: Desc
    plan: Plan | None
    operands: tuple[int, ...]  # the real PMIDs its values need, each once
