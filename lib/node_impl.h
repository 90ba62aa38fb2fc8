/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_NODE_IMPL_H
#define INCLUDED_HFSTACK_NODE_IMPL_H

#include "dl/deframer.h"
#include "dl/node_engine.h"
#include "dl/pcap.h"
#include "journal_file.h"

#include "block_timer.h"
#include "delivery_settler.h"
#include "fault_guard.h"

#include <gnuradio/hfstack/node.h>

#include <condition_variable>
#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

namespace gr {
namespace hfstack {

class node_impl : public node
{
public:
    node_impl(const std::string& address,
              const std::string& options,
              double time_scale,
              const std::string& pcap_file,
              double stats_interval);
    ~node_impl() override;

    bool check_topology(int ninputs, int noutputs) override;
    bool start() override;
    bool stop() override;

    std::string option(const std::string& name) const override;
    std::map<std::string, double> counters() const override;
    std::vector<std::map<std::string, std::string>> links() const override;
    std::map<int, uint32_t> bindings() const override;
    std::vector<std::map<std::string, std::string>> take_events() override;
    bool channel_busy() const override;

private:
    double now() const; // protocol time, seconds
    // With d_mutex held: the time to give the engine for an input from the modem that
    // names its channel time (metadata::channel_time) or, without one, now(); never
    // before the engine's last time (its clock only goes forward).
    double engine_time(const pmt::pmt_t& meta);
    void handle_sis(const pmt::pmt_t& msg);
    void handle_sis_locked(uint32_t client,
                           const std::string& event,
                           const pmt::pmt_t& meta,
                           const pmt::pmt_t& msg);
    void handle_burst(const pmt::pmt_t& msg);
    void handle_status(const pmt::pmt_t& msg);
    // With d_mutex held: sends the engine's actions out and wakes the timer thread.
    void dispatch();
    // With d_mutex held: queues an event for each link, mode or binding change.
    void note_changes();
    void capture(const dl::bytes& burst);
    void post_stats();
    // With d_mutex held: runs what is due at `t`; returns when next to run.
    double on_timer(double t);
    // The journal of state_dir (dl/node_journal.h). Opened and replayed at construction;
    // the engine's records are appended as they come (journal_write) and made durable
    // (fdatasync) before anything leaves for a client or a modem (journal_sync): a
    // restart then never hands a client a C_PDU twice nor loses one the peer was told
    // we had.
    bool journal_lock(const std::string& state_dir); // false: another process has it
    void journal_open(const std::string& state_dir);
    void journal_write(const dl::node_actions& a);
    void journal_sync();
    void journal_failed(const std::string& why); // logs once; no journal writes after
    std::map<std::string, double> journal_counters() const;
    std::string d_journal_path;
    // Shared with the SIS server, which appends the settled records (null: no journal).
    std::shared_ptr<journal_file> d_journal;
    int d_journal_lock_fd = -1;
    bool d_journal_dirty = false;
    bool d_journal_failed = false;
    uint64_t d_journal_bytes = 0, d_journal_syncs = 0;
    double d_journal_sync_s = 0;

    const double d_stats_interval;
    const std::string d_pcap_path;
    mutable std::mutex d_mutex;
    block_timer d_timer;
    std::unique_ptr<dl::node_engine> d_engine;
    std::unique_ptr<dl::dpdu_capture> d_pcap;
    dl::bytes d_capture_burst; // pieces of the burst being received, for the capture
    double d_next_stats = 0;
    // The last time given to the engine; whether the modem names channel times (an
    // emulator): then timer steps run as of their deadline and bursts carry the time
    // of the decision.
    double d_engine_now = -std::numeric_limits<double>::infinity();
    bool d_channel_clock = false;
    double d_last_step_due = std::numeric_limits<double>::quiet_NaN();
    fault_guard d_faults;
    std::vector<std::map<std::string, std::string>> d_links_seen;
    std::map<int, uint32_t> d_bindings_seen;
    std::deque<std::map<std::string, std::string>> d_events;
    uint64_t d_events_dropped = 0;
};

} // namespace hfstack
} // namespace gr

#endif
