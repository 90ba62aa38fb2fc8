/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "helper_threads.h"

#include <condition_variable>
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
        d_failed = nullptr;
        d_wake.notify_one();
    }

    // Waits for the work started; what it threw.
    std::exception_ptr finish()
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        d_finished.wait(lock, [this] { return d_work == nullptr; });
        return d_failed;
    }

private:
    std::mutex d_mutex;
    std::condition_variable d_wake, d_finished;
    const std::function<void()>* d_work = nullptr;
    std::exception_ptr d_failed;
    std::thread d_thread;

    void serve()
    {
        std::unique_lock<std::mutex> lock(d_mutex);
        for (;;) {
            d_wake.wait(lock, [this] { return d_work != nullptr; });
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

} // namespace

void run_beside(const std::function<void()>& beside, const std::function<void()>& here)
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
        beside_failed = h->finish();
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

void run_pieces(size_t count,
                const std::function<void(size_t, unsigned)>& piece,
                bool concurrently)
{
    if (!concurrently || count < 2) {
        for (size_t i = 0; i < count; ++i)
            piece(i, 0);
        return;
    }
    std::atomic<size_t> next{ 0 };
    const auto worker = [&](unsigned w) {
        for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
             i = next.fetch_add(1, std::memory_order_relaxed))
            piece(i, w);
    };
    run_beside([&] { worker(1); }, [&] { worker(0); });
}

} // namespace phy
} // namespace hfstack
} // namespace gr
