/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "hf_channel_impl.h"

#include <gnuradio/hfstack/hf_channel.h>

#include <complex>

namespace gr {
namespace hfstack {

template <class T>
typename hf_channel<T>::sptr hf_channel<T>::make(double sample_rate_hz,
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
    return gnuradio::make_block_sptr<hf_channel_impl<T>>(
        std::is_same<T, float>::value ? "hf_channel_ff" : "hf_channel_cc",
        sample_rate_hz,
        profile,
        delays_s,
        powers_db,
        shifts_hz,
        spreads_hz,
        snr_db,
        noise_bandwidth_hz,
        signal_power,
        frequency_offset_hz,
        sample_rate_offset_ppm,
        max_delay_s,
        seed);
}

template class hf_channel<gr_complex>;
template class hf_channel<float>;

} // namespace hfstack
} // namespace gr
