/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_MODEM_EMULATOR_IMPL_H
#define INCLUDED_HFSTACK_MODEM_EMULATOR_IMPL_H

#include "sim/emulated_modem.h"

#include "block_timer.h"
#include "fault_guard.h"

#include <gnuradio/hfstack/modem_emulator.h>

#include <memory>
#include <mutex>

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
    double now() const { return d_timer.now(); } // protocol time
    void handle_burst(const pmt::pmt_t& msg);
    void handle_air(const pmt::pmt_t& msg);
    // With d_mutex held: publishes the events due now.
    void publish_due();

    const double d_time_scale;
    mutable std::mutex d_mutex;
    // On the machine's monotonic clock from its own epoch (CLOCK_MONOTONIC, shared by
    // every process), so that emulators in different processes agree on when a burst
    // starts.
    block_timer d_timer;
    std::unique_ptr<sim::emulated_modem> d_modem;
    uint64_t d_bad_inputs = 0;
    fault_guard d_faults;
};

} // namespace hfstack
} // namespace gr

#endif
