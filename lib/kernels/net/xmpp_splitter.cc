/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_splitter.h"

#include <expat.h>

#include <algorithm>

namespace gr {
namespace hfstack {
namespace net {

struct xmpp_splitter::state {
    XML_Parser parser = nullptr;
    size_t max_stanza, max_depth;
    size_t depth = 0;              // 0 before the header, 1 between stanzas
    std::vector<xml_element> open; // the stanza being read and its open descendants
    XML_Index stanza_start = 0;    // byte index where the stanza began
    XML_Index fed = 0;             // bytes given to expat so far
    XML_Index boundary = 0;        // end of the last header, stanza or whitespace read
    bool implicit = false, is_closed = false, is_failed = false;
    std::string why;
    std::vector<xmpp_split_event>* out = nullptr;

    state(size_t max_bytes, size_t depth_limit)
        : max_stanza(max_bytes), max_depth(depth_limit)
    {
        parser = XML_ParserCreate("UTF-8");
        XML_SetUserData(parser, this);
        XML_SetElementHandler(parser, on_start, on_end);
        XML_SetCharacterDataHandler(parser, on_text);
        XML_SetStartDoctypeDeclHandler(parser, on_doctype);
        XML_SetProcessingInstructionHandler(parser, on_pi);
        XML_SetCommentHandler(parser, on_comment);
        XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER);
    }
    ~state() { XML_ParserFree(parser); }

    void fail(const std::string& reason)
    {
        if (!is_failed) {
            is_failed = true;
            why = reason;
        }
        XML_StopParser(parser, XML_FALSE);
    }

    bool too_big()
    {
        return depth >= 2 &&
               size_t(XML_GetCurrentByteIndex(parser) - stanza_start) > max_stanza;
    }

    static void on_start(void* user, const XML_Char* name, const XML_Char** attrs)
    {
        auto* s = static_cast<state*>(user);
        if (s->is_failed)
            return;
        xml_element e;
        e.name = name;
        for (size_t i = 0; attrs[i]; i += 2)
            e.attributes.emplace_back(attrs[i], attrs[i + 1]);
        if (s->depth == 0) {
            if (e.name != "stream:stream" && e.name != "stream") {
                s->fail("the stream begins with <" + e.name + ">, not <stream:stream>");
                return;
            }
            s->depth = 1;
            s->boundary =
                XML_GetCurrentByteIndex(s->parser) + XML_GetCurrentByteCount(s->parser);
            if (!s->implicit)
                s->out->push_back(
                    { xmpp_split_event::kind::stream_open, std::move(e), 0 });
            return;
        }
        if (s->depth == 1)
            s->stanza_start = XML_GetCurrentByteIndex(s->parser);
        s->depth += 1;
        if (s->too_big())
            return s->fail("a stanza of more than " + std::to_string(s->max_stanza) +
                           " bytes");
        if (s->depth - 1 > s->max_depth)
            return s->fail("elements nested more than " + std::to_string(s->max_depth) +
                           " deep");
        s->open.push_back(std::move(e));
    }

    static void on_end(void* user, const XML_Char*)
    {
        auto* s = static_cast<state*>(user);
        if (s->is_failed)
            return;
        if (s->depth == 1) {
            s->depth = 0;
            s->is_closed = true;
            s->out->push_back({ xmpp_split_event::kind::stream_close, {}, 0 });
            return;
        }
        s->depth -= 1;
        xml_element done = std::move(s->open.back());
        s->open.pop_back();
        if (!s->open.empty()) {
            s->open.back().children.push_back(std::move(done));
            return;
        }
        const size_t wire = size_t(XML_GetCurrentByteIndex(s->parser) +
                                   XML_GetCurrentByteCount(s->parser) - s->stanza_start);
        s->boundary = s->stanza_start + XML_Index(wire);
        if (wire > s->max_stanza)
            return s->fail("a stanza of more than " + std::to_string(s->max_stanza) +
                           " bytes");
        s->out->push_back({ xmpp_split_event::kind::stanza, std::move(done), wire });
    }

    static void on_text(void* user, const XML_Char* text, int length)
    {
        auto* s = static_cast<state*>(user);
        if (s->is_failed)
            return;
        const std::string t(text, size_t(length));
        if (s->depth <= 1) {
            if (t.find_first_not_of(" \t\r\n") != std::string::npos)
                s->fail("text between stanzas");
            s->boundary = XML_GetCurrentByteIndex(s->parser) + length;
            return; // whitespace keepalives
        }
        if (s->too_big())
            return s->fail("a stanza of more than " + std::to_string(s->max_stanza) +
                           " bytes");
        auto& kids = s->open.back().children;
        if (!kids.empty() && kids.back().is_text())
            kids.back().text += t;
        else
            kids.push_back(make_text(t));
    }

    static void
    on_doctype(void* user, const XML_Char*, const XML_Char*, const XML_Char*, int)
    {
        static_cast<state*>(user)->fail("a DTD in the stream (XMPP forbids them)");
    }

    // Comments are dropped; between stanzas they count as read for the size bound.
    static void on_comment(void* user, const XML_Char*)
    {
        auto* s = static_cast<state*>(user);
        if (s->depth == 1)
            s->boundary =
                XML_GetCurrentByteIndex(s->parser) + XML_GetCurrentByteCount(s->parser);
    }

    static void on_pi(void* user, const XML_Char*, const XML_Char*)
    {
        static_cast<state*>(user)->fail("a processing instruction in the stream");
    }
};

xmpp_splitter::xmpp_splitter(size_t max_stanza_bytes, size_t max_depth)
    : d(std::make_unique<state>(max_stanza_bytes, max_depth))
{
}
xmpp_splitter::~xmpp_splitter() = default;
xmpp_splitter::xmpp_splitter(xmpp_splitter&&) noexcept = default;
xmpp_splitter& xmpp_splitter::operator=(xmpp_splitter&&) noexcept = default;

void xmpp_splitter::start_implicit(const std::string& default_ns)
{
    d->implicit = true;
    const std::string header = "<stream:stream xmlns='" + xml_escape(default_ns, true) +
                               "' xmlns:stream='" + xmpp_ns_streams + "'>";
    std::vector<xmpp_split_event> none;
    feed(reinterpret_cast<const uint8_t*>(header.data()), header.size(), none);
    d->implicit = false;
}

bool xmpp_splitter::feed(const uint8_t* data,
                         size_t size,
                         std::vector<xmpp_split_event>& out)
{
    if (d->is_failed)
        return false;
    d->out = &out;
    // expat takes an int length: long inputs in pieces.
    while (size > 0 && !d->is_failed) {
        const int n = int(std::min<size_t>(size, 1 << 20));
        if (XML_Parse(d->parser, reinterpret_cast<const char*>(data), n, XML_FALSE) !=
            XML_STATUS_OK) {
            if (!d->is_failed)
                d->fail(std::string("malformed XML: ") +
                        XML_ErrorString(XML_GetErrorCode(d->parser)) + " at byte " +
                        std::to_string(XML_GetCurrentByteIndex(d->parser)));
        }
        d->fed += n;
        data += n;
        size -= size_t(n);
        // expat holds an unfinished token (a long start tag, say) without calling back:
        // the bytes fed since the last thing read bound the stanza too.
        const XML_Index from = d->depth >= 2 ? d->stanza_start : d->boundary;
        if (size_t(d->fed - from) > d->max_stanza + 4096)
            d->fail("a stanza of more than " + std::to_string(d->max_stanza) + " bytes");
    }
    d->out = nullptr;
    return !d->is_failed;
}

bool xmpp_splitter::failed() const { return d->is_failed; }
const std::string& xmpp_splitter::error() const { return d->why; }
bool xmpp_splitter::in_stanza() const { return d->depth >= 2; }
bool xmpp_splitter::closed() const { return d->is_closed; }

} // namespace net
} // namespace hfstack
} // namespace gr
