/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Status messages the modem blocks post (the node's phy_status contract): a dict with
// `event` and `time` (seconds since the epoch).
#ifndef INCLUDED_HFSTACK_MODEM_STATUS_H
#define INCLUDED_HFSTACK_MODEM_STATUS_H

#include <gnuradio/hfstack/metadata.h>
#include <pmt/pmt.h>

#include <chrono>

namespace gr {
namespace hfstack {

inline double wall_clock_s()
{
    return std::chrono::duration<double>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline pmt::pmt_t modem_status(const char* event)
{
    pmt::pmt_t d = pmt::make_dict();
    d = pmt::dict_add(d, metadata::event(), pmt::mp(event));
    return pmt::dict_add(d, metadata::time(), pmt::from_double(wall_clock_s()));
}

} // namespace hfstack
} // namespace gr

#endif
