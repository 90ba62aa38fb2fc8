/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* HF-PEP: a split-TCP performance-enhancing proxy (RFC 3135) over SLEP streams, after
 * Isode's HF-PEP (S5066-APP9), as a sans-IO kernel. Each TCP connection ends at the
 * local proxy; the proxies carry only its byte streams, one SLEP stream each, many on
 * one SAP. docs/pep.md has the protocol.
 *
 *   near side (the client's): accept() a TCP connection with its original destination
 *     -> policy (ports, limits) -> the peer proxy from the address table -> a SLEP stream
 *     opened with the request header and the first bytes the client sent;
 *   far side: the stream's header -> policy -> connect to the destination (the driver)
 *     -> the status back (connected, refused, unreachable, timed out, forbidden, busy)
 *     -> bytes both ways; half-close and reset map to FIN and RST.
 * Back-pressure: the driver reads a TCP socket only while tcp_space() > 0 and writes to
 * it what take_tcp_data() gives; SLEP's windows bound everything in between, so a
 * client that never reads costs one window, not memory without end.
 *
 * Plain C++17: `now` in seconds as a parameter, actions out, no clock, socket or thread.
 */
#ifndef HFSTACK_KERNELS_NET_PEP_H
#define HFSTACK_KERNELS_NET_PEP_H

#include "ip_routes.h"
#include "slep.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

// Extended addresses on the SLEP SAP (docs/slep.md).
constexpr uint8_t pep_slep_address = 1;
constexpr uint8_t pep_protocol_version = 1;

// The far proxy's answer to an open, first byte after the version in its direction.
enum class pep_status : uint8_t {
    connected = 0,
    refused = 1,     // the destination answered with RST (nothing listens)
    unreachable = 2, // no route, host unreachable
    timed_out = 3,   // no answer within connect_timeout_s
    forbidden = 4,   // the port is denied by policy (either proxy)
    busy = 5,        // connection limits reached
    bad_request = 6, // a header the far proxy could not read
    no_peer =
        7, // near side only: no address table entry, or the far proxy is unreachable
};
const char* to_string(pep_status s);

// A destination by address, or by host name (then `destination` is unused until the far
// proxy has resolved it):
// a name is resolved by the far proxy, where the destination is, which also saves the
// client a DNS round trip across HF.
struct pep_request {
    ip_address destination;
    uint16_t port = 0;
    std::string name;
};
// Host names a request may carry: 1-253 characters, letters, digits, '-', '_' and '.'
// (what SOCKS5 clients and HTTP CONNECT send; nothing a resolver could misread).
constexpr size_t pep_max_name = 253;
bool valid_host_name(const std::string& name);
// The name if the request has one, else the address as text.
std::string destination_text(const pep_request& r);
// The longest request header on the wire: version, type, port, length, name.
constexpr size_t pep_max_request = 5 + pep_max_name;
bytes encode(const pep_request& r);
// The request at the start of `b`: the request and its length, nullopt while more bytes
// are needed, or a failure for a malformed header.
struct pep_request_parse {
    enum class state { need_more, ok, bad } what = state::need_more;
    pep_request request;
    size_t length = 0;
};
pep_request_parse parse_pep_request(const bytes& b);

// A far proxy's allowed destination: a network and, optionally, its ports.
struct pep_destination_rule {
    ip_prefix prefix;
    std::vector<std::pair<uint16_t, uint16_t>>
        ports; // ranges, inclusive; empty: every port
    bool allows(const pep_request& r) const;
};
// "PREFIX[:PORTS] ..." (PORTS: N or N-M, comma-separated; an IPv6 prefix with ports
// has its length or brackets: fd00::/64:80, [fd00::7]:22). Throws std::invalid_argument.
std::vector<pep_destination_rule> parse_destination_rules(const std::string& name,
                                                          const std::string& text);
std::string to_text(const std::vector<pep_destination_rule>& rules);

struct pep_config {
    slep_config slep;
    ip_route_table peers; // destination IP -> the 5066 node of the proxy beyond it
    // The 5066 node whose proxy takes destinations given by host name (0: the one node
    // `peers` names, if it names only one).
    uint32_t name_peer = 0;
    std::set<uint16_t> deny_ports;             // refused on both sides
    std::set<uint16_t> allow_ports;            // empty: every port not denied
    std::map<uint16_t, size_t> port_limits;    // connections at once per destination port
    std::map<uint16_t, uint8_t> port_priority; // 5066 priority of a port's streams
    // Proxy-level priority of a port's streams: which data this proxy hands the node
    // first while SIS flow control holds some back (slep::set_send_priority).
    std::map<uint16_t, uint8_t> port_proxy_priority;
    // Connections at once, idle ones included (both sides together). A new one beyond
    // it resets the connection idle longest, if that one has been idle evict_idle_s.
    size_t max_connections = 4096;
    double evict_idle_s = 60;
    // Far side: the 5066 nodes whose streams and datagrams are taken (empty: the nodes
    // of `peers`; allow_any_peer: every node), and the destinations they may reach
    // (empty: every one but the host's own and reserved addresses, address_scope.h,
    // which only a rule covering no more than their block names).
    std::set<uint32_t> allow_peers;
    bool allow_any_peer = false;
    std::vector<pep_destination_rule> allow_destinations;
    // The driver's (python/hfstack/pep.py) SOCKS and HTTP CONNECT handshakes: closed
    // after this long unfinished; at most this many unfinished at once, and per client
    // address (beyond either, the oldest of all / of that address closed for a new one).
    double handshake_timeout_s = 10;
    size_t max_handshakes = 256;
    size_t max_handshakes_per_source = 64;
    bool compress = false;         // DEFLATE on the streams this proxy opens
    double open_wait_s = 0.2;      // wait at most this long for the client's first bytes
    double connect_timeout_s = 60; // far side: destination connect
    double idle_timeout_s = 3600;  // no byte either way this long: reset
    size_t read_chunk = 65536;     // bytes take_tcp_data() gives at most per call
};
// Options by name, as for the IP client: "peers", "name_peer", "deny_ports",
// "allow_ports", "port_limits" (PORT:N ...), "port_priority" (PORT:P ...),
// "port_proxy_priority" (PORT:P ...), "max_connections", "evict_idle_s", "allow_peers"
// (NODE ... or "any"), "allow_destinations" (PREFIX[:PORTS] ...), "handshake_timeout_s",
// "max_handshakes", "max_handshakes_per_source", "compress", "open_wait_s",
// "connect_timeout_s", "idle_timeout_s", and SLEP's "sap", "window", "send_buffer",
// "retry_s", "give_up_s", "priority".
void set_pep_option(pep_config& c, const std::string& name, const std::string& value);
void set_pep_options(pep_config& c, const std::string& assignments);
std::string get_pep_option(const pep_config& c, const std::string& name);
struct pep_option {
    std::string name, default_value, help;
};
std::vector<pep_option> pep_options();

using pep_connection = uint64_t;

struct pep_action {
    enum class kind {
        resolve,   // far side: look up destination.name, answer with resolved()
        connect,   // far side: open a TCP connection to destination:port
        connected, // near side: the far proxy reached the destination (SOCKS can answer)
        failed,    // near side: it did not (`status`); reset the client's connection
        data,      // bytes wait in take_tcp_data()
        resume,    // tcp_space() grew again: read the socket again
        finish,    // no more bytes will come: shut the socket's write side
        reset,     // abort the TCP connection (RST)
        closed,    // the connection is over: forget it
    };
    kind what = kind::data;
    pep_connection connection = 0;
    pep_request destination; // resolve (its name), connect (its address)
    pep_status status = pep_status::connected;
};

// A datagram for another service on the PEP's SLEP (the DNS proxy).
struct pep_datagram {
    uint32_t node = 0;
    uint8_t to = 0, from = 0;
    bytes data;
};

struct pep_actions {
    std::vector<dl::sis_primitive> to_sis;
    std::vector<pep_action> tcp;
    std::vector<pep_datagram>
        datagrams; // received for addresses listen_datagrams() named
    std::vector<std::string> notices;
};

struct pep_connection_stats {
    bool near = true; // accepted here (else connected here for a far client)
    pep_request destination;
    uint32_t peer_node = 0;
    uint64_t bytes_up = 0, bytes_down = 0; // from the client / to the client
    double opened = 0, established = -1;   // established: status connected seen / sent
    pep_status status = pep_status::connected;
    // Its SLEP stream, this side's view: bytes in and out as the proxies see them
    // (plain) and as they cross HF (after DEFLATE; equal without it); `queued`, bytes
    // this side holds that the far side has not confirmed (SLEP's unconfirmed ones and,
    // near side, a client's first bytes waiting for the OPEN).
    uint64_t plain_sent = 0, plain_received = 0, wire_sent = 0, wire_received = 0;
    size_t queued = 0;
};

struct pep_counters {
    uint64_t accepted = 0, refused_locally = 0, opened = 0, connected = 0, failed = 0;
    uint64_t incoming = 0, connects = 0, connect_failures = 0;
    uint64_t resets_from_tcp = 0, resets_from_peer = 0, idle_timeouts = 0, closed = 0;
    // Access policy: streams and datagrams from nodes not allowed, streams to
    // destinations not allowed; idle connections reset to make room; binds after the
    // node dropped the SAP (S_UNBIND_INDICATION, a refused bind) and it was bound again.
    uint64_t peers_refused = 0, destinations_refused = 0, evicted = 0, rebinds = 0;
    // Far side: host names looked up, and those that gave no address.
    uint64_t resolves = 0, resolve_failures = 0;
    // Client to destination / back, as this proxy passed them on (near: from and to
    // its clients; far: to and from the destinations).
    uint64_t bytes_up = 0, bytes_down = 0;
    // Near side: seconds from accepting a client to the far proxy's "connected", summed
    // over the connections that got it (divide by `connected` for the mean).
    double connect_seconds = 0;
};

class pep
{
public:
    explicit pep(pep_config config); // throws std::invalid_argument on a bad SLEP config

    void start(double now);           // the SIS connection is up: bind
    void on_disconnected(double now); // it is gone: the driver calls start() again
    // The host's own addresses: refused as far-side destinations unless a rule names
    // them (the driver keeps this current).
    void set_local_addresses(std::vector<ip_address> addresses);
    // The driver's cap from its file descriptors: at most this many connections, below
    // max_connections if smaller.
    void limit_connections(size_t n) { d_connection_budget = n; }
    size_t connection_limit() const
    {
        return std::min(d_cfg.max_connections, d_connection_budget);
    }
    void on_sis(const dl::sis_primitive& p, double now);
    void on_timer(double now);
    double next_deadline() const;
    pep_actions take_actions();

    // Near side: a client's connection to `destination` was accepted. Returns its id;
    // a connection refused at once (policy, no peer, limits) gets a `failed` action.
    pep_connection accept(const pep_request& destination, double now);
    // Far side: the addresses a `resolve` action's name has (none: it has none, or the
    // lookup failed); the first the access policy allows is connected to.
    void resolved(pep_connection c, const std::vector<ip_address>& addresses, double now);
    // Far side: the driver's connect() outcome.
    void connected(pep_connection c, double now);
    void connect_failed(pep_connection c, pep_status why, double now);
    // Either side: TCP events.
    size_t tcp_space(pep_connection c) const;
    size_t from_tcp(pep_connection c, const uint8_t* data, size_t size, double now);
    void tcp_finished(pep_connection c, double now); // the socket read EOF
    void tcp_reset(pep_connection c, double now);    // RST or error on the socket
    bytes take_tcp_data(pep_connection c, size_t max, double now);

    // Other services on the same SLEP (one SIS connection, several services): datagrams
    // to `address` come out in take_actions().datagrams; send_datagram() sends one
    // reliably (resent across link breaks, duplicates dropped at the far end).
    void listen_datagrams(uint8_t address);
    void
    send_datagram(uint32_t node, uint8_t to, uint8_t from, const bytes& data, double now);

    std::optional<pep_connection_stats> stats(pep_connection c) const;
    size_t connection_count() const { return d_conns.size(); }
    const pep_counters& counters() const { return d_counters; }
    const slep& transport() const { return d_slep; }
    const pep_config& config() const { return d_cfg; }

private:
    struct connection {
        pep_connection_stats stats;
        slep_stream stream = 0;
        bool stream_open = false;
        bytes pending;            // near: client bytes before the OPEN goes
        double open_at = 0;       // near: when the OPEN goes at the latest
        bool tcp_eof = false;     // the client (near) / destination (far) finished
        bool header_done = false; // near: status read; far: request read
        bytes header;             // partial header bytes
        bool status_sent = false; // far
        bool finish_sent = false; // finish action given to the driver
        bool tcp_closed =
            false; // far: the driver was told `closed` already (a failed connect)
        bool resume_wanted = false;
        bool resolving = false; // far: a resolve action waits for resolved()
        double connect_deadline = -1;
        double last_activity = 0;
    };

    void open_stream(pep_connection id, connection& c, double now);
    void fail(pep_connection id, pep_status why, double now);
    void drop(pep_connection id, bool reset_stream, bool reset_tcp, double now);
    void on_slep_events(double now);
    void on_incoming(slep_stream s, uint32_t node, double now);
    void service(pep_connection id, double now);
    void far_status(pep_connection id, connection& c, pep_status st, double now);
    bool port_allowed(uint16_t port) const;
    bool peer_allowed(uint32_t node) const;
    bool destination_allowed(const pep_request& r) const;
    // The node of the proxy in front of r's destination, 0 if none.
    uint32_t peer_for(const pep_request& r) const;
    // Far side: refuses c's destination by policy (counted, logged once per peer).
    void refuse_destination(pep_connection id, connection& c, double now);
    // Once per source (bounded): the log line of a refusal.
    void notice_once(const std::string& key, const std::string& text);
    // Room for one more connection beside `except`: evicts the longest idle if needed.
    bool make_room(pep_connection except, double now);
    size_t connections_to_port(uint16_t port) const;
    uint8_t proxy_priority(uint16_t port) const; // port_proxy_priority, 0 if none
    void tcp_action(pep_action::kind k,
                    pep_connection c,
                    pep_status st = pep_status::connected);
    void collect(double now);

    pep_config d_cfg;
    slep d_slep;
    std::map<pep_connection, connection> d_conns;
    std::map<slep_stream, pep_connection> d_by_stream;
    pep_connection d_next = 1;
    pep_actions d_actions;
    pep_counters d_counters;
    double d_now = 0;
    std::vector<ip_address> d_local_addresses;
    size_t d_connection_budget = std::numeric_limits<size_t>::max();
    std::set<std::string> d_noticed;
    // Binding again after the node dropped the SAP while the SIS connection stayed.
    bool d_sis_up = false;
    double d_rebind_at = -1, d_rebind_wait = 0;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
