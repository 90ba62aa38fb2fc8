#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-chan: run a recording through the HF channel simulator (ITU-R F.1487).

Like codec2's `ch`: reads a WAV file (16-bit PCM mono), a SigMF recording
(.sigmf-meta, complex cf32_le or ci16_le, its rate from the metadata) or raw samples, sends them
through the hf_channel block (Watterson paths, noise at an SNR measured in 3 kHz,
frequency and sample-rate offsets) and writes the result in the same format, then
reports what it did and the SNR it measured.

  hfstack-chan in.wav out.wav --profile poor --snr 10
  hfstack-chan in.c64 out.c64 --format c64 --sample-rate 9600 --profile flutter --snr 15
  hfstack-chan in.sigmf-meta out.sigmf-meta --profile poor --snr 20   # SNR in the mode's band
  hfstack-chan in.wav out.wav --paths '0:0:0:1,2:-3:0:1' --snr 12 --freq-offset 20
  hfstack-chan --list-profiles

The SNR refers to the signal's power while it is present: by default measured from
the input's active part (20 ms windows within 30 dB of the loudest), so bursts with
silence between them get the noise their own level calls for; --signal-power sets it
instead (needed when reading standard input). The reported SNR is measured over the
same active part.
"""

import argparse
import json
import math
import os
import sys
import logging
import tempfile

import numpy as np

from gnuradio import blocks, gr
from gnuradio import hfstack
from gnuradio.hfstack import cli
from gnuradio.hfstack import iq_file

log = logging.getLogger("hfstack-chan")

FORMATS = ("wav", "s16", "f32", "c64", "sigmf")
# Other names of complex float raw samples (uhd_rx_cfile's among them).
C64_EXTENSIONS = ("cf32", "cfile", "fc32")
WINDOW_S = 0.02
ACTIVE_BELOW_LOUDEST_DB = 30.0
CHUNK = 1 << 16
NO_NOISE_DB = 300.0  # hf_channel: 300 dB and above means no noise
# hf_channel presets (chan/fading_profile.h); "custom" comes from --paths.
PROFILES = ("awgn", "low_latitude_quiet", "low_latitude_moderate", "low_latitude_disturbed",
            "mid_latitude_quiet", "mid_latitude_moderate", "mid_latitude_disturbed",
            "mid_latitude_disturbed_nvis", "high_latitude_quiet", "high_latitude_moderate",
            "high_latitude_disturbed", "good", "moderate", "poor", "flutter")


class usage_error(Exception):
    """A bad option or input: one line on stderr, exit status 2."""


class one_line_parser(argparse.ArgumentParser):
    def error(self, message):
        raise usage_error(message)


finite_float = cli.finite_float


def parse_paths(text):
    """'delay_ms:power_db:shift_hz:spread_hz,...' to four lists (seconds for delays)."""
    delays, powers, shifts, spreads = [], [], [], []
    for i, item in enumerate(text.split(",")):
        fields = item.split(":")
        if len(fields) != 4:
            raise usage_error(f"--paths: path {i + 1} {item!r} needs delay_ms:power_db:shift_hz:spread_hz")
        try:
            d, p, s, w = (float(f) for f in fields)
        except ValueError:
            raise usage_error(f"--paths: path {i + 1} {item!r} has a field that is not a number")
        if not all(math.isfinite(v) for v in (d, p, s, w)):
            raise usage_error(f"--paths: path {i + 1} {item!r} has a field that is not finite")
        delays.append(d * 1e-3)
        powers.append(p)
        shifts.append(s)
        spreads.append(w)
    return delays, powers, shifts, spreads


def parse_args(argv):
    p = one_line_parser(prog="hfstack-chan", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_version(p)
    p.add_argument("input", nargs="?", help="input file (WAV or raw; - for standard input, raw only)")
    p.add_argument("output", nargs="?", help="output file (same format; - for standard output, raw only)")
    p.add_argument("--profile", default="poor",
                   help="channel preset (see --list-profiles; default poor = 2 ms, 1 Hz)")
    p.add_argument("--paths", help="custom paths 'delay_ms:power_db:shift_hz:spread_hz,...' (overrides --profile)")
    p.add_argument("--snr", type=finite_float, help="SNR in dB in the noise bandwidth (default: no noise)")
    p.add_argument("--noise-bandwidth", type=finite_float,
                   help="bandwidth the SNR is measured in, Hz (default 3000, or the bandwidth of "
                        "the modem mode a SigMF recording's annotations name)")
    p.add_argument("--signal-power", type=finite_float,
                   help="mean power of the signal while present (default: measured from the input)")
    p.add_argument("--freq-offset", type=finite_float, default=0.0, help="carrier frequency offset, Hz")
    p.add_argument("--sro-ppm", type=finite_float, default=0.0, help="sample-rate offset, ppm")
    p.add_argument("--max-delay", type=finite_float, default=20.0, help="delay line length, ms (default 20)")
    p.add_argument("--seed", type=int, default=1, help="seed of fading and noise (default 1)")
    p.add_argument("--format", choices=FORMATS,
                   help="wav (16-bit mono), s16 or f32 (real raw), c64 (complex float raw: also "
                        ".cf32, .cfile, .fc32), sigmf (.sigmf-meta); default from the name")
    cli.add_renamed(p, "--sample-rate", "--rate", type=finite_float, help="sample rate of raw input, Hz")
    p.add_argument("--json", action="store_true", help="report as JSON on standard output (not with - output)")
    p.add_argument("--list-profiles", action="store_true", help="list the presets and exit")
    args = p.parse_args(argv)
    if args.list_profiles:
        return args
    if args.input is None or args.output is None:
        raise usage_error("need an input and an output file")
    if args.format is None:
        args.format = "wav" if args.input.lower().endswith(".wav") else None
        if args.format is None:
            ext = os.path.splitext(args.input)[1].lstrip(".").lower()
            if iq_file.kind_of(args.input) == "sigmf":
                ext = "sigmf"
            elif ext in C64_EXTENSIONS:
                ext = "c64"
            if ext not in FORMATS:
                raise usage_error("give --format (wav, s16, f32, c64 or sigmf) for this input")
            args.format = ext
    if (args.format == "sigmf") != (iq_file.kind_of(args.output or "") == "sigmf"):
        raise usage_error("a SigMF recording goes to a SigMF one: name both .sigmf-meta")
    if args.format == "wav" and "-" in (args.input, args.output):
        raise usage_error("standard input and output take raw formats only")
    if args.format not in ("wav", "sigmf") and args.sample_rate is None:
        raise usage_error("raw input needs --sample-rate")
    if args.sample_rate is not None and not args.sample_rate > 0:
        raise usage_error("--sample-rate must be > 0")
    if args.input == "-" and args.signal_power is None:
        raise usage_error("reading standard input needs --signal-power (the input cannot be measured twice)")
    if args.json and args.output == "-":
        raise usage_error("--json and output to standard output would mix")
    if args.paths is None and args.profile not in PROFILES:
        raise usage_error(f"unknown profile {args.profile!r} (see --list-profiles)")
    if args.signal_power is not None and not args.signal_power > 0:
        raise usage_error("--signal-power must be > 0")
    return args


def readable(path):
    """usage_error in hfstack-modem's words (the system's) when `path` cannot be read:
    libsndfile says only "System error." for a file it may not open."""
    if os.path.isdir(path):
        raise usage_error(f"{path}: is a directory")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise usage_error(f"{path}: {e.strerror or e}")


def wav_info(path):
    """(rate, frames, subtype) of a WAV file of any sample format and channel count
    (soundfile: 8-32-bit PCM and float); the first channel is the signal."""
    import soundfile
    readable(path)
    try:
        info = soundfile.info(path)
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise usage_error(f"{path}: not a readable WAV file ({e})")
    if info.channels > 1:
        log.info(f"{path}: {info.channels} channels; the first (left) is the signal")
    return info.samplerate, info.frames, info.subtype


def chunks(args):
    """The input as numpy chunks: float32 (real, WAV scaled to +-1) or complex64."""
    if args.format == "sigmf":
        yield from iq_file.chunks(args.recording, CHUNK)
        return
    if args.format == "wav":
        import soundfile
        for block in soundfile.blocks(args.input, blocksize=CHUNK, dtype="float32",
                                      always_2d=True):
            yield np.ascontiguousarray(block[:, 0])
        return
    dtype = {"s16": "<i2", "f32": "<f4", "c64": "<c8"}[args.format]
    try:
        data = np.memmap(args.input, dtype=dtype, mode="r")
    except (OSError, ValueError) as e:
        raise usage_error(f"{args.input}: {getattr(e, 'strerror', None) or e}")
    for k in range(0, len(data), CHUNK):
        x = np.asarray(data[k:k + CHUNK])
        yield (x.astype(np.float32) / 32768.0) if args.format == "s16" else x


def active_power(args, rate):
    """Mean power over the windows within 30 dB of the loudest, and their share of the
    samples."""
    window = max(1, int(rate * WINDOW_S))
    powers = []
    rest = np.zeros(0, dtype=np.complex64 if args.format in ("c64", "sigmf") else np.float32)
    for x in chunks(args):
        x = np.concatenate([rest, x])
        n = len(x) // window * window
        if n:
            powers.append(np.mean(np.abs(x[:n].reshape(-1, window)) ** 2, axis=1))
        rest = x[n:]
    if not powers:
        raise usage_error(f"{args.input}: no samples")
    p = np.concatenate(powers)
    loudest = p.max()
    if loudest <= 0:
        raise usage_error(f"{args.input}: silent input; give --signal-power")
    active = p >= loudest * 10 ** (-ACTIVE_BELOW_LOUDEST_DB / 10)
    return float(p[active].mean()), float(active.mean())


def finish_output(args, float_path, rate, complex_signal):
    """Writes the output file from the channel's float output; returns the samples
    written and how many were clipped to 16 bits. A WAV output has the input's format
    when that is float, 16-bit PCM otherwise, mono."""
    samples, clipped = 0, 0
    data = np.memmap(float_path, dtype="<c8" if complex_signal else "<f4", mode="r") \
        if os.path.getsize(float_path) else np.zeros(0, dtype=np.float32)
    if args.format == "sigmf":
        return write_sigmf(args, data, rate)
    if not (args.format in ("wav", "s16") or args.output == "-"):
        return len(data), 0
    float_wav = args.format == "wav" and args.wav_subtype in ("FLOAT", "DOUBLE")
    out = None
    w = None
    try:
        if args.format == "wav":
            import soundfile
            w = soundfile.SoundFile(args.output, "w", int(round(rate)), 1,
                                    "FLOAT" if float_wav else "PCM_16", format="WAV")
        else:
            out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")
        for k in range(0, len(data), CHUNK):
            x = np.asarray(data[k:k + CHUNK])
            if float_wav:
                raw = x
            elif args.format in ("wav", "s16"):
                scaled = np.round(x * 32768.0)
                over = np.abs(scaled) > 32767
                clipped += int(np.count_nonzero(over))
                raw = np.clip(scaled, -32767, 32767).astype("<i2")
            else:
                raw = x
            if w is not None:
                w.write(raw)
            else:
                out.write(raw.tobytes())
            samples += len(x)
    finally:
        if w is not None:
            w.close()
        if out is not None and out is not sys.stdout.buffer:
            out.close()
    return samples, clipped


def annotated_bandwidth_hz(rec):
    """The bandwidth of the modem modes the annotations name (hfstack-modem tx's label),
    when they name one; else None."""
    from gnuradio.hfstack import sim
    widths = set()
    for label in rec.labels():
        known = sim.modem_mode(label.strip())
        if known is not None:
            name = known[2]
            widths.add(1000.0 * (int(name.split("/")[1][:-3]) if name.startswith("WN") else 3))
    return widths.pop() if len(widths) == 1 else None


def write_sigmf(args, data, rate):
    """The output recording: the input's datatype, centre frequency and annotations (the
    channel keeps every sample where it was)."""
    rec = args.recording
    out = iq_file.writer(args.output, rec.datatype, rate, rec.centre_hz,
                         f"hfstack-chan {args.profile if args.paths is None else 'custom'}")
    for k in range(0, len(data), CHUNK):
        out.write(data[k:k + CHUNK])
    out.annotations = rec.annotations
    out.close()
    return out.samples, out.clipped


def run(args):
    if args.list_profiles:
        print("\n".join(PROFILES))
        return 0
    if args.format == "wav":
        rate, frames, args.wav_subtype = wav_info(args.input)
    elif args.format == "sigmf":
        try:
            args.recording = iq_file.read(args.input, args.sample_rate)
        except iq_file.iq_error as e:
            raise usage_error(str(e))
        rate = args.recording.sample_rate
        if args.noise_bandwidth is None:
            args.noise_bandwidth = annotated_bandwidth_hz(args.recording)
    else:
        rate = args.sample_rate
        if args.input != "-":
            readable(args.input)
    if args.noise_bandwidth is None:
        args.noise_bandwidth = 3000.0
    complex_signal = args.format in ("c64", "sigmf")
    if args.signal_power is not None:
        signal_power, active_share = args.signal_power, None
    else:
        signal_power, active_share = active_power(args, rate)
    profile, delays, powers, shifts, spreads = args.profile, [], [], [], []
    if args.paths is not None:
        profile = "custom"
        delays, powers, shifts, spreads = parse_paths(args.paths)
    make = hfstack.hf_channel_cc if complex_signal else hfstack.hf_channel_ff
    try:
        channel = make(float(rate), profile, delays, powers, shifts, spreads,
                       NO_NOISE_DB if args.snr is None else args.snr, args.noise_bandwidth,
                       signal_power, args.freq_offset, args.sro_ppm, args.max_delay * 1e-3,
                       args.seed)
    except (ValueError, RuntimeError) as e:
        raise usage_error(str(e))

    # Channel output goes to a float file first; 16-bit outputs are then clipped (and
    # counted) on the way out: GNU Radio's WAV sink would wrap overflowing samples.
    tb = gr.top_block()
    item = gr.sizeof_gr_complex if complex_signal else gr.sizeof_float
    name_in = "/dev/stdin" if args.input == "-" else args.input
    sixteen_bit = args.format in ("wav", "s16", "sigmf")  # sigmf: a written copy
    direct = not sixteen_bit and args.output != "-"
    out_dir = os.path.dirname(os.path.abspath(args.output)) if args.output != "-" else None
    float_path = args.output if direct else tempfile.NamedTemporaryFile(
        prefix="hfstack-chan-", suffix=".raw", dir=out_dir, delete=False).name
    try:
        if args.format == "wav":  # soundfile reads every WAV format; the first channel
            wav_path = float_path + ".in"
            with open(wav_path, "wb") as f:
                for x in chunks(args):
                    f.write(x.astype("<f4").tobytes())
            head = [blocks.file_source(gr.sizeof_float, wav_path, False)]
        elif args.format == "s16":
            head = [blocks.file_source(gr.sizeof_short, name_in, False), blocks.short_to_float(1, 32768.0)]
        elif args.format == "sigmf" and args.recording.datatype == "ci16_le":
            head = [blocks.file_source(gr.sizeof_short, args.recording.data_path, False),
                    blocks.interleaved_short_to_complex(False, False, iq_file.CI16_FULL_SCALE)]
        elif args.format == "sigmf":
            head = [blocks.file_source(item, args.recording.data_path, False)]
        else:
            head = [blocks.file_source(item, name_in, False)]
        sink = blocks.file_sink(item, float_path, False)
        sink.set_unbuffered(False)
        tb.connect(*head, channel, sink)
        tb.run()
        sink.close()
        samples_out, clipped = finish_output(args, float_path, rate, complex_signal)
    except iq_file.iq_error as e:
        raise usage_error(str(e))
    except OSError as e:
        raise usage_error(f"{args.output}: {e.strerror or e}")
    finally:
        for path in ((float_path, float_path + ".in") if not direct else (float_path + ".in",)):
            if os.path.exists(path):
                os.unlink(path)
    measured = channel.measured_snr_db()
    # The channel measures over everything; the signal's energy is all in the active
    # part, so over that part the noise is the active share of the total.
    if active_share is not None and math.isfinite(measured):
        measured -= 10 * math.log10(active_share)
    report = {
        "input": args.input, "output": args.output, "format": args.format, "sample_rate_hz": rate,
        "profile": profile,
        "paths": [{"delay_ms": d * 1e3, "power_db": p, "shift_hz": s, "spread_hz": w}
                  for d, p, s, w in zip(delays, powers, shifts, spreads)] if profile == "custom" else None,
        "snr_requested_db": args.snr, "snr_measured_db": None if not math.isfinite(measured) else round(measured, 2),
        "noise_bandwidth_hz": args.noise_bandwidth, "signal_power": signal_power,
        "active_share": active_share, "frequency_offset_hz": args.freq_offset,
        "sample_rate_offset_ppm": args.sro_ppm, "seed": args.seed,
        "samples_out": samples_out, "clipped": clipped,
    }
    if args.json:
        print(json.dumps(report))
    else:
        where = "the whole input" if active_share is None else f"the active {100 * active_share:.0f} % of the input"
        print(f"hfstack-chan: {profile}, SNR requested "
              f"{'none' if args.snr is None else f'{args.snr:g} dB'}, measured "
              f"{'none' if report['snr_measured_db'] is None else f'{measured:.2f} dB'} in "
              f"{args.noise_bandwidth:g} Hz over {where}; offset {args.freq_offset:g} Hz, "
              f"{args.sro_ppm:g} ppm; {samples_out if samples_out is not None else '?'} samples out"
              + (f"; {clipped} samples clipped" if clipped else ""), file=sys.stderr)
    return 0


def main(argv=None):
    cli.setup_logging("hfstack-chan")
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        return run(args)
    except usage_error as e:
        print(f"hfstack-chan: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
