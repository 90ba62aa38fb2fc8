#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Slow (about a minute of real time, labelled `slow`): Winlink P2P with two real Pat
instances over the real STANAG 4539 modem rather than the emulator. Two hfstack-node
processes, each with the ARDOP-compatible host interface inside (--ardop), their radios
the modem on audio (kind loopback, 2400 bps short interleaver) through a white-noise
channel, the audio carried between the processes over ZeroMQ; B listens, A calls, and
one session carries a message with a 5 kB attachment each way, compared byte for byte.
Skipped when pat is not installed (`make deps` installs it)."""

import os
import random
import unittest

from gnuradio import gr_unittest
from ham_stations import START_S
import qa_ardop as emulated  # not its class by name: this module would run its tests too
from test_support import accepts, wait_for


@unittest.skipUnless(emulated.PAT, "needs Debian's pat (make deps installs it)")
class qa_ardop_real_modem(emulated.qa_ardop):

    def start_real_stations(self):
        ports = {}
        for me, other, call in ((2, 1, "AAA1"), (1, 2, "BBB1")):
            ports[me] = self.command_port()
            self.start_node(me, other, rate="2400", real_modem=True,
                            extra=["--ardop", str(ports[me]), "--ardop-station",
                                   f"{call}=0.0.0.{other}"])
            wait_for(f"hfstack-node --ardop {me}", lambda: accepts(ports[me]), START_S)
        return ports[1], ports[2]

    def test_pat_p2p_each_way_over_the_real_modem(self):
        port_a, port_b = self.start_real_stations()
        a = emulated.pat_station(os.path.join(self.tmp, "pat-a"), "AAA1", port_a)
        b = emulated.pat_station(os.path.join(self.tmp, "pat-b"), "BBB1", port_b)
        rng = random.Random(4539)
        mail = [(f"Real modem {n} from {sender.call}", f"Message {n} over STANAG 4539.",
                 bytes(rng.getrandbits(8) for _ in range(5000)))
                for n, sender in enumerate((a, b))]
        a.compose("BBB1", *mail[0])
        b.compose("AAA1", *mail[1])
        self.listen(b, "b")
        self.connect(a, "BBB1", "a")
        self.check_received(b, *mail[0])
        self.check_received(a, *mail[1])
        self.assertEqual((a.outbox(), b.outbox()), ([], []))

    # The emulator's tests belong to qa_ardop: not run again here.
    test_pat_p2p_message_with_attachment_each_way = None
    test_bad_input_faults_and_the_session_goes_on = None
    test_a_host_that_does_not_read_holds_the_far_sender = None
    test_busy_when_the_other_station_transmits = None


if __name__ == "__main__":
    gr_unittest.run(qa_ardop_real_modem)
