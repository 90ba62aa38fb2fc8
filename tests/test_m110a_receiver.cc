/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The 110A receiver: the reference recordings of an independent modem decode to their
// text; our own bursts decode in every mode through noise and frequency offset; noise,
// corrupt mode codes and cut bursts neither crash it nor wedge it.
#include "chan/watterson_channel.h"
#include "phy/m110a_receiver.h"
#include "phy/m110a_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"

#include "expect_error.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

// Audio in, bursts out, fed in pieces as a block would.
// With `tap`, the equalised data symbols are appended to it (tap_symbols).
std::vector<m110a_burst> receive_audio(const std::vector<float>& audio,
                                       double fs,
                                       size_t piece = 4096,
                                       const m110a_receiver_config& config = {},
                                       std::vector<cf>* tap = nullptr,
                                       uint64_t* later_passes = nullptr)
{
    serial_tone_frontend_config fc;
    fc.sample_rate = fs;
    serial_tone_frontend front(fc);
    m110a_receiver rx(config);
    rx.tap_symbols(tap);
    std::vector<m110a_burst> bursts;
    std::vector<cf> bb;
    for (size_t k = 0; k < audio.size(); k += piece) {
        bb.clear();
        front.process(audio.data() + k, std::min<size_t>(piece, audio.size() - k), bb);
        rx.process(bb.data(), bb.size(), bursts);
    }
    // Half a second of silence lets the last decisions out.
    std::vector<float> tail(size_t(fs / 2), 0.0f);
    bb.clear();
    front.process(tail.data(), tail.size(), bb);
    rx.process(bb.data(), bb.size(), bursts);
    if (later_passes)
        *later_passes = rx.later_passes();
    return bursts;
}

std::vector<float> silence(double seconds, double fs)
{
    return std::vector<float>(size_t(seconds * fs), 0.0f);
}

// Our burst of `bytes` in `mode` as audio at fs, with leading and trailing silence,
// through an AWGN channel at snr_db (3 kHz) with a carrier offset, or through fading
// `paths` (normalised to unit power).
std::vector<float> over_the_air(const std::string& mode,
                                const std::vector<uint8_t>& bytes,
                                double fs,
                                double snr_db,
                                double offset_hz,
                                uint64_t seed,
                                double ppm = 0,
                                const std::vector<chan::watterson_path>& paths = {})
{
    const std::vector<uint8_t> symbols =
        m110a_transmit_symbols(*m110a_waveform_by_name(mode), bytes.data(), bytes.size());
    psk_modulator_config mc;
    mc.sample_rate = fs;
    mc.rms = 0.25;
    std::vector<float> audio = silence(0.7, fs);
    const std::vector<float> burst = psk_modulator(mc).audio(symbols);
    audio.insert(audio.end(), burst.begin(), burst.end());
    const std::vector<float> after = silence(0.5, fs);
    audio.insert(audio.end(), after.begin(), after.end());
    return through_channel(audio, fs, snr_db, offset_hz, seed, ppm, paths);
}

} // namespace

class M110aReferenceRecording : public ::testing::TestWithParam<const char*>
{
};

TEST_P(M110aReferenceRecording, DecodesToItsText)
{
    std::vector<float> audio;
    const std::string path = m110a_recording_path(GetParam());
    if (!read_pcm(path, audio, 1.0f / 32768.0f))
        GTEST_SKIP() << m110a_recording_missing(path);
    const std::vector<m110a_burst> bursts = receive_audio(audio, 48000);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, GetParam());
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(std::string(bursts[0].bytes.begin(), bursts[0].bytes.end()),
              m110a_reference_text);
    EXPECT_NEAR(bursts[0].frequency_offset_hz, 0.0, 1.0);
    // A clean recording: every mode reports a high SNR, 75 bps too (its Walsh chips were
    // compared with the matched filter's output, whose intersymbol interference with the
    // recording's pulse read as noise: 75S reported about 5 dB where the others report
    // over 50).
    EXPECT_GT(bursts[0].snr_db, 40.0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(
    AllSix,
    M110aReferenceRecording,
    ::testing::Values("75S", "150S", "300S", "600S", "1200S", "2400S"));

class M110aRoundTrip : public ::testing::TestWithParam<const char*>
{
};

TEST_P(M110aRoundTrip, DecodesOurBurstThroughNoiseAndOffset)
{
    const std::string mode = GetParam();
    const m110a_waveform& w = *m110a_waveform_by_name(mode);
    // About two interleaver blocks of data (at least 20 bytes).
    const size_t bytes = std::max<size_t>(
        20,
        size_t(w.user_bps * (w.interleaver == m110a_interleaver::long_ ? 4.8 : 1.2) / 8));
    const std::vector<uint8_t> data = random_bytes(bytes, 11);
    const double snr = w.user_bps >= 4800 ? 25 : w.user_bps >= 2400 ? 18 : 12;
    for (double fs : { 8000.0, 48000.0 }) {
        const std::vector<float> audio = over_the_air(mode, data, fs, snr, 37.5, 3);
        const std::vector<m110a_burst> bursts = receive_audio(audio, fs);
        ASSERT_EQ(bursts.size(), 1u) << mode << " at " << fs;
        EXPECT_EQ(bursts[0].mode, mode);
        EXPECT_TRUE(bursts[0].eom);
        EXPECT_EQ(bursts[0].bytes, data) << mode << " at " << fs;
        EXPECT_NEAR(bursts[0].frequency_offset_hz, 37.5, 1.0);
        EXPECT_GT(bursts[0].snr_db, snr - 4);
    }
}

INSTANTIATE_TEST_SUITE_P(EveryMode,
                         M110aRoundTrip,
                         ::testing::Values("75S",
                                           "150S",
                                           "300S",
                                           "600S",
                                           "1200S",
                                           "2400S",
                                           "4800U",
                                           "75L",
                                           "300L",
                                           "2400L"));

TEST(M110aReceiver, AcquiresAndHoldsAt75HzAnd100Ppm)
{
    // 20 s of 2400S data: at 100 ppm the symbol timing drifts 2 ms (5 symbols).
    const std::vector<uint8_t> data = random_bytes(6000, 21);
    for (const auto& [hz, ppm] :
         { std::pair<double, double>{ 75.0, 100.0 }, { -75.0, -100.0 } }) {
        const std::vector<float> audio =
            over_the_air("2400S", data, 9600, 15, hz, 8, ppm);
        const std::vector<m110a_burst> bursts = receive_audio(audio, 9600);
        ASSERT_EQ(bursts.size(), 1u) << hz << " Hz, " << ppm << " ppm";
        EXPECT_TRUE(bursts[0].eom);
        EXPECT_EQ(bursts[0].bytes, data) << hz << " Hz, " << ppm << " ppm";
        EXPECT_NEAR(bursts[0].frequency_offset_hz, hz, 1.0);
    }
}

TEST(M110aReceiver, FollowsTwoFadingPaths)
{
    // F.1487 poor (two equal Rayleigh paths 2 ms apart, 1 Hz) at 30 dB: 10 s bursts of
    // 2400S decode exactly. (The preamble's coarse offset can be tens of Hz off when
    // the paths are equal, and the equaliser must follow the fading between probes.)
    const std::vector<uint8_t> data = random_bytes(3000, 31);
    const std::vector<chan::watterson_path> poor = { { 1.0, 1.0, 0.0, 0.0 },
                                                     { 1.0, 1.0, 0.0, 0.002 } };
    for (uint64_t seed : { 1, 2, 3 }) {
        const std::vector<float> audio =
            over_the_air("2400S", data, 9600, 30, 0, seed, 0, poor);
        const std::vector<m110a_burst> bursts = receive_audio(audio, 9600);
        ASSERT_EQ(bursts.size(), 1u) << "seed " << seed;
        EXPECT_TRUE(bursts[0].eom) << "seed " << seed;
        EXPECT_EQ(bursts[0].bytes, data) << "seed " << seed;
    }
}

TEST(M110aReceiver, TheSecondPassRepairsFades)
{
    // 2400S through F.1487 poor at 15 dB: bit errors left by one pass, against two.
    const std::vector<uint8_t> data = random_bytes(3000, 61);
    const std::vector<chan::watterson_path> poor = { { 1.0, 1.0, 0.0, 0.0 },
                                                     { 1.0, 1.0, 0.0, 0.002 } };
    size_t errors[2] = { 0, 0 };
    for (uint64_t seed = 1; seed <= 8; ++seed) {
        const std::vector<float> audio =
            over_the_air("2400S", data, 9600, 15, 0, seed, 0, poor);
        for (unsigned passes = 1; passes <= 2; ++passes) {
            m110a_receiver_config config;
            config.decoder_passes = passes;
            const std::vector<m110a_burst> bursts =
                receive_audio(audio, 9600, 4096, config);
            size_t e = 8 * data.size();
            if (bursts.size() == 1 && bursts[0].bytes.size() == data.size()) {
                e = 0;
                for (size_t b = 0; b < data.size(); ++b)
                    e += size_t(
                        __builtin_popcount(unsigned(bursts[0].bytes[b] ^ data[b])));
            }
            errors[passes - 1] += e;
        }
    }
    std::printf(
        "bit errors over 8 bursts: one pass %zu, two passes %zu\n", errors[0], errors[1]);
    EXPECT_LT(errors[1], errors[0]);
}

TEST(M110aReceiver, PassesBeyondTheSecondRunOnlyWhileTheDecisionsChange)
{
    // With up to four passes, a clean block stops after the second (the third would run
    // on the same decisions); blocks in fades take more. The output of a clean burst is
    // the same either way.
    const std::vector<uint8_t> data = random_bytes(3000, 62);
    auto run = [&](const std::vector<float>& audio, unsigned passes, uint64_t& later) {
        m110a_receiver_config config;
        config.decoder_passes = passes;
        return receive_audio(audio, 9600, 4096, config, nullptr, &later);
    };
    uint64_t two = 0, four = 0;
    const std::vector<float> clean = over_the_air("2400S", data, 9600, 30, 0, 1);
    const auto a = run(clean, 2, two);
    const auto b = run(clean, 4, four);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].bytes, data);
    EXPECT_EQ(b[0].bytes, data);
    EXPECT_GT(two, 0u);
    EXPECT_EQ(four, two);

    const std::vector<chan::watterson_path> poor = { { 1.0, 1.0, 0.0, 0.0 },
                                                     { 1.0, 1.0, 0.0, 0.002 } };
    uint64_t two_faded = 0, four_faded = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        const std::vector<float> audio =
            over_the_air("2400S", data, 9600, 15, 0, seed, 0, poor);
        uint64_t later = 0;
        run(audio, 2, later);
        two_faded += later;
        run(audio, 4, later);
        four_faded += later;
    }
    EXPECT_GT(four_faded, two_faded);
    EXPECT_LT(four_faded, 3 * two_faded); // not every block runs all four
}

TEST(M110aReceiver, LowRatesDecodeThrough5Ms5Hz)
{
    // Two equal paths 5 ms (12 symbols) apart fading at 5 Hz, 10 dB: the mode codes
    // must be read with the echo as strong as the path, 75 bps despread on both paths,
    // and the tracker follow fast fading with a residual offset.
    const std::vector<chan::watterson_path> paths = { { 1.0, 5.0, 0.0, 0.0 },
                                                      { 1.0, 5.0, 0.0, 0.005 } };
    for (const char* mode : { "75S", "300S" }) {
        const size_t bytes = size_t(m110a_waveform_by_name(mode)->user_bps * 10 / 8);
        const std::vector<uint8_t> data = random_bytes(bytes, 51);
        for (uint64_t seed : { 1, 2, 3, 4 }) {
            const std::vector<float> audio =
                over_the_air(mode, data, 9600, 10, 0, seed, 0, paths);
            const std::vector<m110a_burst> bursts = receive_audio(audio, 9600);
            ASSERT_EQ(bursts.size(), 1u) << mode << " seed " << seed;
            EXPECT_EQ(bursts[0].mode, mode) << "seed " << seed;
            EXPECT_EQ(bursts[0].bytes, data) << mode << " seed " << seed;
        }
    }
}

TEST(M110aReceiver, ASlowDeepFadeDoesNotEndTheBurst)
{
    // One Rayleigh path at 0.1 Hz: fades stay 13 dB down for longer than an
    // interleaver block while the probes still read well at 35 dB.
    const std::vector<uint8_t> data = random_bytes(3000, 41);
    const std::vector<chan::watterson_path> slow = { { 1.0, 0.1, 0.0, 0.0 } };
    size_t whole = 0;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        const std::vector<float> audio =
            over_the_air("2400S", data, 9600, 35, 0, seed, 0, slow);
        const std::vector<m110a_burst> bursts = receive_audio(audio, 9600);
        whole += bursts.size() == 1 && bursts[0].eom && bursts[0].bytes == data;
    }
    EXPECT_EQ(whole, 6u);
}

// A 2400S burst of `bytes` random bytes (seeded) as 9600 Hz audio, padded_audio().
std::vector<float> padded_2400s_audio(size_t bytes, uint32_t seed)
{
    const std::vector<uint8_t> data = random_bytes(bytes, seed);
    return padded_audio(m110a_transmit_symbols(
                            *m110a_waveform_by_name("2400S"), data.data(), data.size()),
                        9600);
}

TEST(M110aReceiver, AFadeAtTheEndOfALongBurstCountsByItsShareOfTheReport)
{
    // A 2400S burst of about 10 s at 20 dB whose last 1.5 s arrive 30 dB weaker. The
    // report is the burst's mean (phy/burst_snr.h): about a seventh of it at -10 dB
    // takes a few dB off (19.5 -> 16.5 dB). It used to be a look at the last 50 known
    // symbols, which read the fade alone (-6 dB), so one fade at the end of a long
    // burst set the report however well the rest had arrived.
    const double fs = 9600;
    const std::vector<float> clean = padded_2400s_audio(3000, 43);
    const std::vector<float> faded = with_faded_end(clean, fs, 1.5, -30);
    const std::vector<m110a_burst> steady =
        receive_audio(through_channel(clean, fs, 20, 0, 5), fs);
    const std::vector<m110a_burst> fading =
        receive_audio(through_channel(faded, fs, 20, 0, 5), fs);
    ASSERT_EQ(steady.size(), 1u);
    ASSERT_GE(fading.size(), 1u);
    EXPECT_NEAR(steady[0].snr_db, 20.0, 1.5);
    EXPECT_LT(fading[0].snr_db, steady[0].snr_db - 2.0) << steady[0].snr_db;
    EXPECT_GT(fading[0].snr_db, steady[0].snr_db - 8.0) << steady[0].snr_db;
}

TEST(M110aReceiver, TheRecentReportReadsTheLastTwentySecondsOfALongBurst)
{
    // A 2400S burst of about 30 s at 20 dB whose last 15 s arrive 10 dB weaker: the
    // whole burst reads about 15 dB, its last 20 s (5 s strong, 15 s weak) about
    // 12.5 dB (burst_snr::recent_window_s; the rate policy steps up on it).
    const double fs = 9600;
    const std::vector<float> audio = padded_2400s_audio(9000, 44);
    const double burst_s = double(audio.size()) / fs - 1.2;
    ASSERT_GT(burst_s, 29.0);
    const double weak_s = 15.0 + burst_s - 30.0; // the last 15 s of 30
    const std::vector<m110a_burst> got = receive_audio(
        through_channel(with_faded_end(audio, fs, weak_s, -10), fs, 20, 0, 5), fs);
    ASSERT_GE(got.size(), 1u);
    EXPECT_NEAR(got[0].snr_db, 15.0, 1.5);
    EXPECT_NEAR(got[0].snr_db_recent, 12.5, 1.5);
    EXPECT_LT(got[0].snr_db_recent, got[0].snr_db - 1.5)
        << got[0].snr_db << " " << got[0].snr_db_recent;
    EXPECT_TRUE(got[0].eom);
}

TEST(M110aReceiver, RefusesABadConfiguration)
{
    const auto refused = [](const char* name, auto change) {
        m110a_receiver_config c;
        change(c);
        expect_throws_naming([&] { m110a_receiver rx(c); }, name);
    };
    refused("forgetting", [](m110a_receiver_config& c) { c.forgetting = 1.5; });
    refused("decision_weight", [](m110a_receiver_config& c) { c.decision_weight = 0; });
    refused("solve_interval",
            [](m110a_receiver_config& c) { c.equaliser_solve_interval = 0; });
    refused("decoder_passes", [](m110a_receiver_config& c) { c.decoder_passes = 0; });
}

TEST(M110aReceiver, HowTheInputIsCutChangesNothing)
{
    // Two bursts back to back through noise at 7 dB (so decisions are marginal and any
    // difference would show), fed in pieces of 100, 977 and 4096 samples.
    std::vector<float> audio =
        over_the_air("2400S", random_bytes(900, 31), 8000, 7, 12.5, 9);
    const std::vector<float> second =
        over_the_air("600S", random_bytes(200, 32), 8000, 7, -20, 10);
    audio.insert(audio.end(), second.begin(), second.end());
    const std::vector<m110a_burst> reference = receive_audio(audio, 8000, 4096);
    ASSERT_EQ(reference.size(), 2u);
    for (size_t piece : { size_t(100), size_t(977) }) {
        const std::vector<m110a_burst> other = receive_audio(audio, 8000, piece);
        ASSERT_EQ(other.size(), reference.size()) << piece;
        for (size_t b = 0; b < other.size(); ++b) {
            EXPECT_EQ(other[b].bytes, reference[b].bytes) << piece << " burst " << b;
            EXPECT_EQ(other[b].start_sample, reference[b].start_sample) << piece;
            EXPECT_EQ(other[b].snr_db, reference[b].snr_db) << piece; // bit for bit
            EXPECT_EQ(other[b].frequency_offset_hz, reference[b].frequency_offset_hz)
                << piece;
        }
    }
}

TEST(M110aReceiver, TappedSymbolsAreTheDataSymbolsAndChangeNothing)
{
    const std::vector<float> audio =
        over_the_air("2400S", random_bytes(500, 41), 8000, 25, 5.0, 11);
    const std::vector<m110a_burst> plain = receive_audio(audio, 8000);
    std::vector<cf> symbols;
    const std::vector<m110a_burst> tapped =
        receive_audio(audio, 8000, 4096, {}, &symbols);
    ASSERT_EQ(plain.size(), 1u);
    ASSERT_EQ(tapped.size(), 1u);
    EXPECT_EQ(tapped[0].bytes, plain[0].bytes);
    EXPECT_EQ(tapped[0].snr_db, plain[0].snr_db); // bit for bit
    // 2400S: 960 data symbols an interleaver block, whole blocks up to the EOM's.
    ASSERT_GT(symbols.size(), 0u);
    EXPECT_EQ(symbols.size() % 960, 0u);
    // Descrambled 8PSK at 25 dB: each near one of the eight points, all eight seen.
    std::set<long> points;
    for (const cf& z : symbols) {
        const double eighths = std::arg(z) / (M_PI / 4);
        const long nearest = std::lround(eighths);
        ASSERT_LT(std::abs(eighths - nearest), 0.3);
        ASSERT_NEAR(std::abs(z), 1.0, 0.3);
        points.insert((nearest + 8) % 8);
    }
    EXPECT_EQ(points.size(), 8u);
}

TEST(M110aReceiver, AMisreadCountReportsNoEmptyBurst)
{
    // Four segments counting 5..2, then a whole long preamble (23..0) and its data: the
    // receiver takes the first count, starts "data" inside the real preamble, finds that
    // preamble there and decodes the burst; the start it abandoned is not a burst.
    const m110a_waveform& mode = *m110a_waveform_by_name("75L");
    const std::vector<uint8_t> data = random_bytes(20, 6);
    const std::vector<uint8_t> burst =
        m110a_transmit_symbols(mode, data.data(), data.size());
    std::vector<uint8_t> symbols;
    for (unsigned count = 5; count >= 2; --count) {
        const auto seg = m110a_preamble_segment(mode.d1, mode.d2, count);
        symbols.insert(symbols.end(), seg.begin(), seg.end());
    }
    symbols.insert(symbols.end(), burst.begin(), burst.end());
    psk_modulator_config mc;
    mc.sample_rate = 9600;
    mc.rms = 0.25;
    std::vector<float> audio = silence(0.5, 9600);
    const std::vector<float> a = psk_modulator(mc).audio(symbols);
    audio.insert(audio.end(), a.begin(), a.end());
    audio.resize(audio.size() + 9600);

    const std::vector<m110a_burst> bursts = receive_audio(audio, 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
}

TEST(M110aReceiver, AWeak75BpsBurstRunsToItsEom)
{
    // At -5 dB most Walsh symbols have no clear winner, yet the bits decode: counting
    // such symbols ended the burst at its third block, the one holding the EOM.
    const std::vector<uint8_t> data = random_bytes(93, 8);
    const std::vector<m110a_burst> bursts =
        receive_audio(over_the_air("75L", data, 9600, -5.0, 0, 2), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
}

TEST(M110aReceiver, AnEomWithBitErrorsEndsTheBurstOnceTheFlushFollows)
{
    // The bits on the air: data, the EOM with 4 bits wrong, 144 zeros, then the real
    // EOM and flush the transmitter adds. A decoder error event on the EOM looks like
    // this; the burst ends at the damaged word.
    const std::vector<uint8_t> data = random_bytes(30, 9);
    std::vector<uint8_t> payload = data;
    const uint32_t damaged = m110a_eom ^ 0x10810004u;
    for (int byte = 3; byte >= 0; --byte) {
        // Sent LSB first, while the EOM word goes MSB first.
        uint8_t b = 0;
        for (int j = 0; j < 8; ++j)
            b |= uint8_t(((damaged >> (8 * byte + 7 - j)) & 1) << j);
        payload.push_back(b);
    }
    payload.resize(payload.size() + m110a_flush_bits / 8, 0);
    const std::vector<m110a_burst> bursts =
        receive_audio(over_the_air("600S", payload, 9600, 30, 0, 4), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
}

TEST(M110aReceiver, NoiseAloneStartsNothing)
{
    // Two minutes of noise at the level of a 0 dB signal.
    m110a_receiver rx;
    EXPECT_TRUE((bursts_from_noise<m110a_receiver, m110a_burst>(rx, 120).empty()));
    EXPECT_FALSE(rx.carrier_detected());
}

TEST(M110aReceiver, CorruptModeCodesAndCutBurstsDoNotWedgeIt)
{
    const double fs = 9600;
    psk_modulator_config mc;
    mc.sample_rate = fs;
    mc.rms = 0.25;
    psk_modulator mod(mc);
    std::vector<float> audio = silence(0.5, fs);
    // 1. A preamble announcing the reserved code D1/D2 = 5/6, then noise-free silence.
    std::vector<uint8_t> fake;
    for (unsigned count = 3; count-- > 0;) {
        const auto seg = m110a_preamble_segment(5, 6, count);
        fake.insert(fake.end(), seg.begin(), seg.end());
    }
    const std::vector<float> a = mod.audio(fake);
    audio.insert(audio.end(), a.begin(), a.end());
    audio.resize(audio.size() + size_t(fs));
    // 2. A 1200S burst cut 1 s into its data.
    const std::vector<uint8_t> long_data = random_bytes(600, 4);
    std::vector<uint8_t> cut = m110a_transmit_symbols(
        *m110a_waveform_by_name("1200S"), long_data.data(), long_data.size());
    cut.resize(1440 + 2400);
    const std::vector<float> b = mod.audio(cut);
    audio.insert(audio.end(), b.begin(), b.end());
    audio.resize(audio.size() + size_t(2 * fs));
    // 3. A good 600S burst.
    const std::vector<uint8_t> good = random_bytes(40, 5);
    const std::vector<float> c = mod.audio(m110a_transmit_symbols(
        *m110a_waveform_by_name("600S"), good.data(), good.size()));
    audio.insert(audio.end(), c.begin(), c.end());
    audio.resize(audio.size() + size_t(fs));
    // A little noise so nothing is exactly zero.
    chan::watterson_config cc;
    cc.sample_rate_hz = fs;
    cc.real_signal = true;
    cc.signal_power = 0.0625;
    cc.snr_db = 30;
    chan::watterson_channel channel(cc);
    std::vector<float> noisy;
    channel.process(audio.data(), audio.size(), noisy);

    const std::vector<m110a_burst> bursts = receive_audio(noisy, fs);
    ASSERT_EQ(bursts.size(), 2u);
    EXPECT_EQ(bursts[0].mode, "1200S");
    EXPECT_FALSE(bursts[0].eom);
    // What was received before the cut is right.
    ASSERT_GE(bursts[0].bytes.size(), 60u);
    EXPECT_TRUE(std::equal(
        bursts[0].bytes.begin(), bursts[0].bytes.begin() + 60, long_data.begin()));
    EXPECT_EQ(bursts[1].mode, "600S");
    EXPECT_TRUE(bursts[1].eom);
    EXPECT_EQ(bursts[1].bytes, good);
}

TEST(M110aReceiver, AStreamingReceiverHandsOnEachBlocksBytesBeforeTheEnd)
{
    // 2400S: 180 user bytes per 0.6 s block. 900 bytes (five blocks and the EOM's) then a
    // 600S burst: the pieces of each burst join to exactly the bytes the whole burst
    // has, the first pieces come while the burst is still on the air, and only the
    // last entry of a burst says whether its EOM was found.
    const auto first_bytes = random_bytes(900, 41), second_bytes = random_bytes(200, 42);
    std::vector<float> audio = over_the_air("2400S", first_bytes, 8000, 20, 12.5, 3);
    const std::vector<float> second =
        over_the_air("600S", second_bytes, 8000, 20, -20, 4);
    audio.insert(audio.end(), second.begin(), second.end());
    m110a_receiver_config streaming;
    streaming.deliver_per_block = true;
    const std::vector<m110a_burst> whole = receive_audio(audio, 8000);
    ASSERT_EQ(whole.size(), 2u);
    const std::vector<m110a_burst> pieces = receive_audio(audio, 8000, 977, streaming);
    std::vector<std::vector<uint8_t>> joined(1);
    std::vector<size_t> pieces_per_burst(1, 0);
    for (const m110a_burst& p : pieces) {
        joined.back().insert(joined.back().end(), p.bytes.begin(), p.bytes.end());
        ++pieces_per_burst.back();
        if (!p.continues) {
            EXPECT_TRUE(p.eom);
            joined.emplace_back();
            pieces_per_burst.push_back(0);
        } else {
            EXPECT_FALSE(p.bytes.empty());
        }
    }
    ASSERT_EQ(joined.size(), 3u); // two bursts, then nothing
    EXPECT_EQ(joined[0], first_bytes);
    EXPECT_EQ(joined[1], second_bytes);
    EXPECT_EQ(joined[0], whole[0].bytes);
    EXPECT_GE(pieces_per_burst[0], 5u); // the 2400S burst came in at least five pieces
    EXPECT_GE(pieces_per_burst[1], 2u);
    // The first 2400S piece: at most the first block's bytes (the EOM search lags).
    EXPECT_LE(pieces[0].bytes.size(), 180u);
    EXPECT_GT(pieces[0].bytes.size(), 100u);
}

// 75 bps: the coherent Walsh metric on the tracked channel mixed into the despread powers
// (walsh_metric 2, the default) decides weak symbols on a steady channel better than the
// powers alone (0). About 8 minutes of 75S at -4 dB, as four bursts.
TEST(M110aReceiver, CoherentWalshMetricHelpsOnASteadyChannel)
{
    size_t errors[3] = { 0, 0, 0 };
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        const std::vector<uint8_t> data = random_bytes(1100, seed);
        const std::vector<float> audio = over_the_air("75S", data, 9600, -4.0, 0, seed);
        for (unsigned metric : { 0u, 2u }) {
            m110a_receiver_config c;
            c.walsh_metric = metric;
            const auto bursts = receive_audio(audio, 9600, 4096, c);
            ASSERT_EQ(bursts.size(), 1u) << seed << " " << metric;
            ASSERT_EQ(bursts[0].bytes.size(), data.size());
            for (size_t i = 0; i < data.size(); ++i)
                errors[metric] +=
                    size_t(__builtin_popcount(bursts[0].bytes[i] ^ data[i]));
        }
    }
    EXPECT_GT(errors[0], 0u);
    EXPECT_LT(errors[2] * 3, errors[0] * 2) << errors[0] << " " << errors[2];
    EXPECT_EQ(m110a_receiver_config().walsh_metric, 2u);
}
