/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_demapper.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {
namespace phy {

serial_tone_demapper::serial_tone_demapper(unsigned bits_per_symbol,
                                           const std::vector<std::complex<float>>& points,
                                           map_bits_function map_bits,
                                           std::vector<uint8_t> scrambler)
    : d_bits(bits_per_symbol), d_scrambler(std::move(scrambler))
{
    if (d_bits < 1 || d_bits > max_bits_per_symbol || d_scrambler.empty() ||
        points.size() != (psk() ? 8u : size_t(1) << d_bits))
        throw std::invalid_argument("serial_tone_demapper: inconsistent tables for " +
                                    std::to_string(d_bits) + " bits per symbol");
    if (psk())
        for (unsigned label = 0; label < (1u << d_bits); ++label)
            d_symbol_of.push_back(map_bits(label, d_bits));
    for (const auto& p : points)
        d_points.push_back(cd(p));
    if (!psk())
        d_grid = point_grid::of(d_points, d_bits, d_bits >= 5);
}

std::shared_ptr<const serial_tone_demapper::point_grid>
serial_tone_demapper::point_grid::of(const std::vector<cd>& points,
                                     unsigned bits,
                                     bool class_lists)
{
    // Built once per constellation (a 256QAM grid with its class lists takes about
    // 0.1 s, and a receiver makes a demapper per burst).
    static std::mutex lock;
    static std::vector<std::shared_ptr<const point_grid>> built;
    const std::lock_guard<std::mutex> hold(lock);
    for (const auto& g : built)
        if (g->points == points && g->bits == bits && g->class_lists == class_lists)
            return g;
    auto g = std::make_shared<point_grid>();
    g->points = points;
    g->bits = bits;
    g->class_lists = class_lists;
    if (class_lists) {
        const size_t m_count = points.size(), half = m_count / 2;
        g->neighbours.resize(m_count * bits * half);
        for (size_t m = 0; m < m_count; ++m)
            for (unsigned b = 0; b < bits; ++b) {
                neighbour* list = &g->neighbours[(m * bits + b) * half];
                size_t count = 0;
                const unsigned mask = 1u << (bits - 1 - b);
                for (size_t q = 0; q < m_count; ++q)
                    if ((q & mask) != (m & mask))
                        list[count++] = { float(std::abs(points[q] - points[m])),
                                          uint16_t(q) };
                std::sort(list, list + half, [](const neighbour& x, const neighbour& y) {
                    return x.distance < y.distance ||
                           (x.distance == y.distance && x.point < y.point);
                });
            }
    }
    // The points' square, a quarter of its side more each way, in cells about two
    // thirds of the 256QAM grid's spacing.
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
    for (const cd& p : points) {
        x0 = std::min(x0, p.real());
        x1 = std::max(x1, p.real());
        y0 = std::min(y0, p.imag());
        y1 = std::max(y1, p.imag());
    }
    const double side = 1.5 * std::max(x1 - x0, y1 - y0);
    g->cells = 48;
    g->x = 0.5 * (x0 + x1) - 0.5 * side;
    g->y = 0.5 * (y0 + y1) - 0.5 * side;
    g->per_unit = g->cells / side;
    const double cell = side / g->cells;
    // Each square widened a little: u's cell is computed in rounded arithmetic.
    const double slack = 1e-6 * cell;
    const size_t count = points.size();
    std::vector<double> farthest(count), closest(count);
    g->cell_first.assign(size_t(g->cells) * g->cells + 1, 0);
    if (class_lists)
        g->class_first.assign(1, 0);
    const auto add = [](double bound) { return bound * (1 + 1e-9) + 1e-12; };
    for (unsigned cy = 0; cy < g->cells; ++cy)
        for (unsigned cx = 0; cx < g->cells; ++cx) {
            const double left = g->x + cx * cell - slack,
                         right = g->x + (cx + 1) * cell + slack,
                         bottom = g->y + cy * cell - slack,
                         top = g->y + (cy + 1) * cell + slack;
            for (size_t m = 0; m < count; ++m) {
                const cd& p = points[m];
                const double fx =
                    std::max(std::abs(p.real() - left), std::abs(p.real() - right));
                const double fy =
                    std::max(std::abs(p.imag() - bottom), std::abs(p.imag() - top));
                farthest[m] = fx * fx + fy * fy;
                const double cx_ = std::max({ left - p.real(), 0.0, p.real() - right });
                const double cy_ = std::max({ bottom - p.imag(), 0.0, p.imag() - top });
                closest[m] = cx_ * cx_ + cy_ * cy_;
            }
            // A point farther from the whole square than another is from all of it is
            // nobody's nearest there.
            const double bound = add(*std::min_element(farthest.begin(), farthest.end()));
            for (size_t m = 0; m < count; ++m)
                if (closest[m] <= bound)
                    g->cell_points.push_back(uint16_t(m));
            g->cell_first[size_t(cy) * g->cells + cx + 1] =
                uint32_t(g->cell_points.size());
            if (!class_lists)
                continue;
            // Per label bit and its value (by point number), the points of that class
            // that can be its nearest in the square.
            for (unsigned b = 0; b < bits; ++b)
                for (unsigned v = 0; v < 2; ++v) {
                    const unsigned shift = bits - 1 - b;
                    double class_bound = std::numeric_limits<double>::infinity();
                    for (size_t m = 0; m < count; ++m)
                        if (((m >> shift) & 1) == v)
                            class_bound = std::min(class_bound, farthest[m]);
                    class_bound = add(class_bound);
                    for (size_t m = 0; m < count; ++m)
                        if (((m >> shift) & 1) == v && closest[m] <= class_bound)
                            g->class_points.push_back(uint16_t(m));
                    g->class_first.push_back(uint32_t(g->class_points.size()));
                }
        }
    built.push_back(g);
    return g;
}

size_t serial_tone_demapper::grid_cell(cd u) const
{
    const point_grid& g = *d_grid;
    const double fx = (u.real() - g.x) * g.per_unit, fy = (u.imag() - g.y) * g.per_unit;
    const double cells = g.cells;
    if (fx >= 0 && fx < cells && fy >= 0 && fy < cells)
        return size_t(fy) * g.cells + size_t(fx);
    return off_grid;
}

size_t serial_tone_demapper::nearest_point(cd u, double& distance) const
{
    distance = std::numeric_limits<double>::infinity();
    size_t nearest_m = 0;
    const size_t c = grid_cell(u);
    if (c != off_grid) {
        const point_grid& g = *d_grid;
        for (uint32_t r = g.cell_first[c]; r < g.cell_first[c + 1]; ++r) {
            const size_t m = g.cell_points[r];
            const double d = std::norm(u - d_points[m]);
            if (d < distance) {
                distance = d;
                nearest_m = m;
            }
        }
        return nearest_m;
    }
    for (size_t m = 0; m < d_points.size(); ++m) {
        const double d = std::norm(u - d_points[m]);
        if (d < distance) {
            distance = d;
            nearest_m = m;
        }
    }
    return nearest_m;
}

serial_tone_demapper::cd
serial_tone_demapper::demap(cd u, unsigned i, double sigma2, float* llr) const
{
    constexpr double inf = std::numeric_limits<double>::infinity();
    double best[max_bits_per_symbol][2];
    for (unsigned b = 0; b < d_bits; ++b)
        best[b][0] = best[b][1] = inf;
    const unsigned scr = scrambler(i);
    double nearest = inf;
    cd decision;
    auto consider = [&](const cd& point, unsigned label) {
        const double d = std::norm(u - point);
        if (d < nearest) {
            nearest = d;
            decision = point;
        }
        for (unsigned b = 0; b < d_bits; ++b) {
            double& slot = best[b][(label >> (d_bits - 1 - b)) & 1];
            slot = std::min(slot, d);
        }
    };
    if (psk()) {
        for (unsigned label = 0; label < d_symbol_of.size(); ++label)
            consider(d_points[(d_symbol_of[label] + scr) % 8], label);
    } else if (d_grid && d_grid->class_lists) {
        // The nearest point is its class's nearest for every bit; the other class's
        // from its neighbour lists, as far as they may hold a nearer point.
        const size_t nearest_m = nearest_point(u, nearest);
        decision = d_points[nearest_m];
        const double radius = std::sqrt(nearest);
        const size_t half = d_points.size() / 2;
        const unsigned label = unsigned(nearest_m) ^ scr;
        const size_t cell = grid_cell(u);
        for (unsigned b = 0; b < d_bits; ++b) {
            const unsigned own = (label >> (d_bits - 1 - b)) & 1;
            best[b][own] = nearest;
            double other = inf;
            if (cell != off_grid) {
                // The other class's nearest among those that can be in this square.
                const unsigned theirs =
                    ((unsigned(nearest_m) >> (d_bits - 1 - b)) & 1) ^ 1;
                const size_t list_at = (cell * d_bits + b) * 2 + theirs;
                const point_grid& g = *d_grid;
                for (uint32_t r = g.class_first[list_at]; r < g.class_first[list_at + 1];
                     ++r)
                    other = std::min(other, std::norm(u - d_points[g.class_points[r]]));
                best[b][own ^ 1] = other;
                continue;
            }
            const neighbour* list = &d_grid->neighbours[(nearest_m * d_bits + b) * half];
            for (size_t r = 0; r < half; ++r) {
                // The stored distance is a float: shortened by more than its rounding.
                const double reach = double(list[r].distance) * (1 - 1e-6) - radius;
                if (reach > 0 && reach * reach > other)
                    break;
                other = std::min(other, std::norm(u - d_points[list[r].point]));
            }
            best[b][own ^ 1] = other;
        }
    } else {
        for (unsigned m = 0; m < d_points.size(); ++m)
            consider(d_points[m], m ^ scr);
    }
    const double scale = 1.0 / std::max(sigma2, 1e-9);
    for (unsigned b = 0; b < d_bits; ++b)
        llr[b] = float((best[b][1] - best[b][0]) * scale);
    return decision;
}

serial_tone_demapper::cd serial_tone_demapper::decide(cd u, unsigned i) const
{
    const unsigned scr = scrambler(i);
    double nearest = std::numeric_limits<double>::infinity();
    cd decision;
    const auto consider = [&](const cd& point) {
        const double d = std::norm(u - point);
        if (d < nearest) {
            nearest = d;
            decision = point;
        }
    };
    if (psk()) {
        for (unsigned label = 0; label < d_symbol_of.size(); ++label)
            consider(d_points[(d_symbol_of[label] + scr) % 8]);
    } else {
        double distance;
        decision = d_points[nearest_point(u, distance)];
    }
    return decision;
}

serial_tone_demapper::cd serial_tone_demapper::point_of(unsigned label, unsigned i) const
{
    const unsigned scr = scrambler(i);
    return psk() ? d_points[(d_symbol_of[label] + scr) % 8] : d_points[label ^ scr];
}

serial_tone_demapper::cd serial_tone_demapper::demap_to(
    cd u, unsigned i, double sigma2, const uint8_t* bits, float* llr) const
{
    demap(u, i, sigma2, llr);
    unsigned label = 0;
    for (unsigned b = 0; b < d_bits; ++b)
        label = (label << 1) | bits[b];
    return point_of(label, i);
}

serial_tone_demapper::cd serial_tone_demapper::unscrambled(cd z, unsigned i) const
{
    if (!psk())
        return z;
    return z * std::conj(d_points[scrambler(i) % 8]);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
