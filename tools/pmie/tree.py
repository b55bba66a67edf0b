"""pmie's expression tree: what a parsed rule file holds, ready to evaluate.

Every node is a frozen dataclass.  Numbers are stored already scaled to pmie's
canonical units (bytes, seconds, single events), as pmie does when it reads a
constant such as ``10 Kbyte/sec``; ``units`` keeps the dimensions.  A node that
could not be parsed (pmie's NULL expression) is ``None`` in its parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Units:
    """Dimensions and scales of a constant, as in PCP's pmUnits."""

    dim_space: int = 0
    dim_time: int = 0
    dim_count: int = 0
    scale_space: int = 0
    scale_time: int = 0
    scale_count: int = 0

    @staticmethod
    def one(dimension: str, scale: int) -> Units:
        """A single unit word: dimension 1 at the given scale."""
        if dimension == "space":
            return Units(dim_space=1, scale_space=scale)
        if dimension == "time":
            return Units(dim_time=1, scale_time=scale)
        return Units(dim_count=1, scale_count=scale)

    def factor(self) -> float:
        """Multiplier to canonical units (pragmatics' scale())."""
        f = 1024.0 ** (self.dim_space * self.scale_space)
        if self.scale_time > 3:
            f *= 60.0 ** (self.dim_time * (self.scale_time - 3))
        else:
            f *= 1000.0 ** (self.dim_time * (self.scale_time - 3))
        return f * 10.0 ** (self.dim_count * self.scale_count)

    def canonical(self) -> Units:
        """Same dimensions at canonical scales (bytes, seconds, events)."""
        return Units(self.dim_space, self.dim_time, self.dim_count, 0, 3, 0)


NO_UNITS = Units()
CANONICAL_NONE = NO_UNITS.canonical()


@dataclass(frozen=True)
class Num:
    """A numeric constant, value in canonical units."""

    value: float
    units: Units = CANONICAL_NONE


@dataclass(frozen=True)
class Str:
    """A string constant."""

    text: str


@dataclass(frozen=True)
class Bool:
    """A truth constant (true/false)."""

    value: bool


@dataclass(frozen=True)
class Macro:
    """A numeric or truth-valued ``$name`` reference, with its value."""

    name: str
    value: Expr


@dataclass(frozen=True)
class Clock:
    """A value pmie keeps current: $delta, $minute, $hour, $day, ..."""

    name: str


@dataclass(frozen=True)
class Fetch:
    """A metric reference with its :host, #instance and @sample qualifiers."""

    metric: str
    hosts: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()
    samples: tuple[int, int] | None = None  # @N..M, ordered low..high


@dataclass(frozen=True)
class Unary:
    """neg ('-'), rate, instant, '!', rising, falling."""

    op: str
    arg: Expr | None


@dataclass(frozen=True)
class Binary:
    """Arithmetic (+ - * /), relational (== != < > <= >=) or && / ||."""

    op: str
    left: Expr | None
    right: Expr | None
    # (the scanner's line when it was parsed: where a domain error is reported)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Match:
    """match_inst / nomatch_inst: instances whose names fit a regex."""

    negate: bool
    pattern: str
    arg: Expr | None


@dataclass(frozen=True)
class Aggregate:
    """sum/avg/max/min/count over the inst, sample or host axis."""

    op: str
    axis: str
    arg: Expr | None
    # (the scanner's line when it was parsed: where a type error is reported)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Quantifier:
    """all/some/N% over the inst, sample or host axis."""

    op: str  # "all", "some" or "pcnt"
    axis: str
    arg: Expr | None
    percent: float | None = None


LOG_NOTICE = 5
DEFAULT_TAG = "pcp-pmie"


@dataclass(frozen=True)
class SyslogOptions:
    """A syslog action's -p priority (with facility bits) and -t tag."""

    priority: int = LOG_NOTICE
    tag: str = DEFAULT_TAG


@dataclass(frozen=True)
class Action:
    """shell/alarm/syslog/print/stomp with its strings and holdoff.

    For syslog, ``args`` are the message strings left after the -p/-t
    options, which ``syslog`` holds.
    """

    kind: str
    args: tuple[str, ...]
    holdoff: Num | None = None
    syslog: SyslogOptions | None = None


@dataclass(frozen=True)
class ActionPair:
    """Two actions run in sequence ('&') or as alternatives ('|')."""

    op: str
    left: Expr | None
    right: Expr | None


@dataclass(frozen=True)
class Rule:
    """condition -> action."""

    condition: Expr | None
    action: Expr | None


@dataclass(frozen=True)
class RuleSet:
    """ruleset r1 else r2 ... [unknown -> a] [otherwise -> a]."""

    rules: tuple[Expr | None, ...]
    unknown: Expr | None = None
    otherwise: Expr | None = None


Expr = (
    Num
    | Str
    | Bool
    | Macro
    | Clock
    | Fetch
    | Unary
    | Binary
    | Match
    | Aggregate
    | Quantifier
    | Action
    | ActionPair
    | Rule
    | RuleSet
)

CONSTANTS = (Num, Str, Bool)


@dataclass(frozen=True)
class Statement:
    """One parsed statement: a rule (named or not) or a variable."""

    name: str  # given, or pmie's generated expr_N
    expr: Expr
    variable: bool  # constant valued: defines $name for later statements
    line: int  # the scanner's line when the statement was bound (0 at end of input)
