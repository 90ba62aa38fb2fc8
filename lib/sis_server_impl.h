/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_SIS_SERVER_IMPL_H
#define INCLUDED_HFSTACK_SIS_SERVER_IMPL_H

#include "delivery_settler.h"
#include "fault_guard.h"

#include <gnuradio/hfstack/sis_server.h>

#include "dl/sis.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <poll.h>

namespace gr {
namespace hfstack {

class sis_server_impl : public sis_server
{
public:
    sis_server_impl(const std::string& address, int port, int max_clients);
    ~sis_server_impl() override;

    bool check_topology(int ninputs, int noutputs) override;
    bool start() override;
    bool stop() override;
    int port() const override { return d_bound_port; }
    size_t clients() const override { return d_clients; }

    // A client whose garbage or rejected frames exceed these gets a fatal "invalid".
    static constexpr uint64_t max_garbage_bytes = 4096;
    static constexpr uint64_t max_bad_frames = 8;
    // Unread bytes queued for one client before it is dropped.
    static constexpr size_t max_queued_bytes = 4 << 20;

private:
    using clock = std::chrono::steady_clock;

    // What sis_in hands to the server thread (which alone owns the sockets).
    struct command {
        long client_id;
        bool disconnect;
        std::string reason;
        dl::bytes data;
        long delivery; // nonzero: report "written" or "dropped" (metadata::delivery)
        delivery_settler_ptr settler; // and record it there first (metadata::settler)
    };
    struct queued_frame {
        dl::bytes data;
        long delivery = 0;
        delivery_settler_ptr settler;
    };

    struct connection {
        int fd = -1;
        dl::sis_reassembler reassembler;
        dl::sis_counters reported;    // counters already described in "invalid" events
        std::deque<queued_frame> out; // queued frames; the first is partly written
        size_t out_offset = 0;        // bytes of out.front() already written
        size_t out_bytes = 0;         // unwritten bytes in out
        bool fatal = false;           // fatal "invalid" posted: input is ignored now
        bool disconnecting = false;   // node asked to close once `out` is written
        bool draining = false;        // our side shut down; discarding input until EOF
        clock::time_point deadline = clock::time_point::max();
    };

    void open_listener();
    void handle_sis_in(const pmt::pmt_t& msg);
    void wake();
    void run();
    void apply_commands();
    bool accept_clients(); // false: out of resources, pause the listener
    void read_client(long id, connection& c);
    void answer(long id, connection& c);
    void refuse(int fd);
    void drain_refused(const std::vector<pollfd>& fds, size_t first);
    void check_garbage(long id, connection& c);
    void write_client(long id, connection& c);
    void finish(long id, connection& c);
    void drop(long id, connection& c, const std::string& why);
    void post_event(long id, const char* event, pmt::pmt_t extra = pmt::PMT_NIL);
    // A numbered primitive's outcome, for the node's journal.
    void post_settled(long id,
                      long delivery,
                      bool written,
                      const delivery_settler_ptr& settler);

    const std::string d_address;
    const int d_port;
    const size_t d_max_clients;

    std::atomic<int> d_bound_port;
    std::atomic<size_t> d_clients{ 0 };
    std::atomic<bool> d_running{ false };
    int d_listen_fd = -1;
    int d_wake_fd = -1;
    std::thread d_thread;
    fault_guard d_faults;

    std::mutex d_mutex; // guards d_commands
    std::deque<command> d_commands;

    // Server thread only.
    std::map<long, connection> d_connections;
    // Connections refused beyond max_clients: told why, read until they close.
    std::vector<std::pair<int, clock::time_point>> d_refused;
    long d_next_id = 1;
};

} // namespace hfstack
} // namespace gr

#endif
