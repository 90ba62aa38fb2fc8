#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""One emulated HF channel shared by modem emulators in different processes (or
flowgraphs): each publishes its bursts on a ZeroMQ PUB socket of its own and subscribes
to the others' (gr-zeromq, as srsRAN's ZMQ radio joins LTE stacks). Each process can
then run its node in its own network namespace, while all the modem emulators hear
each other as they would over the air.

    link_emulator(tb, emulator, publish="tcp://127.0.0.1:5600",
                  subscribe=["tcp://127.0.0.1:5601"])

Every emulator on the channel needs the same time_scale (the monotonic clock is the
machine's, shared by all processes) and an emulator_id of its own (option
"emulator_id=N"): ids numbered per process would collide. The radio front end
(radio.py, options air_publish / air_subscribe) does this wiring for hfstack-node.

ZeroMQ's ipc:// addresses are files, so they join processes in different network
namespaces without any network between them.
"""

import zlib

from gnuradio import zeromq

# A burst is small; a subscriber that falls this far behind drops the oldest (ZMQ's
# high-water mark), which on HF reads as a burst lost in a fade.
HIGH_WATER_MARK = 1000


def link_emulator(tb, emulator, publish, subscribe, timeout_ms=100):
    """Connects `emulator` (a modem_emulator, or a radio whose kind is "emulator") to
    the shared channel: its air_out published at `publish`, the bursts published at
    each address of `subscribe` fed to its air_in. Returns the ZMQ blocks."""
    sink = zeromq.pub_msg_sink(publish, timeout_ms, True)  # bind: the others connect
    tb.msg_connect(emulator, "air_out", sink, "in")
    sources = []
    for address in subscribe:
        source = zeromq.sub_msg_source(address, timeout_ms, False)
        tb.msg_connect(source, "out", emulator, "air_in")
        sources.append(source)
    return [sink] + sources


def link_samples(tb, radio, publish, subscribe, timeout_ms=100):
    """The real modems' counterpart: a loopback-kind radio's transmitted audio published
    at `publish` (float samples, gr-zeromq PUB), and the audio published at `subscribe`
    (one peer) fed to its receiver. Each radio applies its own channel (Watterson
    profile, SNR, offsets) to what it transmits, as the loopback kind does in one
    process. Both radios need the same sample rate and time scale. Returns the blocks."""
    sink, source = sample_sockets(publish, subscribe, timeout_ms)
    tb.connect(radio, sink)
    tb.connect(source, radio)
    return [sink, source]


def sample_sockets(publish, subscribe, timeout_ms=100):
    """(sink, source): float audio published at `publish`, and received from the one
    radio publishing at `subscribe`."""
    from gnuradio import gr  # noqa: deferred so message-only users need no stream runtime

    sink = zeromq.pub_sink(gr.sizeof_float, 1, publish, timeout_ms, False, HIGH_WATER_MARK)
    source = zeromq.sub_source(gr.sizeof_float, 1, subscribe, timeout_ms, False, HIGH_WATER_MARK)
    return sink, source


def emulator_id_of(publish):
    """An emulator identity from the address it publishes on: unique on the channel
    (no two radios publish on one address), the same in every run, and above 2^32 so
    it never meets the small numbers emulators get within one process."""
    return (1 << 32) + zlib.crc32(publish.encode())
