/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The sample-level Watterson channel (ITU-R F.1487): exact static delays and powers,
// Gaussian Doppler spectra and Rayleigh envelopes per tap, SNR in 3 kHz, exact frequency
// and sample-rate offsets, determinism, and refusal of bad parameters.
#include "chan/gaussian_noise.h"
#include "chan/watterson_channel.h"

#include "expect_error.h"

#include <gtest/gtest.h>
#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack::chan;
using cf = std::complex<float>;

namespace {

constexpr double pi = 3.14159265358979323846;
const double inf = std::numeric_limits<double>::infinity();
const double not_a_number = std::numeric_limits<double>::quiet_NaN();

std::vector<cf> fft(std::vector<cf> x)
{
    std::vector<cf> y(x.size());
    fftplan plan =
        fft_create_plan(unsigned(x.size()), x.data(), y.data(), LIQUID_FFT_FORWARD, 0);
    fft_execute(plan);
    fft_destroy_plan(plan);
    return y;
}

// Frequency of bin k of an n-point transform at rate fs, in (-fs/2, fs/2].
double bin_hz(size_t k, size_t n, double fs)
{
    const double f = double(k) / double(n) * fs;
    return f > fs / 2 ? f - fs : f;
}

std::vector<cf> process_all(watterson_channel& ch, const std::vector<cf>& in)
{
    std::vector<cf> out;
    ch.process(in.data(), in.size(), out);
    return out;
}

// Unit-power white QPSK, one symbol per sample.
std::vector<cf> qpsk(size_t n, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<cf> x(n);
    const float a = float(std::sqrt(0.5));
    for (cf& s : x) {
        const uint64_t r = rng();
        s = cf((r & 1) ? a : -a, (r & 2) ? a : -a);
    }
    return x;
}

// Power of x within [lo, hi] Hz (|f| for real signals: both sides), averaged over
// back-to-back transforms of `size` points, as a fraction of the total power.
double band_fraction(
    const std::vector<cf>& x, double fs, double lo, double hi, size_t size = 1024)
{
    double in_band = 0, total = 0;
    for (size_t start = 0; start + size <= x.size(); start += size) {
        const std::vector<cf> spectrum =
            fft(std::vector<cf>(x.begin() + long(start), x.begin() + long(start + size)));
        for (size_t k = 0; k < size; ++k) {
            const double p = std::norm(spectrum[k]);
            const double f = bin_hz(k, size, fs);
            total += p;
            if (f >= lo && f <= hi)
                in_band += p;
        }
    }
    return in_band / total;
}

double mean_power(const std::vector<cf>& x, size_t from = 0)
{
    double s = 0;
    for (size_t k = from; k < x.size(); ++k)
        s += std::norm(x[k]);
    return s / double(x.size() - from);
}

} // namespace

TEST(WattersonChannel, StaticPathsHaveExactDelaysAndPowers)
{
    // Four static paths, three with fractional delays: the impulse response must be
    // sum_i sqrt(p_i) delta(t - latency - d_i) in the band |f| <= 0.4 fs.
    watterson_config c;
    c.sample_rate_hz = 9600;
    c.paths = {
        { 4, 0, 0, 0 }, { 3, 0, 0, 1.3e-3 }, { 2, 0, 0, 4.01e-3 }, { 1, 0, 0, 7.2917e-3 }
    };
    watterson_channel ch(c);
    const size_t n = 512;
    std::vector<cf> impulse(n);
    impulse[0] = 1;
    const std::vector<cf> h = process_all(ch, impulse);
    ASSERT_EQ(h.size(), n);
    const std::vector<cf> response = fft(h);
    double worst = 0;
    for (size_t k = 0; k < n; ++k) {
        const double f = bin_hz(k, n, 1.0); // cycles per sample
        if (std::abs(f) > 0.4)
            continue;
        std::complex<double> expected;
        for (const watterson_path& p : c.paths) {
            const double delay = ch.latency_samples() + p.delay_s * c.sample_rate_hz;
            expected += std::sqrt(p.power / 10.0) * std::polar(1.0, -2 * pi * f * delay);
        }
        worst = std::max(worst, std::abs(std::complex<double>(response[k]) - expected));
    }
    EXPECT_LT(worst, 5e-4);
    // Whole-sample delays pass the impulse through untouched.
    watterson_config w;
    w.paths = { { 1, 0, 0, 5 / 9600.0 } };
    watterson_channel whole(w);
    const std::vector<cf> g = process_all(whole, impulse);
    for (size_t k = 0; k < n; ++k)
        EXPECT_EQ(g[k], cf(k == size_t(whole.latency_samples()) + 5 ? 1.0f : 0.0f)) << k;
}

namespace {

struct tap_record {
    std::vector<std::vector<cf>> gains; // per path, sampled every `spacing` samples
    double rate_hz;                     // of those samples
};

// Sends an impulse every `spacing` samples through four paths with whole-sample delays
// below `spacing`: each path's response to each impulse lands on its own sample, so the
// output reads every tap gain directly.
tap_record record_taps(const std::vector<watterson_path>& paths,
                       double fs,
                       size_t spacing,
                       double seconds,
                       uint64_t seed)
{
    watterson_config c;
    c.sample_rate_hz = fs;
    c.paths = paths;
    c.seed = seed;
    watterson_channel ch(c);
    const size_t latency = size_t(ch.latency_samples());
    tap_record r;
    r.rate_hz = fs / double(spacing);
    r.gains.resize(paths.size());
    const size_t block = spacing * 4096;
    std::vector<cf> in(block);
    for (size_t k = 0; k < block; k += spacing)
        in[k] = 1;
    std::vector<cf> out;
    const size_t blocks = size_t(seconds * fs) / block;
    for (size_t b = 0; b < blocks; ++b) {
        out.clear();
        ch.process(in.data(), in.size(), out);
        for (size_t i = 0; i < paths.size(); ++i) {
            const size_t offset = latency + size_t(std::lround(paths[i].delay_s * fs));
            // Skip the first impulse of the first block: it started at the latency.
            for (size_t k = offset; k < block; k += spacing)
                r.gains[i].push_back(out[k]);
        }
    }
    return r;
}

const std::vector<watterson_path> four_fading_paths = {
    // power, spread, shift, delay (whole samples at 800 Hz: 0, 4, 9, 13)
    { 1, 1.0, 0.0, 0.0 },
    { 1, 2.0, 3.0, 4 / 800.0 },
    { 1, 0.5, -2.0, 9 / 800.0 },
    { 1, 3.0, 1.0, 13 / 800.0 },
};

} // namespace

TEST(WattersonChannel, EachTapHasAGaussianDopplerSpectrum)
{
    // F.1487 test length for the narrowest spread: 3000 / 0.5 Hz = 6000 s.
    const tap_record r = record_taps(four_fading_paths, 800.0, 16, 6000.0, 7);
    const size_t size = 1024; // 0.049 Hz bins at 50 Hz
    for (size_t i = 0; i < four_fading_paths.size(); ++i) {
        const watterson_path& p = four_fading_paths[i];
        const std::vector<cf>& g = r.gains[i];
        // Welch: Hann windows, half overlap.
        std::vector<double> psd(size, 0.0);
        size_t segments = 0;
        for (size_t start = 0; start + size <= g.size(); start += size / 2, ++segments) {
            std::vector<cf> seg(size);
            for (size_t k = 0; k < size; ++k)
                seg[k] = g[start + k] *
                         float(0.5 - 0.5 * std::cos(2 * pi * double(k) / double(size)));
            const std::vector<cf> s = fft(seg);
            for (size_t k = 0; k < size; ++k)
                psd[k] += std::norm(s[k]);
        }
        ASSERT_GT(segments, 500u);
        double total = 0, first = 0;
        for (size_t k = 0; k < size; ++k) {
            total += psd[k];
            first += psd[k] * bin_hz(k, size, r.rate_hz);
        }
        const double centre = first / total;
        double second = 0;
        for (size_t k = 0; k < size; ++k)
            second += psd[k] * std::pow(bin_hz(k, size, r.rate_hz) - centre, 2);
        const double measured_spread = 2 * std::sqrt(second / total);
        // Tolerances: centre within 5 % of the spread of the shift, two-sigma width
        // within 5 %, and every bin where the Gaussian is above a tenth of its peak
        // within 25 % of it (about 4 standard deviations of a Welch bin here).
        EXPECT_NEAR(centre, p.shift_hz, 0.05 * p.spread_hz) << "path " << i;
        EXPECT_NEAR(measured_spread, p.spread_hz, 0.05 * p.spread_hz) << "path " << i;
        const double sigma = p.spread_hz / 2;
        const double bin_width = r.rate_hz / double(size);
        const double peak = total * bin_width / (std::sqrt(2 * pi) * sigma);
        size_t checked = 0;
        for (size_t k = 0; k < size; ++k) {
            const double f = bin_hz(k, size, r.rate_hz) - p.shift_hz;
            const double expected = peak * std::exp(-f * f / (2 * sigma * sigma));
            if (expected < 0.1 * peak)
                continue;
            EXPECT_NEAR(psd[k] / expected, 1.0, 0.25)
                << "path " << i << " at " << f << " Hz";
            ++checked;
        }
        EXPECT_GE(checked, 7u) << "path " << i;
    }
}

TEST(WattersonChannel, TapEnvelopesAreRayleighWithThePathPower)
{
    std::vector<watterson_path> paths = four_fading_paths;
    for (size_t i = 0; i < paths.size(); ++i)
        paths[i].power = double(i + 1); // 0.1, 0.2, 0.3, 0.4 after normalisation
    const tap_record r = record_taps(paths, 800.0, 16, 6000.0, 8);
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::vector<cf>& g = r.gains[i];
        const double expected_power = double(i + 1) / 10.0;
        double power = 0;
        for (const cf& x : g)
            power += std::norm(x);
        power /= double(g.size());
        // About spread * 6000 s independent fades (>= 3000): 8 % is ~4 sigma.
        EXPECT_NEAR(power / expected_power, 1.0, 0.08) << "path " << i;
        // Rayleigh: |g|^2 / mean is exponential, P(< x) = 1 - exp(-x).
        for (double x : { 0.1, 0.5, 1.0, 2.0, 3.0 }) {
            const double below = double(std::count_if(g.begin(),
                                                      g.end(),
                                                      [&](const cf& v) {
                                                          return std::norm(v) < x * power;
                                                      })) /
                                 double(g.size());
            EXPECT_NEAR(below, 1 - std::exp(-x), 0.03) << "path " << i << " x " << x;
        }
    }
}

TEST(WattersonChannel, SnrIsMeasuredInThreeKilohertz)
{
    // Complex baseband at 9600 Hz: white unit-power signal, 10 dB in 3 kHz. The noise is
    // the difference from a noiseless run of the same channel.
    for (double snr_db : { 10.0, -3.0 }) {
        watterson_config c;
        c.sample_rate_hz = 9600;
        c.snr_db = snr_db;
        watterson_channel noisy(c);
        c.snr_db = inf;
        watterson_channel clean(c);
        const std::vector<cf> x = qpsk(1 << 20, 3);
        const std::vector<cf> y = process_all(noisy, x);
        const std::vector<cf> s = process_all(clean, x);
        std::vector<cf> z(y.size());
        for (size_t k = 0; k < y.size(); ++k)
            z[k] = y[k] - s[k];
        const double noise_in_band = mean_power(z) * band_fraction(z, 9600, -1500, 1500);
        const double measured = 10 * std::log10(mean_power(s) / noise_in_band);
        EXPECT_NEAR(measured, snr_db, 0.05);
        EXPECT_NEAR(noisy.measured_snr_db(), snr_db, 0.05);
        EXPECT_TRUE(std::isinf(clean.measured_snr_db()));
    }
}

TEST(WattersonChannel, SnrOfARealSignalIsMeasuredInItsAudioBand)
{
    // Real audio at 8000 Hz, signal power 0.125 (a tone of amplitude 0.5), 6 dB in
    // 300-3300 Hz.
    watterson_config c;
    c.sample_rate_hz = 8000;
    c.real_signal = true;
    c.signal_power = 0.125;
    c.snr_db = 6;
    watterson_channel noisy(c);
    c.snr_db = inf;
    watterson_channel clean(c);
    std::vector<float> x(1 << 20);
    for (size_t k = 0; k < x.size(); ++k)
        x[k] = float(0.5 * std::cos(2 * pi * 1234.5 * double(k) / 8000.0));
    std::vector<float> y, s;
    noisy.process(x.data(), x.size(), y);
    clean.process(x.data(), x.size(), s);
    std::vector<cf> z(y.size());
    double signal = 0;
    for (size_t k = 0; k < y.size(); ++k) {
        z[k] = y[k] - s[k];
        signal += double(s[k]) * s[k];
    }
    signal /= double(s.size());
    // A real signal's 3 kHz band holds both sides, +-(300..3300) Hz.
    const double fraction =
        band_fraction(z, 8000, 300, 3300) + band_fraction(z, 8000, -3300, -300);
    const double measured = 10 * std::log10(signal / (mean_power(z) * fraction));
    EXPECT_NEAR(signal, 0.125, 0.125 * 0.01);
    EXPECT_NEAR(measured, 6.0, 0.05);
    EXPECT_NEAR(noisy.measured_snr_db(), 6.0, 0.05);
}

TEST(WattersonChannel, FrequencyOffsetIsExact)
{
    watterson_config c;
    c.sample_rate_hz = 9600;
    c.frequency_offset_hz = 123.456;
    watterson_channel ch(c);
    // DC in, cut into odd pieces: the output must be exp(j 2 pi fo n / fs) throughout.
    std::vector<cf> out;
    std::vector<cf> ones(997, cf(1, 0));
    while (out.size() < 9600 * 100)
        ch.process(ones.data(), ones.size(), out);
    const size_t from = size_t(ch.latency_samples()) + 1;
    double worst_phase = 0, worst_magnitude = 0;
    for (size_t k = from; k < out.size(); ++k) {
        const std::complex<double> expected =
            std::polar(1.0, 2 * pi * std::fmod(123.456 * double(k) / 9600.0, 1.0));
        const std::complex<double> ratio = std::complex<double>(out[k]) / expected;
        worst_phase = std::max(worst_phase, std::abs(std::arg(ratio)));
        worst_magnitude = std::max(worst_magnitude, std::abs(std::abs(ratio) - 1));
    }
    EXPECT_LT(worst_phase, 1e-4); // over 100 s: no drift
    EXPECT_LT(worst_magnitude, 1e-4);
}

TEST(WattersonChannel, RealSignalsShiftWithoutAnImage)
{
    // A tone at 1000 Hz shifted by +50 Hz: all power at 1050 Hz, the image at 950 Hz
    // (what an imperfect Hilbert transform leaves) at least 80 dB down (measured: 97 dB).
    watterson_config c;
    c.sample_rate_hz = 8000;
    c.real_signal = true;
    c.frequency_offset_hz = 50;
    watterson_channel ch(c);
    std::vector<float> x(8000 * 8), y;
    for (size_t k = 0; k < x.size(); ++k)
        x[k] = float(std::cos(2 * pi * 1000.0 * double(k) / 8000.0));
    ch.process(x.data(), x.size(), y);
    std::vector<cf> tail(y.end() - 8000, y.end()); // 1 s: 1 Hz bins
    const std::vector<cf> s = fft(tail);
    const double wanted = std::norm(s[1050]), image = std::norm(s[950]);
    EXPECT_GT(10 * std::log10(wanted / image), 80.0);
    double total = 0;
    for (const cf& v : s)
        total += std::norm(v);
    EXPECT_GT(2 * wanted / total, 0.999); // both sides of the real tone
}

TEST(WattersonChannel, SampleRateOffsetStretchesTime)
{
    watterson_config c;
    c.sample_rate_hz = 9600;
    c.sample_rate_offset_ppm = 100;
    watterson_channel ch(c);
    const size_t n = 9600 * 100;
    std::vector<cf> x(n);
    for (size_t k = 0; k < n; ++k)
        x[k] =
            std::polar(1.0f, float(2 * pi * std::fmod(1000.0 * double(k) / 9600.0, 1.0)));
    std::vector<cf> y;
    for (size_t k = 0; k < n; k += 1000)
        ch.process(x.data() + k, std::min<size_t>(1000, n - k), y);
    // One more sample per 10,000, within the resampler's rounding.
    EXPECT_NEAR(double(y.size()), double(n) * 1.0001, 2.0);
    // The tone, counted in output samples, is 1000 / 1.0001 Hz.
    std::complex<double> acc;
    for (size_t k = 1000; k + 1 < y.size(); ++k)
        acc += std::complex<double>(y[k + 1]) * std::conj(std::complex<double>(y[k]));
    const double measured_hz = std::arg(acc) / (2 * pi) * 9600.0;
    EXPECT_NEAR(measured_hz, 1000.0 / 1.0001, 0.002);
}

TEST(WattersonChannel, SeedFixesTheOutputAndCuttingDoesNotChangeIt)
{
    watterson_config c = watterson_preset("poor", 9600, 10, 42);
    c.frequency_offset_hz = 3.5;
    const std::vector<cf> x = qpsk(96000, 9);
    watterson_channel a(c), b(c), d(c);
    const std::vector<cf> ya = process_all(a, x);
    const std::vector<cf> yb = process_all(b, x);
    EXPECT_EQ(ya, yb);
    std::vector<cf> yd;
    std::mt19937 rng(1);
    for (size_t k = 0; k < x.size();) {
        const size_t m = std::min<size_t>(x.size() - k, 1 + rng() % 1500);
        d.process(x.data() + k, m, yd);
        k += m;
    }
    ASSERT_EQ(yd.size(), ya.size());
    double worst = 0;
    for (size_t k = 0; k < ya.size(); ++k)
        worst = std::max(worst, double(std::abs(ya[k] - yd[k])));
    EXPECT_LT(worst, 1e-4);
    c.seed = 43;
    watterson_channel other(c);
    EXPECT_NE(process_all(other, x), ya);
}

TEST(WattersonChannel, FadingKeepsTheMeanPowerAndRuntimeSettingsApply)
{
    watterson_config c = watterson_preset("moderate", 9600, inf, 5);
    watterson_channel ch(c);
    const std::vector<cf> x = qpsk(9600 * 600, 4); // 600 s at 0.5 Hz: ~300 fades
    const std::vector<cf> y = process_all(ch, x);
    EXPECT_NEAR(mean_power(y), 1.0, 0.15);
    // Switch to AWGN at 0 dB: the noise appears, the fading stops.
    ch.set_paths({});
    ch.set_snr_db(0);
    const std::vector<cf> z = process_all(ch, x);
    const double before = ch.stats().noise_energy;
    EXPECT_GT(before, 0);
    EXPECT_NEAR(mean_power(z, 100), 1.0 + 9600.0 / 3000.0, 0.05);
    ch.set_noise_bandwidth_hz(9600); // same SNR over the whole band: 3.2x less noise
    const std::vector<cf> w = process_all(ch, x);
    EXPECT_NEAR(mean_power(w, 100), 2.0, 0.02);
    ch.set_signal_power(4);
    EXPECT_NEAR(mean_power(process_all(ch, x), 100), 5.0, 0.05);
}

TEST(WattersonChannel, PresetsAreTheF1487AndF520Conditions)
{
    for (const std::string& name : fading_profile_names())
        EXPECT_NO_THROW(watterson_channel(watterson_preset(name, 9600, 10))) << name;
    const watterson_config poor = watterson_preset("poor", 9600, 10);
    ASSERT_EQ(poor.paths.size(), 2u);
    EXPECT_EQ(poor.paths[1].delay_s, 2e-3);
    EXPECT_EQ(poor.paths[0].spread_hz, 1.0);
    EXPECT_EQ(watterson_preset("mid_latitude_disturbed_nvis", 9600, 10).paths[1].delay_s,
              7e-3);
    EXPECT_EQ(watterson_preset("high_latitude_disturbed", 9600, 10).paths[1].spread_hz,
              30.0);
    EXPECT_TRUE(watterson_preset("awgn", 9600, 10).paths.empty());
    EXPECT_EQ(fading_profile_names().size(), 15u);
}

TEST(WattersonChannel, BadParametersAreRefusedNamingThem)
{
    const auto refused = [](const std::string& name, auto change) {
        watterson_config c = watterson_preset("poor", 9600, 10);
        change(c);
        expect_throws_naming([&] { watterson_channel ch(c); }, name);
    };
    refused("paths[0].spread_hz", [](watterson_config& c) { c.paths[0].spread_hz = -1; });
    refused("paths[1].delay_s", [](watterson_config& c) { c.paths[1].delay_s = 0.5; });
    refused("paths[1].delay_s", [](watterson_config& c) { c.paths[1].delay_s = -1e-3; });
    refused("paths[0].power",
            [](watterson_config& c) { c.paths[0].power = not_a_number; });
    refused("paths[1].shift_hz",
            [](watterson_config& c) { c.paths[1].shift_hz = not_a_number; });
    refused("paths",
            [](watterson_config& c) { c.paths[0].power = c.paths[1].power = 0; });
    refused("snr_db", [](watterson_config& c) { c.snr_db = not_a_number; });
    refused("snr_db", [](watterson_config& c) { c.snr_db = -inf; });
    refused("sample_rate_hz", [](watterson_config& c) { c.sample_rate_hz = 0; });
    refused("noise_bandwidth_hz",
            [](watterson_config& c) { c.noise_bandwidth_hz = 20000; });
    refused("noise_bandwidth_hz",
            [](watterson_config& c) { c.noise_bandwidth_hz = not_a_number; });
    refused("signal_power", [](watterson_config& c) { c.signal_power = -1; });
    refused("frequency_offset_hz",
            [](watterson_config& c) { c.frequency_offset_hz = not_a_number; });
    refused("frequency_offset_hz",
            [](watterson_config& c) { c.frequency_offset_hz = 5000; });
    refused("sample_rate_offset_ppm",
            [](watterson_config& c) { c.sample_rate_offset_ppm = inf; });
    refused("max_delay_s", [](watterson_config& c) { c.max_delay_s = not_a_number; });
    expect_throws_naming([] { watterson_preset("stormy", 9600, 10); }, "profile");

    // Run-time setters check the same way and leave the channel as it was.
    watterson_channel ch(watterson_preset("poor", 9600, 10));
    expect_throws_naming([&] { ch.set_snr_db(not_a_number); }, "snr_db");
    expect_throws_naming([&] { ch.set_paths({ { 1, 0, 0, 1.0 } }); }, "paths[0].delay_s");
    expect_throws_naming([&] { ch.set_frequency_offset_hz(inf); }, "frequency_offset_hz");
    EXPECT_EQ(ch.config().snr_db, 10);
    EXPECT_EQ(ch.normalised_paths().size(), 2u);
}

TEST(GaussianNoise, HasUnitPowerAndGaussianTails)
{
    gaussian_noise g(17);
    const size_t n = 1 << 21;
    std::vector<cf> z(n);
    g.add_complex(z.data(), n, 1.0f);
    std::vector<float> x(n);
    g.add_real(x.data(), n, 1.0f);
    double pz = 0, mean_re = 0, px = 0, fourth = 0;
    size_t beyond3 = 0;
    for (size_t k = 0; k < n; ++k) {
        pz += std::norm(z[k]);
        mean_re += z[k].real();
        px += double(x[k]) * x[k];
        fourth += std::pow(double(x[k]), 4);
        beyond3 += std::abs(x[k]) > 3;
    }
    EXPECT_NEAR(pz / double(n), 1.0, 0.005);
    EXPECT_NEAR(mean_re / double(n), 0.0, 0.005);
    EXPECT_NEAR(px / double(n), 1.0, 0.005);
    EXPECT_NEAR(fourth / double(n), 3.0, 0.05); // Gaussian kurtosis
    EXPECT_NEAR(double(beyond3) / double(n), 0.0027, 0.0003);
}
