/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A serial-tone receiver's input: complex baseband samples by absolute index, and the
 * same samples with the carrier offset removed. Each sample is derotated once and kept
 * (equaliser windows overlap: every window spanning a sample reads it); the offset can
 * change during a burst (frequency tracking) without a phase step. Shared by the
 * serial-tone receivers; no clocks or I/O. */
#ifndef HFSTACK_KERNELS_PHY_SERIAL_TONE_SAMPLES_H
#define HFSTACK_KERNELS_PHY_SERIAL_TONE_SAMPLES_H

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class serial_tone_samples
{
public:
    using cf = std::complex<float>;

    explicit serial_tone_samples(double sample_rate) : d_sample_rate(sample_rate) {}

    void append(const cf* x, size_t n) { d_buf.insert(d_buf.end(), x, x + n); }
    // Samples base() .. total() - 1 are held; at(i) is sample i.
    uint64_t base() const { return d_base; }
    uint64_t total() const { return std::min(d_base + d_buf.size(), d_limit); }
    // total() reads as at most `end` (a receiver going over its input again as it
    // arrived, chunk by chunk), until unlimit().
    void limit_to(uint64_t end) { d_limit = end; }
    void unlimit() { d_limit = UINT64_MAX; }
    cf at(uint64_t i) const { return d_buf[size_t(i - d_base)]; }
    // Sample i's place: samples i .. total() - 1 lie side by side from it.
    const cf* held_from(uint64_t i) const { return &d_buf[size_t(i - d_base)]; }
    // Lets samples before `keep` go (in chunks of at least 65536).
    void release_before(uint64_t keep);

    // Derotation by `hz` from sample `from` (phase 0 there); earlier derotated samples
    // are forgotten.
    void start_derotation(uint64_t from, double hz);
    // The offset becomes `hz` from sample `from` on, continuing the phase; `from` must
    // not precede derotated_end() (samples derotated already keep their rotation).
    void change_offset(uint64_t from, double hz);
    double offset_hz() const { return d_offset_hz; }
    // First sample not derotated yet (from the start of the derotation).
    uint64_t derotated_end() const { return d_cache_from + d_cache.size(); }
    // Inline: every equaliser window reads through it.
    cf derotated(uint64_t i) const
    {
        if (i < d_cache_from)
            return derotate(i);
        while (d_cache_from + d_cache.size() <= i)
            d_cache.push_back(derotate(d_cache_from + d_cache.size()));
        return d_cache[size_t(i - d_cache_from)];
    }

    // Samples from..to derotated, side by side: a pointer to sample `from`'s, or
    // nullptr where `from` is before the kept derotations (derotated() computes those
    // afresh). `to` must be held.
    const cf* derotated_run(uint64_t from, uint64_t to) const
    {
        if (from < d_cache_from || to < from)
            return nullptr;
        derotated(to);
        return &d_cache[size_t(from - d_cache_from)];
    }

    // Samples derotated (and kept) through sample `to` (held), the new ones computed
    // half on another thread where there are many: the values derotated() would give.
    void derotate_through(uint64_t to, bool two_threads);

    // The derotation as it stands (offset, phase and the samples derotated so far), to
    // be put back where a receiver goes over the same samples again from there.
    struct derotation {
        double offset_hz = 0, phase_cycles = 0;
        uint64_t phase_from = 0, cache_from = 0;
        std::vector<cf> cache;
    };
    derotation derotation_now() const
    {
        return { d_offset_hz, d_phase_cycles, d_phase_from, d_cache_from, d_cache };
    }
    void restore_derotation(const derotation& r)
    {
        d_offset_hz = r.offset_hz;
        d_phase_cycles = r.phase_cycles;
        d_phase_from = r.phase_from;
        d_cache = r.cache;
        d_cache_from = r.cache_from;
        if (d_cache_from < d_base) { // as release_before leaves it
            const size_t drop =
                size_t(std::min<uint64_t>(d_base - d_cache_from, d_cache.size()));
            d_cache.erase(d_cache.begin(), d_cache.begin() + long(drop));
            d_cache_from += drop;
        }
    }

private:
    cf derotate(uint64_t i) const;

    double d_sample_rate;
    std::vector<cf> d_buf;
    uint64_t d_base = 0;
    uint64_t d_limit = UINT64_MAX;
    double d_offset_hz = 0;
    // Derotation phase (cycles) at sample d_phase_from.
    double d_phase_cycles = 0;
    uint64_t d_phase_from = 0;
    mutable std::vector<cf> d_cache;
    mutable uint64_t d_cache_from = 0;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
