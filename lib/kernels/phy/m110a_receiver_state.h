/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The 110A receiver's state, shared by its two parts: the preamble search and the codes
 * it reads (m110a_receiver.cc), and the data with their decoder-aided passes
 * (m110a_receiver_data.cc). Internal: only those files include it. */
#ifndef HFSTACK_KERNELS_PHY_M110A_RECEIVER_STATE_H
#define HFSTACK_KERNELS_PHY_M110A_RECEIVER_STATE_H

#include "m110a_receiver.h"

#include "burst_snr.h"
#include "channel_tracking_equaliser.h"
#include "differential_products.h"
#include "m110a_transmitter.h"
#include "serial_tone_channel.h"
#include "serial_tone_presence.h"
#include "serial_tone_samples.h"
#include "serial_tone_stages.h"

#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <array>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// What the two parts share besides the state.
namespace m110a_rx {

using cf = std::complex<float>;
using cd = std::complex<double>;
using phase = serial_tone_stage;

constexpr double two_pi = 6.283185307179586476925286766559;
constexpr double sample_rate = 9600.0;
constexpr unsigned sps = m110a_receiver::samples_per_symbol;
constexpr unsigned common_symbols = 288; // channel symbols 0..8 of every segment
constexpr size_t ring = 8192;            // correlation history (> 2 segments)

inline cf point(unsigned symbol)
{
    return std::polar(1.0f, float(two_pi / 8 * (symbol & 7)));
}

} // namespace m110a_rx

struct m110a_receiver::state {
    using cf = m110a_rx::cf;
    using cd = m110a_rx::cd;
    using phase = m110a_rx::phase;
    static constexpr unsigned sps = m110a_rx::sps;

    m110a_receiver_config cfg;
    std::vector<std::complex<float>>* symbol_tap = nullptr; // tap_symbols()
    // The last symbols tapped whose blocks are not yet judged part of the burst:
    // kept back from the caller, taken back when the burst is lost.
    size_t held_symbols = 0;

    serial_tone_samples input{ m110a_rx::sample_rate };
    cf at(uint64_t i) const { return input.at(i); }

    // Search.
    std::array<cf, m110a_rx::common_symbols> known{};
    std::vector<cf> rotations;       // known[k] conj(known[k - 1]), k = 1..287
    volk::vector<cf> conj_rotations; // their conjugates, for VOLK's dot product
    differential_products products{ m110a_rx::common_symbols - 1, m110a_rx::ring };
    std::vector<cd> corr = std::vector<cd>(m110a_rx::ring);
    std::vector<double> energy = std::vector<double>(m110a_rx::ring);
    uint64_t candidate = sps; // next segment start to test
    correlation_peak peak;
    uint64_t quiet_until = 0; // no peak opens before this sample (a rejected one's lobes)

    // Burst.
    phase stage = phase::search;
    uint64_t start = 0; // sample of symbol 0 of the detected segment
    const m110a_waveform* mode = nullptr;
    unsigned first_count = 0; // count of the detected segment
    uint64_t data_symbol = 0; // symbol index (from start) of the first data symbol
    uint64_t symbol = 0;      // next symbol to equalise
    std::array<uint8_t, m110a_segment_symbols> segment{};
    unsigned segment_count = ~0u;

    // Equaliser (channel_tracking_equaliser.h) and the symbol timing: symbol k of the
    // burst is taken around sample start + k * sps + timing_shift.
    std::unique_ptr<channel_tracking_equaliser> equaliser;
    int64_t timing_shift = 0;
    uint64_t timing_checked = ~uint64_t(0); // symbol whose timing was last looked at
    std::vector<cd> window;
    // Fills `window` for symbol k; false while its samples are not all in.
    bool window_for(uint64_t k);
    serial_tone_presence presence;
    burst_snr report; // the burst's SNR report

    // Decoding.
    std::vector<uint32_t> order;
    std::vector<float> block_llr;
    std::vector<float> pair_llr;
    // Windows of the Walsh symbol in progress (32 chips, window_samples() each).
    std::vector<cd> walsh_windows;
    double walsh_decided_metric = 0; // this block's decided candidates' metrics, summed
    double walsh_other_metric = 0;   // and the other candidates' mean metrics
    // Error power of the matched chips against the decided ones (an average over the
    // last symbols; NaN before the first): noise, tracker lag and interference, which
    // the coherent Walsh metric is scaled by.
    double walsh_chip_error = std::nan("");
    k7_viterbi viterbi;
    // Decoder-aided passes over each interleaver block (cfg.decoder_passes):
    // the equaliser as the block began, and the block's symbols as received.
    struct stored_symbol {
        bool probe;
        cf sent;      // probes: the symbol sent
        unsigned scr; // data: the scrambler value
        int slip;     // timing slip applied before this symbol
    };
    std::unique_ptr<channel_tracking_equaliser> block_start_equaliser;
    std::vector<stored_symbol> block_symbols_seen;
    std::vector<cd> block_windows;
    int pending_slip = 0;
    std::vector<float> recent_pairs; // the last pair LLRs given to the Viterbi decoder
    // The block as the previous pass's decisions decoded it (empty before the second).
    std::vector<uint8_t> previous_pass_decoded;
    uint64_t later_passes = 0;
    void store_symbol(bool probe, cf sent, unsigned scr);
    // Equalises the block again on its decoded decisions; false (nothing done) when they
    // are those the previous pass ran on, which would only repeat it.
    bool second_pass();
    // soft_decoder_feedback: a symbol's mean point given its bits' a posteriori LLRs
    // (MSB first), and the probability that all its bits are as their signs say.
    struct soft_symbol {
        cd mean;
        double right = 1;
    };
    soft_symbol soft_decision(const float* llr, unsigned scr) const;
    // Nearest point of the mode's set to u (descrambled), and max-log LLRs (MSB first).
    unsigned nearest_point(cd u) const;
    void demap(cd u, double sigma2, float* llr) const;
    unsigned stride() const;
    std::vector<uint8_t> bits;
    static constexpr size_t no_eom = std::numeric_limits<size_t>::max();
    size_t eom_at = no_eom;
    size_t eom_searched = 0;      // bits before this were looked at for the EOM
    size_t near_eom_searched = 0; // and for a near-EOM followed by the flush
    void find_eom();
    // deliver_per_block: bytes handed on so far, and whether a block decoded since.
    user_byte_stream streamed;
    bool block_decoded = false;
    void hand_on_decoded(std::vector<m110a_burst>& done);
    // The burst's mode, start, offset and SNR as of now, without bytes.
    m110a_burst burst_so_far() const;

    explicit state(const m110a_receiver_config& c);

    // Scans new samples for a preamble; true when one was found (found_at, found_hz).
    bool search();
    uint64_t found_at = 0;
    double found_hz = 0;
    // In the data stage: a new preamble cuts the burst in progress.
    bool watch(std::vector<m110a_burst>& done);
    bool preamble();
    struct preamble_reading {
        const m110a_waveform* mode = nullptr;
        unsigned count = 0;
        double offset_hz = 0;
        cd h;             // channel gain over the known symbols
        double power = 0; // mean sample power over the segment
        // Walsh metric of each value (0..7) of D1, D2, C1, C2, C3 as a z-score.
        std::array<std::array<double, 8>, 5> code_metric{};
        // Share of the segment's power that the common symbols explain on all paths:
        // most of it for a preamble segment, under 0.1 for data.
        double known_share = 0;
    };
    // The mode and count that best explain the readings of consecutive segments
    // (reading s, if any, is of the segment s after the first; a count c puts preamble
    // codes of count c - s there, while c - s >= 0).
    static void decide_codes(const std::vector<preamble_reading>& readings,
                             preamble_reading& r);
    // Reads the segment starting at sample `at` (samples up to at + 1 segment + 64
    // must be in); false when its codes name no mode or no count.
    bool read_preamble(uint64_t at, double coarse_hz, preamble_reading& r) const;
    void begin_burst(const preamble_reading& r);
    bool watch_pending = false;
    bool data(std::vector<m110a_burst>& done);
    void end_burst(bool eom, std::vector<m110a_burst>& done);
    void restart_search(uint64_t from);
    void trim();
    // Commits symbol k (known or decided) to the equaliser; known ones also measure
    // the error against the estimate `z`.
    void commit(cd z, cf sent, bool known_symbol);
    // Moves the sample grid T/2 when the equaliser sees the channel drift a symbol.
    void follow_timing();
    std::vector<cd> pending_estimates; // Walsh chips equalised, not yet decided
    void push_llrs(const float* llr, size_t n);
    // Deinterleaves the block's LLRs (the first block_bits() of block_llr) and appends
    // its (T1, T2) pairs, repetitions combined.
    void append_block_pairs(std::vector<float>& pairs) const;
    void decode_block();
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
