/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Solves A x = b for a Hermitian positive definite A (least-squares normal equations,
 * MMSE equaliser solutions) by the Cholesky factorisation A = L L^H (liquid-dsp's
 * matrixc_chol's arithmetic, without its NaN-checked complex products) and two
 * triangular substitutions; right-hand sides share one factorisation. No clocks or
 * I/O. */
#ifndef HFSTACK_KERNELS_PHY_CHOLESKY_SOLVER_H
#define HFSTACK_KERNELS_PHY_CHOLESKY_SOLVER_H

#include <complex>
#include <cstddef>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class cholesky_solver
{
public:
    using cd = std::complex<double>;

    // Factorises a (n x n, row major); taken by value, as liquid's factorisation takes
    // a writable matrix (callers move theirs in). two_threads: a large one shared with
    // another thread (the same L to the bit).
    cholesky_solver(std::vector<cd> a, size_t n, bool two_threads = false);

    // x = A^-1 b (b and x n long; they may not overlap).
    void solve(const cd* b, cd* x) const;
    // L of A = L L^H (row major; its lower triangle).
    const std::vector<cd>& lower() const { return d_lower; }

private:
    size_t d_n;
    std::vector<cd> d_lower; // L, row major
    mutable std::vector<cd> d_forward;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
