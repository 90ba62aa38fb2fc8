/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ip_routes.h"

#include "dl/dpdu.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

std::vector<std::string> split(const std::string& text, const std::string& separators)
{
    std::vector<std::string> out;
    std::string item;
    for (char c : text) {
        if (separators.find(c) != std::string::npos) {
            if (!item.empty())
                out.push_back(item);
            item.clear();
        } else {
            item.push_back(c);
        }
    }
    if (!item.empty())
        out.push_back(item);
    return out;
}

unsigned parse_unsigned(const std::string& what, const std::string& text, unsigned max)
{
    if (text.empty() || text.size() > 10 ||
        !std::all_of(
            text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoul(text) > max)
        throw std::invalid_argument(what + " must be a number 0.." + std::to_string(max) +
                                    ", not \"" + text + "\"");
    return unsigned(std::stoul(text));
}

struct protocol_name {
    const char* name;
    uint8_t number;
};
constexpr protocol_name protocol_names[] = { { "icmp", ip_proto::icmp },
                                             { "igmp", ip_proto::igmp },
                                             { "tcp", ip_proto::tcp },
                                             { "udp", ip_proto::udp },
                                             { "icmpv6", ip_proto::icmpv6 } };

} // namespace

const char* to_string(ip_service s)
{
    switch (s) {
    case ip_service::automatic:
        return "auto";
    case ip_service::arq:
        return "arq";
    case ip_service::non_arq:
        return "non_arq";
    }
    return "?";
}

std::optional<ip_service> parse_ip_service(const std::string& text)
{
    for (auto s : { ip_service::automatic, ip_service::arq, ip_service::non_arq })
        if (text == to_string(s))
            return s;
    return std::nullopt;
}

// ---- address table --------------------------------------------------------------

void ip_route_table::add(const ip_route& r)
{
    if (r.node > (dl::group_address_flag | dl::node_address_mask))
        throw std::invalid_argument("node address above 31.255.255.255");
    if (r.repeats && *r.repeats > 15)
        throw std::invalid_argument("repeats must be 0..15");
    for (auto& e : d_entries)
        if (e.prefix.network == r.prefix.network && e.prefix.length == r.prefix.length) {
            e = r;
            return;
        }
    if (d_entries.size() >= max_entries)
        throw std::invalid_argument("address table full (" + std::to_string(max_entries) +
                                    " entries)");
    d_entries.push_back(r);
}

void ip_route_table::add_text(const std::string& text)
{
    for (const auto& entry : split(text, " \t\n")) {
        const auto fail = [&](const std::string& why) {
            throw std::invalid_argument("address table entry \"" + entry + "\": " + why);
        };
        const auto eq = entry.find('=');
        if (eq == std::string::npos)
            fail("expected PREFIX=NODE, e.g. 10.0.2.0/24=0.0.0.2 or default=0.0.0.2");
        const std::string target = entry.substr(0, eq);
        const auto fields = split(entry.substr(eq + 1), ",");
        if (fields.empty())
            fail("no node address after '='");
        const auto node = dl::parse_address(fields[0]);
        if (!node)
            fail("\"" + fields[0] +
                 "\" is not a STANAG 5066 address a.b.c.d (0-31.255.255.255)");
        ip_route r;
        r.node = node.value;
        for (size_t i = 1; i < fields.size(); ++i) {
            if (auto s = parse_ip_service(fields[i])) {
                r.service = *s;
            } else if (fields[i] == "compact") {
                r.compact = true;
            } else if (fields[i].rfind("repeats=", 0) == 0) {
                try {
                    r.repeats = parse_unsigned("repeats", fields[i].substr(8), 15);
                } catch (const std::invalid_argument& e) {
                    fail(e.what());
                }
            } else {
                fail("unknown field \"" + fields[i] +
                     "\" (arq, non_arq, auto, repeats=N, compact)");
            }
        }
        if (r.service == ip_service::arq && (r.node & dl::group_address_flag))
            fail("ARQ cannot reach a group address");
        if (r.compact && (r.node & dl::group_address_flag))
            fail("compact: the far end rebuilds the source from one node's address, not "
                 "a group's");
        std::vector<ip_prefix> prefixes;
        if (target == "default") {
            prefixes = { *parse_ip_prefix("0.0.0.0/0"), *parse_ip_prefix("::/0") };
        } else if (auto p = parse_ip_prefix(target)) {
            prefixes = { *p };
        } else {
            fail("\"" + target +
                 "\" is not an address or a prefix with no host bits set "
                 "(10.0.2.0/24, fd00::/64, 10.0.2.7, default)");
        }
        for (auto& p : prefixes) {
            if (r.compact && p.length != (p.network.version == 4 ? 32u : 128u))
                fail("compact needs a host entry (/32 or /128): the far end rebuilds the "
                     "addresses from the node addresses");
            r.prefix = p;
            try {
                add(r);
            } catch (const std::invalid_argument& e) {
                fail(e.what());
            }
        }
    }
}

const ip_route* ip_route_table::lookup(const ip_address& destination) const
{
    const ip_route* best = nullptr;
    for (const auto& e : d_entries)
        if (e.prefix.contains(destination) &&
            (!best || e.prefix.length > best->prefix.length))
            best = &e;
    return best;
}

bool ip_route_table::has_multicast() const
{
    return std::any_of(d_entries.begin(), d_entries.end(), [](const ip_route& e) {
        return e.prefix.length > 0 && e.prefix.network.is_multicast();
    });
}

std::string ip_route_table::to_text() const
{
    std::string out;
    for (const auto& e : d_entries) {
        out += (out.empty() ? "" : " ") + to_string(e.prefix) + "=" +
               dl::address_to_string(e.node);
        if (e.service != ip_service::automatic)
            out += std::string(",") + to_string(e.service);
        if (e.repeats)
            out += ",repeats=" + std::to_string(*e.repeats);
        if (e.compact)
            out += ",compact";
    }
    return out;
}

const ip_route* ip_route_table::compact_host(uint32_t node, uint8_t version) const
{
    for (const auto& e : d_entries)
        if (e.compact && e.node == node && e.prefix.network.version == version)
            return &e;
    return nullptr;
}

// ---- filter ---------------------------------------------------------------------

bool ip_filter_rule::matches(const ip_header_info& h) const
{
    if (version && version != h.version)
        return false;
    if (protocol && *protocol != h.protocol)
        return false;
    if (destination && !destination->contains(h.destination))
        return false;
    if (destination_port &&
        (!h.destination_port || *h.destination_port != *destination_port))
        return false;
    if (icmp_type && (!h.icmp_type || *h.icmp_type != *icmp_type))
        return false;
    return true;
}

ip_filter_rule parse_filter_rule(const std::string& text)
{
    const auto fail = [&](const std::string& why) {
        throw std::invalid_argument("filter rule \"" + text + "\": " + why);
    };
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0)
        fail("expected NAME:key=value,... (keys: ip, proto, dst, dport, type)");
    ip_filter_rule r;
    r.name = text.substr(0, colon);
    const auto fields = split(text.substr(colon + 1), ",");
    if (fields.empty())
        fail("a rule matching everything would drop all traffic");
    for (const auto& f : fields) {
        const auto eq = f.find('=');
        if (eq == std::string::npos)
            fail("\"" + f + "\" is not key=value");
        const std::string key = f.substr(0, eq), value = f.substr(eq + 1);
        try {
            if (key == "ip") {
                r.version = uint8_t(parse_unsigned("ip", value, 6));
                if (r.version != 4 && r.version != 6)
                    fail("ip must be 4 or 6");
            } else if (key == "proto") {
                auto named =
                    std::find_if(std::begin(protocol_names),
                                 std::end(protocol_names),
                                 [&](const protocol_name& p) { return value == p.name; });
                r.protocol = named != std::end(protocol_names)
                                 ? named->number
                                 : uint8_t(parse_unsigned("proto", value, 255));
            } else if (key == "dst") {
                r.destination = parse_ip_prefix(value);
                if (!r.destination)
                    fail("\"" + value + "\" is not a prefix");
            } else if (key == "dport") {
                r.destination_port = uint16_t(parse_unsigned("dport", value, 65535));
            } else if (key == "type") {
                r.icmp_type = uint8_t(parse_unsigned("type", value, 255));
            } else {
                fail("unknown key \"" + key + "\" (ip, proto, dst, dport, type)");
            }
        } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            if (what.rfind("filter rule", 0) == 0)
                throw;
            fail(what);
        }
    }
    return r;
}

std::string to_text(const ip_filter_rule& r)
{
    std::ostringstream o;
    o << r.name << ":";
    std::string sep;
    const auto put = [&](const std::string& kv) {
        o << sep << kv;
        sep = ",";
    };
    if (r.version)
        put("ip=" + std::to_string(r.version));
    if (r.protocol) {
        auto named =
            std::find_if(std::begin(protocol_names),
                         std::end(protocol_names),
                         [&](const protocol_name& p) { return p.number == *r.protocol; });
        put("proto=" + (named != std::end(protocol_names) ? std::string(named->name)
                                                          : std::to_string(*r.protocol)));
    }
    if (r.destination)
        put("dst=" + to_string(*r.destination));
    if (r.destination_port)
        put("dport=" + std::to_string(*r.destination_port));
    if (r.icmp_type)
        put("type=" + std::to_string(*r.icmp_type));
    return o.str();
}

std::vector<ip_filter_rule> default_filter_rules(bool multicast_routed)
{
    std::vector<std::string> text = {
        "mdns:proto=udp,dport=5353",
        "llmnr:proto=udp,dport=5355",
        "ssdp:proto=udp,dport=1900",
        "netbios-ns:proto=udp,dport=137",
        "netbios-dgm:proto=udp,dport=138",
        "dhcp-server:ip=4,proto=udp,dport=67",
        "dhcp-client:ip=4,proto=udp,dport=68",
        "dhcpv6-client:ip=6,proto=udp,dport=546",
        "dhcpv6-server:ip=6,proto=udp,dport=547",
        "router-solicitation:proto=icmpv6,type=133,dst=ff02::/16",
        "router-advertisement:proto=icmpv6,type=134,dst=ff02::/16",
        "neighbour-solicitation:proto=icmpv6,type=135,dst=ff02::/16",
    };
    if (!multicast_routed) {
        text.push_back("igmp:ip=4,proto=igmp");
        text.push_back("mld-query:proto=icmpv6,type=130");
        text.push_back("mld-report:proto=icmpv6,type=131");
        text.push_back("mld-done:proto=icmpv6,type=132");
        text.push_back("mldv2-report:proto=icmpv6,type=143");
    }
    std::vector<ip_filter_rule> out;
    for (const auto& t : text)
        out.push_back(parse_filter_rule(t));
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
