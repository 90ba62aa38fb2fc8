/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_NODE_H
#define INCLUDED_HFSTACK_NODE_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {

/*!
 * \brief A STANAG 5066 node: subnet interface, channel access (CAS-1) and data
 * transfer (ARQ, non-ARQ), driven in real time.
 * \ingroup hfstack
 *
 * Message ports (PDUs are pmt::cons(metadata dict, u8vector); keys in metadata.h):
 * - `sis_in`: one SIS frame per PDU from a client named by `client_id`; or a
 *   connection event (`client_event` "connected", "closed", "invalid" with `reason`
 *   and `fatal`) from a sis_server.
 * - `sis_out`: SIS frames to clients (`client_id`, `from_client` false), and
 *   `client_event` "disconnect" with `reason` when the node drops a client.
 * - `to_phy`: one transmission per PDU: the D_PDUs back to back, metadata
 *   `data_rate` (bps), `interleaver` ("none", "short", "long"), `air_time` (s).
 * - `from_phy`: decoded bytes of one received burst, or of a piece of it with
 *   `burst_continues` true (a streaming modem; the node answers after the last
 *   piece); optional metadata `snr_db`, `bytes_bad`, `data_rate`, `interleaver`.
 * - `phy_status`: a dict (or a PDU's metadata) with `event` = tx_started,
 *   tx_finished, carrier_on or carrier_off.
 * - `stats`: a dict of every counter, every `stats_interval` seconds and at stop.
 *
 * Protocol time runs `time_scale` times faster than the monotonic clock, so an
 * emulated link can run faster with consistent timers (every block of a flowgraph
 * must use the same factor). A timer thread starts in start() and stops in stop().
 */
class HFSTACK_API node : virtual public gr::block
{
public:
    typedef std::shared_ptr<node> sptr;

    /*!
     * \param address own node address "a.b.c.d" (28 bits)
     * \param options node options "name=value;name=value" (node_options(): every
     *        name, default and meaning; e.g. "mode=1200S;cas.idle_timeout=60")
     * \param time_scale protocol seconds per real second (> 0)
     * \param pcap_file if not empty, every D_PDU sent and received is written there
     *        (LINKTYPE 237, Wireshark's STANAG 5066 D_PDU dissector)
     * \param stats_interval seconds (protocol time) between `stats` messages; 0: only
     *        at stop
     */
    static sptr make(const std::string& address = "0.0.0.1",
                     const std::string& options = "",
                     double time_scale = 1.0,
                     const std::string& pcap_file = "",
                     double stats_interval = 10.0);

    //! Current value of a node option, as text.
    virtual std::string option(const std::string& name) const = 0;
    //! Every counter by name (the figures of the `stats` port); clients_connected is
    //! the clients connected now, clients_accepted every connection since the start.
    virtual std::map<std::string, double> counters() const = 0;
    //! One entry per peer the node keeps state for: `peer` (a.b.c.d), `state` (CAS:
    //! idle, requesting, up, breaking), `tx_mode` and `rx_mode` ("2400S", "600L", ...:
    //! what the node sends to the peer in, and what the peer sends in).
    virtual std::vector<std::map<std::string, std::string>> links() const = 0;
    //! The bound SAPs: SAP -> client id.
    virtual std::map<int, uint32_t> bindings() const = 0;
    //! Changes since the last call, oldest first, each the moment the node made it:
    //! `event` link_up / link_down (`peer`, `tx_mode`, `rx_mode`), rate_change (`peer`,
    //! `direction` tx or rx, `old`, `new`), client_bind / client_unbind (`sap`,
    //! `client`); `time` in seconds since the epoch. At most 1000 are kept (`dropped`
    //! on the next event says how many were lost).
    virtual std::vector<std::map<std::string, std::string>> take_events() = 0;
    //! Whether the modem hears another station's carrier now (its carrier_on without
    //! a carrier_off since): the channel busy, as the node's carrier sense sees it.
    virtual bool channel_busy() const = 0;
};

//! Every node option as "name default help" lines, for --help texts.
HFSTACK_API std::string node_option_help();

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_NODE_H */
