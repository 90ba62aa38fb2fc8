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

#include "dl/rate_change.h"

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

// The mode a burst's metadata names; nothing when it names no rate the data link has a
// code for, or no interleaver of the modem.
inline std::optional<dl::modem_mode> mode_from_metadata(const pmt::pmt_t& meta)
{
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
    return m;
}

inline pmt::pmt_t add_mode_metadata(pmt::pmt_t meta, const dl::modem_mode& m)
{
    meta = pmt::dict_add(meta, metadata::data_rate(),
                         pmt::from_long(long(dl::data_rate_bps(m.data_rate))));
    return pmt::dict_add(meta, metadata::interleaver(), pmt::mp(dl::interleaver_name(m.interleaving)));
}

} // namespace hfstack
} // namespace gr

#endif
