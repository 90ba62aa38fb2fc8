#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The sis_tcp_link block's former module name, for flowgraph scripts that import it
from here: the block is gnuradio.hfstack.sis.tcp_link."""

from .sis.tcp_link import serve_over_tcp, sis_tcp_link  # noqa: F401
