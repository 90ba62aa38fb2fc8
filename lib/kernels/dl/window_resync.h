/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The RESET/WIN-RESYNC handshake with one peer (STANAG 5066 Annex C, D_PDU type 3):
 * the FULL RESET that makes both nodes' ARQ windows agree (first contact, a restart),
 * the RESET-ACKs owed for the peer's requests, and the frame IDs that tell a repeated
 * request (our RESET-ACK was lost) from a new one. With data riding with the link
 * request (node option data_with_link_request) the windows are reset when our request
 * goes out, so its RESET-ACK must not reset them again; a request that brought us data
 * is remembered so that its repeat, even after a link break, does not reset the
 * windows holding that data. Sans-IO: it says when the windows must be reset, the
 * engine resets them. */
#ifndef HFSTACK_KERNELS_DL_WINDOW_RESYNC_H
#define HFSTACK_KERNELS_DL_WINDOW_RESYNC_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

class window_resync
{
public:
    // Windows agreed with the peer since we started.
    bool synced() const { return d_synced; }

    // Our FULL RESET: started (numbered `frame_id`) unless one is outstanding already;
    // due until sent, and due again (send_again) after an exchange that did not
    // acknowledge it and with a repeated link request.
    bool outstanding() const { return d_outstanding; }
    void start(uint8_t frame_id);
    // A restored journal: the windows are agreed already, but our transmit windows
    // restarted at 0, which the peer's receiver must follow. The request this starts is
    // a RESET-RX-WIN command (not a FULL RESET); its RESET-ACK resets nothing here.
    void restore_synced(uint8_t frame_id);
    // Whether the request outstanding is a FULL RESET (else the RESET-RX-WIN command).
    bool full() const { return d_full; }
    bool request_due() const { return d_request_due; }
    uint8_t request_id() const { return d_id; }
    void request_sent() { d_request_due = false; }
    // Due again now, if outstanding.
    void send_again();

    // data_with_link_request: true once per request, when the windows must be reset
    // for data numbered in the windows that request sets up.
    bool reset_windows_for_request();

    // The peer's RESET-ACK: true when the windows must be reset now (it answers our
    // outstanding request, whose data did not already reset them).
    bool on_reset_ack(uint8_t frame_id);
    // The peer's FULL RESET: true when the windows must be reset (a new request; a
    // repeat of the one last taken only owes another RESET-ACK).
    bool on_full_reset(uint8_t frame_id);
    // The peer's RESET-RX-WIN command (it restarted with its journal): true when our
    // receiver must follow it. A repeat of the one last taken (our RESET-ACK was lost,
    // no regular traffic since) is only acknowledged again: the frames taken since,
    // which the peer sends again with it, must not be taken (and delivered) twice.
    bool on_rx_win_command(uint8_t frame_id);
    // Any other RESET/WIN-RESYNC request: acknowledged, nothing agreed changes.
    void owe_ack(uint8_t frame_id) { d_acks_owed.push_back(frame_id); }

    // RESET-ACKs owed, oldest first; acks_sent(n) forgets the first n.
    const std::vector<uint8_t>& acks_owed() const { return d_acks_owed; }
    void acks_sent(size_t n);

    // ARQ data from the peer in the burst that brought its FULL RESET.
    void on_data_with_reset() { d_reset_with_data_id = d_last_received_id; }
    // Traffic from the peer after its reset: it has our RESET-ACK, so a FULL RESET
    // with the same frame ID is a new one (the peer restarted).
    void on_regular_traffic();
    // The link broke: a repeat of the last request is new unless it brought data.
    void on_link_down();

private:
    bool d_synced = false;
    bool d_request_due = false;
    bool d_outstanding = false;
    bool d_full = true;
    uint8_t d_id = 0;
    int d_windows_reset_for = -1;
    int d_last_received_id = -1;
    int d_reset_with_data_id = -1;
    int d_last_rx_win_id = -1; // on_rx_win_command
    std::vector<uint8_t> d_acks_owed;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
