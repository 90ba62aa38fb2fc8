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
 * bytes than the time it listened could carry. */
#include "phy/m110a_receiver.h"
#include "phy/m110a_waveform.h"
#include "phy/psk_modulator.h"

#include <cmath>
#include <cstdlib>

using namespace gr::hfstack::phy;

static void check(bool ok)
{
    if (!ok)
        std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 4)
        return 0;
    const unsigned d1 = data[0] & 7, d2 = data[1] & 7, count = data[2] % 24;
    const size_t segments = 1 + data[3] % 3;
    std::vector<uint8_t> symbols;
    for (size_t s = 0; s < segments; ++s) {
        const auto seg = m110a_preamble_segment(d1, d2, count >= s ? count - unsigned(s) : 0);
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
