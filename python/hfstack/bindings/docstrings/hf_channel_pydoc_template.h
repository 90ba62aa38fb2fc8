/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, hfstack, __VA_ARGS__)
/*
  This file contains placeholders for docstrings for the Python bindings.
  Do not edit! These were automatically extracted during the binding process
  and will be overwritten during the build process
 */

static const char* __doc_gr_hfstack_hf_channel =
    R"doc(HF channel simulator (hf_channel_cc on complex baseband, hf_channel_ff on real audio): the ITU-R F.1487 Watterson model (paths with exact delays, Gaussian Doppler spread and shift), AWGN at snr_db in noise_bandwidth_hz (3 kHz), carrier and sample-rate offsets. profile: a preset name or "custom" (the four path vectors). snr_db >= 300 or inf: no noise.)doc";

static const char* __doc_gr_hfstack_hf_channel_make =
    R"doc(Creates the channel; bad parameters raise ValueError naming the parameter.)doc";

static const char* __doc_gr_hfstack_hf_channel_set_profile =
    R"doc(A preset by name, or "custom" (keeps the paths in use).)doc";

static const char* __doc_gr_hfstack_hf_channel_set_paths =
    R"doc(Custom paths: delays (s), relative powers (dB), Doppler shifts and two-sigma spreads (Hz), equal lengths.)doc";

static const char* __doc_gr_hfstack_hf_channel_set_snr_db =
    R"doc(SNR in dB in noise_bandwidth_hz; 300 and above: no noise.)doc";

static const char* __doc_gr_hfstack_hf_channel_set_noise_bandwidth_hz =
    R"doc(Bandwidth the SNR is measured in (Hz).)doc";

static const char* __doc_gr_hfstack_hf_channel_set_signal_power =
    R"doc(Mean input power while a signal is present; the noise is set against it.)doc";

static const char* __doc_gr_hfstack_hf_channel_set_frequency_offset_hz =
    R"doc(Carrier frequency offset (Hz).)doc";

static const char* __doc_gr_hfstack_hf_channel_set_sample_rate_offset_ppm =
    R"doc(Receiving clock offset in ppm: that many more output samples per million inputs.)doc";

static const char* __doc_gr_hfstack_hf_channel_profile =
    R"doc(The preset in use, or "custom".)doc";

static const char* __doc_gr_hfstack_hf_channel_snr_db =
    R"doc(SNR setting (inf: no noise).)doc";

static const char* __doc_gr_hfstack_hf_channel_noise_bandwidth_hz =
    R"doc(Noise bandwidth setting (Hz).)doc";

static const char* __doc_gr_hfstack_hf_channel_signal_power =
    R"doc(Signal power setting.)doc";

static const char* __doc_gr_hfstack_hf_channel_frequency_offset_hz =
    R"doc(Frequency offset setting (Hz).)doc";

static const char* __doc_gr_hfstack_hf_channel_sample_rate_offset_ppm =
    R"doc(Sample-rate offset setting (ppm).)doc";

static const char* __doc_gr_hfstack_hf_channel_measured_snr_db =
    R"doc(SNR measured over everything processed so far (NaN before any output).)doc";

static const char* __doc_gr_hfstack_hf_channel_latency_samples =
    R"doc(Extra delay of every path, in samples.)doc";
