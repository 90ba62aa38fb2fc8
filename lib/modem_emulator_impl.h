/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_MODEM_EMULATOR_IMPL_H
#define INCLUDED_HFSTACK_MODEM_EMULATOR_IMPL_H

#include "sim/emulated_modem.h"

#include "fault_guard.h"

#include <gnuradio/hfstack/modem_emulator.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace gr {
namespace hfstack {

class modem_emulator_impl : public modem_emulator
{
public:
    modem_emulator_impl(double time_scale,
                        const std::string& profile,
                        double snr_db,
                        double ber,
                        uint64_t seed,
                        const std::string& options);
    ~modem_emulator_impl() override;

    bool start() override;
    bool stop() override;
    std::map<std::string, double> counters() const override;

private:
    double now() const; // protocol time, shared by every emulator in the process
    void handle_burst(const pmt::pmt_t& msg);
    void handle_air(const pmt::pmt_t& msg);
    // With d_mutex held: publishes the events due now.
    void publish_due();
    void timer_loop();
    void stop_timer();

    const double d_time_scale;
    mutable std::mutex d_mutex;
    std::condition_variable d_wake;
    std::unique_ptr<sim::emulated_modem> d_modem;
    uint64_t d_bad_inputs = 0;
    bool d_running = false;
    std::thread d_timer;
    fault_guard d_faults;
};

} // namespace hfstack
} // namespace gr

#endif
