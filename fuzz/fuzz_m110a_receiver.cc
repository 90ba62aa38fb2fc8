/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the 110A receiver on samples the input spells out. The input picks
 * a preamble (any D1/D2 and count, the reserved and unknown codes included) and how
 * much of it to send, then symbols (8PSK numbers) and raw sample noise, so detection,
 * preamble reading, the equaliser and the decoder all see malformed air. Checks that
 * the receiver never throws or crashes, reports only modes that exist and never more
 * bytes than the time it listened could carry.
 * data[0] bit 7 set: the decoder mode instead, the stages after the equaliser on soft
 * bits the input gives: one interleaver block of the short-interleaved mode numbered
 * data[1] (modulo their count, in m110a_waveforms() order) of channel-bit LLRs (each byte
 * from data[3] on a signed LLR in quarter units, the input read again from its start as
 * often as the block needs), deinterleaved by the mode's fetch order, its repeated pairs
 * combined, decoded by the streaming Viterbi decoder in pieces of data[2] + 1 pairs and
 * by the max-log MAP. Checks the fetch order is a permutation, every pair gives one bit
 * and the MAP's LLRs are numbers. */
#include "fuzz_support.h"
#include "phy/conv_k7.h"
#include "phy/m110a_receiver.h"
#include "phy/m110a_waveform.h"
#include "phy/psk_modulator.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace gr::hfstack::phy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 4)
        return 0;
    if (data[0] & 0x80) {
        // The short-interleaved modes: a long block (4.8 s) costs eight short ones.
        static const std::vector<const m110a_waveform*> modes = [] {
            std::vector<const m110a_waveform*> m;
            for (const m110a_waveform& w : m110a_waveforms())
                if (w.coded && w.interleaver == m110a_interleaver::short_)
                    m.push_back(&w);
            return m;
        }();
        const m110a_waveform& mode = *modes[data[1] % modes.size()];
        const size_t n = mode.block_bits();
        const std::vector<uint32_t> order = m110a_fetch_order(mode);
        check(order.size() == n);
        std::vector<float> sent(n), llr(n, std::numeric_limits<float>::quiet_NaN());
        for (size_t k = 0; k < n; ++k)
            sent[k] = float(int8_t(size > 3 ? data[3 + k % (size - 3)] : 0)) / 4.0f;
        for (size_t k = 0; k < n; ++k) {
            check(order[k] < n && std::isnan(llr[order[k]])); // each bit fetched once
            llr[order[k]] = sent[k];
        }
        // Each (T1, T2) pair sent `repeat` times in a row: their LLRs add.
        const size_t pairs = n / 2 / mode.repeat;
        std::vector<float> combined(2 * pairs, 0.0f);
        for (size_t p = 0; p < pairs * mode.repeat; ++p) {
            combined[2 * (p / mode.repeat)] += llr[2 * p];
            combined[2 * (p / mode.repeat) + 1] += llr[2 * p + 1];
        }
        k7_viterbi viterbi;
        viterbi.start();
        std::vector<uint8_t> bits;
        const size_t piece = size_t(data[2]) + 1;
        for (size_t p = 0; p < pairs; p += piece) {
            viterbi.push(combined.data() + 2 * p, std::min(piece, pairs - p));
            viterbi.take_decided(bits);
        }
        viterbi.finish(bits);
        check(bits.size() == pairs);
        const k7_soft_output soft =
            k7_max_log_map(combined.data(), std::min<size_t>(pairs, 2048));
        for (float x : soft.input)
            check(!std::isnan(x));
        return 0;
    }
    const unsigned d1 = data[0] & 7, d2 = data[1] & 7, count = data[2] % 24;
    const size_t segments = 1 + data[3] % 3;
    std::vector<uint8_t> symbols;
    for (size_t s = 0; s < segments; ++s) {
        const auto seg =
            m110a_preamble_segment(d1, d2, count >= s ? count - unsigned(s) : 0);
        symbols.insert(symbols.end(), seg.begin(), seg.end());
    }
    // The rest: each byte a symbol (low 3 bits), repeated up to 16 times (high bits).
    for (size_t k = 4; k < size && symbols.size() < 200000; ++k)
        symbols.insert(symbols.end(), 1 + (data[k] >> 4), uint8_t(data[k] & 7));
    psk_modulator_config mc;
    mc.sample_rate = 9600;
    static const psk_modulator modulator(mc);
    std::vector<std::complex<float>> x = modulator.baseband(symbols);
    // Corrupt some samples with the input bytes themselves (big, small, NaN-free).
    for (size_t k = 4; k < size; ++k)
        if ((data[k] & 0x0F) == 0x0F)
            x[(k * 7919) % x.size()] *= float(data[k]) / 16.0f;
    x.resize(x.size() + 9600, {}); // a second of silence lets a burst end
    m110a_receiver rx;
    std::vector<m110a_burst> bursts;
    for (size_t k = 0; k < x.size(); k += 1000)
        rx.process(x.data() + k, std::min<size_t>(1000, x.size() - k), bursts);
    for (const m110a_burst& b : bursts) {
        const m110a_waveform* w = m110a_waveform_by_name(b.mode);
        check(w != nullptr);
        check(std::isfinite(b.frequency_offset_hz));
        // Never more user bytes than the time listened could carry at the burst's rate
        // (a cut burst reports what it decoded until it gave the signal up).
        check(double(b.bytes.size()) * 8 <= double(x.size()) / 9600.0 * w->user_bps + 64);
    }
    return 0;
}
