/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* libFuzzer target: the App D (STANAG 5069, 3 kHz) receiver on samples the input spells
 * out. The input picks the WID field's five dibits (any WN, interleaver and code,
 * reserved WNs and failed check bits included), the count field's first dibit and how
 * much of the preamble to send, then symbols (8PSK numbers, or 256QAM points) and raw
 * sample corruption (big, small, NaN), so detection, the field reading, the equaliser,
 * the demapper and the block decoder all see malformed air, with and without the
 * receiver trying the data's readings itself. Checks that the receiver
 * never throws or crashes, reports only modes that exist and never more bytes than the
 * time it listened could carry.
 * data[3] bit 3: the data equalised by the block frequency-domain equaliser (its
 * probe measurements, window placement and iterations on the same malformed air; the
 * default at 3 kHz is the MMSE-DFE); bit 4: two threads (the MAP pass beside the
 * Viterbi, the FDE frames' demapping split, with the block FDE each interleaver block
 * decoded on the second thread while the next block's frames are equalised; at the
 * input's end complete_decoding, as every caller does, hands on what was still
 * decoding there).
 * data[3] bit 7 set: the decoder mode instead (fuzz_support.h decode_symbols): WN
 * 1 + data[0] % 13 at 3 kHz, interleaver US or S by data[1] bit 0 (the longer blocks
 * cost up to 16 times as much), constraint
 * length 7 or 9 (data[1] bit 2), either tail-biting start (bit 3), error variance from
 * data[2], one or two blocks (data[3] bit 6) of the symbols from data[4] on. */
#include "fuzz_support.h"
#include "phy/m110d_decoder.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_waveform.h"
#include "phy/psk_modulator.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace gr::hfstack::phy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 4)
        return 0;
    if (data[3] & 0x80) {
        const auto mode = m110d_mode_for(3,
                                         1 + data[0] % 13,
                                         data[1] & 1 ? m110d_interleaver::short_
                                                     : m110d_interleaver::ultra_short);
        if (!mode || size < 5)
            return 0;
        const m110d_demapper demapper(*mode);
        m110d_block_decoder decoder(*mode,
                                    data[1] & 4 ? 9 : 7,
                                    data[1] & 8 ? tail_biting_start::from_block_start
                                                : tail_biting_start::from_full_register);
        decode_symbols(demapper,
                       decoder,
                       data + 4,
                       size - 4,
                       std::pow(10.0, (20.0 - (data[2] & 0x3F)) / 10.0),
                       1 + ((data[3] >> 6) & 1));
        return 0;
    }
    const auto& psk8 = m110d_constellation(3);
    const auto& qam256 = m110d_constellation(8);
    // A preamble (M = 1) whose count and WID dibits the input gives, cut after
    // 150 + data[2] % 200 chips (the whole is 320).
    const auto mode = *m110d_mode_for(3, 6, m110d_interleaver::short_);
    std::vector<uint8_t> p = m110d_preamble(mode, {}, 7);
    const std::vector<uint8_t> count =
        m110d_preamble_section({ uint8_t(data[1] >> 6), 0, 0, 0 },
                               m110d_pn_table::count,
                               32,
                               m110d_pn_alignment::per_symbol);
    const std::vector<uint8_t> wid =
        m110d_preamble_section({ uint8_t(data[0] >> 6),
                                 uint8_t(data[0] >> 4 & 3),
                                 uint8_t(data[0] >> 2 & 3),
                                 uint8_t(data[0] & 3),
                                 uint8_t(data[1] & 3) },
                               m110d_pn_table::wid,
                               32,
                               m110d_pn_alignment::per_symbol);
    std::copy(count.begin(), count.end(), p.begin() + 32);
    std::copy(wid.begin(), wid.end(), p.begin() + 160);
    p.resize(std::min<size_t>(p.size(), 150 + data[2] % 200));
    std::vector<std::complex<float>> points;
    for (uint8_t s : p)
        points.push_back(psk8[s]);
    // The rest: each byte a symbol, 8PSK or 256QAM by data[3]'s low bit, repeated up to
    // 4 times (8PSK: high bits).
    const bool qam = data[3] & 1;
    for (size_t k = 4; k < size && points.size() < 200000; ++k)
        points.insert(points.end(),
                      qam ? 1 : 1 + (data[k] >> 6),
                      qam ? qam256[data[k]] : psk8[data[k] & 7]);
    psk_modulator_config mc;
    mc.sample_rate = 9600;
    static const psk_modulator modulator(mc);
    std::vector<std::complex<float>> x = modulator.baseband(points);
    // Corrupt some samples with the input bytes themselves, some to NaN.
    for (size_t k = 4; k < size; ++k) {
        if ((data[k] & 0x0F) == 0x0F)
            x[(k * 7919) % x.size()] *= float(data[k]) / 16.0f;
        if (data[k] == 0xEE)
            x[(k * 104729) % x.size()] = std::numeric_limits<float>::quiet_NaN();
    }
    x.resize(x.size() + 9600, {}); // a second of silence lets a burst end
    // data[3] bit 1: the receiver tries the data's readings itself (a burst may be
    // equalised again from its preamble); bit 2: no block judged.
    m110d_receiver_config config;
    config.find_scrambler = config.find_tail_biting = (data[3] & 2) != 0;
    if (data[3] & 4)
        config.reliability_threshold = -std::numeric_limits<double>::infinity();
    if (data[3] & 8)
        config.data_equaliser = m110d_data_equaliser::block_fde;
    if (data[3] & 0x10)
        config.threads = 2;
    m110d_receiver rx(config);
    std::vector<m110d_burst> bursts;
    for (size_t k = 0; k < x.size(); k += 1000)
        rx.process(x.data() + k, std::min<size_t>(1000, x.size() - k), bursts);
    // Two threads: blocks may still be decoding (one thread: nothing waits).
    rx.complete_decoding(bursts);
    for (const m110d_burst& b : bursts) {
        const auto m = m110d_mode_by_name(b.mode);
        check(m.has_value());
        check(std::isfinite(b.frequency_offset_hz));
        check(!std::isnan(b.least_reliability));
        // At most a whole interleaver block more than the time carries (a block's bytes
        // come out when its last symbol is in).
        check(double(b.bytes.size()) * 8 <=
              double(x.size()) / 9600.0 * m->user_bps() + m->input_bits_per_block + 64);
    }
    return 0;
}
