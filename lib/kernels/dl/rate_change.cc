/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rate_change.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {
constexpr double inf_v = std::numeric_limits<double>::infinity();
} // namespace

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
    const bool fixed =
        cfg_.supported.size() == 1 && *cfg_.supported.begin() == cfg_.initial_mode;
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

void rate_change::send_new(
    eow_type t, uint8_t content, bool ack, double timeout, double now)
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
        (state_ == drc_state::master_requesting ||
         state_ == drc_state::master_confirming || state_ == drc_state::master_cancelling)
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
