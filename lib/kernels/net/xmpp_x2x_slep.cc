/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_x2x_slep.h"

#include <algorithm>

namespace gr {
namespace hfstack {
namespace net {

namespace {

// The reader inflates its input in pieces of this many bytes into room for all they can
// expand to (DEFLATE reaches about 1032:1), so zlib never stops with output pending and
// a piece can never take more memory than this.
constexpr size_t inflate_piece = 64;
constexpr size_t inflate_room = inflate_piece * 1100 + 4096;

} // namespace

const std::string& x2x_slep_dictionary()
{
    // What server-to-server stanzas are made of, the most frequent last (DEFLATE's
    // nearest matches cost the fewest bits). Part of the wire format: both ends must
    // have the same text.
    static const std::string text =
        "<iq type='get' id=''><query xmlns='http://jabber.org/protocol/disco#info'/>"
        "<query xmlns='http://jabber.org/protocol/disco#items'/><query "
        "xmlns='jabber:iq:version'/><ping xmlns='urn:xmpp:ping'/></iq><iq "
        "type='result' id=''><identity category='conference' type='text' name=''/>"
        "<feature var='http://jabber.org/protocol/muc'/></query></iq>"
        "<error type='cancel'><service-unavailable "
        "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error><error type='wait'>"
        "<remote-server-timeout xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>"
        "<x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' "
        "role='participant'/><status code='110'/></x><x "
        "xmlns='http://jabber.org/protocol/muc'><history maxstanzas='20'/></x>"
        "<presence type='unavailable'/><presence type='subscribe'/><presence "
        "type='subscribed'/><presence type='probe'/><show>away</show><show>xa</show>"
        "<status></status><delay xmlns='urn:xmpp:delay' from='' "
        "stamp='2026-01-01T00:00:00Z'/>"
        "<stanza-id xmlns='urn:xmpp:sid:0' by='' id=''/><origin-id "
        "xmlns='urn:xmpp:sid:0' "
        "id=''/><request xmlns='urn:xmpp:receipts'/><received xmlns='urn:xmpp:receipts' "
        "id=''/><markable xmlns='urn:xmpp:chat-markers:0'/><displayed "
        "xmlns='urn:xmpp:chat-markers:0' id=''/><composing "
        "xmlns='http://jabber.org/protocol/chatstates'/><presence from='' to='' id=''>"
        "<priority>0</priority><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' "
        "node='' ver=''/></presence><message from='' to='' type='groupchat' id=''>"
        "<message from='' to='' type='chat' id='' xml:lang='en'><body></body>"
        "<active xmlns='http://jabber.org/protocol/chatstates'/></message>";
    return text;
}

x2x_slep_writer::x2x_slep_writer(bool compress)
    : d_compress(compress),
      d_z(deflate_matching::few_short_matches,
          deflate_flush::partial,
          compress ? x2x_slep_dictionary() : std::string())
{
}

bytes x2x_slep_writer::write(xmpp_stanza_id id, const std::string& stanza, bool flush)
{
    bytes out;
    const auto* p = reinterpret_cast<const uint8_t*>(stanza.data());
    if (d_compress)
        d_z.write(p, stanza.size(), out);
    else
        out.assign(p, p + stanza.size());
    d_plain += stanza.size();
    d_wire += out.size();
    d_unflushed.push_back(id);
    d_unflushed_plain += stanza.size();
    if (flush) {
        const bytes rest = this->flush();
        out.insert(out.end(), rest.begin(), rest.end());
    }
    return out;
}

bytes x2x_slep_writer::flush()
{
    bytes out;
    if (d_unflushed.empty())
        return out;
    if (d_compress)
        d_z.flush(out);
    d_wire += out.size();
    for (auto id : d_unflushed)
        d_ends.emplace_back(d_wire, id);
    d_unflushed.clear();
    d_unflushed_plain = 0;
    return out;
}

bytes x2x_slep_writer::close()
{
    static const std::string end = "</stream:stream>";
    bytes out = flush(); // counted by flush()
    bytes tail;
    const auto* p = reinterpret_cast<const uint8_t*>(end.data());
    if (d_compress) {
        d_z.write(p, end.size(), tail);
        d_z.flush(tail);
    } else {
        tail.assign(p, p + end.size());
    }
    d_plain += end.size();
    d_wire += tail.size();
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

std::vector<xmpp_stanza_id> x2x_slep_writer::confirmed(uint64_t offset)
{
    std::vector<xmpp_stanza_id> out;
    while (!d_ends.empty() && d_ends.front().first <= offset) {
        out.push_back(d_ends.front().second);
        d_ends.pop_front();
    }
    return out;
}

std::vector<xmpp_stanza_id> x2x_slep_writer::unconfirmed() const
{
    std::vector<xmpp_stanza_id> out;
    for (const auto& e : d_ends)
        out.push_back(e.second);
    out.insert(out.end(), d_unflushed.begin(), d_unflushed.end());
    return out;
}

x2x_slep_reader::x2x_slep_reader(bool compress, size_t max_stanza_bytes)
    : d_compress(compress),
      d_z(compress ? x2x_slep_dictionary() : std::string()),
      d_splitter(max_stanza_bytes)
{
    d_splitter.start_implicit(xmpp_ns_server);
}

bool x2x_slep_reader::parse(const uint8_t* plain,
                            size_t size,
                            std::vector<xml_element>& out)
{
    d_plain += size;
    std::vector<xmpp_split_event> events;
    const bool ok = d_splitter.feed(plain, size, events);
    for (auto& e : events)
        if (e.what == xmpp_split_event::kind::stanza)
            out.push_back(std::move(e.element));
    if (!ok)
        d_error = "x2x stream: " + d_splitter.error();
    return ok;
}

bool x2x_slep_reader::feed(const uint8_t* data,
                           size_t size,
                           std::vector<xml_element>& out)
{
    if (!d_error.empty())
        return false;
    d_wire += size;
    if (!d_compress)
        return parse(data, size, out);
    bytes plain;
    while (size > 0) {
        const size_t n = std::min(size, inflate_piece);
        plain.clear();
        const auto used = d_z.read(data, n, inflate_room, plain);
        // Our writers never end the DEFLATE stream: a final block is garbage too.
        if (!used || *used == 0 || d_z.finished() || plain.size() == inflate_room) {
            d_error = "x2x stream: malformed DEFLATE data";
            return false;
        }
        if (!parse(plain.data(), plain.size(), out))
            return false;
        data += *used;
        size -= *used;
    }
    return true;
}

} // namespace net
} // namespace hfstack
} // namespace gr
