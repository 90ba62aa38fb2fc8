/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_GUARDED_H
#define INCLUDED_HFSTACK_GUARDED_H

#include <gnuradio/logger.h>

#include <exception>

namespace gr {
namespace hfstack {

// Runs a block's work on one input or timer tick; an exception (a kernel bug, memory
// exhaustion) is logged loudly and the input dropped, instead of escaping into GNU
// Radio's scheduler or ending a timer thread.
template <typename Work>
void guarded(const gr::logger_ptr& logger, const char* where, Work&& work)
{
    try {
        work();
    } catch (const std::exception& e) {
        logger->error("{}: internal error, input dropped: {}", where, e.what());
    }
}

} // namespace hfstack
} // namespace gr

#endif
