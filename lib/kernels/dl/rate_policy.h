/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Which modem mode one STANAG 5066 connection should use (Annex C leaves the choice to
 * the node): rate_policy decides from link-quality reports, the SNR of received bursts
 * and the ARQ retransmission statistics. Sans-IO: time is the `now` argument, seconds.
 * The data rate change that puts its choice into effect is rate_change.h's. */
#ifndef HFSTACK_KERNELS_DL_RATE_POLICY_H
#define HFSTACK_KERNELS_DL_RATE_POLICY_H

#include "modem_mode.h"
#include "phy/modem_curves.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

struct rate_policy_entry {
    modem_mode mode;
    double min_snr_db = 0; // SNR (dB in 3 kHz) the mode needs
};

// Default table, most robust first, for STANAG 4539 / MIL-STD-188-110A serial tone and
// App C, from OUR MODEMS' MEASURED CURVES (phy/modem_curves.h): each mode's
// rate_snr_db, which bench_curve_fit derives from the mode's fitted model as the lowest
// SNR at which it meets a target frame-error rate on a reference channel (the data's
// rate_target says which; docs/simulator-design.md). rate_table_from() keeps a ladder:
// sorted by threshold, each entry less robust than the one before (a mode needing more
// SNR than a less robust one is left out). The Annex C initial mode 300S stays in it:
// a less robust mode needing less SNR is raised to 0.5 dB above 300S's threshold.
std::vector<rate_policy_entry> rate_table_from(const phy::modem_curve_data& data);
std::vector<rate_policy_entry> default_rate_table();

struct rate_policy_config {
    // Ordered from most robust to least; min_snr_db must strictly increase.
    std::vector<rate_policy_entry> table = default_rate_table();
    // Mode recommended before any report (must be in the table).
    modem_mode initial = initial_drc_mode;

    // Step up only when the slow SNR average has been at least next.min_snr_db +
    // hysteresis_db continuously for sustain_time seconds (a report's span counts: see
    // on_snr), and at least min_dwell
    // seconds have passed since the last change; then to the least robust entry the
    // slow average clears by hysteresis_db, at most step_up_entries entries up (0: no
    // limit). Our thresholds rest on measured curves and corrected reports, so a link
    // need not climb one entry per dwell (S5066-EP4: single steps are slow to reach
    // fast modes on a good channel).
    double hysteresis_db = 1.5;
    double sustain_time = 10.0;
    double min_dwell = 30.0;
    unsigned step_up_entries = 0;
    // The first SNR report after construction or set_current() picks the mode at once
    // (the least robust entry it clears by hysteresis_db, or the step down it needs):
    // a link need not spend its first dwell times at the mode it happened to start in.
    bool first_report_decides = true;
    // Step down (as many entries as needed, at once, no dwell) when the fast SNR average
    // falls below current.min_snr_db - step_down_margin_db (to the least robust entry
    // it clears so). Small, since a burst's report is its mean (phy/burst_snr.h): a
    // wider margin let a transmission straddling a drop in SNR keep the link in its mode
    // one transmission more (docs/simulator-design.md, "Automatic data rate").
    double step_down_margin_db = 0.5;
    // No step down on the SNR report of a burst that shows the recommended mode working:
    // sent in it, at least burst_works_frames data D_PDUs read, of which at most
    // burst_works_damaged (fraction) damaged. A long burst's report could read many dB
    // low while most of its frames arrived: our receivers reported a look at the burst's
    // last known symbols, and a burst cut where lock is lost ends in its fade. They now
    // report the mean over the burst (phy/burst_snr.h); the frames remain the surer
    // evidence of a mode that works (docs/node-design.md). 0 frames: off.
    unsigned burst_works_frames = 8;
    double burst_works_damaged = 0.3;
    // Averages: each report has weight 1 and weights decay as exp(-age / time_constant).
    double slow_time_constant = 20.0; // s, used for step-up decisions
    double fast_time_constant = 3.0;  // s, used for step-down decisions

    // Retransmission-rate input (fraction of ARQ segments that needed retransmission,
    // averaged with retx_time_constant). Only trusted once the averaged number of
    // segments reaches min_segments; without enough traffic it blocks nothing. The step
    // up gate counts only segments since the slow SNR average rose above the next
    // entry's threshold: damage from before the rise would hold the climb for minutes.
    bool use_retransmission_rate = true;
    double retx_time_constant = 60.0;
    double min_segments = 10.0;
    double retx_step_down = 0.30; // above: step down one entry at once
    double retx_step_up = 0.05;   // step up allowed only at or below this
    // The step down on retransmissions also waits until the retransmitted fraction
    // exceeds 1 - R'/R (R the mode's data rate, R' the next entry's): below that the
    // mode delivers more than the next would even without a loss (3200S with half its
    // frames sent again still beats 1200S by a third). The rate thresholds are capped
    // the same way (dl::default_rate_table()). A mode damaging many frames can still
    // deliver more than the next one down (docs/node-design.md).
    bool retx_step_down_goodput = true;

    // on_snr_report() maps a receiver's report to the true SNR it stands for through the
    // mode's measured report map (phy/snr_report_map.h) before using it: the thresholds
    // are true SNRs, and our receivers report 1-10 dB low on fading channels.
    bool correct_snr_reports = true;

    // Sender side, with autobaud modems (rate_change_config::autobaud): each of our
    // transmissions the peer leaves unanswered steps our transmit mode this many
    // entries more robust at once (a burst lost whole gives its receiver no SNR to
    // advise on). 0: off.
    unsigned unanswered_step_down = 2;

    // Step up (the slow average) on a burst's recent report (its last
    // phy::burst_snr::recent_window_s, burst_info::snr_db_recent) where the modem gives
    // one, not on its whole mean: a burst lasts up to 127 s and the mode changes only
    // between bursts, so a burst across a rise in SNR advised from the mean of both
    // levels and its sender spent one more whole burst below what the channel held.
    bool step_up_on_recent = true;
    // Step down (the fast average) on it too: a burst across a fall in SNR otherwise
    // advises from the mean of both levels, and its sender spends one more transmission
    // in a mode between them that the lower level does not carry
    // (docs/simulator-design.md, "Automatic data rate").
    bool step_down_on_recent = true;
};

// The ARQ data D_PDUs of one received burst whose headers were read, by the segment
// CRC (D_PDUs whose header failed are not counted).
struct burst_frames {
    unsigned good = 0;
    unsigned damaged = 0;
    // D_PDUs' worth of the burst's bytes that no D_PDU could be read from (the node
    // counts the deframer's junk at the mean size of the burst's data D_PDUs): after
    // lock is lost, the rest of a long burst arrives as such bytes, and it is as lost
    // as damaged frames are.
    unsigned unreadable = 0;
};

struct rate_policy_counters {
    uint64_t snr_reports = 0;
    uint64_t snr_reports_corrected = 0; // of those, mapped through a measured report map
    uint64_t arq_reports = 0;
    uint64_t step_ups = 0;
    uint64_t step_downs_snr = 0;
    uint64_t step_downs_held = 0; // SNR step downs a working burst held off
    uint64_t step_downs_retx = 0;
    uint64_t arq_reports_stale = 0; // of a mode less robust than the recommended one
};

class rate_policy
{
public:
    // Throws std::invalid_argument for an empty or badly ordered table, invalid modes,
    // an initial mode not in the table, or non-positive time constants.
    explicit rate_policy(const rate_policy_config& cfg = rate_policy_config());

    // One SNR measurement (dB in 3 kHz, true) of a burst received by `now`, averaged over
    // its last span_s seconds: a report over a burst at least sustain_time long is
    // sustained evidence by itself (step-up needs no second report then). recent_db:
    // the same over the burst's last recent_window_s (NaN: none; step_up_on_recent,
    // step_down_on_recent).
    void on_snr(double snr_db,
                double now,
                double span_s = 0,
                double recent_db = std::numeric_limits<double>::quiet_NaN());
    // The SNR the receiving modem reported for a burst in `mode` (and over its recent
    // part, NaN if not given): corrected to the true SNR (correct_snr_reports; a mode
    // without a measured map is taken as reported), then on_snr(). Returns the whole
    // burst's SNR used. `frames`: the burst's ARQ data D_PDUs (burst_works_frames).
    double
    on_snr_report(double report_db,
                  const modem_mode& mode,
                  double now,
                  double span_s = 0,
                  const burst_frames& frames = {},
                  double recent_report_db = std::numeric_limits<double>::quiet_NaN());
    // ARQ statistics SINCE THE PREVIOUS CALL: segments transmitted (first copies and
    // retransmissions) and how many of those were retransmissions. `mode`, if known, is
    // the mode they came in: statistics of a mode less robust than the one already
    // recommended say nothing new (a long burst in the old mode keeps delivering
    // damaged frames after the step down) and are left out.
    void on_arq_stats(uint64_t segments_sent,
                      uint64_t retransmissions,
                      double now,
                      const std::optional<modem_mode>& mode = std::nullopt);
    // Re-synchronise with the mode actually in use (after a refused or failed change,
    // or a reset to the initial mode). Clears the retransmission statistics and
    // restarts the dwell time. A mode not in the table snaps to the most robust entry
    // that is at least as robust.
    void set_current(const modem_mode& m, double now);

    modem_mode recommended() const { return cfg_.table[index_].mode; }
    // The table entry `entries` below the most robust entry at least as robust as m
    // (the most robust entry at the bottom).
    modem_mode more_robust(const modem_mode& m, unsigned entries) const;
    size_t recommended_index() const { return index_; }
    // Current averages (NaN before the first report / with too few segments).
    double slow_snr_db() const;
    double fast_snr_db() const;
    double retransmission_rate() const;
    const rate_policy_counters& counters() const { return counters_; }
    const rate_policy_config& config() const { return cfg_; }

private:
    void evaluate(double now);
    // The retransmitted fraction above which entry `index` steps down (see
    // retx_step_down_goodput).
    double retx_step_down_at(size_t index) const;
    void decay_to(double now);
    void changed(size_t index, double now);

    rate_policy_config cfg_;
    size_t index_ = 0;
    double last_time_ = std::numeric_limits<double>::quiet_NaN();
    double slow_sum_ = 0, slow_w_ = 0, fast_sum_ = 0, fast_w_ = 0;
    double seg_w_ = 0, retx_w_ = 0;
    double last_change_ = -std::numeric_limits<double>::infinity();
    double above_since_ = std::numeric_limits<double>::quiet_NaN();
    bool awaiting_first_report_ = true;
    double last_span_ = 0;     // of the latest SNR report
    bool burst_works_ = false; // the report being handled is of a working burst
    rate_policy_counters counters_;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
