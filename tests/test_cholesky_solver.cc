/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// cholesky_solver: its factorisation is liquid-dsp's matrixc_chol to the bit (the
// receivers' results must not move with the faster code), and it solves.
#include "phy/cholesky_solver.h"

#include <gtest/gtest.h>

#include <liquid/liquid.h>
#include <complex>
#include <random>
#include <vector>

using gr::hfstack::phy::cholesky_solver;
using cd = std::complex<double>;

namespace {

// A = B B^H + loading I for a random n x m B (as the MMSE matrices: a sum of outer
// products and the noise), its diagonal's imaginary parts exactly zero.
std::vector<cd> hermitian(size_t n, size_t m, double loading, std::mt19937& rng)
{
    std::normal_distribution<double> gauss;
    std::vector<cd> b(n * m);
    for (cd& x : b)
        x = cd(gauss(rng), gauss(rng));
    std::vector<cd> a(n * n);
    for (size_t r = 0; r < n; ++r)
        for (size_t c = 0; c < n; ++c) {
            cd sum;
            for (size_t k = 0; k < m; ++k)
                sum += b[r * m + k] * std::conj(b[c * m + k]);
            a[r * n + c] = r == c ? cd(sum.real() + loading, 0.0) : sum;
        }
    for (size_t r = 0; r < n; ++r)
        for (size_t c = r + 1; c < n; ++c)
            a[c * n + r] = std::conj(a[r * n + c]);
    return a;
}

} // namespace

TEST(CholeskySolver, MatchesLiquidBitForBitAndSolves)
{
    std::mt19937 rng(7);
    std::normal_distribution<double> gauss;
    for (size_t n : { 1, 2, 5, 16, 66, 131, 260 }) {
        for (size_t m : { n / 2 + 1, n + 3 }) {
            const std::vector<cd> a = hermitian(n, m, 1e-3, rng);
            std::vector<cd> b(n);
            for (cd& v : b)
                v = cd(gauss(rng), gauss(rng));
            std::vector<cd> x(n);
            const cholesky_solver solver(a, n);
            solver.solve(b.data(), x.data());
            // The same L as liquid's factorisation, bit for bit.
            std::vector<cd> liquid_a = a, liquid_l(n * n);
            matrixc_chol(liquid_a.data(), unsigned(n), liquid_l.data());
            for (size_t r = 0; r < n; ++r)
                for (size_t c = 0; c <= r; ++c) {
                    ASSERT_EQ(solver.lower()[r * n + c].real(),
                              liquid_l[r * n + c].real())
                        << "n " << n << " m " << m << " at " << r << "," << c;
                    ASSERT_EQ(solver.lower()[r * n + c].imag(),
                              liquid_l[r * n + c].imag())
                        << "n " << n << " m " << m << " at " << r << "," << c;
                }
            // And it is a solution: A x = b.
            double residual = 0, size = 0;
            for (size_t r = 0; r < n; ++r) {
                cd ax;
                for (size_t c = 0; c < n; ++c)
                    ax += a[r * n + c] * x[c];
                residual += std::norm(ax - b[r]);
                size += std::norm(b[r]);
            }
            EXPECT_LT(residual, 1e-12 * size) << "n " << n << " m " << m;
        }
    }
}

// Shared with a second thread (by blocks of columns, the rows under each block in
// halves) the factorisation is still liquid's to the bit, and where liquid refuses (a
// diagonal under its row's sum, mid-block) it leaves L as the one thread does.
TEST(CholeskySolver, TwoThreadsGiveTheSameFactorisation)
{
    std::mt19937 rng(8);
    for (size_t n : { 95, 96, 131, 260, 341 }) {
        std::vector<cd> a = hermitian(n, n / 2 + 1, 1e-3, rng);
        for (bool refused : { false, true }) {
            if (refused)
                a[(n / 2 + 3) * n + n / 2 + 3] = cd(1e-9, 0.0); // under its row's sum
            const cholesky_solver one(a, n), two(a, n, true);
            std::vector<cd> liquid_a = a, liquid_l(n * n);
            matrixc_chol(liquid_a.data(), unsigned(n), liquid_l.data());
            for (size_t r = 0; r < n; ++r)
                for (size_t c = 0; c <= r; ++c) {
                    ASSERT_EQ(two.lower()[r * n + c], one.lower()[r * n + c])
                        << "n " << n << " refused " << refused << " at " << r << "," << c;
                    ASSERT_EQ(two.lower()[r * n + c].real(), liquid_l[r * n + c].real())
                        << "n " << n << " refused " << refused << " at " << r << "," << c;
                    ASSERT_EQ(two.lower()[r * n + c].imag(), liquid_l[r * n + c].imag())
                        << "n " << n << " refused " << refused << " at " << r << "," << c;
                }
        }
    }
}
