/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* ARQ segment size chosen from the losses a link shows. Annex C leaves the segment size
 * to the sender (C_PDU segments of up to 1023 bytes); long segments waste less on headers
 * and fill a transmission within the 128-frame ARQ window, short ones lose less to each
 * bit error. With D_PDU header h bytes and bit error rate p, a segment of s bytes
 * survives with probability (1 - p)^(8 (s + h)). One ARQ cycle carries n = min(window,
 * capacity / (s + h)) D_PDUs and costs their air time plus the cycle's fixed time
 * (preamble, the peer's acknowledgement, turnarounds), so the delivered fraction of the
 * air is g(s) = n s (1 - p)^(8 (s + h)) / (cycle_s R / 8 + n (s + h)) at user bit rate R.
 * segment_size() returns the s in [min_size, max_size] with the largest g: 1023 on a
 * clean link, about 440 bytes at p = 1e-5 and 130 at 1e-4 when the window does not bind;
 * at 9600 bps, where 128 short frames make a short transmission, somewhat longer.
 *
 * The estimate of p comes from D_PDUs sent once and then acknowledged or reported
 * missing by the peer's selective acks: with a fraction f of such frames lost and mean
 * frame length L bits, p = -ln(1 - f) / L. Older outcomes fade with a time constant of
 * memory_frames frames, so the size follows a channel that changes. Frames whose
 * answer never came (an outage, a lost acknowledgement) say nothing about p and are
 * not counted. Until min_frames outcomes are in, the estimate is prior_ber and the node
 * sends only a short first burst of new data (node_config::segment_probe_s), so that a
 * noisy link is measured before a whole transmission's worth of C_PDUs is cut into
 * segments; the node cuts that burst for a more cautious BER (segment_size_for) when
 * more data follow it. Sans-IO, no randomness. */
#ifndef HFSTACK_KERNELS_DL_SEGMENT_SIZE_POLICY_H
#define HFSTACK_KERNELS_DL_SEGMENT_SIZE_POLICY_H

#include <cstddef>

namespace gr {
namespace hfstack {
namespace dl {

struct segment_size_policy_config {
    size_t min_size = 32;   // bytes; below this the headers dominate whatever p is
    size_t max_size = 1023; // Annex C's largest segment
    double memory_frames = 200;
    // Frames (faded count) below which the estimate is not yet trusted, and the bit
    // error rate assumed until then.
    double min_frames = 8;
    double prior_ber = 1e-5;
};

// What one ARQ cycle of the link looks like.
struct arq_cycle {
    size_t header_bytes = 16;  // D_PDU header and CRCs
    size_t window = 128;       // D_PDUs in flight at most
    size_t capacity_bytes = 0; // most bytes one transmission carries (0: no limit)
    double fixed_s = 0;        // preamble, acknowledgement, turnarounds per cycle
    double bit_rate = 2400;    // user bits per second
};

class segment_size_policy
{
public:
    // Throws std::invalid_argument for min_size 0, min_size > max_size, max_size > 1023
    // or memory_frames < 1.
    explicit segment_size_policy(segment_size_policy_config config = {});

    // Outcome of D_PDUs sent once: `frames` of them, `bytes` in all (whole D_PDUs,
    // headers included), of which `lost_frames` were reported missing.
    void on_outcome(size_t frames, size_t bytes, size_t lost_frames);

    // Estimated bit error rate (prior_ber until confident(), then 0 before any loss).
    double bit_error_rate() const;
    // The segment size with the best delivered fraction g(s) at the estimate.
    size_t segment_size(const arq_cycle& cycle) const
    {
        return segment_size_for(cycle, bit_error_rate());
    }
    // The same at a given bit error rate (in [0, 0.5]).
    size_t segment_size_for(const arq_cycle& cycle, double ber) const;

    // Enough outcomes seen for the estimate to mean something.
    bool confident() const { return d_frames >= d_cfg.min_frames; }

    const segment_size_policy_config& config() const { return d_cfg; }

private:
    segment_size_policy_config d_cfg;
    double d_frames = 0, d_bits = 0, d_lost = 0; // faded sums
    // The last answer: the scan runs again only when the estimate or the cycle changes.
    mutable double d_cached_ber = -1;
    mutable arq_cycle d_cached_cycle;
    mutable size_t d_cached_size = 0;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
