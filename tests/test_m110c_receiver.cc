/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The App C receiver: our transmissions in every rate and interleaver decode through
// noise and a carrier offset; noise alone starts nothing; reserved codes and a cut
// burst neither crash it nor wedge it; a new preamble cuts a burst; a late start, the
// second pass and the channel interpolated between probes.
#include "chan/watterson_channel.h"
#include "phy/m110c_receiver.h"
#include "phy/m110c_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

// Audio in, bursts out (receive_serial_tone_audio).
std::vector<m110c_burst> receive_audio(std::vector<float> audio,
                                       double fs,
                                       const m110c_receiver_config& config = {})
{
    return receive_serial_tone_audio<m110c_receiver, m110c_burst>(
        std::move(audio), fs, config);
}

// Points as audio at fs between silences, through AWGN at snr_db (3 kHz) with a
// carrier offset, or through fading `paths`.
std::vector<float> over_the_air(const std::vector<std::complex<float>>& points,
                                double fs,
                                double snr_db,
                                double offset_hz,
                                uint64_t seed,
                                const std::vector<chan::watterson_path>& paths = {})
{
    return through_channel(
        padded_audio(points, fs), fs, snr_db, offset_hz, seed, 0, paths);
}

// Bytes of `sent` that `got` has wrong or missing.
size_t wrong_bytes(const std::vector<uint8_t>& sent, const std::vector<uint8_t>& got)
{
    size_t wrong = 0;
    for (size_t b = 0; b < sent.size(); ++b)
        wrong += b >= got.size() || got[b] != sent[b];
    return wrong;
}

// Audio of `data` sent in `mode` through F.1487 poor (two 1 Hz Rayleigh paths 2 ms
// apart) at snr_db over the transmission's mean power (over_the_air's is over
// unit-amplitude symbols', which QAM's mean power is under). Sent with the tail-biting
// phase the fading figures of these tests were measured with (the receiver finds it):
// another phase sends other symbols, and marginal cases move.
std::vector<float> through_poor(const m110c_mode& mode,
                                const std::vector<uint8_t>& data,
                                double snr_db,
                                uint64_t seed)
{
    const std::vector<chan::watterson_path> poor = { { 0.5, 1.0, 0.0, 0.0 },
                                                     { 0.5, 1.0, 0.0, 2e-3 } };
    m110c_readings measured_with;
    measured_with.tail_biting = m110c_tail_biting::from_full_register;
    return over_the_air(
        m110c_transmit_points(mode, data.data(), data.size(), false, measured_with),
        9600,
        snr_db - 10 * std::log10(m110c_frame_power(mode)),
        0,
        seed,
        poor);
}

// Bytes of `data` wrong or missing in the one burst a receiver with `config` makes of
// `audio` (all of them, and a failure, unless it makes exactly one).
size_t wrong_bytes_received(const std::vector<float>& audio,
                            const m110c_receiver_config& config,
                            const std::vector<uint8_t>& data)
{
    const std::vector<m110c_burst> bursts = receive_audio(audio, 9600, config);
    EXPECT_EQ(bursts.size(), 1u);
    return bursts.size() == 1 ? wrong_bytes(data, bursts[0].bytes) : data.size();
}

// Exactly one burst, of `mode`, ended by its EOM, carrying `data`.
void expect_one_whole_burst(const std::vector<m110c_burst>& bursts,
                            const std::string& mode,
                            const std::vector<uint8_t>& data)
{
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, mode);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
}

// Wrong bytes received with a receiver setting off, then on.
std::array<size_t, 2> wrong_bytes_without_and_with(bool m110c_receiver_config::*setting,
                                                   const std::vector<float>& audio,
                                                   const std::vector<uint8_t>& data)
{
    std::array<size_t, 2> wrong{};
    for (bool on : { false, true }) {
        m110c_receiver_config c;
        c.*setting = on;
        wrong[on] = wrong_bytes_received(audio, c, data);
    }
    return wrong;
}

// A setting's gain through F.1487 poor: `bytes` random bytes (seed data_seed) sent in
// `mode` at snr_db, channel seed `seed`: with the setting off more than `at_least`
// bytes wrong, with it on `factor` times fewer.
void expect_setting_repairs(bool m110c_receiver_config::*setting,
                            const m110c_mode& mode,
                            size_t bytes,
                            uint32_t data_seed,
                            double snr_db,
                            uint64_t seed,
                            size_t at_least,
                            size_t factor)
{
    const std::vector<uint8_t> data = random_bytes(bytes, data_seed);
    const std::array<size_t, 2> wrong = wrong_bytes_without_and_with(
        setting, through_poor(mode, data, snr_db, seed), data);
    EXPECT_GT(wrong[0], at_least);
    EXPECT_LT(factor * wrong[1], wrong[0]);
}

// A 9600S burst cut after its first interleaver block (9 frames): reported without its
// EOM, that block's bytes right.
void expect_cut_after_first_block(const m110c_burst& burst,
                                  const std::vector<uint8_t>& sent)
{
    EXPECT_EQ(burst.mode, "9600S");
    EXPECT_FALSE(burst.eom);
    const size_t first_block_bytes = 9 * 256 * 6 * 3 / 4 / 8;
    ASSERT_GE(burst.bytes.size(), first_block_bytes);
    EXPECT_TRUE(std::equal(burst.bytes.begin(),
                           burst.bytes.begin() + long(first_block_bytes),
                           sent.begin()));
}

} // namespace

class M110cRoundTrip : public ::testing::TestWithParam<const char*>
{
};

TEST_P(M110cRoundTrip, DecodesOurBurstThroughNoiseAndOffset)
{
    const std::string name = GetParam();
    const unsigned bps = unsigned(std::stoul(name));
    const std::string letters = name.substr(name.find_first_not_of("0123456789"));
    const char* names[] = { "US", "VS", "S", "M", "L", "VL" };
    m110c_interleaver interleaver = m110c_interleaver::short_;
    for (unsigned i = 0; i < 6; ++i)
        if (letters == names[i])
            interleaver = m110c_interleaver(i);
    const m110c_mode mode = *m110c_mode_for(bps, interleaver);
    ASSERT_EQ(mode.name(), name);
    const std::vector<uint8_t> data = random_bytes(bps / 8 + 100, 7);
    const auto points = m110c_transmit_points(mode, data.data(), data.size());
    const std::vector<m110c_burst> bursts =
        receive_audio(over_the_air(points, 9600, 35, 20.0, 2), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, name);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
    EXPECT_NEAR(bursts[0].frequency_offset_hz, 20.0, 1.0);
    EXPECT_GT(bursts[0].snr_db, 25.0);
}

INSTANTIATE_TEST_SUITE_P(EveryMode,
                         M110cRoundTrip,
                         ::testing::Values("3200US",
                                           "3200VS",
                                           "3200S",
                                           "3200M",
                                           "3200L",
                                           "3200VL",
                                           "4800US",
                                           "4800VS",
                                           "4800S",
                                           "4800M",
                                           "4800L",
                                           "4800VL",
                                           "6400US",
                                           "6400VS",
                                           "6400S",
                                           "6400M",
                                           "6400L",
                                           "6400VL",
                                           "8000US",
                                           "8000VS",
                                           "8000S",
                                           "8000M",
                                           "8000L",
                                           "8000VL",
                                           "9600US",
                                           "9600VS",
                                           "9600S",
                                           "9600M",
                                           "9600L",
                                           "9600VL",
                                           "12800U"));

// A mode by name; "12800US": 12800 bps announcing the ultra-short interleaver code.
m110c_mode mode_named(const std::string& name)
{
    if (name == "12800US")
        return *m110c_mode_for(12800, m110c_interleaver::ultra_short);
    return *m110c_mode_by_name(name);
}

class M110cFarEnd : public ::testing::TestWithParam<const char*>
{
};

TEST_P(M110cFarEnd, DecodesABurstSynthesisedFromTheTablePoints)
{
    // The far end sends the QAM tables as printed, outer points at the probes' amplitude
    // (docs/modem-design.md, "QAM amplitude, SNR reference and bytes_bad"): decisions,
    // LLRs and the SNR report on that scale. With data expected at unit mean power, 9600
    // bps lost a third to a half of its symbols, and 6400/8000 bps reported about 20 and
    // 15 dB on clean bursts.
    const m110c_mode mode = mode_named(GetParam());
    const std::vector<uint8_t> data = random_bytes(mode.user_bps / 8 + 100, 24);
    const std::vector<m110c_burst> bursts = receive_audio(
        over_the_air(m110c_table_points(mode, data), 9600, 35, 20.0, 2), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, mode.name());
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(wrong_bytes(data, bursts[0].bytes), 0u);
    EXPECT_FALSE(bursts[0].bytes_bad);
    // The channel's SNR is 35 dB over the level of unit-amplitude symbols; the signal's
    // own mean power is the frames' (under 1 for QAM), and the report is on it. At this
    // SNR the report on the probes reads 2-4 dB low (the equaliser's own residual).
    const double snr = 35.0 + 10 * std::log10(m110c_frame_power(mode));
    EXPECT_GT(bursts[0].snr_db, snr - 4.5);
    EXPECT_LT(bursts[0].snr_db, snr + 1.0);
}

INSTANTIATE_TEST_SUITE_P(Qam,
                         M110cFarEnd,
                         ::testing::Values("9600US",
                                           "9600VS",
                                           "9600S",
                                           "9600M",
                                           "9600L",
                                           "9600VL",
                                           "12800U",
                                           "12800US",
                                           "6400S",
                                           "8000S",
                                           "3200S",
                                           "4800S"));

TEST(M110cReceiver, AFadeAtTheEndOfALongBurstCountsByItsShareOfTheReport)
{
    // An 8000S burst of about 10 s at 30 dB whose last 1.5 s arrive 30 dB weaker: the
    // report is the burst's mean (phy/burst_snr.h), a few dB under the steady burst's
    // (28.5 -> 22 dB), not the fade alone, which the look at the last known symbols
    // used to read (-4.6 dB).
    const m110c_mode mode = *m110c_mode_by_name("8000S");
    const std::vector<uint8_t> data = random_bytes(10000, 44);
    const std::vector<float> clean =
        padded_audio(m110c_transmit_points(mode, data.data(), data.size()), 9600);
    const std::vector<float> faded = with_faded_end(clean, 9600, 1.5, -30, 5);
    const double snr =
        30.0 - 10 * std::log10(m110c_frame_power(mode)); // over the mean power
    const std::vector<m110c_burst> steady =
        receive_audio(through_channel(clean, 9600, snr, 0, 5), 9600);
    const std::vector<m110c_burst> fading =
        receive_audio(through_channel(faded, 9600, snr, 0, 5), 9600);
    ASSERT_EQ(steady.size(), 1u);
    ASSERT_GE(fading.size(), 1u);
    EXPECT_NEAR(steady[0].snr_db, 30.0, 4.5);
    EXPECT_LT(fading[0].snr_db, steady[0].snr_db - 2.0) << steady[0].snr_db;
    EXPECT_GT(fading[0].snr_db, steady[0].snr_db - 9.0) << steady[0].snr_db;
}

TEST(M110cReceiver, ACutTransmissionEndsFewBlocksAfterItsSignal)
{
    // A 3200S transmission whose signal stops after 10 s (no EOM), then noise alone, at
    // 12 dB: the noise is 12 dB under the preamble, too little for the power test, so
    // the probes decide. Their estimates, from a channel fitted to each probe itself,
    // correlated with the known symbols on noise too, and the receiver read noise for
    // 18.2 / 27.9 / 16.0 / 3.0 s (channel seeds 1-4) before ending the burst; scored
    // against the channel measured before each probe, it ends 3 blocks on (4.1 s).
    const m110c_mode mode = *m110c_mode_by_name("3200S");
    const std::vector<uint8_t> data = random_bytes(20000, 46);
    const std::vector<std::complex<float>> points =
        m110c_transmit_points(mode, data.data(), data.size());
    expect_cut_transmission_ends_within<m110c_receiver, m110c_burst>(
        points, 10, 5.0, m110c_receiver_config{});
    // The blocks before the cut decode whole.
    double signal_end_s = 0;
    const std::vector<m110c_burst> bursts =
        receive_audio(cut_transmission_audio(points, 10, 30, 12, 1, signal_end_s), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_FALSE(bursts[0].eom);
    const size_t eight_blocks = 8 * 9 * 256 * 2 * 3 / 4 / 8;
    ASSERT_GE(bursts[0].bytes.size(), eight_blocks);
    EXPECT_TRUE(std::equal(
        data.begin(), data.begin() + long(eight_blocks), bursts[0].bytes.begin()));
}

TEST(M110cReceiver, BytesDecodedWrongAreFlaggedThoughTheEomWasFound)
{
    // 9600S through F.1487 poor at 24 dB: with channel seeds 5 and 9 blocks decode wrong
    // (measured: 28 and 111 wrong bytes) while the EOM decodes. A tail-biting block has
    // no check, so bytes_bad was only "cut before the EOM" and both were reported good;
    // each block is now judged by its expected wrong bits (measured: 850 and 330 in the
    // worst block). Seeds 14 and 7 (no error; 0.12 and 5e-7 expected) and a clean burst
    // stay unflagged. (With the last decoder-aided pass equalising suspect frames
    // backward, commit d008cd4, seeds 5 and 9 give 32 and 76 wrong bytes, and seed 4,
    // this test's marginal clean case before, 1 wrong byte, flagged.)
    const m110c_mode mode = *m110c_mode_by_name("9600S");
    const std::vector<uint8_t> data = random_bytes(1500, 25);
    const std::vector<std::vector<float>> audio = {
        through_poor(mode, data, 24.0, 5),
        through_poor(mode, data, 24.0, 9),
        through_poor(mode, data, 24.0, 14),
        through_poor(mode, data, 24.0, 7),
        over_the_air(m110c_table_points(mode, data), 9600, 30, 0.0, 3)
    };
    for (size_t a = 0; a < audio.size(); ++a) {
        const std::vector<m110c_burst> bursts = receive_audio(audio[a], 9600);
        ASSERT_EQ(bursts.size(), 1u) << a;
        EXPECT_TRUE(bursts[0].eom) << a;
        const size_t wrong = wrong_bytes(data, bursts[0].bytes);
        EXPECT_EQ(wrong > 0, a < 2) << a;
        EXPECT_EQ(bursts[0].bytes_bad, wrong > 0) << a;
        EXPECT_EQ(bursts[0].unreliable_blocks > 0, wrong > 0) << a;
    }
}

TEST(M110cReceiver, NoiseAloneStartsNothing)
{
    // Two minutes of noise at the level of a 0 dB signal.
    m110c_receiver rx;
    EXPECT_TRUE((bursts_from_noise<m110c_receiver, m110c_burst>(rx, 120).empty()));
    EXPECT_FALSE(rx.carrier_detected());
}

TEST(M110cReceiver, ReservedCodesAndACutBurstDoNotWedgeIt)
{
    const auto& psk8 = m110c_constellation(3);
    // 1. A preamble whose D0..D2 carry the reserved rate code 111 (the sync, MP+ and
    //    "2" of any mode, then rate bits 1 1 1 with interleaver bits 0 0 1).
    std::vector<std::complex<float>> points;
    const std::vector<uint8_t> any =
        m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::ultra_short));
    for (size_t k = 0; k < 216; ++k)
        points.push_back(psk8[any[k]]);
    static const unsigned quadrant_of_dibit[4] = { 0, 1, 3, 2 };
    for (unsigned dibit : { 2u, 2u, 3u })
        for (uint8_t chip : m110c_barker13)
            points.push_back(psk8[(chip + 2 * quadrant_of_dibit[dibit]) % 8]);
    for (size_t k = 255; k < any.size(); ++k)
        points.push_back(psk8[any[k]]);
    points.resize(points.size() + 2400, 0.0f);
    // 2. A 9600S burst cut half way through its second block.
    const m110c_mode cut_mode = *m110c_mode_for(9600, m110c_interleaver::short_);
    const std::vector<uint8_t> long_data = random_bytes(6000, 4);
    auto cut = m110c_transmit_points(cut_mode, long_data.data(), long_data.size());
    cut.resize(m110c_preamble_symbols + 13 * m110c_frame_symbols);
    points.insert(points.end(), cut.begin(), cut.end());
    points.resize(points.size() + 2 * 2400, 0.0f);
    // 3. A good 4800M burst.
    const m110c_mode good_mode = *m110c_mode_for(4800, m110c_interleaver::medium);
    const std::vector<uint8_t> good = random_bytes(500, 5);
    const auto g = m110c_transmit_points(good_mode, good.data(), good.size());
    points.insert(points.end(), g.begin(), g.end());

    const std::vector<m110c_burst> bursts =
        receive_audio(over_the_air(points, 9600, 30, 0, 3), 9600);
    ASSERT_EQ(bursts.size(), 2u);
    expect_cut_after_first_block(bursts[0], long_data);
    EXPECT_EQ(bursts[1].mode, "4800M");
    EXPECT_TRUE(bursts[1].eom);
    EXPECT_EQ(bursts[1].bytes, good);
}

TEST(M110cReceiver, RefusesABadConfiguration)
{
    m110c_receiver_config c;
    c.forgetting = 0;
    EXPECT_THROW(m110c_receiver{ c }, std::invalid_argument);
    c = {};
    c.equaliser_solve_interval = 0;
    EXPECT_THROW(m110c_receiver{ c }, std::invalid_argument);
    c = {};
    c.qam64_solve_interval = 0;
    EXPECT_THROW(m110c_receiver{ c }, std::invalid_argument);
    c = {};
    c.qam64_decoder_passes = 0;
    EXPECT_THROW(m110c_receiver{ c }, std::invalid_argument);
}

TEST(M110cReceiver, AReceiverStartedLateDecodesFromAReinsertedSection)
{
    // A 3200S transmission of 100 frames heard from frame 30 on: the receiver finds the
    // section re-inserted after frame 71 and decodes the blocks after it (frames 72 on,
    // bytes 3456 on); then a whole burst still decodes normally.
    const m110c_mode mode = *m110c_mode_for(3200, m110c_interleaver::short_);
    const std::vector<uint8_t> data = random_bytes(4700, 10);
    const auto points = m110c_transmit_points(mode, data.data(), data.size());
    const size_t late = m110c_preamble_symbols + 30 * m110c_frame_symbols;
    std::vector<std::complex<float>> heard(points.begin() + long(late), points.end());
    heard.resize(heard.size() + 2400, 0.0f);
    const std::vector<uint8_t> second = random_bytes(300, 11);
    const auto whole =
        m110c_transmit_points(*m110c_mode_for(6400, m110c_interleaver::very_short),
                              second.data(),
                              second.size());
    heard.insert(heard.end(), whole.begin(), whole.end());
    const std::vector<m110c_burst> bursts =
        receive_audio(over_the_air(heard, 9600, 30, 15.0, 4), 9600);
    ASSERT_EQ(bursts.size(), 2u);
    EXPECT_EQ(bursts[0].mode, "3200S");
    EXPECT_TRUE(bursts[0].eom);
    const size_t from = 72 * 256 * 2 * 3 / 4 / 8;
    EXPECT_EQ(bursts[0].bytes,
              std::vector<uint8_t>(data.begin() + long(from), data.end()));
    EXPECT_NEAR(bursts[0].frequency_offset_hz, 15.0, 1.0);
    EXPECT_EQ(bursts[1].mode, "6400VS");
    EXPECT_EQ(bursts[1].bytes, second);
}

TEST(M110cReceiver, TheSecondPassRepairsFades)
{
    // 3200L through F.1487 poor (two 1 Hz Rayleigh paths 2 ms apart) at 10 dB: between
    // mini-probes the tracker runs on its own decisions, which a fade spoils; equalising
    // each block again with the decoder's decisions leaves fewer wrong bytes (measured:
    // 319 and 27).
    const m110c_mode mode = *m110c_mode_for(3200, m110c_interleaver::long_);
    const std::vector<uint8_t> data = random_bytes(8000, 12);
    const std::vector<float> audio = through_poor(mode, data, 10.0, 2);
    size_t wrong[2];
    for (unsigned passes : { 1u, 2u }) {
        m110c_receiver_config c;
        c.decoder_passes = passes;
        wrong[passes - 1] = wrong_bytes_received(audio, c, data);
    }
    EXPECT_GT(wrong[0], 0u);
    EXPECT_LT(wrong[1], wrong[0]);
}

TEST(M110cReceiver, ProbeInterpolationFollowsFadingThatDecisionsLose)
{
    // 6400M (16QAM) through F.1487 poor at 20 dB: the channel under each frame taken
    // from the mini-probes around it, rather than tracked on the decisions, leaves
    // ten times fewer wrong bytes (measured: 344 and none, channel seed 3; before issue
    // 19, with the data at unit mean power, 1016 and none at 22 dB, seed 5).
    expect_setting_repairs(&m110c_receiver_config::interpolate_probes,
                           *m110c_mode_for(6400, m110c_interleaver::medium),
                           4000,
                           13,
                           20.0,
                           3,
                           100,
                           10);
}

TEST(M110cReceiver, ANewPreambleCutsABurstInProgress)
{
    // A 9600S burst cut after 13 frames by the preamble of a 3200S burst, with no gap:
    // the first is reported cut (its first block right), the second decodes whole.
    const m110c_mode cut_mode = *m110c_mode_for(9600, m110c_interleaver::short_);
    const std::vector<uint8_t> long_data = random_bytes(6000, 14);
    auto points = m110c_transmit_points(cut_mode, long_data.data(), long_data.size());
    points.resize(m110c_preamble_symbols + 13 * m110c_frame_symbols + 100);
    const std::vector<uint8_t> next = random_bytes(700, 15);
    const auto second = m110c_transmit_points(
        *m110c_mode_for(3200, m110c_interleaver::short_), next.data(), next.size());
    points.insert(points.end(), second.begin(), second.end());
    const std::vector<m110c_burst> bursts =
        receive_audio(over_the_air(points, 9600, 30, 5.0, 6), 9600);
    ASSERT_EQ(bursts.size(), 2u);
    expect_cut_after_first_block(bursts[0], long_data);
    EXPECT_EQ(bursts[1].mode, "3200S");
    EXPECT_TRUE(bursts[1].eom);
    EXPECT_EQ(bursts[1].bytes, next);
}

TEST(M110cReceiver, FramesEqualisedBackwardRecoverWhatForwardDecisionsLose)
{
    // 9600M (64QAM) through F.1487 poor at 27 dB: a decision error in a fade feeds back
    // through the rest of its frame; equalised again from the probe after the frame,
    // each 32 symbols taken from the direction that erred less (docs/modem-design.md,
    // "The channel between the mini-probes").
    expect_setting_repairs(&m110c_receiver_config::backward_frames,
                           *m110c_mode_for(9600, m110c_interleaver::medium),
                           12000,
                           16,
                           27.0,
                           1,
                           1000,
                           20);
}

TEST(M110cReceiver, TheEqualiserWeighsQamDataAtTheirOwnPower)
{
    // 9600M (64QAM, data at 0.58 of the probes' power) through F.1487 poor at 28 dB: an
    // MMSE solution that takes the data as unit-energy symbols under-weighs the noise by
    // 2.4 dB, which in a fade enhances it (measured, channel seed 5: 1458 wrong bytes,
    // and none when the equaliser weighs the data at their power. Seed 6, this test's
    // case until the probe measurements stayed on the paths, decodes either way now).
    expect_setting_repairs(&m110c_receiver_config::weigh_data_power,
                           *m110c_mode_for(9600, m110c_interleaver::medium),
                           12000,
                           26,
                           28.0,
                           5,
                           100,
                           20);
}

TEST(M110cReceiver, ATapTrackedFarFromThePathsLeavesTheProbeMeasurementsOnThem)
{
    // 9600M through F.1487 poor at 28 dB, channel seed 14: as the channel rises out of a
    // fade, a noise tap of the lagging whole-span estimate is tracked 10 symbols before
    // the paths. The probes' 16-tap measurement, centred on the tracked taps, then left
    // the later path's tail, and each anchor was solved for 21 tracked taps from 11
    // observations per phase (measured: 1701 wrong bytes; 1701 with the measurement
    // centred on the paths alone, 14 with the anchor on the tracked taps within the 16
    // alone, none with both).
    const m110c_mode mode = *m110c_mode_for(9600, m110c_interleaver::medium);
    const std::vector<uint8_t> data = random_bytes(12000, 26);
    EXPECT_EQ(wrong_bytes_received(
                  through_poor(mode, data, 28.0, 14), m110c_receiver_config{}, data),
              0u);
}

TEST(M110cReceiver, APathEarlierThanThoseTrackedIsMeasuredWhereItIs)
{
    // 9600M over two paths 2.08 ms apart, the earlier one absent for the first 1.5 s and
    // then rising to the other's strength. A probe determines 16 taps: measured from the
    // first tracked one on, the new earlier path showed as its alias 16 symbols later, a
    // phantom path the anchors then shared its power with (measured: no burst reported,
    // its EOM never found; with the measurement centred on the paths, every byte right).
    const m110c_mode mode = *m110c_mode_for(9600, m110c_interleaver::medium);
    const std::vector<uint8_t> data = random_bytes(6000, 17);
    const std::vector<float> sent =
        padded_audio(m110c_transmit_points(mode, data.data(), data.size()), 9600);
    constexpr size_t delay = 20; // samples at 9600 Hz
    std::vector<float> audio(sent.size(), 0.0f);
    for (size_t n = delay; n < sent.size(); ++n) {
        const double t = double(n) / 9600.0;
        const double early = std::clamp((t - 1.5) / 0.5, 0.0, 1.0);
        audio[n] =
            float((early * sent[n] + sent[n - delay]) / std::sqrt(1.0 + early * early));
    }
    m110c_receiver_config c;
    EXPECT_EQ(wrong_bytes_received(through_channel(audio, 9600, 30.0, 0.0, 18), c, data),
              0u);
}

TEST(M110cReceiver, AMisreadInterleaverCodeIsCorrectedByTheProbeSigns)
{
    // A 3200L burst whose preamble says 3200M (as a preamble read in a fade did, F.1487
    // poor, 3200L at 13 dB, channel seed 3): the mini-probes' signs carry the rate and
    // interleaver codes again; the receiver finds 3200L there and decodes the burst as
    // such from its start (without the check: decoded as 3200M, no EOM found, no burst
    // reported by the end of the audio).
    const m110c_mode sent_mode = *m110c_mode_for(3200, m110c_interleaver::long_);
    const m110c_mode said_mode = *m110c_mode_for(3200, m110c_interleaver::medium);
    const std::vector<uint8_t> data = random_bytes(3000, 19);
    std::vector<std::complex<float>> points =
        m110c_transmit_points(sent_mode, data.data(), data.size());
    const std::vector<uint8_t> said = m110c_preamble(said_mode);
    for (size_t i = 0; i < said.size(); ++i)
        points[i] = m110c_constellation(3)[said[i]];
    expect_one_whole_burst(
        receive_audio(over_the_air(points, 9600, 25, 10.0, 20), 9600), "3200L", data);
}

TEST(M110cReceiver, ABurstWhosePreambleWasMissedIsDecodedFromItsStart)
{
    // A 3200S transmission of 84 frames whose preamble comes 34 dB down (a deep fade),
    // too weak to be detected: the receiver finds the section re-inserted after frame
    // 71, finds the 72 mini-probes where that transmission's frames put them, and
    // decodes it from its first frame (without: the blocks after the section only).
    const m110c_mode mode = *m110c_mode_for(3200, m110c_interleaver::short_);
    const std::vector<uint8_t> data = random_bytes(4000, 21);
    std::vector<std::complex<float>> points =
        m110c_transmit_points(mode, data.data(), data.size());
    for (unsigned i = 0; i < m110c_preamble_symbols; ++i)
        points[i] *= 0.02f;
    expect_one_whole_burst(
        receive_audio(over_the_air(points, 9600, 25, 10.0, 23), 9600), "3200S", data);
}

TEST(M110cReceiver, TheLastDecoderAidedPassEqualisesSuspectFramesBackwardToo)
{
    // bench_s4539_modem's case (--profile poor --modes 8000L --snr 26 --seed 3), its
    // first two 10 s bursts: complex baseband through F.1487 poor at 26 dB over the
    // transmission's mean power, channel seed 3, data from mt19937(3). The second
    // burst's last block decoded right in the second pass; the third pass, forward only
    // with that decode (frames the first pass took from its backward equaliser came out
    // worse), decoded 19 user bits wrong (measured: 5 wrong bytes in the second burst;
    // none with suspect frames equalised backward in the last pass too).
    const m110c_mode mode = *m110c_mode_for(8000, m110c_interleaver::long_);
    const double fs = 9600;
    psk_modulator_config mc;
    mc.sample_rate = fs;
    const psk_modulator modulator(mc);
    const size_t burst_bytes = mode.user_bps * 10 / 8;
    const auto random_data = [&](std::mt19937& rng) {
        std::vector<uint8_t> data(burst_bytes);
        for (auto& b : data)
            b = uint8_t(rng());
        return data;
    };
    // The SNR's reference: a burst's mean power (as the bench measures it).
    std::mt19937 level_rng{ 12345 };
    const std::vector<uint8_t> level_data = random_data(level_rng);
    const std::vector<cf> level = modulator.baseband(
        m110c_transmit_points(mode, level_data.data(), level_data.size()));
    double mean = 0;
    for (const cf& v : level)
        mean += std::norm(v);
    chan::watterson_config cc = chan::watterson_preset("poor", fs, 26.0, 3);
    cc.signal_power = mean / double(level.size());
    chan::watterson_channel channel(cc);
    serial_tone_frontend_config fc;
    fc.real_input = false;
    serial_tone_frontend front(fc);
    m110c_receiver rx;
    std::mt19937 rng{ 3 };
    std::vector<std::vector<uint8_t>> sent;
    std::vector<m110c_burst> bursts;
    std::vector<cf> noisy, bb;
    for (int burst = 0; burst < 2; ++burst) {
        sent.push_back(random_data(rng));
        std::vector<cf> air = modulator.baseband(
            m110c_transmit_points(mode, sent.back().data(), burst_bytes));
        air.resize(air.size() + size_t(fs / 2));
        noisy.clear();
        channel.process(air.data(), air.size(), noisy);
        for (size_t k = 0; k < noisy.size(); k += 4096) {
            bb.clear();
            front.process(noisy.data() + k, std::min<size_t>(4096, noisy.size() - k), bb);
            rx.process(bb.data(), bb.size(), bursts);
        }
    }
    ASSERT_EQ(bursts.size(), 2u);
    for (size_t b = 0; b < 2; ++b) {
        EXPECT_TRUE(bursts[b].eom);
        EXPECT_EQ(wrong_bytes(sent[b], bursts[b].bytes), 0u) << "burst " << b;
    }
}
