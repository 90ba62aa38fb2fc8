/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The XMPP bridge's side of one external component connection (XEP-0114, Jabber
 * Component Protocol, namespace jabber:component:accept), as a sans-IO kernel: the
 * bridge connects to its local XMPP server as the component for one remote domain,
 * and this class speaks the protocol over the bytes the caller moves.
 *
 *   component -> server  <stream:stream xmlns='jabber:component:accept' to='DOMAIN'>
 *   server -> component  <stream:stream ... from='DOMAIN' id='ID'>
 *   component -> server  <handshake>HEX</handshake>, HEX = lower-case hex of
 *                        SHA-1(ID followed by the shared secret), per XEP-0114 section 3
 *   server -> component  <handshake/>   (then stanzas both ways)
 *                        or <stream:error> (not-authorized, conflict, ...) and close
 * (XEP-0114 v1.6, xmpp.org/extensions/xep-0114.html.) Malformed XML, a stanza over
 * the size limit or a stream error from the server end the session with an `error`
 * event; the caller closes the connection, calls on_disconnected() and, to retry,
 * start() on a new one. Stanzas are not lost across this: the bridge keeps what it
 * could not hand over (xmpp_bridge.h), and with confirm_written this class keeps what
 * it wrote until the server has taken it. XEP-0114 has no acknowledgement, but a server
 * handles a session's stanzas in order: after what it writes the stream sends an IQ
 * addressed to its own domain (id "hfstack-written-N"), which the server routes back
 * to it; when that comes back, everything written before it has been taken. What was
 * written but not confirmed when the connection dropped is written again, first, once
 * the next session is ready: nothing is lost, a stanza the server took just before
 * the drop may arrive twice. */
#ifndef HFSTACK_KERNELS_NET_XMPP_COMPONENT_H
#define HFSTACK_KERNELS_NET_XMPP_COMPONENT_H

#include "xmpp_splitter.h"

#include <deque>
#include <optional>

namespace gr {
namespace hfstack {
namespace net {

// The <handshake/> content a component sends for this stream id and secret.
std::string component_handshake(const std::string& stream_id, const std::string& secret);
// What a server checks (hex compared case-insensitively, surrounding blanks ignored).
bool verify_component_handshake(const std::string& stream_id,
                                const std::string& secret,
                                const std::string& offered);

struct xmpp_component_event {
    enum class kind {
        ready,  // the server accepted the handshake: stanzas may flow
        stanza, // `stanza` from the server (its namespace still jabber:component:accept)
        closed, // the server ended the stream cleanly
        error,  // `text`: why the session is over (the caller closes the connection)
    };
    kind what = kind::ready;
    xml_element stanza;
    std::string text;
};

struct xmpp_component_actions {
    std::string to_server; // bytes to write to the connection, in order
    std::vector<xmpp_component_event> events;
};

class xmpp_component_stream
{
public:
    // domain: the component's name at the server (the remote domain it stands for).
    // confirm_written: keep written stanzas until the server has taken them (above);
    // at most max_unconfirmed are kept, the oldest given up beyond (counted).
    xmpp_component_stream(std::string domain,
                          std::string secret,
                          size_t max_stanza_bytes = 65536,
                          bool confirm_written = false,
                          size_t max_unconfirmed = 4096);

    void start(); // the connection is up: our stream header
    void on_bytes(const uint8_t* data, size_t size);
    void on_disconnected(); // the connection went away: back to the start
    // A stanza to the server; false (nothing written) unless ready().
    bool send(const xml_element& stanza);
    void close(); // </stream:stream>
    xmpp_component_actions take_actions();

    bool ready() const { return d_state == state::ready; }
    const std::string& domain() const { return d_domain; }
    const std::string& stream_id() const { return d_stream_id; }
    uint64_t stanzas_in() const { return d_in; }
    uint64_t stanzas_out() const { return d_out; }
    size_t unconfirmed() const { return d_unconfirmed.size(); }
    uint64_t rewritten() const { return d_rewritten; } // written again after a drop
    uint64_t given_up() const { return d_given_up; }   // beyond max_unconfirmed

private:
    enum class state { idle, awaiting_header, awaiting_handshake, ready, over };
    void fail(const std::string& why);
    void on_element(xmpp_split_event& e);
    bool is_marker(const xml_element& el) const;

    std::string d_domain, d_secret;
    size_t d_max;
    state d_state = state::idle;
    std::optional<xmpp_splitter> d_splitter;
    std::string d_stream_id;
    xmpp_component_actions d_actions;
    uint64_t d_in = 0, d_out = 0;
    bool d_confirm;
    size_t d_max_unconfirmed;
    std::deque<std::string> d_unconfirmed; // written, not yet known taken, in order
    size_t d_marked = 0;                   // how many of them the marker in flight covers
    uint64_t d_marker = 0;                 // its number; 0: none in flight
    uint64_t d_next_marker = 1;
    uint64_t d_rewritten = 0, d_given_up = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
