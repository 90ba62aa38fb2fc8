#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The command-line apps' logic: apps/hfstack-NAME calls main() of the module here."""
