/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// App C receive side after the equaliser: the demapper undoes the mapping and the
// scrambler of every mode's data symbols, and the block decoder (deinterleave,
// depuncture, tail-biting Viterbi) returns each block's user bits, through noise too.
#include "phy/m110a_transmitter.h"
#include "phy/m110c_decoder.h"
#include "phy/m110c_transmitter.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

std::vector<m110c_mode> every_mode()
{
    std::vector<m110c_mode> modes;
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u })
        for (unsigned i = 0; i < 6; ++i)
            modes.push_back(*m110c_mode_for(bps, m110c_interleaver(i)));
    modes.push_back(*m110c_mode_for(12800, m110c_interleaver::short_));
    return modes;
}

// The user bits a transmission's blocks carry: bytes (LSB first), the EOM, zero fill.
std::vector<uint8_t> user_bits(const std::vector<uint8_t>& bytes, size_t total)
{
    std::vector<uint8_t> bits = m110a_message_bits(bytes.data(), bytes.size());
    bits.resize(8 * bytes.size() + 32);
    bits.resize(total, 0);
    return bits;
}

std::vector<uint8_t> decode_all(const m110c_mode& mode,
                                const std::vector<float>& llr,
                                const m110c_readings& readings = {})
{
    m110c_block_decoder decoder(mode, readings);
    std::vector<uint8_t> bits;
    for (size_t k = 0; k + decoder.channel_bits() <= llr.size();
         k += decoder.channel_bits())
        decoder.decode(llr.data() + k, bits);
    return bits;
}

} // namespace

TEST(M110cBlockDecoder, EveryModeDecodesItsBlocksExactly)
{
    const std::vector<uint8_t> data = random_bytes(700, 1);
    for (const m110c_mode& mode : every_mode()) {
        const std::vector<uint8_t> channel =
            m110c_channel_bits(mode, data.data(), data.size());
        std::vector<float> llr(channel.size());
        for (size_t k = 0; k < channel.size(); ++k)
            llr[k] = channel[k] ? -4.0f : 4.0f;
        const std::vector<uint8_t> bits = decode_all(mode, llr);
        ASSERT_FALSE(bits.empty()) << mode.name();
        EXPECT_EQ(bits, user_bits(data, bits.size())) << mode.name();
    }
}

TEST(M110cBlockDecoder, TheTailBitingReadingMustMatchTheTransmitters)
{
    const m110c_mode mode = *m110c_mode_for(3200, m110c_interleaver::very_short);
    const std::vector<uint8_t> data = random_bytes(100, 2);
    for (auto reading : tail_biting_starts) {
        m110c_readings r;
        r.tail_biting = reading;
        const std::vector<uint8_t> channel =
            m110c_channel_bits(mode, data.data(), data.size(), false, r);
        std::vector<float> llr(channel.size());
        for (size_t k = 0; k < channel.size(); ++k)
            llr[k] = channel[k] ? -4.0f : 4.0f;
        const std::vector<uint8_t> same = decode_all(mode, llr, r);
        EXPECT_EQ(same, user_bits(data, same.size()));
        for (auto wrong : tail_biting_starts) {
            m110c_readings other = r;
            other.tail_biting = wrong;
            if (wrong != reading)
                EXPECT_NE(decode_all(mode, llr, other), same);
        }
    }
}

TEST(M110cBlockDecoder, CorrectsNoisySoftBits)
{
    // Antipodal bits at Es/N0 = 5 dB (Eb/N0 6.2 dB at rate 3/4; about 0.6 % wrong by
    // sign): the code with its soft inputs returns every bit.
    const m110c_mode mode = *m110c_mode_for(4800, m110c_interleaver::short_);
    const std::vector<uint8_t> data = random_bytes(2500, 3);
    const std::vector<uint8_t> channel =
        m110c_channel_bits(mode, data.data(), data.size());
    std::mt19937 rng(4);
    const double es_n0 = std::pow(10.0, 0.5);
    const double sigma = std::sqrt(1.0 / (2.0 * es_n0));
    std::normal_distribution<double> noise(0.0, sigma);
    std::vector<float> llr(channel.size());
    size_t wrong_by_sign = 0;
    for (size_t k = 0; k < channel.size(); ++k) {
        const double y = (channel[k] ? -1.0 : 1.0) + noise(rng);
        wrong_by_sign += (y < 0) != (channel[k] == 1);
        llr[k] = float(2.0 * y / (sigma * sigma));
    }
    EXPECT_GT(wrong_by_sign, channel.size() / 400);
    const std::vector<uint8_t> bits = decode_all(mode, llr);
    EXPECT_EQ(bits, user_bits(data, bits.size()));
}

TEST(M110cBlockDecoder, JudgesABlockByItsExpectedWrongBits)
{
    // Soft bits at Es/N0 5 dB decode exactly and are judged reliable (well under 0.1
    // bits expected wrong: reliability over 2.3; measured 15.8); at 2 dB the block
    // decodes with errors and is judged unreliable (over one bit expected wrong:
    // reliability under 0; measured 16 wrong, 10.8 expected). Between, at 3 dB: none
    // wrong, 0.23 expected.
    const m110c_mode mode = *m110c_mode_for(4800, m110c_interleaver::short_);
    const std::vector<uint8_t> data = random_bytes(600, 7);
    const std::vector<uint8_t> channel =
        m110c_channel_bits(mode, data.data(), data.size());
    for (double es_n0_db : { 5.0, 2.0 }) {
        std::mt19937 rng(8);
        const double sigma = std::sqrt(1.0 / (2.0 * std::pow(10.0, es_n0_db / 10)));
        std::normal_distribution<double> noise(0.0, sigma);
        m110c_block_decoder decoder(mode);
        std::vector<float> llr(decoder.channel_bits());
        for (size_t k = 0; k < llr.size(); ++k)
            llr[k] =
                float(2.0 * ((channel[k] ? -1.0 : 1.0) + noise(rng)) / (sigma * sigma));
        std::vector<uint8_t> bits;
        decoder.decode(llr.data(), bits);
        const std::vector<uint8_t> sent = user_bits(data, decoder.user_bits());
        const bool exact = std::equal(bits.begin(), bits.end(), sent.begin());
        if (es_n0_db > 4) {
            EXPECT_TRUE(exact);
            EXPECT_GT(decoder.reliability(), 2.3);
        } else {
            EXPECT_FALSE(exact);
            EXPECT_LT(decoder.reliability(), 0.0);
        }
    }
}

TEST(M110cDemapper, UndoesMapAndScramblerForEveryModulation)
{
    const std::vector<uint8_t> data = random_bytes(1200, 5);
    std::mt19937 rng(6);
    std::normal_distribution<double> noise(0.0, 0.01);
    for (unsigned bps : { 3200u, 4800u, 6400u, 8000u, 9600u, 12800u }) {
        const m110c_mode mode = *m110c_mode_for(bps, m110c_interleaver::short_);
        const auto points = m110c_transmit_points(mode, data.data(), data.size());
        const std::vector<uint8_t> channel =
            m110c_channel_bits(mode, data.data(), data.size());
        const m110c_demapper demapper(mode);
        size_t next_bit = 0;
        float llr[6];
        for (size_t k = 0; k < points.size(); ++k) {
            const m110c_symbol_role role = m110c_role_of(k);
            if (role.kind != m110c_symbol_kind::data)
                continue;
            const std::complex<double> sent(points[k]);
            const std::complex<double> u =
                sent + std::complex<double>(noise(rng), noise(rng));
            const std::complex<double> decision =
                demapper.demap(u, role.position, 1e-2, llr);
            ASSERT_LT(std::abs(decision - sent), 1e-5) << mode.name() << " symbol " << k;
            for (unsigned b = 0; b < mode.bits_per_symbol; ++b, ++next_bit)
                ASSERT_EQ(llr[b] < 0, channel[next_bit] == 1)
                    << mode.name() << " symbol " << k;
        }
        EXPECT_EQ(next_bit, channel.size()) << mode.name();
    }
}

TEST(M110cDemapper, QpskDecidesAmongTheFourPointsTheScramblerAllows)
{
    const m110c_mode mode = *m110c_mode_for(3200, m110c_interleaver::short_);
    const m110c_demapper demapper(mode);
    const auto scrambler = m110c_data_scrambler(2);
    float llr[2];
    for (unsigned i = 0; i < 16; ++i) {
        // A point halfway to an odd 8PSK position of the scrambled set's complement.
        const unsigned odd = (scrambler[i] + 1) % 8;
        const std::complex<double> u = std::polar(1.0, odd * M_PI / 4);
        const std::complex<double> d = demapper.demap(u, i, 0.1, llr);
        const double phase = std::arg(d) / (M_PI / 4);
        const long s = std::lround(phase < -0.5 ? phase + 8 : phase) % 8;
        EXPECT_EQ((unsigned(s) + 8 - scrambler[i]) % 2, 0u) << i;
    }
}

TEST(M110cDemapper, UnscrambledPskLandsOnTheModesSetAndQamStays)
{
    const std::vector<uint8_t> data = random_bytes(600, 7);
    for (unsigned bps : { 3200u, 4800u, 9600u }) {
        const m110c_mode mode = *m110c_mode_for(bps, m110c_interleaver::short_);
        const auto points = m110c_transmit_points(mode, data.data(), data.size());
        const m110c_demapper demapper(mode);
        std::set<long> positions; // PSK: 8PSK positions seen after unscrambling
        for (size_t k = 0; k < points.size(); ++k) {
            const m110c_symbol_role role = m110c_role_of(k);
            if (role.kind != m110c_symbol_kind::data)
                continue;
            const std::complex<double> sent(points[k]);
            const std::complex<double> u = demapper.unscrambled(sent, role.position);
            if (mode.bits_per_symbol > 3) {
                ASSERT_EQ(u, sent) << mode.name() << " symbol " << k;
                continue;
            }
            ASSERT_NEAR(std::abs(u), 1.0, 1e-5);
            const double phase = std::arg(u) / (M_PI / 4);
            positions.insert(std::lround(phase < -0.5 ? phase + 8 : phase) % 8);
        }
        // QPSK: four of the eight positions, every other one.
        if (mode.bits_per_symbol == 2) {
            EXPECT_EQ(positions, (std::set<long>{ 0, 2, 4, 6 })) << mode.name();
        }
        if (mode.bits_per_symbol == 3) {
            EXPECT_EQ(positions.size(), 8u) << mode.name();
        }
    }
}
