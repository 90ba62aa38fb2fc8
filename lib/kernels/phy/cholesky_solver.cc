/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "cholesky_solver.h"
#include "helper_threads.h"

#include <algorithm>
#include <cmath>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// Below this order the factorisation stays on one thread (another is not worth it).
constexpr size_t least_shared_order = 96;
// Columns a block of the shared factorisation holds: its diagonal block is factorised
// on the calling thread, then the rows under it shared (a thread started per block).
constexpr size_t shared_block_columns = 16;

using cd = std::complex<double>;

// L's diagonal at column j (its row's earlier entries known): false where liquid's
// factorisation refuses (a diagonal with a negative real part, a nonzero imaginary part
// or under the row's sum).
bool diagonal_of(const std::vector<cd>& a, std::vector<cd>& l, size_t n, size_t j)
{
    const cd a_jj = a[j * n + j];
    if (a_jj.real() < 0 || std::fabs(a_jj.imag()) > 0)
        return false;
    const cd* row_j = &l[j * n];
    double t0 = 0;
    for (size_t k = 0; k < j; ++k)
        t0 += row_j[k].real() * row_j[k].real() + row_j[k].imag() * row_j[k].imag();
    if (a_jj.real() < t0)
        return false;
    l[j * n + j] = std::sqrt(a_jj.real() - t0);
    return true;
}

// L's column j at rows [from, to) (each row's entries before column j, and row j's,
// known): every entry by the same sums in the same order, whichever rows are taken.
void column_rows(const std::vector<cd>& a,
                 std::vector<cd>& l,
                 size_t n,
                 size_t j,
                 size_t from,
                 size_t to)
{
    const cd* row_j = &l[j * n];
    const double l_jj = l[j * n + j].real();
    // t1 -= l_ik conj(l_jk), four rows at a time (four independent sums, each in
    // liquid's order: the sums' latency, not the arithmetic, bounded one row).
    size_t i = from;
    for (; i + 4 <= to; i += 4) {
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
    for (; i < to; ++i) {
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

} // namespace

cholesky_solver::cholesky_solver(std::vector<cd> a, size_t n, bool two_threads)
    : d_n(n), d_lower(n * n), d_forward(n)
{
    // liquid-dsp's matrixc_chol (1.5) operation for operation, so the same L to the bit
    // (test_cholesky_solver holds the two against each other), its complex products
    // written out without the NaN checks that made it several times slower: the 48 kHz
    // poor channel's MMSE-DFE (a few hundred unknowns) spent two thirds of its time here.
    // Its refusals too: a diagonal liquid refuses leaves the rest of L zero.
    std::vector<cd>& l = d_lower;
    if (!two_threads || n < least_shared_order) {
        for (size_t j = 0; j < n; ++j) {
            if (!diagonal_of(a, l, n, j))
                return;
            column_rows(a, l, n, j, j + 1, n);
        }
        return;
    }
    // By blocks of columns: the diagonal block first, then each row under it (which
    // needs its own earlier entries and the block's rows alone) across the block, the
    // rows in two halves, one on another thread. Every entry is the same sum as above.
    for (size_t first = 0; first < n; first += shared_block_columns) {
        const size_t end = std::min(n, first + shared_block_columns);
        size_t settled = end; // the block's columns with a diagonal
        for (size_t j = first; j < end; ++j) {
            if (!diagonal_of(a, l, n, j)) {
                settled = j;
                break;
            }
            column_rows(a, l, n, j, j + 1, end);
        }
        const auto rows_under = [&](size_t from, size_t to) {
            for (size_t j = first; j < settled; ++j)
                column_rows(a, l, n, j, from, to);
        };
        const size_t middle = end + (n - end) / 2;
        if (n - end >= 2 * shared_block_columns) {
            run_beside([&] { rows_under(middle, n); }, [&] { rows_under(end, middle); });
        } else {
            rows_under(end, n);
        }
        if (settled < end)
            return;
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
