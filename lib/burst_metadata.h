/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The waveform mode in burst metadata (`data_rate` in bps, `interleaver` by name), read
// and written the same way by every block that carries bursts to or from a modem.
#ifndef INCLUDED_HFSTACK_BURST_METADATA_H
#define INCLUDED_HFSTACK_BURST_METADATA_H

#include <gnuradio/hfstack/metadata.h>
#include <pmt/pmt.h>

#include "dl/node_engine.h"
#include "phy/waveform_modes.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {

inline std::string meta_string(const pmt::pmt_t& meta, const pmt::pmt_t& key)
{
    const pmt::pmt_t v = pmt::dict_ref(meta, key, pmt::PMT_NIL);
    if (pmt::is_symbol(v))
        return pmt::symbol_to_string(v);
    return {};
}

// The mode a burst's metadata names, of either standard: `mode` by name first (a
// STANAG 5069 mode's bandwidth with it), else `data_rate` and `interleaver`; nothing
// when it names no mode the data link has a code for.
inline std::optional<dl::node_waveform> waveform_from_metadata(const pmt::pmt_t& meta)
{
    const std::string name = meta_string(meta, metadata::mode());
    if (!name.empty()) {
        try {
            return dl::node_waveform_by_name(name);
        } catch (const std::invalid_argument&) {
            return std::nullopt;
        }
    }
    const pmt::pmt_t rate = pmt::dict_ref(meta, metadata::data_rate(), pmt::PMT_NIL);
    if (!pmt::is_integer(rate))
        return std::nullopt;
    const long bps = pmt::to_long(rate);
    const auto code = dl::interleaving_code(meta_string(meta, metadata::interleaver()));
    if (!code)
        return std::nullopt;
    dl::modem_mode m;
    m.interleaving = *code;
    try {
        if (bps <= 0 || bps > 1000000)
            return std::nullopt;
        m.data_rate = dl::data_rate_code(unsigned(bps));
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
    return dl::node_waveform{ 0, m };
}

// The mode of a burst for a node at `s5069_bandwidth_khz` (0: STANAG 4539): nothing for
// a mode of the other standard or another bandwidth.
inline std::optional<dl::modem_mode> mode_from_metadata(const pmt::pmt_t& meta,
                                                        unsigned s5069_bandwidth_khz = 0)
{
    const auto w = waveform_from_metadata(meta);
    if (!w || w->s5069_bandwidth_khz != s5069_bandwidth_khz)
        return std::nullopt;
    return w->mode;
}

// `data_rate` (bps) and `interleaver` of the mode; a STANAG 5069 one also by name in
// `mode`, which the modem blocks take first.
inline pmt::pmt_t add_mode_metadata(pmt::pmt_t meta,
                                    const dl::modem_mode& m,
                                    unsigned s5069_bandwidth_khz = 0)
{
    if (s5069_bandwidth_khz) {
        if (const auto w = dl::s5069_mode_of(s5069_bandwidth_khz, m)) {
            meta = pmt::dict_add(meta, metadata::mode(), pmt::mp(w->name()));
            meta = pmt::dict_add(
                meta, metadata::data_rate(), pmt::from_long(long(w->user_bps())));
            return pmt::dict_add(meta,
                                 metadata::interleaver(),
                                 pmt::mp(phy::m110d_interleaver_word(w->interleaver)));
        }
    }
    meta = pmt::dict_add(meta,
                         metadata::data_rate(),
                         pmt::from_long(long(dl::data_rate_bps(m.data_rate))));
    return pmt::dict_add(
        meta, metadata::interleaver(), pmt::mp(dl::interleaver_name(m.interleaving)));
}

} // namespace hfstack
} // namespace gr

#endif
