/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "window_resync.h"

namespace gr {
namespace hfstack {
namespace dl {

void window_resync::start(uint8_t frame_id)
{
    if (d_outstanding)
        return;
    d_outstanding = true;
    d_request_due = true;
    d_full = true;
    d_id = frame_id;
}

void window_resync::restore_synced(uint8_t frame_id)
{
    d_synced = true;
    d_outstanding = true;
    d_request_due = true;
    d_full = false;
    d_id = frame_id;
}

void window_resync::send_again()
{
    if (d_outstanding)
        d_request_due = true;
}

bool window_resync::reset_windows_for_request()
{
    if (d_windows_reset_for == int(d_id))
        return false;
    d_windows_reset_for = d_id;
    return true;
}

bool window_resync::on_reset_ack(uint8_t frame_id)
{
    if (!d_outstanding || frame_id != d_id)
        return false;
    d_outstanding = false;
    d_request_due = false;
    d_synced = true;
    if (!d_full) {
        d_full = true;
        return false; // the peer's receiver followed our restarted transmit windows
    }
    return d_windows_reset_for != int(frame_id);
}

bool window_resync::on_full_reset(uint8_t frame_id)
{
    d_acks_owed.push_back(frame_id);
    if (int(frame_id) == d_last_received_id && d_synced)
        return false;
    d_synced = true;
    d_outstanding = false;
    d_request_due = false;
    d_full = true;
    d_last_received_id = frame_id;
    return true;
}

bool window_resync::on_rx_win_command(uint8_t frame_id)
{
    d_acks_owed.push_back(frame_id);
    if (int(frame_id) == d_last_rx_win_id)
        return false;
    d_last_rx_win_id = frame_id;
    return true;
}

void window_resync::acks_sent(size_t n)
{
    d_acks_owed.erase(d_acks_owed.begin(),
                      d_acks_owed.begin() +
                          long(n < d_acks_owed.size() ? n : d_acks_owed.size()));
}

void window_resync::on_regular_traffic()
{
    d_last_received_id = -1;
    d_reset_with_data_id = -1;
    d_last_rx_win_id = -1;
}

void window_resync::on_link_down()
{
    if (d_last_received_id != d_reset_with_data_id)
        d_last_received_id = -1;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
