/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "watterson_channel.h"

#include <liquid/liquid.h>
#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace chan {

namespace {

constexpr double two_pi = 6.283185307179586476925286766559;
// Fractional-delay filter: 2 * half + 1 taps, Kaiser window for 80 dB stop band.
constexpr int fraction_half = 16;
constexpr int fraction_taps = 2 * fraction_half + 1;
constexpr float fraction_stopband_db = 80.0f;
// Sample-rate offset resampler (liquid resamp_crcf): semi-length, cutoff, stop band,
// polyphase branches.
constexpr unsigned resampler_half = 12;
constexpr float resampler_cutoff = 0.45f;
constexpr float resampler_stopband_db = 80.0f;
constexpr unsigned resampler_branches = 256;
constexpr double max_ppm = 10000.0;
constexpr size_t rotator_piece = 256;
constexpr double max_line_s = 1.0;
// Noise gets its own stream, away from the path seeds 0, 1, 2, ...
constexpr uint64_t noise_stream = 0xC0FFEEull;

[[noreturn]] void bad(const std::string& parameter, const std::string& what, double value)
{
    std::ostringstream os;
    os << "watterson_channel: " << parameter << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

void check_positive(const std::string& parameter, double v)
{
    if (!(v > 0) || !std::isfinite(v))
        bad(parameter, "must be finite and > 0", v);
}

// Hilbert transform semi-length: the transition band at each end is about fs / (2 m)
// wide, so m = fs / 200 keeps it near 100 Hz, below any HF audio passband.
unsigned hilbert_half_length(double fs)
{
    return std::max(20u, unsigned(std::ceil(fs / 200.0)));
}

} // namespace

struct watterson_channel::path_state {
    tap_gain_process gain;
    float amplitude;
    size_t whole; // whole-sample part of the delay
    // Fractional-delay taps, reversed; empty: no fraction. VOLK-aligned: with 16-byte
    // aligned taps VOLK 2.5.2's dot product crashed on an aligned AVX load.
    volk::vector<float> reversed;
    bool fixed; // static, unshifted: gain is just the amplitude
};

struct watterson_channel::liquid_objects {
    firhilbf hilbert = nullptr;
    resamp_crcf resampler = nullptr;
    ~liquid_objects()
    {
        if (hilbert)
            firhilbf_destroy(hilbert);
        if (resampler)
            resamp_crcf_destroy(resampler);
    }
};

watterson_config watterson_preset(const std::string& profile,
                                  double sample_rate_hz,
                                  double snr_db,
                                  uint64_t seed)
{
    watterson_config c;
    c.paths = fading_profile_by_name(profile).paths;
    c.sample_rate_hz = sample_rate_hz;
    c.snr_db = snr_db;
    c.seed = seed;
    return c;
}

void watterson_channel::validate(const watterson_config& c)
{
    check_positive("sample_rate_hz", c.sample_rate_hz);
    if (!(c.max_delay_s >= 0) || !(c.max_delay_s <= max_line_s))
        bad("max_delay_s", "must be in [0, 1] s", c.max_delay_s);
    const std::vector<watterson_path> paths = chan::normalised_paths(c.paths, "paths");
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string name = "paths[" + std::to_string(i) + "]";
        if (paths[i].delay_s > c.max_delay_s) {
            std::ostringstream os;
            os << "is beyond the delay line (max_delay_s " << c.max_delay_s << ")";
            bad(name + ".delay_s", os.str(), paths[i].delay_s);
        }
        if (!(std::abs(paths[i].shift_hz) < c.sample_rate_hz / 2))
            bad(name + ".shift_hz",
                "must be below half the sample rate",
                paths[i].shift_hz);
        if (!(paths[i].spread_hz < c.sample_rate_hz / 2))
            bad(name + ".spread_hz",
                "must be below half the sample rate",
                paths[i].spread_hz);
    }
    if (std::isnan(c.snr_db) || c.snr_db == -std::numeric_limits<double>::infinity())
        bad("snr_db", "must be a number (+inf for no noise)", c.snr_db);
    check_positive("noise_bandwidth_hz", c.noise_bandwidth_hz);
    // The bandwidth only matters with noise (a narrow test rate without noise is fine).
    const double widest = c.real_signal ? c.sample_rate_hz / 2 : c.sample_rate_hz;
    if (!std::isinf(c.snr_db) && c.noise_bandwidth_hz > widest)
        bad("noise_bandwidth_hz",
            c.real_signal ? "must not exceed half the sample rate for a real signal"
                          : "must not exceed the sample rate",
            c.noise_bandwidth_hz);
    check_positive("signal_power", c.signal_power);
    if (!(std::abs(c.frequency_offset_hz) < c.sample_rate_hz / 2))
        bad("frequency_offset_hz",
            "must be finite and below half the sample rate",
            c.frequency_offset_hz);
    if (!(std::abs(c.sample_rate_offset_ppm) <= max_ppm))
        bad("sample_rate_offset_ppm",
            "must be finite and within +-10000",
            c.sample_rate_offset_ppm);
}

watterson_channel::watterson_channel(const watterson_config& config)
    : d_cfg(config),
      d_noise(path_seed(config.seed, noise_stream)),
      d_liquid(new liquid_objects)
{
    validate(d_cfg);
    const size_t longest =
        size_t(std::ceil(d_cfg.max_delay_s * d_cfg.sample_rate_hz)) + 1;
    d_history = longest + fraction_taps - 1;
    d_line.assign(d_history, std::complex<float>());
    if (d_cfg.real_signal)
        d_liquid->hilbert =
            firhilbf_create(hilbert_half_length(d_cfg.sample_rate_hz), 80.0f);
    set_sample_rate_offset_ppm(d_cfg.sample_rate_offset_ppm);
    build_paths();
    update_noise_sigma();
}

watterson_channel::~watterson_channel() = default;

void watterson_channel::build_paths()
{
    d_paths = chan::normalised_paths(d_cfg.paths, "paths");
    if (d_paths.empty())
        d_paths.push_back(watterson_path{});
    d_path_states.clear();
    const uint64_t seed = path_seed(d_cfg.seed, 1000 + d_path_generation++);
    for (size_t i = 0; i < d_paths.size(); ++i) {
        const watterson_path& p = d_paths[i];
        if (p.power == 0)
            continue;
        const double delay = p.delay_s * d_cfg.sample_rate_hz;
        const double whole = std::floor(delay + 0.5);
        const double fraction = delay - whole; // [-0.5, 0.5)
        volk::vector<float> reversed;
        if (std::abs(fraction) > 1e-9) {
            // liquid centres the sinc at (n - 1) / 2 - mu: mu = -fraction delays by
            // fraction_half + fraction. Unit DC gain so low frequencies pass exactly.
            std::vector<float> taps(fraction_taps);
            liquid_firdes_kaiser(
                fraction_taps, 0.5f, fraction_stopband_db, float(-fraction), taps.data());
            double sum = 0;
            for (float h : taps)
                sum += h;
            reversed.assign(taps.rbegin(), taps.rend());
            for (float& h : reversed)
                h = float(h / sum);
        }
        d_path_states.push_back(
            path_state{ tap_gain_process(p.spread_hz, p.shift_hz, path_seed(seed, i)),
                        float(std::sqrt(p.power)),
                        size_t(whole),
                        std::move(reversed),
                        p.spread_hz == 0 && p.shift_hz == 0 });
    }
}

void watterson_channel::update_noise_sigma()
{
    if (std::isinf(d_cfg.snr_db)) {
        d_noise_sigma = 0;
        return;
    }
    const double snr = std::pow(10.0, d_cfg.snr_db / 10.0);
    const double band =
        d_cfg.real_signal ? 2.0 * d_cfg.noise_bandwidth_hz : d_cfg.noise_bandwidth_hz;
    d_noise_sigma =
        float(std::sqrt(d_cfg.signal_power * d_cfg.sample_rate_hz / (band * snr)));
}

void watterson_channel::set_paths(const std::vector<watterson_path>& paths)
{
    change([&](watterson_config& c) { c.paths = paths; });
    build_paths();
}

void watterson_channel::set_snr_db(double snr_db)
{
    change([&](watterson_config& c) { c.snr_db = snr_db; });
    update_noise_sigma();
}

void watterson_channel::set_noise_bandwidth_hz(double bandwidth_hz)
{
    change([&](watterson_config& c) { c.noise_bandwidth_hz = bandwidth_hz; });
    update_noise_sigma();
}

void watterson_channel::set_signal_power(double power)
{
    change([&](watterson_config& c) { c.signal_power = power; });
    update_noise_sigma();
}

void watterson_channel::set_frequency_offset_hz(double offset_hz)
{
    change([&](watterson_config& c) { c.frequency_offset_hz = offset_hz; });
}

void watterson_channel::set_sample_rate_offset_ppm(double ppm)
{
    change([&](watterson_config& c) { c.sample_rate_offset_ppm = ppm; });
    const float rate = float(1.0 + ppm * 1e-6);
    if (d_liquid->resampler)
        resamp_crcf_set_rate(d_liquid->resampler, rate);
    else if (ppm != 0)
        d_liquid->resampler = resamp_crcf_create(rate,
                                                 resampler_half,
                                                 resampler_cutoff,
                                                 resampler_stopband_db,
                                                 resampler_branches);
}

double watterson_channel::latency_samples() const
{
    double latency = fraction_half;
    if (d_liquid->hilbert)
        latency += 2.0 * hilbert_half_length(d_cfg.sample_rate_hz);
    if (d_liquid->resampler)
        latency += resampler_half;
    return latency;
}

double watterson_channel::measured_snr_db() const
{
    if (d_stats.samples == 0)
        return std::numeric_limits<double>::quiet_NaN();
    if (d_stats.noise_energy == 0)
        return std::numeric_limits<double>::infinity();
    const double band =
        d_cfg.real_signal ? 2.0 * d_cfg.noise_bandwidth_hz : d_cfg.noise_bandwidth_hz;
    const double in_band_noise = d_stats.noise_energy * band / d_cfg.sample_rate_hz;
    return 10.0 * std::log10(d_stats.signal_energy / in_band_noise);
}

size_t watterson_channel::run(const std::complex<float>* in, size_t n)
{
    // 2. sample-rate offset
    if (d_liquid->resampler) {
        d_resampled.resize(size_t(double(n) * 1.02) + 4);
        size_t m = 0;
        for (size_t k = 0; k < n; ++k) {
            unsigned produced = 0;
            if (d_resampled.size() < m + 4)
                d_resampled.resize(2 * d_resampled.size());
            resamp_crcf_execute(d_liquid->resampler, in[k], &d_resampled[m], &produced);
            m += produced;
        }
        in = d_resampled.data();
        n = m;
    }

    // 3. tapped delay line
    d_line.resize(d_history + n);
    std::copy(in, in + n, d_line.begin() + long(d_history));
    d_y.assign(n, std::complex<float>());
    d_delayed.resize(n);
    d_gain.resize(n);
    const double dt = 1.0 / d_cfg.sample_rate_hz;
    const double t0 = double(d_output_index) * dt;
    for (path_state& p : d_path_states) {
        if (n == 0)
            break;
        if (p.reversed.empty()) {
            const std::complex<float>* src = &d_line[d_history - p.whole - fraction_half];
            std::copy(src, src + n, d_delayed.begin());
        } else {
            const std::complex<float>* window =
                &d_line[d_history - p.whole - (fraction_taps - 1)];
            for (size_t k = 0; k < n; ++k)
                volk_32fc_32f_dot_prod_32fc(
                    &d_delayed[k], window + k, p.reversed.data(), fraction_taps);
        }
        if (p.fixed) {
            const std::complex<float> a(p.amplitude, 0.0f);
            volk_32fc_s32fc_multiply_32fc(
                d_delayed.data(), d_delayed.data(), a, unsigned(n));
        } else {
            p.gain.fill(t0, dt, n, p.amplitude, d_gain.data());
            volk_32fc_x2_multiply_32fc(
                d_delayed.data(), d_delayed.data(), d_gain.data(), unsigned(n));
        }
        volk_32fc_x2_add_32fc(d_y.data(), d_y.data(), d_delayed.data(), unsigned(n));
    }
    if (n > 0)
        std::copy(d_line.end() - long(d_history), d_line.end(), d_line.begin());
    d_line.resize(d_history);

    // 4. carrier frequency offset, anchored at the exact phase of this block's start
    // (in pieces, so the rotator's float phase never runs far from the exact one)
    if (d_cfg.frequency_offset_hz != 0) {
        const double per_sample = d_cfg.frequency_offset_hz / d_cfg.sample_rate_hz;
        const std::complex<float> increment(std::polar(1.0, two_pi * per_sample));
        for (size_t k = 0; k < n; k += rotator_piece) {
            const size_t m = std::min(rotator_piece, n - k);
            std::complex<float> phase(std::polar(1.0, two_pi * d_cfo_cycles));
            volk_32fc_s32fc_x2_rotator_32fc(
                &d_y[k], &d_y[k], increment, &phase, unsigned(m));
            d_cfo_cycles = std::fmod(d_cfo_cycles + per_sample * double(m), 1.0);
        }
    }
    d_output_index += n;
    return n;
}

size_t watterson_channel::process(const std::complex<float>* in,
                                  size_t n,
                                  std::vector<std::complex<float>>& out)
{
    if (d_cfg.real_signal)
        throw std::logic_error(
            "watterson_channel: real_signal is set; pass real samples");
    const size_t m = run(in, n);
    double energy = 0;
    for (size_t k = 0; k < m; ++k)
        energy += std::norm(d_y[k]);
    const size_t first = out.size();
    out.insert(out.end(), d_y.begin(), d_y.begin() + long(m));
    if (d_noise_sigma > 0) {
        d_noise.add_complex(&out[first], m, d_noise_sigma);
        double noise = 0;
        for (size_t k = 0; k < m; ++k)
            noise += std::norm(out[first + k] - d_y[k]);
        d_stats.noise_energy += noise;
    }
    d_stats.samples += m;
    d_stats.signal_energy += energy;
    return m;
}

size_t watterson_channel::process(const float* in, size_t n, std::vector<float>& out)
{
    if (!d_cfg.real_signal)
        throw std::logic_error(
            "watterson_channel: real_signal is not set; pass complex samples");
    // 1. analytic signal
    d_analytic.resize(n);
    for (size_t k = 0; k < n; ++k)
        firhilbf_r2c_execute(d_liquid->hilbert, in[k], &d_analytic[k]);
    const size_t m = run(d_analytic.data(), n);
    const size_t first = out.size();
    out.resize(first + m);
    double energy = 0;
    for (size_t k = 0; k < m; ++k) {
        out[first + k] = d_y[k].real();
        energy += double(d_y[k].real()) * d_y[k].real();
    }
    if (d_noise_sigma > 0) {
        d_noise.add_real(&out[first], m, d_noise_sigma);
        double noise = 0;
        for (size_t k = 0; k < m; ++k) {
            const double z = double(out[first + k]) - d_y[k].real();
            noise += z * z;
        }
        d_stats.noise_energy += noise;
    }
    d_stats.samples += m;
    d_stats.signal_energy += energy;
    return m;
}

} // namespace chan
} // namespace hfstack
} // namespace gr
