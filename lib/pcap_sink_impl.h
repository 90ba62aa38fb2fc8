/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_PCAP_SINK_IMPL_H
#define INCLUDED_HFSTACK_PCAP_SINK_IMPL_H

#include "fault_guard.h"

#include <gnuradio/hfstack/pcap_sink.h>

#include "dl/pcap.h"

#include <memory>
#include <mutex>

namespace gr {
namespace hfstack {

class pcap_sink_impl : public pcap_sink
{
public:
    pcap_sink_impl(const std::string& filename, const std::string& format);

    bool stop() override;
    uint64_t records() const override;

private:
    void handle_pdu(const pmt::pmt_t& pdu);
    fault_guard d_faults;

    const bool d_sis;
    mutable std::mutex d_mutex; // records() is called from other threads
    std::unique_ptr<dl::dpdu_capture> d_dpdu;
    std::unique_ptr<dl::sis_capture> d_sis_capture;
};

} // namespace hfstack
} // namespace gr

#endif
