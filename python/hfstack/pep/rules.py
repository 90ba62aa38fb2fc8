#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The host side of interception: the nftables table that sends TCP into the HF-PEP
(nat REDIRECT for this machine's connections, TPROXY for forwarded ones), the policy
routing TPROXY needs, and this host's own addresses (`ip`), which the proxy refuses as
destinations."""

import logging

from .endpoint import proxy_error

log = logging.getLogger(__name__)

OWN_MARK = 0x5066              # the far proxy's own connections: never intercepted again
RULES_TABLE = "hfstack_pep"
TPROXY_MARK = 0x5067           # packets nftables TPROXY took: routed locally by
TPROXY_TABLE = 5066            # this table's "local default dev lo" route
ROUTE_PROTOCOL = 102           # marks the ip rules and routes we add (rt_protos: unused)


def nft_ruleset(destinations, redirect_port=None, tproxy_port=None, block_quic=True):
    """The nftables table that sends TCP to `destinations` (prefixes) into the proxy:
    nat REDIRECT to `redirect_port` for connections this machine starts, TPROXY to
    `tproxy_port` for forwarded ones (marked TPROXY_MARK, which the policy route of
    install_policy_routing delivers locally; unmarked connections to that port
    dropped), UDP/443 rejected so browsers fall back
    from QUIC to TCP. The proxy's own connections carry mark 0x5066 and pass."""
    by_family = (("ip", [d for d in destinations if ":" not in d]),
                 ("ip6", [d for d in destinations if ":" in d]))

    def chain(name, hook, priority, rule):
        """A base chain with `rule(family, prefixes)` for each family that has some."""
        body = [rule(f, p) for f, p in by_family if p] if rule else ["udp dport 443 reject"]
        return ([f"  chain {name} {{", f"    type {hook} priority {priority}; policy accept;"]
                + [f"    {r}" for r in body] + ["  }"])

    rules = [f"table inet {RULES_TABLE} {{"]
    if redirect_port:
        rules += chain("output", "nat hook output", -100, lambda f, p: (
            f"meta mark != {OWN_MARK:#x} {f} daddr {{ {', '.join(p)} }} "
            f"tcp dport != {redirect_port} redirect to :{redirect_port}"))
    if tproxy_port:
        rules += chain("prerouting", "filter hook prerouting", "mangle", lambda f, p: (
            f"{f} daddr {{ {', '.join(p)} }} meta l4proto tcp "
            f"tproxy {f} to :{tproxy_port} meta mark set {TPROXY_MARK:#x} accept"))
    if tproxy_port:
        # The transparent listener (on 0.0.0.0, as TPROXY needs) takes only what TPROXY
        # marked: a connection made to its port directly is dropped, so the gateway is
        # no open proxy to whoever reaches it.
        rules += ["  chain transparent_guard {",
                  "    type filter hook input priority 0; policy accept;",
                  f"    tcp dport {tproxy_port} meta mark != {TPROXY_MARK:#x} drop", "  }"]
    if block_quic:
        rules += chain("quic", "filter hook output", 0, None)
        rules += chain("quic_forward", "filter hook forward", 0, None)
    rules.append("}")
    return "\n".join(rules) + "\n"


def _ip(*args):
    """`ip ARGS`: (return code, stdout, stderr); proxy_error when ip is missing."""
    import subprocess
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    except FileNotFoundError:
        raise proxy_error("ip is not installed (Debian: iproute2)")
    return done.returncode, done.stdout, done.stderr.strip()


def _ip_json(*args):
    """`ip -j ARGS` parsed; [] for a routing table that does not exist yet."""
    import json
    code, out, err = _ip("-j", *args)
    if code != 0:
        if "table does not exist" in err:
            return []
        raise proxy_error(f"ip {' '.join(args)}: {err}")
    return json.loads(out or "[]")


def policy_routing_families(destinations):
    """"-4" and/or "-6": the IP versions among `destinations` (prefixes)."""
    return [f for f, present in (("-4", any(":" not in d for d in destinations)),
                                 ("-6", any(":" in d for d in destinations))) if present]


def install_policy_routing(families):
    """The policy route TPROXY needs, for each of `families` ("-4", "-6"): packets
    marked TPROXY_MARK look up table TPROXY_TABLE, whose default route is local
    (`ip rule add fwmark 0x5067 lookup 5066; ip route add local default dev lo table
    5066`). Idempotent: a rule or route already there (ours from an earlier run, or
    someone else's identical one) is left as it is and not added twice. What this adds
    carries protocol ROUTE_PROTOCOL, so remove_policy_routing() deletes only that. A
    table TPROXY_TABLE whose default route is something else is not touched:
    proxy_error."""
    for family in families:
        routes = [r for r in _ip_json(family, "route", "show", "table", str(TPROXY_TABLE))
                  if r.get("dst") == "default"]
        if routes and not any(r.get("type") == "local" and r.get("dev") == "lo" for r in routes):
            raise proxy_error(f"routing table {TPROXY_TABLE} ({family}) already has a default "
                              f"route that is not 'local default dev lo': not touching it")
        if not routes:
            code, _, err = _ip(family, "route", "add", "local", "default", "dev", "lo", "table",
                               str(TPROXY_TABLE), "proto", str(ROUTE_PROTOCOL))
            if code != 0:
                raise proxy_error(f"ip {family} route add local default dev lo table "
                                  f"{TPROXY_TABLE}: {err}")
        if not _ip_json(family, "rule", "show", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                        str(TPROXY_TABLE)):
            code, _, err = _ip(family, "rule", "add", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                               str(TPROXY_TABLE), "protocol", str(ROUTE_PROTOCOL))
            if code != 0:
                raise proxy_error(f"ip {family} rule add fwmark {TPROXY_MARK:#x} lookup "
                                  f"{TPROXY_TABLE}: {err}")
        log.info("TPROXY policy routing (%s): fwmark %#x lookup %d, local default dev lo",
                 family, TPROXY_MARK, TPROXY_TABLE)


def remove_policy_routing():
    """Deletes the rules and routes install_policy_routing added (protocol
    ROUTE_PROTOCOL), in both IP versions; others' are left alone."""
    for family in ("-4", "-6"):
        for _ in range(16):  # an identical rule added more than once (by hand, say)
            code, _, _ = _ip(family, "rule", "del", "fwmark", f"{TPROXY_MARK:#x}", "lookup",
                             str(TPROXY_TABLE), "protocol", str(ROUTE_PROTOCOL))
            if code != 0:
                break
        _ip(family, "route", "del", "local", "default", "dev", "lo", "table", str(TPROXY_TABLE),
            "proto", str(ROUTE_PROTOCOL))


def install_rules(destinations, redirect_port=None, tproxy_port=None):
    """Installs the interception of TCP to `destinations` (prefixes): replaces the
    proxy's nftables table with nft_ruleset()'s (nft -f), and with a TPROXY port also
    the policy routing TPROXY needs (install_policy_routing). proxy_error with the
    reason when it cannot (no nft, no CAP_NET_ADMIN, a table in the way)."""
    import subprocess
    remove_rules()
    try:
        done = subprocess.run(["nft", "-f", "-"], capture_output=True, text=True, timeout=20,
                              input=nft_ruleset(destinations, redirect_port, tproxy_port))
    except FileNotFoundError:
        raise proxy_error("nft is not installed (Debian: nftables)")
    if done.returncode != 0:
        raise proxy_error(f"nft refused the rules: {done.stderr.strip()}")
    if tproxy_port:
        try:
            install_policy_routing(policy_routing_families(destinations))
        except proxy_error:
            remove_rules()
            raise


def remove_rules():
    """Deletes the proxy's nftables table if it is there, and its TPROXY policy routing."""
    import subprocess
    try:
        subprocess.run(["nft", "delete", "table", "inet", RULES_TABLE], capture_output=True,
                       timeout=20)
    except FileNotFoundError:
        pass
    try:
        remove_policy_routing()
    except proxy_error:
        pass  # no ip: nothing of ours to remove


def local_addresses():
    """This host's own addresses (every interface's, `ip -j addr show`), as text."""
    out = []
    for link in _ip_json("addr", "show"):
        for a in link.get("addr_info", []):
            if a.get("local"):
                out.append(a["local"].split("%")[0])
    return out
