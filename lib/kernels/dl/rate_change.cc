/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Data rate change policy and Annex C.6.4 handshake; see rate_change.h for the rules.
#include "rate_change.h"

#include "phy/burst_snr.h"
#include "phy/modem_curves.h"
#include "phy/s4539_modes.h"
#include "phy/snr_report_map.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr unsigned rate_table_bps[12] = { 75,   150,  300,  600,  1200, 2400,
                                          3200, 3600, 4800, 6400, 8000, 9600 };
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

// Robustness rank of an interleaver: longer is more robust (App C's lengths in order
// around Table C-6's short and long).
int interleaver_rank(uint8_t il)
{
    static const int rank[8] = { 0, 3, 5, 0, 1, 2, 4, 6 }; // none US VS S M L VL
    return rank[il & 7];
}

// Mode-name letters and the modem's interleaver names by interleaving code (3 is
// reserved in Table C-6).
const char* const interleaver_letters[8] = { "U", "S", "L", "?", "US", "VS", "M", "VL" };
const char* const interleaver_names[8] = { "none",        "short",      "long",   "",
                                           "ultra_short", "very_short", "medium", "very_long" };

} // namespace

unsigned data_rate_bps(uint8_t code)
{
    return code < 12 ? rate_table_bps[code] : code == rate_12800 ? 12800 : 0;
}

uint8_t data_rate_code(unsigned bps)
{
    for (uint8_t i = 0; i < 12; ++i)
        if (rate_table_bps[i] == bps)
            return i;
    if (bps == 12800)
        return rate_12800;
    throw std::invalid_argument("data rate " + std::to_string(bps) +
                                " bps is not in STANAG 5066 Table C-5 (nor App C's 12800)");
}

bool is_valid_mode(const modem_mode& m) { return m.data_rate < 12 && m.interleaving < 3; }

bool less_robust(const modem_mode& a, const modem_mode& b)
{
    if (a.data_rate != b.data_rate)
        return a.data_rate > b.data_rate;
    return interleaver_rank(a.interleaving) < interleaver_rank(b.interleaving);
}

std::string to_string(const modem_mode& m)
{
    // As the modem names the modes: no interleaving is the uncoded 4800U, or the zero
    // interleaver (Z) below 4800 bps.
    const unsigned bps = data_rate_bps(m.data_rate);
    const char* letter = m.interleaving == interleaving_none && bps < 4800 ? "Z"
                                                                          : interleaver_letters[m.interleaving & 7];
    return std::to_string(bps) + letter;
}

const char* interleaver_name(uint8_t code) { return code < 8 ? interleaver_names[code] : ""; }

std::optional<uint8_t> interleaving_code(const std::string& name)
{
    for (uint8_t code = 0; code < 8; ++code)
        if (!name.empty() && name == interleaver_names[code])
            return code;
    return std::nullopt;
}

std::set<modem_mode> default_supported_modes()
{
    std::set<modem_mode> s;
    for (uint8_t r = rate_75; r <= rate_9600; ++r) {
        if (r == rate_3600)
            continue;
        s.insert({ r, interleaving_short });
        s.insert({ r, interleaving_long });
    }
    return s;
}

std::vector<rate_policy_entry> rate_table_from(const phy::modem_curve_data& data)
{
    // Every mode a data rate change can announce with a finite threshold.
    std::vector<rate_policy_entry> all;
    for (const auto& f : data.fits) {
        const auto mode = phy::s4539_mode_by_name(f.mode);
        if (!mode || !std::isfinite(f.rate_snr_db))
            continue;
        const auto il = interleaving_code(mode->interleaver);
        if (!il)
            continue;
        modem_mode m;
        try {
            m.data_rate = data_rate_code(mode->user_bps);
        } catch (const std::invalid_argument&) {
            continue;
        }
        m.interleaving = *il;
        if (is_valid_mode(m))
            all.push_back({ m, f.rate_snr_db });
    }
    // The Annex C initial mode stays in the ladder: a mode less robust than it that needs
    // less SNR is raised to just above it (0.5 dB), a more robust one that needs more is
    // left out below.
    const auto initial = std::find_if(all.begin(), all.end(), [](const rate_policy_entry& e) {
        return e.mode == initial_drc_mode;
    });
    if (initial != all.end()) {
        const rate_policy_entry init = *initial;
        for (auto& e : all)
            if (less_robust(e.mode, init.mode) && e.min_snr_db <= init.min_snr_db)
                e.min_snr_db = init.min_snr_db + 0.5;
    }
    // By threshold; at equal thresholds the least robust (fastest) first, the others left out.
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.min_snr_db != b.min_snr_db ? a.min_snr_db < b.min_snr_db
                                            : less_robust(a.mode, b.mode);
    });
    // A ladder: each entry less robust than the one before, at a higher threshold (a mode
    // that needs more SNR than a less robust one is of no use).
    std::vector<rate_policy_entry> table;
    for (const auto& e : all) {
        if (!table.empty() &&
            (!(e.min_snr_db > table.back().min_snr_db) || !less_robust(e.mode, table.back().mode)))
            continue;
        table.push_back(e);
    }
    return table;
}

std::vector<rate_policy_entry> default_rate_table()
{
    return rate_table_from(phy::measured_modem_curves());
}

// ===================================================================================
// rate_policy
// ===================================================================================

rate_policy::rate_policy(const rate_policy_config& cfg) : cfg_(cfg)
{
    if (cfg_.table.empty())
        throw std::invalid_argument("rate_policy: empty table");
    for (size_t i = 0; i < cfg_.table.size(); ++i) {
        if (!is_valid_mode(cfg_.table[i].mode))
            throw std::invalid_argument("rate_policy: invalid mode in table");
        if (i > 0 && !(cfg_.table[i].min_snr_db > cfg_.table[i - 1].min_snr_db))
            throw std::invalid_argument("rate_policy: min_snr_db must strictly increase");
    }
    if (!(cfg_.slow_time_constant > 0) || !(cfg_.fast_time_constant > 0) ||
        !(cfg_.retx_time_constant > 0))
        throw std::invalid_argument("rate_policy: time constants must be positive");
    if (cfg_.hysteresis_db < 0 || cfg_.min_dwell < 0 || cfg_.sustain_time < 0)
        throw std::invalid_argument("rate_policy: negative hysteresis or time");
    auto it = std::find_if(cfg_.table.begin(), cfg_.table.end(),
                           [&](const rate_policy_entry& e) { return e.mode == cfg_.initial; });
    if (it == cfg_.table.end())
        throw std::invalid_argument("rate_policy: initial mode not in table");
    index_ = size_t(it - cfg_.table.begin());
}

void rate_policy::decay_to(double now)
{
    if (std::isnan(last_time_)) {
        last_time_ = now;
        return;
    }
    double dt = now - last_time_;
    if (dt <= 0)
        return; // reports out of order: no decay, keep the later time
    double ds = std::exp(-dt / cfg_.slow_time_constant);
    double df = std::exp(-dt / cfg_.fast_time_constant);
    double dr = std::exp(-dt / cfg_.retx_time_constant);
    slow_sum_ *= ds;
    slow_w_ *= ds;
    fast_sum_ *= df;
    fast_w_ *= df;
    seg_w_ *= dr;
    retx_w_ *= dr;
    last_time_ = now;
}

double rate_policy::slow_snr_db() const { return slow_w_ > 0 ? slow_sum_ / slow_w_ : nan_v; }
double rate_policy::fast_snr_db() const { return fast_w_ > 0 ? fast_sum_ / fast_w_ : nan_v; }
double rate_policy::retransmission_rate() const
{
    return seg_w_ >= cfg_.min_segments && seg_w_ > 0 ? retx_w_ / seg_w_ : nan_v;
}

void rate_policy::on_snr(double snr_db, double now, double span_s, double recent_db)
{
    if (!std::isfinite(snr_db))
        return;
    last_span_ = std::isfinite(span_s) && span_s > 0 ? span_s : 0;
    const bool recent = std::isfinite(recent_db);
    const double up_db = recent && cfg_.step_up_on_recent ? recent_db : snr_db;
    const double down_db = recent && cfg_.step_down_on_recent ? recent_db : snr_db;
    if (recent && cfg_.step_up_on_recent)
        last_span_ = std::min(last_span_, phy::burst_snr::recent_window_s);
    decay_to(now);
    slow_sum_ += up_db;
    slow_w_ += 1;
    fast_sum_ += down_db;
    fast_w_ += 1;
    ++counters_.snr_reports;
    if (awaiting_first_report_ && cfg_.first_report_decides) {
        awaiting_first_report_ = false;
        size_t to = 0;
        while (to + 1 < cfg_.table.size() &&
               up_db >= cfg_.table[to + 1].min_snr_db + cfg_.hysteresis_db)
            ++to;
        // No higher than the SNR supports, no lower than it needs.
        size_t floor = index_;
        while (floor > 0 && down_db < cfg_.table[floor].min_snr_db)
            --floor;
        to = to > index_ ? to : std::min(floor, index_);
        if (to != index_) {
            if (to > index_)
                ++counters_.step_ups;
            else
                ++counters_.step_downs_snr;
            changed(to, now);
        }
        return;
    }
    awaiting_first_report_ = false;
    evaluate(now);
}

double rate_policy::on_snr_report(double report_db,
                                  const modem_mode& mode,
                                  double now,
                                  double span_s,
                                  const burst_frames& frames,
                                  double recent_report_db)
{
    double snr_db = report_db;
    double recent_db = recent_report_db;
    if (cfg_.correct_snr_reports && std::isfinite(report_db))
        if (const auto* map = phy::measured_snr_report_map(to_string(mode))) {
            snr_db = map->true_snr_for(report_db);
            if (std::isfinite(recent_report_db))
                recent_db = map->true_snr_for(recent_report_db);
            ++counters_.snr_reports_corrected;
        }
    const unsigned read = frames.good + frames.damaged;
    const unsigned lost = frames.damaged + frames.unreadable;
    burst_works_ = cfg_.burst_works_frames > 0 && mode == recommended() &&
                   read >= cfg_.burst_works_frames &&
                   double(lost) <= cfg_.burst_works_damaged * double(frames.good + lost);
    on_snr(snr_db, now, span_s, recent_db);
    burst_works_ = false;
    return snr_db;
}

void rate_policy::on_arq_stats(uint64_t segments_sent,
                               uint64_t retransmissions,
                               double now,
                               const std::optional<modem_mode>& mode)
{
    if (mode && less_robust(*mode, recommended())) {
        ++counters_.arq_reports_stale;
        return;
    }
    decay_to(now);
    seg_w_ += double(segments_sent);
    retx_w_ += double(std::min(retransmissions, segments_sent));
    ++counters_.arq_reports;
    evaluate(now);
}

modem_mode rate_policy::more_robust(const modem_mode& m, unsigned entries) const
{
    size_t j = 0; // the most robust entry at least as robust as m, as set_current()
    for (size_t i = 0; i < cfg_.table.size(); ++i)
        if (!less_robust(cfg_.table[i].mode, m))
            j = i;
    return cfg_.table[j >= entries ? j - entries : 0].mode;
}

void rate_policy::changed(size_t index, double now)
{
    index_ = index;
    last_change_ = now;
    above_since_ = nan_v;
    seg_w_ = retx_w_ = 0; // statistics of the old mode say nothing about the new one
}

void rate_policy::set_current(const modem_mode& m, double now)
{
    awaiting_first_report_ = true;
    size_t j = 0;
    for (size_t i = 0; i < cfg_.table.size(); ++i)
        if (!less_robust(cfg_.table[i].mode, m))
            j = i;
    changed(j, now);
}

double rate_policy::retx_step_down_at(size_t index) const
{
    if (!cfg_.retx_step_down_goodput || index == 0)
        return cfg_.retx_step_down;
    const double rate = data_rate_bps(cfg_.table[index].mode.data_rate);
    const double lower = data_rate_bps(cfg_.table[index - 1].mode.data_rate);
    return rate > 0 ? std::max(cfg_.retx_step_down, 1.0 - lower / rate)
                    : cfg_.retx_step_down;
}

void rate_policy::evaluate(double now)
{
    const bool have_snr = fast_w_ > 0;
    // Step down on SNR: at once, as far as needed.
    if (have_snr) {
        const double fast = fast_snr_db();
        size_t i = index_;
        while (i > 0 && fast < cfg_.table[i].min_snr_db - cfg_.step_down_margin_db)
            --i;
        if (i != index_ && burst_works_) {
            ++counters_.step_downs_held;
        } else if (i != index_) {
            changed(i, now);
            ++counters_.step_downs_snr;
            return;
        }
    }
    const double retx = retransmission_rate(); // NaN without enough segments
    if (cfg_.use_retransmission_rate && !std::isnan(retx) && index_ > 0 &&
        retx > retx_step_down_at(index_)) {
        changed(index_ - 1, now);
        ++counters_.step_downs_retx;
        return;
    }
    // Step up: one entry, after sustained margin, dwell, and a low retransmission rate.
    if (!have_snr || index_ + 1 >= cfg_.table.size())
        return;
    const double need = cfg_.table[index_ + 1].min_snr_db + cfg_.hysteresis_db;
    if (slow_snr_db() >= need) {
        if (std::isnan(above_since_)) {
            above_since_ = now - last_span_;
            // Frames damaged before the SNR rose describe a channel the reports say
            // is gone: with retx_time_constant 60 s they held a climb after 12 dB ->
            // 25 dB for 90 s of bursts in the old mode (real modems, issue 25 part 5).
            seg_w_ = retx_w_ = 0;
        }
    } else {
        above_since_ = nan_v;
        return;
    }
    const bool retx_ok =
        !cfg_.use_retransmission_rate || std::isnan(retx) || retx <= cfg_.retx_step_up;
    if (now - above_since_ >= cfg_.sustain_time && now - last_change_ >= cfg_.min_dwell &&
        retx_ok) {
        size_t to = index_ + 1;
        const size_t top = cfg_.step_up_entries ? std::min(cfg_.table.size() - 1,
                                                           index_ + cfg_.step_up_entries)
                                                : cfg_.table.size() - 1;
        while (to < top &&
               slow_snr_db() >= cfg_.table[to + 1].min_snr_db + cfg_.hysteresis_db)
            ++to;
        changed(to, now);
        ++counters_.step_ups;
    }
}

// ===================================================================================
// rate_change
// ===================================================================================

const char* to_string(drc_state s)
{
    switch (s) {
    case drc_state::idle:
        return "idle";
    case drc_state::master_requesting:
        return "master_requesting";
    case drc_state::master_confirming:
        return "master_confirming";
    case drc_state::master_cancelling:
        return "master_cancelling";
    case drc_state::slave_accepted:
        return "slave_accepted";
    case drc_state::slave_confirming:
        return "slave_confirming";
    case drc_state::slave_refused:
        return "slave_refused";
    }
    return "?";
}

namespace {
constexpr uint8_t resp_accept = 0, resp_refuse = 1, resp_cancel = 2, resp_confirm = 3;
constexpr uint8_t other_request_independent = 0, other_request_tx_eq_rx = 1,
                  other_advisory_independent = 2, other_advisory_tx_eq_rx = 3;
} // namespace

rate_change::rate_change(const rate_change_config& cfg) : cfg_(cfg)
{
    // A mode without Table C-5/C-6 codes (App C's US, VS, M, VL, 12800U) can only be a
    // fixed node's one mode: it is never requested, so it never needs announcing.
    const bool fixed = cfg_.supported.size() == 1 && *cfg_.supported.begin() == cfg_.initial_mode;
    for (const auto& m : cfg_.supported)
        if (!is_valid_mode(m) && !(fixed && data_rate_bps(m.data_rate) != 0))
            throw std::invalid_argument("rate_change: invalid mode in supported set");
    if (!supported(cfg_.initial_mode))
        throw std::invalid_argument("rate_change: initial_mode not supported");
    if (!(cfg_.ack_timeout > 0))
        throw std::invalid_argument("rate_change: ack_timeout must be positive");
    tx_mode_ = rx_mode_ = cfg_.initial_mode;
}

void rate_change::reset(double)
{
    state_ = drc_state::idle;
    tx_mode_ = rx_mode_ = cfg_.initial_mode;
    proc_both_ = proc_advised_ = false;
    proc_reason_ = 0;
    retries_ = 0;
    deadline_ = inf_v;
    switch_after_take_ = false;
    tx_id_ = 0;
    rx_id_ = 256;
    last_reply_.reset();
    pending_tx_.reset();
    peer_fixed_rate_ = peer_fixed_interleaving_ = false;
    holdoff_mode_.reset();
    holdoff_until_ = -inf_v;
    awaiting_answer_after_step_down_ = false;
    out_.clear();
}

double rate_change::next_deadline() const { return deadline_; }

void rate_change::advise_rx(const modem_mode& m, double)
{
    if (is_valid_mode(m))
        advised_rx_ = m;
}

bool rate_change::peer_allows(const modem_mode& m) const
{
    if (peer_fixed_rate_ && m.data_rate != tx_mode_.data_rate)
        return false;
    if (peer_fixed_interleaving_ && m.interleaving != tx_mode_.interleaving)
        return false;
    return true;
}

bool rate_change::request_tx(const modem_mode& m, double now)
{
    if (!is_valid_mode(m) || !supported(m) || !peer_allows(m))
        return false;
    if (cfg_.autobaud && state_ == drc_state::idle) {
        if (m == tx_mode_)
            return false;
        set_tx(m); // the C.6.4.2 note, as on_advisory()
        return true;
    }
    if (state_ != drc_state::idle) {
        pending_tx_ = m;
        return true;
    }
    if (m == tx_mode_)
        return false;
    proc_advised_ = false;
    start_master(m, now);
    return true;
}

bool rate_change::step_down_unanswered(const modem_mode& m, double)
{
    if (!cfg_.autobaud || !is_valid_mode(m) || !supported(m) || !less_robust(tx_mode_, m))
        return false;
    awaiting_answer_after_step_down_ = true;
    ++counters_.unanswered_step_downs;
    pending_tx_.reset();
    if (state_ != drc_state::idle) {
        // A procedure of ours for a less robust mode is moot now.
        pending_tx_ = m;
        return true;
    }
    set_tx(m);
    return true;
}

void rate_change::on_peer_answered() { awaiting_answer_after_step_down_ = false; }

void rate_change::on_burst_mode(const modem_mode& m)
{
    if (cfg_.autobaud && is_valid_mode(m))
        set_rx(m);
}

void rate_change::queue(const mgmt_msg& m) { out_.push_back(m); }

void rate_change::send_new(eow_type t, uint8_t content, bool ack, double timeout, double now)
{
    mgmt_msg m;
    m.valid = true;
    m.ack = ack;
    m.frame_id = tx_id_++; // C.3.9 (18),(19)
    m.eow = t;
    m.content = content;
    outstanding_ = m;
    retries_ = 0;
    deadline_ = now + timeout;
    queue(m);
}

void rate_change::send_dt_ack(uint8_t acked_id)
{
    mgmt_msg m;
    m.valid = false;
    m.ack = true;
    m.frame_id = acked_id;
    last_reply_ = m;
    queue(m);
    ++counters_.dt_acks_sent;
}

void rate_change::start_master(const modem_mode& m, double now)
{
    proc_mode_ = m;
    proc_both_ = cfg_.tx_equals_rx;
    proc_reason_ = 0;
    state_ = drc_state::master_requesting;
    eow_rate_request r;
    r.data_rate = m.data_rate;
    r.interleaving = m.interleaving;
    r.other = cfg_.tx_equals_rx ? other_request_tx_eq_rx : other_request_independent;
    send_new(eow_type::drc_request, eow_content(r), false, cfg_.ack_timeout, now);
    ++counters_.requests_sent;
}

void rate_change::set_tx(const modem_mode& m)
{
    if (m == tx_mode_)
        return;
    tx_mode_ = m;
    drc_event e;
    e.type = drc_event_type::tx_mode_changed;
    e.mode = m;
    events_.push_back(e);
}

void rate_change::set_rx(const modem_mode& m)
{
    if (m == rx_mode_)
        return;
    rx_mode_ = m;
    drc_event e;
    e.type = drc_event_type::rx_mode_changed;
    e.mode = m;
    events_.push_back(e);
}

void rate_change::finish_ok(drc_role role, const modem_mode& m)
{
    drc_event e;
    e.type = drc_event_type::completed;
    e.mode = m;
    e.role = role;
    events_.push_back(e);
    ++counters_.completed;
}

void rate_change::finish_failed(drc_role role, drc_cause cause, uint8_t reason)
{
    drc_event e;
    e.type = drc_event_type::failed;
    e.mode = proc_mode_;
    e.role = role;
    e.cause = cause;
    e.reason = reason;
    e.connection_lost = cause == drc_cause::timeout;
    events_.push_back(e);
    ++counters_.failed;
}

void rate_change::go_idle(double now)
{
    state_ = drc_state::idle;
    deadline_ = inf_v;
    retries_ = 0;
    // A request_tx() made during the procedure starts now (after a pending master
    // switch has taken effect, see take_management()).
    if (pending_tx_ && !switch_after_take_) {
        const modem_mode m = *pending_tx_;
        pending_tx_.reset();
        if (m != tx_mode_ && supported(m) && peer_allows(m)) {
            if (cfg_.autobaud) {
                set_tx(m);
            } else {
                proc_advised_ = false;
                start_master(m, now);
            }
        }
    }
}

uint8_t rate_change::refusal_reason(const modem_mode& m) const
{
    if (!is_valid_mode(m))
        return 4;
    if (supported(m)) {
        // (23): "not consistent with local conditions" only for a less robust mode.
        if (cfg_.refuse_less_robust_than_advised && advised_rx_ &&
            less_robust(m, rx_mode_) && less_robust(m, *advised_rx_))
            return 5;
        return 0;
    }
    bool rate_ok = false, il_ok = false;
    for (const auto& s : cfg_.supported) {
        rate_ok |= s.data_rate == m.data_rate;
        il_ok |= s.interleaving == m.interleaving;
    }
    if (rate_ok)
        return 3; // the rate is possible, not with this interleaver
    if (il_ok)
        return 2; // the interleaver is possible, not at this rate
    return 4;
}

void rate_change::on_dpdu(const dpdu& d, double now)
{
    if (d.source != cfg_.peer_address)
        return;
    if (d.type == dpdu_type::management) {
        if (d.destination != cfg_.own_address)
            return;
        on_management(d, now);
        return;
    }
    if (d.eow == eow_type::drc_request) {
        auto r = eow_as_rate_request(d.eow_content);
        if (r.other >= other_advisory_independent)
            on_advisory(r, now);
        else
            ++counters_.ignored; // requests belong in MANAGEMENT D_PDUs (C.6.4.2 (3))
    }
}

void rate_change::on_management(const dpdu& d, double now)
{
    if (!d.valid_message) {
        // Pure acknowledgement (C.3.9 (8)); its EOW may still carry an advisory.
        if (d.management_ack)
            on_ack(now);
        if (d.eow == eow_type::drc_request) {
            auto r = eow_as_rate_request(d.eow_content);
            if (r.other >= other_advisory_independent)
                on_advisory(r, now);
        }
        return;
    }
    const uint8_t id = d.management_frame_id;
    if (id == rx_id_) { // repetition (C.3.9 (24),(25)): answer again, do not reprocess
        ++counters_.duplicates_received;
        if (last_reply_)
            queue(*last_reply_);
        return;
    }
    switch (d.eow) {
    case eow_type::drc_request: {
        auto r = eow_as_rate_request(d.eow_content);
        if (r.other >= other_advisory_independent) {
            // An advisory sent with acknowledgement: acknowledge, then treat as advisory.
            rx_id_ = id;
            send_dt_ack(id);
            on_advisory(r, now);
        } else {
            on_request(r, id, now);
        }
        return;
    }
    case eow_type::drc_response:
        on_response(eow_as_rate_response(d.eow_content), id, now);
        return;
    default:
        // Not a DRC message: acknowledge it (C.3.9 (2)) and leave it to others.
        rx_id_ = id;
        send_dt_ack(id);
        ++counters_.ignored;
        return;
    }
}

void rate_change::on_advisory(const eow_rate_request& r, double now)
{
    ++counters_.advisories_received;
    if (!cfg_.follow_advisory || state_ != drc_state::idle)
        return;
    const modem_mode m{ r.data_rate, r.interleaving };
    if (!is_valid_mode(m) || m == tx_mode_ || !supported(m) || !peer_allows(m))
        return; // (12): not equipped -> no procedure
    if (cfg_.autobaud) {
        if (awaiting_answer_after_step_down_ && less_robust(m, tx_mode_)) {
            ++counters_.stale_advisories;
            return;
        }
        ++counters_.advisories_followed;
        set_tx(m); // the C.6.4.2 note: no procedure with autobaud modems
        return;
    }
    if (holdoff_mode_ && *holdoff_mode_ == m && now < holdoff_until_)
        return; // Note 6: wait for an updated recommendation
    proc_advised_ = true;
    ++counters_.advisories_followed;
    start_master(m, now);
}

void rate_change::on_request(const eow_rate_request& r, uint8_t id, double now)
{
    switch (state_) {
    case drc_state::idle:
    case drc_state::slave_accepted: // Table C-27: the master may send a new request
    case drc_state::slave_refused:
        answer_as_slave(r, id, now);
        return;
    case drc_state::master_requesting:
        if (cfg_.own_address < cfg_.peer_address) {
            // Collision: the lower address yields and answers the peer.
            finish_failed(drc_role::master, drc_cause::collision, 0);
            if (!proc_advised_)
                pending_tx_ = proc_mode_;
            answer_as_slave(r, id, now);
        } else {
            ++counters_.ignored;
        }
        return;
    default:
        ++counters_.ignored; // busy: the peer repeats its request later
        return;
    }
}

void rate_change::answer_as_slave(const eow_rate_request& r, uint8_t id, double now)
{
    rx_id_ = id;
    ++counters_.requests_received;
    const modem_mode m{ r.data_rate, r.interleaving };
    proc_mode_ = m;
    const uint8_t reason = refusal_reason(m);
    eow_rate_response resp;
    if (reason == 0) {
        const bool master_independent = r.other == other_request_independent;
        proc_both_ = !master_independent || cfg_.tx_equals_rx;
        resp.response = resp_accept;
        resp.reason = (cfg_.tx_equals_rx && master_independent) ? 1 : 0; // (21)
        state_ = drc_state::slave_accepted;
        ++counters_.accepts_sent;
    } else {
        proc_reason_ = reason;
        resp.response = resp_refuse;
        resp.reason = reason; // (22)
        state_ = drc_state::slave_refused;
        ++counters_.refusals_sent;
    }
    send_new(eow_type::drc_response, eow_content(resp), true, cfg_.ack_timeout, now);
    last_reply_ = outstanding_;
}

void rate_change::on_response(const eow_rate_response& r, uint8_t id, double now)
{
    switch (state_) {
    case drc_state::master_requesting:
        if (r.response == resp_accept) {
            rx_id_ = id;
            if (r.reason == 1)
                proc_both_ = true; // Note 1 / (25): the change applies to Tx and Rx
            send_dt_ack(id);
            // (28): switch once the DT_ACK has gone out (see take_management()).
            switch_after_take_ = true;
            state_ = drc_state::master_confirming;
            retries_ = 0;
            deadline_ = now + (cfg_.max_retries + 2) * cfg_.ack_timeout;
            return;
        }
        if (r.response == resp_refuse) {
            rx_id_ = id;
            proc_reason_ = r.reason;
            if (r.reason == 2 || r.reason == 4)
                peer_fixed_rate_ = true;
            if (r.reason == 3 || r.reason == 4)
                peer_fixed_interleaving_ = true;
            if (r.reason == 5) {
                holdoff_mode_ = proc_mode_;
                holdoff_until_ = now + cfg_.advisory_holdoff;
            }
            eow_rate_response c;
            c.response = resp_cancel;
            c.reason = 0;
            state_ = drc_state::master_cancelling;
            send_new(eow_type::drc_response, eow_content(c), true, cfg_.ack_timeout, now);
            last_reply_ = outstanding_;
            ++counters_.cancels_sent;
            return;
        }
        break;
    case drc_state::master_confirming:
        if (r.response == resp_confirm) {
            rx_id_ = id;
            send_dt_ack(id); // (32)
            finish_ok(drc_role::master, proc_mode_);
            go_idle(now);
            return;
        }
        break;
    case drc_state::slave_accepted:
    case drc_state::slave_refused:
        if (r.response == resp_cancel) {
            rx_id_ = id;
            send_dt_ack(id); // Note 2 / (26), (30)
            if (state_ == drc_state::slave_accepted)
                finish_failed(drc_role::slave, drc_cause::cancelled_by_peer, 0);
            else
                finish_failed(drc_role::slave, drc_cause::refused_by_us, proc_reason_);
            go_idle(now);
            return;
        }
        break;
    default:
        break;
    }
    ++counters_.ignored;
}

void rate_change::on_ack(double now)
{
    switch (state_) {
    case drc_state::master_cancelling:
        finish_failed(drc_role::master, drc_cause::refused_by_peer, proc_reason_);
        go_idle(now);
        return;
    case drc_state::slave_accepted: {
        // (29): switch only now, then confirm at the new parameters.
        set_rx(proc_mode_);
        if (proc_both_)
            set_tx(proc_mode_);
        eow_rate_response c;
        c.response = resp_confirm;
        c.reason = 0;
        state_ = drc_state::slave_confirming;
        send_new(eow_type::drc_response, eow_content(c), false, cfg_.ack_timeout, now);
        ++counters_.confirms_sent;
        return;
    }
    case drc_state::slave_confirming:
        finish_ok(drc_role::slave, proc_mode_); // (33)
        go_idle(now);
        return;
    default:
        ++counters_.ignored; // an ack with nothing outstanding (e.g. a repeated one)
        return;
    }
}

void rate_change::lose_connection(double now)
{
    const drc_role role =
        (state_ == drc_state::master_requesting || state_ == drc_state::master_confirming ||
         state_ == drc_state::master_cancelling)
            ? drc_role::master
            : drc_role::slave;
    finish_failed(role, drc_cause::timeout, 0);
    ++counters_.connection_losses;
    // (9): IDLE(UNCONNECTED); a new connection starts at the initial mode (C.6.4.1).
    const modem_mode init = cfg_.initial_mode;
    set_tx(init);
    set_rx(init);
    reset(now);
}

void rate_change::on_timer(double now)
{
    if (state_ == drc_state::idle || now < deadline_)
        return;
    if (state_ == drc_state::master_confirming) {
        lose_connection(now);
        return;
    }
    if (retries_ < cfg_.max_retries) {
        ++retries_;
        ++counters_.retransmissions;
        if (outstanding_.eow == eow_type::drc_request)
            ++counters_.requests_sent;
        queue(outstanding_); // same frame ID (C.3.9 (20))
        deadline_ = now + cfg_.ack_timeout;
        return;
    }
    lose_connection(now);
}

std::optional<std::pair<eow_type, uint8_t>> rate_change::take_eow(double)
{
    if (!advised_rx_ || *advised_rx_ == rx_mode_ || state_ != drc_state::idle ||
        !supported(*advised_rx_))
        return std::nullopt;
    eow_rate_request r;
    r.data_rate = advised_rx_->data_rate;
    r.interleaving = advised_rx_->interleaving;
    r.other = cfg_.tx_equals_rx ? other_advisory_tx_eq_rx : other_advisory_independent;
    ++counters_.advisories_sent;
    return std::make_pair(eow_type::drc_request, eow_content(r));
}

std::optional<drc_transmission> rate_change::take_management(double now)
{
    if (out_.empty())
        return std::nullopt;
    drc_transmission t;
    t.mode = tx_mode_;
    const unsigned copies = std::max(1u, cfg_.copies);
    for (const auto& m : out_) {
        dpdu d;
        d.type = dpdu_type::management;
        d.eow = m.eow;
        d.eow_content = m.content;
        d.destination = cfg_.peer_address;
        d.source = cfg_.own_address;
        d.valid_message = m.valid;
        d.management_ack = m.ack;
        d.management_frame_id = m.frame_id;
        for (unsigned c = 0; c < copies; ++c)
            t.dpdus.push_back(d);
    }
    out_.clear();
    if (switch_after_take_) {
        switch_after_take_ = false;
        set_tx(proc_mode_);
        if (proc_both_)
            set_rx(proc_mode_);
        if (state_ == drc_state::idle)
            go_idle(now); // start a request_tx() deferred behind the switch
    }
    return t;
}

std::vector<drc_event> rate_change::take_events()
{
    std::vector<drc_event> e;
    e.swap(events_);
    return e;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
