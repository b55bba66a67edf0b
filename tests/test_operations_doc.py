"""docs/operations.md's access-control recipes parse and do what the page says they do."""

from __future__ import annotations

import re
from pathlib import Path

from purepcp.pmcd.access import Gatekeeper, Peer
from purepcp.pmcd.config import parse_config

DOC = Path(__file__).resolve().parents[1] / "docs" / "operations.md"
AGENT = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"


def recipes() -> list[str]:
    """Each indented [access] block of the page, as pmcd.conf text."""
    blocks = re.findall(r"\n    \[access\]\n((?:    .*\n)+)", DOC.read_text())
    return ["[access]\n" + re.sub(r"(?m)^    ", "", block) for block in blocks]


def decisions(access: str) -> dict[str, tuple[bool, bool]]:
    """(may fetch, may store) for a unix-socket client and three addresses."""
    config = parse_config(AGENT + access)
    assert config.ok and not config.messages, [str(m) for m in config.messages]
    gate = Gatekeeper(config.access)
    peers = {
        "unix": Peer.unix(1000, 1000),
        "127.0.0.1": Peer("127.0.0.1"),
        "192.168.1.7": Peer("192.168.1.7"),
        "10.1.2.3": Peer("10.1.2.3"),
    }
    found = {}
    for name, peer in peers.items():
        decision = gate.admit(peer, commit=False)
        denied = int(decision.deny) if decision.status == 0 else 3
        found[name] = (not denied & 1, not denied & 2)
    return found


def test_the_page_has_three_recipes():
    assert len(recipes()) == 3


def test_pcps_default_stores_only_locally():
    assert decisions(recipes()[0]) == {
        "unix": (True, True),
        "127.0.0.1": (True, True),  # "local:*" is the unix socket and localhost
        "192.168.1.7": (True, False),
        "10.1.2.3": (True, False),
    }


def test_local_all_subnet_fetch_others_nothing():
    assert decisions(recipes()[1]) == {
        "unix": (True, True),
        "127.0.0.1": (True, True),
        "192.168.1.7": (True, False),
        "10.1.2.3": (False, False),
    }


def test_connection_limit_recipe_parses():
    config = parse_config(AGENT + recipes()[2])
    assert config.ok and not config.messages
