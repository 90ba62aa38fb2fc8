#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""SIS clients in Python (STANAG 5066 Annex A over TCP).

  client      sis_client: a blocking client for scripts and tests
  tcp_link    sis_tcp_link: a client block's connection to any SIS server
  test_client sis_test_client: hfstack-console's non-blocking driver of one test client
"""
