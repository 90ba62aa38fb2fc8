/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cholesky_solver.h"

#include <liquid/liquid.h>

namespace gr {
namespace hfstack {
namespace phy {

cholesky_solver::cholesky_solver(std::vector<cd> a, size_t n) : d_n(n), d_lower(n * n), d_forward(n)
{
    matrixc_chol(a.data(), unsigned(n), d_lower.data());
}

void cholesky_solver::solve(const cd* b, cd* x) const
{
    const size_t n = d_n;
    const std::vector<cd>& l = d_lower;
    // L y = b, then L^H x = y.
    for (size_t a = 0; a < n; ++a) {
        cd acc = b[a];
        for (size_t c = 0; c < a; ++c)
            acc -= l[a * n + c] * d_forward[c];
        d_forward[a] = acc / l[a * n + a];
    }
    for (size_t a = n; a-- > 0;) {
        cd acc = d_forward[a];
        for (size_t c = a + 1; c < n; ++c)
            acc -= std::conj(l[c * n + a]) * x[c];
        x[a] = acc / l[a * n + a];
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
