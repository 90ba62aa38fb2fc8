#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Radio front ends: one node's modem and radio as one hier block.

    r = radio(kind="audio", device="plughw:CARD=Device", ptt="serial:/dev/ttyUSB0:rts")
    tb.msg_connect(node, "to_phy", r, "in")
    tb.msg_connect(r, "out", node, "from_phy")
    tb.msg_connect(r, "status", node, "phy_status")

Every kind has the same three message ports, honouring the modem contract of the node
block: `in` takes the node's bursts, `out` gives decoded bursts (with `snr_db`,
`frequency_offset_hz`, mode), `status` gives tx_started / tx_finished / carrier_on /
carrier_off. The kinds with the modem's DSP (all but emulator) also post s4539_rx's
`burst_info` and have three stream outputs, the same for every such kind so that a
display connects to them alike (unconnected ones cost nothing):

  0 (AIR_PORT)       the transmitted signal: loopback, after the channel (what the
                     other radio hears); audio and file, the modem's audio; uhd, the
                     complex bursts going to the USRP
  1 (RECEIVED_PORT)  the samples the receiver takes: audio (loopback, audio, file) or
                     complex baseband at the modem rate (uhd, after decimation)
  2 (SYMBOLS_PORT)   the receiver's equalised data symbols (complex), see s4539_rx

The kinds:

  loopback  the STANAG 4539 modem on audio, its transmissions through the Watterson
            channel (profile, snr_db, frequency_offset_hz, seed) paced to real time and
            out of the block's float output; its receiver on the float input. Two loopback
            radios joined by join() are two nodes in one process.
  audio     the modem on a sound card (device; PTT by VOX, a serial port's RTS or DTR, or
            rigctld).
  uhd       the modem on complex baseband through a USRP (frequency_hz, gains, antennas,
            device_args); transmissions go out as tx_sob/tx_eob bursts, so the radio
            listens between them. Any STANAG 5069 bandwidth (mode WN12/48kHz/US): the
            USRP tuned on the signal's centre, its rate and the modem's chosen for the
            bandwidth (uhd_rates).
  file      transmissions recorded to a WAV file, reception replayed from one: real audio
            (mono) as far as it holds the mode's band (STANAG 4539, 5069 at 3 and 6
            kHz), complex baseband as I/Q (stereo) above (5069 at 9-48 kHz). tx_finished
            comes when the transmitter has produced the burst: a flowgraph stopped at
            once drops the last ~0.1 s still in its buffers from the recording.
  emulator  no DSP: modem_emulator, the link-level model (air time, latency, carrier
            sense, collisions, error models); emulator radios joined by join() share
            one emulated channel.

A loopback or emulator radio with air_publish and air_subscribe shares its channel
with radios in other processes (each node then lives in its own process, or network
namespace) over ZeroMQ (air_link.py): the loopback kind carries its audio, the
emulator kind its bursts.

RADIO_OPTIONS is the single table of options: keyword arguments here, command-line
options of hfstack-node (add_arguments / from_arguments) and keys of its YAML config.
"""

import collections
import contextlib
import math
import os
import sys
import threading
import wave

import numpy as np
import pmt
from gnuradio import blocks, filter as gr_filter, gr

from .. import air_link
from ..hfstack_python import hf_channel_ff, modem_emulator, s4539_rx, s4539_tx
from .. import modes
from ..hfstack_python import sim
from ..modes import s4539_pair_ok  # noqa: F401  (the GRC block's asserts)
from .errors import device_error, radio_error
from .ptt import parse_ptt, ptt_control, ptt_switch

KINDS = ("loopback", "audio", "uhd", "file", "emulator")
MODEM_KINDS = ("loopback", "audio", "uhd", "file")  # the STANAG 4539 modem's DSP
AIR_PORT, RECEIVED_PORT, SYMBOLS_PORT = 0, 1, 2  # stream outputs of the MODEM_KINDS

# Transmitter output buffer, items (GNU Radio rounds it up to a page).
TX_BUFFER_ITEMS = 1024
# Throttles release at most this much signal at a time, so that displays downstream
# (a waterfall draws one row per update) see a steady stream rather than bunches.
PACE_CHUNK_S = 0.05


def pacer(item_size, rate):
    """A throttle to `rate` items per second, in pieces of PACE_CHUNK_S."""
    pace = blocks.throttle(item_size, rate)
    pace.set_max_noutput_items(max(1, int(PACE_CHUNK_S * rate)))
    return pace


radio_option = collections.namedtuple("radio_option", "name default help kinds")

RADIO_OPTIONS = (
    radio_option("kind", "loopback", "how the modem reaches the air: " + ", ".join(KINDS), KINDS),
    radio_option("mode", "", "mode of a burst whose PDU names none, by the modem's name, "
                 "either standard (2400S, WN12/48kHz/US), instead of data_rate and "
                 "interleaver; a STANAG 5069 one also sets the bandwidth the receiver "
                 "listens on and the rates", MODEM_KINDS),
    radio_option("data_rate", 2400, "rate (bps) of a burst whose PDU names none", MODEM_KINDS),
    radio_option("interleaver", "short", "interleaver of a burst whose PDU names none",
                 MODEM_KINDS),
    radio_option("sample_rate", 0.0,
                 "modem sample rate, Hz; 0: 9600 (loopback, file, uhd) or 48000 (audio); "
                 "STANAG 5069 above 3 kHz: 48000 on real audio, 4 samples a symbol on "
                 "complex baseband (uhd, file I/Q: 3200 Hz per kHz)",
                 MODEM_KINDS),
    radio_option("level", 0.25, "transmit audio rms (full scale 1)", ("loopback", "audio", "file")),
    radio_option("readings", "",
                 "readings of the constants App C and STANAG 5069 leave uncertain, NAME=VALUE "
                 "space separated (tail_biting=first_pair_bit_7|full_register|block_start, "
                 "scrambler=a|b, pn_alignment=per_symbol|continuous, "
                 "wid_parity=checksum|caption_d2_zero): sent so, and forced on the receiver, "
                 "which otherwise finds them per burst; receiver only: k7_newest_bit=lsb, "
                 "preamble=find|configured, frequency_loop=second_order", MODEM_KINDS),
    radio_option("rx_threads", 0, "threads the STANAG 5069 receiver uses: 1, 2, or 0 for "
                 "two where the machine has two cores (the same bursts either way; faster "
                 "above 3 kHz)", MODEM_KINDS),
    radio_option("constraint_length", 7, "STANAG 5069 code sent: 7 or 9 (the receiver reads it)",
                 MODEM_KINDS),
    radio_option("superframes", 1, "STANAG 5069 preamble super-frames M sent, 1-32",
                 MODEM_KINDS),
    radio_option("tlc_blocks", 0, "STANAG 5069 TLC blocks N sent before the preamble, 0-255",
                 MODEM_KINDS),
    radio_option("eot", "off", "STANAG 5069: on extends each transmission's final "
                 "mini-probe (EOT)", MODEM_KINDS),
    radio_option("time_scale", 1.0, "protocol seconds per real second (the nodes' too)",
                 ("loopback", "file", "emulator")),
    radio_option("profile", "mid_latitude_moderate",
                 "channel of this radio's transmissions: awgn, good, moderate, poor, flutter or "
                 "an F.1487 condition (loopback); emulator: awgn or a fading profile, empty "
                 "for the ber alone", ("loopback", "emulator")),
    radio_option("snr_db", 20.0, "SNR of this radio's transmissions, dB in 3 kHz",
                 ("loopback", "emulator")),
    radio_option("frequency_offset_hz", 0.0, "carrier offset of this radio's transmissions",
                 ("loopback",)),
    radio_option("seed", 1, "seed of the channel (fading, noise, errors)", ("loopback", "emulator")),
    radio_option("ber", 0.0, "independent bit errors on top of the profile", ("emulator",)),
    radio_option("device", "", "sound card (ALSA name such as plughw:CARD=Device,DEV=0); "
                 "empty: the default", ("audio",)),
    radio_option("ptt", "vox", "vox, serial:PORT[:rts|:dtr] or rigctld[:HOST[:PORT]]",
                 ("audio", "uhd")),
    radio_option("ptt_tail_s", 0.25,
                 "PTT held this long after the last sample leaves the modem (the sound card's "
                 "buffer still plays it)", ("audio", "uhd")),
    radio_option("device_args", "", "UHD device arguments, e.g. type=b200", ("uhd",)),
    radio_option("frequency_hz", 0.0, "centre of the signal, Hz, where the USRP tunes (an SSB "
                 "radio's USB dial + the mode's carrier: 1800 Hz, STANAG 5069 above 3 kHz "
                 "300 Hz + half the bandwidth; signal_centre_hz)",
                 ("uhd",)),
    radio_option("rx_gain_db", 30.0, "USRP receive gain", ("uhd",)),
    radio_option("tx_gain_db", 0.0, "USRP transmit gain", ("uhd",)),
    radio_option("rx_antenna", "RX2", "USRP receive antenna", ("uhd",)),
    radio_option("tx_antenna", "TX/RX", "USRP transmit antenna", ("uhd",)),
    radio_option("usrp_rate", 0.0, "USRP sample rate, Hz (a multiple of the modem's); 0: "
                 "240000 at 3 kHz, above the least multiple of the modem's rate from 240000",
                 ("uhd",)),
    radio_option("air_publish", "",
                 "ZeroMQ address on which this radio puts its transmissions on a channel "
                 "shared with other processes (ipc:///run/hf/a or tcp://127.0.0.1:5600; "
                 "loopback: its audio after its channel, emulator: its bursts); empty: "
                 "this process only", ("loopback", "emulator")),
    radio_option("air_subscribe", "",
                 "ZeroMQ addresses the other radios on that channel publish on, space "
                 "separated (loopback: exactly one)", ("loopback", "emulator")),
    radio_option("emulator_id", 0,
                 "this emulator's identity on a channel shared across processes (0: derived "
                 "from air_publish, or numbered in this process)", ("emulator",)),
    radio_option("record", "", "write transmitted audio to this WAV file", ("file",)),
    radio_option("replay", "", "receive the audio of this WAV file", ("file",)),
)
DEFAULTS = {o.name: o.default for o in RADIO_OPTIONS}
KINDS_OF = {o.name: o.kinds for o in RADIO_OPTIONS}


@contextlib.contextmanager
def quiet_stderr():
    """Drivers (ALSA, UHD) write their own complaints to file descriptor 2 while a device
    is opened; the radio_error raised instead says it in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def check_options(options):
    """Full option set from `options` (dict; None means the default): unknown names,
    wrong types, options of another kind, malformed PTT specs, unknown channel profiles
    and every rule that needs no device raise radio_error, all problems at once (one a
    line), so a config can be checked before any device is opened."""
    from ..cli import nearest
    options = {k: v for k, v in options.items() if v is not None}
    problems = []
    for name in sorted(set(options) - set(DEFAULTS)):
        problems.append(f"unknown radio option {name}{nearest(name, DEFAULTS)} "
                        f"(valid: {', '.join(DEFAULTS)})")
    o = dict(DEFAULTS)
    for name, value in options.items():
        if name not in DEFAULTS:
            continue
        want = type(DEFAULTS[name])
        try:
            o[name] = want(value)
        except (TypeError, ValueError):
            problems.append(f"radio option {name}: {value!r} is not "
                            + {int: "an integer", float: "a number"}.get(want, "text"))
    kind = o["kind"]
    if kind not in KINDS:
        problems.append(f"radio kind {kind!r}: choose one of {', '.join(KINDS)}"
                        + nearest(kind, KINDS))
        raise radio_error("\n".join(problems))
    foreign = [n for n in options if n in DEFAULTS and n != "kind"
               and options[n] != DEFAULTS[n] and kind not in KINDS_OF[n]]
    if foreign:
        problems.append(f"radio option {', '.join(sorted(foreign))} does not apply to kind {kind}")
    for name, ok, rule in (
            ("time_scale", o["time_scale"] > 0 and math.isfinite(o["time_scale"]), "> 0"),
            ("ber", 0 <= o["ber"] <= 1, "in 0..1"),
            ("sample_rate", o["sample_rate"] == 0 or o["sample_rate"] >= 4000,
             ">= 4000 Hz (0: the kind's usual)"),
            ("level", 0 < o["level"] <= 1, "in (0, 1]"),
            ("seed", 0 <= o["seed"] < 2 ** 63, ">= 0"),
            ("snr_db", not math.isnan(o["snr_db"]), "a number"),
            ("ptt_tail_s", 0 <= o["ptt_tail_s"] <= 10, "in 0..10 s"),
            ("rx_threads", o["rx_threads"] >= 0, ">= 0 (0: two where there are two cores)"),
            ("frequency_hz", kind != "uhd" or o["frequency_hz"] > 0, "> 0 for kind uhd"),
            ("usrp_rate", o["usrp_rate"] >= 0, ">= 0 (0: chosen for the bandwidth)")):
        if not ok:
            problems.append(f"radio option {name} must be {rule}")
    if kind in ("loopback", "emulator"):
        from ..hfstack_python import sim
        names = sim.fading_profile_names()
        allowed = names if kind == "loopback" else names + [""]
        if o["profile"] not in allowed:
            problems.append(f"radio option profile {o['profile']!r}{nearest(o['profile'], names)}"
                            f": choose one of {', '.join(names)}"
                            + (" or empty (no fading)" if kind == "emulator" else ""))
    if kind in ("audio", "uhd"):
        try:
            parse_ptt(o["ptt"])
        except radio_error as e:
            problems.append(str(e))
    mode_ok = True
    if o["mode"]:
        problem = modes.any_mode_problem(o["mode"])
        if problem:
            problems.append(f"radio option mode {o['mode']!r}: {problem}")
            mode_ok = False
    if kind == "uhd" and o["usrp_rate"] > 0 and mode_ok:
        factor = o["usrp_rate"] / modem_rate(o)
        if abs(factor - round(factor)) > 1e-9 or round(factor) < 1:
            problems.append(f"usrp_rate {o['usrp_rate']:g} is not a multiple of the modem "
                            f"rate {modem_rate(o):g}")
    if bool(o["air_publish"]) != bool(o["air_subscribe"]):
        problems.append("radio options air_publish and air_subscribe go together (this "
                        "radio's address and the others')")
    elif kind == "loopback" and len(o["air_subscribe"].split()) > 1:
        problems.append("radio option air_subscribe: a loopback radio hears one other radio "
                        "(its audio is one stream); emulators share a channel among many")
    if o["emulator_id"] < 0:
        problems.append("radio option emulator_id must be >= 0")
    if kind == "file" and not o["record"] and not o["replay"]:
        problems.append("kind file needs record and/or replay")
    if kind in MODEM_KINDS:
        settings_ok = True
        for text, transmitter, what in ((transmitter_settings(o), True, "readings, "
                                         "constraint_length, superframes, tlc_blocks or eot"),
                                        (o["readings"], False, "readings")):
            problem = modes.s5069_settings_problem(text, transmitter)
            if problem:
                problems.append(f"radio option {what}: {problem}")
                settings_ok = False
                break
        mode_ok = mode_ok and settings_ok
    if kind in MODEM_KINDS and 0 < o["level"] <= 1 and mode_ok and not problems:
        problems += modem_problems(o)
    if problems:
        raise radio_error("\n".join(problems))
    return o


def options_for_kind(**options):
    """The options that apply to options["kind"] (the table's kinds), the others left
    out: what a GRC block passes, whose hidden parameters keep any value they held
    before the kind was changed (check_options would refuse those)."""
    kind = options.get("kind", DEFAULTS["kind"])
    return {name: value for name, value in options.items()
            if name not in KINDS_OF or kind in KINDS_OF[name]}


def modem_problems(o):
    """Why the modem cannot run with these options ([] if it can): the modem knows which
    rate and interleaver go together, and which sample rates hold a mode's band (real
    audio stops at 6 kHz, RRC 0.35 on 300 Hz + BW / 2)."""
    complex_baseband = complex_streams(o)
    # uhd: the transmitter at the USRP's rate, the receiver at the modem's.
    rates = ((uhd_rates(o)["usrp_rate"], modem_rate(o)) if o["kind"] == "uhd"
             else (modem_rate(o),))
    for rate in rates:
        try:
            s4539_tx(rate, complex_baseband, int(o["data_rate"]), o["interleaver"], o["level"],
                     0.35, o["mode"], transmitter_settings(o))
        except (ValueError, RuntimeError) as e:
            if not o["mode"]:
                return [f"radio options data_rate {o['data_rate']} and interleaver "
                        f"{o['interleaver']!r}: {e}"]
            bw = modes.mode_band(o["mode"])[0]
            held = "complex baseband" if complex_baseband else "real audio"
            return [f"radio kind {o['kind']}: mode {o['mode']} ({bw} kHz) does not fit {held} "
                    f"at {rate:g} Hz: {e}"]
    return []


def is_wideband(o):
    """True when the default mode is a STANAG 5069 one above 3 kHz."""
    return bool(o["mode"]) and modes.is_s5069(o["mode"]) and modes.mode_band(o["mode"])[0] > 3


def complex_streams(o):
    """True for the kinds whose signal is complex baseband: uhd, and file for STANAG 5069
    above 6 kHz (I/Q files: real audio cannot hold those bands)."""
    if o["kind"] == "uhd":
        return True
    return o["kind"] == "file" and is_wideband(o) and modes.mode_band(o["mode"])[0] > 6


def modem_rate(o):
    """The modem's sample rate: sample_rate, or the kind's usual one: 9600 (48000 on a
    sound card); STANAG 5069 above 3 kHz 48000 on real audio and 4 samples a symbol on
    complex baseband (153600 at 48 kHz)."""
    if o["sample_rate"]:
        return o["sample_rate"]
    if is_wideband(o):
        bw = modes.mode_band(o["mode"])[0]
        return float(sim.s5069_sample_rate(bw)) if complex_streams(o) else 48000.0
    return 48000.0 if o["kind"] == "audio" else 9600.0


def uhd_rates(o):
    """The uhd kind's rates: {"usrp_rate", "modem_rate", "decimation"}. usrp_rate 0
    chooses 240000 Hz at 3 kHz (as always), above it the least multiple of the modem's
    rate from 240000 (307200 at 48 and 24 kHz); the receiver takes the USRP's samples
    decimated to the modem's rate, the transmitter shapes its bursts at the USRP's."""
    rate = modem_rate(o)
    usrp = o["usrp_rate"] or (rate * math.ceil(240000.0 / rate) if is_wideband(o)
                              else 240000.0)
    return {"usrp_rate": usrp, "modem_rate": rate, "decimation": int(round(usrp / rate))}


def signal_centre_hz(dial_hz, mode):
    """Where a USRP tunes (frequency_hz) for a signal an SSB radio on USB dial `dial_hz`
    carries: the dial plus the mode's carrier (1800 Hz; STANAG 5069 above 3 kHz 300 Hz
    + half the bandwidth: 24300 Hz at 48 kHz)."""
    return dial_hz + modes.mode_band(mode)[2]


# Settings a receiver takes and a transmitter refuses.
RECEIVER_ONLY_SETTINGS = ("preamble", "frequency_loop", "k7_newest_bit")


def transmitter_settings(o):
    """s4539_tx's s5069_settings from the radio options: the readings (not the receiver's
    own words, nor auto), the constraint length and the preamble's shape."""
    words = [w for w in o["readings"].split()
             if w.split("=")[0] not in RECEIVER_ONLY_SETTINGS and not w.endswith("=auto")]
    return " ".join(words + [f"constraint_length={o['constraint_length']}",
                             f"superframes={o['superframes']}", f"tlc_blocks={o['tlc_blocks']}",
                             f"eot={o['eot']}"])


def receiver_threads(o):
    """s4539_rx's threads: rx_threads, or 0 for two where this process may run on two
    cores."""
    return o["rx_threads"] or modes.default_receiver_threads()


def receiver_listen(o):
    """s4539_rx's listen and s5069_settings for the default mode: STANAG 5069 at its
    bandwidth (the WID does not carry it), else STANAG 4539; the readings option's words
    (forced on the receiver) either way."""
    readings = o["readings"].split()
    if o["mode"] and modes.is_s5069(o["mode"]):
        return "5069", " ".join([f"bandwidth_khz={modes.mode_band(o['mode'])[0]}"] + readings)
    return "4539", " ".join(readings)


class burst_monitor(gr.basic_block):
    """Passes decoded bursts on and keeps what the receiver saw: bursts, mean and last
    SNR and frequency offset (for summaries and statistics)."""

    def __init__(self):
        gr.basic_block.__init__(self, "burst_monitor", None, None)
        self.message_port_register_in(pmt.intern("in"))
        self.message_port_register_out(pmt.intern("out"))
        self.set_msg_handler(pmt.intern("in"), self.handle)
        self.lock = threading.Lock()
        self.bursts = 0
        self.bytes = 0
        # Per measured quantity: [count, sum, last] (a node runs for days).
        self.measured = {key: [0, 0.0, None] for key in self.MEASURED}
        self.last_mode = None

    MEASURED = ("snr_db", "frequency_offset_hz")

    def handle(self, msg):
        meta = pmt.car(msg) if pmt.is_pair(msg) and pmt.is_dict(pmt.car(msg)) else pmt.make_dict()
        with self.lock:
            self.bursts += 1
            if pmt.is_pair(msg) and pmt.is_u8vector(pmt.cdr(msg)):
                self.bytes += pmt.length(pmt.cdr(msg))
            for key, m in self.measured.items():
                v = pmt.dict_ref(meta, pmt.intern(key), pmt.PMT_NIL)
                if pmt.is_real(v):
                    x = pmt.to_double(v)
                    m[0], m[1], m[2] = m[0] + 1, m[1] + x, x
            mode = pmt.dict_ref(meta, pmt.intern("mode"), pmt.PMT_NIL)
            if pmt.is_symbol(mode):
                self.last_mode = pmt.symbol_to_string(mode)
        self.message_port_pub(pmt.intern("out"), msg)

    def stats(self):
        with self.lock:
            s = {"bursts_received": self.bursts, "bytes_received": self.bytes}
            for key, (count, total, last) in self.measured.items():
                if count:
                    s[key + "_mean"], s[key + "_last"] = total / count, last
            if self.last_mode is not None:
                s["mode_last"] = self.last_mode
        return s


class burst_gate(gr.basic_block):
    """Passes only the samples from a tx_sob tag to its tx_eob tag, tags kept: the
    modem's stream becomes the bursts a USRP sink transmits in burst mode."""

    def __init__(self):
        gr.basic_block.__init__(self, "burst_gate", [np.complex64], [np.complex64])
        self.set_tag_propagation_policy(gr.TPP_DONT)
        self.in_burst = False

    def general_work(self, input_items, output_items):
        x, y = input_items[0], output_items[0]
        n = min(len(x), len(y))
        start = self.nitems_read(0)
        tags = sorted(self.get_tags_in_window(0, 0, n), key=lambda t: t.offset)
        produced, pos = 0, 0
        for t in tags + [None]:
            end = n if t is None else int(t.offset - start) + 1
            key = None if t is None else pmt.symbol_to_string(t.key)
            if key == "tx_sob":
                end -= 1  # the tag's sample opens the burst
            if self.in_burst and end > pos:
                y[produced:produced + end - pos] = x[pos:end]
                produced += end - pos
            if t is not None and key in ("tx_sob", "tx_eob"):
                if key == "tx_sob":
                    self.in_burst = True
                    self.add_item_tag(0, self.nitems_written(0) + produced, t.key, t.value)
                else:
                    self.add_item_tag(0, self.nitems_written(0) + produced - 1, t.key, t.value)
                    self.in_burst = False
            pos = max(pos, end)
        self.consume(0, n)
        return produced


class radio(gr.hier_block2):
    """One node's modem and radio; see the module's documentation. Bad options, a
    missing device or file raise radio_error with a one-line reason."""

    def __init__(self, **options):
        o = check_options(options)
        self.options = o
        kind = o["kind"]
        gr.hier_block2.__init__(self, "radio_" + kind, self.input_signature_of(o),
                                self.output_signature(kind, complex_streams(o)))
        emulated = kind == "emulator"
        for port in ("in", "air_in") if emulated else ("in",):
            self.message_port_register_hier_in(port)
        for port in ("out", "status", "air_out") if emulated else ("out", "status", "burst_info"):
            self.message_port_register_hier_out(port)
        self.monitor = burst_monitor()
        self.ptt = None
        self.emulator = None
        try:
            getattr(self, "build_" + kind)(o)
        except radio_error:
            raise
        except (ValueError, TypeError, RuntimeError) as e:
            raise radio_error(f"radio {kind}: {' '.join(str(e).split())}")

    @staticmethod
    def input_signature_of(o):
        """A loopback radio hears the other radio on its stream input, unless another
        process's radio reaches it over ZeroMQ; the other kinds have none."""
        if o["kind"] == "loopback" and not o["air_publish"]:
            return gr.io_signature(1, 1, gr.sizeof_float)
        return gr.io_signature(0, 0, 0)

    @staticmethod
    def output_signature(kind, complex_baseband=None):
        """AIR_PORT, RECEIVED_PORT, SYMBOLS_PORT for the modem kinds, none for emulator;
        complex_baseband (complex_streams) for I/Q files, uhd's always."""
        if kind == "emulator":
            return gr.io_signature(0, 0, 0)
        iq = kind == "uhd" if complex_baseband is None else complex_baseband
        baseband = gr.sizeof_gr_complex if iq else gr.sizeof_float
        return gr.io_signature.makev(3, 3, [baseband, baseband, gr.sizeof_gr_complex])

    # The modem on real audio (loopback, audio, file): transmitter and receiver wired to
    # the node's ports; returns the transmitter for the kind to connect its stream (the
    # receiver's input: receive_from).
    def audio_modem(self, o, rx_rate=None, iq=False):
        tx = s4539_tx(modem_rate(o), iq, int(o["data_rate"]), o["interleaver"], o["level"],
                      0.35, o["mode"], transmitter_settings(o))
        # Streaming: the node takes pieces.
        rx = s4539_rx(rx_rate or modem_rate(o), iq, True, *receiver_listen(o),
                      receiver_threads(o))
        self.wire_modem(tx, rx)
        return tx

    def wire_modem(self, tx, rx):
        self.tx, self.rx = tx, rx
        # The transmitter runs ahead of the sound card, USRP or pacing by its output
        # buffer, and reports tx_started / tx_finished and PTT by what it has produced:
        # a small buffer keeps that within ~0.1 s of the air instead of ~1 s.
        tx.set_max_output_buffer(TX_BUFFER_ITEMS)
        self.wire_node_ports(tx, (tx, rx), rx)
        self.msg_connect(rx, "burst_info", self, "burst_info")
        self.connect((rx, 0), (self, SYMBOLS_PORT))

    def receive_from(self, source):
        """The receiver's samples come from `source`, also shown on RECEIVED_PORT."""
        self.connect(source, self.rx)
        self.connect(source, (self, RECEIVED_PORT))

    def wire_node_ports(self, sender, reporters, receiver):
        """The modem contract: `in` to the sender, every reporter's status to `status`,
        the receiver's bursts through the monitor to `out`."""
        self.msg_connect(self, "in", sender, "in")
        for block in reporters:
            self.msg_connect(block, "status", self, "status")
        self.msg_connect(receiver, "out", self.monitor, "in")
        self.msg_connect(self.monitor, "out", self, "out")

    def build_loopback(self, o):
        tx = self.audio_modem(o)
        rate = modem_rate(o)
        pace = pacer(gr.sizeof_float, rate * o["time_scale"])
        self.channel = hf_channel_ff(rate, o["profile"], [], [], [], [], o["snr_db"], 3000.0,
                                     o["level"] ** 2, o["frequency_offset_hz"], 0.0, 0.02,
                                     int(o["seed"]))
        self.connect(tx, pace, self.channel, (self, AIR_PORT))
        if o["air_publish"]:
            sink, source = air_link.sample_sockets(o["air_publish"], o["air_subscribe"])
            self.air_blocks = (sink, source)
            self.connect(self.channel, sink)
            self.receive_from(source)
        else:
            # A hier block's input cannot feed its output directly: one copy between.
            heard = blocks.copy(gr.sizeof_float)
            self.connect(self, heard)
            self.receive_from(heard)

    def build_audio(self, o):
        from gnuradio import audio
        tx = self.audio_modem(o)
        rate = int(modem_rate(o))
        name = o["device"] or "the default device"
        try:
            with quiet_stderr():
                sink = audio.sink(rate, o["device"], True)
                source = audio.source(rate, o["device"], True)
        except RuntimeError as e:
            raise device_error(f"sound card {name} cannot be opened at {rate} Hz: no such "
                               "device, busy, or the rate is not supported (`aplay -L` "
                               f"lists the names; {' '.join(str(e).split())})")
        self.connect(tx, sink)
        self.connect(tx, (self, AIR_PORT))
        self.receive_from(source)
        self.add_ptt(o, tx)

    def build_uhd(self, o):
        try:
            from gnuradio import uhd
        except ImportError:
            raise device_error("kind uhd needs GNU Radio's UHD support (Debian: gnuradio, libuhd)")
        rates = uhd_rates(o)
        rate, usrp_rate, factor = rates["modem_rate"], rates["usrp_rate"], rates["decimation"]
        self.rates = rates
        # The transmitter works at the USRP's rate, so its tx_sob/tx_eob tags mark the
        # bursts' exact first and last samples for the gate; the receiver at the modem
        # rate after decimation (at the mode's bandwidth for STANAG 5069).
        tx = s4539_tx(usrp_rate, True, int(o["data_rate"]), o["interleaver"], 0.5, 0.35,
                      o["mode"], transmitter_settings(o))
        rx = s4539_rx(rate, True, True, *receiver_listen(o), receiver_threads(o))
        self.wire_modem(tx, rx)
        name = o["device_args"] or "(first found)"
        try:
            with quiet_stderr():
                args = uhd.stream_args(cpu_format="fc32", channels=[0])
                src = uhd.usrp_source(o["device_args"], args)
                sink = uhd.usrp_sink(o["device_args"], args)
                for dev, gain, antenna in ((src, o["rx_gain_db"], o["rx_antenna"]),
                                           (sink, o["tx_gain_db"], o["tx_antenna"])):
                    dev.set_samp_rate(usrp_rate)
                    dev.set_center_freq(o["frequency_hz"], 0)
                    dev.set_gain(gain, 0)
                    dev.set_antenna(antenna, 0)
        except (RuntimeError, LookupError, ValueError) as e:
            text = " ".join(str(e).split())
            if "No devices found" in text:  # UHD's words name its internals, not the fix
                raise device_error(
                    f"no USRP found for device_args {o['device_args'] or '(empty: the first found)'}: "
                    "uhd_find_devices lists the USRPs this host sees; choose one with "
                    "--device-args (e.g. \"serial=...\" or \"addr=192.168.10.2\")")
            raise device_error(f"USRP {name}: {text}")
        for dev, side in ((src, "receive"), (sink, "transmit")):
            actual = dev.get_samp_rate()
            if abs(actual - usrp_rate) > 1e-6 * usrp_rate:
                # A rate off by 0.1 % is a clock error the modem would have to track.
                raise device_error(f"USRP {name} cannot {side} at exactly {usrp_rate:g} Hz "
                                   f"(it gives {actual:.3f}); choose a usrp_rate its master "
                                   "clock divides")
        # Silence between bursts is produced at twice real time and dropped, so bursts
        # reach the sink faster than it plays them and the radio only keys for them.
        pace = blocks.throttle(gr.sizeof_gr_complex, 2 * usrp_rate)
        self.gate = burst_gate()  # Python blocks must stay referenced while they run
        self.connect(tx, pace, self.gate, sink)
        self.connect(self.gate, (self, AIR_PORT))
        if factor > 1:
            decimate = gr_filter.rational_resampler_ccc(1, factor)
            self.connect(src, decimate)
            self.receive_from(decimate)
        else:
            self.receive_from(src)
        self.add_ptt(o, tx)

    def build_file(self, o):
        # Real audio, mono; I/Q (stereo, complex baseband) where real audio cannot hold
        # the band (complex_streams).
        iq = complex_streams(o)
        channels = 2 if iq else 1
        item = gr.sizeof_gr_complex if iq else gr.sizeof_float
        rx_rate = modem_rate(o)
        if o["replay"]:
            try:
                with wave.open(o["replay"]) as w:
                    rx_rate = float(w.getframerate())
                    if w.getnchannels() != channels:
                        raise device_error(
                            f"replay file {o['replay']}: {w.getnchannels()} channel(s); "
                            + ("mode " + o["mode"] + " is replayed from I/Q (2 channels)"
                               if iq else "real audio is replayed from 1 channel"))
            except (OSError, wave.Error, EOFError) as e:
                raise device_error(f"replay file {o['replay']}: {e}")
        tx = self.audio_modem(o, rx_rate, iq)
        tx_rate = modem_rate(o)
        if o["record"]:
            try:
                sink = blocks.wavfile_sink(o["record"], channels, int(tx_rate), blocks.FORMAT_WAV,
                                           blocks.FORMAT_PCM_16, False)
            except RuntimeError as e:
                raise device_error(f"record file {o['record']}: {e}")
        else:
            sink = None
        tx_pace = pacer(item, tx_rate * o["time_scale"])
        self.connect(tx, tx_pace)
        if sink is None:
            self.connect(tx_pace, blocks.null_sink(item))
        elif iq:
            split = blocks.complex_to_float()
            self.connect(tx_pace, split)
            self.connect((split, 0), (sink, 0))
            self.connect((split, 1), (sink, 1))
        else:
            self.connect(tx_pace, sink)
        self.connect(tx_pace, (self, AIR_PORT))
        if o["replay"]:
            source = blocks.wavfile_source(o["replay"], False)
            if iq:
                join = blocks.float_to_complex()
                self.connect((source, 0), (join, 0))
                self.connect((source, 1), (join, 1))
                source = join
        else:
            source = blocks.null_source(item)
        rx_pace = pacer(item, rx_rate * o["time_scale"])
        self.connect(source, rx_pace)
        self.receive_from(rx_pace)

    def build_emulator(self, o):
        identity = o["emulator_id"] or (air_link.emulator_id_of(o["air_publish"])
                                        if o["air_publish"] else 0)
        self.emulator = modem_emulator(o["time_scale"], o["profile"], o["snr_db"], o["ber"],
                                       int(o["seed"]),
                                       f"emulator_id={identity}" if identity else "")
        self.wire_node_ports(self.emulator, (self.emulator,), self.emulator)
        self.msg_connect(self, "air_in", self.emulator, "air_in")
        self.msg_connect(self.emulator, "air_out", self, "air_out")
        if o["air_publish"]:
            self.air_blocks = air_link.link_emulator(self, self.emulator, o["air_publish"],
                                                     o["air_subscribe"].split())

    def add_ptt(self, o, tx):
        if o["ptt"] == "vox":
            return
        self.ptt = ptt_control(ptt_switch(o["ptt"]), o["ptt_tail_s"])
        self.msg_connect(tx, "ptt", self.ptt, "ptt")

    def stats(self):
        """What this radio's receiver saw (bursts, bytes, SNR, frequency offset); an
        emulator radio adds its modem's counters under "emulator" (transmissions,
        collisions, ...: a shared channel's collisions are seen only there)."""
        s = self.monitor.stats()
        if self.emulator is not None:
            s["emulator"] = {k: (int(v) if float(v).is_integer() else v)
                             for k, v in self.emulator.counters().items()}
        return s

    def close(self):
        """After the flowgraph has stopped: unkeys the radio and releases the PTT port."""
        if self.ptt is not None:
            self.ptt.close()


def join(tb, a, b):
    """Puts two radios on one channel: loopback radios by their audio (each hears the
    other's transmissions through its own channel), emulator radios by their air ports.
    Two stations (station.py) are joined alike: their ports are their radios'."""
    oa, ob = (getattr(x, "radio", x).options for x in (a, b))
    kinds = {oa["kind"], ob["kind"]}
    if oa["air_publish"] or ob["air_publish"]:
        raise radio_error("join() is for radios in one process; these share a channel over "
                          "ZeroMQ already (air_publish)")
    if kinds == {"loopback"}:
        tb.connect(a, b)
        tb.connect(b, a)
    elif kinds == {"emulator"}:
        tb.msg_connect(a, "air_out", b, "air_in")
        tb.msg_connect(b, "air_out", a, "air_in")
    else:
        raise radio_error("join() takes two loopback radios or emulator radios, not "
                          + " and ".join(sorted(kinds)))


def add_arguments(parser, skip=(), defaults_shown=None):
    """One --NAME option per radio option (hfstack-node), except those in `skip`;
    `defaults_shown` replaces the default the help text gives for an option whose
    default the program chooses."""
    g = parser.add_argument_group("radio (see also the YAML config's `radio` section)")
    shown = defaults_shown or {}
    for o in RADIO_OPTIONS:
        if o.name in skip:
            continue
        kinds = "" if o.kinds == KINDS else f" [{', '.join(o.kinds)}]"
        g.add_argument("--" + o.name.replace("_", "-"), dest="radio_" + o.name, default=None,
                       type=type(o.default), metavar=o.name.upper(),
                       help=f"{o.help}{kinds} (default: {shown.get(o.name, repr(o.default))})")


def from_arguments(args, base=None):
    """Radio options from a parsed command line over `base` (e.g. from a YAML file):
    only the options given on the command line replace base's."""
    o = dict(base or {})
    for name in DEFAULTS:
        v = getattr(args, "radio_" + name, None)
        if v is not None:
            o[name] = v
    return o
