/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_IP_CLIENT_IMPL_H
#define INCLUDED_HFSTACK_IP_CLIENT_IMPL_H

#include "net/ip_client.h"

#include "block_timer.h"
#include "fault_guard.h"

#include <gnuradio/hfstack/ip_client.h>

#include <memory>
#include <mutex>

namespace gr {
namespace hfstack {

class ip_client_impl : public ip_client
{
public:
    ip_client_impl(const std::string& options, int client_id, double stats_interval);
    ~ip_client_impl() override;

    bool start() override;
    bool stop() override;

    std::string option(const std::string& name) const override;
    std::map<std::string, double> counters() const override;
    bool bound() const override;

private:
    double now() const { return d_timer.now(); } // seconds since construction
    void handle_ip(const pmt::pmt_t& msg);
    void handle_sis(const pmt::pmt_t& msg);
    // With d_mutex held: sends the kernel's actions out and wakes the timer thread.
    void dispatch();
    void connect(); // "connected" event, then the bind
    void post_stats();
    // With d_mutex held: runs what is due at `t`; returns when next to run.
    double on_timer(double t);

    const long d_client_id;
    const double d_stats_interval;
    mutable std::mutex d_mutex;
    block_timer d_timer{ d_mutex, 1.0 };
    std::unique_ptr<net::ip_client> d_kernel;
    double d_next_stats = 0;
    double d_reconnect_at; // after the node dropped us; +inf when connected
    fault_guard d_faults;
};

} // namespace hfstack
} // namespace gr

#endif
