/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The IP client of STANAG 5066 Annex F.12 (Edition 4: Annex U) as a sans-IO kernel:
 * IP datagrams from a TUN device become U_PDUs on SAP 9 (one whole datagram each, no
 * extra framing) and U_PDUs from the node become datagrams for the TUN device. It is a
 * SIS client: it speaks SIS primitives to any STANAG 5066 server.
 *
 * What it does with a datagram from the TUN device, in order:
 *   parse (malformed: dropped) -> filter (background chatter: dropped, counted per rule)
 *   -> address table (no entry: dropped, ICMP destination unreachable if enabled)
 *   -> hop limit (1 or 0: ICMP time exceeded; else decremented: the HF link is a hop)
 *   -> size (over the MTU: IPv6 or DF gets ICMP "fragmentation needed" / "packet too
 *      big" with the MTU, so path-MTU discovery works; IPv4 without DF is fragmented,
 *      or dropped when fragmenting is off)
 *   -> service (unicast: ARQ with node delivery confirmation; group: non-ARQ with
 *      repeats; per entry and per DSCP class overridable), priority from DSCP
 *      (2 x (DSCP >> 3) by default, a table), expedited for one DSCP if configured
 *   -> compact header (ip_packet.h) for entries marked compact, from own_address
 *   -> S_UNIDATA_REQUEST, or the peer's queue while the node says DATA_FLOW_OFF or the
 *      client is not bound.
 * Queue policy (from "Measuring and Analysing STANAG 5066 F.12 IP Client"): queue
 * everything under flow control; when a peer's queued bytes exceed max_queue_bytes, or
 * its oldest datagram max_queue_age_s, its whole queue is discarded at once (a partly
 * drained backlog only feeds TCP retransmissions of a stale window); when the node
 * reports the peer unreachable (REJECTED "destination node not responding"), its queue
 * is discarded too, and rejected datagrams are never sent again.
 *
 * Plain C++17: `now` in seconds as a parameter, actions out, no clock, socket or thread.
 */
#ifndef HFSTACK_KERNELS_NET_IP_CLIENT_H
#define HFSTACK_KERNELS_NET_IP_CLIENT_H

#include "dl/sis.h"
#include "ip_packet.h"
#include "ip_routes.h"

#include <array>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

struct ip_client_config {
    uint8_t sap = 9; // Annex F: SAP 9 is the IP client's
    uint8_t rank = 0;
    // Largest datagram sent whole; the server's MTU (S_BIND_ACCEPTED) caps it.
    size_t mtu = 1500;
    ip_route_table routes;
    // Filter: the default drop list (IGMP/MLD kept when a multicast prefix is routed),
    // then these rules.
    bool default_filter = true;
    std::vector<ip_filter_rule> filter;
    // Priority (0-15) of each DSCP value: 2 x (DSCP >> 3) unless changed.
    std::array<uint8_t, 64> dscp_priority = default_dscp_priorities();
    // Service per DSCP class (DSCP >> 3, 0-7), overriding the address table's.
    std::array<std::optional<ip_service>, 8> class_service{};
    // Datagrams with this DSCP go as S_EXPEDITED_UNIDATA_REQUEST.
    std::optional<uint8_t> expedited_dscp;
    unsigned repeats = 1;  // non-ARQ copies beyond the first, unless an entry says
    bool in_order = false; // ARQ delivery in order (the F.12 measurements: better off)
    bool fragment = true;  // IPv4 without DF over the MTU: fragment (true) or drop
    bool icmp_unreachable = true; // answer datagrams without an entry
    // Source of the ICMP errors we generate; empty: the offending datagram's destination.
    std::optional<ip_address> icmp_source_v4, icmp_source_v6;
    // This host's addresses on the HF subnet: compact datagrams (entries marked
    // compact) go only from them, and compact ones received are rebuilt to them.
    std::optional<ip_address> own_address_v4, own_address_v6;
    double ttl_s = 120.0;                // SIS TTL of each U_PDU (2 s units; 0: none)
    size_t max_queue_bytes = 256 * 1024; // per peer
    double max_queue_age_s = 60.0;
    bool discard_on_link_failure = true;
    // Datagrams from the air whose source the address table routes to another node
    // than the one that sent them are dropped (spoofed_source).
    bool source_check = true;

    static std::array<uint8_t, 64> default_dscp_priorities();
};

// Options by name (the same in Python, GRC, YAML and the command line).
struct ip_client_option {
    std::string name, default_value, help;
};
std::vector<ip_client_option> ip_client_options();
// Throws std::invalid_argument naming the option and what it accepts.
void set_ip_client_option(ip_client_config& c,
                          const std::string& name,
                          const std::string& value);
// "name=value" items separated by ';' or newlines (route and filter lists use blanks
// and commas inside their values).
void set_ip_client_options(ip_client_config& c, const std::string& assignments);
std::string get_ip_client_option(const ip_client_config& c, const std::string& name);

// Why a datagram was not carried.
enum class ip_drop : uint8_t {
    malformed_from_tun,
    malformed_from_air,
    filtered,
    no_route,
    ttl_expired,
    too_big,
    not_fragmented,
    queue_overflow,
    queue_age,
    link_failure,
    rejected,
    wrong_sap,
    compact_unmapped, // a compact datagram from a node with no compact entry here
    // From the air: a source that is loopback, unspecified, multicast, this host's
    // own_address, or (source_check) an address the table routes to another node.
    spoofed_source,
    to_loopback, // from the air to a loopback or unspecified address
    count_
};
const char* to_string(ip_drop d);

struct ip_peer_counters {
    uint64_t datagrams_out = 0, bytes_out = 0; // handed to the node for this peer
    uint64_t datagrams_in = 0, bytes_in = 0;   // received from this node
    uint64_t confirmed = 0, rejected = 0;
    uint64_t discarded = 0; // queued datagrams discarded (overflow, age, link failure)
    size_t queued_datagrams = 0, queued_bytes = 0;
    double oldest_queued_s = 0; // age of the oldest queued datagram at the last call
};

struct ip_client_counters {
    uint64_t datagrams_from_tun = 0, bytes_from_tun = 0;
    uint64_t datagrams_to_tun = 0, bytes_to_tun = 0;
    uint64_t updus_sent = 0, updus_received = 0;
    uint64_t icmp_sent = 0, fragments_sent = 0;
    uint64_t compact_sent = 0, compact_received = 0; // datagrams with the compact header
    std::array<uint64_t, size_t(ip_drop::count_)> drops{};
    std::vector<uint64_t> filter_matches; // per rule of filter_rules()
    std::map<uint32_t, ip_peer_counters> peers;
};

struct ip_client_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::vector<bytes> to_tun;
    // One line the first time each kind of trouble happens (a drop cause, a refused
    // bind, a lost binding): for the log, never repeated.
    std::vector<std::string> notices;
};

class ip_client
{
public:
    // Throws std::invalid_argument for an MTU below 68 (IPv4's minimum) or above 4096,
    // or a compact entry without own_address of its version.
    explicit ip_client(ip_client_config config);

    // Asks the node for our SAP (S_BIND_REQUEST). Call when the SIS connection is up.
    void start(double now);
    // The SIS connection is gone: unbound until start() again; the queues stay.
    void on_disconnected(double now);
    void on_datagram(bytes datagram, double now); // from the TUN device
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double now);

    ip_client_actions take_actions();
    // When on_timer() next has work; +infinity if none.
    double next_deadline() const;

    bool bound() const { return d_bound; }
    size_t mtu() const { return d_mtu; } // in force (after the bind)
    const std::string& bind_error() const { return d_bind_error; }
    const ip_client_counters& counters() const;
    const std::vector<ip_filter_rule>& filter_rules() const { return d_filter; }
    const ip_client_config& config() const { return d_cfg; }

private:
    struct queued {
        uint32_t peer;
        dl::sis_primitive request;
        double since;
    };
    void send_or_queue(dl::sis_primitive request, uint32_t peer, double now);
    const std::optional<ip_address>& own_address(uint8_t version) const;
    void drain(double now);
    void discard_queue(uint32_t peer, ip_drop why);
    void drop(ip_drop why, const std::string& detail = "");
    void icmp(const bytes& offending,
              const ip_header_info& info,
              icmp_error kind,
              uint32_t mtu);
    void expire(double now);
    // Why a datagram from node `peer` must not reach the TUN device, or nullopt.
    std::optional<ip_drop> from_air_refusal(const ip_header_info& h, uint32_t peer) const;
    dl::sis_primitive request_for(const bytes& datagram,
                                  const ip_header_info& info,
                                  const ip_route& route) const;

    ip_client_config d_cfg;
    std::vector<ip_filter_rule> d_filter;
    size_t d_mtu;
    bool d_bound = false;
    bool d_flow_on = true;
    std::string d_bind_error;
    std::deque<queued> d_queue; // every peer's, in the order the datagrams came
    double d_now = 0;
    ip_client_actions d_actions;
    mutable ip_client_counters d_counters;
    std::set<std::string> d_noticed;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
