/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_HF_CHANNEL_H
#define INCLUDED_HFSTACK_HF_CHANNEL_H

#include <gnuradio/block.h>
#include <gnuradio/gr_complex.h>
#include <gnuradio/hfstack/api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {

/*!
 * \brief HF channel simulator: the ITU-R F.1487 Watterson model, on complex baseband
 * (hf_channel_cc) or on real audio (hf_channel_ff, which works on the analytic signal
 * and outputs its real part).
 * \ingroup hfstack
 *
 * Any number of paths, each with a delay (fractional delays exact), a mean power, a
 * Doppler shift and a Gaussian Doppler spread (two-sigma width, as F.1487 defines it);
 * white Gaussian noise at snr_db below signal_power measured in noise_bandwidth_hz
 * (3 kHz: the STANAG convention); a carrier frequency offset; a sample-rate offset
 * (the receiving clock sample_rate_offset_ppm fast: that many more output samples per
 * million inputs). Path powers are normalised to sum 1, so the mean received power is
 * the input power. Every output sample is also delayed by latency_samples().
 *
 * profile: a preset ("awgn", the F.1487 Annex 3 conditions such as
 * "mid_latitude_disturbed", or the F.520 names "good", "moderate", "poor", "flutter")
 * or "custom", which takes the four path vectors (equal lengths). snr_db: inf (or 300
 * and above) for no noise. Every parameter can be changed while running; bad values
 * (negative spread, a delay beyond max_delay_s, NaN, an unknown profile) raise
 * std::invalid_argument naming the parameter. Tags keep their place scaled by the
 * rate; they do not move by the channel's latency.
 */
template <class T>
class HFSTACK_API hf_channel : virtual public gr::block
{
public:
    typedef std::shared_ptr<hf_channel<T>> sptr;

    /*!
     * \param sample_rate_hz sample rate of the stream
     * \param profile preset name or "custom"
     * \param delays_s path delays in seconds (custom)
     * \param powers_db relative path powers in dB (custom)
     * \param shifts_hz path Doppler shifts in Hz (custom)
     * \param spreads_hz path Doppler spreads (two-sigma) in Hz (custom)
     * \param snr_db signal-to-noise ratio in noise_bandwidth_hz
     * \param noise_bandwidth_hz bandwidth the SNR is measured in
     * \param signal_power mean power of the input while a signal is present; the default
     *        0.0625 is s4539_tx's default output (0.25 rms), so tx -> channel -> rx
     *        with defaults reports the SNR set here
     * \param frequency_offset_hz carrier frequency offset
     * \param sample_rate_offset_ppm receiving clock offset in parts per million
     * \param max_delay_s length of the delay line (no path may be longer)
     * \param seed seed of the fading and noise generators
     */
    static sptr make(double sample_rate_hz,
                     const std::string& profile = "poor",
                     const std::vector<double>& delays_s = {},
                     const std::vector<double>& powers_db = {},
                     const std::vector<double>& shifts_hz = {},
                     const std::vector<double>& spreads_hz = {},
                     double snr_db = 20.0,
                     double noise_bandwidth_hz = 3000.0,
                     double signal_power = 0.0625,
                     double frequency_offset_hz = 0.0,
                     double sample_rate_offset_ppm = 0.0,
                     double max_delay_s = 0.02,
                     uint64_t seed = 1);

    //! A preset by name (the path vectors are then ignored), or "custom".
    virtual void set_profile(const std::string& profile) = 0;
    //! Custom paths (equal lengths); the profile becomes "custom".
    virtual void set_paths(const std::vector<double>& delays_s,
                           const std::vector<double>& powers_db,
                           const std::vector<double>& shifts_hz,
                           const std::vector<double>& spreads_hz) = 0;
    virtual void set_snr_db(double snr_db) = 0;
    virtual void set_noise_bandwidth_hz(double bandwidth_hz) = 0;
    virtual void set_signal_power(double power) = 0;
    virtual void set_frequency_offset_hz(double offset_hz) = 0;
    virtual void set_sample_rate_offset_ppm(double ppm) = 0;

    virtual std::string profile() const = 0;
    virtual double snr_db() const = 0;
    virtual double noise_bandwidth_hz() const = 0;
    virtual double signal_power() const = 0;
    virtual double frequency_offset_hz() const = 0;
    virtual double sample_rate_offset_ppm() const = 0;
    //! SNR measured over everything processed so far (NaN before any output).
    virtual double measured_snr_db() const = 0;
    //! Extra delay of every path, in samples.
    virtual double latency_samples() const = 0;
};

typedef hf_channel<gr_complex> hf_channel_cc;
typedef hf_channel<float> hf_channel_ff;

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_HF_CHANNEL_H */
