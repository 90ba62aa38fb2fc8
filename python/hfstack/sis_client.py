#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The blocking SIS client's former module name, for scripts that import it from
here: the client is gnuradio.hfstack.sis.client."""

from .sis.client import bind_request, sis_client, unidata_request  # noqa: F401
