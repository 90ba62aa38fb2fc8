#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The HF-PEP (docs/pep.md): the proxy block and what it needs from the host.

  proxy   pep_proxy, the block: TCP connections in and out, SIS to a node
The names below are the package's API: `from gnuradio.hfstack.pep import pep_proxy`.
"""

from .proxy import (DNS_MAX_MESSAGE, DNS_TCP_IDLE_S, RULES_TABLE, TPROXY_MARK,  # noqa: F401
                    TPROXY_TABLE, dns_tcp_frames, install_policy_routing, install_rules,
                    literal_address, nft_ruleset, parse_endpoint, pep_proxy, proxy_error,
                    remove_policy_routing, remove_rules)
