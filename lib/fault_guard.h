/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_FAULT_GUARD_H
#define INCLUDED_HFSTACK_FAULT_GUARD_H

#include <gnuradio/logger.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <set>
#include <string>

namespace gr {
namespace hfstack {

// What every block runs its work on one input or timer tick through (message handlers,
// work(), timer and socket threads): an exception (a kernel bug, memory exhaustion)
// drops that input instead of escaping into GNU Radio's scheduler, which would stop the
// block's thread, or ending one of the block's own threads and with it the process. Each
// one is counted (count(); the blocks with counters() report it as internal_errors) and
// the first at each place is logged, so a stream of bad inputs cannot flood the log.
class fault_guard
{
public:
    // Runs work(); false when it threw.
    template <typename Work>
    bool operator()(const gr::logger_ptr& logger, const char* where, Work&& work) noexcept
    {
        try {
            work();
            return true;
        } catch (const std::exception& e) {
            note(logger, where, e.what());
        } catch (...) {
            note(logger, where, "an exception that is not a std::exception");
        }
        return false;
    }

    uint64_t count() const
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_count;
    }

private:
    void note(const gr::logger_ptr& logger, const char* where, const char* what) noexcept
    {
        try {
            std::lock_guard<std::mutex> lock(d_mutex);
            ++d_count;
            if (d_logged.insert(where).second)
                logger->error(
                    "{}: internal error, input dropped: {} (later ones at {} are "
                    "counted as internal_errors, not logged)",
                    where,
                    what,
                    where);
        } catch (...) { // out of memory while logging: the count is what is left
        }
    }

    mutable std::mutex d_mutex;
    uint64_t d_count = 0;
    std::set<std::string> d_logged; // places already logged
};

} // namespace hfstack
} // namespace gr

#endif
