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

TEST(HelperThreads, ABoardSharesPiecesWithTheThreadWaitingAndNoOther)
{
    // A thread's pieces on its board: each run once, as worker 0 on that thread or
    // worker 1 on the one waiting for it, never on a helper thread; the results the
    // same as one thread's; pieces within pieces done; what a piece throws thrown on
    // the board's thread.
    using gr::hfstack::phy::piece_board;
    using gr::hfstack::phy::run_pieces;
    using gr::hfstack::phy::run_ranges;
    constexpr size_t count = 200;
    for (int round = 0; round < 20; ++round) {
        piece_board board;
        std::vector<long> out(count, 0), ranged(5000, 0), nested(16, 0);
        std::vector<std::thread::id> ran_on(count);
        std::vector<unsigned> worker_of(count);
        std::atomic<int> runs{ 0 };
        bool thrown = false;
        board.begin();
        std::thread::id work_thread;
        std::thread work([&] {
            const piece_board::sharing shared(board);
            work_thread = std::this_thread::get_id();
            for (int pass = 0; pass < 3; ++pass)
                run_pieces(
                    count,
                    [&](size_t i, unsigned worker) {
                        ++runs;
                        long v = 0;
                        for (size_t k = 0; k < 2000; ++k)
                            v += long((i * 7 + k * size_t(pass + 1)) % 13);
                        out[i] += v;
                        ran_on[i] = std::this_thread::get_id();
                        worker_of[i] = worker;
                    },
                    true);
            run_ranges(
                ranged.size(),
                100,
                [&](size_t from, size_t to) {
                    for (size_t k = from; k < to; ++k)
                        ranged[k] += long(k);
                },
                true);
            // Pieces within pieces (on this thread in order, on the waiting one shared
            // with a helper thread).
            run_pieces(
                nested.size(),
                [&](size_t i, unsigned) {
                    run_pieces(
                        3, [&](size_t k, unsigned) { nested[i] += long(k + 1); }, true);
                },
                true);
            try {
                run_pieces(
                    count,
                    [&](size_t i, unsigned) {
                        if (i == count / 2)
                            throw std::runtime_error("piece");
                    },
                    true);
            } catch (const std::runtime_error&) {
                thrown = true;
            }
            board.finish();
        });
        board.help_until_finished();
        work.join();
        EXPECT_EQ(runs.load(), int(3 * count));
        EXPECT_TRUE(thrown);
        for (size_t i = 0; i < count; ++i) {
            long expected = 0;
            for (int pass = 0; pass < 3; ++pass)
                for (size_t k = 0; k < 2000; ++k)
                    expected += long((i * 7 + k * size_t(pass + 1)) % 13);
            EXPECT_EQ(out[i], expected) << i;
            EXPECT_EQ(ran_on[i],
                      worker_of[i] == 0 ? work_thread : std::this_thread::get_id())
                << i;
        }
        for (size_t k = 0; k < ranged.size(); ++k)
            EXPECT_EQ(ranged[k], long(k)) << k;
        for (long v : nested)
            EXPECT_EQ(v, 6);
    }
}
