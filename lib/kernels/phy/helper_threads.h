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

#include <functional>

namespace gr {
namespace hfstack {
namespace phy {

// Runs `beside` on a waiting helper thread (a thread of its own when all the helpers
// are busy: callers on several threads at once) while the caller runs `here`; returns
// once both are done. What either throws is thrown here (beside's first).
void run_beside(const std::function<void()>& beside, const std::function<void()>& here);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
