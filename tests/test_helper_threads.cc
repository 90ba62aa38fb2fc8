/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// run_beside: both pieces of work done when it returns, the second on another thread,
// whatever throws thrown to the caller, and callers on many threads at once (more than
// there are helpers waiting) each getting their own work done.
#include "phy/helper_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

using gr::hfstack::phy::run_beside;

TEST(HelperThreads, RunsBothTheSecondOnAnotherThread)
{
    for (int call = 0; call < 100; ++call) {
        std::vector<int> halves(2, 0);
        std::thread::id beside_on, here_on;
        run_beside(
            [&] {
                beside_on = std::this_thread::get_id();
                halves[1] = call + 1;
            },
            [&] {
                here_on = std::this_thread::get_id();
                halves[0] = call + 2;
            });
        EXPECT_EQ(halves[0], call + 2);
        EXPECT_EQ(halves[1], call + 1);
        EXPECT_EQ(here_on, std::this_thread::get_id());
        EXPECT_NE(beside_on, here_on);
    }
}

TEST(HelperThreads, ThrowsWhatEitherThrew)
{
    int done = 0;
    EXPECT_THROW(run_beside([] { throw std::runtime_error("beside"); }, [&] { ++done; }),
                 std::runtime_error);
    EXPECT_EQ(done, 1);
    EXPECT_THROW(run_beside([&] { ++done; }, [] { throw std::logic_error("here"); }),
                 std::logic_error);
    EXPECT_EQ(done, 2);
    // The helpers still serve after a throw.
    int after = 0;
    run_beside([&] { after += 1; }, [&] { after += 2; });
    EXPECT_EQ(after, 3);
}

TEST(HelperThreads, ManyCallersAtOnceAndNested)
{
    constexpr int callers = 8, calls = 300;
    std::vector<long> sums(callers, 0);
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c)
        threads.emplace_back([&sums, c] {
            for (int k = 0; k < calls; ++k) {
                std::vector<long> part(4, 0);
                run_beside(
                    [&] {
                        // Work beside that splits again.
                        run_beside([&] { part[3] = k; }, [&] { part[2] = c; });
                    },
                    [&] {
                        part[0] = 1;
                        part[1] = 2;
                    });
                sums[size_t(c)] += std::accumulate(part.begin(), part.end(), 0L);
            }
        });
    for (std::thread& t : threads)
        t.join();
    for (int c = 0; c < callers; ++c)
        EXPECT_EQ(sums[size_t(c)], long(calls) * (3 + c) + long(calls) * (calls - 1) / 2)
            << "caller " << c;
}
