"""How many examples a hypothesis test asks for, under the loaded profile.

tests/conftest.py registers two profiles, chosen by $HYPOTHESIS_PROFILE: `ci` (the
default, hypothesis's 100 examples a test) and `dev` (10).  A test whose property
deserves more or fewer than the profile's count says so relative to `ci`:
``@settings(max_examples=examples(300))`` is 300 examples under `ci` and 30 under `dev`
(a count written as a bare number would override every profile, and `dev` would no
longer be quick)."""

from __future__ import annotations

from hypothesis import settings

#: the examples a test gets under the `ci` profile (hypothesis's own default)
CI_EXAMPLES = 100


def examples(n: int) -> int:
    """N examples under `ci`; under another profile, N scaled as its max_examples is to
    `ci`'s (at least 1)."""
    return max(1, n * settings.default.max_examples // CI_EXAMPLES)
