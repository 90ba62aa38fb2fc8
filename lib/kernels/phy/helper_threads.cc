/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "helper_threads.h"

#include <condition_variable>
#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// A thread that runs one piece of work at a time for whoever holds it (`taken`).
class helper
{
public:
    helper() : d_thread([this] { serve(); }) { d_thread.detach(); }
    helper(const helper&) = delete;
    helper& operator=(const helper&) = delete;

    // Set from false to true by the one caller that hands work, starts and finishes it.
    std::atomic<bool> taken{ false };

    void start(const std::function<void()>& work)
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_work = &work;
        d_begun = false;
        d_failed = nullptr;
        d_wake.notify_one();
    }

    // Once the caller's own share is done: true when the work is done, waited for
    // (what it threw in `failed`); false, with `take_back`, when the helper had not
    // begun it (its thread not yet woken, its core busy): the work taken back for the
    // caller to run rather than waited for.
    bool finish_or_take_back(std::exception_ptr& failed, bool take_back)
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        if (take_back && !d_begun) {
            d_work = nullptr;
            return false;
        }
        d_finished.wait(lock, [this] { return d_work == nullptr; });
        failed = d_failed;
        return true;
    }

private:
    std::mutex d_mutex;
    std::condition_variable d_wake, d_finished;
    const std::function<void()>* d_work = nullptr;
    bool d_begun =
        false; // the helper has taken d_work (else the caller may take it back)
    std::exception_ptr d_failed;
    std::thread d_thread;

    void serve()
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        for (;;) {
            d_wake.wait(lock, [this] { return d_work != nullptr && !d_begun; });
            d_begun = true;
            const std::function<void()>* work = d_work;
            lock.unlock();
            std::exception_ptr failed;
            try {
                (*work)();
            } catch (...) {
                failed = std::current_exception();
            }
            lock.lock();
            d_failed = failed;
            d_work = nullptr;
            d_finished.notify_one();
        }
    }
};

// Enough for the App D receiver's calling thread and its blocks' decoding threads
// splitting work at the same time; each made when first needed and kept for the
// process's life (waiting on its condition; the process ends it when it exits).
constexpr size_t helper_count = 4;

helper& helper_at(size_t i)
{
    static std::array<std::atomic<helper*>, helper_count> made{};
    static std::mutex making;
    helper* h = made[i].load(std::memory_order_acquire);
    if (h)
        return *h;
    std::lock_guard<std::mutex> lock(making);
    h = made[i].load(std::memory_order_relaxed);
    if (!h) {
        h = new helper; // kept for the process's life (above)
        made[i].store(h, std::memory_order_release);
    }
    return *h;
}

// run_beside; with `take_back`, beside is run after here on the caller's thread where
// the helper had not begun it by then (run_pieces: the pieces are all taken by then).
void beside_and_here(const std::function<void()>& beside,
                     const std::function<void()>& here,
                     bool take_back)
{
    helper* h = nullptr;
    for (size_t i = 0; i < helper_count && !h; ++i) {
        helper& candidate = helper_at(i);
        bool expected = false;
        if (candidate.taken.compare_exchange_strong(
                expected, true, std::memory_order_acquire))
            h = &candidate;
    }
    std::exception_ptr beside_failed, here_failed;
    if (h) {
        h->start(beside);
        try {
            here();
        } catch (...) {
            here_failed = std::current_exception();
        }
        if (!h->finish_or_take_back(beside_failed, take_back)) {
            try {
                beside();
            } catch (...) {
                beside_failed = std::current_exception();
            }
        }
        h->taken.store(false, std::memory_order_release);
    } else {
        std::thread second([&] {
            try {
                beside();
            } catch (...) {
                beside_failed = std::current_exception();
            }
        });
        try {
            here();
        } catch (...) {
            here_failed = std::current_exception();
        }
        second.join();
    }
    if (beside_failed)
        std::rethrow_exception(beside_failed);
    if (here_failed)
        std::rethrow_exception(here_failed);
}

} // namespace

void run_beside(const std::function<void()>& beside, const std::function<void()>& here)
{
    beside_and_here(beside, here, false);
}

namespace {
// The board this thread's pieces are shared through (piece_board::sharing).
thread_local piece_board* shared_through = nullptr;
} // namespace

void piece_board::begin()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_finished = false;
}

piece_board::sharing::sharing(piece_board& board) : d_previous(shared_through)
{
    shared_through = &board;
}

piece_board::sharing::~sharing() { shared_through = d_previous; }

void piece_board::finish()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_finished = true;
    d_changed.notify_all();
}

void piece_board::help_until_finished()
{
    std::unique_lock<std::mutex> lock(d_mutex);
    for (;;) {
        d_changed.wait(lock, [this] {
            return d_finished ||
                   (d_piece && d_next.load(std::memory_order_relaxed) < d_count);
        });
        if (d_finished)
            return;
        const std::function<void(size_t, unsigned)>* piece = d_piece;
        const size_t count = d_count;
        ++d_helping;
        lock.unlock();
        std::exception_ptr failed;
        try {
            for (size_t i = d_next.fetch_add(1, std::memory_order_relaxed); i < count;
                 i = d_next.fetch_add(1, std::memory_order_relaxed))
                (*piece)(i, 1);
        } catch (...) {
            failed = std::current_exception();
        }
        lock.lock();
        if (failed && !d_failed)
            d_failed = failed;
        --d_helping;
        d_changed.notify_all();
    }
}

void piece_board::run(size_t count, const std::function<void(size_t, unsigned)>& piece)
{
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        if (d_piece) {
            // Pieces within a piece this thread runs: in order, on this thread alone.
            lock.unlock();
            for (size_t i = 0; i < count; ++i)
                piece(i, 0);
            return;
        }
        d_piece = &piece;
        d_count = count;
        d_next.store(0, std::memory_order_relaxed);
        d_failed = nullptr;
        d_changed.notify_all();
    }
    std::exception_ptr failed;
    try {
        for (size_t i = d_next.fetch_add(1, std::memory_order_relaxed); i < count;
             i = d_next.fetch_add(1, std::memory_order_relaxed))
            piece(i, 0);
    } catch (...) {
        failed = std::current_exception();
        d_next.store(count, std::memory_order_relaxed); // nothing more taken
    }
    std::unique_lock<std::mutex> lock(d_mutex);
    d_changed.wait(lock, [this] { return d_helping == 0; });
    d_piece = nullptr;
    if (!failed)
        failed = d_failed;
    d_failed = nullptr;
    lock.unlock();
    if (failed)
        std::rethrow_exception(failed);
}

void run_pieces(size_t count,
                const std::function<void(size_t, unsigned)>& piece,
                bool concurrently)
{
    if (!concurrently || count < 2) {
        for (size_t i = 0; i < count; ++i)
            piece(i, 0);
        return;
    }
    if (shared_through) {
        shared_through->run(count, piece);
        return;
    }
    std::atomic<size_t> next{ 0 };
    const auto worker = [&](unsigned w) {
        for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
             i = next.fetch_add(1, std::memory_order_relaxed))
            piece(i, w);
    };
    beside_and_here([&] { worker(1); }, [&] { worker(0); }, true);
}

void run_ranges(size_t n,
                size_t min_items,
                const std::function<void(size_t, size_t)>& work,
                bool concurrently)
{
    const size_t count =
        std::max<size_t>(1, std::min(range_count, n / std::max<size_t>(1, min_items)));
    run_pieces(
        count,
        [&](size_t r, unsigned) { work(n * r / count, n * (r + 1) / count); },
        concurrently);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
