/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* x2x-slep, the XMPP bridge's default transport: the XEP-0361 ("Zero Handshake Server
 * to Server", xmpp.org/extensions/xep-0361.html) byte stream between two bridges,
 * carried in one SLEP stream per direction pair (slep.h; SLEP makes it reliable and
 * ordered across link breaks). This file is the byte stream's codec; the application
 * opens the SLEP stream (opened without SLEP's own compression) and moves the bytes.
 *
 * Wire format of each direction, as XEP-0361 0.3 has it: no stream header is sent;
 * both ends behave as if <stream:stream xmlns='jabber:server'> had been exchanged, and
 * what follows is the sequence of stanzas, top-level xmlns left out (implied), no
 * whitespace keepalives (XEP-0365 forbids them on STANAG 5066). `</stream:stream>`
 * ends a direction. With compression (our choice, not in either XEP: XEP-0365 0.3
 * describes the XEP-0361 stream over a reliable 5066 service, and leaves compression
 * to the link), the direction's bytes are one raw DEFLATE stream (RFC 1951), flushed
 * after each stanza so the far end can parse every stanza as soon as its bytes arrive,
 * and with the history of all earlier stanzas as dictionary: a chat stanza costs a
 * fraction of its size. The flush is a partial one (Z_PARTIAL_FLUSH: an empty
 * fixed-code block of 10 bits where a sync flush puts 4-5 bytes; any inflater reads
 * both), and matches of 5 bytes or fewer are not looked for (Z_FILTERED): in random
 * text, as chat bodies of hex dumps carry, they cost more bits than the literals they
 * replace (a 1024-digit body takes 12 % fewer bytes without them). Both only change
 * what this end writes. Both ends start from a preset dictionary
 * (x2x_slep_dictionary()), part of the wire format.
 *
 * Delivery: the writer remembers where each stanza ends in the SLEP stream; the
 * application tells it how many bytes SLEP has had confirmed, and gets the ids of the
 * stanzas now delivered. A reset stream loses what was not confirmed: those stanzas
 * failed (the bridge sends them again on a new stream, with a new DEFLATE history). */
#ifndef HFSTACK_KERNELS_NET_XMPP_X2X_SLEP_H
#define HFSTACK_KERNELS_NET_XMPP_X2X_SLEP_H

#include "deflate.h"
#include "xmpp_bridge.h"
#include "xmpp_splitter.h"

#include <deque>

namespace gr {
namespace hfstack {
namespace net {

// The preset dictionary both ends' DEFLATE streams start from: the vocabulary of
// server-to-server stanzas, so that even a stream's first stanza (a presence at log-in,
// with its entity capabilities) costs a fraction of its size.
const std::string& x2x_slep_dictionary();

class x2x_slep_writer
{
public:
    explicit x2x_slep_writer(bool compress);
    // The stream bytes carrying `stanza`: with `flush` all of it, so the far end can
    // parse it from these bytes alone. Without, DEFLATE may keep its end until the next
    // flush(): stanzas written back to back and flushed once share one DEFLATE block
    // (one Huffman table, no flush marker between them), which a burst of small
    // stanzas pays for several times over otherwise.
    bytes write(xmpp_stanza_id id, const std::string& stanza, bool flush = true);
    // Ends what write() kept: every stanza written so far is in the bytes returned
    // (empty when nothing was kept).
    bytes flush();
    bool unflushed() const { return !d_unflushed.empty(); }
    uint64_t unflushed_plain_bytes() const { return d_unflushed_plain; }
    bytes close(); // </stream:stream>, flushed
    // The first `offset` bytes of the stream are confirmed: the stanzas they complete.
    std::vector<xmpp_stanza_id> confirmed(uint64_t offset);
    // Written, not confirmed (what failed when the stream is reset), in order.
    std::vector<xmpp_stanza_id> unconfirmed() const;
    uint64_t plain_bytes() const { return d_plain; } // stanza bytes before DEFLATE
    uint64_t wire_bytes() const { return d_wire; }   // after (the SLEP stream's bytes)

private:
    bool d_compress;
    deflater d_z;
    std::deque<std::pair<uint64_t, xmpp_stanza_id>> d_ends; // end offset, id
    std::vector<xmpp_stanza_id> d_unflushed; // written, their end not yet out
    uint64_t d_unflushed_plain = 0;
    uint64_t d_plain = 0, d_wire = 0;
};

class x2x_slep_reader
{
public:
    x2x_slep_reader(bool compress, size_t max_stanza_bytes);
    // Appends the stanzas `data` completes; false once the stream is broken (garbage,
    // a DEFLATE error, malformed XML, an oversized stanza): error() says why, and the
    // SLEP stream should be reset.
    bool feed(const uint8_t* data, size_t size, std::vector<xml_element>& out);
    const std::string& error() const { return d_error; }
    bool closed() const { return d_splitter.closed(); } // the peer ended its direction
    uint64_t plain_bytes() const { return d_plain; }
    uint64_t wire_bytes() const { return d_wire; }

private:
    bool parse(const uint8_t* plain, size_t size, std::vector<xml_element>& out);

    bool d_compress;
    inflater d_z;
    xmpp_splitter d_splitter;
    std::string d_error;
    uint64_t d_plain = 0, d_wire = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
