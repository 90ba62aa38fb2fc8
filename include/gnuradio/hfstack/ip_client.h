/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_IP_CLIENT_H
#define INCLUDED_HFSTACK_IP_CLIENT_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

#include <map>
#include <string>

namespace gr {
namespace hfstack {

/*!
 * \brief The IP client of STANAG 5066 Annex F.12: IP datagrams in and out, SIS
 * primitives to and from a node, one whole datagram per U_PDU on SAP 9.
 * \ingroup hfstack
 *
 * Message ports (PDUs are pmt::cons(metadata dict, u8vector)):
 * - `ip_in`: one IP datagram (IPv4 or IPv6, no link header) per PDU, e.g. from a TUN
 *   device;
 * - `ip_out`: datagrams received over HF, and the ICMP errors the client generates;
 * - `sis_out`: SIS frames to a node's `sis_in`, with `client_id`; a `client_event`
 *   "connected" first (start());
 * - `sis_in`: a node's `sis_out`; PDUs for other client ids are ignored, so the IP
 *   client can share the node with a sis_server. A `client_event` "disconnect" (the
 *   node or the transport dropped it) unbinds it: datagrams queue, and it binds again
 *   10 s later, or at once on "connected" (a TCP transport such as sis_tcp_link
 *   reached its server);
 * - `stats`: a dict of the counters (totals, drops by cause, per peer), every
 *   `stats_interval` seconds and at stop.
 *
 * The queue-age limit runs on the monotonic clock in real time: it faces the Linux
 * TCP/IP stack, not the emulated link.
 */
class HFSTACK_API ip_client : virtual public gr::block
{
public:
    typedef std::shared_ptr<ip_client> sptr;

    /*!
     * \param options IP client options "name=value;name=value" (ip_client_option_help():
     *        every name, default and meaning; e.g. "routes=10.0.2.0/24=0.0.0.2
     * default=0.0.0.2") \param client_id the SIS client id it uses towards the node (not
     * one a sis_server gives out: those count up from 1) \param stats_interval seconds
     * between `stats` messages; 0: only at stop
     */
    static sptr make(const std::string& options = "",
                     int client_id = 0x7FFF0009,
                     double stats_interval = 10.0);

    //! Current value of an option, as text.
    virtual std::string option(const std::string& name) const = 0;
    //! Every counter by name (per peer: peer.a.b.c.d.name).
    virtual std::map<std::string, double> counters() const = 0;
    //! Whether the node accepted the bind.
    virtual bool bound() const = 0;
};

//! Every IP client option as "name (default ...): help" lines, for --help texts.
HFSTACK_API std::string ip_client_option_help();

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_IP_CLIENT_H */
