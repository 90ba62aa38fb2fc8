/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* An XMPP stream cut into its stanzas: bytes in, in pieces of any size, and out the
 * stream header, each complete top-level element (a stanza, or <handshake/>,
 * <stream:error/>...) as a tree (xmpp_element.h), and the stream's end. expat parses
 * incrementally without namespace processing. What XMPP forbids in a stream (RFC 6120
 * 11.1) ends the stream with an error: a DTD (so no entity can be declared and none
 * expanded), processing instructions, text that is not whitespace between stanzas.
 * Whitespace between stanzas (keepalives) is dropped. Bounded: a stanza of more than
 * max_stanza_bytes on the wire, or nested deeper than max_depth, is an error too, so
 * a peer cannot make the splitter hold more than about one stanza's worth.
 *
 * An error is final: the splitter gives nothing more and the stream must be closed (a
 * component connection) or reset (an HF byte stream). `start_implicit` opens the stream
 * as if a header with this default namespace had been read: XEP-0361 sends no header
 * and has both ends behave as if a jabber:server stream were open. */
#ifndef HFSTACK_KERNELS_NET_XMPP_SPLITTER_H
#define HFSTACK_KERNELS_NET_XMPP_SPLITTER_H

#include "xmpp_element.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

constexpr const char* xmpp_ns_streams = "http://etherx.jabber.org/streams";
constexpr const char* xmpp_ns_component = "jabber:component:accept"; // XEP-0114
constexpr const char* xmpp_ns_server = "jabber:server";              // server to server

struct xmpp_split_event {
    enum class kind {
        stream_open,  // `element`: the header, its attributes, no children
        stanza,       // `element`: a complete top-level element; `wire_bytes` it took
        stream_close, // </stream:stream>
    };
    kind what = kind::stanza;
    xml_element element;
    size_t wire_bytes = 0;
};

class xmpp_splitter
{
public:
    explicit xmpp_splitter(size_t max_stanza_bytes = 65536, size_t max_depth = 32);
    ~xmpp_splitter();
    xmpp_splitter(xmpp_splitter&&) noexcept;
    xmpp_splitter& operator=(xmpp_splitter&&) noexcept;

    // Before any feed(): the stream is open with this default namespace (no event).
    void start_implicit(const std::string& default_ns);
    // Appends what `data` completes to `out`; false once the stream is in error.
    bool feed(const uint8_t* data, size_t size, std::vector<xmpp_split_event>& out);
    bool failed() const;
    const std::string& error() const; // why, once failed
    bool in_stanza() const;           // part of a stanza has been read
    bool closed() const;              // </stream:stream> read

private:
    struct state;
    std::unique_ptr<state> d;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
