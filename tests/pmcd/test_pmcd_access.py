"""pmcd's access control (pmcd/access.py): PCP 6.0.3's host, user and group rules.

The examples are pmcd(1)'s ACCESS CONTROL section and what libpcp's access.c
does with them; the interop tests compare our lists with the ones the reference
pmcd logs, and our verdicts with what its clients are allowed to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import subprocess
from collections.abc import Iterator

import pytest

from purepcp.pmapi.errors import PM_ERR_CONNLIMIT, PM_ERR_PERMISSION
from purepcp.pmcd.access import (
    PMCD_OP_ALL,
    PMCD_OP_FETCH,
    PMCD_OP_NONE,
    PMCD_OP_STORE,
    AccessControl,
    Decision,
    Gatekeeper,
    HostEntry,
    Peer,
    PmcdOp,
)
from purepcp.pmcd.access_builder import AccessBuilder
from purepcp.pmcd.access_log import dump_lists
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.lookups import GroupAccount, Lookups, UserAccount
from tests.support.reference_pmcd import reference_pmcd, require_reference
from tests.support.waiting import wait_until

_HOSTS = {
    "clank": ["129.127.112.2"],
    "boing": ["129.127.114.9"],
    "dual": ["10.0.0.1", "fe80::1", "10.0.0.1"],
    "vm": ["127.0.0.1"] * 3,  # as glibc's getaddrinfo gives it: once per socket type
    "localhost": ["127.0.0.1"] * 3,
}
_USERS = {
    "alice": UserAccount("alice", 1000, (1000, 50)),
    "bob": UserAccount("bob", 1001, (1001,)),
}
_GROUPS = {
    "staff": GroupAccount("staff", 50, (1000,)),
    "bobs": GroupAccount("bobs", 1001, (1001,)),
}
LOOKUPS = Lookups(
    resolve=lambda name: _HOSTS.get(name, []),
    hostname=lambda: "vm",
    user=_USERS.get,
    group=_GROUPS.get,
)

CLANK, BOING, OTHER = "129.127.112.2", "129.127.114.9", "10.1.2.3"
LOOPBACK = "127.0.0.1"
ALICE = Peer.unix(1000, 1000)
BOB = Peer.unix(1001, 1001)

DEFAULT_ACCESS = 'disallow ".*" : store;\ndisallow ":*" : store;\nallow "local:*" : all;\n'


def access(text: str, lookups: Lookups = LOOKUPS) -> AccessControl:
    """The access lists a pmcd.conf with TEXT as its [access] section gives."""
    config = parse_config("a 1 pipe binary /x\n[access]\n" + text, lookups=lookups)
    assert config.ok, [str(m) for m in config.messages]
    return config.access


def verdict(control: AccessControl, peer: Peer | str) -> tuple[bool, bool, bool]:
    """(connect, fetch, store) for PEER, counting no connections."""
    d = control.decide(peer if isinstance(peer, Peer) else Peer(peer))
    return d.may_connect, d.may_fetch, d.may_store


ALL = (True, True, True)
FETCH_ONLY = (True, True, False)
STORE_ONLY = (True, False, True)
REFUSED = (False, False, False)


def show(entry: HostEntry) -> tuple[str, str, int, str]:
    """An entry as pmcd's dump shows it: address, mask, level and name."""
    if entry.family == "unix":
        return "/", "/", entry.level, entry.spec
    af, size = (socket.AF_INET, 4) if entry.family == "inet" else (socket.AF_INET6, 16)
    text = [socket.inet_ntop(af, v.to_bytes(size, "big")) for v in (entry.address, entry.mask)]
    return text[0], text[1], entry.level, entry.spec


def test_operations_have_pcps_names_and_bits() -> None:
    assert (PMCD_OP_NONE, PMCD_OP_FETCH, PMCD_OP_STORE, PMCD_OP_ALL) == (0, 1, 2, 3)
    assert PmcdOp.PMCD_OP_FETCH | PmcdOp.PMCD_OP_STORE == PmcdOp.PMCD_OP_ALL
    assert PMCD_OP_FETCH.name == "PMCD_OP_FETCH"


# ---------------------------------------------------------------------------
# defaults


def test_no_access_section_allows_everything() -> None:
    control = parse_config("a 1 pipe binary /x\n", lookups=LOOKUPS).access
    assert control == AccessControl()
    for peer in (OTHER, "2001:db8::1", LOOPBACK, Peer.unix(), ALICE):
        assert control.decide(peer if isinstance(peer, Peer) else Peer(peer)) == Decision(
            0, PMCD_OP_NONE
        )


def test_pcps_default_access_section() -> None:
    control = access(DEFAULT_ACCESS)
    assert verdict(control, OTHER) == FETCH_ONLY
    assert verdict(control, "2001:db8::1") == FETCH_ONLY
    assert verdict(control, "127.0.0.2") == FETCH_ONLY  # not *the* loopback address
    assert verdict(control, LOOPBACK) == ALL  # mapped to this host's own addresses
    assert verdict(control, "::1") == ALL
    assert verdict(control, Peer.unix()) == ALL
    assert [show(e) for e in control.hosts] == [
        ("127.0.0.1", "255.255.255.255", 0, "localhost"),
        ("/", "/", 1, "unix:"),
        ("0.0.0.0", "0.0.0.0", 4, ".*"),
        ("::", "::", 8, ":*"),
    ]


# ---------------------------------------------------------------------------
# host patterns


@pytest.mark.parametrize(
    ("pattern", "entries"),
    [
        ("boing", [("129.127.114.9", "255.255.255.255", 0, "boing")]),
        ("localhost", [("127.0.0.1", "255.255.255.255", 0, "localhost")]),
        ("129.127.112.2", [("129.127.112.2", "255.255.255.255", 0, "129.127.112.2")]),
        ("129.127.114.*", [("129.127.114.0", "255.255.255.0", 1, "129.127.114.*")]),
        ("129.*", [("129.0.0.0", "255.0.0.0", 3, "129.*")]),
        (".*", [("0.0.0.0", "0.0.0.0", 4, ".*")]),
        (
            "fe80::223:14ff:feaf:b62c",
            [("fe80::223:14ff:feaf:b62c", "ffff:" * 7 + "ffff", 0, "fe80::223:14ff:feaf:b62c")],
        ),
        # "::" in a pattern leaves the bits it stands for unmasked, as in PCP
        (
            "fe80::223:14ff:feaf:*",
            [("fe80::223:14ff:feaf:0", "ffff::ffff:ffff:ffff:0", 3, "fe80::223:14ff:feaf:*")],
        ),
        ("fe80:*", [("fe80::", "ffff::", 7, "fe80:*")]),
        (":*", [("::", "::", 8, ":*")]),
        ("unix:", [("/", "/", 1, "unix:")]),
        ("local:", [("127.0.0.1", "255.255.255.255", 0, "localhost"), ("/", "/", 1, "unix:")]),
        ("*", [("/", "/", 1, "unix:"), ("0.0.0.0", "0.0.0.0", 4, ".*"), ("::", "::", 8, ":*")]),
        (
            "dual",
            [
                ("10.0.0.1", "255.255.255.255", 0, "dual"),
                ("fe80::1", "ffff:" * 7 + "ffff", 0, "dual"),
            ],
        ),
        # pmcd(1) calls these invalid, but PCP 6.0.3 takes them
        ("129.127*", [("129.127.0.0", "255.255.0.0", 2, "129.127*")]),
        ("1..*", [("1.0.0.0", "255.255.0.0", 2, "1..*")]),
        ("4294967297.*", [("1.0.0.0", "255.0.0.0", 3, "4294967297.*")]),
    ],
)
def test_host_patterns(pattern: str, entries: list[tuple[str, str, int, str]]) -> None:
    builder = AccessBuilder(LOOKUPS)
    assert builder.add_host(pattern, PMCD_OP_ALL, PMCD_OP_NONE, 0) == (0, [])
    assert [show(e) for e in builder.hosts] == entries


@pytest.mark.parametrize(
    ("pattern", "status", "note"),
    [
        ("*.melbourne", -errno.EINVAL, 'Wildcard in host pattern "*.melbourne" is not at the end'),
        ("129.127.*.*", -errno.EINVAL, 'Wildcard in host pattern "129.127.*.*" is not at the end'),
        ("129.*.114.9", -errno.EINVAL, 'Wildcard in host pattern "129.*.114.9" is not at the end'),
        (
            "fe80::223:14ff:*:*",
            -errno.EINVAL,
            'Wildcard in host pattern "fe80::223:14ff:*:*" is not at the end',
        ),
        ("fe80*", -errno.EINVAL, "Bad IP address wildcard, fe80*"),
        ("1.2.3.4.*", -errno.EINVAL, 'Too many dots in host pattern "1.2.3.4.*"'),
        ("256.*", -errno.EINVAL, "Bad IP address wildcard, 256.*"),
        ("-1.*", -errno.EINVAL, "Bad IP address wildcard, -1.*"),
        ("1::2::*", -errno.EINVAL, 'Too many empty regions in host pattern "1::2::*"'),
        ("1:2:3:4:5:6:7:8:*", -errno.EINVAL, 'Too many colons in host pattern "1:2:3:4:5:6:7:8:*"'),
        (":1:*", -errno.EINVAL, "Bad IPv6 address wildcard, :1:*"),
        ("10000:*", -errno.EINVAL, "Bad IPv6 address wildcard, 10000:*"),
        ("::1:*", -errno.EINVAL, "__pmStringToSockAddr failure"),
        ("nosuchhost", -errno.EHOSTUNREACH, "__pmGetAddrInfo(nosuchhost), Unknown host"),
        ("LOCAL:", -errno.EHOSTUNREACH, "__pmGetAddrInfo(LOCAL:), Unknown host"),
    ],
)
def test_bad_host_patterns(pattern: str, status: int, note: str) -> None:
    builder = AccessBuilder(LOOKUPS)
    assert builder.add_host(pattern, PMCD_OP_ALL, PMCD_OP_NONE, 0) == (status, [f"Error: {note}"])
    assert builder.hosts == []


def test_unix_paths_are_ignored_with_a_warning() -> None:
    builder = AccessBuilder(LOOKUPS)
    assert builder.add_host("unix:/foo/bar", PMCD_OP_ALL, PMCD_OP_NONE, 0) == (
        0,
        ['Warning: Ignoring the path in host pattern "/foo/bar"'],
    )
    assert builder.add_host("unix://*", PMCD_OP_ALL, PMCD_OP_NONE, 0) == (0, [])
    assert [show(e) for e in builder.hosts] == [("/", "/", 1, "unix:")]


def test_localhost_needs_this_hosts_name_to_resolve() -> None:
    only_localhost = Lookups(
        resolve=lambda n: ["127.0.0.1"] if n == "localhost" else [], hostname=lambda: "vm"
    )
    builder = AccessBuilder(only_localhost)
    # this host's id falls back to localhost's address, but the statement uses the name
    assert builder.add_host("local:", PMCD_OP_ALL, PMCD_OP_NONE, 0) == (
        0,
        ["Error: __pmGetAddrInfo(vm), Unknown host"],
    )
    assert [show(e) for e in builder.hosts] == [("/", "/", 1, "unix:")]
    nothing = AccessBuilder(Lookups(resolve=lambda n: [], hostname=lambda: "vm"))
    assert nothing.add_host("localhost", PMCD_OP_ALL, PMCD_OP_NONE, 0) == (
        -errno.EHOSTDOWN,
        [
            "Error: __pmGetAddrInfo failure for both vm and localhost",
            "Error: Can't get host name/IP address, giving up",
        ],
    )


# ---------------------------------------------------------------------------
# precedence


def test_more_specific_host_statements_override() -> None:
    # pmcd(1): "allow host clank : all" overrides "disallow host 129.127.112.* : all
    # except fetch", which in turn overrides "disallow host * : all"
    control = access(
        "allow host clank : all;\n"
        "disallow host 129.127.112.* : all except fetch;\n"
        "disallow host * : all;\n"
    )
    assert verdict(control, CLANK) == ALL
    assert verdict(control, "129.127.112.9") == FETCH_ONLY
    assert verdict(control, BOING) == REFUSED
    assert verdict(control, "2001:db8::1") == REFUSED
    assert verdict(control, Peer.unix()) == REFUSED
    assert control.decide(Peer(BOING)) == Decision(PM_ERR_PERMISSION, PMCD_OP_ALL)


def test_a_statement_overrides_only_the_operations_it_names() -> None:
    control = access("disallow * : store;\nallow 10.1.* : fetch;\n")
    assert verdict(control, OTHER) == FETCH_ONLY
    control = access("disallow 10.* : fetch;\nallow 10.1.2.3 : store;\n")
    assert verdict(control, OTHER) == STORE_ONLY
    assert verdict(control, "10.9.9.9") == STORE_ONLY  # store never spoken of: allowed
    assert verdict(control, "11.0.0.1") == ALL  # no statement matches


def test_contradicting_statements_about_one_host_clash() -> None:
    # pmcd(1)'s example: clank is 129.127.112.2
    config = parse_config(
        "a 1 pipe binary /x\n[access]\n"
        "allow host clank : fetch, store;\n"
        "disallow host 129.127.112.2 : all except fetch;\n",
        lookups=LOOKUPS,
    )
    assert not config.ok
    assert [str(m) for m in config.messages] == [
        "Error: Permission clash for 129.127.112.2 with earlier statement for clank",
        "pmcd config[line 4]: Warning: access control error for host '129.127.112.2': "
        "Invalid argument",
    ]
    # statements that agree where they overlap merge
    control = access("allow clank : fetch;\ndisallow 129.127.112.2 : store;\n")
    assert verdict(control, CLANK) == FETCH_ONLY and len(control.hosts) == 1
    # a different connection limit for the same host also clashes
    assert not parse_config(
        "a 1 pipe binary /x\n[access]\nallow clank : maximum 2 connections;\n"
        "allow clank : maximum 3 connections;\n",
        lookups=LOOKUPS,
    ).ok


def test_pcp_compares_whole_deny_masks_when_statements_overlap() -> None:
    # they agree about fetch (allowed), the only operation both name... and still clash
    builder = AccessBuilder(LOOKUPS)
    assert builder.add_host(CLANK, PMCD_OP_FETCH, PMCD_OP_NONE, 0)[0] == 0
    status, notes = builder.add_host(CLANK, PMCD_OP_ALL, PMCD_OP_STORE, 0)
    assert status == -errno.EINVAL and "Permission clash" in notes[0]


def test_a_partial_clash_is_only_a_note() -> None:
    # "*" is three entries; only its unix one clashes with "local:*", and the
    # others are added: pmcd starts, and local clients keep their access
    config = parse_config(
        'a 1 pipe binary /x\n[access]\nallow "local:*" : all;\ndisallow * : all;\n',
        lookups=LOOKUPS,
    )
    assert config.ok
    assert [str(m) for m in config.messages] == [
        "Error: Permission clash for unix: with earlier statement for unix:"
    ]
    assert verdict(config.access, Peer.unix()) == ALL
    assert verdict(config.access, LOOPBACK) == ALL
    assert verdict(config.access, OTHER) == REFUSED


def test_unix_clients_match_only_unix_entries() -> None:
    control = access('disallow "unix:" : store;\nallow 10.* : fetch;\n')
    assert verdict(control, Peer.unix()) == FETCH_ONLY
    assert verdict(control, OTHER) == ALL
    assert verdict(access("disallow .* : all;\n"), Peer.unix()) == ALL


# ---------------------------------------------------------------------------
# connection limits


def test_man_page_connection_limits() -> None:
    control = access(
        "allow host clank : all, maximum 5 connections;\n"
        "allow host * : all except store, maximum 2 connections;\n"
    )
    # boing first (counts against "*"), then clank (checked against its own limit,
    # but counted against both): now "*" is full for everyone but clank
    gate = Gatekeeper(control)
    assert gate.admit(Peer(BOING)) == Decision(0, PMCD_OP_STORE)
    assert gate.admit(Peer(CLANK)) == Decision(0, PMCD_OP_NONE)
    assert gate.admit(Peer(BOING)) == Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
    assert gate.admit(Peer(CLANK)).may_connect
    # three from boing: the third is refused; clank is still let in
    gate = Gatekeeper(control)
    assert [gate.admit(Peer(BOING)).status for _ in range(3)] == [0, 0, PM_ERR_CONNLIMIT]
    assert gate.admit(Peer(CLANK)).may_connect
    # "*" now counts three: two must leave before boing fits again
    gate.del_client(BOING)
    assert not gate.admit(Peer(BOING)).may_connect
    gate.del_client(CLANK)
    assert gate.admit(Peer(BOING)).may_connect


def test_the_most_specific_match_decides_the_limit_even_without_one() -> None:
    # pmcd(1) says the limit checked is the most specific match *with a limit*;
    # PCP checks the most specific match, so clank is never limited here
    control = access("allow clank : all;\nallow * : all, maximum 1 connections;\n")
    gate = Gatekeeper(control)
    assert all(gate.admit(Peer(CLANK)).may_connect for _ in range(4))
    # ... but clank's connections still fill "*"
    assert gate.admit(Peer(BOING)).status == PM_ERR_CONNLIMIT


def test_a_loopback_client_counts_once_per_local_address() -> None:
    # this host's name resolves to 127.0.0.1 three times (glibc: one per socket type)
    control = access("allow localhost : all, maximum 2 connections;\n")
    gate = Gatekeeper(control)
    assert gate.admit(Peer(LOOPBACK)) == Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
    assert gate.host_counts == [2]  # taken by the refused client, never given back
    gate = Gatekeeper(access("allow localhost : all, maximum 3 connections;\n"))
    assert gate.admit(Peer(LOOPBACK)).may_connect and gate.host_counts == [3]
    assert gate.admit(Peer(LOOPBACK)).status == PM_ERR_CONNLIMIT
    gate.del_client(LOOPBACK)
    assert gate.host_counts == [0]


def test_a_loopback_client_is_refused_when_this_host_has_no_address() -> None:
    lookups = Lookups(resolve=lambda n: [], hostname=lambda: "vm")
    control = access("allow 10.* : all;\n", lookups)
    assert control.local_addresses == ()
    assert control.decide(Peer(LOOPBACK)) == Decision(PM_ERR_PERMISSION, PMCD_OP_NONE)


def test_decide_counts_nothing() -> None:
    control = access("allow clank : all, maximum 1 connections;\n")
    assert all(control.decide(Peer(CLANK)).may_connect for _ in range(3))


# ---------------------------------------------------------------------------
# users and groups


def test_user_statements_deny_everyone_else() -> None:
    control = access("allow user alice : all;\n")
    assert control.creds_required
    assert verdict(control, ALICE) == ALL
    assert control.decide(BOB) == Decision(PM_ERR_PERMISSION, PMCD_OP_ALL)
    # no credentials (a TCP client that did not authenticate): refused
    assert control.decide(Peer(OTHER)) == Decision(PM_ERR_PERMISSION, PMCD_OP_NONE)
    assert verdict(control, Peer.unix()) == REFUSED


def test_user_wildcard() -> None:
    control = access("allow user alice : all;\nallow user * : all except store;\n")
    assert verdict(control, ALICE) == ALL
    assert verdict(control, BOB) == FETCH_ONLY
    # a wildcard that speaks only of fetch allows store too: it was never mentioned
    assert verdict(access("allow user * : fetch;\n"), BOB) == ALL


def test_a_user_entry_also_matches_a_client_whose_group_is_one_of_the_users() -> None:
    control = access("allow user alice : all;\n")
    assert verdict(control, Peer.unix(2000, 50)) == ALL  # gid 50 is one of alice's groups
    assert verdict(control, Peer.unix(2000, 51)) == REFUSED


def test_groups() -> None:
    control = access("allow group staff : fetch;\ndisallow group bobs : store;\n")
    assert verdict(control, ALICE) == ALL  # alice (uid 1000) is in staff
    assert verdict(control, BOB) == FETCH_ONLY
    assert verdict(control, Peer.unix(3000, 3000)) == REFUSED


def test_user_and_group_lists_must_both_admit_the_client() -> None:
    control = access("allow group bobs : all;\nallow user alice : all;\n")
    assert verdict(control, ALICE) == REFUSED  # alice is in no allowed group
    assert verdict(control, BOB) == REFUSED  # bob is no allowed user
    control = access("allow group bobs, staff : all;\nallow user alice, bob : all;\n")
    assert verdict(control, ALICE) == ALL and verdict(control, BOB) == ALL


def test_user_and_host_denials_add_up() -> None:
    control = access("disallow .* : store;\nallow user alice : all;\n")
    assert verdict(control, Peer("10.1.1.1", 1000, 1000)) == FETCH_ONLY
    assert verdict(control, ALICE) == ALL  # unix socket: no host entry matches


def test_account_limits_and_counting() -> None:
    control = access("allow user alice : all, maximum 1 connections;\n")
    gate = Gatekeeper(control)
    assert gate.admit(ALICE).may_connect
    assert gate.admit(ALICE) == Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
    gate.del_account(1000, 1000)  # ours: PCP 6.0.3 never gives account counts back
    assert gate.admit(ALICE).may_connect


def test_one_connection_can_count_twice_against_an_account() -> None:
    control = access(
        "allow user alice : all, maximum 9 connections;\n"
        "allow group staff : all, maximum 9 connections;\n"
    )
    gate = Gatekeeper(control)
    gate.admit(Peer.unix(1000, 1000))
    assert (gate.user_counts, gate.group_counts) == ([0, 1], [0, 1])
    gate.admit(Peer.unix(1000, 50))  # primary group staff: counted via user and group
    assert (gate.user_counts, gate.group_counts) == ([0, 3], [0, 3])


def test_a_wildcard_accounts_limit_never_bites() -> None:
    gate = Gatekeeper(access("allow user * : all, maximum 1 connections;\n"))
    assert all(gate.admit(BOB).may_connect for _ in range(3))


def test_account_statements() -> None:
    builder = AccessBuilder(LOOKUPS)
    assert builder.add_user("nobody", PMCD_OP_ALL, PMCD_OP_NONE, 0) == (
        -errno.EINVAL,
        ['Error: Failed to lookup user "nobody": No such file or directory'],
    )
    assert builder.users == []
    assert builder.add_user("alice", PMCD_OP_FETCH, PMCD_OP_NONE, 0) == (0, [])
    assert builder.add_user("alice", PMCD_OP_FETCH, PMCD_OP_FETCH, 0) == (
        -errno.EINVAL,
        ["Error: Permission clash for user alice with earlier statement"],
    )
    assert builder.add_group("staff", PMCD_OP_STORE, PMCD_OP_STORE, 0) == (0, [])
    assert [u.name for u in builder.users] == ["*", "alice"]
    assert [(g.name, g.ident, g.members) for g in builder.groups] == [
        ("*", None, ()),
        ("staff", 50, (1000,)),
    ]


# ---------------------------------------------------------------------------
# pmcd's log of the lists


def test_dump_has_pcps_layout() -> None:
    control = access('allow "192.168.*" : fetch, maximum 4 connections;\nallow user alice : all;\n')
    names = {"user_name": {1000: "alice"}.get, "group_name": {1000: "alice", 50: "staff"}.get}
    assert dump_lists(control, **names) == (
        "\n"
        "Host access list:\n"
        "00 01 Cur/MaxCons host-spec                               host-mask"
        "                               lvl host-name\n"
        "== == =========== ======================================= ======="
        "================================ === ==============\n"
        " y        0     4 192.168.0.0                             255.255.0.0"
        "                               2 192.168.*\n"
        "User access list:\n"
        "00 01 Cur/MaxCons     uid user-name                       group-list\n"
        "== == =========== ======= =============================== "
        "==========================================================\n"
        " y  y     0     0    1000 alice                           1000(alice),50(staff)\n"
        " n  n     0     0       * *                              \n"
        "Group access list empty: group-based access control turned off\n"
    )


# ---------------------------------------------------------------------------
# against the reference pmcd

_PMCD_DSO = "pmcd 2 dso pmcd_init /var/lib/pcp/pmdas/pmcd/pmda_pmcd.so"


@pytest.mark.interop
@pytest.mark.parametrize(
    "rules",
    [
        DEFAULT_ACCESS,
        'disallow ".*" : store;\nallow "192.168.*" : fetch, maximum 4 connections;\n'
        'allow "fe80::223:14ff:feaf:*", "1:2:3:4:5:6:7:*", "10.1.2.*", 10.1.2.0 : '
        "all except store;\nallow localhost : fetch;\ndisallow 127.0.0.1 : store;\n"
        "disallow * : store;\n",
        # a `*` after named accounts makes PCP 6.0.3 list an uninitialised entry: first
        "allow group * : all except store;\nallow user * : fetch;\n"
        "allow user root : fetch, maximum 2 connections;\nallow group root : fetch;\n"
        "disallow user root : store;\n",
    ],
)
def test_lists_match_reference_pmcd_log(rules: str) -> None:
    require_reference()
    conf = [_PMCD_DSO, "[access]", *rules.splitlines()]
    ours = parse_config("\n".join(conf) + "\n")  # the system's lookups, as pmcd's
    assert ours.ok, [str(m) for m in ours.messages]
    with reference_pmcd(conf) as pmcd:
        # pmcd has greeted a client, so its start-up log (with the lists) is complete
        log = pmcd.log()
    logged = re.search(r"\n(Host access list.*?\n)\n", log, re.S)
    assert logged, f"pmcd logged no access lists:\n{log}"
    assert dump_lists(ours.access).strip("\n") + "\n" == logged.group(1)


def _outcomes(pmcd, host: str) -> tuple[bool, bool]:
    """Whether pminfo can fetch, and pmstore store, through HOST."""

    def ok(*argv: str) -> bool:
        run = subprocess.run(
            [argv[0], "-h", host, *argv[1:]], env=pmcd.env, capture_output=True, timeout=60
        )
        return run.returncode == 0

    return ok("pminfo", "-f", "pmcd.control.timeout"), ok("pmstore", "pmcd.control.timeout", "5")


@pytest.mark.interop
@pytest.mark.parametrize(
    "rules",
    [
        "",
        DEFAULT_ACCESS,
        "disallow localhost : store;\n",
        "disallow * : store;\nallow localhost : all;\n",
        "allow localhost : fetch;\ndisallow * : all;\n",
        "disallow 127.* : all;\nallow localhost : store;\n",
        'disallow "unix:" : all;\n',
        "allow user root : all;\n",
        "disallow user root : store;\n",
        "allow group root : fetch;\nallow user * : all except store;\n",
        "allow user nobody : all;\n",
    ],
)
def test_verdicts_match_reference_pmcd(rules: str) -> None:
    require_reference("pminfo", "pmstore")
    conf = [_PMCD_DSO, *(["[access]", *rules.splitlines()] if rules else [])]
    control = parse_config("\n".join(conf) + "\n").access
    with reference_pmcd(conf) as pmcd:
        tcp = _outcomes(pmcd, pmcd.host)
        unix = _outcomes(pmcd, "unix:" + os.path.join(pmcd.tmp, "run", "pmcd.socket"))
    for peer, seen in ((Peer(LOOPBACK), tcp), (Peer.unix(os.getuid(), os.getgid()), unix)):
        d = control.decide(peer)
        assert (d.may_fetch, d.may_fetch and d.may_store) == seen, (peer, d)


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen]]:
    """Long-running clients started by a test, stopped afterwards."""
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.interop
@pytest.mark.parametrize("limit", [3, 5, 6])
def test_loopback_connection_limit_matches_reference_pmcd(limit: int, holder) -> None:
    require_reference("pminfo", "pmval")
    conf = [_PMCD_DSO, "[access]", f"allow localhost : all, maximum {limit} connections;"]
    gate = Gatekeeper(parse_config("\n".join(conf) + "\n").access)
    expected = [gate.admit(Peer(LOOPBACK)).may_connect for _ in range(2)]
    with reference_pmcd(conf) as pmcd:
        # the helper's own probe connection counts until pmcd has closed its end
        port = int(pmcd.host.rsplit(":", 1)[1])
        wait_until("pmcd to close the probe's connection", lambda: not _server_sockets(port))
        first = subprocess.Popen(
            ["pmval", "-h", pmcd.host, "-t", "0.2", "pmcd.numclients"],
            env=pmcd.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        holder.append(first)
        # pmval prints its header once connected (and exits if it is refused)
        header = "".join(_lines_until(first, "host:"))
        second = pmcd.run("pminfo", "-f", "pmcd.numclients").returncode == 0
    assert expected[0] and "host:" in header
    assert second == expected[1]


def _server_sockets(port: int) -> list[str]:
    """The TCP connections whose local end is PORT and still open there (neither the
    listening socket nor one in TIME_WAIT), from /proc/net/tcp: a server's end of a
    connection its client closed stays (CLOSE_WAIT) until the server closes it."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local, state = fields[1], fields[3]
                if int(local.rsplit(":", 1)[1], 16) == port and state not in ("0A", "06"):
                    found.append(line)
    return found


def _lines_until(proc: subprocess.Popen, prefix: str) -> Iterator[str]:
    """PROC's output lines up to the first starting with PREFIX (or its end)."""
    for line in proc.stdout:
        yield line
        if line.startswith(prefix):
            return
