#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-modem: the STANAG 4539 and STANAG 5069 modem from the command line.

Modes: serial tone (MIL-STD-188-110A/B) 75S 150S 300S 600S 1200S 2400S (short
interleave, 0.6 s blocks), the same with L (long interleave, 4.8 s blocks) and 4800U
(4800 bps uncoded); App C 3200, 4800, 6400, 8000 and 9600 bps with US, VS, S, M, L or VL
interleave (0.12 to 8.6 s blocks), e.g. 9600L, and 12800U (uncoded); STANAG 5069
(MIL-STD-188-110D App D) at 3 kHz, WN0 (75 bps) to WN12 (16000 bps) and WN13 (2400 bps)
with US, S, M or L interleave, e.g. WN8/3kHz/L, and at every wider bandwidth of Table
D-I (6, 9, ..., 24, 30, 36, 42, 48 kHz) WN0-WN12, up to 240000 bps (WN12/48kHz/US). rx
and ber take any of them without being told which (the receiver finds the mode in the
preamble; rx listens for both standards at 3 kHz unless --listen says one; above 3 kHz
it listens for STANAG 5069 alone at --bandwidth).

Constants the standards leave uncertain (App C and STANAG 5069) are sent one way by
default; --reading NAME=VALUE (repeatable) chooses another for tx: tail_biting=
first_pair_bit_7|full_register|block_start (which information bit's pair a block's
code starts with: 7, K-1 or 0; App C and STANAG 5069), scrambler=a|b (App C and STANAG
5069), pn_alignment=per_symbol|continuous, wid_parity=checksum|caption_d2_zero,
preamble_walsh=scaled|capped (the first of each the default). The receiver needs no
telling: per burst it finds the tail-biting phase (from where the EOM lands) and the
data scrambler (App C and STANAG 5069), and for STANAG 5069 the preamble's PN alignment
and WID parity; rx --json and the burst metadata name what it found (`readings`). A
reading given to rx or ber forces it; scrambler=auto, tail_biting=auto and
preamble=find|configured say it again. Receiver
only: k7_newest_bit=lsb (a K=7 code with the newest bit at the polynomials' LSB, as one
outside implementation codes; never tried unless given) and frequency_loop=
second_order (a swept carrier offset followed, D.6.5; costs errors on fading channels).
tx and ber: --constraint-length 9 sends the K=9 code (the receiver reads K);
--superframes M (1-32), --tlc-blocks N (0-255) and --eot shape a STANAG 5069 preamble
and end as a field trial may need (the receiver reads them).

A wider bandwidth needs a higher sample rate: tx writes real audio on 300 Hz + BW / 2
(twice the sub-carrier plus the RRC-0.35 band, 1.35 symbol rates, or more: 48000 Hz at
6 kHz, the default), which holds the RRC-0.35 band above 0 Hz up to 6 kHz only (wider
modes are refused in real audio: the blocks' complex baseband and ber carry them); ber
runs at complex baseband at the mode's own rate (4 samples a symbol, 153600 Hz at 48
kHz) unless --sample-rate names a radio's (resampled); a rate too low is refused,
naming the least.

  hfstack-modem tx --mode 2400S --text "HELLO" hello.wav            # 8000 Hz, rms 0.25
  hfstack-modem tx --mode 600L --input msg.bin msg.wav --sample-rate 48000
  hfstack-modem rx hello.wav                                         # each burst found
  hfstack-modem rx msg.wav --output msg.out --json
  hfstack-modem rx hello.wav --gui                                   # watch it: waterfall, constellation
  hfstack-modem rx --gui --device plughw:CARD=Device                 # a sound card, until closed
  hfstack-modem ber --modes 2400S,1200S --snr 6,8,10 --profile poor --csv - --plot ber.png
  hfstack-modem tx --mode WN8/3kHz/L --reading scrambler=b --text "HELLO" wide.wav
  hfstack-modem rx wide.wav --reading scrambler=b
  hfstack-modem tx --mode WN12/6kHz/US --input msg.bin w6.wav       # 48000 Hz real
  hfstack-modem rx w6.wav --bandwidth 6
  hfstack-modem ber --modes WN12/48kHz/US --snr 31 --sample-rate 96000  # a USRP's rate
  hfstack-modem tx --mode WN12/48kHz/US --input f.bin rec.sigmf-meta  # SigMF, 153600 Hz
  hfstack-modem rx rec.sigmf-meta --output g.bin
  hfstack-modem rx rec.sigmf-meta --gui                              # complex baseband's waterfall
  hfstack-modem rx usrp.cfile --sample-rate 250000 --bandwidth 24 --centre-frequency 14.98e6 \
      --carrier-frequency 15e6                                       # uhd_rx_cfile's cf32
  hfstack-modem --list-modes                                         # every mode and reading

tx writes one transmission to a WAV file (16-bit PCM mono, 0.2 s of silence before and
after; samples beyond 16 bits are clipped and counted). rx finds every burst in a WAV
file (any rate from 4 kHz up), reports its mode, SNR, frequency offset and bytes, and
exits 1 when it finds none. Complex baseband carries every mode: tx writes it when
the output is named .sigmf-meta (SigMF, --datatype cf32_le or ci16_le) or .cf32, .cfile,
.fc32, .ci16, .sc16 (raw), at 4 samples a symbol unless --sample-rate says; rx reads
SigMF's rate, centre and mode from its metadata, a raw file's from --sample-rate,
--centre-frequency and --bandwidth. ber sends seeded random bytes in bursts of about 10 s of air
time, back to back, through the HF channel simulator (ITU-R F.1487, SNR in the mode's
bandwidth: 3 kHz, or the STANAG 5069 mode's) at
complex baseband, and counts the bits that come back wrong: a burst not received counts
all its bits, missing bytes count as wrong, extra bytes are ignored.
"""

import argparse
import csv
import json
import logging
import math
import os
import sys
import tempfile
import time
import wave

import numpy as np
import pmt

from gnuradio import blocks, gr
from gnuradio import filter as gr_filter
from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import iq_file
from gnuradio.hfstack import modes
from gnuradio.hfstack import sim

PROG = "hfstack-modem"
SILENCE_S = 0.2           # tx: silence before and after the transmission in the WAV
# Silence after the last burst so the receiver can finish it: a burst whose end of
# message was lost ends when the signal has been gone for an interleaver block, so 1 s
# and two units of the mode (rx: of the longest listened for).
RX_TAIL_S = 1.0
RX_PIECE_S = 0.1          # the receiver's input is padded with silence to whole pieces
RX_MAX_RATE = 1e6         # the receiver's front end takes up to 1 MHz: faster IQ is decimated
MAX_AIR_S = 600.0         # tx: longest transmission written (bounds memory)
CHUNK = 1 << 16
# Every mode the modem blocks send and receive: STANAG 4539's slowest first (the
# zero-interleave serial-tone modes are not offered: modes.mode_problem says why), then
# STANAG 5069's by bandwidth, with its data rate and interleaver as the blocks name them.
MODES = {name: sim.modem_mode(name)[:2] for name in sim.modem_mode_names()}
LISTEN = ("4539", "5069", "both")
POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


class usage_error(Exception):
    """A bad option or input: one line on stderr, exit status 2."""


class device_error(Exception):
    """A sound card that cannot be opened: one line on stderr, exit status 1."""


class one_line_parser(argparse.ArgumentParser):
    def error(self, message):
        raise usage_error(message)


# ---------------------------------------------------------------------------- helpers

finite_float = cli.finite_float


def positive_float(text):
    v = finite_float(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def is_5069(mode):
    return mode.startswith("WN")


def bandwidth_of(mode):
    """kHz: 3 for STANAG 4539, the middle of the name for STANAG 5069 (WN12/48kHz/US)."""
    return int(mode.split("/")[1][:-3]) if is_5069(mode) else 3


BANDWIDTHS = sorted({bandwidth_of(m) for m in MODES})


def default_audio_rate(bandwidth_khz):
    """A sound card's rate that holds a bandwidth's real audio: 8000 Hz at 3 kHz (as
    before), else the least of 48000, 96000 and 192000 Hz over twice the sub-carrier
    (300 Hz + BW / 2) plus the RRC-0.35 band (1.35 x 800 Bd per kHz)."""
    if bandwidth_khz == 3:
        return 8000
    least = 2 * (300 + 500 * bandwidth_khz) + 1.35 * 800 * bandwidth_khz
    return next(r for r in (48000, 96000, 192000) if r >= least)


def default_iq_rate(bandwidth_khz):
    """Complex baseband's default rate: 4 samples a symbol, the receiver's own (9600 Hz at
    3 kHz, 3200 Hz per kHz above), so neither end resamples."""
    return 9600 if bandwidth_khz == 3 else int(sim.s5069_sample_rate(bandwidth_khz))


def symbol_rate_of(bandwidth_khz):
    return 2400.0 if bandwidth_khz == 3 else 800.0 * bandwidth_khz


def mode_name(text):
    """The mode's name as the modem spells it (2400S, WN8/3kHz/L), from any case."""
    known = sim.modem_mode(text.strip())
    if known is not None:
        return known[2]
    if text.strip().upper().startswith("W"):
        problem = sim.modem_mode_problem(text.strip()) + cli.nearest(text.strip(), MODES)
    else:
        problem = modes.mode_problem(text)
    raise argparse.ArgumentTypeError(f"mode {text}: {problem}")


def reading(text):
    """--reading NAME=VALUE: checked as the receiver takes it (preamble=find is rx's)."""
    problem = sim.s5069_settings_problem(text, False) if "=" in text else \
        f"not NAME=VALUE (one of {' '.join(sim.s5069_reading_choices())})"
    if problem:
        raise argparse.ArgumentTypeError(f"--reading {text}: {problem}")
    return text.strip()


# Receiver-only settings: tx refuses them, ber gives them to its receiver alone.
RECEIVER_ONLY = ("preamble", "frequency_loop", "k7_newest_bit")


def tx_settings(args, refuse_receiver_only=True):
    """The transmitter's STANAG 5069 settings text from --reading and --constraint-length."""
    words = list(getattr(args, "reading", None) or [])
    mine = [w for w in words
            if w.split("=")[0] not in RECEIVER_ONLY and w.split("=", 1)[-1].strip() != "auto"]
    if refuse_receiver_only and len(mine) < len(words):
        theirs = next(w for w in words if w not in mine)
        raise usage_error(f"--reading {theirs} is a receiver's (rx, ber), not the transmitter's")
    shape = [f"superframes={getattr(args, 'superframes', 1)}",
             f"tlc_blocks={getattr(args, 'tlc_blocks', 0)}",
             f"eot={'on' if getattr(args, 'eot', False) else 'off'}"]
    return " ".join(mine + [f"constraint_length={getattr(args, 'constraint_length', 7)}"] + shape)


def rx_settings(args, bandwidth_khz=None):
    """The receiver's settings text: --reading, and a bandwidth other than 3 kHz
    (rx's --bandwidth, or ber's mode's)."""
    words = list(getattr(args, "reading", None) or [])
    bw = getattr(args, "bandwidth", 3) if bandwidth_khz is None else bandwidth_khz
    if bw != 3:
        words.append(f"bandwidth_khz={bw}")
    return " ".join(words)


def mode_list(text):
    names = [mode_name(t) for t in text.split(",")]
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a mode is listed twice: {text!r}")
    return names


def snr_list(text):
    return [finite_float(t) for t in text.split(",")]


def name_of(meta):
    """The mode name from a burst's metadata: its `mode`, else 2400/"short" -> 2400S."""
    if meta.get("mode"):
        return meta["mode"]
    for name, (bps, il) in MODES.items():
        if (bps, il) == (meta.get("data_rate"), meta.get("interleaver")) and not is_5069(name):
            return name
    return f"{meta.get('data_rate')}?"


def air_time(mode, nbytes):
    """Nominal air time of a transmission of nbytes (the modulator's filter adds a few ms)."""
    return sim.air_time(mode, nbytes)


def max_bytes(mode, seconds):
    """The most bytes one transmission of at most `seconds` carries (-1: none fits)."""
    n = sim.max_bytes(mode, seconds)
    return n if n > 0 or air_time(mode, 0) <= seconds else -1


def longest_unit_s(listen, bandwidth_khz=3):
    """The longest interleaver block of the modes a receiver listens for."""
    return max(sim.unit_s(m) for m in MODES
               if (listen == "both" or (listen == "5069") == is_5069(m))
               and bandwidth_of(m) == bandwidth_khz)


def make_pdu(data, mode):
    meta = pmt.dict_add(pmt.make_dict(), pmt.intern("mode"), pmt.intern(mode))
    return pmt.cons(meta, pmt.init_u8vector(len(data), list(bytes(data))))


def quiet(*blks):
    """The system default log level may be debug: keep per-burst chatter off stderr."""
    for b in blks:
        b.set_log_level("info")


def make_receiver(rate, complex_input, listen="4539", settings="", threads=1):
    """The receiver (its output does not depend on how the scheduler cuts its input, nor
    on its thread count)."""
    rx = hfstack.s4539_rx(float(rate), complex_input, False, listen, settings, threads)
    quiet(rx)
    return rx


def piece_of(rate):
    return max(1, int(round(RX_PIECE_S * rate)))


def check_writable(path, what):
    if path in (None, "-"):
        return
    where = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(where):
        raise usage_error(f"{what} {path}: no such directory {where}")
    if os.path.isdir(path):
        raise usage_error(f"{what} {path}: is a directory")


def make_transmitter(rate, complex_output, mode, level, settings=""):
    bps, interleaver = MODES[mode][:2]
    try:
        tx = hfstack.s4539_tx(float(rate), complex_output, bps, interleaver, level, mode=mode,
                              s5069_settings=settings)
    except (ValueError, RuntimeError) as e:
        raise usage_error(f"--sample-rate {rate}: {e}")
    quiet(tx)
    return tx


def preamble_extra_s(mode, settings):
    """Air time a STANAG 5069 transmission's superframes=, tlc_blocks= and eot= settings
    add to the nominal one (M = 1, no TLC, no EOT): a preamble of M > 1 super-frames is
    18 Walsh symbols each (M = 1: 10), a TLC block or the EOT one, each 1/75 s at every
    bandwidth (32 x BW / 3 chips at 800 x BW Bd; m110d_timing). 0 for STANAG 4539."""
    if not is_5069(mode):
        return 0.0
    words = dict(w.split("=", 1) for w in settings.split() if "=" in w)
    m = int(words.get("superframes", 1))
    walsh_symbols = ((18 * m - 10 if m > 1 else 0) + int(words.get("tlc_blocks", 0))
                     + (1 if words.get("eot") == "on" else 0))
    return walsh_symbols / 75.0


def transmission_samples(tx, rate, mode, data, sink, item, extra_s=0.0):
    """Runs `tx` (a fresh transmitter) on one PDU into `sink` (a file or vector sink)
    through a head generous enough for the whole transmission (extra_s: what the
    preamble's options add); returns the length of the transmission in samples, from its
    tx_eob tag."""
    tb = gr.top_block()
    head = blocks.head(item, int(math.ceil((air_time(mode, len(data)) + extra_s + 0.1) * rate)))
    tags = blocks.tag_debug(item, "tx", "tx_eob")
    tags.set_display(False)
    tags.set_save_all(True)
    tb.connect(tx, head, sink)
    tb.connect(head, tags)
    tx.to_basic_block()._post(pmt.intern("in"), make_pdu(data, mode))
    tb.run()
    eob = [t.offset for t in tags.current_tags() if pmt.symbol_to_string(t.key) == "tx_eob"]
    if not eob:
        raise RuntimeError("the transmitter did not finish its transmission")
    return int(eob[0]) + 1


# --------------------------------------------------------------------------------- tx

def run_tx(args):
    if args.text is not None:
        data = args.text.encode("utf-8")
        source = "text"
    else:
        try:
            size = os.path.getsize(args.input)
            if not os.path.isfile(args.input):
                raise usage_error(f"{args.input}: not a regular file")
            # Bounded memory: refuse before reading what could not be sent anyway.
            if air_time(args.mode, size) > MAX_AIR_S:
                raise usage_error(f"{args.input}: {size} bytes take {air_time(args.mode, size):.0f} s "
                                  f"in {args.mode}; one transmission is at most {MAX_AIR_S:g} s")
            with open(args.input, "rb") as f:
                data = f.read()
        except OSError as e:
            raise usage_error(f"{args.input}: {e.strerror or e}")
        source = args.input
    nominal = air_time(args.mode, len(data))
    if nominal > MAX_AIR_S:
        raise usage_error(f"{len(data)} bytes take {nominal:.0f} s in {args.mode}; "
                          f"one transmission is at most {MAX_AIR_S:g} s")
    if not 0 < args.level <= 1:
        raise usage_error(f"--level must be in (0, 1], not {args.level:g}")
    check_writable(args.output, "output")
    settings = tx_settings(args)
    if iq_file.kind_of(args.output):
        return run_tx_iq(args, data, source, settings)
    if args.datatype is not None or args.centre_frequency is not None:
        raise usage_error("--datatype and --centre-frequency are an IQ recording's "
                          "(.sigmf-meta or raw .cf32, .ci16), not a WAV file's")
    try:
        tx = make_transmitter(args.sample_rate, False, args.mode, args.level, settings)
    except usage_error as e:
        if bandwidth_of(args.mode) <= 6:
            raise
        raise usage_error(f"{e}; a WAV file holds 3 and 6 kHz modes: name the output .sigmf-meta, "
                          f".cf32 or .ci16 for complex baseband")

    # The transmitter's real output goes to a float file; it is then clipped (and
    # counted) to 16 bits on the way into the WAV: GNU Radio's WAV sink would wrap.
    out_dir = os.path.dirname(os.path.abspath(args.output))
    float_path = None
    try:
        with tempfile.NamedTemporaryFile(prefix="hfstack-modem-", suffix=".f32", dir=out_dir,
                                         delete=False) as f:
            float_path = f.name
        sink = blocks.file_sink(gr.sizeof_float, float_path, False)
        sink.set_unbuffered(False)
        length = transmission_samples(tx, args.sample_rate, args.mode, data, sink, gr.sizeof_float,
                                      preamble_extra_s(args.mode, settings))
        sink.close()
        signal = np.memmap(float_path, dtype="<f4", mode="r")[:length]
        silence = np.zeros(int(round(SILENCE_S * args.sample_rate)), dtype="<i2").tobytes()
        clipped = 0
        with wave.open(args.output, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(args.sample_rate)
            w.writeframes(silence)
            for k in range(0, length, CHUNK):
                scaled = np.round(np.asarray(signal[k:k + CHUNK], dtype=np.float64) * 32768.0)
                clipped += int(np.count_nonzero(np.abs(scaled) > 32767))
                w.writeframes(np.clip(scaled, -32767, 32767).astype("<i2").tobytes())
            w.writeframes(silence)
        del signal
    except OSError as e:
        raise usage_error(f"{args.output}: {e.strerror or e}")
    finally:
        if float_path is not None and os.path.exists(float_path):
            os.unlink(float_path)
    samples = length + 2 * (len(silence) // 2)
    report = {"mode": args.mode, "data_rate": MODES[args.mode][0], "interleaver": MODES[args.mode][1],
              "source": source, "output": args.output, "bytes": len(data),
              "air_time_s": round(length / args.sample_rate, 4), "sample_rate_hz": args.sample_rate,
              "level": args.level, "samples": samples, "clipped": clipped}
    if is_5069(args.mode) or MODES[args.mode][0] >= 3200:  # STANAG 5069, App C: readings
        report["s5069_settings"] = settings
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{PROG}: {args.mode}, {len(data)} bytes, {length / args.sample_rate:.3f} s of air time, "
              f"{samples} samples at {args.sample_rate} Hz in {args.output}"
              + (f"; {clipped} samples clipped" if clipped else ""), file=sys.stderr)
    return 0


def run_tx_iq(args, data, source, settings):
    """tx to complex baseband: SigMF (cf32_le or ci16_le) or raw samples, the signal
    centred on 0 Hz (SigMF: on --centre-frequency, written in its captures)."""
    kind = iq_file.kind_of(args.output)
    datatype = args.datatype or (iq_file.raw_datatype(args.output) if kind == "raw" else "cf32_le")
    if kind == "raw" and args.centre_frequency is not None:
        raise usage_error(f"{args.output}: a raw recording keeps no centre frequency; "
                          f"write SigMF (.sigmf-meta) to keep --centre-frequency")
    tx = make_transmitter(args.sample_rate, True, args.mode, args.level, settings)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    complex_path, out = None, None
    try:
        with tempfile.NamedTemporaryFile(prefix="hfstack-modem-", suffix=".cf32", dir=out_dir,
                                         delete=False) as f:
            complex_path = f.name
        sink = blocks.file_sink(gr.sizeof_gr_complex, complex_path, False)
        sink.set_unbuffered(False)
        length = transmission_samples(tx, args.sample_rate, args.mode, data, sink,
                                      gr.sizeof_gr_complex, preamble_extra_s(args.mode, settings))
        sink.close()
        signal = np.memmap(complex_path, dtype="<c8", mode="r")[:length]
        silence = np.zeros(int(round(SILENCE_S * args.sample_rate)), dtype=np.complex64)
        out = iq_file.writer(args.output, datatype, float(args.sample_rate), args.centre_frequency,
                             f"{PROG} tx {args.mode}, {len(data)} bytes")
        out.write(silence)
        for k in range(0, length, CHUNK):
            out.write(signal[k:k + CHUNK])
        out.write(silence)
        out.annotate(len(silence), length, args.mode, 1000.0 * bandwidth_of(args.mode),
                     args.centre_frequency)
        out.close()
        del signal
    except iq_file.iq_error as e:
        raise usage_error(str(e))
    except OSError as e:
        raise usage_error(f"{args.output}: {e.strerror or e}")
    finally:
        if complex_path is not None and os.path.exists(complex_path):
            os.unlink(complex_path)
    samples = length + 2 * len(silence)
    report = {"mode": args.mode, "data_rate": MODES[args.mode][0], "interleaver": MODES[args.mode][1],
              "source": source, "output": args.output, "format": kind, "datatype": datatype,
              "bytes": len(data), "air_time_s": round(length / args.sample_rate, 4),
              "sample_rate_hz": args.sample_rate, "centre_frequency_hz": args.centre_frequency,
              "level": args.level, "samples": samples, "clipped": out.clipped}
    if is_5069(args.mode) or MODES[args.mode][0] >= 3200:
        report["s5069_settings"] = settings
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{PROG}: {args.mode}, {len(data)} bytes, {length / args.sample_rate:.3f} s of air time, "
              f"{samples} complex samples ({datatype}) at {args.sample_rate} Hz in {args.output}"
              + (f"; {out.clipped} numbers clipped" if out.clipped else ""), file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------- rx

def wav_info(path):
    try:
        with wave.open(path, "rb") as w:
            if w.getnchannels() != 1:
                raise usage_error(f"{path}: {w.getnchannels()} channels; mono only")
            if w.getsampwidth() != 2:
                raise usage_error(f"{path}: {8 * w.getsampwidth()}-bit samples; 16-bit PCM only")
            return w.getframerate(), w.getnframes()
    except (wave.Error, EOFError) as e:
        raise usage_error(f"{path}: not a readable WAV file ({str(e) or 'too short'})")
    except OSError as e:
        raise usage_error(f"{path}: {e.strerror or e}")


def preview(data):
    """(text or None, hex preview)."""
    hex_preview = data[:32].hex(" ") + (" ..." if len(data) > 32 else "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, hex_preview
    if all(c.isprintable() or c in "\n\r\t" for c in text):
        return text, hex_preview
    return None, hex_preview


def finite_or_none(v):
    return round(float(v), 2) if isinstance(v, (int, float)) and math.isfinite(v) else None


def check_rx_sources(args):
    """One source: a WAV file, or a sound card for --gui; --gui needs a display."""
    if args.device is not None and args.input is not None:
        raise usage_error("give a WAV file or --device, not both")
    if args.device is not None and not args.gui:
        raise usage_error("--device (a sound card) is received with --gui only")
    if args.device is None and args.input is None:
        raise usage_error("rx needs a WAV file (or --device with --gui)")
    if args.screenshot is not None and not args.gui:
        raise usage_error("--screenshot needs --gui")
    if args.sound_rate is not None and args.device is None:
        raise usage_error("--sound-rate is the sound card's: it needs --device")
    if args.gui:
        from gnuradio.hfstack import gui
        try:
            gui.check_display()
        except gui.display_error as e:
            raise usage_error(str(e))
    check_writable(args.screenshot, "--screenshot")


def run_with_window(tb, samples, rx, rate, title, args, started=None, shown_samples=None,
                    complex_samples=False):
    """rx --gui: the window over the running flowgraph, until it is closed (or, with
    --screenshot, until the recording is received and saved); started() once running.
    The waterfall shows the first shown_samples (a recording's, not the silence after)
    of `samples`, audio or complex baseband at `rate`; the SNR is in --bandwidth."""
    from gnuradio.hfstack import gui
    window = gui.receiver_window(tb, samples, rx, float(rate), complex_samples, title,
                                 shown_samples, args.bandwidth)
    gui.run_flowgraph_window(tb, window, args.screenshot, started)


def open_sound_card(device, rate):
    from gnuradio import audio
    from gnuradio.hfstack.radio import quiet_stderr
    try:
        with quiet_stderr():
            return audio.source(rate, device, True)
    except RuntimeError as e:
        raise device_error(f"sound card {device or 'default'} cannot be opened at {rate} Hz: "
                           f"no such device, busy, or the rate is not supported "
                           f"({' '.join(str(e).split())})")


def run_rx(args):
    check_rx_sources(args)
    if args.json and args.output == "-":
        raise usage_error("--json and --output - would mix on standard output")
    if args.device is not None:
        return run_rx_sound_card(args)
    if os.path.isdir(args.input):
        raise usage_error(f"{args.input}: is a directory")
    if iq_file.kind_of(args.input):
        return run_rx_iq(args)
    if args.sample_rate is not None or args.centre_frequency is not None \
            or args.carrier_frequency is not None:
        raise usage_error("--sample-rate, --centre-frequency and --carrier-frequency are an IQ "
                          "recording's (.sigmf-meta or raw .cf32, .cfile, .ci16), not a WAV file's")
    settle_bandwidth(args, 3)
    rate, frames = wav_info(args.input)
    if frames == 0:
        raise usage_error(f"{args.input}: no samples")
    check_writable(args.output, "--output")
    try:
        rx = make_receiver(rate, False, args.listen, rx_settings(args), args.threads)
    except (ValueError, RuntimeError) as e:
        raise usage_error(f"{args.input}: {rate} Hz: {e}")
    longest_s = longest_unit_s(args.listen, args.bandwidth)
    # Counted first: the header may promise more samples than the file holds. Then the
    # recording and silence, so a burst the recording cuts short ends too, filled to
    # whole pieces of the receiver's input.
    tb = gr.top_block()
    count = blocks.null_sink(gr.sizeof_float)
    tb.connect(blocks.wavfile_source(args.input, False), count)
    tb.run()
    frames = count.nitems_read(0)
    if frames == 0:
        raise usage_error(f"{args.input}: no samples")
    if frames > 2 ** 31 - 1 - 12 * rate:
        raise usage_error(f"{args.input}: too long ({frames} samples)")
    piece = piece_of(rate)
    total = -(-(frames + int((RX_TAIL_S + 2 * longest_s) * rate)) // piece) * piece
    tb = gr.top_block()
    mux = blocks.stream_mux(gr.sizeof_float, [frames, total - frames])
    got = blocks.message_debug()
    tb.connect(blocks.wavfile_source(args.input, False), (mux, 0))
    tb.connect(blocks.null_source(gr.sizeof_float), (mux, 1))
    tb.msg_connect((rx, "out"), (got, "store"))
    if args.gui:  # at the pace of the recording, to watch it
        from gnuradio.hfstack.radio import pacer
        pace = pacer(gr.sizeof_float, rate)
        tb.connect(mux, blocks.head(gr.sizeof_float, total), pace, rx)
        run_with_window(tb, (pace, 0), rx, rate, f"{PROG} rx {args.input}", args,
                        shown_samples=frames)
    else:
        tb.connect(mux, blocks.head(gr.sizeof_float, total), rx)
        tb.run()
    return report_bursts(args, got, f"{args.input} ({frames / rate:.2f} s at {rate} Hz)",
                         {"input": args.input, "sample_rate_hz": rate, "samples": frames})


def settle_bandwidth(args, bandwidth_khz):
    """--bandwidth, else the recording's; and the standards listened for at it."""
    if args.bandwidth is None:
        args.bandwidth = bandwidth_khz
    if args.listen is None:
        args.listen = "both" if args.bandwidth == 3 else "5069"


def recording_bandwidth(args, rec):
    """The bandwidth the SigMF annotations' modem modes name (3 kHz when none does);
    --bandwidth has to agree with them."""
    named = {}
    for label in rec.labels():
        known = sim.modem_mode(label.strip())
        if known is not None:
            named.setdefault(bandwidth_of(known[2]), known[2])
    for a in rec.annotations:  # a mode's band edges must span its bandwidth
        known = sim.modem_mode(str(a.get("core:label", "")).strip())
        if known is not None and "core:freq_lower_edge" in a:
            width = a["core:freq_upper_edge"] - a["core:freq_lower_edge"]
            if abs(width - 1000.0 * bandwidth_of(known[2])) > 1.0:
                raise usage_error(f"{args.input}: the annotation of {known[2]} spans {width:g} Hz, "
                                  f"not its {bandwidth_of(known[2])} kHz")
    if args.bandwidth is not None:
        if named and args.bandwidth not in named:
            raise usage_error(f"{args.input}: --bandwidth {args.bandwidth} contradicts the "
                              f"recording's {' and '.join(named.values())}")
        return args.bandwidth
    if len(named) > 1:
        raise usage_error(f"{args.input}: the recording holds modes of "
                          f"{' and '.join(f'{b} kHz' for b in sorted(named))}: give --bandwidth")
    return next(iter(named), 3)


def run_rx_iq(args):
    """rx of complex baseband: SigMF or raw (a uhd_rx_cfile's, --sample-rate given), the
    signal on --carrier-frequency (default: the recording's annotation, else its centre)
    shifted to 0 Hz. With --gui the receiver's input (on 0 Hz, decimated) is played at its
    own rate into the window, as a WAV file's audio is."""
    try:
        rec = iq_file.read(args.input, args.sample_rate, args.centre_frequency)
    except iq_file.iq_error as e:
        raise usage_error(str(e))
    settle_bandwidth(args, recording_bandwidth(args, rec))
    check_writable(args.output, "--output")
    rate = rec.sample_rate
    carrier = args.carrier_frequency
    if carrier is None and rec.centre_hz is not None:
        carrier = rec.band_centre_hz()
    if carrier is not None and rec.centre_hz is None:
        raise usage_error(f"{args.input}: --carrier-frequency needs the recording's centre "
                          f"(--centre-frequency, or SigMF's core:frequency)")
    offset = 0.0 if carrier is None else carrier - rec.centre_hz
    # Half the RRC-0.35 band either side of the carrier must lie inside the recording.
    half_band = 0.5 * 1.35 * symbol_rate_of(args.bandwidth)
    if abs(offset) + half_band > rate / 2:
        where = f" {offset:+g} Hz off its centre" if offset else ""
        raise usage_error(f"{args.input}: {rate:g} Hz complex samples cannot carry the "
                          f"{args.bandwidth} kHz band ({2 * half_band:g} Hz){where}")
    # A radio's rate above the receiver's (a USRP's 2 MHz, say): low-passed and decimated
    # by a whole number once the carrier is on 0 Hz.
    decimation = int(math.ceil(rate / RX_MAX_RATE))
    rx_rate = rate / decimation
    try:
        rx = make_receiver(rx_rate, True, args.listen, rx_settings(args), args.threads)
    except (ValueError, RuntimeError) as e:
        raise usage_error(f"{args.input}: {rate:g} Hz: {e}")
    frames = rec.samples
    if frames > 2 ** 31 - 1 - 12 * rate:
        raise usage_error(f"{args.input}: too long ({frames} samples)")
    longest_s = longest_unit_s(args.listen, args.bandwidth)
    piece = piece_of(rx_rate) * decimation
    total = -(-(frames + int((RX_TAIL_S + 2 * longest_s) * rate)) // piece) * piece
    tb = gr.top_block()
    if rec.datatype == "ci16_le":
        source = [blocks.file_source(gr.sizeof_short, rec.data_path, False),
                  blocks.interleaved_short_to_complex(False, False, iq_file.CI16_FULL_SCALE)]
    else:
        source = [blocks.file_source(gr.sizeof_gr_complex, rec.data_path, False)]
    if offset:
        source.append(blocks.rotator_cc(-2 * math.pi * offset / rate))
    mux = blocks.stream_mux(gr.sizeof_gr_complex, [frames, total - frames])
    got = blocks.message_debug()
    tb.connect(*source, (mux, 0))
    tb.connect(blocks.null_source(gr.sizeof_gr_complex), (mux, 1))
    tb.msg_connect((rx, "out"), (got, "store"))
    if decimation > 1:
        taps = gr_filter.firdes.low_pass(1.0, rate, 0.4 * rx_rate, 0.1 * rx_rate)
        chain = [gr_filter.fir_filter_ccf(decimation, taps),
                 blocks.head(gr.sizeof_gr_complex, total // decimation)]
    else:
        chain = [blocks.head(gr.sizeof_gr_complex, total)]
    if args.gui:  # at the pace of the recording, to watch it
        from gnuradio.hfstack.radio import pacer
        pace = pacer(gr.sizeof_gr_complex, rx_rate)
        tb.connect(mux, *chain, pace, rx)
        run_with_window(tb, (pace, 0), rx, rx_rate, f"{PROG} rx {args.input}", args,
                        shown_samples=frames // decimation, complex_samples=True)
    else:
        tb.connect(mux, *chain, rx)
        tb.run()
    return report_bursts(args, got, f"{args.input} ({frames / rate:.2f} s at {rate:g} Hz complex)",
                         {"input": args.input, "sample_rate_hz": rate, "samples": frames,
                          "datatype": rec.datatype, "centre_frequency_hz": rec.centre_hz,
                          "carrier_offset_hz": offset, "bandwidth_khz": args.bandwidth})


def run_rx_sound_card(args):
    settle_bandwidth(args, 3)
    rate = args.sound_rate or 48000
    try:
        rx = make_receiver(rate, False, args.listen, rx_settings(args), args.threads)
    except (ValueError, RuntimeError) as e:
        raise usage_error(f"--sound-rate {rate}: {e}")
    tb = gr.top_block()
    source = open_sound_card(args.device, rate)
    got = blocks.message_debug()
    tb.connect(source, rx)
    tb.msg_connect((rx, "out"), (got, "store"))
    name = args.device or "default"
    run_with_window(tb, (source, 0), rx, rate, f"{PROG} rx: sound card {name}", args,
                    lambda: logging.getLogger(PROG).info(
                        f"receiving sound card {name} at {rate} Hz until the window is closed"))
    return report_bursts(args, got, f"sound card {name}",
                         {"input": f"sound card {name}", "sample_rate_hz": rate})


def report_bursts(args, got, where, summary):
    """Prints (or writes as JSON) the bursts `got` stored; 1 when there were none."""
    bursts, everything = [], []
    for i in range(got.num_messages()):
        msg = got.get_message(i)
        meta = pmt.to_python(pmt.car(msg))
        data = bytes(pmt.u8vector_elements(pmt.cdr(msg)))
        everything.append(data)
        text, hex_preview = preview(data)
        bursts.append({
            "mode": name_of(meta),
            "data_rate": meta.get("data_rate"), "interleaver": meta.get("interleaver"),
            "snr_db": finite_or_none(meta.get("snr_db")),
            "frequency_offset_hz": finite_or_none(meta.get("frequency_offset_hz")),
            "bytes": len(data), "bytes_bad": bool(meta.get("bytes_bad")),
            "readings": meta.get("readings"),
            "text": text, "hex_preview": hex_preview})
    if args.output is not None:
        try:
            if args.output == "-":
                for data in everything:
                    sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
            else:
                with open(args.output, "wb") as f:
                    for data in everything:
                        f.write(data)
        except OSError as e:
            raise usage_error(f"{args.output}: {e.strerror or e}")
    if args.json:
        print(json.dumps({**summary, "bursts": bursts}))
    else:
        out = sys.stderr if args.output == "-" else sys.stdout
        for i, b in enumerate(bursts, 1):
            shown = json.dumps(b["text"], ensure_ascii=False) if b["text"] is not None \
                else f"hex {b['hex_preview']}"
            snr = "?" if b["snr_db"] is None else f"{b['snr_db']:.1f}"
            offset = "?" if b["frequency_offset_hz"] is None else f"{b['frequency_offset_hz']:+.1f}"
            readings = f" ({b['readings']})" if b["readings"] else ""
            print(f"burst {i}: {b['mode']}{readings}, SNR {snr} dB, offset {offset} Hz, "
                  f"{b['bytes']} bytes{' (bytes_bad: cut before its end)' if b['bytes_bad'] else ''}: "
                  f"{shown}", file=out)
    if not bursts:
        print(f"{PROG}: no burst found in {where}", file=sys.stderr)
        return 1
    return 0


# -------------------------------------------------------------------------------- ber

class burst_source(gr.sync_block):
    """Complex baseband of `count` transmissions of `nbytes` random bytes each, back to
    back, then `tail_s` of silence. Each transmission is made when the previous one
    has been sent (one in memory at a time), by a transmitter in a small flowgraph of
    its own, so the stream is the same on every run."""

    def __init__(self, rate, mode, nbytes, count, rng, tail_s, settings=""):
        gr.sync_block.__init__(self, "hfstack_modem_bursts", None, [np.complex64])
        self.rate, self.mode, self.nbytes, self.left = rate, mode, nbytes, count
        self.settings = settings
        self.rng = rng
        self.sent = []
        self.tail = int(tail_s * rate)
        self.current = np.zeros(0, dtype=np.complex64)
        self.position = 0

    def next_burst(self):
        if self.left == 0:
            if self.tail == 0:
                return False
            self.current, self.tail = np.zeros(self.tail, dtype=np.complex64), 0
        else:
            self.left -= 1
            data = self.rng.integers(0, 256, self.nbytes, dtype=np.uint8)
            self.sent.append(data)
            tx = make_transmitter(self.rate, True, self.mode, 1.0, self.settings)
            sink = blocks.vector_sink_c()
            length = transmission_samples(tx, self.rate, self.mode, data.tobytes(), sink,
                                          gr.sizeof_gr_complex,
                                          preamble_extra_s(self.mode, self.settings))
            self.current = np.asarray(sink.data()[:length], dtype=np.complex64)
        self.position = 0
        return True

    def work(self, input_items, output_items):
        out = output_items[0]
        produced = 0
        while produced < len(out):
            if self.position == len(self.current) and not self.next_burst():
                break
            n = min(len(out) - produced, len(self.current) - self.position)
            out[produced:produced + n] = self.current[self.position:self.position + n]
            self.position += n
            produced += n
        return produced if produced else -1  # -1: WORK_DONE


def bit_errors(received, sent):
    """Wrong bits of one burst: compared bit by bit, missing bytes all wrong, extra
    bytes ignored."""
    n = min(len(received), len(sent))
    return int(POPCOUNT[received[:n] ^ sent[:n]].sum()) + 8 * (len(sent) - n)


def resembles(received, sent):
    """True when the received bytes agree with the sent ones far more than chance would
    (random bytes agree on half the bits; this asks for 5 standard deviations better)."""
    n = min(len(received), len(sent))
    bits = 8 * n
    if bits < 64:
        return False
    wrong = int(POPCOUNT[received[:n] ^ sent[:n]].sum())
    return wrong / bits < 0.5 - 2.5 / math.sqrt(bits)


def match_bursts(sent, received):
    """Pairs received bursts with sent ones, in order: first those whose bytes clearly
    resemble a sent burst; then, between two such pairs, the rest when as many were
    received as sent there (a burst received too badly to recognise still counts its
    own errors). Returns {sent index: received index}."""
    pairs, k = {}, 0
    for j, r in enumerate(received):
        for i in range(k, len(sent)):
            if resembles(r, sent[i]):
                pairs[i] = j
                k = i + 1
                break
    anchors = [(-1, -1)] + sorted(pairs.items()) + [(len(sent), len(received))]
    for (i0, j0), (i1, j1) in zip(anchors, anchors[1:]):
        if i1 - i0 == j1 - j0 and i1 - i0 > 1:
            for d in range(1, i1 - i0):
                pairs[i0 + d] = j0 + d
    return pairs


def upper95(errors, bits):
    """95 % upper bound of the BER (Poisson)."""
    if bits == 0:
        return math.nan
    return (3.0 if errors == 0 else errors + 1.96 * math.sqrt(errors) + 1) / bits


def ber_rate(args, mode):
    """ber's complex baseband rate for a mode: --sample-rate, else 9600 Hz at 3 kHz and the
    modem's own rate (4 samples a symbol) above."""
    if args.sample_rate:
        return args.sample_rate
    bw = bandwidth_of(mode)
    return 9600 if bw == 3 else int(sim.s5069_sample_rate(bw))


def ber_listen(args, mode):
    """The standards listened for: those of the modes measured at 3 kHz (both for a
    mix), STANAG 5069's alone above."""
    return args.listen if bandwidth_of(mode) == 3 else "5069"


def ber_point(args, mode, snr_db):
    nbytes = max_bytes(mode, args.burst_seconds)
    burst_s = air_time(mode, nbytes)
    count = max(1, int(round(args.seconds / burst_s)))
    rng = np.random.default_rng(args.seed)
    rate = ber_rate(args, mode)
    tb = gr.top_block()
    source = burst_source(rate, mode, nbytes, count, rng, RX_TAIL_S + 2 * sim.unit_s(mode),
                          tx_settings(args, refuse_receiver_only=False))
    try:
        channel = hfstack.hf_channel_cc(float(rate), args.profile, snr_db=snr_db,
                                        noise_bandwidth_hz=1000.0 * bandwidth_of(mode), signal_power=1.0,
                                        seed=args.seed)
        rx = make_receiver(rate, True, ber_listen(args, mode), rx_settings(args, bandwidth_of(mode)),
                           args.threads)
    except (ValueError, RuntimeError) as e:
        raise usage_error(str(e))
    quiet(channel)
    got = blocks.message_debug()
    tb.connect(source, channel, rx)
    tb.msg_connect((rx, "out"), (got, "store"))
    tb.run()
    received, snrs = [], []
    for i in range(got.num_messages()):
        msg = got.get_message(i)
        received.append(np.frombuffer(bytes(pmt.u8vector_elements(pmt.cdr(msg))), dtype=np.uint8))
        snr = pmt.to_python(pmt.car(msg)).get("snr_db")
        if snr is not None and math.isfinite(snr):
            snrs.append(snr)
    sent = source.sent
    pairs = match_bursts(sent, received)
    bits = sum(8 * len(s) for s in sent)
    errors = sum(bit_errors(received[pairs[i]], s) if i in pairs else 8 * len(s)
                 for i, s in enumerate(sent))
    return {"mode": mode, "snr_db": snr_db, "bits": bits, "errors": errors,
            "ber": errors / bits if bits else math.nan, "ber_upper95": upper95(errors, bits),
            "bursts": len(sent), "bursts_lost": len(sent) - len(pairs),
            "bursts_received": len(received),
            "rx_snr_db": round(float(np.mean(snrs)), 2) if snrs else None}


def format_table(rows):
    width = max([6] + [len(r["mode"]) for r in rows])
    lines = [f"{'mode':>{width}} {'snr_db':>7} {'bits':>9} {'errors':>8} {'ber':>10} {'upper95':>10} "
             f"{'bursts':>6} {'lost':>5}"]
    for r in rows:
        lines.append(f"{r['mode']:>{width}} {r['snr_db']:>7g} {r['bits']:>9d} {r['errors']:>8d} "
                     f"{r['ber']:>10.3e} {r['ber_upper95']:>10.3e} {r['bursts']:>6d} "
                     f"{r['bursts_lost']:>5d}")
    return "\n".join(lines)


CSV_FIELDS = ("mode", "snr_db", "bits", "errors", "ber", "ber_upper95", "bursts", "bursts_lost",
              "bursts_received", "rx_snr_db")


def write_csv(rows, path):
    f = sys.stdout if path == "-" else open(path, "w", newline="")
    try:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else f"{r[k]:.6g}" if isinstance(r[k], float) else r[k])
                        for k in CSV_FIELDS})
    finally:
        if f is not sys.stdout:
            f.close()


def plot_ber(rows, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise usage_error("--plot needs matplotlib (Debian: apt-get install python3-matplotlib)")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for mode in args.modes:
        pts = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["snr_db"])
        seen = [r for r in pts if r["errors"]]
        line = ax.plot([r["snr_db"] for r in seen], [r["ber"] for r in seen], marker="o", label=mode)[0]
        zero = [r for r in pts if r["errors"] == 0]
        if zero:
            # No error seen: the point stands at its 95 % upper bound, an open triangle.
            ax.plot([r["snr_db"] for r in zero], [r["ber_upper95"] for r in zero], linestyle="none",
                    marker="v", markersize=10, markerfacecolor="white", color=line.get_color())
    ax.plot([], [], linestyle="none", marker="v", markerfacecolor="white", color="grey",
            label="no errors: 95 % upper bound")
    ax.set_yscale("log")
    widths = sorted({bandwidth_of(m) for m in args.modes})
    ax.set_xlabel(f"SNR, dB in {', '.join(map(str, widths))} kHz ({args.profile})")
    ax.set_ylabel("bit error rate")
    ax.set_title(f"{'STANAG 5069' if all(is_5069(m) for m in args.modes) else 'STANAG 4539'}, "
                 f"{args.profile}, {args.seconds:g} s per point, seed {args.seed}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(args.plot)
    except (OSError, ValueError) as e:
        raise usage_error(f"--plot {args.plot}: {getattr(e, 'strerror', None) or e}")
    finally:
        plt.close(fig)


def run_ber(args):
    if args.profile not in sim.fading_profile_names():
        raise usage_error(f"unknown profile {args.profile!r} "
                          f"(profiles: {', '.join(sim.fading_profile_names())})")
    for mode in args.modes:
        if max_bytes(mode, args.burst_seconds) < 1:
            raise usage_error(f"--burst-seconds {args.burst_seconds:g} holds no byte in {mode}")
    check_writable(args.csv, "--csv")
    check_writable(args.plot, "--plot")
    # The receiver listens for the standards of the 3 kHz modes measured (both for a mix).
    families = {is_5069(m) for m in args.modes if bandwidth_of(m) == 3}
    args.listen = "both" if len(families) == 2 else "5069" if True in families else "4539"
    # Checked once here so a bad rate is refused before any point runs.
    for mode in args.modes:
        rate = ber_rate(args, mode)
        make_transmitter(rate, True, mode, 1.0, tx_settings(args, refuse_receiver_only=False))
        try:
            make_receiver(rate, True, ber_listen(args, mode), rx_settings(args, bandwidth_of(mode)),
                          args.threads)
        except (ValueError, RuntimeError) as e:
            raise usage_error(f"--sample-rate {rate}: {e}")
    rows = []
    for mode in args.modes:
        for snr_db in args.snr:
            started = time.monotonic()
            r = ber_point(args, mode, snr_db)
            rows.append(r)
            print(f"{PROG}: {mode} at {snr_db:g} dB ({args.profile}): {r['errors']} errors in "
                  f"{r['bits']} bits, BER {r['ber']:.2e} (95 % below {r['ber_upper95']:.2e}), "
                  f"{r['bursts_lost']} of {r['bursts']} bursts lost, "
                  f"{time.monotonic() - started:.1f} s", file=sys.stderr)
    table = format_table(rows)
    print(table, file=sys.stderr if args.csv == "-" else sys.stdout)
    if args.csv:
        try:
            write_csv(rows, args.csv)
        except OSError as e:
            raise usage_error(f"--csv {args.csv}: {e.strerror or e}")
    if args.plot:
        plot_ber(rows, args)
    return 0


# ------------------------------------------------------------------------------- main

def add_threads_option(p):
    p.add_argument("--threads", type=positive_int, default=modes.default_receiver_threads(), metavar="N",
                   help="threads the STANAG 5069 receiver uses, 1 or 2 (more counts as 2; "
                        "default 2 where there are two cores): the same bursts and bytes, "
                        "faster above 3 kHz")


def add_s5069_options(p, transmitter):
    p.add_argument("--reading", type=reading, action="append", metavar="NAME=VALUE",
                   help="reading of an uncertain constant (App C: scrambler, tail_biting; "
                        "STANAG 5069: all), repeatable (the first of each the transmitter's "
                        "default; the receiver finds tail_biting, and for STANAG 5069 "
                        "scrambler, pn_alignment and wid_parity, unless given one): "
                        + " ".join(sim.s5069_reading_choices())
                        + ("; for the receiver also scrambler=auto, tail_biting=auto, "
                           "preamble=find|configured, k7_newest_bit=msb|lsb (lsb: the mirrored "
                           "K=7 code, never tried unless given), "
                           "frequency_loop=first_order|second_order (second: follows a swept "
                           "offset, D.6.5)"))
    if transmitter:
        p.add_argument("--constraint-length", type=int, choices=(7, 9), default=7,
                       help="STANAG 5069 convolutional code, K=7 (default) or K=9")
        p.add_argument("--superframes", type=int, choices=range(1, 33), default=1, metavar="M",
                       help="STANAG 5069 preamble super-frames M, 1-32 (default 1; D-LXIV's "
                            "rows use 20)")
        p.add_argument("--tlc-blocks", type=int, choices=range(0, 256), default=0, metavar="N",
                       help="STANAG 5069 TLC blocks N before the preamble, 0-255 (default 0)")
        p.add_argument("--eot", action="store_true",
                       help="STANAG 5069: extend the final mini-probe (EOT, 13.3 ms at 3 kHz)")


def parse_args(argv):
    p = one_line_parser(prog=PROG, description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_version(p)
    p.add_argument("--list-modes", action="store_true",
                   help="list the modes of both standards and the STANAG 5069 readings, then exit")
    sub = p.add_subparsers(dest="command", metavar="{tx,rx,ber}")

    t = sub.add_parser("tx", help="text or a file to a WAV file (16-bit PCM mono)",
                       description="One transmission to a WAV file (16-bit PCM mono).")
    t.add_argument("output", help="file to write: WAV (16-bit PCM mono, real audio: 3 and 6 kHz "
                                  "modes), or complex baseband for every mode: SigMF (NAME.sigmf-meta "
                                  "and NAME.sigmf-data) or raw samples (.cf32, .cfile, .ci16)")
    t.add_argument("--mode", type=mode_name, required=True,
                   help="mode, e.g. 2400S, 9600L, WN8/3kHz/L, WN12/48kHz/US (--list-modes: all)")
    g = t.add_mutually_exclusive_group(required=True)
    g.add_argument("--text", help="text to send (UTF-8)")
    g.add_argument("--input", metavar="FILE", help="file whose bytes to send")
    cli.add_renamed(t, "--sample-rate", "--rate", type=positive_int,
                    help="sample rate, Hz: a rational multiple of the symbol rate (2400 Bd at 3 kHz: "
                         "8000, 9600, 48000; 800 Bd per kHz above) holding the mode's real audio "
                         "(default 8000 at 3 kHz, 48000 at 6 kHz; real audio holds 3 and 6 kHz "
                         "modes only)")
    t.add_argument("--datatype", choices=tuple(iq_file.DATATYPES),
                   help="SigMF samples: cf32_le (default) or ci16_le (16-bit, full scale 1)")
    t.add_argument("--centre-frequency", type=finite_float, metavar="HZ",
                   help="SigMF: the carrier the recording is centred on, written in its captures")
    t.add_argument("--level", type=finite_float, default=0.25,
                   help="rms of the signal, full scale 1 (default 0.25: room for the peaks)")
    t.add_argument("--json", action="store_true", help="report as JSON on standard output")
    add_s5069_options(t, transmitter=True)

    r = sub.add_parser("rx", help="the bursts in a recording (WAV or IQ) to bytes",
                       description="Every burst in a recording: a WAV file (16-bit PCM mono, 4 kHz "
                                   "and up) or complex baseband (SigMF, raw cf32 or ci16). "
                                   "Exit status 1 when none is found.")
    r.add_argument("input", nargs="?",
                   help="file to read: WAV, SigMF (.sigmf-meta) or raw complex samples (.cf32, "
                        ".cfile, .fc32: float; .ci16, .sc16: 16-bit; a uhd_rx_cfile recording)")
    r.add_argument("--sample-rate", type=positive_float, metavar="HZ",
                   help="a raw recording's complex sample rate (SigMF's is in its metadata)")
    r.add_argument("--centre-frequency", type=finite_float, metavar="HZ",
                   help="the frequency a raw recording is centred on (uhd_rx_cfile's -f)")
    r.add_argument("--carrier-frequency", type=finite_float, metavar="HZ",
                   help="the signal's carrier in an IQ recording (default: its SigMF annotation, "
                        "else the recording's centre)")
    r.add_argument("--output", metavar="FILE", help="write the bytes of all bursts, in order (- = stdout)")
    r.add_argument("--json", action="store_true", help="report as JSON on standard output")
    r.add_argument("--gui", action="store_true",
                   help="show a window while receiving: waterfall (of the audio, or of complex "
                        "baseband with the carrier on 0 Hz), constellation of the equalised "
                        "symbols, the bursts, SNR and throughput against time (a file, WAV or IQ, "
                        "is played at its own pace; the report follows when the window is closed)")
    r.add_argument("--device", metavar="ALSA_NAME",
                   help="receive a sound card instead of a file (with --gui; '' for the default "
                        "device), until the window is closed")
    r.add_argument("--sound-rate", type=positive_int, metavar="HZ",
                   help="the sound card's sample rate (default 48000)")
    r.add_argument("--screenshot", metavar="FILE.png",
                   help="with --gui: save the window as a PNG; a file's once it has been received "
                        "and the constellation drawn (the window then closes), a sound card's when "
                        "the window is closed or on Ctrl-C")
    r.add_argument("--listen", choices=LISTEN,
                   help="standards listened for: 4539, 5069 or both (default: both at 3 kHz, "
                        "5069 above; each receiver costs its own time)")
    r.add_argument("--bandwidth", type=int, choices=BANDWIDTHS, metavar="KHZ",
                   help="the STANAG 5069 bandwidth listened on, kHz: "
                        + ", ".join(map(str, BANDWIDTHS)) + " (default 3, or a SigMF "
                        "recording's mode's; above 3 STANAG 5069 alone: its real audio on "
                        "300 Hz + BW / 2 holds 6 kHz at most, complex baseband every bandwidth)")
    add_threads_option(r)
    add_s5069_options(r, transmitter=False)

    b = sub.add_parser("ber", help="bit error rate through the HF channel simulator",
                       description="Bit error rate of random bytes through the HF channel simulator, "
                                   "per mode and SNR.")
    b.add_argument("--modes", type=mode_list, required=True,
                   help="comma-separated modes, e.g. 2400S,1200S or WN12/48kHz/US (--list-modes: all)")
    b.add_argument("--snr", type=snr_list, required=True,
                   help="comma-separated SNRs, dB in the mode's bandwidth (3 kHz for STANAG 4539)")
    b.add_argument("--profile", default="awgn",
                   help="channel preset (default awgn): " + ", ".join(sim.fading_profile_names()))
    b.add_argument("--seconds", type=positive_float, default=60.0,
                   help="air time per point, s (default 60)")
    b.add_argument("--burst-seconds", type=positive_float, default=10.0,
                   help="longest air time of one burst, s (default 10)")
    cli.add_renamed(b, "--sample-rate", "--rate", type=positive_int,
                    help="complex sample rate, Hz (default 9600 at 3 kHz, the modem's own above: "
                         "4 samples a symbol; another, a radio's, is resampled by the receiver)")
    b.add_argument("--seed", type=int, default=1, help="seed of the data, fading and noise (default 1)")
    b.add_argument("--csv", metavar="FILE", help="write the rows as CSV (- = stdout)")
    b.add_argument("--plot", metavar="FILE.png", help="draw BER against SNR per mode")
    add_threads_option(b)
    add_s5069_options(b, transmitter=True)

    args = p.parse_args(argv)
    if args.list_modes:
        return args
    if args.command is None:
        raise usage_error("need a subcommand: tx, rx or ber (--help for more)")
    if args.command == "ber" and not 0 <= args.seed < 2 ** 63:
        raise usage_error(f"--seed must be from 0 to 2^63 - 1, not {args.seed}")
    if args.command == "tx" and args.sample_rate is None:
        args.sample_rate = (default_iq_rate if iq_file.kind_of(args.output)
                            else default_audio_rate)(bandwidth_of(args.mode))
    return args


def main(argv=None):
    cli.setup_logging(PROG)  # --gui's notes on stderr; the report keeps stdout
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if args.list_modes:
            print("STANAG 4539:", " ".join(m for m in MODES if not is_5069(m)))
            print("STANAG 5069:", " ".join(m for m in MODES if is_5069(m)))
            print("STANAG 5069 readings (--reading, the first of each the default):",
                  " ".join(sim.s5069_reading_choices()))
            return 0
        return {"tx": run_tx, "rx": run_rx, "ber": run_ber}[args.command](args)
    except device_error as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except (ValueError, usage_error, RuntimeError) as e:  # ValueError: a setting the blocks refuse
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
