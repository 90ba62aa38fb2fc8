/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The App D receiver at 3 kHz: our transmissions of every WN decode through noise and a
// carrier offset, with K = 9 and the alternative readings too; noise alone starts
// nothing; reserved WID codes are refused; a cut burst, a new preamble cutting a burst,
// NaN and clipped input neither crash it nor wedge it; per-block delivery; D.6.5's swept
// offset; the symbol tap; detection integrated over M = 20 super-frames at WN1's row.
#include "chan/watterson_channel.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_transmitter.h"
#include "phy/serial_tone_frontend.h"

#include "m110d_test_support.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

std::vector<m110d_burst> receive_audio(const std::vector<float>& audio,
                                       const m110d_receiver_config& config = {})
{
    return receive_serial_tone_audio<m110d_receiver, m110d_burst>(audio, 9600, config);
}

// A transmission's audio through AWGN at snr_db over its mean power, with a carrier
// offset and a sample clock offset, and through `paths` (none: AWGN only).
std::vector<float> over_the_air(const m110d_mode& mode,
                                const std::vector<uint8_t>& data,
                                double snr_db,
                                double offset_hz,
                                uint64_t seed,
                                const m110d_transmit_options& options = {},
                                double ppm = 0,
                                const std::vector<chan::watterson_path>& paths = {})
{
    const std::vector<cf> points =
        m110d_transmit_points(mode, data.data(), data.size(), options);
    return through_channel(padded_audio(points, 9600),
                           9600,
                           snr_db - 10 * std::log10(m110d_frame_power(mode)),
                           offset_hz,
                           seed,
                           ppm,
                           paths);
}

// F.1487 poor: two equal 1 Hz Rayleigh paths 2 ms apart.
const std::vector<chan::watterson_path> poor = { { 0.5, 1.0, 0.0, 0.0 },
                                                 { 0.5, 1.0, 0.0, 2e-3 } };

void expect_one_whole_burst(const std::vector<m110d_burst>& bursts,
                            const m110d_mode& mode,
                            const std::vector<uint8_t>& data)
{
    ASSERT_EQ(bursts.size(), 1u) << mode.name();
    EXPECT_EQ(bursts[0].mode, mode.name());
    EXPECT_TRUE(bursts[0].eom) << mode.name();
    EXPECT_FALSE(bursts[0].bytes_bad) << mode.name();
    EXPECT_FALSE(bursts[0].continues) << mode.name();
    EXPECT_EQ(bursts[0].bytes, data) << mode.name();
}

m110d_mode mode_of(const std::string& name)
{
    const auto m = m110d_mode_by_name(name);
    EXPECT_TRUE(m.has_value()) << name;
    return *m;
}

} // namespace

// Every WN, short interleaver: 35 dB, 20 Hz, 20 ppm.
TEST(M110dReceiver, EveryWnRoundTripsAt35DbWith20HzAnd20Ppm)
{
    for (unsigned wn = 0; wn <= m110d_max_wn; ++wn) {
        const m110d_mode mode = *m110d_mode_for(3, wn, m110d_interleaver::short_);
        const std::vector<uint8_t> data =
            random_bytes(std::max<size_t>(20, mode.user_bps() / 8 / 2), 100 + wn);
        const std::vector<m110d_burst> bursts =
            receive_audio(over_the_air(mode, data, 35, 20, wn + 1, {}, 20));
        expect_one_whole_burst(bursts, mode, data);
        if (!bursts.empty()) {
            EXPECT_NEAR(bursts[0].frequency_offset_hz, 20, 2) << mode.name();
            EXPECT_GT(bursts[0].snr_db, 25) << mode.name();
        }
    }
}

// The other interleavers, at a few WNs; the preamble with TLC blocks and M super-frames.
TEST(M110dReceiver, OtherInterleaversAndLongerPreambles)
{
    for (const char* name :
         { "WN1/3kHz/US", "WN7/3kHz/M", "WN12/3kHz/US", "WN0/3kHz/M", "WN9/3kHz/L" }) {
        const m110d_mode mode = mode_of(name);
        const std::vector<uint8_t> data = random_bytes(100, 7);
        expect_one_whole_burst(
            receive_audio(over_the_air(mode, data, 35, -20, 3)), mode, data);
    }
    m110d_transmit_options options;
    options.timing.preamble.tlc_blocks = 3;
    options.timing.preamble.superframes = 4;
    options.timing.eot_extension = true;
    const m110d_mode mode = mode_of("WN6/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(200, 8);
    expect_one_whole_burst(
        receive_audio(over_the_air(mode, data, 35, 20, 4, options)), mode, data);
}

// K = 9 (announced in the WID) and every alternative reading, the receiver told.
TEST(M110dReceiver, ConstraintLengthNineAndAlternativeReadings)
{
    m110d_transmit_options options;
    options.constraint_length = 9;
    options.readings.scrambler = x9_orientation::b;
    options.readings.tail_biting = tail_biting_start::from_block_start;
    options.readings.pn_alignment = m110d_pn_alignment::continuous;
    options.readings.wid_parity = m110d_wid_parity::caption_d2_zero;
    m110d_receiver_config config;
    config.readings = options.readings;
    for (const char* name : { "WN8/3kHz/S", "WN0/3kHz/S", "WN3/3kHz/S" }) {
        const m110d_mode mode = mode_of(name);
        const std::vector<uint8_t> data = random_bytes(60, 9);
        expect_one_whole_burst(
            receive_audio(over_the_air(mode, data, 35, 20, 5, options), config),
            mode,
            data);
    }
}

// The data's readings found by the receiver (its default; scrambler=auto,
// tail_biting=auto): a burst sent under each non-default reading (and the defaults),
// K = 7 and 9, received whole by a receiver configured with the defaults; told them
// and not finding, the other readings' bursts are not whole.
TEST(M110dReceiver, DataReadingsTriedByTheReceiver)
{
    const m110d_receiver_config finding;
    m110d_receiver_config told;
    told.find_scrambler = told.find_tail_biting = false;
    struct sent {
        x9_orientation scrambler;
        tail_biting_start tail_biting;
    };
    const sent readings[] = {
        { x9_orientation::b, tail_biting_start::from_full_register },
        { x9_orientation::a, tail_biting_start::from_block_start },
        { x9_orientation::b, tail_biting_start::from_block_start },
        { x9_orientation::a, tail_biting_start::from_full_register },
        { x9_orientation::b, tail_biting_start::first_pair_bit_7 },
        { x9_orientation::a, tail_biting_start::first_pair_bit_7 },
    };
    for (unsigned k : { 7u, 9u })
        for (const char* name : { "WN8/3kHz/S", "WN3/3kHz/S", "WN0/3kHz/S" })
            for (const sent& r : readings) {
                m110d_transmit_options options;
                options.constraint_length = k;
                options.readings.scrambler = r.scrambler;
                options.readings.tail_biting = r.tail_biting;
                const m110d_mode mode = mode_of(name);
                // K = 9 from the block start: the EOM ends the block (with a byte or
                // more of fill such a burst reads either way; without, the other
                // reading splits its EOM).
                const size_t bytes =
                    k == 9 && r.tail_biting == tail_biting_start::from_block_start
                        ? mode.input_bits_per_block / 8 - 4
                        : 40;
                const std::vector<uint8_t> data = random_bytes(bytes, 20 + k);
                const std::vector<float> audio =
                    over_the_air(mode, data, 35, 20, 6, options);
                SCOPED_TRACE(
                    std::string(name) + " K=" + std::to_string(k) + " scrambler " +
                    (r.scrambler == x9_orientation::a ? "a" : "b") + " tail " +
                    (r.tail_biting == tail_biting_start::from_block_start     ? "start"
                     : r.tail_biting == tail_biting_start::from_full_register ? "full"
                                                                              : "bit 7"));
                expect_one_whole_burst(receive_audio(audio, finding), mode, data);
                const bool default_scrambler = r.scrambler == x9_orientation::a;
                const bool default_tail =
                    r.tail_biting == tail_biting_start::first_pair_bit_7;
                if (!(default_tail && (default_scrambler || mode.wn == 0))) {
                    const std::vector<m110d_burst> got = receive_audio(audio, told);
                    EXPECT_FALSE(got.size() == 1 && got[0].eom && got[0].bytes == data);
                }
            }
}

// The preamble's PN alignment and WID parity found from the signal (the data's
// readings configured): every combination, WNs whose WID differs between the parities
// (WN2, WN8) and one where it does not (WN6).
TEST(M110dReceiver, PreambleReadingsFound)
{
    for (auto alignment :
         { m110d_pn_alignment::per_symbol, m110d_pn_alignment::continuous })
        for (auto parity :
             { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero })
            for (const char* name : { "WN2/3kHz/US", "WN8/3kHz/S", "WN6/3kHz/US" }) {
                m110d_transmit_options options;
                options.readings.pn_alignment = alignment;
                options.readings.wid_parity = parity;
                m110d_receiver_config config;
                config.find_preamble_readings = true;
                const m110d_mode mode = mode_of(name);
                const std::vector<uint8_t> data = random_bytes(80, 21);
                expect_one_whole_burst(
                    receive_audio(over_the_air(mode, data, 35, 20, 22, options), config),
                    mode,
                    data);
            }
}

// The static multipath channels of D-LXV at 3 kHz (equal paths; its SNR column is not
// transcribed, these are ours), L interleaver.
TEST(M110dReceiver, StaticMultipathOfDLxv)
{
    struct row {
        const char* mode;
        std::vector<double> delays_ms;
        double snr_db;
    };
    for (const row& r : { row{ "WN2/3kHz/L", { 0, 3, 9 }, 15 },
                          row{ "WN10/3kHz/L", { 0, 2, 4.5 }, 30 },
                          row{ "WN12/3kHz/L", { 0, 1.5 }, 35 } }) {
        std::vector<chan::watterson_path> paths;
        for (double d : r.delays_ms)
            paths.push_back({ 1.0, 0.0, 0.0, d * 1e-3 });
        const m110d_mode mode = mode_of(r.mode);
        const std::vector<uint8_t> data = random_bytes(mode.wn == 2 ? 100 : 2000, 23);
        expect_one_whole_burst(
            receive_audio(over_the_air(mode, data, r.snr_db, 20, 24, {}, 0, paths)),
            mode,
            data);
    }
}

namespace {

// A burst with a preamble of M = 20 super-frames whose last `faded_chips` chips are
// 30 dB down, as in a fade, through AWGN at 10 dB and 20 Hz: received whole, once.
void expect_whole_through_a_faded_preamble_end(const char* name,
                                               size_t faded_chips,
                                               uint64_t seed)
{
    m110d_transmit_options twenty;
    twenty.timing.preamble.superframes = 20;
    const m110d_mode mode = mode_of(name);
    const std::vector<uint8_t> data = random_bytes(200, seed);
    std::vector<cf> points =
        m110d_transmit_points(mode, data.data(), data.size(), twenty);
    const size_t preamble =
        m110d_preamble(mode, twenty.timing.preamble, twenty.constraint_length).size();
    for (size_t k = preamble - faded_chips; k < preamble; ++k)
        points[k] *= 0.0316f;
    const std::vector<float> audio =
        through_channel(padded_audio(points, 9600),
                        9600,
                        10 - 10 * std::log10(m110d_frame_power(mode)),
                        20,
                        seed,
                        0,
                        {});
    expect_one_whole_burst(receive_audio(audio), mode, data);
}

} // namespace

// The last super-frame's fields (and the known chips before them) faded: its count and
// WID do not read on their own, so they are read over the super-frames the detection
// added up, on the carrier offset measured over their fixed sections (the last one's 160
// chips alone gave anything in such a fade); WN1 and WN3.
TEST(M110dReceiver, FieldsReadOverSuperframesWhenTheLastIsFaded)
{
    for (const char* name : { "WN1/3kHz/L", "WN3/3kHz/L" })
        expect_whole_through_a_faded_preamble_end(name, 10 * 32, 7);
}

// The last two super-frames faded (WN3): the search first takes an earlier super-frame
// (count 8 here), whose count the super-frames before it read; the last one is read
// that many super-frames on.
TEST(M110dReceiver, LastSuperframeSoughtFromAnEarlierOnesCount)
{
    expect_whole_through_a_faded_preamble_end("WN3/3kHz/L", 2 * 18 * 32, 8);
}

// F.1487 poor (two equal 1 Hz Rayleigh paths 2 ms apart): WN8/3kHz/L at 24 dB, one
// channel seed, the channel tracked on decisions alone between probes. The
// decoder-aided pass is what decodes it whole (one pass: bytes wrong), and fading data
// never cut the burst as a new preamble would.
// D.6.5: the offset sweeping +-75 Hz at 3.5 Hz/s, WN10 at 24 dB: a 31 s burst from +40 Hz
// up through the turn at +75 Hz and down to +2 Hz. The first-order loop (default) lags
// 1.4 Hz: with the channel interpolated between probes (default) the burst is whole
// all the same, and so with the second-order loop (follow_frequency_rate); on decisions
// alone between probes the lagging loop loses it.
TEST(M110dReceiver, SweptOffsetOfD65)
{
    const m110d_mode mode = mode_of("WN10/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(30000, 65);
    const std::vector<cf> points = m110d_transmit_points(mode, data.data(), data.size());
    const std::vector<float> clean = padded_audio(points, 9600);
    chan::watterson_config cc;
    cc.sample_rate_hz = 9600;
    cc.real_signal = true;
    cc.signal_power = 0.0625;
    cc.snr_db = 24 - 10 * std::log10(m110d_frame_power(mode));
    cc.seed = 65;
    chan::watterson_channel channel(cc);
    std::vector<float> audio;
    constexpr size_t piece = 96; // 10 ms
    for (size_t k = 0; k < clean.size(); k += piece) {
        const double p =
            std::fmod(115 + 3.5 * double(k) / 9600, 300); // triangle phase, Hz
        channel.set_frequency_offset_hz(p < 150 ? -75 + p : 225 - p);
        channel.process(clean.data() + k, std::min(piece, clean.size() - k), audio);
    }
    m110d_receiver_config second_order;
    second_order.follow_frequency_rate = true;
    expect_one_whole_burst(receive_audio(audio, second_order), mode, data);
    expect_one_whole_burst(receive_audio(audio), mode, data);
    m110d_receiver_config decisions_alone;
    decisions_alone.interpolate_probes = false;
    const std::vector<m110d_burst> lagging = receive_audio(audio, decisions_alone);
    ASSERT_FALSE(lagging.empty());
    EXPECT_NE(lagging[0].bytes, data);
}

namespace {

// Bursts of `name` with D-LXIV's M = 20 super-frames through AWGN at snr_db, 20 Hz,
// seeds first .. first + n - 1: each whole by default; how many `other` found, and
// received whole.
struct other_received {
    size_t found = 0, whole = 0;
};
other_received at_twenty_superframes(const char* name,
                                     double snr_db,
                                     size_t bytes,
                                     uint64_t first,
                                     unsigned n,
                                     const m110d_receiver_config& other)
{
    const m110d_mode mode = mode_of(name);
    m110d_transmit_options twenty;
    twenty.timing.preamble.superframes = 20;
    other_received got;
    for (uint64_t seed = first; seed < first + n; ++seed) {
        const std::vector<uint8_t> data = random_bytes(bytes, seed);
        const std::vector<float> audio =
            over_the_air(mode, data, snr_db, 20, seed, twenty);
        expect_one_whole_burst(receive_audio(audio), mode, data);
        const std::vector<m110d_burst> theirs = receive_audio(audio, other);
        got.found += theirs.size();
        got.whole += theirs.size() == 1 && theirs[0].eom && theirs[0].bytes == data;
    }
    return got;
}

} // namespace

// D-LXIV's preamble of M = 20 super-frames at WN1's row, 1 dB below (-4 dB, 20 Hz):
// with detection integrated over the super-frames (the default) every burst is found
// and whole; on the last super-frame's 160 chips alone (z about 3.8 there) some are not
// by the differential correlation (the coherent search, on by default, finds all four
// on those chips alone: it is off here).
TEST(M110dReceiver, SuperframesIntegratedAtWn1Row)
{
    m110d_receiver_config alone;
    alone.integrate_superframes = 0;
    alone.coherent_search = false;
    EXPECT_LT(at_twenty_superframes("WN1/3kHz/L", -4, 150, 41, 4, alone).found, 4u);
}

// WN0 at 1 dB below its D-LXIV AWGN row (M = 20): each Walsh symbol decided whole and
// its chips then known to the tracker, every burst whole; with the chips decided one by
// one (a quarter of them wrong at -6 dB per chip) not.
TEST(M110dReceiver, Wn0WalshSymbolsDecidedWholeAtItsRow)
{
    m110d_receiver_config by_chip;
    by_chip.wn0_symbol_decisions = false;
    EXPECT_LT(at_twenty_superframes("WN0/3kHz/L", -7, 60, 71, 3, by_chip).whole, 3u);
}

// WN0 on F.1487 poor 3 dB below its D-LXIV row (-4 dB, M = 20): each block read again
// once decoded, every Walsh symbol on the channel its decoded neighbours measure
// (wn0_decoder_pass, the default), and decoded again. Of seeds 1-16, 14 bursts came out
// whole with it and 11 without; the three it saves here.
TEST(M110dReceiver, Wn0DecoderAidedPassOnPoorChannel)
{
    const m110d_mode mode = mode_of("WN0/3kHz/L");
    m110d_transmit_options twenty;
    twenty.timing.preamble.superframes = 20;
    m110d_receiver_config one_pass;
    one_pass.wn0_decoder_pass = false;
    size_t whole_one_pass = 0;
    for (uint64_t seed : { 4u, 11u, 12u }) {
        const std::vector<uint8_t> data = random_bytes(93, 90 + seed);
        const std::vector<float> audio =
            over_the_air(mode, data, -4, 0, 90 + seed, twenty, 0, poor);
        // Whole (bytes and EOM; at 3 dB under the row some are judged unreliable).
        const std::vector<m110d_burst> a = receive_audio(audio);
        ASSERT_EQ(a.size(), 1u);
        EXPECT_TRUE(a[0].eom);
        EXPECT_EQ(a[0].bytes, data);
        const std::vector<m110d_burst> b = receive_audio(audio, one_pass);
        whole_one_pass += b.size() == 1 && b[0].eom && b[0].bytes == data;
    }
    EXPECT_LT(whole_one_pass, 3u);
}

// Each decoded block judged (reliability_threshold, as the App C receiver): a clean
// WN6/3kHz/US burst of several blocks is reliable throughout; the same burst with a
// stretch of strong noise over part of its data (0.25 s at 0 dB over it) still ends at
// its EOM but with the block under it unreliable, and the burst marked bytes_bad; with
// the threshold at -infinity nothing is judged.
TEST(M110dReceiver, UnreliableBlocksMarkTheBurstBad)
{
    const m110d_mode mode = mode_of("WN6/3kHz/US");
    const std::vector<uint8_t> data = random_bytes(1200, 61);
    const std::vector<float> clean = over_the_air(mode, data, 35, 20, 61);
    const std::vector<m110d_burst> good = receive_audio(clean);
    expect_one_whole_burst(good, mode, data);
    if (!good.empty()) {
        EXPECT_EQ(good[0].unreliable_blocks, 0u);
        EXPECT_GT(good[0].least_reliability, 5.0);
    }
    // Noise at the signal's power (rms 0.25) over 0.25 s in the middle of the data.
    std::vector<float> hit = clean;
    std::mt19937 rng(62);
    std::normal_distribution<float> noise(0.0f, 0.25f);
    const size_t middle = hit.size() / 2;
    for (size_t i = middle; i < middle + 2400 && i < hit.size(); ++i)
        hit[i] += noise(rng);
    const std::vector<m110d_burst> bad = receive_audio(hit);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_TRUE(bad[0].eom);
    EXPECT_NE(bad[0].bytes, data); // the block under the noise did not decode whole
    EXPECT_TRUE(bad[0].bytes_bad);
    EXPECT_GE(bad[0].unreliable_blocks, 1u);
    EXPECT_LT(bad[0].least_reliability, 1.0);
    m110d_receiver_config unjudged;
    unjudged.reliability_threshold = -std::numeric_limits<double>::infinity();
    const std::vector<m110d_burst> as_before = receive_audio(hit, unjudged);
    ASSERT_EQ(as_before.size(), 1u);
    EXPECT_FALSE(as_before[0].bytes_bad);
    EXPECT_EQ(as_before[0].unreliable_blocks, 0u);
}

TEST(M110dReceiver, PoorChannelDecoderAidedPass)
{
    const m110d_mode mode = mode_of("WN8/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(6000, 2);
    // The tail-biting phase this case was measured with (the receiver finds it): other
    // symbols move a marginal case.
    m110d_transmit_options measured_with;
    measured_with.readings.tail_biting = tail_biting_start::from_full_register;
    const std::vector<float> audio =
        over_the_air(mode, data, 24, 20, 2, measured_with, 0, poor);
    m110d_receiver_config two;
    two.interpolate_probes = false;
    m110d_receiver_config one = two;
    one.decoder_passes = 1;
    const std::vector<m110d_burst> first = receive_audio(audio, one);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_NE(first[0].bytes, data);
    expect_one_whole_burst(receive_audio(audio, two), mode, data);
}

namespace {

// WN10/3kHz/L (64QAM), one interleaver block of 9000 bytes on the poor channel at
// snr_db (channel and data seed `seed`): the default receiver decodes it whole, one with
// a feature off (`without`) loses the burst or gets bytes wrong.
void expect_wn10_block_whole_only_by_default(double snr_db,
                                             uint64_t seed,
                                             const m110d_receiver_config& without)
{
    const m110d_mode mode = mode_of("WN10/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(9000, seed);
    const std::vector<float> audio =
        over_the_air(mode, data, snr_db, 20, seed, {}, 0, poor);
    // The bytes: 6 dB under the row the block may decode whole and still be judged
    // unreliable (WN10/L at 25 dB, channel seed 4: reliability 0.87, 0.42 bits
    // expected wrong, under the threshold of 1: bytes_bad set).
    const std::vector<m110d_burst> bursts = receive_audio(audio);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
    const std::vector<m110d_burst> got = receive_audio(audio, without);
    EXPECT_TRUE(got.empty() || got[0].bytes != data); // lost, or bytes wrong
}

} // namespace

// F.1487 poor, WN10/3kHz/L (64QAM) 1 dB below D-LXIV's poor row (30 dB), one
// interleaver block: on decisions alone between the 32-symbol probes a decision error
// in a fade feeds the tracker and whole frames go wrong; with the channel interpolated
// between the probes (default) the block decodes whole.
TEST(M110dReceiver, ChannelInterpolatedBetweenProbesOnPoorChannel)
{
    m110d_receiver_config decisions_alone;
    decisions_alone.interpolate_probes = false;
    expect_wn10_block_whole_only_by_default(30, 3, decisions_alone);
}

// Fading data crossing the search's threshold do not cut a burst (the detection's count
// and WID must read first): WN7/3kHz/L on the poor channel at 20 dB, a channel seed on
// which a cut on the threshold alone lost the second block.
TEST(M110dReceiver, FadingDataDoNotCutABurst)
{
    const m110d_mode mode = mode_of("WN7/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(6000, 1);
    expect_one_whole_burst(
        receive_audio(over_the_air(mode, data, 20, 20, 1, {}, 0, poor)), mode, data);
}

// F.1487 poor, WN10/3kHz/L 6 dB below D-LXIV's poor row (25 dB), one interleaver block,
// the channel interpolated between probes: forward decisions alone lose frames to a
// 64QAM decision error fed back in a fade; with the suspect frames equalised backward
// too (default) the block decodes whole.
TEST(M110dReceiver, SuspectFramesEqualisedBackward)
{
    m110d_receiver_config forward_only;
    forward_only.backward_frames = false;
    expect_wn10_block_whole_only_by_default(25, 4, forward_only);
}

TEST(M110dReceiver, AFadeAtTheEndOfALongBurstCountsByItsShareOfTheReport)
{
    // A WN7 burst of about 10 s at 30 dB whose last 1.5 s arrive 30 dB weaker: the
    // report is the burst's mean over chunks of known symbols (phy/burst_snr.h), as the
    // 110A and App C receivers report, a few dB under the steady burst's, not the fade
    // alone that the tracked noise at the burst's end reads.
    const m110d_mode mode = mode_of("WN7/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(12000, 44);
    const std::vector<float> clean =
        padded_audio(m110d_transmit_points(mode, data.data(), data.size()), 9600);
    const std::vector<float> faded = with_faded_end(clean, 9600, 1.5, -30, 5);
    const double snr = 30.0 - 10 * std::log10(m110d_frame_power(mode));
    const std::vector<m110d_burst> steady =
        receive_audio(through_channel(clean, 9600, snr, 0, 5));
    const std::vector<m110d_burst> fading =
        receive_audio(through_channel(faded, 9600, snr, 0, 5));
    ASSERT_EQ(steady.size(), 1u);
    ASSERT_GE(fading.size(), 1u);
    EXPECT_NEAR(steady[0].snr_db, 30.0, 4.5);
    EXPECT_LT(fading[0].snr_db, steady[0].snr_db - 2.0) << steady[0].snr_db;
    EXPECT_GT(fading[0].snr_db, steady[0].snr_db - 9.0) << steady[0].snr_db;
}

TEST(M110dReceiver, ACutTransmissionEndsFewBlocksAfterItsSignal)
{
    // WN7/3kHz/S whose signal stops after 10 s (no EOM), then noise alone at 12 dB:
    // the probes' estimates, from a channel fitted to each probe itself, matched noise
    // too, and the receiver read noise for 25.6 / 3.1 / over 30 / 23.2 s (channel seeds
    // 1-4) before ending the burst; scored against the channel measured before each
    // probe, it ends 3 blocks on (1.6 s).
    const m110d_mode mode = mode_of("WN7/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(20000, 47);
    expect_cut_transmission_ends_within<m110d_receiver, m110d_burst>(
        m110d_transmit_points(mode, data.data(), data.size()),
        10,
        3.0,
        m110d_receiver_config{});
}

// `data` sent as one M = 1 burst 0.1 s into silence, 0.3 s after it, the preamble's 10
// Walsh symbols (320 chips) and the pulse's tail `dip_db` under the data after them,
// through a channel of `paths` at 4 dB with noise seed `seed`: the bursts received with
// `config`.
// (faded_points_received: the burst's points given, e.g. with another WID in them.)
namespace {
std::vector<m110d_burst>
faded_points_received(const m110d_mode& mode,
                      const std::vector<cf>& points,
                      double dip_db,
                      const std::vector<chan::watterson_path>& paths,
                      uint64_t seed,
                      const m110d_receiver_config& config = m110d_receiver_config{},
                      double offset_hz = 0)
{
    const psk_modulator modulator(m110d_modulator_config(mode, 0));
    const double rate = modulator.config().sample_rate;
    std::vector<cf> x(size_t(0.1 * rate));
    const size_t preamble_from = x.size();
    const std::vector<cf> burst = modulator.baseband(points);
    x.insert(x.end(), burst.begin(), burst.end());
    x.resize(x.size() + size_t(0.3 * rate));
    const size_t preamble_to = preamble_from + (320 + 8) * 4;
    const float dip = float(std::pow(10.0, -dip_db / 20));
    for (size_t i = preamble_from; i < preamble_to; ++i)
        x[i] *= dip;
    for (size_t i = 0; i < x.size(); ++i)
        x[i] *= std::polar(1.0f, float(2 * M_PI * offset_hz * double(i) / rate));
    chan::watterson_config cc;
    cc.sample_rate_hz = rate;
    if (!paths.empty())
        cc.paths = paths;
    cc.snr_db = 4;
    cc.noise_bandwidth_hz = 3000;
    cc.signal_power = m110d_frame_power(mode);
    cc.seed = seed;
    chan::watterson_channel channel(cc);
    std::vector<cf> air;
    channel.process(x.data(), x.size(), air);
    return m110d_bursts_received(air, mode, 0, config);
}

std::vector<m110d_burst>
faded_preamble_received(const m110d_mode& mode,
                        const std::vector<uint8_t>& data,
                        double dip_db,
                        const std::vector<chan::watterson_path>& paths,
                        uint64_t seed,
                        const m110d_receiver_config& config = m110d_receiver_config{},
                        double offset_hz = 0)
{
    return faded_points_received(mode,
                                 m110d_transmit_points(mode, data.data(), data.size()),
                                 dip_db,
                                 paths,
                                 seed,
                                 config,
                                 offset_hz);
}
} // namespace

// A preamble of one super-frame (M = 1) in a fade: 9 dB under the data after it, at 4
// dB (the chips about -5 dB each). The differential correlation, whose products square
// the noise, stays under its threshold there (z about 3; with noise seed 33 it reached
// 4.2); the coherent search (coherent_search, the default at 3 kHz) finds it (z
// 5.3-6.6), and its fields read (with noise seed 32 they did not).
TEST(M110dReceiver, OneSuperframePreambleInAFadeFoundCoherently)
{
    const m110d_mode mode = mode_of("WN1/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(mode.input_bits_per_block / 8, 95);
    m110d_receiver_config differential;
    differential.coherent_search = false;
    for (uint64_t seed : { 31u, 34u, 35u, 36u }) {
        const std::vector<m110d_burst> found =
            faded_preamble_received(mode, data, 9, {}, seed);
        ASSERT_EQ(found.size(), 1u) << seed;
        EXPECT_EQ(found[0].bytes, data) << seed;
        EXPECT_TRUE(found[0].eom) << seed;
        EXPECT_TRUE(
            faded_preamble_received(mode, data, 9, {}, seed, differential).empty())
            << seed;
    }
}

// The same preamble 10 dB under the data, at 4 dB, on two equal static paths 2 ms apart
// (F.1487 poor's spread): each path's chips about -9 dB. Neither path's coherent sum
// alone reaches the coherent search's threshold, their powers added
// (coherent_two_paths, the default) do, and the fields read on both paths' gains (noise
// seeds 40-69: 17 bursts received with two paths, 2 with one).
TEST(M110dReceiver, OneSuperframePreambleOnTwoFadedPathsFoundTogether)
{
    const m110d_mode mode = mode_of("WN1/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(mode.input_bits_per_block / 8, 96);
    const std::vector<chan::watterson_path> paths = { { 0.5, 0.0, 0.0, 0.0 },
                                                      { 0.5, 0.0, 0.0, 2e-3 } };
    m110d_receiver_config one_path;
    one_path.coherent_two_paths = false;
    for (uint64_t seed : { 41u, 42u, 44u, 45u }) {
        const std::vector<m110d_burst> found =
            faded_preamble_received(mode, data, 10, paths, seed);
        ASSERT_EQ(found.size(), 1u) << seed;
        EXPECT_EQ(found[0].bytes, data) << seed;
        EXPECT_TRUE(found[0].eom) << seed;
        EXPECT_TRUE(
            faded_preamble_received(mode, data, 10, paths, seed, one_path).empty())
            << seed;
    }
}

// A preamble of one super-frame deeper in the fade: 14 dB under the data after it, at 4
// dB (its chips about -10 dB), its coherent z 3-4.5, under the coherent search's
// threshold. Held (confirm_weak_with_data, the default), it is taken once the data's
// mini-probes (WN1) or scrambled Walsh symbols (WN0) stand out after it (noise seeds
// 50-61: 8 of 12 bursts received whole for each, none without).
TEST(M110dReceiver, OneSuperframePreambleDeepInAFadeFoundWithItsData)
{
    m110d_receiver_config without;
    without.confirm_weak_with_data = false;
    for (const char* name : { "WN1/3kHz/S", "WN0/3kHz/S" }) {
        const m110d_mode mode = mode_of(name);
        // About 2 s of data and more (the data are searched over 1.5 s).
        const std::vector<uint8_t> data = random_bytes(mode.wn == 0 ? 24 : 100, 97);
        for (uint64_t seed : { 51u, 52u, 54u, 55u }) {
            const std::vector<m110d_burst> found =
                faded_preamble_received(mode, data, 14, {}, seed);
            ASSERT_EQ(found.size(), 1u) << name << " " << seed;
            EXPECT_EQ(found[0].mode, mode.name()) << seed;
            EXPECT_EQ(found[0].bytes, data) << name << " " << seed;
            EXPECT_TRUE(found[0].eom) << name << " " << seed;
            EXPECT_TRUE(
                faded_preamble_received(mode, data, 14, {}, seed, without).empty())
                << name << " " << seed;
        }
    }
}

// The same deep-faded preamble 100 Hz off: beyond D.6.4's +-75 Hz a peak under the
// threshold is not taken on its data (weak_max_offset_hz; the data's mini-probes tell
// the offset only modulo the frame rate, so such a peak in noise can take a burst's data
// at an alias), within the coherent search's +-150 Hz it is (noise seeds 50-69: taken
// at 5 with the whole reach, these 4 of them, and at none within 75 Hz).
TEST(M110dReceiver, OneSuperframePreambleDeepInAFadeFarOffNotTakenOnItsData)
{
    const m110d_mode mode = mode_of("WN1/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(100, 97);
    m110d_receiver_config whole_reach;
    whole_reach.weak_max_offset_hz = 150;
    for (uint64_t seed : { 50u, 51u, 54u, 64u }) {
        EXPECT_TRUE(faded_preamble_received(mode, data, 14, {}, seed, {}, 100).empty())
            << seed;
        const std::vector<m110d_burst> found =
            faded_preamble_received(mode, data, 14, {}, seed, whole_reach, 100);
        ASSERT_EQ(found.size(), 1u) << seed;
        EXPECT_EQ(found[0].bytes, data) << seed;
    }
}

// One burst found, of `mode`, with `data` and its end of message.
static void expect_one_burst_whole(const std::vector<m110d_burst>& found,
                                   const m110d_mode& mode,
                                   const std::vector<uint8_t>& data,
                                   const char* name,
                                   uint64_t seed)
{
    ASSERT_EQ(found.size(), 1u) << name << " " << seed;
    EXPECT_EQ(found[0].mode, mode.name()) << seed;
    EXPECT_EQ(found[0].bytes, data) << name << " " << seed;
    EXPECT_TRUE(found[0].eom) << name << " " << seed;
}

// A faded M = 1 preamble (dip_db on one path, or on two static paths 2 ms apart) of
// `name` with random data, received whole as its own mode.
struct faded_case {
    const char* name;
    double dip_db;
    bool two;
    uint64_t seed;
};

static void expect_faded_received_whole(const std::vector<faded_case>& cases)
{
    const std::vector<chan::watterson_path> two_paths = { { 0.5, 0.0, 0.0, 0.0 },
                                                          { 0.5, 0.0, 0.0, 2e-3 } };
    for (const faded_case& c : cases) {
        const m110d_mode mode = mode_of(c.name);
        const std::vector<uint8_t> data = random_bytes(mode.wn == 0 ? 24 : 100, 97);
        const std::vector<m110d_burst> found = faded_preamble_received(
            mode,
            data,
            c.dip_db,
            c.two ? two_paths : std::vector<chan::watterson_path>{},
            c.seed);
        expect_one_burst_whole(found, mode, data, c.name, c.seed);
    }
}

// Deeper still (17 dB on one path, 14 dB on two static paths 2 ms apart): the preamble's
// peak may lose its place to a slightly larger noise peak after it, or cross the
// threshold with fields that do not read. Every peak the largest within a Walsh symbol,
// and a detection whose fields fail, is held for its data too (noise seeds 50-89: 11
// more bursts received whole of 320, none fewer; these 6 none before).
TEST(M110dReceiver, OneSuperframePreambleDeepInAFadeHeldBesideNoisePeaks)
{
    expect_faded_received_whole({ faded_case{ "WN0/3kHz/S", 17, false, 65 },
                                  faded_case{ "WN0/3kHz/S", 17, false, 87 },
                                  faded_case{ "WN0/3kHz/S", 14, true, 60 },
                                  faded_case{ "WN0/3kHz/S", 14, true, 65 },
                                  faded_case{ "WN1/3kHz/S", 14, true, 57 },
                                  faded_case{ "WN1/3kHz/S", 14, true, 60 } });
}

// A preamble so deep in a fade that its WID is read wrong: another mode of the same
// frames and symbols (WN2 for WN1: F.1487 poor, WN1 at 2 dB, M = 1, channel seeds 21 and
// 22; a burst decoded as noise ran on over the next) or the other constraint length.
// Here the WID sent names it (WN2 or WN0 with K = 9, on WN1 or WN0 data with K = 7): a
// burst found with its data (confirm_weak_with_data) is decoded as the mode among those
// its first block's LLRs fit.
TEST(M110dReceiver, OneSuperframePreambleDeepInAFadeDecodedAsItsDataFit)
{
    const m110d_readings readings;
    const std::vector<cf>& psk8 = m110d_constellation(3);
    struct misread_case {
        const char* name;
        m110d_wid said;
        uint64_t seed;
    };
    for (const misread_case& c :
         { misread_case{ "WN1/3kHz/S", { 2, m110d_interleaver::short_, 9 }, 51 },
           misread_case{ "WN1/3kHz/S", { 2, m110d_interleaver::short_, 7 }, 52 },
           misread_case{ "WN0/3kHz/S", { 0, m110d_interleaver::short_, 9 }, 51 } }) {
        const m110d_mode mode = mode_of(c.name);
        const std::vector<uint8_t> data = random_bytes(mode.wn == 0 ? 24 : 100, 97);
        std::vector<cf> points = m110d_transmit_points(mode, data.data(), data.size());
        const std::array<uint8_t, 5> wid = m110d_wid_dibits(c.said);
        const std::vector<uint8_t> section = m110d_preamble_section(
            { wid.begin(), wid.end() }, m110d_pn_table::wid, 32, readings.pn_alignment);
        for (size_t j = 0; j < section.size(); ++j)
            points[5 * 32 + j] = psk8[section[j]];
        const std::vector<m110d_burst> found =
            faded_points_received(mode, points, 14, {}, c.seed);
        expect_one_burst_whole(found, mode, data, c.name, c.seed);
    }
}

// Held peaks whose fields stand out less (5.0-5.5 deviations, under the 5.5 a held peak's
// need alone: F.1487 poor, WN0 at -2 dB, M = 1, channel seed 24, a burst lost so) taken
// where their first block decodes under a WID of the data's frames (noise seeds 50-89 at
// 14, 16 and 17 dB: 5 more bursts received whole of 480, none fewer; these 3 none
// before).
TEST(M110dReceiver, OneSuperframePreambleFieldsUnsureTakenWhereItsFirstBlockDecodes)
{
    expect_faded_received_whole({ faded_case{ "WN0/3kHz/S", 17, false, 76 },
                                  faded_case{ "WN0/3kHz/S", 14, true, 69 },
                                  faded_case{ "WN1/3kHz/S", 16, true, 69 } });
}

// The same fields-unsure peaks refused where no candidate's code fits their first block
// (within 4 % of its LLR weight): here the first interleaver block carries Walsh
// symbols of random dibits under the right scrambler (symbols as the transmitter's,
// no codeword of either K), the blocks after it the data. Taken anyway, the burst
// would be reported with its first block wrong. (The start from WN0's data alone is off
// here: S blocks restart the scrambler within its period.)
TEST(M110dReceiver, OneSuperframePreambleFieldsUnsureRefusedWhereNoCodeFitsItsFirstBlock)
{
    const std::vector<cf>& psk8 = m110d_constellation(3);
    const auto& trinomial = m110d_trinomial_sequence();
    m110d_receiver_config config;
    config.start_wn0_from_data = false;
    for (const faded_case& c : { faded_case{ "WN0/3kHz/S", 17, false, 76 },
                                 faded_case{ "WN0/3kHz/S", 14, true, 69 } }) {
        const m110d_mode mode = mode_of(c.name);
        const std::vector<uint8_t> data = random_bytes(24, 97);
        const m110d_transmit_options options;
        std::vector<cf> points =
            m110d_transmit_points(mode, data.data(), data.size(), options);
        const size_t data_from = m110d_preamble(mode,
                                                options.timing.preamble,
                                                options.constraint_length,
                                                options.readings)
                                     .size();
        std::mt19937 rng(uint32_t(c.seed));
        for (unsigned s = 0; s < mode.frames_per_block; ++s) {
            const unsigned dibit = unsigned(rng() & 3);
            for (unsigned j = 0; j < m110d_walsh_data_chips; ++j) {
                const size_t chip = size_t(s) * m110d_walsh_data_chips + j;
                points[data_from + chip] =
                    psk8[(m110d_wn0_walsh_chip(dibit, j) +
                          trinomial[chip % m110d_trinomial_period]) %
                         8];
            }
        }
        const std::vector<chan::watterson_path> two_paths = { { 0.5, 0.0, 0.0, 0.0 },
                                                              { 0.5, 0.0, 0.0, 2e-3 } };
        const std::vector<m110d_burst> found =
            faded_points_received(mode,
                                  points,
                                  c.dip_db,
                                  c.two ? two_paths : std::vector<chan::watterson_path>{},
                                  c.seed,
                                  config);
        EXPECT_TRUE(found.empty()) << c.name << " " << c.seed;
        // With the data whole the same peak is taken (the test before).
    }
}

// A preamble of one super-frame lost whole (60 dB under the data) before WN0 data in an
// L interleaver: no peak of any search is near it, and the burst is started from its
// data (start_wn0_from_data: the products of chips 4 apart under the Trinomial
// scrambler stand out, the data's first period is found as the one with no Walsh
// symbols before it, the WID read among WN0's by its first block). Without it, nothing.
TEST(M110dReceiver, Wn0BurstWithItsPreambleLostStartedFromItsData)
{
    const m110d_mode mode = mode_of("WN0/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(60, 98);
    m110d_receiver_config without;
    without.start_wn0_from_data = false;
    for (uint64_t seed : { 50u, 51u, 52u }) {
        const std::vector<m110d_burst> found =
            faded_preamble_received(mode, data, 60, {}, seed);
        expect_one_burst_whole(found, mode, data, mode.name().c_str(), seed);
        EXPECT_TRUE(faded_preamble_received(mode, data, 60, {}, seed, without).empty())
            << seed;
    }
    // On F.1487 poor's two paths, static here (the data from either path's timing).
    const std::vector<chan::watterson_path> two_paths = { { 0.5, 0.0, 0.0, 0.0 },
                                                          { 0.5, 0.0, 0.0, 2e-3 } };
    const std::vector<m110d_burst> found =
        faded_preamble_received(mode, data, 60, two_paths, 53);
    expect_one_burst_whole(found, mode, data, mode.name().c_str(), 53);
}

// The same for WN1 (start_from_mini_probes): the mini-probes' turns from symbol to
// symbol stand out folded over the frames, the data's first probe is found as the one
// with no probes before it, the WID read among the frame structure's by its first block.
// Without it, nothing.
TEST(M110dReceiver, Wn1BurstWithItsPreambleLostStartedFromItsData)
{
    const m110d_mode mode = mode_of("WN1/3kHz/L");
    const std::vector<uint8_t> data = random_bytes(mode.input_bits_per_block / 8, 97);
    m110d_receiver_config without;
    without.start_from_mini_probes = false;
    for (uint64_t seed : { 50u, 51u, 52u }) {
        const std::vector<m110d_burst> found =
            faded_preamble_received(mode, data, 60, {}, seed, {}, 20);
        expect_one_burst_whole(found, mode, data, mode.name().c_str(), seed);
        EXPECT_TRUE(
            faded_preamble_received(mode, data, 60, {}, seed, without, 20).empty())
            << seed;
    }
    // Another frame structure (96 + 32 symbols), its fields read as M where the
    // preamble was: the block's boundary probe and the interleavers tried in turn.
    const m110d_mode wn3 = mode_of("WN3/3kHz/L");
    const std::vector<uint8_t> wn3_data = random_bytes(wn3.input_bits_per_block / 8, 98);
    expect_one_burst_whole(faded_preamble_received(wn3, wn3_data, 60, {}, 53, {}, -20),
                           wn3,
                           wn3_data,
                           wn3.name().c_str(),
                           53);
}

// A WN0 burst whose EOM is lost runs on into the next transmission: here the first is
// cut after its first L block (7.68 s; its EOM would have been in the second) and the
// next follows at once, its preamble lost whole (60 dB under its data), as in a fade
// the search inside a burst does not cut at. The next block then reads the next
// transmission's preamble and data under the first one's scrambler, its Walsh symbols
// as noise: the burst ends before it (wn0_end_at_foreign_block) and the search goes over
// it again, which starts the next burst from its data. Before, the signal-loss test
// waited for three such blocks and the second transmission was lost in the first.
TEST(M110dReceiver, Wn0BurstWithoutItsEomEndsBeforeTheNextTransmission)
{
    const m110d_mode mode = mode_of("WN0/3kHz/L");
    const std::vector<uint8_t> first = random_bytes(100, 101),
                               second = random_bytes(60, 102);
    const m110d_transmit_options options;
    const size_t preamble =
        m110d_preamble(
            mode, options.timing.preamble, options.constraint_length, options.readings)
            .size();
    const size_t block_chips = size_t(mode.frames_per_block) * m110d_walsh_data_chips;
    std::vector<cf> points = m110d_transmit_points(mode, first.data(), first.size());
    ASSERT_GT(points.size(), preamble + block_chips);
    points.resize(preamble + block_chips);
    const size_t next_from = points.size();
    const std::vector<cf> next =
        m110d_transmit_points(mode, second.data(), second.size());
    points.insert(points.end(), next.begin(), next.end());
    const float dip = float(std::pow(10.0, -60.0 / 20));
    for (size_t i = next_from; i < next_from + preamble; ++i)
        points[i] *= dip;
    const std::vector<float> audio =
        through_channel(padded_audio(points, 9600), 9600, 4, 0, 103);
    const std::vector<m110d_burst> bursts = receive_audio(audio);
    ASSERT_EQ(bursts.size(), 2u);
    EXPECT_FALSE(bursts[0].eom);
    EXPECT_TRUE(bursts[0].bytes_bad);
    EXPECT_EQ(bursts[0].bytes,
              std::vector<uint8_t>(first.begin(),
                                   first.begin() + mode.input_bits_per_block / 8));
    EXPECT_EQ(bursts[1].bytes, second);
    EXPECT_TRUE(bursts[1].eom);
    m110d_receiver_config without;
    without.wn0_end_at_foreign_block = false;
    for (const m110d_burst& b : receive_audio(audio, without))
        EXPECT_NE(b.bytes, second);
}

// Settings that cannot work are refused with their name.
TEST(M110dReceiver, BadSettingsRefused)
{
    const auto refused = [](const std::function<void(m110d_receiver_config&)>& set,
                            const std::string& name) {
        m110d_receiver_config c;
        set(c);
        try {
            m110d_receiver rx(c);
            ADD_FAILURE() << name << " taken";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    };
    refused([](m110d_receiver_config& c) { c.threads = 0; }, "threads");
    refused([](m110d_receiver_config& c) { c.weak_max_offset_hz = -1; },
            "weak_max_offset_hz");
    refused([](m110d_receiver_config& c) { c.weak_max_offset_hz = std::nan(""); },
            "weak_max_offset_hz");
}

TEST(M110dReceiver, NoiseAloneStartsNothing)
{
    for (bool find : { false, true }) {
        m110d_receiver_config config;
        config.find_preamble_readings = find;
        m110d_receiver rx(config);
        const auto bursts = bursts_from_noise<m110d_receiver, m110d_burst>(rx, 60);
        EXPECT_TRUE(bursts.empty());
        EXPECT_FALSE(rx.carrier_detected());
        EXPECT_EQ(rx.refused_preambles(), 0u);
    }
}

// A WID announcing a reserved WN (14) or failing its checks is refused; a good
// transmission after it is received.
TEST(M110dReceiver, ReservedWidRefusedCleanly)
{
    const m110d_mode mode = mode_of("WN8/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(100, 10);
    const m110d_readings readings;
    const std::vector<cf>& psk8 = m110d_constellation(3);
    std::vector<cf> all;
    for (const std::array<uint8_t, 5>& wid :
         { m110d_wid_dibits({ 14, m110d_interleaver::short_, 7 }),
           std::array<uint8_t, 5>{ 0, 0, 0, 0, 1 } }) {
        std::vector<cf> points = m110d_transmit_points(mode, data.data(), data.size());
        const std::vector<uint8_t> section = m110d_preamble_section(
            { wid.begin(), wid.end() }, m110d_pn_table::wid, 32, readings.pn_alignment);
        for (size_t j = 0; j < section.size(); ++j)
            points[5 * 32 + j] = psk8[section[j]];
        all.insert(all.end(), points.begin(), points.end());
        all.resize(all.size() + 2400, cf());
    }
    const std::vector<cf> good = m110d_transmit_points(mode, data.data(), data.size());
    all.insert(all.end(), good.begin(), good.end());
    const std::vector<float> audio =
        through_channel(padded_audio(all, 9600), 9600, 35, 20, 11);

    std::vector<float> padded = audio;
    padded.resize(padded.size() + 4800, 0.0f);
    serial_tone_frontend_config fc;
    serial_tone_frontend front(fc);
    std::vector<cf> bb;
    front.process(padded.data(), padded.size(), bb);
    // On the last super-frame alone, the two; integrated over super-frames (default),
    // the refused bursts' data are searched too, and their mini-probes (the same every
    // frame) can add up over the comb to a detection, refused as well.
    m110d_receiver_config alone;
    alone.integrate_superframes = 0;
    for (const m110d_receiver_config& config : { alone, m110d_receiver_config{} }) {
        m110d_receiver rx(config);
        std::vector<m110d_burst> bursts;
        rx.process(bb.data(), bb.size(), bursts);
        if (config.integrate_superframes == 0)
            EXPECT_EQ(rx.refused_preambles(), 2u);
        else
            EXPECT_GE(rx.refused_preambles(), 2u);
        expect_one_whole_burst(bursts, mode, data);
    }
}

// A burst cut short ends without its EOM (its bytes bad); the next is received whole.
TEST(M110dReceiver, CutBurstEndsAndTheNextIsReceived)
{
    for (const char* name : { "WN10/3kHz/S", "WN0/3kHz/S" }) {
        const m110d_mode mode = mode_of(name);
        const std::vector<uint8_t> data = random_bytes(mode.wn == 0 ? 60 : 2000, 12);
        std::vector<cf> points = m110d_transmit_points(mode, data.data(), data.size());
        points.resize(points.size() / 2);
        points.resize(points.size() + 2 * 2400, cf()); // two seconds of silence
        const std::vector<cf> whole =
            m110d_transmit_points(mode, data.data(), data.size());
        points.insert(points.end(), whole.begin(), whole.end());
        const std::vector<m110d_burst> bursts =
            receive_audio(through_channel(padded_audio(points, 9600), 9600, 35, 20, 13));
        ASSERT_EQ(bursts.size(), 2u) << name;
        EXPECT_FALSE(bursts[0].eom) << name;
        EXPECT_TRUE(bursts[0].bytes_bad) << name;
        EXPECT_GT(bursts[0].bytes.size(), 0u) << name;
        EXPECT_EQ(bursts[1].bytes, data) << name;
        EXPECT_TRUE(bursts[1].eom) << name;
    }
}

// A new preamble in the middle of a burst ends it and starts its own.
TEST(M110dReceiver, NewPreambleCutsABurst)
{
    const m110d_mode first = mode_of("WN7/3kHz/S"), second = mode_of("WN9/3kHz/S");
    const std::vector<uint8_t> a = random_bytes(3000, 14), b = random_bytes(500, 15);
    std::vector<cf> points = m110d_transmit_points(first, a.data(), a.size());
    points.resize(points.size() / 2);
    const std::vector<cf> next = m110d_transmit_points(second, b.data(), b.size());
    points.insert(points.end(), next.begin(), next.end());
    const std::vector<m110d_burst> bursts =
        receive_audio(through_channel(padded_audio(points, 9600), 9600, 35, 20, 16));
    ASSERT_EQ(bursts.size(), 2u);
    EXPECT_EQ(bursts[0].mode, first.name());
    EXPECT_FALSE(bursts[0].eom);
    EXPECT_EQ(bursts[1].mode, second.name());
    EXPECT_TRUE(bursts[1].eom);
    EXPECT_EQ(bursts[1].bytes, b);
}

// NaN and infinities in the input, and audio clipped hard: no crash, no wedge; the
// transmission after them is received.
TEST(M110dReceiver, NanAndClippedInput)
{
    const m110d_mode mode = mode_of("WN6/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(200, 17);
    const std::vector<float> clean = over_the_air(mode, data, 35, 20, 18);
    // Baseband with NaN and infinity straight into the receiver.
    {
        m110d_receiver rx;
        std::vector<m110d_burst> bursts;
        std::vector<cf> bad(96000, cf(std::numeric_limits<float>::quiet_NaN(), 1.0f));
        for (size_t k = 0; k < bad.size(); k += 7)
            bad[k] = cf(std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity());
        rx.process(bad.data(), bad.size(), bursts);
        serial_tone_frontend_config fc;
        serial_tone_frontend front(fc);
        std::vector<float> audio = clean;
        audio.resize(audio.size() + 4800, 0.0f);
        std::vector<cf> bb;
        front.process(audio.data(), audio.size(), bb);
        rx.process(bb.data(), bb.size(), bursts);
        expect_one_whole_burst(bursts, mode, data);
    }
    // Clipped at a tenth of the peak, NaN in the middle of the burst.
    std::vector<float> clipped = clean;
    for (float& v : clipped)
        v = std::max(-0.05f, std::min(0.05f, v)) * 20;
    const std::vector<m110d_burst> bursts = receive_audio(clipped);
    EXPECT_LE(bursts.size(), 1u);
    std::vector<float> holed = clean;
    for (size_t k = holed.size() / 2; k < holed.size() / 2 + 2000; ++k)
        holed[k] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> twice = holed;
    twice.insert(twice.end(), clean.begin(), clean.end());
    const std::vector<m110d_burst> after_nan = receive_audio(twice);
    ASSERT_GE(after_nan.size(), 1u);
    EXPECT_EQ(after_nan.back().bytes, data);
    EXPECT_TRUE(after_nan.back().eom);
}

// deliver_per_block: the pieces and the last entry make the burst's bytes.
// The symbol tap for displays: every data symbol of the burst, PSK descrambled onto the
// mode's set (WN6, QPSK: the 8PSK points 0, 2, 4, 6 as transcoded), WN0's chips onto +-1.
// Each data symbol once, whether the caller keeps the tap whole or empties it after
// every piece of input (as the block does) leaving what may still be taken back.
TEST(M110dReceiver, SymbolTap)
{
    for (const char* name : { "WN6/3kHz/S", "WN0/3kHz/S" })
        for (const size_t piece : { size_t(4096), size_t(97) })
            for (const bool drained : { false, true }) {
                const m110d_mode mode = mode_of(name);
                const std::vector<uint8_t> data =
                    random_bytes(mode.wn == 0 ? 8 : 300, 21);
                const std::vector<float> audio = over_the_air(mode, data, 35, 10, 4);
                m110d_receiver_config config;
                config.decoder_passes = 1;
                m110d_receiver rx(config);
                std::vector<cf> tap, symbols;
                rx.tap_symbols(&tap);
                serial_tone_frontend front({});
                std::vector<m110d_burst> bursts;
                std::vector<cf> bb;
                std::vector<float> padded = audio;
                padded.resize(audio.size() + 4800, 0.0f);
                for (size_t k = 0; k < padded.size(); k += piece) {
                    bb.clear();
                    front.process(
                        padded.data() + k, std::min(piece, padded.size() - k), bb);
                    rx.process(bb.data(), bb.size(), bursts);
                    if (drained) {
                        const auto settled =
                            tap.end() - long(std::min(rx.tapped_unsettled(), tap.size()));
                        symbols.insert(symbols.end(), tap.begin(), settled);
                        tap.erase(tap.begin(), settled);
                    }
                }
                symbols.insert(symbols.end(), tap.begin(), tap.end());
                expect_one_whole_burst(bursts, mode, data);
                const size_t blocks = m110d_transmission_time(mode, data.size()).units;
                EXPECT_EQ(symbols.size(),
                          blocks * mode.frames_per_block * mode.data_symbols)
                    << name << ", pieces of " << piece << (drained ? ", drained" : "");
                for (const cf& z : symbols) {
                    const double quarter = std::arg(z) / (M_PI / (mode.wn == 0 ? 1 : 2));
                    ASSERT_NEAR(quarter, std::round(quarter), 0.2) << name;
                    ASSERT_NEAR(std::abs(z), 1.0, 0.3) << name;
                }
            }
}

TEST(M110dReceiver, DeliverPerBlock)
{
    const m110d_mode mode = mode_of("WN8/3kHz/US");
    const std::vector<uint8_t> data = random_bytes(1500, 19);
    m110d_receiver_config config;
    config.deliver_per_block = true;
    const std::vector<m110d_burst> bursts =
        receive_audio(over_the_air(mode, data, 35, 20, 20), config);
    ASSERT_GE(bursts.size(), 3u);
    std::vector<uint8_t> got;
    for (size_t i = 0; i < bursts.size(); ++i) {
        EXPECT_EQ(bursts[i].continues, i + 1 < bursts.size());
        got.insert(got.end(), bursts[i].bytes.begin(), bursts[i].bytes.end());
    }
    EXPECT_TRUE(bursts.back().eom);
    EXPECT_EQ(got, data);
}
