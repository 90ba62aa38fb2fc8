/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// STANAG 5069 (110D App D) receive side after the equaliser: the soft demapper, the
// count and WID fields read from preamble chips under every reading, and WN0's Walsh
// symbols demapped, each through the block decoder back to the bytes where it applies.
#include "phy/m110d_decoder.h"
#include "phy/m110d_transmitter.h"
#include "phy/m110d_waveform.h"
#include "phy/serial_tone_presence.h"

#include "m110d_test_support.h"
#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;
using namespace m110d_test;

TEST(M110dDecoder, Every3khzModeDecodesThroughTheSoftDemapperInNoise)
{
    // Data symbols with white noise at 3 dB above the mode's Table D-LXIV AWGN row
    // (signal: the frames' mean power), demapped (max-log LLRs, the scrambler undone)
    // and block-decoded: the bytes and the EOM come back, with K = 7 and K = 9.
    const int awgn_row_db[14] = { -6, -3, 0, 3, 5, 6, 9, 13, 16, 19, 21, 24, 30, 6 };
    const std::vector<uint8_t> data = random_bytes(400, 31);
    std::mt19937 rng(8);
    for (const m110d_mode& m : modes_3khz()) {
        if (m.wn == 0 || m.interleaver != m110d_interleaver::short_)
            continue;
        for (unsigned k : { 7u, 9u }) {
            m110d_transmit_options o;
            o.constraint_length = k;
            const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
            const double sigma2 =
                m110d_frame_power(m) * std::pow(10.0, -(awgn_row_db[m.wn] + 3) / 10.0);
            std::normal_distribution<double> noise(0.0, std::sqrt(sigma2 / 2));
            const m110d_demapper demapper(m, o.readings);
            const unsigned nb = demapper.bits_per_symbol();
            std::vector<float> llr;
            const size_t frame = m.data_symbols + m.probe_symbols;
            for (size_t at = preamble_symbols(m, o) + m.probe_symbols;
                 at + frame <= points.size();
                 at += frame)
                for (unsigned i = 0; i < m.data_symbols; ++i) {
                    const std::complex<double> sent(points[at + i]);
                    const std::complex<double> u =
                        sent + std::complex<double>(noise(rng), noise(rng));
                    float bits[8];
                    demapper.demap(u, i, sigma2, bits);
                    llr.insert(llr.end(), bits, bits + nb);
                }
            expect_message(
                decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
        }
    }
}

TEST(M110dDecoder, DemapperDecisionsAreThePointsSent)
{
    const std::vector<uint8_t> data = random_bytes(300, 3);
    for (unsigned wn = 1; wn <= m110d_max_wn; ++wn) {
        const m110d_mode m = *m110d_mode_for(3, wn, m110d_interleaver::ultra_short);
        const auto points = m110d_transmit_points(m, data.data(), data.size());
        const std::vector<uint8_t> channel =
            m110d_channel_bits(m, data.data(), data.size());
        const m110d_demapper demapper(m);
        const size_t frame = m.data_symbols + m.probe_symbols;
        size_t next_bit = 0;
        for (size_t at = 10 * 32 + m.probe_symbols; at + frame <= points.size();
             at += frame)
            for (unsigned i = 0; i < m.data_symbols; ++i) {
                float llr[8];
                const std::complex<double> sent(points[at + i]);
                ASSERT_LT(std::abs(demapper.demap(sent, i, 1e-2, llr) - sent), 1e-6)
                    << m.name();
                for (unsigned b = 0; b < demapper.bits_per_symbol(); ++b, ++next_bit)
                    ASSERT_EQ(llr[b] < 0, channel[next_bit] == 1)
                        << m.name() << " symbol " << i;
                // The label's point is the one sent.
                unsigned label = 0;
                for (unsigned b = 0; b < demapper.bits_per_symbol(); ++b)
                    label =
                        label << 1 | channel[next_bit - demapper.bits_per_symbol() + b];
                ASSERT_LT(std::abs(demapper.point_of(label, i) - sent), 1e-6) << m.name();
                // PSK unscrambled lands on the transcoded symbol; QAM stays.
                const std::complex<double> u = demapper.unscrambled(sent, i);
                const auto& table = m110d_constellation(demapper.bits_per_symbol());
                const unsigned symbol = m110d_map_bits(label, demapper.bits_per_symbol());
                if (demapper.bits_per_symbol() <= 3)
                    ASSERT_LT(std::abs(u - std::complex<double>(table[symbol])), 1e-6)
                        << m.name();
                else
                    ASSERT_EQ(u, sent);
            }
        EXPECT_EQ(next_bit, channel.size()) << m.name();
    }
    EXPECT_THROW(m110d_demapper(*m110d_mode_by_name("WN0/3kHz/S")),
                 std::invalid_argument);
}

namespace {

// The received chips of a transmission's super-frame s (from 0): its count and WID
// sections, with complex white noise of variance sigma2 per chip.
std::vector<cf> fields_of(const std::vector<cf>& points,
                          const m110d_transmit_options& o,
                          unsigned s,
                          double sigma2,
                          std::mt19937& rng)
{
    const unsigned walsh = 32; // 3 kHz
    const size_t superframe = o.timing.preamble.superframes == 1 ? 10 : 18;
    const size_t fixed = superframe - 9;
    const size_t at = (o.timing.preamble.tlc_blocks + s * superframe + fixed) * walsh;
    std::normal_distribution<float> noise(0.0f, float(std::sqrt(sigma2 / 2)));
    std::vector<cf> y(points.begin() + long(at), points.begin() + long(at + 9 * walsh));
    for (cf& c : y)
        c += cf(noise(rng), noise(rng));
    return y;
}

} // namespace

TEST(M110dDecoder, ReadsCountAndWidUnderEveryReadingAtMinus3Db)
{
    // Chip SNR -3 dB: each 32-chip Walsh symbol is decided at 12 dB.
    std::mt19937 rng(4);
    const std::vector<uint8_t> data = random_bytes(10, 1);
    for (const m110d_mode& m : modes_3khz())
        for (unsigned k : { 7u, 9u })
            for (auto alignment :
                 { m110d_pn_alignment::per_symbol, m110d_pn_alignment::continuous })
                for (auto parity :
                     { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
                    m110d_transmit_options o;
                    o.constraint_length = k;
                    o.readings.pn_alignment = alignment;
                    o.readings.wid_parity = parity;
                    o.timing.preamble.tlc_blocks = 1;
                    o.timing.preamble.superframes = 3;
                    const auto points =
                        m110d_transmit_points(m, data.data(), data.size(), o);
                    const std::string what = m.name() + " K" + std::to_string(k) + " " +
                                             m110d_readings_text(o.readings);
                    for (unsigned s = 0; s < 3; ++s) {
                        const std::vector<cf> y = fields_of(points, o, s, 2.0, rng);
                        const auto f = m110d_read_fields(y.data(), 32, alignment, parity);
                        ASSERT_TRUE(f) << what << " super-frame " << s;
                        EXPECT_EQ(f->count, 2 - s) << what;
                        EXPECT_EQ(f->wid.wn, m.wn) << what;
                        EXPECT_EQ(f->wid.interleaver, m.interleaver) << what;
                        EXPECT_EQ(f->wid.constraint_length, k) << what;
                        // Not told the readings: the alignment is found; the parity
                        // reading where it changes d2, else the checksum one.
                        const auto any = m110d_read_fields_any_reading(y.data(), 32);
                        ASSERT_TRUE(any) << what;
                        EXPECT_EQ(any->alignment, alignment) << what;
                        EXPECT_EQ(any->count, f->count) << what;
                        EXPECT_EQ(any->wid.wn, m.wn) << what;
                        const bool d2_differs =
                            ((m.wn >> 1) ^ (m.wn >> 2) ^ (m.wn >> 3)) & 1u;
                        EXPECT_EQ(any->parity,
                                  d2_differs ? parity : m110d_wid_parity::checksum)
                            << what;
                    }
                }
}

TEST(M110dDecoder, CountAloneIsTheCountTheFieldsRead)
{
    // The receiver refuses a preamble on its count chips before its WID is equalised
    // (a count other than 0): the count read alone must be the one the fields read
    // under either WID parity, and no fields read where it reads none. Fields of a
    // three super-frame preamble from clean to unreadable, and noise alone.
    std::mt19937 rng(12);
    const std::vector<uint8_t> data = random_bytes(10, 3);
    const m110d_mode m = *m110d_mode_by_name("WN8/3kHz/L");
    unsigned read = 0, unread = 0;
    for (auto alignment :
         { m110d_pn_alignment::per_symbol, m110d_pn_alignment::continuous }) {
        m110d_transmit_options o;
        o.readings.pn_alignment = alignment;
        o.timing.preamble.tlc_blocks = 1;
        o.timing.preamble.superframes = 3;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        std::normal_distribution<float> noise(0.0f, 1.0f);
        for (double sigma2 : { 0.0, 4.0, 16.0, 64.0, -1.0 })
            for (unsigned trial = 0; trial < 60; ++trial) {
                std::vector<cf> y(9 * 32);
                if (sigma2 < 0)
                    for (cf& c : y)
                        c = cf(noise(rng), noise(rng));
                else
                    y = fields_of(points, o, trial % 3, sigma2, rng);
                const std::optional<unsigned> count =
                    m110d_read_count(y.data(), 32, alignment);
                for (auto parity :
                     { m110d_wid_parity::checksum, m110d_wid_parity::caption_d2_zero }) {
                    const auto f = m110d_read_fields(y.data(), 32, alignment, parity);
                    if (!f)
                        continue;
                    ASSERT_TRUE(count) << sigma2 << " trial " << trial;
                    EXPECT_EQ(*count, f->count) << sigma2 << " trial " << trial;
                }
                ++(count ? read : unread);
            }
    }
    // Both cases were met.
    EXPECT_GT(read, 0u);
    EXPECT_GT(unread, 0u);
}

TEST(M110dDecoder, SingleSuperframeFieldsAndNoiseAlone)
{
    std::mt19937 rng(9);
    const m110d_mode m = *m110d_mode_by_name("WN13/3kHz/M");
    const std::vector<uint8_t> data = random_bytes(10, 2);
    const m110d_transmit_options o; // N = 0, M = 1
    const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
    const std::vector<cf> y = fields_of(points, o, 0, 1.0, rng);
    const auto f = m110d_read_fields_any_reading(y.data(), 32);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->count, 0u);
    EXPECT_EQ(f->wid.wn, 13u);
    EXPECT_EQ(f->wid.interleaver, m110d_interleaver::medium);
    // Noise alone rarely passes both checks (9 parity bits and the reserved WNs), and
    // then only with a small correlation.
    std::normal_distribution<float> noise(0.0f, 1.0f);
    unsigned passed = 0;
    for (unsigned trial = 0; trial < 200; ++trial) {
        std::vector<cf> z(9 * 32);
        for (cf& c : z)
            c = cf(noise(rng), noise(rng));
        if (auto g = m110d_read_fields(z.data(),
                                       32,
                                       m110d_pn_alignment::per_symbol,
                                       m110d_wid_parity::checksum)) {
            ++passed;
            EXPECT_LT(g->correlation, f->correlation / 2);
        }
    }
    EXPECT_LT(passed, 20u);
}

TEST(M110dDecoder, Wn0WalshSymbolsDecodeAtMinus3Db)
{
    // WN0 chips at -3 dB (the Table D-LXIV AWGN row is -6 dB in 3 kHz): soft dibits from
    // the four patterns under the Trinomial scrambler, then the block decoder.
    const std::vector<uint8_t> data = random_bytes(120, 6);
    std::mt19937 rng(12);
    const double sigma2 = 2.0;
    std::normal_distribution<float> noise(0.0f, float(std::sqrt(sigma2 / 2)));
    for (const m110d_mode& m : modes_3khz()) {
        if (m.wn != 0)
            continue;
        for (unsigned k : { 7u, 9u }) {
            m110d_transmit_options o;
            o.constraint_length = k;
            const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
            std::vector<float> llr;
            size_t symbol = 0;
            for (size_t at = preamble_symbols(m, o); at + 32 <= points.size();
                 at += 32, ++symbol) {
                std::vector<cf> y(points.begin() + long(at),
                                  points.begin() + long(at + 32));
                for (cf& c : y)
                    c += cf(noise(rng), noise(rng));
                float bits[2];
                m110d_wn0_demap(y.data(), symbol % m.frames_per_block, sigma2, bits);
                llr.insert(llr.end(), bits, bits + 2);
            }
            // One coded dibit per Walsh symbol: as many LLRs as channel bits.
            EXPECT_EQ(llr.size(),
                      m110d_channel_bits(m, data.data(), data.size(), o).size())
                << m.name();
            expect_message(
                decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
        }
    }
}

// A block's reliability (minus the log of its bits expected wrong, from a max-log MAP
// pass) against the bits it really got wrong: channel-bit LLRs of antipodal bits in
// white noise (exact log-likelihood ratios), WN6/3kHz/S with K = 7 and K = 9, ten
// blocks per Es/N0. Clean blocks are reliable, failing ones not, and where bits go
// wrong the count expected is near the count wrong (K = 7: 0 wrong and 0.0008
// expected at 4 dB, 496 and 394 at 1 dB, 5158 and 3120 at -1 dB).
TEST(M110dDecoder, BlockReliabilityIsItsExpectedWrongBits)
{
    const m110d_mode mode = *m110d_mode_by_name("WN6/3kHz/S");
    const std::vector<uint32_t> order = m110d_fetch_order(mode);
    std::mt19937 rng(23);
    std::bernoulli_distribution coin(0.5);
    for (unsigned k : { 7u, 9u })
        for (double es_n0_db : { 4.0, 1.0, 0.0, -1.0 }) {
            const double sigma2 = 0.5 * std::pow(10.0, -es_n0_db / 10.0); // real noise
            std::normal_distribution<double> noise(0.0, std::sqrt(sigma2));
            m110d_block_decoder decoder(mode, k, tail_biting_start::from_full_register);
            double expected = 0, least = std::numeric_limits<double>::infinity();
            size_t wrong = 0;
            for (unsigned block = 0; block < 10; ++block) {
                std::vector<uint8_t> user(mode.input_bits_per_block);
                for (uint8_t& b : user)
                    b = coin(rng);
                const std::vector<uint8_t> channel = m110d_block_channel_bits(
                    mode, user.data(), order, k, tail_biting_start::from_full_register);
                std::vector<float> llr;
                for (uint8_t c : channel)
                    llr.push_back(float(2.0 * ((c ? -1.0 : 1.0) + noise(rng)) / sigma2));
                std::vector<uint8_t> bits;
                decoder.decode(llr.data(), bits);
                for (size_t i = 0; i < user.size(); ++i)
                    wrong += bits[i] != user[i];
                const double r = decoder.reliability();
                least = std::min(least, r);
                expected += std::exp(-r);
            }
            const std::string what =
                "K" + std::to_string(k) + " " + std::to_string(es_n0_db) + " dB";
            if (es_n0_db > 3) {
                EXPECT_EQ(wrong, 0u) << what;
                EXPECT_GT(least, 3.0) << what;
            } else {
                EXPECT_GT(wrong, 0u) << what;
                EXPECT_LT(least, 1.0) << what;
            }
            if (wrong >= 20) {
                EXPECT_GT(expected, wrong / 3.0) << what;
                EXPECT_LT(expected, wrong * 3.0) << what;
            }
        }
}

// The QAM demapper's LLRs and decision (found from each point's neighbour lists) are
// exactly the ones a search over every point gives, for 32QAM to 256QAM, near points,
// between them and far outside, under every scrambler value; decide() agrees.
TEST(M110dDemapper, QamLlrsAreTheWholeSearchsExactly)
{
    std::mt19937 rng(12);
    std::uniform_real_distribution<double> spread(-1.6, 1.6);
    std::normal_distribution<double> near(0.0, 0.05);
    for (const char* name : { "WN9/3kHz/L", "WN10/3kHz/L", "WN12/3kHz/L" }) {
        const m110d_mode mode = *m110d_mode_by_name(name);
        const m110d_demapper demapper(mode);
        const unsigned nb = demapper.bits_per_symbol();
        ASSERT_GE(nb, 5u) << name;
        for (int trial = 0; trial < 4000; ++trial) {
            const unsigned i = unsigned(trial) % mode.data_symbols;
            std::complex<double> u(spread(rng), spread(rng));
            if (trial % 2)
                u = demapper.point_of(unsigned(trial * 7) % (1u << nb), i) +
                    std::complex<double>(near(rng), near(rng));
            double best[8][2];
            for (auto& b : best)
                b[0] = b[1] = std::numeric_limits<double>::infinity();
            double nearest = std::numeric_limits<double>::infinity();
            for (unsigned label = 0; label < (1u << nb); ++label) {
                const double d = std::norm(u - demapper.point_of(label, i));
                nearest = std::min(nearest, d);
                for (unsigned b = 0; b < nb; ++b) {
                    double& slot = best[b][(label >> (nb - 1 - b)) & 1];
                    slot = std::min(slot, d);
                }
            }
            float llr[8];
            const std::complex<double> decision = demapper.demap(u, i, 0.1, llr);
            EXPECT_EQ(std::norm(u - decision), nearest) << name << " " << trial;
            EXPECT_EQ(demapper.decide(u, i), decision) << name << " " << trial;
            for (unsigned b = 0; b < nb; ++b)
                ASSERT_EQ(llr[b], float((best[b][1] - best[b][0]) * (1.0 / 0.1)))
                    << name << " trial " << trial << " bit " << b;
        }
    }
}

// The QAM nearest point (found among the few points a grid square can hold nearest) is
// the whole search's, the first by number where two are equally near: for 16QAM to
// 256QAM, at random, exactly half-way between every two points (ties), on and beside
// the grid's lines, far outside it and not finite.
TEST(M110dDemapper, QamDecisionIsTheWholeSearchsFirstNearest)
{
    std::mt19937 rng(31);
    std::uniform_real_distribution<double> spread(-2.5, 2.5);
    for (const char* name :
         { "WN8/3kHz/L", "WN9/3kHz/L", "WN10/3kHz/L", "WN12/3kHz/L" }) {
        const m110d_mode mode = *m110d_mode_by_name(name);
        const m110d_demapper demapper(mode);
        const unsigned nb = demapper.bits_per_symbol();
        ASSERT_GE(nb, 4u) << name;
        std::vector<std::complex<double>> points;
        for (std::complex<float> p : m110d_constellation(nb))
            points.emplace_back(p);
        std::vector<std::complex<double>> tries;
        for (size_t a = 0; a < points.size(); ++a)
            for (size_t b = a + 1; b < points.size(); b += 3)
                tries.push_back(0.5 * (points[a] + points[b]));
        for (int t = 0; t < 20000; ++t)
            tries.emplace_back(spread(rng), spread(rng));
        for (int t = -200; t <= 200; ++t)
            for (double y : { 0.0, 1.0 / 3, -0.7 })
                tries.emplace_back(t / 100.0, y);
        tries.emplace_back(40.0, -3.0);
        tries.emplace_back(std::numeric_limits<double>::quiet_NaN(), 0.0);
        for (const std::complex<double>& u : tries) {
            size_t first = 0;
            double nearest = std::numeric_limits<double>::infinity();
            for (size_t m = 0; m < points.size(); ++m)
                if (std::norm(u - points[m]) < nearest) {
                    nearest = std::norm(u - points[m]);
                    first = m;
                }
            // Data symbol 0 (its scrambler value maps labels onto points; the points
            // themselves stay).
            const std::complex<double> decided = demapper.decide(u, 0);
            if (std::isnan(u.real())) {
                EXPECT_EQ(decided, points[0]) << name;
                continue;
            }
            ASSERT_EQ(decided, points[first]) << name << " at " << u;
            float llr[8];
            ASSERT_EQ(demapper.demap(u, 0, 0.1, llr), points[first])
                << name << " at " << u;
        }
    }
}

// The EOM search's sliding word finds what reading 32 bits at every start finds, and
// leaves `searched` where that loop leaves it: bits arriving a block at a time, EOMs
// planted inside blocks, across their boundaries and at the very end, and none.
TEST(M110dDecoder, SlidingEomSearchIsTheWordAtEveryStart)
{
    std::mt19937 rng(31);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<uint8_t> all(4000);
        for (uint8_t& b : all)
            b = uint8_t(rng() & 1u);
        const size_t plant = trial == 0 ? all.size() - 32 : size_t(rng() % 3968);
        if (trial % 5 != 4) // every fifth: no EOM planted
            for (unsigned i = 0; i < 32; ++i)
                all[plant + i] = uint8_t((m110d_eom >> (31 - i)) & 1u);
        std::vector<uint8_t> bits;
        size_t slid_searched = 0, read_searched = 0;
        size_t slid_at = SIZE_MAX, read_at = SIZE_MAX;
        for (size_t block = 0; block < all.size(); block += 500) {
            bits.insert(
                bits.end(), all.begin() + long(block), all.begin() + long(block + 500));
            if (slid_at == SIZE_MAX)
                slid_at = find_bits_word(bits, slid_searched, m110d_eom, 32);
            for (; read_searched + 32 <= bits.size() && read_at == SIZE_MAX;
                 ++read_searched)
                if (bits_word(bits, read_searched) == m110d_eom)
                    read_at = read_searched;
            ASSERT_EQ(slid_at, read_at) << trial;
            ASSERT_EQ(slid_searched, read_searched) << trial;
        }
        if (trial % 5 != 4)
            EXPECT_LE(slid_at, plant) << trial;
    }
}
