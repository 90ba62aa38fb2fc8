/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cholesky_solver.h"

#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

cholesky_solver::cholesky_solver(std::vector<cd> a, size_t n)
    : d_n(n), d_lower(n * n), d_forward(n)
{
    // liquid-dsp's matrixc_chol (1.5) operation for operation, so the same L to the bit
    // (test_cholesky_solver holds the two against each other), its complex products
    // written out without the NaN checks that made it several times slower: the 48 kHz
    // poor channel's MMSE-DFE (a few hundred unknowns) spent two thirds of its time here.
    // Its refusals too: a diagonal with a negative real part, a nonzero imaginary part or
    // under the row's sum leaves the rest of L zero.
    std::vector<cd>& l = d_lower;
    for (size_t j = 0; j < n; ++j) {
        const cd a_jj = a[j * n + j];
        if (a_jj.real() < 0 || std::fabs(a_jj.imag()) > 0)
            return;
        const cd* row_j = &l[j * n];
        double t0 = 0;
        for (size_t k = 0; k < j; ++k)
            t0 += row_j[k].real() * row_j[k].real() + row_j[k].imag() * row_j[k].imag();
        if (a_jj.real() < t0)
            return;
        const double l_jj = std::sqrt(a_jj.real() - t0);
        l[j * n + j] = l_jj;
        // t1 -= l_ik conj(l_jk), four rows at a time (four independent sums, each in
        // liquid's order: the sums' latency, not the arithmetic, bounded one row).
        size_t i = j + 1;
        for (; i + 4 <= n; i += 4) {
            const cd* r0 = &l[i * n];
            const cd* r1 = r0 + n;
            const cd* r2 = r1 + n;
            const cd* r3 = r2 + n;
            double re0 = a[i * n + j].real(), im0 = a[i * n + j].imag();
            double re1 = a[(i + 1) * n + j].real(), im1 = a[(i + 1) * n + j].imag();
            double re2 = a[(i + 2) * n + j].real(), im2 = a[(i + 2) * n + j].imag();
            double re3 = a[(i + 3) * n + j].real(), im3 = a[(i + 3) * n + j].imag();
            for (size_t k = 0; k < j; ++k) {
                const double c = row_j[k].real(), d = row_j[k].imag();
                re0 -= r0[k].real() * c + r0[k].imag() * d;
                im0 -= r0[k].imag() * c - r0[k].real() * d;
                re1 -= r1[k].real() * c + r1[k].imag() * d;
                im1 -= r1[k].imag() * c - r1[k].real() * d;
                re2 -= r2[k].real() * c + r2[k].imag() * d;
                im2 -= r2[k].imag() * c - r2[k].real() * d;
                re3 -= r3[k].real() * c + r3[k].imag() * d;
                im3 -= r3[k].imag() * c - r3[k].real() * d;
            }
            l[i * n + j] = cd(re0 / l_jj, im0 / l_jj);
            l[(i + 1) * n + j] = cd(re1 / l_jj, im1 / l_jj);
            l[(i + 2) * n + j] = cd(re2 / l_jj, im2 / l_jj);
            l[(i + 3) * n + j] = cd(re3 / l_jj, im3 / l_jj);
        }
        for (; i < n; ++i) {
            const cd* row_i = &l[i * n];
            double re = a[i * n + j].real(), im = a[i * n + j].imag();
            for (size_t k = 0; k < j; ++k) {
                const double p = row_i[k].real(), q = row_i[k].imag();
                const double c = row_j[k].real(), d = row_j[k].imag();
                re -= p * c + q * d;
                im -= q * c - p * d;
            }
            l[i * n + j] = cd(re / l_jj, im / l_jj);
        }
    }
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
