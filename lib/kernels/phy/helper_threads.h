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

#include <cstddef>
#include <functional>

namespace gr {
namespace hfstack {
namespace phy {

// Runs `beside` on a waiting helper thread (a thread of its own when all the helpers
// are busy: callers on several threads at once) while the caller runs `here`; returns
// once both are done. What either throws is thrown here (beside's first).
void run_beside(const std::function<void()>& beside, const std::function<void()>& here);

// Runs piece(i, worker) once for each i in [0, count): with `concurrently`, the caller
// (worker 0) and a helper (worker 1) each take the next piece not yet taken until none
// is left; else the caller alone, in order. Pieces must not depend on which worker runs
// them or in what order (worker only names per-worker scratch space), so the results
// are the same with one thread or two. What a piece throws is thrown here.
void run_pieces(size_t count,
                const std::function<void(size_t, unsigned)>& piece,
                bool concurrently);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
