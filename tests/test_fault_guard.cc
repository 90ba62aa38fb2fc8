/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The guard every block runs its inputs and timer ticks through (lib/fault_guard.h): an
// exception of any kind is caught and counted, the first at each place logged through
// the block's logger, later ones at that place only counted.
#include "fault_guard.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

size_t occurrences(const std::string& text, const std::string& what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

TEST(FaultGuard, CatchesCountsAndLogsOncePerPlace)
{
    std::ostringstream log_text;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
    gr::logging::singleton().add_default_sink(sink);
    auto logger = std::make_shared<gr::logger>("fault_guard_test");

    gr::hfstack::fault_guard guard;
    int ran = 0;
    EXPECT_TRUE(guard(logger, "in", [&] { ++ran; }));
    for (int k = 0; k < 3; ++k)
        EXPECT_FALSE(guard(logger, "in", [] {
            throw std::invalid_argument("t0 needs fading samples from before");
        }));
    EXPECT_FALSE(guard(logger, "timer", [] { throw 42; })); // not a std::exception
    EXPECT_TRUE(guard(logger, "in", [&] { ++ran; }));
    EXPECT_EQ(ran, 2);
    EXPECT_EQ(guard.count(), 4u);

    sink->flush();
    const std::string text = log_text.str();
    EXPECT_EQ(
        occurrences(text, "in: internal error, input dropped: t0 needs fading samples"),
        1u)
        << text;
    EXPECT_EQ(occurrences(text,
                          "timer: internal error, input dropped: an exception that is "
                          "not a std::exception"),
              1u)
        << text;
    EXPECT_EQ(occurrences(text, "internal error"), 2u) << text;
}
