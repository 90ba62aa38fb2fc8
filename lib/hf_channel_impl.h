/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// hf_channel_cc and hf_channel_ff: one thin adapter over chan::watterson_channel.
#ifndef INCLUDED_HFSTACK_HF_CHANNEL_IMPL_H
#define INCLUDED_HFSTACK_HF_CHANNEL_IMPL_H

#include "chan/watterson_channel.h"

#include "fault_guard.h"

#include <gnuradio/hfstack/hf_channel.h>

#include <gnuradio/io_signature.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {

// snr_db of 300 dB and above means no noise (GRC cannot type inf).
constexpr double hf_channel_no_noise_db = 300.0;

inline std::vector<chan::watterson_path>
hf_channel_paths(const std::string& profile,
                 const std::vector<double>& delays_s,
                 const std::vector<double>& powers_db,
                 const std::vector<double>& shifts_hz,
                 const std::vector<double>& spreads_hz)
{
    if (profile != "custom")
        return chan::fading_profile_by_name(profile).paths; // throws naming "profile"
    const size_t n = delays_s.size();
    if (powers_db.size() != n || shifts_hz.size() != n || spreads_hz.size() != n)
        throw std::invalid_argument(
            "paths: delays_s, powers_db, shifts_hz and spreads_hz need equal lengths");
    std::vector<chan::watterson_path> paths(n);
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(powers_db[i]))
            throw std::invalid_argument("paths[" + std::to_string(i) +
                                        "].power_db must be finite");
        paths[i].power = std::pow(10.0, powers_db[i] / 10.0);
        paths[i].delay_s = delays_s[i];
        paths[i].shift_hz = shifts_hz[i];
        paths[i].spread_hz = spreads_hz[i];
    }
    return paths;
}

template <typename T>
class hf_channel_impl : public hf_channel<T>
{
public:
    hf_channel_impl(const char* name,
                    double sample_rate_hz,
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
        : gr::block(name,
                    gr::io_signature::make(1, 1, sizeof(T)),
                    gr::io_signature::make(1, 1, sizeof(T))),
          d_profile(profile),
          d_channel(config(sample_rate_hz,
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
                           seed))
    {
        this->set_relative_rate(1.0 + sample_rate_offset_ppm * 1e-6);
    }

    void set_profile(const std::string& profile) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        if (profile == "custom") {
            d_profile = profile; // keeps the paths in use until set_paths()
            return;
        }
        d_channel.set_paths(hf_channel_paths(profile, {}, {}, {}, {}));
        d_profile = profile;
    }
    void set_paths(const std::vector<double>& delays_s,
                   const std::vector<double>& powers_db,
                   const std::vector<double>& shifts_hz,
                   const std::vector<double>& spreads_hz) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_paths(
            hf_channel_paths("custom", delays_s, powers_db, shifts_hz, spreads_hz));
        d_profile = "custom";
    }
    void set_snr_db(double snr_db) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_snr_db(noise_setting(snr_db));
    }
    void set_noise_bandwidth_hz(double bandwidth_hz) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_noise_bandwidth_hz(bandwidth_hz);
    }
    void set_signal_power(double power) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_signal_power(power);
    }
    void set_frequency_offset_hz(double offset_hz) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_frequency_offset_hz(offset_hz);
    }
    void set_sample_rate_offset_ppm(double ppm) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        d_channel.set_sample_rate_offset_ppm(ppm);
        this->set_relative_rate(1.0 + ppm * 1e-6);
    }

    std::string profile() const override { return d_profile; }
    double snr_db() const override { return d_channel.config().snr_db; }
    double noise_bandwidth_hz() const override
    {
        return d_channel.config().noise_bandwidth_hz;
    }
    double signal_power() const override { return d_channel.config().signal_power; }
    double frequency_offset_hz() const override
    {
        return d_channel.config().frequency_offset_hz;
    }
    double sample_rate_offset_ppm() const override
    {
        return d_channel.config().sample_rate_offset_ppm;
    }
    double measured_snr_db() const override { return d_channel.measured_snr_db(); }
    double latency_samples() const override { return d_channel.latency_samples(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override
    {
        const double missing = double(noutput_items) - double(d_pending.size());
        ninput_items_required[0] =
            missing <= 0 ? 0 : int(std::ceil(missing / this->relative_rate()));
    }

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override
    {
        gr::thread::scoped_lock lock(this->d_setlock);
        const T* in = static_cast<const T*>(input_items[0]);
        T* out = static_cast<T*>(output_items[0]);
        size_t produced = 0;
        // Samples the resampler made beyond what fitted last time go first.
        while (produced < size_t(noutput_items) && !d_pending.empty()) {
            out[produced++] = d_pending.front();
            d_pending.pop_front();
        }
        const size_t room = size_t(noutput_items) - produced;
        // Take about as many inputs as outputs fit, so little is held back.
        const size_t take =
            std::min<size_t>(size_t(ninput_items[0]),
                             size_t(std::ceil(double(room) / this->relative_rate())));
        if (take > 0) {
            d_out.clear();
            // A kernel failure drops these samples (a gap), not the channel.
            if (!d_faults(
                    this->d_logger, "in", [&] { d_channel.process(in, take, d_out); }))
                d_out.clear();
            const size_t fit = std::min(room, d_out.size());
            std::copy(d_out.begin(), d_out.begin() + long(fit), out + produced);
            produced += fit;
            d_pending.insert(d_pending.end(), d_out.begin() + long(fit), d_out.end());
        }
        this->consume(0, int(take));
        return int(produced);
    }

private:
    fault_guard d_faults;
    static double noise_setting(double snr_db)
    {
        return snr_db >= hf_channel_no_noise_db ? std::numeric_limits<double>::infinity()
                                                : snr_db;
    }

    static chan::watterson_config config(double sample_rate_hz,
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
        chan::watterson_config c;
        c.sample_rate_hz = sample_rate_hz;
        c.real_signal = std::is_same<T, float>::value;
        c.paths = hf_channel_paths(profile, delays_s, powers_db, shifts_hz, spreads_hz);
        c.snr_db = noise_setting(snr_db);
        c.noise_bandwidth_hz = noise_bandwidth_hz;
        c.signal_power = signal_power;
        c.frequency_offset_hz = frequency_offset_hz;
        c.sample_rate_offset_ppm = sample_rate_offset_ppm;
        c.max_delay_s = max_delay_s;
        c.seed = seed;
        return c;
    }

    std::string d_profile;
    chan::watterson_channel d_channel;
    std::vector<T> d_out;
    std::deque<T> d_pending;
};

} // namespace hfstack
} // namespace gr

#endif
