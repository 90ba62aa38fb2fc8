/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_PCAP_SINK_H
#define INCLUDED_HFSTACK_PCAP_SINK_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

namespace gr {
namespace hfstack {

/*!
 * \brief Writes PDUs to a capture file that Wireshark decodes.
 * \ingroup hfstack
 *
 * Message input `in` takes PDUs (metadata dict, u8vector).
 * - format "dpdu": the payload holds D_PDUs (one, or a whole modem burst); each
 *   D_PDU found is one record of link type 237. A payload with no D_PDU in it is
 *   written whole so nothing is dropped from the capture.
 * - format "sis": the payload is SIS bytes of one connection; metadata `client_id`
 *   (integer, default 0) and `from_client` (bool, default true) place it in a
 *   synthetic TCP connection to port 5066.
 * Metadata `time` (seconds since the epoch) stamps the record; otherwise the
 * system clock does. The file is created (overwritten) when the block is made, so a
 * bad path raises there; it is flushed in stop() and closed with the block.
 */
class HFSTACK_API pcap_sink : virtual public gr::block
{
public:
    typedef std::shared_ptr<pcap_sink> sptr;

    /*!
     * \param filename capture file to create (overwritten)
     * \param format "dpdu" or "sis"
     */
    static sptr make(const std::string& filename, const std::string& format = "dpdu");

    //! Records written so far.
    virtual uint64_t records() const = 0;
};

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_PCAP_SINK_H */
