/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Protocol time and the timer thread of a message block whose kernel has deadlines
 * (node, ip_client, modem_emulator). The kernels take `now` as a parameter; this is
 * where it comes from. */
#ifndef INCLUDED_HFSTACK_BLOCK_TIMER_H
#define INCLUDED_HFSTACK_BLOCK_TIMER_H

#include <condition_variable>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

namespace gr {
namespace hfstack {

class block_timer
{
public:
    using clock = std::chrono::steady_clock;

    // Protocol time is the monotonic clock since `epoch`, times `time_scale`. The
    // default epoch is now; clock::time_point{} (the clock's own epoch) gives a time
    // every process on the machine shares. `mutex` is the block's: every step runs
    // with it held.
    block_timer(std::mutex& mutex,
                double time_scale,
                clock::time_point epoch = clock::now())
        : d_mutex(mutex), d_time_scale(time_scale), d_epoch(epoch)
    {
    }
    ~block_timer() { stop(); }
    block_timer(const block_timer&) = delete;
    block_timer& operator=(const block_timer&) = delete;

    // This timer's protocol time 0 on the shared clock (epoch clock::time_point{}):
    // shared-clock times minus this are this timer's.
    double shared_clock_offset() const
    {
        return std::chrono::duration<double>(d_epoch - clock::time_point{}).count() *
               d_time_scale;
    }

    // How far (protocol seconds) a time on the shared clock may lie behind now and
    // still be taken as it is: an input that names its channel time, a decision a node
    // names to its modem emulator. The processes of an emulated channel stall together
    // when the machine is loaded (a tenth of a second and more at a load of a few on
    // two cores), which at time scale 10 was more than the single protocol second this
    // once was; a process stalled longer than a few real seconds is late.
    double max_channel_lag() const
    {
        constexpr double min_lag_s = 1.0, stall_real_s = 2.0;
        return std::max(min_lag_s, stall_real_s * d_time_scale);
    }

    double now() const
    {
        return std::chrono::duration<double>(clock::now() - d_epoch).count() *
               d_time_scale;
    }

    // With the block's mutex held. Starts the thread, which runs step(now) at once,
    // whenever woken, and when the deadline step returned (protocol seconds; +inf:
    // none) has passed. False if it was already running.
    bool start(std::function<double(double)> step)
    {
        if (d_running)
            return false;
        d_running = true;
        d_step = std::move(step);
        d_thread = std::thread([this] { run(); });
        return true;
    }

    // Without the mutex held. Ends the thread; false if it was not running.
    bool stop()
    {
        {
            std::lock_guard<std::mutex> lock(d_mutex);
            if (!d_running && !d_thread.joinable())
                return false;
            d_running = false;
        }
        d_wake.notify_all();
        if (d_thread.joinable())
            d_thread.join();
        return true;
    }

    // Something changed the deadline (an input was handled): step again now.
    void wake() { d_wake.notify_all(); }

private:
    void run()
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        while (d_running) {
            const double next = d_step(now());
            if (!d_running)
                break;
            if (std::isinf(next))
                d_wake.wait(lock);
            else
                d_wake.wait_for(lock,
                                std::chrono::duration<double>(
                                    std::max(0.0, (next - now()) / d_time_scale)));
        }
    }

    std::mutex& d_mutex;
    const double d_time_scale;
    const clock::time_point d_epoch;
    std::condition_variable d_wake;
    std::function<double(double)> d_step;
    bool d_running = false; // guarded by d_mutex
    std::thread d_thread;
};

} // namespace hfstack
} // namespace gr

#endif
