/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Error model of one directed HF path (transmitter -> receiver) in virtual time, for the
 * discrete-event simulator. It works on the decoded bytes the modem would hand to the
 * data link: it decides which bits arrive wrong and whether a burst arrives at all.
 *
 * Four independent processes, each disabled by its zero default:
 *   - independent bit errors at `ber`;
 *   - error bursts starting as a Poisson process over air time;
 *   - periodic deep fades corrupting the bits on air inside them;
 *   - periodic outages swallowing every burst that touches them.
 * A bit corrupted by several processes is flipped once (the processes choose which bits
 * are bad; a bad bit is inverted).
 *
 * Cost: the gaps between errors are drawn geometrically, so corrupting a burst costs
 * O(errors + fade windows + error bursts), not O(bits). The random numbers come from a
 * std::mt19937_64 seeded with `seed` and converted by this file's own code (no
 * std::*_distribution), so a seed gives the same errors with every standard library. */
#ifndef HFSTACK_KERNELS_SIM_CHANNEL_MODEL_H
#define HFSTACK_KERNELS_SIM_CHANNEL_MODEL_H

#include "fading_errors.h"
#include "phy/snr_report_map.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace sim {

struct channel_config {
    // Independent bit errors: every bit is bad with this probability (0..1).
    double ber = 0;

    // Error bursts: they start as a Poisson process of burst_rate_per_s (per second of
    // air time: from the start of the transmission, preamble included, to its last data
    // bit). A burst starting at time t lasts burst_length_bits / bit_rate seconds and
    // makes each bit on air in [t, t + that) bad with probability burst_ber.
    double burst_rate_per_s = 0;
    unsigned burst_length_bits = 64;
    double burst_ber = 0.5;

    // Fades: windows [fade_offset_s + n * fade_period_s, ... + fade_duration_s) for
    // n = 0, 1, 2, ...; a bit whose on-air instant lies inside one is bad with
    // probability fade_ber. Period or duration 0 disables fades.
    double fade_period_s = 0;
    double fade_duration_s = 0;
    double fade_offset_s = 0;
    double fade_ber = 0.5;

    // Outages: windows [outage_offset_s + n * outage_period_s, ... + outage_duration_s)
    // for n = 0, 1, 2, ...; a burst overlapping one in any part is lost entirely (not
    // delivered, no carrier seen). Merely touching a window's edge is no overlap.
    // Period or duration 0 disables outages.
    double outage_period_s = 0;
    double outage_duration_s = 0;
    double outage_offset_s = 0;

    // Delay of the whole path (seconds, >= 0). The model itself does not use it: the
    // simulator shifts a burst by it before asking about outages and errors.
    double propagation_s = 0.0;
    // SNR (dB in 3 kHz) the receiving modem reports with each burst of this path
    // (burst_info::snr_db); NaN: the modem reports none. The error models above do not
    // depend on it; fading does.
    double snr_db = std::numeric_limits<double>::quiet_NaN();

    // Fading (fading_errors.h): a Watterson-like SNR process of this profile (one of
    // fading_profile_names(); "awgn" = constant) around the mean snr_db, which must then
    // be finite, turned into bit errors per interleaver block by the measured BER curve
    // of the burst's mode, and into missed preambles (receive()). Empty: off.
    std::string fading_profile;

    // Steps of the mean SNR: from each step's time on (s, strictly ascending), the
    // path's mean SNR is the step's instead of snr_db (which holds before the first).
    // The fading process follows at once, also inside a burst; a burst's report is of
    // its mean over the burst. Needs a finite snr_db; empty: none.
    struct snr_step {
        double t_s;
        double snr_db;
    };
    std::vector<snr_step> snr_steps;

    // With a fading profile, what the modem reports (reported_snr_db()) is modelled on
    // our receivers: the mode's measured mean report at the path's SNR
    // (phy/snr_report_map.h, from the profile's own points where measured) plus a normal
    // draw of the measured spread for the burst's length, from a random stream of its own
    // (the errors' draws stay as they were). False, or without a fading profile: the mean
    // SNR itself.
    bool model_snr_report = true;

    uint64_t seed = 1;
};

// Throws std::invalid_argument naming the field ("channel_config.ber ...") when a
// probability lies outside 0..1, a rate, period, duration or delay is negative or not
// finite, or a duration exceeds its (non-zero) period.
void validate(const channel_config& c);

struct channel_counters {
    uint64_t bursts = 0;           // corrupt() calls
    uint64_t bits = 0;             // bits passed through corrupt()
    uint64_t bit_errors = 0;       // bits flipped
    uint64_t lost_bursts = 0;      // bursts drop_in_outage() swallowed
    uint64_t missed_preambles = 0; // bursts receive() found missed at acquisition
};

// What receive() made of one burst.
struct reception_errors {
    bool preamble_missed = false; // the receiver never saw the burst: do not deliver it
    size_t bits_flipped = 0;
};

class channel_model
{
public:
    // Throws std::invalid_argument (see validate()).
    explicit channel_model(channel_config config = channel_config());

    // True if [t0, t1] overlaps an outage window (t1 < t0 is treated as [t1, t0]; a
    // single instant t0 == t1 is in outage when it lies inside a window).
    bool in_outage(double t0, double t1) const;
    // in_outage(), and counts a lost burst when true.
    bool drop_in_outage(double t0, double t1);

    // Corrupts `burst` in place: the bytes were sent at bit_rate (> 0) starting at
    // start_time; bit k (bit 7 - k % 8 of byte k / 8, most significant first) is on air
    // at start_time + preamble_s + k / bit_rate. Returns the number of bits flipped.
    // Throws std::invalid_argument for a bit_rate that is not positive and finite.
    // With fading, block_s is the interleaver block of the burst's mode (0: not
    // interleaved), and the BER curve is the measured one of the mode
    // sim::mode_model_for(bit_rate, block_s) picks. Bursts must come in order of start
    // time (as on one path). Bit errors only: receive() also decides preamble loss.
    size_t corrupt(std::vector<uint8_t>& burst,
                   double start_time,
                   double preamble_s,
                   double bit_rate,
                   double block_s = 0);
    size_t corrupt(uint8_t* data,
                   size_t size,
                   double start_time,
                   double preamble_s,
                   double bit_rate,
                   double block_s = 0);
    // What a receiver makes of the burst: with fading, its preamble
    // [start_time, start_time + preamble_s) is missed with the mode's measured
    // probability for its mean SNR (sim::preamble_miss_probability; counted in
    // missed_preambles; the bytes are left alone); otherwise corrupt(). Without fading,
    // corrupt() alone. The simulator and the emulated modem call this.
    reception_errors receive(uint8_t* data,
                             size_t size,
                             double start_time,
                             double preamble_s,
                             double bit_rate,
                             double block_s = 0);

    // The path's mean SNR at t (snr_db, or the step in force; NaN without one).
    double mean_snr_db(double t) const;
    // The SNR a receiver of `mode` ("2400S", as the modem names it) reports for a burst
    // starting at t and lasting burst_s (see model_snr_report): as our receivers, the
    // mean over the burst in dB (phy/burst_snr.h), so a burst across SNR steps reads
    // the time-weighted mean of each level's report; the spread as
    // phy::snr_report_map::report_sd_db(burst_s). NaN without a finite snr_db.
    double reported_snr_db(const std::string& mode, double t, double burst_s);
    // That report and the recent one (the same over the burst's last
    // phy::burst_snr::recent_window_s; the whole burst's for a shorter burst), drawn
    // with one deviate: the recent part is part of the burst.
    struct snr_reports {
        double whole_db = std::numeric_limits<double>::quiet_NaN();
        double recent_db = std::numeric_limits<double>::quiet_NaN();
    };
    snr_reports reported_snrs(const std::string& mode, double t, double burst_s);

    // True when the model can never change or lose anything.
    bool clear() const { return d_clear; }
    const channel_config& config() const { return d_cfg; }
    const channel_counters& counters() const { return d_counters; }

private:
    double uniform_open(); // (0, 1]
    // Adds positions in [first, last) that are bad with probability p.
    void draw_errors(uint64_t first, uint64_t last, double p);

    channel_config d_cfg;
    bool d_clear = true;
    std::mt19937_64 d_rng;
    channel_counters d_counters;
    std::vector<uint64_t> d_errors; // scratch: bad bit positions of the current burst
    // The fading process of the burst's mode that can still tell about data_start: made
    // at the first burst, again when the mode (curve, block) changes, and again for a
    // burst whose data starts before the samples the process has dropped (one overlapping
    // the path's previous burst from before that one's data: no single transmitter sends
    // that, and the emulator must not fail on it).
    fading_error_process& fading_for(double bit_rate, double block_s, double data_start);
    std::unique_ptr<fading_error_process> d_fading;
    const mode_model* d_fading_mode = nullptr;
    double d_fading_block_s = -1;
    std::vector<error_segment> d_segments;                 // scratch
    std::vector<std::pair<double, double>> d_snr_steps_db; // snr_steps as (t_s, snr_db)
    std::mt19937_64 d_report_rng;
    std::map<std::string, std::optional<phy::snr_report_map>> d_report_maps; // by mode
};

} // namespace sim
} // namespace hfstack
} // namespace gr

#endif
