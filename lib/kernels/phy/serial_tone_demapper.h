/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Soft demapping of scrambled serial-tone data symbols, shared by STANAG 4539 App C
 * (m110c_demapper) and STANAG 5069 App D (m110d_demapper).
 *
 * LLRs are log P(0) / P(1) per coded bit, max-log over the constellation: PSK data
 * (BPSK, QPSK, 8PSK as 8PSK symbol numbers) are scrambled by adding the scrambler value
 * mod 8, so the points a symbol may take are its mode's set turned by that value; QAM
 * data are scrambled by XOR on the symbol number, so every point may be sent and only
 * the labels change. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_DEMAPPER_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_DEMAPPER_H

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class serial_tone_demapper
{
public:
    using cd = std::complex<double>;
    static constexpr unsigned max_bits_per_symbol = 8;

    // The symbol number of a label (its bits, first the MSB): the 8PSK number for PSK,
    // the label itself for QAM.
    using map_bits_function = uint8_t (*)(unsigned label, unsigned bits_per_symbol);

    // bits_per_symbol 1..3: PSK, `points` the 8PSK circle; 4..8: QAM, `points` the
    // table by symbol number. scrambler: the value of each data symbol of a block (its
    // position taken modulo the length).
    serial_tone_demapper(unsigned bits_per_symbol,
                         const std::vector<std::complex<float>>& points,
                         map_bits_function map_bits,
                         std::vector<uint8_t> scrambler);

    // Data symbol i of a block, equalised to the probes' scale (PSK on the unit circle,
    // QAM points as printed, outer ones at amplitude 1), with error variance sigma2 on
    // that scale: writes its bits_per_symbol LLRs (first bit first) and returns the
    // nearest point it may have been sent as (the decision).
    cd demap(cd u, unsigned i, double sigma2, float* llr) const;
    // demap()'s decision alone (without its LLRs' cost: a 256QAM symbol's LLRs take
    // eight minima over the points beside the nearest's one).
    cd decide(cd u, unsigned i) const;
    // The point data symbol i is sent as when it carries `label`.
    cd point_of(unsigned label, unsigned i) const;
    // demap()'s LLRs, the point returned the one `bits` (bits_per_symbol() channel bits,
    // 0 or 1, the first the MSB: the decoder's, coded again) make.
    cd demap_to(cd u, unsigned i, double sigma2, const uint8_t* bits, float* llr) const;
    // Data symbol i as it would be received unscrambled: PSK rotated back onto the
    // mode's set; QAM unchanged (its scrambler maps the constellation onto itself).
    cd unscrambled(cd z, unsigned i) const;
    unsigned bits_per_symbol() const { return d_bits; }

private:
    bool psk() const { return d_bits <= 3; }
    unsigned scrambler(unsigned i) const { return d_scrambler[i % d_scrambler.size()]; }

    unsigned d_bits;
    std::vector<cd> d_points;          // candidate points (PSK: the 8PSK circle)
    std::vector<unsigned> d_symbol_of; // PSK: the 8PSK number of each label
    std::vector<uint8_t> d_scrambler;
    // QAM of 32 points or more: per point m and label bit b, the points whose bit b
    // differs from m's, nearest m first, with their distance from m. The max-log LLR's
    // minimum over the other class then looks only at points that may be nearer than
    // the best so far (|u - q| >= |p - q| - |u - p|, p the nearest point): the same
    // minima as over every point, at a few points a bit instead of half of them.
    struct neighbour {
        float distance;
        uint16_t point;
    };
    // QAM: the nearest point (the first of the nearest, by number) looked for only among
    // the points that can be nearest somewhere in the square of a grid u falls in (a
    // point farther from the whole square than another is from all of it cannot be); u
    // off the grid (or not finite): among all. The same point and distance as the
    // whole search, at a few points a symbol instead of M.
    size_t nearest_point(cd u, double& distance) const;
    // u's grid square, or off_grid.
    static constexpr size_t off_grid = ~size_t(0);
    size_t grid_cell(cd u) const;
    struct point_grid {
        std::vector<cd> points;
        unsigned bits = 0;
        bool class_lists = false;
        unsigned cells = 0; // per side
        double x = 0, y = 0, per_unit = 0;
        std::vector<uint32_t>
            cell_first; // per cell, into cell_points; one more at the end
        std::vector<uint16_t> cell_points;
        // class_lists (QAM of 32 points or more): per square, label bit b and value v
        // (of the point's number), the points of that class that can be its nearest
        // somewhere in the square ([(cell * bits + b) * 2 + v] to the next entry): the
        // other class's minimum for the LLRs, the same value as the neighbour lists give
        // (which serve off the grid).
        std::vector<uint32_t> class_first;
        std::vector<uint16_t> class_points;
        // class_lists: the neighbour lists, [(m * bits + b) * (M / 2) + rank].
        std::vector<neighbour> neighbours;
        // Built once per constellation and shared.
        static std::shared_ptr<const point_grid>
        of(const std::vector<cd>& points, unsigned bits, bool class_lists);
    };
    std::shared_ptr<const point_grid> d_grid; // QAM
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
