/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// K=7 rate 1/2 code of 110A/4539: known answers for the encoder, and the VOLK-based
// soft Viterbi decoding clean, noisy and punctured (erased) streams.
#include "phy/conv_k7.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

std::vector<uint8_t> random_bits(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& x : b)
        x = uint8_t(rng() & 1);
    return b;
}

// BPSK over AWGN at Eb/N0 (rate 1/2: Es/N0 = Eb/N0 - 3 dB), LLR = 2 y / sigma^2.
std::vector<float>
noisy_llrs(const std::vector<uint8_t>& coded, double ebn0_db, uint32_t seed)
{
    std::mt19937 rng(seed);
    const double esn0 = std::pow(10.0, ebn0_db / 10.0) / 2.0;
    const double sigma = std::sqrt(1.0 / (2.0 * esn0));
    std::normal_distribution<double> noise(0.0, sigma);
    std::vector<float> llr(coded.size());
    for (size_t k = 0; k < coded.size(); ++k) {
        const double y = (coded[k] ? -1.0 : 1.0) + noise(rng);
        llr[k] = float(2.0 * y / (sigma * sigma));
    }
    return llr;
}

size_t errors(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b)
{
    size_t e = 0;
    for (size_t k = 0; k < a.size(); ++k)
        e += a[k] != b[k];
    return e;
}

} // namespace

TEST(ConvK7, EncoderMatchesTheKnownAnswers)
{
    k7_encoder e;
    std::vector<uint8_t> out;
    const std::vector<uint8_t> in = { 1, 0, 1, 1, 0, 0, 1, 0 };
    e.encode(in.data(), in.size(), out);
    EXPECT_EQ(out,
              std::vector<uint8_t>({ 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1 }));
    // Impulse response: pairs 11 01 11 11 00 10 11 (m110a.json fec).
    k7_encoder f;
    std::vector<uint8_t> impulse = { 1, 0, 0, 0, 0, 0, 0 }, response;
    f.encode(impulse.data(), impulse.size(), response);
    EXPECT_EQ(response,
              std::vector<uint8_t>({ 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1 }));
    EXPECT_EQ(f.state(), 0u);
}

TEST(ConvK7, ViterbiRecoversCleanStreamsOfAnyLength)
{
    for (size_t n : { size_t(1), size_t(7), size_t(64), size_t(1001), size_t(20000) }) {
        std::vector<uint8_t> bits = random_bits(n, uint32_t(n));
        k7_encoder e;
        std::vector<uint8_t> coded;
        e.encode(bits.data(), bits.size(), coded);
        std::vector<float> llr(coded.size());
        for (size_t k = 0; k < coded.size(); ++k)
            llr[k] = coded[k] ? -4.0f : 4.0f;
        k7_viterbi v;
        EXPECT_EQ(v.decode(llr.data(), n, int(e.state())), bits) << n;
        EXPECT_EQ(v.decode(llr.data(), n), bits) << n;
    }
}

TEST(ConvK7, ViterbiGainsWhatAK7CodeShould)
{
    // 200,000 bits at Eb/N0 4 dB: uncoded BPSK would make ~1.3e-2 errors per bit; the
    // soft-decision K=7 code is near 1e-5 (Proakis); we ask for < 1e-4.
    const size_t n = 200000;
    std::vector<uint8_t> bits = random_bits(n, 1);
    for (size_t k = n - 6; k < n; ++k)
        bits[k] = 0; // flush, as 110A does
    k7_encoder e;
    std::vector<uint8_t> coded;
    e.encode(bits.data(), n, coded);
    const std::vector<float> llr = noisy_llrs(coded, 4.0, 2);
    size_t raw = 0;
    for (size_t k = 0; k < coded.size(); ++k)
        raw += (llr[k] < 0) != (coded[k] == 1);
    k7_viterbi v;
    const size_t e_dec = errors(v.decode(llr.data(), n, 0), bits);
    EXPECT_GT(double(raw) / double(coded.size()), 0.01);
    EXPECT_LT(double(e_dec) / double(n), 1e-4) << e_dec << " errors";
}

TEST(ConvK7, ErasuresCostMarginButNotCorrectness)
{
    // Every third T2 erased (a rate-3/5 puncture): still decodes at a clean channel and
    // at Eb/N0 6 dB.
    const size_t n = 50000;
    std::vector<uint8_t> bits = random_bits(n, 3);
    k7_encoder e;
    std::vector<uint8_t> coded;
    e.encode(bits.data(), n, coded);
    std::vector<float> llr = noisy_llrs(coded, 6.0, 4);
    for (size_t k = 0; k < n; k += 3)
        llr[2 * k + 1] = 0;
    k7_viterbi v;
    EXPECT_LT(errors(v.decode(llr.data(), n), bits), 10u);
}

TEST(ConvK7, StreamingGivesTheSameBitsAsOneCall)
{
    // Long enough that old decisions are dropped along the way.
    const size_t n = 300000;
    std::vector<uint8_t> bits = random_bits(n, 5);
    k7_encoder e;
    std::vector<uint8_t> coded;
    e.encode(bits.data(), n, coded);
    const std::vector<float> llr = noisy_llrs(coded, 3.0, 6);
    k7_viterbi whole;
    const std::vector<uint8_t> expected = whole.decode(llr.data(), n);
    k7_viterbi v;
    std::vector<uint8_t> out;
    std::mt19937 rng(7);
    for (size_t k = 0; k < n;) {
        const size_t m = std::min<size_t>(n - k, 1 + rng() % 700);
        v.push(&llr[2 * k], m);
        k += m;
        v.take_decided(out, 96);
        ASSERT_LE(out.size() + 96, v.steps());
    }
    v.finish(out);
    ASSERT_EQ(out.size(), n);
    // 96 steps (14 constraint lengths) behind the newest, the survivors have merged: the
    // streamed bits are those of the full traceback.
    EXPECT_EQ(out, expected);
}

TEST(ConvK7, MaxLogMapAgreesWithViterbiAndKnowsWhereItIsUnsure)
{
    // 20,000 bits at Eb/N0 2 dB (flushed): the a posteriori input bits' signs are the
    // Viterbi decisions but for a few ties; the coded bits' LLRs are reliable where
    // large (those over 8 practically never wrong) and the wrong ones small.
    const size_t n = 20000;
    std::vector<uint8_t> bits = random_bits(n, 3);
    for (size_t k = n - 6; k < n; ++k)
        bits[k] = 0;
    k7_encoder e;
    std::vector<uint8_t> coded;
    e.encode(bits.data(), n, coded);
    const std::vector<float> llr = noisy_llrs(coded, 2.0, 4);
    const k7_soft_output soft = k7_max_log_map(llr.data(), n, 0);
    ASSERT_EQ(soft.input.size(), n);
    ASSERT_EQ(soft.coded.size(), 2 * n);
    k7_viterbi v;
    const std::vector<uint8_t> hard = v.decode(llr.data(), n, 0);
    size_t disagree = 0, input_errors = 0;
    for (size_t k = 0; k < n; ++k) {
        disagree += (soft.input[k] < 0) != (hard[k] == 1);
        input_errors += (soft.input[k] < 0) != (bits[k] == 1);
    }
    EXPECT_LT(disagree, n / 400); // the Viterbi decoder quantises its input to 8 bits
    EXPECT_GT(input_errors, 0u);  // 2 dB: some errors, so the check below means something
    EXPECT_LT(input_errors, n / 100);
    size_t confident = 0, confident_wrong = 0, wrong = 0, wrong_small = 0;
    for (size_t k = 0; k < 2 * n; ++k) {
        const bool is_wrong = (soft.coded[k] < 0) != (coded[k] == 1);
        wrong += is_wrong;
        wrong_small += is_wrong && std::fabs(soft.coded[k]) < 8;
        if (std::fabs(soft.coded[k]) > 8) {
            ++confident;
            confident_wrong += is_wrong;
        }
    }
    EXPECT_GT(confident, n);
    EXPECT_EQ(confident_wrong, 0u);
    EXPECT_EQ(wrong_small, wrong);
    // Clean input: every coded bit confident and right.
    const std::vector<float> clean = noisy_llrs(coded, 30.0, 5);
    const k7_soft_output sure = k7_max_log_map(clean.data(), n, 0);
    for (size_t k = 0; k < 2 * n; ++k)
        ASSERT_EQ(sure.coded[k] < 0, coded[k] == 1) << k;
}
