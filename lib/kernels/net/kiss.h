/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* KISS over TCP (the host protocol of Direwolf and other packet TNCs, after Chepponis
 * and Karn's KISS) as a gateway onto a STANAG 5066 node: each KISS data frame from a
 * client becomes one U_PDU on the SAP its TNC port maps to, and each U_PDU received on
 * that SAP goes to every connected client as a KISS data frame of that port. docs/kiss.md
 * gives the mapping.
 *
 *  - Framing: FEND (0xC0) starts and ends a frame; inside, FEND is sent as FESC TFEND and
 *    FESC as FESC TFESC. Bytes before the first FEND of a connection are garbage and
 *    dropped (counted); so is a frame with an escape that is neither, and a frame longer
 *    than the limit (its bytes are dropped up to the next FEND). Back-to-back FENDs are
 *    allowed (empty frames are ignored).
 *  - The frame's first byte is the TNC port (high nibble) and the command (low nibble):
 *    0 data; 1-6 (TXDELAY, P, SLOTTIME, TXTAIL, FULLDUPLEX, SETHARDWARE) concern a radio
 *    channel this node manages itself, so they are accepted and ignored (counted); 0xFF
 *    (leave KISS mode) likewise.
 *  - Routes: a port maps to a SAP (one SAP per port, one SIS connection per SAP), a
 *    destination (a group, non-ARQ, by default broadcast 31.255.255.255; or a node, ARQ)
 *    and a priority. KISS has no flow control: while the node says DATA_FLOW_OFF, or the
 *    SAP is not bound, frames wait up to max_queued per SAP, and the excess is dropped
 *    (counted), as a radio TNC drops what it cannot send.
 *
 * Plain C++17: no clock, socket or thread; nothing from a client or the air throws. */
#ifndef HFSTACK_KERNELS_NET_KISS_H
#define HFSTACK_KERNELS_NET_KISS_H

#include "dl/sis.h"

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

using bytes = dl::bytes;

constexpr uint8_t kiss_fend = 0xC0;
constexpr uint8_t kiss_fesc = 0xDB;
constexpr uint8_t kiss_tfend = 0xDC;
constexpr uint8_t kiss_tfesc = 0xDD;
constexpr uint8_t kiss_data_command = 0x00;
constexpr uint8_t kiss_return_command = 0xFF;

struct kiss_frame {
    uint8_t port = 0;    // 0..15 (the type byte's high nibble)
    uint8_t command = 0; // low nibble (0 = data); 0xFF (return) as the whole byte
    bytes data;          // after the type byte, unescaped
};

struct kiss_decoder_counters {
    uint64_t frames = 0;        // complete frames out (any command)
    uint64_t garbage_bytes = 0; // before a connection's first FEND
    uint64_t bad_escapes = 0;   // frames dropped for an invalid FESC sequence
    uint64_t oversize = 0;      // frames dropped for exceeding the limit
};

// One byte stream (one client connection) in, frames out.
class kiss_decoder
{
public:
    // max_frame: largest frame, type byte included, after unescaping.
    explicit kiss_decoder(size_t max_frame = 4096) : d_max(max_frame) {}
    void feed(const uint8_t* data, size_t size, std::vector<kiss_frame>& out);
    const kiss_decoder_counters& counters() const { return d_counters; }

private:
    void end_frame(std::vector<kiss_frame>& out);

    size_t d_max;
    bool d_synced = false; // a FEND seen: what follows belongs to frames
    bool d_escape = false, d_bad = false, d_oversize = false;
    bytes d_buf;
    kiss_decoder_counters d_counters;
};

// FEND, type byte, escaped data, FEND.
bytes kiss_encode(uint8_t port, uint8_t command, const uint8_t* data, size_t size);
inline bytes kiss_encode(uint8_t port, const bytes& data)
{
    return kiss_encode(port, kiss_data_command, data.data(), data.size());
}

struct kiss_route {
    uint8_t port = 0;
    uint8_t sap = 14;                  // Annex F leaves 13-15 unassigned
    uint32_t destination = 0x1FFFFFFF; // 31.255.255.255, broadcast
    bool arq = false;                  // to a node: ARQ; to a group always non-ARQ
    uint8_t repeats = 0;               // non-ARQ: extra copies of each U_PDU
    uint8_t priority = 0;              // 0..15
    double ttl_s = 120;                // 0 = none (the node's default)
};

struct kiss_gateway_config {
    std::vector<kiss_route> routes{ kiss_route{} };
    size_t max_frame = 2048; // KISS data bytes per frame (the node's MTU bounds it too)
    size_t max_queued = 64;  // frames per SAP waiting for the node
    uint8_t rank = 0;
};

struct kiss_gateway_counters {
    uint64_t frames_from_clients = 0, bytes_from_clients = 0;
    uint64_t updus_sent = 0, updus_received = 0, bytes_received = 0;
    uint64_t frames_to_clients = 0;
    uint64_t commands_ignored = 0; // non-data KISS commands
    uint64_t unknown_port = 0;     // frames for a port with no route
    uint64_t too_large = 0;        // larger than the bound SAP's MTU
    uint64_t queue_full = 0;
    uint64_t confirmed = 0, rejected = 0;
    uint64_t garbage_bytes = 0, bad_escapes = 0, oversize = 0; // all clients' decoders
};

struct kiss_gateway_actions {
    std::vector<std::pair<uint8_t, dl::sis_primitive>> to_sis; // (SAP, primitive)
    bytes to_clients; // KISS bytes for every connected client
    std::vector<std::string> notices;
};

class kiss_gateway
{
public:
    // Throws std::invalid_argument: no route, a port or SAP above 15, a port or SAP
    // twice, a priority above 15.
    explicit kiss_gateway(kiss_gateway_config config);

    std::vector<uint8_t> saps() const; // one SIS connection each
    void start(uint8_t sap);           // its SIS connection is up: bind
    void on_disconnected(uint8_t sap);
    void on_sis(uint8_t sap, const dl::sis_primitive& p);

    void on_client_bytes(int client, const uint8_t* data, size_t size);
    void on_client_closed(int client);

    kiss_gateway_actions take_actions();
    bool bound(uint8_t sap) const;
    const kiss_gateway_counters& counters() const { return d_counters; }
    const kiss_gateway_config& config() const { return d_cfg; }

private:
    struct sap_state {
        const kiss_route* route = nullptr;
        bool bound = false, flow_on = true;
        size_t mtu = 0;
        std::deque<bytes> queue;
    };
    void on_frame(const kiss_frame& f);
    void send(sap_state& s);
    void notice(const std::string& kind, const std::string& text);

    kiss_gateway_config d_cfg;
    std::map<uint8_t, sap_state> d_saps;
    std::map<int, kiss_decoder> d_clients;
    kiss_gateway_counters d_counters;
    kiss_gateway_actions d_actions;
    std::set<std::string> d_noticed;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
