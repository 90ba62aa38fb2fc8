/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Conformance of our 110A transmitter with an independent modem: the six reference
// recordings in ../shared/vectors/m110a (G4GUO core, short interleave, 48 kHz audio,
// each carrying one known text) must carry, symbol for symbol, what our transmitter
// sends for the same text and mode: preamble with mode code and countdown, scrambled
// data, probes with D1/D2, EOM, flush and fill. Our modulator's audio must read back
// the same way.
//
// The symbols are read with a plain reference demodulator (mix down, low-pass,
// preamble-correlation timing, a 5-tap least-squares equaliser trained on the
// preamble, hard decisions), which is enough on these clean recordings; the receiver's
// own tests cover channels.
#include "phy/m110a_transmitter.h"
#include "phy/psk_modulator.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>
#include <liquid/liquid.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;
using cd = std::complex<double>;

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr uint8_t undecided = 255; // a symbol the equaliser window does not reach

// Solves A w = b (n x n, complex) by Gaussian elimination with partial pivoting.
std::vector<cd> solve(std::vector<std::vector<cd>> a, std::vector<cd> b)
{
    const size_t n = b.size();
    for (size_t c = 0; c < n; ++c) {
        size_t p = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::abs(a[r][c]) > std::abs(a[p][c]))
                p = r;
        std::swap(a[c], a[p]);
        std::swap(b[c], b[p]);
        for (size_t r = c + 1; r < n; ++r) {
            const cd f = a[r][c] / a[c][c];
            for (size_t k = c; k < n; ++k)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    std::vector<cd> x(n);
    for (size_t r = n; r-- > 0;) {
        cd s = b[r];
        for (size_t k = r + 1; k < n; ++k)
            s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return x;
}

// Hard symbol decisions of 48 kHz 1800 Hz audio whose first preamble segment is
// `first_segment`; returns `count` symbols from the first preamble symbol on.
std::vector<uint8_t> read_symbols(const std::vector<float>& audio,
                                  const std::vector<uint8_t>& expected_preamble,
                                  size_t count)
{
    const size_t sps = 20;
    // Mix down and low-pass (cut-off 1680 Hz, 161 taps), delay compensated.
    std::vector<float> lp(161);
    liquid_firdes_kaiser(161, 0.035f, 60.0f, 0.0f, lp.data());
    std::vector<cd> mixed(audio.size()), bb(audio.size());
    for (size_t n = 0; n < audio.size(); ++n)
        mixed[n] =
            double(audio[n]) *
            std::polar(1.0, -2 * pi * std::fmod(1800.0 * double(n) / 48000.0, 1.0));
    for (size_t n = 0; n < audio.size(); ++n) {
        cd acc;
        for (size_t k = 0; k < lp.size(); ++k) {
            const long m = long(n) + 80 - long(k);
            if (m >= 0 && m < long(audio.size()))
                acc += double(lp[k]) * mixed[size_t(m)];
        }
        bb[n] = acc;
    }
    const auto point = [](uint8_t s) { return std::polar(1.0, pi / 4 * s); };
    // Timing: the offset whose 480 symbols best match the first segment.
    size_t best = 0;
    double best_corr = -1;
    for (size_t o = 0; o + 480 * sps < bb.size() && o < 4000; ++o) {
        cd acc;
        for (size_t k = 0; k < 480; ++k)
            acc += bb[o + k * sps] * std::conj(point(expected_preamble[k]));
        if (std::abs(acc) > best_corr) {
            best_corr = std::abs(acc);
            best = o;
        }
    }
    std::vector<cd> y;
    for (size_t n = best; n < bb.size(); n += sps)
        y.push_back(bb[n]);
    // 5-tap least-squares equaliser trained on the whole preamble.
    const size_t taps = 5, train = expected_preamble.size();
    std::vector<std::vector<cd>> a(taps, std::vector<cd>(taps));
    std::vector<cd> b(taps);
    for (size_t k = 2; k + 2 < train && k + 2 < y.size(); ++k)
        for (size_t r = 0; r < taps; ++r) {
            for (size_t c = 0; c < taps; ++c)
                a[r][c] += std::conj(y[k - 2 + r]) * y[k - 2 + c];
            b[r] += std::conj(y[k - 2 + r]) * point(expected_preamble[k]);
        }
    const std::vector<cd> w = solve(a, b);
    std::vector<uint8_t> symbols(count, undecided);
    for (size_t k = 2; k < count && k + 2 < y.size(); ++k) {
        cd z;
        for (size_t t = 0; t < taps; ++t)
            z += y[k - 2 + t] * w[t];
        symbols[k] = uint8_t(long(std::lround(std::arg(z) / (pi / 4)) + 8) % 8);
    }
    return symbols;
}

size_t
mismatches(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t from)
{
    size_t m = 0;
    for (size_t k = from; k < a.size(); ++k)
        m += a[k] != b[k];
    return m;
}

class M110aRecording : public ::testing::TestWithParam<const char*>
{
};

} // namespace

TEST_P(M110aRecording, CarriesWhatOurTransmitterSends)
{
    const m110a_waveform& mode = *m110a_waveform_by_name(GetParam());
    std::vector<float> audio;
    const std::string path = m110a_recording_path(mode.name);
    if (!read_pcm(path, audio))
        GTEST_SKIP() << m110a_recording_missing(path);
    const std::vector<uint8_t> ours = m110a_transmit_symbols(
        mode,
        reinterpret_cast<const uint8_t*>(m110a_reference_text.data()),
        m110a_reference_text.size());
    const std::vector<uint8_t> preamble(ours.begin(), ours.begin() + 480);
    // The recording runs 0.2-0.6 s past the end of our last interleaver block (its
    // files end on 0.2 s boundaries): the reference core keeps sending frames.
    const size_t recorded = audio.size() / 20;
    ASSERT_GE(recorded, ours.size());
    ASSERT_LE(recorded, ours.size() + 1440);
    const std::vector<uint8_t> theirs = read_symbols(audio, preamble, recorded - 12);
    // Symbols 0 and 1 precede the equaliser's window.
    EXPECT_EQ(mismatches(ours,
                         std::vector<uint8_t>(theirs.begin(),
                                              theirs.begin() + long(ours.size())),
                         2),
              0u)
        << "of " << ours.size() << " symbols";
    // Past our end its frames go on with the same probes (and D1/D2 frames); the data
    // there is zero fill at most rates, but not at 300 and 600 bps, so only the probes
    // are compared (75 bps has none).
    const size_t preamble_symbols = mode.preamble_segments * m110a_segment_symbols;
    const auto& scrambler = m110a_data_scrambler();
    size_t probes = 0, probe_mismatches = 0;
    for (size_t k = ours.size(); k < theirs.size(); ++k) {
        const size_t d = k - preamble_symbols;
        const m110a_symbol_role role = m110a_role_of(mode, d);
        if (!role.probe || theirs[k] == undecided)
            continue;
        ++probes;
        probe_mismatches += theirs[k] != (role.known + scrambler[d % 160]) % 8;
    }
    EXPECT_EQ(probe_mismatches, 0u) << "of " << probes << " probe symbols after our end";
    if (mode.known_symbols > 0) {
        EXPECT_GE(probes, 100u);
    }

    // Our modulator's audio reads back to our symbols the same way.
    psk_modulator_config c;
    c.sample_rate = 48000;
    c.rms = 8000;
    const std::vector<float> ours_audio = psk_modulator(c).audio(ours);
    const std::vector<uint8_t> back = read_symbols(ours_audio, preamble, ours.size());
    EXPECT_EQ(mismatches(ours, back, 2), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllSix,
    M110aRecording,
    ::testing::Values("75S", "150S", "300S", "600S", "1200S", "2400S"));
