"""Functions and arithmetic in pmseries queries (`rate(m[samples:3])`, `a + b`, `2 * m`,
`rescale(m, "min")`, ...), computed as PCP 6.0.3's libpcp_web computes them in query.c,
quirks included, so that /series/query answers what PCP's pmproxy answers.

How PCP does it, and so how this package does it:

* Every vector of the expression is a *data node*: its series (as `select` finds them),
  each with its descriptor (`HMGET pcp:desc:series:<sid> indom semantics source type
  units`, pmid taken as 511.0.0) and its metric name (`SMEMBERS
  pcp:metric.name:series:<sid>`).
* With a time window, each series' stream is read with the window the parser had read
  when it reached that vector (XREVRANGE for samples only, else XRANGE start..end), and
  samples are picked with the window of the *whole query* (its samples cap and interval,
  the query path's interval stepping without the extra nanosecond).  Picked samples keep
  the position they had in the stream reply; the others are empty slots, which the
  functions skip or stumble over as PCP's do (datanodes.py).
* The functions are applied bottom-up to these value sets (calculate.py), each exactly
  as its series_calculate_* does, with its number formats (rate `%.6f`; sums, averages,
  standard deviations, rescale, log, sqrt and arithmetic on floats `%e`; min, max, topk,
  percentiles copy the stored text) and its descriptor changes.
* The answer's series id is the SHA-1 of the expression's canonical text
  (`parse.canonical`, where a glob or a vector with qualifiers is named by the metric
  name of its first series).  Whenever the expression matched series and nothing went
  wrong, `pcp:desc:series:<id>` (pmid 511.0.0, source 20 zero bytes, the result's indom,
  semantics, type, units) and `pcp:expr:series:<id>` (`query` = canonical text) are
  written, window or not (exprhash.py).  Without a time window only that id is answered.
* Errors are reported with PCP's message (the first one, as pmproxy replies with the
  first); no keys are written then.

Where PCP 6.0.3 reads freed or uninitialised memory or crashes (see the notes on each
function), this package does what the code evidently meant, or refuses with the error
PCP would have reported.

The modules, in the order a query goes through them: valuesets (the query nodes and
their values), datanodes (reading the vectors' series), calculate (the table of the
functions, which are in inplace and reduce, the latter over loops, and of arithmetic,
in arith), exprhash (the id and descriptor), answer (the entry points, re-exported
here).  valuetext reads and writes value and descriptor text by type (printf's formats
included); C's numbers (strtod, sscanf, libm, casts) are purepcp.pmapi.cnumbers.
"""

from __future__ import annotations

from .answer import instances_of_expression, run_function, values_of_expression
from .valuesets import EXPR_PMID

__all__ = ["EXPR_PMID", "instances_of_expression", "run_function", "values_of_expression"]
