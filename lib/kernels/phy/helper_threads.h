/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Two pieces of work at once, the second on a helper thread that waits between calls:
 * the receivers split work of a few tens of microseconds (a frame's demapping, a
 * factorisation's rows, a window of correlations) thousands of times a second, where
 * starting and joining a thread for each took a share of the CPU of its own. No clocks
 * or I/O. */
#ifndef HFSTACK_KERNELS_PHY_HELPER_THREADS_H
#define HFSTACK_KERNELS_PHY_HELPER_THREADS_H

#include <condition_variable>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>

namespace gr {
namespace hfstack {
namespace phy {

// Runs `beside` on a waiting helper thread (a thread of its own when all the helpers
// are busy: callers on several threads at once) while the caller runs `here`; returns
// once both are done. What either throws is thrown here (beside's first).
void run_beside(const std::function<void()>& beside, const std::function<void()>& here);

// Runs piece(i, worker) once for each i in [0, count): with `concurrently`, the caller
// (worker 0) and a helper (worker 1) each take the next piece not yet taken until none
// is left (the helper: the thread waiting on the caller's piece_board where the caller
// shares one, else a helper thread); else the caller alone, in order. Pieces must not
// depend on which worker runs them or in what order (worker only names per-worker scratch
// space), so the results are the same with one thread or two. What a piece throws is
// thrown here.
void run_pieces(size_t count,
                const std::function<void(size_t, unsigned)>& piece,
                bool concurrently);

// Runs work(from, to) over [0, n) in consecutive ranges of at least min_items items
// (at most range_count of them, the same ranges whatever `concurrently`), shared as
// run_pieces shares pieces: the long loops around a block's decoding (depuncturing,
// coding again, interleaving) on two threads. work must write disjoint outputs per index.
constexpr size_t range_count = 8;
void run_ranges(size_t n,
                size_t min_items,
                const std::function<void(size_t, size_t)>& work,
                bool concurrently);

// Work a thread does for another that will wait for it (a receiver's block decoded on a
// thread of its own while the calling thread equalises the frames after it): its
// pieces (run_pieces, run_ranges with `concurrently`) are shared with the waiting
// thread once it waits, not with a helper thread meanwhile, so that two cores run two
// threads rather than three taking turns. Pieces run as run_pieces's do (the same
// results whoever runs them).
class piece_board
{
public:
    piece_board() = default;
    piece_board(const piece_board&) = delete;
    piece_board& operator=(const piece_board&) = delete;

    // The work's thread, from its start: run_pieces shares through this board while
    // the returned scope lives. begin() readies the board for the work (again).
    void begin();
    class sharing
    {
    public:
        explicit sharing(piece_board& board);
        ~sharing();
        sharing(const sharing&) = delete;
        sharing& operator=(const sharing&) = delete;

    private:
        piece_board* d_previous;
    };
    // The work's thread at its end (nothing of it runs after).
    void finish();
    // The waiting thread: runs the work's pieces as worker 1 as they come until
    // finish(); then the work's thread may be joined.
    void help_until_finished();

    // run_pieces's sharing (the work's thread as worker 0).
    void run(size_t count, const std::function<void(size_t, unsigned)>& piece);

private:
    std::mutex d_mutex;
    std::condition_variable d_changed;
    const std::function<void(size_t, unsigned)>* d_piece = nullptr;
    size_t d_count = 0;
    std::atomic<size_t> d_next{ 0 };
    unsigned d_helping = 0; // waiting threads inside pieces of d_piece
    std::exception_ptr d_failed;
    bool d_finished = false;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
