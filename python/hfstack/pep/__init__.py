#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The HF-PEP (docs/pep.md): the proxy block and what it needs from the host.

  proxy      pep_proxy, the block: TCP connections in and out, SIS to a node
  handshake  SOCKS5 and HTTP CONNECT requests at the near proxy
  resolve    the far proxy's lookups of host names those requests gave
  dns        the DNS listeners (UDP and TCP) and the resolver for questions from the air
  rules      nftables interception and the policy routing TPROXY needs
  endpoint   HOST:PORT addresses and proxy_error

The names below are the package's API: `from gnuradio.hfstack.pep import pep_proxy`.
"""

from .dns import DNS_MAX_MESSAGE, DNS_TCP_IDLE_S, dns_tcp_frames  # noqa: F401
from .endpoint import parse_endpoint, proxy_error  # noqa: F401
from .handshake import host_name, literal_address  # noqa: F401
from .proxy import pep_proxy  # noqa: F401
from .rules import (RULES_TABLE, TPROXY_MARK, TPROXY_TABLE, install_policy_routing,  # noqa: F401
                    install_rules, nft_ruleset, remove_policy_routing, remove_rules)
