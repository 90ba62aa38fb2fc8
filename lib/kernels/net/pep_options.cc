/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The HF-PEP's options (set_pep_option, pep_options) and its destination rules.

#include "dl/dpdu.h" // group_address_flag
#include "option_table.h"
#include "pep.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

std::vector<std::string> words(const std::string& s) { return split_words(s, " \t\n,"); }

// Seconds >= 0, finite: a timeout of "inf" would never fire.
double seconds(const std::string& name, const std::string& v)
{
    const double x = dl::parse_option_number(name, v);
    if (std::isinf(x))
        throw std::invalid_argument(name + ": \"" + v +
                                    "\" is not a number of seconds >= 0");
    return x;
}

// "PORT:VALUE ..." pairs, VALUE 0..max.
std::vector<std::pair<uint16_t, uint32_t>>
port_values(const std::string& name, const std::string& v, uint32_t max)
{
    std::vector<std::pair<uint16_t, uint32_t>> out;
    for (const auto& w : words(v)) {
        const auto colon = w.find(':');
        if (colon == std::string::npos)
            throw std::invalid_argument(name + ": \"" + w + "\" is not PORT:VALUE");
        out.push_back({ uint16_t(option_uint(name, w.substr(0, colon), 65535)),
                        option_uint(name, w.substr(colon + 1), max) });
    }
    return out;
}

// PORT:P ... with P a priority 0-15 (port_priority, port_proxy_priority).
std::map<uint16_t, uint8_t> port_priorities(const std::string& name, const std::string& v)
{
    std::map<uint16_t, uint8_t> out;
    for (const auto& [port, priority] : port_values(name, v, 15))
        out[port] = uint8_t(priority);
    return out;
}

template <typename T>
std::string join(const std::set<T>& s)
{
    std::string out;
    for (auto x : s)
        out += (out.empty() ? "" : " ") + std::to_string(x);
    return out;
}

template <typename M>
std::string join_map(const M& m)
{
    std::string out;
    for (const auto& [k, v] : m)
        out += (out.empty() ? "" : " ") + std::to_string(k) + ":" + std::to_string(v);
    return out;
}

using option_entry = net::option_entry<pep_config>;

const std::vector<option_entry>& table()
{
    using C = pep_config;
    using S = const std::string&;
    const auto ports = [](S n, S v) {
        std::set<uint16_t> out;
        for (const auto& w : words(v))
            out.insert(uint16_t(option_uint(n, w, 65535)));
        return out;
    };
    static const std::vector<option_entry> t = {
        { "peers",
          "address table: PREFIX=NODE ... (the 5066 node of the proxy in front of each "
          "destination; 'default' for the rest)",
          [](C& c, S, S v) {
              c.peers = ip_route_table{};
              c.peers.add_text(v);
          },
          [](const C& c) { return c.peers.to_text(); } },
        { "name_peer",
          "the 5066 node whose proxy takes destinations given by host name (SOCKS5 "
          "domain names, HTTP CONNECT host:port) and resolves them; empty: the one node "
          "peers names",
          [](C& c, S n, S v) {
              if (v.empty()) {
                  c.name_peer = 0;
                  return;
              }
              const auto node = dl::parse_address(v);
              if (!node || !node.value || (node.value & dl::group_address_flag))
                  throw std::invalid_argument(
                      n + ": \"" + v + "\" is not a STANAG 5066 node address a.b.c.d");
              c.name_peer = node.value;
          },
          [](const C& c) {
              return c.name_peer ? dl::address_to_string(c.name_peer) : std::string();
          } },
        { "deny_ports",
          "destination ports refused (both proxies check)",
          [ports](C& c, S n, S v) { c.deny_ports = ports(n, v); },
          [](const C& c) { return join(c.deny_ports); } },
        { "allow_ports",
          "only these destination ports (empty: every port not denied)",
          [ports](C& c, S n, S v) { c.allow_ports = ports(n, v); },
          [](const C& c) { return join(c.allow_ports); } },
        { "port_limits",
          "connections at once per destination port, PORT:N ...",
          [](C& c, S n, S v) {
              c.port_limits.clear();
              for (const auto& [port, limit] : port_values(n, v, 1000000))
                  c.port_limits[port] = limit;
          },
          [](const C& c) { return join_map(c.port_limits); } },
        { "port_priority",
          "5066 priority (0-15) of a destination port's streams, PORT:P ...",
          [](C& c, S n, S v) { c.port_priority = port_priorities(n, v); },
          [](const C& c) { return join_map(c.port_priority); } },
        { "port_proxy_priority",
          "proxy-level priority (0-15) of a destination port's streams: the proxy hands "
          "their data to the node first while SIS flow control holds data back, PORT:P "
          "...",
          [](C& c, S n, S v) { c.port_proxy_priority = port_priorities(n, v); },
          [](const C& c) { return join_map(c.port_proxy_priority); } },
        { "max_connections",
          "connections at once, idle ones included (both sides together; the driver "
          "keeps it below its file descriptor limit)",
          [](C& c, S n, S v) { c.max_connections = option_uint(n, v, 1000000); },
          [](const C& c) { return std::to_string(c.max_connections); } },
        { "evict_idle_s",
          "at max_connections, a new connection resets the one idle longest if it has "
          "been idle this long, s",
          [](C& c, S n, S v) { c.evict_idle_s = seconds(n, v); },
          [](const C& c) { return number_text(c.evict_idle_s); } },
        { "allow_peers",
          "far proxy: 5066 nodes whose streams and DNS questions are taken, NODE ... "
          "('any': every node; empty: the nodes of peers)",
          [](C& c, S n, S v) {
              c.allow_peers.clear();
              c.allow_any_peer = false;
              for (const auto& w : words(v)) {
                  if (w == "any") {
                      c.allow_any_peer = true;
                      continue;
                  }
                  const auto node = dl::parse_address(w);
                  if (!node || (node.value & dl::group_address_flag))
                      throw std::invalid_argument(
                          n + ": \"" + w +
                          "\" is not a STANAG 5066 node address a.b.c.d");
                  c.allow_peers.insert(node.value);
              }
              if (c.allow_any_peer && !c.allow_peers.empty())
                  throw std::invalid_argument(n + ": 'any' or node addresses, not both");
          },
          [](const C& c) {
              if (c.allow_any_peer)
                  return std::string("any");
              std::string out;
              for (auto node : c.allow_peers)
                  out += (out.empty() ? "" : " ") + dl::address_to_string(node);
              return out;
          } },
        { "allow_destinations",
          "far proxy: the only destinations streams may reach, PREFIX[:PORTS] ... "
          "(10.78.0.0/24:80,443 [fd00::7]:22); empty: every one but loopback, "
          "link-local, "
          "multicast, reserved and this host's own addresses, which a rule must name "
          "(127.0.0.1/32:5432)",
          [](C& c, S n, S v) { c.allow_destinations = parse_destination_rules(n, v); },
          [](const C& c) { return to_text(c.allow_destinations); } },
        { "handshake_timeout_s",
          "close a SOCKS or HTTP CONNECT client that has not finished its request in "
          "this "
          "long, s",
          [](C& c, S n, S v) { c.handshake_timeout_s = seconds(n, v); },
          [](const C& c) { return number_text(c.handshake_timeout_s); } },
        { "max_handshakes",
          "SOCKS and HTTP CONNECT requests unfinished at once (beyond: the oldest "
          "closed)",
          [](C& c, S n, S v) {
              c.max_handshakes = std::max<uint32_t>(1, option_uint(n, v, 100000));
          },
          [](const C& c) { return std::to_string(c.max_handshakes); } },
        { "max_handshakes_per_source",
          "unfinished SOCKS and HTTP CONNECT requests per client address (beyond: that "
          "address's oldest closed)",
          [](C& c, S n, S v) {
              c.max_handshakes_per_source =
                  std::max<uint32_t>(1, option_uint(n, v, 100000));
          },
          [](const C& c) { return std::to_string(c.max_handshakes_per_source); } },
        { "compress",
          "DEFLATE the streams this proxy opens",
          [](C& c, S n, S v) { c.compress = dl::parse_option_bool(n, v); },
          [](const C& c) { return std::string(c.compress ? "true" : "false"); } },
        { "open_wait_s",
          "wait at most this long for a client's first bytes, to send them with the "
          "open, s",
          [](C& c, S n, S v) { c.open_wait_s = seconds(n, v); },
          [](const C& c) { return number_text(c.open_wait_s); } },
        { "connect_timeout_s",
          "far proxy: give up connecting to the destination after this, s",
          [](C& c, S n, S v) { c.connect_timeout_s = seconds(n, v); },
          [](const C& c) { return number_text(c.connect_timeout_s); } },
        { "idle_timeout_s",
          "reset a connection with no byte either way this long, s",
          [](C& c, S n, S v) { c.idle_timeout_s = seconds(n, v); },
          [](const C& c) { return number_text(c.idle_timeout_s); } },
        { "sap",
          "SLEP's SAP (both proxies the same)",
          [](C& c, S n, S v) { c.slep.sap = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.slep.sap); } },
        { "window",
          "bytes a stream buffers for its reader (>= 262144)",
          [](C& c, S n, S v) { c.slep.window = uint32_t(option_uint(n, v, 1u << 30)); },
          [](const C& c) { return std::to_string(c.slep.window); } },
        { "send_buffer",
          "bytes a stream holds written but not confirmed",
          [](C& c, S n, S v) { c.slep.send_buffer = option_uint(n, v, 1u << 30); },
          [](const C& c) { return std::to_string(c.slep.send_buffer); } },
        { "max_outstanding_bytes",
          "U_PDU bytes at the node awaiting its delivery confirmation",
          [](C& c, S n, S v) {
              c.slep.max_outstanding_bytes = option_uint(n, v, 1u << 30);
          },
          [](const C& c) { return std::to_string(c.slep.max_outstanding_bytes); } },
        { "stream_updu_bytes",
          "largest stream U_PDU, below the node's MTU (2042: two whole D_PDUs)",
          [](C& c, S n, S v) { c.slep.stream_updu_bytes = option_uint(n, v, 4096); },
          [](const C& c) { return std::to_string(c.slep.stream_updu_bytes); } },
        { "coalesce_s",
          "new stream bytes wait this long for more before they are sent, s",
          [](C& c, S n, S v) { c.slep.coalesce_s = seconds(n, v); },
          [](const C& c) { return number_text(c.slep.coalesce_s); } },
        { "retry_s",
          "after a rejected U_PDU (link down), wait before sending again, s",
          [](C& c, S n, S v) { c.slep.retry_s = seconds(n, v); },
          [](const C& c) { return number_text(c.slep.retry_s); } },
        { "give_up_s",
          "a stream without progress this long is reset, s",
          [](C& c, S n, S v) { c.slep.give_up_s = seconds(n, v); },
          [](const C& c) { return number_text(c.slep.give_up_s); } },
        { "keepalive_s",
          "HELLO to a silent peer sharing streams, so its restart resets them (0 never), "
          "s",
          [](C& c, S n, S v) { c.slep.keepalive_s = seconds(n, v); },
          [](const C& c) { return number_text(c.slep.keepalive_s); } },
        { "early_data_s",
          "stream data arriving before its open is kept this long, then refused, s",
          [](C& c, S n, S v) { c.slep.early_data_s = seconds(n, v); },
          [](const C& c) { return number_text(c.slep.early_data_s); } },
        { "priority",
          "5066 priority of streams whose port has none",
          [](C& c, S n, S v) { c.slep.priority = uint8_t(option_uint(n, v, 15)); },
          [](const C& c) { return std::to_string(c.slep.priority); } },
    };
    return t;
}


// "N" or "N-M", 1..65535.
std::pair<uint16_t, uint16_t> port_range(const std::string& name, const std::string& w)
{
    const auto dash = w.find('-');
    const auto low = option_uint(name, w.substr(0, dash), 65535);
    const auto high =
        dash == std::string::npos ? low : option_uint(name, w.substr(dash + 1), 65535);
    if (low == 0 || high < low)
        throw std::invalid_argument(name + ": \"" + w +
                                    "\" is not a port 1-65535 or a range N-M");
    return { uint16_t(low), uint16_t(high) };
}

} // namespace

bool pep_destination_rule::allows(const pep_request& r) const
{
    if (r.destination.version != prefix.network.version ||
        !prefix.contains(r.destination))
        return false;
    if (ports.empty())
        return true;
    return std::any_of(ports.begin(), ports.end(), [&](const auto& p) {
        return r.port >= p.first && r.port <= p.second;
    });
}

std::vector<pep_destination_rule> parse_destination_rules(const std::string& name,
                                                          const std::string& text)
{
    std::vector<pep_destination_rule> out;
    for (const auto& w : split_words(text, " \t\n")) {
        const auto bad = [&] {
            return std::invalid_argument(
                name + ": \"" + w + "\" is not PREFIX[:PORTS] (10.78.0.0/24:80,443)");
        };
        std::string address, ports;
        if (w[0] == '[') {
            const auto close = w.find(']');
            if (close == std::string::npos)
                throw bad();
            address = w.substr(1, close - 1);
            std::string rest = w.substr(close + 1);
            if (!rest.empty() && rest[0] == '/') {
                const auto colon = rest.find(':');
                address += rest.substr(0, colon);
                rest = colon == std::string::npos ? "" : rest.substr(colon);
            }
            if (!rest.empty() && rest[0] != ':')
                throw bad();
            ports = rest.empty() ? "" : rest.substr(1);
            if (!rest.empty() && ports.empty())
                throw bad();
        } else {
            const auto slash = w.find('/');
            const auto colon =
                slash != std::string::npos
                    ? w.find(':', slash)
                    : (std::count(w.begin(), w.end(), ':') == 1 ? w.find(':')
                                                                : std::string::npos);
            address = w.substr(0, colon);
            if (colon != std::string::npos) {
                ports = w.substr(colon + 1);
                if (ports.empty())
                    throw bad();
            }
        }
        const auto prefix = parse_ip_prefix(address);
        if (!prefix)
            throw bad();
        pep_destination_rule r;
        r.prefix = *prefix;
        for (const auto& p : split_words(ports, ","))
            r.ports.push_back(port_range(name, p));
        out.push_back(r);
    }
    return out;
}

std::string to_text(const std::vector<pep_destination_rule>& rules)
{
    std::string out;
    for (const auto& r : rules) {
        out += (out.empty() ? "" : " ") + to_string(r.prefix);
        for (size_t i = 0; i < r.ports.size(); ++i) {
            out += (i ? "," : ":") + std::to_string(r.ports[i].first);
            if (r.ports[i].second != r.ports[i].first)
                out += "-" + std::to_string(r.ports[i].second);
        }
    }
    return out;
}

void set_pep_option(pep_config& c, const std::string& name, const std::string& value)
{
    set_option(table(), c, name, value, "PEP");
}

void set_pep_options(pep_config& c, const std::string& assignments)
{
    set_options(table(), c, assignments, "PEP");
}

std::string get_pep_option(const pep_config& c, const std::string& name)
{
    return find_option(table(), name, "PEP").get(c);
}

std::vector<pep_option> pep_options()
{
    return option_rows<pep_config, pep_option>(table());
}

} // namespace net
} // namespace hfstack
} // namespace gr
