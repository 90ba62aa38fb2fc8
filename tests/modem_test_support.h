/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Shared by the modem tests: the 110A reference recordings, test data, and a channel
// for audio bursts.
#ifndef HFSTACK_TESTS_MODEM_TEST_SUPPORT_H
#define HFSTACK_TESTS_MODEM_TEST_SUPPORT_H

#include "chan/watterson_channel.h"
#include "phy/m110c_transmitter.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

// The bursts an App D receiver at the mode's bandwidth reports, the complex samples at
// `fs` (0: the modem's rate) through the front end in 10 ms pieces (resampled to 4
// samples a symbol where fs is not the modem's rate).
inline std::vector<gr::hfstack::phy::m110d_burst>
m110d_bursts_received(const std::vector<std::complex<float>>& samples,
                      const gr::hfstack::phy::m110d_mode& mode,
                      double fs = 0,
                      gr::hfstack::phy::m110d_receiver_config config = {})
{
    using namespace gr::hfstack::phy;
    serial_tone_frontend_config fc;
    fc.real_input = false;
    fc.symbol_rate = mode.symbol_rate();
    fc.sample_rate = fs > 0 ? fs : m110d_sample_rate(mode.bw_khz);
    serial_tone_frontend front(fc);
    config.bandwidth_khz = mode.bw_khz;
    m110d_receiver rx(config);
    std::vector<m110d_burst> bursts;
    std::vector<std::complex<float>> bb;
    const size_t piece = size_t(fc.sample_rate / 100);
    for (size_t k = 0; k < samples.size(); k += piece) {
        bb.clear();
        front.process(samples.data() + k, std::min(piece, samples.size() - k), bb);
        rx.process(bb.data(), bb.size(), bursts);
    }
    return bursts;
}

// Complex baseband of a transmission at `fs` (the modem's rate when 0), with lead_s of
// silence before and 0.3 s after, through a carrier offset and (snr_db finite) AWGN
// over the transmission's mean power in the mode's bandwidth, and `paths`; with
// `paths_from` given, those paths instead from change_s seconds of the samples on.
inline std::vector<std::complex<float>>
m110d_on_the_air(const gr::hfstack::phy::m110d_mode& mode,
                 const std::vector<uint8_t>& data,
                 double fs,
                 double snr_db,
                 double offset_hz,
                 uint64_t seed,
                 const gr::hfstack::phy::m110d_transmit_options& options = {},
                 const std::vector<gr::hfstack::chan::watterson_path>& paths = {},
                 const std::vector<gr::hfstack::chan::watterson_path>& paths_from = {},
                 double change_s = 0,
                 double lead_s = 0.1)
{
    using namespace gr::hfstack;
    using namespace gr::hfstack::phy;
    using cf = std::complex<float>;
    const psk_modulator modulator(m110d_modulator_config(mode, fs));
    const double rate = modulator.config().sample_rate;
    std::vector<cf> x(size_t(lead_s * rate));
    const std::vector<cf> burst = modulator.baseband(
        m110d_transmit_points(mode, data.data(), data.size(), options));
    x.insert(x.end(), burst.begin(), burst.end());
    x.resize(x.size() + size_t(0.3 * rate));
    chan::watterson_config cc;
    cc.sample_rate_hz = rate;
    cc.snr_db = snr_db;
    cc.noise_bandwidth_hz = 1000.0 * mode.bw_khz;
    cc.signal_power = m110d_frame_power(mode);
    cc.frequency_offset_hz = offset_hz;
    cc.seed = seed;
    cc.paths = paths;
    chan::watterson_channel channel(cc);
    std::vector<cf> out;
    const size_t change =
        paths_from.empty() ? x.size() : std::min(x.size(), size_t(change_s * rate));
    channel.process(x.data(), change, out);
    if (change < x.size()) {
        channel.set_paths(paths_from);
        channel.process(x.data() + change, x.size() - change, out);
    }
    return out;
}

// The text every reference recording carries.
inline const std::string m110a_reference_text =
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 1234567890";

// Path of the reference recording of a mode ("2400S"), from HFSTACK_VECTORS_DIR.
inline std::string m110a_recording_path(const std::string& mode)
{
    return std::string(HFSTACK_VECTORS_DIR) + "/m110a/tx_" + mode + ".pcm";
}

// Why a conformance test against a third-party recording skips.
inline std::string m110a_recording_missing(const std::string& path)
{
    return "no reference recording at " + path +
           " (the 110A recordings of shared/vectors/m110a; configure with "
           "-DHFSTACK_VECTORS_DIR=DIR)";
}

// 16-bit little-endian PCM as floats times `scale`; false when the file is missing.
inline bool read_pcm(const std::string& path, std::vector<float>& out, float scale = 1.0f)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return false;
    std::vector<char> raw((std::istreambuf_iterator<char>(f)),
                          std::istreambuf_iterator<char>());
    out.resize(raw.size() / 2);
    for (size_t k = 0; k < out.size(); ++k)
        out[k] = scale * float(int16_t(uint16_t(uint8_t(raw[2 * k])) |
                                       uint16_t(uint8_t(raw[2 * k + 1])) << 8));
    return true;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& x : b)
        x = uint8_t(rng());
    return b;
}

// Real audio at fs through the Watterson channel: AWGN at snr_db (3 kHz) for a signal
// of power 0.0625 (rms 0.25), a carrier offset, and fading `paths` (normalised to unit
// power; none: AWGN only).
inline std::vector<float>
through_channel(const std::vector<float>& audio,
                double fs,
                double snr_db,
                double offset_hz,
                uint64_t seed,
                double ppm = 0,
                const std::vector<gr::hfstack::chan::watterson_path>& paths = {})
{
    gr::hfstack::chan::watterson_config cc;
    cc.sample_rate_hz = fs;
    cc.real_signal = true;
    cc.signal_power = 0.0625;
    cc.snr_db = snr_db;
    cc.frequency_offset_hz = offset_hz;
    cc.sample_rate_offset_ppm = ppm;
    cc.seed = seed;
    cc.paths = gr::hfstack::chan::normalised_paths(paths);
    gr::hfstack::chan::watterson_channel channel(cc);
    std::vector<float> out;
    channel.process(audio.data(), audio.size(), out);
    return out;
}

// An App C transmission of `data` as the far end sends it: the layout (preamble,
// probes, sections) as our transmitter's, every data symbol the constellation table's
// point of its channel bits (mapped, scrambled), as printed: QAM outer points at
// amplitude 1 beside unit-amplitude probes, no rescaling. The tail-biting phase the
// figures of the tests using it were measured with: full_register.
inline std::vector<std::complex<float>>
m110c_table_points(const gr::hfstack::phy::m110c_mode& mode,
                   const std::vector<uint8_t>& data)
{
    using namespace gr::hfstack::phy;
    m110c_readings measured_with;
    measured_with.tail_biting = m110c_tail_biting::from_full_register;
    std::vector<std::complex<float>> points =
        m110c_transmit_points(mode, data.data(), data.size(), false, measured_with);
    const std::vector<uint8_t> bits =
        m110c_channel_bits(mode, data.data(), data.size(), false, measured_with);
    const unsigned nb = mode.bits_per_symbol;
    const auto& table = m110c_constellation(nb);
    const auto scrambler = m110c_data_scrambler(nb);
    size_t next_bit = 0;
    for (size_t k = 0; k < points.size(); ++k) {
        const m110c_symbol_role role = m110c_role_of(k);
        if (role.kind != m110c_symbol_kind::data)
            continue;
        unsigned v = 0;
        for (unsigned b = 0; b < nb; ++b)
            v = (v << 1) | bits[next_bit++];
        const uint8_t symbol = m110c_map_bits(v, nb);
        points[k] = nb <= 3 ? table[(symbol + scrambler[role.position]) % 8]
                            : table[symbol ^ scrambler[role.position]];
    }
    return points;
}

// Real audio at fs fed to a serial-tone receiver (m110c_receiver, m110d_receiver)
// through the front end in pieces of `piece` samples, as a block would; its bursts.
// With `fed_to_first`, feeding stops at the piece after which the first burst came, and
// the samples fed by then are stored there.
template <typename Receiver, typename Burst, typename Config>
std::vector<Burst> feed_serial_tone_audio(const std::vector<float>& audio,
                                          double fs,
                                          const Config& config,
                                          size_t piece,
                                          size_t* fed_to_first = nullptr)
{
    gr::hfstack::phy::serial_tone_frontend_config fc;
    fc.sample_rate = fs;
    gr::hfstack::phy::serial_tone_frontend front(fc);
    Receiver rx(config);
    std::vector<Burst> bursts;
    std::vector<std::complex<float>> bb;
    for (size_t k = 0; k < audio.size(); k += piece) {
        bb.clear();
        const size_t n = std::min(piece, audio.size() - k);
        front.process(audio.data() + k, n, bb);
        rx.process(bb.data(), bb.size(), bursts);
        if (fed_to_first && !bursts.empty()) {
            *fed_to_first = k + n;
            break;
        }
    }
    return bursts;
}

// A serial-tone receiver's bursts from real audio at fs, fed in pieces of 4096, with
// half a second of silence after.
template <typename Receiver, typename Burst, typename Config>
std::vector<Burst>
receive_serial_tone_audio(std::vector<float> audio, double fs, const Config& config)
{
    audio.resize(audio.size() + size_t(fs / 2), 0.0f);
    return feed_serial_tone_audio<Receiver, Burst>(audio, fs, config, 4096);
}

// Seconds of input past `signal_end_s` a serial-tone receiver took to report its first
// burst (audio at 9600 Hz fed in pieces of 0.1 s); infinity when it reported none.
template <typename Receiver, typename Burst, typename Config>
double serial_tone_report_delay_s(const std::vector<float>& audio,
                                  double signal_end_s,
                                  const Config& config)
{
    size_t fed = 0;
    if (feed_serial_tone_audio<Receiver, Burst>(audio, 9600, config, 960, &fed).empty())
        return std::numeric_limits<double>::infinity();
    return double(fed) / 9600 - signal_end_s;
}

// 2400 Bd points (or 8PSK symbol numbers) on 1800 Hz as audio at fs, rms 0.25, with
// 0.7 s of silence before and 0.5 s after.
template <typename Symbol>
std::vector<float> padded_audio(const std::vector<Symbol>& points, double fs)
{
    gr::hfstack::phy::psk_modulator_config mc;
    mc.sample_rate = fs;
    mc.rms = 0.25;
    std::vector<float> audio(size_t(0.7 * fs), 0.0f);
    const std::vector<float> burst = gr::hfstack::phy::psk_modulator(mc).audio(points);
    audio.insert(audio.end(), burst.begin(), burst.end());
    audio.resize(audio.size() + size_t(0.5 * fs), 0.0f);
    return audio;
}

// Audio as padded_audio() makes it (0.5 s of silence after the burst) with the burst's
// last fade_s seconds weakened by fade_db, then extra_s more of silence (time for a
// receiver to find a burst lost).
inline std::vector<float> with_faded_end(std::vector<float> audio,
                                         double fs,
                                         double fade_s,
                                         double fade_db,
                                         double extra_s = 0)
{
    const size_t end = audio.size() - size_t(0.5 * fs);
    for (size_t k = end - size_t(fade_s * fs); k < end; ++k)
        audio[k] *= float(std::pow(10.0, fade_db / 20.0));
    audio.resize(audio.size() + size_t(extra_s * fs), 0.0f);
    return audio;
}

// A transmission of 2400 Bd `points` cut after `seconds` (no EOM: the sender's signal
// simply stops) as padded_audio at 9600 Hz, then `noise_s` of noise alone, through AWGN
// at snr_db; `signal_end_s` is where the signal stops.
inline std::vector<float> cut_transmission_audio(std::vector<std::complex<float>> points,
                                                 double seconds,
                                                 double noise_s,
                                                 double snr_db,
                                                 uint64_t seed,
                                                 double& signal_end_s)
{
    constexpr double fs = 9600;
    points.resize(std::min(points.size(), size_t(seconds * 2400)));
    signal_end_s = 0.7 + double(points.size()) / 2400;
    std::vector<float> audio = padded_audio(points, fs);
    audio.resize(audio.size() + size_t(noise_s * fs), 0.0f);
    return through_channel(audio, fs, snr_db, 0, seed);
}

// The first `seconds` of a transmission of 2400 Bd `points` (the sender's signal stops:
// no EOM), then 30 s of noise alone, at 12 dB, channel seeds 1-4: each time the
// receiver reports the burst within `within_s` of the signal's end.
template <typename Receiver, typename Burst, typename Config>
void expect_cut_transmission_ends_within(const std::vector<std::complex<float>>& points,
                                         double seconds,
                                         double within_s,
                                         const Config& config)
{
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        double signal_end_s = 0;
        const std::vector<float> audio =
            cut_transmission_audio(points, seconds, 30, 12, seed, signal_end_s);
        const double delay_s =
            serial_tone_report_delay_s<Receiver, Burst>(audio, signal_end_s, config);
        EXPECT_GT(delay_s, 0.0) << seed;
        EXPECT_LT(delay_s, within_s) << seed;
    }
}

// Feeds a receiver (m110a_receiver, m110c_receiver) `seconds` of complex noise at the
// level of a 0 dB signal at 9600 Hz; returns the bursts it reported.
template <typename Receiver, typename Burst>
std::vector<Burst> bursts_from_noise(Receiver& rx, int seconds)
{
    gr::hfstack::chan::watterson_config cc;
    cc.sample_rate_hz = 9600;
    cc.snr_db = 0;
    cc.seed = 9;
    gr::hfstack::chan::watterson_channel channel(cc);
    std::vector<Burst> bursts;
    std::vector<std::complex<float>> zeros(9600), noise;
    for (int s = 0; s < seconds; ++s) {
        noise.clear();
        channel.process(zeros.data(), zeros.size(), noise);
        rx.process(noise.data(), noise.size(), bursts);
    }
    return bursts;
}

#endif
