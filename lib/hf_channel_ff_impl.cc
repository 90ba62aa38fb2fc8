/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "hf_channel_impl.h"

#include <gnuradio/hfstack/hf_channel_ff.h>

#include <complex>

namespace gr {
namespace hfstack {

hf_channel_ff::sptr hf_channel_ff::make(double sample_rate_hz,
                                       const std::string& profile,
                                       const std::vector<double>& delays_s,
                                       const std::vector<double>& powers_db,
                                       const std::vector<double>& shifts_hz,
                                       const std::vector<double>& spreads_hz,
                                       double snr_db,
                                       double noise_bandwidth_hz,
                                       double signal_power,
                                       double frequency_offset_hz,
                                       double sample_rate_offset_ppm,
                                       double max_delay_s,
                                       uint64_t seed)
{
    return gnuradio::make_block_sptr<hf_channel_impl<float, hf_channel_ff>>(
        "hf_channel_ff", sample_rate_hz, profile, delays_s, powers_db, shifts_hz, spreads_hz,
        snr_db, noise_bandwidth_hz, signal_power, frequency_offset_hz, sample_rate_offset_ppm,
        max_delay_s, seed);
}

} // namespace hfstack
} // namespace gr
