"""The agent framework: write a PMDA by subclassing Agent (see docs/agents.md)."""

from purepcp.pmapi.errors import PMError

from .agent import Agent
from .clients import Client
from .metrics import (
    AGGREGATE,
    COUNTER,
    DISCRETE,
    DOUBLE,
    FLOAT,
    I32,
    I64,
    INSTANT,
    NOSUPPORT,
    STRING,
    U32,
    U64,
    InDom,
    Metric,
    metric,
    refresh,
)
from .serve import main

__all__ = [
    "AGGREGATE",
    "COUNTER",
    "DISCRETE",
    "DOUBLE",
    "FLOAT",
    "I32",
    "I64",
    "INSTANT",
    "NOSUPPORT",
    "STRING",
    "U32",
    "U64",
    "Agent",
    "Client",
    "InDom",
    "Metric",
    "PMError",
    "main",
    "metric",
    "refresh",
]
