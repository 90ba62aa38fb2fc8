/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the App C receiver on samples the input spells out. The input picks
 * the D0..D2 codes (any rate and interleaver code, reserved and illegal ones included)
 * and how much of the preamble to send, then symbols (8PSK numbers, or 64QAM points)
 * and raw sample noise, so detection, the code reading, the equaliser, the demapper and
 * the block decoder all see malformed air. Checks that the receiver never throws or
 * crashes, reports only modes that exist and never more bytes than the time it
 * listened could carry.
 * data[0] bit 7 set: the decoder mode instead (fuzz_support.h decode_symbols): the mode
 * of rate code 1 + data[1] % 6 and interleaver code 1 + data[2] % 3 (US, VS, S: the
 * longer blocks cost up to 24 times as much),
 * error variance from data[3], one or two blocks (data[3] bit 7) of the symbols from
 * data[4] on. */
#include "fuzz_support.h"
#include "phy/m110c_decoder.h"
#include "phy/m110c_receiver.h"
#include "phy/m110c_waveform.h"
#include "phy/psk_modulator.h"

#include <cmath>
#include <cstdlib>

using namespace gr::hfstack::phy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 3)
        return 0;
    if (data[0] & 0x80) {
        if (size < 5)
            return 0;
        const auto mode = m110c_mode_by_code(1 + data[1] % 6, 1 + data[2] % 3);
        if (!mode)
            return 0;
        const m110c_demapper demapper(*mode);
        m110c_block_decoder decoder(*mode);
        decode_symbols(demapper,
                       decoder,
                       data + 4,
                       size - 4,
                       std::pow(10.0, (20.0 - (data[3] & 0x3F)) / 10.0),
                       1 + (data[3] >> 7));
        return 0;
    }
    const auto& psk8 = m110c_constellation(3);
    const auto& qam64 = m110c_constellation(6);
    // The preamble of any mode, its D0..D2 chips rotated as the input says (any
    // rate/interleaver code), cut after data[1] % 300 symbols.
    const std::vector<uint8_t> p =
        m110c_preamble(*m110c_mode_for(3200, m110c_interleaver::short_));
    std::vector<std::complex<float>> points;
    const size_t preamble_length = std::min<size_t>(p.size(), 180 + data[1] % 120);
    for (size_t k = 0; k < preamble_length; ++k) {
        unsigned s = p[k];
        if (k >= 216 && k < 255)
            s = (m110c_barker13[(k - 216) % 13] +
                 2 * ((data[0] >> (2 * ((k - 216) / 13))) & 3)) %
                8;
        points.push_back(psk8[s]);
    }
    // The rest: each byte a symbol, 8PSK or 64QAM by data[2]'s low bit, repeated up to
    // 4 times (high bits).
    const bool qam = data[2] & 1;
    for (size_t k = 3; k < size && points.size() < 200000; ++k)
        points.insert(points.end(),
                      1 + (data[k] >> 6),
                      qam ? qam64[data[k] & 63] : psk8[data[k] & 7]);
    psk_modulator_config mc;
    mc.sample_rate = 9600;
    static const psk_modulator modulator(mc);
    std::vector<std::complex<float>> x = modulator.baseband(points);
    // Corrupt some samples with the input bytes themselves (big, small, NaN-free).
    for (size_t k = 3; k < size; ++k)
        if ((data[k] & 0x0F) == 0x0F)
            x[(k * 7919) % x.size()] *= float(data[k]) / 16.0f;
    x.resize(x.size() + 9600, {}); // a second of silence lets a burst end
    m110c_receiver rx;
    std::vector<m110c_burst> bursts;
    for (size_t k = 0; k < x.size(); k += 1000)
        rx.process(x.data() + k, std::min<size_t>(1000, x.size() - k), bursts);
    for (const m110c_burst& b : bursts) {
        const auto mode = m110c_mode_by_name(b.mode);
        check(mode.has_value());
        check(std::isfinite(b.frequency_offset_hz));
        check(double(b.bytes.size()) * 8 <=
              double(x.size()) / 9600.0 * mode->user_bps + 64);
    }
    return 0;
}
