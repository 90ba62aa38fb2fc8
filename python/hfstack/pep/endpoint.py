#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Listen and destination addresses as the HF-PEP takes them, and the error for
options or addresses it cannot use."""

import errno


class proxy_error(ValueError):
    """Options or listen addresses the proxy cannot use."""


def parse_endpoint(spec, what):
    """("host", port) from "HOST:PORT" or "[v6]:PORT"."""
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise proxy_error(f"{what}: {spec!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


def loopback_hint(error, host):
    """What to add to an OSError's text when `host` is a loopback address that cannot be
    had: a fresh network namespace has its loopback down."""
    if error.errno == errno.EADDRNOTAVAIL and (host.startswith("127.") or host == "::1"):
        return " (is the loopback interface down in this network namespace? ip link set lo up)"
    return ""
