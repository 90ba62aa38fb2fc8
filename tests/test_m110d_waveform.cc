/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Known answers for the STANAG 5069 (MIL-STD-188-110D App D) waveform elements at 3 kHz,
// from shared/spec/test_vectors.json (m110d_known_answers.h), and round trips of
// the elements a receiver inverts (count and WID fields, puncturing, interleaver, code).
#include "phy/m110d_decoder.h"
#include "phy/m110d_waveform.h"

#include "m110d_known_answers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;
namespace known = m110d_known;

namespace {

const m110d_interleaver interleavers[] = { m110d_interleaver::ultra_short,
                                           m110d_interleaver::short_,
                                           m110d_interleaver::medium,
                                           m110d_interleaver::long_ };

std::vector<m110d_mode> modes_3khz() { return m110d_modes_at(3); }

m110d_mode mode(unsigned wn, m110d_interleaver il) { return *m110d_mode_for(3, wn, il); }

std::vector<int> ints(const std::vector<uint8_t>& v)
{
    return std::vector<int>(v.begin(), v.end());
}

std::vector<uint8_t> dibits_of(const std::string& digits)
{
    std::vector<uint8_t> v;
    for (char c : digits)
        v.push_back(uint8_t(c - '0'));
    return v;
}

std::complex<float> psk8(int s) { return std::polar(1.0f, float(s * M_PI / 4)); }

void expect_points(const std::vector<std::complex<float>>& got,
                   const std::vector<std::complex<float>>& want,
                   const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_LT(std::abs(got[i] - want[i]), 1e-5f) << what << " symbol " << i;
}

std::vector<uint8_t> random_bits(size_t n, std::mt19937& rng)
{
    std::vector<uint8_t> bits(n);
    for (auto& b : bits)
        b = uint8_t(rng() & 1u);
    return bits;
}

} // namespace

TEST(M110dWaveform, TrinomialScramblerMatchesAll2048Values)
{
    const auto& t = m110d_trinomial_sequence();
    EXPECT_EQ(std::vector<int>(t.begin(), t.end()), known::trinomial_2048);
}

TEST(M110dWaveform, Wn0WalshSymbolMatchesTheWorkedExample)
{
    // D.5.1.4: dibit 01 at the start of an interleaver block.
    const auto& t = m110d_trinomial_sequence();
    std::vector<int> chips;
    for (unsigned j = 0; j < m110d_walsh_data_chips; ++j)
        chips.push_back((m110d_wn0_walsh_chip(1, j) + t[j]) % 8);
    EXPECT_EQ(chips, known::wn0_worked_example_dibit01);
}

TEST(M110dWaveform, InterleaverMatchesTheWorkedExample)
{
    const m110d_mode m = mode(1, m110d_interleaver::ultra_short);
    EXPECT_EQ(m110d_interleaver_bits(m), 192u);
    EXPECT_EQ(m110d_interleaver_increment(m), 25u);
    const std::vector<uint32_t> order = m110d_fetch_order(m);
    for (unsigned n = 0; n < known::interleaver_worked_example_WN1_3kHz_US.size(); ++n)
        EXPECT_EQ(order[size_t(known::interleaver_worked_example_WN1_3kHz_US[n])], n);
}

TEST(M110dWaveform, InterleaverSizesAndIncrementsMatchThe3khzTables)
{
    // m110d_waveforms.csv, 3 kHz: size and increment for US, S, M, L (0: none).
    const unsigned sizes[14][4] = {
        { 0, 80, 288, 1152 },           { 192, 768, 3072, 12288 },
        { 192, 768, 3072, 12288 },      { 192, 768, 3072, 12288 },
        { 192, 768, 3072, 12288 },      { 256, 1024, 4096, 16384 },
        { 512, 2048, 8192, 32768 },     { 768, 3072, 12288, 49152 },
        { 1024, 4096, 16384, 65536 },   { 1280, 5120, 20480, 81920 },
        { 1536, 6144, 24576, 98304 },   { 2160, 8640, 34560, 138240 },
        { 2880, 11520, 46080, 184320 }, { 512, 2048, 8192, 32768 },
    };
    const unsigned increments[14][4] = {
        { 0, 11, 37, 145 },         { 25, 97, 385, 1543 },     { 25, 97, 385, 1543 },
        { 25, 97, 385, 1549 },      { 25, 97, 385, 1549 },     { 33, 129, 513, 2081 },
        { 65, 257, 1025, 4161 },    { 97, 385, 1537, 6241 },   { 129, 513, 2049, 8321 },
        { 161, 641, 2561, 10403 },  { 193, 769, 3073, 12481 }, { 271, 1081, 4321, 17551 },
        { 361, 1441, 5761, 23401 }, { 65, 257, 1025, 4161 },
    };
    EXPECT_EQ(modes_3khz().size(), 14u * 4 - 1); // WN0 has no US
    for (unsigned wn = 0; wn <= 13; ++wn)
        for (unsigned i = 0; i < 4; ++i) {
            const auto m = m110d_mode_for(3, wn, interleavers[i]);
            ASSERT_EQ(bool(m), sizes[wn][i] != 0) << "WN" << wn << " " << i;
            if (!m)
                continue;
            EXPECT_EQ(m110d_interleaver_bits(*m), sizes[wn][i]) << m->name();
            EXPECT_EQ(m110d_interleaver_increment(*m), increments[wn][i]) << m->name();
        }
}

TEST(M110dWaveform, InterleaverIsAPermutationAndDeinterleaves)
{
    std::mt19937 rng(5);
    for (const m110d_mode& m : modes_3khz()) {
        const std::vector<uint32_t> order = m110d_fetch_order(m);
        std::vector<uint32_t> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        for (size_t k = 0; k < sorted.size(); ++k)
            ASSERT_EQ(sorted[k], k) << m.name();
        // Interleave (bit order[k] sent k-th), then put every received bit back.
        const std::vector<uint8_t> bits = random_bits(order.size(), rng);
        std::vector<uint8_t> sent(order.size()), back(order.size());
        for (size_t k = 0; k < order.size(); ++k)
            sent[k] = bits[order[k]];
        const uint32_t increment = m110d_interleaver_increment(m);
        for (size_t n = 0; n < order.size(); ++n)
            back[n] = sent[(uint64_t(n) * increment) %
                           order.size()]; // llr[n] = rx[n * inc mod size]
        EXPECT_EQ(back, bits) << m.name();
    }
}

TEST(M110dWaveform, CountFieldMatchesEveryKnownAnswerAndRoundTrips)
{
    for (unsigned c = 0; c < 32; ++c) {
        const auto d = m110d_count_dibits(c);
        EXPECT_EQ(ints({ d.begin(), d.end() }), ints(dibits_of(known::count_dibits[c])))
            << c;
        EXPECT_EQ(m110d_count_of(d), c);
        // Any one wrong dibit is caught (the parity spans every field bit).
        for (unsigned k = 0; k < 4; ++k)
            for (uint8_t e = 1; e < 4; ++e) {
                auto bad = d;
                bad[k] ^= e;
                EXPECT_FALSE(m110d_count_of(bad)) << c << " dibit " << k;
            }
    }
    EXPECT_THROW(m110d_count_dibits(32), std::invalid_argument);
}

TEST(M110dWaveform, WidFieldMatchesEveryKnownAnswerAndRoundTrips)
{
    const char* const names[] = { "US", "S", "M", "L" };
    ASSERT_EQ(known::wid_dibits.size(), 112u);
    for (const auto& [key, digits] : known::wid_dibits) {
        m110d_wid wid;
        char il[3] = {};
        ASSERT_EQ(
            std::sscanf(
                key.c_str(), "WN%u-%2[A-Z]-K%u", &wid.wn, il, &wid.constraint_length),
            3)
            << key;
        for (unsigned i = 0; i < 4; ++i)
            if (std::string(il) == names[i])
                wid.interleaver = m110d_interleaver(i);
        const auto d = m110d_wid_dibits(wid);
        EXPECT_EQ(ints({ d.begin(), d.end() }), ints(dibits_of(digits))) << key;
        const auto back = m110d_wid_of(d);
        ASSERT_TRUE(back) << key;
        EXPECT_EQ(back->wn, wid.wn);
        EXPECT_EQ(back->interleaver, wid.interleaver);
        EXPECT_EQ(back->constraint_length, wid.constraint_length);
        // The caption reading clears d2 (the lsb of w1) and is told apart by its check.
        const auto caption = m110d_wid_dibits(wid, m110d_wid_parity::caption_d2_zero);
        EXPECT_EQ(caption[3] & 1, 0) << key;
        EXPECT_TRUE(m110d_wid_of(caption, m110d_wid_parity::caption_d2_zero)) << key;
        EXPECT_EQ(caption == d, ((wid.wn >> 1) ^ (wid.wn >> 2) ^ (wid.wn >> 3)) % 2 == 0)
            << key;
    }
    // Reserved WNs 14 and 15 are refused on reception.
    for (unsigned wn : { 14u, 15u })
        EXPECT_FALSE(m110d_wid_of(m110d_wid_dibits({ wn, m110d_interleaver::long_, 7 })));
    EXPECT_THROW(m110d_wid_dibits({ 3, m110d_interleaver::long_, 8 }),
                 std::invalid_argument);
}

TEST(M110dWaveform, PreambleSectionsMatchKnownAnswersUnderBothPnReadings)
{
    const std::vector<uint8_t> fixed(m110d_fixed_dibits.begin(),
                                     m110d_fixed_dibits.end());
    const auto per_symbol = m110d_pn_alignment::per_symbol,
               continuous = m110d_pn_alignment::continuous;
    EXPECT_EQ(ints(m110d_preamble_section(fixed, m110d_pn_table::fixed, 32, per_symbol)),
              known::fixed_288_per_symbol);
    EXPECT_EQ(ints(m110d_preamble_section(fixed, m110d_pn_table::fixed, 32, continuous)),
              known::fixed_288_continuous);
    const std::vector<uint8_t> count0 = dibits_of("0000");
    EXPECT_EQ(ints(m110d_preamble_section(count0, m110d_pn_table::count, 32, per_symbol)),
              known::count_section_count0_per_symbol);
    EXPECT_EQ(ints(m110d_preamble_section(count0, m110d_pn_table::count, 32, continuous)),
              known::count_section_count0_continuous);
    const auto wid = m110d_wid_dibits({ 6, m110d_interleaver::short_, 7 });
    EXPECT_EQ(ints({ wid.begin(), wid.end() }), ints(dibits_of("12103")));
    const std::vector<uint8_t> wid_dibits(wid.begin(), wid.end());
    EXPECT_EQ(
        ints(m110d_preamble_section(wid_dibits, m110d_pn_table::wid, 32, per_symbol)),
        known::wid_section_WN6_S_K7_per_symbol);
    EXPECT_EQ(
        ints(m110d_preamble_section(wid_dibits, m110d_pn_table::wid, 32, continuous)),
        known::wid_section_WN6_S_K7_continuous);
    // TLC: every block the conjugated fixed PN (per symbol); the continuous reading
    // agrees on the first block only.
    const std::vector<uint8_t> tlc = m110d_tlc_section(3, 32, per_symbol);
    ASSERT_EQ(tlc.size(), 96u);
    for (unsigned b = 0; b < 3; ++b)
        EXPECT_EQ(ints({ tlc.begin() + 32 * b, tlc.begin() + 32 * (b + 1) }),
                  known::tlc_block_3kHz)
            << b;
    const std::vector<uint8_t> tlc_c = m110d_tlc_section(2, 32, continuous);
    EXPECT_EQ(ints({ tlc_c.begin(), tlc_c.begin() + 32 }), known::tlc_block_3kHz);
    EXPECT_NE(ints({ tlc_c.begin() + 32, tlc_c.end() }), known::tlc_block_3kHz);
}

TEST(M110dWaveform, PreambleIsTlcThenSuperframesCountingDown)
{
    const m110d_mode m = mode(6, m110d_interleaver::short_);
    for (auto alignment :
         { m110d_pn_alignment::per_symbol, m110d_pn_alignment::continuous }) {
        m110d_readings r;
        r.pn_alignment = alignment;
        m110d_preamble_options o;
        o.tlc_blocks = 2;
        o.superframes = 3;
        const std::vector<uint8_t> p = m110d_preamble(m, o, 7, r);
        ASSERT_EQ(p.size(), (2 + 3 * 18) * 32u);
        EXPECT_EQ(std::vector<uint8_t>(p.begin(), p.begin() + 64),
                  m110d_tlc_section(2, 32, alignment));
        const std::vector<uint8_t> fixed(m110d_fixed_dibits.begin(),
                                         m110d_fixed_dibits.end());
        const auto wid = m110d_wid_dibits({ 6, m110d_interleaver::short_, 7 });
        for (unsigned s = 0; s < 3; ++s) {
            std::vector<uint8_t> want =
                m110d_preamble_section(fixed, m110d_pn_table::fixed, 32, alignment);
            const auto count = m110d_count_dibits(2 - s);
            for (const auto& part :
                 { m110d_preamble_section({ count.begin(), count.end() },
                                          m110d_pn_table::count,
                                          32,
                                          alignment),
                   m110d_preamble_section(
                       { wid.begin(), wid.end() }, m110d_pn_table::wid, 32, alignment) })
                want.insert(want.end(), part.begin(), part.end());
            const auto first = p.begin() + 64 + 18 * 32 * s;
            EXPECT_EQ(std::vector<uint8_t>(first, first + 18 * 32), want)
                << "super-frame " << s;
        }
        // The last super-frame's count section is the known count-0 answer.
        const auto count0 = p.begin() + 64 + 18 * 32 * 2 + 9 * 32;
        EXPECT_EQ(ints({ count0, count0 + 128 }),
                  alignment == m110d_pn_alignment::per_symbol
                      ? known::count_section_count0_per_symbol
                      : known::count_section_count0_continuous);
    }
    // M = 1: the fixed section is the single dibit 3.
    const std::vector<uint8_t> single = m110d_preamble(m, {}, 9, {});
    ASSERT_EQ(single.size(), 10 * 32u);
    EXPECT_EQ(std::vector<uint8_t>(single.begin(), single.begin() + 32),
              m110d_preamble_section(
                  { 3 }, m110d_pn_table::fixed, 32, m110d_pn_alignment::per_symbol));
    m110d_preamble_options too_many;
    too_many.superframes = 33;
    EXPECT_THROW(m110d_preamble(m, too_many, 7), std::invalid_argument);
}

TEST(M110dWaveform, MiniProbesMatchKnownAnswers)
{
    std::vector<std::complex<float>> want;
    const auto from_8psk = [](const std::vector<int>& v) {
        std::vector<std::complex<float>> p;
        for (int s : v)
            p.push_back(psk8(s));
        return p;
    };
    const auto from_5 = [](const std::vector<int>& v) {
        std::vector<std::complex<float>> p;
        for (int k : v)
            p.push_back(std::polar(1.0f, float(2 * M_PI * k / 5)));
        return p;
    };
    expect_points(
        m110d_mini_probe(32, false, 32), from_8psk(known::probe_K32_normal_8psk), "K32");
    expect_points(m110d_mini_probe(32, true, 32),
                  from_8psk(known::probe_K32_boundary_8psk),
                  "K32 boundary");
    expect_points(
        m110d_mini_probe(24, false, 24), from_8psk(known::probe_K24_normal_8psk), "K24");
    expect_points(m110d_mini_probe(24, true, 24),
                  from_8psk(known::probe_K24_boundary_8psk),
                  "K24 boundary");
    expect_points(m110d_mini_probe(48, false, 48),
                  from_5(known::probe_K48_normal_phase_index_mod5),
                  "K48");
    expect_points(m110d_mini_probe(48, true, 48),
                  from_5(known::probe_K48_boundary_phase_index_mod5),
                  "K48 boundary");
    // EOT: the final probe cyclically extended (the base-13 case gives 56 symbols).
    const auto eot = m110d_mini_probe(24, false, 24 + 32);
    ASSERT_EQ(eot.size(), 56u);
    for (unsigned i = 0; i < 56; ++i)
        EXPECT_EQ(eot[i], eot[i % 13]);
    EXPECT_EQ(m110d_eot_extension_symbols(mode(12, m110d_interleaver::long_)), 32u);
    // Every probe length of every bandwidth has a base.
    std::set<unsigned> ks;
    for (const std::string& name : m110d_mode_names())
        ks.insert(m110d_mode_by_name(name)->probe_symbols);
    ks.erase(0); // WN0 has no probes
    for (unsigned k : ks)
        EXPECT_NO_THROW(m110d_mini_probe(k, true, k)) << k;
    EXPECT_THROW(m110d_mini_probe(33, false, 33), std::invalid_argument);
}

TEST(M110dWaveform, BoundaryProbeFollowsTheSecondToLastFrameOfABlock)
{
    const m110d_mode four = mode(1, m110d_interleaver::ultra_short); // 4 frames per block
    std::string marks;
    for (int64_t f = -1; f < 8; ++f)
        marks += m110d_probe_is_boundary(four, f) ? 'B' : '.';
    EXPECT_EQ(marks, "...B...B.");
    const m110d_mode one = mode(10, m110d_interleaver::ultra_short); // 1 frame per block
    for (int64_t f = -1; f < 4; ++f)
        EXPECT_TRUE(m110d_probe_is_boundary(one, f)) << f;
    const m110d_mode two = mode(3, m110d_interleaver::ultra_short); // 2 frames per block
    EXPECT_FALSE(m110d_probe_is_boundary(two, -1));
    EXPECT_TRUE(m110d_probe_is_boundary(two, 0));
    EXPECT_FALSE(m110d_probe_is_boundary(two, 1));
}

TEST(M110dWaveform, DataScramblerMatchesKnownAnswersInBothOrientations)
{
    const m110d_mode psk = mode(7, m110d_interleaver::short_),
                     qam = mode(12, m110d_interleaver::short_);
    const auto first32 = [](const std::vector<uint8_t>& v) {
        return std::vector<int>(v.begin(), v.begin() + 32);
    };
    EXPECT_EQ(first32(m110d_data_scrambler(psk, x9_orientation::a)),
              known::scrambler_A_N3);
    EXPECT_EQ(first32(m110d_data_scrambler(psk, x9_orientation::b)),
              known::scrambler_B_N3);
    EXPECT_EQ(first32(m110d_data_scrambler(qam, x9_orientation::a)),
              known::scrambler_A_N8);
    EXPECT_EQ(first32(m110d_data_scrambler(qam, x9_orientation::b)),
              known::scrambler_B_N8);
    // One value per data symbol of a block; BPSK and QPSK scramble like 8PSK.
    EXPECT_EQ(m110d_data_scrambler(qam, x9_orientation::a).size(), 360u);
    const auto bpsk =
        m110d_data_scrambler(mode(1, m110d_interleaver::short_), x9_orientation::a);
    ASSERT_EQ(bpsk.size(), 48u);
    EXPECT_EQ(std::vector<int>(bpsk.begin(), bpsk.begin() + 32), known::scrambler_A_N3);
}

TEST(M110dWaveform, PskTranscodingAndConstellations)
{
    // m110d_appd.json psk_transcoding (D-III .. D-V), first bit the MSB.
    EXPECT_EQ(m110d_map_bits(0, 1), 0);
    EXPECT_EQ(m110d_map_bits(1, 1), 4);
    const int qpsk[4] = { 0, 2, 6, 4 }; // 00 01 10 11
    const int psk8_map[8] = { 1, 0, 2, 3, 6, 7, 5, 4 };
    for (unsigned v = 0; v < 4; ++v)
        EXPECT_EQ(m110d_map_bits(v, 2), qpsk[v]);
    for (unsigned v = 0; v < 8; ++v)
        EXPECT_EQ(m110d_map_bits(v, 3), psk8_map[v]);
    for (unsigned bits : { 4u, 5u, 6u, 8u })
        for (unsigned v = 0; v < (1u << bits); ++v)
            EXPECT_EQ(m110d_map_bits(v, bits), v);
    // 8PSK symbol s at s * 45 degrees.
    for (unsigned bits : { 1u, 2u, 3u }) {
        const auto& p = m110d_constellation(bits);
        ASSERT_EQ(p.size(), 8u);
        for (int s = 0; s < 8; ++s)
            EXPECT_LT(std::abs(p[size_t(s)] - psk8(s)), 1e-6f);
    }
    // QAM as printed: table D-VII..D-X; spot values, sizes, distinct points, peak <= 1.
    const auto& q16 = m110d_constellation(4);
    EXPECT_LT(std::abs(q16[3] - std::complex<float>(0.258819f, 0.258819f)), 1e-6f);
    const auto& q256 = m110d_constellation(8);
    ASSERT_EQ(q256.size(), 256u);
    EXPECT_LT(std::abs(q256[0] - std::complex<float>(0.959366f, 0.056433f)), 1e-6f);
    EXPECT_LT(std::abs(q256[2] - std::complex<float>(0.846499f, 0.507899f)), 1e-6f);
    for (unsigned bits : { 4u, 5u, 6u, 8u }) {
        const auto& p = m110d_constellation(bits);
        ASSERT_EQ(p.size(), size_t(1) << bits);
        float peak = 0, closest = 10;
        for (size_t i = 0; i < p.size(); ++i) {
            peak = std::max(peak, std::abs(p[i]));
            for (size_t j = 0; j < i; ++j)
                closest = std::min(closest, std::abs(p[i] - p[j]));
        }
        EXPECT_LE(peak, 1.0001f) << bits;
        EXPECT_GT(closest, 0.05f) << bits;
    }
    // Frame power on the probes' scale: PSK 1, QAM below (not rescaled).
    EXPECT_EQ(m110d_frame_power(mode(7, m110d_interleaver::long_)), 1.0);
    EXPECT_EQ(m110d_frame_power(mode(0, m110d_interleaver::long_)), 1.0);
    EXPECT_NEAR(m110d_frame_power(mode(12, m110d_interleaver::long_)),
                (360 * 0.5195 + 24) / 384,
                1e-3);
}

TEST(M110dWaveform, CodeImpulseResponsesAndTailBitingMatchKnownAnswers)
{
    const std::vector<uint8_t> impulse7 = { 1, 0, 0, 0, 0, 0, 0 };
    const auto k7 = tail_biting_encode(
        conv_code_k7, impulse7.data(), 7, tail_biting_start::from_block_start);
    EXPECT_EQ(ints(k7), known::k7_impulse);
    const std::vector<uint8_t> impulse9 = { 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    const auto k9 = tail_biting_encode(
        conv_code_k9, impulse9.data(), 9, tail_biting_start::from_block_start);
    EXPECT_EQ(ints(k9), known::k9_impulse);

    const std::vector<uint8_t> info(known::tailbiting_info.begin(),
                                    known::tailbiting_info.end());
    EXPECT_EQ(ints(tail_biting_encode(conv_code_k7,
                                      info.data(),
                                      info.size(),
                                      tail_biting_start::from_full_register)),
              known::tailbiting_k7_full_register);
    EXPECT_EQ(
        ints(tail_biting_encode(
            conv_code_k7, info.data(), info.size(), tail_biting_start::from_block_start)),
        known::tailbiting_k7_cyclic_unrotated);
    EXPECT_EQ(ints(tail_biting_encode(conv_code_k9,
                                      info.data(),
                                      info.size(),
                                      tail_biting_start::from_full_register)),
              known::tailbiting_k9_full_register);
    // The readings differ by a rotation of their first bits' pairs: K - 1 and 7.
    const auto k9_start = tail_biting_encode(
        conv_code_k9, info.data(), info.size(), tail_biting_start::from_block_start);
    std::vector<int> rotated(k9_start.begin() + 16, k9_start.end());
    rotated.insert(rotated.end(), k9_start.begin(), k9_start.begin() + 16);
    EXPECT_EQ(rotated, known::tailbiting_k9_full_register);
    for (const conv_code* code : { &conv_code_k7, &conv_code_k9 }) {
        const auto start = tail_biting_encode(
            *code, info.data(), info.size(), tail_biting_start::from_block_start);
        std::vector<uint8_t> bit_7(start.begin() + 14, start.end());
        bit_7.insert(bit_7.end(), start.begin(), start.begin() + 14);
        EXPECT_EQ(tail_biting_encode(*code, info.data(), info.size()), bit_7)
            << code->constraint_length;
    }
    EXPECT_THROW(tail_biting_encode(conv_code_k9, info.data(), 7), std::invalid_argument);
}

TEST(M110dWaveform, PuncturingMatchesTheKnownAnswerAndEveryRate)
{
    const std::vector<uint8_t> mother(known::puncture_3_4_k7_mother.begin(),
                                      known::puncture_3_4_k7_mother.end());
    const m110d_code_rate& r34 = m110d_code_rate_of(mode(7, m110d_interleaver::short_));
    ASSERT_EQ(r34.numerator, 3u);
    ASSERT_EQ(r34.denominator, 4u);
    EXPECT_EQ(ints(m110d_puncture(mother, r34, 7)), known::puncture_3_4_k7_kept);
    // The 3 kHz rates (D-XLIX) and the D-L rule reproducing each: pairs in, bits out.
    const char* const rates[14] = { "1/2", "1/8", "1/4", "1/3", "2/3", "3/4", "3/4",
                                    "3/4", "3/4", "3/4", "3/4", "8/9", "8/9", "9/16" };
    for (const m110d_mode& m : modes_3khz()) {
        const m110d_code_rate& r = m110d_code_rate_of(m);
        EXPECT_EQ(std::to_string(r.numerator) + "/" + std::to_string(r.denominator),
                  rates[m.wn])
            << m.name();
        for (unsigned k : { 7u, 9u }) {
            const std::vector<uint8_t> pairs(2 * size_t(m.input_bits_per_block), 1);
            EXPECT_EQ(m110d_puncture(pairs, r, k).size(), m110d_interleaver_bits(m))
                << m.name() << " K" << k;
        }
    }
}

TEST(M110dWaveform, DepuncturingInvertsPuncturingForEveryRate)
{
    std::mt19937 rng(3);
    for (const m110d_mode& m : modes_3khz())
        for (unsigned k : { 7u, 9u }) {
            const m110d_code_rate& r = m110d_code_rate_of(m);
            const size_t pairs = m.input_bits_per_block;
            const std::vector<uint8_t> mother = random_bits(2 * pairs, rng);
            const std::vector<uint8_t> sent = m110d_puncture(mother, r, k);
            std::vector<float> llr(sent.size());
            for (size_t i = 0; i < sent.size(); ++i)
                llr[i] = sent[i] ? -1.0f : 1.0f;
            const std::vector<float> back = m110d_depuncture(llr.data(), pairs, r, k);
            ASSERT_EQ(back.size(), 2 * pairs);
            size_t kept = 0;
            for (size_t i = 0; i < back.size(); ++i) {
                if (back[i] == 0.0f)
                    continue;
                ++kept;
                ASSERT_EQ(back[i] < 0, mother[i] == 1)
                    << m.name() << " K" << k << " bit " << i;
                // Repeats add up.
                ASSERT_GE(std::abs(back[i]), 1.0f);
            }
            const double weight =
                std::accumulate(back.begin(), back.end(), 0.0, [](double a, float b) {
                    return a + std::abs(b);
                });
            EXPECT_DOUBLE_EQ(weight, double(sent.size())) << m.name();
            EXPECT_GT(kept, 0u);
        }
}

TEST(M110dWaveform, TailBitingViterbiRoundTripsBothCodesAndReadings)
{
    std::mt19937 rng(11);
    std::normal_distribution<float> noise(0.0f, 0.5f);
    for (const conv_code* code : { &conv_code_k7, &conv_code_k9 })
        for (auto start : tail_biting_starts)
            for (size_t n : { size_t(code->memory()),
                              size_t(16),
                              size_t(24),
                              size_t(97),
                              size_t(1536) }) {
                if (n <=
                    tail_biting_first_bit(start, *code)) // bit 7's pair needs a bit 7
                    continue;
                const std::vector<uint8_t> bits = random_bits(n, rng);
                const std::vector<uint8_t> coded =
                    tail_biting_encode(*code, bits.data(), n, start);
                std::vector<float> llr(coded.size());
                for (size_t i = 0; i < coded.size(); ++i)
                    llr[i] = (coded[i] ? -2.0f : 2.0f) + (n > 24 ? noise(rng) : 0.0f);
                tail_biting_viterbi viterbi(*code);
                std::vector<uint8_t> decoded;
                viterbi.decode(llr.data(), n, start, decoded);
                EXPECT_EQ(decoded, bits) << "K" << code->constraint_length << " n " << n;
            }
}

TEST(M110dWaveform, TailBitingViterbiEightStatesAtOnceDecodesAsFour)
{
    // Noisy, erased (0) and very unequal LLRs, blocks of both codes over a map window:
    // the eight-state (AVX2) path gives the same bits and expected errors as the
    // four-state one (skipped where the processor has no AVX2).
    if (!tail_biting_viterbi::set_wide_vectors(true))
        GTEST_SKIP() << "no AVX2 here";
    std::mt19937 rng(23);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    for (const conv_code* code : { &conv_code_k7, &conv_code_k9 })
        for (size_t n : { size_t(97), size_t(1536), size_t(5000) }) {
            const std::vector<uint8_t> bits = random_bits(n, rng);
            const std::vector<uint8_t> coded = tail_biting_encode(
                *code, bits.data(), n, tail_biting_start::from_full_register);
            std::vector<float> llr(coded.size());
            for (size_t i = 0; i < coded.size(); ++i) {
                const float scale = i % 7 == 0 ? 40.0f : (i % 5 == 0 ? 0.05f : 2.0f);
                llr[i] =
                    i % 11 == 0 ? 0.0f : scale * ((coded[i] ? -1.0f : 1.0f) + noise(rng));
            }
            std::vector<uint8_t> decoded[2];
            double expected[2];
            bool closed[2];
            for (int wide = 0; wide < 2; ++wide) {
                tail_biting_viterbi::set_wide_vectors(wide == 1);
                tail_biting_viterbi viterbi(*code);
                viterbi.decode(
                    llr.data(), n, tail_biting_start::from_full_register, decoded[wide]);
                expected[wide] = viterbi.expected_errors();
                closed[wide] = viterbi.closed();
            }
            tail_biting_viterbi::set_wide_vectors(true);
            EXPECT_EQ(decoded[1], decoded[0])
                << "K" << code->constraint_length << " n " << n;
            EXPECT_EQ(expected[1], expected[0])
                << "K" << code->constraint_length << " n " << n;
            EXPECT_EQ(closed[1], closed[0]);
            EXPECT_GT(expected[0], 0.0);
        }
}

TEST(M110dWaveform, TailBitingViterbiLongBlockInPiecesIsTheSameOnOneThreadOrTwo)
{
    // A block long enough to be decoded in pieces (three), noisy: the bits are the
    // ones sent, and the same with the pieces shared by two threads as decoded in turn
    // by one, as are the expected errors with the MAP pass's pieces shared too, and
    // the same as expected_errors() after decode().
    std::mt19937 rng(31);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    const size_t n = 3 * 65536 + 1001;
    for (const conv_code* code : { &conv_code_k7, &conv_code_k9 }) {
        const std::vector<uint8_t> bits = random_bits(n, rng);
        const std::vector<uint8_t> coded = tail_biting_encode(
            *code, bits.data(), n, tail_biting_start::first_pair_bit_7);
        std::vector<float> llr(coded.size());
        for (size_t i = 0; i < coded.size(); ++i)
            llr[i] = 2.0f * ((coded[i] ? -1.0f : 1.0f) + 0.6f * noise(rng));
        std::vector<uint8_t> decoded[3];
        double expected[3];
        bool closed[3];
        for (int way = 0; way < 3; ++way) {
            tail_biting_viterbi viterbi(*code);
            if (way == 0) {
                viterbi.decode(
                    llr.data(), n, tail_biting_start::first_pair_bit_7, decoded[way]);
                expected[way] = viterbi.expected_errors();
            } else {
                expected[way] = viterbi.decode_with_expected_errors(
                    llr.data(),
                    n,
                    tail_biting_start::first_pair_bit_7,
                    decoded[way],
                    way == 2);
            }
            closed[way] = viterbi.closed();
        }
        EXPECT_EQ(decoded[0], bits) << "K" << code->constraint_length;
        EXPECT_EQ(decoded[1], decoded[0]) << "K" << code->constraint_length;
        EXPECT_EQ(decoded[2], decoded[0]) << "K" << code->constraint_length;
        EXPECT_EQ(expected[1], expected[0]) << "K" << code->constraint_length;
        EXPECT_EQ(expected[2], expected[0]) << "K" << code->constraint_length;
        EXPECT_GT(expected[0], 0.0);
        EXPECT_TRUE(closed[0]);
        EXPECT_TRUE(closed[1]);
        EXPECT_TRUE(closed[2]);
    }
}

TEST(M110dWaveform, Every3khzBlockEncodesAndDecodes)
{
    std::mt19937 rng(7);
    for (const m110d_mode& m : modes_3khz())
        for (unsigned k : { 7u, 9u }) {
            const auto start = k == 7 ? tail_biting_start::from_full_register
                                      : tail_biting_start::from_block_start;
            const std::vector<uint8_t> bits = random_bits(m.input_bits_per_block, rng);
            const std::vector<uint32_t> order = m110d_fetch_order(m);
            const std::vector<uint8_t> sent =
                m110d_block_channel_bits(m, bits.data(), order, k, start);
            ASSERT_EQ(sent.size(), m110d_interleaver_bits(m));
            std::vector<float> llr(sent.size());
            for (size_t i = 0; i < sent.size(); ++i)
                llr[i] = sent[i] ? -1.0f : 1.0f;
            // A few scattered channel errors are corrected (rates up to 3/4: the
            // punctured 8/9 and 9/16 codes correct too few to keep a test stable).
            const m110d_code_rate& r = m110d_code_rate_of(m);
            if (4 * r.numerator <= 3 * r.denominator)
                for (size_t e = 0; e < sent.size() / 500; ++e) {
                    const size_t i = rng() % sent.size();
                    llr[i] = -llr[i];
                }
            m110d_block_decoder decoder(m, k, start);
            EXPECT_EQ(decoder.channel_bits(), sent.size());
            std::vector<uint8_t> decoded;
            decoder.decode(llr.data(), decoded);
            EXPECT_EQ(decoded, bits) << m.name() << " K" << k;
        }
}

TEST(M110dWaveform, TailBitingDecisionsDoNotDependOnTheLlrScale)
{
    // Float metrics: any common LLR factor decides alike (and the channel's errors are
    // corrected here: Eb/N0 4.4 dB, rate 1/2, 5 % of the coded bits wrong).
    std::mt19937 rng(17);
    std::normal_distribution<float> noise(0.0f, 0.6f);
    for (const conv_code* code : { &conv_code_k7, &conv_code_k9 }) {
        const std::vector<uint8_t> bits = random_bits(3000, rng);
        const std::vector<uint8_t> coded = tail_biting_encode(
            *code, bits.data(), bits.size(), tail_biting_start::from_full_register);
        std::vector<float> llr(coded.size());
        size_t channel_errors = 0;
        for (size_t i = 0; i < coded.size(); ++i) {
            const float y = (coded[i] ? -1.0f : 1.0f) + noise(rng);
            channel_errors += (y < 0) != (coded[i] == 1);
            llr[i] = 2 * y / (0.6f * 0.6f);
        }
        EXPECT_GT(channel_errors, 100u);
        tail_biting_viterbi viterbi(*code);
        std::vector<uint8_t> reference;
        viterbi.decode(
            llr.data(), bits.size(), tail_biting_start::from_full_register, reference);
        EXPECT_EQ(reference, bits) << "K" << code->constraint_length;
        for (float scale : { 0.01f, 100.0f }) {
            std::vector<float> scaled(llr);
            for (float& l : scaled)
                l *= scale;
            std::vector<uint8_t> decoded;
            viterbi.decode(scaled.data(),
                           bits.size(),
                           tail_biting_start::from_full_register,
                           decoded);
            EXPECT_EQ(decoded, reference)
                << "K" << code->constraint_length << " scale " << scale;
        }
    }
}

TEST(M110dWaveform, ReadingsAreSetByName)
{
    m110d_readings r;
    EXPECT_EQ(m110d_readings_text(r),
              "scrambler=a tail_biting=first_pair_bit_7 pn_alignment=per_symbol "
              "wid_parity=checksum preamble_walsh=scaled");
    for (const std::string& choice : m110d_reading_choices()) {
        m110d_readings one;
        EXPECT_EQ(m110d_set_reading(one, choice), "") << choice;
        EXPECT_NE(m110d_readings_text(one).find(choice), std::string::npos) << choice;
    }
    EXPECT_EQ(m110d_reading_choices().size(), 11u);
    EXPECT_EQ(m110d_set_reading(r, "scrambler=b"), "");
    EXPECT_EQ(r.scrambler, x9_orientation::b);
    EXPECT_EQ(m110d_set_reading(r, "tail_biting=block_start"), "");
    EXPECT_EQ(r.tail_biting, tail_biting_start::from_block_start);
    EXPECT_EQ(m110d_set_reading(r, "pn_alignment=continuous"), "");
    EXPECT_EQ(r.pn_alignment, m110d_pn_alignment::continuous);
    EXPECT_EQ(m110d_set_reading(r, "wid_parity=caption_d2_zero"), "");
    EXPECT_EQ(r.wid_parity, m110d_wid_parity::caption_d2_zero);
    EXPECT_EQ(m110d_set_reading(r, "preamble_walsh=capped"), "");
    EXPECT_EQ(r.preamble_walsh, m110d_preamble_walsh::capped);
    const std::string before = m110d_readings_text(r);
    EXPECT_NE(m110d_set_reading(r, "scrambler=c"), "");
    EXPECT_NE(m110d_set_reading(r, "scrambler"), "");
    EXPECT_NE(m110d_set_reading(r, "interleaver=a"), "");
    EXPECT_EQ(m110d_readings_text(r), before);
}

TEST(M110dWaveform, LongBlockCodedAgainAndDepuncturedInRangesIsTheSameOnOneThreadOrTwo)
{
    // Long blocks (several ranges of pairs; repeated twice, punctured by masks of
    // three and eight columns): the channel bits and the mother-code LLRs are the D-L
    // rule's as a plain loop over the pairs gives them, the same whether the ranges are
    // shared by two threads or run in turn, and a noiseless block decodes to its bits.
    std::mt19937 rng(46);
    for (const auto& [bw, wn] : { std::pair{ 48u, 2u }, { 24u, 5u }, { 24u, 11u } }) {
        const m110d_mode m = *m110d_mode_for(bw, wn, m110d_interleaver::long_);
        const m110d_code_rate& rate = m110d_code_rate_of(m);
        const size_t pairs = m.input_bits_per_block;
        ASSERT_GE(pairs, size_t(2 * 16384)) << m.name(); // two ranges or more
        const std::vector<uint8_t> bits = random_bits(pairs, rng);
        const std::vector<uint8_t> mother = tail_biting_encode(
            conv_code_k7, bits.data(), pairs, tail_biting_start::first_pair_bit_7);
        // The rule as a plain loop: pair i's copy c in column (i * repeat + c) mod the
        // mask's length, T1 then T2 where the column sends them.
        std::vector<uint8_t> punctured;
        std::vector<size_t> source; // the mother bit each sent bit carries
        size_t column = 0;
        const size_t columns = std::string(rate.k7_mask[0]).size();
        for (size_t i = 0; i < pairs; ++i)
            for (unsigned c = 0; c < rate.repeat; ++c, column = (column + 1) % columns)
                for (unsigned b = 0; b < 2; ++b)
                    if (rate.k7_mask[b][column] == '1') {
                        punctured.push_back(mother[2 * i + b]);
                        source.push_back(2 * i + b);
                    }
        EXPECT_EQ(m110d_puncture(mother, rate, 7), punctured) << m.name();
        const std::vector<uint32_t> order = m110d_fetch_order(m);
        ASSERT_EQ(order.size(), punctured.size()) << m.name();
        std::vector<uint8_t> sent(order.size());
        for (size_t k = 0; k < order.size(); ++k)
            sent[k] = punctured[order[k]];
        for (bool concurrently : { false, true })
            EXPECT_EQ(m110d_block_channel_bits(m,
                                               bits.data(),
                                               order,
                                               7,
                                               tail_biting_start::first_pair_bit_7,
                                               false,
                                               concurrently),
                      sent)
                << m.name() << (concurrently ? " on two threads" : " on one");
        // Depunctured: each mother bit's sent copies summed in the order sent.
        std::vector<float> llr(punctured.size());
        for (float& v : llr)
            v = std::normal_distribution<float>(0.0f, 3.0f)(rng);
        std::vector<float> summed(2 * pairs, 0.0f);
        for (size_t k = 0; k < llr.size(); ++k)
            summed[source[k]] += llr[k];
        for (bool concurrently : { false, true }) {
            std::vector<float> out;
            m110d_depuncture(llr.data(), pairs, rate, 7, out, concurrently);
            EXPECT_EQ(out, summed) << m.name() << (concurrently ? " on two threads" : "");
        }
        std::vector<float> channel(sent.size());
        for (size_t k = 0; k < sent.size(); ++k)
            channel[k] = sent[k] ? -1.0f : 1.0f;
        m110d_block_decoder decoder(m, 7, tail_biting_start::first_pair_bit_7);
        for (bool concurrently : { false, true }) {
            std::vector<uint8_t> decoded;
            decoder.decode(channel.data(), decoded, concurrently);
            EXPECT_EQ(decoded, bits)
                << m.name() << (concurrently ? " on two threads" : "");
        }
    }
}

// The fetch order is entry k: the bit loaded at (n * increment) mod size, whether the
// increment is prime to the size (written in order by its inverse) or not (scattered).
TEST(M110dWaveform, IncrementFetchOrderIsTheLoadingsInverse)
{
    const std::pair<uint32_t, uint32_t> cases[] = {
        { 1, 0 },   { 1, 5 },    { 2, 1 },      { 7, 3 },         { 10, 4 },
        { 12, 18 }, { 97, 200 }, { 1000, 999 }, { 65536, 12345 }, { 1843200, 1921 }
    };
    for (const auto& [size, increment] : cases) {
        std::vector<uint32_t> expected(size);
        for (uint64_t n = 0; n < size; ++n)
            expected[size_t(n * increment % size)] = uint32_t(n);
        EXPECT_EQ(increment_fetch_order(size, increment), expected)
            << size << ", " << increment;
    }
    for (const m110d_mode& m :
         { *m110d_mode_for(48, 12, m110d_interleaver::long_),
           *m110d_mode_for(3, 6, m110d_interleaver::ultra_short) }) {
        const std::vector<uint32_t> order = m110d_fetch_order(m);
        std::vector<uint32_t> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        for (size_t k = 0; k < sorted.size(); ++k)
            ASSERT_EQ(sorted[k], k) << m.name();
    }
}
