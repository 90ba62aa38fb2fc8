#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the radio front ends raise for options they cannot build from."""


class radio_error(ValueError):
    """A radio that cannot be built from these options."""


class device_error(radio_error):
    """The options are fine but a device, port or file named in them cannot be used."""
