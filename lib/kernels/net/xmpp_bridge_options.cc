/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The XMPP bridge's options by name (xmpp_bridge.h), parsed as the other network
 * kernels' are (option_table.h). */
#include "option_table.h"
#include "xmpp_bridge.h"

#include <cmath>

namespace gr {
namespace hfstack {
namespace net {

namespace {

double seconds(const std::string& name, const std::string& v)
{
    const double x = dl::parse_option_number(name, v);
    if (std::isinf(x))
        throw std::invalid_argument(name + ": \"" + v +
                                    "\" is not a number of seconds >= 0");
    return x;
}

std::set<std::string> domains(const std::string& v)
{
    std::set<std::string> out;
    for (const auto& w : split_words(v, " \t\n,"))
        out.insert(jid_domain(w));
    return out;
}

std::string join(const std::set<std::string>& s)
{
    std::string out;
    for (const auto& x : s)
        out += (out.empty() ? "" : " ") + x;
    return out;
}

std::string yes_no(bool b) { return b ? "true" : "false"; }

using option_entry = net::option_entry<xmpp_bridge_config>;

const std::vector<option_entry>& table()
{
    using C = xmpp_bridge_config;
    using S = const std::string&;
    static const std::vector<option_entry> t = {
        { "local_domains",
          "our XMPP server's domains: stanzas from them go to the peer",
          [](C& c, S, S v) { c.local_domains = domains(v); },
          [](const C& c) { return join(c.local_domains); } },
        { "peer_domains",
          "the peer server's domains (base, MUC, upload...): a component stream each",
          [](C& c, S, S v) { c.peer_domains = domains(v); },
          [](const C& c) { return join(c.peer_domains); } },
        { "drop_chat_states",
          "drop chat state notifications (typing...); stripped from messages with a body",
          [](C& c, S n, S v) { c.drop_chat_states = dl::parse_option_bool(n, v); },
          [](const C& c) { return yes_no(c.drop_chat_states); } },
        { "strip_xhtml",
          "remove XHTML-IM bodies (the plain body stays)",
          [](C& c, S n, S v) { c.strip_xhtml = dl::parse_option_bool(n, v); },
          [](const C& c) { return yes_no(c.strip_xhtml); } },
        { "presence",
          "presence to the peer: pass, strip (keep show, status, priority and MUC "
          "elements), throttle (one available presence per pair per presence_interval_s)",
          [](C& c, S n, S v) {
              if (v == "pass")
                  c.presence = xmpp_presence_policy::pass;
              else if (v == "strip")
                  c.presence = xmpp_presence_policy::strip;
              else if (v == "throttle")
                  c.presence = xmpp_presence_policy::throttle;
              else
                  throw std::invalid_argument(
                      n + " must be pass, strip or throttle, not \"" + v + "\"");
          },
          [](const C& c) {
              return std::string(c.presence == xmpp_presence_policy::pass ? "pass"
                                 : c.presence == xmpp_presence_policy::strip
                                     ? "strip"
                                     : "throttle");
          } },
        { "presence_interval_s",
          "throttle: at most one available presence per from/to pair this often, s",
          [](C& c, S n, S v) { c.presence_interval_s = seconds(n, v); },
          [](const C& c) { return number_text(c.presence_interval_s); } },
        { "refuse_pings",
          "answer XEP-0199 pings to the peer here with service-unavailable instead of "
          "sending them over HF",
          [](C& c, S n, S v) { c.refuse_pings = dl::parse_option_bool(n, v); },
          [](const C& c) { return yes_no(c.refuse_pings); } },
        { "max_stanza_bytes",
          "largest stanza carried (larger ones bounced with not-acceptable), bytes",
          [](C& c, S n, S v) {
              c.max_stanza_bytes = std::max<uint32_t>(256, option_uint(n, v, 1 << 24));
          },
          [](const C& c) { return std::to_string(c.max_stanza_bytes); } },
        { "max_queue",
          "stanzas waiting for the peer at most (beyond: bounced)",
          [](C& c, S n, S v) {
              c.max_queue = std::max<uint32_t>(1, option_uint(n, v, 1000000));
          },
          [](const C& c) { return std::to_string(c.max_queue); } },
        { "max_queue_bytes",
          "bytes of stanzas waiting for the peer at most (beyond: bounced)",
          [](C& c, S n, S v) { c.max_queue_bytes = option_uint(n, v, 1u << 30); },
          [](const C& c) { return std::to_string(c.max_queue_bytes); } },
        { "queue_timeout_s",
          "a stanza not delivered to the peer in this long is bounced "
          "(remote-server-timeout), s",
          [](C& c, S n, S v) { c.queue_timeout_s = seconds(n, v); },
          [](const C& c) { return number_text(c.queue_timeout_s); } },
        { "retry_s",
          "a stanza whose transfer failed is sent again, whole, after this, s",
          [](C& c, S n, S v) { c.retry_s = seconds(n, v); },
          [](const C& c) { return number_text(c.retry_s); } },
        { "max_held",
          "stanzas from the peer held while our XMPP server is away (beyond: the oldest "
          "bounced to the peer)",
          [](C& c, S n, S v) { c.max_held = option_uint(n, v, 1000000); },
          [](const C& c) { return std::to_string(c.max_held); } },
        { "hold_timeout_s",
          "a stanza from the peer held this long for our server is bounced to the peer, "
          "s",
          [](C& c, S n, S v) { c.hold_timeout_s = seconds(n, v); },
          [](const C& c) { return number_text(c.hold_timeout_s); } },
        { "transport",
          "x2x-slep (XEP-0361 byte stream in a SLEP stream) or x2x-rcop (a stanza per "
          "RCOP PDU, XEP-0365 0.1)",
          [](C& c, S n, S v) {
              if (v == "x2x-slep")
                  c.transport = xmpp_transport::x2x_slep;
              else if (v == "x2x-rcop")
                  c.transport = xmpp_transport::x2x_rcop;
              else
                  throw std::invalid_argument(
                      n + " must be x2x-slep or x2x-rcop, not \"" + v + "\"");
          },
          [](const C& c) {
              return std::string(c.transport == xmpp_transport::x2x_slep ? "x2x-slep"
                                                                         : "x2x-rcop");
          } },
        { "sap",
          "STANAG 5066 SAP of the transport (both bridges must agree)",
          [](C& c, S n, S v) { c.sap = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.sap); } },
        { "compress",
          "x2x-slep: DEFLATE each direction, flushed at every stanza",
          [](C& c, S n, S v) { c.compress = dl::parse_option_bool(n, v); },
          [](const C& c) { return yes_no(c.compress); } },
        { "slep_address",
          "x2x-slep: the SLEP extended address the bridges listen on and open to",
          [](C& c, S n, S v) { c.slep_address = uint8_t(option_uint(n, v, 255)); },
          [](const C& c) { return std::to_string(c.slep_address); } },
        { "rcop_connection_id",
          "x2x-rcop: RCOP connection ID number (XEP-0365 recommends 0)",
          [](C& c, S n, S v) { c.rcop_connection_id = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.rcop_connection_id); } },
        { "rcop_application_id",
          "x2x-rcop: RCOP application identifier (user range 32768-65535)",
          [](C& c, S n, S v) {
              const auto id = option_uint(n, v, 65535);
              if (id < 0x8000)
                  throw std::invalid_argument(n +
                                              " must be in the user range 32768..65535");
              c.rcop_application_id = uint16_t(id);
          },
          [](const C& c) { return std::to_string(c.rcop_application_id); } },
        { "rcop_confirmation",
          "x2x-rcop: client (the far node confirms once the far bridge took the stanza, "
          "rejects it when no bridge is bound) or node (the far node has it)",
          [](C& c, S n, S v) {
              if (v == "client")
                  c.rcop_client_confirmation = true;
              else if (v == "node")
                  c.rcop_client_confirmation = false;
              else
                  throw std::invalid_argument(n + " must be client or node, not \"" + v +
                                              "\"");
          },
          [](const C& c) {
              return std::string(c.rcop_client_confirmation ? "client" : "node");
          } },
        { "slep_confirmation",
          "x2x-slep: peer (the far bridge's SLEP acknowledges stream data, on its own "
          "stanzas when it has some, once per burst otherwise; both bridges must have "
          "it), "
          "client (the far node confirms each stream PDU once the far bridge took it) or "
          "node (the far node's ARQ acknowledgement: fewer bytes on the air, but what "
          "reaches a node with no bridge bound is lost)",
          [](C& c, S n, S v) {
              if (v == "peer") {
                  c.slep_client_confirmation = true;
                  c.slep_peer_acks = true;
              } else if (v == "client") {
                  c.slep_client_confirmation = true;
                  c.slep_peer_acks = false;
              } else if (v == "node") {
                  c.slep_client_confirmation = false;
                  c.slep_peer_acks = false;
              } else {
                  throw std::invalid_argument(
                      n + " must be peer, client or node, not \"" + v + "\"");
              }
          },
          [](const C& c) {
              return std::string(c.slep_peer_acks             ? "peer"
                                 : c.slep_client_confirmation ? "client"
                                                              : "node");
          } },
    };
    return t;
}

} // namespace

void set_xmpp_option(xmpp_bridge_config& c,
                     const std::string& name,
                     const std::string& value)
{
    set_option(table(), c, name, value, "XMPP bridge");
}

void set_xmpp_options(xmpp_bridge_config& c, const std::string& assignments)
{
    set_options(table(), c, assignments, "XMPP bridge");
}

std::string get_xmpp_option(const xmpp_bridge_config& c, const std::string& name)
{
    return find_option(table(), name, "XMPP bridge").get(c);
}

std::vector<xmpp_option> xmpp_options()
{
    return option_rows<xmpp_bridge_config, xmpp_option>(table());
}

} // namespace net
} // namespace hfstack
} // namespace gr
