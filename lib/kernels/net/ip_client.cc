/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "address_scope.h"
#include "ip_client.h"
#include "option_table.h"

#include "dl/dpdu.h"
#include "dl/node_engine.h" // parse_option_number / parse_option_bool

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr size_t min_ipv4_mtu = 68;  // RFC 791: every host takes 68 bytes unfragmented
constexpr size_t max_sis_mtu = 4096; // Annex A: broadcast-only nodes; 2048 otherwise

bool is_group(uint32_t node) { return node & dl::group_address_flag; }

// The 29 address bits (group flag included) of a SIS address field.
uint32_t node_of(const dl::sis_address& a)
{
    return a.address & (dl::group_address_flag | dl::node_address_mask);
}

std::optional<ip_address>
option_address(const std::string& name, const std::string& value, uint8_t version)
{
    if (value.empty())
        return std::nullopt;
    auto a = parse_ip_address(value);
    if (!a || a->version != version)
        throw std::invalid_argument(name + " must be an IPv" + std::to_string(version) +
                                    " address or empty, not \"" + value + "\"");
    return a;
}

using option_entry = net::option_entry<ip_client_config>;

const std::vector<option_entry>& table()
{
    using C = ip_client_config;
    using S = const std::string&;
    static const std::vector<option_entry> t = {
        { "sap",
          "SAP bound (Annex F: 9 for the IP client)",
          [](C& c, S n, S v) { c.sap = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.sap); } },
        { "rank",
          "rank of the bind (0-15)",
          [](C& c, S n, S v) { c.rank = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.rank); } },
        { "mtu",
          "largest datagram sent whole, bytes (68-4096; the server's MTU caps it)",
          [](C& c, S n, S v) {
              c.mtu = option_uint(n, v, max_sis_mtu);
              if (c.mtu < min_ipv4_mtu)
                  throw std::invalid_argument("mtu must be at least 68");
          },
          [](const C& c) { return std::to_string(c.mtu); } },
        { "routes",
          "address table: PREFIX=NODE[,arq|non_arq][,repeats=N] ... (blank separated; "
          "PREFIX may be default)",
          [](C& c, S, S v) {
              ip_route_table t;
              t.add_text(v);
              c.routes = t;
          },
          [](const C& c) { return c.routes.to_text(); } },
        { "default_filter",
          "drop mDNS, LLMNR, SSDP, NetBIOS, DHCP, IPv6 RS/RA/NS to multicast, IGMP/MLD "
          "(unless multicast is routed)",
          [](C& c, S n, S v) { c.default_filter = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.default_filter ? "true" : "false"); } },
        { "filter",
          "more drop rules NAME:key=value,... (keys ip, proto, dst, dport, type), blank "
          "separated",
          [](C& c, S, S v) {
              c.filter.clear();
              for (const auto& w : split_words(v))
                  c.filter.push_back(parse_filter_rule(w));
          },
          [](const C& c) {
              std::string s;
              for (const auto& r : c.filter)
                  s += (s.empty() ? "" : " ") + to_text(r);
              return s;
          } },
        { "dscp_priority",
          "priority of DSCP values, DSCP:PRIORITY ... (default 2 x (DSCP >> 3)); "
          "'fixed:P' gives every DSCP priority P",
          [](C& c, S n, S v) {
              for (const auto& w : split_words(v)) {
                  const auto colon = w.find(':');
                  if (colon == std::string::npos)
                      throw std::invalid_argument(n + ": \"" + w +
                                                  "\" is not DSCP:PRIORITY");
                  const uint8_t prio = uint8_t(option_uint(n, w.substr(colon + 1), 15));
                  if (w.substr(0, colon) == "fixed")
                      c.dscp_priority.fill(prio);
                  else
                      c.dscp_priority[option_uint(n, w.substr(0, colon), 63)] = prio;
              }
          },
          [](const C& c) {
              std::string s;
              const auto d = ip_client_config::default_dscp_priorities();
              for (size_t i = 0; i < 64; ++i)
                  if (c.dscp_priority[i] != d[i])
                      s += (s.empty() ? "" : " ") + std::to_string(i) + ":" +
                           std::to_string(c.dscp_priority[i]);
              return s;
          } },
        { "class_service",
          "service per DSCP class (DSCP >> 3), CLASS:arq|non_arq|auto ...",
          [](C& c, S n, S v) {
              for (const auto& w : split_words(v)) {
                  const auto colon = w.find(':');
                  const auto s = colon == std::string::npos
                                     ? std::nullopt
                                     : parse_ip_service(w.substr(colon + 1));
                  if (!s)
                      throw std::invalid_argument(n + ": \"" + w +
                                                  "\" is not CLASS:arq|non_arq|auto");
                  c.class_service[option_uint(n, w.substr(0, colon), 7)] =
                      *s == ip_service::automatic ? std::nullopt
                                                  : std::optional<ip_service>(*s);
              }
          },
          [](const C& c) {
              std::string s;
              for (size_t i = 0; i < 8; ++i)
                  if (c.class_service[i])
                      s += (s.empty() ? "" : " ") + std::to_string(i) + ":" +
                           to_string(*c.class_service[i]);
              return s;
          } },
        { "expedited_dscp",
          "DSCP sent as expedited data (empty: none)",
          [](C& c, S n, S v) {
              c.expedited_dscp =
                  v.empty() ? std::nullopt
                            : std::optional<uint8_t>(uint8_t(option_uint(n, v, 63)));
          },
          [](const C& c) {
              return c.expedited_dscp ? std::to_string(*c.expedited_dscp) : "";
          } },
        { "repeats",
          "non-ARQ copies beyond the first (0-15) unless an entry says",
          [](C& c, S n, S v) { c.repeats = option_uint(n, v, 15); },
          [](const C& c) { return std::to_string(c.repeats); } },
        { "in_order",
          "ARQ delivery in order",
          [](C& c, S n, S v) { c.in_order = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.in_order ? "true" : "false"); } },
        { "fragment",
          "IPv4 datagrams without DF over the MTU: fragment (true) or drop (false)",
          [](C& c, S n, S v) { c.fragment = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.fragment ? "true" : "false"); } },
        { "icmp_unreachable",
          "answer datagrams with no address table entry with ICMP destination "
          "unreachable",
          [](C& c, S n, S v) { c.icmp_unreachable = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.icmp_unreachable ? "true" : "false"); } },
        { "icmp_source_v4",
          "source of our ICMP errors (empty: the offending datagram's destination)",
          [](C& c, S n, S v) { c.icmp_source_v4 = option_address(n, v, 4); },
          [](const C& c) {
              return c.icmp_source_v4 ? to_string(*c.icmp_source_v4) : "";
          } },
        { "icmp_source_v6",
          "source of our ICMPv6 errors (empty: the offending datagram's destination)",
          [](C& c, S n, S v) { c.icmp_source_v6 = option_address(n, v, 6); },
          [](const C& c) {
              return c.icmp_source_v6 ? to_string(*c.icmp_source_v6) : "";
          } },
        { "own_address_v4",
          "this host's IPv4 address on the HF subnet (needed by compact entries)",
          [](C& c, S n, S v) { c.own_address_v4 = option_address(n, v, 4); },
          [](const C& c) {
              return c.own_address_v4 ? to_string(*c.own_address_v4) : "";
          } },
        { "own_address_v6",
          "this host's IPv6 address on the HF subnet (needed by compact entries)",
          [](C& c, S n, S v) { c.own_address_v6 = option_address(n, v, 6); },
          [](const C& c) {
              return c.own_address_v6 ? to_string(*c.own_address_v6) : "";
          } },
        { "ttl_s",
          "SIS TTL of each U_PDU, s (0: none)",
          [](C& c, S n, S v) {
              c.ttl_s = dl::parse_option_number(n, v);
              if (std::isinf(c.ttl_s))
                  c.ttl_s = 0;
          },
          [](const C& c) { return number_text(c.ttl_s); } },
        { "max_queue_bytes",
          "bytes queued per peer before its whole queue is discarded",
          [](C& c, S n, S v) { c.max_queue_bytes = option_uint(n, v, 1u << 30); },
          [](const C& c) { return std::to_string(c.max_queue_bytes); } },
        { "max_queue_age_s",
          "age of a peer's oldest queued datagram before its whole queue is discarded, s",
          [](C& c, S n, S v) { c.max_queue_age_s = dl::parse_option_number(n, v); },
          [](const C& c) { return number_text(c.max_queue_age_s); } },
        { "discard_on_link_failure",
          "discard a peer's queue when the node reports it not responding",
          [](C& c, S n, S v) { c.discard_on_link_failure = dl::parse_option_bool(n, v); },
          [](const C& c) {
              return std::string(c.discard_on_link_failure ? "true" : "false");
          } },
        { "source_check",
          "drop datagrams from the air whose source the address table routes to another "
          "node",
          [](C& c, S n, S v) { c.source_check = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.source_check ? "true" : "false"); } },
    };
    return t;
}

} // namespace

std::array<uint8_t, 64> ip_client_config::default_dscp_priorities()
{
    std::array<uint8_t, 64> p{};
    for (size_t d = 0; d < 64; ++d)
        p[d] = uint8_t(std::min<size_t>(15, 2 * (d >> 3)));
    return p;
}

std::vector<ip_client_option> ip_client_options()
{
    return option_rows<ip_client_config, ip_client_option>(table());
}

void set_ip_client_option(ip_client_config& c,
                          const std::string& name,
                          const std::string& value)
{
    set_option(table(), c, name, value, "IP client");
}

void set_ip_client_options(ip_client_config& c, const std::string& assignments)
{
    set_options(table(), c, assignments, "IP client");
}

std::string get_ip_client_option(const ip_client_config& c, const std::string& name)
{
    return find_option(table(), name, "IP client").get(c);
}

const char* to_string(ip_drop d)
{
    switch (d) {
    case ip_drop::malformed_from_tun:
        return "malformed_from_tun";
    case ip_drop::malformed_from_air:
        return "malformed_from_air";
    case ip_drop::filtered:
        return "filtered";
    case ip_drop::no_route:
        return "no_route";
    case ip_drop::ttl_expired:
        return "ttl_expired";
    case ip_drop::too_big:
        return "too_big";
    case ip_drop::not_fragmented:
        return "not_fragmented";
    case ip_drop::queue_overflow:
        return "queue_overflow";
    case ip_drop::queue_age:
        return "queue_age";
    case ip_drop::link_failure:
        return "link_failure";
    case ip_drop::rejected:
        return "rejected";
    case ip_drop::wrong_sap:
        return "wrong_sap";
    case ip_drop::compact_unmapped:
        return "compact_unmapped";
    case ip_drop::spoofed_source:
        return "spoofed_source";
    case ip_drop::to_loopback:
        return "to_loopback";
    case ip_drop::count_:
        break;
    }
    return "?";
}

// ---- the client -----------------------------------------------------------------

ip_client::ip_client(ip_client_config config) : d_cfg(std::move(config)), d_mtu(d_cfg.mtu)
{
    if (d_cfg.mtu < min_ipv4_mtu || d_cfg.mtu > max_sis_mtu)
        throw std::invalid_argument("ip_client: mtu must be 68..4096, not " +
                                    std::to_string(d_cfg.mtu));
    if (d_cfg.sap > 15)
        throw std::invalid_argument("ip_client: sap must be 0..15");
    if (d_cfg.default_filter)
        d_filter = default_filter_rules(d_cfg.routes.has_multicast());
    d_filter.insert(d_filter.end(), d_cfg.filter.begin(), d_cfg.filter.end());
    d_counters.filter_matches.assign(d_filter.size(), 0);
    for (const auto& e : d_cfg.routes.entries())
        if (e.compact && !own_address(e.prefix.network.version))
            throw std::invalid_argument("ip_client: the compact entry for " +
                                        to_string(e.prefix) + " needs own_address_v" +
                                        std::to_string(e.prefix.network.version) +
                                        " (the far end rebuilds our datagrams to it)");
}

const std::optional<ip_address>& ip_client::own_address(uint8_t version) const
{
    return version == 4 ? d_cfg.own_address_v4 : d_cfg.own_address_v6;
}

void ip_client::start(double now)
{
    d_now = now;
    d_actions.to_sis.push_back(dl::arq_bind_request(
        d_cfg.sap, d_cfg.rank, dl::sis_delivery_confirmation::node, d_cfg.in_order));
}

void ip_client::on_disconnected(double now)
{
    d_now = now;
    if (d_bound)
        d_actions.notices.push_back(
            "SIS connection lost: datagrams are queued until bound again");
    d_bound = false;
    d_flow_on = true;
}

void ip_client::drop(ip_drop why, const std::string& detail)
{
    d_counters.drops[size_t(why)] += 1;
    if (d_noticed.insert(to_string(why)).second)
        d_actions.notices.push_back(std::string("dropping datagrams: ") + to_string(why) +
                                    (detail.empty() ? "" : " (" + detail + ")") +
                                    "; counted from now on, not logged again");
}

void ip_client::icmp(const bytes& offending,
                     const ip_header_info& info,
                     icmp_error kind,
                     uint32_t mtu)
{
    const auto& configured =
        info.version == 4 ? d_cfg.icmp_source_v4 : d_cfg.icmp_source_v6;
    const ip_address source = configured ? *configured : info.destination;
    if (auto reply = make_icmp_error(offending, info, kind, source, mtu)) {
        d_counters.icmp_sent += 1;
        d_counters.datagrams_to_tun += 1;
        d_counters.bytes_to_tun += reply->size();
        d_actions.to_tun.push_back(std::move(*reply));
    }
}

dl::sis_primitive ip_client::request_for(const bytes& datagram,
                                         const ip_header_info& info,
                                         const ip_route& route) const
{
    dl::sis_primitive p;
    const bool expedited = d_cfg.expedited_dscp && *d_cfg.expedited_dscp == info.dscp;
    p.type = expedited ? dl::sis_type::expedited_unidata_request
                       : dl::sis_type::unidata_request;
    p.priority = expedited ? 0 : d_cfg.dscp_priority[info.dscp & 63];
    p.destination_sap = d_cfg.sap;
    p.destination = dl::sis_address{ route.node, 7 };
    ip_service service =
        d_cfg.class_service[(info.dscp >> 3) & 7].value_or(route.service);
    if (service == ip_service::automatic ||
        (service == ip_service::arq && is_group(route.node)))
        service = is_group(route.node) ? ip_service::non_arq : ip_service::arq;
    auto& st = p.service_type;
    if (service == ip_service::arq) {
        st.tx_mode = dl::sis_tx_mode::arq;
        st.delivery_confirmation = dl::sis_delivery_confirmation::node;
        st.delivery_order = d_cfg.in_order ? dl::sis_delivery_order::in_order
                                           : dl::sis_delivery_order::as_they_arrive;
    } else {
        st.tx_mode = dl::sis_tx_mode::non_arq;
        st.delivery_confirmation = dl::sis_delivery_confirmation::none;
        st.delivery_order = dl::sis_delivery_order::as_they_arrive;
        st.min_retransmissions = uint8_t(route.repeats.value_or(d_cfg.repeats));
    }
    // SIS TTL in 2 s units, at least one unit when set.
    p.ttl = d_cfg.ttl_s > 0
                ? uint32_t(std::min(std::ceil(d_cfg.ttl_s / 2.0), double(0xFFFFF)))
                : 0;
    p.payload = datagram;
    return p;
}

void ip_client::on_datagram(bytes datagram, double now)
{
    d_now = now;
    d_counters.datagrams_from_tun += 1;
    d_counters.bytes_from_tun += datagram.size();
    const auto parsed = parse_ip(datagram);
    if (!parsed) {
        drop(ip_drop::malformed_from_tun, parsed.reason);
        return;
    }
    const ip_header_info& info = parsed.value;
    for (size_t i = 0; i < d_filter.size(); ++i)
        if (d_filter[i].matches(info)) {
            d_counters.filter_matches[i] += 1;
            drop(ip_drop::filtered, "rule " + d_filter[i].name);
            return;
        }
    const ip_route* route = d_cfg.routes.lookup(info.destination);
    if (!route) {
        drop(ip_drop::no_route,
             "no address table entry for " + to_string(info.destination));
        if (d_cfg.icmp_unreachable)
            icmp(datagram, info, icmp_error::destination_unreachable, 0);
        return;
    }
    if (!decrement_hop_limit(datagram)) {
        drop(ip_drop::ttl_expired);
        icmp(datagram, info, icmp_error::time_exceeded, 0);
        return;
    }
    std::vector<bytes> pieces;
    if (datagram.size() <= d_mtu) {
        pieces.push_back(std::move(datagram));
    } else if (info.version == 6 || info.dont_fragment) {
        drop(ip_drop::too_big, "larger than the MTU of " + std::to_string(d_mtu));
        icmp(datagram, info, icmp_error::fragmentation_needed, uint32_t(d_mtu));
        return;
    } else if (!d_cfg.fragment) {
        drop(ip_drop::not_fragmented, "fragmenting is off");
        return;
    } else {
        pieces = fragment_ipv4(datagram, info, d_mtu);
        if (pieces.empty()) {
            drop(ip_drop::not_fragmented, "cannot be split under the MTU");
            return;
        }
        d_counters.fragments_sent += pieces.size();
    }
    // Whole datagrams from this host to a compact entry lose their IP header; the far
    // end rebuilds it from the node addresses.
    const auto& own = own_address(info.version);
    if (route->compact && pieces.size() == 1 && own && *own == info.source) {
        if (auto compact = compact_datagram(pieces[0], info)) {
            d_counters.compact_sent += 1;
            pieces[0] = std::move(*compact);
        }
    }
    for (auto& piece : pieces)
        send_or_queue(request_for(piece, info, *route), route->node, now);
}

void ip_client::send_or_queue(dl::sis_primitive request, uint32_t peer, double now)
{
    auto& pc = d_counters.peers[peer];
    if (d_bound && d_flow_on && d_queue.empty()) {
        pc.datagrams_out += 1;
        pc.bytes_out += request.payload.size();
        d_counters.updus_sent += 1;
        d_actions.to_sis.push_back(std::move(request));
        return;
    }
    pc.queued_datagrams += 1;
    pc.queued_bytes += request.payload.size();
    d_queue.push_back({ peer, std::move(request), now });
    if (pc.queued_bytes > d_cfg.max_queue_bytes)
        discard_queue(peer, ip_drop::queue_overflow);
}

void ip_client::discard_queue(uint32_t peer, ip_drop why)
{
    auto& pc = d_counters.peers[peer];
    const size_t before = d_queue.size();
    d_queue.erase(std::remove_if(d_queue.begin(),
                                 d_queue.end(),
                                 [&](const queued& q) { return q.peer == peer; }),
                  d_queue.end());
    const size_t n = before - d_queue.size();
    if (n == 0)
        return;
    pc.discarded += n;
    pc.queued_datagrams = 0;
    pc.queued_bytes = 0;
    d_counters.drops[size_t(why)] += n - 1; // drop() counts the last one
    drop(why, std::to_string(n) + " datagrams queued for " + dl::address_to_string(peer));
}

void ip_client::drain(double now)
{
    d_now = now;
    while (d_bound && d_flow_on && !d_queue.empty()) {
        queued q = std::move(d_queue.front());
        d_queue.pop_front();
        auto& pc = d_counters.peers[q.peer];
        pc.queued_datagrams -= 1;
        pc.queued_bytes -= q.request.payload.size();
        pc.datagrams_out += 1;
        pc.bytes_out += q.request.payload.size();
        d_counters.updus_sent += 1;
        d_actions.to_sis.push_back(std::move(q.request));
    }
}

void ip_client::on_sis(const dl::sis_primitive& p, double now)
{
    using T = dl::sis_type;
    d_now = now;
    switch (p.type) {
    case T::bind_accepted:
        d_bound = true;
        d_flow_on = true;
        d_bind_error.clear();
        d_mtu = std::min<size_t>(d_cfg.mtu, p.mtu ? p.mtu : d_cfg.mtu);
        if (d_mtu < min_ipv4_mtu)
            d_mtu =
                min_ipv4_mtu; // a server MTU below IPv4's minimum: fragments get refused
        d_actions.notices.push_back("bound to SAP " + std::to_string(d_cfg.sap) +
                                    ", MTU " + std::to_string(d_mtu));
        drain(now);
        break;
    case T::bind_rejected:
        d_bound = false;
        d_bind_error = "the node refused SAP " + std::to_string(d_cfg.sap) + " (reason " +
                       std::to_string(p.reason) + ")";
        d_actions.notices.push_back(d_bind_error);
        break;
    case T::unbind_indication:
        d_bound = false;
        d_actions.notices.push_back("the node unbound SAP " + std::to_string(d_cfg.sap) +
                                    " (reason " + std::to_string(p.reason) +
                                    "): datagrams are queued until bound again");
        break;
    case T::data_flow_off:
        d_flow_on = false;
        break;
    case T::data_flow_on:
        d_flow_on = true;
        drain(now);
        break;
    case T::keep_alive:
        d_actions.to_sis.push_back(p); // Annex A: a client answers the node's probe
        break;
    case T::unidata_request_confirm:
    case T::expedited_unidata_request_confirm:
        d_counters.peers[node_of(p.destination)].confirmed += 1;
        break;
    case T::unidata_request_rejected:
    case T::expedited_unidata_request_rejected: {
        const uint32_t peer = node_of(p.destination);
        d_counters.peers[peer].rejected += 1;
        drop(ip_drop::rejected,
             "the node rejected a U_PDU, reason " + std::to_string(p.reason));
        if (d_cfg.discard_on_link_failure &&
            p.reason ==
                uint8_t(dl::sis_unidata_rejected_reason::destination_not_responding))
            discard_queue(peer, ip_drop::link_failure);
        break;
    }
    case T::unidata_indication:
    case T::expedited_unidata_indication: {
        if (p.destination_sap != d_cfg.sap) {
            drop(ip_drop::wrong_sap);
            break;
        }
        const uint32_t peer = node_of(p.source);
        d_counters.updus_received += 1;
        if (!p.errored_blocks.empty() || !p.non_received_blocks.empty()) {
            drop(ip_drop::malformed_from_air, "delivered with errors");
            break;
        }
        bytes datagram = p.payload;
        if (is_compact(datagram)) {
            const uint8_t version = (datagram[0] & 1) ? 4 : 6; // is_compact: not empty
            const ip_route* from = d_cfg.routes.compact_host(peer, version);
            const auto& own = own_address(version);
            if (!from || !own) {
                drop(ip_drop::compact_unmapped,
                     "compact datagram from node " + dl::address_to_string(peer) +
                         ": no compact IPv" + std::to_string(version) + " entry for it" +
                         (own ? "" : " or no own_address_v" + std::to_string(version)));
                break;
            }
            auto expanded = expand_compact(datagram, from->prefix.network, *own);
            if (!expanded) {
                drop(ip_drop::malformed_from_air, "compact header");
                break;
            }
            d_counters.compact_received += 1;
            datagram = std::move(*expanded);
        }
        const auto parsed = parse_ip(datagram);
        if (!parsed) {
            drop(ip_drop::malformed_from_air, parsed.reason);
            break;
        }
        if (const auto why = from_air_refusal(parsed.value, peer)) {
            drop(*why,
                 "node " + dl::address_to_string(peer) + ": " +
                     to_string(parsed.value.source) + " to " +
                     to_string(parsed.value.destination));
            break;
        }
        auto& pc = d_counters.peers[peer];
        pc.datagrams_in += 1;
        pc.bytes_in += datagram.size();
        d_counters.datagrams_to_tun += 1;
        d_counters.bytes_to_tun += datagram.size();
        d_actions.to_tun.push_back(std::move(datagram));
        break;
    }
    default:
        break; // subnet availability, hard-link primitives: nothing to do
    }
}

std::optional<ip_drop> ip_client::from_air_refusal(const ip_header_info& h,
                                                   uint32_t peer) const
{
    if (is_loopback(h.destination) || h.destination.is_unspecified())
        return ip_drop::to_loopback;
    const auto& own = own_address(h.version);
    if (is_loopback(h.source) || h.source.is_unspecified() || h.source.is_multicast() ||
        (own && *own == h.source))
        return ip_drop::spoofed_source;
    if (d_cfg.source_check) {
        const ip_route* back = d_cfg.routes.lookup(h.source);
        if (back && !(back->node & dl::group_address_flag) && back->node != peer)
            return ip_drop::spoofed_source;
    }
    return std::nullopt;
}

void ip_client::expire(double now)
{
    if (!(d_cfg.max_queue_age_s < std::numeric_limits<double>::infinity()))
        return;
    std::set<uint32_t> stale;
    for (const auto& q : d_queue)
        if (now - q.since >= d_cfg.max_queue_age_s)
            stale.insert(q.peer);
    for (uint32_t peer : stale)
        discard_queue(peer, ip_drop::queue_age);
}

void ip_client::on_timer(double now)
{
    d_now = now;
    expire(now);
}

ip_client_actions ip_client::take_actions()
{
    ip_client_actions out;
    std::swap(out, d_actions);
    return out;
}

double ip_client::next_deadline() const
{
    double d = std::numeric_limits<double>::infinity();
    if (d_cfg.max_queue_age_s < d)
        for (const auto& q : d_queue)
            d = std::min(d, q.since + d_cfg.max_queue_age_s);
    return d;
}

const ip_client_counters& ip_client::counters() const
{
    for (auto& [peer, pc] : d_counters.peers)
        pc.oldest_queued_s = 0;
    for (const auto& q : d_queue) {
        auto& pc = d_counters.peers[q.peer];
        pc.oldest_queued_s = std::max(pc.oldest_queued_s, d_now - q.since);
    }
    return d_counters;
}

} // namespace net
} // namespace hfstack
} // namespace gr
