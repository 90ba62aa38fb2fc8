#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Listen and destination addresses as the HF-PEP takes them, and the error for
options or addresses it cannot use."""


class proxy_error(ValueError):
    """Options or listen addresses the proxy cannot use."""


def parse_endpoint(spec, what):
    """("host", port) from "HOST:PORT" or "[v6]:PORT"."""
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise proxy_error(f"{what}: {spec!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)
