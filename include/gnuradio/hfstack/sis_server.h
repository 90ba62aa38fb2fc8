/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_SIS_SERVER_H
#define INCLUDED_HFSTACK_SIS_SERVER_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

#include <cstddef>
#include <string>

namespace gr {
namespace hfstack {

/*!
 * \brief TCP server for STANAG 5066 SIS clients (Annex A), one PDU per S_primitive.
 * \ingroup hfstack
 *
 * Message output `sis_out` (to the node's `sis_in`):
 * - each primitive a client sends, as PDU {client_id, from_client: #t} . Edition 3 frame;
 * - connection events with an empty payload: {client_id, client_event: "connected"},
 *   {client_id, client_event: "closed"} and {client_id, client_event: "invalid",
 *   reason, fatal} when a client sends bytes that are not SIS.
 *
 * Message input `sis_in` (from the node's `sis_out`): PDU {client_id} . SIS frame is
 * written to that client; {client_id, client_event: "disconnect", reason} closes the
 * connection once what is queued for it has been written.
 *
 * Client ids start at 1 and are never reused while the block exists. The socket is
 * opened when the flowgraph starts: top_block::start() throws std::runtime_error
 * ("sis_server: cannot listen on ADDRESS:PORT: REASON") if it cannot listen.
 */
class HFSTACK_API sis_server : virtual public gr::block
{
public:
    typedef std::shared_ptr<sis_server> sptr;

    /*!
     * \param address local address to listen on ("0.0.0.0" for every interface)
     * \param port TCP port; 0 picks a free one (see port())
     * \param max_clients further connections are accepted and closed at once
     */
    static sptr
    make(const std::string& address = "127.0.0.1", int port = 5066, int max_clients = 64);

    //! Port listened on once started (the requested one before).
    virtual int port() const = 0;

    //! Client connections currently open.
    virtual size_t clients() const = 0;
};

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_SIS_SERVER_H */
