/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pcap_sink_impl.h"

#include "dl/deframer.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/io_signature.h>

#include <chrono>
#include <stdexcept>

namespace gr {
namespace hfstack {

pcap_sink::sptr pcap_sink::make(const std::string& filename, const std::string& format)
{
    return gnuradio::make_block_sptr<pcap_sink_impl>(filename, format);
}

namespace {
bool parse_format(const std::string& format)
{
    if (format == "dpdu")
        return false;
    if (format == "sis")
        return true;
    throw std::invalid_argument("pcap_sink: format must be \"dpdu\" or \"sis\", not \"" +
                                format + "\"");
}
} // namespace

pcap_sink_impl::pcap_sink_impl(const std::string& filename, const std::string& format)
    : gr::block(
          "pcap_sink", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_sis(parse_format(format))
{
    // Opened here, as GNU Radio's file_sink does, so a bad path fails at construction
    // with its reason instead of inside a scheduler thread.
    if (d_sis)
        d_sis_capture = std::make_unique<dl::sis_capture>(filename);
    else
        d_dpdu = std::make_unique<dl::dpdu_capture>(filename);
    message_port_register_in(pmt::mp("in"));
    set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& msg) {
        d_faults(d_logger, "in", [&] { handle_pdu(msg); });
    });
}

bool pcap_sink_impl::stop()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_sis_capture)
        d_sis_capture->flush();
    if (d_dpdu)
        d_dpdu->flush();
    return block::stop();
}

uint64_t pcap_sink_impl::records() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_sis_capture)
        return d_sis_capture->records();
    return d_dpdu ? d_dpdu->records() : 0;
}

void pcap_sink_impl::handle_pdu(const pmt::pmt_t& pdu)
{
    if (!pmt::is_pair(pdu) || !pmt::is_u8vector(pmt::cdr(pdu))) {
        d_logger->warn("dropping a message that is not a PDU of u8vector");
        return;
    }
    const pmt::pmt_t meta =
        pmt::is_dict(pmt::car(pdu)) ? pmt::car(pdu) : pmt::make_dict();
    const auto& data = pmt::u8vector_elements(pmt::cdr(pdu));

    const pmt::pmt_t t = pmt::dict_ref(meta, metadata::time(), pmt::PMT_NIL);
    uint64_t timestamp_us;
    if (pmt::is_number(t) && pmt::to_double(t) >= 0)
        timestamp_us = uint64_t(pmt::to_double(t) * 1e6);
    else
        timestamp_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());

    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_sis_capture) {
        const auto id = pmt::dict_ref(meta, metadata::client_id(), pmt::from_long(0));
        const auto from = pmt::dict_ref(meta, metadata::from_client(), pmt::PMT_T);
        const long client = pmt::is_integer(id) ? pmt::to_long(id) : 0;
        if (client < 0 || client > 25000) {
            d_logger->warn("client_id {} out of range 0..25000; PDU not captured",
                           client);
            return;
        }
        d_sis_capture->write(timestamp_us, uint16_t(client), pmt::is_true(from), data);
        return;
    }
    dl::dpdu_deframer deframer;
    const auto found = deframer.push(data.data(), data.size());
    if (found.empty()) {
        d_dpdu->write(timestamp_us, data);
        return;
    }
    for (const auto& r : found) {
        const auto begin = data.begin() + r.stream_offset;
        d_dpdu->write(timestamp_us, dl::bytes(begin, begin + r.length));
    }
}

} // namespace hfstack
} // namespace gr
