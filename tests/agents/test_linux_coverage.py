"""Which of PCP's pmdalinux metrics our linux agent serves: all but a short list, each with
its reason (issue 23: "a test lists any pmdalinux name we do not serve").

The reference is the running agent, not a copy of its namespace: PCP 6.0.3's pmcd with
pmdalinux as a DSO, asked by PCP's pminfo for every name with a domain-60 PMID.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from purepcp.agents.linux.catalog import BY_NAME
from tests.support.reference_pmcd import reference_pmcd, require_reference

LINUX_DSO = "/var/lib/pcp/pmdas/linux/pmda_linux.so"

#: pmdalinux's names we do not serve, and why.
NOT_SERVED: dict[str, str] = {}


@pytest.fixture(scope="module")
def pmdalinux_names() -> Iterator[set[str]]:
    """Every metric name pmdalinux serves, from a private reference pmcd."""
    require_reference("pminfo")
    if not os.path.exists(LINUX_DSO):
        pytest.skip(f"reference PCP 6 is not installed: no {LINUX_DSO}")
    with reference_pmcd([f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}"]) as pmcd:
        out = pmcd.run("pminfo", "-m")
        assert out.returncode == 0, out.stderr
    yield {line.split()[0] for line in out.stdout.splitlines() if " PMID: 60." in line}


@pytest.mark.interop
def test_every_pmdalinux_name_served_but_the_listed(pmdalinux_names: set[str]) -> None:
    not_served = pmdalinux_names - set(BY_NAME)
    assert sorted(not_served - set(NOT_SERVED)) == [], "served by pmdalinux, not by ours"
    assert sorted(set(NOT_SERVED) - not_served) == [], "listed as not served, but served"
    assert all(reason for reason in NOT_SERVED.values())


@pytest.mark.interop
def test_we_serve_no_name_pmdalinux_lacks(pmdalinux_names: set[str]) -> None:
    assert sorted(set(BY_NAME) - pmdalinux_names) == []
